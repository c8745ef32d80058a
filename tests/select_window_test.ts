/**
 * select_window's reply tells the window's place in the session as tmux left it, also for a
 * window linked into the session at two indexes (tmux keeps the current one when it holds the
 * window).
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";

Deno.test("select_window of a window linked twice into its session tells the index that is current", async () => {
  await withTmux(async (t, c) => {
    const [window] = (await t.tmux(
      ...["new-window", "-d", "-t", "main:5", "-P", "-F", "#{window_id}", "sh"],
    )).trim().split(" ");
    await t.tmux("link-window", "-d", "-s", window, "-t", "main:1");
    await t.tmux("select-window", "-t", "main:5");
    const r = await c.ok<{ index: number; active: boolean }>("select_window", {
      windowId: window,
      session: "main",
    });
    const now = (await t.tmux("display-message", "-p", "-t", "main:", "#{window_index}")).trim();
    assert.deepEqual({ index: r.index, active: r.active }, { index: Number(now), active: true });
    // Current elsewhere: selected at the index tmux picks, and said so.
    await t.tmux("select-window", "-t", t.ids.windowId);
    const again = await c.ok<{ index: number; active: boolean }>("select_window", {
      windowId: window,
      session: "main",
    });
    const then = (await t.tmux("display-message", "-p", "-t", "main:", "#{window_index}")).trim();
    assert.deepEqual({ index: again.index, active: again.active }, {
      index: Number(then),
      active: true,
    });
  });
});
