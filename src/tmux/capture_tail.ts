/**
 * The last lines of a range of a pane (what capture_pane and snapshot_pane return), reading
 * only the rows those lines can come from.
 *
 * A caller that keeps the last 10 lines of 190 000 rows of history gets tmux to print those 10
 * (and a screenful), and tmux measures the bytes of the rest without sending them. Joined
 * lines above the ones kept, which no tmux number counts, stream through a counter that holds
 * none of them. State, lines and counts always come from one tmux invocation, so every count
 * is exactly what a read of the whole range would give.
 *
 * That read is as printed: a row as a person sees it takes `capture-pane -e`, which tmux builds
 * whole before it answers anyone, at up to ~45 bytes a cell. Only the rows a reply can keep are
 * read again as shown, a few at a time ({@link SHOWN_CELLS}), and every line left out is
 * counted as printed.
 *
 * @module
 */

import {
  alignJoined,
  asPrinted,
  captureChain,
  captureRange,
  type ChainCapture,
  type ChainPart,
  checkRows,
  countOf,
  isBlankRow,
  lastWrittenIndex,
  type PaneState,
  type RowSpan,
  splitLines,
  type StreamedPart,
  trimRow,
  utf8Length,
} from "./capture.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";
import { drawnState } from "./sgr_state.ts";
import { AnswerPastBound, TmuxError } from "./tmux_error.ts";

/**
 * Counts lines as they stream by (`\n`-terminated, split anywhere) and their bytes with
 * trailing spaces trimmed as {@link trimRow} trims them, each with its newline. The last line
 * is remembered untrimmed ({@link lastBytes}, {@link lastSpaces}): a line tmux ended only
 * because the capture ended may go on below.
 */
export class LineCounter {
  /** Lines seen. */
  lines = 0;
  /** Their trimmed bytes, each plus one for its newline. */
  bytes = 0;
  /** Bytes of the last line seen, trailing spaces included. */
  lastBytes = 0;
  /** Spaces at its end. */
  lastSpaces = 0;
  #pendingBytes = 0;
  #pendingSpaces = 0;
  /** With `sizes`: each line's bytes as {@link bytes} counts them, in order. */
  readonly sizes: number[] | null;

  constructor(sizes = false) {
    this.sizes = sizes ? [] : null;
  }

  /** Counts the next bytes. */
  push(bytes: Uint8Array): void {
    let at = 0;
    for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, at)) {
      this.#add(bytes, at, nl);
      this.lines++;
      this.bytes += this.#pendingBytes - this.#pendingSpaces + 1;
      this.sizes?.push(this.#pendingBytes - this.#pendingSpaces + 1);
      this.lastBytes = this.#pendingBytes;
      this.lastSpaces = this.#pendingSpaces;
      this.#pendingBytes = 0;
      this.#pendingSpaces = 0;
      at = nl + 1;
    }
    this.#add(bytes, at, bytes.length);
  }

  /** Whether bytes came after the last newline (tmux ends every capture with one). */
  get open(): boolean {
    return this.#pendingBytes > 0;
  }

  #add(bytes: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    this.#pendingBytes += to - from;
    let k = to;
    while (k > from && bytes[k - 1] === 0x20) k--;
    this.#pendingSpaces = k === from ? this.#pendingSpaces + (to - from) : to - k;
  }
}

/** What {@link captureTail} reads. */
export interface TailSpec extends RowSpan {
  /** Keep escape sequences for colours and attributes (`-e`). */
  readonly escapes?: boolean;
  /** Lines the terminal wrapped count as one (`-J`). */
  readonly joined?: boolean;
}

/** The last lines of a range, with the lines before them counted rather than read. */
export interface LineTail {
  readonly state: PaneState;
  /** The range tmux captures for the spec, after clamping (see {@link captureRange}). */
  readonly top: number;
  readonly bottom: number;
  /**
   * The last lines of the range (rows, or joined lines), trailing spaces trimmed as tmux trims
   * them, blank rows below the last written one left out: at least the `want` last ones
   * whenever the range holds that many.
   */
  readonly lines: string[];
  /**
   * `lines` as printed (hidden text as its characters, a line-drawing letter as itself; with
   * `escapes`, without them), one for one: what a reply counts of the lines it leaves out
   * (omittedBytes counts as printed). Absent where they could not be lined up (never seen).
   */
  readonly printed?: string[];
  /** Lines of the range before `lines`: counted, not read. */
  readonly skippedLines: number;
  /** UTF-8 bytes of those lines as printed, each with the newline after it. */
  readonly skippedBytes: number;
  /**
   * Row number at which line `index` of the whole range (skipped lines included) starts, for
   * indexes from `skippedLines` on; null when it cannot be known.
   */
  readonly rowOf: ((index: number) => number) | null;
}

/**
 * Joined lines (`-J`) above this many rows are streamed through a tmux process of its own
 * rather than carried whole over the control connection.
 */
const STREAM_ROWS = 2_000;

/**
 * The last `want` lines of a range, reading only the rows they can come from. Lines before
 * them are counted exactly: as rows, by tmux's own numbers and a byte count measured inside
 * tmux; as joined lines (which no tmux number counts), by streaming them through a counter
 * that holds none of them. State, lines and counts always come from one tmux invocation.
 * A window that prints more than {@link TAIL_ANSWER_BYTES} is read again as it streams, only
 * each row's size kept. With `escapes`, rows are read as tmux prints them with `-e`, in the same
 * runs as rows read as shown (tmux builds an `-e` capture whole, at up to ~45 bytes a cell): the
 * first line read starts from default attributes (a capture of the whole range could carry a
 * colour into it from above), and so does a line where one run meets the run above it, after a
 * reset (`ESC[0m`) where the run above set any; the lines left out are counted as printed.
 */
export async function captureTail(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  spec: TailSpec,
  want: number,
  keepBytes: number,
  options: RunOptions = {},
): Promise<LineTail> {
  // tmux swaps an inverted range: so does everything below.
  const range = typeof spec.start === "number" && spec.end !== undefined && spec.start > spec.end
    ? { ...spec, start: spec.end, end: spec.start }
    : spec;
  const n = Math.max(1, want);
  if (range.joined) return await joinedTail(runner, address, paneId, range, n, keepBytes, options);
  return await rowTail(runner, address, paneId, range, n, keepBytes, options);
}

/**
 * Cells one read as a person sees them (`capture-pane -e`, see shown_cells.ts) covers at most.
 * tmux builds a capture whole before it answers anyone, and with `-e` a program that gives
 * every cell colours and attributes of its own makes it print ~45 bytes a cell (36 MB for
 * 2 000 rows of 400 columns, the person's tmux frozen for 4 s while it does): rows as shown
 * are read in runs of this many cells (~40 ms of tmux's time at worst), and only the rows a
 * reply can keep; the rest is read as printed, which costs a byte a cell.
 */
export const SHOWN_CELLS = 16_384;

/**
 * How a reader's runs of rows as shown go to tmux ({@link shownRows}): over the control
 * connection, the cheap way, until one answer comes back heavy (past {@link HEAVY_ANSWER}
 * bytes: a pane whose cells carry attributes of their own), then each by a tmux process of its
 * own (tmux 3.3a keeps in memory what it answered a control client, so a reader of a hostile
 * pane would leave tmux a run's answer larger for each run). One for each reader's loop.
 */
export interface ShownReads {
  spawn: boolean;
}

/** A run's answer past this is heavy ({@link ShownReads}): 8 bytes a cell of a full run. */
const HEAVY_ANSWER = 8 * 16_384;

/** Rows of a pane `width` columns wide that one read as shown covers ({@link SHOWN_CELLS}). */
export function shownRunRows(width: number): number {
  return Math.max(1, Math.floor(SHOWN_CELLS / Math.max(1, width)));
}

/**
 * How {@link shownRows} gives rows: as a person sees them and as printed (`views`), as shown
 * only, or as tmux prints them with `-e` (`escapes`: a reply with the attributes to be read).
 */
export type RowsAs = "views" | "shown" | "escapes";

/**
 * What a line where one run of `escapes` rows meets the run above it starts with: tmux starts
 * each capture from default attributes in the normal character set, and so gives no code for
 * what the line above left set. A reset (`ESC[0m`) where the run above left attributes set, and
 * SI where it left the line-drawing set on (a reset does not end it).
 */
function resetAfter(upper: readonly string[]): string {
  const state = drawnState(upper.join("\n"));
  return (state.startsWith("\x1b") ? "\x1b[0m" : "") + (state.endsWith("\x0e") ? "\x0f" : "");
}

/**
 * Runs of rows read from the bottom up, joined: `upper` (rows, or lines, read last) above
 * `lower`. Rows `as` `escapes`: the first of `lower` starts with what undoes the state `upper`
 * left ({@link resetAfter}).
 */
function joinRuns(upper: string[], lower: string[], as: RowsAs): string[] {
  const reset = as === "escapes" && lower.length > 0 ? resetAfter(upper) : "";
  if (reset !== "") lower = [reset + lower[0], ...lower.slice(1)];
  return [...upper, ...lower];
}

/**
 * Rows read by number ({@link shownRows}) were not all where they were: the pane moved under
 * the read. Most often it kept printing at its history limit, where tmux trims a tenth of the
 * history at once (so its size fell while nothing was cleared); else its history was cleared,
 * or it shrunk. Reading again may find them, unless the pane goes on printing.
 */
export class RowsMoved extends TmuxError {
  /** For rows of `paneId`. */
  constructor(paneId: string) {
    super(
      "failed",
      `Rows of ${paneId} were no longer where they were while they were read (the pane kept ` +
        "printing at its history limit, its history was cleared, or it shrunk); read it again, " +
        "or once it settles.",
    );
    this.name = "RowsMoved";
  }
}

/**
 * Rows `lo..hi`, numbered as the pane stood in `base`, as `as` says ({@link RowsAs}; `printed`
 * empty unless `views`), untrimmed (`-N`), in one tmux invocation, over the control connection or
 * by a tmux process of its own as `how` says (and learns: {@link ShownReads}). Rows keep their
 * place as the history grows (new
 * output moves every row up): the numbers follow the history's size, read again when it moved
 * during the read (a pane writing all the time is taken as it stands at the last try).
 * Throws {@link RowsMoved} when the rows are no longer all in the pane. At its history limit a
 * pane that prints moves without its history growing (tmux drops the oldest rows as it adds
 * rows, a tenth of the limit at once), which no size tells: a caller that must have the rows
 * it read before checks their text (search does).
 */
export async function shownRows(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  base: Pick<PaneState, "historySize">,
  lo: number,
  hi: number,
  options: RunOptions,
  as: RowsAs = "views",
  how: ShownReads = { spawn: false },
): Promise<{ shown: string[]; printed: string[]; moved: number }> {
  const views = as === "views";
  let moved = 0;
  for (let attempt = 0;; attempt++) {
    const span = { start: lo - moved, end: hi - moved };
    const part: ChainPart = as === "escapes"
      ? { kind: "rows", span, flags: ["-e", "-N"] }
      : { kind: "rows", span, flags: ["-N"], views };
    const { state, outputs, printed, answerBytes } = await captureChain(
      runner,
      address,
      paneId,
      [part],
      options,
      undefined,
      how.spawn,
    );
    if (answerBytes > HEAVY_ANSWER) how.spawn = true;
    const now = state.historySize - base.historySize;
    if (now !== moved && attempt < 2) {
      moved = now;
      continue;
    }
    const range = captureRange(span, state);
    if (range.top !== span.start || range.bottom !== span.end) throw new RowsMoved(paneId);
    const shown = splitLines(outputs[0]);
    const was = printed[0] ? splitLines(printed[0]) : [];
    checkRows(paneId, shown.length, range.top, range.bottom);
    if (views) checkRows(paneId, was.length, range.top, range.bottom);
    return { shown, printed: was, moved };
  }
}

/**
 * The rows from `lo` to `hi` (numbered as in `state`) a reply of `want` lines and `keepBytes`
 * bytes can keep, as a person sees them and as printed (or `as` `escapes`), read from the bottom
 * up in runs of
 * {@link SHOWN_CELLS}: a run more only while the lines read (through the last written one)
 * are fewer than `want` and hold no more than `keepBytes`. Returns the rows read, from `at`.
 */
async function shownTail(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  state: PaneState,
  lo: number,
  hi: number,
  want: number,
  keepBytes: number,
  options: RunOptions,
  sizes?: readonly number[],
  as: RowsAs = "views",
): Promise<{ at: number; shown: string[]; printed: string[] }> {
  const run = shownRunRows(state.width);
  const how: ShownReads = { spawn: false };
  /**
   * Rows a run ending at row `at - 1` takes: `run`, or, where the rows' printed sizes are known
   * (`sizes`, from row `lo`), as many as print up to {@link SHOWN_CELLS} bytes (short rows are
   * most panes' rows: 2 000 of them in one or two runs), up to eight times `run` while no
   * answer came back heavy (a row printing little may still carry attributes on every cell).
   */
  const runAt = (at: number) => {
    if (sizes === undefined || how.spawn) return run;
    let n = 0;
    for (let bytes = 0; n < at - lo && n < 8 * run; n++) {
      bytes += sizes[at - 1 - n - lo] ?? 0;
      if (n > 0 && bytes > SHOWN_CELLS) break;
    }
    return Math.max(run, n);
  };
  let shown: string[] = [];
  let printed: string[] = [];
  let at = hi + 1;
  while (at > lo) {
    const last = lastWrittenIndex(shown, at);
    if (last >= 0) {
      const lines = last + 1;
      if (lines >= want) break;
      let bytes = 0;
      for (let i = 0; i <= last && bytes <= keepBytes; i++) {
        bytes += utf8Length(trimRow(shown[i])) + 1;
      }
      if (bytes > keepBytes) break;
    }
    const most = runAt(at);
    const need = last >= 0 ? want - (last + 1) : Math.max(want, run);
    const n = Math.min(most, Math.max(1, need), at - lo);
    const got = await shownRows(runner, address, paneId, state, at - n, at - 1, options, as, how);
    shown = joinRuns(got.shown, shown, as);
    printed = [...got.printed, ...printed];
    at -= n;
  }
  return { at, shown, printed };
}

/**
 * The last rows of a range as a person sees them (or with their escapes, `spec.escapes`): the
 * window they can come from read as printed (a byte a cell) with the rows above it counted
 * inside tmux, in one invocation; then only the rows a reply can keep read as shown
 * ({@link shownTail}). Every row left out is counted as printed.
 */
async function rowTail(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  spec: TailSpec,
  want: number,
  keepBytes: number,
  options: RunOptions,
): Promise<LineTail> {
  const from = windowStart(spec, want);
  const window: RowSpan = { start: from, end: spec.end };
  const as: RowsAs = spec.escapes ? "escapes" : "views";
  // A window within the screen (the default read) is read as shown at once, in the same step:
  // a screen is all it can cost tmux, and a second round trip would cost every capture more.
  let onScreen = from >= 0;
  const windowPart = (): ChainPart =>
    !onScreen
      ? { kind: "rows", span: window, flags: ["-N"], printed: true }
      : as === "escapes"
      ? { kind: "rows", span: window, flags: ["-e", "-N"] }
      : { kind: "rows", span: window, flags: ["-N"], views: true };
  const parts: ChainPart[] = [windowPart()];
  const above = startsAbove(spec, from);
  if (above) parts.push({ kind: "count", span: { start: spec.start, end: from - 1 } });
  // Set by the closure below (typed so that the checker does not take it for null).
  let counter = null as LineCounter | null;
  const capture = await boundedElseStreamed(runner, address, paneId, parts, options, () => {
    // Read again as printed, streamed: only each row's size is kept.
    onScreen = false;
    parts[0] = windowPart();
    const sizes = counter = new LineCounter(true);
    return { part: 0, bulk: true, consume: (bytes) => sizes.push(bytes) };
  });
  const { state, outputs } = capture;
  // Rows as printed, whose sizes count what is left out (with escapes, a screen read whole
  // leaves out none but the padding: its rows' count is all that is needed of them).
  const windowPrinted = onScreen ? capture.printed[0] ?? outputs[0] : outputs[0];
  const { top, bottom } = captureRange(spec, state);
  const read = captureRange(window, state);
  if (counter?.open) throw new Error(`tmux ended the rows of ${paneId} inside one`);
  const sizes = counter?.sizes ??
    splitLines(windowPrinted).map((row) => utf8Length(trimRow(row)) + 1);
  checkRows(paneId, sizes.length, read.top, read.bottom);
  const skippedLines = read.top - top;
  let skippedBytes = skippedHistory(spec, from, above, state, top, read.top, outputs);
  const tail = onScreen
    ? {
      at: read.top,
      shown: splitLines(outputs[0]),
      printed: as === "escapes" ? [] : splitLines(windowPrinted),
    }
    : await shownTail(
      runner,
      address,
      paneId,
      state,
      read.top,
      read.bottom,
      want,
      keepBytes,
      options,
      sizes,
      as,
    );
  // Rows of the window above the ones read as shown: history, or rows above a written one.
  const unread = tail.at - read.top;
  for (let i = 0; i < unread; i++) skippedBytes += sizes[i];
  const last = lastWrittenIndex(tail.shown, tail.at);
  return {
    state,
    top,
    bottom,
    lines: tail.shown.slice(0, last + 1).map(trimRow),
    printed: (as === "escapes" ? tail.shown.map(asPrinted) : tail.printed).slice(0, last + 1)
      .map(trimRow),
    skippedLines: skippedLines + unread,
    skippedBytes,
    rowOf: (i) => top + i,
  };
}

/**
 * The bytes of the range's rows above a window starting at `from` that a read skipped (tmux
 * counted them, `outputs[1]`, trimmed as they would print): every such row is history (the
 * window reaches `want` rows above the screen), each a line. 0 when none was skipped (`top`
 * is the window's own top, `readTop`).
 */
function skippedHistory(
  spec: TailSpec,
  from: number,
  above: boolean,
  state: PaneState,
  top: number,
  readTop: number,
  outputs: readonly Uint8Array[],
): number {
  if (readTop - top <= 0) return 0;
  const counted = captureRange({ start: spec.start, end: from - 1 }, state);
  if (!above || counted.top !== top || counted.bottom !== readTop - 1) {
    throw new Error(`tmux counted rows ${counted.top}..${counted.bottom}, not ${top}..`);
  }
  return countOf(outputs[1]);
}

/**
 * Whether the lines read as shown from `at` through the last written one (`last`, -1 before
 * one is found) fill a reply of `want` lines and `keepBytes` bytes: a reader reading runs from
 * the bottom up reads no more once they do.
 */
export function tailFilled(
  shown: readonly string[],
  at: number,
  last: number,
  want: number,
  keepBytes: number,
): boolean {
  if (last < 0) return false;
  if (last - at + 1 >= want) return true;
  let bytes = 0;
  for (let j = at; j <= last && bytes <= keepBytes; j++) bytes += utf8Length(shown[j]) + 1;
  return bytes > keepBytes;
}

/**
 * A chain of captures held whole up to {@link TAIL_ANSWER_BYTES} (rows of a wide pane may print
 * 21 bytes a cell), else read again streamed by a tmux process of its own into the part
 * `streamed` makes (it may change `parts` for that second read first).
 */
async function boundedElseStreamed(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  parts: ChainPart[],
  options: RunOptions,
  streamed: () => StreamedPart,
): Promise<ChainCapture> {
  try {
    return await captureChain(runner, address, paneId, parts, {
      ...options,
      answerBound: TAIL_ANSWER_BYTES,
    });
  } catch (error) {
    if (!(error instanceof AnswerPastBound)) throw error;
    const part = streamed();
    return await captureChain(runner, address, paneId, parts, options, part);
  }
}

/**
 * Where to start reading for the last `want` lines: history rows all count as lines, so `want`
 * of them above the screen (or above the range's end, inside history) are enough.
 */
function windowStart(spec: TailSpec, want: number): number {
  const from = spec.end !== undefined && spec.end < 0 ? spec.end - want + 1 : -want;
  const start = spec.start ?? 0;
  return start === "history" ? from : Math.max(start, from);
}

/** Whether the range starts above row `at` (given in the same numbers, before clamping). */
function startsAbove(spec: TailSpec, at: number): boolean {
  const start = spec.start ?? 0;
  return start === "history" || start < at;
}

/**
 * What a tail's rows may print to be read whole (over the control connection, or collected
 * from a tmux process); past it they are streamed through a {@link RowKeeper}. 10 000 rows of
 * 200 columns fit as text of a byte a cell; a wide pane of combining marks (21 bytes a cell)
 * had made a capture hold 126 MB at once for a reply of 42 KB.
 */
export const TAIL_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * Which of the last rows of a read a reply of `keepBytes` can need, rows coming one at a time:
 * a row is let go once the written rows after it hold more than `keepBytes` (as lines, a
 * newline each), since a reply of at most that many bytes as JSON (which is never shorter)
 * keeps none of it. Blank screen rows at the end, which a reply drops as padding, count only
 * once a written row follows them. What is held stays within `keepBytes` and a row.
 */
export class TailBudget {
  readonly #keepBytes: number;
  /** Bytes of each row held, oldest first, from {@link #first}. */
  #bytes: number[] = [];
  #first = 0;
  /** Index in #bytes after the last written row. */
  #written = 0;
  /** Bytes of the rows held up to the last written one. */
  #held = 0;

  constructor(keepBytes: number) {
    this.#keepBytes = keepBytes;
  }

  /** A row came (its bytes as a line; whether it counts as written): the oldest rows to let go. */
  add(bytes: number, written: boolean): { lines: number; bytes: number } {
    this.#bytes.push(bytes);
    if (written) {
      for (let i = this.#written; i < this.#bytes.length; i++) this.#held += this.#bytes[i];
      this.#written = this.#bytes.length;
    }
    const gone = { lines: 0, bytes: 0 };
    while (this.#held - this.#bytes[this.#first] > this.#keepBytes) {
      const b = this.#bytes[this.#first++];
      this.#held -= b;
      gone.lines++;
      gone.bytes += b;
    }
    if (this.#first > 1024 && this.#first * 2 > this.#bytes.length) {
      this.#bytes = this.#bytes.slice(this.#first);
      this.#written -= this.#first;
      this.#first = 0;
    }
    return gone;
  }
}

/**
 * What a joined tail's window (its lines and its rows) may print to be read whole; past it the
 * window is made smaller and the rows above it are counted as they stream.
 */
export const JOINED_ANSWER_BYTES = 2 * TAIL_ANSWER_BYTES;

/** UTF-8 bytes of `lines` as text, a newline after each. */
function textBytes(lines: readonly string[]): number {
  return lines.reduce((n, line) => n + utf8Length(line) + 1, 0);
}

/**
 * A window a quarter the size of one that printed too much: its history rows (above the range's
 * end, or above the screen) cut to a quarter. Throws when it holds none to cut, the rows at
 * the end of the range alone printing more than a read holds whole.
 */
function smallerWindow(spec: TailSpec, from: number, paneId: string): number {
  const end = spec.end !== undefined && spec.end < 0 ? spec.end : -1;
  const history = end - from + 1;
  if (history <= 0) {
    throw new TmuxError(
      "failed",
      `The last rows of ${paneId} print more than ${JOINED_ANSWER_BYTES} bytes as joined ` +
        "lines (a wide pane full of combining characters); capture them without joinWrapped, " +
        "which reads them as they stream.",
    );
  }
  return end - Math.floor(history / 4) + 1;
}

/** Joined lines of a read: trimmed, blank ones below the last written one left out. */
function joinedLines(
  rows: readonly string[],
  joined: readonly string[],
  top: number,
  bottom: number,
): { lines: string[]; starts: number[] | null } {
  const starts = alignJoined(rows, joined);
  const lines = joined.map(trimRow);
  let keep = lines.length;
  if (starts) {
    while (keep > 0 && top + starts[keep - 1] >= 0 && isBlankRow(lines[keep - 1])) keep--;
    return { lines: lines.slice(0, keep), starts };
  }
  // The rows could not be lined up with the joined lines (never seen): trim trailing blank
  // lines only when the range reaches the screen, and claim no line numbers.
  while (bottom >= 0 && keep > 0 && isBlankRow(lines[keep - 1])) keep--;
  return { lines: lines.slice(0, keep), starts: null };
}

/** A joined window's rows, for reading its lines again as shown ({@link shownJoined}). */
interface JoinedWindow {
  /** The window's rows as printed, untrimmed (`-N`). */
  readonly rows: readonly string[];
  /** Index in `rows` at which each joined line of the window starts; null when unknown. */
  readonly starts: readonly number[] | null;
  /** Row number of `rows[0]`. */
  readonly top: number;
  /** Index in `starts` of the line `lines[0]` is. */
  readonly first: number;
}

/**
 * The last joined lines of a range: the window is read as printed (a byte a cell, see
 * {@link SHOWN_CELLS}) and only the lines a reply can keep read again as a person sees them, or
 * with their escapes ({@link shownJoined}).
 */
async function joinedTail(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  spec: TailSpec,
  want: number,
  keepBytes: number,
  options: RunOptions,
): Promise<LineTail> {
  const printed = { ...spec, escapes: false };
  const tail = await joinedWindow(runner, address, paneId, printed, want, keepBytes, options, true);
  if (tail.window.starts === null) {
    // Lines not lined up with rows (never seen): the window read as shown whole, as it comes.
    return await joinedWindow(runner, address, paneId, spec, want, keepBytes, options, false);
  }
  const as: RowsAs = spec.escapes ? "escapes" : "views";
  return await shownJoined(runner, address, paneId, tail, want, keepBytes, options, as);
}

/**
 * The lines of a joined tail read as printed, as a person sees them (or `as` `escapes`): from
 * the last up, in runs of rows of at most {@link SHOWN_CELLS} cells, each line its rows as shown
 * joined, a run more only while the lines read (through the last written one) are fewer than
 * `want` and hold no more than `keepBytes`. Lines not read again are counted as printed.
 */
async function shownJoined(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  tail: LineTail & { window: JoinedWindow },
  want: number,
  keepBytes: number,
  options: RunOptions,
  as: RowsAs,
): Promise<LineTail> {
  const { lines, window, state } = tail;
  const starts = window.starts as readonly number[];
  const startOf = (j: number) => starts[j + window.first];
  const endOf = (j: number) =>
    (j + window.first + 1 < starts.length ? starts[j + window.first + 1] : window.rows.length) -
    1;
  const run = shownRunRows(state.width);
  const shown: string[] = new Array(lines.length);
  const printed: string[] = new Array(lines.length);
  // Lines from `at` on are read; the last written among them (history, or shown non-blank).
  let at = lines.length;
  let last = -1;
  const enough = () => tailFilled(shown, at, last, want, keepBytes);
  const how: ShownReads = { spawn: false };
  while (at > 0 && !enough()) {
    let low = at - 1;
    while (low > 0 && at - low < want && endOf(at - 1) - startOf(low - 1) + 1 <= run) low--;
    const got = await shownRows(
      runner,
      address,
      paneId,
      state,
      window.top + startOf(low),
      window.top + endOf(at - 1),
      options,
      as,
      how,
    );
    const read: string[] = [];
    for (let j = low; j < at; j++) {
      const from = startOf(j) - startOf(low);
      const to = endOf(j) - startOf(low) + 1;
      read.push(trimRow(got.shown.slice(from, to).join("")));
      printed[j] = trimRow(got.printed.slice(from, to).join(""));
    }
    const below = shown.slice(at, lines.length);
    shown.splice(low, lines.length - low, ...joinRuns(read, below, as));
    if (last < 0) {
      for (let j = at - 1; j >= low && last < 0; j--) {
        if (window.top + startOf(j) < 0 || !isBlankRow(shown[j])) last = j;
      }
    }
    at = low;
  }
  let skippedBytes = tail.skippedBytes;
  for (let j = 0; j < at; j++) skippedBytes += utf8Length(lines[j]) + 1;
  return {
    state,
    top: tail.top,
    bottom: tail.bottom,
    lines: shown.slice(at, last + 1),
    printed: (as === "escapes" ? shown.map(asPrinted) : printed).slice(at, last + 1),
    skippedLines: tail.skippedLines + at,
    skippedBytes,
    rowOf: tail.rowOf,
  };
}

/**
 * The last joined lines of a range, the window they come from read with `-J` and `-N`, grown
 * until it holds enough (see {@link captureTail}); `printed`: read as printed (no `-e`), for
 * {@link shownJoined} to read the lines kept again as shown.
 */
async function joinedWindow(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  spec: TailSpec,
  want: number,
  keepBytes: number,
  options: RunOptions,
  printed: boolean,
): Promise<LineTail & { window: JoinedWindow }> {
  const flags = spec.escapes ? ["-e"] : [];
  let from = windowStart(spec, want);
  // Rows above the window, as the last read found them: unknown before the first read.
  let aboveRows: number | null = null;
  // Once a read printed more than JOINED_ANSWER_BYTES: the rows above are counted as they
  // stream, and windows start below the highest start found too large (tooHigh), between it
  // and the last window that held too little (fitted).
  let heavy = false;
  let tooHigh: number | null = null;
  let fitted: number | null = null;
  while (true) {
    const window: RowSpan = { start: from, end: spec.end };
    const parts: ChainPart[] = [
      { kind: "rows", span: window, flags: [...flags, "-J"], printed },
      { kind: "rows", span: window, flags: [...flags, "-N"], printed },
    ];
    // The rows above the window are counted only once a read showed the window holds enough:
    // in the same invocation as the window, so the count and the lines are of one instant.
    const counter = new LineCounter();
    const counting = aboveRows !== null && startsAbove(spec, from);
    if (counting) {
      // Counted, not kept: read as printed (the lines are the same as shown, and tmux spends
      // five times as long on a capture with the attributes).
      parts.push({
        kind: "rows",
        span: { start: spec.start, end: from - 1 },
        flags: [...flags, "-J"],
        printed: true,
      });
      // tmux ends a capture with a newline even after a wrapped row: the row above the window
      // and the window's first, joined, print one line if that row was wrapped, two if not.
      parts.push({
        kind: "rows",
        span: { start: from - 1, end: from },
        flags: ["-J"],
        printed: true,
      });
    }
    let capture;
    try {
      capture = await captureChain(
        runner,
        address,
        paneId,
        parts,
        { ...options, answerBound: JOINED_ANSWER_BYTES },
        counting
          ? {
            part: 2,
            bulk: heavy || (aboveRows ?? 0) > STREAM_ROWS,
            consume: (b) => counter.push(b),
          }
          : undefined,
      );
    } catch (error) {
      if (!(error instanceof AnswerPastBound)) throw error;
      if (counting && !heavy) {
        // The rows counted above may be what printed too much: count them as they stream.
        heavy = true;
        continue;
      }
      heavy = true;
      tooHigh = from;
      from = fitted !== null
        ? Math.ceil((tooHigh + fitted) / 2)
        : smallerWindow(spec, from, paneId);
      aboveRows = null;
      continue;
    }
    const { state, outputs } = capture;
    const { top, bottom } = captureRange(spec, state);
    const read = captureRange(window, state);
    const rows = splitLines(outputs[1]);
    checkRows(paneId, rows.length, read.top, read.bottom);
    const joined = splitLines(outputs[0]);
    const { lines, starts } = joinedLines(rows, joined, read.top, read.bottom);
    const rowOf = (offset: number) => starts ? (i: number) => read.top + starts[i + offset] : null;
    if (read.top <= top) {
      return {
        state,
        top,
        bottom,
        lines,
        skippedLines: 0,
        skippedBytes: 0,
        rowOf: rowOf(0),
        window: { rows, starts, top: read.top, first: 0 },
      };
    }
    // The window's first line may continue a line that starts above it: only the lines after
    // it surely start inside. They are enough once they are the lines asked for, or more than
    // a reply holds.
    if (lines.length - 1 < want && textBytes(lines.slice(1)) <= keepBytes) {
      const further = read.top - 3 * (read.bottom - read.top + 1);
      let next = spec.start === "history" ? further : Math.max(spec.start ?? 0, further);
      // Not as high as a window found too large: halfway there, until no row is between (the
      // rows above then print more than a read holds, so no reply reaches them).
      if (tooHigh !== null) next = Math.max(next, Math.ceil((tooHigh + from) / 2));
      if (next < from) {
        fitted = from;
        from = next;
        aboveRows = null;
        continue;
      }
    }
    if (!counting) {
      aboveRows = read.top - top;
      continue;
    }
    const counted = captureRange({ start: spec.start, end: from - 1 }, state);
    if (counted.top !== top || counted.bottom !== read.top - 1) {
      throw new Error(`tmux joined rows ${counted.top}..${counted.bottom}, not ${top}..`);
    }
    if (counter.open) throw new Error(`tmux ended a capture of ${paneId} without a newline`);
    if (splitLines(outputs[3]).length !== 1) {
      // The row above the window ended a line: the window's first line is a whole one.
      return {
        state,
        top,
        bottom,
        lines,
        skippedLines: counter.lines,
        skippedBytes: counter.bytes,
        rowOf: rowOf(-counter.lines),
        window: { rows, starts, top: read.top, first: 0 },
      };
    }
    // It was wrapped: the window's first line is the rest of the last line above, which was
    // counted as if it ended there.
    const head = trimRow(joined[0]);
    const merged = head === ""
      ? counter.lastBytes - counter.lastSpaces
      : counter.lastBytes + utf8Length(head);
    const skippedLines = counter.lines;
    return {
      state,
      top,
      bottom,
      lines: lines.slice(1),
      skippedLines,
      skippedBytes: counter.bytes - (counter.lastBytes - counter.lastSpaces) + merged,
      rowOf: rowOf(1 - skippedLines),
      window: { rows, starts, top: read.top, first: 1 },
    };
  }
}
