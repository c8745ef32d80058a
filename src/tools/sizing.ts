/**
 * The shape of a window's panes: select_layout, resize_pane and resize_window, with zoom as a
 * state, never a toggle (registered with the arranging tools, layout.ts). Sizes are held to
 * the cell cap tmux survives (tmux_limits.ts), and a layout string to one tmux could have
 * printed (layout_string.ts).
 *
 * @module
 */

import { z } from "zod";
import { checkedAgain } from "../mcp/act_step.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { changeView, guardView } from "../mcp/view_guard.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import {
  checkedString,
  count,
  int,
  paneIdSchema,
  windowIdArg,
  windowIdSchema,
} from "../mcp/schemas.ts";
import { layoutStringProblem } from "../tmux/layout_string.ts";
import type { WindowSize } from "../tmux/window_cells.ts";
import { notesField } from "./arguments.ts";
import { ARRANGES, ARRANGES_AGAIN, windowPanes } from "./arranging.ts";
import { MANUAL_SIZE_NOTE, sizeSchema } from "./lifecycle.ts";
import { checkWindowCells } from "./tmux_limits.ts";
import { zoomNote } from "./placement.ts";

const PRESET_LAYOUTS = [
  "even-horizontal",
  "even-vertical",
  "main-horizontal",
  "main-vertical",
  "tiled",
] as const;

/** Names a preset or starts like a layout string (a checksum, then a width). */
const LAYOUT_START = /^[0-9a-fA-F]{4},\d/;

/**
 * Refuses what is no preset and no layout string tmux could have printed: tmux trusts the
 * cells of a layout string, and some it did not print crash the server (layout_string.ts).
 */
function checkLayout(layout: string, current: WindowSize): void {
  if ((PRESET_LAYOUTS as readonly string[]).includes(layout)) return;
  const hint = `Presets: ${PRESET_LAYOUTS.join(", ")}; list_windows shows layout strings.`;
  if (!LAYOUT_START.test(layout)) {
    throw new ToolFailure(
      `${JSON.stringify(layout)} is neither a preset layout nor a tmux layout string.`,
      hint,
    );
  }
  // tmux resizes the window to the outermost cell's size, whatever size it had (and then back
  // to the size its window-size keeps): held to the cap, or to the window's own cells for a
  // window already larger.
  const root = /^[0-9a-fA-F]{4},(\d{1,5})x(\d{1,5}),/.exec(layout);
  if (root !== null) {
    checkWindowCells(Number(root[1]), Number(root[2]), "That layout string", current);
  }
  const problem = layoutStringProblem(layout, current);
  if (problem !== undefined) {
    throw new ToolFailure(
      `That layout string is not one tmux prints (${problem}); tmux could crash on it.`,
      hint,
    );
  }
}

/** select_layout. */
export const selectLayout = defineTool({
  name: "select_layout",
  title: "Select layout",
  toolset: "manage",
  description:
    "Apply a preset layout (tiled, even-vertical...) or one list_windows gave. Refused if " +
    "watched.",
  input: {
    windowId: windowIdArg,
    layout: checkedString(8_192),
  },
  output: {
    windowId: windowIdSchema,
    layout: z.string().describe("The window's layout string now."),
    zoomed: z.boolean(),
  },
  annotations: ARRANGES,
  async run(args, ctx) {
    const { snapshot, window } = await ctx.windowAlone(args.windowId);
    checkLayout(args.layout, window);
    await changeView(ctx, snapshot, { windows: [window.id] }, `Rearranging window ${window.id}`, [
      ["select-layout", "-t", window.id, "--", args.layout],
    ]);
    const { window: after } = await ctx.windowAlone(window.id);
    // tmux 3.3a unzooms a window to lay it out, and has no flag that keeps the zoom: said.
    const note = window.zoomed && !after.zoomed
      ? zoomNote(window.id, undefined, null, "lay it out")
      : null;
    return {
      data: { windowId: window.id, layout: after.layout, zoomed: after.zoomed },
      summary: `Window ${window.id} now has layout ${after.layout}.` +
        (note === null ? "" : ` ${note}`),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// resize_pane / resize_window (zoom as a state)

/**
 * Brings a window's zoom to the wanted state through `pane` (by default its active pane):
 * tmux's `resize-pane -Z` only toggles, unzooms when another pane is zoomed, and does nothing
 * in a one-pane window. Returns the notes on where the end state differs.
 */
async function settleZoom(
  ctx: TmuxContext,
  windowId: string,
  pane: string | undefined,
  want: boolean,
): Promise<string[]> {
  const before = await ctx.windowSnapshot(windowId);
  const window = ctx.window(before, windowId);
  const active = windowPanes(before, windowId).find((p) => p.active);
  const paneId = pane ?? active?.id;
  if (paneId === undefined) return [];
  const steps: string[][] = [];
  if (want) {
    if (window.zoomed && active?.id !== paneId) {
      // Unzoomed, then zoomed on `paneId`: a person's after-resize-pane hook may hold the line
      // between the two while they come to the window; tmux checks again before the zoom, and
      // else zooms the window back on the pane it was zoomed on, in the same step.
      steps.push(["resize-pane", "-Z", "-t", paneId]);
      const back = active === undefined ? [] : [["resize-pane", "-Z", "-t", active.id]];
      steps.push(checkedAgain(["resize-pane", "-Z", "-t", paneId], back));
    } else if (!window.zoomed) steps.push(["resize-pane", "-Z", "-t", paneId]);
  } else if (window.zoomed) {
    steps.push(["resize-pane", "-Z", "-t", paneId]);
  }
  if (steps.length > 0) {
    await changeView(
      ctx,
      before,
      { windows: [windowId], windowsOf: [paneId] },
      `Zooming in ${windowId}`,
      steps,
    );
  }
  const zoomed = (await ctx.windowAlone(windowId)).window.zoomed;
  if (want && !zoomed) {
    return window.panes === 1
      ? ["tmux does not zoom a window with a single pane; it stays unzoomed."]
      : ["tmux left the window unzoomed."];
  }
  return [];
}

const DIRECTION_FLAGS = { up: "-U", down: "-D", left: "-L", right: "-R" } as const;

/** resize_pane. */
export const resizePane = defineTool({
  name: "resize_pane",
  title: "Resize pane",
  toolset: "manage",
  description:
    "Resize a pane, or by amount in direction; zoom: the zoom state. Refused if watched.",
  input: {
    paneId: paneIdSchema,
    width: sizeSchema.optional(),
    height: sizeSchema.optional(),
    direction: z.enum(["up", "down", "left", "right"]).optional(),
    amount: int().min(1).max(10_000).optional(),
    zoom: z.boolean().optional(),
  },
  output: {
    paneId: paneIdSchema,
    windowId: windowIdSchema,
    width: count(),
    height: count(),
    zoomed: z.boolean().describe("Whether this pane fills its window (zoomed) now."),
    notes: notesField,
  },
  annotations: ARRANGES_AGAIN,
  async run(args, ctx) {
    if ((args.direction === undefined) !== (args.amount === undefined)) {
      throw new ToolFailure(
        "direction and amount go together.",
        'Pass both (e.g. direction: "left", amount: 5), or width/height for an absolute size.',
      );
    }
    const resizes = args.width !== undefined || args.height !== undefined ||
      args.direction !== undefined;
    if (!resizes && args.zoom === undefined) {
      throw new ToolFailure(
        "Nothing to do: give width, height, direction and amount, or zoom.",
        "For example {paneId, width: 80} or {paneId, zoom: true}.",
      );
    }
    const { snapshot, pane } = await ctx.paneSnapshot(args.paneId);
    // One command, sizes then the adjustment (tmux applies -x/-y first): nothing of a person's
    // (an after-resize-pane hook) runs between them.
    const step = ["resize-pane", "-t", pane.id];
    if (args.width !== undefined) step.push("-x", String(args.width));
    if (args.height !== undefined) step.push("-y", String(args.height));
    if (args.direction !== undefined && args.amount !== undefined) {
      step.push(DIRECTION_FLAGS[args.direction], String(args.amount));
    }
    const steps = resizes ? [step] : [];
    if (steps.length > 0) {
      await changeView(
        ctx,
        snapshot,
        { windowsOf: [pane.id] },
        `Resizing pane ${pane.id}`,
        steps,
      );
    } else {
      guardView(ctx, snapshot, { windows: [pane.windowId] }, `Zooming in ${pane.windowId}`);
    }
    const notes = args.zoom === undefined
      ? []
      : await settleZoom(ctx, pane.windowId, pane.id, args.zoom);
    const { pane: now } = await ctx.paneSnapshot(pane.id);
    const zoomed = now.windowZoomed && now.active;
    // tmux 3.3a unzooms a window to resize a pane of it (no flag keeps the zoom): said, unless
    // the call sets the zoom itself.
    if (steps.length > 0 && args.zoom === undefined && pane.windowZoomed && !now.windowZoomed) {
      notes.push(zoomNote(now.windowId, undefined, null, "resize a pane of it")!);
    }
    if (
      (args.width !== undefined && typeof args.width === "number" && now.width !== args.width &&
        !zoomed) ||
      (args.height !== undefined && typeof args.height === "number" &&
        now.height !== args.height && !zoomed)
    ) {
      notes.push(
        `tmux made the pane ${now.width}x${now.height}: a pane cannot outgrow its window or squeeze its neighbours below one cell.`,
      );
    }
    return {
      data: {
        paneId: pane.id,
        windowId: now.windowId,
        width: now.width,
        height: now.height,
        zoomed,
        notes,
      },
      summary: `Pane ${pane.id} is ${now.width}x${now.height}${zoomed ? ", zoomed" : ""}.` +
        (notes.length ? ` ${notes.join(" ")}` : ""),
    };
  },
});

/** resize_window. */
export const resizeWindow = defineTool({
  name: "resize_window",
  title: "Resize window",
  toolset: "manage",
  description: "Resize a window; zoom: its active pane's zoom state. Refused if watched.",
  input: {
    windowId: windowIdArg,
    width: int().min(1).max(10_000).optional(),
    height: int().min(1).max(10_000).optional(),
    zoom: z.boolean().optional(),
  },
  output: {
    windowId: windowIdSchema,
    width: count(),
    height: count(),
    zoomed: z.boolean(),
    activePaneId: paneIdSchema.nullable(),
    notes: notesField,
  },
  annotations: ARRANGES,
  async run(args, ctx) {
    if (args.width === undefined && args.height === undefined && args.zoom === undefined) {
      throw new ToolFailure(
        "Nothing to do: give width, height or zoom.",
        "For example {windowId, width: 120, height: 40} or {windowId, zoom: true}.",
      );
    }
    const { snapshot, window } = await ctx.windowAlone(args.windowId);
    if (args.width !== undefined || args.height !== undefined) {
      checkWindowCells(
        args.width ?? window.width,
        args.height ?? window.height,
        `Resizing window ${window.id}`,
        window,
      );
      const argv = ["resize-window", "-t", window.id];
      if (args.width !== undefined) argv.push("-x", String(args.width));
      if (args.height !== undefined) argv.push("-y", String(args.height));
      await changeView(ctx, snapshot, { windows: [window.id] }, `Resizing window ${window.id}`, [
        argv,
      ]);
    } else {
      guardView(ctx, snapshot, { windows: [window.id] }, `Zooming in ${window.id}`);
    }
    const notes: string[] = [];
    if (args.width !== undefined || args.height !== undefined) notes.push(MANUAL_SIZE_NOTE);
    if (args.zoom !== undefined) {
      notes.push(...await settleZoom(ctx, window.id, undefined, args.zoom));
    }
    const after = await ctx.windowSnapshot(window.id);
    const now = ctx.window(after, window.id);
    return {
      data: {
        windowId: window.id,
        width: now.width,
        height: now.height,
        zoomed: now.zoomed,
        activePaneId: windowPanes(after, window.id).find((p) => p.active)?.id ?? null,
        notes,
      },
      summary: `Window ${window.id} is ${now.width}x${now.height}${now.zoomed ? ", zoomed" : ""}.` +
        (notes.length ? ` ${notes.join(" ")}` : ""),
    };
  },
});
