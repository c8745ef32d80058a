/**
 * Watching one pane for a wait: what it prints (control mode's `%output`, as it happens),
 * whether its process is still there, and where its output began. `wait_for_text`,
 * `wait_for_idle`, `run_command` and `get_command_result` share it, with the timeouts they all
 * take.
 *
 * A watch is event-driven: a control-mode connection delivers `%output` — every byte the pane
 * writes — so a wait wakes within milliseconds of the text appearing. Where control mode is
 * unavailable (no session a control client may attach to, too many clients) it polls the
 * pane's content instead and says so (`transport: "polling"`). Either way only output written
 * after the call began counts; what was already on the screen is reported separately.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { int } from "../mcp/schemas.ts";
import { controlFor, ControlUnavailable, execFast } from "../tmux/control.ts";
import type { Watch, WatchBatch } from "../tmux/control_connection.ts";
import { TerminalText } from "../tmux/terminal_text.ts";
import { trimRow } from "../tmux/capture.ts";
import { decodeBytes, flag, newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { classifyStderr, TmuxError } from "../tmux/run.ts";
import type { PaneRow } from "../tmux/snapshot.ts";
import {
  parseServerIdentity,
  sameServer,
  SERVER_IDENTITY_FORMAT,
  type ServerIdentity,
  serversText,
} from "../tmux/server_identity.ts";
// ---------------------------------------------------------------------------------------------
// Timeouts

/** Timeout of a wait or a command when none is asked for. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The ceiling: a tool call must not block its client for longer. */
export const MAX_TIMEOUT_MS = 120_000;
/** The floor: shorter would be a race, not a wait. */
export const MIN_TIMEOUT_MS = 100;

/** A requested timeout clamped into [{@link MIN_TIMEOUT_MS}, {@link MAX_TIMEOUT_MS}]. */
export function clampTimeout(
  requested: number | undefined,
): { effective: number; clamped: boolean } {
  if (requested === undefined) return { effective: DEFAULT_TIMEOUT_MS, clamped: false };
  const effective = Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, Math.round(requested)));
  return { effective, clamped: effective !== requested };
}

/** The `timeoutMs` argument both waiting tools take. */
export const timeoutField = int().optional().describe(
  `ms; default ${DEFAULT_TIMEOUT_MS}, clamped to ${MIN_TIMEOUT_MS}-${MAX_TIMEOUT_MS}`,
);

// ---------------------------------------------------------------------------------------------
// Probing a pane

/** What one look at a pane tells. */
export interface PaneProbe {
  /** False when the pane no longer exists. */
  readonly exists: boolean;
  readonly dead: boolean;
  readonly deadStatus: number | null;
  readonly pid: number;
  readonly historySize: number;
  readonly cursorX: number;
  readonly cursorY: number;
  /** `pane_current_command`: the foreground process of the pane's terminal. */
  readonly command: string;
  /** `pane_width`: rows reflow when it changes. */
  readonly width: number;
  /** `history_limit`: at it tmux drops the oldest tenth of the history. */
  readonly historyLimit: number;
  /** `alternate_on`: the screen shown keeps no history (what scrolls off it is gone). */
  readonly alternateScreen: boolean;
  /** `pane_input_off` (`select-pane -d`): tmux drops every key and paste sent to the pane. */
  readonly inputOff: boolean;
  /**
   * The tmux server's pid (0 when the pane was not found): a server restarted on the same
   * socket gives pane ids out again from %0, so a pane of the same id there is another pane.
   */
  readonly serverPid: number;
  /**
   * When that server started (`#{start_time}`): a server restarted in a pid namespace of its
   * own (a container) has the same pid again, and panes of the same ids and pids.
   */
  readonly serverStart: number;
}

/** The server a probe found the pane on. */
type ProbedServer = Pick<PaneProbe, "serverPid" | "serverStart">;

const PROBE_FIELDS = [
  "#{pane_id}",
  "#{pane_dead}",
  "#{pane_dead_status}",
  "#{pane_pid}",
  "#{history_size}",
  "#{cursor_x}",
  "#{cursor_y}",
  "#{pane_current_command}",
  "#{pane_width}",
  "#{history_limit}",
  "#{pid}",
  "#{alternate_on}",
  "#{pane_input_off}",
  "#{start_time}",
];

const GONE: PaneProbe = {
  exists: false,
  dead: true,
  deadStatus: null,
  pid: 0,
  historySize: 0,
  cursorX: 0,
  cursorY: 0,
  command: "",
  width: 0,
  historyLimit: 0,
  alternateScreen: false,
  inputOff: false,
  serverPid: 0,
  serverStart: 0,
};

/** The failure of a watch whose tmux server is gone, or was replaced by another on its socket. */
function serverGone(
  ctx: TmuxContext,
  paneId: string,
  was?: ServerIdentity,
  now?: ServerIdentity,
): ToolFailure {
  return new ToolFailure(
    was !== undefined && now !== undefined
      ? `The tmux server on ${ctx.socketLabel} went away while ${paneId} was watched, and ` +
        `another one now answers on that socket (it was restarted: ${serversText(was, now)}); ` +
        `pane ${paneId} there is another pane, so nothing it shows is this wait's outcome.`
      : `The tmux server on ${ctx.socketLabel} went away while ${paneId} was watched (it was ` +
        "killed, crashed, or its last pane exited).",
    "create_session starts a new one; list_servers shows the servers that are running.",
  );
}

/**
 * Probes a pane and, in the same tmux invocation, runs `after` (a capture): one instant for
 * both. Goes over the control channel when it can.
 *
 * With `on` (the probe that first found the pane: its server), a pane read from another server
 * (one restarted on the same socket) throws the failure of a server gone, and so does a pane
 * not found when the server that answers is another: the pane watched cannot be on it.
 */
async function probeWith(
  ctx: TmuxContext,
  paneId: string,
  after: readonly string[],
  on?: ProbedServer,
  guard: string = newGuard(),
): Promise<Probed> {
  const seen = await probeAny(ctx, paneId, after, guard);
  if (!on?.serverPid) return seen;
  const server = serverOf(on);
  if (seen.probe.exists) {
    const found = serverOf(seen.probe);
    if (!sameServer(found, server)) throw serverGone(ctx, paneId, server, found);
    return seen;
  }
  // Not found: on this server, or on another that answers on the socket now? (One more call,
  // only once the pane is gone.) No server at all: the pane is gone with it.
  const now = await serverNow(ctx);
  if (now !== null && !sameServer(now, server)) throw serverGone(ctx, paneId, server, now);
  return seen;
}

function serverOf(probe: ProbedServer): ServerIdentity {
  return { pid: probe.serverPid, startTime: probe.serverStart };
}

/** The tmux server answering on the socket now; null when none does. */
async function serverNow(ctx: TmuxContext): Promise<ServerIdentity | null> {
  const result = await execFast(ctx.runner, ctx.address, [
    "display-message",
    "-p",
    SERVER_IDENTITY_FORMAT,
  ], {
    signal: ctx.signal,
  });
  const stderr = result.stderr.trim();
  if (result.code !== 0) {
    const kind = classifyStderr(stderr);
    if (kind === "no-server") return null;
    throw new TmuxError(kind, stderr.split("\n")[0] || "tmux failed", stderr);
  }
  const server = parseServerIdentity(new TextDecoder().decode(result.stdout).trim());
  if (server === null || server.pid <= 0) {
    throw new TmuxError("failed", "tmux printed no server pid", stderr);
  }
  return server;
}

/** What {@link probeAny} read. */
interface Probed {
  readonly probe: PaneProbe;
  /** What the commands chained after the probe printed, as lines, trailing blank ones dropped. */
  readonly lines: string[];
  /** The same whole ("" when tmux failed). */
  readonly text: string;
  /** Records those commands printed with the probe's guard (a second probe), as probes. */
  readonly later: PaneProbe[];
}

async function probeAny(
  ctx: TmuxContext,
  paneId: string,
  after: readonly string[],
  guard: string,
): Promise<Probed> {
  const args = ["display-message", "-p", "-t", paneId, recordFormat(guard, PROBE_FIELDS)];
  if (after.length > 0) args.push(";", ...after);
  const result = await execFast(ctx.runner, ctx.address, args, { signal: ctx.signal });
  const records = parseRecords(result.stdout, guard, PROBE_FIELDS.length);
  const stderr = result.stderr.trim();
  if (result.code !== 0 && records.length === 0) {
    const kind = classifyStderr(stderr);
    if (kind === "no-target") return { probe: GONE, lines: [], text: "", later: [] };
    // The whole server went, not just this pane: no outcome can be read from it.
    if (kind === "no-server") throw serverGone(ctx, paneId);
    throw new TmuxError(kind, stderr.split("\n")[0] || "tmux failed", stderr);
  }
  const probe = toProbe(records[0] ?? []);
  if (!probe.exists) return { probe, lines: [], text: "", later: [] };
  if (result.code !== 0) return { probe, lines: [], text: "", later: [] };
  const text = decodeBytes(afterRecord(result.stdout, guard));
  const later = records.slice(1).map(toProbe);
  return { probe, lines: trimTrailingBlank(text.split("\n")), text, later };
}

/** A probe from its record's fields ({@link PROBE_FIELDS}); {@link GONE} without a pane id. */
function toProbe(r: readonly string[]): PaneProbe {
  if (!r[0]) return GONE;
  const dead = flag(r[1]);
  return {
    exists: true,
    dead,
    deadStatus: dead && r[2] !== "" ? Number(r[2]) : null,
    pid: Number(r[3]) || 0,
    historySize: Number(r[4]) || 0,
    cursorX: Number(r[5]) || 0,
    cursorY: Number(r[6]) || 0,
    command: r[7],
    width: Number(r[8]) || 0,
    historyLimit: Number(r[9]) || 0,
    serverPid: Number(r[10]) || 0,
    alternateScreen: flag(r[11]),
    inputOff: flag(r[12]),
    serverStart: Number(r[13]) || 0,
  };
}

/**
 * A dead pane's probe with its exit status, when tmux can learn it. tmux marks a pane dead when
 * its terminal closes and learns the status when it reaps the process on SIGCHLD — and tmux
 * 3.3a sometimes misses that signal: the process stays a zombie, and the pane's status (and
 * `pane_dead_time`) stays empty until some other child of the server exits (seen 3 in 8 on
 * `exit 3` in a remain-on-exit pane). So when the status is slow to come, tmux is given a child
 * that exits at once (`if-shell true`, a `/bin/sh` that tmux itself runs and reaps), whose
 * SIGCHLD makes it reap every exited child, the pane's process too. Waits at most
 * {@link DEAD_STATUS_WAIT_MS}; a pane that is gone or alive is returned as it is.
 */
export async function learnExitStatus(
  ctx: TmuxContext,
  paneId: string,
  probe: PaneProbe,
): Promise<PaneProbe> {
  let now = probe;
  const until = performance.now() + DEAD_STATUS_WAIT_MS;
  let nudgeAt = performance.now() + 50;
  while (now.exists && now.dead && now.deadStatus === null && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (performance.now() >= nudgeAt) {
      nudgeAt = performance.now() + 250;
      await execFast(ctx.runner, ctx.address, ["if-shell", "true", ""], { signal: ctx.signal })
        .catch(() => {});
    }
    now = (await probeWith(ctx, paneId, [], probe)).probe;
  }
  return now;
}

/** The pane's state now, as {@link PaneWatch} sees it: its process, command and cursor. */
export async function probePane(ctx: TmuxContext, paneId: string): Promise<PaneProbe> {
  return (await probeWith(ctx, paneId, [])).probe;
}

/**
 * Waits (bounded) until a pane that has written nothing yet writes something: a shell that
 * has not drawn its first prompt may not have set up its line editor, and bash drops what is
 * typed before then. Returns at once for a pane that has output already. Resolves to the
 * latest probe of the pane: `start` itself when there was no need to wait.
 */
export async function awaitFirstOutput(
  ctx: TmuxContext,
  paneId: string,
  start: PaneProbe,
  maxMs: number,
): Promise<PaneProbe> {
  const blank = (p: PaneProbe) =>
    p.exists && p.historySize === 0 && p.cursorX === 0 && p.cursorY === 0;
  let latest = start;
  const until = performance.now() + maxMs;
  while (blank(latest) && performance.now() < until && !ctx.signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    latest = (await probeWith(ctx, paneId, [], start)).probe;
  }
  return latest;
}

/** The bytes after the framed record (and its newline): the chained command's output. */
function afterRecord(stdout: Uint8Array, guard: string): Uint8Array {
  const end = new TextEncoder().encode(`${guard}E\n`);
  outer: for (let i = 0; i + end.length <= stdout.length; i++) {
    for (let j = 0; j < end.length; j++) if (stdout[i + j] !== end[j]) continue outer;
    return stdout.subarray(i + end.length);
  }
  return new Uint8Array();
}

/** Index of the first UTF-16 unit where two texts differ (the shorter one's length if none). */
function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Whether `i` falls inside a surrogate pair of `text` (between its two halves). */
export function insidePair(text: string, i: number): boolean {
  const low = text.charCodeAt(i);
  const high = text.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
}

/**
 * What of `now` differs from `was`, as UTF-16 indices on code point boundaries: from the first
 * character that differs to just past the last one. The common start is left out first, then
 * the common end of what is left, as a diff finds it ("abc" then "abcabc" is [3, 6), not
 * nothing). Null when `now` is `was` or `was` cut short: nothing was written. A span with
 * `from` equal to `to` is text taken out there.
 */
export function changedSpan(was: string, now: string): { from: number; to: number } | null {
  let from = firstDifference(was, now);
  if (from >= now.length) return null;
  let same = 0;
  while (
    same < was.length - from && same < now.length - from &&
    was.charCodeAt(was.length - 1 - same) === now.charCodeAt(now.length - 1 - same)
  ) same++;
  let to = now.length - same;
  if (insidePair(now, from)) from--;
  if (insidePair(now, to)) to++;
  return { from, to };
}

/**
 * Widths tmux gives characters, by server (its address and pid), learnt from it: the width of a
 * character is the build's to say. A tmux built with utf8proc takes it from there, one built
 * without (tmux 3.3a on most Linux systems) from the C library's wcwidth, and they disagree on
 * tens of thousands of characters: glibc draws many emoji one column wide (🛠 U+1F6E0, East
 * Asian Width "neutral"), and the vowels and finals of decomposed Hangul (NFD, as macOS names
 * files) in no column of their own. A table kept here would put a column inside the wrong
 * character on some build.
 */
const WIDTHS = new Map<string, Map<string, number>>();
/** Servers whose widths are kept (the least recently asked is forgotten first). */
const WIDTH_SERVERS = 8;
/** Characters whose width is kept per server (beyond it the map starts again). */
const WIDTHS_KEPT = 4_096;
/** Characters asked about in one tmux call (its command line stays well under tmux's limit). */
const WIDTHS_PER_CALL = 200;

/**
 * The index in `row` (a row as tmux captured it) of the cell at `column`, with each character
 * as wide as the tmux server at `ctx` draws it (zero-width ones share the cell before them);
 * past the row's end the blanks after it are counted on. ASCII needs no call; other characters
 * are asked about once per server (see {@link WIDTHS}). Where tmux cannot say (the server went
 * meanwhile), a character counts one column.
 */
export async function cellIndex(
  ctx: TmuxContext,
  serverPid: number,
  row: string,
  column: number,
): Promise<number> {
  let known: Map<string, number> | null = null;
  let failed = false;
  let i = 0;
  let at = 0;
  while (i < row.length) {
    const cp = row.codePointAt(i) as number;
    const size = cp > 0xffff ? 2 : 1;
    let width = 1;
    if (cp >= 0x80) {
      known ??= serverWidths(ctx, serverPid);
      const ch = row.slice(i, i + size);
      if (!failed && !known.has(ch)) failed = !await learnWidths(ctx, known, row, i);
      width = known.get(ch) ?? 1;
    }
    if (at + width > column) return i;
    at += width;
    i += size;
  }
  return i + Math.max(0, column - at);
}

/** The widths known for the server at `ctx` of pid `serverPid` (a new map the first time). */
function serverWidths(ctx: TmuxContext, serverPid: number): Map<string, number> {
  const a = ctx.address;
  const key = JSON.stringify([a.host ?? "", a.socketPath ?? "", a.socketName ?? "", serverPid]);
  let known = WIDTHS.get(key);
  if (known) WIDTHS.delete(key);
  else known = new Map();
  WIDTHS.set(key, known);
  while (WIDTHS.size > WIDTH_SERVERS) WIDTHS.delete(WIDTHS.keys().next().value as string);
  return known;
}

/**
 * Asks tmux the widths of the characters of `row` from `from` on that `known` lacks (up to
 * {@link WIDTHS_PER_CALL}): `#{w:}` of each as a literal, which tmux measures with the same
 * function it draws with. Only characters outside ASCII are sent, none of them special in a
 * format. False, learning nothing, when tmux fails or answers otherwise than asked.
 */
async function learnWidths(
  ctx: TmuxContext,
  known: Map<string, number>,
  row: string,
  from: number,
): Promise<boolean> {
  const ask = new Set<string>();
  for (const ch of row.slice(from)) {
    if (ch.codePointAt(0) as number < 0x80 || known.has(ch)) continue;
    ask.add(ch);
    if (ask.size >= WIDTHS_PER_CALL) break;
  }
  const chars = [...ask];
  const format = chars.map(widthOf).join(",");
  const result = await execFast(ctx.runner, ctx.address, ["display-message", "-p", format], {
    signal: ctx.signal,
  }).catch(() => null);
  const widths = result?.code === 0
    ? new TextDecoder().decode(result.stdout).trim().split(",")
    : [];
  if (widths.length !== chars.length || !widths.every((w) => /^(\d+|-)$/.test(w))) return false;
  if (known.size + chars.length > WIDTHS_KEPT) known.clear();
  // "-": a character tmux cannot measure, which it never puts in a cell (it drops it).
  chars.forEach((ch, k) => known.set(ch, widths[k] === "-" ? 0 : Number(widths[k])));
  return true;
}

/**
 * The format that prints the width of `ch` (one character outside ASCII), or "-" when tmux
 * cannot measure it. tmux 3.3a's `#{w:}` loops for ever on a character its C library gives no
 * width (a code point unassigned in its tables): the whole server stops. Trimming (`#{=3:}`)
 * drops such a character instead, so `x` followed by it trims to `x` alone, and only a
 * character that survives the trim is measured (tmux expands only the branch it picks).
 */
export function widthOf(ch: string): string {
  return `#{?#{==:#{=3:#{l:x${ch}}},x},-,#{w:#{l:${ch}}}}`;
}

/** The lines of a capture's output (each ends in a newline; a last wrapped row may not). */
function screenLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * The lines `capture-pane -J -S y` gives (the rows from screen row `y` on, wrapped rows
 * joined), made from two reads of the screen at one instant: `joined` with -J, `raw` row by
 * row with -N. Both keep a row's trailing blanks, so each joined line is the raw rows it was
 * made of, one after the other: each takes the fewest rows that make it. Null when that does
 * not account for every row, or a line that is not blank would begin with a blank row (a
 * wrapped line whose rows were erased after it wrapped): the rows could be grouped otherwise.
 */
export function rowsFrom(
  joined: readonly string[],
  raw: readonly string[],
  y: number,
): string[] | null {
  let r = 0;
  let found: string[] | null = null;
  for (let j = 0; j < joined.length; j++) {
    const line = joined[j];
    const first = r;
    if (r >= raw.length || (raw[r] === "" && line !== "")) return null;
    let made = raw[r++];
    while (made.length < line.length && r < raw.length) made += raw[r++];
    if (made !== line) return null;
    if (found === null && y >= first && y < r) {
      found = [raw.slice(y, r).join(""), ...joined.slice(j + 1)];
    }
  }
  return r === raw.length ? found : null;
}

function trimTrailingBlank(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1].trim() === "") end--;
  return lines.slice(0, end);
}

/** Whether a probe shows the process that was watched is gone (exited, pane gone, respawned). */
export function paneEnded(start: PaneProbe, now: PaneProbe): boolean {
  return !now.exists || now.dead || now.pid !== start.pid;
}

// ---------------------------------------------------------------------------------------------
// Watching a pane

/**
 * A row a watch that reads rows reports as written: whole, with where the part written since
 * the watch began starts.
 */
export interface WrittenRow {
  /** The row as it reads now (without its trailing blanks). */
  readonly text: string;
  /**
   * The row with the blanks a program wrote at its end (a prompt's `$ `), where known: what
   * patterns are matched against. `text` is its start.
   */
  readonly line?: string;
  /**
   * Where the written part starts (a UTF-16 index into `text`): the first character that
   * differs from the row as it stood at the start or at the watch's last read, whichever is
   * earlier (blanks before the start's cursor that were blank then do not count). Text that
   * ends at or before it was on the row already.
   */
  readonly from: number;
  /**
   * Where the written part ends (just past its last character; at least `from`): the row's
   * end, unless its end was there already, the same at the start and at the last read (a
   * spinner or a counter drawn again before the rest of the row). Text from it on was on the
   * row already. Absent: the row's end (with the blanks of `line` after it). A match counts
   * only if it takes in some of [from, to): starts before `to` and ends after `from`.
   */
  readonly to?: number;
  /**
   * What to report: on the start row, what was written from the start's cursor on (a prompt
   * is not output); the whole row when the row was rewritten before that cursor, and every
   * other row whole.
   */
  readonly shown: string;
}

/** What a watch reports when asked for the next thing that happened. */
export type WatchEvent =
  /**
   * New output: lines written since the last event (the unfinished last line included). A
   * watch that reads rows also gives each as a {@link WrittenRow}, in the same order.
   */
  | { readonly kind: "lines"; readonly lines: string[]; readonly rows?: readonly WrittenRow[] }
  /** Nothing new for a while: a moment to send progress. */
  | { readonly kind: "tick" }
  /** The pane's process exited (or the pane is gone, or was respawned). */
  | { readonly kind: "died"; readonly probe: PaneProbe }
  /** Its foreground program changed (only for a watch opened with `commands: true`). */
  | { readonly kind: "command"; readonly probe: PaneProbe }
  | { readonly kind: "timeout" }
  | { readonly kind: "cancelled" };

/** How long a dead pane's exit status is waited for (tmux learns it when it reaps the process). */
const DEAD_STATUS_WAIT_MS = 2_000;

/** How often a polling watch reads the pane. */
const POLL_MS = 100;
/** How often an event-driven watch checks the pane is still alive (tmux sends no event). */
const CHECK_MS = 500;
/** How often, at most, a quiet watch reports a tick. */
const TICK_MS = 1_000;
/** How often, at most, a watch that reads rows reads them while output keeps coming. */
const ROWS_MS = 20;

/**
 * A watch on one pane's new output. Open it before doing what will produce the output
 * (typing a command), so nothing written afterwards is missed.
 */
export class PaneWatch {
  /** The pane watched. */
  readonly paneId: string;
  /** `control` (event-driven) or `polling`. */
  transport: "control" | "polling" = "polling";
  /** The pane at the start. */
  start: PaneProbe = GONE;
  /** The visible screen at the start (when asked for), for "already on screen". */
  screen: string[] = [];

  readonly #ctx: TmuxContext;
  readonly #sessions: string[];
  readonly #text = new TerminalText();
  #watch: Watch | null = null;
  #queue: WatchBatch[] = [];
  #wake: (() => void) | null = null;
  #changed = false;
  #lost = false;
  #diedAfterLines: PaneProbe | null = null;
  #startAbs = 0;
  #startX = 0;
  #lastHistory = 0;
  #lastRegion: string[] = [];
  /** Whether {@link PaneWatch.#lastRegion} is a read of the rows (the baseline or a later one). */
  #lastKnown = false;
  /**
   * The rows from the start on as they stood at the start (read in the same tmux call as the
   * start's probe), so that what was on screen then (below the cursor, or after it on its row)
   * is not taken for new output; null when the pane wrote while that call ran (a hook ran in
   * it) or since: the start row is then cut at the cursor, its cells before it taken as they
   * were.
   */
  #baseline: string[] | null = null;
  #checkAt = 0;
  /**
   * Reports the pane's rows (what it shows), never the `%output` stream: output only wakes the
   * watch, which then reads the rows from the start on. The stream is not the screen: a cursor
   * move, a backspace or a one-character redraw make it say what no row shows, and a line
   * longer than the decoder's limit is cut where the screen has it whole.
   */
  #rows = false;
  /** Output came that the rows have not been read for yet (`#rows`). */
  #dirty = false;
  #readAt = 0;
  #lastWidth = 0;
  /**
   * Rows can no longer be told apart by their number: the width changed (they reflowed) or
   * tmux may have trimmed the history. The watch then reads them again (see #rebaseAt).
   */
  #rebase = false;
  /** The rows reflowed: the start row is lost, the watch starts again at the cursor's row. */
  #reflowed = false;
  #reportCommands = false;
  #command = "";

  private constructor(ctx: TmuxContext, pane: PaneRow) {
    this.#ctx = ctx;
    this.paneId = pane.id;
    this.#sessions = pane.placements.map((p) => p.sessionId);
  }

  /** Subscribes to the pane's output, then reads where its cursor is (and its screen). */
  static async open(
    ctx: TmuxContext,
    pane: PaneRow,
    options: { screen?: boolean; commands?: boolean; rows?: boolean } = {},
  ): Promise<PaneWatch> {
    const watch = new PaneWatch(ctx, pane);
    watch.#reportCommands = options.commands ?? false;
    watch.#rows = options.rows ?? false;
    try {
      await watch.#subscribe(watch.#sessions);
      // One tmux call, one instant: the probe, the screen with wrapped rows joined and row by
      // row, and a second probe that tells whether it was one instant (a hook run after the
      // probe lets the pane write in between).
      const guard = newGuard();
      const { probe, text, later } = await probeWith(
        ctx,
        pane.id,
        [
          ...["capture-pane", "-p", "-J", "-t", pane.id, ";"],
          ...["display-message", "-p", `${guard}S`, ";"],
          ...["capture-pane", "-p", "-N", "-t", pane.id, ";"],
          ...["display-message", "-p", "-t", pane.id, recordFormat(guard, PROBE_FIELDS)],
        ],
        undefined,
        guard,
      );
      if (!probe.exists) {
        throw new ToolFailure(
          `Pane ${pane.id} disappeared.`,
          "list_panes lists the panes that exist.",
        );
      }
      const split = text.indexOf(`${guard}S\n`);
      const joined = split === -1 ? "" : text.slice(0, split);
      const rest = split === -1 ? "" : text.slice(split + guard.length + 2);
      const raw = rest.slice(0, Math.max(0, rest.indexOf(`${guard}R`)));
      watch.start = probe;
      watch.#command = probe.command;
      watch.screen = options.screen ? trimTrailingBlank(joined.split("\n")) : [];
      watch.#startAbs = probe.historySize + probe.cursorY;
      watch.#startX = probe.cursorX;
      watch.#lastHistory = probe.historySize;
      watch.#lastWidth = probe.width;
      // Control watches too: a catch-up read after a lost feed, and a watch that reads rows,
      // compare with it.
      const after = later[0];
      const still = after !== undefined && after.exists &&
        after.historySize === probe.historySize && after.width === probe.width &&
        after.cursorX === probe.cursorX && after.cursorY === probe.cursorY;
      const rows = still && split !== -1
        ? rowsFrom(screenLines(joined), screenLines(raw), probe.cursorY)
        : null;
      if (rows) watch.#keepBaseline(trimTrailingBlank(rows));
      // The pane wrote in between: no baseline (the start row is cut at the cursor). Rows that
      // did not add up: read from the start's row, kept if the pane has not moved since.
      else if (still) await watch.#readBaseline(probe);
      watch.#checkAt = performance.now() + (watch.transport === "control" ? CHECK_MS : POLL_MS);
      return watch;
    } catch (error) {
      watch.close();
      throw error;
    }
  }

  /**
   * Reads the rows from the start on ({@link PaneWatch.#baseline}); kept only when the pane's
   * cursor is where the start's read left it, so nothing written since can pass for what was
   * there before.
   */
  async #readBaseline(start: PaneProbe): Promise<void> {
    const { probe, lines } = await probeWith(this.#ctx, this.paneId, [
      ...["capture-pane", "-p", "-J", "-t", this.paneId, "-S", String(start.cursorY)],
    ], start);
    const still = probe.exists && probe.historySize === start.historySize &&
      probe.cursorX === start.cursorX && probe.cursorY === start.cursorY;
    if (still) this.#keepBaseline(lines);
  }

  #keepBaseline(lines: string[]): void {
    this.#baseline = lines;
    this.#lastRegion = lines;
    this.#lastKnown = true;
  }

  async #subscribe(sessions: readonly string[]): Promise<void> {
    try {
      this.#watch = await controlFor(this.#ctx.runner, this.#ctx.address).watch(
        this.paneId,
        sessions,
        (batch) => {
          this.#queue.push(batch);
          this.#wake?.();
        },
      );
      this.transport = "control";
    } catch (error) {
      if (!(error instanceof ControlUnavailable)) throw error;
      this.#watch = null;
      this.transport = "polling";
    }
  }

  /** Stops the subscription. */
  close(): void {
    this.#watch?.close();
    this.#watch = null;
    this.#wake?.();
  }

  /** Waits for the next event, at most until `deadline` (a `performance.now()` time). */
  async next(deadline: number): Promise<WatchEvent> {
    const signal = this.#ctx.signal;
    const tickAt = performance.now() + TICK_MS;
    while (true) {
      if (signal.aborted) return { kind: "cancelled" };
      if (this.#queue.length > 0) {
        const lines = this.#drain();
        if (lines.length > 0 && !this.#rows) return { kind: "lines", lines };
      }
      if (this.#diedAfterLines) return await this.#died(this.#diedAfterLines);
      if (this.#lost) {
        this.#lost = false;
        const event = await this.#recover();
        if (event) return event;
      }
      let now = performance.now();
      if (this.#dirty && this.transport === "control" && now >= this.#readAt) {
        this.#dirty = false;
        this.#readAt = now + ROWS_MS;
        const event = await this.#poll();
        if (event) return event;
        now = performance.now();
      }
      if (this.transport === "polling" && now >= this.#checkAt) {
        this.#checkAt = now + POLL_MS;
        const event = await this.#poll();
        if (event) return event;
      } else if (this.transport === "control" && (this.#changed || now >= this.#checkAt)) {
        this.#changed = false;
        this.#checkAt = now + CHECK_MS;
        const { probe } = await probeWith(this.#ctx, this.paneId, [], this.start);
        if (paneEnded(this.start, probe)) {
          // Output the pane wrote before it ended may still be queued: report it first.
          if (this.#queue.length > 0) {
            this.#diedAfterLines = probe;
            continue;
          }
          return await this.#died(probe);
        }
        if (this.#commandChanged(probe)) return { kind: "command", probe };
      }
      now = performance.now();
      if (now >= deadline) return { kind: "timeout" };
      if (now >= tickAt) return { kind: "tick" };
      const readAt = this.#dirty ? this.#readAt : Infinity;
      await this.#sleep(Math.min(deadline, tickAt, this.#checkAt, readAt) - now, signal);
    }
  }

  /** The death event, with the exit status once tmux knows it (see {@link learnExitStatus}). */
  async #died(probe: PaneProbe): Promise<WatchEvent> {
    return { kind: "died", probe: await learnExitStatus(this.#ctx, this.paneId, probe) };
  }

  #drain(): string[] {
    const lines: string[] = [];
    for (const batch of this.#queue.splice(0)) {
      if (batch.lost) this.#lost = true;
      if (batch.changed) this.#changed = true;
      if (batch.output.length > 0) this.#dirty = this.#rows;
      for (const chunk of batch.output) lines.push(...this.#text.push(chunk));
    }
    // The partial line only when text was added to it: not for escape sequences alone.
    const partial = this.#text.takeWritten() ? this.#text.partial : "";
    return partial === "" ? lines : [...lines, partial];
  }

  /** The control feed was lost: catch up by reading the pane, then subscribe again. */
  async #recover(): Promise<WatchEvent | null> {
    this.#watch?.close();
    this.#watch = null;
    const placements = await execFast(
      this.#ctx.runner,
      this.#ctx.address,
      ["list-panes", "-a", "-F", `${SERVER_IDENTITY_FORMAT} #{pane_id} #{session_id}`],
      { signal: this.#ctx.signal },
    );
    const rows = new TextDecoder().decode(placements.stdout).split("\n")
      .map((l) => l.split(" ")).filter((r) => r.length === 4);
    // The feed is lost when the server went: one answering now may be another, restarted on
    // the same socket (with the same pid too, in a container), whose pane of this id is
    // another pane. Never subscribe to that.
    const was = serverOf(this.start);
    const other = rows.map(([pid, start]) => ({ pid: Number(pid), startTime: Number(start) }))
      .find((server) => !sameServer(server, was));
    if (other) throw serverGone(this.#ctx, this.paneId, was, other);
    const sessions = rows.filter(([, , p]) => p === this.paneId).map(([, , , s]) => s);
    if (sessions.length > 0) await this.#subscribe(sessions);
    else this.transport = "polling";
    return await this.#poll();
  }

  /** Reads everything written since the start by capturing the pane; reports death too. */
  async #poll(): Promise<WatchEvent | null> {
    const { probe, lines, fresh } = await this.region();
    if (fresh !== undefined) {
      if (fresh.length > 0) {
        if (paneEnded(this.start, probe)) this.#diedAfterLines = probe;
        // Rows not seen before: whole.
        const rows = this.#rows
          ? fresh.map((line) => ({ text: trimRow(line), line, from: 0, shown: trimRow(line) }))
          : undefined;
        return { kind: "lines", lines: rows ? rows.map((r) => r.shown) : fresh, rows };
      }
    } else if (this.#rows) {
      if (lines.length > 0 && lines.join("\n") !== this.#lastRegion.join("\n")) {
        const cursor = await this.#cursorIn(lines);
        const rows = this.#changedRows(lines, this.#lastKnown ? this.#lastRegion : null, cursor);
        this.#lastRegion = lines;
        this.#lastKnown = true;
        if (rows.length > 0) {
          if (paneEnded(this.start, probe)) this.#diedAfterLines = probe;
          return { kind: "lines", lines: rows.map((r) => r.shown), rows };
        }
      }
    } else if (lines.length > 0 && lines.join("\n") !== this.#lastRegion.join("\n")) {
      // Every row written since the start.
      this.#lastRegion = lines;
      const written = this.#writtenRows(lines, await this.#cursorIn(lines));
      if (written.length > 0) {
        if (paneEnded(this.start, probe)) this.#diedAfterLines = probe;
        return { kind: "lines", lines: written };
      }
    }
    if (paneEnded(this.start, probe)) return await this.#died(probe);
    if (this.#commandChanged(probe)) return { kind: "command", probe };
    return null;
  }

  /**
   * Where the start's cursor is on the start row, as an index into the row as it stood at the
   * start (the baseline's), or as it reads now (`lines`) when that is not known: its cells
   * before the cursor are taken as they were. Columns are tmux's (see {@link cellIndex}).
   */
  async #cursorIn(lines: readonly string[]): Promise<number> {
    const row = this.#baseline === null ? lines[0] : this.#baseline[0];
    return await cellIndex(this.#ctx, this.start.serverPid, row ?? "", this.#startX);
  }

  /**
   * For a watch that reads rows: of the rows from the start on, those changed since the last
   * read (`last`; null when there was none), each whole with where its written part starts
   * (see {@link WrittenRow}). A row redrawn in place (a progress bar's `\r`) is one row, in its
   * latest form, and counts even when it is back to what it showed at the start: it changed
   * in between. `startCursor` is where the start's cursor is on the start row
   * ({@link PaneWatch.#cursorIn}).
   */
  #changedRows(
    lines: readonly string[],
    last: readonly string[] | null,
    startCursor: number,
  ): WrittenRow[] {
    const base = this.#baseline;
    const out: WrittenRow[] = [];
    lines.forEach((line, i) => {
      const text = trimRow(line);
      if (text === "") return;
      const before = last === null ? null : trimRow(last[i] ?? "");
      if (text === before) return;
      // What differs from the row at the last read and from the row at the start: written
      // since the start is what either tells.
      const sinceLast = before === null ? null : changedSpan(before, text);
      let sinceStart: { from: number; to: number } | null;
      let cursor = 0;
      let was: string | null = null;
      if (base === null) {
        // What the row held at the start is not known: the start row from the cursor's column
        // (its cells before it taken as they were), every other row whole.
        cursor = i === 0 ? startCursor : 0;
        sinceStart = cursor < text.length ? { from: cursor, to: text.length } : null;
      } else {
        was = trimRow(base[i] ?? "");
        sinceStart = changedSpan(was, text);
        if (i === 0) cursor = startCursor;
      }
      const spans = [sinceStart, sinceLast].filter((s) => s !== null);
      if (spans.length === 0) return;
      let from = Math.min(...spans.map((s) => s.from));
      let to = Math.max(...spans.map((s) => s.to));
      if (was !== null && i === 0) {
        // Blanks up to the start's cursor that were blank then were there before (typing at a
        // prompt "P> " is "x", not " x").
        while (from < cursor && text[from] === " " && (was[from] ?? " ") === " ") from++;
        to = Math.max(to, from);
      }
      if (from >= text.length) return;
      // The start row rewritten before the start's cursor (a `\r` redraw) is told whole; text
      // written from that cursor on is told from where it begins.
      const shown = i === 0 && from >= cursor ? text.slice(from) : text;
      out.push({ text, line, from, to, shown });
    });
    return out;
  }

  /**
   * Of the rows from the start on, those written since the start: each that differs from the
   * baseline (the start row from where it first differs: characters, not columns, which wide
   * characters and combining marks tell apart). Without a baseline, every row, the start row
   * from the start's cursor on (`startCursor`, see {@link PaneWatch.#cursorIn}).
   */
  #writtenRows(lines: readonly string[], startCursor: number): string[] {
    const base = this.#baseline;
    if (base === null) return [lines[0].slice(startCursor), ...lines.slice(1)];
    const out: string[] = [];
    lines.forEach((line, i) => {
      const was = base[i];
      if (line === was) return;
      if (i > 0 || was === undefined) out.push(line);
      else {
        let same = 0;
        while (same < was.length && same < line.length && was[same] === line[same]) same++;
        // capture-pane drops a row's trailing blanks: those up to the start's cursor were
        // there before (typing at a prompt "P> " is "x", not " x").
        if (same === was.length) {
          while (same < startCursor && same < line.length && line[same] === " ") same++;
        }
        out.push(line.slice(same));
      }
    });
    return out;
  }

  /**
   * Whether the pane's foreground program changed since it was last reported, for a watch that
   * reports that: read from the probes the watch makes anyway (its liveness check), never an
   * extra call.
   */
  #commandChanged(probe: PaneProbe): boolean {
    if (!this.#reportCommands || !probe.exists || probe.command === this.#command) return false;
    this.#command = probe.command;
    return true;
  }

  /**
   * The pane's content from the row its cursor was on at the start to its end, wrapped lines
   * joined, rows whole. `margin` rows before the start are included, for callers that look
   * for their own marker;
   * `margin: "all"` reads the whole history (where the start is no longer known exactly).
   * `ctx` is the call reading it (a later call may read what an earlier one watched).
   */
  async region(
    margin: number | "all" = 0,
    ctx: TmuxContext = this.#ctx,
  ): Promise<{ probe: PaneProbe; lines: string[]; fresh?: string[] }> {
    const { probe: now } = await probeWith(ctx, this.paneId, [], this.start);
    if (!now.exists) return { probe: now, lines: [] };
    // At its limit tmux drops the oldest tenth of the history, then goes on adding rows: the
    // size can come back to or above what it was, and rows moved up by an unknown number.
    const trimZone = now.historyLimit - Math.max(1, Math.floor(now.historyLimit / 10));
    if (
      now.historySize < this.#lastHistory ||
      (now.historySize !== this.#lastHistory && now.historySize >= trimZone)
    ) {
      // Rows moved up by at least the drop seen.
      this.#startAbs = Math.max(
        0,
        this.#startAbs - Math.max(0, this.#lastHistory - now.historySize),
      );
      this.#rebase = true;
    }
    this.#lastHistory = now.historySize;
    if (now.width !== this.#lastWidth) {
      // The rows reflowed: the start's row number, and the baseline by row, no longer hold.
      this.#lastWidth = now.width;
      this.#rebase = true;
      this.#reflowed = true;
    }
    if (this.#rebase && margin === 0) return await this.#rebaseAt(now, ctx);
    const from = margin === "all"
      ? "-"
      : String(Math.max(0, this.#startAbs - margin) - now.historySize);
    const { probe, lines } = await probeWith(ctx, this.paneId, [
      "capture-pane",
      "-p",
      "-J",
      "-t",
      this.paneId,
      "-S",
      from,
    ], this.start);
    return { probe, lines };
  }

  /**
   * Reads the rows again where their numbers no longer hold (a width change, a history trim):
   * from the cursor's row after a width change, else from the start as estimated (never
   * before it: tmux drops at least what the size fell by). Rows not seen in the last read or
   * the baseline are new (a watch that reads rows; for the others any change is output);
   * what the rows show then is the new baseline, kept once the pane did not move between the
   * probe and this read (else read again next time).
   */
  async #rebaseAt(
    now: PaneProbe,
    ctx: TmuxContext,
  ): Promise<{ probe: PaneProbe; lines: string[]; fresh: string[] }> {
    const from = this.#reflowed ? now.cursorY : this.#startAbs - now.historySize;
    const { probe, lines } = await probeWith(ctx, this.paneId, [
      ...["capture-pane", "-p", "-J", "-t", this.paneId, "-S", String(from)],
    ], this.start);
    const seen = new Set([...this.#lastRegion, ...(this.#baseline ?? [])]);
    const changed = lines.join("\n") !== this.#lastRegion.join("\n");
    const fresh = !changed
      ? []
      : this.#rows
      ? lines.filter((line) => trimRow(line) !== "" && !seen.has(line))
      : lines;
    this.#lastRegion = lines;
    this.#lastKnown = true;
    const still = probe.exists && probe.historySize === now.historySize &&
      probe.cursorX === now.cursorX && probe.cursorY === now.cursorY && probe.width === now.width;
    if (still) {
      this.#rebase = false;
      if (this.#reflowed) {
        this.#reflowed = false;
        this.#startAbs = now.historySize + now.cursorY;
        this.#startX = now.cursorX;
      }
      this.#baseline = lines;
    }
    return { probe, lines, fresh };
  }

  /**
   * The last lines of the pane's screen; what the stream last showed when the pane is gone.
   * Each without its trailing blanks: `-J` keeps the blanks a program wrote (a full-screen
   * program clears its rows with them), which would otherwise be most of a tail.
   */
  async tail(maxLines: number): Promise<string[]> {
    const { probe, lines } = await probeWith(this.#ctx, this.paneId, [
      "capture-pane",
      "-p",
      "-J",
      "-t",
      this.paneId,
    ], this.start);
    const recent = probe.exists && lines.length > 0 ? lines : this.#text.recent();
    return trimTrailingBlank((recent.length > 0 ? recent : this.#lastRegion).map(trimRow))
      .slice(-maxLines);
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done, { once: true });
      this.#wake = done;
    });
  }
}
