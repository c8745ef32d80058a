/**
 * Where the keys typed into a pane go: set_synchronize_panes (to every pane of its window) and
 * enter_copy_mode / exit_copy_mode (to tmux's copy mode, not the program; the input tools
 * refuse such a pane). Registered with the arranging tools (layout.ts).
 *
 * @module
 */

import { z } from "zod";
import { ToolFailure } from "../mcp/errors.ts";
import { checkedAgain } from "../mcp/act_step.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { changeView } from "../mcp/view_guard.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import { flag, paneIdSchema, windowIdArg, windowIdSchema } from "../mcp/schemas.ts";
import { chainArgv } from "../tmux/format.ts";
import { ARRANGES, windowPanes } from "./arranging.ts";

/**
 * The own synchronize-panes of window `windowId` (null: none, it takes the global one) and of
 * each of `panes` (absent: none), read in one round trip: what set_synchronize_panes puts back
 * should tmux stop it part-way.
 */
async function ownSync(
  ctx: TmuxContext,
  windowId: string,
  panes: readonly { readonly id: string }[],
): Promise<{ window: string | null; panes: Map<string, string> }> {
  const mark = `tmux-mcp-own-${crypto.randomUUID()}`;
  const out = new TextDecoder().decode(
    await ctx.read(chainArgv([
      ["show-options", "-qw", "-t", windowId, "synchronize-panes"],
      ...panes.flatMap((p) => [
        ["display-message", "-p", `${mark} ${p.id}`],
        ["show-options", "-qp", "-t", p.id, "synchronize-panes"],
      ]),
    ])),
  );
  let at: string | null = null;
  let window: string | null = null;
  const values = new Map<string, string>();
  for (const line of out.split("\n")) {
    const m = /^synchronize-panes (on|off)$/.exec(line);
    if (line.startsWith(`${mark} `)) at = line.slice(mark.length + 1);
    else if (m && at === null) window = m[1];
    else if (m && at !== null) values.set(at, m[1]);
  }
  return { window, panes: values };
}

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
    // pane's own value differs, it is unset in the same step, so the window's holds for it.
    // -q: a pane closed meanwhile is no failure (nor does it stop the others).
    const differing = windowPanes(snapshot, window.id).filter((p) =>
      p.synchronized !== args.enabled
    );
    const own = differing.length > 0 ? await ownSync(ctx, window.id, differing) : null;
    const unset = differing.filter((p) => own?.panes.has(p.id));
    const was = own?.window ?? null;
    // tmux runs a person's after-set-option hook after each of these, and one that waits on a
    // run-shell holds the rest of the line while the person comes to the window: tmux checks
    // again before each unset, and else puts back, in the same step, every value as read (the
    // window's own or none, each pane's own), so that nothing was changed (changeView re-reads).
    const windowBack = was === null
      ? ["set-option", "-q", "-w", "-u", "-t", window.id, "synchronize-panes"]
      : ["set-option", "-q", "-w", "-t", window.id, "synchronize-panes", was];
    const paneBack = (
      id: string,
    ) => ["set-option", "-q", "-p", "-t", id, "synchronize-panes", own?.panes.get(id) ?? ""];
    const back = (k: number) => [windowBack, ...unset.slice(0, k).map((p) => paneBack(p.id))];
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
        ...unset.map((p, k) =>
          checkedAgain(["set-option", "-q", "-p", "-u", "-t", p.id, "synchronize-panes"], back(k))
        ),
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
