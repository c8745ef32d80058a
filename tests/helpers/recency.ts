/**
 * Where a person's plain `tmux attach` and a target-less command land, read on a test server:
 * what recency_test.ts and kill9_recency_test.ts hold our control clients to (tmux counts a
 * control client's attach as use of its session).
 */

import assert from "node:assert/strict";
import { TestTmux, waitFor } from "./tmux.ts";

/** Where a person's `tmux attach` with no target lands now (a real client on a terminal). */
export async function landing(t: TestTmux): Promise<string> {
  await t.tmux("set-option", "-gu", "@landed");
  await t.onTerminal(
    "attach",
    ";",
    "set-option",
    "-gF",
    "@landed",
    "#{session_id}",
    ";",
    "detach-client",
  );
  return (await t.tmux("show-options", "-gv", "@landed")).trim();
}

/** The sessions control clients are attached to, as `1 $N` lines, sorted. */
export async function controls(t: TestTmux): Promise<string[]> {
  return (await t.tmux("list-clients", "-F", "#{client_control_mode} #{session_id}"))
    .split("\n").filter((l) => l.startsWith("1 ")).sort();
}

/** Where a tmux command without a target, run outside tmux, lands now. */
export async function fromNothing(t: TestTmux): Promise<string> {
  return (await t.tmux("display-message", "-p", "#{session_id}")).trim();
}

/** A person's use of `sessionId`: attached on a terminal, then detached. */
export async function use(t: TestTmux, sessionId: string): Promise<void> {
  await t.onTerminal("attach", "-t", sessionId, ";", "detach-client");
}

/**
 * Returns once tmux's clock has passed the second every session was last used in: tmux shows
 * last use in whole seconds, and uses within one second cannot be told apart by reading.
 */
export async function nextSecond(t: TestTmux): Promise<void> {
  const latest = Math.max(
    ...(await t.tmux("list-sessions", "-F", "#{session_activity}")).trim().split("\n").map(Number),
  );
  await waitFor(() => Math.floor(Date.now() / 1000) > latest, "the next second");
}

/**
 * Three detached sessions ($0 "first", $1 "second", $2 "third"), each a shell at its prompt;
 * the person used $1 last, where their plain `tmux attach` and a target-less command land.
 */
export async function threeSessions(): Promise<{ t: TestTmux; panes: string[] }> {
  const t = await TestTmux.start("first");
  const panes = [t.ids.paneId];
  for (const name of ["second", "third"]) {
    panes.push(
      (await t.tmux("new-session", "-d", "-s", name, "-P", "-F", "#{pane_id}", "sh")).trim(),
    );
  }
  for (const pane of panes) await t.prompt(pane);
  await nextSecond(t);
  await use(t, "$1");
  assert.equal(await landing(t), "$1");
  assert.equal(await fromNothing(t), "$1");
  return { t, panes };
}
