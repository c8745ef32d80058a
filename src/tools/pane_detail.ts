/**
 * One pane in full (get_pane_info), or the one at a corner of a window (find_pane_by_position):
 * both answer with the same detail, read from one snapshot plus the pane's owner mark, whether
 * it is at its prompt and, for a dead pane tmux gave no status, its exit status.
 *
 * @module
 */

import { z } from "zod";
import {
  boundMetadata,
  fitPlacements,
  MAX_METADATA_BYTES,
  MAX_PLACEMENTS_BYTES,
  placementsNote,
  withOmittedMetadata,
} from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { clip, ToolFailure } from "../mcp/errors.ts";
import { ownerOf } from "../mcp/ownership.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import {
  count,
  int,
  metadataBound,
  paneIdSchema,
  windowIdArg,
  windowIdSchema,
  windowPlacementSchema,
} from "../mcp/schemas.ts";
import { paneAtPrompt } from "../tmux/prompt.ts";
import type { PaneRow, Snapshot } from "../tmux/snapshot.ts";
import { endedBy, paneEnd } from "./pane_probe.ts";

// ---------------------------------------------------------------------------------------------
// get_pane_info

const paneDetail = {
  id: paneIdSchema,
  windowId: windowIdSchema,
  windowName: z.string(),
  index: int(),
  active: z.boolean(),
  command: z.string().describe("The command tmux reports running in it."),
  atPrompt: z.boolean().describe("Its shell holds the terminal: at its prompt, nothing running."),
  owner: z.string().nullable().describe(
    "The tmux-mcp server that created it (its @tmux-mcp-owner mark), or null.",
  ),
  ownedByThisServer: z.boolean(),
  startCommand: z.string().describe("The command the pane was started with, if any."),
  cwd: z.string(),
  title: z.string(),
  pid: int().describe("Process id of the pane's process."),
  tty: z.string().describe("The pane's terminal device."),
  width: count(),
  height: count(),
  left: int().describe("Left edge column, 0-based, window-relative."),
  top: int().describe("Top edge row, 0-based, window-relative."),
  right: int().describe("Right edge column (inclusive)."),
  bottom: int().describe("Bottom edge row (inclusive)."),
  atLeft: z.boolean(),
  atRight: z.boolean(),
  atTop: z.boolean(),
  atBottom: z.boolean(),
  dead: z.boolean(),
  deadStatus: int().nullable().describe("Exit status of a dead pane's process."),
  deadSignal: int().nullable().describe("Signal that ended it (no status then)."),
  inMode: z.boolean().describe("Whether the pane is in copy mode or another mode."),
  mode: z.string().describe("The mode's name (copy-mode, view-mode...), or empty."),
  inputOff: z.boolean(),
  alternateScreen: z.boolean().describe("A full-screen program (vim, less) has the screen."),
  cursorX: count(),
  cursorY: count(),
  historySize: count().describe("Lines of scrollback held."),
  historyLimit: count(),
  synchronized: z.boolean().describe("Whether synchronize-panes is on for its window."),
  piped: z.boolean().describe("Whether pipe-pane copies its output somewhere."),
  isCallerPane: z.boolean().describe("This is the pane this MCP server runs in."),
  isAttended: z.boolean().describe("A person is currently looking at this pane."),
  watchedBy: z.array(z.string()).describe("Clients (ttys) showing it to a person."),
  placements: z.array(windowPlacementSchema),
  omittedPlacements: count(),
  ...metadataBound,
};

/** The pane's text fields, each cut as metadata. */
const TEXT_FIELDS = [
  "owner",
  "windowName",
  "command",
  "startCommand",
  "cwd",
  "title",
  "tty",
] as const;

/**
 * Room for the pane's detail beside its text fields and placements (numbers, flags, ids, the
 * clients watching it): the text fields take at most half the result bound, the placements a
 * quarter, so the whole object fits the bound whatever a pane (or the program in it) names.
 */
function detailBudget(maxResultBytes: number): { field: number; placements: number } {
  return {
    field: Math.min(MAX_METADATA_BYTES, Math.floor(maxResultBytes / 2 / TEXT_FIELDS.length)),
    placements: Math.min(MAX_PLACEMENTS_BYTES, Math.floor(maxResultBytes / 4)),
  };
}

async function paneDetailData(p: PaneRow, snapshot: Snapshot, ctx: TmuxContext) {
  const caller = ctx.caller(snapshot);
  const watchers = ctx.attended(snapshot).get(p.id) ?? [];
  const mark = await ownerOf(ctx, p.id);
  const budget = detailBudget(ctx.config.maxResultBytes);
  const bounded = boundMetadata(
    {
      owner: mark,
      windowName: p.windowName,
      command: p.command,
      startCommand: p.startCommand,
      cwd: p.cwd,
      title: p.title,
      tty: p.tty,
    },
    TEXT_FIELDS,
    budget.field,
  );
  const { placements, omittedPlacements, omittedMetadataBytes: cutNames } = fitPlacements(
    p.placements,
    budget.placements,
  );
  return {
    id: p.id,
    windowId: p.windowId,
    index: p.index,
    active: p.active,
    ...withOmittedMetadata(bounded, cutNames),
    owner: mark === "" ? null : bounded.owner,
    ownedByThisServer: mark !== "" && mark === ctx.config.owner,
    atPrompt: await paneAtPrompt(ctx.runner, ctx.address, p.id, p, ctx.signal),
    pid: p.pid,
    width: p.width,
    height: p.height,
    left: p.left,
    top: p.top,
    right: p.right,
    bottom: p.bottom,
    atLeft: p.atLeft,
    atRight: p.atRight,
    atTop: p.atTop,
    atBottom: p.atBottom,
    dead: p.dead,
    ...await paneEnd(ctx, p),
    inMode: p.inMode,
    mode: p.mode,
    inputOff: p.inputOff,
    alternateScreen: p.alternateScreen,
    cursorX: p.cursorX,
    cursorY: p.cursorY,
    historySize: p.historySize,
    historyLimit: p.historyLimit,
    synchronized: p.synchronized,
    piped: p.piped,
    isCallerPane: p.id === caller.paneId,
    isAttended: watchers.length > 0,
    watchedBy: watchers.map((c) => c.tty || c.name),
    placements,
    omittedPlacements,
  };
}

/** get_pane_info: one pane in full. */
export const getPaneInfo = defineTool({
  name: "get_pane_info",
  title: "Pane info",
  toolset: "inspect",
  description:
    "One pane in full: geometry, pid, tty, commands, cwd, title, mode, cursor, watchers.",
  input: { paneId: paneIdSchema },
  output: paneDetail,
  annotations: READ_ONLY,
  async run(args, ctx) {
    const { snapshot, pane: p } = await ctx.paneSnapshot(args.paneId);
    const data = await paneDetailData(p, snapshot, ctx);
    return {
      data,
      summary:
        `Pane ${p.id} in ${p.windowId}: ${
          p.command ? JSON.stringify(clip(p.command, 200)) : "(no command)"
        } in ${JSON.stringify(clip(p.cwd, 300))}, ${p.width}x${p.height}${
          p.dead ? `, dead${endedBy(data.deadStatus, data.deadSignal)}` : ""
        }${data.atPrompt ? ", at its prompt" : ""}${
          p.inputOff ? ", input turned off (select-pane -d): nothing typed arrives" : ""
        }${data.isAttended ? ", watched by a person" : ""}${
          data.isCallerPane ? ", this server's own pane" : ""
        }.` +
        placementsNote(data.omittedPlacements),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// find_pane_by_position

const CORNERS = ["top-left", "top-right", "bottom-left", "bottom-right"] as const;

/** find_pane_by_position: the pane at a corner of a window, in full. */
export const findPaneByPosition = defineTool({
  name: "find_pane_by_position",
  title: "Find pane at a corner",
  toolset: "inspect",
  description: "The pane at a corner of a window.",
  input: {
    windowId: windowIdArg,
    position: z.enum(CORNERS),
  },
  output: paneDetail,
  annotations: READ_ONLY,
  async run(args, ctx) {
    const snapshot = await ctx.windowSnapshot(args.windowId);
    const w = ctx.window(snapshot, args.windowId);
    const [vertical, horizontal] = args.position.split("-") as ["top" | "bottom", "left" | "right"];
    const found = snapshot.panes.filter((p) =>
      p.windowId === w.id &&
      (vertical === "top" ? p.atTop : p.atBottom) &&
      (horizontal === "left" ? p.atLeft : p.atRight)
    );
    // A zoomed window reports the zoomed pane at every edge; prefer the active one then.
    const pane = found.find((p) => p.active) ?? found[0];
    if (!pane) {
      throw new ToolFailure(
        `tmux reports no pane at the ${args.position} corner of ${w.id}.`,
        "get_window_info shows each pane's geometry.",
      );
    }
    const data = await paneDetailData(pane, snapshot, ctx);
    return {
      data,
      summary: `Pane ${pane.id} is at the ${args.position} of ${w.id}.` +
        placementsNote(data.omittedPlacements),
    };
  },
});
