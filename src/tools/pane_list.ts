/**
 * list_panes (seed 001): the panes on a server, scoped to a session or a window, with what runs
 * in each. A large server is listed in two reads (its panes, then the process of those the
 * reply can hold), so a whole listing never asks tmux for every pane's process.
 *
 * @module
 */

import { z } from "zod";
import { boundMetadata, fitEntries, withOmittedMetadata } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { clip, sessionList, ToolFailure } from "../mcp/errors.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import {
  count,
  int,
  listBound,
  metadataBound,
  panePlacementSchema,
  sessionRefSchema,
  WINDOW_ID_ARG,
  windowIdSchema,
} from "../mcp/schemas.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import { addressKey } from "../tmux/server_address.ts";
import { type PaneBrief, SESSIONS_ONLY, type Snapshot } from "../tmux/snapshot.ts";
import { boundPlacements, listBudget, noServerNote, omittedNote } from "./list_reply.ts";

/**
 * The id of a session named by id or name, refused when there is none (no server: ""). An id
 * is taken as it is: a read of its panes that finds no such session reads them all, and the
 * reference is then looked up there, as a name too (a session named `$5`).
 */
async function sessionIdOf(ctx: TmuxContext, ref: string): Promise<string> {
  if (/^\$\d+$/.test(ref)) return ref;
  const snapshot = await ctx.snapshot(SESSIONS_ONLY);
  return snapshot.running ? ctx.session(snapshot, ref).id : "";
}

/** Restricts panes to a session and/or a window, refusing targets that do not exist. */
function scopePanes<P extends PaneBrief>(
  ctx: TmuxContext,
  snapshot: Snapshot<P>,
  session: string | undefined,
  window: string | undefined,
): P[] {
  if (!snapshot.running) return [];
  let panes = snapshot.panes;
  if (session !== undefined) {
    const s = ctx.session(snapshot, session);
    panes = panes.filter((p) => p.placements.some((pl) => pl.sessionId === s.id));
  }
  if (window !== undefined) {
    const w = ctx.window(snapshot, window);
    if (session !== undefined && !panes.some((p) => p.windowId === w.id)) {
      throw new ToolFailure(
        `Window ${w.id} is not in session ${JSON.stringify(clip(session))}.`,
        `It is in ${sessionList(w.placements)}.`,
      );
    }
    panes = panes.filter((p) => p.windowId === w.id);
  }
  return panes;
}

// ---------------------------------------------------------------------------------------------
// list_panes (seed 001)

const paneEntry = z.strictObject({
  active: z.boolean().describe("Whether this is its window's active pane."),
  command: z.string().describe("The command tmux reports running in it."),
  cwd: z.string().describe("Its current working directory."),
  dead: z.boolean().describe("Whether its process exited and remain-on-exit kept it."),
  height: int(),
  id: z.string().regex(/^%\d+$/).describe(
    "Stable pane id. Prefer this for entity-scoped targeting.",
  ),
  index: int(),
  isAttended: z.boolean().describe("A person is currently looking at this pane."),
  isCallerPane: z.boolean().describe("This is the pane this MCP server runs in."),
  ...metadataBound,
  omittedPlacements: count().describe("Later placements omitted."),
  placements: z.array(panePlacementSchema).describe(
    "Retained session and window indexes through which this pane is reachable.",
  ),
  placementsComplete: z.boolean().describe("Whether placements contains every placement."),
  title: z.string(),
  width: int(),
  windowId: windowIdSchema,
  windowName: z.string(),
});

/** list_panes: the panes on a server, one session or one window, metadata only. */
export const listPanes = defineTool({
  name: "list_panes",
  title: "List panes",
  toolset: "inspect",
  description:
    "Inspect tmux metadata; accepts no client-supplied executable input. Panes on this server, " +
    "with the command each is running and its directory. Marks the pane this server runs in " +
    "(isCallerPane) and panes a person is watching (isAttended). Metadata only — search_panes " +
    "reads their contents.",
  input: {
    session: sessionRefSchema.describe("Session id ($1) or name.").optional(),
    window: z.string().regex(/^@\d+$/, WINDOW_ID_ARG).describe(
      "Stable window id, e.g. @1.",
    ).optional(),
  },
  output: {
    ...listBound,
    panes: z.array(paneEntry),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    // One session's panes: its id first (the name may be anything), then only its panes.
    const sessionId = args.session !== undefined && args.window === undefined
      ? await sessionIdOf(ctx, args.session)
      : "";
    // A whole server that was large last time: its panes without their process first, then
    // the process of the panes that can be listed (tmux asks the system for it pane by pane).
    const whole = args.session === undefined && args.window === undefined;
    const sizes = lastSizes(ctx);
    const server = addressKey(ctx.address);
    const large = whole && (sizes.get(server) ?? 0) > LARGE_LISTING;
    const read = (processInfo: boolean) =>
      ctx.briefSnapshot({
        sessions: args.session !== undefined,
        windows: args.window !== undefined,
        // One window's or session's panes: tmux looks up only theirs (the others' processes
        // cost the most).
        windowId: args.window ?? "",
        sessionId,
        processInfo,
      });
    let snapshot = await read(!large);
    if (whole) noteListing(sizes, server, snapshot.panes.length);
    let panes = scopePanes(ctx, snapshot, args.session, args.window);
    // Panes not read with their process: left out whatever room remains.
    let unread = 0;
    if (large) {
      const known = await processOfListed(ctx, snapshot, panes);
      if (known) ({ panes, unread } = known);
      else {
        snapshot = await read(true);
        panes = scopePanes(ctx, snapshot, args.session, args.window);
      }
    }
    const fitted = fitEntries(paneEntries(ctx, snapshot, panes), listBudget(ctx));
    const kept = fitted.kept;
    const omitted = fitted.omitted + unread;
    return {
      data: { complete: omitted === 0, omittedEntries: omitted, panes: kept },
      summary: `${kept.length} pane${kept.length === 1 ? "" : "s"}.` +
        omittedNote(
          omitted,
          args.window !== undefined
            ? ""
            : args.session !== undefined
            ? "List one window's panes (window) for the rest."
            : "List one session's or one window's panes (session, window) for the rest.",
        ) + noServerNote(snapshot, ctx),
    };
  },
});

/** Panes on a server beyond which a whole listing cannot hold every one. */
const LARGE_LISTING = 300;

/** Large servers kept in {@link listingSizes} (the least recently listed is forgotten first). */
const LARGE_SERVERS = 8;

/**
 * The number of panes each server had at its last whole listing, per runner: only of those
 * over {@link LARGE_LISTING} (any other lists as one never listed), least recently listed first.
 */
const listingSizes = new WeakMap<TmuxRunner, Map<string, number>>();

/**
 * Notes that the server `server` had `panes` panes at a whole listing. A process that runs for
 * months may be asked about many sockets, most of them small or with no server at all.
 */
function noteListing(sizes: Map<string, number>, server: string, panes: number): void {
  sizes.delete(server);
  if (panes <= LARGE_LISTING) return;
  sizes.set(server, panes);
  while (sizes.size > LARGE_SERVERS) sizes.delete(sizes.keys().next().value as string);
}

function lastSizes(ctx: TmuxContext): Map<string, number> {
  let sizes = listingSizes.get(ctx.runner);
  if (!sizes) listingSizes.set(ctx.runner, sizes = new Map());
  return sizes;
}

/** list_panes' entries, in the order given. */
function paneEntries(ctx: TmuxContext, snapshot: Snapshot<PaneBrief>, panes: PaneBrief[]) {
  // The pane this server runs in is listed only if it is in the window read.
  const caller = ctx.caller(snapshot);
  const attended = ctx.attended(snapshot);
  return panes.map((p) => {
    const { placed, cutNames } = boundPlacements(
      p.placements.map(({ index, sessionId, sessionName }) => ({ index, sessionId, sessionName })),
    );
    return withOmittedMetadata(
      boundMetadata({
        active: p.active,
        command: p.command,
        cwd: p.cwd,
        dead: p.dead,
        height: p.height,
        id: p.id,
        index: p.index,
        isAttended: attended.has(p.id),
        isCallerPane: p.id === caller.paneId,
        ...placed,
        title: p.title,
        width: p.width,
        windowId: p.windowId,
        windowName: p.windowName,
      }, ["command", "cwd", "title", "windowName"]),
      cutNames,
    );
  });
}

/**
 * The panes of a listing read without their process that the reply can hold, with their
 * command and directory read now (by session: `list-panes -s`, each pane of the sessions they
 * are in), and how many panes are left out besides. Without the process an entry only gets
 * shorter, so the panes that fit then are all that can fit. A pane no longer in its session by
 * then (closed, or moved) is counted as left out, never listed without its process; null when
 * a session ended meanwhile (the caller reads again whole).
 */
async function processOfListed(
  ctx: TmuxContext,
  snapshot: Snapshot<PaneBrief>,
  panes: PaneBrief[],
): Promise<{ panes: PaneBrief[]; unread: number } | null> {
  const { kept } = fitEntries(paneEntries(ctx, snapshot, panes), listBudget(ctx));
  const candidates = panes.slice(0, kept.length);
  const sessions = [...new Set(candidates.map((p) => p.placements[0].sessionId))];
  const info = await ctx.processInfo(sessions);
  if (!info) return null;
  const known: PaneBrief[] = [];
  for (const p of candidates) {
    const process = info.get(p.id);
    if (process) known.push({ ...p, ...process });
  }
  return { panes: known, unread: panes.length - known.length };
}
