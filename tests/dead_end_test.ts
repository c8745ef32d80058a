/**
 * How a dead pane's process ended, told alike by get_pane_info and snapshot_pane: its exit
 * status, also where tmux 3.3a has yet to learn it (it misses the SIGCHLD of about a third of
 * `exit N` in remain-on-exit panes here, and leaves the status empty until another child of the
 * server exits), and the signal that ended one killed, which has no status.
 */

import assert from "node:assert/strict";
import { connect, summaryOf } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

interface Ended {
  dead: boolean;
  deadStatus: number | null;
  deadSignal: number | null;
}

const SHELL = "sh";

Deno.test("a dead pane's status and signal: snapshot_pane says what get_pane_info says", async () => {
  const t = await TestTmux.start("ends");
  const mcp = await connect({ socketName: t.socket, toolsets: ["inspect"] });
  try {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    // Made in one step, so that they end together: tmux misses a SIGCHLD most often then.
    const made = await t.tmux(
      ...[1, 2, 3, 4, 5, 6, 7, 8].flatMap((status) => [
        ...(status > 1 ? [";"] : []),
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        `${SHELL} -c 'echo ${status}; exit ${status}'`,
      ]),
    );
    const panes = made.trim().split("\n").map((id, i) => ({ id, status: i + 1 }));
    assert.equal(panes.length, 8, made);
    const killed = (await t.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      `${SHELL} -c 'kill -9 $$'`,
    )).trim();
    // Every one dead as tmux lists it (its status may still be missing).
    for (const { id } of [...panes, { id: killed }]) {
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-t", id, "#{pane_dead}")).trim() === "1",
        `${id} dead`,
      );
    }
    for (const { id, status } of panes) {
      const snap = await summaryOf(mcp, "snapshot_pane", { paneId: id });
      const data = snap.data as unknown as Ended;
      assert.deepEqual([data.dead, data.deadStatus, data.deadSignal], [true, status, null], id);
      assert.match(snap.summary, new RegExp(`dead \\(status ${status}\\)`));
      const info = await mcp.ok<Ended>("get_pane_info", { paneId: id });
      assert.deepEqual([info.dead, info.deadStatus, info.deadSignal], [true, status, null], id);
    }
    const snap = await summaryOf(mcp, "snapshot_pane", { paneId: killed });
    const data = snap.data as unknown as Ended;
    assert.deepEqual([data.dead, data.deadStatus, data.deadSignal], [true, null, 9]);
    assert.match(snap.summary, /dead \(signal 9\)/);
    const info = await summaryOf(mcp, "get_pane_info", { paneId: killed });
    const detail = info.data as unknown as Ended;
    assert.deepEqual([detail.dead, detail.deadStatus, detail.deadSignal], [true, null, 9]);
    assert.match(info.summary, /dead \(signal 9\)/);
  } finally {
    await mcp.close();
    await t.kill();
  }
});
