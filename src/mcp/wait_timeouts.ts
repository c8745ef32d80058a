/**
 * The timeouts every waiting tool takes (`wait_for_text`, `wait_for_idle`, `run_command`,
 * `get_command_result`, the channel and job waits): the default, the floor and the ceiling, and
 * the `timeoutMs` argument that tells a client of them.
 *
 * @module
 */

import { int } from "./schemas.ts";

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

/**
 * How far past its timeout a wait may end before it says so. A wait ends at its timeout within
 * a few milliseconds while tmux keeps up; on a loaded machine its reads wait their turn among
 * hundreds of others', and a summary saying only "timed out after 15000 ms" of a call that took
 * a minute would mislead whoever set the timeout.
 */
const LATE_MS = 1_000;

/**
 * A note for a wait that took `waitedMs` from its call's start to its answer, well past its
 * `timeoutMs`: how late it ended, and why. Empty when it ended about in time.
 */
export function lateNote(waitedMs: number, timeoutMs: number): string {
  if (waitedMs - timeoutMs <= LATE_MS) return "";
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  return `answered after ${seconds(waitedMs)} s, ${
    seconds(waitedMs - timeoutMs)
  } s past the timeout: tmux was slow to answer`;
}
