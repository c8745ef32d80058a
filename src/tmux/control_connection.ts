/**
 * One control connection: a `tmux -C attach` child, the protocol spoken over it
 * (control_protocol.ts), and the pane watches and server listeners it carries. Which
 * connections a server has, and when they come and go, is control_server.ts's business.
 *
 * @module
 */

import { warn } from "../diagnostics.ts";
import { answerBlocks, controlLine } from "./command_line.ts";
import {
  ControlProtocol,
  type ControlResult,
  ControlUnavailable,
  type PendingCall,
} from "./control_protocol.ts";
import type { Notifications } from "./control_notifications.ts";
import type { PersistentChild, RunOptions } from "./run.ts";
import { cancelledCall, TmuxError } from "./tmux_error.ts";
import { ENDING_WAIT_MS } from "./control_limits.ts";
import { leaveAsDetach, leaveLine } from "./control_leave.ts";
import { losePausedPanes } from "./control_feeds.ts";

/** What a watcher of one pane is told, once per chunk tmux sent. */
export interface WatchBatch {
  /** Bytes the pane wrote, decoded from `%output`, in order. */
  readonly output: Uint8Array[];
  /** Windows, panes or sessions changed: the pane may have died, moved or gone. */
  readonly changed: boolean;
  /** The connection is gone: output may have been missed and this watch has ended. */
  readonly lost: boolean;
  /**
   * With `lost`: given up on this server's own account (the client leaves a session windows
   * moved out of, or the pane left the client's session), not cut from outside (the client
   * detached or killed, the connection lost). Either way output may have gone unheard.
   */
  readonly left?: boolean;
}

/** Receives a pane's batches. */
export type WatchListener = (batch: WatchBatch) => void;

/** A live watch on one pane; close it when done. */
export interface Watch {
  /** The session the carrying connection is attached to. */
  readonly sessionId: string;
  /** Stops delivery. */
  close(): void;
  /**
   * Resolves once every `%output` of the pane tmux had queued for this watch's client when
   * asked has been delivered: a command sent over the same client is answered, and tmux writes
   * a client's output and its answers in the order it queued them. Output another client shows
   * first (a read's rows) is queued to every control client as tmux reads it from the pane,
   * before it is drawn. Resolves at once for a watch closed or lost (it was told).
   */
  sync(signal?: AbortSignal): Promise<void>;
}

/** A pane's watch as the connection carrying it holds it. */
export interface Watcher {
  readonly paneId: string;
  readonly listener: WatchListener;
  connection: Connection;
  /** Told the connection once the watch is let go (it may then linger and leave). */
  readonly closed?: (connection: Connection) => void;
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

/** A server listener as its connection holds it, with its format subscriptions. */
export interface Listener {
  readonly events: ServerEvents;
  /** tmux's subscription name → the listener's key. */
  readonly names: Map<string, string>;
  readonly connection: Connection;
}

const encoder = new TextEncoder();

/** How long a retired client may take to leave by itself before it is told to stop. */
const RETIRE_GRACE_MS = 2_000;

/** Bytes a connection reads from tmux at a time. */
const READ_CHUNK_BYTES = 64 * 1024;

/** How long tmux may take to continue a paused pane ({@link Connection}'s `#resume`). */
const CONTINUE_TIMEOUT_MS = 5_000;

/** One `tmux -C attach` child and the protocol spoken over it. */
export class Connection {
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
  /**
   * The window of its session its format subscriptions hang on (`@N`), "" until known, and
   * those subscriptions, tmux's name → format (control_feeds.ts's subscribe).
   */
  anchor = "";
  readonly subscriptions = new Map<string, string>();
  /** Set when we close it ourselves: its end is no loss to report. */
  closing = false;
  /**
   * Whether it was opened to carry watches (receiving `%output`); otherwise it carries
   * commands and attached with `no-output`. Fixed for its life.
   */
  forWatches = false;
  /**
   * The pid of the tmux server it is attached to: noted as it attached, else asked over itself
   * the first time it is needed (see {@link ServerControl.onSocket} and
   * {@link ServerControl.exec}); null when it did not say.
   */
  serverPid: Promise<number | null> | null = null;
  /**
   * How many `%session-window-changed` notices tmux wrote to it since it attached, by session
   * id: the notices tmux still owes it are counted against these (owed_notices.ts).
   */
  readonly windowNotices = new Map<string, number>();
  /** Called once notices were counted, and once it is lost (owed_notices.ts). */
  readonly noticeListeners = new Set<() => void>();
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
  /** Its leave as a detach ({@link #leave}), once asked. */
  #leaving: Promise<void> | null = null;
  /** Panes whose `:continue` is on its way, and whether another was asked meanwhile. */
  readonly #continuing = new Map<string, boolean>();

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
        // tmux writes to a control client only once its handshake is over (handshake_hold.ts).
        if (value.length > 0) this.#child.answered();
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
    if (sessionId !== null) {
      if (!this.#handshake && sessionId !== this.sessionId && !this.leaving) this.moved = true;
      this.sessionId = sessionId;
      if (this.#handshake) {
        this.#handshake = false;
        this.#readyResolve();
      }
    }
    if (notifications.windowChanges.size > 0) {
      for (const [id, count] of notifications.windowChanges) {
        this.windowNotices.set(id, (this.windowNotices.get(id) ?? 0) + count);
      }
      this.#noticed();
    }
    if (
      notifications.topology || notifications.clients || notifications.subscriptions.size > 0
    ) {
      this.#onEvents(this, notifications);
    }
    if (output.size > 0 || changed) {
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
    if (notifications.paused.size > 0) {
      // What came before the `%pause` was delivered above; the watchers of the pane are told of
      // the gap, and the pane is asked for again.
      losePausedPanes(this, notifications.paused);
      for (const paneId of notifications.paused) this.#resume(paneId);
    }
  }

  /**
   * Asks tmux for `paneId`'s output again after it paused it for this client (`%pause`):
   * attached with `pause-after` (control_attach.ts's spawnClient), a client for watches is cut
   * off a pane it fell a second behind on, else tmux would keep all the pane prints for it,
   * without limit when another client lets it read the pane at full speed. The pane is asked for
   * at once, as the `%pause` is read: everything tmux sent before it has been read, and the
   * watch goes on hearing the pane. tmux continues only a paused pane (control.ts's place resets
   * may have continued it already; this one then changes nothing). One at a time per pane: a
   * `%pause` read while one is on its way asks again once it was answered, so none is lost.
   */
  #resume(paneId: string): void {
    if (!/^%\d+$/.test(paneId) || this.closed) return;
    if (this.#continuing.has(paneId)) {
      this.#continuing.set(paneId, true);
      return;
    }
    this.#continuing.set(paneId, false);
    this.exec(["refresh-client", "-A", `${paneId}:continue`], { timeoutMs: CONTINUE_TIMEOUT_MS })
      .catch(() => {
        // Lost or retired meanwhile: its watchers were told, and watch again elsewhere.
      })
      .finally(() => {
        const again = this.#continuing.get(paneId);
        this.#continuing.delete(paneId);
        if (again) this.#resume(paneId);
      });
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
    void this.#end(async () => {
      await this.#leave();
      await this.#writer.close().catch(() => {});
    });
    this.#onLost(this);
    this.#noticed();
  }

  #noticed(): void {
    for (const listener of [...this.noticeListeners]) {
      try {
        listener();
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** Why it was retired (see {@link retire}), or null: a connection lost otherwise is not. */
  get retired(): string | null {
    return this.#retired;
  }

  /** Whether tmux has attached it and it is still in use. */
  get attached(): boolean {
    return !this.#handshake && !this.closed;
  }

  /** Commands sent and not yet answered. */
  get pending(): number {
    return this.#protocol.pending;
  }

  /** Sends one command line and collects its answer. */
  async exec(args: readonly string[], options: RunOptions): Promise<ControlResult> {
    const line = controlLine(args);
    await this.ready;
    // Never while a client of ours shakes hands with this server (handshake_hold.ts). Reads
    // too: a connection's commands must reach tmux in the order they were sent, and one that
    // skipped its turn would overtake those ahead of it.
    const over = await this.#child.act(options.signal);
    if (this.closed) {
      over();
      throw new ControlUnavailable("the control connection was lost");
    }
    const { promise, resolve } = Promise.withResolvers<ControlResult | Error>();
    let call: PendingCall;
    try {
      call = this.#protocol.send(line, resolve, options.answerBound, answerBlocks(args));
    } catch (error) {
      over();
      throw error;
    }
    const timeoutMs = options.timeoutMs ?? 10_000;
    const sentAt = performance.now();
    let cancelled = false;
    const onAbort = () => {
      cancelled = true;
      resolve(cancelledCall());
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    // Counted from when tmux came to it: from its sending, or from the last command tmux ended
    // when that came later (the commands sent before it, the server's own and other calls').
    // Time spent behind a queue tmux works through is not tmux stuck; a tmux that answers
    // nothing for that long is, whatever is queued (a hook holding the line, a stopped server).
    const expire = () => {
      const left = Math.max(sentAt, this.#protocol.answeredAt) + timeoutMs - performance.now();
      if (left > 0) {
        timer = setTimeout(expire, left);
        return;
      }
      call.settle?.(new TmuxError("timeout", `tmux did not answer within ${timeoutMs} ms.`));
      call.settle = null;
      // Whatever held it up holds up every call behind it too.
      this.retire(`a command did not answer within ${timeoutMs} ms`);
    };
    let timer = setTimeout(expire, timeoutMs);
    if (options.signal?.aborted) onAbort();
    try {
      const result = await promise;
      if (result instanceof Error) throw result;
      return result;
    } finally {
      over();
      options.signal?.removeEventListener("abort", onAbort);
      if (cancelled && call.settle !== null) {
        // tmux keeps a cancelled call's line, and every call sent after it waits behind it (a
        // person's hook holding it, say). Its answer, if it still comes, is verified like any
        // other and dropped; if it does not come in time, the connection is given up as it
        // would have been had nobody cancelled, and the calls behind it go elsewhere.
        call.settle = () => clearTimeout(timer);
      } else {
        call.settle = null;
        clearTimeout(timer);
      }
    }
  }

  /**
   * Ends the client: tmux detaches it (control_leave.ts), then its stdin is closed (tmux ends a
   * client there at the latest), and it is killed if it lingers.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.closed = true;
    clearTimeout(this.idleTimer);
    await this.#end(async () => {
      await this.#leave();
      const killTimer = setTimeout(() => this.#child.kill(), 500);
      await this.#writer.close().catch(() => {});
      await this.done;
      clearTimeout(killTimer);
    });
  }

  /**
   * Asks tmux to detach the client, once, and waits until it left (control_leave.ts's bound at
   * most): over the protocol while it holds, its answer then expected like any other's; as a
   * bare line once the connection was given up, whatever tmux answers being drained unread. A
   * client not yet named (its attach unfinished) is left to its end of file; one already gone
   * reads nothing, and its exit ends the wait at once.
   */
  #leave(): Promise<void> {
    return this.#leaving ??= (async () => {
      const line = leaveLine(this.clientName);
      if (line === null) return;
      await leaveAsDetach(async () => {
        if (this.#gone) await this.#writer.write(encoder.encode(`${line}\n`));
        else this.#protocol.send(line, () => {});
      }, this.#child.status);
    })();
  }

  /**
   * Runs `close`, which ends the client, as an act of ours on its server (handshake_hold.ts):
   * tmux tells every control client that an attached one detached, so it never begins while a
   * client of ours shakes hands, and counts until the client has exited (ENDING_WAIT_MS at
   * most: tmux may keep a client it owes output to).
   */
  async #end(close: () => Promise<unknown>): Promise<void> {
    const over = await this.#child.act(); // no signal: it only waits, never rejects
    const bound = setTimeout(over, ENDING_WAIT_MS);
    const exited = () => {
      clearTimeout(bound);
      over();
    };
    this.done.then(exited, exited);
    await close();
  }
}

/** The pid of the server `connection` is attached to, asked over it; null if it did not say. */
export async function pidOf(connection: Connection): Promise<number | null> {
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
