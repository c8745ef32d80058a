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
 * @module
 */

import { captureRange, rowArg, trimRow } from "./capture.ts";
import { type ChainEvent, ChainReader, LineSplitter } from "./chain.ts";
import { execFast, execOverControl } from "./control.ts";
import { chainArgv, decodeBytes, int, newGuard, recordFormat } from "./format.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import { failureOf, TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";

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
function trimLines(text: string): string {
  return text.includes(" \n") || text.endsWith(" ") ? text.replace(/ +$/gm, "") : text;
}

/** The rows of a {@link RowBatch}, one string each. */
export function batchRows(batch: RowBatch): string[] {
  return batch.count === 0 ? [] : batch.text.split("\n");
}

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

/** History bytes a batch gathers before it is handed over. */
const BATCH_BYTES = 256 * 1024;

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

/** A growable byte buffer, reused by one chain's panes one after another. */
interface Scratch {
  bytes: Uint8Array;
}

/** One pane's rows as they arrive, cut into batches at row boundaries. */
class PaneBatches {
  readonly paneId: string;
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
  readonly ready: RowBatch[] = [];
  /** Read with `-J`: lines, which are the rows unless the terminal wrapped one. */
  readonly #joined: boolean;

  constructor(paneId: string, top: number, rowCount: number, scratch: Scratch, joined: boolean) {
    this.paneId = paneId;
    this.#top = top;
    this.#rowCount = rowCount;
    this.#screenAt = Math.max(0, -top);
    this.#scratch = scratch;
    this.#joined = joined;
  }

  /** Takes the next bytes: whole rows are copied in runs, never one small copy per row. */
  push(data: Uint8Array): void {
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
    });
    this.#length = 0;
    this.#rows = 0;
  }
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
): Promise<(TmuxError | null)[]> {
  const results: (TmuxError | null)[] = [];
  const wrapped = new Set<string>();
  while (results.length < paneIds.length) {
    const pending = paneIds.slice(results.length);
    const held = chainBytes(pending, historyRows, sizes) <= CONTROL_CHAIN_BYTES;
    const how = { joined, wrapped };
    const controlled = held
      ? await readOverControl(runner, address, pending, historyRows, take, options, begin, how)
      : undefined;
    // A connection that could not carry the chain will not carry the same panes framed.
    const read = controlled ??
      await readFramed(runner, address, pending, historyRows, take, options, begin, {
        ...how,
        spawn: controlled === null,
        stream: !held || historyRows > BULK_HISTORY_ROWS,
      });
    results.push(...read);
  }
  for (const [i, id] of paneIds.entries()) {
    if (!wrapped.has(id) || results[i] !== null) continue;
    results[i] = await readJoinedPane(runner, address, id, historyRows, take, options);
  }
  return results;
}

/**
 * One pane's lines (`capture-pane -J`, trimmed) with the row each starts at, streamed by a
 * tmux process of its own: its rows (`-N`, untrimmed) and then its lines in one invocation
 * (one instant), a line's bytes being exactly those of the rows it spans. Only the rows'
 * lengths are kept, never their text. The first batch is marked `restart`. Returns null once
 * read, or why it could not be.
 */
async function readJoinedPane(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  historyRows: number,
  take: (batch: RowBatch) => void | Promise<void>,
  options: RunOptions,
): Promise<TmuxError | null> {
  const span = { start: historyRows > 0 ? -historyRows : undefined };
  const spanArgs = historyRows > 0 ? ["-S", String(rowArg(-historyRows))] : [];
  const guard = newGuard();
  const args = chainArgv([
    [
      "display-message",
      "-p",
      "-t",
      paneId,
      recordFormat(guard, ["#{pane_id}", "#{history_size}", "#{pane_height}"]),
    ],
    ["capture-pane", "-p", "-N", "-t", paneId, ...spanArgs],
    ["display-message", "-p", "-t", paneId, recordFormat(guard, ["lines"])],
    ["capture-pane", "-p", "-J", "-t", paneId, ...spanArgs],
  ]);
  const reader = new ChainReader(guard);
  const rowBytes: number[] = [];
  let phase = "state" as "state" | "rows" | "lines";
  let top = 0;
  let rowCount = 0;
  let row = 0;
  let gone = false;
  let restart = true;
  let lines: string[] = [];
  let lineRows: number[] = [];
  let bytes = 0;
  const splitter = new LineSplitter();
  const misaligned = () => new Error(`tmux printed lines of ${paneId} that do not span its rows`);
  const rowLine = (line: Uint8Array) => {
    rowBytes.push(line.length);
  };
  const joinedLine = (line: Uint8Array) => {
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
    const batch: RowBatch = {
      paneId,
      first: lineRows[0] ?? top + row,
      count: lines.length,
      text: lines.join("\n"),
      last,
      lineRows,
      restart,
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
          const [id, history, height] = event.record;
          // A pane that closed prints empty values, then its capture fails.
          if (id !== paneId) {
            gone = true;
            return;
          }
          const range = captureRange(span, { historySize: int(history), height: int(height) });
          top = range.top;
          rowCount = range.bottom - range.top + 1;
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
      if (phase === "rows") splitter.push(event.data, rowLine);
      else if (phase === "lines") {
        splitter.push(event.data, joinedLine);
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
  if (row !== rowCount) throw misaligned();
  await flush(true);
  return null;
}

/**
 * Why tmux stopped a chain, as the failure of the pane it was reading (a closed pane), or
 * thrown when no pane can be read any more (the server is gone).
 */
function chainFailure(result: { code: number; stderr: string }): TmuxError {
  const failure = failureOf(result);
  if (failure.kind === "no-server") throw failure;
  return failure;
}

/**
 * Over the control connection, where tmux frames each command's answer on its own
 * ({@link ControlResult.ends}): one `capture-pane` per pane, for history behind a
 * `display-message` of the pane's history size and height in the same chain (tmux runs a chain
 * in one pass, so both describe the same moment). A screen's rows are numbered from 0 at its
 * top and need nothing more. Null when the connection cannot carry the chain (then it is read
 * {@link readFramed}); else, per pane from the first, null once read, and for the pane tmux
 * stopped at, why (the rest were not read). Each pane's rows go to `take` in one batch.
 */
async function readOverControl(
  runner: TmuxRunner,
  address: ServerAddress,
  paneIds: readonly string[],
  historyRows: number,
  take: (batch: RowBatch) => void | Promise<void>,
  options: RunOptions,
  begin: ((paneId: string) => void | Promise<void>) | undefined,
  how: { joined: boolean; wrapped: Set<string> },
): Promise<(TmuxError | null)[] | null> {
  const history = historyRows > 0;
  // Read joined, the rows a pane has tell whether a line spans several.
  const described = history || how.joined;
  const span = { start: history ? -historyRows : undefined };
  const args = chainArgv(paneIds.flatMap((id) => [
    ...(described ? [["display-message", "-p", "-t", id, "#{history_size} #{pane_height}"]] : []),
    [
      "capture-pane",
      "-p",
      ...(how.joined ? ["-J"] : []),
      "-t",
      id,
      ...(history ? ["-S", String(rowArg(-historyRows))] : []),
    ],
  ]));
  const result = await execOverControl(runner, address, args, options);
  if (result?.ends === undefined) return null;
  const { stdout, ends } = result;
  const per = described ? 2 : 1;
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
    if (described) {
      const state = next(per * i);
      if (state === null) {
        results.push(chainFailure(result));
        break;
      }
      const text = decodeBytes(state);
      const m = /^(\d+) (\d+)\n$/.exec(text);
      // A pane that closed is described with empty values; its capture then fails.
      if (!m && text !== " \n") throw new Error(`unexpected state of ${paneId} from tmux`);
      if (m) {
        const range = captureRange(span, { historySize: int(m[1]), height: int(m[2]) });
        top = range.top;
        expected = range.bottom - range.top + 1;
      }
    }
    const bytes = next(per * i + per - 1);
    if (bytes === null) {
      results.push(chainFailure(result));
      break;
    }
    if (described && expected === null) {
      throw new Error(`tmux printed rows of ${paneId} it did not describe`);
    }
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
    await take({
      paneId,
      first: top,
      count,
      text: how.joined ? trimLines(text) : text,
      last: true,
    });
    results.push(null);
  }
  return results;
}

/**
 * Any rows, over any path (`stream`: by a tmux process of its own, batch by batch as they
 * come; `spawn`: by a tmux process, whole): each pane's capture follows a framed record of its
 * state (history size, height), which says which rows follow and where they end. Per pane from
 * the first, null once read, and for the pane tmux stopped at, why (the rest were not read).
 */
async function readFramed(
  runner: TmuxRunner,
  address: ServerAddress,
  pending: readonly string[],
  historyRows: number,
  take: (batch: RowBatch) => void | Promise<void>,
  options: RunOptions,
  begin: ((paneId: string) => void | Promise<void>) | undefined,
  how: { spawn: boolean; stream: boolean; joined: boolean; wrapped: Set<string> },
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
      recordFormat(guard, ["#{pane_id}", "#{history_size}", "#{pane_height}"]),
    ],
    [
      "capture-pane",
      "-p",
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
      const [paneId, history, height] = event.record;
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
      at.pane = new PaneBatches(paneId, top, bottom - top + 1, scratch, how.joined);
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
