/**
 * Reading a pane's rows for a tool: the refusal that names the panes that exist when the pane
 * asked for is gone (withPane), and a captured range bounded by lines and bytes with exact
 * counts and row numbers (readContent, shared by capture_pane and snapshot_pane).
 *
 * @module
 */

import { z } from "zod";
import { type TailCut, tailLines } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { sample, ToolFailure } from "../mcp/errors.ts";
import { count, int } from "../mcp/schemas.ts";
import { captureTail, type LineTail } from "../tmux/capture_tail.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { asPrinted, utf8Length } from "../tmux/capture.ts";
import { blankWidth } from "../tmux/shown_cells.ts";
import { DRAWN_STATE_BYTES, drawnState, escapeBoundary } from "../tmux/sgr_state.ts";
import { EMPTY_TAIL, textBound, textBudget } from "./reading_bounds.ts";

/**
 * Runs `read` and turns tmux's "can't find pane" into a refusal naming the panes that exist:
 * the pane never existed, or it went away after it was listed.
 */
export async function withPane<T>(
  ctx: TmuxContext,
  paneId: string,
  read: () => Promise<T>,
  goneMessage?: string,
): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof TmuxError) || error.kind !== "no-target") throw error;
    const snapshot = await ctx.paneList();
    ctx.requireRunning(snapshot);
    if (snapshot.panes.some((p) => p.id === paneId)) throw error;
    throw new ToolFailure(
      goneMessage ?? `No pane ${paneId} on ${ctx.socketLabel} (it does not exist, or just closed).`,
      `Panes: ${sample(snapshot.panes.map((p) => p.id))} — list_panes lists them all.`,
    );
  }
}

/** Fields a pane's bounded content reports besides its text: the range's lines and rows. */
export const contentOutput = {
  ...textBound,
  totalLines: count().describe(
    "Lines in the range (joined lines with joinWrapped); blank rows below the last written line do not count.",
  ),
  complete: z.boolean().describe("Whether text holds every line of the range."),
  firstLineNumber: int().nullable().describe(
    "Row number (0 = top of the screen, negative = history) of the first line in text; pass it as start to capture_pane. Null when text is empty.",
  ),
};

/** What readContent returns as data: the envelope, the cut text and the range's counts. */
export type Content<E> = E & TailCut & {
  totalLines: number;
  complete: boolean;
  firstLineNumber: number | null;
};

/**
 * Captures and bounds content; `envelope` builds the rest of the result around it. Only the
 * last `maxLines` lines are read; the lines above them are counted, so every count stays
 * exact.
 */
export async function readContent<E extends Record<string, unknown>>(
  ctx: TmuxContext,
  paneId: string,
  spec: { start?: number; end?: number; joinWrapped?: boolean; escapes?: boolean },
  maxLines: number,
  envelope: (capture: LineTail) => E,
  goneMessage?: string,
): Promise<{ capture: LineTail; cut: TailCut; data: Content<E> }> {
  const capture = await withPane(
    ctx,
    paneId,
    () =>
      captureTail(
        ctx.runner,
        ctx.address,
        paneId,
        {
          start: spec.start,
          end: spec.end,
          escapes: spec.escapes,
          joined: spec.joinWrapped,
        },
        maxLines,
        // A reply holds at most this much text: rows above it need only be counted.
        ctx.config.maxResultBytes,
        { signal: ctx.signal },
      ),
    goneMessage,
  );
  const { lines, rowOf } = capture;
  const before = { lines: capture.skippedLines, bytes: capture.skippedBytes };
  const totalLines = before.lines + lines.length;
  const rest = envelope(capture);
  const shell = {
    ...rest,
    ...EMPTY_TAIL,
    totalLines,
    complete: true,
    firstLineNumber: 0,
  };
  const budget = textBudget(ctx, shell);
  const cut = spec.escapes
    ? escapedCut(
      tailLines(lines, maxLines, budget - DRAWN_STATE_BYTES, before),
      lines,
      capture.printed,
      before.bytes,
    )
    : printedCut(tailLines(lines, maxLines, budget, before), lines, capture.printed, before.bytes);
  const data = {
    ...rest,
    ...cut,
    totalLines,
    complete: cut.droppedLines === 0 && cut.omittedBytes === 0,
    firstLineNumber: cut.returnedLines > 0 && rowOf ? rowOf(cut.droppedLines) : null,
  };
  return { capture, cut, data };
}

/**
 * `cut` with its omittedBytes counted as printed, as the description says and as the lines
 * counted above the ones read are (a line-drawing letter a byte where its glyph shows three,
 * hidden text its characters): a line left out counts its `printed` bytes, a line whose head
 * was cut off the head's columns as printed (a line with its escapes, as printed without them).
 * As it is without `printed`.
 */
export function printedCut(
  cut: TailCut,
  lines: readonly string[],
  printed: readonly string[] | undefined,
  beforeBytes: number,
): TailCut {
  if (!printed || printed.length !== lines.length || lines.length === 0) return cut;
  const first = lines.length - cut.returnedLines;
  let omitted = beforeBytes;
  for (let i = 0; i < first; i++) omitted += utf8Length(printed[i]) + 1;
  if (cut.firstLineCut) {
    const shown = lines[first];
    const head = asPrinted(shown.slice(0, shown.length - cut.text.length));
    omitted += utf8Length(printedHead(printed[first], head));
  }
  return { ...cut, omittedBytes: omitted };
}

/**
 * The start of `printed` (a line as printed) that spans the columns `head` (the start of the
 * same line as shown) does: the two views are alike column for column.
 */
function printedHead(printed: string, head: string): string {
  let columns = 0;
  for (const c of head) columns += blankWidth(c.codePointAt(0)!);
  let at = 0;
  for (const c of printed) {
    if (columns <= 0) break;
    columns -= blankWidth(c.codePointAt(0)!);
    at += c.length;
  }
  return printed.slice(0, at);
}

/**
 * `cut` of lines with their escapes (`capture-pane -e`, from default attributes at the first),
 * counted as {@link printedCut} counts, whose text starts with what the lines left out (and a
 * first line's head) left set ({@link drawnState}): tmux gives a line no code for a colour set
 * above it, so a line cut out of them would read as drawn plain. A head is cut off at the end
 * of an escape sequence, never inside one. `cut` leaves room for the state
 * ({@link DRAWN_STATE_BYTES}).
 */
export function escapedCut(
  cut: TailCut,
  lines: readonly string[],
  printed: readonly string[] | undefined,
  beforeBytes: number,
): TailCut {
  if (cut.returnedLines === 0) return cut;
  const first = lines.length - cut.returnedLines;
  let text = cut.text;
  let head = "";
  if (cut.firstLineCut) {
    const line = lines[first];
    const kept = text.indexOf("\n") === -1 ? text.length : text.indexOf("\n");
    const was = line.length - kept;
    const at = escapeBoundary(line, was);
    head = line.slice(0, at);
    text = line.slice(at) + text.slice(kept);
    const moved = utf8Length(line.slice(was, at));
    cut = {
      ...cut,
      text,
      returnedBytes: cut.returnedBytes - moved,
      omittedBytes: cut.omittedBytes + moved,
    };
  }
  cut = printedCut(cut, lines, printed, beforeBytes);
  const state = drawnState(lines.slice(0, first).join("\n") + "\n" + head);
  if (state === "") return cut;
  text = state + cut.text;
  return { ...cut, text, returnedBytes: utf8Length(text) };
}

/**
 * A sentence for a reply that gives a pane's rows while a mode covers it: copy-mode shows the
 * pane as it stood when the mode began (output since is not drawn until it ends), scrolled back
 * or not; a view-mode shows a command's output or a list over it. No capture reads what the mode
 * shows. Empty when no mode covers the pane.
 */
export function modeNote(
  paneId: string,
  state: { inMode: boolean; mode: string; scrollPosition: number | null },
): string {
  if (!state.inMode) return "";
  const back = state.scrollPosition ?? 0;
  if (state.mode === "copy-mode") {
    return ` copy-mode covers ${paneId}${
      back > 0 ? ` (scrolled back ${back} line${back === 1 ? "" : "s"})` : ""
    }: a person looking at it sees the pane as it stood when the mode began, not these rows.`;
  }
  return ` ${state.mode || "A mode"} covers ${paneId} (a command's output or a list shown over ` +
    "it): a person looking at it sees that, not these rows.";
}
