/**
 * Discovery: what exists on a tmux server, and who is looking at it. Toolset inspect.
 *
 * Every tool here reads one snapshot (one tmux invocation), so a result never mixes two
 * moments. `list_panes` and `list_windows` keep the seed contracts exactly.
 *
 * @module
 */

import { learnExitStatus, probePane } from "./pane_watch.ts";
import { ownerOf } from "../mcp/ownership.ts";
import { z } from "zod";
import {
  boundMetadata,
  capList,
  fitEntries,
  fitPlacements,
  jsonBytes,
  placementsNote,
  withOmittedMetadata,
} from "../mcp/bounds.ts";
import { clip } from "../mcp/errors.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { defineTool, READ_ONLY, socketNameField, type ToolRegistry } from "../mcp/registry.ts";
import {
  count,
  int,
  listBound,
  metadataBound,
  paneIdSchema,
  panePlacementSchema,
  sessionIdSchema,
  sessionRefSchema,
  windowIdArg,
  windowIdSchema,
  windowPlacementSchema,
} from "../mcp/schemas.ts";
import { isPerson, parseTmuxEnv } from "../tmux/identity.ts";
import { describeServer } from "../tmux/which_server.ts";
import { noteSocketServer, socketServerPid } from "../tmux/control.ts";
import { newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { paneAtPrompt } from "../tmux/prompt.ts";
import { addressKey, type ServerAddress, TmuxError, type TmuxRunner } from "../tmux/run.ts";
import {
  type ClientRow,
  NO_PANES,
  NO_SERVER,
  type PaneBrief,
  type PaneRow,
  SERVER_ONLY,
  SESSIONS_ONLY,
  type Snapshot,
  type WindowRow,
  WINDOWS_ONLY,
} from "../tmux/snapshot.ts";

/** Room left for the envelope around a bounded list. */
const ENVELOPE_BYTES = 512;

function listBudget(ctx: TmuxContext): number {
  return ctx.config.maxResultBytes - ENVELOPE_BYTES;
}

function noServerNote(snapshot: Snapshot<PaneBrief>, ctx: TmuxContext): string {
  return snapshot.running ? "" : ` No tmux server is running on ${ctx.socketLabel}.`;
}

/** What was left out of a list, and (`rest`) how a narrower call reaches it. */
function omittedNote(omitted: number, rest = ""): string {
  return omitted > 0
    ? ` ${omitted} more left out to stay within the result bound.${rest ? ` ${rest}` : ""}`
    : "";
}

/**
 * A listed entry's placements, fitted (see fitPlacements), and the bytes cut from their session
 * names (`cutNames`), which the entry adds to its own omittedMetadataBytes.
 */
function boundPlacements<T extends { sessionName: string }>(list: readonly T[]) {
  const { placements, omittedPlacements, omittedMetadataBytes } = fitPlacements(list);
  return {
    placed: { placements, omittedPlacements, placementsComplete: omittedPlacements === 0 },
    cutNames: omittedMetadataBytes,
  };
}

/** A name for a summary: quoted, and short enough to leave room for what follows it. */
function shortName(name: string): string {
  return JSON.stringify(clip(name, 100));
}

/**
 * The id of a session named by id or name, refused when there is none (no server: ""). An id
 * is taken as it is: a read of its panes finds it missing (and refuses) as well.
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
        `Window ${w.id} is not in session ${JSON.stringify(session)}.`,
        `It is in ${
          w.placements.map((p) => `${p.sessionId} ${JSON.stringify(p.sessionName)}`).join(", ")
        }.`,
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

const listPanes = defineTool({
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
    window: z.string().regex(/^@\d+$/, "a window id such as @2").describe(
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
    if (whole) sizes.set(server, snapshot.panes.length);
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

/** The number of panes each server had at its last whole listing, per runner. */
const listingSizes = new WeakMap<TmuxRunner, Map<string, number>>();

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

// ---------------------------------------------------------------------------------------------
// list_windows (seed 003)

const windowEntry = z.strictObject({
  id: windowIdSchema,
  layout: z.string().describe(
    "tmux's layout string; feed it back only when metadataComplete is true.",
  ),
  ...metadataBound,
  name: z.string(),
  omittedPlacements: count().describe("Later placements omitted."),
  panes: int(),
  placements: z.array(windowPlacementSchema).describe(
    "Retained sessions and indexes where this window is linked.",
  ),
  placementsComplete: z.boolean().describe("Whether placements contains every placement."),
  zoomed: z.boolean(),
});

const listWindows = defineTool({
  name: "list_windows",
  title: "List windows",
  toolset: "inspect",
  description:
    "Inspect tmux metadata; accepts no client-supplied executable input. Windows on this " +
    "server, optionally restricted to one session by id or name.",
  input: {
    session: sessionRefSchema.describe("Session id ($1) or name. Omit for all sessions.")
      .optional(),
  },
  output: {
    ...listBound,
    windows: z.array(windowEntry),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const snapshot = await ctx.snapshot(args.session === undefined ? WINDOWS_ONLY : NO_PANES);
    let windows: WindowRow[] = snapshot.windows;
    if (args.session !== undefined && snapshot.running) {
      const s = ctx.session(snapshot, args.session);
      windows = windows.filter((w) => w.placements.some((p) => p.sessionId === s.id));
    }
    const entries = windows.map((w) => {
      const { placed, cutNames } = boundPlacements(w.placements);
      return withOmittedMetadata(
        boundMetadata({
          id: w.id,
          layout: w.layout,
          name: w.name,
          panes: w.panes,
          ...placed,
          zoomed: w.zoomed,
        }, ["layout", "name"]),
        cutNames,
      );
    });
    const { kept, omitted } = fitEntries(entries, listBudget(ctx));
    return {
      data: { complete: omitted === 0, omittedEntries: omitted, windows: kept },
      summary: `${kept.length} window${kept.length === 1 ? "" : "s"}.` +
        omittedNote(
          omitted,
          args.session === undefined ? "List one session's windows (session) for the rest." : "",
        ) + noServerNote(snapshot, ctx),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// list_sessions

const sessionEntry = z.strictObject({
  id: sessionIdSchema,
  name: z.string(),
  windows: count().describe("How many windows the session has."),
  attachedClients: count().describe(
    "People attached to it: clients on a terminal, tmux -CC too (tmux's own count includes programs).",
  ),
  controlClients: count().describe(
    "Programs attached in control mode without a terminal (this server's own connection among them).",
  ),
  watched: z.boolean().describe("Whether a person (a client on a terminal) is attached."),
  created: z.string().describe("When it was created (ISO 8601, UTC)."),
  lastAttached: z.string().nullable().describe("When a client last attached, or null."),
  group: z.string().nullable().describe("Its session group, or null."),
  ...metadataBound,
});

const listSessions = defineTool({
  name: "list_sessions",
  title: "List sessions",
  toolset: "inspect",
  description: "Sessions: id ($N), name, windows, attached clients, created.",
  input: {},
  output: {
    running: z.boolean().describe("Whether a tmux server answered on the socket."),
    ...listBound,
    sessions: z.array(sessionEntry),
  },
  annotations: READ_ONLY,
  async run(_args, ctx) {
    const snapshot = await ctx.snapshot(SESSIONS_ONLY);
    // People: clients on a terminal (tmux -CC too); programs: control clients without one.
    const attached = (id: string, person: boolean) =>
      snapshot.clients.filter((c) => c.sessionId === id && isPerson(c) === person).length;
    const entries = snapshot.sessions.map((s) =>
      boundMetadata({
        id: s.id,
        name: s.name,
        windows: s.windows,
        attachedClients: attached(s.id, true),
        controlClients: attached(s.id, false),
        watched: attached(s.id, true) > 0,
        created: isoTime(s.created),
        lastAttached: s.lastAttached > 0 ? isoTime(s.lastAttached) : null,
        group: s.group === "" ? null : s.group,
      }, ["name", "group"])
    );
    const { kept, omitted } = fitEntries(entries, listBudget(ctx));
    return {
      data: {
        running: snapshot.running,
        complete: omitted === 0,
        omittedEntries: omitted,
        sessions: kept,
      },
      summary: `${kept.length} session${kept.length === 1 ? "" : "s"}.` + omittedNote(omitted) +
        noServerNote(snapshot, ctx),
    };
  },
});

/**
 * The read get_server_info reports: every pane counts (and may be the caller's), what runs in
 * them does not. Read over the control connection, it may describe a server whose socket file
 * is gone, another server started on its path or none: the socket is asked which server it
 * leads to (a tmux process of its own, a few milliseconds), and when that is another, the
 * server there is read, or, with none there, none is running.
 */
async function serverOnSocket(ctx: TmuxContext): Promise<Snapshot<PaneBrief>> {
  const snapshot = await ctx.briefSnapshot({ processInfo: false });
  if (!ctx.runner.control) return snapshot;
  let pid: number | null;
  try {
    // Lets go of control clients attached to another server than the one there.
    pid = await socketServerPid(ctx.runner, ctx.address, { signal: ctx.signal });
  } catch (error) {
    // No answer about the socket: the read stands.
    if (error instanceof TmuxError && error.kind !== "cancelled") return snapshot;
    throw error;
  }
  if (pid === (snapshot.server?.pid ?? null)) return snapshot;
  return pid === null ? NO_SERVER : await ctx.briefSnapshot({ processInfo: false });
}

function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

// ---------------------------------------------------------------------------------------------
// get_server_info

const getServerInfo = defineTool({
  name: "get_server_info",
  title: "Server info",
  toolset: "inspect",
  description:
    "The tmux server: version, pid, socket path, counts, the pane this MCP server runs " +
    "in.",
  input: {},
  output: {
    running: z.boolean(),
    socket: z.string().describe(
      "Which server: the socket given, else the one TMUX names, else tmux's default socket.",
    ),
    socketPath: z.string().nullable(),
    pid: int().nullable(),
    version: z.string().nullable(),
    sessions: count(),
    windows: count(),
    panes: count(),
    clients: count().describe("Attached clients not in control mode: people."),
    controlClients: count().describe(
      "Control-mode clients attached (programs, this server's own connection among them).",
    ),
    watchedPanes: count().describe("Panes a person can see right now."),
    callerPaneId: z.string().nullable().describe("The pane this MCP server runs in, if known."),
    callerVia: z.enum(["TMUX_PANE", "parent-process"]).nullable(),
    callerReason: z.string(),
  },
  annotations: READ_ONLY,
  async run(_args, ctx) {
    const snapshot = await serverOnSocket(ctx);
    const caller = ctx.caller(snapshot);
    // Without -L/-S tmux reaches the server TMUX names, not the default socket: say which.
    const socket = describeServer(ctx.address, ctx.config.callerEnv.tmux);
    // A control-mode client without a terminal is a program (this server's own connection is
    // one), not a person; tmux -CC in a terminal is a person.
    const controlClients = snapshot.clients.filter((c) => !isPerson(c)).length;
    const data = {
      running: snapshot.running,
      socket,
      socketPath: snapshot.server?.socketPath ?? null,
      pid: snapshot.server?.pid ?? null,
      version: snapshot.server?.version ?? null,
      sessions: snapshot.sessions.length,
      windows: snapshot.windows.length,
      panes: snapshot.panes.length,
      clients: snapshot.clients.length - controlClients,
      controlClients,
      watchedPanes: ctx.attended(snapshot).size,
      callerPaneId: caller.paneId,
      callerVia: caller.via,
      callerReason: caller.reason,
    };
    return {
      data,
      summary: snapshot.running
        ? `tmux ${data.version} (pid ${data.pid}), ${socket}${
          data.socketPath && !socket.includes(data.socketPath) ? ` at ${data.socketPath}` : ""
        }: ${data.sessions} sessions, ${data.windows} windows, ${data.panes} panes, ${data.clients} clients (people), ${controlClients} programs in control mode.`
        : `No tmux server is running on ${socket}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// get_session_info

const getSessionInfo = defineTool({
  name: "get_session_info",
  title: "Session info",
  toolset: "inspect",
  description: "One session in full: times, group, directory, windows, clients.",
  input: { session: sessionRefSchema },
  output: {
    id: sessionIdSchema,
    name: z.string(),
    created: z.string(),
    lastAttached: z.string().nullable(),
    activity: z.string(),
    group: z.string().nullable(),
    path: z.string().describe("The session's start directory."),
    panes: count(),
    windows: z.array(z.strictObject({
      id: windowIdSchema,
      index: int(),
      name: z.string(),
      active: z.boolean(),
      panes: count(),
      zoomed: z.boolean(),
    })),
    omittedWindows: count().describe("Windows left out to stay within the result bound."),
    clients: z.array(z.strictObject({
      name: z.string(),
      tty: z.string(),
      controlMode: z.boolean(),
    })),
    omittedClients: count(),
    ...metadataBound,
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const snapshot = await ctx.snapshot(NO_PANES);
    const s = ctx.session(snapshot, args.session);
    const windows = snapshot.windows.flatMap((w) =>
      w.placements.filter((p) => p.sessionId === s.id).map((p) => ({ w, p }))
    ).sort((a, b) => a.p.index - b.p.index);
    const bounded = boundMetadata({
      id: s.id,
      name: s.name,
      created: isoTime(s.created),
      lastAttached: s.lastAttached > 0 ? isoTime(s.lastAttached) : null,
      activity: isoTime(s.activity),
      group: s.group === "" ? null : s.group,
      path: s.path,
    }, ["name", "group", "path"]);
    const windowList = windows.map(({ w, p }) =>
      boundMetadata({
        id: w.id,
        index: p.index,
        name: w.name,
        active: p.active,
        panes: w.panes,
        zoomed: w.zoomed,
      }, ["name"])
    );
    const clients = snapshot.clients.filter((c) => c.sessionId === s.id).map((c) => ({
      name: c.name,
      tty: c.tty,
      controlMode: c.controlMode,
    }));
    const paneCount = windows.reduce((n, { w }) => n + w.panes, 0);
    const fitted = fitEntries(windowList, listBudget(ctx) / 2);
    // The names cut in the windows listed count with the session's own.
    const kept = fitted.kept.map(({ metadataComplete: _, omittedMetadataBytes: __, ...w }) => w);
    const cutNames = fitted.kept.reduce((n, w) => n + w.omittedMetadataBytes, 0);
    const omitted = fitted.omitted;
    const shownClients = capList(clients, 64);
    return {
      data: {
        ...withOmittedMetadata(bounded, cutNames),
        panes: paneCount,
        windows: kept,
        omittedWindows: omitted,
        clients: shownClients.kept,
        omittedClients: shownClients.omitted,
      },
      summary:
        `Session ${s.id} ${
          shortName(s.name)
        }: ${windowList.length} windows, ${paneCount} panes, ${clients.length} clients.` +
        omittedNote(omitted),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// get_window_info

const getWindowInfo = defineTool({
  name: "get_window_info",
  title: "Window info",
  toolset: "inspect",
  description: "One window in full: layout, zoom, sessions, panes with geometry, watchers.",
  input: { windowId: windowIdArg },
  output: {
    id: windowIdSchema,
    name: z.string(),
    width: count(),
    height: count(),
    layout: z.string(),
    visibleLayout: z.string(),
    zoomed: z.boolean(),
    activePaneId: z.string().nullable(),
    isAttended: z.boolean().describe("Whether a person can see any pane of it right now."),
    placements: z.array(windowPlacementSchema),
    omittedPlacements: count(),
    panes: z.array(z.strictObject({
      id: paneIdSchema,
      index: int(),
      active: z.boolean(),
      width: count(),
      height: count(),
      left: int(),
      top: int(),
      command: z.string(),
      dead: z.boolean(),
    })),
    omittedPanes: count().describe("Panes left out to stay within the result bound."),
    ...metadataBound,
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const snapshot = await ctx.windowSnapshot(args.windowId);
    const w = ctx.window(snapshot, args.windowId);
    const attended = ctx.attended(snapshot);
    const panes = snapshot.panes.filter((p) => p.windowId === w.id).sort((a, b) =>
      a.index - b.index
    );
    const bounded = boundMetadata({
      id: w.id,
      name: w.name,
      layout: w.layout,
      visibleLayout: w.visibleLayout,
    }, ["name", "layout", "visibleLayout"]);
    const { placements, omittedPlacements, omittedMetadataBytes: cutNames } = fitPlacements(
      w.placements,
    );
    const rest = {
      ...bounded,
      width: w.width,
      height: w.height,
      zoomed: w.zoomed,
      activePaneId: panes.find((p) => p.active)?.id ?? null,
      isAttended: panes.some((p) => attended.has(p.id)),
      placements,
      omittedPlacements,
    };
    const entries = panes.map((p) =>
      boundMetadata({
        id: p.id,
        index: p.index,
        active: p.active,
        width: p.width,
        height: p.height,
        left: p.left,
        top: p.top,
        command: p.command,
        dead: p.dead,
      }, ["command"])
    );
    // The panes that fit beside the rest; the commands cut in them count with the window's.
    const fitted = fitEntries(entries, listBudget(ctx) - jsonBytes(rest));
    const cutCommands = fitted.kept.reduce((n, p) => n + p.omittedMetadataBytes, 0);
    return {
      data: {
        ...withOmittedMetadata(rest, cutNames + cutCommands),
        panes: fitted.kept.map(({ metadataComplete: _, omittedMetadataBytes: __, ...p }) => p),
        omittedPanes: fitted.omitted,
      },
      summary:
        `Window ${w.id} ${shortName(w.name)}: ${panes.length} panes, ${w.width}x${w.height}${
          w.zoomed ? ", zoomed" : ""
        }.` +
        omittedNote(fitted.omitted, "get_pane_info or list_panes (window) shows each pane.") +
        placementsNote(omittedPlacements),
    };
  },
});

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

async function paneDetailData(p: PaneRow, snapshot: Snapshot, ctx: TmuxContext) {
  const caller = ctx.caller(snapshot);
  const watchers = ctx.attended(snapshot).get(p.id) ?? [];
  const mark = await ownerOf(ctx, p.id);
  const bounded = boundMetadata({
    owner: mark,
    windowName: p.windowName,
    command: p.command,
    startCommand: p.startCommand,
    cwd: p.cwd,
    title: p.title,
    tty: p.tty,
  }, ["owner", "windowName", "command", "startCommand", "cwd", "title", "tty"]);
  const { placements, omittedPlacements, omittedMetadataBytes: cutNames } = fitPlacements(
    p.placements,
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
    deadStatus: p.dead && p.deadStatus === null
      ? (await learnExitStatus(ctx, p.id, await probePane(ctx, p.id))).deadStatus
      : p.deadStatus,
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

const getPaneInfo = defineTool({
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
        } in ${JSON.stringify(clip(p.cwd, 300))}, ${p.width}x${p.height}${p.dead ? ", dead" : ""}${
          data.atPrompt ? ", at its prompt" : ""
        }${p.inputOff ? ", input turned off (select-pane -d): nothing typed arrives" : ""}${
          data.isAttended ? ", watched by a person" : ""
        }${data.isCallerPane ? ", this server's own pane" : ""}.` +
        placementsNote(data.omittedPlacements),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// find_pane_by_position

const CORNERS = ["top-left", "top-right", "bottom-left", "bottom-right"] as const;

const findPaneByPosition = defineTool({
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

// ---------------------------------------------------------------------------------------------
// list_clients

const clientEntry = z.strictObject({
  name: z.string(),
  tty: z.string(),
  pid: int(),
  controlMode: z.boolean().describe(
    "In control mode: a program, unless on a terminal (tmux -CC, a person).",
  ),
  readonly: z.boolean(),
  width: count(),
  height: count(),
  termName: z.string(),
  sessionId: z.string(),
  sessionName: z.string(),
  windowId: z.string().describe("The window it shows."),
  paneId: z.string().describe("The active pane of that window."),
  zoomed: z.boolean(),
});

const listClients = defineTool({
  name: "list_clients",
  title: "List clients",
  toolset: "inspect",
  description: "Attached clients: what each shows; a person or a control-mode program.",
  input: {},
  output: {
    ...listBound,
    clients: z.array(clientEntry),
  },
  annotations: READ_ONLY,
  async run(_args, ctx) {
    const snapshot = await ctx.snapshot(SERVER_ONLY);
    const entries = snapshot.clients.map((c: ClientRow) => ({
      name: c.name,
      tty: c.tty,
      pid: c.pid,
      controlMode: c.controlMode,
      readonly: c.readonly,
      width: c.width,
      height: c.height,
      termName: c.termName,
      sessionId: c.sessionId,
      sessionName: c.sessionName,
      windowId: c.windowId,
      paneId: c.paneId,
      zoomed: c.zoomed,
    }));
    const { kept, omitted } = fitEntries(entries, listBudget(ctx));
    const people = kept.filter(isPerson).length;
    return {
      data: { complete: omitted === 0, omittedEntries: omitted, clients: kept },
      summary: `${kept.length} client${kept.length === 1 ? "" : "s"} (${people} of them people).` +
        omittedNote(omitted) + noServerNote(snapshot, ctx),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// list_servers

/** How long a probe waits for one server: a dead socket answers at once, a stuck one never. */
const PROBE_TIMEOUT_MS = 2_000;

const serverEntry = z.strictObject({
  socket: z.string().describe("How to name it: socket name, path, or default."),
  socketName: z.string().nullable().describe("Pass as socket_name to reach it, when it has one."),
  socketPath: z.string().nullable(),
  running: z.boolean(),
  pid: int().nullable(),
  version: z.string().nullable(),
  sessions: count(),
  roles: z.array(z.enum(["configured", "default", "caller", "asked", "host"])).describe(
    "Why it was probed: the server this MCP server was started for, tmux's default, the one " +
      "named in TMUX, one the call asked about, or an SSH host's default.",
  ),
  host: z.string().optional().describe("The SSH host it runs on (pass as host)."),
  error: z.string().nullable().describe("Why it did not answer, when it did not."),
});

type ServerEntry = z.infer<typeof serverEntry>;

async function probe(ctx: TmuxContext, address: ServerAddress): Promise<ServerEntry> {
  const guard = newGuard();
  const base = {
    socket: address.socketPath ?? address.socketName ?? "default",
    socketName: address.socketPath ? null : (address.socketName ?? null),
    ...(address.host !== undefined && { host: address.host }),
  };
  try {
    const out = await ctx.runner.run(address, [
      "display-message",
      "-p",
      recordFormat(guard, ["#{socket_path}", "#{pid}", "#{version}"]),
      ";",
      "list-sessions",
      "-F",
      recordFormat(guard, ["#{session_id}"]),
    ], { timeoutMs: PROBE_TIMEOUT_MS, signal: ctx.signal });
    const records = parseRecords(out, guard);
    const [socketPath, pid, version] = records[0] ?? ["", "", ""];
    return {
      ...base,
      socketPath,
      running: true,
      pid: Number(pid) || null,
      version,
      sessions: records.length - 1,
      roles: [],
      error: null,
    };
  } catch (error) {
    if (!(error instanceof TmuxError)) throw error;
    if (error.kind === "cancelled") throw error;
    if (error.kind === "not-installed" && address.host === undefined) throw error;
    // A server with no sessions fails list-sessions after printing its facts.
    const pathFromMessage = /^(?:no server running on|error connecting to) (\S+)/.exec(
      error.message,
    )?.[1] ?? null;
    return {
      ...base,
      socketPath: address.socketPath ?? pathFromMessage,
      running: false,
      pid: null,
      version: null,
      sessions: 0,
      roles: [],
      error: error.message,
    };
  }
}

const listServers = defineTool({
  name: "list_servers",
  title: "List tmux servers",
  toolset: "inspect",
  description: "Live tmux servers in reach, and those socketNames (-L) name.",
  input: {
    socketNames: z.array(socketNameField.unwrap()).max(32).optional(),
  },
  output: { servers: z.array(serverEntry) },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const tmux = parseTmuxEnv(ctx.config.callerEnv.tmux);
    // A tmux started with no -L or -S reaches the server TMUX names, else the default socket:
    // probed (and named) as what it is.
    const { socketName, socketPath, host } = ctx.address;
    const tmuxChoice = socketName === undefined && socketPath === undefined && host === undefined;
    const candidates: { address: ServerAddress; role: ServerEntry["roles"][number] }[] = [
      {
        address: !tmuxChoice
          ? ctx.address
          : tmux
          ? { socketPath: tmux.socketPath }
          : { socketName: "default" },
        role: "configured",
      },
      { address: { socketName: "default" }, role: "default" },
    ];
    if (tmux) candidates.push({ address: { socketPath: tmux.socketPath }, role: "caller" });
    for (const name of args.socketNames ?? []) {
      candidates.push({ address: { socketName: name }, role: "asked" });
    }
    // Every SSH host's default server, and the asked names there too (a short probe each).
    for (const host of ctx.runner.hosts) {
      candidates.push({ address: { host }, role: "host" });
      for (const name of args.socketNames ?? []) {
        candidates.push({ address: { host, socketName: name }, role: "asked" });
      }
    }
    const probed = await Promise.all(candidates.map((c) => probe(ctx, c.address)));
    // Each probe reached the server its socket leads to now: control clients attached to
    // another (one that lost its socket file) are let go, so calls reach the same one.
    await Promise.all(
      probed.map((entry, i) =>
        entry.pid === null ? null : noteSocketServer(ctx.runner, candidates[i].address, entry.pid)
      ),
    );
    const servers: ServerEntry[] = [];
    probed.forEach((entry, i) => {
      const role = candidates[i].role;
      const same = servers.find((s) =>
        s.host === entry.host &&
        (entry.socketPath !== null ? s.socketPath === entry.socketPath : s.socket === entry.socket)
      );
      if (same) {
        if (!same.roles.includes(role)) same.roles.push(role);
        if (same.socketName === null && entry.socketName !== null) {
          same.socketName = entry.socketName;
        }
      } else servers.push({ ...entry, roles: [role] });
    });
    const live = servers.filter((s) => s.running).length;
    return {
      data: { servers },
      summary: `${live} of ${servers.length} probed socket${
        servers.length === 1 ? "" : "s"
      } have a running tmux server.`,
    };
  },
});

/** Registers the discovery tools. */
export function registerDiscoveryTools(registry: ToolRegistry): void {
  registry.add(
    listSessions,
    listWindows,
    listPanes,
    listClients,
    getServerInfo,
    getSessionInfo,
    getWindowInfo,
    getPaneInfo,
    findPaneByPosition,
    listServers,
  );
}
