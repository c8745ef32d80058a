/**
 * Jobs: a command `run_command` typed that may outlive the call, read back by
 * `get_command_result` (toolset inspect) — from this process or from the next one.
 *
 * Nothing about a job is kept only in memory. Its id carries what is needed to find it again
 * in its pane: the pane, the command's markers (a random nonce), the pid of the pane's process
 * when it was typed (a respawned pane has another), where the pane's cursor was (so reading
 * starts near the beginning, not at the top of a long history), when it started, and the tmux
 * server's pid. The outcome lives in the pane itself: the command is wrapped so that the shell
 * prints a begin marker before it and an end marker with its exit status (and the time) after
 * it; the markers are printed from separate `printf` words, so the echo of the typed line never
 * contains them. The end marker also carries a check the shell computes as the command ends
 * (see {@link endCheck}): cursor moves and edits of what is on screen cannot make it. A program
 * that reads the screen (`tmux capture-pane`) can print it, so an end marker counts only once
 * the pane's shell holds its terminal again (see `endThatCounts`). A job read as ended is also
 * kept in memory as first read, so that it reads the same every time in this process, whatever
 * later changes the pane.
 *
 * A job is:
 * - `exited` once its end marker is in the pane and the shell holds its terminal again, or the
 *   pane died after it (with the exit status and duration);
 * - `running` while the shell does not hold its terminal (a program it started is in the
 *   foreground), with no end marker or one that does not count yet, or it was typed a moment
 *   ago;
 * - `lost` when the outcome can never be read: the pane was killed or respawned, its process
 *   exited, or the shell is back at its prompt without an end marker (interrupted, or the
 *   marker left the history).
 *
 * @module
 */

import { z } from "zod";
import { TmuxContext } from "../mcp/context.ts";
import { clip, ToolFailure } from "../mcp/errors.ts";
import { defineTool, READ_ONLY, socketNameField, type ToolRegistry } from "../mcp/registry.ts";
import { count, int, paneIdSchema } from "../mcp/schemas.ts";
import { byteLength } from "../mcp/bounds.ts";
import { execFast } from "../tmux/control.ts";
import { decodeBytes } from "../tmux/format.ts";
import { atPromptThen, paneAtPrompt } from "../tmux/prompt.ts";
import { judgeResult } from "../tmux/run.ts";
import { keepTail, MAX_TIMEOUT_MS, type PaneProbe, PaneWatch, probePane } from "./wait.ts";
import { learnExitStatus } from "./pane_watch.ts";
import { type JobServing, placeOf, refuseFutureJob, rememberJob } from "./job_resource.ts";
import { releaseMark } from "./run_mark.ts";
import { Backoff, MAX_RETRY_MS, pause } from "./live.ts";

// ---------------------------------------------------------------------------------------------
// Ids

/** What a job id carries. */
export interface JobRef {
  /** The pane it runs in (`%N`). */
  readonly paneId: string;
  /** The random part of its markers (20 hex digits). */
  readonly nonce: string;
  /** The pane's process when it was typed: a respawned pane has another. */
  readonly panePid: number;
  /** When it was typed (ms since the epoch, this machine's clock). */
  readonly startMs: number;
  /** Where the pane's cursor was then, counted from the top of its history. */
  readonly startAbs: number;
  /** The tmux server it runs on. */
  readonly serverPid: number;
}

const JOB_ID =
  /^(\d{1,9})-([0-9a-f]{20})-([0-9a-z]{1,8})-([0-9a-z]{1,10})-([0-9a-z]{1,8})-([0-9a-z]{1,8})$/;

/** A job id argument. */
export const jobIdSchema = z.string().regex(JOB_ID, "a jobId as run_command returned it");

/** The id of a job: every part a number or hex digits, safe in a URI. */
export function jobIdOf(ref: JobRef): string {
  return [
    ref.paneId.slice(1),
    ref.nonce,
    ref.panePid.toString(36),
    ref.startMs.toString(36),
    ref.startAbs.toString(36),
    ref.serverPid.toString(36),
  ].join("-");
}

/** The parts of a job id; null when it is not one. */
export function parseJobId(id: string): JobRef | null {
  const m = JOB_ID.exec(id);
  if (!m) return null;
  const numbers = [m[3], m[4], m[5], m[6]].map((s) => parseInt(s, 36));
  if (numbers.some((n) => !Number.isSafeInteger(n))) return null;
  const [panePid, startMs, startAbs, serverPid] = numbers;
  return { paneId: `%${Number(m[1])}`, nonce: m[2], panePid, startMs, startAbs, serverPid };
}

// ---------------------------------------------------------------------------------------------
// Markers

/** The begin marker's text (a line ends with it). */
export function beginMarker(nonce: string): string {
  return `__tmcp_${nonce}_B`;
}

/** The start of the end marker's text (status, check and time follow). */
export function endMarker(nonce: string): string {
  return `__tmcp_${nonce}_E:`;
}

/**
 * The two numbers the typed line carries for the end marker's check, taken from the nonce
 * (so a later process knows them from the job id): 22 bits each, so that the check stays
 * within the 32-bit arithmetic of the smallest shells (mksh) for any status a shell reports
 * (at most 255; ksh93's 256 + a signal).
 */
function checkTerms(nonce: string): [number, number] {
  const a = parseInt(nonce.slice(0, 6), 16) >>> 2;
  const b = parseInt(nonce.slice(6, 12), 16) >>> 2;
  // Equal terms would make the check 0 whatever the status (one nonce in four million).
  return [a, b === a ? b ^ 1 : b];
}

/**
 * The check the end marker carries with exit status `status`: `(a ^ b) * (status + 1)`, which
 * the shell computes when the command has ended. The typed line shows `a` and `b`, never their
 * product: editing what is on screen (cursor moves, inserting or deleting characters) only
 * rearranges text that is there, so an end marker made that way (e.g. the begin marker's `_B`
 * overwritten with `_E:0`) and a status changed after the end both fail it. A program that
 * reads the screen can compute it: that end is refused while the program holds the terminal
 * (`endThatCounts`), not by the check.
 */
export function endCheck(nonce: string, status: number): string {
  const [a, b] = checkTerms(nonce);
  return String((a ^ b) * (status + 1));
}

/**
 * The shell words that print the markers (see `typedCommand` in input.ts). The end marker
 * carries `$?` (expanded first, so it is the command's status; expanding words does not change
 * it), its check ({@link endCheck}) and the time in seconds, so a later process can tell how
 * long the command ran: bash 5 and zsh with zsh/datetime keep it in `EPOCHSECONDS`, which saves
 * starting `date` (a fork and an exec, over 1 ms, in every command). A value that is not a time
 * (someone's own variable of that name) only loses the end time. The numbers are written
 * without leading zeros (an octal number in some shells).
 */
export function markerWords(nonce: string): { begin: string; end: string } {
  const [a, b] = checkTerms(nonce);
  return {
    begin: `\\printf '%s_%s_B\\n' __tmcp ${nonce}`,
    end: `\\printf '%s_%s_E:%s:%s:%s\\n' __tmcp ${nonce} "$?" "$(( (${a} ^ ${b}) * ($? + 1) ))" ` +
      `"\${EPOCHSECONDS:-$(date +%s 2>/dev/null)}"`,
  };
}

/** What the markers in a stretch of the pane tell. */
export interface Marked {
  /** Whether the begin marker is there (the command started, and its output is all here). */
  readonly begun: boolean;
  /** The exit status from the end marker, else null. */
  readonly status: number | null;
  /** When the command ended (ms since the epoch, the pane's clock), when it said so. */
  readonly endedMs: number | null;
  /** What it printed between the markers (all of it after the begin marker, if no end). */
  readonly output: string;
  /**
   * Without an end marker: the output up to the line of a later run_command, when the pane
   * shows one (see {@link typedLineAt}); a job that is over ended before it.
   */
  readonly beforeNext?: string;
  /**
   * Ended, with neither its begin marker nor the echo of its line above the end: its start
   * left the pane (cleared with the history, or pushed out by the history limit).
   */
  readonly startGone?: boolean;
  /** No end marker, but a row shaped like it that fails its check (made or changed on screen). */
  readonly falseEnd?: boolean;
  /**
   * An end marker with its check is there, but it does not count yet: the pane's shell does
   * not hold its terminal (see {@link readMarked}). `status` stays null meanwhile.
   */
  readonly held?: boolean;
  /** UTF-8 bytes cut from the start of `output` when it was kept (see `keepFinished`). */
  readonly cutBytes?: number;
  /** With `startGone`, once ended: why, and how to keep a long output whole (one sentence). */
  readonly startNote?: string;
}

/** One unit of a typed command (`printfUnits` in input.ts): a plain byte or `\0ooo`. */
const UNITS = String.raw`(?:[A-Za-z0-9 ,._+:@%/=-]|\\0[0-7]{3})*`;
/** The shell variable a long or decoded command is held in (`VARIABLE` in input.ts). */
const HELD = "__tmux_mcp_cmd";

/**
 * The line run_command types (`typedCommand` in input.ts), whole, as the shell echoes it after
 * its prompt: the nonce in group 1. Only this exact shape counts, not any line holding the
 * marker words (a job's own output may show them: `history`, a history file, a capture).
 */
const TYPED_LINE = (() => {
  const word = `(?:'${UNITS}'|"\\$${HELD}")`;
  // Each word a shell could take for an alias is typed quoted (`\printf`): older lines were not.
  const q = String.raw`\\?`;
  const evaluate = `(?:${q}command eval|${q}eval)`;
  const run = `(?:${evaluate} ${word}|${q}printf -v ${HELD} %b ${word}; ${evaluate} "\\$${HELD}"|` +
    `${evaluate} "\\$\\(${q}printf %b ${word}\\)")`;
  const begin = String.raw`${q}printf '%s_%s_B\\n' __tmcp ([0-9a-f]{20})`;
  const end = String.raw`${q}printf '%s_%s_E:%s:%s:%s\\n' __tmcp \1 "\$\?" ` +
    String.raw`"\$\(\( \(\d{1,7} \^ \d{1,7}\) \* \(\$\? \+ 1\) \)\)" ` +
    String.raw`"\$\{EPOCHSECONDS:-\$\(date \+%s 2>/dev/null\)\}"`;
  return new RegExp(`^.* ${begin}; ${run}; ${end}(?:; unset ${HELD})?$`);
})();
/** The lines that build a long command up before its typed line (`typedCommand`). */
const HELD_LINE = new RegExp(`^.* ${HELD}=(?:''|"\\$${HELD}"'${UNITS}')$`);

/**
 * Whether row `i` is the line of another run_command (not `nonce`'s), typed and run: its exact
 * typed line, and its begin marker on the next row (a shell without line editing may have put
 * its prompts before it). Returns the row its typed lines start at (a long command's first
 * line), else -1.
 */
function typedLineAt(lines: readonly string[], i: number, nonce: string): number {
  const m = TYPED_LINE.exec(lines[i].trimEnd());
  if (!m || m[1] === nonce || i + 1 >= lines.length) return -1;
  if (!lines[i + 1].trimEnd().endsWith(beginMarker(m[1]))) return -1;
  let first = i;
  while (first > 0 && HELD_LINE.test(lines[first - 1].trimEnd())) first--;
  return first;
}

/**
 * Finds a command's markers in `lines` and cuts out what lies between them. `start`: the index
 * of the row the job started at, where its output is taken from when no marker or echo of its
 * line says where it begins.
 */
export function findMarkers(lines: readonly string[], nonce: string, start = 0): Marked {
  const begin = beginMarker(nonce);
  const token = endMarker(nonce);
  // zsh with `setopt force_float` prints arithmetic as a float: the check as "2134552.".
  const endRe = new RegExp(`^(.*)${token}(\\d{1,5}):(\\d{1,12})(?:\\.0*)?(?::(.*))?$`);
  let endAt = -1;
  let status: number | null = null;
  let endedMs: number | null = null;
  let prefix = "";
  let falseEnd = false;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i].includes(token)) continue;
    const m = endRe.exec(lines[i].trimEnd());
    // Only the shell prints the check: a row that has the end marker's shape without it was
    // made on screen (by a program's cursor moves over the begin marker), or changed since.
    if (!m || m[3] !== endCheck(nonce, Number(m[2]))) {
      falseEnd = true;
      continue;
    }
    endAt = i;
    status = Number(m[2]);
    endedMs = m[4] && /^\d{1,15}$/.test(m[4]) ? Number(m[4]) * 1000 : null;
    prefix = m[1];
    break;
  }
  const until = endAt === -1 ? lines.length : endAt;
  let beginAt = -1;
  for (let i = until - 1; i >= 0; i--) {
    // A shell without line editing may have printed prompts for the lines before it on the
    // same row ("# # __tmcp_..._B"): the marker ends the line.
    if (lines[i].trimEnd().endsWith(begin)) {
      beginAt = i;
      break;
    }
  }
  // No begin marker (the command's output moved the cursor over it, or cleared the screen):
  // what it printed starts after the echo of the typed line (the marker words with a space,
  // `__tmcp NONCE`, which only the echo holds), never at earlier output; without that either,
  // at `from`, the row the job started at.
  let from = beginAt;
  let startGone = false;
  if (beginAt === -1) {
    const echo = `__tmcp ${nonce}`;
    from = Math.min(until, Math.max(0, start)) - 1;
    let echoAt = -1;
    for (let i = until - 1; i >= 0 && echoAt === -1; i--) {
      if (lines[i].includes(echo)) echoAt = i;
    }
    if (echoAt !== -1) from = echoAt;
    else if (endAt !== -1) {
      // Ended, and nothing of its start above the end. Its start below the end: the cursor
      // went up over it, and what is above is earlier output. Nowhere: the start left the
      // pane (the command cleared the screen and the history, as `clear` does, or its output
      // pushed the start out of the history). Then an end above the row the job started at
      // says the rows moved up: cleared, and what is above the end is what it printed since.
      const below = lines.slice(endAt + 1).some((l) =>
        l.includes(echo) || l.trimEnd().endsWith(begin)
      );
      if (!below) {
        startGone = true;
        if (endAt < start) from = -1;
      }
    }
  }
  // No end marker: a job that is over (lost) ended before the next run_command's line, when
  // the pane shows one; the output up to it is kept aside for the reader that knows it is over
  // (a job that runs holds the pane: no run_command is typed into it meanwhile).
  let next = -1;
  if (endAt === -1 && beginAt !== -1) {
    for (let i = from + 1; i < until && next === -1; i++) next = typedLineAt(lines, i, nonce);
  }
  const body = lines.slice(from + 1, until);
  if (prefix !== "") body.push(prefix);
  return {
    begun: beginAt !== -1,
    status,
    endedMs,
    output: beginAt === -1 && endAt === -1 ? "" : trimTrailingBlank(body).join("\n"),
    ...(startGone ? { startGone } : {}),
    ...(status === null && falseEnd ? { falseEnd } : {}),
    ...(next === -1 ? {} : {
      beforeNext: trimTrailingBlank(lines.slice(from + 1, Math.max(from + 1, next))).join("\n"),
    }),
  };
}

function trimTrailingBlank(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1].trim() === "") end--;
  return lines.slice(0, end);
}

// ---------------------------------------------------------------------------------------------
// Reading a job

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
  /** Ended, with its start gone from the pane: why (see {@link Marked.startNote}). */
  readonly startNote?: string;
  /** UTF-8 bytes of output cut before `output` (see {@link Marked.cutBytes}). */
  readonly cutBytes?: number;
  /** Running, with an end marker in the pane that does not count yet ({@link Marked.held}). */
  readonly held?: boolean;
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

/** The pane's rows from `from` (a capture-pane start: a line number or "-") to its end. */
async function captureFrom(ctx: TmuxContext, paneId: string, from: string): Promise<string[]> {
  const stdout = judgeResult(
    await execFast(ctx.runner, ctx.address, [
      "capture-pane",
      "-p",
      "-J",
      "-t",
      paneId,
      "-S",
      from,
    ], { signal: ctx.signal }),
  );
  return decodeBytes(stdout).split("\n");
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

/**
 * Reads the pane from a little before the job's start (the whole history when the start is not
 * there) and finds the job's markers. An empty read when the pane is gone or was respawned.
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
  const marked = ended.startGone ? { ...ended, startNote: startGoneNote(found.probe) } : ended;
  keepFinished(key, marked);
  return { probe, marked };
}

/**
 * The end a read found, once it counts: the pane's shell holds its terminal again, or the pane
 * is dead. Null while a program holds it: the check shows that the end marker has the shape
 * only the shell prints, but a program the command runs can read its own screen (every pane
 * has TMUX set, so `tmux capture-pane` works there), take the nonce and the check's terms from
 * the typed line and print a correct end marker, then run on. Or the shell is still running
 * what draws its next prompt (PROMPT_COMMAND, a `$(...)` in PS1, zsh's precmd): the caller
 * reads again. The pane is read again in the same tmux step as that test, so the end is the
 * lowest one the shell had printed by then (a forged one above it does not stand for it).
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
  const rows = await atPromptThen(ctx.runner, ctx.address, ref.paneId, found.probe, [
    ...["capture-pane", "-p", "-J", "-t", ref.paneId],
    ...["-S", whole ? "-" : String(Number(found.from) - MARGIN_ROWS)],
  ], ctx.signal);
  if (rows === null) return null;
  const lines = decodeBytes(rows).split("\n");
  const again = findMarkers(lines, ref.nonce, found.startRow + (whole ? 0 : MARGIN_ROWS));
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
  // A dead pane's last rows are tmux's, not the shell's.
  const read = async (start: string) => {
    const rows = await captureFrom(ctx, ref.paneId, start);
    return probe.dead ? withoutDeadLine(rows) : rows;
  };
  const start = String(from - probe.historySize);
  const near = findMarkers(await read(start), ref.nonce, abs - from);
  if (near.begun) return { probe, marked: near, from: start, startRow: abs - from };
  // Not where it was expected: look through the whole history once.
  const all = findMarkers(await read("-"), ref.nonce, abs);
  return all.begun || all.status !== null
    ? { probe, marked: all, from: "-", startRow: abs }
    : { probe, marked: near, from: start, startRow: abs - from };
}

/**
 * The rows of a dead pane without what tmux wrote when its process exited (remain-on-exit):
 * it moves the cursor to the bottom row and prints `Pane is dead (status 5, TIME)` there (a
 * fixed text in tmux 3.3; the default of `remain-on-exit-format` since 3.4, which may be set to
 * another). Recognised only as the last row that is not blank; the blank rows the move left
 * above it go with it (trailing blank rows are never output).
 */
export function withoutDeadLine(rows: readonly string[]): string[] {
  let last = rows.length - 1;
  while (last >= 0 && rows[last].trim() === "") last--;
  if (last >= 0 && /^Pane is dead \((?:status|signal) [^,]*, .*\)$/.test(rows[last].trimEnd())) {
    return rows.slice(0, last);
  }
  return [...rows];
}

/** Reads a job's state from its pane. */
export async function readJob(ctx: TmuxContext, ref: JobRef): Promise<JobView> {
  const { probe, marked } = await readMarked(ctx, ref);
  const base = { probe, output: "", complete: false, exitStatus: null, lostReason: null };
  const elapsed = Math.max(0, Date.now() - ref.startMs);
  const complete = marked.begun;
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
      complete,
      durationMs: ended,
      ...(marked.startNote ? { startNote: marked.startNote } : {}),
      ...(marked.cutBytes ? { cutBytes: marked.cutBytes } : {}),
    };
  }
  if (!probe.exists) {
    return {
      ...base,
      state: "lost",
      lostReason: `pane ${ref.paneId} no longer exists (it was killed, or its session ended)`,
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
  const sofar = { ...base, output: marked.output, complete, durationMs: elapsed };
  if (probe.dead) {
    const known = await learnExitStatus(ctx, ref.paneId, probe);
    return overBeforeNext({
      ...sofar,
      probe: known,
      state: "lost",
      exitStatus: null,
      lostReason: `the pane's process exited${
        known.deadStatus !== null ? ` (status ${known.deadStatus})` : ""
      } before the command's end`,
    }, marked);
  }
  // Its end marker is there, but a program holds the terminal (see endThatCounts): it runs.
  if (marked.held) return { ...sofar, state: "running", held: true };
  if (!marked.begun && elapsed < NEVER_STARTED_MS) return { ...sofar, state: "running" };
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
  return overBeforeNext({
    ...sofar,
    state: "lost",
    lostReason: marked.falseEnd
      ? "the shell is back at its prompt, and the only row shaped like the command's end " +
        "marker fails its check: it was written or changed on screen by a program, not " +
        "printed by the shell as the command ended, so no exit status can be read from it"
      : marked.begun
      ? "the shell is back at its prompt without the command's end marker (interrupted, " +
        "e.g. by C-c, or its line was cut)"
      : "its begin marker is not in the pane's history (cleared, or scrolled past the " +
        "history limit) and the shell is at its prompt",
  }, marked);
}

/**
 * A lost job's view with its output ending where a later run_command's line was typed, when the
 * pane shows one: what follows is that command's. Marked incomplete, with the reason, since
 * nothing but the line's shape says where this job's output ended.
 */
function overBeforeNext(view: JobView, marked: Marked): JobView {
  if (marked.beforeNext === undefined) return view;
  return {
    ...view,
    output: marked.beforeNext,
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

/**
 * How often an end marker that does not count yet ({@link Marked.held}) is read again while
 * waiting, and for how long after it was first seen: the programs that draw the next prompt
 * hold the terminal for a moment after a command ends (a git prompt in a large repository,
 * about a second). Past that, a quiet pane is read again at each tick, and at each new end
 * marker.
 */
const HELD_RECHECK_MS = 50;
const HELD_WINDOW_MS = 3_000;

/** The watch deadline while an end marker seen at `heldSince` may yet count soon. */
export function recheckBy(heldSince: number | null, deadline: number): number {
  const now = performance.now();
  return heldSince !== null && now < heldSince + HELD_WINDOW_MS
    ? Math.min(deadline, now + HELD_RECHECK_MS)
    : deadline;
}

/** What a reply adds about an end marker that does not count yet ({@link Marked.held}). */
export const HELD_NOTE = " Its end marker is in the pane, but a program holds the terminal: " +
  "one the command left running (which may have printed the marker itself), or one started " +
  "in the pane since.";

/**
 * Waits (event-driven where control mode is available) until the job is over or `deadline`
 * (a `performance.now()` time) passes, sending progress. Returns the last view.
 */
export async function waitForJob(
  ctx: TmuxContext,
  ref: JobRef,
  deadline: number,
  options: { began?: number; progress?: boolean } = {},
): Promise<JobView> {
  let view = await readJob(ctx, ref);
  if (isOver(view) || performance.now() >= deadline) return view;
  const snapshot = await ctx.snapshot({ sessions: false, windows: false, paneId: ref.paneId });
  const pane = snapshot.panes.find((p) => p.id === ref.paneId);
  if (!pane) return await readJob(ctx, ref);
  const watch = await PaneWatch.open(ctx, pane);
  const began = options.began ?? performance.now();
  const total = Math.max(1, Math.round(deadline - began));
  const endToken = endMarker(ref.nonce);
  /** When an end marker that does not count yet was first read (see {@link recheckBy}). */
  let heldSince: number | null = null;
  const read = async () => {
    view = await readJob(ctx, ref);
    if (view.held) heldSince ??= performance.now();
    return view;
  };
  try {
    // Anything written between the first read and the watch's start.
    if (isOver(await read())) return view;
    if (options.progress !== false) {
      await ctx.progress(0, total, `Waiting for the job in ${ref.paneId}`);
    }
    while (true) {
      const by = recheckBy(heldSince, deadline);
      const event = await watch.next(by);
      switch (event.kind) {
        case "lines":
          if (by < deadline || event.lines.some((l) => l.includes(endToken))) {
            if (isOver(await read())) return view;
          }
          break;
        case "tick": {
          // No end marker in the output: the command may have been interrupted (the shell
          // prints its prompt, nothing more), or it runs on quietly.
          if (isOver(await read())) return view;
          if (options.progress !== false) {
            const waited = Math.round(performance.now() - began);
            await ctx.progress(
              Math.min(waited, total),
              total,
              `Job in ${ref.paneId}: running for ${Math.round(view.durationMs / 1000)} s`,
            );
          }
          break;
        }
        case "timeout":
          // Only the end marker's moment to read again is up.
          if (by < deadline && performance.now() < deadline) {
            if (isOver(await read())) return view;
            break;
          }
          return await readJob(ctx, ref);
        case "died":
          return await readJob(ctx, ref);
        case "cancelled":
          throw new ToolFailure("The call was cancelled; the job keeps running.");
      }
    }
  } finally {
    watch.close();
  }
}

// ---------------------------------------------------------------------------------------------
// get_command_result

/** The fields a job reports (in `get_command_result`, and the job resource). */
export const jobFields = {
  jobId: jobIdSchema,
  paneId: paneIdSchema,
  state: z.enum(["running", "exited", "lost"]),
  exitStatus: int().nullable().describe("Set once exited."),
  lostReason: z.string().nullable().describe("Why it is lost (state lost), else null."),
  output: z.string().describe("What it printed since it started (tail kept)."),
  outputComplete: z.boolean().describe(
    "False when output was cut to the bound or its start left the pane's history.",
  ),
  omittedBytes: count().describe("Bytes of output cut from the start."),
  durationMs: count().describe("Run time so far, or until it ended."),
};

/** What a job reports, as {@link jobFields} declares it. */
export type JobReport = z.infer<z.ZodObject<typeof jobFields>>;

/**
 * A job's report, its output bounded to `maxBytes` as JSON on the wire (the tail kept;
 * `twice`: for a report that travels as JSON text inside JSON, see keepTail).
 */
export function jobReport(
  jobId: string,
  ref: JobRef,
  view: JobView,
  maxBytes: number,
  twice = false,
): JobReport {
  const output = keepTail(view.output, Math.max(1_000, maxBytes), twice);
  return {
    jobId,
    paneId: ref.paneId,
    state: view.state,
    exitStatus: view.exitStatus,
    lostReason: view.lostReason,
    output: output.text,
    outputComplete: view.complete && output.omittedBytes === 0 && !view.cutBytes,
    omittedBytes: output.omittedBytes + (view.cutBytes ?? 0),
    durationMs: Math.round(view.durationMs),
  };
}

/** A one-line account of a job. */
export function jobSummary(ref: JobRef, view: JobView): string {
  switch (view.state) {
    case "exited":
      return `${ref.paneId}: the job exited with status ${view.exitStatus} after ${
        Math.round(view.durationMs / 100) / 10
      } s.${view.startNote ? ` ${view.startNote}` : ""}`;
    case "lost":
      return `${ref.paneId}: the job is lost: ${view.lostReason}.`;
    default:
      return `${ref.paneId}: the job is still running (${
        Math.round(view.durationMs / 1000)
      } s so far).${view.held ? HELD_NOTE : ""}`;
  }
}

/** The pid of the tmux server on the context's socket; undefined when none runs there. */
async function serverPidOf(ctx: TmuxContext): Promise<number | undefined> {
  // The server's pid is all it needs: no session, window or pane is read.
  const snapshot = await ctx.snapshot({ sessions: false, windows: false, panes: false });
  return snapshot.server?.pid;
}

/** The job an id names on this call's tmux server, or a failure saying why not. */
export async function jobOf(ctx: TmuxContext, jobId: string): Promise<JobRef> {
  const ref = parseJobId(jobId);
  if (!ref) {
    throw new ToolFailure(
      `${JSON.stringify(clip(jobId))} is not a job id.`,
      "Use the jobId run_command returned.",
    );
  }
  refuseFutureJob(jobId);
  const pid = await serverPidOf(ctx);
  if (pid !== undefined && pid !== ref.serverPid) {
    throw new ToolFailure(
      `Job ${jobId} was started on another tmux server (pid ${ref.serverPid}; ` +
        `${ctx.socketLabel} is pid ${pid}).`,
      "Pass the socket_name the job was started with; if that server has ended, so has the job.",
    );
  }
  if (pid === undefined) {
    throw new ToolFailure(
      `No tmux server is running on ${ctx.socketLabel}: job ${jobId} ended with its server.`,
      "Pass the socket_name the job was started with.",
    );
  }
  return ref;
}

const getCommandResult = defineTool({
  name: "get_command_result",
  title: "Read a run_command job",
  toolset: "inspect",
  description:
    "State, exit status and output of a run_command job (its jobId), also after a restart " +
    "of this server. waitMs: wait for it to end (0 answers now).",
  input: {
    jobId: jobIdSchema,
    waitMs: int().min(0).optional().describe(`ms; default 0, at most ${MAX_TIMEOUT_MS}`),
  },
  output: {
    ...jobFields,
    waitedMs: count(),
    waitClamped: z.boolean(),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const ref = await jobOf(ctx, args.jobId);
    rememberJob(args.jobId, placeOf(ctx));
    const wanted = args.waitMs ?? 0;
    const waitMs = Math.min(MAX_TIMEOUT_MS, wanted);
    const began = performance.now();
    const view = waitMs > 0
      ? await waitForJob(ctx, ref, began + waitMs, { began })
      : await readJob(ctx, ref);
    const budget = Math.max(1_000, ctx.config.maxResultBytes - 2_048);
    const data = {
      ...jobReport(args.jobId, ref, view, budget),
      waitedMs: Math.round(performance.now() - began),
      waitClamped: waitMs !== wanted,
    };
    if (view.state === "lost") ctx.log("warning", `job in ${ref.paneId} lost: ${view.lostReason}`);
    if (isOver(view)) await releaseMark(ctx, ref.paneId, jobIdOf(ref), endSeen(ref, view));
    return { data, summary: jobSummary(ref, view) };
  },
});

// ---------------------------------------------------------------------------------------------
// The job resource

/** The job id, socket and host a `tmux://job/...` URI names. */
function parseJobUri(uri: string): { jobId: string; socketName?: string; host?: string } {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ToolFailure(`${clip(uri)} is not a URI.`);
  }
  const m = /^\/([^/]+)$/.exec(url.pathname);
  const params = [...url.searchParams.keys()];
  if (url.protocol !== "tmux:" || url.host !== "job" || !m || url.hash !== "") {
    throw new ToolFailure(
      `No resource ${clip(uri)}.`,
      "tmux://job/{jobId} takes a run_command jobId.",
    );
  }
  if (
    params.some((p) => p !== "socket" && p !== "host") || new Set(params).size < params.length
  ) {
    throw new ToolFailure(
      `${clip(uri)}: the only query a job resource takes is ?socket=NAME, and host=HOST (--ssh).`,
    );
  }
  const socket = url.searchParams.get("socket") ?? undefined;
  if (socket !== undefined && (socket === "" || !socketNameField.safeParse(socket).success)) {
    throw new ToolFailure(`${clip(uri)}: socket must be a tmux socket name.`);
  }
  // A host not given with --ssh is refused when the job is read (as for every call).
  const host = url.searchParams.get("host") ?? undefined;
  return { jobId: m[1], socketName: socket, host };
}

/** The context of the socket (and host) a job URI names. */
function jobContext(
  ctx: TmuxContext,
  place: { socketName?: string; host?: string },
  signal: AbortSignal,
) {
  return new TmuxContext(
    ctx.runner,
    ctx.config,
    place.socketName ?? (place.host === undefined ? ctx.address.socketName : undefined),
    signal,
    () => Promise.resolve(),
    ctx.log,
    place.host,
  );
}

/** How long one wait of a job watch lasts before it starts the next. */
const WATCH_SPAN_MS = 10 * 60_000;

/** How a job is read and watched as a resource (declared in job_resource.ts). */
export const JOB_SERVING: JobServing = {
  read: async (uri, _variables, ctx) => {
    const { jobId, ...place } = parseJobUri(uri);
    const on = place.socketName || place.host ? jobContext(ctx, place, ctx.signal) : ctx;
    const ref = await jobOf(on, jobId);
    const view = await readJob(on, ref);
    rememberJob(jobId, placeOf(on));
    const budget = Math.max(1_000, ctx.config.maxResultBytes - 2_048);
    // The text is JSON, and travels as a JSON string: the output's escapes are escaped twice.
    return JSON.stringify(jobReport(jobId, ref, view, budget, true));
  },
  watch: (uri, ctx, changed) => {
    const stop = new AbortController();
    const follow = async () => {
      const { jobId, ...place } = parseJobUri(uri);
      const ref = parseJobId(jobId);
      if (!ref) return;
      const on = jobContext(ctx, place, stop.signal);
      const backoff = new Backoff();
      /** Whether the last try failed: the subscriber is told once when they start failing. */
      let failing = false;
      while (!stop.signal.aborted) {
        const began = performance.now();
        try {
          const view = await waitForJob(on, ref, performance.now() + WATCH_SPAN_MS, {
            progress: false,
          });
          failing = false;
          backoff.reset();
          if (isOver(view)) {
            if (view.state === "lost") {
              ctx.log("warning", `job in ${ref.paneId} lost: ${view.lostReason}`);
            }
            changed();
            return;
          }
        } catch {
          // Cancelled, or tmux did not answer in time (a person's slow hook, a loaded machine),
          // or its server went: a watch that gave up here would never tell the job's end.
          if (stop.signal.aborted) return;
          // A try that ran a good while before it failed starts a new run of failures.
          if (performance.now() - began >= MAX_RETRY_MS) {
            failing = false;
            backoff.reset();
          }
          // Something may have changed unseen: a reader says what (or why it cannot).
          const told = !failing;
          if (!failing) changed();
          failing = true;
          // A job whose server is gone or was replaced ended with it: nothing more to watch.
          const pid = await serverPidOf(on).catch(() => null);
          if (pid !== null && pid !== ref.serverPid) {
            if (!told) changed();
            return;
          }
          await pause(backoff.next(), stop.signal);
        }
      }
    };
    follow().catch(() => {
      // The URI names no job (a reader says why): nothing to watch.
      if (!stop.signal.aborted) changed();
    });
    // Ready at once: the first look reads the job as it is, and tells if it is already over.
    return { ready: Promise.resolve(), stop: () => stop.abort() };
  },
};

/**
 * Registers the job tools. The job resource is the builder's to add, before any SDK server is
 * attached: this one (`jobResource(JOB_SERVING)`) where the tools are loaded at start, the
 * lazy one (job_resource.ts) where they are loaded on first use.
 */
export function registerJobTools(registry: ToolRegistry): void {
  registry.add(getCommandResult);
}
