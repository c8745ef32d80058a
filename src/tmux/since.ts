/**
 * capture_since: what a pane wrote or rewrote since an earlier read, found again from an opaque
 * cursor.
 *
 * A cursor (since_cursor.ts) remembers where the pane stood and a hash of each row it saw, and
 * travels as a short id of what this process keeps; since_compare.ts finds the rows again on a
 * grid (since_grid.ts) and says what changed. Here: the cursor checked, reads (since_read.ts)
 * tried until one covers what the comparison needs, and the new cursor kept. since_written.ts
 * tells a wait, from the same comparison, which rows were written since.
 *
 * @module
 */

import { captureRows, type PaneState, readPaneState } from "./capture.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import { AnswerPastBound, TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";
import { sameServer, serversText } from "./server_identity.ts";
import {
  ANCHOR_ROWS,
  CursorError,
  CURSORS,
  openCursor,
  rowHash,
  sameCursor,
  type SinceCursor,
} from "./since_cursor.ts";
import { compareSince, cursorFor, type SinceResult, trimsPossible } from "./since_compare.ts";
import { type NormalGrid, normalGrid, RowNotRead } from "./since_grid.ts";
import {
  type Guess,
  readStretches,
  screenRows,
  shownSince,
  type Slack,
  streamGrid,
} from "./since_read.ts";

export { CursorError } from "./since_cursor.ts";

/** What changed since a cursor (or the screen, without one), and what the next one remembers. */
export interface SinceComparison extends SinceResult {
  /** The pane's state at the capture. */
  readonly state: PaneState;
  /** Whether `rows` is the alternate screen (a full-screen program) rather than new lines. */
  readonly alternateScreen: boolean;
  /** Whether there was no cursor: `rows` is the current screen. */
  readonly fresh: boolean;
  /** What the next cursor remembers. */
  readonly next: SinceCursor;
  /**
   * Under a full-screen program that took the screen after a cursor taken on the normal one:
   * what changed on the normal screen (history and the screen tmux saved) since the cursor;
   * null when it could not be compared. Absent otherwise.
   */
  readonly normal?: SinceResult | null;
}

/** A capture_since answer before any MCP bound is applied. */
export interface SinceCapture extends SinceComparison {
  /** The cursor to pass next time. */
  readonly cursor: string;
}

function checkIdentity(cursor: SinceCursor, state: PaneState): void {
  const then = { pid: cursor.serverPid, startTime: cursor.serverStart };
  const now = { pid: state.serverPid, startTime: state.serverStart };
  if (!sameServer(then, now)) {
    throw new CursorError(
      `The cursor comes from another tmux server (or one since restarted): ${
        then.pid === now.pid
          ? serversText(then, now)
          : `server pid ${then.pid}, this one is ${now.pid}`
      }.`,
    );
  }
  if (cursor.panePid !== state.panePid) {
    throw new CursorError(
      `Pane ${state.paneId} was respawned since the cursor was taken (its process was pid ${cursor.panePid}, now ${state.panePid}): what it showed before is gone.`,
    );
  }
}

/**
 * What a planned read (readStretches) may print to be read whole; past it, one streaming pass
 * reads all. 10 000 rows of 200 columns of text print at most 2 MB; a wide pane of combining
 * marks (21 bytes a cell) had made a capture_since hold 250 MB for a reply of 42 KB.
 */
export const STRETCHES_ANSWER_BYTES = 8 * 1024 * 1024;

/** Plans that may miss (the pane moved between reads) before one streaming pass reads all. */
const PLANNED_READS = 4;

/**
 * Everything capture_since does against tmux: checks the cursor (before any tmux call), reads
 * what the comparison needs (usually one tmux invocation: the rows that prove the position and
 * the last `want` rows, the rows between counted), checks it is the same process on the same
 * server and compares. Throws {@link CursorError} for a cursor that cannot be used, and the
 * runner's `TmuxError` (kind `no-target`) when the pane does not exist. The cursor it returns
 * is the one it was given when nothing it remembers changed, else a new one.
 */
export async function captureSince(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursorText: string | undefined,
  want: number,
  options: RunOptions = {},
  keepBytes = Infinity,
): Promise<SinceCapture> {
  const cursor = cursorText === undefined ? null : await openCursor(cursorText, paneId);
  const capture = await compareWithCursor(
    runner,
    address,
    paneId,
    cursor,
    want,
    options,
    keepBytes,
  );
  const same = cursorText !== undefined && cursor !== null && sameCursor(cursor, capture.next);
  return { ...capture, cursor: same ? cursorText : await CURSORS.issue(capture.next) };
}

/**
 * {@link captureSince} from what a cursor remembers, keeping no new cursor: writtenSince
 * (since_written.ts) compares with it and hands no cursor out. Rows that print more than
 * {@link STRETCHES_ANSWER_BYTES} are read in one streaming pass, the text held of only the last
 * rows a reply of `keepBytes` can hold.
 */
export async function compareWithCursor(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  cursor: SinceCursor | null,
  want: number,
  options: RunOptions,
  keepBytes = Infinity,
): Promise<SinceComparison> {
  const quiet = {
    unchangedRows: [],
    trimmedRows: 0,
    missed: false,
    missedReason: null,
    skippedRows: 0,
    skippedBytes: 0,
    mayRepeat: false,
    unchangedAbove: 0,
    clearUnproven: false,
    regionMoved: false,
  };
  if (!cursor) {
    const capture = await captureRows(
      runner,
      address,
      paneId,
      { start: -ANCHOR_ROWS, saved: true, views: true },
      options,
    );
    const { state } = capture;
    const rows = screenRows(capture.rows, capture.top);
    const altHash = state.alternateScreen ? rowHash(rows.join("\n")) : null;
    return {
      ...quiet,
      rows,
      firstRow: rows.length > 0 ? 0 : null,
      resized: false,
      state,
      alternateScreen: state.alternateScreen,
      fresh: true,
      next: cursorFor(normalGrid(capture), state, altHash),
    };
  }
  // A full-screen program has the screen: what it shows now, and the main screen's part of
  // the cursor kept as it was (what the shell wrote before comes back once it gives the screen
  // back).
  // What the program shows now, as a person sees it (the reads before were as printed).
  const shownScreen = async (): Promise<string[]> => {
    const screen = await captureRows(runner, address, paneId, {}, options);
    return screenRows(screen.rows, screen.top);
  };
  const alternate = async (
    state: PaneState,
    grid: NormalGrid | null,
    saved: readonly string[],
  ): Promise<SinceComparison> => {
    const rows = await shownScreen();
    const altHash = rowHash(rows.join("\n"));
    const changed = cursor.altHash !== altHash;
    // The cursor saw the normal screen: what the pane wrote there before the program took it.
    // (A cursor taken under the program keeps the normal screen's part from before: older.)
    let normal: SinceResult | null = null;
    if (cursor.altHash === null && grid) {
      try {
        normal = compareSince(cursor, grid);
      } catch (error) {
        if (!(error instanceof RowNotRead)) throw error;
      }
      if (normal) {
        normal = await shownSince(
          runner,
          address,
          paneId,
          state,
          normal,
          saved,
          want,
          keepBytes,
          options,
        );
      }
    }
    return {
      ...(cursor.altHash === null ? { normal } : {}),
      ...quiet,
      rows: changed ? rows : [],
      firstRow: changed && rows.length > 0 ? 0 : null,
      resized: false,
      state,
      alternateScreen: true,
      fresh: false,
      next: { ...cursor, altHash },
    };
  };
  // The rows compared as printed, given as shown: only the ones an answer keeps read so.
  const answer = async (
    result: SinceResult,
    state: PaneState,
    grid: NormalGrid,
  ): Promise<SinceComparison> => ({
    ...await shownSince(runner, address, paneId, state, result, [], want, keepBytes, options),
    state,
    alternateScreen: false,
    fresh: false,
    next: cursorFor(grid, state, null),
  });

  // Where tmux may have trimmed, the remembered rows' row numbers follow the history size
  // now, which only tmux knows: ask it first. Otherwise new output moved them up by as many
  // rows as it has: read a margin above where they were.
  let guess: Guess = { historySize: cursor.historySize };
  let slack: Slack = { up: 500, down: 64 };
  if (trimsPossible(cursor.historySize, cursor.historyLimit)) {
    const state = await readPaneState(runner, address, paneId, options);
    if (!state) throw new TmuxError("no-target", `can't find pane: ${paneId}`);
    guess = state;
    slack = { up: 64, down: 64 };
  }
  let fromTop = false;
  for (let attempt = 0; attempt < PLANNED_READS; attempt++) {
    let read;
    try {
      read = await readStretches(
        runner,
        address,
        paneId,
        cursor,
        guess,
        slack,
        want,
        fromTop,
        { ...options, answerBound: STRETCHES_ANSWER_BYTES },
      );
    } catch (error) {
      // Rows that print more than a read holds whole (a wide pane of combining marks).
      if (error instanceof AnswerPastBound) break;
      throw error;
    }
    const { state } = read;
    checkIdentity(cursor, state);
    if (state.alternateScreen) return await alternate(state, read.grid, read.saved);
    if (state.width !== cursor.width) break;
    const moved = Math.abs(state.historySize - guess.historySize);
    guess = state;
    slack = { up: Math.max(64, 2 * moved), down: 64 };
    if (!read.covered) continue;
    let result: SinceResult;
    try {
      result = compareSince(cursor, read.grid);
    } catch (error) {
      if (error instanceof RowNotRead) continue;
      throw error;
    }
    // Lost: the answer starts at the top of what tmux holds, where a clear leaves the screen
    // the cursor saw (compareSince looks for it there). Read from the top.
    if (result.missed && read.grid.first > 0) {
      fromTop = true;
      continue;
    }
    return await answer(result, state, read.grid);
  }
  const full = await streamGrid(runner, address, paneId, want, options, keepBytes);
  checkIdentity(cursor, full.state);
  if (!full.grid) return await alternate(full.state, null, []);
  return await answer(compareSince(cursor, full.grid), full.state, full.grid);
}
