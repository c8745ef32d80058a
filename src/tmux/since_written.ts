/**
 * What a pane wrote since a cursor capture_since handed out, row by row, for wait_for_text's
 * `since`: a wait that counts output from an earlier point than its own start. Only a cursor
 * this process handed out is taken (see since_cursor.ts), so that a forged one cannot decide
 * what counts as written.
 *
 * @module
 */

import type { RunOptions, TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";
import { compareWithCursor, STRETCHES_ANSWER_BYTES } from "./since.ts";
import { HASH_CHARS, parseHash, prefixWithHash, type SinceCursor } from "./since_cursor.ts";
import type { SinceResult } from "./since_compare.ts";

/** A row written since a cursor was taken (see {@link writtenSince}). */
export interface SinceRow {
  /** The row as it reads now. */
  readonly text: string;
  /** Where the part written since the cursor starts: text before it was the row then. */
  readonly from: number;
  /** What to report: from `from` on when the row then began this one, else the whole row. */
  readonly shown: string;
}

/** What a pane wrote since a cursor, as {@link writtenSince} finds it. */
export interface WrittenSince {
  readonly rows: SinceRow[];
  /**
   * Why what was written since could not be told from what was there before (the rows are
   * then none), or null.
   */
  readonly lost: string | null;
  /**
   * Rows written since that were counted, not read (more than `want`, or more than
   * {@link WRITTEN_KEEP_BYTES} hold).
   */
  readonly skippedRows: number;
}

/**
 * The text of rows written since a cursor that is held at most, the last rows kept: output that
 * prints more than a read holds whole (a wide pane of combining marks, 21 bytes a cell) is read
 * as it streams (see compareWithCursor), and the rows before those are counted as skipped. As
 * much as such a read holds whole: rows of plain text up to `want` are all kept.
 */
export const WRITTEN_KEEP_BYTES = STRETCHES_ANSWER_BYTES;

/**
 * The rows a pane wrote or rewrote since a cursor (opened with `openCursor` before the wait
 * began, not looked up again), for a wait that counts output from an earlier point than its own
 * start. Unchanged rows are not written; a row that
 * still begins with what it read then (a prompt typed after) is written from there on, blanks
 * after it skipped; any other row changed since is written whole (a cursor keeps no text, so
 * which of its characters were rewritten cannot be told). Where the cursor's position cannot
 * be proved (history cleared or trimmed, rows that repeat, width changed), or a full-screen
 * program redrew the screen it already showed then, nothing is told: `lost` says why. A program
 * that took the screen after the cursor drew all it shows since, after what the normal screen
 * shows written since (compared as the rest are). Of more rows than `want`,
 * or than {@link WRITTEN_KEEP_BYTES} hold, the last ones are told, the others counted.
 */
export async function writtenSince(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursor: SinceCursor,
  want: number,
  options: RunOptions = {},
): Promise<WrittenSince> {
  const since = await compareWithCursor(
    runner,
    address,
    paneId,
    cursor,
    want,
    options,
    WRITTEN_KEEP_BYTES,
  );
  if (since.alternateScreen) {
    if (cursor.altHash !== null) {
      if (since.rows.length === 0) return none(null);
      return none("a full-screen program redrew the screen it showed then");
    }
    // The program took the screen after the cursor: all it shows was drawn since, after what
    // the pane wrote on the normal screen before.
    if (!since.normal) {
      return none("what the pane wrote before a full-screen program took the screen was not read");
    }
    const before = writtenIn(cursor, since.normal, since.state.historySize);
    if (before.lost) return before;
    const drawn = since.rows.filter((text) => text !== "").map((text) => ({
      text,
      from: 0,
      shown: text,
    }));
    return { rows: [...before.rows, ...drawn], lost: null, skippedRows: before.skippedRows };
  }
  return writtenIn(cursor, since, since.state.historySize);
}

function none(lost: string | null): WrittenSince {
  return { rows: [], lost, skippedRows: 0 };
}

/** The rows a comparison of the normal screen found written since the cursor. */
function writtenIn(cursor: SinceCursor, since: SinceResult, historySize: number): WrittenSince {
  if (since.missedReason === "history-cleared") {
    return none(
      since.clearUnproven
        ? "the lines it saw were cleared, or rewritten from the top of the screen"
        : "the history was cleared",
    );
  }
  if (since.missedReason === "history-trimmed") {
    return none("the history was trimmed at its limit, or the lines it saw repeat");
  }
  if (since.resized || since.missed) return none("the pane's width changed");
  // Old rows moved where they could not be followed: they would count as written since.
  if (since.mayRepeat) return none("the lines it saw moved in a way that could not be followed");
  const unchanged = new Set(since.unchangedRows);
  const first = historySize + (since.firstRow ?? 0) + since.skippedRows;
  const remembered = cursor.rows.length / HASH_CHARS;
  const rows: SinceRow[] = [];
  since.rows.forEach((text, j) => {
    if (text === "" || unchanged.has(since.skippedRows + j)) return;
    const k = first + j + since.trimmedRows - cursor.base;
    let from = 0;
    // Under a scroll region a row's place says nothing of what read there before.
    if (k >= 0 && k < remembered && !since.regionMoved) {
      const kept = prefixWithHash(
        text,
        parseHash(cursor.rows.slice(k * HASH_CHARS, (k + 1) * HASH_CHARS)),
      );
      if (kept > 0) {
        from = kept;
        while (text[from] === " ") from++;
      }
    }
    if (from >= text.length) return;
    rows.push({ text, from, shown: from > 0 ? text.slice(from) : text });
  });
  return { rows, lost: null, skippedRows: since.skippedRows };
}
