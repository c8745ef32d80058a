/**
 * What the wait_for_text tests (tests/wait_*_test.ts) share: a test server with an MCP client,
 * the shape of a wait's result, and the steps that order a test without sleeping — a test
 * starts the wait, waits until the server's control hub shows a watcher on the pane (the
 * subscription exists), and only then makes the pane print.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { controlFor } from "../../src/tmux/control.ts";
import type { ServerControl } from "../../src/tmux/control_server.ts";
import { type TestClient, withTmux } from "./mcp.ts";
import { waitFor } from "./tmux.ts";
import { sendBytes, type Server } from "./watched.ts";

/** The structured result of wait_for_text, as the tests read it. */
export type Wait = {
  outcome: string;
  matched: { pattern: string; index: number } | null;
  stoppedBy: { pattern: string; index: number } | null;
  lines: string[];
  tail: string;
  alreadyOnScreen: boolean;
  patternsOnScreen: string[];
  exitStatus: number | null;
  effectiveTimeoutMs: number;
  timeoutClamped: boolean;
  transport: string;
};

/** Runs `fn` against a private tmux server and a client of the MCP server; no tmux child left. */
export function withServer(fn: (t: Server, c: TestClient) => Promise<void>): Promise<void> {
  return withTmux(fn, {}, { noChildLeft: true });
}

/** The server's control hub for the test's tmux: its watchers are the waits subscribed. */
export function hub(t: Server, c: TestClient): ServerControl {
  return controlFor(c.server.runner, { socketName: t.socket });
}

/** Resolves once the wait's subscription exists. */
export async function subscribed(t: Server, c: TestClient, count = 1): Promise<void> {
  await waitFor(() => hub(t, c).watchers >= count, "the wait to subscribe");
}

/** Types a command into the pane with tmux directly (not through the guarded tools). */
export async function type(t: Server, paneId: string, command: string): Promise<void> {
  await t.tmux("send-keys", "-t", paneId, "-l", "--", command);
  await t.tmux("send-keys", "-t", paneId, "Enter");
}

/** A tool result's structured content, after asserting the call did not fail. */
export function structured(result: CallToolResult): Wait {
  const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
  assert.notEqual(result.isError, true, text);
  return result.structuredContent as Wait;
}

/**
 * Makes the pane a program that writes what it is sent and nothing else (cat on a raw terminal
 * without echo); returns what sends it bytes. Unlike watched.ts's quietPane, a write returns
 * once tmux has the bytes, not once it has drawn them.
 */
export async function quietPane(
  t: Server,
  p: string,
): Promise<{ write(s: string): Promise<void> }> {
  await t.tmux("respawn-pane", "-k", "-t", p, "stty raw -echo; exec cat");
  await t.foreground(p, "cat");
  return {
    write: (s: string) => sendBytes(t, p, s),
  };
}
