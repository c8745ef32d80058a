/**
 * Who is calling, and who is watching.
 *
 * The caller's pane is the pane this process runs in: the agent must never type into it or
 * kill it. The attended panes are the ones a person can see right now. Both are read from a
 * {@link Snapshot}, never guessed: a fact tmux or the process table does not give is "unknown".
 *
 * @module
 */

import type { ClientRow, PaneBrief, PaneRow, SessionRow, Snapshot } from "./snapshot.ts";

/**
 * A tmux condition (format) that holds for a pane in a mode that previews other panes:
 * choose-tree and find-window (`tree-mode`: any pane of the server, as the person moves through
 * the tree) and choose-client (`client-mode`: the screen of the client selected, a program's
 * control client too, which may show any session). Fixed text: nothing of anyone's reaches it.
 */
export const PREVIEWS = "#{||:#{==:#{pane_mode},tree-mode},#{==:#{pane_mode},client-mode}}";

/** What the process was told about its place in tmux, read once at start. */
export interface CallerEnv {
  /** `TMUX`: `socket_path,server_pid,session_number`. */
  readonly tmux?: string;
  /** `TMUX_PANE`: `%N`. */
  readonly tmuxPane?: string;
  /** This process's parent pid: when it is a pane's own process, we run in that pane. */
  readonly ppid?: number;
}

/** The result of looking for the caller's pane on one server. */
export interface CallerPane {
  /** The pane id, or null when the caller is not (or not provably) in a pane of this server. */
  readonly paneId: string | null;
  /** How it was found: `TMUX_PANE` checked against `TMUX`, or the parent process being a pane's. */
  readonly via: "TMUX_PANE" | "parent-process" | null;
  /** One sentence for a person or a model. */
  readonly reason: string;
}

/** Parses `TMUX` into its socket path and server pid; null when absent or malformed. */
export function parseTmuxEnv(
  value: string | undefined,
): { socketPath: string; pid: number } | null {
  if (!value) return null;
  // The socket path may itself contain commas: the last two fields are the numbers.
  const parts = value.split(",");
  if (parts.length < 3) return null;
  const pid = Number(parts[parts.length - 2]);
  const socketPath = parts.slice(0, -2).join(",");
  if (!socketPath || !Number.isInteger(pid)) return null;
  return { socketPath, pid };
}

/**
 * Finds the caller's pane on the server a snapshot was taken of. `TMUX_PANE` counts only when
 * `TMUX` names this very server (same socket path and same server pid: a server restarted on
 * the same socket reuses pane ids for other panes). Without them, the parent process being a
 * pane's own process (a client started directly in a pane) proves it too. Nothing else does.
 */
export function findCallerPane(snapshot: Snapshot<PaneBrief>, env: CallerEnv): CallerPane {
  if (!snapshot.running || !snapshot.server) {
    return { paneId: null, via: null, reason: "No tmux server is running on this socket." };
  }
  const tmux = parseTmuxEnv(env.tmux);
  if (tmux && env.tmuxPane) {
    const sameServer = tmux.socketPath === snapshot.server.socketPath &&
      tmux.pid === snapshot.server.pid;
    if (sameServer) {
      if (snapshot.panes.some((p) => p.id === env.tmuxPane)) {
        return {
          paneId: env.tmuxPane,
          via: "TMUX_PANE",
          reason:
            `This server runs in pane ${env.tmuxPane} (TMUX and TMUX_PANE name this tmux server).`,
        };
      }
      return {
        paneId: null,
        via: null,
        reason: `TMUX_PANE names ${env.tmuxPane}, which no longer exists on this tmux server.`,
      };
    }
  }
  if (env.ppid !== undefined && env.ppid > 1) {
    const parent = snapshot.panes.find((p) => p.pid === env.ppid);
    if (parent) {
      return {
        paneId: parent.id,
        via: "parent-process",
        reason:
          `This server's parent process (pid ${env.ppid}) is the process of pane ${parent.id}.`,
      };
    }
  }
  if (tmux) {
    return {
      paneId: null,
      via: null,
      reason: "TMUX names another tmux server (or a server since restarted): no caller pane here.",
    };
  }
  return {
    paneId: null,
    via: null,
    reason:
      "TMUX/TMUX_PANE are not set and the parent process is no pane's: the caller's pane is unknown, so none is marked.",
  };
}

/**
 * A tmux condition (format) that holds for the pane the caller may run in, by the same facts
 * as {@link findCallerPane} but taken more widely (the safe side): `TMUX_PANE` when `TMUX`
 * names this server, or a pane whose process is this process's parent. For the checks tmux
 * makes at the instant of an act, when panes the snapshot did not show may have moved in.
 * Null when neither fact is there. Only `%N` and a number reach the format.
 */
export function callerPaneFormat(snapshot: Snapshot<PaneBrief>, env: CallerEnv): string | null {
  if (!snapshot.running || !snapshot.server) return null;
  const tests: string[] = [];
  const tmux = parseTmuxEnv(env.tmux);
  if (
    tmux && env.tmuxPane && /^%\d+$/.test(env.tmuxPane) &&
    tmux.socketPath === snapshot.server.socketPath && tmux.pid === snapshot.server.pid
  ) {
    tests.push(`#{==:#{pane_id},${env.tmuxPane}}`);
  }
  if (env.ppid !== undefined && Number.isInteger(env.ppid) && env.ppid > 1) {
    tests.push(`#{==:#{pane_pid},${env.ppid}}`);
  }
  if (tests.length === 0) return null;
  return tests.length === 1 ? tests[0] : `#{||:${tests[0]},${tests[1]}}`;
}

/**
 * A tmux condition (format), expanded for the pane keys are sent to, that holds for each pane
 * of a pane loop (`#{P:...}`) tmux copies those keys to, the pane itself included: with
 * synchronize-panes on for `paneId`, tmux 3.3a copies a key (not a paste) to each other pane
 * of the window that has synchronize-panes on itself, is in no mode, is alive, has input on
 * and is visible (a zoomed window shows only its active pane). `paneId` must be `%N`.
 */
export function keyCopyFormat(paneId: string): string {
  if (!/^%\d+$/.test(paneId)) throw new RangeError(`not a pane id: ${paneId}`);
  const copied = "#{&&:#{pane_synchronized},#{&&:#{==:#{pane_in_mode},0}," +
    "#{&&:#{!=:#{pane_dead},1},#{&&:#{!=:#{pane_input_off},1}," +
    "#{||:#{!=:#{window_zoomed_flag},1},#{pane_active}}}}}}";
  return `#{||:#{==:#{pane_id},${paneId}},${copied}}`;
}

/**
 * The other panes of the snapshot that keys typed into `pane` would be copied to (see
 * {@link keyCopyFormat}).
 */
export function keyCopies(snapshot: Snapshot, pane: PaneRow): PaneRow[] {
  if (!pane.synchronized) return [];
  return snapshot.panes.filter((p) =>
    p.windowId === pane.windowId && p.id !== pane.id && p.synchronized && !p.inMode &&
    !p.dead && !p.inputOff && (!p.windowZoomed || p.active)
  );
}

/** Whether session `s` is `to` or one grouped with it: a group shares its windows. */
export function sharesWindows(s: SessionRow, to: SessionRow): boolean {
  return s.id === to.id || (to.group !== "" && s.group === to.group);
}

/**
 * The people's clients whose status line lists the windows of session `to`: attached to it, or
 * to a session grouped with it (see {@link sharesWindows}), each showing a window.
 */
export function peopleListing(snapshot: Snapshot<PaneBrief>, to: SessionRow): ClientRow[] {
  const sessions = new Set(snapshot.sessions.filter((s) => sharesWindows(s, to)).map((s) => s.id));
  return snapshot.clients.filter((c) =>
    isPerson(c) && c.windowId !== "" && sessions.has(c.sessionId)
  );
}

/**
 * Whether a client is a person's. A client not in control mode draws on a terminal; a control
 * client is a program's (this server's own among them: they talk to tmux over pipes), except
 * one that runs on a terminal: iTerm2's tmux integration (`tmux -CC attach` typed in a
 * terminal) draws what it reads there for the person at that terminal. tmux knows a client's
 * terminal as `client_tty` (empty over pipes, and over SSH without a terminal).
 */
export function isPerson(client: Pick<ClientRow, "controlMode" | "tty">): boolean {
  return !client.controlMode || client.tty !== "";
}

/**
 * The terminal name (`TERM`, which tmux shows as `client_termname`) every control client of
 * tmux-mcp gives tmux, so that one tmux-mcp process knows another's clients. Two MCP clients
 * (an editor and a terminal agent) each start tmux-mcp on the same tmux server, and the rules
 * that keep a control client out of a person's way ("leave once nobody else is here") must
 * not take the other process's clients for someone: each would keep the other attached for
 * ever.
 */
export const OWN_TERM = "tmux-mcp";

/**
 * Whether a client is tmux-mcp's, this process's or another's: a control client without a
 * terminal that named its terminal {@link OWN_TERM}. A client on a terminal is never one, even
 * one whose terminal is named so: it is a person's (see {@link isPerson}). Another program's
 * control client (its own `TERM`) is not one either, and counts as someone.
 */
export function isOwnKind(client: Pick<ClientRow, "controlMode" | "tty" | "termName">): boolean {
  return client.controlMode && client.tty === "" && client.termName === OWN_TERM;
}

/**
 * {@link isOwnKind} as a tmux format for list-clients: `1` or `0`, so nothing a client chose
 * (its terminal name) reaches the output.
 */
export const OWN_KIND_FORMAT = "#{?#{&&:#{client_control_mode},#{&&:#{==:#{client_tty},}," +
  `#{==:#{client_termname},${OWN_TERM}}}},1,0}`;

/**
 * Whether a client carries pane output, as a tmux format for list-clients: `1` for a control
 * client without `no-output` (it holds a place in the output of the panes it is shown), else
 * `0`.
 */
export const CARRIES_OUTPUT_FORMAT =
  "#{?#{m:*no-output*,#{client_flags}},0,#{client_control_mode}}";

/**
 * Whether a person's client shows every window of its session at once: a control client on a
 * terminal (iTerm2 opens each window of the session it attached as a tab or window of its own).
 */
export function showsWholeSession(client: ClientRow): boolean {
  return client.controlMode && client.tty !== "";
}

/**
 * How a refusal names a person's client: its terminal, and for one that shows every window of
 * its session (see {@link showsWholeSession}) that it does.
 */
export function clientLabel(client: ClientRow): string {
  const name = client.tty || client.name;
  return showsWholeSession(client)
    ? `${name} (tmux -CC: it shows every window of session ${client.sessionId})`
    : name;
}

/**
 * The panes a person can see right now, each with the clients showing it: for every client
 * of a person ({@link isPerson}), the panes of its current window, or only the active pane when
 * that window is zoomed (unless the client keeps an active pane of its own, `-f active-pane`:
 * its keys go there, hidden or not, and no format says which it is); for one that shows its whole session (iTerm2), every pane of every
 * window of that session. A client that shows a pane previewing others (choose-tree,
 * choose-client: see {@link PREVIEWS} and `ClientRow.previewing`) — the active pane or any
 * other of its window, any of its session's for one shown whole — shows panes from anywhere on
 * the server as the person moves through the list, so while it is open every pane counts as
 * watched by it.
 */
export function attendedPanes(snapshot: Snapshot<PaneBrief>): Map<string, ClientRow[]> {
  const byWindow = new Map<string, PaneBrief[]>();
  for (const pane of snapshot.panes) {
    const list = byWindow.get(pane.windowId);
    if (list) list.push(pane);
    else byWindow.set(pane.windowId, [pane]);
  }
  const seen = new Map<string, ClientRow[]>();
  for (const client of snapshot.clients) {
    if (!isPerson(client) || !client.windowId) continue;
    const panes = client.previewing
      ? snapshot.panes
      : showsWholeSession(client)
      ? snapshot.panes.filter((p) => p.placements.some((at) => at.sessionId === client.sessionId))
      : client.zoomed && !client.ownActivePane
      ? (byWindow.get(client.windowId) ?? []).filter((p) => p.id === client.paneId)
      : byWindow.get(client.windowId) ?? [];
    for (const pane of panes) {
      const list = seen.get(pane.id);
      if (list) list.push(client);
      else seen.set(pane.id, [client]);
    }
  }
  return seen;
}

/** The panes that receive what is typed into `pane`: its whole window when synchronized. */
export function inputCohort(snapshot: Snapshot, pane: PaneRow): PaneRow[] {
  if (!pane.synchronized) return [pane];
  return snapshot.panes.filter((p) => p.windowId === pane.windowId);
}
