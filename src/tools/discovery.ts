/**
 * Discovery: what exists on a tmux server, and who is looking at it. Toolset inspect.
 *
 * Every tool here reads one snapshot (one tmux invocation), so a result never mixes two
 * moments. `list_panes` and `list_windows` keep the seed contracts exactly. Sessions, windows
 * and clients are read here; the panes listed in pane_list.ts, one pane in full in
 * pane_detail.ts, the servers in servers.ts; how a list stays within the bound in
 * list_reply.ts.
 *
 * @module
 */

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
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import {
  count,
  int,
  listBound,
  metadataBound,
  paneIdSchema,
  sessionIdSchema,
  sessionRefSchema,
  windowIdArg,
  windowIdSchema,
  windowPlacementSchema,
} from "../mcp/schemas.ts";
import { isPerson } from "../tmux/identity.ts";
import {
  type ClientRow,
  NO_PANES,
  SERVER_ONLY,
  type WindowRow,
  WINDOWS_ONLY,
} from "../tmux/snapshot.ts";
import { boundPlacements, listBudget, noServerNote, omittedNote } from "./list_reply.ts";
import { listPanes } from "./pane_list.ts";
import { findPaneByPosition, getPaneInfo } from "./pane_detail.ts";
import { getServerInfo, listServers } from "./servers.ts";

/** A name for a summary: quoted, and short enough to leave room for what follows it. */
function shortName(name: string): string {
  return JSON.stringify(clip(name, 100));
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
  lastAttached: z.string().nullable().describe(
    "When a client last attached (tmux-mcp's own connection too), or null.",
  ),
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
    // The windows too: tmux's session_windows counts a window linked twice into a session
    // twice, which get_session_info, list_windows and get_server_info count once.
    const snapshot = await ctx.snapshot(NO_PANES);
    const windowsIn = new Map<string, Set<string>>();
    for (const w of snapshot.windows) {
      for (const p of w.placements) {
        const held = windowsIn.get(p.sessionId) ?? new Set<string>();
        windowsIn.set(p.sessionId, held.add(w.id));
      }
    }
    // People: clients on a terminal (tmux -CC too); programs: control clients without one.
    const attached = (id: string, person: boolean) =>
      snapshot.clients.filter((c) => c.sessionId === id && isPerson(c) === person).length;
    const entries = snapshot.sessions.map((s) =>
      boundMetadata({
        id: s.id,
        name: s.name,
        windows: windowsIn.get(s.id)?.size ?? 0,
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

function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

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
    activity: z.string().describe("Last use: a key, an attach (tmux-mcp's too)."),
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
    // A window linked into the session at two indexes is listed at each, but its panes are
    // the session's once.
    const distinct = [...new Map(windows.map(({ w }) => [w.id, w])).values()];
    const paneCount = distinct.reduce((n, w) => n + w.panes, 0);
    const links = windowList.length > distinct.length ? ` at ${windowList.length} indexes` : "";
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
        }: ${distinct.length} windows${links}, ${paneCount} panes, ${clients.length} clients.` +
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
  ownActivePane: z.boolean().describe("attach -f active-pane: it types into a pane of its own."),
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
      ownActivePane: c.ownActivePane,
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
