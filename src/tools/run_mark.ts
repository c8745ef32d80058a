/**
 * The run mark: which run_command a pane is busy with, kept in tmux itself (the pane user option
 * `@tmux-mcp-run`), so that every tmux-mcp process on the server sees it, not only the one that
 * typed the command. Another process's run_command would otherwise press C-c into the command
 * (when the shell itself holds its terminal, as it does in `read` or between the commands of a
 * line) and type its own line into it.
 *
 * The mark holds the job id (which says where to read the job: job_id.ts) and, while a call waits
 * on the job, the time that call stops waiting: `JOBID` or `JOBID.DEADLINE` (ms since the epoch,
 * base 36). It is taken in the same tmux step as run_command's C-c, on condition that the pane
 * has none (or still the stale one the caller judged), checked again in the step that types,
 * and given back when the command is seen to end. Nothing else keeps it: a mark whose job is
 * over (job_state.ts reads its end marker, or the pane was respawned or died, or the shell is
 * back at its prompt and no call waits on it any longer) is stale, and the next run_command
 * replaces it. So a process killed mid-run never leaves a pane busy for longer than its command
 * runs, or than its call would have waited. A process that ends otherwise (told to stop, its
 * client gone) gives the mark back on its way out ({@link markLeftover}): a pane it typed nothing
 * into is free at once, and one it typed into is busy while the command runs, not while a call
 * that is gone would have waited.
 *
 * What the mark holds is read from tmux, so it is hostile input like any pane text: only a value
 * of the mark's own shape is ever put into a format, and any other value is simply replaced.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { execFast } from "../tmux/control.ts";
import { chainArgv } from "../tmux/format.ts";
import type { LeftoverSpec } from "../tmux/leftovers.ts";

/** The pane user option that holds the mark. */
export const RUN_OPTION = "@tmux-mcp-run";

/** The characters of every mark this module writes: also the only ones put into a format. */
const PLAIN = /^[0-9a-z.-]{1,200}$/;

/** A mark as this module writes it. */
export interface RunMark {
  /** The job the pane is busy with. */
  readonly jobId: string;
  /** Until when a call waits on it (ms since the epoch), or null: none does. */
  readonly waitedOnUntil: number | null;
}

/** The value of a mark. */
export function markValue(jobId: string, waitedOnUntil: number | null = null): string {
  return waitedOnUntil === null ? jobId : `${jobId}.${Math.round(waitedOnUntil).toString(36)}`;
}

/** A mark's parts; null for a value of another shape (no mark of this module's). */
export function parseMark(value: string): RunMark | null {
  const m = /^([0-9a-z-]{1,120})(?:\.([0-9a-z]{1,10}))?$/.exec(value);
  if (!m) return null;
  const until = m[2] === undefined ? null : parseInt(m[2], 36);
  if (until !== null && !Number.isSafeInteger(until)) return null;
  return { jobId: m[1], waitedOnUntil: until };
}

/**
 * Whether a call still waits on the mark's job. A time further ahead than any call waits
 * (`longestWaitMs`, plus a minute for clocks that differ) is not believed: it would keep the
 * pane busy for longer than any call.
 */
export function waitedOn(mark: RunMark, longestWaitMs: number, now = Date.now()): boolean {
  const until = mark.waitedOnUntil;
  return until !== null && now < until && until <= now + longestWaitMs + 60_000;
}

/** `#{@tmux-mcp-run}` compared with a plain value (or "": no mark), as a format. */
function markIs(value: string): string {
  if (value !== "" && !PLAIN.test(value)) throw new RangeError(`not a plain mark: ${value}`);
  return `#{==:#{${RUN_OPTION}},${value}}`;
}

/**
 * 1 while the mark holds a character no mark of this module's holds, or is longer than any
 * (such a value is never put into a format, so it could not be judged stale otherwise).
 */
const FOREIGN = `#{||:#{!=:#{s/[0-9a-z.-]//:${RUN_OPTION}},},#{e|>:#{n:${RUN_OPTION}},200}}`;

/**
 * A format (expanded for the pane) that holds while the mark may be taken by a call that read
 * it as `seen` and judged it stale: there is none, it is still `seen`, or it is of another shape
 * than this module writes. A mark another call took meanwhile fails it.
 */
export function markFreeFormat(seen: string): string {
  const parts = [markIs(""), FOREIGN];
  if (seen !== "" && PLAIN.test(seen)) parts.push(markIs(seen));
  return parts.reduceRight((rest, f) => `#{||:${f},${rest}}`);
}

/** Whether a mark now `value` passes {@link markFreeFormat} for `seen` (as tmux would judge). */
export function markFree(seen: string, value: string): boolean {
  return value === "" || !/^[0-9a-z.-]*$/.test(value) || value.length > 200 ||
    (value === seen && PLAIN.test(seen));
}

/** A format (expanded for the pane) that holds while the mark is `value`. */
export function markHeldFormat(value: string): string {
  return markIs(value);
}

/** The command that sets the mark of pane `paneId` to `value` (in a guarded step). */
export function setMarkCommand(paneId: string, value: string): string[] {
  if (!PLAIN.test(value)) throw new RangeError(`not a plain mark: ${value}`);
  return ["set-option", "-p", "-t", paneId, RUN_OPTION, value];
}

/**
 * The pane's mark ("" when none, or when the pane is gone). Read without the call's signal, as
 * every mark operation here: a cancelled call still gives its mark back.
 */
export async function readMark(ctx: TmuxContext, paneId: string): Promise<string> {
  const result = await execFast(ctx.runner, ctx.address, [
    "display-message",
    "-p",
    "-t",
    paneId,
    `#{${RUN_OPTION}}`,
  ]);
  if (result.code !== 0) return "";
  return new TextDecoder().decode(result.stdout).replace(/\n$/, "");
}

/**
 * Replaces the mark with `to` (null: removes it) if it is `from` at that instant, in one tmux
 * step. A failure is ignored: a mark left behind is stale once its job is over.
 */
export async function swapMark(
  ctx: TmuxContext,
  paneId: string,
  from: string,
  to: string | null,
): Promise<void> {
  const then = to === null
    ? `set-option -p -u -t ${paneId} ${RUN_OPTION}`
    : setMarkCommand(paneId, to).join(" ");
  await execFast(ctx.runner, ctx.address, [
    "if-shell",
    "-F",
    "-t",
    paneId,
    markIs(from),
    then,
  ]).catch(() => {});
}

/**
 * Removes the mark of job `jobId` from pane `paneId`, found over: the mark without a waiting
 * call, and, `waited` too, the mark a call waits on (once its end is read, or the pane went:
 * nothing waits on a job that is over by those).
 */
export async function releaseMark(
  ctx: TmuxContext,
  paneId: string,
  jobId: string,
  waited: boolean,
): Promise<void> {
  if (!PLAIN.test(jobId) || !/^%\d+$/.test(paneId)) return;
  const mine = waited ? `#{||:${markIs(jobId)},#{m:${jobId}.*,#{${RUN_OPTION}}}}` : markIs(jobId);
  await execFast(ctx.runner, ctx.address, [
    "if-shell",
    "-F",
    "-t",
    paneId,
    mine,
    `set-option -p -u -t ${paneId} ${RUN_OPTION}`,
  ]).catch(() => {});
}

/**
 * The mark the step that types run_command's line puts on in place of `claimed` (the mark its
 * C-c step put on): the same job, its call waiting one millisecond longer. Only so that tmux
 * tells, in a step of its own, a mark whose command may have been typed from one whose typing
 * never began ({@link markLeftover}).
 */
export function typedMark(claimed: string): string {
  const mark = parseMark(claimed);
  if (mark === null || mark.waitedOnUntil === null) {
    throw new RangeError(`not a waited-on mark: ${claimed}`);
  }
  return markValue(mark.jobId, mark.waitedOnUntil + 1);
}

/**
 * What run_command leaves on pane `paneId` until it has given its mark back (leftovers.ts): the
 * call, or the process, may end in between. `claimed` (the C-c step's mark: nothing typed) is
 * removed, and `typed` ({@link typedMark}: the command may have been typed) becomes job `jobId`'s
 * mark with no call waiting on it: the pane stays busy while the command runs, and is free once
 * it is over. A mark that is neither is another call's, and stays. Each is checked by tmux in the
 * step that changes it, so a typing step still on its way finds the mark no longer its claim,
 * and types nothing.
 */
export function markLeftover(
  paneId: string,
  jobId: string,
  claimed: string,
  typed: string,
): LeftoverSpec {
  if (!/^%\d+$/.test(paneId)) throw new RangeError(`not a pane id: ${paneId}`);
  const ifMark = (value: string, then: string) => [
    "if-shell",
    "-F",
    "-t",
    paneId,
    markIs(value),
    then,
  ];
  return {
    key: `run mark ${paneId} ${jobId}`,
    async undo(run) {
      // A pane gone takes its mark with it: tmux's refusal of the target is no failure here.
      await run(chainArgv([
        ifMark(claimed, `set-option -p -u -t ${paneId} ${RUN_OPTION}`),
        ifMark(typed, setMarkCommand(paneId, jobId).join(" ")),
      ]));
    },
  };
}
