import assert from "node:assert/strict";
import type { PaneState } from "./capture.ts";
import { trimRow } from "./capture.ts";
import {
  ANCHOR_ROWS,
  hashValue,
  MAX_REMEMBERED_ROWS,
  prefixWithHash,
  rowHash,
  type SinceCursor,
} from "./since_cursor.ts";
import { compareSince, cursorFor, MAX_TRIMS_TRIED } from "./since_compare.ts";
import { denseGrid, type NormalGrid } from "./since_grid.ts";
import { TERMINAL_COLOURS } from "./shown_cells.ts";

Deno.test("prefixWithHash finds where a row still begins with what it read then, in one pass", () => {
  assert.equal(prefixWithHash("$ echo hi", hashValue("$")), 1);
  assert.equal(prefixWithHash("$ echo hi", hashValue("$ echo hi")), 9);
  assert.equal(prefixWithHash("$ echo hi", hashValue("")), 0);
  assert.equal(prefixWithHash("progress 50%", hashValue("progress 5%")), -1);
  assert.equal(prefixWithHash("", hashValue("x")), -1);
  assert.equal(prefixWithHash("日本🙂 x", hashValue("日本🙂")), 4);
});

const STATE: PaneState = {
  paneId: "%1",
  panePid: 10,
  serverPid: 20,
  serverStart: 1_796_000_000,
  width: 80,
  height: 4,
  historySize: 0,
  historyLimit: 100,
  cursorX: 0,
  cursorY: 0,
  alternateScreen: false,
  inMode: false,
  mode: "",
  scrollPosition: null,
  dead: false,
  colours: TERMINAL_COLOURS,
};

/** A grid holding `all` rows from the top of history, the last `height` on screen. */
function grid(
  all: string[],
  options: { height?: number; cursorRow?: number; limit?: number; width?: number } = {},
): NormalGrid {
  const height = options.height ?? 4;
  const historySize = Math.max(0, all.length - height);
  const rows = [...all, ...Array(Math.max(0, height - all.length)).fill("")];
  return denseGrid({
    historySize,
    historyLimit: options.limit ?? 100,
    width: options.width ?? 80,
    first: 0,
    cursorRow: options.cursorRow ?? historySize + Math.min(all.length, height) - 1,
  }, rows);
}

function numbered(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
}

Deno.test("compareSince: nothing written, appended lines, a row rewritten in place", () => {
  const before = grid([...numbered(1, 20), "$ "].map(trimRow));
  const cursor = cursorFor(before, STATE, null);
  assert.equal(cursor.base, before.historySize - ANCHOR_ROWS);
  const same = compareSince(cursor, before);
  assert.deepEqual([same.rows, same.firstRow, same.missed], [[], null, false]);

  const after = grid([...numbered(1, 20), "$ echo hi", "hi", "$"]);
  const added = compareSince(cursor, after);
  assert.deepEqual(added.rows, ["$ echo hi", "hi", "$"]);
  assert.equal(added.firstRow, after.end - after.historySize - 3);
  assert.deepEqual([added.missed, added.trimmedRows], [false, 0]);

  const bar = grid([...numbered(1, 20), "50%"]);
  const barCursor = cursorFor(bar, STATE, null);
  const rewritten = compareSince(barCursor, grid([...numbered(1, 20), "100%"]));
  assert.deepEqual(rewritten.rows, ["100%"]);
});

Deno.test("compareSince: rows moved up by whole trims are found, a loss is reported", () => {
  // limit 100: tmux trims 10 rows at a time; history is 96 of 100 (trims possible).
  const all = numbered(1, 100);
  const cursor = cursorFor(grid(all), STATE, null);
  const trimmed = [...numbered(11, 100), ...numbered(101, 105)];
  const found = compareSince(cursor, grid(trimmed));
  assert.equal(found.missed, false);
  assert.equal(found.trimmedRows, 10);
  assert.deepEqual(found.rows, numbered(101, 105));

  const gone = compareSince(cursor, grid(numbered(500, 599)));
  assert.deepEqual([gone.missed, gone.missedReason, gone.mayRepeat], [
    true,
    "history-trimmed",
    true,
  ]);
  assert.equal(gone.rows.length, 100, "everything the pane still holds");

  // Far below the limit, trims are impossible: a missing anchor means a clear.
  const small = cursorFor(grid(numbered(1, 30)), STATE, null);
  const cleared = compareSince(small, grid(["fresh"]));
  assert.deepEqual([cleared.missed, cleared.missedReason, cleared.rows], [
    true,
    "history-cleared",
    ["fresh"],
  ]);
});

Deno.test("compareSince: with no history at the cursor, its settled screen rows must stay", () => {
  const cursor = cursorFor(grid(["$ make", "built", "$"]), STATE, null);
  assert.equal(cursor.historySize, 0);
  // More output keeps them where they were, on the screen or pushed into history.
  const more = compareSince(cursor, grid(["$ make", "built", "$ ls", "a", "b", "$"]));
  assert.deepEqual([more.missed, more.rows], [false, ["$ ls", "a", "b", "$"]]);
  // A clear moved them away: what was written after the cursor may be gone with them.
  const cleared = compareSince(cursor, grid(["line 35", "line 36", "$"]));
  assert.deepEqual([cleared.missed, cleared.missedReason, cleared.rows], [
    true,
    "history-cleared",
    ["line 35", "line 36", "$"],
  ]);
});

Deno.test("compareSince: after a clear, the cursor's screen rows where the clear left them are not new", () => {
  const height = { height: 6 };
  // 25 history rows, then "line 26".."line 30" and the prompt on the screen.
  const cursor = cursorFor(grid([...numbered(1, 30), "$"], height), STATE, null);
  assert.equal(cursor.historySize, 25);
  // clear-history: the screen stays, its top now the top of what tmux holds; then output.
  const cleared = compareSince(cursor, grid([...numbered(26, 30), "$ echo hi", "hi", "$"], height));
  assert.deepEqual(
    [cleared.missed, cleared.missedReason, cleared.rows, cleared.mayRepeat, cleared.unchangedAbove],
    [true, "history-cleared", ["$ echo hi", "hi", "$"], false, 5],
  );
  assert.deepEqual([cleared.firstRow, cleared.trimmedRows, cleared.unchangedRows], [3, 0, []]);
  // Nothing since the clear: nothing new.
  const quiet = compareSince(cursor, grid([...numbered(26, 30), "$"], height));
  assert.deepEqual([quiet.missed, quiet.rows, quiet.unchangedAbove], [true, [], 6]);

  // Anything else cannot be placed: all the pane holds comes back, said to maybe repeat.
  const lost = (rows: string[]) => {
    const answer = compareSince(cursor, grid(rows, height));
    assert.deepEqual(
      [answer.missed, answer.missedReason, answer.rows, answer.mayRepeat, answer.unchangedAbove],
      [true, "history-cleared", rows, true, 0],
      JSON.stringify(rows),
    );
  };
  // Output scrolled the screen before the clear: its first rows went with the history.
  lost([...numbered(28, 30), "$ echo hi", "hi", "$"]);
  // Rows reading like the cursor's, but not at the top where a clear leaves the screen.
  lost(["x", ...numbered(26, 30), "$"]);
  // One of them rewritten.
  lost([...numbered(26, 29), "line 30!", "$"]);
  // Blank rows prove nothing.
  const blanks = cursorFor(
    grid([...numbered(1, 30), ...Array(5).fill(""), "$"], height),
    STATE,
    null,
  );
  const blank = compareSince(blanks, grid([...Array(5).fill(""), "$ x"], height));
  assert.deepEqual([blank.rows, blank.mayRepeat], [[...Array(5).fill(""), "$ x"], true]);

  // Found in place (more output, or trims), nothing may repeat.
  const found = compareSince(cursor, grid([...numbered(1, 30), "$ ls", "a"], height));
  assert.deepEqual([found.missed, found.mayRepeat, found.unchangedAbove], [false, false, 0]);
});

Deno.test("compareSince: a forged cursor's billion trims are not tried; a deep one is missed", () => {
  // A history limit of 0 makes every trim one row: a base of 10⁹ asked a billion places.
  const now = grid(numbered(1, 10), { limit: 0 });
  const real = cursorFor(now, STATE, null);
  const forged: SinceCursor = { ...real, base: 1_000_000_000, historySize: 1_000_000_000 };
  const began = Date.now();
  const answer = compareSince(forged, now);
  assert.deepEqual([answer.missed, answer.missedReason], [true, "history-trimmed"]);
  assert.ok(Date.now() - began < 1_000, "answered without trying every place");
  // A history far over its limit (the limit lowered since): trims of one row each. Rows moved
  // up by more trims than are tried are reported missed, never misplaced.
  const over = cursorFor(grid(numbered(1, 200), { limit: 10 }), STATE, null);
  const after = (trims: number) =>
    compareSince(over, grid(numbered(1 + trims, 200 + trims), { limit: 10 }));
  assert.deepEqual([after(30).missed, after(30).trimmedRows], [false, 30]);
  assert.deepEqual([after(MAX_TRIMS_TRIED).missed, after(MAX_TRIMS_TRIED).trimmedRows], [
    false,
    MAX_TRIMS_TRIED,
  ]);
  assert.deepEqual([after(MAX_TRIMS_TRIED + 1).missed, after(100).missed], [true, true]);
});

Deno.test("compareSince: a forged cursor of repeated rows after a width change is searched in linear time", () => {
  // A pane repeating one row, and a cursor forged with as many rows as a cursor may hold, all
  // that row, at another width: comparing the whole anchor at every row took (rows × anchor)
  // steps, seconds on end with the server deaf meanwhile.
  const all = Array(30_000).fill("y");
  const now = grid(all, { width: 60 });
  const forged: SinceCursor = {
    ...cursorFor(grid(["y"]), STATE, null),
    width: 80,
    historySize: 40_000,
    base: 25_000,
    cursorRow: 40_000,
    rows: rowHash("y").repeat(MAX_REMEMBERED_ROWS),
  };
  const began = performance.now();
  const answer = compareSince(forged, now);
  assert.ok(performance.now() - began < 1_000, `${performance.now() - began} ms`);
  assert.equal(answer.resized, true);
});

Deno.test("compareSince: a width change is reported as resized, found again or missed", () => {
  const cursor = cursorFor(grid([...numbered(1, 20), "$"]), STATE, null);
  const reflowed = compareSince(cursor, grid([...numbered(1, 20), "$ ls", "out"], { width: 60 }));
  assert.deepEqual([reflowed.resized, reflowed.missed], [true, false]);
  // The screen rows above the cursor, still there unchanged, were read before.
  assert.deepEqual(reflowed.rows, ["$ ls", "out"]);
  // One the reflow changed comes back, and every row after it.
  const rewrapped = compareSince(
    cursor,
    grid([...numbered(1, 18), "line 19 and more", "line 20", "$ ls"], { width: 60 }),
  );
  assert.deepEqual(rewrapped.rows, ["line 19 and more", "line 20", "$ ls"]);
  const lost = compareSince(cursor, grid(["other"], { width: 60 }));
  assert.deepEqual([lost.resized, lost.missed, lost.missedReason], [true, true, "resized"]);
});

/**
 * A grid as tmux leaves it after a scroll region of rows `upper`..`lower` of a `height`-row
 * screen scrolled `lines` lines through it, each scroll moving the region's top row into
 * history (grid_scroll_history_region): the rows outside the region stay on the screen.
 */
function regionGrid(
  history: string[],
  screen: string[],
  upper: number,
  lower: number,
  lines: string[],
): NormalGrid {
  const hist = [...history];
  const rows = [...screen];
  for (const line of lines) {
    hist.push(rows[upper]);
    rows.splice(upper, 1);
    rows.splice(lower, 0, "");
    rows[lower - 1] = line;
  }
  // The cursor sits on the region's blank bottom row, as after a line and its newline.
  return denseGrid({
    historySize: hist.length,
    historyLimit: 1000,
    width: 80,
    first: 0,
    cursorRow: hist.length + lower,
  }, [...hist, ...rows]);
}

/** `lines` printed, each then a newline, into a region of rows `upper`..`lower`. */
function scrolled(
  header: string[],
  footer: string[],
  height: number,
  lines: string[],
): { grid: NormalGrid; more: (extra: string[]) => NormalGrid } {
  const upper = header.length;
  const lower = height - 1 - footer.length;
  const blank = Array(height).fill("");
  header.forEach((h, i) => blank[i] = h);
  footer.forEach((f, i) => blank[lower + 1 + i] = f);
  // Lines fill the region from its top, then scroll it; the cursor ends on a blank row.
  const fits = lower - upper;
  const first = lines.slice(0, fits);
  first.forEach((l, i) => blank[upper + i] = l);
  const build = (rest: string[]) => regionGrid([], blank, upper, lower, rest);
  return {
    grid: build(lines.slice(fits)),
    more: (extra) => build([...lines.slice(fits), ...extra]),
  };
}

Deno.test("compareSince: rows a scroll region moved under a header are found, only new ones come back", () => {
  const header = ["HEADER-ALPHA", "HEADER-BETA", "HEADER-GAMMA"];
  const { grid: before, more } = scrolled(header, [], 24, numbered(0, 39));
  assert.equal(before.historySize, 20);
  const cursor = cursorFor(before, STATE, null);
  const after = more(numbered(100, 107));
  const answer = compareSince(cursor, after);
  assert.deepEqual(
    [answer.rows, answer.unchangedRows, answer.missed, answer.mayRepeat, answer.regionMoved],
    [numbered(100, 107), [], false, false, true],
  );
  assert.equal(answer.firstRow, after.historySize + 3 + 12 - after.historySize);
  // More lines than the region holds: the rows it held went into history in order, and the
  // new ones after them; the header is still not new.
  const many = compareSince(cursor, more(numbered(100, 149)));
  assert.deepEqual([many.rows.slice(0, 2), many.rows.slice(-2), many.missed], [
    numbered(100, 101),
    numbered(148, 149),
    false,
  ]);
  // The header sits on the screen between new lines that went into history and those still
  // in the region: it comes back among them, counted unchanged.
  const at = many.rows.indexOf("HEADER-ALPHA");
  assert.deepEqual([at, many.unchangedRows], [30, [30, 31, 32]]);
  assert.ok(!many.rows.includes("line 39"));
  // A cursor taken before anything scrolled (no history): found the same way.
  const early = scrolled(header, [], 24, numbered(0, 9));
  assert.equal(early.grid.historySize, 0);
  const fromEmpty = compareSince(cursorFor(early.grid, STATE, null), early.more(numbered(10, 49)));
  assert.deepEqual([fromEmpty.rows.filter((r) => !r.startsWith("HEADER")), fromEmpty.missed], [
    numbered(10, 49),
    false,
  ]);
  assert.deepEqual(fromEmpty.unchangedRows, [20, 21, 22]);
  // Nothing scrolled since: nothing new.
  assert.deepEqual(compareSince(cursor, before).rows, []);
  // History at its limit: tmux trimmed rows off its top too; everything moved up as far.
  const trimmedRows = [...after.rowsFrom(0).rows.slice(2), ""];
  const trimmed = compareSince(
    cursor,
    denseGrid({
      historySize: after.historySize - 2,
      historyLimit: 28,
      width: 80,
      first: 0,
      cursorRow: after.cursorRow! - 2,
    }, trimmedRows),
  );
  assert.deepEqual([trimmed.rows, trimmed.trimmedRows, trimmed.missed], [
    numbered(100, 107),
    2,
    false,
  ]);
});

Deno.test("compareSince: a status line below a scroll region stays, counted unchanged", () => {
  const { grid: before, more } = scrolled([], ["STATUS"], 24, numbered(0, 39));
  const cursor = cursorFor(before, STATE, null);
  const answer = compareSince(cursor, more(numbered(100, 107)));
  assert.deepEqual([answer.rows, answer.unchangedRows, answer.missed], [
    [...numbered(100, 107), "", "STATUS"],
    [9],
    false,
  ]);
  // Both at once.
  const both = scrolled(["TOP"], ["BOTTOM"], 24, numbered(0, 39));
  const bothAnswer = compareSince(cursorFor(both.grid, STATE, null), both.more(numbered(100, 104)));
  assert.deepEqual([bothAnswer.rows, bothAnswer.unchangedRows], [
    [...numbered(100, 104), "", "BOTTOM"],
    [6],
  ]);
});

Deno.test("compareSince: a region that cannot be followed comes back whole, said to maybe repeat", () => {
  const header = ["12:00:00 clock", "HEADER-BETA"];
  const { grid: before, more } = scrolled(header, [], 24, numbered(0, 39));
  const cursor = cursorFor(before, STATE, null);
  // The clock ticked: the header no longer reads as it did, the rows are not placed.
  const after = more(numbered(100, 107));
  const rows = after.rowsFrom(0).rows;
  rows[after.historySize] = "12:00:01 clock";
  const ticked = denseGrid({
    historySize: after.historySize,
    historyLimit: 1000,
    width: 80,
    first: 0,
    cursorRow: after.cursorRow,
  }, rows);
  const answer = compareSince(cursor, ticked);
  assert.deepEqual([answer.missed, answer.mayRepeat, answer.regionMoved], [false, true, false]);
  assert.ok(answer.rows.includes("line 20"), "old rows come back, said to maybe repeat");

  // Plain output with a row above the cursor rewritten is no region: nothing said to repeat.
  const plain = cursorFor(grid([...numbered(1, 20), "50%", "$"]), STATE, null);
  const redrawn = compareSince(plain, grid([...numbered(1, 20), "100%", "$ ls", "a", "$"]));
  assert.deepEqual([redrawn.rows, redrawn.mayRepeat, redrawn.regionMoved], [
    ["100%", "$ ls", "a", "$"],
    false,
    false,
  ]);
});

Deno.test("compareSince: rows rewritten above the cursor on an empty history are rewritten, not a clear", () => {
  const cursor = cursorFor(
    grid(["keep0", "keep1", "keep2", "keep3", "keep4", ""], { height: 8 }),
    STATE,
    null,
  );
  assert.equal(cursor.historySize, 0);
  const redrawn = compareSince(cursor, grid(["keep0", "keep1", "new", ""], { height: 8 }));
  assert.deepEqual([redrawn.missed, redrawn.missedReason, redrawn.rows, redrawn.firstRow], [
    false,
    null,
    ["new"],
    2,
  ]);
  // Rewritten from the top: a clear or a redraw, which cannot be told; said so.
  const fromTop = compareSince(cursor, grid(["other", "rows"], { height: 8 }));
  assert.deepEqual([fromTop.missed, fromTop.missedReason, fromTop.clearUnproven], [
    true,
    "history-cleared",
    true,
  ]);
  // Blank rows in place prove nothing.
  const blanks = cursorFor(grid(["", "", "x", "$"], { height: 8 }), STATE, null);
  const gone = compareSince(blanks, grid(["", "", "y", "$"], { height: 8 }));
  assert.deepEqual([gone.missed, gone.clearUnproven], [true, true]);
  // A clear of history rows is proved: nothing hedged.
  const deep = cursorFor(grid(numbered(1, 30)), STATE, null);
  assert.equal(compareSince(deep, grid(["fresh"])).clearUnproven, false);
});

Deno.test("compareSince: following a scroll region over a forged cursor of repeated rows stays bounded", () => {
  // Every row reads alike: the header and status line look as tall as the screen, and every
  // place tried costs a pass over as many rows as a cursor may hold.
  const rows = 10_000;
  const all = [...Array(rows).fill("y"), "x"];
  const now = grid([...all, ...Array(rows).fill("y")], { height: rows });
  const forged: SinceCursor = {
    ...cursorFor(grid(["y"]), STATE, null),
    historySize: rows,
    base: rows - ANCHOR_ROWS,
    cursorRow: 2 * rows,
    rows: rowHash("y").repeat(ANCHOR_ROWS + rows),
  };
  const began = performance.now();
  compareSince(forged, now);
  assert.ok(performance.now() - began < 1_000, `${performance.now() - began} ms`);
});

Deno.test("compareSince: an anchor of repeated rows that reads the same at more than one trim proves no place", () => {
  // limit 100: tmux trims 10 rows at a time. A pane of blank lines, or of one line repeated,
  // reads the same wherever the trims put its rows: finding them proves nothing.
  for (const filler of ["", "waiting for server..."]) {
    const cursor = cursorFor(grid(Array(100).fill(filler)), STATE, null);
    // A line written since, then enough more to trim it away.
    const after = compareSince(cursor, grid(Array(100).fill(filler)));
    assert.deepEqual([after.missed, after.missedReason, after.mayRepeat], [
      true,
      "history-trimmed",
      true,
    ], JSON.stringify(filler));
  }
  // A line written before the cursor is not new: a misplaced anchor had it come back as new.
  const height = 24;
  const before = grid([...Array(120).fill("y"), "DONE", ""], { height });
  const cursor = cursorFor(before, STATE, null);
  // Four lines since (and one trim): the anchor reads the same where it was and a trim up.
  const now = grid([...Array(110).fill("y"), "DONE", "y", "y", "y", "y", ""], { height });
  const answer = compareSince(cursor, now);
  assert.deepEqual([answer.missed, answer.missedReason, answer.mayRepeat], [
    true,
    "history-trimmed",
    true,
  ]);
  // Rows that read the same at one place only still prove it.
  const distinct = cursorFor(grid([...numbered(1, 120), "DONE", ""], { height }), STATE, null);
  const found = compareSince(
    distinct,
    grid([...numbered(11, 120), "DONE", "y", "y", "y", "y", ""], { height }),
  );
  assert.deepEqual([found.missed, found.trimmedRows, found.rows], [false, 10, [
    "y",
    "y",
    "y",
    "y",
  ]]);
});

Deno.test("compareSince: after a width change, an anchor found at more than one place proves none", () => {
  // Long lines rejoined by the reflow moved every row up; the anchor, rows of one line
  // repeated, reads the same where it was too: rows there were taken for the cursor's and the
  // line written since was skipped.
  for (const filler of ["y", ""]) {
    const cursor = cursorFor(
      grid([...Array(20).fill("L".repeat(80)), ...Array(30).fill(filler), "$"]),
      STATE,
      null,
    );
    const now = grid([
      ...Array(5).fill("L".repeat(320)),
      ...Array(30).fill(filler),
      "SECRET",
      ...Array(30).fill(filler),
      "$",
    ], { width: 320 });
    const answer = compareSince(cursor, now);
    assert.deepEqual([answer.resized, answer.missed, answer.missedReason, answer.mayRepeat], [
      true,
      true,
      "resized",
      true,
    ], JSON.stringify(filler));
    assert.ok(answer.rows.includes("SECRET"));
  }
});
