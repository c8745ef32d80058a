/**
 * Reading a chain of captures over the control connection, where tmux frames each command's
 * answer on its own and the whole answer is held at once: each pane's rows in one batch.
 * capture_many.ts sends a chain this way when what it may print is small enough.
 *
 * @module
 */

import { captureRange, rowArg, SCREEN_ROWS } from "./capture.ts";
import { execOverControl } from "./control.ts";
import { chainArgv, decodeBytes, int } from "./format.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import { AnswerPastBound, type TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";
import { PANE_COLOURS_FORMAT } from "./shown_cells.ts";
import { chainFailure, type RowBatch, trimLines } from "./capture_many_batch.ts";

/**
 * A {@link RowBatch} with the pane's history size at the read: the batch's row numbers are the
 * pane's as it stood then, which a later read of some of its rows (search's, as shown) follows
 * as the history grows.
 */
export interface PlacedBatch extends RowBatch {
  readonly historySize: number;
}

/**
 * Over the control connection, where tmux frames each command's answer on its own
 * ({@link ControlResult.ends}): one `capture-pane` per pane, behind a `display-message` of
 * the pane's history size, height and colours in the same chain (tmux runs a chain in one
 * pass, so both describe the same moment). Null when the connection cannot carry the chain, or
 * the rows are asked for as shown (then it is read
 * {@link readFramed}); "too large" when the panes printed more than `maxBytes` (the answer is
 * held whole, so what was read is dropped and nothing taken: read them streamed); else, per
 * pane from the first, null once read, and for the pane tmux stopped at, why (the rest were
 * not read). Each pane's rows go to `take` in one batch.
 */
export async function readOverControl(
  runner: TmuxRunner,
  address: ServerAddress,
  paneIds: readonly string[],
  historyRows: number,
  take: (batch: RowBatch) => void | Promise<void>,
  options: RunOptions,
  begin: ((paneId: string) => void | Promise<void>) | undefined,
  how: { joined: boolean; wrapped: Set<string>; shown: boolean },
  maxBytes: number,
): Promise<(TmuxError | null)[] | null | "too large"> {
  // Rows as shown (`-e`) print up to ~45 bytes a cell where a program colours every cell, past
  // any estimate of a byte a cell: tmux would build them whole for the connection, fail the
  // bound, and build them again streamed; and tmux 3.3a keeps what it answered a control client
  // in memory it does not use again. Not carried: read framed, by a tmux process, once.
  if (how.shown) return null;
  const history = historyRows > 0;
  // Read joined, the rows a pane has tell whether a line spans several.
  // Each pane described: its rows' count, and its colours for its rows as a person sees them.
  const span = { start: history ? -historyRows : undefined };
  const args = chainArgv(paneIds.flatMap((id) => [
    ["display-message", "-p", "-t", id, `#{history_size} ${SCREEN_ROWS} ${PANE_COLOURS_FORMAT}`],
    [
      "capture-pane",
      "-p",
      ...(how.joined ? ["-J"] : []),
      "-t",
      id,
      ...(history ? ["-S", String(rowArg(-historyRows))] : []),
    ],
  ]));
  let result;
  try {
    result = await execOverControl(runner, address, args, { ...options, answerBound: maxBytes });
  } catch (error) {
    if (error instanceof AnswerPastBound) return "too large";
    throw error;
  }
  if (result?.ends === undefined) return null;
  const { stdout, ends } = result;
  // Per pane: its description, then its rows.
  const per = 2;
  const failed = ends.at(-1) === -1;
  if (ends.length > per * paneIds.length || (!failed && ends.length !== per * paneIds.length)) {
    throw new Error(`tmux answered ${ends.length} commands for ${paneIds.length} panes`);
  }
  const results: (TmuxError | null)[] = [];
  let from = 0;
  /** The next command's output, or null where tmux refused it. */
  const next = (k: number): Uint8Array | null => {
    const end = ends[k];
    if (end === -1) return null;
    const bytes = stdout.subarray(from, end);
    from = end;
    return bytes;
  };
  for (let i = 0; per * i < ends.length; i++) {
    const paneId = paneIds[i];
    let top = 0;
    let expected: number | null = null;
    const state = next(per * i);
    if (state === null) {
      results.push(chainFailure(result));
      break;
    }
    const described = decodeBytes(state);
    const m = /^(\d+) (\d+) ([^\s,]*,[^\s,]*)\n$/.exec(described);
    // A pane that closed is described with empty values; its capture then fails.
    if (!m && described !== "  ,\n") throw new Error(`unexpected state of ${paneId} from tmux`);
    if (m) {
      const range = captureRange(span, { historySize: int(m[1]), height: int(m[2]) });
      top = range.top;
      expected = range.bottom - range.top + 1;
    }
    const printed = next(per * i + 1);
    if (printed === null) {
      results.push(chainFailure(result));
      break;
    }
    if (m === null) throw new Error(`tmux printed rows of ${paneId} it did not describe`);
    const bytes = printed;
    // Every row tmux prints ends with a newline (counted byte by byte: for a whole pane's
    // rows in one view, twice as fast as a call of indexOf per row).
    let count = 0;
    for (let at = 0; at < bytes.length; at++) if (bytes[at] === 0x0a) count++;
    const whole = bytes.length === 0 || bytes[bytes.length - 1] === 0x0a;
    if (how.joined && (!whole || count !== expected)) {
      // A line spans several rows: read again on its own (see readPanes).
      how.wrapped.add(paneId);
      await begin?.(paneId);
      results.push(null);
      continue;
    }
    if (!whole) {
      throw new Error(`tmux ended ${paneId}'s rows in the middle of one`);
    }
    if (expected !== null && count !== expected) {
      throw new Error(`tmux printed ${count} rows of ${paneId}, not ${expected}`);
    }
    await begin?.(paneId);
    const text = count === 0 ? "" : decodeBytes(bytes.subarray(0, bytes.length - 1));
    const batch: PlacedBatch = {
      paneId,
      first: top,
      count,
      text: how.joined ? trimLines(text) : text,
      last: true,
      historySize: int(m[1]),
    };
    await take(batch);
    results.push(null);
  }
  return results;
}
