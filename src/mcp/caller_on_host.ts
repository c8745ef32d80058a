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
import { spawnChild } from "../tmux/guarded_env.ts";
import {
  parseServerIdentity,
  sameServer,
  SERVER_IDENTITY_FORMAT,
  type ServerIdentity,
} from "../tmux/server_identity.ts";
import type { PaneBrief, ServerFacts, Snapshot } from "../tmux/snapshot.ts";

/**
 * The caller's pane on the server `snapshot` read, per {@link findCallerPane}. On an SSH host, a
 * pid or a parent process that matches there is a stranger's; but a host that is this very
 * machine (an alias of it) serves the same tmux server, and then `TMUX_PANE`, or the parent
 * process, names the caller's pane there too.
 */
export function callerOn(
  callerEnv: CallerEnv,
  host: string | undefined,
  snapshot: Snapshot<PaneBrief>,
): CallerPane {
  const env = callerEnvOn(callerEnv, host, snapshot);
  if (env === null) return localOnly(host);
  const found = findCallerPane(snapshot, env);
  if (host === undefined || env.known || found.via !== "parent-process") return found;
  // Not known yet whether the host is this machine: its pane is taken for the caller's (a pane
  // refused that force lifts, rather than the caller's own typed into), and said so.
  return {
    ...found,
    reason: `${found.reason.replace(/\.$/, "")}, if host ${JSON.stringify(host)} is this ` +
      "machine (being checked): taken as the caller's meanwhile.",
  };
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

/** The answer on a host that is not this machine's server. */
function localOnly(host: string | undefined): CallerPane {
  return {
    paneId: null,
    via: null,
    reason: `The caller-pane guard is local only: this server does not run on host ${
      JSON.stringify(host)
    }.`,
  };
}

/**
 * What names the caller on the server `snapshot` read: everything here; on an SSH host,
 * `TMUX`/`TMUX_PANE` when that server's socket path and pid are the ones `TMUX` names, and
 * everything (the parent process too) when this machine's tmux at that server's socket path is
 * that very server ({@link localServerIs}), or while that is being asked (the safe side); null
 * otherwise. `known`: false while it is being asked.
 *
 * Some MCP clients start their servers with a short list of variables, without `TMUX`: then
 * only the parent process names the caller's pane, and a host that is an alias of this machine
 * would let the caller's own pane be typed into through it, where the same call without `host`
 * is refused.
 */
function callerEnvOn(
  env: CallerEnv,
  host: string | undefined,
  snapshot: Snapshot<PaneBrief>,
): (CallerEnv & { known: boolean }) | null {
  if (host === undefined) return { ...env, known: true };
  const server = snapshot.server;
  if (!server) return null;
  const tmux = parseTmuxEnv(env.tmux);
  const named = tmux !== null && tmux.socketPath === server.socketPath && tmux.pid === server.pid;
  if (named && env.tmuxPane) return { tmux: env.tmux, tmuxPane: env.tmuxPane, known: true };
  // Without TMUX naming it, only the parent process can name the caller's pane.
  if (env.ppid === undefined || env.ppid <= 1 || !server.socketPath) return null;
  const here = localServerIs(server);
  return here === false ? null : { ...env, known: here === true };
}

/** How long the local tmux is given to say which server it runs at a path. */
const PROBE_MS = 2_000;

/** Most servers remembered (a new one past it starts the memory again). */
const MAX_REMEMBERED = 256;

/**
 * Per host's server (socket path, pid and start), whether this machine's tmux at that path is
 * that server: true or false once asked, null while being asked.
 */
const remembered = new Map<string, boolean | null>();

/**
 * Whether this machine's tmux at `server`'s socket path is `server` itself (a host that is an
 * alias of this machine): asked once per server, in the background (the caller lookups read a
 * snapshot already taken and cannot wait), so null until the answer comes. A tmux process of
 * its own (probeLocal): the baked flags may run tmux, and need no read of the socket folder.
 */
export function localServerIs(server: ServerFacts): boolean | null {
  const key = `${server.pid} ${server.startTime} ${server.socketPath}`;
  const known = remembered.get(key);
  if (known !== undefined) return known;
  if (remembered.size >= MAX_REMEMBERED) remembered.clear();
  remembered.set(key, null);
  void probeLocal(server.socketPath).then((local) => {
    // A local tmux that did not answer stays unknown: the safe side, asked again next time.
    if (local === undefined) remembered.delete(key);
    else remembered.set(key, local !== null && sameServer(local, server));
  });
  return null;
}

/**
 * Which server this machine's tmux runs at `socketPath`: null for none (no socket there, one
 * refused, another user's, a path that is no socket of this user's tmux folder), undefined
 * when it did not answer within {@link PROBE_MS}.
 *
 * The path is the host's to choose (its tmux says it, or a `TMUX_TMPDIR` there), and a tmux
 * client sends whatever listens at a path its environment and working folder. So only a path
 * in this user's own tmux folder is asked, as `-L` names it (tmux refuses a folder that is not
 * the user's own, or is open to others), from a client that carries nothing: no environment
 * but the folder's `TMUX_TMPDIR`, `/` for its working folder.
 */
async function probeLocal(socketPath: string): Promise<ServerIdentity | null | undefined> {
  const tmpdir = Deno.env.get("TMUX_TMPDIR") || "/tmp";
  const m = /^(.*)\/tmux-\d+\/([^/]+)$/.exec(socketPath);
  if (!m || m[1] !== tmpdir.replace(/\/+$/, "")) return null;
  let child: Deno.ChildProcess;
  try {
    child = spawnChild("tmux", {
      args: ["-L", m[2], "display-message", "-p", `#{socket_path} ${SERVER_IDENTITY_FORMAT}`],
      clearEnv: true,
      env: tmpdir === "/tmp" ? {} : { TMUX_TMPDIR: tmpdir },
      cwd: "/",
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      signal: AbortSignal.timeout(PROBE_MS),
    });
  } catch {
    return null;
  }
  // Not child.output(): a stopped server holds its client's pipe open after the client is
  // killed, so the read is given up on at the same time.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), PROBE_MS + 100);
  });
  const read = (async () => {
    const [text, status] = await Promise.all([new Response(child.stdout).text(), child.status]);
    // The socket this user's tmux reached is the host's path, or it is not that server.
    const line = text.trim();
    const cut = line.lastIndexOf(" ", line.lastIndexOf(" ") - 1);
    if (!status.success || cut < 0 || line.slice(0, cut) !== socketPath) return null;
    return parseServerIdentity(line.slice(cut + 1));
  })().catch(() => null);
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}
