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

Deno.test("a prompt written without a newline, then a width change before the next read, is told", async () => {
  for (const width of ["40", "20"]) {
    await withWatched("before\r\n$ ", async (t, w) => {
      // The program asks and waits on the same line; the width changes before the watch reads
      // (a person's client attaches or resizes).
      await w.write("Continue? [y/N] ");
      await t.tmux("resize-window", "-t", "main:1", "-x", width);
      const shown: string[] = [];
      for (let i = 0; i < 3; i++) {
        shown.push(...((await w.watched.read()).rows ?? []).map((r) => r.shown));
      }
      assert.deepEqual(shown, ["Continue? [y/N]"], `width ${width}`);
    });
  }
});

Deno.test("a wrapped line written further, then a width change before the next read: only what was added is told", async () => {
  const long = "$ " + "a".repeat(40) + " OLD-TAIL";
  for (const width of ["40", "20", "55"]) {
    await withWatched(`before\r\n${long}`, async (t, w) => {
      await w.write(" NEW-BIT");
      await t.tmux("resize-window", "-t", "main:1", "-x", width);
      const rows = (await w.watched.read()).rows ?? [];
      assert.equal(rows.length, 1, `width ${width}: ${JSON.stringify(rows)}`);
      const [row] = rows;
      assert.equal(row.text.slice(row.from).trim(), "NEW-BIT", `width ${width}`);
    });
  }
});
