/**
 * The rows above a watch's start that the screen still shows, read again at each read to tell
 * whether the rows moved as their numbers say (watch_rows.ts).
 *
 * A watch numbers rows from the top of the history (watch_span.ts): when the history grows,
 * the screen's rows have moved up into it and keep their numbers. That holds while the scroll
 * region a program sets stays as the probes saw it. A program that sets a region below a
 * header, scrolls it and gives the whole screen back between two reads (one burst: `ESC[3;24r`,
 * 40 lines, `ESC[r`) leaves the header where it was on the screen while the history grew: read
 * by numbers, the header then sits below the start, where rows are new, and was told as written
 * (a wait `matched` on text on the screen before it began). No probe sees that region. The rows
 * above the start did not move as their numbers say, though: once the history grew, the rows
 * numbered as they were hold other text. So each read reads them again, in its own tmux call,
 * where their numbers put them; when they differ, the watch reads again by content (see
 * watch_reread.ts), with what the screen showed at the start counted as seen.
 *
 * A program that writes above the start and then scrolls (rare in a wait: a redraw) looks the
 * same, and is read by content too: slower, never a line told that was there. Once the start row
 * has scrolled off the screen no row above it is on the screen, and nothing more is read.
 *
 * With the history as it was, a row above the start that reads otherwise was drawn again in its
 * place: a multi-line progress display (docker's layers, npm's) moves the cursor up and redraws
 * the rows above it, and what it writes there is output, told before the rows from the start
 * on. Rows that only moved (lines inserted or deleted above) are not (see movedRows).
 *
 * @module
 */

import { trimRow } from "../tmux/capture.ts";
import { screenLines } from "./captured_rows.ts";
import type { PaneProbe } from "./pane_probe.ts";
import { type Span, spanCapture, spanRow } from "./watch_span.ts";

/** Mark of the capture {@link RowsAbove.captures} adds to a read (see marked_captures.ts). */
export const ABOVE_MARK = "A";

/**
 * The commands that read the `rows` rows of the span `s` above the start row, on the screen,
 * after the mark {@link ABOVE_MARK}: none when there are none.
 */
export function startAbove(paneId: string, guard: string, rows: number, s: Span): string[] {
  if (rows <= 0) return [];
  return [
    ...[";", "display-message", "-p", guard + ABOVE_MARK],
    ...[";", ...spanCapture(paneId, [], 0, rows - 1, s)],
  ];
}

/**
 * What a read of the rows above the start found, the history as it was (see
 * {@link RowsAbove.reread}): the rows still on the screen, each as the last read had it
 * (`was`), as it reads now (`now`) and as it stood at the start (`base`; undefined where not
 * known), by the same numbers, the first `row`. None of them moved as their numbers say.
 */
export interface AboveRead {
  readonly row: number;
  readonly was: readonly string[];
  readonly now: readonly string[];
  readonly base: readonly (string | undefined)[];
}

/** No rows above the start read. */
export const NONE_ABOVE: AboveRead = { row: 0, was: [], now: [], base: [] };

/** The rows above the start the screen showed at the last read, by their numbers. */
export class RowsAbove {
  /** The first row's number (see watch_span.ts). */
  #row = 0;
  /** Each row as read, without its trailing blanks. */
  #rows: string[] = [];
  /** Where the capture planned for the read on its way begins (relative, as -S takes it). */
  #from = 0;
  /** The rows as they stood at the start, and the first one's number (see {@link begin}). */
  #base: string[] = [];
  #baseRow = 0;
  /**
   * The rows as the normal screen held them while the alternate screen is shown (see
   * {@link switchScreen}): leaving it puts them back, which writes nothing.
   */
  #saved: { readonly row: number; readonly rows: string[] } | null = null;

  /** Keeps `rows` (read at one instant with the rows the watch last read), the first numbered `row`. */
  keep(row: number, rows: readonly string[]): void {
    this.#row = row;
    this.#rows = rows.map(trimRow);
  }

  /** Keeps the rows as they stood at the start: what a row redrawn since is compared with too. */
  begin(row: number, rows: readonly string[]): void {
    this.keep(row, rows);
    this.#base = [...this.#rows];
    this.#baseRow = row;
  }

  /**
   * Keeps the rows above the start as the normal screen held them, for a watch that began on
   * the alternate screen (`capture-pane -a` reads the screen it saved), the first numbered
   * `row`: leaving the alternate screen puts them back.
   */
  keepSaved(row: number, rows: readonly string[]): void {
    this.#saved = { row, rows: rows.map(trimRow) };
  }

  /**
   * The pane went to the alternate screen (`alternate`) or back: entering it, the rows as the
   * normal screen had them at the last read are kept aside; leaving it, they are what the last
   * read had, as the screen shows them again.
   */
  switchScreen(alternate: boolean): void {
    if (alternate) this.#saved = { row: this.#row, rows: [...this.#rows] };
    else if (this.#saved !== null) {
      if (this.#rows.length > 0) this.keep(this.#saved.row, this.#saved.rows);
      this.#saved = null;
    }
  }

  /** Forgets them (the start row is off the screen, or the rows were read again by content). */
  clear(): void {
    this.#rows = [];
    this.#saved = null;
  }

  /**
   * The commands that read the rows again where their numbers put them, after the mark
   * {@link ABOVE_MARK}: planned on `plan`, from `slack` rows further up (as the read's own
   * capture, for a pane that scrolls before the call runs). None when no row is kept.
   */
  captures(paneId: string, guard: string, plan: PaneProbe, s: Span, slack: number): string[] {
    if (this.#rows.length === 0) return [];
    this.#from = this.#row - slack - plan.historySize;
    const to = this.#row + this.#rows.length - 1 - plan.historySize;
    return [
      ...[";", "display-message", "-p", guard + ABOVE_MARK],
      ...[";", ...spanCapture(paneId, [], this.#from, to, s)],
    ];
  }

  /**
   * What the captures printed (`text`) at the read `probe` took, the span `s` numbering the
   * rows: "moved" when the history grew since the last read (`lastTop`: its size then) and a
   * row reads otherwise (the rows did not move where their numbers say). Null when the pane
   * scrolled past the capture before it ran (read again). Else the rows still on the screen
   * (none when none is kept), as they read at the last read and now (to keep for the next
   * read with {@link take}, once the read is made: one made again compares with these): with
   * the history as it was, a row that reads otherwise was drawn again in its place (a
   * multi-line progress display redraws rows above the cursor), which is output.
   */
  reread(
    text: string | undefined,
    probe: PaneProbe,
    s: Span,
    lastTop: number,
  ): AboveRead | "moved" | null {
    if (this.#rows.length === 0) return NONE_ABOVE;
    if (text === undefined) return null;
    const at = this.#row - spanRow(this.#from, probe, s);
    if (at < 0) return null;
    const now = screenLines(text).map(trimRow);
    const grew = probe.historySize > lastTop && !probe.alternateScreen;
    if (grew && this.#rows.some((row, i) => now[at + i] !== row)) return "moved";
    // Rows now in the history keep what they hold: only those still on the screen are kept.
    const first = Math.max(this.#row, probe.historySize);
    const rows = now.slice(at + first - this.#row, at + this.#rows.length);
    while (rows.length < this.#row + this.#rows.length - first) rows.push("");
    const was = this.#rows.slice(first - this.#row);
    const base = rows.map((_, i) => this.#base[first + i - this.#baseRow]);
    return { row: first, was, now: rows, base };
  }

  /** Keeps the rows a read found (see {@link reread}) for the next read. */
  take(read: AboveRead): void {
    if (read.now.length === 0) this.#rows = [];
    else this.keep(read.row, read.now);
  }
}
