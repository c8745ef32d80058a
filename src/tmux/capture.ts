/**
 * Reading what a pane shows, and what it wrote since an earlier read.
 *
 * A capture is ONE tmux invocation: `display-message` reads the pane's state (history size,
 * height, cursor, alternate screen...) and the `capture-pane` calls that follow run in the same
 * command queue, so the row numbers computed from that state are exactly the rows tmux printed.
 * Several captures in one invocation are told apart by random markers printed between them.
 *
 * Rows are numbered as tmux numbers them: 0 is the top of the visible screen, negative numbers
 * are history (-1 the most recent history line). "Absolute" positions count from the top of the
 * history (`historySize + row`); they survive scrolling and height changes, but not trimming
 * (tmux drops a tenth of `history-limit` at once when history is full), `clear-history`, or a
 * width change (tmux reflows wrapped lines). {@link compareSince} works with exactly these facts.
 *
 * @module
 */

import { execFast } from "./control.ts";
import { decodeBytes, flag, int, newGuard, parseRecords, recordFormat } from "./format.ts";
import {
  classifyStderr,
  judgeResult,
  type RunOptions,
  type ServerAddress,
  TmuxError,
  type TmuxRunner,
} from "./run.ts";

/** A pane's state at the instant of a capture. */
export interface PaneState {
  readonly paneId: string;
  /** The pane's process; a respawn gives a new one. */
  readonly panePid: number;
  /** The tmux server's pid; a restarted server reuses pane ids for other panes. */
  readonly serverPid: number;
  readonly width: number;
  readonly height: number;
  /** Lines held in history above the visible screen. */
  readonly historySize: number;
  readonly historyLimit: number;
  readonly cursorX: number;
  readonly cursorY: number;
  /** A full-screen program (vim, less) has switched to the alternate screen. */
  readonly alternateScreen: boolean;
  readonly inMode: boolean;
  readonly mode: string;
  /** Lines scrolled back in copy mode, or null. */
  readonly scrollPosition: number | null;
  readonly dead: boolean;
}

const STATE = {
  paneId: "#{pane_id}",
  panePid: "#{pane_pid}",
  serverPid: "#{pid}",
  width: "#{pane_width}",
  height: "#{pane_height}",
  historySize: "#{history_size}",
  historyLimit: "#{history_limit}",
  cursorX: "#{cursor_x}",
  cursorY: "#{cursor_y}",
  alternateScreen: "#{alternate_on}",
  inMode: "#{pane_in_mode}",
  mode: "#{pane_mode}",
  scrollPosition: "#{scroll_position}",
  dead: "#{pane_dead}",
} as const;

function parseState(values: string[]): PaneState {
  const r = Object.fromEntries(Object.keys(STATE).map((k, i) => [k, values[i]])) as {
    [K in keyof typeof STATE]: string;
  };
  return {
    paneId: r.paneId,
    panePid: int(r.panePid),
    serverPid: int(r.serverPid),
    width: int(r.width),
    height: int(r.height),
    historySize: int(r.historySize),
    historyLimit: int(r.historyLimit),
    cursorX: int(r.cursorX),
    cursorY: int(r.cursorY),
    alternateScreen: flag(r.alternateScreen),
    inMode: flag(r.inMode),
    mode: r.mode,
    scrollPosition: r.scrollPosition === "" ? null : int(r.scrollPosition),
    dead: flag(r.dead),
  };
}

/**
 * Reads one pane's state, or null when the pane does not exist (tmux answers a missing
 * `-t %N` of display-message with empty values and status 0, so the id is checked).
 */
export async function readPaneState(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  options: RunOptions = {},
): Promise<PaneState | null> {
  const guard = newGuard();
  const out = judgeResult(
    await execFast(
      runner,
      address,
      ["display-message", "-p", "-t", paneId, recordFormat(guard, Object.values(STATE))],
      options,
    ),
  );
  const [record] = parseRecords(out, guard, Object.keys(STATE).length);
  if (!record || record[0] !== paneId) return null;
  return parseState(record);
}

/** What to capture. Rows are tmux's numbers; tmux clamps them into the pane as noted. */
export interface CaptureSpec {
  /** First row; "history" for the top of history; default 0 (top of the visible screen). */
  readonly start?: number | "history";
  /** Last row; default the bottom of the visible screen. */
  readonly end?: number;
  /** Keep escape sequences for colours and attributes (`-e`). */
  readonly escapes?: boolean;
  /**
   * Rows exactly as stored, trailing spaces included (`-N`), instead of trimmed the way tmux
   * trims them by default. Needed to line rows up with joined lines.
   */
  readonly untrimmed?: boolean;
  /** Also capture the same range with wrapped lines joined (`-J`). */
  readonly joined?: boolean;
  /** Also capture the main screen tmux saved when a program switched to the alternate one. */
  readonly saved?: boolean;
}

/** One capture: the state, the range tmux used, and the rows. */
export interface RowCapture {
  readonly state: PaneState;
  /** Row number of `rows[0]`, after tmux's clamping. */
  readonly top: number;
  /** Row number of the last row, after tmux's clamping. */
  readonly bottom: number;
  /** One entry per row from `top` to `bottom` (no newlines). */
  readonly rows: string[];
  /** With `joined`: the lines of the same range with wrapped rows joined, else null. */
  readonly joined: string[] | null;
  /** With `saved` and the alternate screen on: the saved main screen's rows, else []. */
  readonly saved: string[];
}

/** tmux parses -S/-E between INT_MIN and SHRT_MAX and silently ignores anything else. */
const MIN_ROW_ARG = -2147483647;
const MAX_ROW_ARG = 32767;

function rowArg(n: number): number {
  return Math.max(MIN_ROW_ARG, Math.min(MAX_ROW_ARG, Math.trunc(n)));
}

/** Where tmux puts a requested row (cmd-capture-pane.c), as a row number. */
export function clampRow(
  requested: number,
  historySize: number,
  height: number,
): number {
  const n = rowArg(requested);
  let abs = n < 0 && -n > historySize ? 0 : historySize + n;
  if (abs > historySize + height - 1) abs = historySize + height - 1;
  return abs - historySize;
}

/** The range tmux captures for a spec, given the pane's state (tmux swaps an inverted one). */
export function captureRange(
  spec: Pick<CaptureSpec, "start" | "end">,
  state: Pick<PaneState, "historySize" | "height">,
): { top: number; bottom: number } {
  const { historySize, height } = state;
  const top = spec.start === "history"
    ? -historySize
    : spec.start === undefined
    ? 0
    : clampRow(spec.start, historySize, height);
  const bottom = spec.end === undefined ? height - 1 : clampRow(spec.end, historySize, height);
  return bottom < top ? { top: bottom, bottom: top } : { top, bottom };
}

const latin1 = new TextDecoder("latin1");

/** Splits tmux output into lines; a final newline ends the last line rather than adding one. */
function splitLines(bytes: Uint8Array): string[] {
  if (bytes.length === 0) return [];
  const lines = decodeBytes(bytes).split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * Captures a pane in one tmux invocation. Throws the runner's `TmuxError` (kind `no-target`
 * when the pane does not exist, or stopped existing since it was listed).
 */
export async function captureRows(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  spec: CaptureSpec,
  options: RunOptions = {},
): Promise<RowCapture> {
  const guard = newGuard();
  const range: string[] = [];
  if (spec.start !== undefined) {
    range.push("-S", spec.start === "history" ? "-" : String(rowArg(spec.start)));
  }
  if (spec.end !== undefined) range.push("-E", String(rowArg(spec.end)));
  const common = ["-p", "-t", paneId, ...(spec.escapes ? ["-e"] : [])];
  const parts: string[][] = [[...common, ...(spec.untrimmed ? ["-N"] : []), ...range]];
  if (spec.joined) parts.push([...common, "-J", ...range]);
  if (spec.saved) parts.push(["-p", "-t", paneId, "-a", "-q"]);
  const marker = (i: number) => `${guard}M${i}`;
  const args = ["display-message", "-p", "-t", paneId, recordFormat(guard, Object.values(STATE))];
  parts.forEach((flags, i) => {
    args.push(";", "capture-pane", ...flags, ";", "display-message", "-p", "-t", paneId, marker(i));
  });
  const out = judgeResult(await execFast(runner, address, args, options));

  // Markers are ASCII and unpredictable: find them in a one-char-per-byte view of the output.
  const view = latin1.decode(out);
  const segments: Uint8Array[] = [];
  let from = view.indexOf(`${guard}E\n`);
  if (from === -1) throw new Error("tmux printed no pane state");
  const stateBytes = out.subarray(0, from + guard.length + 2);
  from += guard.length + 2;
  for (let i = 0; i < parts.length; i++) {
    const at = view.indexOf(`${marker(i)}\n`, from);
    if (at === -1) throw new Error("tmux output ended inside a capture");
    segments.push(out.subarray(from, at));
    from = at + marker(i).length + 1;
  }
  const [record] = parseRecords(stateBytes, guard, Object.keys(STATE).length);
  const state = parseState(record);
  if (state.paneId !== paneId) throw new Error(`tmux described ${state.paneId}, not ${paneId}`);
  const { top, bottom } = captureRange(spec, state);
  const rows = splitLines(segments[0]);
  if (rows.length !== bottom - top + 1) {
    throw new Error(`tmux printed ${rows.length} rows for rows ${top}..${bottom} of ${paneId}`);
  }
  const joined = spec.joined ? splitLines(segments[1]) : null;
  const saved = spec.saved && state.alternateScreen ? splitLines(segments[parts.length - 1]) : [];
  return { state, top, bottom, rows, joined, saved };
}

// ---------------------------------------------------------------------------------------------
// Rows as text

/** Trims trailing spaces exactly as tmux's default capture does (spaces only, not tabs). */
export function trimRow(row: string): string {
  let end = row.length;
  while (end > 0 && row.charCodeAt(end - 1) === 0x20) end--;
  return end === row.length ? row : row.slice(0, end);
}

// CSI, OSC (BEL or ST terminated) and two-byte escapes: what `capture-pane -e` can print.
// deno-lint-ignore no-control-regex
const ESCAPE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

/** Removes terminal escape sequences (for deciding whether an escaped row is blank). */
export function stripEscapes(text: string): string {
  return text.includes("\x1b") ? text.replace(ESCAPE, "") : text;
}

/** Whether a row shows nothing: only spaces, once escape sequences are gone. */
export function isBlankRow(row: string): boolean {
  return trimRow(stripEscapes(row)) === "";
}

/**
 * Index of the last row that counts as written: every history row (negative number) counts,
 * a screen row only when it shows something. -1 when none does. Blank rows below the last
 * written line are what tmux pads a screen with, not output.
 */
export function lastWrittenIndex(rows: readonly string[], top: number): number {
  for (let i = rows.length - 1; i >= 0; i--) {
    if (top + i < 0 || !isBlankRow(rows[i])) return i;
  }
  return -1;
}

/**
 * For each joined line (`capture-pane -J`), the index of the row it starts at, found by
 * concatenating untrimmed rows (`-N`) until they spell the line; null when they never do
 * (then the caller must not pretend to know line numbers).
 */
export function alignJoined(rows: readonly string[], joined: readonly string[]): number[] | null {
  const starts: number[] = [];
  let i = 0;
  for (const line of joined) {
    if (i >= rows.length) return null;
    starts.push(i);
    let acc = rows[i++];
    while (acc !== line && acc.length < line.length && i < rows.length) acc += rows[i++];
    if (acc !== line) return null;
  }
  return i === rows.length ? starts : null;
}

// ---------------------------------------------------------------------------------------------
// capture_since: cursors and comparison

/** History rows a cursor remembers as an anchor to find its position again. */
export const ANCHOR_ROWS = 8;

/**
 * A 48-bit hash of a row, as 8 base64url characters (cyrb53). Not cryptographic: it tells a
 * rewritten row from an unchanged one, and a collision (about 1 in 2^48) would only hide one
 * rewrite.
 */
export function rowHash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const bytes = new Uint8Array(6);
  new DataView(bytes.buffer).setUint32(0, h1 >>> 0);
  new DataView(bytes.buffer).setUint16(4, h2 & 0xffff);
  return base64url(bytes);
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
    (alt === null || typeof alt === "string");
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

/**
 * The main (normal) screen's rows as capture_since compares them: history plus the screen,
 * trimmed, addressed by absolute position.
 */
export interface NormalGrid {
  readonly historySize: number;
  readonly historyLimit: number;
  readonly width: number;
  /** Absolute position of `rows[0]`. */
  readonly first: number;
  /** Trimmed rows, through the bottom of the screen. */
  readonly rows: readonly string[];
  /** Absolute position of the cursor row; null when unknown (the main screen is saved). */
  readonly cursorRow: number | null;
}

/** The normal grid of a capture: with the alternate screen on, history plus the saved screen. */
export function normalGrid(capture: RowCapture): NormalGrid {
  const { state, top, rows, saved } = capture;
  const trimmed = state.alternateScreen
    ? [...rows.slice(0, Math.max(0, -top)), ...saved].map(trimRow)
    : rows.map(trimRow);
  return {
    historySize: state.historySize,
    historyLimit: state.historyLimit,
    width: state.width,
    first: state.historySize + top,
    rows: trimmed,
    cursorRow: state.alternateScreen ? null : state.historySize + state.cursorY,
  };
}

/** Absolute position of the last written row of a grid, or `first - 1` when none is. */
function lastWrittenAbs(grid: NormalGrid): number {
  return grid.first + lastWrittenIndex(grid.rows, grid.first - grid.historySize);
}

function rowAt(grid: NormalGrid, abs: number): string | undefined {
  return grid.rows[abs - grid.first];
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
  const end = Math.max(lastWrittenAbs(grid), cursorRow - 1);
  let rows = "";
  for (let abs = base; abs <= end; abs++) rows += rowHash(rowAt(grid, abs) ?? "");
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
export interface SinceResult {
  /** Rows written or rewritten, from the first changed one to the last written one. */
  readonly rows: string[];
  /** Row number (tmux's) of `rows[0]` in the grid compared, or null when there are none. */
  readonly firstRow: number | null;
  /** Indexes into `rows` of rows whose text is the same as when the cursor was taken. */
  readonly unchangedRows: number[];
  /** Whether lines written since the cursor may be missing: the position could not be proved. */
  readonly missed: boolean;
  readonly missedReason: MissedReason | null;
  /** Whether the width changed (tmux reflowed the rows). */
  readonly resized: boolean;
  /** Rows tmux trimmed off the top of history since the cursor, when known. */
  readonly trimmedRows: number;
}

/**
 * How many history rows a grid needs, above the cursor's remembered rows, for
 * {@link compareSince} to judge it: everything when tmux may have trimmed (the rows may have
 * moved up by any multiple of a tenth of the limit) or reflowed, else just the remembered rows.
 */
export function sinceStart(cursor: SinceCursor, state: PaneState): number | "history" {
  if (state.width !== cursor.width || trimsPossible(state.historySize, state.historyLimit)) {
    return "history";
  }
  return Math.min(cursor.base - state.historySize, -ANCHOR_ROWS);
}

function trimStep(limit: number): number {
  return Math.max(1, Math.floor(limit / 10));
}

/** tmux trims only when history reaches its limit, and a trim leaves at least 90% of it. */
function trimsPossible(historySize: number, limit: number): boolean {
  return historySize >= limit - trimStep(limit);
}

function matchesAt(grid: NormalGrid, abs: number, hashes: string[]): boolean {
  for (let i = 0; i < hashes.length; i++) {
    const row = rowAt(grid, abs + i);
    if (row === undefined || rowHash(row) !== hashes[i]) return false;
  }
  return true;
}

function splitHashes(rows: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rows.length; i += HASH_CHARS) out.push(rows.slice(i, i + HASH_CHARS));
  return out;
}

function rowsFrom(grid: NormalGrid, fromAbs: number): { rows: string[]; firstRow: number | null } {
  const last = lastWrittenAbs(grid);
  const from = Math.max(fromAbs, grid.first);
  if (from > last) return { rows: [], firstRow: null };
  return {
    rows: grid.rows.slice(from - grid.first, last - grid.first + 1),
    firstRow: from - grid.historySize,
  };
}

/**
 * Compares a grid with a cursor taken earlier on the same pane. Honest about what tmux cannot
 * say: history rows are immutable, so the remembered rows above the cursor's history size must
 * be found again — where they were, or moved up by whole trims — or the answer says `missed`.
 * Rows from the first one that changed to the last written one come back; a row rewritten in
 * place (a progress bar) is one row, in its latest form.
 */
export function compareSince(cursor: SinceCursor, grid: NormalGrid): SinceResult {
  const hashes = splitHashes(cursor.rows);
  const settled = Math.max(0, Math.min(hashes.length, cursor.cursorRow - cursor.base));
  const strong = Math.max(0, Math.min(settled, cursor.historySize - cursor.base));
  const none = { unchangedRows: [], trimmedRows: 0 };
  const missed = (reason: MissedReason): SinceResult => ({
    ...rowsFrom(grid, grid.first),
    ...none,
    missed: true,
    missedReason: reason,
    resized: reason === "resized",
  });

  if (grid.width !== cursor.width) {
    // Reflow moved rows: find the anchor anywhere, nearest where it was.
    const anchor = hashes.slice(0, strong > 0 ? strong : settled);
    if (anchor.length === 0) {
      return trimsPossible(grid.historySize, grid.historyLimit) ? missed("resized") : {
        ...rowsFrom(grid, grid.first),
        ...none,
        missed: false,
        missedReason: null,
        resized: true,
      };
    }
    let best: number | null = null;
    const lastStart = grid.first + grid.rows.length - anchor.length;
    for (let abs = grid.first; abs <= lastStart; abs++) {
      if (
        matchesAt(grid, abs, anchor) &&
        (best === null || Math.abs(abs - cursor.base) < Math.abs(best - cursor.base))
      ) best = abs;
    }
    if (best === null) return missed("resized");
    return {
      ...rowsFrom(grid, best + anchor.length),
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
    const row = rowAt(grid, cursor.base + k - shift);
    if (row === undefined || rowHash(row) !== hashes[k]) {
      firstChanged = cursor.base + k - shift;
      break;
    }
  }
  const found = rowsFrom(grid, firstChanged);
  const unchangedRows: number[] = [];
  for (let i = 0; i < found.rows.length; i++) {
    const k = firstChanged + i + shift - cursor.base;
    if (k < hashes.length && rowHash(found.rows[i]) === hashes[k]) unchangedRows.push(i);
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

/** Rows of the visible screen (row 0 on) of a capture, trimmed, through the last written one. */
function screenRows(capture: RowCapture): string[] {
  const screen = capture.rows.slice(Math.max(0, -capture.top)).map(trimRow);
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

/** History rows read beyond the cursor's, so output since the last call needs no second read. */
const SLACK_ROWS = 500;

/** Where to start reading for a cursor before knowing the pane's state now. */
function guessStart(cursor: SinceCursor): number | "history" {
  if (trimsPossible(cursor.historySize, cursor.historyLimit)) return "history";
  return Math.min(cursor.base - cursor.historySize - SLACK_ROWS, -ANCHOR_ROWS);
}

/** Whether a capture misses rows {@link compareSince} needs for this cursor. */
function lacksRows(cursor: SinceCursor, capture: RowCapture): boolean {
  const { historySize, height } = capture.state;
  if (capture.top === -historySize) return false;
  if (sinceStart(cursor, capture.state) === "history") return true;
  // The remembered rows still exist in the pane but start above what was read.
  return historySize + capture.top > cursor.base && cursor.base < historySize + height;
}

/**
 * Everything capture_since does against tmux: validates the cursor (before any tmux call),
 * captures what is needed (one tmux invocation unless much was written, or tmux trimmed or
 * reflowed), checks it is the same process on the same server and compares. Throws
 * {@link CursorError} for a cursor that cannot be used, and the runner's `TmuxError` (kind
 * `no-target`) when the pane does not exist.
 */
export async function captureSince(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursorText: string | undefined,
  options: RunOptions = {},
): Promise<SinceCapture> {
  const cursor = cursorText === undefined ? null : decodeCursor(cursorText);
  if (cursor && cursor.paneId !== paneId) {
    throw new CursorError(`The cursor was taken on pane ${cursor.paneId}, not ${paneId}.`);
  }
  const read = (start: number | "history") =>
    captureRows(runner, address, paneId, { start, saved: true }, options);
  let capture = await read(cursor ? guessStart(cursor) : -ANCHOR_ROWS);
  if (cursor) checkIdentity(cursor, capture.state);
  // Much output since, or output between two reads, can leave the remembered rows above what
  // was read: read again from where they are now, and at worst the whole history.
  for (let attempt = 0; cursor && !capture.state.alternateScreen; attempt++) {
    if (!lacksRows(cursor, capture)) break;
    capture = await read(attempt < 2 ? sinceStart(cursor, capture.state) : "history");
  }
  const { state } = capture;
  if (cursor) checkIdentity(cursor, state);
  const quiet = { unchangedRows: [], trimmedRows: 0, missed: false, missedReason: null };

  if (state.alternateScreen) {
    const rows = screenRows(capture);
    const altHash = rowHash(rows.join("\n"));
    // The main screen's cursor part stays as it was: what the shell wrote before the program
    // took the screen comes back once it gives the screen back.
    const next = cursor ? { ...cursor, altHash } : cursorFor(normalGrid(capture), state, altHash);
    const changed = !cursor || cursor.altHash !== altHash;
    return {
      ...quiet,
      rows: changed ? rows : [],
      firstRow: changed && rows.length > 0 ? 0 : null,
      resized: false,
      state,
      alternateScreen: true,
      fresh: !cursor,
      cursor: encodeCursor(next),
    };
  }

  let grid = normalGrid(capture);
  if (!cursor) {
    const rows = screenRows(capture);
    return {
      ...quiet,
      rows,
      firstRow: rows.length > 0 ? 0 : null,
      resized: false,
      state,
      alternateScreen: false,
      fresh: true,
      cursor: encodeCursor(cursorFor(grid, state, null)),
    };
  }
  let result = compareSince(cursor, grid);
  if (result.missed && capture.top > -state.historySize) {
    // Everything tmux still holds is newer than what was lost: read all of it.
    capture = await captureRows(
      runner,
      address,
      paneId,
      { start: "history", saved: true },
      options,
    );
    checkIdentity(cursor, capture.state);
    grid = normalGrid(capture);
    result = capture.state.alternateScreen
      ? { ...result, rows: [], firstRow: null }
      : compareSince(cursor, grid);
  }
  return {
    ...result,
    state: capture.state,
    alternateScreen: capture.state.alternateScreen,
    fresh: false,
    cursor: encodeCursor(cursorFor(grid, capture.state, null)),
  };
}

// ---------------------------------------------------------------------------------------------
// Many panes at once

/**
 * One pane's rows from {@link captureMany}, trimmed the way tmux trims them, as one text with
 * a newline between rows: a search over 100 panes of history reads 200 000 rows, and one
 * string per pane instead of one per row keeps that from filling the heap with garbage.
 */
export interface PaneRows {
  readonly paneId: string;
  /** Row number of the first row. */
  readonly top: number;
  /** How many rows `text` holds. */
  readonly rowCount: number;
  /** The rows, joined by newlines (no newline after the last). */
  readonly text: string;
}

/** The rows of a {@link PaneRows}, one string each. */
export function paneRows(pane: PaneRows): string[] {
  return pane.rowCount === 0 ? [] : pane.text.split("\n");
}

const encoder = new TextEncoder();

/** Where `needle` first occurs in `hay` at or after `from`, or -1. */
export function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  if (needle.length === 0) return from <= hay.length ? from : -1;
  const first = needle[0];
  const last = hay.length - needle.length;
  for (let i = hay.indexOf(first, from); i !== -1 && i <= last; i = hay.indexOf(first, i + 1)) {
    let k = 1;
    while (k < needle.length && hay[i + k] === needle[k]) k++;
    if (k === needle.length) return i;
  }
  return -1;
}

/** How many newline bytes `bytes` holds. */
function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) n++;
  return n;
}

/** What {@link captureMany} got for one pane: its rows, or why there are none. */
export type PaneRowsResult = PaneRows | TmuxError;

/** tmux refuses a command line longer than its message size (16 KB): stay well below. */
const MAX_CHAIN_ARG_BYTES = 12_000;

/** Rows one invocation may print, so a chain never holds hundreds of MB at once. */
const MAX_CHAIN_ROWS = 200_000;

/**
 * History rows per pane beyond which a chain is read by a tmux process of its own rather than
 * over the control connection. tmux relays a control client's command output line by line: it
 * wins for screens (1 000 panes' screens in ~110 ms against ~400 ms spawning) and loses for
 * deep history (1 000 panes × 2 000 rows in ~2.5 s against ~1.3 s spawning, 8 at a time).
 * Measured crossover: about 700 rows.
 */
export const BULK_HISTORY_ROWS = 600;

/**
 * Splits panes into chains for {@link captureMany}: each within tmux's command size and a row
 * budget (a pane counts for its history reach plus a screenful).
 */
export function chainPanes(paneIds: readonly string[], historyRows: number): string[][] {
  const perPane = Math.max(1, Math.floor(MAX_CHAIN_ROWS / (historyRows + 100)));
  const chains: string[][] = [];
  let chain: string[] = [];
  let bytes = 0;
  for (const id of paneIds) {
    // The per-pane arguments of captureMany (about 200 bytes with their NULs), generously.
    const cost = 240 + 2 * id.length;
    if (chain.length > 0 && (chain.length >= perPane || bytes + cost > MAX_CHAIN_ARG_BYTES)) {
      chains.push(chain);
      chain = [];
      bytes = 0;
    }
    chain.push(id);
    bytes += cost;
  }
  if (chain.length > 0) chains.push(chain);
  return chains;
}

/**
 * Captures the visible screen of several panes, plus `historyRows` of history each, in ONE
 * tmux invocation: each capture is followed by a framed record of the pane's history size
 * and height read in the same command queue. tmux stops a command chain at the first failure
 * (a pane closed since it was listed), so the panes after a failed one are read again in a
 * new invocation. Keep the list to one {@link chainPanes} chain.
 */
export async function captureMany(
  runner: TmuxRunner,
  address: ServerAddress,
  paneIds: readonly string[],
  historyRows: number,
  options: RunOptions = {},
): Promise<PaneRowsResult[]> {
  const results: PaneRowsResult[] = [];
  while (results.length < paneIds.length) {
    const pending = paneIds.slice(results.length);
    const guard = newGuard();
    const args = pending.flatMap((id, i) => [
      ...(i > 0 ? [";"] : []),
      "capture-pane",
      "-p",
      "-t",
      id,
      ...(historyRows > 0 ? ["-S", String(-Math.min(historyRows, -MIN_ROW_ARG))] : []),
      ";",
      "display-message",
      "-p",
      "-t",
      id,
      recordFormat(guard, ["#{pane_id}", "#{history_size}", "#{pane_height}"]),
    ]);
    const result = historyRows > BULK_HISTORY_ROWS
      ? await runner.exec(address, args, options)
      : await execFast(runner, address, args, options);
    // The markers are found in the bytes: a string of the whole output (megabytes for deep
    // history) would be one more large copy per chain.
    const out = result.stdout;
    const openMark = encoder.encode(`${guard}R`);
    const closeMark = encoder.encode(`${guard}E\n`);
    let at = 0;
    for (const id of pending) {
      const open = indexOfBytes(out, openMark, at);
      if (open === -1) break;
      const close = indexOfBytes(out, closeMark, open);
      if (close === -1) break;
      const [[paneId, history, height]] = parseRecords(
        result.stdout.subarray(open, close + guard.length + 2),
        guard,
        3,
      );
      if (paneId !== id) throw new Error(`tmux described ${paneId}, not ${id}`);
      const { top, bottom } = captureRange(
        { start: historyRows > 0 ? -historyRows : undefined },
        { historySize: int(history), height: int(height) },
      );
      // Every row tmux prints ends with a newline.
      const printed = result.stdout.subarray(at, open);
      const rowCount = countNewlines(printed);
      if (rowCount !== bottom - top + 1 || (rowCount > 0 && printed.at(-1) !== 0x0a)) {
        throw new Error(`tmux printed ${rowCount} rows for rows ${top}..${bottom} of ${id}`);
      }
      const text = decodeBytes(printed.subarray(0, Math.max(0, printed.length - 1)));
      results.push({ paneId: id, top, rowCount, text });
      at = close + guard.length + 2;
    }
    if (results.length < paneIds.length && result.code === 0) {
      throw new Error("tmux output ended before every pane was captured");
    }
    if (result.code !== 0) {
      // The pane being read when tmux stopped is the one that failed.
      const stderr = result.stderr.trim();
      const message = stderr.split("\n")[0] || `tmux exited with status ${result.code}`;
      const kind = classifyStderr(stderr);
      if (kind === "no-server") throw new TmuxError(kind, message, stderr);
      results.push(new TmuxError(kind, message, stderr));
    }
  }
  return results;
}
