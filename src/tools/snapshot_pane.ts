/**
 * snapshot_pane: a pane's screen together with its cursor, size, mode, title, command, cwd and
 * who watches it, all from one instant. Registered in capture.ts.
 *
 * @module
 */

import { z } from "zod";
import {
  boundMetadata,
  fitPlacements,
  placementsNote,
  type TailCut,
  withOmittedMetadata,
} from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { clip } from "../mcp/errors.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { count, int, metadataBound, paneIdSchema, panePlacementSchema } from "../mcp/schemas.ts";
import { paneAtPrompt } from "../tmux/prompt.ts";
import type { Snapshot } from "../tmux/snapshot.ts";
import { cutNote, DEFAULT_MAX_LINES, maxLinesSchema } from "./reading_bounds.ts";
import { plural } from "./arguments.ts";
import { contentOutput, readContent } from "./pane_content.ts";
import { endedBy, paneEnd } from "./pane_probe.ts";

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
  deadSignal: int().nullable(),
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
  // As get_pane_info tells it: a status tmux has yet to learn, or the signal (pane_probe.ts).
  const end = await paneEnd(ctx, p);
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
      ...(state.dead ? end : { deadStatus: null, deadSignal: null }),
      isCallerPane: p.id === caller.paneId,
      isAttended: attended.has(p.id),
    }),
    `Pane ${p.id} closed after it was listed, before its content could be read.`,
  );
}

/** snapshot_pane. */
export const snapshotPane = defineTool({
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
      data.dead ? `dead${endedBy(data.deadStatus, data.deadSignal)}` : "",
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
