/**
 * What a pane watch (pane_watch.ts) reports when asked for the next thing that happened, and
 * how a wait's read that tmux did not answer in time is told from a failure.
 *
 * @module
 */

import { TmuxError } from "../tmux/tmux_error.ts";
import type { PaneProbe } from "./pane_probe.ts";
import type { WrittenRow } from "./captured_rows.ts";

/** What a watch reports when asked for the next thing that happened. */
export type WatchEvent =
  /**
   * New output: lines written since the last event (the unfinished last line included). A
   * watch that reads rows also gives each as a {@link WrittenRow}, in the same order.
   * `fromRows`: read from the pane's rows (a watch that polls, or one catching up after its
   * feed), not heard in its output stream: what a program wrote over a row reads as written.
   */
  | {
    readonly kind: "lines";
    readonly lines: string[];
    readonly rows?: readonly WrittenRow[];
    readonly fromRows?: boolean;
  }
  /** Nothing new for a while: a moment to send progress. */
  | { readonly kind: "tick" }
  /** The pane's process exited (or the pane is gone, or was respawned). */
  | { readonly kind: "died"; readonly probe: PaneProbe }
  /** Its foreground program changed (only for a watch opened with `commands: true`). */
  | { readonly kind: "command"; readonly probe: PaneProbe }
  /**
   * Output with no text changed the screen (only for a watch opened with `changes: true`):
   * escape sequences alone (`ESC#8`, a clear) redrew it.
   */
  | { readonly kind: "changed" }
  | { readonly kind: "timeout" }
  | { readonly kind: "cancelled" };

/**
 * Whether `error` is tmux not answering one call in time (a server stopped with SIGSTOP, a
 * machine under load), the call not cancelled: a wait with time left reads again later rather
 * than failing at the first call that took too long (see {@link PaneWatch.next}).
 */
export function stalled(error: unknown, signal: AbortSignal): error is TmuxError {
  return error instanceof TmuxError && error.kind === "timeout" && !signal.aborted;
}

/**
 * `read()`, or null when tmux did not answer it in time ({@link stalled}) and the wait still has
 * time before `deadline` (a `performance.now()` time): the wait reads again at its next event.
 * Past the deadline the stall is thrown: the caller's answer can no longer wait for tmux.
 */
export async function unlessStalled<T>(
  signal: AbortSignal,
  deadline: number,
  read: () => Promise<T>,
): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (stalled(error, signal) && performance.now() < deadline) return null;
    throw error;
  }
}
