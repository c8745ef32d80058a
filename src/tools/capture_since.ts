/**
 * capture_since: what a pane wrote since a previous call's cursor, and when some of it may be
 * lost (history cleared or trimmed, the pane resized), notes saying why and how to read what
 * is still there. Registered in capture.ts.
 *
 * @module
 */

import { z } from "zod";
import { tailLines } from "../mcp/bounds.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { count, int, paneIdSchema } from "../mcp/schemas.ts";
import { captureSince, CursorError } from "../tmux/since.ts";
import {
  cutNote,
  DEFAULT_MAX_LINES,
  EMPTY_TAIL,
  maxLinesSchema,
  textBound,
  textBudget,
} from "./reading_bounds.ts";
import { plural } from "./arguments.ts";
import { withPane } from "./pane_content.ts";

/** Room for notes capture_since adds once it knows what the bound left out. */
const NOTES_RESERVE_BYTES = 512;

const MISSED_REASONS = ["history-cleared", "history-trimmed", "resized"] as const;

/** capture_since. */
export const captureSinceTool = defineTool({
  name: "capture_since",
  title: "Capture new output",
  toolset: "inspect",
  description:
    "What a pane wrote since a previous call's cursor (none: the screen); missed says if " +
    "some was lost.",
  input: {
    paneId: paneIdSchema,
    cursor: z.string().max(1_000_000).optional(),
    maxLines: maxLinesSchema,
  },
  output: {
    paneId: paneIdSchema,
    ...textBound,
    cursor: z.string().describe("Pass this as cursor to the next capture_since on this pane."),
    fresh: z.boolean().describe("Whether no cursor was given (text is the current screen)."),
    missed: z.boolean().describe(
      "Lines written since the cursor may be missing from text (see missedReason and notes).",
    ),
    missedReason: z.enum(MISSED_REASONS).nullable(),
    firstLineNumber: int().nullable().describe(
      "Row number of the first line in text (0 = top of the screen, negative = history), usable as capture_pane start; null when text is empty.",
    ),
    unchangedLines: count().describe(
      "Lines in text that were already there unchanged, between rewritten ones.",
    ),
    trimmedLines: count().describe("Lines tmux trimmed off the top of history since the cursor."),
    alternateScreen: z.boolean().describe(
      "A full-screen program has the alternate screen: text is its screen (empty when unchanged).",
    ),
    resized: z.boolean().describe("The pane's width changed since the cursor (tmux reflowed it)."),
    dead: z.boolean().describe("Whether the pane's process has exited."),
    notes: z.array(z.string()).describe("What the agent should know about this answer."),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    let since;
    try {
      since = await withPane(
        ctx,
        args.paneId,
        () =>
          captureSince(
            ctx.runner,
            ctx.address,
            args.paneId,
            args.cursor,
            args.maxLines ?? DEFAULT_MAX_LINES,
            { signal: ctx.signal },
            // A reply holds at most this much text: rows above it need only be counted.
            ctx.config.maxResultBytes,
          ),
        args.cursor !== undefined
          ? `Pane ${args.paneId} no longer exists: it was killed, or closed when its process exited, after the cursor was taken.`
          : undefined,
      );
    } catch (error) {
      if (error instanceof CursorError) {
        throw new ToolFailure(
          error.message,
          "Call capture_since without a cursor to start afresh from the current screen.",
        );
      }
      throw error;
    }
    const { state } = since;
    const notes: string[] = [];
    const step = Math.max(1, Math.floor(state.historyLimit / 10));
    if (since.missedReason === "history-cleared" && since.clearUnproven) {
      notes.push(
        "The lines the cursor saw are gone from where they were, and the history held none then: the history was cleared (clear-history, or a program clearing scrollback), or a program rewrote the screen from its top. Which cannot be told; lines written since and not yet read may be gone.",
      );
    } else if (since.missedReason === "history-cleared") {
      notes.push(
        "The pane's history was cleared since the cursor (clear-history, or a program clearing scrollback): lines written before the clear and not yet read are gone.",
      );
    } else if (since.missedReason === "history-trimmed") {
      notes.push(
        `The history reached its limit (${state.historyLimit} lines; tmux then drops the oldest ${step} at once) and the lines the cursor pointed at were dropped, or read the same at more than one place the trims could have moved them to (blank or repeated lines): lines written since may have scrolled away unread.`,
      );
    } else if (since.missedReason === "resized") {
      notes.push(
        "The pane's width changed and tmux reflowed its lines; the cursor's position could not be found again (its lines are gone, or read the same at more than one place).",
      );
    }
    if (since.mayRepeat && !since.missed) {
      notes.push(
        "Lines the cursor saw moved on the screen in a way that could not be followed (a scroll region whose header or status line changed, or a program redrawing them): text may begin with lines an earlier capture_since returned, and hold more of them further on.",
      );
    } else if (since.mayRepeat) {
      notes.push(
        "text holds all the pane holds now, and may begin with lines an earlier capture_since returned.",
      );
    } else if (since.unchangedAbove > 0) {
      const top = -state.historySize;
      notes.push(
        `${
          plural(since.unchangedAbove, "line")
        } at the top of the pane still read as at the cursor, where the clear left them, and are left out as unchanged: capture_pane with start ${top} and end ${
          top + since.unchangedAbove - 1
        } reads them.`,
      );
    }
    if (since.resized && !since.missed) {
      notes.push(
        "The pane's width changed (tmux reflowed its lines): text holds every line after the cursor's position, rewritten or not; lines above it that the reflow rewrapped, read before, come back too.",
      );
    }
    if (since.alternateScreen) {
      notes.push(
        "A full-screen program has the alternate screen: text is its screen (empty when unchanged since the cursor). What the shell wrote before it started comes back once it exits.",
      );
    }
    const envelope = {
      paneId: args.paneId,
      ...EMPTY_TAIL,
      cursor: since.cursor,
      fresh: since.fresh,
      missed: since.missed,
      missedReason: since.missedReason,
      firstLineNumber: since.firstRow,
      unchangedLines: 0,
      trimmedLines: since.trimmedRows,
      alternateScreen: since.alternateScreen,
      resized: since.resized,
      dead: state.dead,
      notes,
    };
    const cut = tailLines(
      since.rows,
      args.maxLines ?? DEFAULT_MAX_LINES,
      textBudget(ctx, envelope) - NOTES_RESERVE_BYTES,
      { lines: since.skippedRows, bytes: since.skippedBytes },
    );
    const firstLineNumber = since.firstRow === null || cut.returnedLines === 0
      ? null
      : since.firstRow + cut.droppedLines;
    const unchanged = since.unchangedRows.filter((i) => i >= cut.droppedLines).length;
    if (cut.droppedLines > 0 && since.firstRow !== null && !since.alternateScreen) {
      notes.push(
        `${
          plural(cut.droppedLines, "earlier new line")
        } did not fit and were left out: capture_pane with start ${since.firstRow} and end ${
          since.firstRow + cut.droppedLines - 1
        } reads them (while they are still there).`,
      );
    }
    if (unchanged > 0) {
      notes.push(`${plural(unchanged, "line")} in text were already there, unchanged.`);
    }
    const data = {
      ...envelope,
      ...cut,
      firstLineNumber,
      unchangedLines: unchanged,
      notes,
    };
    const what = since.alternateScreen
      ? cut.returnedLines > 0
        ? "the full-screen program's screen"
        : "the full-screen program's screen is unchanged"
      : since.fresh
      ? "the current screen"
      : cut.returnedLines > 0
      ? "new or rewritten"
      : "nothing new";
    return {
      data,
      summary: `Pane ${args.paneId}: ${plural(cut.returnedLines, "line")}, ${what}.` +
        (since.missed ? ` Lines may have been missed (${since.missedReason}).` : "") +
        cutNote(cut),
    };
  },
});
