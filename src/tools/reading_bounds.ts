/**
 * How the reading tools (capture_pane, snapshot_pane, capture_since, show_buffer) keep their
 * text within bounds and say so: the lines asked for by default and at most, the fields every
 * bounded text reports, the bytes left for text once the rest of a result is measured, and the
 * summary's note of what was cut.
 *
 * @module
 */

import { z } from "zod";
import { jsonBytes, type TailCut, tailLines } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { count } from "../mcp/schemas.ts";
import { plural } from "./arguments.ts";

/** Lines a reading tool returns unless asked for more: a screenful or a few, not a log. */
export const DEFAULT_MAX_LINES = 200;

/** The most lines a reading tool returns in one call (bytes bound it further). */
export const MAX_MAX_LINES = 10_000;

/** Room kept free besides the measured envelope of a result. */
const SLACK_BYTES = 256;

/** The maxLines input of a reading tool: bounded, so one call cannot ask for a log. */
export const maxLinesSchema = z.number().int().min(1).max(MAX_MAX_LINES).optional().describe(
  `Default ${DEFAULT_MAX_LINES}`,
);

/** Fields every bounded text reports. */
export const textBound = {
  text: z.string().describe("The lines, joined with \\n (no final newline)."),
  returnedLines: count().describe("Lines in text."),
  droppedLines: count().describe("Leading lines left out (maxLines or the byte bound)."),
  firstLineCut: z.boolean().describe("Whether the first line in text lost its head to the bound."),
  returnedBytes: count().describe("UTF-8 bytes of text."),
  omittedBytes: count().describe(
    "UTF-8 bytes of the whole text left out, as printed (tmux counts them: a line-drawing " +
      "letter is a byte, the glyph shown three; hidden text its characters).",
  ),
};

/** Bytes the text may take: the bound minus everything else in the result. */
export function textBudget(ctx: TmuxContext, envelope: unknown): number {
  return ctx.config.maxResultBytes - jsonBytes(envelope) - SLACK_BYTES;
}

/** A cut of no lines: the text fields of a result's envelope, measured before the text is cut. */
export const EMPTY_TAIL: TailCut = tailLines([], 0, 0);

/** The summary's note of the earlier lines a cut left out; empty when it left none. */
export function cutNote(cut: TailCut): string {
  if (cut.droppedLines === 0 && cut.omittedBytes === 0) return "";
  return ` ${plural(cut.droppedLines, "earlier line")} (${cut.omittedBytes} bytes) left out.`;
}
