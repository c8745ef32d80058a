/**
 * Where the keys typed into a pane go: set_synchronize_panes (to every pane of its window) and
 * enter_copy_mode / exit_copy_mode (to tmux's copy mode, not the program; the input tools
 * refuse such a pane). Registered with the arranging tools (layout.ts).
 *
 * @module
 */

import { z } from "zod";
import { ToolFailure } from "../mcp/errors.ts";
import { changeView } from "../mcp/view_guard.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import { flag, paneIdSchema, windowIdArg, windowIdSchema } from "../mcp/schemas.ts";
import { ARRANGES, windowPanes } from "./arranging.ts";

/** set_synchronize_panes. */
export const setSynchronizePanes = defineTool({
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
    // Turned on, also a window of a person's session they are not looking at: one key away, and
    // once there, what they type into the pane they see would reach its other panes too. Turned
    // off, their keys reach only the pane they see: refused only where they are shown it.
    await changeView(
      ctx,
      snapshot,
      { windows: [window.id], ...(args.enabled ? { listedWindows: [window.id] } : {}) },
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

const modeState = {
  paneId: paneIdSchema,
  inMode: z.boolean(),
  mode: z.string().describe("The mode's name (copy-mode, view-mode, tree-mode...), or empty."),
};

/** enter_copy_mode. */
export const enterCopyMode = defineTool({
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

/** exit_copy_mode. */
export const exitCopyMode = defineTool({
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
