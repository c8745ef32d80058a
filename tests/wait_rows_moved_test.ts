/**
 * A watch's rows when tmux moves them under it: the pane's width changes (rows reflow), with
 * the cursor on a wrapped line. What the pane showed before is never told as written.
 */

import assert from "node:assert/strict";
import { withWatched } from "./helpers/watched.ts";

Deno.test("a width change with the cursor at the end of a wrapped line tells none of that line as new", async () => {
  // At width 30 the line takes three rows; the cursor is on the last one, after "OLD-TAIL".
  const long = "$ " + "a".repeat(40) + " OLD-TAIL";
  for (const width of ["40", "20", "55"]) {
    await withWatched(`before\r\n${long}`, async (t, w) => {
      await t.tmux("resize-window", "-t", "main:1", "-x", width);
      const after = await w.watched.read();
      assert.deepEqual(after.rows?.map((r) => r.shown) ?? [], [], `width ${width}`);
      // What the pane writes next is told.
      await w.write(" NEW\r\nDONE\r\n");
      const shown = ((await w.watched.read()).rows ?? []).map((r) => r.shown);
      assert.ok(shown.includes("DONE"), `width ${width}: ${JSON.stringify(shown)}`);
      assert.ok(
        !shown.some((s) => s.includes("OLD-TAIL") && !s.includes("NEW")),
        JSON.stringify(shown),
      );
    });
  }
});
