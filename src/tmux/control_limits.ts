/**
 * The bounds and timings of control clients: how many one server may have, how long one may
 * take to attach, linger after its last watcher or leave after its last answer, how long calls
 * start tmux instead after an attach failed, and across servers (the ones tests set, per
 * runner, as {@link ControlLimits}) how long a server other than the home one keeps its
 * clients and how many such servers may. control_opening.ts, control_leaving.ts and
 * control_server.ts keep to them for one server, control.ts bounds the servers.
 *
 * @module
 */

import type { PersistentChild, TmuxRunner } from "./run.ts";

/** How long a watch-only connection stays after its last watcher left. */
export const LINGER_MS = 5_000;
/** How long a connection that is to leave waits after its last use (answers in flight). */
export const LEAVING_MS = 500;
/** How long to spawn instead of retrying after finding no session to attach to. */
export const NO_SESSION_BACKOFF_MS = 1_000;
/**
 * At most this many control clients per server; beyond, waits poll. Watches may take all but
 * one: the last is kept for the client that carries commands (control_opening.ts).
 */
export const MAX_CONNECTIONS = 8;
/** Longest a new control client waits for an ending one to be gone (it is killed by then). */
export const ENDING_WAIT_MS = 1_000;
/**
 * Longest a control client may take to attach (a few milliseconds normally), counted from when
 * tmux runs (on an SSH host, once the remote shell has run its start-up files: see
 * {@link REMOTE_START_MS}). Past it, the client is given up and the caller starts tmux
 * instead: a tmux that never answers must not hold up the control clients queued behind this
 * one, nor the calls waiting for them.
 */
export const ATTACH_TIMEOUT_MS = 5_000;
/**
 * Longest the remote shell of a control client on an SSH host may take to start tmux: its
 * start-up files (nvm, conda, pyenv: seconds on some hosts) run first, for every session.
 * Counted in the attach's time, a start-up over {@link ATTACH_TIMEOUT_MS} left that host
 * without control clients, each call there starting tmux (and the start-up) of its own. The
 * same as the host's connection allows its connecting and start-up together (ssh.ts).
 */
const REMOTE_START_MS = 10_000;
/**
 * After a control client failed to attach (not in time, or its stream broke the framing or a
 * command hung before its handshake ended), how long calls start tmux without trying: what
 * broke it (a tmux that does not answer, a hook printing framing) is likely to break the next.
 */
export const ATTACH_BACKOFF_MS = 30_000;

/**
 * Longest a new control client's handshake waits for tmux's jobs (a hook's `run-shell`) to end
 * before it looks for modes they put on panes (see control_attach.ts's leaveHookModes).
 */
const HOOK_JOBS_WAIT_MS = 1_000;

/**
 * After tmux refused a control client (it exited before attaching: its session ended
 * meanwhile, a server on its way out, a tmux that takes none), how long calls start tmux
 * without trying: tried on every call, each call would pay for a seating read and a client's
 * start first, and hundreds of polling waits would start two tmux processes per read.
 */
const REFUSED_BACKOFF_MS = 1_000;

/** How long a server other than the home one keeps its command client after its last use. */
const SERVER_IDLE_MS = 45_000;
/** How many servers other than the home one may keep control clients at once. */
const MAX_SERVERS = 8;

/** The bounds on control clients across servers (tests set other ones). */
export interface ControlLimits {
  /** After this long without a call, a server other than the home one lets its clients go. */
  readonly idleMs: number;
  /** At most this many servers other than the home one keep control clients. */
  readonly maxServers: number;
  /** Longest a new client's handshake waits for tmux's jobs (see {@link HOOK_JOBS_WAIT_MS}). */
  readonly hookJobsWaitMs: number;
  /** How long no client is tried after tmux refused one (see {@link REFUSED_BACKOFF_MS}). */
  readonly refusedBackoffMs: number;
  /** Longest a client may take to attach once tmux runs (see {@link ATTACH_TIMEOUT_MS}). */
  readonly attachTimeoutMs: number;
  /** Longest a host's remote shell may take to start tmux (see {@link REMOTE_START_MS}). */
  readonly remoteStartMs: number;
}

/**
 * Calls `expire` once `child` has had `ms` since tmux began to run (PersistentChild.reached),
 * or, until then, `startMs` from now (an SSH host's remote shell runs its start-up files
 * first), saying which bound it passed. Returns what stops it.
 */
export function boundFromRun(
  child: PersistentChild,
  startMs: number,
  ms: number,
  expire: (passed: "start" | "run") => void,
): () => void {
  let stopped = false;
  let timer = setTimeout(() => expire("start"), startMs);
  child.reached.then(() => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(() => expire("run"), ms);
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

const limitsByRunner = new WeakMap<TmuxRunner, ControlLimits>();

/** Sets `runner`'s {@link ControlLimits} (for tests; the defaults suit a server process). */
export function setControlLimits(runner: TmuxRunner, limits: Partial<ControlLimits>): void {
  limitsByRunner.set(runner, { ...limitsOf(runner), ...limits });
}

/** `runner`'s {@link ControlLimits}: the ones tests set, else the defaults. */
export function limitsOf(runner: TmuxRunner): ControlLimits {
  return limitsByRunner.get(runner) ??
    {
      idleMs: SERVER_IDLE_MS,
      maxServers: MAX_SERVERS,
      hookJobsWaitMs: HOOK_JOBS_WAIT_MS,
      refusedBackoffMs: REFUSED_BACKOFF_MS,
      attachTimeoutMs: ATTACH_TIMEOUT_MS,
      remoteStartMs: REMOTE_START_MS,
    };
}
