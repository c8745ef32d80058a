/**
 * Probing a pane: one tmux call that reads what a watch needs of it (its process, whether it is
 * dead and with what status, its cursor, history and width, the server it is on), with commands
 * chained after it read at the same instant. A pane gone is told apart from its server gone or
 * replaced by another on the same socket. Also what probes alone tell: whether the watched
 * process ended, its exit status once tmux learns it, a new pane's first output.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { isNoServer, SERVER_GONE_HINT, ToolFailure } from "../mcp/errors.ts";
import { SCREEN_ROWS } from "../tmux/capture.ts";
import { execFast } from "../tmux/control.ts";
import { drawnNothing, tmuxChild } from "../tmux/foreground.ts";
import { decodeBytes, flag, newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { classifyStderr, TmuxError } from "../tmux/tmux_error.ts";
import { shownChain, shownChainOutput } from "../tmux/shown_cells.ts";
import {
  parseServerIdentity,
  sameServer,
  SERVER_IDENTITY_FORMAT,
  type ServerIdentity,
  serversText,
} from "../tmux/server_identity.ts";
import { trimTrailingBlank } from "./captured_rows.ts";

/** What one look at a pane tells. */
export interface PaneProbe {
  /** False when the pane no longer exists. */
  readonly exists: boolean;
  readonly dead: boolean;
  readonly deadStatus: number | null;
  /** The signal that ended a dead pane's process (it has no exit status then), when known. */
  readonly deadSignal: number | null;
  readonly pid: number;
  readonly historySize: number;
  readonly cursorX: number;
  readonly cursorY: number;
  /** `pane_current_command`: the foreground process of the pane's terminal. */
  readonly command: string;
  /** `pane_width`: rows reflow when it changes. */
  readonly width: number;
  /**
   * The screen's rows (the last row is `historySize + height - 1`): `pane_height`, or the one
   * row tmux keeps for a pane the layout left none ({@link SCREEN_ROWS}).
   */
  readonly height: number;
  /** `history_limit`: at it tmux drops the oldest tenth of the history. */
  readonly historyLimit: number;
  /**
   * `scroll_region_upper` and `scroll_region_lower`: the screen rows a scroll moves (a program
   * that keeps a header or a status line sets them). tmux moves the region's top row into the
   * history and leaves the rows outside it where they are on the screen.
   */
  readonly regionUpper: number;
  readonly regionLower: number;
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

/** The fields of one probe, in the order {@link toProbe} reads them. */
export const PROBE_FIELDS = [
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
  SCREEN_ROWS,
  "#{scroll_region_upper}",
  "#{scroll_region_lower}",
  "#{pane_dead_signal}",
];

/** The probe of a pane that is not there. */
export const GONE: PaneProbe = {
  exists: false,
  dead: true,
  deadStatus: null,
  deadSignal: null,
  pid: 0,
  historySize: 0,
  cursorX: 0,
  cursorY: 0,
  command: "",
  width: 0,
  height: 0,
  regionUpper: 0,
  regionLower: 0,
  historyLimit: 0,
  alternateScreen: false,
  inputOff: false,
  serverPid: 0,
  serverStart: 0,
};

/**
 * A watch's server gone: `socketLabel` names its socket, `restarted` (when another server now
 * answers there) says which server went and which came.
 */
export class ServerGone extends ToolFailure {
  constructor(
    message: string,
    hint: string,
    readonly socketLabel: string,
    readonly restarted?: string,
  ) {
    super(message, hint);
  }
}

/**
 * What a failure says of a server gone, when it means one: the socket's label (`socketLabel`
 * unless the failure names its own), and a sentence naming the server that now answers there,
 * where `paneId` is another pane (empty when none does). Undefined for any other failure.
 */
export function goneServer(
  error: unknown,
  socketLabel: string,
  paneId: string,
): { label: string; restarted: string } | undefined {
  if (error instanceof ServerGone) {
    return {
      label: error.socketLabel,
      restarted: error.restarted === undefined ? "" : ` Another server now answers on that ` +
        `socket (it was restarted: ${error.restarted}); pane ${paneId} there is another pane.`,
    };
  }
  if (isNoServer(error)) return { label: socketLabel, restarted: "" };
  return undefined;
}

/** Why a server went, where a command typed into it may have ended it. */
export const GONE_BY_ITSELF = "it was killed, crashed, or its last pane exited: exit in a last " +
  "pane, or tmux kill-server, does that, so the command may have done it itself";

/** What to do next once the server a command ran on is gone. */
export const AFTER_GONE = "create_session starts a new server; list_servers shows the servers " +
  "that are running.";

/** The failure of a watch whose tmux server is gone, or was replaced by another on its socket. */
export function serverGone(
  ctx: TmuxContext,
  paneId: string,
  was?: ServerIdentity,
  now?: ServerIdentity,
): ServerGone {
  const restarted = was !== undefined && now !== undefined ? serversText(was, now) : undefined;
  return new ServerGone(
    restarted !== undefined
      ? `The tmux server on ${ctx.socketLabel} went away while ${paneId} was watched, and ` +
        `another one now answers on that socket (it was restarted: ${restarted}); ` +
        `pane ${paneId} there is another pane, so nothing it shows is this wait's outcome.`
      : `The tmux server on ${ctx.socketLabel} went away while ${paneId} was watched (it was ` +
        "killed, crashed, or its last pane exited).",
    SERVER_GONE_HINT,
    ctx.socketLabel,
    restarted,
  );
}

/**
 * Probes a pane and, in the same tmux invocation, runs `after` (a capture): one instant for
 * both. Goes over the control channel when it can.
 *
 * With `on` (the probe that first found the pane: its server), a pane read from another server
 * (one restarted on the same socket) throws the failure of a server gone, and so does a pane
 * not found when the server that answers is another: the pane watched cannot be on it.
 * With `answerBound`, an answer past it fails with `AnswerPastBound` (see RunOptions).
 */
export async function probeWith(
  ctx: TmuxContext,
  paneId: string,
  after: readonly string[],
  on?: ProbedServer,
  guard: string = newGuard(),
  answerBound?: number,
): Promise<Probed> {
  const seen = await probeAny(ctx, paneId, after, guard, answerBound);
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

/** The identity of the server a probe found the pane on, to compare with another. */
export function serverOf(probe: ProbedServer): ServerIdentity {
  return { pid: probe.serverPid, startTime: probe.serverStart };
}

/** The tmux server answering on the socket now; null when none does. */
async function serverNow(ctx: TmuxContext): Promise<ServerIdentity | null> {
  const result = await execFast(ctx.runner, ctx.address, [
    "display-message",
    "-p",
    SERVER_IDENTITY_FORMAT,
  ], ctx.readOptions());
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
  answerBound?: number,
): Promise<Probed> {
  const args = ["display-message", "-p", "-t", paneId, recordFormat(guard, PROBE_FIELDS)];
  // Every capture among the commands reads as a person sees the rows (see shown_cells.ts).
  if (after.length > 0) args.push(";", ...shownChain(after, guard));
  const options = ctx.readOptions();
  const result = await execFast(
    ctx.runner,
    ctx.address,
    args,
    answerBound === undefined ? options : { ...options, answerBound },
  );
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
  const text = decodeBytes(shownChainOutput(afterRecord(result.stdout, guard), guard));
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
    deadSignal: dead && r[17] !== "" ? Number(r[17]) : null,
    pid: Number(r[3]) || 0,
    historySize: Number(r[4]) || 0,
    cursorX: Number(r[5]) || 0,
    cursorY: Number(r[6]) || 0,
    command: r[7],
    width: Number(r[8]) || 0,
    height: Number(r[14]) || 0,
    regionUpper: Number(r[15]) || 0,
    regionLower: Number(r[16]) || 0,
    historyLimit: Number(r[9]) || 0,
    serverPid: Number(r[10]) || 0,
    alternateScreen: flag(r[11]),
    inputOff: flag(r[12]),
    serverStart: Number(r[13]) || 0,
  };
}

/**
 * Why a command's output may miss its end when the pane's process exited before the command's
 * end marker: tmux closes a pane's terminal once it learns its process exited, and drops what
 * it had not read from it yet (tmux 3.3a; a busy tmux learns of the exit first).
 */
export const DIED_OUTPUT_NOTE = "what it printed last may be missing: tmux closes a pane's " +
  "terminal when its process exits, dropping what it had not read yet";

/** How a dead pane's process ended, for a summary: ` (status 3)`, ` (signal 9)`, or nothing. */
export function endedBy(status: number | null, signal: number | null): string {
  return status !== null ? ` (status ${status})` : signal !== null ? ` (signal ${signal})` : "";
}

/** How long a dead pane's exit status is waited for (tmux learns it when it reaps the process). */
const DEAD_STATUS_WAIT_MS = 2_000;
/**
 * A dead pane's probe with its exit status (or the signal that ended it, which leaves none),
 * when tmux can learn it. tmux marks a pane dead when its terminal closes and learns the status
 * when it reaps the process on SIGCHLD — and tmux 3.3a sometimes misses that signal: the
 * process stays a zombie, and the pane's status (and `pane_dead_time`) stays empty until some
 * other child of the server exits (seen 3 in 8 on `exit 3` in a remain-on-exit pane). So when
 * the status is slow to come, tmux is given a child that exits at once (`if-shell -b true`, a
 * `/bin/sh` that tmux itself runs and reaps), whose SIGCHLD makes it reap every exited child,
 * the pane's process too. Waits at most {@link DEAD_STATUS_WAIT_MS}; a pane that is gone or
 * alive is returned as it is.
 */
export async function learnExitStatus(
  ctx: TmuxContext,
  paneId: string,
  probe: PaneProbe,
): Promise<PaneProbe> {
  let now = probe;
  const until = performance.now() + DEAD_STATUS_WAIT_MS;
  let nudgeAt = performance.now() + 50;
  // A process a signal ended has no exit status: tmux knows the signal then, and that is all.
  const unknown = (p: PaneProbe) =>
    p.exists && p.dead && p.deadStatus === null && p.deadSignal === null;
  while (unknown(now) && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (performance.now() >= nudgeAt) {
      nudgeAt = performance.now() + 250;
      // In the background (-b): tmux may miss this child's exit too, and a nudge waited on would
      // then hold the look until its timeout; the next nudge's exit reaps both.
      await execFast(ctx.runner, ctx.address, ["if-shell", "-b", "true", ""], {
        signal: ctx.signal,
      }).catch(() => {});
    }
    now = (await probeWith(ctx, paneId, [], probe)).probe;
  }
  return now;
}

/**
 * How pane `pane`'s process ended, as listed (`dead`, `deadStatus`): its exit status, or the
 * signal that ended it. A dead pane listed with no status is looked at again
 * ({@link learnExitStatus}): tmux may not have reaped it yet, or the signal ended it, which a
 * listing does not read. Both null for a live pane, or one gone meanwhile.
 */
export async function paneEnd(
  ctx: TmuxContext,
  pane: { readonly id: string; readonly dead: boolean; readonly deadStatus: number | null },
): Promise<{ deadStatus: number | null; deadSignal: number | null }> {
  if (!pane.dead) return { deadStatus: null, deadSignal: null };
  if (pane.deadStatus !== null) return { deadStatus: pane.deadStatus, deadSignal: null };
  const now = await learnExitStatus(ctx, pane.id, await probePane(ctx, pane.id));
  return now.exists && now.dead
    ? { deadStatus: now.deadStatus, deadSignal: now.deadSignal }
    : { deadStatus: null, deadSignal: null };
}

/** The pane's state now, as {@link PaneWatch} sees it: its process, command and cursor. */
export async function probePane(ctx: TmuxContext, paneId: string): Promise<PaneProbe> {
  return (await probeWith(ctx, paneId, [])).probe;
}

/** Whether a pane has written nothing yet: no history, the cursor at the top left. */
export function blankPane(p: PaneProbe): boolean {
  return p.exists && drawnNothing(p);
}

/**
 * Whether a pane looks like one whose program tmux has yet to start: blank, and named as tmux's
 * own child ({@link tmuxChild}).
 */
export function notStartedYet(p: PaneProbe): boolean {
  return blankPane(p) && tmuxChild(p.command);
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
  let latest = start;
  const until = performance.now() + maxMs;
  while (blankPane(latest) && performance.now() < until && !ctx.signal.aborted) {
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

/** Whether a probe shows the process that was watched is gone (exited, pane gone, respawned). */
export function paneEnded(start: PaneProbe, now: PaneProbe): boolean {
  return !now.exists || now.dead || now.pid !== start.pid;
}
