/**
 * capture_since under a scroll region: following the cursor's screen rows when only part of the
 * screen scrolled.
 *
 * A program that keeps a header or a status line on the screen sets a scroll region (ESC[4;24r)
 * and prints into it. tmux moves the region's top row into history at each scroll
 * (grid_scroll_history_region), so history grows as it does under plain output, but the rows
 * outside the region stay on the screen: counted from the top of history, they move down by
 * as many rows as history grew, and the region's rows that scrolled out now sit where the
 * header was. Compared row by row where they were, everything from the header's old place on
 * reads as rewritten. {@link followRegion} finds the rows where the region put them instead.
 *
 * @module
 */

import { hashValue } from "./since_cursor.ts";
import type { NormalGrid } from "./since_grid.ts";

/** Where the cursor's screen rows were found: the first row that is none of them, and the rest. */
export interface Placement {
  /** Absolute position of the first row, from where the cursor's screen began, that is new. */
  readonly firstChanged: number;
  /** Absolute positions after it of rows the cursor saw, unchanged, ascending. */
  readonly unchanged: number[];
}

/**
 * How far from the header (or status line) {@link followRegion} found whole it looks for the
 * region's edge: rows of the region that happen to read as they did a screen earlier make it
 * look taller than it is. Each place tried costs one pass over the cursor's screen rows.
 */
const EDGE_TRIES = 4;

/** Rows at each end of the screen a move is looked for at (see {@link rowsStayed}). */
const EDGE_ROWS = 8;

/**
 * Where the rows of the cursor's screen (`old`, their hashes from its top row on) are, when a
 * scroll region explains it: rows above the region (a header) and below it (a status line)
 * still on the screen where they were, the region's top rows moved into history in order, and
 * its other rows moved up the screen as far as history grew (so at the same absolute place).
 * `top` is where the cursor's top screen row would be had the whole screen scrolled (its
 * history size, less what tmux trimmed since); `cursorY`, the cursor's row on that screen.
 * Null when no region explains the rows: the header (above the cursor's row) or status line
 * (below it), one row at least, not blank, must read as it did, and every region row
 * that went into history (one at least, not blank) must be found there, as it read — rows
 * there cannot change any more. A region row still on the screen that reads otherwise was
 * rewritten, and comes back. Bounded: a few passes over `old`, reading only rows the cursor
 * remembered or the screen.
 */
export function followRegion(
  grid: NormalGrid,
  old: readonly number[],
  top: number,
  cursorY: number,
): Placement | null {
  const now = grid.historySize;
  const grown = now - top;
  if (grown <= 0 || old.length < 2) return null;
  const stayed = (y: number) => grid.hashAt(now + y) === old[y];
  // The cursor was in the region: a header is above its row, a status line below it. (A shell's
  // prompt on the last row reads the same a screen later: it is no status line.)
  const headerMost = Math.min(old.length, cursorY);
  let header = 0;
  while (header < headerMost && stayed(header)) header++;
  const footerMost = Math.min(old.length - header, old.length - 1 - cursorY);
  let footer = 0;
  while (footer < footerMost && stayed(old.length - 1 - footer)) footer++;
  for (let above = header; above >= Math.max(0, header - EDGE_TRIES + 1); above--) {
    for (let below = footer; below >= Math.max(0, footer - EDGE_TRIES + 1); below--) {
      // Neither is the whole screen scrolling: compared where they were already.
      if (above === 0 && below === 0) continue;
      const placed = placeRows(grid, old, top, above, below);
      if (placed) return placed;
    }
  }
  return null;
}

/**
 * {@link followRegion} for one region: `above` rows over it and `below` rows under it (of the
 * remembered ones) stayed on the screen, and read as they did.
 */
function placeRows(
  grid: NormalGrid,
  old: readonly number[],
  top: number,
  above: number,
  below: number,
): Placement | null {
  const blank = hashValue("");
  const grown = grid.historySize - top;
  const end = old.length - below;
  let stayedWritten = false;
  let movedWritten = false;
  const found: number[] = [];
  for (let y = 0; y < old.length; y++) {
    if (y < above || y >= end) {
      found.push(grid.historySize + y);
      if (old[y] !== blank) stayedWritten = true;
    } else if (y - above < grown) {
      // Scrolled into history, where nothing is rewritten.
      const at = top + y - above;
      if (grid.hashAt(at) !== old[y]) return null;
      found.push(at);
      if (old[y] !== blank) movedWritten = true;
    } else if (grid.hashAt(top + y) === old[y]) {
      found.push(top + y);
    }
  }
  if (!stayedWritten || !movedWritten) return null;
  // Each row found takes one place: among the places from `top` on, one of the first
  // `old.length + 1` is free, and the first free one is the first new row.
  const taken = new Uint8Array(old.length + 1);
  for (const at of found) if (at - top <= old.length) taken[at - top] = 1;
  const firstChanged = top + taken.indexOf(0);
  return {
    firstChanged,
    unchanged: found.filter((at) => at > firstChanged).sort((a, b) => a - b),
  };
}

/**
 * Whether rows at the top or bottom of the cursor's screen are no longer where they were, but
 * read as they did at the same place on the screen: a header or status line that stayed while
 * the rest scrolled, under a region {@link followRegion} could not follow (a clock in the
 * header). The rows between may then have moved, and come back though read before.
 */
export function rowsStayed(
  grid: NormalGrid,
  old: readonly number[],
  top: number,
  cursorY: number,
): boolean {
  const now = grid.historySize;
  if (now <= top) return false;
  const blank = hashValue("");
  // Above the cursor's row, or below it (see followRegion).
  const ends = new Set<number>();
  for (let i = 0; i < EDGE_ROWS; i++) {
    if (i < Math.min(old.length, cursorY)) ends.add(i);
    if (old.length - 1 - i > cursorY) ends.add(old.length - 1 - i);
  }
  for (const y of ends) {
    if (old[y] === blank) continue;
    if (grid.hashAt(now + y) === old[y] && grid.hashAt(top + y) !== old[y]) return true;
  }
  return false;
}
