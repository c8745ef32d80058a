/**
 * How capture_since reads a pane to compare it with a cursor: since.ts chooses the read (a
 * plan, tried again when the pane moved meanwhile, or one pass through everything) and compares.
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
  type ChainPart,
  countOf,
  isBlankRow,
  lastWrittenIndex,
  type PaneState,
  splitLines,
  trimRow,
  utf8Length,
} from "./capture.ts";
import { LineSplitter } from "./chain.ts";
import {
  type ShownReads,
  shownRows,
  shownRunRows,
  TailBudget,
  tailFilled,
} from "./capture_tail.ts";
import { decodeBytes } from "./format.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";
import { ANCHOR_ROWS, HASH_CHARS, hashValue, type SinceCursor } from "./since_cursor.ts";
import { lastTrimTried, trimsPossible, trimStep } from "./since_compare.ts";
import {
  type GridFacts,
  HashGrid,
  type NormalGrid,
  type SinceRows,
  type Stretch,
  StretchGrid,
} from "./since_grid.ts";

/** The visible screen (row 0 on) of rows read from `top`, trimmed, through the last written row. */
export function screenRows(rows: readonly string[], top: number): string[] {
  const screen = rows.slice(Math.max(0, -top)).map(trimRow);
  return screen.slice(0, lastWrittenIndex(screen, 0) + 1);
}

/** Where a pane stands, as a plan for what to read is made from it. */
export interface Guess {
  readonly historySize: number;
}

/** Rows read beyond the ones a comparison needs, for output that arrives meanwhile. */
export interface Slack {
  /** Above: new output moves every row up. */
  readonly up: number;
  /** Below. */
  readonly down: number;
}

/**
 * Absolute ranges (inclusive) of the rows `compareSince` (since_compare.ts) looks at for a
 * cursor when the pane stands as `facts` say: the remembered rows where they were, and where
 * each whole trim tmux may have made would have moved them. The row after each is included
 * (new output starts there).
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
 * Reads what a comparison needs in ONE tmux invocation over the control connection, as printed
 * (`screen` too; `saved`, the saved main screen's rows, as shown): the rows
 * around each place the remembered rows may be, the last rows (the screen and `want` more),
 * and the bytes of the rows between, counted by tmux; with `fromTop`, the first rows too and
 * the rows above the first stretch counted (an answer that missed lines starts at the top).
 * Positions are planned from `guess`; what the read actually covers is judged after, against
 * the state it read.
 */
export async function readStretches(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursor: SinceCursor,
  guess: Guess,
  slack: Slack,
  want: number,
  fromTop: boolean,
  options: RunOptions,
): Promise<
  { state: PaneState; grid: NormalGrid; covered: boolean; screen: string[]; saved: string[] }
> {
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
    // As printed: hashed and counted; the rows an answer gives are read as shown after. But
    // the screen as shown too (a screen is all it costs): a row there can change by its
    // colours alone, which its hash then tells (since_grid.ts normalGrid).
    if (last && rel(a) < 0) {
      parts.push({ kind: "rows", span: { start: rel(a), end: -1 }, printed: true });
    }
    parts.push(
      last
        ? { kind: "rows", span: { start: Math.max(0, rel(a)), end: undefined }, views: true }
        : { kind: "rows", span: { start: rel(a), end: rel(b) }, printed: true },
    );
  });
  parts.push({ kind: "saved", views: true });
  const { state, outputs, printed } = await captureChain(runner, address, paneId, parts, options);

  // Where tmux put each part, now that its state is known.
  const now = state.historySize;
  const read: { first: number; rows: string[] }[] = [];
  const counts: { first: number; last: number; bytes: number }[] = [];
  let screen: string[] = [];
  /** Screen rows as shown where they read otherwise than as printed (see StretchGrid). */
  const shownScreen = new Map<number, string>();
  parts.forEach((part, i) => {
    if (part.kind === "saved") return;
    const { top, bottom } = captureRange(part.span, state);
    if (part.kind === "count") {
      counts.push({ first: now + top, last: now + bottom, bytes: countOf(outputs[i]) });
      return;
    }
    const both = part.views === true;
    const rows = splitLines(both ? printed[i] ?? new Uint8Array() : outputs[i]).map(trimRow);
    if (rows.length !== bottom - top + 1) {
      throw new Error(`tmux printed ${rows.length} rows for rows ${top}..${bottom} of ${paneId}`);
    }
    // The last part reaches the bottom: its rows from 0 on are the visible screen.
    if (part.span.end === undefined) {
      const shown = both ? splitLines(outputs[i]).map(trimRow) : rows;
      screen = screenRows(shown, top);
      if (!state.alternateScreen) {
        shown.forEach((text, k) => {
          if (top + k >= 0 && text !== rows[k]) shownScreen.set(now + top + k, text);
        });
      }
    }
    // The normal grid is history plus the screen, or plus the saved screen.
    read.push({
      first: now + top,
      rows: state.alternateScreen ? rows.slice(0, Math.max(0, -top)) : rows,
    });
  });
  let saved: string[] = [];
  if (state.alternateScreen) {
    read.push({
      first: now,
      rows: splitLines(printed[parts.length - 1] ?? new Uint8Array()).map(trimRow),
    });
    saved = splitLines(outputs[parts.length - 1]).map(trimRow);
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
    const previous = stretches[stretches.length - 1];
    // Rows that follow on (history, then the saved screen) are one stretch: rowsFrom reads
    // text from the last one only.
    if (previous && first === at) {
      stretches[stretches.length - 1] = { ...previous, rows: [...previous.rows, ...rows] };
    } else stretches.push({ first, rows, gapBytes: first === at ? 0 : gap ? gap.bytes : null });
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
  return {
    state,
    grid: new StretchGrid({ ...facts, first }, stretches, shownScreen),
    covered,
    screen,
    saved,
  };
}

/**
 * Reads the whole pane in one pass through a tmux process of its own, as it streams and as
 * printed: every row's hash and byte count, and the text of the last rows only. For what a plan cannot
 * pin down: a width change (the remembered rows may be anywhere), or a pane writing faster
 * than reads can follow.
 */
export async function streamGrid(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  want: number,
  options: RunOptions,
  keepBytes = Infinity,
): Promise<{ state: PaneState; grid: NormalGrid | null; screen: string[] }> {
  let historySize = 0;
  let normalEnd = 0;
  let keepFrom = 0;
  let hashes = new Float64Array(0);
  let bytes = new Float64Array(1);
  // The last rows' text: `want` of them at most, and only as many as a reply of `keepBytes`
  // can hold (TailBudget). Earlier rows are counted (bytes).
  let tail: string[] = [];
  let tailFrom = 0;
  const budget = new TailBudget(keepBytes);
  const screen: string[] = [];
  let next = 0;
  const keep = (abs: number, text: string) => {
    tail.push(text);
    const gone = budget.add(bytes[abs + 1] - bytes[abs], abs < historySize || !isBlankRow(text));
    tailFrom += gone.lines;
    keepFrom += gone.lines;
    if (tailFrom > 1024 && tailFrom * 2 > tail.length) {
      tail = tail.slice(tailFrom);
      tailFrom = 0;
    }
  };
  const row = (line: Uint8Array) => {
    const text = trimRow(decodeBytes(line));
    const abs = next++;
    if (abs < normalEnd) {
      hashes[abs] = hashValue(text);
      bytes[abs + 1] = bytes[abs] + utf8Length(text) + 1;
      if (abs >= keepFrom) keep(abs, text);
    }
    if (abs >= historySize) screen.push(text);
  };
  const splitter = new LineSplitter();
  const { state } = await captureChain(
    runner,
    address,
    paneId,
    [{ kind: "rows", span: { start: "history" }, printed: true }],
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
    { first: keepFrom, rows: tail.slice(tailFrom) },
  );
  return { state, grid, screen: shown };
}

/**
 * A comparison's rows, read as printed (every grid hashes and counts rows so), as a person sees
 * them: the last ones an answer of `want` lines and `keepBytes` bytes can give read again as
 * shown, from the bottom up in runs of at most SHOWN_CELLS cells (capture_tail.ts), a run more
 * only while the rows read (through the last written one) are fewer than `want` and hold no
 * more than `keepBytes`; rows of the saved main screen (the alternate screen on) taken from
 * `saved`, read with the comparison. The rows above them are counted as printed; blank rows
 * as shown at the end (hidden text on the screen) are padding, left out.
 */
export async function shownSince<R extends SinceRows & { unchangedRows: number[] }>(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  state: PaneState,
  result: R,
  saved: readonly string[],
  want: number,
  keepBytes: number,
  options: RunOptions,
): Promise<R> {
  const { rows } = result;
  if (rows.length === 0 || result.firstRow === null) return result;
  // Row number (tmux's, as `state` found the pane) of rows[0].
  const first = result.firstRow + result.skippedRows;
  const run = shownRunRows(state.width);
  const shown: string[] = new Array(rows.length);
  const savedFrom = state.alternateScreen ? 0 : Infinity;
  let at = rows.length;
  let last = -1;
  const how: ShownReads = { spawn: false };
  const enough = () => tailFilled(shown, at, last, want, keepBytes);
  while (at > 0 && !enough()) {
    const n = Math.min(run, at, last >= 0 ? Math.max(1, want - (last - at + 1)) : run);
    const lo = at - n;
    const hi = Math.min(at - 1, savedFrom - first - 1);
    for (let j = Math.max(lo, hi + 1); j < at; j++) shown[j] = trimRow(saved[first + j] ?? "");
    if (hi >= lo) {
      const got = await shownRows(
        runner,
        address,
        paneId,
        state,
        first + lo,
        first + hi,
        options,
        "shown",
        how,
      );
      for (let j = lo; j <= hi; j++) shown[j] = trimRow(got.shown[j - lo]);
    }
    for (let j = at - 1; j >= lo && last < 0; j--) {
      if (first + j < 0 || !isBlankRow(shown[j])) last = j;
    }
    at = lo;
  }
  let skippedBytes = result.skippedBytes;
  for (let j = 0; j < at; j++) skippedBytes += utf8Length(rows[j]) + 1;
  const skippedRows = result.skippedRows + at;
  const kept = shown.slice(at, last + 1);
  return {
    ...result,
    rows: kept,
    firstRow: kept.length === 0 && skippedRows === 0 ? null : result.firstRow,
    skippedRows,
    skippedBytes,
    unchangedRows: result.unchangedRows.filter((i) => i < skippedRows + kept.length),
  };
}
