/**
 * One atomic read of a tmux server: server facts, sessions, windows, panes and clients from a
 * single tmux invocation (one client, one command queue, one instant), so a result never mixes
 * two moments. Linked windows are listed once with every placement. Here: what a snapshot holds
 * (its rows and scopes) and taking one; what it asks tmux to print is in snapshot_format.ts, and
 * reading that back into rows in snapshot_parse.ts.
 *
 * @module
 */

import { execFast } from "./control.ts";
import { newGuard } from "./format.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import { classifyStderr, TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";
import type { ServerIdentity } from "./server_identity.ts";
import { snapshotArgs } from "./snapshot_format.ts";
import { parseSnapshot } from "./snapshot_parse.ts";

/** Facts about the server process itself: which server it is (server_identity.ts), and more. */
export interface ServerFacts extends ServerIdentity {
  /** The resolved socket path, comparable with the first part of `TMUX`. */
  readonly socketPath: string;
  readonly version: string;
  /**
   * The last second anything attached to any session (`session_last_attached`, seconds since
   * the epoch), read whatever else the snapshot reads: a session attached later was attached
   * after the read (src/mcp/unwatched.ts).
   */
  readonly lastAttached?: number;
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

/**
 * The session `ref` names among `sessions`: by id (`$N`) or exact name (never tmux's prefix
 * match). An id comes first, as in tmux; a name that looks like one (tmux takes
 * `new-session -s '$5'`) names its session when no session has that id. The server's tools and
 * the agent hook's guard look sessions up here alike, so that the guard judges the session the
 * server acts on.
 */
export function findSession<S extends { readonly id: string; readonly name: string }>(
  sessions: readonly S[],
  ref: string,
): S | undefined {
  return (/^\$\d+$/.test(ref) ? sessions.find((s) => s.id === ref) : undefined) ??
    sessions.find((s) => s.name === ref);
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
  /**
   * Attached with `-f active-pane` (tmux 3.3): the client keeps an active pane of its own,
   * where its keys go, which no format of tmux 3.3a names; `paneId` is the window's.
   */
  readonly ownActivePane: boolean;
  readonly width: number;
  readonly height: number;
  readonly termName: string;
  readonly sessionId: string;
  readonly sessionName: string;
  /** The window the client shows. */
  readonly windowId: string;
  /** The active pane of that window (not the client's own: see `ownActivePane`). */
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
