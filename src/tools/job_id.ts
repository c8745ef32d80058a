/**
 * Job ids: what the id of a run_command job carries, so that this process or the next one finds
 * the job again in its pane without keeping anything in memory (see jobs.ts).
 *
 * @module
 */

import { z } from "zod";

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
  /** The tmux server it runs on: its pid... */
  readonly serverPid: number;
  /**
   * ...and when it started (`#{start_time}`, seconds): a server restarted in a pid namespace of
   * its own (a container) has the same pid again, and panes of the same ids and pids.
   */
  readonly serverStart: number;
}

/** A job id, precisely: each part in its own range (see {@link jobIdOf}). */
const JOB_ID =
  /^(\d{1,9})-([0-9a-f]{20})-([0-9a-z]{1,8})-([0-9a-z]{1,10})-([0-9a-z]{1,8})-([0-9a-z]{1,8})-([0-9a-z]{1,8})$/;

/**
 * A job id argument: its shape, short as a model reads it on every turn; {@link parseJobId}
 * checks each part. An id of the form before the server's start time was part of it (one
 * part less) names no server this one can tell, and is refused.
 */
export const jobIdSchema = z.string().regex(
  /^\d{1,9}-[0-9a-f]{20}(-[0-9a-z]{1,10}){5}$/,
  "a jobId as run_command returned it",
);

/** The id of a job: every part a number or hex digits, safe in a URI. */
export function jobIdOf(ref: JobRef): string {
  return [
    ref.paneId.slice(1),
    ref.nonce,
    ref.panePid.toString(36),
    ref.startMs.toString(36),
    ref.startAbs.toString(36),
    ref.serverPid.toString(36),
    ref.serverStart.toString(36),
  ].join("-");
}

/** The parts of a job id; null when it is not one. */
export function parseJobId(id: string): JobRef | null {
  const m = JOB_ID.exec(id);
  if (!m) return null;
  const numbers = [m[3], m[4], m[5], m[6], m[7]].map((s) => parseInt(s, 36));
  if (numbers.some((n) => !Number.isSafeInteger(n))) return null;
  const [panePid, startMs, startAbs, serverPid, serverStart] = numbers;
  return {
    paneId: `%${Number(m[1])}`,
    nonce: m[2],
    panePid,
    startMs,
    startAbs,
    serverPid,
    serverStart,
  };
}
