/**
 * Which of a pane's rows a watch numbers (watch_rows.ts, watch_reread.ts), how many of them
 * one read captures at most, the captures that read them, and the rows outside a scroll region
 * a watch reads by their place ({@link FixedRows}).
 *
 * A watch numbers rows from the top of the history: output scrolls the screen's top row into
 * the history, and every row keeps its number. Under a scroll region that is not the whole
 * screen (a program that keeps a header or a status line: `ESC[3;24r`) that no longer holds.
 * tmux moves the region's top row to the end of the history (grid_scroll_history_region),
 * above the rows over the region, and leaves the rows outside the region where they are on
 * the screen: counted from the top of the history, a header moves down by a row at each
 * scroll (and its old number then holds a line the region wrote), and a row scrolled into the
 * history lands above rows the watch had read after it. So under such a region a watch numbers
 * the history, then the region's rows only: those keep their numbers as the history grows, as
 * a whole screen's do. The rows outside the region (its fixed rows) are compared by their place
 * on the screen. The alternate screen keeps no history: there no row moves, whatever the region.
 *
 * @module
 */

import { clampRow, rowArg } from "../tmux/capture.ts";
import { changedRows, type WrittenRow } from "./captured_rows.ts";
import type { PaneProbe } from "./pane_probe.ts";

/**
 * Rows one read captures at most (as many as a `since` cursor's rows a wait reads): more
 * written between two reads are counted, not read, the last ones read.
 */
export const READ_ROWS = 10_000;

/**
 * What a watch's read of more than a screen may print to be held whole: past it (rows of a
 * wide pane printing 21 bytes a cell) the watch reads a quarter of the rows, until a read
 * fits or only a screen is left, the others counted as skipped ({@link fewerRows}).
 */
export const WATCH_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * The rows a watch reads at most after a read of `attempted` rows printed more than
 * {@link WATCH_ANSWER_BYTES} (only a watch that reads more than a screen's worth has a bound:
 * {@link readBound}): a quarter of them, never under a screen (`height`).
 */
export function fewerRows(readRows: number, attempted: number, height: number): number {
  return Math.max(height, Math.floor(Math.min(readRows, attempted) / 4));
}

/**
 * The answer bound of a watch's reads while it reads at most `readRows` rows: none once that is
 * a screen's worth (`height`), which the pane's size bounds whatever its rows print.
 */
export function readBound(readRows: number, height: number): number | undefined {
  return readRows > height ? WATCH_ANSWER_BYTES : undefined;
}

/** The screen rows a watch numbers after the history: a scroll region's, or the whole screen. */
export interface Span {
  /** The region's first screen row. */
  readonly upper: number;
  /** Its last. */
  readonly lower: number;
  /** The screen's rows. */
  readonly height: number;
}

/** The rows a watch numbers on the pane a probe saw. */
export function spanOf(p: PaneProbe): Span {
  const region = !p.alternateScreen && p.regionLower < p.height && p.regionUpper < p.regionLower &&
    (p.regionUpper > 0 || p.regionLower < p.height - 1);
  return region
    ? { upper: p.regionUpper, lower: p.regionLower, height: p.height }
    : { upper: 0, lower: p.height - 1, height: p.height };
}

/** Whether rows lie outside the span (a header or a status line stays on the screen). */
export function hasFixedRows(s: Span): boolean {
  return s.upper > 0 || s.lower < s.height - 1;
}

/**
 * Whether two spans number the rows alike. The whole screen does whatever its height (rows
 * taken back from the history onto a taller screen keep their numbers).
 */
export function sameSpan(a: Span, b: Span): boolean {
  if (!hasFixedRows(a) && !hasFixedRows(b)) return true;
  return a.upper === b.upper && a.lower === b.lower && a.height === b.height;
}

/** What a watch knew of a pane at its last read: whether rows kept their numbers since. */
export interface Numbered {
  readonly historySize: number;
  readonly width: number;
  readonly height: number;
  /** The rows numbered after the history. */
  readonly span: Span;
}

/** What a probe says of the rows' numbers since the last read (see {@link numbersSince}). */
export interface NumbersSince {
  /** The rows moved up by at least this (or may have: tmux trimmed); null: they kept them. */
  readonly drop: number | null;
  /**
   * How far the start's screen's first row moved up: the drop, but none that came with a width
   * change (the rows reflowed, and the history shrank by rows a taller screen took back, a
   * terminal maximised: never read, they are not to be read again).
   */
  readonly floorDrop: number;
  /** The width changed: the rows reflowed. */
  readonly reflowed: boolean;
  /** The span changed: the rows after the history are numbered otherwise. */
  readonly wide: boolean;
  /**
   * The history limit, when rows may have moved up where the size cannot tell (see
   * WatchedRows.movedUnseen); null when not.
   */
  readonly unseen: number | null;
}

/**
 * What a probe says of the rows' numbers: the history shrank (cleared, or trimmed) or may
 * have been trimmed, the width changed, or the span. Rows taken back from the history onto a
 * taller screen (the pane below closed, the window made taller) keep their numbers: the
 * history shrinks by at most what the height grew, and nothing is read again (else lines
 * above the start would pass for new, and a line printed again for one already read).
 */
export function numbersSince(last: Numbered, now: PaneProbe): NumbersSince {
  const fell = Math.max(0, last.historySize - now.historySize);
  const taller = fell > 0 && now.width === last.width && fell <= now.height - last.height;
  // At its limit tmux drops the oldest tenth of the history, then goes on adding rows: the
  // size can come back to or above what it was, and rows moved up by an unknown number.
  const step = Math.max(1, Math.floor(now.historyLimit / 10));
  const trimZone = now.historyLimit - step;
  const trimmed = now.historySize !== last.historySize && now.historySize >= trimZone;
  const unseen = now.historyLimit < 20 && now.historySize >= now.historyLimit &&
    !now.alternateScreen && now.cursorY === now.height - 1;
  // A size that fell there fell by whole trims less the rows added since: the rows moved up
  // by the trims (1 999 → 1 801 at a limit of 2 000 is one trim of 200 and two rows added).
  // Rounded up to whole trims, exact while fewer than a trim's rows were written between two
  // reads, and never more than they moved; taken as the fall itself, the next read began two
  // rows below the first new one and never read it.
  const moved = trimmed && fell > 0 && !taller ? Math.ceil(fell / step) * step : fell;
  return {
    drop: (fell > 0 && !taller) || trimmed ? moved : null,
    floorDrop: ((fell > 0 && !taller) || trimmed) && now.width === last.width ? moved : 0,
    reflowed: now.width !== last.width,
    wide: !sameSpan(spanOf(now), last.span),
    unseen: unseen ? now.historyLimit : null,
  };
}

/**
 * The number span `to` gives the row span `from` numbered `row`, on a pane whose history holds
 * `historySize` rows: a row of the history keeps its number, one on the screen is found by its
 * place there (one above `to`'s rows, in its header, gives the first of them).
 */
export function renumber(row: number, from: Span, to: Span, historySize: number): number {
  if (row < historySize) return row;
  return historySize + Math.max(0, from.upper + row - historySize - to.upper);
}

/** The number just past the last row the watch numbers: the history, then the span's rows. */
export function spanEnd(p: PaneProbe, s: Span): number {
  return p.historySize + s.lower - s.upper + 1;
}

/**
 * The number of the cursor's row, and its column; outside the span (in a header or a status
 * line), the span's first row from its start: what the program writes there is the fixed rows'.
 */
export function cursorAt(p: PaneProbe, s: Span): { row: number; x: number } {
  const y = p.cursorY;
  return y >= s.upper && y <= s.lower
    ? { row: p.historySize + y - s.upper, x: p.cursorX }
    : { row: p.historySize, x: 0 };
}

/**
 * The row a capture from `rel` begins at, by the watch's numbers: rows from `rel` on, counted
 * from the span's first (negative: the history), as tmux clamps them.
 */
export function spanRow(rel: number, p: PaneProbe, s: Span): number {
  const n = rowArg(rel);
  return n < 0
    ? p.historySize + clampRow(n, p.historySize, p.height)
    : p.historySize + Math.min(n, s.lower - s.upper);
}

/**
 * The tmux commands (`;` between them) that print the rows `from` to `to` (null: to the span's
 * end) as one capture from the first to the last would, were the rows the watch numbers one
 * after the other on the screen: counted from the span's first row, negative in the history.
 * Under a region below fixed rows, two captures, the history's and the region's: their output
 * joined is the one capture's (with -J a history row that wraps ends without its newline, so
 * the region's row that goes on with it follows on the same line). Else one, the capture the
 * watch always made.
 */
export function spanCapture(
  paneId: string,
  flags: readonly string[],
  from: number,
  to: number | null,
  s: Span,
): string[] {
  const capture = (a: number, b: number | null) => [
    ...["capture-pane", "-p", ...flags, "-t", paneId, "-S", String(rowArg(a))],
    ...b === null ? [] : ["-E", String(rowArg(b))],
  ];
  const last = to ?? s.lower - s.upper;
  if (s.upper === 0) return capture(from, to === null && s.lower === s.height - 1 ? null : last);
  if (from >= 0) return capture(from + s.upper, last + s.upper);
  if (last < 0) return capture(from, last);
  return [...capture(from, -1), ";", ...capture(s.upper, last + s.upper)];
}

/**
 * The commands that print the fixed rows (see {@link hasFixedRows}), those above the span
 * after mark "H" and those below it after mark "F" (with `guard`): none for the whole screen.
 */
export function fixedCaptures(paneId: string, guard: string, s: Span): string[] {
  const out: string[] = [];
  const rows = (mark: string, a: number, b: number) =>
    out.push(
      ...[";", "display-message", "-p", guard + mark],
      ...[";", "capture-pane", "-p", "-J", "-t", paneId, "-S", String(a), "-E", String(b)],
    );
  if (s.upper > 0) rows("H", 0, s.upper - 1);
  if (s.lower < s.height - 1) rows("F", s.lower + 1, s.height - 1);
  return out;
}

/** The marks {@link fixedCaptures} prints, in order. */
export function fixedMarks(s: Span): string[] {
  return [...s.upper > 0 ? ["H"] : [], ...s.lower < s.height - 1 ? ["F"] : []];
}

/**
 * The fixed rows (see {@link hasFixedRows}) of a watch's pane as it read them: compared by their
 * place on the screen, where a header drawn again or a status line that ticked is told, apart
 * from the span's rows, which the watch compares by their numbers.
 */
export class FixedRows {
  /**
   * As last read, and as they stood when first read: null while the span is the whole screen
   * (or before they were read).
   */
  #last: string[] | null = null;
  #base: string[] | null = null;

  /** The rows as last read. */
  get last(): readonly string[] | null {
    return this.#last;
  }

  /** The rows as first read. */
  get base(): readonly string[] | null {
    return this.#base;
  }

  /** Takes `rows` (null: none) as they were, at the start or after a read again by content. */
  keep(rows: string[] | null): void {
    this.#last = this.#base = rows;
  }

  /** What of the fixed rows changed since the last read, whole. */
  changed(now: string[]): WrittenRow[] {
    const last = this.#last;
    this.#last = now;
    // Not read before (the span changed meanwhile: the read that does tells them).
    if (last === null) {
      this.#base = now;
      return [];
    }
    // Numbered from 1: the start row's rules (its cursor, its part shown) are not theirs.
    return changedRows(this.#base && ["", ...this.#base], now, last, 0, 1);
  }
}
