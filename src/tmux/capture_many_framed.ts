/**
 * Reading a chain of captures framed: each pane's capture follows a record of its state that
 * says which rows follow and where they end, so a tmux process of its own can stream them and
 * each pane's rows are cut into batches as they arrive ({@link PaneBatches}), never held
 * whole. capture_many.ts reads a chain this way when it may print more than the control
 * connection holds at once.
 *
 * @module
 */

import { captureRange, rowArg, SCREEN_ROWS } from "./capture.ts";
import { type ChainEvent, ChainReader } from "./chain.ts";
import { execFast } from "./control.ts";
import { chainArgv, decodeBytes, int, newGuard, recordFormat } from "./format.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import type { TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";
import { PANE_COLOURS_FORMAT, type PaneColours, paneColours, ShownCells } from "./shown_cells.ts";
import { BATCH_BYTES, chainFailure, type RowBatch, trimLines } from "./capture_many_batch.ts";
import type { PlacedBatch } from "./capture_many_control.ts";

/** A growable byte buffer, reused by one chain's panes one after another. */
interface Scratch {
  bytes: Uint8Array;
}

/** One pane's rows as they arrive, cut into batches at row boundaries. */
class PaneBatches {
  readonly paneId: string;
  readonly #historySize: number;
  readonly #top: number;
  readonly #rowCount: number;
  /** Index of the first screen row: the last batch starts there or above. */
  readonly #screenAt: number;
  readonly #scratch: Scratch;
  #length = 0;
  #rows = 0;
  /** Index of the next row to come. */
  #next = 0;
  /** Bytes of a row not yet complete. */
  #partial: Uint8Array[] = [];
  readonly ready: PlacedBatch[] = [];
  /** Read with `-J`: lines, which are the rows unless the terminal wrapped one. */
  readonly #joined: boolean;
  /** The rows as a person sees them, from what `-e` printed (see shown_cells.ts), if asked. */
  readonly #cells: ShownCells | null;

  constructor(
    paneId: string,
    top: number,
    rowCount: number,
    scratch: Scratch,
    joined: boolean,
    colours: PaneColours | null,
    historySize: number,
  ) {
    this.paneId = paneId;
    this.#historySize = historySize;
    this.#top = top;
    this.#rowCount = rowCount;
    this.#screenAt = Math.max(0, -top);
    this.#scratch = scratch;
    this.#joined = joined;
    this.#cells = colours && new ShownCells(!joined, colours);
  }

  /** Takes the next bytes: whole rows are copied in runs, never one small copy per row. */
  push(printed: Uint8Array): void {
    const data = this.#cells ? this.#cells.push(printed) : printed;
    let at = 0;
    while (true) {
      // History rows go in batches of about BATCH_BYTES; the screen rows all in the last one.
      const room = this.#next < this.#screenAt ? this.#screenAt - this.#next : Infinity;
      const pending = this.#partial.reduce((n, p) => n + p.length, 0);
      let end = at;
      let taken = 0;
      while (taken < room) {
        const nl = data.indexOf(0x0a, end);
        if (nl === -1) break;
        end = nl + 1;
        taken++;
        const history = this.#next + taken < this.#screenAt;
        if (history && this.#length + pending + end - at >= BATCH_BYTES) break;
      }
      if (taken === 0) break;
      for (const piece of this.#partial) this.#append(piece);
      this.#partial = [];
      this.#append(data.subarray(at, end));
      this.#rows += taken;
      this.#next += taken;
      at = end;
      const full = this.#next < this.#screenAt && this.#length >= BATCH_BYTES;
      if (this.#rows > 0 && (this.#next === this.#screenAt || full)) this.#flush(false);
    }
    if (at < data.length) this.#partial.push(data.slice(at));
  }

  /**
   * The pane's rows ended: hands over the last batch (it may hold no row). Read joined, false
   * when fewer lines came than rows (the terminal wrapped some): the batches' row numbers are
   * wrong then, and the pane must be read again ({@link readJoinedPane}).
   */
  end(): boolean {
    if (this.#joined && (this.#partial.length > 0 || this.#next !== this.#rowCount)) {
      this.ready.length = 0;
      return false;
    }
    if (this.#partial.length > 0 || this.#next !== this.#rowCount) {
      const top = this.#top;
      throw new Error(
        `tmux printed ${this.#next} rows for rows ${top}..${
          top + this.#rowCount - 1
        } of ${this.paneId}`,
      );
    }
    this.#flush(true);
    return true;
  }

  #append(bytes: Uint8Array): void {
    const need = this.#length + bytes.length;
    let buf = this.#scratch.bytes;
    if (need > buf.length) {
      const grown = new Uint8Array(Math.max(need, buf.length * 2));
      grown.set(buf.subarray(0, this.#length));
      buf = this.#scratch.bytes = grown;
    }
    buf.set(bytes, this.#length);
    this.#length = need;
  }

  #flush(last: boolean): void {
    const count = this.#rows;
    const raw = count === 0 ? "" : decodeBytes(this.#scratch.bytes.subarray(0, this.#length - 1));
    const text = this.#joined ? trimLines(raw) : raw;
    this.ready.push({
      paneId: this.paneId,
      first: this.#top + this.#next - count,
      count,
      text,
      last,
      historySize: this.#historySize,
    });
    this.#length = 0;
    this.#rows = 0;
  }
}

/**
 * Any rows, over any path (`stream`: by a tmux process of its own, batch by batch as they
 * come; `spawn`: by a tmux process, whole): each pane's capture follows a framed record of its
 * state (history size, height), which says which rows follow and where they end. Per pane from
 * the first, null once read, and for the pane tmux stopped at, why (the rest were not read).
 */
export async function readFramed(
  runner: TmuxRunner,
  address: ServerAddress,
  pending: readonly string[],
  historyRows: number,
  take: (batch: RowBatch) => void | Promise<void>,
  options: RunOptions,
  begin: ((paneId: string) => void | Promise<void>) | undefined,
  how: { spawn: boolean; stream: boolean; joined: boolean; wrapped: Set<string>; shown: boolean },
): Promise<(TmuxError | null)[]> {
  const results: (TmuxError | null)[] = [];
  const span = { start: historyRows > 0 ? -historyRows : undefined };
  const guard = newGuard();
  const args = chainArgv(pending.flatMap((id) => [
    [
      "display-message",
      "-p",
      "-t",
      id,
      recordFormat(guard, ["#{pane_id}", "#{history_size}", SCREEN_ROWS, PANE_COLOURS_FORMAT]),
    ],
    [
      "capture-pane",
      "-p",
      // As a person sees the rows, when asked (see shown_cells.ts).
      ...(how.shown ? ["-e"] : []),
      ...(how.joined ? ["-J"] : []),
      "-t",
      id,
      ...(historyRows > 0 ? ["-S", String(rowArg(-historyRows))] : []),
    ],
  ]));
  const reader = new ChainReader(guard);
  const scratch: Scratch = { bytes: new Uint8Array(16 * 1024) };
  // The pane whose rows are arriving; `gone` once a pane turned out closed.
  const at: { pane: PaneBatches | null; begun: number; gone: boolean } = {
    pane: null,
    begun: 0,
    gone: false,
  };
  const finishPane = async (pane: PaneBatches) => {
    // A line spans several rows: read again on its own (see readPanes).
    if (!pane.end()) how.wrapped.add(pane.paneId);
    results.push(null);
    for (const batch of pane.ready.splice(0)) await take(batch);
  };
  const handle = async (events: ChainEvent[]) => {
    for (const event of events) {
      if (at.gone) return;
      if (event.data) {
        if (!at.pane) throw new Error("tmux printed rows before saying whose");
        at.pane.push(event.data);
        for (const batch of at.pane.ready.splice(0)) await take(batch);
        continue;
      }
      if (at.pane) await finishPane(at.pane);
      at.pane = null;
      const [paneId, history, height, colours] = event.record;
      const expected = pending[at.begun++];
      if (paneId !== expected) {
        // A pane that closed prints empty values, then its capture fails and ends the chain.
        if (paneId !== "") throw new Error(`tmux described ${paneId}, not ${expected}`);
        at.gone = true;
        return;
      }
      const { top, bottom } = captureRange(span, {
        historySize: int(history),
        height: int(height),
      });
      at.pane = new PaneBatches(
        paneId,
        top,
        bottom - top + 1,
        scratch,
        how.joined,
        how.shown ? paneColours(colours) : null,
        int(history),
      );
      await begin?.(paneId);
    }
  };
  let code: number;
  let stderr: string;
  if (how.stream) {
    ({ code, stderr } = await runner.stream(
      address,
      args,
      (chunk) => handle(reader.push(chunk)),
      options,
    ));
  } else {
    const result = how.spawn
      ? await runner.exec(address, args, options)
      : await execFast(runner, address, args, options);
    ({ code, stderr } = result);
    await handle(reader.push(result.stdout));
  }
  await handle(reader.finish());
  if (code === 0) {
    if (at.gone || !at.pane) throw new Error("tmux output ended before every pane was captured");
    await finishPane(at.pane);
    if (results.length < pending.length) {
      throw new Error("tmux output ended before every pane was captured");
    }
    return results;
  }
  // The pane being read when tmux stopped is the one that failed.
  results.push(chainFailure({ code, stderr }));
  return results;
}
