/**
 * What a snapshot asks tmux to print, and how each record travels: the format of every field
 * of every record kind (server, session, window, pane, client, places), which fields are
 * packed into one framed field, and the chained `display-message`/`list-*` argv that reads a
 * scope in one invocation.
 *
 * @module
 */

import { PREVIEWS } from "./identity.ts";
import { recordFormat } from "./format.ts";
import type { ClientRow, SessionRow, SnapshotScope } from "./snapshot.ts";

type Spec<T> = { readonly [K in keyof T]: string };

const SERVER: Spec<{ socketPath: 0; pid: 0; startTime: 0; version: 0; attaches: 0 }> = {
  socketPath: "#{socket_path}",
  pid: "#{pid}",
  startTime: "#{start_time}",
  version: "#{version}",
  // Each session's last attach (any read scope: see ServerFacts.lastAttached).
  attaches: "#{S:#{session_last_attached} }",
};

/** A session's fields, as `list-sessions` formats them. */
export const SESSION: Spec<Record<keyof SessionRow, 0>> = {
  id: "#{session_id}",
  name: "#{session_name}",
  windows: "#{session_windows}",
  attached: "#{session_attached}",
  created: "#{session_created}",
  lastAttached: "#{session_last_attached}",
  activity: "#{session_activity}",
  group: "#{session_group}",
  path: "#{session_path}",
};

/** A window's fields, with one placement's session and index (a row per placement). */
export const WINDOW = {
  id: "#{window_id}",
  name: "#{window_name}",
  layout: "#{window_layout}",
  visibleLayout: "#{window_visible_layout}",
  zoomed: "#{window_zoomed_flag}",
  panes: "#{window_panes}",
  width: "#{window_width}",
  height: "#{window_height}",
  activity: "#{window_activity}",
  sessionId: "#{session_id}",
  sessionName: "#{session_name}",
  index: "#{window_index}",
  active: "#{window_active}",
} as const;

/** Every field of a pane, with where its window sits on the same row. */
export const PANE = {
  id: "#{pane_id}",
  windowId: "#{window_id}",
  windowName: "#{window_name}",
  index: "#{pane_index}",
  active: "#{pane_active}",
  command: "#{pane_current_command}",
  cwd: "#{pane_current_path}",
  title: "#{pane_title}",
  dead: "#{pane_dead}",
  deadStatus: "#{pane_dead_status}",
  width: "#{pane_width}",
  height: "#{pane_height}",
  left: "#{pane_left}",
  top: "#{pane_top}",
  right: "#{pane_right}",
  bottom: "#{pane_bottom}",
  atLeft: "#{pane_at_left}",
  atRight: "#{pane_at_right}",
  atTop: "#{pane_at_top}",
  atBottom: "#{pane_at_bottom}",
  pid: "#{pane_pid}",
  tty: "#{pane_tty}",
  inMode: "#{pane_in_mode}",
  mode: "#{pane_mode}",
  inputOff: "#{pane_input_off}",
  alternateScreen: "#{alternate_on}",
  cursorX: "#{cursor_x}",
  cursorY: "#{cursor_y}",
  historySize: "#{history_size}",
  historyLimit: "#{history_limit}",
  scrollPosition: "#{scroll_position}",
  synchronized: "#{pane_synchronized}",
  piped: "#{pane_pipe}",
  startCommand: "#{pane_start_command}",
  sessionId: "#{session_id}",
  sessionName: "#{session_name}",
  windowIndex: "#{window_index}",
  windowActive: "#{window_active}",
  windowZoomed: "#{window_zoomed_flag}",
  placementCount: "#{window_linked_sessions}",
} as const;

/**
 * For a client: 1 when a pane it shows previews others ({@link ClientRow.previewing}), else 0.
 * A loop over panes with one branch takes every pane (`#{P:,x}` would take the active one only);
 * in list-clients the loops run over the client's current window and its session's windows.
 */
const PREVIEWING = (() => {
  const mark = `#{?${PREVIEWS},1,}`;
  const wholeSession = "#{&&:#{client_control_mode},#{!=:#{client_tty},}}";
  return `#{?#{?${wholeSession},#{W:#{P:${mark}}},#{P:${mark}}},1,0}`;
})();

/** A client's fields, as `list-clients` formats them. */
export const CLIENT: Spec<Record<keyof ClientRow, 0>> = {
  name: "#{client_name}",
  tty: "#{client_tty}",
  pid: "#{client_pid}",
  controlMode: "#{client_control_mode}",
  readonly: "#{client_readonly}",
  ownActivePane: "#{m:*active-pane*,#{client_flags}}",
  width: "#{client_width}",
  height: "#{client_height}",
  termName: "#{client_termname}",
  sessionId: "#{session_id}",
  sessionName: "#{session_name}",
  windowId: "#{window_id}",
  paneId: "#{pane_id}",
  zoomed: "#{window_zoomed_flag}",
  paneMode: "#{pane_mode}",
  previewing: PREVIEWING,
  activity: "#{client_activity}",
};

/** A parsed record: field name → raw decoded string. */
export type Raw<S> = { [K in keyof S]: string };

/**
 * How a record kind travels. Fields whose values tmux prints from a fixed alphabet (ids such
 * as `%3`, numbers, flags, or nothing) go together in ONE framed field, separated by spaces;
 * every other field (names, paths, commands: any bytes at all) is framed on its own. Framing
 * every field cost tmux ~18 bytes per field per pane: a third of list_panes' time at 100 panes.
 */
interface Layout<S extends Record<string, string>> {
  /** The field expressions of the record, in order. */
  readonly formats: string[];
  /** Fields per record. */
  readonly count: number;
  /** The named raw values of one record's fields; throws on anything unexpected. */
  read(values: string[]): Raw<S>;
}

/**
 * What a packed field may hold: ids (`%3`, `@1`, `$0`), numbers, nothing, spaces between. One
 * test per record (each value on its own cost 3 ms per call at 1 000 panes).
 */
const PACKED_FIELD = /^(?:[%@$]?-?\d*)(?: [%@$]?-?\d*)*$/;

function layout<S extends Record<string, string>>(
  spec: S,
  packed: readonly (keyof S & string)[],
): Layout<S> {
  const text = (Object.keys(spec) as (keyof S & string)[]).filter((k) => !packed.includes(k));
  return {
    formats: [...text.map((k) => spec[k]), packed.map((k) => spec[k]).join(" ")],
    count: text.length + 1,
    read(values) {
      const out: Record<string, string> = {};
      text.forEach((k, i) => out[k] = values[i]);
      const field = values[text.length];
      const numbers = field.split(" ");
      if (numbers.length !== packed.length || !PACKED_FIELD.test(field)) {
        throw new Error(`unexpected packed tmux values: ${JSON.stringify(values[text.length])}`);
      }
      packed.forEach((k, i) => out[k] = numbers[i]);
      return out as Raw<S>;
    },
  };
}

/** The server's record: socket path and version framed, the pid and start time packed. */
export const SERVER_LAYOUT = layout(SERVER, ["pid", "startTime"]);
/** A session's record: name, group and path framed, the numbers packed. */
export const SESSION_LAYOUT = layout(SESSION, [
  "id",
  "windows",
  "attached",
  "created",
  "lastAttached",
  "activity",
]);
/** A window's record, one per placement. */
export const WINDOW_LAYOUT = layout(WINDOW, [
  "id",
  "zoomed",
  "panes",
  "width",
  "height",
  "activity",
  "sessionId",
  "index",
  "active",
]);
const PANE_PACKED: readonly (keyof typeof PANE)[] = [
  "id",
  "windowId",
  "index",
  "active",
  "dead",
  "deadStatus",
  "width",
  "height",
  "left",
  "top",
  "right",
  "bottom",
  "atLeft",
  "atRight",
  "atTop",
  "atBottom",
  "pid",
  "inMode",
  "inputOff",
  "alternateScreen",
  "cursorX",
  "cursorY",
  "historySize",
  "historyLimit",
  "scrollPosition",
  "synchronized",
  "piped",
  "sessionId",
  "windowIndex",
  "windowActive",
  "windowZoomed",
  "placementCount",
];
/** A pane's whole record, with where its window sits. */
export const PANE_LAYOUT = layout(PANE, PANE_PACKED);
/** The same record with the current command and directory left out (empty). */
const PANE_LAYOUT_LIGHT = layout({ ...PANE, command: "", cwd: "" }, PANE_PACKED);
/** What a pane's row says of where its window sits: in a read of every window, their rows say it. */
const WINDOW_SIDE = [
  "windowName",
  "sessionId",
  "sessionName",
  "windowIndex",
  "windowActive",
  "windowZoomed",
  "placementCount",
] as const;
type WindowSide = typeof WINDOW_SIDE[number];
const ownField = (key: string) => !(WINDOW_SIDE as readonly string[]).includes(key);
/** A pane's own fields, all of them: its places and its window's zoom come from the windows' rows. */
export const PANE_OWN_FULL = Object.fromEntries(
  Object.entries(PANE).filter(([k]) => ownField(k)),
) as Omit<typeof PANE, WindowSide>;
const PANE_OWN_FULL_PACKED = PANE_PACKED.filter(ownField) as (keyof typeof PANE_OWN_FULL)[];
/** A pane's whole record without where its window sits (the windows' rows say it). */
export const PANE_OWN_FULL_LAYOUT = layout(PANE_OWN_FULL, PANE_OWN_FULL_PACKED);
const PANE_OWN_FULL_LAYOUT_LIGHT = layout(
  { ...PANE_OWN_FULL, command: "", cwd: "" },
  PANE_OWN_FULL_PACKED,
);

/**
 * A brief pane's own fields, for a read of every pane: where its window sits (name, sessions,
 * indexes) comes from one row per window and session read in the same chain, not from every
 * pane's row. Each field tmux formats costs it about 1.3 µs per pane: the six left out here are
 * ~0.8 ms of a whole read at 100 panes, ~8 at 1 000, where listing the windows costs a fraction.
 */
export const PANE_OWN = {
  id: PANE.id,
  windowId: PANE.windowId,
  index: PANE.index,
  active: PANE.active,
  command: PANE.command,
  cwd: PANE.cwd,
  title: PANE.title,
  dead: PANE.dead,
  width: PANE.width,
  height: PANE.height,
  pid: PANE.pid,
} as const;
const PANE_OWN_PACKED: readonly (keyof typeof PANE_OWN)[] = [
  "id",
  "windowId",
  "index",
  "active",
  "dead",
  "width",
  "height",
  "pid",
];
/** A brief pane's own record, for a read of every pane. */
export const PANE_OWN_LAYOUT = layout(PANE_OWN, PANE_OWN_PACKED);
const PANE_OWN_LAYOUT_LIGHT = layout({ ...PANE_OWN, command: "", cwd: "" }, PANE_OWN_PACKED);
/** The same, with where its window sits on the pane's own row: for a read of some panes. */
export const PANE_BRIEF = {
  ...PANE_OWN,
  windowName: PANE.windowName,
  sessionId: PANE.sessionId,
  sessionName: PANE.sessionName,
  windowIndex: PANE.windowIndex,
  windowActive: PANE.windowActive,
  placementCount: PANE.placementCount,
} as const;
const PANE_BRIEF_PACKED: readonly (keyof typeof PANE_BRIEF)[] = [
  ...PANE_OWN_PACKED,
  "sessionId",
  "windowIndex",
  "windowActive",
  "placementCount",
];
/** A brief pane's record with where its window sits, for a read of some panes. */
export const PANE_BRIEF_LAYOUT = layout(PANE_BRIEF, PANE_BRIEF_PACKED);
const PANE_BRIEF_LAYOUT_LIGHT = layout({ ...PANE_BRIEF, command: "", cwd: "" }, PANE_BRIEF_PACKED);
/** One window in one session: what {@link PANE_OWN} rows take their placements from. */
const WINDOW_PLACE = {
  id: WINDOW.id,
  name: WINDOW.name,
  sessionId: WINDOW.sessionId,
  sessionName: WINDOW.sessionName,
  index: WINDOW.index,
  active: WINDOW.active,
  placementCount: PANE.placementCount,
} as const;
/** One window's place in one session, for rows that take their places from it. */
export const WINDOW_PLACE_LAYOUT = layout(WINDOW_PLACE, [
  "id",
  "sessionId",
  "index",
  "active",
  "placementCount",
]);
/** Where a pane is, and nothing else: {@link takePanePlaces} (its places: its window's). */
const PANE_PLACE = {
  id: PANE.id,
  windowId: PANE.windowId,
  width: PANE.width,
  height: PANE.height,
} as const;
/** Where a pane is, for a read of every pane's place. */
export const PANE_PLACE_LAYOUT = layout(PANE_PLACE, ["id", "windowId", "width", "height"]);
/** A client's record. */
export const CLIENT_LAYOUT = layout(CLIENT, [
  "pid",
  "controlMode",
  "readonly",
  "ownActivePane",
  "width",
  "height",
  "sessionId",
  "windowId",
  "paneId",
  "zoomed",
  "previewing",
  "activity",
]);

/**
 * The argv of the chained command that reads everything. `list-clients` goes last: with no
 * sessions it fails with "no current target" after the rest has printed.
 *
 * One pane, one window or one session is read `targeted`: `list-panes -t` lists that window's
 * panes alone (`-s`: that session's), where `list-panes -a` makes tmux set up every pane of the
 * server to test it against a filter (~2.5 ms at 1 000 panes; and for a session, look up every
 * pane's process). It reports a window in one session only, so a read that finds a window in
 * several (linked, or a session group) is made again untargeted, and so is one whose target
 * tmux cannot find (it would stop the chain there). Untargeted, a session's panes are all panes.
 */
export function snapshotArgs(
  guard: string,
  scope: Required<SnapshotScope>,
  targeted: boolean,
): string[] {
  const fmt = (kind: string, layout: { formats: string[] }) =>
    recordFormat(guard, [kind, ...layout.formats]);
  // The ids are checked to be %N and @N, so they cannot carry a format into a filter.
  const isPane = `#{==:#{pane_id},${scope.paneId}}`;
  const inWindow = `#{==:#{window_id},${scope.windowId}}`;
  const args = ["display-message", "-p", fmt("V", SERVER_LAYOUT)];
  if (scope.sessions) args.push(";", "list-sessions", "-F", fmt("S", SESSION_LAYOUT));
  if (scope.windows) {
    // One window's panes: that window's row, with every placement, is all that is listed.
    const filter = scope.windowId ? ["-f", inWindow] : [];
    args.push(";", "list-windows", "-a", ...filter, "-F", fmt("W", WINDOW_LAYOUT));
  }
  if (scope.panes) {
    const tests = [...(scope.paneId ? [isPane] : []), ...(scope.windowId ? [inWindow] : [])];
    const filter = tests.length === 0
      ? []
      : ["-f", tests.length === 1 ? tests[0] : `#{&&:${tests[0]},${tests[1]}}`];
    // Every pane, or a session's: where their windows sit comes from one row per window and
    // session (the windows' own rows when they are read: every window's; else rows of places
    // alone), and each pane's row carries its own fields.
    const joined = tests.length === 0 && (scope.brief || scope.windows);
    if (joined && !scope.windows) {
      const windows = targeted ? ["-t", scope.sessionId] : ["-a"];
      args.push(";", "list-windows", ...windows, "-F", fmt("N", WINDOW_PLACE_LAYOUT));
    }
    const light = !scope.processInfo;
    const [kind, layout] = scope.brief
      ? joined
        ? ["b", light ? PANE_OWN_LAYOUT_LIGHT : PANE_OWN_LAYOUT]
        : ["B", light ? PANE_BRIEF_LAYOUT_LIGHT : PANE_BRIEF_LAYOUT]
      : joined
      ? ["p", light ? PANE_OWN_FULL_LAYOUT_LIGHT : PANE_OWN_FULL_LAYOUT]
      : ["P", light ? PANE_LAYOUT_LIGHT : PANE_LAYOUT];
    const which = !targeted
      ? ["-a", ...filter]
      : tests.length > 0
      ? ["-t", scope.paneId || scope.windowId, ...(scope.paneId ? filter : [])]
      : ["-s", "-t", scope.sessionId];
    args.push(";", "list-panes", ...which, "-F", fmt(kind, layout));
  }
  args.push(";", "list-clients", "-F", fmt("C", CLIENT_LAYOUT));
  return args;
}
