/**
 * Which run_command a pane is busy with, and the refusals that say so: this process's own table
 * of the commands it started (taken before anything is awaited, so a second call into the pane
 * is refused), and a pane whose run mark (run_mark.ts) names another process's command that is
 * not over.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { cutString } from "../mcp/bounds.ts";
import { ToolFailure } from "../mcp/errors.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import { sameServer, type ServerIdentity } from "../tmux/server_identity.ts";
import { jobIdOf, type JobRef, parseJobId } from "./job_id.ts";
import { endSeen, isOver, readJob } from "./job_state.ts";
import { MAX_START_SKEW_MS } from "./job_resource.ts";
import { probePane, serverOf } from "./pane_probe.ts";
import { keyOfServer } from "./prompt_programs.ts";
import { MAX_TIMEOUT_MS } from "../mcp/wait_timeouts.ts";
import { CLAIM_MS, claimHolds, parseMark, type RunMark, waitedOn } from "./run_mark.ts";

/** A command started by run_command, as long as it may still be running. */
export interface RunState {
  /** Its job, once the call has read where the pane is (null until then: nothing typed yet). */
  ref: JobRef | null;
  /** The start of the command, as a refusal shows it ({@link shownCommand}). */
  readonly command: string;
  /** When the call started (ms since the epoch). */
  readonly since: number;
  /** A call is waiting on it right now (or checking it): nobody else may start one. */
  attached: boolean;
}

/** What lifts a busy pane's refusal (naming the job when there is one to wait for). */
function busyHint(jobId?: string): string {
  return `Wait for it to end (get_command_result with ${jobId ? `jobId ${jobId} and ` : ""}` +
    'waitMs) or interrupt it (send_keys keys: ["C-c"]), then run_command again; if C-c does ' +
    "not end it, respawn_pane with kill: true kills what runs in the pane and starts its " +
    "command afresh.";
}

/** UTF-8 bytes of a command a busy pane's refusal shows. */
const SHOWN_BYTES = 80;

/**
 * The start of `command` that a busy pane's refusal shows, as a string of its own: a run is
 * kept as long as its command may run, and a command may be 64 KiB. A slice would not do: V8
 * keeps the whole string alive behind a slice of it.
 */
export function shownCommand(command: string): string {
  return [...cutString(command, SHOWN_BYTES).text].join("");
}

/** The refusal of a pane this process runs a command in (`run`). */
export function busyRefusal(paneId: string, run: RunState): ToolFailure {
  const since = Math.round((Date.now() - (run.ref?.startMs ?? run.since)) / 1000);
  return new ToolFailure(
    `Pane ${paneId} is still running an earlier run_command (${
      JSON.stringify(cutString(run.command, SHOWN_BYTES).text)
    }, started ${since} s ago, ${run.ref ? `job ${jobIdOf(run.ref)}` : "being typed"}).`,
    busyHint(),
  );
}

/**
 * The refusal of pane `paneId` whose run mark `value` names a command another run_command typed
 * (in another process, or in this one before a restart) that is not over, or is about to type;
 * null when the mark is stale: no mark of a job in this pane on this server (`server`), the job
 * `over` (found over just now), a claim that has lapsed (its call typed nothing, and types
 * nothing once the mark is taken: run_mark.ts), or a job that is over (jobs.ts `readJob`). A job
 * read as lost only because the shell waits quiet as at its prompt (a `read` in the command
 * looks the same) is not over while the call that runs it still waits on it.
 */
export async function markRefusal(
  ctx: TmuxContext,
  paneId: string,
  server: ServerIdentity | null,
  value: string,
  over: string | null,
): Promise<ToolFailure | null> {
  const mark = value === "" ? null : parseMark(value);
  const ref = mark === null ? null : parseJobId(mark.jobId);
  if (mark === null || ref === null || mark.jobId === over || ref.paneId !== paneId) return null;
  const own = { pid: ref.serverPid, startTime: ref.serverStart };
  if (server === null || !sameServer(server, own) || ref.startMs > Date.now() + MAX_START_SKEW_MS) {
    return null;
  }
  if (mark.claimedUntil !== null) return claimHolds(mark) ? claimRefusal(paneId, mark) : null;
  const view = await readJob(ctx, ref);
  const waiting = waitedOn(mark, MAX_TIMEOUT_MS);
  if (isOver(view) && (endSeen(ref, view) || !waiting)) return null;
  const since = Math.round(Math.max(0, Date.now() - ref.startMs) / 1000);
  const more = waiting ? Math.ceil((mark.waitedOnUntil! - Date.now()) / 1000) : 0;
  return new ToolFailure(
    `Pane ${paneId} is busy with a command another run_command typed (job ${mark.jobId}, ` +
      `started ${since} s ago${
        waiting ? `; the call that runs it waits on it ${more} s more` : ""
      }): a command typed now would be read by it, or interrupt it. Nothing was typed.`,
    busyHint(mark.jobId),
  );
}

/**
 * The refusal of a pane another run_command has claimed (`mark`, whose claim holds): it pressed
 * C-c there and has yet to type. C-c lifts nothing here; the claim's own end does, typed or not.
 */
function claimRefusal(paneId: string, mark: RunMark): ToolFailure {
  const more = Math.max(1, Math.ceil((mark.claimedUntil! - Date.now()) / 1000));
  return new ToolFailure(
    `Pane ${paneId} is being taken by another run_command (job ${mark.jobId}): it cleared the ` +
      `shell's line and types its command within ${more} s, or its claim on the pane lapses ` +
      "then. Nothing was typed.",
    `get_command_result with jobId ${mark.jobId} and waitMs waits for its command to end, or ` +
      "says it was never typed; then run_command again.",
  );
}

/** The refusal of a pane another run_command took at the instant (its mark now `value`). */
export function takenRefusal(paneId: string, value: string): ToolFailure {
  const jobId = parseMark(value)?.jobId;
  return new ToolFailure(
    `Pane ${paneId} was taken by another run_command at that instant${
      jobId ? ` (job ${jobId})` : ""
    }. Nothing was typed.`,
    jobId
      ? `get_command_result with jobId ${jobId} and waitMs waits for it to end; then run_command again.`
      : "Try again.",
  );
}

/**
 * The refusal of a call whose claim on pane `paneId` lapsed before it typed, and was ended there
 * by a reader of its job (job_state.ts), who then read it as never typed.
 */
export function lapsedRefusal(paneId: string): ToolFailure {
  return new ToolFailure(
    `Pane ${paneId} was not typed into: this call took more than ${
      CLAIM_MS / 1000
    } s from its C-c to typing, its claim on the pane lapsed, and a reader of its job ended ` +
      "the claim. Nothing was typed.",
    "run_command again; should it keep lapsing, wait for the pane's prompt first " +
      "(wait_for_idle with atPrompt).",
  );
}

const runs = new WeakMap<TmuxRunner, Map<string, RunState>>();

/**
 * Runs kept per runner: beyond it the oldest that no call waits on is forgotten. The pane's run
 * mark (run_mark.ts) still keeps it from a second command while its command runs.
 */
export const MAX_RUNS = 256;

/**
 * The commands this process's run_command started that may still run, by server and pane (the
 * key run_command makes), kept per `runner`: one table every call shares, made on first use.
 */
export function runsFor(runner: TmuxRunner): Map<string, RunState> {
  let map = runs.get(runner);
  if (!map) {
    map = new Map();
    runs.set(runner, map);
  }
  return map;
}

/** The key run_command makes of the pane job `ref` runs in: its server's lifetime, then it. */
function jobKey(ctx: TmuxContext, ref: JobRef): string {
  return `${keyOfServer(ctx, { pid: ref.serverPid, startTime: ref.serverStart })}${ref.paneId}`;
}

/**
 * Takes pane `key` in `table` for `state` (the newest), forgetting the oldest runs beyond
 * {@link MAX_RUNS} that no call waits on.
 */
export function takeRun(table: Map<string, RunState>, key: string, state: RunState): void {
  table.delete(key);
  table.set(key, state);
  for (const [k, run] of table) {
    if (table.size <= MAX_RUNS) break;
    if (!run.attached) table.delete(k);
  }
}

/**
 * Forgets job `ref`'s run, read over just now (get_command_result, the job resource), unless a
 * call waits on it: a run_command into its pane would find it over too.
 */
export function forgetOverRun(ctx: TmuxContext, ref: JobRef): void {
  const table = runsFor(ctx.runner);
  const key = jobKey(ctx, ref);
  const run = table.get(key);
  if (run?.ref && !run.attached && jobIdOf(run.ref) === jobIdOf(ref)) table.delete(key);
}

/**
 * Forgets the runs on the socket `ctx` reaches (but pane `except`'s) whose pane is gone, dead
 * or respawned, or was on a server since replaced: no run_command can reach their pane again.
 * One probe per such run, none when there is none; a probe that fails forgets nothing.
 */
export async function forgetEndedRuns(ctx: TmuxContext, except: string): Promise<void> {
  const table = runsFor(ctx.runner);
  const candidates = [...table].filter(([key, run]) =>
    key !== except && !run.attached && run.ref !== null && key === jobKey(ctx, run.ref)
  );
  await Promise.all(candidates.map(async ([key, run]) => {
    const ref = run.ref!;
    const probe = await probePane(ctx, ref.paneId).catch(() => null);
    if (probe === null || table.get(key) !== run || run.attached) return;
    const own = { pid: ref.serverPid, startTime: ref.serverStart };
    const ended = !probe.exists || probe.dead || probe.pid !== ref.panePid;
    if (ended || !sameServer(serverOf(probe), own)) table.delete(key);
  }));
}
