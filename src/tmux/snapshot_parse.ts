/**
 * Reading a snapshot's chained output back into rows: each record checked against its kind's
 * layout, a linked window (and its panes) merged into one row with every placement, and a
 * pane's places taken from its window's rows when its own row leaves them out.
 *
 * @module
 */

import { flag, int, parseRecords } from "./format.ts";
import {
  type CLIENT,
  CLIENT_LAYOUT,
  type PANE,
  type PANE_BRIEF,
  PANE_BRIEF_LAYOUT,
  PANE_LAYOUT,
  type PANE_OWN,
  type PANE_OWN_FULL,
  PANE_OWN_FULL_LAYOUT,
  PANE_OWN_LAYOUT,
  type Raw,
  SERVER_LAYOUT,
  type SESSION,
  SESSION_LAYOUT,
  type WINDOW,
  WINDOW_LAYOUT,
  WINDOW_PLACE_LAYOUT,
} from "./snapshot_format.ts";
import type {
  ClientRow,
  PaneBrief,
  PaneRow,
  Placement,
  ServerFacts,
  SessionRow,
  Snapshot,
  WindowRow,
} from "./snapshot.ts";

/** Parses the chained output: for a snapshot read (snapshot.ts), and for tests. */
export function parseSnapshot(
  stdout: Uint8Array,
  guard: string,
): Omit<Snapshot<PaneBrief>, "scope"> & { placedElsewhere: boolean } {
  const counts = {
    V: SERVER_LAYOUT.count,
    S: SESSION_LAYOUT.count,
    W: WINDOW_LAYOUT.count,
    P: PANE_LAYOUT.count,
    B: PANE_BRIEF_LAYOUT.count,
    N: WINDOW_PLACE_LAYOUT.count,
    b: PANE_OWN_LAYOUT.count,
    p: PANE_OWN_FULL_LAYOUT.count,
    C: CLIENT_LAYOUT.count,
  };
  // Records of different kinds have different field counts: each is checked against its own.
  const all = parseRecords(stdout, guard);
  let server: ServerFacts | null = null;
  const sessions: SessionRow[] = [];
  const windows = new Map<string, WindowRow>();
  const panes = new Map<string, PaneBrief>();
  const clients: ClientRow[] = [];
  /** Each window's name and places, from its own rows or its place rows, for pane rows. */
  const places = new Map<string, WindowPlaces>();
  let placedElsewhere = false;
  // A window linked into several sessions is listed once per placement, and so are its panes:
  // one row each, with every placement.
  const addPane = <R extends Raw<typeof PANE_BRIEF>>(
    r: R,
    build: (r: R, placement: Placement) => PaneBrief,
  ) => {
    if (int(r.placementCount) > 1) placedElsewhere = true;
    addPlaced(
      panes,
      r.id,
      placed(r.sessionId, r.sessionName, r.windowIndex, r.windowActive),
      (p) => build(r, p),
    );
  };
  for (const record of all) {
    const kind = record[0] as keyof typeof counts;
    const values = record.slice(1);
    if (!(kind in counts) || values.length !== counts[kind]) {
      throw new Error(`unexpected tmux record of kind ${kind} with ${values.length} fields`);
    }
    switch (kind) {
      case "V": {
        const r = SERVER_LAYOUT.read(values);
        server = {
          socketPath: r.socketPath,
          pid: int(r.pid),
          startTime: int(r.startTime),
          version: r.version,
          lastAttached: r.attaches.split(" ").reduce(
            (a, b) => Math.max(a, /^\d+$/.test(b) ? Number(b) : 0),
            0,
          ),
        };
        break;
      }
      case "S":
        sessions.push(sessionRow(SESSION_LAYOUT.read(values)));
        break;
      case "W": {
        const r = WINDOW_LAYOUT.read(values);
        addPlaced(
          windows,
          r.id,
          placed(r.sessionId, r.sessionName, r.index, r.active),
          (p) => windowRow(r, p),
        );
        places.set(r.id, windows.get(r.id)!);
        break;
      }
      case "N":
        // One session's windows: one also in another session is read again with all.
        if (addWindowPlace(places, values) > 1) placedElsewhere = true;
        break;
      case "b": {
        // A linked window's panes are listed once per place: the first row has them all.
        const r = PANE_OWN_LAYOUT.read(values);
        if (!panes.has(r.id)) panes.set(r.id, paneOwnRow(r, placesOf(places, r)));
        break;
      }
      case "p": {
        const r = PANE_OWN_FULL_LAYOUT.read(values);
        if (!panes.has(r.id)) panes.set(r.id, paneOwnFullRow(r, placesOf(windows, r)));
        break;
      }
      case "P":
        addPane(PANE_LAYOUT.read(values), paneRow);
        break;
      case "B":
        addPane(PANE_BRIEF_LAYOUT.read(values), paneBriefRow);
        break;
      case "C":
        clients.push(clientRow(CLIENT_LAYOUT.read(values)));
        break;
    }
  }
  return {
    running: true,
    server,
    sessions,
    windows: [...windows.values()],
    panes: [...panes.values()],
    clients,
    placedElsewhere,
  };
}

/** Where a window (or a pane, through its window) sits in one session. */
function placed(sessionId: string, sessionName: string, index: string, active: string): Placement {
  return { sessionId, sessionName, index: int(index), active: flag(active) };
}

/**
 * Adds one window's place in one session (a {@link WINDOW_PLACE} record) to `places`; returns
 * the number of sessions the window is in.
 */
export function addWindowPlace(places: Map<string, WindowPlaces>, values: string[]): number {
  const r = WINDOW_PLACE_LAYOUT.read(values);
  addPlaced(
    places,
    r.id,
    placed(r.sessionId, r.sessionName, r.index, r.active),
    (p) => ({ name: r.name, placements: [p] }),
  );
  return int(r.placementCount);
}

/** The places of a pane's window, read in the same chain: never guessed when missing. */
export function placesOf<W extends WindowPlaces>(
  places: Map<string, W>,
  pane: { id: string; windowId: string },
): W {
  const window = places.get(pane.windowId);
  if (!window) throw new Error(`tmux listed pane ${pane.id} of an unlisted window`);
  return window;
}

/** Adds a placement to the row already listed under `id`, or lists a new row with it. */
function addPlaced<T extends { placements: Placement[] }>(
  rows: Map<string, T>,
  id: string,
  placement: Placement,
  build: (placement: Placement) => T,
): void {
  const known = rows.get(id);
  if (known) known.placements.push(placement);
  else rows.set(id, build(placement));
}

function sessionRow(r: Raw<typeof SESSION>): SessionRow {
  return {
    id: r.id,
    name: r.name,
    windows: int(r.windows),
    attached: int(r.attached),
    created: int(r.created),
    lastAttached: int(r.lastAttached),
    activity: int(r.activity),
    group: r.group,
    path: r.path,
  };
}

function windowRow(r: Raw<typeof WINDOW>, placement: Placement): WindowRow {
  return {
    id: r.id,
    name: r.name,
    layout: r.layout,
    visibleLayout: r.visibleLayout,
    zoomed: flag(r.zoomed),
    panes: int(r.panes),
    width: int(r.width),
    height: int(r.height),
    activity: int(r.activity),
    placements: [placement],
  };
}

function paneRow(r: Raw<typeof PANE>, placement: Placement): PaneRow {
  return paneOwnFullRow(r, {
    name: r.windowName,
    placements: [placement],
    zoomed: flag(r.windowZoomed),
  });
}

function paneOwnFullRow(
  r: Raw<typeof PANE_OWN_FULL>,
  window: WindowPlaces & { readonly zoomed: boolean },
): PaneRow {
  const brief = paneOwnRow(r, window);
  return {
    ...brief,
    deadStatus: brief.dead && r.deadStatus !== "" ? int(r.deadStatus) : null,
    left: int(r.left),
    top: int(r.top),
    right: int(r.right),
    bottom: int(r.bottom),
    atLeft: flag(r.atLeft),
    atRight: flag(r.atRight),
    atTop: flag(r.atTop),
    atBottom: flag(r.atBottom),
    tty: r.tty,
    inMode: int(r.inMode) > 0,
    mode: r.mode,
    inputOff: flag(r.inputOff),
    alternateScreen: flag(r.alternateScreen),
    cursorX: int(r.cursorX),
    cursorY: int(r.cursorY),
    historySize: int(r.historySize),
    historyLimit: int(r.historyLimit),
    scrollPosition: r.scrollPosition === "" ? null : int(r.scrollPosition),
    synchronized: flag(r.synchronized),
    piped: flag(r.piped),
    startCommand: r.startCommand,
    windowZoomed: window.zoomed,
  };
}

function paneBriefRow(r: Raw<typeof PANE_BRIEF>, placement: Placement): PaneBrief {
  return paneOwnRow(r, { name: r.windowName, placements: [placement] });
}

/** A window's name and every place it has, as far as read. */
export interface WindowPlaces {
  readonly name: string;
  readonly placements: Placement[];
}

function paneOwnRow(r: Raw<typeof PANE_OWN>, window: WindowPlaces): PaneBrief {
  return {
    id: r.id,
    windowId: r.windowId,
    windowName: window.name,
    index: int(r.index),
    active: flag(r.active),
    command: r.command,
    cwd: r.cwd,
    title: r.title,
    dead: flag(r.dead),
    width: int(r.width),
    height: int(r.height),
    pid: int(r.pid),
    placements: [...window.placements],
  };
}

function clientRow(r: Raw<typeof CLIENT>): ClientRow {
  return {
    name: r.name,
    tty: r.tty,
    pid: int(r.pid),
    controlMode: flag(r.controlMode),
    readonly: flag(r.readonly),
    ownActivePane: flag(r.ownActivePane),
    width: int(r.width),
    height: int(r.height),
    termName: r.termName,
    sessionId: r.sessionId,
    sessionName: r.sessionName,
    windowId: r.windowId,
    paneId: r.paneId,
    zoomed: flag(r.zoomed),
    paneMode: r.paneMode,
    previewing: flag(r.previewing),
    activity: int(r.activity),
  };
}
