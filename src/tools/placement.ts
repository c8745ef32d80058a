/**
 * Where windows and panes sit, and which is current: select_window, select_pane, swap_pane and
 * move_window (registered with the arranging tools, layout.ts). Each changes what a person may
 * be looking at, so each is a view change ({@link changeView}), refused while watched. A window
 * moved keeps its own options: one whose status-line entry is its own is not moved into a
 * person's status line ({@link carriedEntryCheck}). Nor is a window selected, even where nobody
 * looks, while that would clear the bell, activity or silence mark a person's status line shows
 * it with ({@link alertMarksCheck}), nor moved out of a session whose current window it is
 * while the window tmux falls back to there carries such a mark (alert_fallback.ts).
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { sessionLabel, sessionList, ToolFailure } from "../mcp/errors.ts";
import { changeView } from "../mcp/view_guard.ts";
import { holdsNoLink, secondLink } from "../mcp/lone_links.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import {
  int,
  paneIdSchema,
  sessionIdSchema,
  sessionRefSchema,
  windowIdArg,
  windowIdSchema,
  windowPlacementSchema,
} from "../mcp/schemas.ts";
import type { SessionRow, Snapshot, WindowRow } from "../tmux/snapshot.ts";
import { clientLabel, isPerson, peopleListing, showsWholeSession } from "../tmux/identity.ts";
import { formatLiteral } from "../tmux/format.ts";
import {
  CARRIED_ENTRY_OPTIONS,
  carriedEffects,
  carriedExpression,
  type EntryValues,
  ownEntryOptions,
  readEntryValues,
} from "../tmux/option_reach.ts";
import { type ActCheck, allOf } from "../mcp/act_step.ts";
import { stripPrograms } from "../mcp/unwatched.ts";
import { fallbackMarksCheck, markShown, unmarkedFormat } from "./alert_fallback.ts";
import { ARRANGES, ARRANGES_AGAIN } from "./arranging.ts";
import { syncedArrival } from "./pane_modes.ts";

/**
 * Whether a person's client shows window `windowId` as `snapshot` read it: its current window,
 * or any window of its session (a client that shows them all, tmux -CC).
 */
export function shownToPerson(snapshot: Snapshot, windowId: string): boolean {
  const sessions = new Set(
    [
      ...snapshot.windows.filter((w) => w.id === windowId),
      ...snapshot.panes.filter((p) => p.windowId === windowId),
    ].flatMap((x) => x.placements.map((at) => at.sessionId)),
  );
  return snapshot.clients.some((c) =>
    isPerson(c) && (c.windowId === windowId || (showsWholeSession(c) && sessions.has(c.sessionId)))
  );
}

/**
 * What became of the zoom of window `windowId`, zoomed at the read on `zoomedOn` (its active
 * pane), once `act` (what tmux 3.3a unzooms a window for: "swap a pane") is done: `now`, the
 * pane it is zoomed on now, null when unzoomed, undefined when the window is gone. A note when
 * it is unzoomed or zoomed on another pane; null when it is as it was.
 */
export function zoomNote(
  windowId: string,
  zoomedOn: string | undefined,
  now: string | null | undefined,
  act: string,
): string | null {
  if (now === undefined || (now !== null && now === zoomedOn)) return null;
  const was = `Window ${windowId} was zoomed${zoomedOn === undefined ? "" : ` on ${zoomedOn}`}`;
  return now === null
    ? `${was}: tmux unzooms a window to ${act}, and it is unzoomed now (resize_pane with ` +
      "zoom: true zooms it again)."
    : `${was}, and stays zoomed, now on ${now}.`;
}

/**
 * The pane each window in `windowIds` is zoomed on (its active one) in `snapshot`, null when it
 * is not zoomed; a window that has no pane there is left out.
 */
export function zoomsIn(
  snapshot: Snapshot,
  windowIds: readonly string[],
): Map<string, string | null> {
  const zooms = new Map<string, string | null>();
  for (const w of windowIds) {
    const panes = snapshot.panes.filter((p) => p.windowId === w);
    if (panes.length === 0) continue;
    const active = panes.find((p) => p.active);
    zooms.set(w, panes[0].windowZoomed ? active?.id ?? null : null);
  }
  return zooms;
}

/**
 * Whether an act tmux 3.3a unzooms windows `windowIds` for (swap-pane, select-pane) is passed
 * -Z, which keeps zoomed a window zoomed at that instant (only such a one): a person who left
 * one zoomed, looking at another window, would come back to it unzoomed. Not where a person
 * shows any of them: the act is refused there, but for --allow-attended-input, where the hook
 * guard has asked them about the unzoom, and what it asks about is what happens.
 */
function keepsZoom(snapshot: Snapshot, windowIds: readonly string[]): boolean {
  return windowIds.every((w) => !shownToPerson(snapshot, w));
}

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
          sessionList(window.placements)
        }), so ${what} is ambiguous.`,
        "Pass the session it should act in (list_windows shows the placements).",
      );
    }
    return ctx.session(snapshot, window.placements[0].sessionId);
  }
  const session = ctx.session(snapshot, sessionRef);
  if (!window.placements.some((p) => p.sessionId === session.id)) {
    throw new ToolFailure(
      `Window ${window.id} is not in session ${sessionLabel(session.id, session.name)}.`,
      `It is in ${sessionList(window.placements)}.`,
    );
  }
  return session;
}

/** How to go on after a refusal of a select that would clear a person's alert mark. */
function marksHint(windowId: string): string {
  return `The mark goes when the person looks at window ${windowId}; select it after that, or ` +
    "where no session of a person holds it. tmux-mcp started with --allow-attended-input " +
    "lifts this. Nothing was selected.";
}

/**
 * The check that selecting window `windowId` in session `at` clears no alert mark (bell,
 * activity, silence) a person's status line shows: tmux clears the window's marks in every
 * session holding it once one of them makes it current (winlink_clear_flags), so selecting it
 * in a session nobody watches wipes the mark from a grouped or linked session a person is
 * attached to. Refused at once where the read shows both; otherwise tmux checks it at the act.
 */
async function alertMarksCheck(
  ctx: TmuxContext,
  snapshot: Snapshot,
  windowId: string,
  at: SessionRow,
  what: string,
): Promise<ActCheck> {
  const shown = await markShown(ctx, snapshot, windowId, windowId);
  if (shown) {
    throw new ToolFailure(
      `${what} in session ${at.id} would clear the ${shown.kinds} mark of window ${windowId} in ` +
        `the status line of session ${shown.client.sessionId}, which client ${
          clientLabel(shown.client)
        } is attached to (tmux clears a window's marks in every session holding it when one ` +
        "selects it).",
      marksHint(windowId),
    );
  }
  return {
    condition: { target: windowId, format: unmarkedFormat(windowId) },
    refusal: new ToolFailure(
      `${what} in session ${at.id} was refused by tmux at the act: window ${windowId} has a ` +
        "bell, activity or silence mark in the status line of a session a person is attached " +
        "to, which selecting it would clear.",
      marksHint(windowId),
    ),
  };
}

/** select_window. */
export const selectWindow = defineTool({
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
    const what = `Selecting window ${window.id}`;
    // With the permission a person's own session needs, their marks may go too.
    const marks = ctx.config.allowAttendedInput
      ? []
      : [await alertMarksCheck(ctx, snapshot, window.id, session, what)];
    await changeView(
      ctx,
      snapshot,
      { sessions: [session.id] },
      what,
      [["select-window", "-t", `${session.id}:${window.id}`]],
      undefined,
      marks,
    );
    const { window: now } = await ctx.windowAlone(window.id);
    // Linked into the session twice, the window is current at one of its indexes (tmux keeps
    // the current one when it holds the window): that one is told.
    const here = now.placements.filter((p) => p.sessionId === session.id);
    const after = here.find((p) => p.active) ?? here[0];
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

/** select_pane. */
export const selectPane = defineTool({
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
    // tmux 3.3a unzooms a window to make another pane of it the active one: -Z keeps the zoom,
    // now on the pane selected ({@link keepsZoom}). The pane already active: tmux does nothing.
    const keepZoom = keepsZoom(snapshot, [pane.windowId]);
    // The pane the window is zoomed on, for the note: read only for a hidden pane of a zoomed
    // window (the read holds only the pane asked for).
    const zoomedOn = !pane.windowZoomed
      ? null
      : pane.active
      ? pane.id
      : zoomsIn(await ctx.windowSnapshot(pane.windowId), [pane.windowId]).get(pane.windowId);
    await changeView(ctx, snapshot, { windowsOf: [pane.id] }, `Selecting pane ${pane.id}`, [
      ["select-pane", ...(keepZoom ? ["-Z"] : []), "-t", pane.id],
    ]);
    const { pane: now } = await ctx.paneSnapshot(pane.id);
    // Zoomed now on the pane selected, or unzoomed; zoomed on another pane (one a client made
    // active meanwhile) is not this call's doing, and the read does not say which.
    const zoomNow = !now.windowZoomed ? null : now.active ? now.id : undefined;
    const note = zoomedOn == null || now.windowId !== pane.windowId
      ? null
      : zoomNote(pane.windowId, zoomedOn, zoomNow, "select a pane of it");
    return {
      data: {
        paneId: pane.id,
        windowId: now.windowId,
        active: now.active,
        windowZoomed: now.windowZoomed,
      },
      summary:
        `Pane ${pane.id} is ${now.active ? "now" : "not"} the active pane of ${now.windowId}.` +
        (note === null ? "" : ` ${note}`),
    };
  },
});

const paneSpot = z.strictObject({
  paneId: paneIdSchema,
  windowId: windowIdSchema,
  index: int().describe("The pane's index in its window."),
});

/** swap_pane. */
export const swapPane = defineTool({
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
    // tmux 3.3a unzooms a window to swap a pane of it: -Z keeps the zoom ({@link keepsZoom}).
    const windows = [...new Set([a.windowId, b.windowId])];
    const keepZoom = keepsZoom(snapshot, windows);
    const zoomed = zoomsIn(snapshot, windows);
    const what = `Swapping ${a.id} and ${b.id}`;
    // Each pane goes into the other's window: into one with synchronize-panes on, a person's
    // keys there would reach it (pane_modes.ts syncedArrival). Within one window, nothing new.
    const synced = a.windowId === b.windowId ? [] : [[a, b], [b, a]].flatMap(([mine, theirs]) => {
      const s = syncedArrival(
        ctx,
        snapshot,
        theirs,
        `${what}, which puts ${mine.id} into window ${theirs.windowId}`,
      );
      return s ? [s] : [];
    });
    await changeView(
      ctx,
      snapshot,
      { windowsOf: [a.id, b.id], listedWindowsOf: synced.flatMap((s) => s.listedWindowsOf) },
      synced.find((s) => s.listedWindowsOf.length > 0)?.what ?? what,
      [["swap-pane", "-d", ...(keepZoom ? ["-Z"] : []), "-s", a.id, "-t", b.id]],
      undefined,
      synced.map((s) => s.check),
    );
    const after = await ctx.paneList();
    const panes = [a.id, b.id].map((id) => {
      const p = ctx.pane(after, id);
      return { paneId: p.id, windowId: p.windowId, index: p.index };
    });
    const now = zoomsIn(after, windows);
    const notes = windows.flatMap((w) => {
      const was = zoomed.get(w);
      if (was == null) return [];
      const note = zoomNote(w, was, now.get(w), "swap a pane of it");
      return note === null ? [] : [note];
    });
    return {
      data: { panes },
      summary: panes.map((p) => `${p.paneId} is pane ${p.index} of ${p.windowId}`).join("; ") +
        "." + (notes.length ? ` ${notes.join(" ")}` : ""),
    };
  },
});

/**
 * 1 while the window of the condition's target draws its status-line entry as the global
 * options say (`values.global`), or no person is attached to session `to` nor to one grouped
 * with it: expanded by tmux at the instant of the move.
 */
function carriedEntryFormat(values: EntryValues, to: string): string {
  const plain = allOf(
    CARRIED_ENTRY_OPTIONS.map((o, i) =>
      `#{==:${carriedExpression(o, "window")},${formatLiteral(values.global[i])}}`
    ),
  );
  const people = stripPrograms("session_attached_list") +
    stripPrograms("session_group_attached_list");
  const nobody = `#{==:#{S:#{?#{==:#{session_id},${to}},${people},}},}`;
  return `#{||:${plain},${nobody}}`;
}

/** How to go on after a refusal of a window's own status-line entry. */
function carriedHint(windowId: string): string {
  return `show_options (scope "window", target ${windowId}) lists them; unset them there ` +
    "first (set_option with unset: true), or move the window where nobody is attached; " +
    "tmux-mcp started with --allow-attended-input lifts this. Nothing was moved.";
}

/**
 * The check that a window moved into session `to` carries no status-line entry of its own
 * into a person's status line: the options set_option refuses to set on a window of a session
 * a person is attached to ({@link CARRIED_ENTRY_OPTIONS}), set where nobody was, would be
 * drawn there all the same (spoofing their status line, running its `#(...)` at every
 * redraw). A window whose values are the global ones draws its entry as every other window
 * does. Refused at once where the read shows both; otherwise tmux checks it at the move.
 */
async function carriedEntryCheck(
  ctx: TmuxContext,
  snapshot: Snapshot,
  windowId: string,
  to: SessionRow,
  what: string,
): Promise<ActCheck> {
  const values = await readEntryValues((argv) => ctx.read(argv), windowId);
  const own = ownEntryOptions(values);
  const person = own.length > 0 ? peopleListing(snapshot, to)[0] : undefined;
  if (person) {
    const grouped = person.sessionId === to.id ? "" : ` (grouped with ${to.id})`;
    throw new ToolFailure(
      `${what} would change what a person sees: it has its own ${own.join(", ")}, which ` +
        `would ${carriedEffects(own)} in session ${person.sessionId}${grouped}, which client ` +
        `${clientLabel(person)} is attached to.`,
      carriedHint(windowId),
    );
  }
  const names = own.length > 0
    ? own.join(", ")
    : "status-line entry options or synchronize-panes (set meanwhile, or the global ones changed)";
  return {
    condition: { target: windowId, format: carriedEntryFormat(values, to.id) },
    refusal: new ToolFailure(
      `${what} was refused by tmux at the move: window ${windowId}'s own ${names} would ` +
        `reach a person attached to session ${to.id} or one grouped with it (its entry in ` +
        "their status line, or their keys sent to every pane of it).",
      carriedHint(windowId),
    ),
  };
}

/** move_window. */
export const moveWindow = defineTool({
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
    // Where nobody is attached, or with the permission set_option needs there, it may carry
    // its own entry: checked only into another session (within one, nothing new is listed).
    const carried = from.id === to.id || ctx.config.allowAttendedInput
      ? []
      : [await carriedEntryCheck(ctx, snapshot, window.id, to, what)];
    // Moved out of a session whose current window it is (within one session too: tmux links it
    // anew and unlinks the old link), the window tmux falls back to there is made current, its
    // marks cleared for everyone. Sessions grouped with the source lose it with it.
    const leaves = [
      from.id,
      ...snapshot.sessions.filter((s) =>
        s.group !== "" && s.group === from.group && s.id !== from.id
      ).map((s) => s.id),
    ];
    const fallback = ctx.config.allowAttendedInput ? [] : [
      await fallbackMarksCheck(
        ctx,
        snapshot,
        { windowId: window.id, sessions: leaves },
        what,
        "tmux-mcp started with --allow-attended-input lifts this. Nothing was moved.",
      ),
    ];
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
      from.id === to.id ? fallback : [
        {
          condition: { target: to.id, format: holdsNoLink(window.id) },
          refusal: secondLink(what, to, null),
        },
        ...carried,
        ...fallback,
      ],
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
