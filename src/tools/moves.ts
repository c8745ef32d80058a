/**
 * Moving panes between windows: join_pane (into another window) and break_pane (out into a
 * window of its own). Toolset manage: nothing here starts a process or types into one.
 *
 * Both change what a person may be looking at — the window a pane leaves loses it, the window
 * it joins is reshaped, a window whose last pane leaves ends (in every session it is linked
 * into, ending a session whose last window it was) — so both are view changes, guarded as
 * swap_pane and move_window are ({@link changeView}): refused while any window they touch is
 * on a person's screen, checked again by tmux in the same command line as the move. Neither
 * ever makes a window current unless asked (`-d`), but tmux does when join_pane ends a
 * session's current window: that one is refused where the window it falls back to carries a
 * mark a person's status line shows (alert_fallback.ts). A pane joined into a window with
 * synchronize-panes on gets what a person types there: refused also where that window is only
 * listed in a person's status line (pane_modes.ts syncedArrival).
 *
 * @module
 */

import { z } from "zod";
import { ToolFailure } from "../mcp/errors.ts";
import { changeView } from "../mcp/view_guard.ts";
import { linksChanged, loneLinks, paneEndingFormat, unlinkExtras } from "../mcp/lone_links.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, type ToolAnnotations } from "../mcp/tool_spec.ts";
import { flag, int, paneIdSchema, sessionIdSchema, windowIdSchema } from "../mcp/schemas.ts";
import { argvCommands } from "../tmux/control.ts";
import { newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { NO_PROCESS_INFO, type Snapshot } from "../tmux/snapshot.ts";
import { changes, checkNames, literalArg, nameSchema, notesField } from "./arguments.ts";
import { sizeSchema } from "./lifecycle.ts";
import { zoomNote, zoomsIn } from "./placement.ts";
import { fallbackMarksCheck } from "./alert_fallback.ts";
import { syncedArrival } from "./pane_modes.ts";

/** Rearranges; may end a window (and a session) whose last pane leaves; a repeat differs. */
const MOVES: ToolAnnotations = changes({ destructive: true, idempotent: false });

const DIRECTIONS = ["above", "below", "left", "right"] as const;

function panesOf(snapshot: Snapshot, windowId: string): number {
  return snapshot.panes.filter((p) => p.windowId === windowId).length;
}

// ---------------------------------------------------------------------------------------------
// join_pane

const joinPane = defineTool({
  name: "join_pane",
  title: "Join pane",
  toolset: "manage",
  description:
    "Move a pane beside targetPaneId, into its window; a window left empty ends. Refused if watched.",
  input: {
    paneId: paneIdSchema,
    targetPaneId: paneIdSchema,
    direction: z.enum(DIRECTIONS).default("below"),
    size: sizeSchema.optional(),
  },
  output: {
    paneId: paneIdSchema,
    windowId: windowIdSchema.describe("The window it is in now."),
    index: int().describe("Its index in that window."),
    fromWindowId: windowIdSchema,
    removedWindow: z.boolean().describe("The window it left ended (it was its last pane)."),
    removedSessions: z.array(sessionIdSchema).describe(
      "Sessions that ended because that window was their last.",
    ),
  },
  annotations: MOVES,
  async run(args, ctx) {
    if (args.paneId === args.targetPaneId) {
      throw new ToolFailure(
        "A pane cannot join itself.",
        "Pass a targetPaneId in the window it should move to.",
      );
    }
    const snapshot = await ctx.snapshot(NO_PROCESS_INFO);
    const pane = ctx.pane(snapshot, args.paneId);
    const target = ctx.pane(snapshot, args.targetPaneId);
    const from = ctx.window(snapshot, pane.windowId);
    const argv = ["join-pane", "-d", "-s", pane.id, "-t", target.id];
    argv.push(args.direction === "left" || args.direction === "right" ? "-h" : "-v");
    if (args.direction === "above" || args.direction === "left") argv.push("-b");
    if (args.size !== undefined) argv.push("-l", String(args.size));
    const what = `Moving pane ${pane.id} into window ${target.windowId}`;
    const last = panesOf(snapshot, from.id) === 1;
    // A window it leaves empty ends: where that window is linked twice into a session holding
    // nothing else, that session is first left one link, or tmux 3.3a crashes (lone_links.ts).
    const planned = last ? loneLinks(snapshot, from.placements) : [];
    // tmux 3.3a unzooms both windows, and has no flag that keeps a zoom here: said below.
    const zoomed = zoomsIn(snapshot, [from.id, target.windowId]);
    const unlinks = unlinkExtras(planned, what);
    // Its last pane gone, the window leaves every session holding it: where it was the current
    // one, tmux makes another current there, clearing that one's marks for everyone.
    const fallback = ctx.config.allowAttendedInput ? [] : [
      await fallbackMarksCheck(
        ctx,
        snapshot,
        { windowId: from.id, pane: { id: pane.id, last } },
        what,
        "tmux-mcp started with --allow-attended-input lifts this. Nothing was moved.",
      ),
    ];
    // Into a window with synchronize-panes on, a person's keys there would reach the pane:
    // refused where their status line lists that window too (pane_modes.ts syncedArrival).
    const synced = from.id === target.windowId ? null : syncedArrival(ctx, snapshot, target, what);
    // Both windows change shape; a window that loses its last pane ends, and with it any
    // session it was the last window of (whoever shows it is refused by the windows check).
    await changeView(
      ctx,
      snapshot,
      {
        windowsOf: [pane.id, target.id],
        listedWindowsOf: synced?.listedWindowsOf ?? [],
        lastWindowOf: last ? from.placements.map((p) => p.sessionId) : [],
      },
      synced?.what ?? what,
      [...unlinks, argv],
      undefined,
      [
        {
          condition: { target: pane.id, format: paneEndingFormat(from.id, planned) },
          refusal: linksChanged(what, from.id),
        },
        ...fallback,
        ...(synced ? [synced.check] : []),
      ],
    );
    const after = await ctx.snapshot(NO_PROCESS_INFO);
    const now = ctx.pane(after, pane.id);
    const removedWindow = !after.windows.some((w) => w.id === from.id);
    // Each session once: a window may be linked into one several times.
    const removedSessions = removedWindow
      ? [...new Set(from.placements.map((p) => p.sessionId))].filter((id) =>
        !after.sessions.some((s) => s.id === id)
      )
      : [];
    const zooms = zoomsIn(after, [from.id, target.windowId]);
    const reached = from.id === target.windowId
      ? [[from.id, "move a pane within it"]]
      : [[from.id, "move a pane out of it"], [target.windowId, "move a pane into it"]];
    const notes = reached.flatMap(([w, act]) => {
      const was = zoomed.get(w);
      const note = was == null ? null : zoomNote(w, was, zooms.get(w), act);
      return note === null ? [] : [note];
    });
    return {
      data: {
        paneId: pane.id,
        windowId: now.windowId,
        index: now.index,
        fromWindowId: from.id,
        removedWindow,
        removedSessions,
      },
      summary: `Pane ${pane.id} is now pane ${now.index} of ${now.windowId}.` +
        (removedWindow ? ` Window ${from.id} ended with its last pane.` : "") +
        (removedSessions.length ? ` Session ${removedSessions.join(", ")} ended too.` : "") +
        (notes.length ? ` ${notes.join(" ")}` : ""),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// break_pane

const breakPane = defineTool({
  name: "break_pane",
  title: "Break pane",
  toolset: "manage",
  description: "Move a pane out into a new window (current only if select). Refused if watched.",
  input: {
    paneId: paneIdSchema,
    name: nameSchema.optional(),
    select: flag(),
  },
  output: {
    windowId: windowIdSchema.describe("The new window."),
    paneId: paneIdSchema,
    sessionId: sessionIdSchema,
    index: int().describe("The new window's index in the session."),
    name: z.string(),
    fromWindowId: windowIdSchema,
    notes: notesField,
  },
  annotations: changes({ destructive: false, idempotent: false }),
  async run(args, ctx) {
    await checkNames(ctx, [["window name", args.name]]);
    const snapshot = await ctx.snapshot(NO_PROCESS_INFO);
    const pane = ctx.pane(snapshot, args.paneId);
    const from = ctx.window(snapshot, pane.windowId);
    if (panesOf(snapshot, from.id) === 1) {
      throw new ToolFailure(
        `Pane ${pane.id} is already alone in window ${from.id}.`,
        "move_window moves a whole window; join_pane moves a pane into another window.",
      );
    }
    // A window linked into several sessions: the new window goes to the first of them.
    const session = ctx.session(snapshot, from.placements[0].sessionId);
    const guard = newGuard();
    const argv = ["break-pane", "-s", pane.id, "-t", `${session.id}:`];
    if (!args.select) argv.push("-d");
    // break-pane takes the name as it is (no format), like the -e of new-window.
    if (args.name !== undefined) argv.push("-n", literalArg(args.name));
    argv.push(
      "-P",
      "-F",
      recordFormat(guard, ["#{window_id}", "#{window_index}", "#{window_name}"]),
    );
    const out = await changeView(
      ctx,
      snapshot,
      {
        windowsOf: [pane.id],
        // Made current, the new window replaces what that session's people see.
        sessions: args.select ? [session.id] : [],
      },
      `Breaking pane ${pane.id} out of window ${from.id}`,
      // As one argv: the name's escaped final ";" is taken back to what tmux would read.
      argvCommands(argv),
    );
    const [record] = parseRecords(out, guard, 3);
    if (!record) throw new ToolFailure("tmux moved the pane but printed no window id.");
    const [windowId, index, name] = record;
    const notes: string[] = [];
    if (args.name !== undefined && name !== args.name) {
      notes.push(`tmux stored the window name as ${JSON.stringify(name)}.`);
    }
    // tmux 3.3a unzooms the window a pane breaks out of, and has no flag that keeps the zoom:
    // read again (only for a window zoomed at the read) to say so.
    const was = zoomsIn(snapshot, [from.id]).get(from.id);
    if (was != null) {
      const now = zoomsIn(await ctx.windowSnapshot(from.id), [from.id]).get(from.id);
      const note = zoomNote(from.id, was, now, "break a pane out of it");
      if (note !== null) notes.push(note);
    }
    return {
      data: {
        windowId,
        paneId: pane.id,
        sessionId: session.id,
        index: Number(index),
        name,
        fromWindowId: from.id,
        notes,
      },
      summary:
        `Pane ${pane.id} is now in its own window ${windowId} (index ${index} of ${session.id}).`,
    };
  },
});

/** Registers join_pane and break_pane (toolset manage). */
export function registerMoveTools(registry: ToolRegistry): void {
  registry.add(joinPane, breakPane);
}
