/**
 * Waiting for a job to end: on the pane's output as it comes (control mode) or at each tick,
 * reading an end marker that does not count yet again for a moment after it appears.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { KEEPS_RUNNING, ToolFailure } from "../mcp/errors.ts";
import { PaneWatch } from "./pane_watch.ts";
import type { WatchEvent } from "./watch_event.ts";
import type { JobRef } from "./job_id.ts";
import { heardLines, hearEnds, isOver, type JobView, NOT_HEARD, readJob } from "./job_state.ts";
import { probePane } from "./pane_probe.ts";
import { isShellCommand, lineEditorReads } from "../tmux/prompt.ts";

/**
 * How often an end marker that does not count yet (`Marked.held`, job_markers.ts) is read
 * again while waiting, and for how long after it was first seen: the programs that draw the
 * next prompt hold the terminal for a moment after a command ends (a git prompt in a large
 * repository, about a second). Past that, a quiet pane is read again at each tick, and at each
 * new end marker.
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

/**
 * The job's view once it is over though its end marker never came, or came beside a forged one
 * (run_command asks at each quiet moment of its wait): the end read after all, or the pane's
 * shell quiet at a prompt its line editor reads ({@link lineEditorReads}): a person's C-c, or an `exec` in the command,
 * ended it. Null while it may run: a program the shell started holds the terminal (one probe
 * tells, nothing more is read), or the shell waits in a `read` of the command (canonical mode).
 */
export async function overWithoutEnd(ctx: TmuxContext, ref: JobRef): Promise<JobView | null> {
  const probe = await probePane(ctx, ref.paneId);
  if (!probe.exists || probe.dead || !isShellCommand(probe.command)) return null;
  const view = await readJob(ctx, ref);
  if (view.state === "exited") return view;
  // Two end markers (one forged): the shell printed its own, and holds its terminal again.
  if (view.state === "lost" && view.forged === "end") return view;
  if (view.state !== "lost" || !view.complete) return null;
  return await lineEditorReads(ctx.runner, ctx.address, ref.paneId, ctx.signal) ? view : null;
}

/**
 * Waits (event-driven where control mode is available) until the job is over or `deadline`
 * (a `performance.now()` time) passes, sending progress. Returns the last view.
 *
 * `handover`: the job's output was watched until now by another wait (run_command's), which
 * this one takes over from: its own watch is opened first (and heard by every read of the job:
 * `hearEnds` in job_state.ts), then `handover` lets the other go, taking in the last it heard,
 * so that no output goes unwatched in between. `handOn`: at its deadline with the job still
 * running, the watch (one of the stream: one that polls hears nothing to hand on) is not
 * closed but handed on, as `handover` for the next wait.
 */
export async function waitForJob(
  ctx: TmuxContext,
  ref: JobRef,
  deadline: number,
  options: {
    began?: number;
    progress?: boolean;
    handover?: () => Promise<void>;
    handOn?: (handover: () => Promise<void>) => void;
  } = {},
): Promise<JobView> {
  const { handover } = options;
  if (handover === undefined) {
    const first = await readJob(ctx, ref);
    if (isOver(first) || performance.now() >= deadline) return first;
  }
  // Its repeated reads paced once it waits (see TmuxContext.paced); the job's reads, which
  // decide what is answered, go as one-off calls', on `ctx`.
  const reads = ctx.paced({ fromReadUntil: true });
  let opened: PaneWatch | null = null;
  let heard = NOT_HEARD;
  try {
    const snapshot = await ctx.snapshot({ sessions: false, windows: false, paneId: ref.paneId });
    const pane = snapshot.panes.find((p) => p.id === ref.paneId);
    if (pane) opened = await PaneWatch.open(reads, pane);
    if (opened?.transport === "control") heard = hearEnds(ctx, ref, opened);
  } catch (error) {
    heard.forget();
    opened?.close();
    throw error;
  } finally {
    // Opened or not, what the watch before heard is taken in before the job is read.
    await handover?.();
  }
  if (opened === null) return await readJob(ctx, ref);
  const watch = opened;
  const began = options.began ?? performance.now();
  const total = Math.max(1, Math.round(deadline - began));
  /** When an end marker that does not count yet was first read (see {@link recheckBy}). */
  let heldSince: number | null = null;
  let view!: JobView;
  /** Whether the wait ended at its deadline, the job still running (see `handOn`). */
  let spanOver = false;
  const read = async () => {
    view = await readJob(ctx, ref);
    if (view.held) heldSince ??= performance.now();
    return view;
  };
  try {
    // Anything written between the first read and the watch's start.
    if (isOver(await read())) return view;
    if (performance.now() >= deadline) {
      spanOver = true;
      return view;
    }
    if (options.progress !== false) {
      await ctx.progress(0, total, `Waiting for the job in ${ref.paneId}`);
    }
    reads.readUntil(deadline);
    while (true) {
      const by = recheckBy(heldSince, deadline);
      let event: WatchEvent;
      try {
        event = await watch.next(by);
      } catch (error) {
        // A read of the watch still waiting for its turn at the deadline is dropped: the wait
        // is over, as at its timeout.
        if (!reads.droppedAtDeadline(error)) throw error;
        view = await readJob(ctx, ref);
        spanOver = !isOver(view);
        return view;
      }
      switch (event.kind) {
        case "lines":
          // Every line is looked at: each end marker the stream carries counts (job_state.ts).
          if (heardLines(ctx, ref, event) || by < deadline) {
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
          view = await readJob(ctx, ref);
          spanOver = !isOver(view);
          return view;
        case "died":
          return await readJob(ctx, ref);
        case "cancelled":
          throw new ToolFailure(`The call was cancelled; the job ${KEEPS_RUNNING}.`);
      }
    }
  } finally {
    const { handOn } = options;
    if (spanOver && handOn && heard !== NOT_HEARD) {
      // Heard by every read of the job until the next wait's watch is open.
      handOn(heard.handOver);
    } else {
      heard.forget();
      watch.close();
    }
    reads.paceOver();
  }
}
