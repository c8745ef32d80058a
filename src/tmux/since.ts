/**
 * capture_since: what a pane wrote or rewrote since an earlier read, found again from an opaque
 * cursor.
 *
 * tmux keeps no line counter. A cursor remembers absolute positions (counted from the top of
 * history) and a hash of each row it saw: history rows cannot change, so finding them again —
 * where they were, or moved up by whole trims (tmux drops a tenth of `history-limit` at once)
 * — proves where the pane stands; when they cannot be found the answer says what may have
 * been missed. See {@link compareSince}.
 *
 * Reading is bounded by the answer: only the rows that can prove the position (a few per
 * place tmux's trimming may have moved them to) and the last rows the caller keeps are read;
 * the rows between are counted inside tmux. A width change (tmux reflows every row) or a pane
 * writing too fast to pin down is read in one pass that streams through, hashing and counting
 * rows and keeping only the last ones.
 *
 * @module
 */

import {
  captureChain,
  captureRange,
  captureRows,
  type ChainPart,
  countOf,
  lastWrittenIndex,
  type PaneState,
  readPaneState,
  type RowCapture,
  splitLines,
  trimRow,
  utf8Length,
} from "./capture.ts";
import { LineSplitter } from "./chain.ts";
import { decodeBytes } from "./format.ts";
import { type RunOptions, type ServerAddress, TmuxError, type TmuxRunner } from "./run.ts";

/** History rows a cursor remembers as an anchor to find its position again. */
export const ANCHOR_ROWS = 8;

/**
 * A 48-bit hash of a row, as 8 base64url characters (cyrb53). Not cryptographic: it tells a
 * rewritten row from an unchanged one, and a collision (about 1 in 2^48) would only hide one
 * rewrite.
 */
export function rowHash(text: string): string {
  return hashText(hashValue(text));
}

/** {@link rowHash} as a number below 2^48 (exact in a double): cheap to keep and compare. */
export function hashValue(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 >>> 0) * 0x10000 + (h2 & 0xffff);
}

function hashText(value: number): string {
  const bytes = new Uint8Array(6);
  new DataView(bytes.buffer).setUint32(0, Math.floor(value / 0x10000));
  new DataView(bytes.buffer).setUint16(4, value % 0x10000);
  return base64url(bytes);
}

function parseHash(text: string): number {
  const view = new DataView(fromBase64url(text).buffer);
  return view.getUint32(0) * 0x10000 + view.getUint16(4);
}

const HASH_CHARS = 8;

function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array {
  const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/**
 * What a capture_since cursor remembers: whose rows (server, pane, the pane's process), where
 * (absolute positions), and a hash of each remembered row — never the text itself.
 */
export interface SinceCursor {
  readonly serverPid: number;
  readonly paneId: string;
  readonly panePid: number;
  /** Width when taken: a different width means tmux reflowed the rows. */
  readonly width: number;
  readonly historyLimit: number;
  /** History rows then: rows above this absolute position could not change any more. */
  readonly historySize: number;
  /** Absolute position of the first remembered row. */
  readonly base: number;
  /** Absolute position of the cursor row (rows above it are settled, in a shell). */
  readonly cursorRow: number;
  /** Hashes of the rows from `base`, HASH_CHARS characters each. */
  readonly rows: string;
  /** Hash of the alternate screen when one was shown, else null. */
  readonly altHash: string | null;
}

const CURSOR_PREFIX = "tmc1.";

/** Why a cursor cannot be used. */
export class CursorError extends Error {
  /** A cursor error with its reason. */
  constructor(message: string) {
    super(message);
    this.name = "CursorError";
  }
}

/** Encodes a cursor as opaque text: `tmc1.` + base64url(JSON) + `.` + checksum. */
export function encodeCursor(c: SinceCursor): string {
  const body = JSON.stringify([
    c.serverPid,
    c.paneId,
    c.panePid,
    c.width,
    c.historyLimit,
    c.historySize,
    c.base,
    c.cursorRow,
    c.rows,
    c.altHash,
  ]);
  return `${CURSOR_PREFIX}${base64url(new TextEncoder().encode(body))}.${rowHash(body)}`;
}

/** Decodes a cursor; throws {@link CursorError} for anything this module did not make. */
export function decodeCursor(text: string): SinceCursor {
  const bad = new CursorError("The cursor is malformed: it is not one capture_since returned.");
  if (!text.startsWith(CURSOR_PREFIX)) throw bad;
  const [payload, check, ...rest] = text.slice(CURSOR_PREFIX.length).split(".");
  if (rest.length > 0 || !payload || !check) throw bad;
  let body: string;
  let v: unknown;
  try {
    body = new TextDecoder("utf-8", { fatal: true }).decode(fromBase64url(payload));
    v = JSON.parse(body);
  } catch {
    throw bad;
  }
  if (rowHash(body) !== check || !Array.isArray(v) || v.length !== 10) throw bad;
  const [serverPid, paneId, panePid, width, historyLimit, historySize, base, cursorRow, rows, alt] =
    v;
  const nat = (x: unknown) => Number.isSafeInteger(x) && (x as number) >= 0;
  const ok = nat(serverPid) && typeof paneId === "string" && /^%\d+$/.test(paneId) &&
    nat(panePid) && nat(width) && nat(historyLimit) && nat(historySize) && nat(base) &&
    nat(cursorRow) && typeof rows === "string" && rows.length % HASH_CHARS === 0 &&
    /^[A-Za-z0-9_-]*$/.test(rows) && (alt === null || typeof alt === "string");
  if (!ok) throw bad;
  return {
    serverPid,
    paneId,
    panePid,
    width,
    historyLimit,
    historySize,
    base,
    cursorRow,
    rows,
    altHash: alt,
  };
}

// ---------------------------------------------------------------------------------------------
// Grids: the main screen's rows by absolute position

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

/** What every grid shares: its place, and its last rows as text. */
interface GridFacts {
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
class StretchGrid implements NormalGrid {
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
    const tail = this.#stretches[this.#stretches.length - 1];
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
class HashGrid implements NormalGrid {
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
}

function trimStep(limit: number): number {
  return Math.max(1, Math.floor(limit / 10));
}

/** tmux trims only when history reaches its limit, and a trim leaves at least 90% of it. */
function trimsPossible(historySize: number, limit: number): boolean {
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

/** The remembered rows a width change is searched for by (see {@link compareSince}). */
function reflowAnchor(cursor: SinceCursor, hashes: readonly number[]): number[] {
  const { settled, strong } = anchorCounts(cursor, hashes.length);
  return hashes.slice(0, strong > 0 ? strong : settled);
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
  const none = { unchangedRows: [], trimmedRows: 0 };
  const missed = (reason: MissedReason): SinceResult => ({
    ...grid.rowsFrom(grid.first),
    ...none,
    missed: true,
    missedReason: reason,
    resized: reason === "resized",
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
    let best: number | null = null;
    const lastStart = grid.end - anchor.length;
    for (let abs = grid.first; abs <= lastStart; abs++) {
      if (
        matchesAt(grid, abs, anchor) &&
        (best === null || Math.abs(abs - cursor.base) < Math.abs(best - cursor.base))
      ) best = abs;
    }
    if (best === null) return missed("resized");
    return {
      ...grid.rowsFrom(best + anchor.length),
      ...none,
      missed: false,
      missedReason: null,
      resized: true,
    };
  }

  const possible = trimsPossible(grid.historySize, grid.historyLimit);
  const step = trimStep(grid.historyLimit);
  // History rows cannot change; settled screen rows stand in only when history held none and
  // tmux may have trimmed (otherwise a rewritten prompt line would look like a loss).
  const anchorCount = strong > 0 ? strong : possible ? settled : 0;
  let shift: number | null = null;
  if (anchorCount === 0) {
    if (possible) return missed("history-trimmed");
    shift = 0;
  } else {
    const anchor = hashes.slice(0, anchorCount);
    const maxJ = possible ? Math.floor(cursor.base / step) : 0;
    for (let j = 0; j <= maxJ && shift === null; j++) {
      if (matchesAt(grid, cursor.base - j * step, anchor)) shift = j * step;
    }
    if (shift === null) return missed(possible ? "history-trimmed" : "history-cleared");
  }

  // Rows after the remembered ones are new; before that, the first one that differs.
  let firstChanged = cursor.base + hashes.length - shift;
  for (let k = 0; k < hashes.length; k++) {
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
    trimmedRows: shift,
    missed: false,
    missedReason: null,
    resized: false,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading what a comparison needs

/** A capture_since answer before any MCP bound is applied. */
export interface SinceCapture extends SinceResult {
  /** The pane's state at the capture. */
  readonly state: PaneState;
  /** Whether `rows` is the alternate screen (a full-screen program) rather than new lines. */
  readonly alternateScreen: boolean;
  /** Whether there was no cursor: `rows` is the current screen. */
  readonly fresh: boolean;
  /** The cursor to pass next time. */
  readonly cursor: string;
}

/** The visible screen (row 0 on) of rows read from `top`, trimmed, through the last written row. */
function screenRows(rows: readonly string[], top: number): string[] {
  const screen = rows.slice(Math.max(0, -top)).map(trimRow);
  return screen.slice(0, lastWrittenIndex(screen, 0) + 1);
}

function checkIdentity(cursor: SinceCursor, state: PaneState): void {
  if (cursor.serverPid !== state.serverPid) {
    throw new CursorError(
      `The cursor comes from another tmux server (or one since restarted): server pid ${cursor.serverPid}, this one is ${state.serverPid}.`,
    );
  }
  if (cursor.panePid !== state.panePid) {
    throw new CursorError(
      `Pane ${state.paneId} was respawned since the cursor was taken (its process was pid ${cursor.panePid}, now ${state.panePid}): what it showed before is gone.`,
    );
  }
}

/** Where a pane stands, as a plan for what to read is made from it. */
interface Guess {
  readonly historySize: number;
}

/** Rows read beyond the ones a comparison needs, for output that arrives meanwhile. */
interface Slack {
  /** Above: new output moves every row up. */
  readonly up: number;
  /** Below. */
  readonly down: number;
}

/**
 * Absolute ranges (inclusive) of the rows {@link compareSince} looks at for a cursor when the
 * pane stands as `facts` say: the remembered rows where they were, and where each whole trim
 * tmux may have made would have moved them. The row after each is included (new output starts
 * there).
 */
function neededRanges(
  cursor: SinceCursor,
  facts: { historySize: number; historyLimit: number },
): [number, number][] {
  const remembered = cursor.rows.length / HASH_CHARS;
  const possible = trimsPossible(facts.historySize, facts.historyLimit);
  const step = trimStep(facts.historyLimit);
  const maxJ = possible ? Math.floor(cursor.base / step) : 0;
  const ranges: [number, number][] = [];
  for (let j = 0; j <= maxJ; j++) {
    const at = cursor.base - j * step;
    ranges.push([at, at + remembered]);
  }
  return ranges;
}

/** Merges inclusive ranges that overlap or touch; sorted. */
function mergeRanges(ranges: [number, number][]): [number, number][] {
  const sorted = ranges.filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** Rows the caller keeps at most, plus the anchor a new cursor remembers, above the screen. */
function tailRows(want: number): number {
  return want + ANCHOR_ROWS + 1;
}

/**
 * Reads what a comparison needs in ONE tmux invocation over the control connection: the rows
 * around each place the remembered rows may be, the last rows (the screen and `want` more),
 * and the bytes of the rows between, counted by tmux; with `fromTop`, the rows above the first
 * stretch counted too (an answer that missed lines holds everything the pane still holds).
 * Positions are planned from `guess`; what the read actually covers is judged after, against
 * the state it read.
 */
async function readStretches(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursor: SinceCursor,
  guess: Guess,
  slack: Slack,
  want: number,
  fromTop: boolean,
  options: RunOptions,
): Promise<{ state: PaneState; grid: NormalGrid; covered: boolean; screen: string[] }> {
  const hs = guess.historySize;
  const tailFirst = Math.max(0, hs - tailRows(want));
  // Spans reaching below the screen are clamped by tmux and merged with the last one after.
  const spans = mergeRanges([
    ...neededRanges(cursor, { historySize: hs, historyLimit: cursor.historyLimit })
      .map(([a, b]): [number, number] => [Math.max(0, a - slack.up), b + slack.down])
      .filter(([a]) => a < tailFirst),
    [tailFirst, Number.MAX_SAFE_INTEGER],
  ]);
  // As tmux's row numbers: the last span reaches the bottom of the screen whatever it is now.
  const parts: ChainPart[] = [];
  const rel = (abs: number) => abs - hs;
  if (fromTop && spans[0][0] > 0) {
    parts.push({ kind: "count", span: { start: "history", end: rel(spans[0][0] - 1) } });
  }
  spans.forEach(([a, b], i) => {
    if (i > 0) {
      parts.push({ kind: "count", span: { start: rel(spans[i - 1][1] + 1), end: rel(a - 1) } });
    }
    const last = i === spans.length - 1;
    parts.push({ kind: "rows", span: { start: rel(a), end: last ? undefined : rel(b) } });
  });
  parts.push({ kind: "saved" });
  const { state, outputs } = await captureChain(runner, address, paneId, parts, options);

  // Where tmux put each part, now that its state is known.
  const now = state.historySize;
  const read: { first: number; rows: string[] }[] = [];
  const counts: { first: number; last: number; bytes: number }[] = [];
  let screen: string[] = [];
  parts.forEach((part, i) => {
    if (part.kind === "saved") return;
    const { top, bottom } = captureRange(part.span, state);
    if (part.kind === "count") {
      counts.push({ first: now + top, last: now + bottom, bytes: countOf(outputs[i]) });
      return;
    }
    const rows = splitLines(outputs[i]).map(trimRow);
    if (rows.length !== bottom - top + 1) {
      throw new Error(`tmux printed ${rows.length} rows for rows ${top}..${bottom} of ${paneId}`);
    }
    // The last part reaches the bottom: its rows from 0 on are the visible screen.
    if (part.span.end === undefined) screen = screenRows(rows, top);
    // The normal grid is history plus the screen, or plus the saved screen.
    read.push({
      first: now + top,
      rows: state.alternateScreen ? rows.slice(0, Math.max(0, -top)) : rows,
    });
  });
  if (state.alternateScreen) {
    read.push({ first: now, rows: splitLines(outputs[parts.length - 1]).map(trimRow) });
  }
  const facts: GridFacts = {
    historySize: now,
    historyLimit: state.historyLimit,
    width: state.width,
    first: 0,
    end: now + (state.alternateScreen ? read[read.length - 1].rows.length : state.height),
    cursorRow: state.alternateScreen ? null : now + state.cursorY,
  };
  // Stretches in order, overlaps merged (one instant: overlapping rows are the same rows); a
  // gap's count is used only when tmux counted exactly that gap.
  const stretches: Stretch[] = [];
  let at = 0;
  for (const r of read.sort((x, y) => x.first - y.first)) {
    const first = Math.max(r.first, at);
    const rows = r.rows.slice(first - r.first);
    if (rows.length === 0) continue;
    const gap = counts.find((c) => c.first === at && c.last === first - 1);
    stretches.push({ first, rows, gapBytes: first === at ? 0 : gap ? gap.bytes : null });
    at = first + rows.length;
  }
  const has = (abs: number) =>
    abs >= facts.end || stretches.some((s) => abs >= s.first && abs < s.first + s.rows.length);
  // What the comparison needs, judged against the state the read found.
  const covered = state.width !== cursor.width || state.alternateScreen ||
    neededRanges(cursor, state).every(([a, b]) => {
      for (let abs = Math.max(a, 0); abs <= b; abs++) if (!has(abs)) return false;
      return true;
    });
  const first = fromTop || stretches.length === 0 ? 0 : stretches[0].first;
  return { state, grid: new StretchGrid({ ...facts, first }, stretches), covered, screen };
}

/**
 * Reads the whole pane in one pass through a tmux process of its own, as it streams: every
 * row's hash and byte count, and the text of the last rows only. For what a plan cannot
 * pin down: a width change (the remembered rows may be anywhere), or a pane writing faster
 * than reads can follow.
 */
async function streamGrid(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  want: number,
  options: RunOptions,
): Promise<{ state: PaneState; grid: NormalGrid | null; screen: string[] }> {
  let historySize = 0;
  let normalEnd = 0;
  let keepFrom = 0;
  let hashes = new Float64Array(0);
  let bytes = new Float64Array(1);
  const tail: string[] = [];
  const screen: string[] = [];
  let next = 0;
  const row = (line: Uint8Array) => {
    const text = trimRow(decodeBytes(line));
    const abs = next++;
    if (abs < normalEnd) {
      hashes[abs] = hashValue(text);
      bytes[abs + 1] = bytes[abs] + utf8Length(text) + 1;
      if (abs >= keepFrom) tail.push(text);
    }
    if (abs >= historySize) screen.push(text);
  };
  const splitter = new LineSplitter();
  const { state } = await captureChain(
    runner,
    address,
    paneId,
    [{ kind: "rows", span: { start: "history" } }],
    options,
    {
      part: 0,
      bulk: true,
      begin(s) {
        historySize = s.historySize;
        // With the alternate screen on, the screen rows are not the normal grid's.
        normalEnd = s.historySize + (s.alternateScreen ? 0 : s.height);
        hashes = new Float64Array(normalEnd);
        bytes = new Float64Array(normalEnd + 1);
        keepFrom = Math.max(0, s.historySize - tailRows(want));
      },
      consume: (chunk) => splitter.push(chunk, row),
    },
  );
  splitter.finish(row);
  if (next !== state.historySize + state.height) {
    throw new Error(`tmux printed ${next} rows of ${paneId}, not ${historySize + state.height}`);
  }
  const shown = screen.slice(0, lastWrittenIndex(screen, 0) + 1);
  if (state.alternateScreen) return { state, grid: null, screen: shown };
  const grid = new HashGrid(
    {
      historySize,
      historyLimit: state.historyLimit,
      width: state.width,
      first: 0,
      end: normalEnd,
      cursorRow: historySize + state.cursorY,
    },
    hashes,
    bytes,
    { first: keepFrom, rows: tail },
  );
  return { state, grid, screen: shown };
}

/** Plans that may miss (the pane moved between reads) before one streaming pass reads all. */
const PLANNED_READS = 4;

/**
 * Everything capture_since does against tmux: validates the cursor (before any tmux call),
 * reads what the comparison needs (usually one tmux invocation: the rows that prove the
 * position and the last `want` rows, the rows between counted), checks it is the same process
 * on the same server and compares. Throws {@link CursorError} for a cursor that cannot be
 * used, and the runner's `TmuxError` (kind `no-target`) when the pane does not exist.
 */
export async function captureSince(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursorText: string | undefined,
  want: number,
  options: RunOptions = {},
): Promise<SinceCapture> {
  const cursor = cursorText === undefined ? null : decodeCursor(cursorText);
  if (cursor && cursor.paneId !== paneId) {
    throw new CursorError(`The cursor was taken on pane ${cursor.paneId}, not ${paneId}.`);
  }
  const quiet = {
    unchangedRows: [],
    trimmedRows: 0,
    missed: false,
    missedReason: null,
    skippedRows: 0,
    skippedBytes: 0,
  };
  if (!cursor) {
    const capture = await captureRows(
      runner,
      address,
      paneId,
      { start: -ANCHOR_ROWS, saved: true },
      options,
    );
    const { state } = capture;
    const rows = screenRows(capture.rows, capture.top);
    const altHash = state.alternateScreen ? rowHash(rows.join("\n")) : null;
    return {
      ...quiet,
      rows,
      firstRow: rows.length > 0 ? 0 : null,
      resized: false,
      state,
      alternateScreen: state.alternateScreen,
      fresh: true,
      cursor: encodeCursor(cursorFor(normalGrid(capture), state, altHash)),
    };
  }
  // A full-screen program has the screen: what it shows now, and the main screen's part of
  // the cursor kept as it was (what the shell wrote before comes back once it gives the screen
  // back).
  const alternate = (state: PaneState, rows: string[]): SinceCapture => {
    const altHash = rowHash(rows.join("\n"));
    const changed = cursor.altHash !== altHash;
    return {
      ...quiet,
      rows: changed ? rows : [],
      firstRow: changed && rows.length > 0 ? 0 : null,
      resized: false,
      state,
      alternateScreen: true,
      fresh: false,
      cursor: encodeCursor({ ...cursor, altHash }),
    };
  };
  const answer = (result: SinceResult, state: PaneState, grid: NormalGrid): SinceCapture => ({
    ...result,
    state,
    alternateScreen: false,
    fresh: false,
    cursor: encodeCursor(cursorFor(grid, state, null)),
  });

  // Where tmux may have trimmed, the remembered rows' row numbers follow the history size
  // now, which only tmux knows: ask it first. Otherwise new output moved them up by as many
  // rows as it has: read a margin above where they were.
  let guess: Guess = { historySize: cursor.historySize };
  let slack: Slack = { up: 500, down: 64 };
  if (trimsPossible(cursor.historySize, cursor.historyLimit)) {
    const state = await readPaneState(runner, address, paneId, options);
    if (!state) throw new TmuxError("no-target", `can't find pane: ${paneId}`);
    guess = state;
    slack = { up: 64, down: 64 };
  }
  let fromTop = false;
  for (let attempt = 0; attempt < PLANNED_READS; attempt++) {
    const read = await readStretches(
      runner,
      address,
      paneId,
      cursor,
      guess,
      slack,
      want,
      fromTop,
      options,
    );
    const { state } = read;
    checkIdentity(cursor, state);
    if (state.alternateScreen) return alternate(state, read.screen);
    if (state.width !== cursor.width) break;
    const moved = Math.abs(state.historySize - guess.historySize);
    guess = state;
    slack = { up: Math.max(64, 2 * moved), down: 64 };
    if (!read.covered) continue;
    let result: SinceResult;
    try {
      result = compareSince(cursor, read.grid);
    } catch (error) {
      if (error instanceof RowNotRead) continue;
      throw error;
    }
    // Everything tmux still holds is newer than what was lost: count it all.
    if (result.missed && read.grid.first > 0) {
      fromTop = true;
      continue;
    }
    return answer(result, state, read.grid);
  }
  const full = await streamGrid(runner, address, paneId, want, options);
  checkIdentity(cursor, full.state);
  if (!full.grid) return alternate(full.state, full.screen);
  return answer(compareSince(cursor, full.grid), full.state, full.grid);
}
