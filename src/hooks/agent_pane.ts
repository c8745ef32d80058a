/**
 * Where the agent runs: the pane in `TMUX_PANE` on the server whose socket `TMUX` names. The
 * hook never guesses: without `TMUX_PANE` it is outside tmux and marks nothing; with a
 * `TMUX_PANE` it cannot place, it says so. And which server tmux itself picks in the agent's
 * environment: the one the MCP server reaches when no server is named.
 *
 * @module
 */

import { parseTmuxEnv } from "../tmux/identity.ts";
import type { ServerAddress } from "../tmux/server_address.ts";
import { tmuxSocketPath } from "../tmux/which_server.ts";

/** The agent's pane and the server it lives on. */
export interface AgentPane {
  /** `-S <socket path from TMUX>`: the very server the agent runs in, whatever its name. */
  readonly address: ServerAddress;
  /** `TMUX_PANE`, e.g. `%3`. Always passed as `-t`: tmux does not default to it. */
  readonly paneId: string;
  /** `TMUX` as received, for the same-server check of `findCallerPane`. */
  readonly tmux: string;
  /**
   * The server pid in `TMUX`. A server restarted on the same socket has another pid and gives
   * pane ids out again from %0: an act on `paneId` first proves the pid is still this one.
   */
  readonly serverPid: number;
}

/** `TMUX_PANE` is set but the pane cannot be placed: one line saying why. */
export class AgentPaneError extends Error {
  /** An error with its one-line reason. */
  constructor(message: string) {
    super(message);
    this.name = "AgentPaneError";
  }
}

/**
 * Reads `TMUX` and `TMUX_PANE`. Returns null outside tmux: no `TMUX_PANE`, or no `TMUX` (what
 * a person unsets to start tmux inside tmux, leaving `TMUX_PANE`: tmux itself then takes them
 * to be outside). Throws {@link AgentPaneError} when `TMUX_PANE` is no pane id or `TMUX` is set
 * but names no socket.
 */
export function agentPane(env: (name: string) => string | undefined): AgentPane | null {
  const paneId = env("TMUX_PANE");
  if (paneId === undefined || paneId === "") return null;
  const tmux = env("TMUX") ?? "";
  if (tmux === "") return null;
  if (!/^%\d+$/.test(paneId)) {
    throw new AgentPaneError(`TMUX_PANE is ${JSON.stringify(paneId)}, not a pane id such as %3.`);
  }
  const parsed = parseTmuxEnv(tmux);
  if (!parsed) {
    throw new AgentPaneError(`TMUX is ${JSON.stringify(tmux)}, not "socket_path,pid,session".`);
  }
  return { address: { socketPath: parsed.socketPath }, paneId, tmux, serverPid: parsed.pid };
}

/**
 * The server a tmux command started with this environment and neither `-L` nor `-S` reaches:
 * the socket `TMUX` names, pane or no pane (a program in a `display-popup` or a `run-shell`
 * job has `TMUX` but no `TMUX_PANE`), else `default` in `$TMUX_TMPDIR/tmux-UID/`. The agent
 * starts its MCP server and its hooks with one environment, so an MCP server given no server
 * reaches this one: the guard must judge it, not pass every call because the agent has no
 * pane. Spelled out (`-S` path, `-L default`) rather than left to the guard's own tmux, so
 * that it follows `env` however the hook was started.
 */
export function serverTmuxPicks(env: (name: string) => string | undefined): ServerAddress {
  const socketPath = tmuxSocketPath(env("TMUX"));
  return socketPath !== null ? { socketPath } : { socketName: "default" };
}
