/**
 * Reading what a pane shows: its state, and rows of its screen and history, as text.
 *
 * A capture is ONE tmux invocation: `display-message` reads the pane's state (history size,
 * height, cursor, alternate screen...) and the `capture-pane` calls that follow run in the same
 * command queue, so the row numbers computed from that state are exactly the rows tmux printed.
 * Several captures in one invocation are told apart by random markers printed between them.
 *
 * A chain may also measure rows inside tmux without printing them (see {@link ChainPart}), or
 * hand a part over as tmux writes it: capture_tail.ts, since.ts and capture_many.ts read only
 * the rows their answer needs that way.
 *
 * Rows are numbered as tmux numbers them: 0 is the top of the visible screen, negative numbers
 * are history (-1 the most recent history line). "Absolute" positions count from the top of the
 * history (`historySize + row`); they survive scrolling and height changes, but not trimming
 * (tmux drops a tenth of `history-limit` at once when history is full), `clear-history`, or a
 * width change (tmux reflows wrapped lines). since.ts works with exactly these facts.
 *
 * @module
 */

import { type ChainEvent, ChainReader, joinBytes } from "./chain.ts";
import { execFast, execSpawned } from "./control.ts";
import { TRANSIENT_BUFFER_PREFIX } from "./left_behind.ts";
import { decodeBytes, flag, int, newGuard, parseRecords, recordFormat } from "./format.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import { judgeResult, TmuxError } from "./tmux_error.ts";
import { PANE_COLOURS_FORMAT, type PaneColours, paneColours, ShownCells } from "./shown_cells.ts";
import type { ServerAddress } from "./server_address.ts";

/** A pane's state at the instant of a capture. */
export interface PaneState {
  readonly paneId: string;
  /** The pane's process; a respawn gives a new one. */
  readonly panePid: number;
  /** The tmux server's pid; a restarted server reuses pane ids for other panes. */
  readonly serverPid: number;
  /**
   * When the tmux server started (`#{start_time}`, seconds): one restarted in a pid namespace
   * of its own (a container) has the same pid again, and panes of the same ids and pids.
   */
  readonly serverStart: number;
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
  /** The pane's own default colours, for its rows as a person sees them (shown_cells.ts). */
  readonly colours: PaneColours;
}

/**
 * A pane's screen rows, as capture-pane reads them: `pane_height`, except where the layout left
 * a pane no row (a border line above a one-row cell, `pane-border-status`): tmux then says height
 * 0 and keeps a screen of one row, which capture-pane prints. Empty, as `pane_height` is, where
 * there is no pane (one that closed while a command line was read).
 */
export const SCREEN_ROWS = "#{?pane_height,#{pane_height},#{?pane_id,1,}}";

const STATE = {
  paneId: "#{pane_id}",
  panePid: "#{pane_pid}",
  serverPid: "#{pid}",
  serverStart: "#{start_time}",
  width: "#{pane_width}",
  height: SCREEN_ROWS,
  historySize: "#{history_size}",
  historyLimit: "#{history_limit}",
  cursorX: "#{cursor_x}",
  cursorY: "#{cursor_y}",
  alternateScreen: "#{alternate_on}",
  inMode: "#{pane_in_mode}",
  mode: "#{pane_mode}",
  scrollPosition: "#{scroll_position}",
  dead: "#{pane_dead}",
  colours: PANE_COLOURS_FORMAT,
} as const;

function parseState(values: string[]): PaneState {
  if (values.length !== Object.keys(STATE).length) {
    throw new Error(`tmux pane state has ${values.length} fields`);
  }
  const r = Object.fromEntries(Object.keys(STATE).map((k, i) => [k, values[i]])) as {
    [K in keyof typeof STATE]: string;
  };
  return {
    paneId: r.paneId,
    panePid: int(r.panePid),
    serverPid: int(r.serverPid),
    serverStart: int(r.serverStart),
    width: int(r.width),
    height: int(r.height),
    historySize: int(r.historySize),
    historyLimit: int(r.historyLimit),
    cursorX: int(r.cursorX),
    cursorY: int(r.cursorY),
    alternateScreen: flag(r.alternateScreen),
    inMode: int(r.inMode) > 0,
    mode: r.mode,
    scrollPosition: r.scrollPosition === "" ? null : int(r.scrollPosition),
    dead: flag(r.dead),
    colours: paneColours(r.colours),
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
  /** Also give the rows (and the saved ones) as printed ({@link RowCapture.printed}). */
  readonly views?: boolean;
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
  /** With `views`: `rows` and `saved` as printed (see ShownCells.views), row for row. */
  readonly printed?: { readonly rows: string[]; readonly saved: string[] };
}

/** tmux parses -S/-E between INT_MIN and SHRT_MAX and silently ignores anything else. */
const MIN_ROW_ARG = -2147483647;
const MAX_ROW_ARG = 32767;

/** A row number as tmux will take it for -S/-E (see {@link clampRow}). */
export function rowArg(n: number): number {
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

/** Splits tmux output into lines; a final newline ends the last line rather than adding one. */
export function splitLines(bytes: Uint8Array): string[] {
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
  const flags = spec.escapes ? ["-e"] : [];
  const views = spec.views && !spec.escapes;
  const parts: ChainPart[] = [
    { kind: "rows", span: spec, flags: [...flags, ...(spec.untrimmed ? ["-N"] : [])], views },
  ];
  if (spec.joined) parts.push({ kind: "rows", span: spec, flags: [...flags, "-J"] });
  if (spec.saved) parts.push({ kind: "saved", views });
  const { state, outputs, printed } = await captureChain(runner, address, paneId, parts, options);
  const { top, bottom } = captureRange(spec, state);
  const rows = splitLines(outputs[0]);
  checkRows(paneId, rows.length, top, bottom);
  const joined = spec.joined ? splitLines(outputs[1]) : null;
  const saved = spec.saved && state.alternateScreen ? splitLines(outputs[parts.length - 1]) : [];
  if (!views) return { state, top, bottom, rows, joined, saved };
  const was = {
    rows: splitLines(printed[0] as Uint8Array),
    saved: spec.saved && state.alternateScreen
      ? splitLines(printed[parts.length - 1] as Uint8Array)
      : [],
  };
  return { state, top, bottom, rows, joined, saved, printed: was };
}

/** Throws unless tmux printed exactly the rows from `top` to `bottom`. */
export function checkRows(paneId: string, count: number, top: number, bottom: number): void {
  if (count !== bottom - top + 1) {
    throw new Error(`tmux printed ${count} rows for rows ${top}..${bottom} of ${paneId}`);
  }
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

/**
 * A row read with `-e` as tmux prints it without: escape sequences gone, and the shifts (SO,
 * SI) that mark text in the line-drawing set (a cell holds no control character of its own).
 */
export function asPrinted(row: string): string {
  // deno-lint-ignore no-control-regex
  return stripEscapes(row).replace(/[\x0e\x0f]/g, "");
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
 *
 * A row may print nothing and still belong to the line before it: tmux 3.3a leaves a row of
 * padding after each wide character of a pane one column wide (a row a program clears is a
 * line of its own: clearing it ends the wrap). Empty lines are placed among such rows by
 * {@link placeEmpties}.
 */
export function alignJoined(rows: readonly string[], joined: readonly string[]): number[] | null {
  const starts: number[] = [];
  const printsNothing = (k: number) => rows[k] === "";
  let i = 0;
  let pending = 0;
  for (const line of joined) {
    if (i > 0 && line === "") {
      pending++;
      continue;
    }
    if (i > 0) {
      const placed = placeEmpties(rows.length, i, printsNothing, pending, false);
      if (!placed) return null;
      starts.push(...placed.rows);
      [i, pending] = [placed.next, 0];
    }
    if (i >= rows.length) return null;
    starts.push(i);
    let acc = rows[i++];
    while (acc !== line && acc.length < line.length && i < rows.length) acc += rows[i++];
    if (acc !== line) return null;
  }
  const placed = placeEmpties(rows.length, i, printsNothing, pending, true);
  return placed ? [...starts, ...placed.rows] : null;
}

/**
 * Where `pending` empty joined lines start, the rows from `at` on that print nothing being
 * theirs and the line's before them (rows that print nothing right after a line spelled whole
 * are its padding, or empty lines of their own, which capture-pane -J prints between it and
 * the next line): the empty lines take the last such rows, the line before the others. Returns their rows and the row the next line starts at (the first that prints
 * something), or null when fewer rows than lines print nothing, or, `last`, when a row after
 * them prints something.
 */
export function placeEmpties(
  rowCount: number,
  at: number,
  printsNothing: (row: number) => boolean,
  pending: number,
  last: boolean,
): { rows: number[]; next: number } | null {
  let end = at;
  while (end < rowCount && printsNothing(end)) end++;
  if (end - at < pending || (last && end !== rowCount)) return null;
  return { rows: Array.from({ length: pending }, (_, k) => end - pending + k), next: end };
}
/**
 * UTF-8 length of a string as TextEncoder would encode it, counted without building the
 * bytes (a lone surrogate becomes U+FFFD, 3 bytes).
 */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2;
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Chains of captures

/** Rows in tmux's numbers, as `-S`/`-E` take them; tmux clamps them into the pane. */
export interface RowSpan {
  /** First row; "history" for the top of history; default 0 (top of the visible screen). */
  readonly start?: number | "history";
  /** Last row; default the bottom of the visible screen. */
  readonly end?: number;
}

/** One step of a capture chain ({@link captureChain}). */
export type ChainPart =
  /**
   * Rows as `capture-pane -p` prints them with `flags` (-N, -J, -e); without `-e`, as a
   * person sees them: read with `-e`, hidden cells made blanks (see shown_cells.ts).
   */
  | {
    readonly kind: "rows";
    readonly span: RowSpan;
    readonly flags?: readonly string[];
    /**
     * Read as printed (no `-e`, nothing made blank): for rows only counted, whose lines are
     * the same either way, at a fifth of what tmux spends on `-e`.
     */
    readonly printed?: boolean;
    /**
     * Read as shown, and also given as printed ({@link ChainCapture.printed}): the same
     * capture's text twice, row for row, for a caller that counts what it leaves out as printed.
     */
    readonly views?: boolean;
  }
  /**
   * How many bytes the same capture would print, measured inside tmux and never sent: the
   * rows go into a paste buffer with a random name, its size is listed and it is deleted,
   * all in the same command queue, so no one else ever sees it.
   */
  | { readonly kind: "count"; readonly span: RowSpan; readonly flags?: readonly string[] }
  /** The main screen tmux saved when a program took the alternate one (empty when none), as a
   * person will see it again. */
  | { readonly kind: "saved"; readonly views?: boolean };

function spanArgs(span: RowSpan): string[] {
  const args: string[] = [];
  if (span.start !== undefined) {
    args.push("-S", span.start === "history" ? "-" : String(rowArg(span.start)));
  }
  if (span.end !== undefined) args.push("-E", String(rowArg(span.end)));
  return args;
}

/**
 * Counting buffers' names: the rest is random per call (see {@link ChainPart}). Transient ones
 * (left_behind.ts): never counted as tmux-mcp's own, and deleted as left behind should a
 * person's hook hold the line past the capture while the process is killed.
 */
const COUNT_BUFFER_PREFIX = TRANSIENT_BUFFER_PREFIX;

/**
 * Whether a part's rows are read as a person sees them ({@link ShownCells}): every part that
 * prints rows, unless it asks for the escapes itself. Such a part is captured with `-e`.
 */
function readShown(part: ChainPart): boolean {
  if (part.kind === "saved") return true;
  return part.kind === "rows" && !part.printed && !part.flags?.includes("-e");
}

/** Whether tmux trims the rows of a part read as shown (no `-N`, no `-J`). */
function trimmed(part: ChainPart): boolean {
  return part.kind === "saved" || !(part.flags?.includes("-N") || part.flags?.includes("-J"));
}

function chainArgs(paneId: string, guard: string, parts: readonly ChainPart[]): string[] {
  // The guard is a control byte and hex digits: the hex makes the buffer's name unguessable,
  // and holds nothing tmux's format parser could read.
  const buffer = COUNT_BUFFER_PREFIX + guard.slice(1);
  const args = ["display-message", "-p", "-t", paneId, recordFormat(guard, Object.values(STATE))];
  parts.forEach((part, i) => {
    args.push(";", "capture-pane", "-t", paneId);
    if (readShown(part)) args.push("-e");
    if (part.kind === "saved") args.push("-p", "-a", "-q");
    else if (part.kind === "rows") args.push("-p", ...(part.flags ?? []), ...spanArgs(part.span));
    else {
      args.push("-b", buffer, ...(part.flags ?? []), ...spanArgs(part.span));
      args.push(
        ";",
        "list-buffers",
        "-F",
        "#{buffer_size}",
        "-f",
        `#{==:#{buffer_name},${buffer}}`,
      );
      args.push(";", "delete-buffer", "-b", buffer);
    }
    args.push(";", "display-message", "-p", "-t", paneId, recordFormat(guard, [String(i)]));
  });
  return args;
}

/** A part whose output goes to a reader instead of being collected. */
export interface StreamedPart {
  /** Index of the part in the chain. */
  readonly part: number;
  /**
   * Read by a tmux process of its own, handed over as tmux writes it, so it is never held
   * whole (the control connection delivers an answer only once it is complete and verified).
   */
  readonly bulk?: boolean;
  /** Told the pane's state before any of the part's bytes. */
  begin?(state: PaneState): void;
  /** The part's bytes, in order, split anywhere; valid only during the call. */
  consume(bytes: Uint8Array): void;
}

/** What {@link captureChain} read. */
export interface ChainCapture {
  readonly state: PaneState;
  /** Each part's output (empty for the streamed one). */
  readonly outputs: Uint8Array[];
  /** For a part read with `views`, its output as printed (see ShownCells.views); else null. */
  readonly printed: (Uint8Array | null)[];
  /** The bytes tmux answered (0 for a streamed read). */
  readonly answerBytes: number;
}

/**
 * Runs a chain of captures of one pane in ONE tmux invocation (the pane's state first, then
 * each part followed by a marker), over the control connection when it can carry it. The
 * `streamed` part goes to its reader instead of being collected; a `bulk` one is read from a
 * tmux process of its own as tmux writes it, so even the whole history is never held at
 * once. `spawn`: by a tmux process of its own, never over the control connection (tmux 3.3a
 * keeps what it answered a control client in memory it does not use again: ~8 MB more at its
 * peak for every 8 MB of rows as shown read that way). Throws the runner's `TmuxError` (kind
 * `no-target` when the pane does not exist).
 */
export async function captureChain(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  parts: readonly ChainPart[],
  options: RunOptions = {},
  streamed?: StreamedPart,
  spawn = false,
): Promise<ChainCapture> {
  const guard = newGuard();
  const args = chainArgs(paneId, guard, parts);
  const reader = new ChainReader(guard);
  let state: PaneState | null = null;
  let other: string | null = null;
  let part = 0;
  const chunks: Uint8Array[][] = parts.map(() => []);
  // The streamed part's bytes, as a person sees them, as they come (nothing is held back at
  // its end: a trimmed row's last spaces are dropped, an untrimmed row's given at once).
  const streamedPart = streamed && parts[streamed.part];
  let cells: ShownCells | null = null;
  const take = (events: ChainEvent[]) => {
    for (const event of events) {
      if (other !== null) return;
      if (event.record) {
        if (state === null) {
          state = parseState(event.record);
          // A missing pane prints empty values before its capture fails: the failure says so.
          if (state.paneId !== paneId) other = state.paneId;
          else if (streamed) streamed.begin?.(state);
          if (streamedPart && readShown(streamedPart)) {
            cells = new ShownCells(trimmed(streamedPart), state.colours);
          }
        } else if (event.record.length === 1 && event.record[0] === String(part)) part++;
        else throw new Error("tmux printed its captures out of order");
      } else if (state === null || part >= parts.length) {
        throw new Error("tmux printed text outside any capture");
      } else if (streamed?.part === part) {
        streamed.consume(cells ? cells.push(event.data) : event.data);
      } else chunks[part].push(event.data.slice());
    }
  };
  let result: { code: number; stdout: Uint8Array; stderr: string };
  if (streamed?.bulk) {
    const { code, stderr } = await runner.stream(
      address,
      args,
      (chunk) => take(reader.push(chunk)),
      options,
    );
    result = { code, stderr, stdout: new Uint8Array(0) };
  } else {
    result = spawn
      ? await execSpawned(runner, address, args, options)
      : await execFast(runner, address, args, options);
    take(reader.push(result.stdout));
  }
  take(reader.finish());
  judgeResult(result);
  if (other !== null) {
    // tmux reads `%00` as %0; the id asked for is no pane's as tmux writes ids, so none has it.
    throw new TmuxError("no-target", `can't find pane: ${paneId} (tmux read it as ${other})`);
  }
  if (state === null) throw new Error("tmux printed no pane state");
  if (part !== parts.length) throw new Error("tmux output ended inside a capture");
  const { colours } = state as PaneState;
  const printed: (Uint8Array | null)[] = parts.map(() => null);
  const outputs = chunks.map((c, i) => {
    const part = parts[i];
    if (!readShown(part)) return joinBytes(c);
    if (part.kind === "count" || !part.views) {
      return ShownCells.of(joinBytes(c), trimmed(part), colours);
    }
    const both = ShownCells.views(joinBytes(c), trimmed(part), colours);
    printed[i] = both.printed;
    return both.shown;
  });
  return { state, outputs, printed, answerBytes: result.stdout.length };
}

/** The byte count a `count` part printed. */
export function countOf(output: Uint8Array): number {
  const text = new TextDecoder().decode(output).trim();
  if (!/^\d+$/.test(text)) throw new Error(`tmux printed no byte count: ${JSON.stringify(text)}`);
  return Number(text);
}
