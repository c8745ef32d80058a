/**
 * The run mark: which run_command a pane is busy with, kept in tmux itself (the pane user option
 * `@tmux-mcp-run`), so that every tmux-mcp process on the server sees it, not only the one that
 * typed the command. Another process's run_command would otherwise press C-c into the command
 * (when the shell itself holds its terminal, as it does in `read` or between the commands of a
 * line) and type its own line into it.
 *
 * The mark holds the job id (which says where to read the job: job_id.ts) and, while a call waits
 * on the job, the time that call stops waiting (ms since the epoch, base 36), in one of three
 * shapes:
 *
 * - `JOBID.cUNTIL`, the claim: taken in the same tmux step as run_command's C-c, on condition
 *   that the pane has no mark (or still the stale one the caller judged). Nothing is typed yet.
 *   UNTIL is a moment shortly ahead ({@link CLAIM_MS}): the call types by then, or its claim
 *   lapses and the pane is free for the next run_command, with no job to read (a process killed
 *   between its C-c and its typing leaves the pane for seconds, not for as long as its call
 *   would have waited). Nothing depends on that moment being right: the step that types checks
 *   in tmux that the mark is still its claim, so a call whose claim was taken types nothing.
 *   (An earlier version of tmux-mcp reads a claim as a deadline too far ahead to believe, and
 *   judges the pane by the job, as it does a mark no call waits on.)
 * - `JOBID.DEADLINE`, typed: put on by the step that types, in place of the claim; DEADLINE is
 *   the moment the call stops waiting on the command. (An earlier version of tmux-mcp also
 *   claimed with this shape, its call's own deadline: read alike, as it always was.)
 * - `JOBID`: typed, and no call waits on it any more.
 *
 * The mark is given back when the command is seen to end. Nothing else keeps it: a mark whose
 * job is over (job_state.ts reads its end marker, or the pane was respawned or died, or the
 * shell is back at its prompt and no call waits on it any longer) is stale, and the next
 * run_command replaces it, as it does a claim that has lapsed. So a process killed mid-run never
 * leaves a pane busy for longer than its command runs, or than its call would have waited. A
 * process that ends otherwise (told to stop, its client gone) gives the mark back on its way
 * out ({@link markLeftover}): a pane it typed nothing into is free at once, and one it typed
 * into is busy while the command runs, not while a call that is gone would have waited.
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
  /** Until when a call waits on it (ms since the epoch), or null: none does, or a claim. */
  readonly waitedOnUntil: number | null;
  /**
   * A claim (nothing typed yet): until when its call may type (ms since the epoch); else null.
   */
  readonly claimedUntil: number | null;
}

/**
 * How long a claim lasts: longer than run_command takes from its C-c step to its typing step.
 * That is the C-c step, tried again while the programs drawing the prompt hold the terminal
 * (PROMPT_PROGRAM_MS, 2 s), the wait for the fresh prompt (1 s) and the typing step, tried again
 * likewise (2 s), and as much again for slow tmux steps.
 */
export const CLAIM_MS = 10_000;

/** How far a mark's time may be ahead of this clock's and still be believed: clocks differ. */
const SKEW_MS = 60_000;

/** The value of a typed mark (see the module's doc). */
export function markValue(jobId: string, waitedOnUntil: number | null = null): string {
  return waitedOnUntil === null ? jobId : `${jobId}.${Math.round(waitedOnUntil).toString(36)}`;
}

/** The value of a claim on the pane for job `jobId`, lasting until `until` (ms since the epoch). */
export function claimValue(jobId: string, until: number): string {
  return `${jobId}.c${Math.round(until).toString(36)}`;
}

/**
 * A mark's parts; null for a value of another shape (no mark of this module's). A time read as
 * base 36 starts with a letter past `c` for any date from 2003 to 2059, so a claim's `c` is
 * never the start of a deadline.
 */
export function parseMark(value: string): RunMark | null {
  const m = /^([0-9a-z-]{1,120})(?:\.(c?)([0-9a-z]{1,10}))?$/.exec(value);
  if (!m) return null;
  const time = m[3] === undefined ? null : parseInt(m[3], 36);
  if (time !== null && !Number.isSafeInteger(time)) return null;
  const claim = m[2] === "c";
  return {
    jobId: m[1],
    waitedOnUntil: claim ? null : time,
    claimedUntil: claim ? time : null,
  };
}

/**
 * Whether a call still waits on the mark's job. A time further ahead than any call waits
 * (`longestWaitMs`, plus a minute for clocks that differ) is not believed: it would keep the
 * pane busy for longer than any call.
 */
export function waitedOn(mark: RunMark, longestWaitMs: number, now = Date.now()): boolean {
  const until = mark.waitedOnUntil;
  return until !== null && now < until && until <= now + longestWaitMs + SKEW_MS;
}

/**
 * Whether a claim still holds: its call may yet type. A lapsed claim leaves the pane free (its
 * call typed nothing, and now types nothing, once the mark is taken from it); so does one
 * further ahead than any claim lasts (plus a minute for clocks that differ), which is not
 * believed.
 */
export function claimHolds(mark: RunMark, now = Date.now()): boolean {
  const until = mark.claimedUntil;
  return until !== null && now < until && until <= now + CLAIM_MS + SKEW_MS;
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
 * Ends a claim that has lapsed: makes it `ended` if it is still `claim` at that instant, and
 * reads the mark in the same tmux step, right after. The claim's call types only while the
 * mark is its claim (tmux checks that in the step that types), so the mark read tells what
 * became of it: `ended` (by this step or an earlier one), nothing was typed and nothing will
 * be; anything else, the claim was no longer the mark (its call typed in the moment since the
 * caller read it, say). Null when the step failed (the pane gone): the caller reads again.
 */
export async function endClaim(
  ctx: TmuxContext,
  paneId: string,
  claim: string,
  ended: string,
): Promise<string | null> {
  if (!/^%\d+$/.test(paneId)) return null;
  // if-shell -F runs its command before the next one on the line: the read sees its effect.
  const result = await execFast(
    ctx.runner,
    ctx.address,
    chainArgv([
      ["if-shell", "-F", "-t", paneId, markIs(claim), setMarkCommand(paneId, ended).join(" ")],
      ["display-message", "-p", "-t", paneId, `#{${RUN_OPTION}}`],
    ]),
  ).catch(() => null);
  if (result === null || result.code !== 0) return null;
  return new TextDecoder().decode(result.stdout).replace(/\n$/, "");
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
 * What run_command leaves on pane `paneId` until it has given its mark back (leftovers.ts): the
 * call, or the process, may end in between. `claimed` (the C-c step's mark: nothing typed) is
 * removed, and `typed` (the typing step's mark: the command may have been typed) becomes job
 * `jobId`'s mark with no call waiting on it: the pane stays busy while the command runs, and is
 * free once it is over. A mark that is neither is another call's, and stays. Each is checked by
 * tmux in the step that changes it, so a typing step still on its way finds the mark no longer
 * its claim, and types nothing.
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
