/**
 * Arranging: renaming, selecting, resizing, zooming, swapping and moving; pane titles,
 * synchronized input, copy mode, and tmux's wait-for channels (channels.ts). Toolset manage:
 * nothing here starts a process or types into one.
 *
 * Every tool answers with the state tmux ended in, read back from tmux after the change —
 * not the state that was asked for. Zoom is a state, never a toggle: `zoom: true` means
 * zoomed afterwards, whatever it was before.
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { changeView, guardView } from "../mcp/view_guard.ts";
import { holdsNoLink, secondLink } from "../mcp/lone_links.ts";
import { defineTool, type ToolAnnotations, type ToolRegistry } from "../mcp/registry.ts";
import {
  checkedString,
  count,
  flag,
  int,
  paneIdSchema,
  sessionIdSchema,
  sessionRefSchema,
  windowIdArg,
  windowIdSchema,
  windowPlacementSchema,
} from "../mcp/schemas.ts";
import { layoutStringProblem } from "../tmux/layout_string.ts";
import type { WindowSize } from "../tmux/window_cells.ts";
import {
  type PaneRow,
  type SessionRow,
  SESSIONS_ONLY,
  type Snapshot,
  type WindowRow,
} from "../tmux/snapshot.ts";
import {
  changes,
  checkNames,
  formatArg,
  nameSchema,
  notesField,
  renameChecked,
  requireStored,
} from "./arguments.ts";
import { signalChannel, waitForChannel } from "./channels.ts";
import { sizeSchema } from "./lifecycle.ts";
import { checkWindowCells } from "./tmux_limits.ts";

/** Changes the arrangement, destroys nothing; the same call again changes nothing more. */
const ARRANGES: ToolAnnotations = changes({ destructive: false, idempotent: true });

/** As {@link ARRANGES}, but a repeat does something again (a relative resize, a swap). */
const ARRANGES_AGAIN: ToolAnnotations = { ...ARRANGES, idempotentHint: false };

/** The session a window is placed in, when that choice matters and may be ambiguous. */
function placementIn(
  ctx: TmuxContext,
  snapshot: Snapshot,
  window: WindowRow,
  sessionRef: string | undefined,
  what: string,
): SessionRow {
  if (sessionRef === undefined) {
    if (window.placements.length > 1) {
      throw new ToolFailure(
        `Window ${window.id} is linked into ${window.placements.length} sessions (${
          window.placements.map((p) => `${p.sessionId} ${JSON.stringify(p.sessionName)}`).join(
            ", ",
          )
        }), so ${what} is ambiguous.`,
        "Pass the session it should act in (list_windows shows the placements).",
      );
    }
    return ctx.session(snapshot, window.placements[0].sessionId);
  }
  const session = ctx.session(snapshot, sessionRef);
  if (!window.placements.some((p) => p.sessionId === session.id)) {
    throw new ToolFailure(
      `Window ${window.id} is not in session ${session.id} ${JSON.stringify(session.name)}.`,
      `It is in ${
        window.placements.map((p) => `${p.sessionId} ${JSON.stringify(p.sessionName)}`).join(", ")
      }.`,
    );
  }
  return session;
}

function windowPanes(snapshot: Snapshot, windowId: string): PaneRow[] {
  return snapshot.panes.filter((p) => p.windowId === windowId);
}

// ---------------------------------------------------------------------------------------------
// rename_session / rename_window

const renameSession = defineTool({
  name: "rename_session",
  title: "Rename session",
  toolset: "manage",
  description: "Rename a session; names tmux would rewrite are refused.",
  input: {
    session: sessionRefSchema,
    name: nameSchema,
  },
  output: { sessionId: sessionIdSchema, name: z.string(), previousName: z.string() },
  annotations: ARRANGES,
  async run(args, ctx) {
    await checkNames(ctx, [["session name", args.name]]);
    const snapshot = await ctx.snapshot(SESSIONS_ONLY);
    const session = ctx.session(snapshot, args.session);
    const clash = snapshot.sessions.find((s) => s.name === args.name && s.id !== session.id);
    if (clash) {
      throw new ToolFailure(
        `Another session, ${clash.id}, is already named ${JSON.stringify(args.name)}.`,
        "Choose another name (list_sessions lists the names in use).",
      );
    }
    const name = await renameChecked(
      "session name",
      args.name,
      session.name,
      async (name) => {
        await ctx.run(["rename-session", "-t", session.id, "--", formatArg(name)]);
        return ctx.session(await ctx.snapshot(SESSIONS_ONLY), session.id).name;
      },
      "rename_session again with a plainer name.",
    );
    return {
      data: { sessionId: session.id, name, previousName: session.name },
      summary: `Session ${session.id} is now named ${JSON.stringify(name)}.`,
    };
  },
});

const renameWindow = defineTool({
  name: "rename_window",
  title: "Rename window",
  toolset: "manage",
  description: "Rename a window; names tmux would rewrite are refused.",
  input: {
    windowId: windowIdArg,
    name: nameSchema,
  },
  output: {
    windowId: windowIdSchema,
    name: z.string(),
    previousName: z.string(),
  },
  annotations: ARRANGES,
  async run(args, ctx) {
    await checkNames(ctx, [["window name", args.name]]);
    const { window } = await ctx.windowAlone(args.windowId);
    const name = await renameChecked(
      "window name",
      args.name,
      window.name,
      async (name) => {
        await ctx.run(["rename-window", "-t", window.id, "--", formatArg(name)]);
        return (await ctx.windowAlone(window.id)).window.name;
      },
      "rename_window again with a plainer name.",
    );
    return {
      data: { windowId: window.id, name, previousName: window.name },
      // tmux's rename-window turns the window's automatic-rename off: the name no longer
      // follows its program, which a person who relied on that would otherwise not learn.
      summary: `Window ${window.id} is now named ${JSON.stringify(name)}; tmux keeps that name ` +
        "(its automatic-rename is off now).",
    };
  },
});

// ---------------------------------------------------------------------------------------------
// select_window / select_pane

const selectWindow = defineTool({
  name: "select_window",
  title: "Select window",
  toolset: "manage",
  description: "Make a window its session's current one. Refused while a person is attached.",
  input: {
    windowId: windowIdArg,
    session: sessionRefSchema.optional(),
  },
  output: {
    windowId: windowIdSchema,
    sessionId: sessionIdSchema,
    index: int(),
    active: z.boolean().describe("Whether it is the session's current window now."),
  },
  annotations: ARRANGES,
  async run(args, ctx) {
    const { snapshot, window } = await ctx.windowAlone(args.windowId, { sessions: true });
    const session = placementIn(ctx, snapshot, window, args.session, "selecting it");
    await changeView(ctx, snapshot, { sessions: [session.id] }, `Selecting window ${window.id}`, [
      ["select-window", "-t", `${session.id}:${window.id}`],
    ]);
    const { window: now } = await ctx.windowAlone(window.id);
    const after = now.placements.find((p) => p.sessionId === session.id);
    if (!after) throw new ToolFailure(`Window ${window.id} left ${session.id} meanwhile.`);
    return {
      data: {
        windowId: window.id,
        sessionId: session.id,
        index: after.index,
        active: after.active,
      },
      summary: `Window ${window.id} is ${
        after.active ? "now" : "not"
      } the current window of ${session.id}.`,
    };
  },
});

const selectPane = defineTool({
  name: "select_pane",
  title: "Select pane",
  toolset: "manage",
  description: "Make a pane its window's active one. Refused if watched.",
  input: { paneId: paneIdSchema },
  output: {
    paneId: paneIdSchema,
    windowId: windowIdSchema,
    active: z.boolean(),
    windowZoomed: z.boolean(),
  },
  annotations: ARRANGES,
  async run(args, ctx) {
    const { snapshot, pane } = await ctx.paneSnapshot(args.paneId);
    await changeView(ctx, snapshot, { windowsOf: [pane.id] }, `Selecting pane ${pane.id}`, [
      ["select-pane", "-t", pane.id],
    ]);
    const { pane: now } = await ctx.paneSnapshot(pane.id);
    return {
      data: {
        paneId: pane.id,
        windowId: now.windowId,
        active: now.active,
        windowZoomed: now.windowZoomed,
      },
      summary: `Pane ${pane.id} is ${
        now.active ? "now" : "not"
      } the active pane of ${now.windowId}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// select_layout

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

const selectLayout = defineTool({
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
    return {
      data: { windowId: window.id, layout: after.layout, zoomed: after.zoomed },
      summary: `Window ${window.id} now has layout ${after.layout}.`,
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
    if (window.zoomed && active?.id !== paneId) steps.push(["resize-pane", "-Z", "-t", paneId]);
    if (!window.zoomed || active?.id !== paneId) steps.push(["resize-pane", "-Z", "-t", paneId]);
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

const resizePane = defineTool({
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
    const steps: string[][] = [];
    if (args.width !== undefined || args.height !== undefined) {
      const step = ["resize-pane", "-t", pane.id];
      if (args.width !== undefined) step.push("-x", String(args.width));
      if (args.height !== undefined) step.push("-y", String(args.height));
      steps.push(step);
    }
    if (args.direction !== undefined && args.amount !== undefined) {
      steps.push([
        "resize-pane",
        "-t",
        pane.id,
        DIRECTION_FLAGS[args.direction],
        String(args.amount),
      ]);
    }
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

const resizeWindow = defineTool({
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
    if (args.width !== undefined || args.height !== undefined) {
      // tmux's own doing, said so that a window that later keeps its size surprises nobody.
      notes.push(
        "tmux keeps this window at that size from now on (resize-window sets its window-size " +
          "option to manual); set_option window-size to latest (scope window) gives its size " +
          "back to the clients.",
      );
    }
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

// ---------------------------------------------------------------------------------------------
// swap_pane / move_window

const paneSpot = z.strictObject({
  paneId: paneIdSchema,
  windowId: windowIdSchema,
  index: int().describe("The pane's index in its window."),
});

const swapPane = defineTool({
  name: "swap_pane",
  title: "Swap panes",
  toolset: "manage",
  description: "Swap two panes' places. Refused if watched.",
  input: {
    paneId: paneIdSchema,
    targetPaneId: paneIdSchema,
  },
  output: { panes: z.array(paneSpot) },
  annotations: ARRANGES_AGAIN,
  async run(args, ctx) {
    if (args.paneId === args.targetPaneId) {
      throw new ToolFailure(
        "A pane cannot swap with itself.",
        "Pass two different pane ids.",
      );
    }
    const snapshot = await ctx.paneList();
    const a = ctx.pane(snapshot, args.paneId);
    const b = ctx.pane(snapshot, args.targetPaneId);
    await changeView(
      ctx,
      snapshot,
      { windowsOf: [a.id, b.id] },
      `Swapping ${a.id} and ${b.id}`,
      [["swap-pane", "-d", "-s", a.id, "-t", b.id]],
    );
    const after = await ctx.paneList();
    const panes = [a.id, b.id].map((id) => {
      const p = ctx.pane(after, id);
      return { paneId: p.id, windowId: p.windowId, index: p.index };
    });
    return {
      data: { panes },
      summary: panes.map((p) => `${p.paneId} is pane ${p.index} of ${p.windowId}`).join("; ") +
        ".",
    };
  },
});

const moveWindow = defineTool({
  name: "move_window",
  title: "Move window",
  toolset: "manage",
  description:
    "Move a window to session (at index); fromSession if linked in several. Refused if " +
    "watched.",
  input: {
    windowId: windowIdArg,
    session: sessionRefSchema,
    index: int().min(0).max(100_000).optional(),
    fromSession: sessionRefSchema.optional(),
  },
  output: {
    windowId: windowIdSchema,
    placements: z.array(windowPlacementSchema).describe("Where the window is linked now."),
    removedSessions: z.array(sessionIdSchema).describe(
      "Sessions that ended because their last window moved away.",
    ),
  },
  annotations: { ...ARRANGES_AGAIN, destructiveHint: true },
  async run(args, ctx) {
    const { snapshot, window } = await ctx.windowAlone(args.windowId, { sessions: true });
    const from = placementIn(ctx, snapshot, window, args.fromSession, "which placement moves");
    const to = ctx.session(snapshot, args.session);
    const what = `Moving window ${window.id}`;
    // tmux links a window moved into a session that holds it already a second time there: a
    // layout whose end crashes tmux 3.3a (lone_links.ts). Checked again by tmux at the move.
    const there = from.id === to.id
      ? undefined
      : window.placements.find((p) => p.sessionId === to.id);
    if (there) throw secondLink(what, to, there.index);
    await changeView(
      ctx,
      snapshot,
      { windows: [window.id], lastWindowOf: from.id === to.id ? [] : [from.id] },
      what,
      [[
        "move-window",
        "-d",
        "-s",
        `${from.id}:${window.id}`,
        "-t",
        `${to.id}:${args.index ?? ""}`,
      ]],
      undefined,
      from.id === to.id ? [] : [{
        condition: { target: to.id, format: holdsNoLink(window.id) },
        refusal: secondLink(what, to, null),
      }],
    );
    const { snapshot: after, window: now } = await ctx.windowAlone(window.id, { sessions: true });
    const removedSessions = from.id !== to.id && !after.sessions.some((s) => s.id === from.id)
      ? [from.id]
      : [];
    return {
      data: {
        windowId: window.id,
        placements: now.placements.map(({ index, sessionId, sessionName, active }) => ({
          index,
          sessionId,
          sessionName,
          active,
        })),
        removedSessions,
      },
      summary: `Window ${window.id} is now at ${
        now.placements.map((p) => `${p.sessionId}:${p.index}`).join(", ")
      }.` + (removedSessions.length ? ` Session ${from.id} ended with its last window.` : ""),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// set_pane_title / set_synchronize_panes

const setPaneTitle = defineTool({
  name: "set_pane_title",
  title: "Set pane title",
  toolset: "manage",
  description: "Set a pane's title, exactly.",
  input: {
    paneId: paneIdSchema,
    title: nameSchema,
  },
  output: { paneId: paneIdSchema, title: z.string() },
  annotations: ARRANGES,
  async run(args, ctx) {
    await checkNames(ctx, [["pane title", args.title]]);
    const { pane } = await ctx.paneSnapshot(args.paneId);
    await ctx.run(["select-pane", "-t", pane.id, "-T", formatArg(args.title)]);
    const { pane: now } = await ctx.paneSnapshot(pane.id);
    requireStored(
      "pane title",
      now.title,
      args.title,
      "The program in the pane may have set its own title; try again or choose plainer text.",
    );
    return {
      data: { paneId: pane.id, title: now.title },
      summary: `Pane ${pane.id} is titled ${JSON.stringify(now.title)}.`,
    };
  },
});

const setSynchronizePanes = defineTool({
  name: "set_synchronize_panes",
  title: "Synchronize panes",
  toolset: "manage",
  description: "While enabled, typing into one pane of the window reaches all. Refused if watched.",
  input: {
    windowId: windowIdArg,
    enabled: z.boolean(),
  },
  output: { windowId: windowIdSchema, synchronized: z.boolean() },
  annotations: ARRANGES,
  async run(args, ctx) {
    // On a window a person is looking at, their keystrokes would reach every pane of it (the
    // agent's too), or stop reaching the panes they meant: their view, their call.
    const snapshot = await ctx.windowSnapshot(args.windowId);
    const window = ctx.window(snapshot, args.windowId);
    const state = args.enabled ? "on" : "off";
    // A pane's own synchronize-panes (a pane option since tmux 3.2) wins over its window's: set
    // the other way, it would go on copying keys (or not) whatever the window says. Where a
    // pane differs, its own value is unset in the same step, so the window's holds for it.
    // -q: a pane closed meanwhile is no failure (nor does it stop the others).
    const differing = windowPanes(snapshot, window.id).filter((p) =>
      p.synchronized !== args.enabled
    );
    await changeView(
      ctx,
      snapshot,
      { windows: [window.id] },
      `Turning synchronize-panes ${state} for window ${window.id}`,
      [
        ["set-option", "-w", "-t", window.id, "synchronize-panes", state],
        ...differing.map((p) => ["set-option", "-q", "-p", "-u", "-t", p.id, "synchronize-panes"]),
      ],
    );
    const panes = windowPanes(await ctx.windowSnapshot(window.id), window.id);
    const stray = panes.filter((p) => p.synchronized !== args.enabled).map((p) => p.id);
    if (stray.length > 0) {
      // A pane that moved in since the read, with a value of its own.
      throw new ToolFailure(
        `synchronize-panes is ${state} for window ${window.id}, but pane ${stray.join(", ")} ` +
          `${stray.length === 1 ? "is" : "are"} still ${
            args.enabled ? "not synchronized" : "synchronized"
          } by a value of its own.`,
        "Call set_synchronize_panes again: it unsets such values.",
      );
    }
    const synchronized = panes.length > 0 && panes.every((p) => p.synchronized);
    return {
      data: { windowId: window.id, synchronized },
      summary: `synchronize-panes is ${synchronized ? "on" : "off"} for ${window.id}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// enter_copy_mode / exit_copy_mode

const modeState = {
  paneId: paneIdSchema,
  inMode: z.boolean(),
  mode: z.string().describe("The mode's name (copy-mode, view-mode, tree-mode...), or empty."),
};

const enterCopyMode = defineTool({
  name: "enter_copy_mode",
  title: "Enter copy mode",
  toolset: "manage",
  description: "Put a pane in copy mode (input tools refuse it). Refused if watched.",
  input: {
    paneId: paneIdSchema,
    scrollUp: flag(),
  },
  output: modeState,
  annotations: ARRANGES,
  async run(args, ctx) {
    const { snapshot, pane } = await ctx.paneSnapshot(args.paneId);
    await changeView(ctx, snapshot, { panes: [pane.id] }, `Putting ${pane.id} in copy mode`, [
      ["copy-mode", ...(args.scrollUp ? ["-u"] : []), "-t", pane.id],
    ]);
    const { pane: now } = await ctx.paneSnapshot(pane.id);
    return {
      data: { paneId: pane.id, inMode: now.inMode, mode: now.mode },
      summary: `Pane ${pane.id} is ${now.inMode ? `in ${now.mode}` : "not in a mode"}.`,
    };
  },
});

const exitCopyMode = defineTool({
  name: "exit_copy_mode",
  title: "Exit copy mode",
  toolset: "manage",
  description: "Take a pane out of any mode. Refused if watched.",
  input: { paneId: paneIdSchema },
  output: { ...modeState, left: z.string().nullable().describe("The mode it left, if any.") },
  annotations: ARRANGES,
  async run(args, ctx) {
    const { snapshot, pane } = await ctx.paneSnapshot(args.paneId);
    if (pane.inMode) {
      await changeView(
        ctx,
        snapshot,
        { panes: [pane.id] },
        `Taking ${pane.id} out of ${pane.mode}`,
        [
          ["copy-mode", "-q", "-t", pane.id],
        ],
      );
    }
    const { pane: now } = await ctx.paneSnapshot(pane.id);
    return {
      data: {
        paneId: pane.id,
        inMode: now.inMode,
        mode: now.mode,
        left: pane.inMode ? pane.mode : null,
      },
      summary: pane.inMode
        ? `Pane ${pane.id} left ${pane.mode}${now.inMode ? ` but is in ${now.mode}` : ""}.`
        : `Pane ${pane.id} was in no mode.`,
    };
  },
});

/** Registers the arranging tools (toolset manage). */
export function registerLayoutTools(registry: ToolRegistry): void {
  registry.add(
    renameSession,
    renameWindow,
    selectWindow,
    selectPane,
    selectLayout,
    resizePane,
    resizeWindow,
    swapPane,
    moveWindow,
    setPaneTitle,
    setSynchronizePanes,
    enterCopyMode,
    exitCopyMode,
    waitForChannel,
    signalChannel,
  );
}
