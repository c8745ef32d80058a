/**
 * capture_since's grids: the main screen's rows by absolute position, read whole, in stretches
 * (the gaps between counted by tmux), or as hashes in one streaming pass. since_compare.ts
 * finds a cursor's rows on one and says what changed.
 *
 * @module
 */

import { lastWrittenIndex, type RowCapture, trimRow, utf8Length } from "./capture.ts";
import { hashValue } from "./since_cursor.ts";

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
export interface NormalGrid extends GridFacts {
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
  /** Absolute position of the first row the grid covers. */
  readonly first: number;
  /** Absolute position just past its last row. */
  readonly end: number;
  /** Absolute position of the cursor row; null when unknown (the main screen is saved). */
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
  /**
   * Screen rows as a person sees them, where they differ from the rows as printed (by row
   * number): their hash holds both, so that text shown or hidden in place by its colours alone
   * reads as a change (see {@link normalGrid}).
   */
  readonly #shown: ReadonlyMap<number, string>;

  constructor(
    facts: GridFacts,
    stretches: readonly Stretch[],
    shown: ReadonlyMap<number, string> = new Map(),
  ) {
    this.#shown = shown;
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
      if (hashes[i] < 0) {
        const shown = this.#shown.get(abs);
        hashes[i] = hashValue(shown === undefined ? s.rows[i] : `${s.rows[i]}\u0000${shown}`);
      }
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

/**
 * A grid of every row read at once: rows already trimmed, `rows[0]` at `first`; `shown`, rows
 * as a person sees them where they differ (see StretchGrid).
 */
export function denseGrid(
  facts: Omit<GridFacts, "end">,
  rows: readonly string[],
  shown?: ReadonlyMap<number, string>,
): NormalGrid {
  return new StretchGrid(
    { ...facts, end: facts.first + rows.length },
    [{ first: facts.first, rows, gapBytes: 0 }],
    shown,
  );
}

/**
 * The normal grid of a capture: with the alternate screen on, history plus the saved screen.
 * Rows as printed where the capture has them (`views`): every grid hashes and counts rows as
 * printed, a byte a cell to read, and only the rows an answer gives are read as shown. But a
 * screen row can change by its colours alone (text printed hidden, then shown in place): the
 * screen, read as shown at once with the rest, hashes each row that reads otherwise as shown
 * with both texts. History rows cannot change, and hash as printed, however they were read:
 * they prove a cursor's position. A screen row that scrolled into history reads changed once
 * where the two differed (it comes back, never goes missing).
 */
export function normalGrid(capture: RowCapture): NormalGrid {
  const { state, top } = capture;
  const { rows, saved } = capture.printed ?? capture;
  const trimmed = state.alternateScreen
    ? [...rows.slice(0, Math.max(0, -top)), ...saved].map(trimRow)
    : rows.map(trimRow);
  const first = state.historySize + top;
  const shown = new Map<number, string>();
  if (capture.printed && !state.alternateScreen) {
    capture.rows.forEach((row, i) => {
      const text = trimRow(row);
      if (first + i >= state.historySize && text !== trimmed[i]) shown.set(first + i, text);
    });
  }
  return denseGrid(
    {
      historySize: state.historySize,
      historyLimit: state.historyLimit,
      width: state.width,
      first,
      cursorRow: state.alternateScreen ? null : state.historySize + state.cursorY,
    },
    trimmed,
    shown,
  );
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
