/**
 * What send_keys_batch's rows take in its reply. A batch that typed must never come back as an
 * error for being too large: the model would read that nothing was typed, and a retry would type
 * it all again. So every row keeps its index, pane and status however many rows there are, and
 * what else a row says — why it failed, what it typed, the keys it pressed, the panes it reached
 * — shares the room the bound leaves, each row measured as it travels: in the structured content
 * and in the text block, where escapes can make it twice as large or more (a quote is two bytes
 * in the one and four in the other, a control character six and seven).
 *
 * @module
 */

import { byteLength, cutString, mostThatFits, startUnits } from "../mcp/bounds.ts";
import { errorStart } from "../mcp/errors.ts";
import { entryReplyBytes } from "../mcp/render.ts";

/** Longest start of its typed text a row echoes, as send_keys echoes its own. */
const MAX_ECHO_BYTES = 4_096;

/** Longest start of its error a failed row keeps. */
const MAX_ERROR_BYTES = 2_000;

/**
 * What each failed row's error may take however many rows came before it (less only when the
 * bound leaves less for every row): the start of why it failed, which the model needs to act.
 */
const ERROR_HEAD_BYTES = 512;

/** What a sent row echoes of its input: send_keys's own result. */
export interface Echo {
  readonly paneId: string;
  readonly text: string | null;
  readonly textBytes: number;
  readonly textOmittedBytes: number;
  readonly keys: string[];
  readonly enter: boolean;
  readonly reachedPanes: string[];
}

/** One row of the batch: a sent row with its echo, a failed one with its error. */
export interface BatchRow {
  readonly index: number;
  readonly paneId: string;
  readonly status: "sent" | "failed" | "skipped";
  readonly error: string | null;
  readonly sent: Echo | null;
}

/** What {@link boundBatchRows} kept, and what it left out. */
export interface BoundRows {
  readonly rows: BatchRow[];
  /** Sent rows whose echo was left out whole (`sent: null`, though they were typed). */
  readonly echoesLeftOut: number;
  /** Sent rows whose echoed text was shortened to fit (beyond its own 4 KB cut). */
  readonly textsCut: number;
  /** Failed rows whose error was shortened to fit (beyond its own 2 000-byte cut). */
  readonly errorsCut: number;
}

/**
 * Keeps every row within `maxBytes` (see {@link entryReplyBytes}): its index, pane and status always,
 * so the model knows what was typed, what failed and what never ran. What room is left goes,
 * in this order, to the start of each failed row's error ({@link ERROR_HEAD_BYTES}, or an equal
 * share of the room when that is less); to each sent row's echo (keys, Enter, panes reached),
 * in order, its text left out and counted; to the rest of the errors, in order; then to the
 * typed texts, an equal share each and what is left in order. An error cut says how many bytes
 * it lost; an echo's `textOmittedBytes` counts what its text lost; an echo that did not fit is
 * null, and counted for the reply's note.
 *
 * `rows` carry their whole errors and their whole typed texts.
 */
export function boundBatchRows(rows: readonly BatchRow[], maxBytes: number): BoundRows {
  const errors = rows.map((row) => row.status === "failed" ? row.error ?? "" : "");
  const texts = rows.map((row) => row.sent?.text ?? "");
  const errorCap = errors.map((e) => cutString(e, MAX_ERROR_BYTES).text.length);
  const textCap = texts.map((t) => cutString(t, MAX_ECHO_BYTES).text.length);
  // What each row keeps: UTF-16 units of its error, and of its typed text (null: no echo).
  const errorKeep = rows.map(() => 0);
  const textKeep: (number | null)[] = rows.map(() => null);

  const form = (i: number, error: number, text: number | null): BatchRow => {
    const row = rows[i];
    if (row.status === "failed") return { ...row, error: errorStart(errors[i], error) };
    if (row.status !== "sent" || row.sent === null) return row;
    if (text === null) return { ...row, sent: null };
    if (row.sent.text === null) return row;
    const kept = startUnits(texts[i], text);
    return {
      ...row,
      sent: { ...row.sent, text: kept, textOmittedBytes: row.sent.textBytes - byteLength(kept) },
    };
  };
  const cost = (i: number, error = errorKeep[i], text = textKeep[i]) =>
    entryReplyBytes(form(i, error, text));

  let spare = maxBytes - 2 - rows.reduce((n, _, i) => n + cost(i), 0);
  /** Gives row `i` the most of its error or text (from what it keeps to `cap`) that `extra` more bytes hold. */
  const grow = (i: number, what: "error" | "text", cap: number, extra: number) => {
    const before = cost(i);
    const limit = before + Math.max(extra, 0);
    if (what === "error") {
      errorKeep[i] = mostThatFits(errorKeep[i], cap, (n) => cost(i, n) <= limit);
    } else {
      textKeep[i] = mostThatFits(textKeep[i] ?? 0, cap, (n) => cost(i, errorKeep[i], n) <= limit);
    }
    spare -= cost(i) - before;
  };

  const failed = rows.flatMap((row, i) => row.status === "failed" ? [i] : []);
  const head = Math.min(ERROR_HEAD_BYTES, Math.floor(spare / Math.max(failed.length, 1)));
  for (const i of failed) grow(i, "error", errorCap[i], head);
  for (const [i, row] of rows.entries()) {
    if (row.status !== "sent" || row.sent === null) continue;
    const more = cost(i, errorKeep[i], 0) - cost(i);
    if (more > spare) continue;
    textKeep[i] = 0;
    spare -= more;
  }
  for (const i of failed) grow(i, "error", errorCap[i], spare);
  const echoed = rows.flatMap((row, i) =>
    textKeep[i] !== null && row.sent?.text != null && texts[i] !== "" ? [i] : []
  );
  const share = Math.floor(spare / Math.max(echoed.length, 1));
  for (const i of echoed) grow(i, "text", textCap[i], share);
  for (const i of echoed) grow(i, "text", textCap[i], spare);

  return {
    rows: rows.map((_, i) => form(i, errorKeep[i], textKeep[i])),
    echoesLeftOut: rows.filter((row, i) => row.status === "sent" && textKeep[i] === null).length,
    textsCut: echoed.filter((i) => (textKeep[i] ?? 0) < textCap[i]).length,
    errorsCut: failed.filter((i) => errorKeep[i] < errorCap[i]).length,
  };
}
