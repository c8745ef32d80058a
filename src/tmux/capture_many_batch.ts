/**
 * What a read of many panes hands over, a batch of one pane's rows ({@link RowBatch}), and
 * what its three ways of reading a chain (capture_many_control.ts, capture_many_framed.ts,
 * capture_many_joined.ts) share in making batches and in failing: how big a batch of history
 * grows, the trimming of joined lines, and the failure of a chain tmux stopped.
 *
 * @module
 */

import { failureOf, type TmuxError } from "./tmux_error.ts";

/** Some of one pane's rows, trimmed the way tmux trims them. */
export interface RowBatch {
  readonly paneId: string;
  /** Row number (tmux's) of the batch's first row. */
  readonly first: number;
  /** How many rows `text` holds. */
  readonly count: number;
  /** The rows joined by newlines (no newline after the last). */
  readonly text: string;
  /** Whether this is the pane's last batch: it holds the visible screen, every screen row. */
  readonly last: boolean;
  /**
   * Read joined ({@link readPanes} `joined`) where the terminal wrapped a line over several
   * rows: each line's row number (tmux's) of its first row. Absent when each line is one row
   * (then line `i` is row `first + i`).
   */
  readonly lineRows?: readonly number[];
  /** Whether the pane is read again from its start: what its earlier batches gave is void. */
  readonly restart?: boolean;
}

/** Trims each line's trailing spaces, as tmux trims rows (`-J` keeps them). */
export function trimLines(text: string): string {
  return text.includes(" \n") || text.endsWith(" ") ? text.replace(/ +$/gm, "") : text;
}

/** The rows of a {@link RowBatch}, one string each. */
export function batchRows(batch: RowBatch): string[] {
  return batch.count === 0 ? [] : batch.text.split("\n");
}

/** History bytes a batch gathers before it is handed over. */
export const BATCH_BYTES = 256 * 1024;

/**
 * Why tmux stopped a chain, as the failure of the pane it was reading (a closed pane), or
 * thrown when no pane can be read any more (the server is gone).
 */
export function chainFailure(result: { code: number; stderr: string }): TmuxError {
  const failure = failureOf(result);
  if (failure.kind === "no-server") throw failure;
  return failure;
}
