/**
 * capture_since: what a pane wrote or rewrote since an earlier read, found again from an opaque
 * cursor.
 *
 * A cursor (since_cursor.ts) remembers where the pane stood and a hash of each row it saw;
 * since_compare.ts finds them again on a grid (since_grid.ts) and says what changed.
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
  splitLines,
  trimRow,
  utf8Length,
} from "./capture.ts";
import { LineSplitter } from "./chain.ts";
import { decodeBytes } from "./format.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import { TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";
import { sameServer, serversText } from "./server_identity.ts";
import {
  ANCHOR_ROWS,
  CursorError,
  decodeCursor,
  encodeCursor,
  HASH_CHARS,
  hashValue,
  openSealed,
  parseHash,
  prefixWithHash,
  rowHash,
  sealCursor,
  type SinceCursor,
} from "./since_cursor.ts";
import {
  compareSince,
  cursorFor,
  lastTrimTried,
  type SinceResult,
  trimsPossible,
  trimStep,
} from "./since_compare.ts";
import {
  type GridFacts,
  HashGrid,
  type NormalGrid,
  normalGrid,
  RowNotRead,
  type Stretch,
  StretchGrid,
} from "./since_grid.ts";

export { CursorError } from "./since_cursor.ts";

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
  const then = { pid: cursor.serverPid, startTime: cursor.serverStart };
  const now = { pid: state.serverPid, startTime: state.serverStart };
  if (!sameServer(then, now)) {
    throw new CursorError(
      `The cursor comes from another tmux server (or one since restarted): ${
        then.pid === now.pid
          ? serversText(then, now)
          : `server pid ${then.pid}, this one is ${now.pid}`
      }.`,
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
  const maxJ = lastTrimTried(cursor.base, step, possible);
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
 * and the bytes of the rows between, counted by tmux; with `fromTop`, the first rows too and
 * the rows above the first stretch counted (an answer that missed lines starts at the top).
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
  // From the top: the first rows too, where a clear leaves the cursor's screen rows.
  const top: [number, number][] = fromTop ? [[0, cursor.rows.length / HASH_CHARS]] : [];
  // Spans reaching below the screen are clamped by tmux and merged with the last one after.
  const spans = mergeRanges([
    ...neededRanges(cursor, { historySize: hs, historyLimit: cursor.historyLimit })
      .map(([a, b]): [number, number] => [Math.max(0, a - slack.up), b + slack.down])
      .concat(top)
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
  // Whether the stretches (in order, apart) hold every row of [a, b] (rows past the end need
  // none): one step a stretch, not one a row.
  const holds = (a: number, b: number) => {
    let at = Math.max(a, 0);
    for (const s of stretches) {
      if (at > b || at >= facts.end) break;
      if (s.first + s.rows.length <= at) continue;
      if (s.first > at) return false;
      at = s.first + s.rows.length;
    }
    return at > b || at >= facts.end;
  };
  // What the comparison needs, judged against the state the read found.
  const covered = state.width !== cursor.width || state.alternateScreen ||
    neededRanges(cursor, state).every(([a, b]) => holds(a, b));
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
 * used, and the runner's `TmuxError` (kind `no-target`) when the pane does not exist. The
 * cursor it returns is sealed by this process (see {@link writtenSince}).
 */
export async function captureSince(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursorText: string | undefined,
  want: number,
  options: RunOptions = {},
): Promise<SinceCapture> {
  const capture = await compareWithCursor(runner, address, paneId, cursorText, want, options);
  // Under a full-screen program the cursor keeps the given one's main-screen part: sealed only
  // if this process sealed that one, so a forged cursor never comes back vouched for.
  const keepsGiven = cursorText !== undefined && capture.alternateScreen && !capture.fresh;
  if (keepsGiven && !(await openSealed(cursorText).then(() => true, () => false))) return capture;
  return { ...capture, cursor: await sealCursor(capture.cursor) };
}

/** A row written since a cursor was taken (see {@link writtenSince}). */
export interface SinceRow {
  /** The row as it reads now. */
  readonly text: string;
  /** Where the part written since the cursor starts: text before it was the row then. */
  readonly from: number;
  /** What to report: from `from` on when the row then began this one, else the whole row. */
  readonly shown: string;
}

/** What a pane wrote since a sealed cursor, as {@link writtenSince} finds it. */
export interface WrittenSince {
  readonly rows: SinceRow[];
  /**
   * Why what was written since could not be told from what was there before (the rows are
   * then none), or null.
   */
  readonly lost: string | null;
  /** Rows written since that were counted, not read (more than `want`). */
  readonly skippedRows: number;
}

/**
 * Checks a cursor capture_since handed out on this pane, from this process (sealed), before any
 * tmux call: a forged cursor must not decide what counts as written since.
 */
export async function openSinceCursor(cursorText: string, paneId: string): Promise<SinceCursor> {
  const cursor = await openSealed(cursorText);
  if (cursor.paneId !== paneId) {
    throw new CursorError(`The cursor was taken on pane ${cursor.paneId}, not ${paneId}.`);
  }
  return cursor;
}

/**
 * The rows a pane wrote or rewrote since a cursor this process sealed, for a wait that counts
 * output from an earlier point than its own start. Unchanged rows are not written; a row that
 * still begins with what it read then (a prompt typed after) is written from there on, blanks
 * after it skipped; any other row changed since is written whole (a cursor keeps no text, so
 * which of its characters were rewritten cannot be told). Where the cursor's position cannot
 * be proved (history cleared or trimmed, width changed), or a full-screen program redrew the
 * screen it already showed then, nothing is told: `lost` says why.
 */
export async function writtenSince(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursorText: string,
  want: number,
  options: RunOptions = {},
): Promise<WrittenSince> {
  const cursor = await openSinceCursor(cursorText, paneId);
  const since = await compareWithCursor(runner, address, paneId, cursorText, want, options);
  const none = (lost: string | null): WrittenSince => ({ rows: [], lost, skippedRows: 0 });
  if (since.alternateScreen) {
    if (since.rows.length === 0) return none(null);
    if (cursor.altHash !== null) {
      return none("a full-screen program redrew the screen it showed then");
    }
    // The program took the screen after the cursor: all it shows was drawn since.
    const rows = since.rows.filter((text) => text !== "").map((text) => ({
      text,
      from: 0,
      shown: text,
    }));
    return { rows, lost: null, skippedRows: 0 };
  }
  if (since.missedReason === "history-cleared") {
    return none(
      since.clearUnproven
        ? "the lines it saw were cleared, or rewritten from the top of the screen"
        : "the history was cleared",
    );
  }
  if (since.missedReason === "history-trimmed") return none("the history was trimmed at its limit");
  if (since.resized || since.missed) return none("the pane's width changed");
  // Old rows moved where they could not be followed: they would count as written since.
  if (since.mayRepeat) return none("the lines it saw moved in a way that could not be followed");
  const unchanged = new Set(since.unchangedRows);
  const first = since.state.historySize + (since.firstRow ?? 0) + since.skippedRows;
  const remembered = cursor.rows.length / HASH_CHARS;
  const rows: SinceRow[] = [];
  since.rows.forEach((text, j) => {
    if (text === "" || unchanged.has(since.skippedRows + j)) return;
    const k = first + j + since.trimmedRows - cursor.base;
    let from = 0;
    // Under a scroll region a row's place says nothing of what read there before.
    if (k >= 0 && k < remembered && !since.regionMoved) {
      const kept = prefixWithHash(
        text,
        parseHash(cursor.rows.slice(k * HASH_CHARS, (k + 1) * HASH_CHARS)),
      );
      if (kept > 0) {
        from = kept;
        while (text[from] === " ") from++;
      }
    }
    if (from >= text.length) return;
    rows.push({ text, from, shown: from > 0 ? text.slice(from) : text });
  });
  return { rows, lost: null, skippedRows: since.skippedRows };
}

/** {@link captureSince} without sealing the cursor it makes. */
async function compareWithCursor(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursorText: string | undefined,
  want: number,
  options: RunOptions,
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
    mayRepeat: false,
    unchangedAbove: 0,
    clearUnproven: false,
    regionMoved: false,
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
    // Lost: the answer starts at the top of what tmux holds, where a clear leaves the screen
    // the cursor saw (compareSince looks for it there). Read from the top.
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
