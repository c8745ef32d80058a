/**
 * A tmux-mcp process killed outright (SIGKILL, the OOM killer, an MCP client killing it hard)
 * runs no goodbye: its control client's attach still counts as the last use of the session it
 * joined, and nothing moves the person's sessions back in the order it found them. So that
 * order must hold from the moment the client has attached, not only from its goodbye.
 */

import assert from "node:assert/strict";
import { kill9, startOn, StdioServer } from "./helpers/stdio.ts";
import { controls, fromNothing, landing, nextSecond, threeSessions } from "./helpers/recency.ts";
import { processesNaming, waitFor } from "./helpers/tmux.ts";

Deno.test("kill9: after a process with a control client was SIGKILLed, a person's plain `tmux attach` and a target-less command land where they did", async () => {
  const { t } = await threeSessions();
  let s: StdioServer | undefined;
  try {
    s = await startOn(t.socket);
    await nextSecond(t);
    await s.callTool("list_panes");
    // One client: the one that carries commands, in a session the person did not use last.
    assert.equal((await controls(t)).length, 1);
    assert.notDeepEqual(await controls(t), ["1 $1"]);
    await s.kill();
    await waitFor(async () => (await controls(t)).length === 0, "our control client gone");
    // tmux stops listing a client as it says goodbye, and its process ends a moment later.
    const left = async () =>
      (await processesNaming(t.socket)).filter((p) => / -C /.test(p.args)).map((p) => p.args);
    await waitFor(async () => (await left()).length === 0, "").catch(() => {});
    assert.deepEqual(await left(), [], "no control client of the process is left");
    assert.equal(await fromNothing(t), "$1");
    assert.equal(await landing(t), "$1", "the person's plain attach");
  } finally {
    await s?.kill();
    await t.kill();
  }
});

Deno.test("kill9: a SIGKILLed process's client that followed a pane leaves the person's plain attach where it landed", async () => {
  const { t } = await threeSessions();
  let s: StdioServer | undefined;
  try {
    s = await startOn(t.socket);
    await nextSecond(t);
    const pane = (await t.tmux("list-panes", "-t", "$2", "-F", "#{pane_id}")).trim();
    await t.prompt(pane);
    const ran = await s.callTool("run_command", { paneId: pane, command: "true" });
    assert.notEqual(ran.isError, true);
    // With its clients' own processes: the followed pane's output may still be on its way to
    // the killed process, and tmux (3.3a) then keeps that client for good (left_behind_test).
    await kill9(t, s);
    assert.deepEqual(await controls(t), [], "our control clients gone");
    assert.equal(await landing(t), "$1", "the person's plain attach");
  } finally {
    await s?.kill();
    await t.kill();
  }
});

Deno.test("the moment a client of ours spends in the person's last session leaves no hook's view-mode there", async () => {
  const { t } = await threeSessions();
  let s: StdioServer | undefined;
  try {
    // An ordinary configuration line: greet whoever attaches (tmux shows it in view-mode).
    await t.tmux("set-hook", "-g", "client-attached", "run-shell 'echo welcome back'");
    const pane = (await t.tmux("list-panes", "-t", "$1", "-F", "#{pane_id}")).trim();
    s = await startOn(t.socket);
    await nextSecond(t);
    await s.callTool("list_panes");
    assert.equal(await fromNothing(t), "$1", "a client of ours was there for a moment");
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", pane, "#{pane_mode}")).trim(),
      "",
      "the greeting meant for a person attaching is not left over their pane",
    );
  } finally {
    await s?.kill();
    await t.kill();
  }
});
