/**
 * A `%pane-mode-changed` line forged by a program in a pane: tmux 3.3a writes what a hook's
 * `display-message -p` prints bare to a control client, so a `client-attached` hook set through
 * `$TMUX` can make a new control client of ours read a change of mode no pane went through.
 * tmux-mcp takes back only the view-modes its attach's hooks put on panes: a person's view-mode,
 * there before the attach, stays theirs whatever the notices say.
 */

import assert from "node:assert/strict";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { landing, threeSessions } from "./helpers/recency.ts";
import { TestTmux, waitFor, within } from "./helpers/tmux.ts";

/** The mode `paneId` shows now ("" for none). */
async function modeOf(t: TestTmux, paneId: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_mode}")).trim();
}

/** A hook command that prints a forged `%pane-mode-changed` for each of `paneIds`. */
function forgery(paneIds: readonly string[]): string {
  return paneIds.map((p) => `display-message -p "%%pane-mode-changed %%${p.slice(1)}"`)
    .join(" ; ");
}

/** Puts `paneId` in view-mode as a person's `run-shell` does, and waits until it shows. */
async function personReads(t: TestTmux, paneId: string): Promise<void> {
  await t.tmux("run-shell", "-t", paneId, "echo the person reads this");
  await waitFor(async () => await modeOf(t, paneId) === "view-mode", "the person's view-mode");
}

Deno.test("a forged %pane-mode-changed as a control client attaches does not take a person's view-mode", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    const pane = t.ids.paneId;
    await t.attach("main");
    await personReads(t, pane);
    // What any program in any pane can run through $TMUX.
    await t.tmux("set-hook", "-g", "client-attached", forgery([pane]));
    c = await connect({ socketName: t.socket });
    // Read-only, and it opens control clients (one for commands, one for the watch).
    const waited = await c.ok<{ outcome: string; transport: string }>("wait_for_text", {
      paneId: pane,
      patterns: ["never printed"],
      timeoutMs: 300,
    });
    assert.deepEqual([waited.outcome, waited.transport], ["timedOut", "control"]);
    // The clients' handshakes (and what they take back) are over once the call has answered.
    assert.equal(await modeOf(t, pane), "view-mode", "the person's view-mode stays");
    await c.ok("list_panes");
    assert.equal(await modeOf(t, pane), "view-mode", "and stays after a later call");
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("a forged %pane-mode-changed as a momentary client puts a person's session back on top does not take their view-mode", async () => {
  const { t, panes } = await threeSessions();
  let c: TestClient | undefined;
  try {
    await personReads(t, panes[1]);
    // The momentary client's detach runs `client-detached`: tmux prints its hook's lines to
    // our client that asked for the momentary one, which gathers changes of mode then.
    await t.tmux("set-hook", "-g", "client-attached", forgery(panes));
    await t.tmux("set-hook", "-g", "client-detached", forgery(panes));
    c = await connect({ socketName: t.socket });
    await within(c.ok("list_panes"), 20_000, "the first call");
    assert.equal(await modeOf(t, panes[1]), "view-mode", "after the first call");
    // A client attaches to the third session to follow the command's output, then a momentary
    // one to $1 (the person's last) to put it back on top.
    await within(
      c.ok("run_command", { paneId: panes[2], command: "true" }),
      20_000,
      "run_command in the third session",
    );
    assert.equal(await landing(t), "$1");
    assert.equal(await modeOf(t, panes[1]), "view-mode", "the person's view-mode stays");
  } finally {
    await c?.close();
    await t.kill();
  }
});
