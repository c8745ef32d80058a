/**
 * A wait is bounded by its timeout: wait_for_text on a pane that printed a long log and keeps
 * redrawing a progress line (a build) ends at its timeout.
 *
 * Counts, never times: an `after-capture-pane` hook counts the captures tmux runs (any
 * client) and keeps the arguments of each.
 */

import assert from "node:assert/strict";
import { controlFor } from "../src/tmux/control.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

/** The pane's height: every test here uses it. */
const HEIGHT = 50;

async function withServer(fn: (t: Server, c: TestClient) => Promise<void>): Promise<void> {
  const t = await TestTmux.start("main", { width: 200, height: HEIGHT });
  const c = await connect({ socketName: t.socket });
  try {
    await fn(t, c);
  } finally {
    await c.close();
    await t.kill();
  }
  assert.equal(c.server.runner.running, 0, "no tmux child left behind");
}

/** Counts every capture-pane tmux runs from now on, and keeps the arguments of each. */
async function countCaptures(t: Server): Promise<void> {
  await t.tmux("set-option", "-g", "@caps", "0");
  await t.tmux("set-option", "-g", "@capargs", "");
  await t.tmux(
    "set-hook",
    "-g",
    "after-capture-pane",
    "set -gF @caps '#{e|+:#{@caps},1}' ; set -gaF @capargs '#{hook_arguments}|'",
  );
}

async function captures(t: Server): Promise<number> {
  return Number((await t.tmux("show-options", "-gv", "@caps")).trim());
}

/**
 * A pane (history-limit 50 000) that waits for Enter, then prints `lines` rows of a log and
 * then redraws one progress line every `spinEvery` seconds: a build.
 */
async function buildPane(t: Server, lines: number, spinEvery: string): Promise<string> {
  await t.tmux("set-option", "-g", "history-limit", "50000");
  return (await t.tmux(
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id}",
    `sh -c 'read x; seq -f %0150g 1 ${lines}; ` +
      `while :; do printf "\\r%s" $(date +%N); sleep ${spinEvery}; done'`,
  )).trim();
}

/** Resolves once the wait's subscription exists. */
async function subscribed(t: Server, c: TestClient): Promise<void> {
  await waitFor(
    () => controlFor(c.server.runner, { socketName: t.socket }).watchers >= 1,
    "the wait to subscribe",
  );
}

Deno.test("wait_for_text ends at its timeout on a pane that printed a log and keeps redrawing a progress line", async () => {
  await withServer(async (t, c) => {
    const pane = await buildPane(t, 40_000, "0.01");
    await countCaptures(t);
    const timeoutMs = 3_000;
    // Reads are at least 20 ms apart while a wait runs (each one or two captures): a wait
    // that ends at its 3 s timeout captures the pane at most about 300 times.
    const bound = 2 * (timeoutMs / 20) + 10;
    let ended = false;
    const wait = c.call("wait_for_text", {
      paneId: pane,
      patterns: ["NEVER-PRINTED"],
      timeoutMs,
    }).finally(() => ended = true);
    await subscribed(t, c);
    await t.tmux("send-keys", "-t", pane, "Enter");
    // Let it run until it ends or until it has captured the pane twice as often as it could
    // have by its deadline; then end the progress line (the pane is respawned).
    await waitFor(async () => ended || await captures(t) > 2 * bound, "the wait to end", 120_000);
    const capturedWhileRunning = await captures(t);
    if (!ended) await t.tmux("respawn-pane", "-k", "-t", pane, "sleep 1000");
    const result = await wait;
    const data = result.structuredContent as { outcome: string; waitedMs: number };
    assert.equal(
      data.outcome,
      "timedOut",
      `a wait with a ${timeoutMs} ms timeout did not end by itself: it captured the pane ` +
        `${capturedWhileRunning} times (at most ~${bound} fit in its timeout) and ran ` +
        `${data.waitedMs} ms, until the pane was respawned (outcome ${data.outcome})`,
    );
  });
});
