/**
 * One atomic read of a tmux server: server facts, sessions, windows, panes and clients from a
 * single tmux invocation (one client, one command queue, one instant), so a result never mixes
 * two moments. Linked windows are listed once with every placement.
 *
 * @module
 */

import { execFast } from "./control.ts";
import { PREVIEWS } from "./identity.ts";
import { chainArgv, flag, int, newGuard, parseRecords, recordFormat } from "./format.ts";
import {
  classifyStderr,
  failureOf,
  type RunOptions,
  type ServerAddress,
  TmuxError,
  type TmuxRunner,
} from "./run.ts";

/** Facts about the server process itself. */
export interface ServerFacts {
  /** The resolved socket path, comparable with the first part of `TMUX`. */
  readonly socketPath: string;
  readonly pid: number;
  readonly version: string;
}

/** A session. */
export interface SessionRow {
  readonly id: string;
  readonly name: string;
  readonly windows: number;
  /** How many clients are attached (control-mode clients included, as tmux counts them). */
  readonly attached: number;
  /** Creation time, seconds since the epoch. */
  readonly created: number;
  readonly lastAttached: number;
  readonly activity: number;
  /** The session group, or "" when ungrouped. */
  readonly group: string;
  readonly path: string;
}

/** One place a window is linked: a session and the window's index there. */
export interface Placement {
  readonly sessionId: string;
  readonly sessionName: string;
  readonly index: number;
  /** Whether the window is the current one of that session. */
  readonly active: boolean;
}

/** A window, once, with every session it is linked into. */
export interface WindowRow {
  readonly id: string;
  readonly name: string;
  readonly layout: string;
  readonly visibleLayout: string;
  readonly zoomed: boolean;
  readonly panes: number;
  readonly width: number;
  readonly height: number;
  readonly activity: number;
  readonly placements: Placement[];
}

/** A pane, once, with the placements of its window. */
export interface PaneRow {
  readonly id: string;
  readonly windowId: string;
  readonly windowName: string;
  readonly index: number;
  readonly active: boolean;
  /** What runs in the pane now (empty in a snapshot taken without `processInfo`). */
  readonly command: string;
  /** Its directory (empty in a snapshot taken without `processInfo`). */
  readonly cwd: string;
  readonly title: string;
  readonly dead: boolean;
  /** The exit status of a dead pane's process, or null. */
  readonly deadStatus: number | null;
  readonly width: number;
  readonly height: number;
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
  readonly atLeft: boolean;
  readonly atRight: boolean;
  readonly atTop: boolean;
  readonly atBottom: boolean;
  readonly pid: number;
  readonly tty: string;
  /**
   * In any mode: `pane_in_mode` counts them, and tmux stacks one on another (a command's
   * output in view-mode over copy mode makes 2).
   */
  readonly inMode: boolean;
  /** The mode's name (`copy-mode`, `view-mode`, `tree-mode`...), or "". */
  readonly mode: string;
  /**
   * Input turned off (`select-pane -d`, a person's choice): tmux drops every key and paste
   * sent to the pane, and copies none from a synchronized sibling to it.
   */
  readonly inputOff: boolean;
  readonly alternateScreen: boolean;
  readonly cursorX: number;
  readonly cursorY: number;
  readonly historySize: number;
  readonly historyLimit: number;
  /** Lines scrolled back in copy mode, or null when not scrolled. */
  readonly scrollPosition: number | null;
  readonly synchronized: boolean;
  readonly piped: boolean;
  readonly startCommand: string;
  /** Whether its window is zoomed (onto whichever pane is active). */
  readonly windowZoomed: boolean;
  readonly placements: Placement[];
}

/** An attached client. */
export interface ClientRow {
  readonly name: string;
  readonly tty: string;
  readonly pid: number;
  /** A control-mode client is a program, not a person. */
  readonly controlMode: boolean;
  readonly readonly: boolean;
  readonly width: number;
  readonly height: number;
  readonly termName: string;
  readonly sessionId: string;
  readonly sessionName: string;
  /** The window the client shows. */
  readonly windowId: string;
  /** The active pane of that window. */
  readonly paneId: string;
  readonly zoomed: boolean;
  /** The mode of the client's active pane ("" for none). */
  readonly paneMode: string;
  /**
   * Whether a pane the client shows is in a mode that previews other panes (choose-tree,
   * choose-client: see identity.ts `PREVIEWS`): any pane of its window, the active one or not (a
   * person who opened the tree and moved to the pane beside it still sees it); for a control
   * client on a terminal (tmux -CC, which shows every window of its session), any pane of its
   * session.
   */
  readonly previewing: boolean;
  readonly activity: number;
}

/** Everything one invocation read. */
/**
 * What a listing of panes needs, and all a brief snapshot reads of each pane: tmux formats
 * every field for every pane, so at 1 000 panes the 21 fields left out here cost it ~30 ms.
 */
export type PaneBrief = Pick<
  PaneRow,
  | "id"
  | "windowId"
  | "windowName"
  | "index"
  | "active"
  | "command"
  | "cwd"
  | "title"
  | "dead"
  | "width"
  | "height"
  | "pid"
  | "placements"
>;

/** One read of the server; `P` is what was read of each pane (all of it by default). */
export interface Snapshot<P extends PaneBrief = PaneRow> {
  /** False when no server answers on the socket: every list is then empty. */
  readonly running: boolean;
  readonly server: ServerFacts | null;
  readonly sessions: SessionRow[];
  readonly windows: WindowRow[];
  readonly panes: P[];
  readonly clients: ClientRow[];
  /** What was read; a list left out by the scope is empty, not "none exist". */
  readonly scope: Required<SnapshotScope>;
}

/**
 * What a snapshot reads. Server facts and clients are always read (they decide who calls and
 * who watches); the rest only when asked, so a tool pays for what it uses.
 */
export interface SnapshotScope {
  /** Read sessions (default true). */
  readonly sessions?: boolean;
  /** Read windows (default true). */
  readonly windows?: boolean;
  /** Read panes (default true). */
  readonly panes?: boolean;
  /** Read only this pane (`%N`), not every pane; "" reads all. */
  readonly paneId?: string;
  /**
   * Read only this window (`@N`) and its panes, each with every placement; "" reads all. tmux
   * skips the other panes before it looks up anything of theirs (their process above all).
   */
  readonly windowId?: string;
  /**
   * Read only the panes of this session's windows (`$N`), each with every placement; "" reads
   * all. When one of its windows is also in another session, every pane is read (a superset:
   * filter by placement).
   */
  readonly sessionId?: string;
  /**
   * Read each pane's current command and directory (default true). tmux asks the system for
   * both on every read, pane by pane: the costliest fields by far (about 1.5 ms per 100 panes
   * here). Without them, `command` and `cwd` are empty strings.
   */
  readonly processInfo?: boolean;
  /** Read only each pane's {@link PaneBrief} fields (see {@link takeBriefSnapshot}). */
  readonly brief?: boolean;
}

/** The scope that reads everything: what a snapshot holds unless a tool asks for less. */
export const FULL_SCOPE: Required<SnapshotScope> = {
  sessions: true,
  windows: true,
  panes: true,
  paneId: "",
  windowId: "",
  sessionId: "",
  processInfo: true,
  brief: false,
};

/** Server facts and clients only: whether a server runs, who is attached. */
export const SERVER_ONLY: SnapshotScope = { sessions: false, windows: false, panes: false };
/** The sessions, no windows or panes. */
export const SESSIONS_ONLY: SnapshotScope = { windows: false, panes: false };
/** The windows (each with its placements), no sessions or panes. */
export const WINDOWS_ONLY: SnapshotScope = { sessions: false, panes: false };
/** Sessions and windows, no panes. */
export const NO_PANES: SnapshotScope = { panes: false };
/**
 * Everything but what runs in each pane and where (the costliest fields), for a tool whose
 * guards and report use neither: moves and kills.
 */
export const NO_PROCESS_INFO: SnapshotScope = { processInfo: false };

type Spec<T> = { readonly [K in keyof T]: string };

const SERVER: Spec<{ socketPath: 0; pid: 0; version: 0 }> = {
  socketPath: "#{socket_path}",
  pid: "#{pid}",
  version: "#{version}",
};

const SESSION: Spec<Record<keyof SessionRow, 0>> = {
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

const WINDOW = {
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

const PANE = {
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

const CLIENT: Spec<Record<keyof ClientRow, 0>> = {
  name: "#{client_name}",
  tty: "#{client_tty}",
  pid: "#{client_pid}",
  controlMode: "#{client_control_mode}",
  readonly: "#{client_readonly}",
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
type Raw<S> = { [K in keyof S]: string };

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

const SERVER_LAYOUT = layout(SERVER, ["pid"]);
const SESSION_LAYOUT = layout(SESSION, [
  "id",
  "windows",
  "attached",
  "created",
  "lastAttached",
  "activity",
]);
const WINDOW_LAYOUT = layout(WINDOW, [
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
const PANE_LAYOUT = layout(PANE, PANE_PACKED);
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
const PANE_OWN_FULL = Object.fromEntries(
  Object.entries(PANE).filter(([k]) => ownField(k)),
) as Omit<typeof PANE, WindowSide>;
const PANE_OWN_FULL_PACKED = PANE_PACKED.filter(ownField) as (keyof typeof PANE_OWN_FULL)[];
const PANE_OWN_FULL_LAYOUT = layout(PANE_OWN_FULL, PANE_OWN_FULL_PACKED);
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
const PANE_OWN = {
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
const PANE_OWN_LAYOUT = layout(PANE_OWN, PANE_OWN_PACKED);
const PANE_OWN_LAYOUT_LIGHT = layout({ ...PANE_OWN, command: "", cwd: "" }, PANE_OWN_PACKED);
/** The same, with where its window sits on the pane's own row: for a read of some panes. */
const PANE_BRIEF = {
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
const PANE_BRIEF_LAYOUT = layout(PANE_BRIEF, PANE_BRIEF_PACKED);
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
const WINDOW_PLACE_LAYOUT = layout(WINDOW_PLACE, [
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
const PANE_PLACE_LAYOUT = layout(PANE_PLACE, ["id", "windowId", "width", "height"]);
const CLIENT_LAYOUT = layout(CLIENT, [
  "pid",
  "controlMode",
  "readonly",
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
function snapshotArgs(
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

/** An empty snapshot for a socket no server listens on. */
export const NO_SERVER: Snapshot = Object.freeze({
  running: false,
  scope: FULL_SCOPE,
  server: null,
  sessions: [],
  windows: [],
  panes: [],
  clients: [],
});

/**
 * Reads the whole server in one tmux invocation. A missing server is not an error here: it
 * is a snapshot with `running: false`, and each tool decides what that means for it.
 */
export async function takeSnapshot(
  runner: TmuxRunner,
  address: ServerAddress,
  options: RunOptions = {},
  scope: SnapshotScope = {},
): Promise<Snapshot> {
  return await readSnapshot(runner, address, options, { ...scope, brief: false }) as Snapshot;
}

/**
 * {@link takeSnapshot} reading only each pane's {@link PaneBrief} fields: for listings, where
 * tmux formatting every field of every pane is most of the cost.
 */
export async function takeBriefSnapshot(
  runner: TmuxRunner,
  address: ServerAddress,
  options: RunOptions = {},
  scope: Omit<SnapshotScope, "brief"> = {},
): Promise<Snapshot<PaneBrief>> {
  return await readSnapshot(runner, address, options, { ...scope, brief: true });
}

/** A pane's id, its window, its size, and every session and index showing that window. */
export interface PanePlace {
  readonly id: string;
  readonly windowId: string;
  readonly width: number;
  readonly height: number;
  readonly placements: Placement[];
}

/**
 * Every pane's {@link PanePlace}, in one `list-panes`: for a caller that reads the panes
 * themselves next (search: the size says how much a read may print), where listing anything
 * more of each pane is time spent for nothing. `running` is false when no server answers on the socket.
 */
export async function takePanePlaces(
  runner: TmuxRunner,
  address: ServerAddress,
  options: RunOptions = {},
): Promise<{ running: boolean; panes: PanePlace[] }> {
  const guard = newGuard();
  const args = [
    ...["list-windows", "-a", "-F", recordFormat(guard, ["N", ...WINDOW_PLACE_LAYOUT.formats])],
    ...[";", "list-panes", "-a", "-F", recordFormat(guard, ["L", ...PANE_PLACE_LAYOUT.formats])],
  ];
  const result = await execFast(runner, address, args, options);
  if (result.code !== 0) {
    const failure = failureOf(result);
    if (failure.kind === "no-server") return { running: false, panes: [] };
    throw failure;
  }
  const places = new Map<string, WindowPlaces>();
  const panes = new Map<string, PanePlace>();
  for (const record of parseRecords(result.stdout, guard)) {
    const [kind, ...values] = record;
    if (kind === "N" && values.length === WINDOW_PLACE_LAYOUT.count) {
      addWindowPlace(places, values);
      continue;
    }
    if (kind !== "L" || values.length !== PANE_PLACE_LAYOUT.count) {
      throw new Error(`unexpected tmux record of kind ${kind} with ${values.length} fields`);
    }
    const r = PANE_PLACE_LAYOUT.read(values);
    if (panes.has(r.id)) continue;
    panes.set(r.id, {
      id: r.id,
      windowId: r.windowId,
      width: int(r.width),
      height: int(r.height),
      placements: [...placesOf(places, r).placements],
    });
  }
  return { running: true, panes: [...panes.values()] };
}

/** What tmux reports a pane's terminal is running: its program and that program's directory. */
export interface PaneProcess {
  readonly command: string;
  readonly cwd: string;
}

/**
 * The current command and directory of every pane of these sessions (`$N`), by pane id, in one
 * chain: for a listing that needs them for some panes only (tmux asks the system for both, pane
 * by pane: the costliest fields). Null when tmux could not list one of the sessions (it ended
 * meanwhile): the caller reads again whole.
 */
export async function takeProcessInfo(
  runner: TmuxRunner,
  address: ServerAddress,
  sessionIds: readonly string[],
  options: RunOptions = {},
): Promise<Map<string, PaneProcess> | null> {
  const info = new Map<string, PaneProcess>();
  if (sessionIds.length === 0) return info;
  for (const id of sessionIds) {
    if (!/^\$\d+$/.test(id)) throw new Error(`not a session id: ${id}`);
  }
  const guard = newGuard();
  const format = recordFormat(guard, [PANE.id, PANE.command, PANE.cwd]);
  const args = chainArgv(sessionIds.map((id) => ["list-panes", "-s", "-t", id, "-F", format]));
  const result = await execFast(runner, address, args, options);
  if (result.code !== 0) {
    const failure = failureOf(result);
    if (failure.kind === "no-target") return null;
    throw failure;
  }
  for (const [paneId, command, cwd] of parseRecords(result.stdout, guard, 3)) {
    if (!/^%\d+$/.test(paneId)) throw new Error(`unexpected pane id from tmux: ${paneId}`);
    info.set(paneId, { command, cwd });
  }
  return info;
}

async function readSnapshot(
  runner: TmuxRunner,
  address: ServerAddress,
  options: RunOptions,
  scope: SnapshotScope,
): Promise<Snapshot<PaneBrief>> {
  const full = { ...FULL_SCOPE, ...scope };
  if (full.paneId !== "" && !/^%\d+$/.test(full.paneId)) {
    throw new Error(`not a pane id: ${full.paneId}`);
  }
  if (full.windowId !== "" && !/^@\d+$/.test(full.windowId)) {
    throw new Error(`not a window id: ${full.windowId}`);
  }
  if (full.sessionId !== "" && !/^\$\d+$/.test(full.sessionId)) {
    throw new Error(`not a session id: ${full.sessionId}`);
  }
  const targeted = full.panes &&
    (full.paneId !== "" || full.windowId !== "" || full.sessionId !== "");
  if (targeted) {
    const read = await readOnce(runner, address, options, full, true);
    if (read !== null && !read.placedElsewhere) return read.snapshot;
  }
  // Untargeted, a read is never null: a missing target is not tmux's error then.
  return (await readOnce(runner, address, options, full, false))!.snapshot;
}

/**
 * One read, and whether a pane read has its window in more than one session; null when a
 * targeted read's target does not exist (tmux stopped the chain there).
 */
async function readOnce(
  runner: TmuxRunner,
  address: ServerAddress,
  options: RunOptions,
  scope: Required<SnapshotScope>,
  targeted: boolean,
): Promise<{ snapshot: Snapshot<PaneBrief>; placedElsewhere: boolean } | null> {
  const guard = newGuard();
  // Over the control-mode connection when there is one (a fraction of a millisecond instead
  // of starting a tmux process), by spawning otherwise: the same bytes either way.
  const result = await execFast(runner, address, snapshotArgs(guard, scope, targeted), options);
  const stderr = result.stderr.trim();
  // With no sessions, list-clients fails with "no current target" after the rest printed.
  if (result.code !== 0 && !/^no current target/m.test(stderr)) {
    const kind = classifyStderr(stderr);
    if (kind === "no-server") return { snapshot: NO_SERVER, placedElsewhere: false };
    if (targeted && /^can't find (pane|window|session)/m.test(stderr)) return null;
    throw new TmuxError(
      kind,
      stderr.split("\n")[0] || `tmux exited with status ${result.code}`,
      stderr,
    );
  }
  const { placedElsewhere, ...parsed } = parseSnapshot(result.stdout, guard);
  // The server's own record comes first and never fails: without it, tmux answered nothing at
  // all (a server refusing this user does that with status 0), which is no empty server.
  if (parsed.server === null) {
    throw new TmuxError(
      "failed",
      stderr.split("\n")[0] || "tmux printed no server state (status 0, nothing on stderr)",
      stderr,
    );
  }
  return { snapshot: { ...parsed, scope }, placedElsewhere };
}

/** Parses the chained output. Exported for tests. */
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
        server = { socketPath: r.socketPath, pid: int(r.pid), version: r.version };
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
function addWindowPlace(places: Map<string, WindowPlaces>, values: string[]): number {
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
function placesOf<W extends WindowPlaces>(
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
interface WindowPlaces {
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
