/**
 * Reading again, on its own, a pane whose lines the terminal wrapped over several rows: its
 * rows and its lines in one invocation, each line given the row it starts at. capture_many.ts
 * reads such a pane so once the chain it was in found fewer lines than rows.
 *
 * @module
 */

import { captureRange, placeEmpties, rowArg, SCREEN_ROWS, trimRow } from "./capture.ts";
import { type ChainEvent, ChainReader, LineSplitter } from "./chain.ts";
import { chainArgv, decodeBytes, int, newGuard, recordFormat } from "./format.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import type { TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";
import { PANE_COLOURS_FORMAT, paneColours, ShownCells } from "./shown_cells.ts";
import { BATCH_BYTES, chainFailure, type RowBatch } from "./capture_many_batch.ts";
import type { PlacedBatch } from "./capture_many_control.ts";

/**
 * One pane's lines (`capture-pane -J`, trimmed) with the row each starts at, streamed by a
 * tmux process of its own: its rows (`-N`, untrimmed) and then its lines in one invocation
 * (one instant), a line's bytes being exactly those of the rows it spans. Only the rows'
 * lengths are kept, never their text. The first batch is marked `restart`. Returns null once
 * read, or why it could not be.
 */
export async function readJoinedPane(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  historyRows: number,
  take: (batch: RowBatch) => void | Promise<void>,
  options: RunOptions,
  shown: boolean,
): Promise<TmuxError | null> {
  const escapes = shown ? ["-e"] : [];
  const span = { start: historyRows > 0 ? -historyRows : undefined };
  const spanArgs = historyRows > 0 ? ["-S", String(rowArg(-historyRows))] : [];
  const guard = newGuard();
  const args = chainArgv([
    [
      "display-message",
      "-p",
      "-t",
      paneId,
      recordFormat(guard, ["#{pane_id}", "#{history_size}", SCREEN_ROWS, PANE_COLOURS_FORMAT]),
    ],
    // Both as a person sees them, when asked (see shown_cells.ts): their blanks line up as the
    // text does.
    ["capture-pane", "-p", ...escapes, "-N", "-t", paneId, ...spanArgs],
    ["display-message", "-p", "-t", paneId, recordFormat(guard, ["lines"])],
    ["capture-pane", "-p", ...escapes, "-J", "-t", paneId, ...spanArgs],
  ]);
  const reader = new ChainReader(guard);
  const rowBytes: number[] = [];
  let phase = "state" as "state" | "rows" | "lines";
  let top = 0;
  let historySize = 0;
  let rowCount = 0;
  let row = 0;
  let gone = false;
  let restart = true;
  let lines: string[] = [];
  let lineRows: number[] = [];
  let bytes = 0;
  const splitter = new LineSplitter();
  let [rowCells, lineCells]: (ShownCells | null)[] = [null, null];
  const misaligned = () => new Error(`tmux printed lines of ${paneId} that do not span its rows`);
  const printsNothing = (k: number) => rowBytes[k] === 0;
  /** Empty lines read after a line, not placed yet (see placeEmpties). */
  let pending = 0;
  const place = (last: boolean) => {
    const placed = placeEmpties(rowBytes.length, row, printsNothing, pending, last);
    if (!placed) throw misaligned();
    for (const at of placed.rows) {
      lines.push("");
      lineRows.push(top + at);
      bytes += 1;
    }
    [row, pending] = [placed.next, 0];
  };
  const rowLine = (line: Uint8Array) => {
    rowBytes.push(line.length);
  };
  const joinedLine = (line: Uint8Array) => {
    if (row > 0 && line.length === 0) {
      pending++;
      return;
    }
    if (row > 0) place(false);
    if (row >= rowBytes.length) throw misaligned();
    const start = row;
    let spanned = rowBytes[row++];
    while (spanned < line.length && row < rowBytes.length) spanned += rowBytes[row++];
    if (spanned !== line.length) throw misaligned();
    lines.push(trimRow(decodeBytes(line)));
    lineRows.push(top + start);
    bytes += line.length + 1;
  };
  const flush = async (last: boolean) => {
    const batch: PlacedBatch = {
      paneId,
      first: lineRows[0] ?? top + row,
      count: lines.length,
      text: lines.join("\n"),
      last,
      lineRows,
      restart,
      historySize,
    };
    restart = false;
    lines = [];
    lineRows = [];
    bytes = 0;
    await take(batch);
  };
  const handle = async (events: ChainEvent[]) => {
    for (const event of events) {
      if (gone) return;
      if (event.record) {
        if (phase === "state") {
          const [id, history, height, colours] = event.record;
          // A pane that closed prints empty values, then its capture fails.
          if (id !== paneId) {
            gone = true;
            return;
          }
          historySize = int(history);
          const range = captureRange(span, { historySize, height: int(height) });
          top = range.top;
          rowCount = range.bottom - range.top + 1;
          // Both as a person sees them, in the pane's colours (see shown_cells.ts).
          if (shown) {
            rowCells = new ShownCells(false, paneColours(colours));
            lineCells = new ShownCells(false, paneColours(colours));
          }
          phase = "rows";
        } else {
          splitter.finish(rowLine);
          if (rowBytes.length !== rowCount) {
            throw new Error(`tmux printed ${rowBytes.length} rows of ${paneId}, not ${rowCount}`);
          }
          phase = "lines";
        }
        continue;
      }
      if (phase === "rows") splitter.push(rowCells?.push(event.data) ?? event.data, rowLine);
      else if (phase === "lines") {
        splitter.push(lineCells?.push(event.data) ?? event.data, joinedLine);
        // History lines go in batches of about BATCH_BYTES; the screen's all in the last one.
        if (bytes >= BATCH_BYTES && top + row <= 0) await flush(false);
      } else throw new Error("tmux printed rows before saying whose");
    }
  };
  const { code, stderr } = await runner.stream(
    address,
    args,
    (chunk) => handle(reader.push(chunk)),
    options,
  );
  await handle(reader.finish());
  if (code !== 0 || gone) return chainFailure({ code: code === 0 ? 1 : code, stderr });
  if (phase !== "lines") throw new Error(`tmux output of ${paneId} ended early`);
  splitter.finish(joinedLine);
  place(true);
  await flush(true);
  return null;
}
