/**
 * Reading what panes show: capture_pane, snapshot_pane, capture_since, show_buffer. Toolset
 * inspect.
 *
 * Each capture is one tmux invocation that reads the pane's state and its rows together, so
 * line numbers are exact. Text comes back as tmux stores it (wide characters, combining marks,
 * trailing spaces trimmed the way tmux trims them), bounded by lines and bytes with the tail
 * kept, and every cut is reported.
 *
 * @module
 */

import { z } from "zod";
import {
  boundMetadata,
  fitPlacements,
  jsonBytes,
  placementsNote,
  type TailCut,
  tailLines,
  withOmittedMetadata,
} from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { clip, nameList, sample, ToolFailure } from "../mcp/errors.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { count, int, metadataBound, paneIdSchema, panePlacementSchema } from "../mcp/schemas.ts";
import { clampRow } from "../tmux/capture.ts";
import { captureTail, type LineTail } from "../tmux/capture_tail.ts";
import { captureSince, CursorError } from "../tmux/since.ts";
import {
  decodeBytes,
  int as intValue,
  newGuard,
  parseRecords,
  recordFormat,
} from "../tmux/format.ts";
import { paneAtPrompt } from "../tmux/prompt.ts";
import { readBufferBytes } from "./buffers.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import type { Snapshot } from "../tmux/snapshot.ts";

/** Lines a reading tool returns unless asked for more: a screenful or a few, not a log. */
export const DEFAULT_MAX_LINES = 200;

/** The most lines a reading tool returns in one call (bytes bound it further). */
export const MAX_MAX_LINES = 10_000;

/** Room kept free besides the measured envelope of a result. */
const SLACK_BYTES = 256;

/** Room for notes capture_since adds once it knows what the bound left out. */
const NOTES_RESERVE_BYTES = 512;

const maxLinesSchema = z.number().int().min(1).max(MAX_MAX_LINES).optional().describe(
  `Default ${DEFAULT_MAX_LINES}`,
);

const rowSchema = z.number().int().min(-2147483647).max(2147483647);

/** Fields every bounded text reports. */
const textBound = {
  text: z.string().describe("The lines, joined with \\n (no final newline)."),
  returnedLines: count().describe("Lines in text."),
  droppedLines: count().describe("Leading lines left out (maxLines or the byte bound)."),
  firstLineCut: z.boolean().describe("Whether the first line in text lost its head to the bound."),
  returnedBytes: count().describe("UTF-8 bytes of text."),
  omittedBytes: count().describe("UTF-8 bytes of the whole text left out."),
};

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

/** Bytes the text may take: the bound minus everything else in the result. */
function textBudget(ctx: TmuxContext, envelope: unknown): number {
  return ctx.config.maxResultBytes - jsonBytes(envelope) - SLACK_BYTES;
}

const EMPTY_TAIL: TailCut = tailLines([], 0, 0);

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function cutNote(cut: TailCut): string {
  if (cut.droppedLines === 0 && cut.omittedBytes === 0) return "";
  return ` ${plural(cut.droppedLines, "earlier line")} (${cut.omittedBytes} bytes) left out.`;
}

// ---------------------------------------------------------------------------------------------
// capture_pane

const contentOutput = {
  ...textBound,
  totalLines: count().describe(
    "Lines in the range (joined lines with joinWrapped); blank rows below the last written line do not count.",
  ),
  complete: z.boolean().describe("Whether text holds every line of the range."),
  firstLineNumber: int().nullable().describe(
    "Row number (0 = top of the screen, negative = history) of the first line in text; pass it as start to capture_pane. Null when text is empty.",
  ),
};

/**
 * Captures and bounds content; `envelope` builds the rest of the result around it. Only the
 * last `maxLines` lines are read; the lines above them are counted, so every count stays
 * exact.
 */
async function readContent<E extends Record<string, unknown>>(
  ctx: TmuxContext,
  paneId: string,
  spec: { start?: number; end?: number; joinWrapped?: boolean; escapes?: boolean },
  maxLines: number,
  envelope: (capture: LineTail) => E,
  goneMessage?: string,
) {
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
  const cut = tailLines(lines, maxLines, textBudget(ctx, shell), before);
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
    const { data, cut } = await readContent(
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
        (data.rangeClamped ? " The range was clamped to the pane." : ""),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// snapshot_pane

const snapshotOutput = {
  paneId: paneIdSchema,
  windowId: z.string(),
  windowName: z.string(),
  placements: z.array(panePlacementSchema),
  omittedPlacements: count(),
  ...contentOutput,
  width: count(),
  height: count(),
  cursorX: count().describe("Cursor column, 0-based."),
  cursorY: count().describe("Cursor row on the screen, 0-based (a row number as in text)."),
  inMode: z.boolean().describe("Whether the pane is in copy mode or another mode."),
  mode: z.string().describe("The mode's name (copy-mode, view-mode...), or empty."),
  scrollPosition: count().nullable().describe("Lines scrolled back in copy mode, or null."),
  alternateScreen: z.boolean().describe(
    "A full-screen program (vim, less, top) has the screen: text is its screen.",
  ),
  historySize: count(),
  historyLimit: count(),
  title: z.string(),
  command: z.string().describe("The command tmux reports running in it."),
  atPrompt: z.boolean().describe("Its shell holds the terminal: at its prompt, nothing running."),
  cwd: z.string(),
  dead: z.boolean().describe("Whether its process exited (the pane was kept)."),
  deadStatus: int().nullable(),
  isCallerPane: z.boolean().describe("This is the pane this MCP server runs in."),
  isAttended: z.boolean().describe("A person is looking at this pane right now."),
  ...metadataBound,
};

/** What snapshot_pane returns. */
type SnapshotPaneData = z.infer<z.ZodObject<typeof snapshotOutput>>;

/**
 * snapshot_pane's work on an already taken snapshot: exported so a test can show what happens
 * when the pane closes between the listing and the capture.
 */
export async function snapshotPaneFrom(
  ctx: TmuxContext,
  snapshot: Snapshot,
  args: { paneId: string; maxLines?: number; joinWrapped?: boolean; escapes?: boolean },
): Promise<{ data: SnapshotPaneData; cut: TailCut }> {
  const p = ctx.pane(snapshot, args.paneId);
  const caller = ctx.caller(snapshot);
  const attended = ctx.attended(snapshot);
  // Each session name cut, and as many placements as fit (the names cut count as metadata).
  const placements = fitPlacements(
    p.placements.map(({ index, sessionId, sessionName }) => ({ index, sessionId, sessionName })),
  );
  const meta = withOmittedMetadata(
    boundMetadata({
      title: p.title,
      command: p.command,
      cwd: p.cwd,
      windowName: p.windowName,
    }, ["title", "command", "cwd", "windowName"]),
    placements.omittedMetadataBytes,
  );
  const atPrompt = await paneAtPrompt(ctx.runner, ctx.address, p.id, p, ctx.signal);
  return await readContent(
    ctx,
    p.id,
    args,
    args.maxLines ?? DEFAULT_MAX_LINES,
    ({ state }) => ({
      paneId: p.id,
      windowId: p.windowId,
      ...meta,
      placements: placements.placements,
      omittedPlacements: placements.omittedPlacements,
      width: state.width,
      height: state.height,
      cursorX: state.cursorX,
      cursorY: state.cursorY,
      inMode: state.inMode,
      mode: state.mode,
      scrollPosition: state.scrollPosition,
      alternateScreen: state.alternateScreen,
      historySize: state.historySize,
      historyLimit: state.historyLimit,
      atPrompt: atPrompt && !state.dead,
      dead: state.dead,
      deadStatus: p.deadStatus,
      isCallerPane: p.id === caller.paneId,
      isAttended: attended.has(p.id),
    }),
    `Pane ${p.id} closed after it was listed, before its content could be read.`,
  );
}

const snapshotPane = defineTool({
  name: "snapshot_pane",
  title: "Snapshot pane",
  toolset: "inspect",
  description: "A pane's screen with cursor, size, mode, title, command, cwd, watchers, from one " +
    "instant.",
  input: {
    paneId: paneIdSchema,
    maxLines: maxLinesSchema,
    joinWrapped: z.boolean().optional(),
    escapes: z.boolean().optional(),
  },
  output: snapshotOutput,
  annotations: READ_ONLY,
  async run(args, ctx) {
    const { snapshot } = await ctx.paneSnapshot(args.paneId);
    const { data, cut } = await snapshotPaneFrom(ctx, snapshot, args);
    const flags = [
      data.atPrompt ? "at its prompt" : "",
      data.alternateScreen ? "full-screen program" : "",
      data.inMode ? data.mode || "in a mode" : "",
      data.dead ? "dead" : "",
      data.isAttended ? "watched by a person" : "",
      data.isCallerPane ? "this server's own pane" : "",
    ].filter((f) => f !== "");
    return {
      data,
      summary:
        `Pane ${data.paneId} (${
          data.command ? JSON.stringify(clip(data.command, 200)) : "no command"
        }, ${data.width}x${data.height}` +
        `, cursor ${data.cursorX},${data.cursorY}${
          flags.length ? `, ${flags.join(", ")}` : ""
        }): ` +
        `${plural(data.returnedLines, "line")}.${cutNote(cut)}` +
        placementsNote(data.omittedPlacements),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// capture_since

const MISSED_REASONS = ["history-cleared", "history-trimmed", "resized"] as const;

const captureSinceTool = defineTool({
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
        `The history reached its limit (${state.historyLimit} lines; tmux then drops the oldest ${step} at once) and the lines the cursor pointed at were dropped: lines written since may have scrolled away unread.`,
      );
    } else if (since.missedReason === "resized") {
      notes.push(
        "The pane's width changed and tmux reflowed its lines; the cursor's position could not be found again.",
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

// ---------------------------------------------------------------------------------------------
// show_buffer

const showBuffer = defineTool({
  name: "show_buffer",
  title: "Show paste buffer",
  toolset: "inspect",
  description: "A paste buffer's text (default: the newest).",
  input: {
    name: z.string().min(1).max(4096).optional(),
  },
  output: {
    name: z.string(),
    size: count().describe("The buffer's size in bytes, as tmux counts it."),
    created: z.string().describe("When it was created (ISO 8601, UTC)."),
    ...textBound,
    totalLines: count(),
    complete: z.boolean(),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const guard = newGuard();
    const listed = parseRecords(
      await ctx.read([
        "list-buffers",
        "-F",
        recordFormat(guard, [
          "#{buffer_name}",
          "#{buffer_size}",
          "#{buffer_created}",
          "#{pid}",
        ]),
      ]),
      guard,
      4,
    );
    const names = () => `Buffers: ${nameList(listed.map(([n]) => n))}.`;
    if (listed.length === 0) {
      throw new ToolFailure(
        `There are no paste buffers on ${ctx.socketLabel}.`,
        "Copy mode or load_buffer creates one.",
      );
    }
    // tmux's own default (show-buffer without -b) skips named buffers; the newest of any kind
    // is what a person means by "the last buffer", and list-buffers lists newest first.
    const entry = args.name === undefined ? listed[0] : listed.find(([n]) => n === args.name);
    if (!entry) {
      throw new ToolFailure(
        `No paste buffer ${JSON.stringify(args.name)} on ${ctx.socketLabel}.`,
        names(),
      );
    }
    const [name, size, created, pid] = entry;
    const bytes = await readBufferBytes(ctx, name, names, intValue(pid));
    const lines = decodeBytes(bytes).split("\n");
    const shell = {
      name,
      size: intValue(size),
      created: new Date(intValue(created) * 1000).toISOString(),
      ...EMPTY_TAIL,
      totalLines: lines.length,
      complete: true,
    };
    const cut = tailLines(lines, Number.MAX_SAFE_INTEGER, textBudget(ctx, shell));
    return {
      data: {
        ...shell,
        ...cut,
        complete: cut.droppedLines === 0 && cut.omittedBytes === 0,
      },
      summary: `Buffer ${JSON.stringify(name)}: ${shell.size} bytes.${cutNote(cut)}`,
    };
  },
});

/** Registers capture_pane, snapshot_pane, capture_since and show_buffer (toolset inspect). */
export function registerCaptureTools(registry: ToolRegistry): void {
  registry.add(capturePane, snapshotPane, captureSinceTool, showBuffer);
}
