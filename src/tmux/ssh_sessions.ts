/**
 * How many sessions this process has open on one SSH host's connection, and how many it may.
 *
 * Every tmux process run on a host (one-shot calls and long-lived control clients alike) is a
 * session on the host's one master connection (ssh.ts), and sshd allows a connection only
 * `MaxSessions` of them (10 by default, the master's own included; hardened hosts set fewer).
 * A session asked for beyond that is refused at open ("Session open refused by peer"): the
 * command never ran. ssh then quietly tries a connection of its own (a full handshake, which a
 * host's `MaxStartups` may drop, or which may need what only the master had), and when that
 * fails too, tmux did not run there at all.
 *
 * So this process opens at most {@link MAX_SESSIONS_PER_HOST} at once per host, below the
 * default, and learns a lower bound the first time a host refuses one (what it had open then,
 * less the refused one): a one-shot call waits for a session of another to end instead of
 * being refused, and retries one that was (run.ts). Long-lived clients never wait: one that
 * would leave no room for one-shots is not started (a watch then reads by polling), and when a
 * refusal shows they hold every session the host allows, the newest are told to go.
 *
 * @module
 */

import { TmuxError } from "./tmux_error.ts";

/**
 * Sessions this process opens at once on one host's connection, long-lived ones and one-shots
 * together: below sshd's default `MaxSessions` of 10, which counts the master's own session too.
 */
export const MAX_SESSIONS_PER_HOST = 8;

/** The longest a refused one-shot waits before it is sent again, should no session end. */
const RETRY_MOMENT_MS = 250;

/**
 * Refusals in a row, with no other session of this process open on the host, after which a
 * one-shot gives up before its time, once they have gone on for {@link LONE_MS}: the host
 * allows none beside the master's own. A session of ours just ended may still be closing there
 * (sshd frees it only once it has handled the close, later on a loaded host), so neither the
 * first refusals nor a short run of them is taken for that.
 */
const LONE_TRIES = 4;
const LONE_MS = 2_000;

/** What sshd's refusal of a session on a shared connection reads as, in ssh's stderr. */
const REFUSED =
  /Session open refused by peer|administratively prohibited: open failed|mux_client_request_session: session request failed/;

/** Whether ssh's stderr says the host refused a session on the shared connection. */
export function sessionRefused(said: string): boolean {
  return REFUSED.test(said);
}

/**
 * One attempt of a one-shot call whose session the host refused (and ssh's own connection
 * failed too): nothing ran there, so it may be sent again (run.ts).
 */
export class RefusedAtOpen extends TmuxError {
  constructor(host: string) {
    super("unreachable", `Host ${JSON.stringify(host)} refused a session at open.`);
    this.name = "RefusedAtOpen";
  }
}

/** A one-shot call on a host whose sshd refused its session: nothing ran there. */
export class SessionRefused extends TmuxError {
  /**
   * `open`: this process's other sessions there at the last refusal; `resent`: how many times
   * it was sent again with none of ours open, or null when it was sent again until the call's
   * time ran out.
   */
  constructor(host: string, open: number, resent: number | null) {
    super(
      "unreachable",
      `Host ${JSON.stringify(host)}: its sshd refused another session on this server's ` +
        `connection to it (its MaxSessions), with ${open} other session${
          open === 1 ? "" : "s"
        } of this server open there (the connection's own not counted); nothing ran there. ` +
        (resent === null
          ? "It was sent again as sessions ended, until the call's time ran out. "
          : `It was sent again ${resent} times. `) +
        "Raise MaxSessions in the host's sshd_config, or run fewer waits and watches on it at " +
        "once.",
    );
    this.name = "SessionRefused";
  }
}

/** One host's sessions. */
export class HostSessions {
  #cap = MAX_SESSIONS_PER_HOST;
  #oneShots = 0;
  /** Long-lived sessions open, oldest first, each with what ends it. */
  readonly #lasting: (() => void)[] = [];
  #wakers: (() => void)[] = [];

  /** Sessions open now. */
  get open(): number {
    return this.#oneShots + this.#lasting.length;
  }

  /** Sessions this process lets itself open at once on the host. */
  get cap(): number {
    return this.#cap;
  }

  /**
   * A session for a one-shot call: waits while every allowed session is open and one-shots hold
   * some of them (never behind long-lived ones alone, which may not end). Returns its release;
   * throws `signal`'s reason's error when it aborts first.
   */
  async takeOneShot(signal: AbortSignal): Promise<() => void> {
    while (this.open >= this.#cap && this.#oneShots > 0) {
      await this.ended(signal);
    }
    this.#oneShots++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#oneShots--;
      this.#wake();
    };
  }

  /**
   * A session for a long-lived client, or null when it would leave no room for a one-shot. `end`
   * stops the client (it is told to go when the host refuses sessions it holds); the release
   * returned is called once it has ended.
   */
  takeLasting(end: () => void): (() => void) | null {
    if (this.open + 1 > this.#cap - 1) return null;
    this.#lasting.push(end);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const at = this.#lasting.indexOf(end);
      if (at !== -1) this.#lasting.splice(at, 1);
      this.#wake();
    };
  }

  /**
   * The host refused a one-shot's session (still counted in {@link open}): it allows no more than
   * the others open. Long-lived clients beyond room for one one-shot are told to go, newest
   * first: otherwise every one-shot would be refused for as long as they last.
   */
  refused(): void {
    this.#cap = Math.max(1, Math.min(this.#cap, this.open - 1));
    let over = this.#lasting.length - Math.max(0, this.#cap - 1);
    for (let i = this.#lasting.length - 1; i >= 0 && over > 0; i--, over--) {
      try {
        this.#lasting[i]();
      } catch {
        // Gone already.
      }
    }
  }

  /** Resolves when a session ends (or `signal` aborts: then throws). */
  ended(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(aborted(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#wakers = this.#wakers.filter((w) => w !== wake);
        reject(aborted(signal));
      };
      const wake = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      this.#wakers.push(wake);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  #wake(): void {
    const wakers = this.#wakers;
    this.#wakers = [];
    for (const wake of wakers) wake();
  }
}

/** The error a wait for a session ends with when `signal` aborts. */
function aborted(signal: AbortSignal): unknown {
  return signal.reason instanceof TmuxError
    ? signal.reason
    : new TmuxError("cancelled", "The call was cancelled while it waited for an SSH session.");
}

/**
 * Runs `attempt` (one one-shot tmux process on `host`) in a session of `sessions`: waits for
 * room first, and sends it again whenever the host refused its session (nothing ran), each time
 * once another of this process's sessions there has ended. `signal` bounds the waiting (the
 * call's timeout, its cancellation, the runner's close); `cancelled` tells a cancellation from
 * the time running out. Out of time after a refusal, {@link SessionRefused} says why.
 */
export async function inSession<R>(
  sessions: HostSessions,
  host: string,
  signal: AbortSignal,
  cancelled: () => boolean,
  attempt: () => Promise<R>,
): Promise<R> {
  let refusedWith: number | null = null;
  /** Refusals in a row with none of ours open, and when the first of them came. */
  let lone = 0;
  let loneSince = 0;
  const stopped = (error: unknown): unknown => {
    if (cancelled() || !signal.aborted) return error;
    if (refusedWith !== null) return new SessionRefused(host, refusedWith, null);
    return new TmuxError(
      "timeout",
      `Host ${JSON.stringify(host)}: no SSH session there came free in time (this server opens ` +
        `at most ${sessions.cap} at once on a host's connection, and had ${sessions.open} ` +
        "open); nothing ran there.",
    );
  };
  while (true) {
    let release: () => void;
    try {
      release = await sessions.takeOneShot(signal);
    } catch (error) {
      throw stopped(error);
    }
    let othersOpen: number;
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof RefusedAtOpen)) throw error;
      othersOpen = sessions.open - 1;
      refusedWith = othersOpen;
      sessions.refused();
    } finally {
      release();
    }
    lone = othersOpen === 0 ? lone + 1 : 0;
    if (lone === 1) loneSince = performance.now();
    if (lone >= LONE_TRIES && performance.now() - loneSince >= LONE_MS) {
      throw new SessionRefused(host, othersOpen, lone - 1);
    }
    // Once one ends; or after a moment, should one have ended before this wait began.
    const moment = AbortSignal.any([signal, AbortSignal.timeout(RETRY_MOMENT_MS)]);
    try {
      await sessions.ended(moment);
    } catch (error) {
      if (signal.aborted) throw stopped(error);
    }
  }
}
