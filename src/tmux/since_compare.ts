/**
 * capture_since's comparison: what changed on the main screen since a cursor was taken.
 *
 * tmux keeps no line counter. A cursor remembers absolute positions (counted from the top of
 * history) and a hash of each row it saw: history rows cannot change, so finding them again —
 * where they were, or moved up by whole trims (tmux drops a tenth of `history-limit` at once)
 * — proves where the pane stands; when they cannot be found the answer says what may have
 * been missed. Rows a scroll region moved are followed in since_region.ts. See
 * {@link compareSince}.
 *
 * @module
 */

import type { PaneState } from "./capture.ts";
import {
  ANCHOR_ROWS,
  HASH_CHARS,
  hashText,
  hashValue,
  parseHash,
  type SinceCursor,
} from "./since_cursor.ts";
import type { NormalGrid, SinceRows } from "./since_grid.ts";
import { followRegion, type Placement, rowsStayed } from "./since_region.ts";

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
  const hashes: string[] = [];
  for (let abs = base; abs <= end; abs++) hashes.push(hashText(grid.hashAt(abs) ?? blank));
  // Joined, the rows are one flat string: built by `+=`, a chain of thousands of pieces, each
  // costing more than the 8 characters it holds, kept for as long as the cursor is.
  const rows = hashes.join("");
  return {
    serverPid: state.serverPid,
    serverStart: state.serverStart,
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
   * cursor's rows could not be found again, so all the pane holds comes back; or, with nothing
   * missed, rows the cursor saw moved on the screen in a way that could not be followed (see
   * {@link rowsStayed}), so some that come back may be old ones moved.
   */
  readonly mayRepeat: boolean;
  /**
   * Whether a `history-cleared` answer rests on screen rows alone: the history held none at the
   * cursor, and its rows are gone from where they were. A program rewriting the screen from its
   * top row leaves the same trace as a clear, so which it was cannot be told.
   */
  readonly clearUnproven: boolean;
  /**
   * Whether a scroll region moved the cursor's rows (see {@link followRegion}): a row's place
   * no longer says which row read there before, so a row that came back is new whole.
   */
  readonly regionMoved: boolean;
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
 * or a forged cursor (when a cursor travelled whole), whose history limit of 0 and base of 10⁹
 * would otherwise have a billion places tried before tmux is asked anything.
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
 * Where `anchor` occurs among the grid's rows when it occurs exactly once; null when nowhere or
 * at more than one place (the nearest of several, with rows repeated, was a wrong one: rows
 * after the cursor were skipped). One pass, linear in the rows (Knuth–Morris–Pratt): an anchor
 * of one row repeated, on a pane repeating that row, cannot make it rows × anchor.
 */
function onlyMatch(grid: NormalGrid, anchor: readonly number[]): number | null {
  const m = anchor.length;
  // fallback[i]: the longest proper prefix of anchor[0..i] that is also a suffix of it.
  const fallback = new Int32Array(m);
  for (let i = 1, k = 0; i < m; i++) {
    while (k > 0 && anchor[i] !== anchor[k]) k = fallback[k - 1];
    if (anchor[i] === anchor[k]) k++;
    fallback[i] = k;
  }
  let found: number | null = null;
  for (let abs = grid.first, k = 0; abs < grid.end; abs++) {
    const h = grid.hashAt(abs);
    while (k > 0 && h !== anchor[k]) k = fallback[k - 1];
    if (h === anchor[k]) k++;
    if (k < m) continue;
    // A second occurrence (overlapping ones too): the place is not proved.
    if (found !== null) return null;
    found = abs - m + 1;
    k = fallback[k - 1];
  }
  return found;
}

/**
 * Compares a grid with a cursor taken earlier on the same pane. Honest about what tmux cannot
 * say: history rows are immutable, so the remembered rows above the cursor's history size must
 * be found again — where they were, or moved up by whole trims — or the answer says `missed`.
 * Rows from the first one that changed to the last written one come back; a row rewritten in
 * place (a progress bar) is one row, in its latest form. Under a scroll region, rows the region
 * moved and its header or status line are found where tmux put them, and only the rest comes
 * back; where a move cannot be followed, the answer says rows may repeat. On a cursor taken
 * with no history, rows rewritten above the cursor under rows still in place are rewritten, not
 * a clear. Throws {@link RowNotRead} when the grid lacks a row it needs.
 */
export function compareSince(cursor: SinceCursor, grid: NormalGrid): SinceResult {
  const hashes = splitHashes(cursor.rows);
  const { settled, strong } = anchorCounts(cursor, hashes.length);
  const none = {
    unchangedRows: [],
    trimmedRows: 0,
    mayRepeat: false,
    unchangedAbove: 0,
    clearUnproven: false,
    regionMoved: false,
  };
  const missed = (reason: MissedReason): SinceResult => ({
    ...grid.rowsFrom(grid.first),
    ...none,
    missed: true,
    missedReason: reason,
    resized: reason === "resized",
    mayRepeat: true,
  });

  if (grid.width !== cursor.width) {
    // Reflow moved rows: find the anchor anywhere; it proves a place only where it is the one.
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
    const best = onlyMatch(grid, anchor);
    // Nowhere, or at more than one place (rows repeated): the position is not proved.
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
  // The cursor's screen rows, from its top row on (none for a forged cursor whose rows end above).
  const screen = hashes.slice(Math.max(0, cursor.historySize - cursor.base));
  const cursorY = cursor.cursorRow - cursor.historySize;
  // Rows a scroll region moved: found where it put them, only the rest comes back.
  const regionAnswer = (placed: Placement, trimmed: number): SinceResult => {
    const found = grid.rowsFrom(placed.firstChanged);
    const total = found.skippedRows + found.rows.length;
    return {
      ...found,
      ...none,
      unchangedRows: placed.unchanged.map((at) => at - placed.firstChanged).filter((i) =>
        i < total
      ),
      trimmedRows: trimmed,
      missed: false,
      missedReason: null,
      resized: false,
      regionMoved: true,
    };
  };
  // History rows cannot change. When history held none, the settled screen rows (above the
  // cursor row) stand in: more output pushes them into history where they were, so only a
  // clear (clear-history, ESC[3J) moves them all, and then what was written after the cursor
  // may be gone too. A scroll region moves them too, but leaves its header where it was; and
  // a program rewriting rows above the cursor leaves the rows above those in place.
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
    for (let j = 0; j <= maxJ; j++) {
      if (!matchesAt(grid, cursor.base - j * step, anchor)) continue;
      // Rows that read the same at two places (blank lines, a line repeated) prove neither:
      // taking the first had lines lost said not, and old ones come back as new.
      if (shift !== null) return missed("history-trimmed");
      shift = j * step;
    }
    if (shift === null && !possible && strong === 0) {
      if (keptInPlace(grid, hashes, cursor.base, settled)) shift = 0;
      else {
        const placed = followRegion(grid, screen, cursor.historySize, cursorY);
        if (placed) return regionAnswer(placed, 0);
      }
    }
    if (shift === null) {
      if (possible || !clearLeftScreen(cursor, grid, hashes, strong, settled)) {
        const reason = possible ? "history-trimmed" : "history-cleared";
        return { ...missed(reason), clearUnproven: reason === "history-cleared" && strong === 0 };
      }
      shift = cursor.historySize;
      cleared = true;
    }
  }
  const kept = Math.max(0, shift - cursor.base);

  // Rows after the remembered ones are new; before that, the first one that differs.
  const rememberedEnd = cursor.base + hashes.length - shift;
  let firstChanged = rememberedEnd;
  for (let k = kept; k < hashes.length; k++) {
    if (grid.hashAt(cursor.base + k - shift) !== hashes[k]) {
      firstChanged = cursor.base + k - shift;
      break;
    }
  }
  // A remembered row reads otherwise where it was, and history grew: a scroll region may have
  // moved the rows rather than anything rewriting them.
  let mayRepeat = false;
  const top = cursor.historySize - shift;
  if (!cleared && firstChanged < rememberedEnd && grid.historySize > top) {
    const placed = followRegion(grid, screen, top, cursorY);
    if (placed) return regionAnswer(placed, shift);
    mayRepeat = rowsStayed(grid, screen, top, cursorY);
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
    ...none,
    unchangedRows,
    // A clear moved every row by the history it dropped: no trim.
    trimmedRows: cleared ? 0 : shift,
    // History was lost all the same: what the pane wrote before the clear may have gone with it.
    missed: cleared,
    missedReason: cleared ? "history-cleared" : null,
    resized: false,
    mayRepeat,
    unchangedAbove: cleared ? Math.min(firstChanged, grid.lastWritten + 1) - grid.first : 0,
  };
}

/**
 * Whether the cursor's settled screen rows (a cursor taken on an empty history) begin where
 * they were, as they read, one at least not blank: then only the rows after them were
 * rewritten (a program moved up and redrew them), nothing was cleared — a clear would have
 * left later rows at the top. Rows after the first that differs come back.
 */
function keptInPlace(
  grid: NormalGrid,
  hashes: readonly number[],
  base: number,
  settled: number,
): boolean {
  const blank = hashValue("");
  let written = false;
  for (let k = 0; k < settled && grid.hashAt(base + k) === hashes[k]; k++) {
    if (hashes[k] !== blank) written = true;
  }
  return written;
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
