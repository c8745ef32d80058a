/**
 * What a respawn's place resets (control.ts's placeResets) leave behind in a client of ours
 * whose session does not show the pane: no place that never moves (tmux would keep all the
 * pane prints from then on for it), and the pane turned on again should a watch come to need
 * it there. Real tmux on private sockets.
 */

import assert from "node:assert/strict";
import { controlFor, withPlaceResets } from "../src/tmux/control.ts";
import { judgeResult } from "../src/tmux/tmux_error.ts";
import { withTmux } from "./helpers/mcp.ts";
import { waitFor, withRunner } from "./helpers/tmux.ts";

/** The resident memory of the process `pid`, in kB. */
async function rssKb(pid: string): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
}

Deno.test("a busy pane respawned while a wait of ours runs in another session: tmux keeps none of its output for our client", async () => {
  await withTmux(async (t, c) => {
    const other = (await t.tmux("new-session", "-d", "-s", "other", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    await t.prompt(other);
    const waited = c.ok<{ outcome: string }>("wait_for_text", {
      paneId: other,
      patterns: ["done"],
      timeoutMs: 60_000,
    });
    await waitFor(async () => (await t.outputClients("other")).length > 0, "the wait's client");
    let grown = 0;
    try {
      const server = (await t.tmux("display-message", "-p", "#{pid}")).trim();
      const before = await rssKb(server);
      // About 21 MB of output, then quiet.
      await c.ok("respawn_pane", {
        paneId: t.ids.paneId,
        kill: true,
        command: "sh -c 'seq 1 3000000; exec sleep 1000'",
      });
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_current_command}"))
            .trim() === "sleep",
        "the pane's output all written",
      );
      grown = (await rssKb(server)) - before;
    } finally {
      await t.tmux("send-keys", "-t", other, "echo done", "Enter");
      assert.equal((await waited).outcome, "matched");
    }
    // A place left behind holds all 21 MB; without one, the history's rows are all tmux keeps.
    assert.ok(grown < 8_000, `the tmux server grew by ${grown} kB`);
  }, { toolsets: ["inspect", "execute"] });
});

Deno.test("a pane a respawn turned off for a client of ours is turned on again when a watch there needs it", async () => {
  await withRunner(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    const other = (await t.tmux("new-session", "-d", "-s", "other", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    const otherSession = (await t.tmux("display-message", "-p", "-t", other, "#{session_id}"))
      .trim();
    const first = await control.watch(other, [otherSession], () => {});
    const [ours] = await t.outputClients("other");
    const pane = t.ids.paneId;
    await withPlaceResets(runner, address, pane, async (resets) => {
      // Not shown to our client: turned off only (on again, its place would never move).
      assert.deepEqual(resets, [["refresh-client", "-t", ours, "-A", `${pane}:off`]]);
      const line = [...resets.flatMap((r) => [...r, ";"]), "respawn-pane", "-k", "-t", pane, "sh"];
      judgeResult(await runner.exec(address, line));
    });
    // The window comes into our client's session; a watch of the pane takes that client.
    await t.tmux("link-window", "-d", "-s", pane, "-t", "other:");
    await t.prompt(pane);
    const seen: string[] = [];
    const second = await control.watch(pane, [otherSession], (batch) => {
      for (const chunk of batch.output) seen.push(new TextDecoder().decode(chunk));
    });
    assert.deepEqual(await t.outputClients("other"), [ours], "the same client");
    await t.tmux("send-keys", "-t", pane, "echo turned-on", "Enter");
    await waitFor(() => seen.join("").includes("turned-on"), "the pane's output on our client");
    second.close();
    first.close();
  });
});
