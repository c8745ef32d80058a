/**
 * Reading many panes at once, for search: many panes per tmux invocation. Over the control
 * connection tmux frames each command's answer, which says whose rows are whose; a chain
 * that may print more than one answer should hold is read framed, each pane's rows handed
 * over in batches as they arrive, so a search through a thousand panes of history holds a
 * batch at a time, never every pane's text.
 *
 * Framed, each pane in a chain prints a record of its state (pane id, history size, height)
 * and then its rows, in the same command queue: the record says exactly which rows follow.
 *
 * The chains are planned here (how many panes one invocation reads, and which path reads
 * it); each path reads in a file of its own: over the control connection in
 * capture_many_control.ts, framed in capture_many_framed.ts, a pane whose lines wrapped again
 * in capture_many_joined.ts, and what they hand over in capture_many_batch.ts.
 *
 * @module
 */

import type { RunOptions, TmuxRunner } from "./run.ts";
import type { TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";
import type { RowBatch } from "./capture_many_batch.ts";
import { readOverControl } from "./capture_many_control.ts";
import { readFramed } from "./capture_many_framed.ts";
import { readJoinedPane } from "./capture_many_joined.ts";

/** tmux refuses a command line longer than its message size (16 KB): stay well below. */
const MAX_CHAIN_ARG_BYTES = 12_000;

/**
 * Rows one invocation may print: an answer over the control connection is held whole, and
 * deep history spread over several tmux processes is read side by side.
 */
const MAX_CHAIN_ROWS = 200_000;

/**
 * History rows per pane beyond which a chain is read by a tmux process of its own (streamed)
 * rather than over the control connection, when it asks for more than
 * {@link CONTROL_CHAIN_BYTES}. tmux relays a control client's command output line by line: it
 * wins for screens (1 000 panes' screens in ~110 ms against ~400 ms spawning) and loses for
 * deep history in bulk (1 000 panes × 2 000 rows in ~2.5 s against ~1.3 s spawning, 8 at a
 * time). Measured crossover: about 700 rows.
 */
export const BULK_HISTORY_ROWS = 600;

/**
 * What a chain may print, by {@link chainBytes}, to be read over the control connection,
 * where tmux frames each command's answer and the whole answer is held at once; a chain that
 * may print more is read framed ({@link readFramed}), streamed by a tmux process of its own
 * unless its panes' history is shallow and it fits in this too. Up to here the connection
 * answered faster than a tmux process started for the chain (10 panes of 200 columns with
 * 2 000 rows of history each, 4 MB: 6.3 against 8.8 ms).
 */
export const CONTROL_CHAIN_BYTES = 8 * 1024 * 1024;

/**
 * What a chain read over the control connection may really print, held whole: twice its
 * estimate's bound ({@link CONTROL_CHAIN_BYTES}), room for text of two bytes a cell (accented
 * or Cyrillic letters; CJK and emoji take two cells for their three or four bytes). A cell of
 * combining marks prints up to 21 bytes: past this, the answer is dropped as it comes and the
 * panes are read streamed (a chain of such panes had held 70 MB at once, 260 MB at peak).
 */
export const CONTROL_ANSWER_BYTES = 2 * CONTROL_CHAIN_BYTES;

/** A pane's size: what one row of it may print. */
export interface PaneSize {
  readonly width: number;
  readonly height: number;
}

/**
 * At most what a chain of captures prints, a cell taken as a byte plus a newline a row (rows
 * are trimmed, so mostly far less). A pane whose size is not known is taken as 200 × 100.
 */
export function chainBytes(
  paneIds: readonly string[],
  historyRows: number,
  sizes?: ReadonlyMap<string, PaneSize>,
): number {
  let bytes = 0;
  for (const id of paneIds) {
    const size = sizes?.get(id);
    bytes += (historyRows + (size?.height ?? 100)) * ((size?.width ?? 200) + 1);
  }
  return bytes;
}

/**
 * Splits panes into chains for {@link readPanes}: each within tmux's command size and a row
 * budget (a pane counts for its history reach plus a screenful).
 */
export function chainPanes(paneIds: readonly string[], historyRows: number): string[][] {
  const perPane = Math.max(1, Math.floor(MAX_CHAIN_ROWS / (historyRows + 100)));
  const chains: string[][] = [];
  let chain: string[] = [];
  let bytes = 0;
  for (const id of paneIds) {
    // The per-pane arguments of readPanes (about 200 bytes with their NULs), generously.
    const cost = 240 + 2 * id.length;
    if (chain.length > 0 && (chain.length >= perPane || bytes + cost > MAX_CHAIN_ARG_BYTES)) {
      chains.push(chain);
      chain = [];
      bytes = 0;
    }
    chain.push(id);
    bytes += cost;
  }
  if (chain.length > 0) chains.push(chain);
  return chains;
}

/**
 * Reads the visible screen of several panes, plus `historyRows` of history each, in ONE tmux
 * invocation, handing each pane's rows to `take` in batches, in order (the next batch is read
 * only once `take` settled). Chains that print up to {@link CONTROL_CHAIN_BYTES} go over the
 * control connection (`sizes`: each pane's, to tell), more is read by a tmux process of its
 * own as it streams. tmux stops a command chain at the first failure (a pane closed since it
 * was listed), so the panes after a failed one are read again in a new invocation. `begin`
 * hears of each pane as its rows start (for progress). Returns, per pane, null once all its
 * rows were handed over, or why it could not be read. Keep the list to one
 * {@link chainPanes} chain.
 *
 * `joined` reads lines rather than rows (`capture-pane -J`: a line the terminal wrapped is one
 * line, trailing spaces trimmed). Where no line wrapped, lines are rows and the read costs
 * what a read of rows does; a pane where one did (fewer lines than rows) is read again on its
 * own, lines and rows in one invocation, its batches giving each line's first row
 * ({@link RowBatch.lineRows}), the first one marked `restart`.
 *
 * `shown` reads the rows as a person sees them (with `-e`, see shown_cells.ts): text printed
 * hidden or in its background's colour blank, the line-drawing set as glyphs. It costs tmux
 * about five times what a plain read does; without it the rows are as printed.
 */
export async function readPanes(
  runner: TmuxRunner,
  address: ServerAddress,
  paneIds: readonly string[],
  historyRows: number,
  take: (batch: RowBatch) => void | Promise<void>,
  options: RunOptions = {},
  begin?: (paneId: string) => void | Promise<void>,
  sizes?: ReadonlyMap<string, PaneSize>,
  joined = false,
  shown = false,
): Promise<(TmuxError | null)[]> {
  const results: (TmuxError | null)[] = [];
  const wrapped = new Set<string>();
  while (results.length < paneIds.length) {
    const pending = paneIds.slice(results.length);
    const held = chainBytes(pending, historyRows, sizes) <= CONTROL_CHAIN_BYTES;
    const how = { joined, wrapped, shown };
    const controlled = held
      ? await readOverControl(
        runner,
        address,
        pending,
        historyRows,
        take,
        options,
        begin,
        how,
        CONTROL_ANSWER_BYTES,
      )
      : undefined;
    if (Array.isArray(controlled)) {
      results.push(...controlled);
      continue;
    }
    // A connection that could not carry the chain will not carry the same panes framed; panes
    // that printed more than their estimate are read as they stream.
    const tooLarge = controlled === "too large";
    const read = await readFramed(runner, address, pending, historyRows, take, options, begin, {
      ...how,
      spawn: controlled === null,
      stream: !held || tooLarge || historyRows > BULK_HISTORY_ROWS,
    });
    results.push(...read);
  }
  for (const [i, id] of paneIds.entries()) {
    if (!wrapped.has(id) || results[i] !== null) continue;
    results[i] = await readJoinedPane(runner, address, id, historyRows, take, options, shown);
  }
  return results;
}
