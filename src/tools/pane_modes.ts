/**
 * Where the keys typed into a pane go: set_synchronize_panes (to every pane of its window) and
 * enter_copy_mode / exit_copy_mode (to tmux's copy mode, not the program; the input tools
 * refuse such a pane). Registered with the arranging tools (layout.ts).
 *
 * @module
 */

import { z } from "zod";
import { ToolFailure } from "../mcp/errors.ts";
import { type ActCheck, checkedAgain } from "../mcp/act_step.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { windowListedUnwatched } from "../mcp/unwatched.ts";
import { changeView, guardView } from "../mcp/view_guard.ts";
import type { Snapshot } from "../tmux/snapshot.ts";
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

/** Expanded in a pane: empty while no pane of its window has synchronize-panes on. */
const SYNCED_PANES = "#{P:#{?pane_synchronized,X,}}";

/**
 * What guards a pane put into the window pane `at` is in (join_pane, swap_pane, split_window)
 * where that window synchronizes its panes: tmux 3.3a copies what is typed into a pane whose
 * synchronize-panes is on to every other pane of its window whose own is on, and a pane that
 * arrives takes the window's value (measured: joined, swapped in or split there, it receives
 * the copies). So a person's keys there, in a window they are shown or one their status line
 * lists a key away, would reach the pane: refused as set_synchronize_panes on is (the window
 * as a listed one), unless `--allow-attended-input`. `what` names the move; `synced`: the
 * read shows a pane of that window synchronized. The check has tmux test it again at the
 * move, for synchronize-panes turned on meanwhile. Null with the permission.
 */
export function syncedArrival(
  ctx: TmuxContext,
  snapshot: Snapshot,
  at: { readonly id: string; readonly windowId: string },
  what: string,
): { readonly what: string; readonly listedWindowsOf: string[]; readonly check: ActCheck } | null {
  if (ctx.config.allowAttendedInput) return null;
  const synced = snapshot.panes.some((p) => p.windowId === at.windowId && p.synchronized);
  const said = `${what}, whose panes are synchronized (what a person types there would reach ` +
    "it),";
  let refusal: ToolFailure | null = null;
  try {
    // The client a person attached at the read: the refusal names it.
    guardView(ctx, snapshot, { listedWindowsOf: [at.id] }, said);
  } catch (e) {
    if (!(e instanceof ToolFailure)) throw e;
    refusal = e;
  }
  const listed = windowListedUnwatched(snapshot, at.id);
  return {
    what: synced ? said : what,
    listedWindowsOf: synced ? [at.id] : [],
    check: {
      condition: { target: at.id, format: `#{||:#{==:${SYNCED_PANES},},${listed.format}}` },
      refusal: refusal ?? new ToolFailure(
        `${what} was refused by tmux at that instant: window ${at.windowId} had synchronize-` +
          "panes on, and a person was attached to a session it is in, so what they type there " +
          "would reach the pane.",
        "Turn synchronize-panes off there first (set_synchronize_panes), or work where nobody " +
          "is attached; tmux-mcp started with --allow-attended-input lifts this. Nothing was " +
          "changed.",
      ),
    },
  };
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
