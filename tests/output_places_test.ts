/**
 * tmux 3.3a keeps a control client's place in the output of a pane whose window left the
 * client's session and never moves it again: everything the pane prints from then on stays in
 * tmux's memory while the client is attached (and a respawn of the pane would crash tmux,
 * tests/respawn_test.ts). A client of ours for watches therefore leaves when a window it was
 * told closed still exists, and its waits go on with a new one. Real tmux on a private socket.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

Deno.test("a window moved out of a watch client's session: the client leaves, and the wait goes on with a new one", async () => {
  await withTmux(async (t, c) => {
    const pane = t.ids.paneId;
    const busy = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    await t.prompt(busy);
    await t.tmux("new-session", "-d", "-s", "other");
    const waited = c.ok<{ outcome: string }>("wait_for_text", {
      paneId: pane,
      patterns: ["finally"],
      timeoutMs: 20_000,
    });
    const [first] = await waitFor(async () => {
      const names = await t.outputClients();
      return names.length > 0 ? names : null;
    }, "the wait's client");
    // The busy pane prints while the client is there: it has a place in its output.
    await t.tmux("send-keys", "-t", busy, "echo printed", "Enter");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", busy)).includes("printed\n"),
      "the busy pane's output",
    );
    await t.tmux("move-window", "-s", busy, "-t", "other:");
    await waitFor(async () => {
      const names = await t.outputClients();
      return !names.includes(first) && names.length > 0;
    }, "the old client gone, a new one there");
    await t.tmux("send-keys", "-t", pane, "echo finally", "Enter");
    assert.equal((await waited).outcome, "matched");
  }, { toolsets: ["inspect"] });
});
