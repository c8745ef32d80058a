/**
 * Which pane is the caller's on the server a call reads: on this machine, what `TMUX`,
 * `TMUX_PANE` and the process's ancestry say; on an SSH host, only a host that is this very
 * machine's tmux server names it. The caller lookups of `TmuxContext` (context.ts).
 *
 * @module
 */

import {
  type CallerEnv,
  type CallerPane,
  callerPaneFormat,
  findCallerPane,
  parseTmuxEnv,
} from "../tmux/identity.ts";
import type { PaneBrief, Snapshot } from "../tmux/snapshot.ts";

/**
 * The caller's pane on the server `snapshot` read, per {@link findCallerPane}. On an SSH host, a
 * pid or a parent process that matches there is a stranger's; but a host that is this very
 * machine (an alias of it) serves the same tmux server, and then `TMUX_PANE` names the caller's
 * pane there too.
 */
export function callerOn(
  callerEnv: CallerEnv,
  host: string | undefined,
  snapshot: Snapshot<PaneBrief>,
): CallerPane {
  const env = callerEnvOn(callerEnv, host, snapshot);
  if (env === null) {
    return {
      paneId: null,
      via: null,
      reason: `The caller-pane guard is local only: this server does not run on host ${
        JSON.stringify(host)
      }.`,
    };
  }
  return findCallerPane(snapshot, env);
}

/**
 * A tmux condition that holds for the caller's pane, for checks tmux makes at the instant of an
 * act (see {@link callerPaneFormat}); null when nothing names it, as on an SSH host that is not
 * this machine.
 */
export function callerFormatOn(
  callerEnv: CallerEnv,
  host: string | undefined,
  snapshot: Snapshot<PaneBrief>,
): string | null {
  const env = callerEnvOn(callerEnv, host, snapshot);
  return env === null ? null : callerPaneFormat(snapshot, env);
}

/**
 * What names the caller on the server `snapshot` read: everything here; on an SSH host, only
 * `TMUX`/`TMUX_PANE`, and only when that server's socket path and pid are the ones `TMUX` names
 * (a host that reaches this machine's own tmux server, so the guard errs on the safe side); null
 * otherwise. Costs nothing: the snapshot read the server's facts anyway.
 */
function callerEnvOn(
  env: CallerEnv,
  host: string | undefined,
  snapshot: Snapshot<PaneBrief>,
): CallerEnv | null {
  if (host === undefined) return env;
  const tmux = parseTmuxEnv(env.tmux);
  const server = snapshot.server;
  if (!tmux || !env.tmuxPane || !server) return null;
  if (tmux.socketPath !== server.socketPath || tmux.pid !== server.pid) return null;
  return { tmux: env.tmux, tmuxPane: env.tmuxPane };
}
