/**
 * Reading what panes show: capture_pane, snapshot_pane, capture_since, show_buffer. Toolset
 * inspect.
 *
 * Each capture is one tmux invocation that reads the pane's state and its rows together, so
 * line numbers are exact. Text comes back as tmux stores it (wide characters, combining marks,
 * trailing spaces trimmed the way tmux trims them), bounded by lines and bytes with the tail
 * kept, and every cut is reported.
 *
 * Registered here with capture_pane: snapshot_pane in snapshot_pane.ts, capture_since in
 * capture_since.ts, show_buffer in show_buffer.ts; how they bound their text in
 * reading_bounds.ts, and a pane's range read and bounded in pane_content.ts.
 *
 * @module
 */

import { z } from "zod";
import { ToolFailure } from "../mcp/errors.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { count, int, paneIdSchema } from "../mcp/schemas.ts";
import { clampRow } from "../tmux/capture.ts";
import { cutNote, DEFAULT_MAX_LINES, EMPTY_TAIL, maxLinesSchema } from "./reading_bounds.ts";
import { plural } from "./arguments.ts";
import { contentOutput, modeNote, readContent } from "./pane_content.ts";
import { snapshotPane } from "./snapshot_pane.ts";
import { captureSinceTool } from "./capture_since.ts";
import { showBuffer } from "./show_buffer.ts";

const rowSchema = z.number().int().min(-2147483647).max(2147483647);

// ---------------------------------------------------------------------------------------------
// capture_pane

/**
 * The rows asked for, when none of them is in the pane: all above its oldest history line, or
 * all below its screen. Null when the range holds a row of the pane.
 */
function outsideRows(
  args: { start?: number; end?: number },
  pane: { historySize: number; height: number },
): { start: number; end: number } | null {
  if (args.start === undefined) return null;
  const end = args.end ?? args.start;
  if (args.end !== undefined && args.end < -pane.historySize) return { start: args.start, end };
  if (args.start > pane.height - 1) return { start: args.start, end };
  return null;
}

const capturePane = defineTool({
  name: "capture_pane",
  title: "Capture pane",
  toolset: "inspect",
  description: "Text of a pane: the screen, or rows start..end (0 = screen top, negative = " +
    "scrollback). Keeps the LAST maxLines; droppedLines says what was cut.",
  input: {
    paneId: paneIdSchema,
    start: rowSchema.optional(),
    end: rowSchema.optional(),
    joinWrapped: z.boolean().optional(),
    escapes: z.boolean().optional(),
    maxLines: maxLinesSchema,
  },
  output: {
    paneId: paneIdSchema,
    ...contentOutput,
    start: int().describe("First row of the range tmux captured, after clamping."),
    end: int().describe("Last row of the range tmux captured, after clamping."),
    rangeClamped: z.boolean().describe(
      "Whether start or end lay outside the pane (above the oldest history line or below the screen) and was moved inside it.",
    ),
    historySize: count().describe(
      "History lines above the screen (the lowest row is -historySize).",
    ),
    height: count().describe("Rows of the visible screen."),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    if (args.start !== undefined && args.end !== undefined && args.start > args.end) {
      throw new ToolFailure(
        `start (${args.start}) is after end (${args.end}).`,
        "Lines count down the screen: history is negative, 0 is the top row; pass start <= end.",
      );
    }
    const { capture, data, cut } = await readContent(
      ctx,
      args.paneId,
      args,
      args.maxLines ?? DEFAULT_MAX_LINES,
      ({ state, top, bottom }) => ({
        paneId: args.paneId,
        start: top,
        end: bottom,
        rangeClamped: [args.start, args.end].some((r) =>
          r !== undefined && clampRow(r, state.historySize, state.height) !== r
        ),
        historySize: state.historySize,
        height: state.height,
      }),
    );
    const outside = outsideRows(args, data);
    if (outside !== null) {
      // tmux clamps such a range to the nearest row, which is not one the caller asked for.
      const { start, end } = outside;
      const none = {
        ...data,
        ...EMPTY_TAIL,
        start,
        end,
        rangeClamped: false,
        totalLines: 0,
        complete: true,
        firstLineNumber: null,
      };
      return {
        data: none,
        summary: `Pane ${args.paneId}: no lines: rows ${start}..${end} are ${
          start < 0
            ? `above its oldest line (it has ${plural(data.historySize, "history line")}${
              data.historySize > 0 ? `, rows ${-data.historySize}..-1` : ""
            })`
            : `below its screen (${plural(data.height, "row")}, 0..${data.height - 1})`
        }.`,
      };
    }
    return {
      data,
      summary:
        `Pane ${args.paneId}: ${
          plural(data.returnedLines, "line")
        } of rows ${data.start}..${data.end}` +
        `${args.joinWrapped ? " (wrapped lines joined)" : ""}.${cutNote(cut)}` +
        (data.rangeClamped ? " The range was clamped to the pane." : "") +
        modeNote(args.paneId, capture.state),
    };
  },
});

/** Registers capture_pane, snapshot_pane, capture_since and show_buffer (toolset inspect). */
export function registerCaptureTools(registry: ToolRegistry): void {
  registry.add(capturePane, snapshotPane, captureSinceTool, showBuffer);
}
