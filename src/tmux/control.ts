/**
 * Control mode: a long-lived `tmux -C attach` client per tmux server that carries commands
 * (a round trip costs a fraction of a millisecond instead of a process start) and delivers
 * `%output` — every byte a pane writes, as it writes it — so waiting on a pane is driven by
 * events, not by a polling tick.
 *
 * What a control client must never do, and how it is kept from it:
 * - resize anything: it attaches with `-f ignore-size`, so tmux leaves it out of every size
 *   calculation;
 * - cost anything for a pane that prints all the time when nothing waits on it: the client for
 *   commands attaches with `no-output` too, and never carries a watch (see below);
 * - count as a person watching: tmux reports it with `client_control_mode` = 1, and identity.ts
 *   never counts such clients;
 * - detach anyone: it never passes `-d` or `-x`;
 * - stay in a session tmux moved it to (its own killed under `detach-on-destroy off`): it
 *   leaves, rather than sit beside a person as the newest client of their session;
 * - keep a `destroy-unattached` session alive after its person left: such sessions are never
 *   attached to (waits on their panes poll instead);
 * - keep an `exit-unattached` server alive after its last person left: no client attaches
 *   while nobody else is, and every client leaves when the last other one does, or when the
 *   option is turned on while nobody else is attached (each client subscribes to its value;
 *   commands then start tmux processes, which attach to nothing, and waits poll);
 * - run a second command hidden in a value: every argument is single-quoted for tmux's command
 *   parser (see {@link controlLine}); a value that cannot travel on one line (a newline) makes
 *   the call fall back to starting a tmux process;
 * - leave a hook's output over a pane: a person's `client-attached`, `client-session-changed`
 *   and `pane-focus-in` hooks run for it too, and tmux shows a hook's `run-shell` output in
 *   view-mode on its session's active pane, often a pane a person looks at. Its handshake
 *   waits (briefly) for tmux's jobs to end and leaves each view-mode they brought
 *   (#leaveHookModes). What such a hook prints with `display-message -p` comes to the client
 *   itself, outside any answer, and is dropped.
 *
 * What it cannot avoid (tmux 3.3a): attaching (or being moved) focuses the client, so the
 * active pane of its session's current window, when no client focused it yet, is sent a
 * focus-in (`ESC [ I`, to a program that asked for focus reports, whatever `focus-events`
 * says) and runs `pane-focus-in` hooks; no focus-out follows when it leaves. No client flag
 * turns focus off, and a control client cannot send the focus-out key (`send-keys -K` came in
 * tmux 3.4). Nor can it keep a person's hooks from running as it attaches (a sound, a line in a
 * log), once per client.
 *
 * A server other than the one this process was started for (reached by a call's own socket)
 * keeps its clients only while used: its command client leaves after {@link ControlLimits}
 * `idleMs` without a call, and beyond `maxServers` such servers with a client, the least
 * recently used lets its go; the server's record goes with its last client.
 *
 * tmux sends `%output` only for panes of the session a control client is attached to. So a
 * server gets one connection for commands (attached to any session, with `no-output`), plus,
 * while a wait needs it, one attached to the session of the pane being watched — closed again
 * shortly after its last watcher leaves. The two are never the same client, even in one
 * session: output is never turned off on a client at run time, because tmux 3.3a then drops
 * its record of the output queued for that client but not the output itself, and every later
 * answer waits behind it for ever (control_reset_offsets). A connection that drops (`detach-client -s`, its session killed, the
 * server restarted) is noticed: pending commands fail with {@link ControlUnavailable}, watchers
 * are told output may have been missed, and the next use connects again.
 *
 * What tmux sends is read by control_protocol.ts, which holds every effect until the framing it
 * was read under is verified. A connection whose stream breaks that framing (a pane printing
 * forged `%end` lines), or on which a command does not answer in time, is retired the same way:
 * killed at once, its pending commands failed as possibly run, its watchers told, and one line
 * written to stderr.
 *
 * @module
 */

import { warn } from "../diagnostics.ts";
import {
  argvCommands,
  controlLine,
  ControlProtocol,
  type ControlResult,
  ControlUnavailable,
  type Notifications,
  type PendingCall,
  quoteNested,
} from "./control_protocol.ts";
import { decodeBytes, randomHex } from "./format.ts";
import {
  holdsOpen,
  parseStandings,
  type SessionStanding,
  sessionToJoin,
  sessionToRestore,
  STANDING_FORMAT,
  type Touch,
  touched,
} from "./recency.ts";
import { onServerFormat } from "./server_identity.ts";
import { changesStructure } from "./structure.ts";
import { Turns } from "./turns.ts";
import {
  addressKey,
  classifyStderr,
  type PersistentChild,
  type RunOptions,
  type ServerAddress,
  TmuxError,
  type TmuxRunner,
} from "./run.ts";

export {
  argvCommands,
  controlLine,
  type ControlResult,
  ControlUnavailable,
  quoteArgument,
  quoteNested,
  unescapeOutput,
} from "./control_protocol.ts";

// ---------------------------------------------------------------------------------------------
// Terminal output as text

/** States of the escape-sequence scanner. */
const Esc = { Ground: 0, Escape: 1, Csi: 2, Str: 3, StrEscape: 4, OneMore: 5 } as const;

/** Longest line the decoder builds before it breaks it (binary output has no newlines). */
const MAX_LINE_BYTES = 16_384;
/** Longest escape sequence it follows before giving up on it. */
const MAX_ESCAPE_BYTES = 4_096;

/**
 * Turns what a program writes to its terminal into lines of text: escape sequences (colours,
 * cursor moves, titles) dropped, CR LF and lone CR ending a line (a progress bar's redraws
 * become lines of their own), other control characters dropped. Stateful, because `%output`
 * arrives in arbitrary chunks that split lines, escape sequences and UTF-8 characters. Keeps
 * the most recent lines for a tail.
 */
export class TerminalText {
  #state: number = Esc.Ground;
  #escapeBytes = 0;
  #line: number[] = [];
  #afterCR = false;
  /** Text was added to the partial line since {@link TerminalText.takeWritten} last asked. */
  #written = false;
  #recent: string[] = [];
  readonly #keep: number;

  /** A decoder that remembers the last `keep` completed lines. */
  constructor(keep = 200) {
    this.#keep = keep;
  }

  /** Feeds bytes; returns the lines they completed. */
  push(bytes: Uint8Array): string[] {
    const done: string[] = [];
    for (const b of bytes) {
      switch (this.#state) {
        case Esc.Ground:
          this.#ground(b, done);
          break;
        case Esc.Escape:
          this.#state = b === 0x5b
            ? Esc.Csi
            : b === 0x5d || b === 0x50 || b === 0x58 || b === 0x5e || b === 0x5f
            ? Esc.Str
            : (b >= 0x20 && b <= 0x2f)
            ? Esc.OneMore
            : Esc.Ground;
          this.#escapeBytes = 0;
          break;
        case Esc.Csi:
          if (b >= 0x40 && b <= 0x7e) this.#state = Esc.Ground;
          else if (b === 0x1b) this.#state = Esc.Escape;
          else if (++this.#escapeBytes > MAX_ESCAPE_BYTES) this.#state = Esc.Ground;
          break;
        case Esc.Str:
          if (b === 0x07) this.#state = Esc.Ground;
          else if (b === 0x1b) this.#state = Esc.StrEscape;
          else if (++this.#escapeBytes > MAX_ESCAPE_BYTES) this.#state = Esc.Ground;
          break;
        case Esc.StrEscape:
          this.#state = b === 0x5c ? Esc.Ground : Esc.Str;
          break;
        case Esc.OneMore:
          this.#state = Esc.Ground;
          break;
      }
    }
    return done;
  }

  #ground(b: number, done: string[]): void {
    const afterCR = this.#afterCR;
    this.#afterCR = false;
    if (b === 0x0a) {
      if (!afterCR) this.#endLine(done);
    } else if (b === 0x0d) {
      this.#endLine(done);
      this.#afterCR = true;
    } else if (b === 0x1b) {
      this.#state = Esc.Escape;
    } else if (b === 0x09 || b >= 0x20 && b !== 0x7f) {
      this.#line.push(b);
      this.#written = true;
      if (this.#line.length >= MAX_LINE_BYTES) this.#endLine(done);
    }
  }

  #endLine(done: string[]): void {
    const line = decodeBytes(Uint8Array.from(this.#line));
    this.#line = [];
    this.#written = false;
    done.push(line);
    this.#recent.push(line);
    if (this.#recent.length > this.#keep) this.#recent.splice(0, this.#recent.length - this.#keep);
  }

  /** The line being written (no line end yet), e.g. a prompt. */
  get partial(): string {
    return decodeBytes(Uint8Array.from(this.#line));
  }

  /**
   * Whether text was added to the partial line since the last call: escape sequences alone (a
   * title, the cursor shown) leave it as it was, and it is then nothing new.
   */
  takeWritten(): boolean {
    const written = this.#written;
    this.#written = false;
    return written;
  }

  /** The most recent completed lines, then the partial line when it is not empty. */
  recent(): string[] {
    const partial = this.partial;
    return partial === "" ? [...this.#recent] : [...this.#recent, partial];
  }
}

// ---------------------------------------------------------------------------------------------
// One connection

/** What a watcher of one pane is told, once per chunk tmux sent. */
export interface WatchBatch {
  /** Bytes the pane wrote, decoded from `%output`, in order. */
  readonly output: Uint8Array[];
  /** Windows, panes or sessions changed: the pane may have died, moved or gone. */
  readonly changed: boolean;
  /** The connection is gone: output may have been missed and this watch has ended. */
  readonly lost: boolean;
}

/** Receives a pane's batches. */
export type WatchListener = (batch: WatchBatch) => void;

/** A live watch on one pane; close it when done. */
export interface Watch {
  /** The session the carrying connection is attached to. */
  readonly sessionId: string;
  /** Stops delivery. */
  close(): void;
}

interface Watcher {
  readonly paneId: string;
  readonly listener: WatchListener;
  connection: Connection;
}

/**
 * What a listener on a whole tmux server hears (see {@link ServerControl.listen}): every
 * callback is a hint to look again, never data to trust.
 */
export interface ServerEvents {
  /** Sessions, windows or panes came, went, moved or were renamed. */
  topology?(): void;
  /** One of the listener's format subscriptions changed: its key and new value. */
  subscription?(key: string, value: string): void;
  /** The connection carrying the listener is gone: it has ended; listen again to resume. */
  lost?(reason: string): void;
}

/** A live server listener; close it when done. */
export interface Listening {
  /** Stops delivery and drops its format subscriptions. */
  close(): void;
}

interface Listener {
  readonly events: ServerEvents;
  /** tmux's subscription name → the listener's key. */
  readonly names: Map<string, string>;
  readonly connection: Connection;
}

/** What an operator may want to know about a tmux server's control channel. */
export interface ControlEvent {
  /** `lost`/`regained`: the control connection; `gone`/`back`: the tmux server itself. */
  readonly kind: "lost" | "regained" | "gone" | "back";
  readonly address: ServerAddress;
  /** One sentence, without anything a pane wrote. */
  readonly message: string;
}

const encoder = new TextEncoder();

/** How long a retired client may take to leave by itself before it is told to stop. */
const RETIRE_GRACE_MS = 2_000;

/** Bytes a connection reads from tmux at a time. */
const READ_CHUNK_BYTES = 64 * 1024;

/** One `tmux -C attach` child and the protocol spoken over it. */
class Connection {
  /** The session it is attached to (tmux may move it: `%session-changed`). */
  sessionId = "";
  /** tmux's name for its client (`client_name`), once attached. */
  clientName = "";
  /** Set when it is to leave as soon as its work is done: nothing new is given to it. */
  leaving = false;
  /**
   * Set when tmux moved it to a session after its attach, unasked (its own was killed under
   * `detach-on-destroy off`, or another client switched it): it then leaves.
   */
  moved = false;
  /** True once it can no longer be used. */
  closed = false;
  readonly watchers = new Set<Watcher>();
  /** Listeners on the whole server whose format subscriptions live on this client. */
  readonly listeners = new Set<Listener>();
  /** Set when we close it ourselves: its end is no loss to report. */
  closing = false;
  /**
   * Whether it was opened to carry watches (receiving `%output`); otherwise it carries
   * commands and attached with `no-output`. Fixed for its life.
   */
  forWatches = false;
  /**
   * Panes tmux said entered or left a mode since the client began to attach, collected while
   * its handshake looks for modes a person's hooks put there as it attached; null after.
   */
  modeChanges: Set<string> | null = new Set();
  /**
   * The pid of the tmux server it is attached to: noted as it attached, else asked over itself
   * the first time it is needed (see {@link ServerControl.onSocket} and
   * {@link ServerControl.exec}); null when it did not say.
   */
  serverPid: Promise<number | null> | null = null;
  /** Resolves once attached; rejects with {@link ControlUnavailable} if attaching failed. */
  readonly ready: Promise<void>;
  /** Resolves when the child is gone and the reader has stopped. */
  readonly done: Promise<void>;
  idleTimer: ReturnType<typeof setTimeout> | undefined;

  readonly #child: PersistentChild;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #protocol: ControlProtocol;
  readonly #onLost: (c: Connection) => void;
  readonly #onChanged: (c: Connection) => void;
  readonly #onEvents: (c: Connection, n: Notifications) => void;
  #readyResolve!: () => void;
  #readyReject!: (e: Error) => void;
  #handshake = true;
  /** Set once the connection is given up: its calls failed, its watchers told. */
  #gone = false;
  /** Why it was retired (its stream broke the framing, a command hung), or null. */
  #retired: string | null = null;
  #stderr = "";

  constructor(
    child: PersistentChild,
    onLost: (c: Connection) => void,
    onChanged: (c: Connection) => void,
    onEvents: (c: Connection, n: Notifications) => void = () => {},
  ) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#onLost = onLost;
    this.#onChanged = onChanged;
    this.#onEvents = onEvents;
    this.ready = new Promise<void>((resolve, reject) => {
      this.#readyResolve = resolve;
      this.#readyReject = reject;
    });
    this.ready.catch(() => {});
    this.#protocol = new ControlProtocol({
      write: (text) => this.#writer.write(encoder.encode(text)).catch(() => {}),
      deliver: (notifications) => this.#deliver(notifications),
      refused: (reason) => {
        if (!this.#handshake) return;
        this.#handshake = false;
        this.#readyReject(new ControlUnavailable(reason || "tmux refused to attach"));
      },
      anomaly: (reason) => this.retire(`its answers broke control-mode framing: ${reason}`),
    });
    // Reading starts once the connection is built: a stream that fails at once reports the
    // loss to a ServerControl that then finds `done` in place.
    const reading = Promise.resolve().then(() => this.#read());
    this.done = Promise.all([reading, this.#drainStderr(), child.status]).then(() => {});
  }

  async #drainStderr(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.#child.stderr) {
        this.#stderr = (this.#stderr + decoder.decode(chunk, { stream: true })).slice(-2_000);
      }
    } catch {
      // The child went away; nothing more to read.
    }
  }

  async #read(): Promise<void> {
    try {
      // Into one buffer, again and again: the protocol copies what it keeps, and a fresh
      // buffer per read would leave megabytes of spent ones behind every large answer.
      const reader = this.#child.stdout.getReader({ mode: "byob" });
      let buffer = new ArrayBuffer(READ_CHUNK_BYTES);
      while (true) {
        const { done, value } = await reader.read(new Uint8Array(buffer));
        if (done || !value) break;
        // Retired: what follows is read and dropped, never left unread. Closing our end of
        // the pipe would kill the client by SIGPIPE while tmux writes to it, and tmux 3.3a's
        // server crashes when a control client dies with output pending for it.
        if (!this.#gone) this.#protocol.push(value);
        buffer = value.buffer as ArrayBuffer;
      }
    } catch {
      // A read error is a dropped connection, handled below.
    }
    this.#lost("the control connection was lost");
  }

  /** Takes the session tmux names and hands verified output to the watchers of its panes. */
  #deliver(notifications: Notifications): void {
    const { output, changed, sessionId } = notifications;
    if (this.modeChanges) {
      for (const paneId of notifications.modes) {
        this.modeChanges.add(paneId);
      }
    }
    if (sessionId !== null) {
      if (!this.#handshake && sessionId !== this.sessionId && !this.leaving) this.moved = true;
      this.sessionId = sessionId;
      if (this.#handshake) {
        this.#handshake = false;
        this.#readyResolve();
      }
    }
    if (
      notifications.topology || notifications.clients || notifications.subscriptions.size > 0
    ) {
      this.#onEvents(this, notifications);
    }
    if (output.size === 0 && !changed) return;
    if (changed) this.#onChanged(this);
    for (const watcher of [...this.watchers]) {
      const mine = output.get(watcher.paneId);
      if (!mine && !changed) continue;
      try {
        watcher.listener({ output: mine ?? [], changed, lost: false });
      } catch {
        // A listener's failure is its own; the connection carries on.
      }
    }
  }

  /**
   * Gives the connection up at once, because its stream can no longer be trusted (framing a
   * pane forged, a command that never answered): the child is killed without waiting for it to
   * drain, pending calls fail as possibly run, watchers are told they lost the feed (so waits
   * re-read the pane rather than trust anything held), and the next use opens a fresh one.
   */
  retire(reason: string): void {
    if (this.#gone) return;
    this.#retired = reason;
    warn(
      `tmux-mcp: retired a control connection to tmux (${reason}); the next call opens a fresh one`,
    );
    this.#lost(`the control connection was retired: ${reason}`);
    // Its input is closed (#lost): tmux ends the client the way it expects. Only a client that
    // lingers is told to stop (SIGTERM, which tmux survives; never SIGKILL), and its output is
    // drained meanwhile.
    const linger = setTimeout(() => this.#child.kill(), RETIRE_GRACE_MS);
    this.done.finally(() => clearTimeout(linger));
  }

  #lost(message: string): void {
    if (this.#gone) return;
    this.#gone = true;
    this.closed = true;
    if (this.#handshake) {
      this.#handshake = false;
      const reason = this.#stderr.trim().split("\n")[0];
      this.#readyReject(new ControlUnavailable(reason || message));
    }
    this.#protocol.fail(new ControlUnavailable(message, { sent: true }));
    this.#writer.close().catch(() => {});
    this.#onLost(this);
  }

  /** Why it was retired (see {@link retire}), or null: a connection lost otherwise is not. */
  get retired(): string | null {
    return this.#retired;
  }

  /** Commands sent and not yet answered. */
  get pending(): number {
    return this.#protocol.pending;
  }

  /** Sends one command line and collects its answer. */
  async exec(args: readonly string[], options: RunOptions): Promise<ControlResult> {
    const line = controlLine(args);
    await this.ready;
    if (this.closed) throw new ControlUnavailable("the control connection was lost");
    const { promise, resolve } = Promise.withResolvers<ControlResult | Error>();
    const call: PendingCall = this.#protocol.send(line, resolve);
    const timeoutMs = options.timeoutMs ?? 10_000;
    const onAbort = () => call.settle?.(new TmuxError("cancelled", "The call was cancelled."));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => {
      call.settle?.(new TmuxError("timeout", `tmux did not answer within ${timeoutMs} ms.`));
      call.settle = null;
      // Whatever held it up holds up every call behind it too.
      this.retire(`a command did not answer within ${timeoutMs} ms`);
    }, timeoutMs);
    if (options.signal?.aborted) onAbort();
    try {
      const result = await promise;
      if (result instanceof Error) throw result;
      return result;
    } finally {
      // A cancelled call's answer, if it still comes, is verified like any other and dropped.
      call.settle = null;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Ends the client: stdin closed (tmux then exits by itself), killed if it lingers. */
  async close(): Promise<void> {
    this.closing = true;
    this.closed = true;
    clearTimeout(this.idleTimer);
    const killTimer = setTimeout(() => this.#child.kill(), 500);
    await this.#writer.close().catch(() => {});
    await this.done;
    clearTimeout(killTimer);
  }
}

// ---------------------------------------------------------------------------------------------
// Per server

/**
 * The format subscription every control client carries so that it hears `exit-unattached`
 * turned on: tmux sends no notification when an option changes, but it reports a
 * subscription's new value within a second.
 */
const EXIT_UNATTACHED_SUBSCRIPTION = "tmux-mcp-exit-unattached";

/** How long a watch-only connection stays after its last watcher left. */
const LINGER_MS = 5_000;
/** How long a connection that is to leave waits after its last use (answers in flight). */
const LEAVING_MS = 500;
/** How long to spawn instead of retrying after finding no session to attach to. */
const NO_SESSION_BACKOFF_MS = 1_000;
/** At most this many control clients per server; beyond, waits poll. */
const MAX_CONNECTIONS = 8;
/** Longest a new control client waits for an ending one to be gone (it is killed by then). */
const ENDING_WAIT_MS = 1_000;
/**
 * Longest a control client may take to attach (a few milliseconds normally). Past it, the
 * client is given up and the caller starts tmux instead: a tmux that never answers must not
 * hold up the control clients queued behind this one, nor the calls waiting for them.
 */
export const ATTACH_TIMEOUT_MS = 5_000;
/**
 * After a control client failed to attach (not in time, or its stream broke the framing or a
 * command hung before its handshake ended), how long calls start tmux without trying: what
 * broke it (a tmux that does not answer, a hook printing framing) is likely to break the next.
 */
const ATTACH_BACKOFF_MS = 30_000;

/**
 * Longest a new control client's handshake waits for tmux's jobs (a hook's `run-shell`) to end
 * before it looks for modes they put on panes (see ServerControl's #leaveHookModes).
 */
const HOOK_JOBS_WAIT_MS = 1_000;
/** How often it asks tmux meanwhile. */
const HOOK_JOBS_POLL_MS = 20;

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
}

const limitsByRunner = new WeakMap<TmuxRunner, ControlLimits>();

/** Sets `runner`'s {@link ControlLimits} (for tests; the defaults suit a server process). */
export function setControlLimits(runner: TmuxRunner, limits: Partial<ControlLimits>): void {
  limitsByRunner.set(runner, { ...limitsOf(runner), ...limits });
}

function limitsOf(runner: TmuxRunner): ControlLimits {
  return limitsByRunner.get(runner) ??
    { idleMs: SERVER_IDLE_MS, maxServers: MAX_SERVERS, hookJobsWaitMs: HOOK_JOBS_WAIT_MS };
}

/** What a {@link ServerControl} is told by, and tells, the set of servers it belongs to. */
interface ServerHooks {
  readonly report: (event: ControlEvent) => void;
  /** A command client was opened: the set may now hold too many. */
  readonly opened: () => void;
  /** It let its clients go for good: the set forgets it (a later call makes a new one). */
  readonly retired: (ending: Promise<void>) => void;
  /** A retired predecessor's clients, still ending: none of ours starts before they are gone. */
  readonly ending?: Promise<void>;
}

/** The sessions and clients of a tmux server, as a leaving or idle client reads them. */
interface Seating {
  readonly standings: SessionStanding[];
  readonly clients: readonly { readonly sessionId: string; readonly name: string }[];
}

/** The control connections of one tmux server. */
export class ServerControl {
  readonly #runner: TmuxRunner;
  readonly #address: ServerAddress;
  readonly #connections = new Set<Connection>();
  readonly #opening = new Map<string, Promise<Connection>>();
  /**
   * Control clients start and end one at a time. tmux 3.3a marks a client as a control client
   * at the first message of its handshake but sets up its control state only at the last: a
   * notification sent to every control client in between (another client attaching, detaching,
   * a window renamed) dereferences that missing state and the whole tmux server dies with it
   * (tmux/tmux#4980; 8 control clients attaching at once crashed it within 150 rounds here).
   * Starting ours in turn, each once the last has attached or ended, keeps them from doing
   * that to one another.
   */
  readonly #turns = new Turns();
  readonly #ending = new Set<Promise<void>>();
  #primary: Connection | null = null;
  #acquiring: Promise<Connection> | null = null;
  #reviewing = false;
  #reviewAgain = false;
  /** Sessions our clients attached to, and their last use before (see recency.ts). */
  readonly #touches = new Map<string, Touch>();
  #closed = false;
  #noSessionUntil = 0;
  /** Until when no control client is tried, after one failed to attach (see ATTACH_BACKOFF_MS). */
  #attachFailedUntil = 0;
  #subscriptionSeq = 0;
  /** What was last reported as down (the connection, or the server), until it is back. */
  #down: "lost" | "gone" | null = null;
  readonly #report: (event: ControlEvent) => void;
  readonly #hooks: ServerHooks | null;
  /** The server this process was started for: its clients never leave for being idle. */
  readonly home: boolean;
  /** When it was last used (`performance.now()`): a call, a watch or a listener. */
  lastUsed = 0;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;

  /** Connections are opened lazily, on first use. */
  constructor(
    runner: TmuxRunner,
    address: ServerAddress,
    hooks: ServerHooks | null = null,
  ) {
    this.#runner = runner;
    this.#address = address;
    this.#hooks = hooks;
    this.#report = hooks?.report ?? (() => {});
    if (hooks?.ending) this.#ending.add(hooks.ending);
    this.home = runner.home !== null && addressKey(runner.home) === addressKey(address);
  }

  /** Notes a use; a server other than the home one then looks again once it may be idle. */
  #use(): void {
    this.lastUsed = performance.now();
    if (this.home || this.#hooks === null || this.#idleTimer !== undefined) return;
    this.#idleLater(limitsOf(this.#runner).idleMs);
  }

  #idleLater(ms: number): void {
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#closed) return;
      const { idleMs } = limitsOf(this.#runner);
      const quiet = performance.now() - this.lastUsed;
      if (this.busy || quiet < idleMs) return this.#idleLater(Math.max(10, idleMs - quiet));
      this.retire();
    }, ms);
    // Housekeeping only: it never keeps the process alive.
    Deno.unrefTimer(this.#idleTimer as unknown as number);
  }

  /** Whether something still needs its clients: a watch, a listener, an answer, an attach. */
  get busy(): boolean {
    if (this.#acquiring !== null || this.#opening.size > 0 || this.#reviewing) return true;
    return [...this.#connections].some((c) =>
      !c.closed && (c.watchers.size > 0 || c.listeners.size > 0 || c.pending > 0)
    );
  }

  /**
   * Lets every client go for good (idle, or one server too many): the set forgets this
   * record, and a later call makes a fresh one, whose first client waits until these are
   * gone. A call that still holds this record meanwhile starts tmux instead.
   */
  retire(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    const ending = this.#inTurn(() => this.#closeAll()).catch(() => {});
    this.#hooks?.retired(ending);
  }

  /**
   * Told that tmux processes started for this address now reach the server with `pid`: lets
   * every client go when one of them is attached to another server. That happens when the
   * socket file was removed (a tmp cleaner, an `rm`) and a new server started on its path while
   * the old one runs on: nothing started by name reaches the old server any more, so what our
   * clients read of it and what a spawned command changes would be two servers' doing. Each
   * client is asked its server's pid once, over itself. Returns the pid the clients were
   * attached to when they were let go, else null (the next call attaches to the server there).
   */
  async onSocket(pid: number): Promise<number | null> {
    const live = [...this.#connections].filter((c) => !c.closed);
    for (const c of live) c.serverPid ??= pidOf(c);
    const pids = await Promise.all(live.map((c) => c.serverPid));
    const other = pids.find((p) => p !== null && p !== pid) ?? null;
    if (other === null || this.#closed) return null;
    const { host, socketPath, socketName } = this.#address;
    const socket = JSON.stringify(socketPath ?? socketName ?? "default") +
      (host === undefined ? "" : ` on host ${JSON.stringify(host)}`);
    warn(
      `tmux-mcp: the tmux server on socket ${socket} is now pid ${pid}; let go of the control ` +
        `clients attached to pid ${other}, which runs on without its socket`,
    );
    this.retire();
    return other;
  }

  /** Live control clients (for tests and diagnostics). */
  get connections(): number {
    return [...this.#connections].filter((c) => !c.closed).length;
  }

  /** Live pane watches (for tests: a cancelled wait must leave none). */
  get watchers(): number {
    let n = 0;
    for (const c of this.#connections) n += c.watchers.size;
    return n;
  }

  /**
   * Runs a command over the control channel. Same result shape as `TmuxRunner.exec`; throws
   * {@link ControlUnavailable} when the channel cannot carry it, so the caller can spawn.
   * Commands run with the control client as their client: always pass explicit targets.
   *
   * With `serverPid` (the server the caller read), a client attached to another server does
   * not carry it either: one that attached after the read went through the socket, which may
   * lead to a new server since (its file replaced while the old server runs on). The caller's
   * tmux process then checks the server there ({@link execSpawned}).
   */
  async exec(args: readonly string[], options: ViaOptions = {}): Promise<ControlResult> {
    controlLine(args); // refuse what cannot travel before connecting at all
    this.#use();
    const connection = await this.#primaryConnection();
    const want = options.serverPid ?? null;
    if (want !== null) {
      const pid = await (connection.serverPid ??= pidOf(connection));
      if (pid !== null && pid !== want) {
        throw new ControlUnavailable(`its client is attached to server pid ${pid}, not ${want}`);
      }
    }
    try {
      return await connection.exec(args, options);
    } catch (error) {
      throw remoteTimeout(error, this.#address);
    }
  }

  /**
   * Delivers what `paneId` writes to `listener`, through a connection attached to one of
   * `sessionIds` (the sessions its window is linked into). Throws {@link ControlUnavailable}
   * when none can be attached (the caller polls instead).
   */
  async watch(
    paneId: string,
    sessionIds: readonly string[],
    listener: WatchListener,
  ): Promise<Watch> {
    if (this.#closed) throw new ControlUnavailable("shutting down");
    this.#use();
    let connection = [...this.#connections].find((c) =>
      !c.closed && !c.leaving && c.forWatches && sessionIds.includes(c.sessionId)
    );
    if (!connection) {
      this.#requireAttaching();
      const standings = await this.#standings();
      this.#requireOthers(standings);
      const target = sessionToJoin(standings, sessionIds);
      if (!target) {
        throw new ControlUnavailable(
          "no session of this pane can take a control client (destroy-unattached is on)",
        );
      }
      connection = await this.#open(target, standings, true);
    }
    clearTimeout(connection.idleTimer);
    const watcher: Watcher = { paneId, listener, connection };
    connection.watchers.add(watcher);
    return {
      sessionId: connection.sessionId,
      close: () => {
        const c = watcher.connection;
        if (!c.watchers.delete(watcher)) return;
        this.#maybeLinger(c);
      },
    };
  }

  /**
   * Tells `events` of changes to the whole server: windows, panes and sessions coming, going
   * or renamed (control-mode notifications, from every connection to this server), and the
   * values of `formats` (tmux format subscriptions, `refresh-client -B`, which tmux checks
   * once a second and reports when the value changed). A format must yield only safe
   * characters (ids, numbers): tmux writes a subscription's value raw, a newline included.
   * Throws {@link ControlUnavailable} when no connection can be had.
   */
  async listen(
    events: ServerEvents,
    formats: Readonly<Record<string, string>> = {},
  ): Promise<Listening> {
    this.#use();
    const connection = await this.#primaryConnection();
    const listener: Listener = { events, names: new Map(), connection };
    for (const [key, format] of Object.entries(formats)) {
      const name = `tmux-mcp-${++this.#subscriptionSeq}`;
      const result = await connection.exec(["refresh-client", "-B", `${name}::${format}`], {
        timeoutMs: 5_000,
      });
      if (result.code !== 0) {
        throw new ControlUnavailable(`tmux refused a format subscription: ${result.stderr.trim()}`);
      }
      listener.names.set(name, key);
    }
    connection.listeners.add(listener);
    return {
      close: () => {
        if (!connection.listeners.delete(listener) || connection.closed) return;
        for (const name of listener.names.keys()) {
          connection.exec(["refresh-client", "-B", name], { timeoutMs: 5_000 }).catch(() => {});
        }
      },
    };
  }

  /** Hands a connection's server-wide notifications to the listeners they concern. */
  #events(connection: Connection, { topology, clients, subscriptions }: Notifications): void {
    if (clients || subscriptions.get(EXIT_UNATTACHED_SUBSCRIPTION) === "1") {
      this.#reviewPlacement();
    }
    const call = (f: () => void) => {
      try {
        f();
      } catch {
        // A listener's failure is its own.
      }
    };
    if (topology) {
      for (const c of this.#connections) {
        for (const l of [...c.listeners]) call(() => l.events.topology?.());
      }
    }
    for (const [name, value] of subscriptions) {
      for (const l of [...connection.listeners]) {
        const key = l.names.get(name);
        if (key !== undefined) call(() => l.events.subscription?.(key, value));
      }
    }
  }

  /** Closes every connection of this server. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    await Promise.allSettled([...this.#opening.values()]);
    await this.#closeAll();
  }

  /** Closes every connection (their watchers and listeners are told they lost the feed). */
  async #closeAll(): Promise<void> {
    // The last to leave puts the person's sessions back in the order it found them.
    const live = [...this.#connections].filter((c) => !c.closed);
    const last = live.find((c) => c === this.#primary) ?? live.at(-1);
    await Promise.allSettled(live.filter((c) => c !== last).map((c) => c.close()));
    if (last) {
      await this.#restoreRecency(last);
      await last.close();
    }
    await Promise.allSettled([...this.#connections].map((c) => c.close()));
    this.#connections.clear();
    this.#primary = null;
  }

  async #primaryConnection(): Promise<Connection> {
    if (this.#primary && !this.#primary.closed) return this.#primary;
    if (this.#closed) throw new ControlUnavailable("shutting down");
    // Concurrent first calls share one attempt: otherwise each would open a client of its own.
    if (!this.#acquiring) {
      this.#acquiring = this.#acquirePrimary().finally(() => this.#acquiring = null);
    }
    return await this.#acquiring;
  }

  async #acquirePrimary(): Promise<Connection> {
    // Never one opened for watches: it receives every byte its session's panes print.
    const open = [...this.#connections].find((c) => !c.closed && !c.leaving && !c.forWatches);
    if (open) {
      await open.ready;
      this.#primary = open;
      return open;
    }
    this.#requireAttaching();
    // Without a session to attach to, every call would first ask tmux again: ask at most
    // once a second and spawn meanwhile.
    if (performance.now() < this.#noSessionUntil) {
      throw new ControlUnavailable("no session a control client could attach to");
    }
    const standings = await this.#standings();
    if (holdsOpen(standings, this.connections)) {
      this.#noSessionUntil = performance.now() + NO_SESSION_BACKOFF_MS;
    }
    this.#requireOthers(standings);
    const target = sessionToJoin(standings);
    if (target === undefined) {
      this.#noSessionUntil = performance.now() + NO_SESSION_BACKOFF_MS;
      throw new ControlUnavailable("no session a control client could attach to");
    }
    this.#primary = await this.#open(target, standings, false);
    this.#hooks?.opened();
    return this.#primary;
  }

  /**
   * Refuses to attach where our client would be what keeps the server alive: `exit-unattached`
   * is on and nobody else is attached (see {@link holdsOpen}).
   */
  #requireOthers(standings: readonly SessionStanding[]): void {
    if (holdsOpen(standings, this.connections)) {
      throw new ControlUnavailable(
        "exit-unattached is on and no other client is attached: a control client would keep " +
          "the server alive",
      );
    }
  }

  /** Refuses while control clients are not tried (one failed to attach lately). */
  #requireAttaching(): void {
    if (performance.now() < this.#attachFailedUntil) {
      throw new ControlUnavailable(
        "a control client failed to attach lately (it did not attach in time, or broke)",
      );
    }
  }

  /** Every session with its last use, clients and destroy-unattached (see recency.ts). */
  async #standings(): Promise<SessionStanding[]> {
    if (this.#closed || this.#runner.closed) throw new ControlUnavailable("shutting down");
    const result = await this.#runner.exec(this.#address, [
      "list-sessions",
      "-F",
      STANDING_FORMAT,
    ]);
    if (result.code !== 0) return [];
    return parseStandings(new TextDecoder().decode(result.stdout));
  }

  /**
   * Opens a connection to `sessionId`, whose last use `standings` gave (see recency.ts): one
   * to carry watches, or one for commands.
   */
  #open(
    sessionId: string,
    standings: readonly SessionStanding[],
    forWatches: boolean,
  ): Promise<Connection> {
    const key = `${forWatches ? "w" : "c"}${sessionId}`;
    const opening = this.#opening.get(key);
    if (opening) return opening;
    const before = standings.find((s) => s.id === sessionId)?.activity;
    const promise = this.#inTurn(() => this.#connect(sessionId, before, forWatches))
      .finally(() => this.#opening.delete(key));
    this.#opening.set(key, promise);
    return promise;
  }

  /** Runs `step` (a control client starting or ending) once every earlier one is over. */
  #inTurn<T>(step: () => Promise<T>): Promise<T> {
    return this.#turns.take(async () => {
      if (this.#ending.size > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          Promise.allSettled(this.#ending),
          new Promise((r) => timer = setTimeout(r, ENDING_WAIT_MS)),
        ]);
        clearTimeout(timer);
      }
      return await step();
    });
  }

  /**
   * Learns the new client's name and what its attach did to its session's last use. Without
   * an answer nothing is recorded (the session is then never moved back on top for it).
   *
   * In the same round trip, the client subscribes to `exit-unattached`: turned on while only
   * our clients are attached, tmux would exit at once without us, so ours must leave then
   * (#leaveIfLast), not only when a client detaches; and tmux tells no option's change. And it
   * lists tmux's running jobs, returned for {@link ServerControl.#leaveHookModes} (null when
   * unknown).
   */
  async #noteAttach(
    connection: Connection,
    before: number | undefined,
  ): Promise<Set<string> | null> {
    try {
      const result = await connection.exec(
        [
          "display-message",
          "-p",
          "#{client_name}\t#{session_id}\t#{session_activity}\t#{pid}",
          ";",
          "refresh-client",
          "-B",
          `${EXIT_UNATTACHED_SUBSCRIPTION}::#{exit-unattached}`,
          ";",
          "show-messages",
          "-J",
        ],
        { timeoutMs: 5_000 },
      );
      const ends = result.ends ?? [];
      const jobs = ends.length === 3 && ends.every((end) => end >= 0)
        ? jobPids(result.stdout.subarray(ends[1], ends[2]))
        : null;
      const [name, sessionId, activity, pid] = new TextDecoder().decode(result.stdout)
        .split("\n")[0].split("\t");
      // The server it attached to, for commands meant for one server (ServerControl.exec).
      if (result.code === 0 && /^[1-9]\d*$/.test(pid ?? "")) {
        connection.serverPid ??= Promise.resolve(Number(pid));
      }
      if (result.code !== 0 || !/^\d+$/.test(activity ?? "")) return jobs;
      connection.clientName = name;
      if (before === undefined || sessionId !== connection.sessionId) return jobs;
      this.#touches.set(sessionId, touched(this.#touches.get(sessionId), before, +activity));
      return jobs;
    } catch {
      // Lost meanwhile: whoever uses it next finds out.
      return null;
    }
  }

  /**
   * Takes back what a person's hooks did to the panes of the session `connection` joined, as
   * it attached. `client-attached`, `client-session-changed` and `pane-focus-in` hooks run for
   * our client too, and tmux 3.3a shows a hook's `run-shell` output in view-mode on the
   * session's active pane: "welcome back", meant for a person attaching, would cover what a
   * person there is looking at, and every input tool would refuse the pane (a pane in a mode).
   *
   * tmux lists a job until it has ended and its output is placed, and tells every control
   * client of a pane's change of mode before it runs the next command of theirs: so once the
   * jobs running just after the attach are over (waited for {@link HOOK_JOBS_WAIT_MS} at most),
   * every mode a hook of the attach put on a pane is among {@link Connection.modeChanges}
   * (`listed`: the jobs #noteAttach saw running, or null to ask). Of
   * those, a pane of the joined session in view-mode now is left, in one step in tmux that
   * checks the mode (`send-keys -X cancel` leaves the topmost mode only: a copy mode of the
   * person's beneath stays). A pane already in view-mode before the attach, the person's, is
   * never touched: output added to it changes no mode. Best effort: never throws.
   */
  async #leaveHookModes(connection: Connection, listed: Set<string> | null): Promise<void> {
    const options = { timeoutMs: 2_000 };
    try {
      const until = performance.now() + limitsOf(this.#runner).hookJobsWaitMs;
      const jobs = async () =>
        jobPids((await connection.exec(["show-messages", "-J"], options)).stdout);
      let running = listed ?? await jobs();
      while (running.size > 0 && performance.now() < until && !this.#closed) {
        await new Promise((resolve) => setTimeout(resolve, HOOK_JOBS_POLL_MS));
        const now = await jobs();
        running = new Set([...running].filter((pid) => now.has(pid)));
      }
      const changed = [...connection.modeChanges ?? []].filter((id) => /^%\d+$/.test(id));
      if (changed.length === 0 || connection.closed) return;
      const panes = await connection.exec(
        ["list-panes", "-s", "-t", connection.sessionId, "-F", "#{pane_id}"],
        options,
      );
      if (panes.code !== 0) return;
      const here = new Set(new TextDecoder().decode(panes.stdout).split("\n"));
      for (const paneId of changed.filter((id) => here.has(id))) {
        await connection.exec([
          "if-shell",
          "-F",
          "-t",
          paneId,
          "#{==:#{pane_mode},view-mode}",
          `send-keys -X -t ${paneId} cancel`,
        ], options);
      }
    } catch {
      // Lost meanwhile: whoever uses it next finds out.
    } finally {
      connection.modeChanges = null;
    }
  }

  /**
   * Before `connection` leaves: if a session our clients used now stands where a person's
   * plain `tmux attach` would pick it, though another was more recently used before we came,
   * the client moves to that one for a moment (see recency.ts). Best effort: never throws.
   */
  async #restoreRecency(connection: Connection): Promise<void> {
    if (this.#touches.size === 0 || connection.closed || connection.clientName === "") return;
    try {
      const seating = await this.#seating(connection);
      if (seating === null) return;
      const { standings, clients } = seating;
      for (const id of this.#touches.keys()) {
        if (!standings.some((s) => s.id === id)) this.#touches.delete(id);
      }
      const others = new Map<string, number>();
      for (const { sessionId, name } of clients) {
        if (name !== connection.clientName) others.set(sessionId, (others.get(sessionId) ?? 0) + 1);
      }
      const target = sessionToRestore(standings, others, this.#touches);
      if (target === null) return;
      // Our own move, on its way out: not one tmux made (#leaveMoved).
      connection.leaving = true;
      // -E: as when attaching, this process's environment stays out of the session.
      await this.#runner.inStructureLane(
        this.#address,
        () => connection.exec(["switch-client", "-E", "-t", target], { timeoutMs: 2_000 }),
      );
    } catch {
      // The connection or the server went away: nothing left to put back.
    }
  }

  /**
   * Looks again where the primary client sits, after another client attached, detached or
   * moved: once someone has used its session since our client joined it and nobody else is
   * attached there any more (a person worked there, then left), a plain `tmux attach` should
   * find that session free. The client then leaves it, a moment after its last answer; the next
   * call opens a new one elsewhere (see recency.ts). A client carrying format subscriptions
   * stays.
   */
  #reviewPlacement(): void {
    if (this.#reviewing) {
      this.#reviewAgain = true;
      return;
    }
    this.#reviewing = true;
    (async () => {
      do {
        this.#reviewAgain = false;
        if (await this.#leaveIfLast()) continue;
        await this.#leaveIfReclaimed();
      } while (this.#reviewAgain && !this.#closed);
    })().finally(() => this.#reviewing = false);
  }

  /**
   * After a client left or moved, or `exit-unattached` was turned on: when the server exits
   * once no client is attached (`exit-unattached`) and every client still attached is ours,
   * all of ours leave at once, watchers told they lost the feed (they poll from then on), so
   * the server exits as it would without us. Returns whether they left.
   */
  async #leaveIfLast(): Promise<boolean> {
    const connection = [...this.#connections].find((c) => !c.closed && c.clientName !== "");
    if (!connection) return false;
    try {
      const seating = await this.#seating(connection);
      if (seating === null || !seating.standings.some((s) => s.exitUnattached)) return false;
      const ours = new Set([...this.#connections].map((c) => c.clientName));
      if (seating.clients.some((c) => !ours.has(c.name))) return false;
      this.#noSessionUntil = performance.now() + NO_SESSION_BACKOFF_MS;
      await this.#inTurn(() => this.#closeAll());
      return true;
    } catch {
      // Lost meanwhile: gone anyway.
      return false;
    }
  }

  async #leaveIfReclaimed(): Promise<void> {
    const connection = this.#primary;
    if (!connection || connection.closed || connection.listeners.size > 0) return;
    const touch = this.#touches.get(connection.sessionId);
    if (!touch) return;
    try {
      const seating = await this.#seating(connection);
      if (seating === null || this.#primary !== connection) return;
      const here = seating.standings.find((s) => s.id === connection.sessionId);
      if (!here || here.activity <= touch.bumped) return;
      // Only where a new client can go that nobody is attached to: elsewhere it would be back.
      const free = (s: SessionStanding) => s.clients === 0 && !s.destroyUnattached;
      if (!seating.standings.some((s) => s.id !== here.id && free(s))) return;
      if (this.#othersIn(here.id, seating.clients)) return;
      connection.leaving = true;
      this.#primary = null;
      this.#maybeLinger(connection);
    } catch {
      // Lost meanwhile: it is gone anyway.
    }
  }

  /** Whether a client not of this process is attached to `connection`'s session. */
  async #sessionShared(connection: Connection): Promise<boolean> {
    try {
      const seating = await this.#seating(connection);
      return seating !== null && this.#othersIn(connection.sessionId, seating.clients);
    } catch {
      return false;
    }
  }

  /** Every session's standing and every client's session, read over `connection`. */
  async #seating(connection: Connection): Promise<Seating | null> {
    const options = { timeoutMs: 2_000 };
    const [sessions, clients] = await Promise.all([
      connection.exec(["list-sessions", "-F", STANDING_FORMAT], options),
      connection.exec(["list-clients", "-F", "#{session_id}\t#{client_name}"], options),
    ]);
    if (sessions.code !== 0 || clients.code !== 0) return null;
    return {
      standings: parseStandings(new TextDecoder().decode(sessions.stdout)),
      clients: new TextDecoder().decode(clients.stdout).split("\n")
        .map((line) => line.split("\t"))
        .filter((fields) => fields.length === 2)
        .map(([sessionId, name]) => ({ sessionId, name })),
    };
  }

  /** Whether a client not of this process is attached to session `sessionId`. */
  #othersIn(sessionId: string, clients: Seating["clients"]): boolean {
    const ours = new Set([...this.#connections].map((c) => c.clientName));
    return clients.some((c) => c.sessionId === sessionId && !ours.has(c.name));
  }

  /** Remembers a connection's client as ending until it has exited. */
  #end(connection: Connection): void {
    const exited = connection.done.catch(() => {});
    this.#ending.add(exited);
    exited.then(() => this.#ending.delete(exited));
  }

  async #connect(
    sessionId: string,
    before: number | undefined,
    forWatches: boolean,
  ): Promise<Connection> {
    if (this.#closed || this.#runner.closed) throw new ControlUnavailable("shutting down");
    this.#requireAttaching();
    if (this.connections >= MAX_CONNECTIONS) {
      throw new ControlUnavailable(`already ${MAX_CONNECTIONS} control clients on this server`);
    }
    let child: PersistentChild;
    try {
      // -E: attaching would apply update-environment, putting this process's DISPLAY,
      // SSH_AUTH_SOCK and the like (or their absence) into the person's session.
      // no-output (commands only): tmux sends it no pane's output at all.
      child = await this.#runner.spawnPersistent(this.#address, [
        "-C",
        "attach-session",
        "-E",
        "-f",
        forWatches ? "ignore-size" : "ignore-size,no-output",
        "-t",
        sessionId,
      ]);
    } catch (error) {
      throw new ControlUnavailable(error instanceof Error ? error.message : String(error));
    }
    const connection = new Connection(
      child,
      (c) => this.#forget(c),
      (c) => this.#recheck(c),
      (c, n) => this.#events(c, n),
    );
    connection.forWatches = forWatches;
    this.#connections.add(connection);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    try {
      await Promise.race([
        connection.ready,
        new Promise((_, reject) => {
          timer = setTimeout(
            () => {
              timedOut = true;
              reject(
                new ControlUnavailable(
                  `tmux did not attach a control client within ${ATTACH_TIMEOUT_MS} ms`,
                ),
              );
            },
            ATTACH_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (error) {
      if (timedOut || connection.retired !== null) {
        this.#attachFailedUntil = performance.now() + ATTACH_BACKOFF_MS;
      }
      await connection.close();
      this.#connections.delete(connection);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    if (this.#closed) {
      await connection.close();
      throw new ControlUnavailable("shutting down");
    }
    await this.#leaveHookModes(connection, await this.#noteAttach(connection, before));
    if (connection.retired !== null) {
      // Broken before its handshake ended (it is gone already): as if it never attached.
      this.#attachFailedUntil = performance.now() + ATTACH_BACKOFF_MS;
      throw new ControlUnavailable(
        `the control client broke as it attached: ${connection.retired}`,
      );
    }
    if (this.#down !== null) {
      const was = this.#down;
      this.#down = null;
      this.#report(
        was === "gone"
          ? { kind: "back", address: this.#address, message: "the tmux server is back" }
          : { kind: "regained", address: this.#address, message: "control connection regained" },
      );
    }
    return connection;
  }

  #forget(connection: Connection): void {
    this.#end(connection);
    this.#connections.delete(connection);
    if (this.#primary === connection) this.#primary = null;
    clearTimeout(connection.idleTimer);
    if (!connection.closing && !this.#closed && !this.#runner.closed) this.#lostOne();
    for (const listener of [...connection.listeners]) {
      connection.listeners.delete(listener);
      try {
        listener.events.lost?.("the control connection was lost");
      } catch {
        // The listener's own business.
      }
    }
    for (const watcher of [...connection.watchers]) {
      connection.watchers.delete(watcher);
      try {
        watcher.listener({ output: [], changed: true, lost: true });
      } catch {
        // The watcher's own business.
      }
    }
  }

  /**
   * After a structural change, a watched pane may have left the connection's session (its
   * window moved or unlinked, or the connection was moved to another session): such watchers
   * are told they lost the feed, so they reattach where the pane now is.
   */
  #recheck(connection: Connection): void {
    if (connection.closed) return;
    if (connection.moved && !connection.leaving) return this.#leaveMoved(connection);
    if (connection.watchers.size === 0) return;
    connection.exec(
      ["list-panes", "-s", "-t", connection.sessionId, "-F", "#{pane_id}"],
      { timeoutMs: 5_000 },
    ).then((result) => {
      const present = new Set(new TextDecoder().decode(result.stdout).split("\n"));
      for (const watcher of [...connection.watchers]) {
        if (result.code === 0 && present.has(watcher.paneId)) continue;
        connection.watchers.delete(watcher);
        watcher.listener({ output: [], changed: true, lost: true });
      }
      this.#maybeLinger(connection);
    }).catch(() => {
      // The connection went away meanwhile; #forget told the watchers.
    });
  }

  /**
   * tmux moved `connection` into a session it did not choose: with `detach-on-destroy off`,
   * killing its session sends its clients to the most recently used other one, typically where
   * a person works. There our client would be the newest of the session, the one tmux hands a
   * target-less `switch-client` or `display-message` run from the person's pane (recency.ts),
   * and the rule that keeps a client beside a person applies only where it joined to follow a
   * pane. So it leaves, a moment after its last answer: its watchers are told they lost the
   * feed (they attach again where their pane is), its listeners when it has gone, and the next
   * call opens a client where nobody is, when there is such a session.
   */
  #leaveMoved(connection: Connection): void {
    connection.leaving = true;
    if (this.#primary === connection) this.#primary = null;
    for (const watcher of [...connection.watchers]) {
      connection.watchers.delete(watcher);
      try {
        watcher.listener({ output: [], changed: true, lost: true });
      } catch {
        // The watcher's own business.
      }
    }
    this.#maybeLinger(connection);
  }

  /**
   * A connection ended that we did not close: reported once until one connects again, as the
   * server gone (it answered that nothing runs on its socket) or the connection lost. A check
   * that got no answer at all (an SSH connection frozen or dropped, a server that does not
   * answer in time) proves nothing gone: that is the connection lost, said as such.
   */
  #lostOne(): void {
    if (this.#down !== null) return;
    this.#down = "lost";
    const host = this.#address.host;
    this.#runner.exec(this.#address, ["display-message", "-p", "#{pid}"], { timeoutMs: 5_000 })
      .then(
        (r): "running" | "gone" | "silent" => r.code === 0 ? "running" : "gone",
        (error: unknown) =>
          error instanceof TmuxError && (error.kind === "unreachable" || error.kind === "timeout")
            ? "silent"
            : "gone",
      )
      .then((state) => {
        if (this.#down !== "lost") return;
        if (state === "gone") this.#down = "gone";
        const message = state === "running"
          ? "control connection lost; the next use connects again"
          : state === "silent"
          ? (host === undefined
            ? "control connection lost; the tmux server does not answer (it may be stopped)"
            : `control connection lost; host ${JSON.stringify(host)} does not answer over SSH ` +
              "(the connection is down or frozen), so whether its tmux server runs is unknown")
          : "the tmux server is gone";
        this.#report(
          state === "gone"
            ? { kind: "gone", address: this.#address, message }
            : { kind: "lost", address: this.#address, message },
        );
      });
  }

  /**
   * Closes `connection` once it has been idle a while: {@link LINGER_MS} after its last watcher
   * left, {@link LEAVING_MS} after its last answer when it is leaving.
   */
  #maybeLinger(connection: Connection): void {
    if (connection.watchers.size > 0 || connection === this.#primary || connection.closed) return;
    clearTimeout(connection.idleTimer);
    connection.idleTimer = setTimeout(async () => {
      const idle = () =>
        connection.watchers.size === 0 && connection !== this.#primary && !connection.closed;
      if (!idle()) return;
      // Answers still on their way: look again later.
      if (connection.pending > 0) return this.#maybeLinger(connection);
      // Someone else is attached to the session it joined (a person, say): leaving changes
      // nothing for a plain attach, and staying keeps our client older than their next key,
      // where a new one for the next wait would be newer (tmux gives client-less commands to
      // the newest client of the session; see recency.ts). It leaves once they have. A client
      // tmux moved there is leaving already (#leaveMoved).
      if (!connection.leaving && await this.#sessionShared(connection)) {
        if (idle()) this.#maybeLinger(connection);
        return;
      }
      if (!idle()) return;
      this.#connections.delete(connection);
      this.#inTurn(async () => {
        await this.#restoreRecency(connection);
        this.#end(connection);
        await connection.close();
      }).catch(() => {});
    }, connection.leaving ? LEAVING_MS : LINGER_MS);
  }
}

/** The pid of the server `connection` is attached to, asked over it; null if it did not say. */
async function pidOf(connection: Connection): Promise<number | null> {
  try {
    const result = await connection.exec(["display-message", "-p", "#{pid}"], {
      timeoutMs: 5_000,
    });
    const pid = Number(new TextDecoder().decode(result.stdout).trim());
    return result.code === 0 && Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * The pids of the jobs `show-messages -J` lists (`Job 3: <command> [fd=9, pid=123, status=0]`):
 * the command is the person's, any text, so only the bracket that ends a line counts.
 */
function jobPids(stdout: Uint8Array): Set<string> {
  const pids = new Set<string>();
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    const m = /\[fd=-?\d+, pid=(\d+), status=-?\d+\]$/.exec(line);
    if (m) pids.add(m[1]);
  }
  return pids;
}

/**
 * A timeout on an SSH host, said as what it is: killing our ssh does not stop a command the
 * host's tmux has not run yet (a stuck remote server keeps it), so it may still run there.
 */
export function remoteTimeout(error: unknown, address: ServerAddress): unknown {
  if (!(error instanceof TmuxError) || error.kind !== "timeout" || address.host === undefined) {
    return error;
  }
  return new TmuxError(
    "timeout",
    `${error.message.replace(/\.$/, "")} (host ${JSON.stringify(address.host)}: the command ` +
      "may still run there later, once its tmux answers again).",
    error.stderr,
    error.stdout,
  );
}

const servers = new WeakMap<TmuxRunner, Map<string, ServerControl>>();
const observers = new WeakMap<TmuxRunner, Set<(event: ControlEvent) => void>>();

/**
 * Calls `observer` with every {@link ControlEvent} of the control channels `runner` carries
 * (any tmux server); returns a function that stops it.
 */
export function observeControl(
  runner: TmuxRunner,
  observer: (event: ControlEvent) => void,
): () => void {
  let set = observers.get(runner);
  if (!set) observers.set(runner, set = new Set());
  set.add(observer);
  return () => set.delete(observer);
}

/**
 * The control connections of the server at `address`, one set per runner (so one per MCP
 * server process); closed when the runner closes.
 */
export function controlFor(runner: TmuxRunner, address: ServerAddress): ServerControl {
  let byAddress = servers.get(runner);
  if (!byAddress) {
    const map = new Map<string, ServerControl>();
    byAddress = map;
    servers.set(runner, map);
    runner.onClose(async () => {
      await Promise.allSettled([...map.values()].map((s) => s.close()));
      map.clear();
      await Promise.allSettled(retiring.get(runner)?.values() ?? []);
    });
  }
  const map = byAddress;
  const key = addressKey(address);
  let control = map.get(key);
  if (!control) {
    let ending = retiring.get(runner);
    if (!ending) retiring.set(runner, ending = new Map());
    const endings = ending;
    const made: ServerControl = new ServerControl(runner, address, {
      report: (event) => {
        for (const observer of [...observers.get(runner) ?? []]) {
          try {
            observer(event);
          } catch {
            // An observer's failure is its own.
          }
        }
      },
      opened: () => boundServers(runner, map),
      retired: (gone) => {
        if (map.get(key) === made) map.delete(key);
        endings.set(key, gone);
        gone.then(() => {
          if (endings.get(key) === gone) endings.delete(key);
        });
      },
      ending: endings.get(key),
    });
    control = made;
    map.set(key, control);
  }
  return control;
}

/**
 * A tmux process started for `address` found the server with `pid` on its socket: control
 * clients attached to another server are let go ({@link ServerControl.onSocket}). Returns the
 * pid they were attached to when they were, else null. Makes no record where there is none.
 */
export async function noteSocketServer(
  runner: TmuxRunner,
  address: ServerAddress,
  pid: number,
): Promise<number | null> {
  return await servers.get(runner)?.get(addressKey(address))?.onSocket(pid) ?? null;
}

/**
 * The pid of the server on `address`'s socket now, asked by a tmux process of its own, which
 * reaches whatever server the socket's path leads to (the control clients may be attached to
 * one that lost its socket file); null when none answers there. Control clients attached to
 * another server are let go ({@link noteSocketServer}). Costs a process start (a few
 * milliseconds): for reports on the server itself, never for every call.
 */
export async function socketServerPid(
  runner: TmuxRunner,
  address: ServerAddress,
  options: RunOptions = {},
): Promise<number | null> {
  const result = await runner.exec(address, ["display-message", "-p", "#{pid}"], options);
  const stderr = result.stderr.trim();
  if (result.code !== 0) {
    const kind = classifyStderr(stderr);
    if (kind === "no-server") return null;
    throw new TmuxError(kind, stderr.split("\n")[0] || "tmux failed", stderr);
  }
  const pid = Number(new TextDecoder().decode(result.stdout).trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new TmuxError("failed", "tmux printed no server pid", stderr);
  }
  await noteSocketServer(runner, address, pid);
  return pid;
}

/** Per runner, the clients of retired server records still ending, by address key. */
const retiring = new WeakMap<TmuxRunner, Map<string, Promise<void>>>();

/**
 * Beyond {@link ControlLimits} `maxServers` servers other than the home one with control
 * clients, the least recently used that nothing needs lets its clients go.
 */
function boundServers(runner: TmuxRunner, map: Map<string, ServerControl>): void {
  const { maxServers } = limitsOf(runner);
  const live = [...map.values()].filter((s) => !s.home && s.connections > 0)
    .sort((a, b) => a.lastUsed - b.lastUsed);
  let over = live.length - maxServers;
  for (const server of live) {
    if (over <= 0) break;
    if (server.busy) continue;
    server.retire();
    over--;
  }
}

/** {@link RunOptions} for a command that travels over the control channel when it can. */
export interface ViaOptions extends RunOptions {
  /**
   * The pid of the server the caller read (null: none read). Should the command start tmux
   * instead, it runs only if that is the server there: a tmux process goes wherever the
   * socket's path leads, which after the socket file was replaced is another server than the
   * control clients reach.
   */
  readonly serverPid?: number | null;
  /**
   * When that server started (`#{start_time}`), checked with its pid when given: a server
   * restarted in a pid namespace of its own (a container) has the same pid again.
   */
  readonly serverStart?: number | null;
}

/**
 * Runs a command that must not run twice (typing, pasting) over the control channel when it
 * can carry it, else by starting tmux. If the connection is lost after the command was sent,
 * it is not repeated: that is reported as a failure, since tmux may or may not have run it.
 */
export function execOnce(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: ViaOptions = {},
): Promise<ControlResult> {
  return execVia(runner, address, args, options, false);
}

/**
 * Runs a read-only or idempotent command over the control channel when it can carry it,
 * else by starting tmux: the same result either way. (A command the channel lost half way
 * is run again by spawning, hence: only commands that may safely run twice.)
 */
export function execFast(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: ViaOptions = {},
): Promise<ControlResult> {
  return execVia(runner, address, args, options, true);
}

/**
 * Runs a read-only command over the control channel only, for a caller that needs what only
 * the channel tells ({@link ControlResult.ends}: where each command's output ends). Null when
 * the channel cannot carry it, or lost it on the way: the caller then starts tmux its own way.
 */
export async function execOverControl(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: RunOptions = {},
): Promise<ControlResult | null> {
  if (runner.closed || !runner.control || changesStructure(args)) return null;
  try {
    return await controlFor(runner, address).exec(args, options);
  } catch (error) {
    if (error instanceof ControlUnavailable) return null;
    throw error;
  }
}

async function execVia(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: ViaOptions,
  mayRepeat: boolean,
): Promise<ControlResult> {
  // One at a time with every other structural command (structure.ts): answered, over the
  // control connection or by a tmux process of its own, before the next is sent.
  if (!options.inStructureLane && changesStructure(args)) {
    return await runner.inStructureLane(
      address,
      () => execVia(runner, address, args, { ...options, inStructureLane: true }, mayRepeat),
      options.signal,
    );
  }
  if (!runner.closed && runner.control) {
    try {
      return await controlFor(runner, address).exec(args, options);
    } catch (error) {
      if (!(error instanceof ControlUnavailable)) throw error;
      if (error.sent && !mayRepeat) {
        throw new TmuxError(
          "failed",
          "The connection to tmux was lost while the command was on its way; it may or may not have run.",
        );
      }
    }
  }
  return await execSpawned(runner, address, args, options);
}

/**
 * Runs `args` in a tmux process of its own; with `serverPid`, only if the server the socket
 * leads to is that one ({@link execOnServer}): a tmux process goes wherever the socket's path
 * leads, which after the socket file was replaced is another server than the caller read.
 */
export async function execSpawned(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: ViaOptions = {},
): Promise<ControlResult> {
  const pid = options.serverPid ?? null;
  return pid === null
    ? await runner.exec(address, args, options)
    : await execOnServer(runner, address, args, options, pid, options.serverStart ?? null);
}

/**
 * Starts tmux for `args`, run only if the server there is the one with `pid` (and start time
 * `start`, when known), checked by tmux in the same step (`if-shell -F`). Another server there
 * (the socket replaced since the caller read it, or the server restarted) runs nothing:
 * control clients attached to another server than that one are let go
 * ({@link noteSocketServer}) and the call fails, saying so.
 */
async function execOnServer(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: RunOptions,
  pid: number,
  start: number | null,
): Promise<ControlResult> {
  const marker = `tmux-mcp-other-server-${randomHex(8)}:`;
  // As an if-shell branch: each argument quoted, a newline travelling as "\n".
  const nested = argvCommands(args).map((c) => c.map(quoteNested).join(" ")).join(" ; ");
  const result = await runner.exec(address, [
    "if-shell",
    "-F",
    start === null ? `#{==:#{pid},${pid}}` : onServerFormat({ pid, startTime: start }),
    nested,
    `display-message -p '${marker}#{pid}'`,
  ], options);
  const out = new TextDecoder().decode(result.stdout);
  const at = out.indexOf(marker);
  if (at === -1) return result;
  const now = Number(/^\d*/.exec(out.slice(at + marker.length))![0]);
  await noteSocketServer(runner, address, now).catch(() => {});
  throw new TmuxError(
    "failed",
    `The tmux server on this socket changed since this call read it (${
      now === pid ? `restarted with the same pid, ${pid}` : `pid ${pid} then, ${now} now`
    }); nothing was done. Call again: it reads the server there now, where the ids read ` +
      "before may name other panes, windows and sessions.",
  );
}
