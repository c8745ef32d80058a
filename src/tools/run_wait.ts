/**
 * The wait of run_command for the end of the command it typed: its end marker, its pane's
 * death, the shell back at its prompt without the end marker (a person's C-c, an `exec`), the
 * call's cancellation or the timeout; then the verdict on a command with no end marker in a
 * pane still there (running, or over and how), by the job reader.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { lineEditorReads } from "../tmux/prompt.ts";
import type { JobRef } from "./job_id.ts";
import type { Marked } from "./job_markers.ts";
import { heardLines, type JobView, type MarkedRead, readJob, readMarked } from "./job_state.ts";
import { overWithoutEnd, recheckBy } from "./job_wait.ts";
import type { PaneWatch } from "./pane_watch.ts";
import { unlessStalled, type WatchEvent } from "./watch_event.ts";
import { cancelledWhileRunning } from "./run_failure.ts";
import { paneEnded, type PaneProbe } from "./pane_probe.ts";
import type { RunState } from "./busy_panes.ts";

/** How the wait for a typed command ended ({@link awaitRunEnd}). */
export interface RunEnd {
  /** The last read of the job's markers and its pane. */
  readonly result: MarkedRead;
  /** Its markers; without an end marker, what the job reader found when it judged it over. */
  readonly marked: Marked;
  /** The pane's last probe, when it died while the call waited. */
  readonly died: PaneProbe | null;
  /** Over without its end marker, by the job reader and the line editor. */
  readonly interrupted: JobView | null;
  /** Why the command is not running though it gave no exit status, else null. */
  readonly lost: string | null;
}

/**
 * Waits on `watch` (its reads paced by `reads`, from `run.deadline` on: TmuxContext.paced) for
 * the end of the command of `run.ref`, unless it runs in the background, then reads the job's
 * markers once more; the watch is left open. Cancelled meanwhile: the command keeps running and the
 * pane stays busy (`run.state` detached), and the call fails naming the job.
 */
export async function awaitRunEnd(
  ctx: TmuxContext,
  reads: TmuxContext,
  watch: PaneWatch,
  run: {
    readonly ref: JobRef;
    readonly jobId: string;
    readonly state: RunState;
    /** When the call began (`performance.now()`). */
    readonly began: number;
    /** When its wait is over (`performance.now()`). */
    readonly deadline: number;
    /** Its timeout in ms. */
    readonly effective: number;
    readonly background?: boolean;
  },
): Promise<RunEnd> {
  const { ref, deadline, effective } = run;
  const paneId = ref.paneId;
  let result: MarkedRead | null = null;
  let died: PaneProbe | null = null;
  /** Over without its end marker, by the job reader and the line editor (see below). */
  let interrupted: JobView | null = null;
  /** When an end marker that does not count yet was first read (see recheckBy). */
  let heldSince: number | null = null;
  const ended = async () => {
    const c = await readMarked(ctx, ref);
    if (c.marked.held) heldSince ??= performance.now();
    // The stream said the end read is not the shell's (noteStreamed): over, without a status.
    return c.marked.status !== null || c.marked.streamedEnds ? c : null;
  };
  if (!run.background) {
    await ctx.progress(0, effective, `Running in ${paneId}`);
    reads.readUntil(deadline);
    loop: while (true) {
      const by = recheckBy(heldSince, deadline);
      let event: WatchEvent;
      try {
        event = await watch.next(by);
      } catch (error) {
        // A read of the watch still waiting for its turn at the deadline is dropped: the
        // wait is over, as at its timeout; what the command did is read below.
        if (!reads.droppedAtDeadline(error)) throw error;
        break loop;
      }
      switch (event.kind) {
        case "lines":
          // Every line is looked at: each end marker the stream carries counts (job_state.ts).
          if (heardLines(ctx, ref, event) || by < deadline) {
            // A read tmux did not answer in time is made again: at the next tick, which
            // reads the job, or after the wait (pane_watch.ts, unlessStalled).
            result = await unlessStalled(ctx.signal, deadline, ended);
            if (result) break loop;
          }
          break;
        case "tick": {
          const ran = Math.round(performance.now() - run.began);
          await ctx.progress(
            ran,
            effective,
            `Running in ${paneId}: ${Math.round(ran / 1000)} s`,
          );
          // Quiet for a while: a person's C-c (or an `exec` in the command) may have put
          // the shell back at its prompt without the end marker.
          interrupted = await unlessStalled(
            ctx.signal,
            deadline,
            () => overWithoutEnd(ctx, ref),
          );
          if (interrupted) break loop;
          break;
        }
        case "died":
          died = event.probe;
          break loop;
        case "timeout":
          // Only the end marker's moment to read again is up.
          if (by < deadline && performance.now() < deadline) {
            result = await unlessStalled(ctx.signal, deadline, ended);
            if (result) break loop;
            break;
          }
          break loop;
        case "cancelled":
          // The command keeps running in the pane: the pane stays busy until it ends. A
          // failure the model reads (a cancelled TmuxError reads as "cancelled before tmux
          // finished"): a cancelled task shows it, job id and all (task_store.ts).
          run.state.attached = false;
          throw cancelledWhileRunning(run.jobId);
      }
    }
  }
  // The watch stays open (the caller closes it, or hands what it heard on to the job's
  // follower: jobs.ts, followJob); an end read now is judged with what it heard since.
  reads.paceOver();
  result ??= await readMarked(ctx, ref);
  let { marked } = result;
  // No end marker and the pane alive: a program the shell started holds the terminal (it
  // runs), or the shell waits at a prompt, quiet, without it (the line was dropped, or
  // the shell holds it as unfinished): the job reader's verdict, which waits a moment.
  let lost: string | null = null;
  if (
    died === null && marked.status === null && !run.background &&
    !paneEnded(watch.start, result.probe)
  ) {
    // Read in the wait already when it ended there (its reader waits a moment to judge).
    const fromWait = interrupted;
    const view = fromWait ?? await readJob(ctx, ref);
    interrupted = null;
    if (view.state === "exited") {
      marked = {
        begun: view.complete,
        status: view.exitStatus,
        endedMs: null,
        output: view.output,
        ...(view.startNote ? { startNote: view.startNote } : {}),
        ...(view.cutBytes ? { cutBytes: view.cutBytes } : {}),
      };
    } else if (view.state === "lost" && !marked.begun) {
      lost = "it never started: the shell waits at a prompt, quiet, and printed none of its " +
        "markers (the line was dropped, or the shell holds it as unfinished: an open " +
        "quote or a trailing backslash typed before, which C-c could not clear)";
    } else if (
      view.state === "lost" &&
      (fromWait !== null || view.forged === "end" ||
        await lineEditorReads(ctx.runner, ctx.address, paneId, ctx.signal))
    ) {
      // Begun, the shell quiet at a prompt could be the shell itself waiting in a `read` of
      // the command; not while its line editor reads the keys: it is back at its prompt. Nor
      // with a second end marker: the shell printed its own (job_wait.ts, overWithoutEnd).
      interrupted = view;
      lost = view.lostReason ?? "the shell is back at its prompt without the end marker";
    }
  } else interrupted = null;
  return { result, marked, died, interrupted, lost };
}
