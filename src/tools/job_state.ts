/**
 * Reading a job's state (running, exited, lost) from its pane: where its start is now, its
 * markers there, whether an end marker counts yet (the shell holds its terminal again), the end
 * of a job read as ended kept as first read, and why a job is lost.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { byteLength } from "../mcp/bounds.ts";
import { indexOfBytes, LineSplitter } from "../tmux/chain.ts";
import { execFast } from "../tmux/control.ts";
import { decodeBytes, newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import {
  atPromptStream,
  atPromptThen,
  lineEditorReads,
  paneAtPrompt,
  shellName,
} from "../tmux/prompt.ts";
import { AnswerPastBound, judgeResult } from "../tmux/tmux_error.ts";
import {
  PANE_COLOURS_FORMAT,
  paneColours,
  ShownCells,
  shownStart,
  TERMINAL_COLOURS,
} from "../tmux/shown_cells.ts";
import {
  DIED_OUTPUT_NOTE,
  endedBy,
  learnExitStatus,
  type PaneProbe,
  probePane,
} from "./pane_probe.ts";
import { jobIdOf, type JobRef } from "./job_id.ts";
import {
  deadRowRest,
  endPattern,
  endRow,
  findMarkers,
  holdsEnd,
  type Marked,
} from "./job_markers.ts";
import { MarkerScan } from "./job_scan.ts";
import { claimHolds, claimValue, endClaim, parseMark, readMark } from "./run_mark.ts";

/** A job's state now. */
export interface JobView {
  readonly state: "running" | "exited" | "lost";
  readonly exitStatus: number | null;
  /** Why it is lost, else null. */
  readonly lostReason: string | null;
  /** What it printed since it started (all of it; callers bound it). */
  readonly output: string;
  /** False when its start left the pane's history: earlier output is gone. */
  readonly complete: boolean;
  readonly durationMs: number;
  /** The pane as last seen. */
  readonly probe: PaneProbe;
  /**
   * Ended, with its start gone from the pane or a second begin marker in it: why (see
   * {@link Marked.startNote}).
   */
  readonly startNote?: string;
  /** UTF-8 bytes of output cut before `output` (see {@link Marked.cutBytes}). */
  readonly cutBytes?: number;
  /** Running, with an end marker in the pane that does not count yet ({@link Marked.held}). */
  readonly held?: boolean;
  /**
   * A program the command ran printed one of its markers: its output is not known to be whole.
   * `end`: a second end marker ({@link Marked.twoEnds}; the shell printed its own, so the
   * command is over); `begin`: only a second begin marker ({@link Marked.twoBegins}).
   * (`complete` of a lost job stays as for any other: a wait tells by it whether the job is
   * over.)
   */
  readonly forged?: "begin" | "end";
  /**
   * Running, not typed yet: until when the run_command that claimed the pane for it may type it
   * (ms since the epoch; see run_mark.ts).
   */
  readonly claimedUntil?: number;
}

/** Rows before the start a read includes, in case the screen scrolled meanwhile. */
const MARGIN_ROWS = 50;
/** A job whose begin marker has not appeared this long after it was typed never started. */
export const NEVER_STARTED_MS = 2_000;

/**
 * Where each job's start is now, as this process last saw it: tmux trims 10% of a full
 * history at once, moving every row up; a job read again starts from the corrected place.
 */
const positions = new Map<string, { abs: number; history: number }>();
const MAX_POSITIONS = 1_000;

function rememberPosition(key: string, abs: number, history: number): void {
  positions.delete(key);
  positions.set(key, { abs, history });
  if (positions.size > MAX_POSITIONS) positions.delete(positions.keys().next().value!);
}

/**
 * What a read of a job's rows may print to be held whole: past it (a wide pane of combining
 * marks prints 21 bytes a cell) the rows are read again as they stream, through a
 * {@link MarkerScan} that keeps only the output's last rows a reply can hold.
 */
export const JOB_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * The capture of a pane's rows from `from` (a capture-pane start: a line number or "-"), with
 * the attributes (`-e`), after a line of the pane's own colours read at the same instant, for
 * the rows as printed and as a person sees them ({@link views}).
 */
function captureArgs(paneId: string, from: string): string[] {
  return [
    ...["display-message", "-p", "-t", paneId, PANE_COLOURS_FORMAT, ";"],
    ...["capture-pane", "-p", "-e", "-J", "-t", paneId, "-S", from],
  ];
}

/**
 * The rows a {@link captureArgs} capture printed, as printed (where the markers are looked for)
 * and as a person sees them (what the output is made of: see ShownCells.views).
 */
function views(bytes: Uint8Array): { printed: string[]; shown: string[] } {
  const newline = bytes.indexOf(0x0a);
  const colours = paneColours(decodeBytes(bytes.subarray(0, newline === -1 ? 0 : newline)));
  const rows = newline === -1 ? new Uint8Array(0) : bytes.subarray(newline + 1);
  const { printed, shown } = ShownCells.views(rows, false, colours);
  const lines = decodeBytes(printed).split("\n");
  return { printed: lines, shown: shown === printed ? lines : decodeBytes(shown).split("\n") };
}

/**
 * Job `ref`'s markers in its pane's rows from `from` to the end (`start`: the row among them it
 * started at; `bottom`: the index of a dead pane's bottom row, whose line tmux drew goes, see
 * {@link withoutDeadLine}; null while the pane is alive).
 */
async function markersFrom(
  ctx: TmuxContext,
  ref: JobRef,
  from: string,
  start: number,
  bottom: number | null,
): Promise<Marked> {
  const guard = newGuard();
  const head = bottom === null ? [] : deadHeadArgs(ref.paneId, bottom, guard);
  const args = [...head, ...captureArgs(ref.paneId, from)];
  const dead = bottom !== null;
  try {
    const answer = await execFast(ctx.runner, ctx.address, args, {
      signal: ctx.signal,
      answerBound: JOB_ANSWER_BYTES,
    });
    const bytes = judgeResult(answer);
    if (!dead) {
      const { printed, shown } = views(bytes);
      return findMarkers(printed, ref.nonce, start, shown);
    }
    const { drawn, rest } = splitDeadHead(bytes, guard);
    const { printed, shown } = views(rest);
    const kept = withoutDeadLine(printed, drawn);
    return findMarkers(kept, ref.nonce, start, alongside(shown, kept, printed));
  } catch (error) {
    if (!(error instanceof AnswerPastBound)) throw error;
    const scan = (drawn: string | null) =>
      new MarkerScan(ref.nonce, start, ctx.config.maxResultBytes, dead, drawn);
    const rows = new RowFeed(scan, dead ? guard : null);
    const { code, stderr } = await ctx.runner.stream(
      ctx.address,
      args,
      (chunk) => rows.push(chunk),
      {
        signal: ctx.signal,
      },
    );
    judgeResult({ code, stderr, stdout: new Uint8Array(0) });
    return rows.finish();
  }
}

/**
 * The fields of what tmux drew on a dead pane: whether it is dead, when tmux drew its line
 * (`pane_dead_time` is empty until then: tmux 3.3a may learn of the exit late, and the
 * bottom row is output meanwhile), and the line's text, `remain-on-exit-format` expanded. A
 * format that runs a command (`#(...)`) is not expanded: that would run it again, at each
 * read of the pane, and what it prints need not be what it printed then. Nor is one that
 * expands another value in turn (`E:` or `T:`, as in `#{E:@x}`): that value may hold a
 * command the check cannot see, and may change at any time. The check reads text: a format
 * that only shows an `E:` or `T:` ("DONE: ...") is not expanded either, and the line is then
 * told from output as when tmux's text is not known (`deadRowRest` in job_markers.ts).
 */
export const DRAWN_FIELDS = [
  "#{pane_dead}",
  "#{pane_dead_time}",
  "#{?#{||:#{m:*##(*,#{remain-on-exit-format}},#{m:*[ET][:;]*,#{remain-on-exit-format}}},," +
  "#{E:remain-on-exit-format}}",
];

/**
 * The tmux commands that print, before a dead pane's capture, what tmux drew on it: the record
 * of {@link DRAWN_FIELDS}, then its bottom row (`bottom`) on its own, not joined to the row
 * above (see `deadRowRest` in job_markers.ts). In the same tmux call as the capture: one
 * moment for all of it.
 */
function deadHeadArgs(paneId: string, bottom: number, guard: string): string[] {
  const row = String(bottom);
  return [
    "display-message",
    "-p",
    "-t",
    paneId,
    recordFormat(guard, DRAWN_FIELDS),
    ";",
    "capture-pane",
    "-p",
    "-t",
    paneId,
    "-S",
    row,
    "-E",
    row,
    ";",
  ];
}

/**
 * The text tmux drew on a dead pane's bottom row, from what {@link deadHeadArgs} printed
 * (`fields`: the record, `bottom`: the row): null when it drew none, or it is not known. Known
 * when tmux has drawn its line and the row shows the format's text (its control characters,
 * which tmux draws as nothing, left out): then that row is tmux's, to the character. A format
 * whose line is not its text (a style, `#[fg=red]`; a run of `#`; cut to the pane's width) is
 * not known, and the fallback takes over (`deadRowRest` in job_markers.ts).
 */
export function deadDrawn(fields: readonly string[], bottom: string): string | null {
  const [dead, drawnAt, expanded] = fields;
  if (dead !== "1" || !drawnAt || expanded === undefined) return null;
  // deno-lint-ignore no-control-regex
  const text = expanded.replace(/[\u0000-\u001f\u007f]/g, "").trimEnd();
  const row = bottom.trimEnd();
  return text !== "" && row === text ? row : null;
}

/** The line that ends {@link deadHeadArgs}'s record. */
function recordEnd(guard: string): string {
  return `${guard}E`;
}

/**
 * A dead pane's capture, as read after {@link deadHeadArgs}: what tmux drew (see
 * {@link deadDrawn}) and the rows of the capture. An answer without the record (tmux printed
 * something else) gives no line drawn and no rows.
 */
function splitDeadHead(
  bytes: Uint8Array,
  guard: string,
): { drawn: string | null; rest: Uint8Array } {
  const end = new TextEncoder().encode(`${recordEnd(guard)}\n`);
  const at = indexOfBytes(bytes, end);
  if (at === -1) return { drawn: null, rest: new Uint8Array(0) };
  const rowAt = at + end.length;
  const rowEnd = bytes.indexOf(0x0a, rowAt);
  const bottom = decodeBytes(bytes.subarray(rowAt, rowEnd === -1 ? bytes.length : rowEnd));
  const fields = parseRecords(bytes.subarray(0, rowAt), guard)[0] ?? [];
  const rest = rowEnd === -1 ? new Uint8Array(0) : bytes.subarray(rowEnd + 1);
  return { drawn: deadDrawn(fields, bottom), rest };
}

/**
 * Bytes a capture printed, as rows (as `split("\n")` splits them) into a {@link MarkerScan},
 * made by `scan` once what tmux drew on a dead pane is known: with `guard`, the capture of a
 * dead pane, after what {@link deadHeadArgs} printed (read first, never as rows).
 */
class RowFeed {
  readonly #make: (drawn: string | null) => MarkerScan;
  #scan: MarkerScan | null = null;
  /** The lines of the dead pane's record so far; its bottom row is the line after them. */
  #head: Uint8Array[] = [];
  #recordRead = false;
  readonly #guard: string | null;
  readonly #lines = new LineSplitter();
  /**
   * The rows ({@link captureArgs}) as printed and as a person sees them ({@link views}), once
   * the line of the pane's colours before them was read.
   */
  readonly #printed = new ShownCells(false, TERMINAL_COLOURS, true);
  #shown: ShownCells | null = null;
  constructor(scan: (drawn: string | null) => MarkerScan, guard: string | null = null) {
    this.#make = scan;
    this.#guard = guard;
    if (guard === null) this.#scan = scan(null);
  }

  push(chunk: Uint8Array): void {
    this.#lines.push(chunk, (line) => this.#line(line));
  }

  #line(line: Uint8Array): void {
    if (this.#scan !== null) {
      if (this.#shown === null) {
        this.#shown = new ShownCells(false, paneColours(decodeBytes(line)));
        return;
      }
      const shown = decodeBytes(this.#shown.push(line));
      return this.#scan.row(decodeBytes(this.#printed.push(line)), shown);
    }
    if (this.#recordRead) {
      const bytes = new TextEncoder().encode(this.#head.map(decodeBytes).join("\n"));
      const fields = parseRecords(bytes, this.#guard!)[0] ?? [];
      this.#scan = this.#make(deadDrawn(fields, decodeBytes(line)));
      return;
    }
    this.#head.push(line.slice());
    this.#recordRead = decodeBytes(line).endsWith(recordEnd(this.#guard!));
  }

  finish(): Marked {
    let open = false;
    this.#lines.finish((line) => {
      open = true;
      this.#line(line);
    });
    // The answer ended in the record (tmux printed something else): no rows.
    if (this.#scan === null) return this.#make(null).finish();
    // After the last newline: the row the split of the whole answer ends with.
    if (!open) this.#scan.row("");
    return this.#scan.finish();
  }
}

/**
 * Whether the pane's shell is at its prompt (prompt.ts). A shell running a loop of builtins
 * holds its terminal too: the caller also requires the pane to stay quiet for a moment.
 */
function atPrompt(ctx: TmuxContext, paneId: string, probe: PaneProbe): Promise<boolean> {
  return paneAtPrompt(ctx.runner, ctx.address, paneId, probe, ctx.signal);
}

/** A probe's cursor position, to tell whether the pane printed between two looks. */
function cursorOf(p: PaneProbe): string {
  return `${p.historySize}:${p.cursorX}:${p.cursorY}`;
}

/** How long to look for a pane that stays quiet before judging the shell to be back. */
const SETTLE_MS = 300;

/** The pane now and what the job's markers in it tell. */
export interface MarkedRead {
  readonly probe: PaneProbe;
  readonly marked: Marked;
}

/** A watch of a job's output stream, as {@link hearEnds} takes what it heard. */
export interface HeardStream {
  /** The lines it heard and has not reported, once all tmux had read from the pane has come. */
  heardAll(signal?: AbortSignal): Promise<string[]>;
  /** Hears the lines it gives up unreported (a flood past its bound). */
  tap: ((lines: readonly string[]) => void) | null;
  /** Whether it has heard every `%output` of the pane since it opened. */
  readonly unbroken: boolean;
  /** Whether its feed was cut from outside since it opened (its tmux client detached). */
  readonly cut: boolean;
  /** Stops it. */
  close(): void;
}

/**
 * The jobs whose output stream this process has heard without a gap since before their line
 * was typed (run_command's watch, handed on to its follower's, span after span), by job key:
 * their shell's end is in the stream, so an end the pane shows that the stream never carried
 * was written there unheard (see {@link readMarked}).
 */
const heardThroughout = new Set<string>();
/**
 * The jobs of {@link heardThroughout} whose feed was cut since (a watch's tmux client detached
 * or lost: a program the command ran can detach it): an end the stream did not carry may have
 * come in the gap, so the stream cannot vouch for one the pane shows.
 */
const cutWhileHeard = new Set<string>();

/** Adds `key` to `set`, the oldest dropped past {@link MAX_STREAMED}. */
function noteBounded(set: Set<string>, key: string): void {
  set.add(key);
  if (set.size > MAX_STREAMED) set.delete(set.values().next().value!);
}

/**
 * The watches of each job's output stream open in this process (run_command's, its follower's,
 * a waiting get_command_result's), by job: a read that finds an end first takes in what each
 * of them heard up to that moment ({@link readMarked}), whichever call reads. A read of its own
 * (get_command_result without a wait, a resource's reader) is judged against the follower's
 * stream too: rows read the moment a program wrote over the shell's end, before the follower
 * heard the shell's, would be believed. Only where the stream is watched (control mode): a
 * polled pane has none, and its rows are all there is.
 */
const hearing = new Map<string, Set<HeardStream>>();

/** A watch counted by {@link hearEnds}, until it is let go. */
export interface Hearing {
  /**
   * Takes in the last of what it heard, then lets it go and closes it: for a watch another
   * takes over from.
   */
  handOver(): Promise<void>;
  /** Lets it go, what it holds unread dropped: its wait is over. */
  forget(): void;
}

/**
 * Makes what `watch` hears of job `ref`'s pane count for every read of the job in this process
 * (see {@link hearing}) until it is let go.
 */
export function hearEnds(
  ctx: TmuxContext,
  ref: JobRef,
  watch: HeardStream,
  options: { beforeTyping?: boolean } = {},
): Hearing {
  const key = `${ctx.socketLabel}#${jobIdOf(ref)}`;
  const watches = hearing.get(key) ?? new Set<HeardStream>();
  hearing.set(key, watches);
  watches.add(watch);
  if (options.beforeTyping && watch.unbroken) noteBounded(heardThroughout, key);
  watch.tap = (lines) => noteStreamed(ctx, ref, lines);
  const forget = () => {
    if (!watches.has(watch)) return;
    watch.tap = null;
    watches.delete(watch);
    // A gap in this one, or no watch left: the stream is no longer heard throughout (a gap in a
    // stream heard so far leaves it cut).
    if (watch.cut && heardThroughout.has(key)) noteBounded(cutWhileHeard, key);
    if (!watch.unbroken || watches.size === 0) heardThroughout.delete(key);
    if (watches.size === 0 && hearing.get(key) === watches) hearing.delete(key);
  };
  return {
    handOver: async () => {
      try {
        if (watches.has(watch)) noteStreamed(ctx, ref, await watch.heardAll());
      } finally {
        forget();
        watch.close();
      }
    },
    forget,
  };
}

/** A watch that polls: nothing to count (see {@link hearing}). */
export const NOT_HEARD: Hearing = { handOver: () => Promise.resolve(), forget: () => {} };

/** How many watches of job `jobId`'s stream count for its reads now ({@link hearing}): for tests. */
export function watchesHearing(jobId: string): number {
  let count = 0;
  for (const [key, watches] of hearing) if (key.endsWith(`#${jobId}`)) count += watches.size;
  return count;
}

/**
 * Takes in what every watch of job `ref` heard until now ({@link hearing}): their round trips
 * to tmux made at once.
 */
async function takeHeard(ctx: TmuxContext, ref: JobRef, key: string): Promise<void> {
  const heard = await Promise.all(
    [...hearing.get(key) ?? []].map((watch) => watch.heardAll(ctx.signal)),
  );
  for (const lines of heard) noteStreamed(ctx, ref, lines);
}

/**
 * Reads the pane from a little before the job's start (the whole history when the start is not
 * there) and finds the job's markers. An empty read when the pane is gone or was respawned.
 * An end that counts is judged against what every watch of the job's stream heard (see
 * {@link hearing}), taken in after the rows are read, so that it holds at least what the pane
 * printed before them.
 */
export async function readMarked(ctx: TmuxContext, ref: JobRef): Promise<MarkedRead> {
  const key = `${ctx.socketLabel}#${jobIdOf(ref)}`;
  const probe = await probePane(ctx, ref.paneId);
  const kept = finished.get(key);
  if (kept) return { probe, marked: kept };
  const found = await readMarkedNow(ctx, ref, key, probe);
  if (found.marked.status === null) return found;
  const ended = await endThatCounts(ctx, ref, found);
  if (ended === null) {
    return { probe, marked: { ...found.marked, status: null, endedMs: null, held: true } };
  }
  // A second end marker by then: no status (the job reader tells it lost).
  if (ended.status === null) return { probe, marked: ended };
  await takeHeard(ctx, ref, key);
  // Judged meanwhile by another read (which keeps what it found): the same for every read.
  const judged = finished.get(key);
  if (judged) return { probe, marked: judged };
  const seen = streamed.get(key);
  // Heard throughout, the stream holds the shell's end: none there, and the one shown is not it.
  // Cut since, it may have come in the gap: the one shown cannot be vouched for either.
  const watches = [...hearing.get(key) ?? []];
  const cut = cutWhileHeard.has(key) ||
    (heardThroughout.has(key) && watches.some((watch) => watch.cut));
  const whole = heardThroughout.has(key) && watches.every((watch) => watch.unbroken);
  const unheard = seen === undefined && (whole || cut);
  if (unheard || (seen !== undefined && (seen.size > 1 || !seen.has(ended.status)))) {
    // Kept as lost: the rows may never show the shell's end again.
    const lost = {
      ...ended,
      status: null,
      endedMs: null,
      twoEnds: true,
      streamedEnds: true,
      ...(unheard ? { unheardEnd: true, ...(cut ? { streamCut: true } : {}) } : {}),
    };
    keepFinished(key, lost);
    return { probe, marked: lost };
  }
  const notes = [
    ended.startGone ? startGoneNote(found.probe) : "",
    ended.twoBegins ? TWO_BEGINS_NOTE : "",
  ].filter((note) => note !== "");
  const marked = notes.length > 0 ? { ...ended, startNote: notes.join(" ") } : ended;
  keepFinished(key, marked);
  return { probe, marked };
}

/**
 * The statuses of the valid end markers each job's pane printed, as its output stream carried
 * them, for the jobs a wait of this process watched (run_command's, the follower's, a waiting
 * get_command_result's). The stream holds the shell's own `printf` even when a program the
 * command ran writes over that row before any read of it can count (a process it left running
 * that watches for the shell to take its terminal back, then writes at once), or hides the row
 * (a scroll region, `stty olcuc`). An end read from the rows whose status the stream did not
 * carry, or a stream that carried two statuses, is no exit status ({@link readMarked}).
 */
const streamed = new Map<string, Set<number>>();
const MAX_STREAMED = 100;

/**
 * What a wait's `lines` event tells of job `ref`'s end: whether a line holds its end marker's
 * text (a cue to read the pane), noted ({@link noteStreamed}) only when heard in the stream.
 * Lines read from the rows (a watch catching up after its feed was cut) are what the screen
 * shows, a row a program wrote over as written: never counted as carried.
 */
export function heardLines(
  ctx: TmuxContext,
  ref: JobRef,
  event: { readonly lines: readonly string[]; readonly fromRows?: boolean },
): boolean {
  if (!event.fromRows) return noteStreamed(ctx, ref, event.lines);
  return event.lines.some((line) => holdsEnd(line, ref.nonce));
}

/**
 * Notes the end markers of job `ref` among `lines` of its pane's output stream (see
 * {@link streamed}). Returns whether any line holds its end marker's text, valid or not: a cue
 * to read the pane.
 */
export function noteStreamed(ctx: TmuxContext, ref: JobRef, lines: readonly string[]): boolean {
  let holds = false;
  let pattern: RegExp | null = null;
  for (const line of lines) {
    if (!holdsEnd(line, ref.nonce)) continue;
    holds = true;
    pattern ??= endPattern(ref.nonce);
    const end = endRow(line, ref.nonce, pattern);
    if (!end) continue;
    const key = `${ctx.socketLabel}#${jobIdOf(ref)}`;
    const seen = streamed.get(key) ?? new Set<number>();
    seen.add(end.status);
    streamed.delete(key);
    streamed.set(key, seen);
    if (streamed.size > MAX_STREAMED) streamed.delete(streamed.keys().next().value!);
  }
  return holds;
}

/**
 * Why a job is lost whose end its output stream, heard throughout, never carried
 * ({@link Marked.unheardEnd}).
 */
const UNHEARD_END_REASON = "its pane shows an end marker its output never carried, though this " +
  "server heard all of it: a program the command ran wrote it there unheard (it can read the " +
  "screen, and so the check, and turn its pane's output off for this server's tmux client), so " +
  "the exit status cannot be told";

/** Why a job is lost whose end came while this server's feed of its stream was cut. */
const CUT_END_REASON = "its pane shows an end marker its output did not carry: this server's " +
  "feed of that output was cut while the job ran (its tmux client detached or lost, or tmux " +
  "dropped output it held for it over a second behind, which a program the command ran can " +
  "cause) and the end came in the gap, so the exit status cannot be told";

/** Why a job is lost whose end the output stream contradicted ({@link Marked.streamedEnds}). */
const STREAMED_ENDS_REASON = "its output carried an end marker of another exit status than " +
  "the one its pane shows, or of two: a program the command ran wrote one (it can read the " +
  "screen, and so the check), perhaps over the shell's own, so the exit status cannot be told";

/**
 * Why a job's output is not known to be whole when a second begin marker is in the pane
 * ({@link Marked.twoBegins}): a sentence after a reply's own.
 */
const TWO_BEGINS_NOTE = "Its begin marker is on more than one row: a program it ran printed " +
  "one, so its output is read from the first below its typed line and is not known to be whole.";

/** The same as a clause of a lost job's reason. */
const TWO_BEGINS_REASON = TWO_BEGINS_NOTE[0].toLowerCase() + TWO_BEGINS_NOTE.slice(1, -1);

/** Why a job with two valid end markers in its pane has no exit status ({@link Marked.twoEnds}). */
const TWO_ENDS_REASON = "two rows carry the command's end marker: a program the command ran " +
  "wrote one (it can read the screen, and so the check), so which one the shell printed, and " +
  "the exit status, cannot be told";

/**
 * The end a read found, once it counts: the pane's shell holds its terminal again, or the pane
 * is dead. Null while a program holds it: the check shows that the end marker has the shape
 * only the shell prints, but a program the command runs can read its own screen (every pane
 * has TMUX set, so `tmux capture-pane` works there), take the nonce and the check's terms from
 * the typed line and print a correct end marker, then run on. Or the shell is still running
 * what draws its next prompt (PROMPT_COMMAND, a `$(...)` in PS1, zsh's precmd): the caller
 * reads again. The pane is read again in the same tmux step as that test, so the read holds
 * every end the shell had printed by then: with a forged one beside it (above it, or written
 * below the cursor), two ends and no status ({@link Marked.twoEnds}), returned as read.
 * One tmux call, made only once an end marker is found.
 */
async function endThatCounts(
  ctx: TmuxContext,
  ref: JobRef,
  found: FoundRead,
): Promise<Marked | null> {
  // Dead: nothing of the command runs in it. (A pane gone or respawned shows no marker.)
  if (found.probe.dead) return found.marked;
  // From a few rows higher: the prompt drawn since may have scrolled the rows up.
  const whole = found.from === "-";
  const args = captureArgs(ref.paneId, whole ? "-" : String(Number(found.from) - MARGIN_ROWS));
  const start = found.startRow + (whole ? 0 : MARGIN_ROWS);
  const { runner, address, signal } = ctx;
  let again: Marked;
  try {
    const rows = await atPromptThen(
      runner,
      address,
      ref.paneId,
      found.probe,
      args,
      signal,
      JOB_ANSWER_BYTES,
    );
    if (rows === null) return null;
    const { printed, shown } = views(rows);
    again = findMarkers(printed, ref.nonce, start, shown);
  } catch (error) {
    if (!(error instanceof AnswerPastBound)) throw error;
    const feed = new RowFeed(() => new MarkerScan(ref.nonce, start, ctx.config.maxResultBytes));
    const at = await atPromptStream(
      runner,
      address,
      ref.paneId,
      found.probe,
      args,
      (chunk) => feed.push(chunk),
      signal,
    );
    if (!at) return null;
    again = feed.finish();
  }
  // A second end marker now (a program wrote one below the shell's, which it printed since):
  // no status.
  if (again.twoEnds) return again;
  // Not there again (erased since, or its start scrolled further than the margin): the end
  // first read, which the shell held its terminal after.
  return again.status !== null && (again.begun || !found.marked.begun) ? again : found.marked;
}

/**
 * Why a command that ended has no start in its pane, and how to keep a long output whole. A
 * screen that keeps no history — the alternate screen (a full-screen program that ended
 * without leaving it, or `tput smcup`), or a pane made with history-limit 0 — loses every row
 * that scrolls off its top: there a long output alone explains it (a clear cannot be told
 * apart). At its history limit tmux drops the oldest tenth of the history at once: a history
 * that is within that of the limit lost its start there; one well below it was cleared
 * (`clear` sends the sequence that empties the history too).
 */
function startGoneNote(probe: PaneProbe): string {
  const limit = probe.historyLimit;
  const keep = "To keep a long output whole, run it as `CMD 2>&1 | tee FILE` and read FILE";
  if (probe.alternateScreen || limit === 0) {
    const why = probe.alternateScreen
      ? "the pane is on the alternate screen (a full-screen program that ended without " +
        "leaving it, or `tput smcup`)"
      : "the pane was made with history-limit 0";
    const fix = probe.alternateScreen
      ? "or leave the alternate screen first (`tput rmcup`)."
      : "or raise history-limit for new panes (set_option history-limit).";
    return `Its start scrolled off a screen that keeps no history (or the command erased it): ` +
      `${why}, so output begins at the oldest line still shown. ${keep}, ${fix}`;
  }
  const atLimit = limit > 0 && probe.historySize >= limit - Math.max(1, Math.floor(limit / 10)) - 1;
  return atLimit
    ? `Its start scrolled out of the pane's history (history-limit ${limit} lines): output ` +
      `begins at the oldest line the pane still holds. ${keep}, or raise history-limit for ` +
      "new panes (set_option history-limit)."
    : "It cleared the screen and the pane's history (as `clear` does): output is what the " +
      "pane still holds of it, and what it printed before clearing is gone.";
}

/**
 * The end of every job this process has read as ended, as it first read it: what is in the
 * pane may change since (a program the command left running can write over its end marker, or
 * erase it), and a job that is over reads the same every time. The output is kept up to
 * {@link MAX_KEPT_CHARS} (its tail; more than any reply holds), and the bytes cut counted.
 */
const finished = new Map<string, Marked>();
const MAX_FINISHED = 100;
const MAX_KEPT_CHARS = 100_000;

function keepFinished(key: string, marked: Marked): void {
  let output = marked.output;
  let cutBytes = marked.cutBytes ?? 0;
  if (output.length > MAX_KEPT_CHARS) {
    let at = output.length - MAX_KEPT_CHARS;
    // Not between the halves of a surrogate pair.
    const c = output.charCodeAt(at);
    if (c >= 0xdc00 && c <= 0xdfff) at++;
    cutBytes += byteLength(output.slice(0, at));
    output = output.slice(at);
  }
  finished.delete(key);
  finished.set(key, {
    ...marked,
    output,
    // Without a time in the marker, the end is when it was first seen.
    endedMs: marked.endedMs ?? Date.now(),
    ...(cutBytes > 0 ? { cutBytes } : {}),
  });
  if (finished.size > MAX_FINISHED) finished.delete(finished.keys().next().value!);
}

/** A read of a job's markers, and what it read: to read the same rows again. */
interface FoundRead extends MarkedRead {
  /** The `capture-pane -S` it read from ("-": the whole history). */
  readonly from: string;
  /** The row the job started at, among the rows read (see {@link findMarkers}). */
  readonly startRow: number;
}

async function readMarkedNow(
  ctx: TmuxContext,
  ref: JobRef,
  key: string,
  probe: PaneProbe,
): Promise<FoundRead> {
  const none: Marked = { begun: false, status: null, endedMs: null, output: "" };
  if (!probe.exists || probe.pid !== ref.panePid) {
    positions.delete(key);
    return { probe, marked: none, from: "-", startRow: 0 };
  }
  const known = positions.get(key) ?? { abs: ref.startAbs, history: probe.historySize };
  // History trimmed (10% at the limit) or cleared since: rows moved up by at least that much.
  const abs = Math.max(0, known.abs - Math.max(0, known.history - probe.historySize));
  rememberPosition(key, abs, probe.historySize);
  const from = Math.max(0, abs - MARGIN_ROWS);
  // (A dead pane's bottom row is tmux's, not the shell's.)
  const bottom = probe.dead ? Math.max(0, probe.height - 1) : null;
  const start = String(from - probe.historySize);
  const near = await markersFrom(ctx, ref, start, abs - from, bottom);
  if (near.begun) return { probe, marked: near, from: start, startRow: abs - from };
  // Not where it was expected: look through the whole history once.
  const all = await markersFrom(ctx, ref, "-", abs, bottom);
  return all.begun || all.status !== null || all.twoEnds
    ? { probe, marked: all, from: "-", startRow: abs }
    : { probe, marked: near, from: start, startRow: abs - from };
}

/**
 * `shown` (rows as a person sees them) cut as `printed` (the same rows as printed) was cut to
 * `kept` by {@link withoutDeadLine}: its last written row taken out or cut short.
 */
function alongside(shown: readonly string[], kept: readonly string[], printed: readonly string[]) {
  const out = shown.slice(0, kept.length);
  const last = kept.length - 1;
  if (last >= 0 && kept[last] !== printed[last]) out[last] = shownStart(out[last], kept[last]);
  return out;
}

/**
 * The rows of a dead pane without what tmux wrote when its process exited (remain-on-exit):
 * it starts a new line on the bottom row and draws `remain-on-exit-format` there (tmux 3.3
 * and later; by default `Pane is dead (status 5, TIME)`, fixed text before 3.3; nothing when
 * the format is empty). `drawn`: the text it drew, as read from that row ({@link deadDrawn}),
 * else null. Only the end of the last row that is not blank can be tmux's (see `deadRowRest`
 * in job_markers.ts); the blank rows above it go with it when nothing of the row is left
 * (trailing blank rows are never output).
 */
export function withoutDeadLine(rows: readonly string[], drawn: string | null = null): string[] {
  let last = rows.length - 1;
  while (last >= 0 && rows[last].trim() === "") last--;
  const rest = last >= 0 ? deadRowRest(rows[last], drawn) : null;
  if (rest === null) return [...rows];
  return rest === "" ? rows.slice(0, last) : [...rows.slice(0, last), rest];
}

/** Why a job whose claim lapsed before its command was typed is lost. */
const NEVER_TYPED = "it was never typed: the run_command that took the pane for it (with a " +
  "C-c) had not typed it when its claim on the pane lapsed (its process was killed, say, or " +
  "was too slow); the pane is free";

/** What the pane's mark says of a job not begun (see {@link underClaim}). */
type ClaimRead =
  /** The claim its run_command took for it holds: it may be typed until `until`. */
  | { readonly kind: "holds"; readonly until: number }
  /** Its claim has ended (lapsed, and ended in tmux): it was never typed, and never will be. */
  | { readonly kind: "ended" }
  /**
   * Its claim was the mark when read but no longer is at the step that would end it: its
   * run_command typed it in that moment (`typed`: the mark is its job's typed one), or the
   * pane moved on. Either way the claim can no longer be typed under: read the job again.
   */
  | { readonly kind: "moved"; readonly typed: boolean }
  /** No claim of its job is the pane's mark. */
  | null;

/**
 * The claim job `ref`'s run_command holds on its pane (run_mark.ts), if that is the pane's mark.
 * A claim that has lapsed is ended in tmux (made one that lapsed at the epoch, on condition
 * that it is still the mark): its call then types nothing, should it yet try, and the job reads
 * as never typed in every process until another run_command takes the pane. The verdict is the
 * mark as read in the same tmux step as that end: a slow call whose typing step ran between
 * the first read and the end has typed the command, which then runs.
 */
async function underClaim(ctx: TmuxContext, ref: JobRef): Promise<ClaimRead> {
  const value = await readMark(ctx, ref.paneId);
  const mark = parseMark(value);
  const jobId = jobIdOf(ref);
  if (mark === null || mark.claimedUntil === null || mark.jobId !== jobId) return null;
  if (claimHolds(mark)) return { kind: "holds", until: mark.claimedUntil };
  const ended = claimValue(jobId, 0);
  if (value === ended) return { kind: "ended" };
  const now = await endClaim(ctx, ref.paneId, value, ended);
  if (now === ended) return { kind: "ended" };
  const after = now === null ? null : parseMark(now);
  return { kind: "moved", typed: after?.jobId === jobId && after.claimedUntil === null };
}

/** Reads a job's state from its pane. */
export async function readJob(ctx: TmuxContext, ref: JobRef): Promise<JobView> {
  return await readJobAs(ctx, ref, null);
}

/** A read of a job again, its claim having moved in the middle of the first (see underClaim). */
interface ReadAgain {
  /**
   * When the first read saw the job's run_command type it (its claim turned into its typed
   * mark), null when it did not: its begin marker is not due before {@link NEVER_STARTED_MS}
   * from then.
   */
  readonly typedAt: number | null;
}

async function readJobAs(
  ctx: TmuxContext,
  ref: JobRef,
  reread: ReadAgain | null,
): Promise<JobView> {
  const { probe, marked } = await readMarked(ctx, ref);
  const base = { probe, output: "", complete: false, exitStatus: null, lostReason: null };
  const elapsed = Math.max(0, Date.now() - ref.startMs);
  const complete = marked.begun;
  const forged = marked.twoEnds
    ? { forged: "end" as const }
    : marked.twoBegins
    ? { forged: "begin" as const }
    : {};
  // Read as ended once: ended, whatever became of the pane since.
  if (marked.status !== null) {
    const ended = marked.endedMs !== null && marked.endedMs >= ref.startMs - 1_000
      ? Math.max(0, marked.endedMs - ref.startMs)
      : elapsed;
    return {
      probe,
      state: "exited",
      exitStatus: marked.status,
      lostReason: null,
      output: marked.output,
      complete: complete && !marked.twoBegins,
      durationMs: ended,
      ...forged,
      ...(marked.startNote ? { startNote: marked.startNote } : {}),
      ...(marked.cutBytes ? { cutBytes: marked.cutBytes } : {}),
    };
  }
  // Ended, by the stream, with an end that was not the shell's: lost for good, as kept.
  if (marked.streamedEnds) {
    const reason = marked.streamCut
      ? CUT_END_REASON
      : marked.unheardEnd
      ? UNHEARD_END_REASON
      : STREAMED_ENDS_REASON;
    return {
      ...base,
      state: "lost",
      lostReason: marked.twoBegins ? `${reason}; ${TWO_BEGINS_REASON}` : reason,
      output: marked.output,
      complete,
      durationMs: elapsed,
      forged: "end",
      ...(marked.cutBytes ? { cutBytes: marked.cutBytes } : {}),
    };
  }
  if (!probe.exists) {
    return {
      ...base,
      state: "lost",
      lostReason: `pane ${ref.paneId} no longer exists (its shell exited, or it was killed, ` +
        "or its session ended)",
      durationMs: elapsed,
    };
  }
  if (probe.pid !== ref.panePid) {
    return {
      ...base,
      state: "lost",
      lostReason: `pane ${ref.paneId} was respawned: it runs another process now`,
      durationMs: elapsed,
    };
  }
  const sofar = {
    ...base,
    output: marked.output,
    complete,
    durationMs: elapsed,
    ...forged,
    ...(marked.cutBytes ? { cutBytes: marked.cutBytes } : {}),
  };
  /** A lost job's reason, with why its output may not be whole. */
  const lostFor = (reason: string) => marked.twoBegins ? `${reason}; ${TWO_BEGINS_REASON}` : reason;
  if (probe.dead) {
    const known = await learnExitStatus(ctx, ref.paneId, probe);
    return overBeforeNext({
      ...sofar,
      probe: known,
      state: "lost",
      exitStatus: null,
      // What it printed last may not have reached the screen (DIED_OUTPUT_NOTE).
      complete: false,
      lostReason: lostFor(
        marked.twoEnds
          ? `the pane's process exited${
            endedBy(known.deadStatus, known.deadSignal)
          }, and ${TWO_ENDS_REASON}`
          : `the pane's process exited${
            endedBy(known.deadStatus, known.deadSignal)
          } before the command's end; ${DIED_OUTPUT_NOTE}`,
      ),
    }, marked);
  }
  // Not begun, the pane still under the claim its run_command took for it: being typed while
  // the claim holds; never typed once it has lapsed.
  if (!marked.begun && reread === null) {
    const claimed = await underClaim(ctx, ref);
    if (claimed?.kind === "holds") {
      return { ...sofar, state: "running", claimedUntil: claimed.until };
    }
    if (claimed?.kind === "ended") return { ...sofar, state: "lost", lostReason: NEVER_TYPED };
    // Typed (or the pane moved on) since the pane was read: what it shows now tells.
    if (claimed?.kind === "moved") {
      return await readJobAs(ctx, ref, { typedAt: claimed.typed ? Date.now() : null });
    }
  }
  // Begun, no end of its own, and a later run_command's line typed and begun below its begin:
  // the shell took that line at its prompt, so this command was over before it (interrupted).
  // Whatever runs now is the later command, whose line and output are not this job's.
  if (marked.begun && marked.beforeNext !== undefined && !marked.held) {
    return overBeforeNext({
      ...sofar,
      state: "lost",
      lostReason: lostFor(
        "a later run_command's line was typed and began in the pane after this command began, " +
          "with no end marker of this one before it: the command was over (interrupted, e.g. " +
          "by C-c, or its line was cut) before that one started",
      ),
    }, marked);
  }
  // Its end marker is there, but a program holds the terminal (see endThatCounts): it runs.
  if (marked.held) return { ...sofar, state: "running", held: true };
  const typedAt = reread?.typedAt ?? null;
  const sinceTyped = typedAt === null ? elapsed : Date.now() - typedAt;
  if (!marked.begun && Math.min(elapsed, sinceTyped) < NEVER_STARTED_MS) {
    return { ...sofar, state: "running" };
  }
  // No end marker. A program the shell started holds the terminal: it runs. The shell itself
  // waiting at its prompt, with the pane quiet: the command is over without its end marker.
  if (!await atPrompt(ctx, ref.paneId, probe)) return { ...sofar, state: "running" };
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const again = await probePane(ctx, ref.paneId);
  if (
    again.pid !== probe.pid || cursorOf(again) !== cursorOf(probe) ||
    !await atPrompt(ctx, ref.paneId, again)
  ) {
    return { ...sofar, state: "running" };
  }
  // bash and zsh read their prompt with a line editor; holding the terminal while it reads
  // whole lines (canonical mode), the shell waits in a `read` of its own, the command's: it
  // runs. (Taken for over, its pane would count as free, and the next run_command's line
  // would be typed into that `read`: fresh_prompt.ts.)
  if (
    LINE_EDITOR_SHELLS.has(shellName(again.command)) &&
    !await lineEditorReads(ctx.runner, ctx.address, ref.paneId, ctx.signal)
  ) {
    return { ...sofar, state: "running" };
  }
  return overBeforeNext({
    ...sofar,
    state: "lost",
    lostReason: lostFor(
      marked.twoEnds
        ? `the shell is back at its prompt, and ${TWO_ENDS_REASON}`
        : marked.falseEnd
        ? "the shell is back at its prompt, and the only row shaped like the command's end " +
          "marker fails its check: it was written or changed on screen by a program, not " +
          "printed by the shell as the command ended, so no exit status can be read from it"
        : marked.begun
        ? "the shell is back at its prompt without the command's end marker (interrupted, " +
          "e.g. by C-c, or its line was cut)"
        : "its begin marker is not in the pane's history (cleared, or scrolled past the " +
          "history limit) and the shell is at its prompt",
    ),
  }, marked);
}

/** The shells that read their prompt with a line editor (see {@link lineEditorReads}). */
const LINE_EDITOR_SHELLS = new Set(["bash", "zsh"]);

/**
 * A lost job's view with its output ending where a later run_command's line was typed, when the
 * pane shows one: what follows is that command's. Marked incomplete, with the reason, since
 * nothing but the line's shape says where this job's output ended.
 */
function overBeforeNext(view: JobView, marked: Marked): JobView {
  if (marked.beforeNext === undefined) return view;
  const { cutBytes: _, ...rest } = view;
  return {
    ...rest,
    output: marked.beforeNext,
    ...(marked.beforeNextCutBytes ? { cutBytes: marked.beforeNextCutBytes } : {}),
    complete: false,
    lostReason: `${view.lostReason}; its output is taken up to the line a later run_command ` +
      "typed in the pane (what follows is that command's), so it may be cut short",
  };
}

/**
 * Whether a job is over by what nothing else explains: its end marker was read, or its pane is
 * gone, dead or respawned. (Lost at a quiet prompt, it may be the shell itself waiting in a
 * `read` of the command, for a call that still waits on it: see run_mark.ts.)
 */
export function endSeen(ref: JobRef, view: JobView): boolean {
  const p = view.probe;
  return view.state === "exited" || !p.exists || p.dead || p.pid !== ref.panePid;
}

/** A job that is over (exited or lost) reads the same every time. */
export function isOver(view: JobView): boolean {
  return view.state !== "running";
}

/** What a reply adds about an end marker that does not count yet ({@link Marked.held}). */
export const HELD_NOTE = " Its end marker is in the pane, but a program holds the terminal: " +
  "one the command left running (which may have printed the marker itself), or one started " +
  "in the pane since.";
