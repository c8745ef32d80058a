/**
 * capture_since's comparison: the main screen's rows by absolute position (a grid, read whole,
 * in stretches, or as hashes), and what changed on it since a cursor was taken.
 *
 * tmux keeps no line counter. A cursor remembers absolute positions (counted from the top of
 * history) and a hash of each row it saw: history rows cannot change, so finding them again —
 * where they were, or moved up by whole trims (tmux drops a tenth of `history-limit` at once)
 * — proves where the pane stands; when they cannot be found the answer says what may have
 * been missed. See {@link compareSince}.
 *
 * @module
 */

import {
  lastWrittenIndex,
  type PaneState,
  type RowCapture,
  trimRow,
  utf8Length,
} from "./capture.ts";
import {
  ANCHOR_ROWS,
  HASH_CHARS,
  hashText,
  hashValue,
  parseHash,
  type SinceCursor,
} from "./since_cursor.ts";

/** Rows of the main screen from some position on: the last ones as text, the rest counted. */
export interface SinceRows {
  /** The last rows, through the last written one (all of them when none were counted). */
  readonly rows: string[];
  /** Row number (tmux's) of the first row of the span, counted ones included; null when empty. */
  readonly firstRow: number | null;
  /** Rows of the span before `rows`, counted rather than read. */
  readonly skippedRows: number;
  /** Their UTF-8 bytes, each with the newline after it. */
  readonly skippedBytes: number;
}

/** A row the comparison needs was not read (the plan missed it): read more and compare again. */
export class RowNotRead extends Error {
  /** For the absolute position that was missing. */
  constructor(abs: number) {
    super(`row ${abs} was not read`);
    this.name = "RowNotRead";
  }
}

/**
 * The main (normal) screen's rows as capture_since compares them: history plus the screen (or
 * plus the saved screen while a program has the alternate one), trimmed, addressed by absolute
 * position. A grid need not hold every row: what it has not read it may still have counted.
 */
export interface NormalGrid {
  readonly historySize: number;
  readonly historyLimit: number;
  readonly width: number;
  /** Absolute position of the first row the grid covers. */
  readonly first: number;
  /** Absolute position just past its last row. */
  readonly end: number;
  /** Absolute position of the cursor row; null when unknown (the main screen is saved). */
  readonly cursorRow: number | null;
  /** Absolute position of the last row that counts as written; `first - 1` when none does. */
  readonly lastWritten: number;
  /** The hash ({@link hashValue}) of the row at `abs`; undefined outside the grid. */
  hashAt(abs: number): number | undefined;
  /** The rows from `abs` through the last written one. */
  rowsFrom(abs: number): SinceRows;
}

/** Where a grid lies: what every grid shares. */
export interface GridFacts {
  readonly historySize: number;
  readonly historyLimit: number;
  readonly width: number;
  readonly first: number;
  readonly end: number;
  readonly cursorRow: number | null;
}

/**
 * A grid's answer to rowsFrom: the rows of `tail` (the grid's last rows, as text) from `from`
 * through `last`, and `bytesBefore(from, tailFirst)` for the rows before the tail.
 */
function rowsFromTail(
  grid: NormalGrid,
  tail: { readonly first: number; readonly rows: readonly string[] },
  from: number,
  bytesBetween: (a: number, b: number) => number,
): SinceRows {
  const last = grid.lastWritten;
  const start = Math.max(from, grid.first);
  if (start > last) return { rows: [], firstRow: null, skippedRows: 0, skippedBytes: 0 };
  if (last < tail.first) throw new RowNotRead(last);
  const firstRow = start - grid.historySize;
  if (start >= tail.first) {
    return {
      rows: tail.rows.slice(start - tail.first, last - tail.first + 1),
      firstRow,
      skippedRows: 0,
      skippedBytes: 0,
    };
  }
  return {
    rows: tail.rows.slice(0, last - tail.first + 1),
    firstRow,
    skippedRows: tail.first - start,
    skippedBytes: bytesBetween(start, tail.first),
  };
}

/** Absolute position of the last written row among `rows` starting at `first`, or null. */
function lastWrittenIn(rows: readonly string[], first: number, historySize: number): number | null {
  const i = lastWrittenIndex(rows, first - historySize);
  return i < 0 ? null : first + i;
}

/** Trimmed rows read at `first`, and the bytes of the unread rows just above them. */
export interface Stretch {
  readonly first: number;
  readonly rows: readonly string[];
  /**
   * UTF-8 bytes (each row with its newline) of the rows between the previous stretch (or the
   * grid's first row) and this one, as tmux counted them; null when they were not counted.
   */
  readonly gapBytes: number | null;
}

/** A grid of stretches of rows read, in order, the gaps between them counted. */
export class StretchGrid implements NormalGrid {
  readonly historySize: number;
  readonly historyLimit: number;
  readonly width: number;
  readonly first: number;
  readonly end: number;
  readonly cursorRow: number | null;
  readonly lastWritten: number;
  readonly #stretches: readonly Stretch[];
  readonly #hashes: (Float64Array | null)[];

  constructor(facts: GridFacts, stretches: readonly Stretch[]) {
    this.historySize = facts.historySize;
    this.historyLimit = facts.historyLimit;
    this.width = facts.width;
    this.first = facts.first;
    this.end = facts.end;
    this.cursorRow = facts.cursorRow;
    this.#stretches = stretches;
    this.#hashes = stretches.map(() => null);
    this.lastWritten = this.#findLastWritten();
  }

  #findLastWritten(): number {
    for (let k = this.#stretches.length - 1; k >= 0; k--) {
      const s = this.#stretches[k];
      const found = lastWrittenIn(s.rows, s.first, this.historySize);
      if (found !== null) return found;
      // Every history row counts as written: a gap above the screen ends with one.
      const above = s.first - 1;
      const previousEnd = k > 0
        ? this.#stretches[k - 1].first + this.#stretches[k - 1].rows.length
        : this.first;
      if (above >= previousEnd && above < this.historySize) return above;
    }
    return this.first - 1;
  }

  hashAt(abs: number): number | undefined {
    if (abs < this.first || abs >= this.end) return undefined;
    for (const [k, s] of this.#stretches.entries()) {
      if (abs < s.first || abs >= s.first + s.rows.length) continue;
      let hashes = this.#hashes[k];
      if (!hashes) {
        hashes = this.#hashes[k] = new Float64Array(s.rows.length).fill(-1);
      }
      const i = abs - s.first;
      if (hashes[i] < 0) hashes[i] = hashValue(s.rows[i]);
      return hashes[i];
    }
    throw new RowNotRead(abs);
  }

  rowsFrom(abs: number): SinceRows {
    const tail = this.#stretches[this.#stretches.length - 1] ?? { first: this.end, rows: [] };
    return rowsFromTail(this, tail, abs, (from, to) => this.#bytesBetween(from, to));
  }

  /** Bytes of rows [from, to), from stretches read and gaps counted. */
  #bytesBetween(from: number, to: number): number {
    let bytes = 0;
    let at = this.first;
    for (const s of this.#stretches) {
      if (at >= to) break;
      if (s.first > at) {
        // A gap [at, s.first): whole or not at all.
        if (from <= at && s.first <= to) {
          if (s.gapBytes === null) throw new RowNotRead(at);
          bytes += s.gapBytes;
        } else if (from < s.first && to > at) throw new RowNotRead(Math.max(from, at));
      }
      for (let i = Math.max(from, s.first); i < Math.min(to, s.first + s.rows.length); i++) {
        bytes += utf8Length(s.rows[i - s.first]) + 1;
      }
      at = s.first + s.rows.length;
    }
    return bytes;
  }
}

/** A grid of every row read at once: rows already trimmed, `rows[0]` at `first`. */
export function denseGrid(facts: Omit<GridFacts, "end">, rows: readonly string[]): NormalGrid {
  return new StretchGrid(
    { ...facts, end: facts.first + rows.length },
    [{ first: facts.first, rows, gapBytes: 0 }],
  );
}

/** The normal grid of a capture: with the alternate screen on, history plus the saved screen. */
export function normalGrid(capture: RowCapture): NormalGrid {
  const { state, top, rows, saved } = capture;
  const trimmed = state.alternateScreen
    ? [...rows.slice(0, Math.max(0, -top)), ...saved].map(trimRow)
    : rows.map(trimRow);
  return denseGrid({
    historySize: state.historySize,
    historyLimit: state.historyLimit,
    width: state.width,
    first: state.historySize + top,
    cursorRow: state.alternateScreen ? null : state.historySize + state.cursorY,
  }, trimmed);
}

/**
 * A grid read in one streaming pass: every row's hash and the running count of bytes, and
 * text only for the last rows — 16 bytes a row however long the rows are.
 */
export class HashGrid implements NormalGrid {
  readonly historySize: number;
  readonly historyLimit: number;
  readonly width: number;
  readonly first: number;
  readonly end: number;
  readonly cursorRow: number | null;
  readonly lastWritten: number;
  readonly #hashes: Float64Array;
  /** `#bytes[i]`: bytes of the rows before `first + i`. */
  readonly #bytes: Float64Array;
  readonly #tail: { first: number; rows: string[] };

  constructor(
    facts: GridFacts,
    hashes: Float64Array,
    bytes: Float64Array,
    tail: { first: number; rows: string[] },
  ) {
    this.historySize = facts.historySize;
    this.historyLimit = facts.historyLimit;
    this.width = facts.width;
    this.first = facts.first;
    this.end = facts.end;
    this.cursorRow = facts.cursorRow;
    this.#hashes = hashes;
    this.#bytes = bytes;
    this.#tail = tail;
    this.lastWritten = lastWrittenIn(tail.rows, tail.first, facts.historySize) ??
      (tail.first - 1 >= facts.first ? tail.first - 1 : facts.first - 1);
  }

  hashAt(abs: number): number | undefined {
    return abs < this.first || abs >= this.end ? undefined : this.#hashes[abs - this.first];
  }

  rowsFrom(abs: number): SinceRows {
    return rowsFromTail(
      this,
      this.#tail,
      abs,
      (from, to) => this.#bytes[to - this.first] - this.#bytes[from - this.first],
    );
  }
}

/**
 * A fresh cursor's remembered rows: the last few history rows (they can no longer change, so
 * finding them again proves a position), every screen row above the cursor, and the rest.
 */
export function cursorFor(
  grid: NormalGrid,
  state: PaneState,
  altHash: string | null,
): SinceCursor {
  const cursorRow = grid.cursorRow ?? grid.historySize;
  const base = Math.max(grid.first, Math.min(cursorRow, grid.historySize) - ANCHOR_ROWS);
  const end = Math.max(grid.lastWritten, cursorRow - 1);
  const blank = hashValue("");
  let rows = "";
  for (let abs = base; abs <= end; abs++) rows += hashText(grid.hashAt(abs) ?? blank);
  return {
    serverPid: state.serverPid,
    paneId: state.paneId,
    panePid: state.panePid,
    width: grid.width,
    historyLimit: grid.historyLimit,
    historySize: grid.historySize,
    base,
    cursorRow,
    rows,
    altHash,
  };
}

/** Why lines may be missing from a capture_since answer. */
export type MissedReason = "history-cleared" | "history-trimmed" | "resized";

/** What changed on the normal grid since a cursor. */
export interface SinceResult extends SinceRows {
  /**
   * Indexes, counted from the span's first row (skipped rows included), of rows whose text is
   * the same as when the cursor was taken.
   */
  readonly unchangedRows: number[];
  /** Whether lines written since the cursor may be missing: the position could not be proved. */
  readonly missed: boolean;
  readonly missedReason: MissedReason | null;
  /** Whether the width changed (tmux reflowed the rows). */
  readonly resized: boolean;
  /** Rows tmux trimmed off the top of history since the cursor, when known. */
  readonly trimmedRows: number;
  /**
   * Whether `rows` may begin with rows an earlier answer returned: lines were missed and the
   * cursor's rows could not be found again, so all the pane holds comes back.
   */
  readonly mayRepeat: boolean;
  /**
   * After a clear: rows at the top of the grid that still read as the cursor's screen rows did,
   * where the clear left them, and are left out of `rows` as unchanged; 0 otherwise.
   */
  readonly unchangedAbove: number;
}

/** Rows tmux drops from the top of history at once when it is full. */
export function trimStep(limit: number): number {
  return Math.max(1, Math.floor(limit / 10));
}

/**
 * Whole trims a comparison tries at most. A cursor's rows sit within the history it was taken
 * from, about the history limit: about ten trims reach back to its top. More come only from a
 * limit lowered since (rows that far back are then not tried, and the answer says `missed`),
 * or a forged cursor, whose history limit of 0 and base of 10⁹ would otherwise have a billion
 * places tried before tmux is asked anything.
 */
export const MAX_TRIMS_TRIED = 64;

/** The last trim count {@link compareSince} and the reads it plans try: 0 to this. */
export function lastTrimTried(base: number, step: number, possible: boolean): number {
  return possible ? Math.min(Math.floor(base / step), MAX_TRIMS_TRIED) : 0;
}

/** tmux trims only when history reaches its limit, and a trim leaves at least 90% of it. */
export function trimsPossible(historySize: number, limit: number): boolean {
  return historySize >= limit - trimStep(limit);
}

function matchesAt(grid: NormalGrid, abs: number, hashes: readonly number[]): boolean {
  for (let i = 0; i < hashes.length; i++) {
    if (grid.hashAt(abs + i) !== hashes[i]) return false;
  }
  return true;
}

function splitHashes(rows: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < rows.length; i += HASH_CHARS) {
    out.push(parseHash(rows.slice(i, i + HASH_CHARS)));
  }
  return out;
}

/** How many remembered rows were settled (above the cursor), and how many were history. */
function anchorCounts(
  cursor: SinceCursor,
  remembered: number,
): { settled: number; strong: number } {
  const settled = Math.max(0, Math.min(remembered, cursor.cursorRow - cursor.base));
  const strong = Math.max(0, Math.min(settled, cursor.historySize - cursor.base));
  return { settled, strong };
}

/**
 * The remembered rows a width change is searched for by (see {@link compareSince}): the
 * history rows, or the settled ones when history held none; at most {@link ANCHOR_ROWS}.
 */
function reflowAnchor(cursor: SinceCursor, hashes: readonly number[]): number[] {
  const { settled, strong } = anchorCounts(cursor, hashes.length);
  return hashes.slice(0, Math.min(strong > 0 ? strong : settled, ANCHOR_ROWS));
}

/**
 * Where `anchor` occurs among the grid's rows, the occurrence nearest `near` (the earlier of
 * two as near); null when nowhere. One pass, linear in the rows (Knuth–Morris–Pratt): an
 * anchor of one row repeated, on a pane repeating that row, cannot make it rows × anchor.
 */
function nearestMatch(grid: NormalGrid, anchor: readonly number[], near: number): number | null {
  const m = anchor.length;
  // fallback[i]: the longest proper prefix of anchor[0..i] that is also a suffix of it.
  const fallback = new Int32Array(m);
  for (let i = 1, k = 0; i < m; i++) {
    while (k > 0 && anchor[i] !== anchor[k]) k = fallback[k - 1];
    if (anchor[i] === anchor[k]) k++;
    fallback[i] = k;
  }
  let best: number | null = null;
  for (let abs = grid.first, k = 0; abs < grid.end; abs++) {
    const h = grid.hashAt(abs);
    while (k > 0 && h !== anchor[k]) k = fallback[k - 1];
    if (h === anchor[k]) k++;
    if (k < m) continue;
    const at = abs - m + 1;
    if (best === null || Math.abs(at - near) < Math.abs(best - near)) best = at;
    // Every later occurrence is farther.
    if (at >= near) break;
    k = fallback[k - 1];
  }
  return best;
}

/**
 * Compares a grid with a cursor taken earlier on the same pane. Honest about what tmux cannot
 * say: history rows are immutable, so the remembered rows above the cursor's history size must
 * be found again — where they were, or moved up by whole trims — or the answer says `missed`.
 * Rows from the first one that changed to the last written one come back; a row rewritten in
 * place (a progress bar) is one row, in its latest form. Throws {@link RowNotRead} when the
 * grid lacks a row it needs.
 */
export function compareSince(cursor: SinceCursor, grid: NormalGrid): SinceResult {
  const hashes = splitHashes(cursor.rows);
  const { settled, strong } = anchorCounts(cursor, hashes.length);
  const none = { unchangedRows: [], trimmedRows: 0, mayRepeat: false, unchangedAbove: 0 };
  const missed = (reason: MissedReason): SinceResult => ({
    ...grid.rowsFrom(grid.first),
    ...none,
    missed: true,
    missedReason: reason,
    resized: reason === "resized",
    mayRepeat: true,
  });

  if (grid.width !== cursor.width) {
    // Reflow moved rows: find the anchor anywhere, nearest where it was.
    const anchor = reflowAnchor(cursor, hashes);
    if (anchor.length === 0) {
      return trimsPossible(grid.historySize, grid.historyLimit) ? missed("resized") : {
        ...grid.rowsFrom(grid.first),
        ...none,
        missed: false,
        missedReason: null,
        resized: true,
      };
    }
    const best = nearestMatch(grid, anchor, cursor.base);
    if (best === null) return missed("resized");
    // The settled rows after the anchor (screen rows above the cursor) that still follow it
    // unchanged were read before; the first one the reflow changed comes back, and all after.
    let from = best + anchor.length;
    for (let k = anchor.length; k < settled && grid.hashAt(from) === hashes[k]; k++) from++;
    return {
      ...grid.rowsFrom(from),
      ...none,
      missed: false,
      missedReason: null,
      resized: true,
    };
  }

  const possible = trimsPossible(grid.historySize, grid.historyLimit);
  const step = trimStep(grid.historyLimit);
  // History rows cannot change. When history held none, the settled screen rows (above the
  // cursor row) stand in: more output pushes them into history where they were, so only a
  // clear (clear-history, ESC[3J, or a scroll region losing rows) moves them, and then what
  // was written after the cursor may be gone too. (A program rewriting rows above the cursor
  // on an empty history is told `missed` too: the position cannot be proved then.)
  const anchorCount = strong > 0 ? strong : settled;
  // Remembered row k is now at `cursor.base + k - shift`; rows before `kept` are gone.
  let shift: number | null = null;
  let cleared = false;
  if (anchorCount === 0) {
    if (possible) return missed("history-trimmed");
    shift = 0;
  } else {
    const anchor = hashes.slice(0, anchorCount);
    const maxJ = lastTrimTried(cursor.base, step, possible);
    for (let j = 0; j <= maxJ && shift === null; j++) {
      if (matchesAt(grid, cursor.base - j * step, anchor)) shift = j * step;
    }
    if (shift === null) {
      if (possible || !clearLeftScreen(cursor, grid, hashes, strong, settled)) {
        return missed(possible ? "history-trimmed" : "history-cleared");
      }
      shift = cursor.historySize;
      cleared = true;
    }
  }
  const kept = Math.max(0, shift - cursor.base);

  // Rows after the remembered ones are new; before that, the first one that differs.
  let firstChanged = cursor.base + hashes.length - shift;
  for (let k = kept; k < hashes.length; k++) {
    if (grid.hashAt(cursor.base + k - shift) !== hashes[k]) {
      firstChanged = cursor.base + k - shift;
      break;
    }
  }
  const found = grid.rowsFrom(firstChanged);
  const unchangedRows: number[] = [];
  const total = found.skippedRows + found.rows.length;
  for (let k = firstChanged + shift - cursor.base; k < hashes.length; k++) {
    const index = cursor.base + k - shift - firstChanged;
    if (index >= total) break;
    if (grid.hashAt(cursor.base + k - shift) === hashes[k]) unchangedRows.push(index);
  }
  return {
    ...found,
    unchangedRows,
    // A clear moved every row by the history it dropped: no trim.
    trimmedRows: cleared ? 0 : shift,
    // History was lost all the same: what the pane wrote before the clear may have gone with it.
    missed: cleared,
    missedReason: cleared ? "history-cleared" : null,
    resized: false,
    mayRepeat: false,
    unchangedAbove: cleared ? Math.min(firstChanged, grid.lastWritten + 1) - grid.first : 0,
  };
}

/**
 * Whether the grid begins with the cursor's screen rows above its cursor, all of them, unchanged:
 * where clear-history (or ESC[3J) leaves the screen when nothing scrolled between the cursor and
 * the clear. Only there: rows that read the same elsewhere prove nothing (a pane prints what it
 * likes), and the rows a scroll would have left are too few to tell from new output that
 * repeats old. Blank rows prove nothing either. Rows that read and sit as they did are taken to
 * be those rows: the answer says so, and how many it left out.
 */
function clearLeftScreen(
  cursor: SinceCursor,
  grid: NormalGrid,
  hashes: readonly number[],
  strong: number,
  settled: number,
): boolean {
  // The top is where tmux's rows begin now; a grid that did not read it cannot tell.
  if (grid.first !== 0 || strong === 0 || settled <= strong) return false;
  if (cursor.historySize !== cursor.base + strong) return false;
  const blank = hashValue("");
  let written = false;
  for (let k = strong; k < settled; k++) {
    const h = grid.hashAt(k - strong);
    if (h !== hashes[k]) return false;
    if (h !== blank) written = true;
  }
  return written;
}
