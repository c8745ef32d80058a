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
 * - take another tmux-mcp process's clients for "somebody else" (two MCP clients, each with
 *   its own tmux-mcp, on one server): each would then keep the other attached for ever, here
 *   and beside a person who left. Every client starts with `TERM` set to identity.ts's
 *   `OWN_TERM`, which tmux shows as `client_termname`, and a control client without a terminal
 *   so named is tmux-mcp's (`isOwnKind`): the rules here treat it as one of ours. A person's
 *   client, on a terminal whatever its name, and another program's still count as somebody;
 * - run a second command hidden in a value: every argument is single-quoted for tmux's command
 *   parser (see {@link controlLine}); a value that cannot travel on one line (a newline) makes
 *   the call fall back to starting a tmux process;
 * - leave a hook's output over a pane: a person's `client-attached`, `client-session-changed`
 *   and `pane-focus-in` hooks run for it too, and tmux shows a hook's `run-shell` output in
 *   view-mode on its session's active pane (the last used session's, once the client has
 *   left), often a pane a person looks at. Its handshake
 *   waits (briefly) for tmux's jobs to end and leaves each view-mode they brought
 *   (control_attach.ts's leaveHookModes). What such a hook prints with `display-message -p`
 *   comes to the client itself, outside any answer, and is dropped.
 *
 * What it cannot avoid (tmux 3.3a): attaching (or being moved) focuses the client, so the
 * active pane of its session's current window, when no client focused it yet, is sent a
 * focus-in (`ESC [ I`, to a program that asked for focus reports, whatever `focus-events`
 * says) and runs `pane-focus-in` hooks; as it leaves, that pane is sent a focus-out (`ESC [ O`)
 * when no other client focuses it, and `pane-focus-out` hooks run. No client flag
 * turns focus off, and a control client cannot send the focus-out key (`send-keys -K` came in
 * tmux 3.4). Nor can it keep a person's hooks from running as it attaches (a sound, a line in a
 * log), once per client.
 *
 * A server other than the one this process was started for (reached by a call's own socket)
 * keeps its clients only while used: its command client leaves after control_limits.ts's
 * {@link ControlLimits} `idleMs` without a call, and beyond `maxServers` such servers with a
 * client, the least recently used lets its go; the server's record goes with its last client.
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
 * What one server's clients share is control_clients.ts's, opening them (within their bounds,
 * and reporting them lost and back) control_opening.ts's, and when they leave
 * control_leaving.ts's. How a client is started and its handshake are control_attach.ts's,
 * the turns in which clients start and end control_turns.ts's, and the watches and listeners
 * they carry control_feeds.ts's.
 *
 * @module
 */

import { warn } from "../diagnostics.ts";
import { controlLine } from "./command_line.ts";
import { type ControlResult, ControlUnavailable } from "./control_protocol.ts";
import type { Notifications } from "./control_notifications.ts";
import { OwedNotices } from "./owed_notices.ts";
import { EXIT_UNATTACHED_SUBSCRIPTION } from "./control_attach.ts";
import { ServerClients } from "./control_clients.ts";
import {
  type Connection,
  type Listening,
  pidOf,
  type ServerEvents,
  type Watch,
  type WatchListener,
} from "./control_connection.ts";
import {
  addListener,
  addWatcher,
  loseListeners,
  loseWatchers,
  reanchor,
  tellListeners,
} from "./control_feeds.ts";
import type { ViaOptions } from "./control.ts";
import type { ControlEvent } from "./control_events.ts";
import { limitsOf } from "./control_limits.ts";
import { ClientLeaving } from "./control_leaving.ts";
import { ClientOpener } from "./control_opening.ts";
import type { TmuxRunner } from "./run.ts";
import { remoteTimeout } from "./remote_call.ts";
import { addressKey, type ServerAddress } from "./server_address.ts";
import { Gate } from "./server_turns.ts";

/**
 * Background commands (a wait's repeated reads and checks, RunOptions.background) a server's
 * control clients carry at once: a one-off call is then behind at most these in tmux's queue,
 * however many waits check their panes, as a tmux process is behind background reads in
 * server_turns.ts.
 */
const BACKGROUND_IN_FLIGHT = 2;

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

/** The control connections of one tmux server. */
export class ServerControl {
  readonly #runner: TmuxRunner;
  readonly #address: ServerAddress;
  /** Its clients, shared with their opening (control_opening.ts) and leaving. */
  readonly #clients: ServerClients;
  readonly #opener: ClientOpener;
  readonly #leaving: ClientLeaving;
  #acquiring: Promise<Connection> | null = null;
  #subscriptionSeq = 0;
  readonly #hooks: ServerHooks | null;
  /** The server this process was started for: its clients never leave for being idle. */
  readonly home: boolean;
  /** When it was last used (`performance.now()`): a call, a watch or a listener. */
  lastUsed = 0;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** The notices tmux still owes our clients (owed_notices.ts). */
  readonly #owed = new OwedNotices();
  /** Turns of the background commands in flight ({@link BACKGROUND_IN_FLIGHT}). */
  readonly #background = new Gate(BACKGROUND_IN_FLIGHT);

  /** Connections are opened lazily, on first use. */
  constructor(
    runner: TmuxRunner,
    address: ServerAddress,
    hooks: ServerHooks | null = null,
  ) {
    this.#runner = runner;
    this.#address = address;
    this.#hooks = hooks;
    this.#clients = new ServerClients(runner, address, hooks?.ending);
    this.#leaving = new ClientLeaving(this.#clients);
    this.#opener = new ClientOpener(this.#clients, {
      report: hooks?.report ?? (() => {}),
      opened: () => this.#hooks?.opened(),
      forget: (c) => this.#forget(c),
      recheck: (c) => this.#leaving.recheck(c),
      events: (c, n) => this.#events(c, n),
    });
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
      if (this.#clients.closed) return;
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
    if (this.#acquiring !== null || this.#opener.opening || this.#leaving.reviewing) return true;
    return [...this.#clients.connections].some((c) =>
      !c.closed && (c.watchers.size > 0 || c.listeners.size > 0 || c.pending > 0)
    );
  }

  /**
   * Lets every client go for good (idle, or one server too many): the set forgets this
   * record, and a later call makes a fresh one, whose first client waits until these are
   * gone. A call that still holds this record meanwhile starts tmux instead.
   */
  retire(): void {
    if (this.#clients.closed) return;
    this.#clients.closed = true;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    const ending = this.#clients.turns.inTurn(() => this.#leaving.closeAll()).catch(() => {});
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
    const live = [...this.#clients.connections].filter((c) => !c.closed);
    for (const c of live) c.serverPid ??= pidOf(c);
    const pids = await Promise.all(live.map((c) => c.serverPid));
    const other = pids.find((p) => p !== null && p !== pid) ?? null;
    if (other === null || this.#clients.closed) return null;
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

  /** Whether a client of ours is attached here for commands (no opening to wait for). */
  get attached(): boolean {
    return this.#clients.primary !== null && !this.#clients.primary.closed;
  }

  /** Live control clients (for tests and diagnostics). */
  get connections(): number {
    return this.#clients.live;
  }

  /** Live pane watches (for tests: a cancelled wait must leave none). */
  get watchers(): number {
    let n = 0;
    for (const c of this.#clients.connections) n += c.watchers.size;
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
    // Each control line is followed by the protocol's own display-message (its sentinel).
    await this.#runner.checkAliases(this.#address, args, options, ["display-message"]);
    const want = options.serverPid ?? null;
    if (want !== null) {
      const pid = await (connection.serverPid ??= pidOf(connection));
      if (pid !== null && pid !== want) {
        throw new ControlUnavailable(`its client is attached to server pid ${pid}, not ${want}`);
      }
    }
    // A background command waits for its turn, its timeout not begun (stopped by its call's
    // cancellation or by its deadline to start, as a tmux process waiting for its turn).
    if (options.background) {
      const { signal, untilStarted } = options;
      const waits = [signal, untilStarted].filter((s): s is AbortSignal => s !== undefined);
      await this.#background.acquire({ signal: AbortSignal.any(waits) });
    }
    try {
      return await connection.exec(args, options);
    } catch (error) {
      throw remoteTimeout(error, this.#address);
    } finally {
      if (options.background) this.#background.release();
    }
  }

  /**
   * Runs `send`, a structural command (`args`) bound for this server however it travels,
   * with the notices tmux owes our clients counted around it (owed_notices.ts): one that may
   * end a session first waits for those still owed, or is refused. Attaches no client.
   */
  async structural<T>(
    args: readonly string[],
    send: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const live = [...this.#clients.connections].filter((c) => c.attached);
    const witness = live.find((c) => c === this.#clients.primary) ?? live[0] ?? null;
    return await this.#owed.around(witness, args, send, signal);
  }

  /**
   * Runs `act` (a respawn with its place resets) while no client for watches of ours attaches
   * to this server (control_opening.ts's holdWatchOpenings).
   */
  holdWatchOpenings<T>(act: () => Promise<T>): Promise<T> {
    return this.#opener.holdWatchOpenings(act);
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
    // A client still opening can be told to leave before it is handed over (a window of its
    // session moved out meanwhile: control_leaving.ts's leaveIfWindowsMoved): its leaving
    // told no watcher of this one, which would stay on it for good. Another is had instead.
    for (let tries = 1;; tries++) {
      if (this.#clients.closed) throw new ControlUnavailable("shutting down");
      this.#use();
      const open = [...this.#clients.connections].find((c) =>
        !c.closed && !c.leaving && c.forWatches && sessionIds.includes(c.sessionId)
      );
      // A respawn may have turned the pane off for a client open already, while its session did
      // not show it (control.ts's placeResets): on again (a pane not off is left as it is). A new
      // client holds no place yet.
      await open?.exec(["refresh-client", "-A", `${paneId}:on`], { timeoutMs: 5_000 })
        .catch(() => {});
      const connection = open ?? await this.#opener.openForWatches(sessionIds);
      // Checked after the last wait: told to leave meanwhile, it would keep this watch for good.
      if (connection.closed || connection.leaving) {
        this.#leaving.maybeLinger(connection);
        if (tries < 3) continue;
        throw new ControlUnavailable("its clients for watches kept leaving as they opened");
      }
      clearTimeout(connection.idleTimer);
      return addWatcher(
        connection,
        paneId,
        listener,
        (c) => this.#leaving.maybeLinger(c),
        (args, signal) =>
          this.#runner.checkAliases(this.#address, args, { signal }, ["display-message"]),
      );
    }
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
    return await addListener(
      connection,
      events,
      formats,
      () => `tmux-mcp-${++this.#subscriptionSeq}`,
    );
  }

  /** Hands a connection's server-wide notifications to the listeners they concern. */
  #events(connection: Connection, notifications: Notifications): void {
    const { clients, subscriptions } = notifications;
    if (clients || subscriptions.get(EXIT_UNATTACHED_SUBSCRIPTION) === "1") {
      this.#leaving.reviewPlacement();
    }
    if (notifications.closedWindows.has(connection.anchor)) reanchor(connection);
    if (connection.forWatches && notifications.closedWindows.size > 0) {
      this.#leaving.leaveIfWindowsMoved(connection, [...notifications.closedWindows]);
    }
    tellListeners(this.#clients.connections, connection, notifications);
  }

  /** Closes every connection of this server. */
  async close(): Promise<void> {
    this.#clients.closed = true;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    await this.#opener.settled();
    await this.#leaving.closeAll();
  }

  async #primaryConnection(): Promise<Connection> {
    if (this.#clients.primary && !this.#clients.primary.closed) return this.#clients.primary;
    if (this.#clients.closed) throw new ControlUnavailable("shutting down");
    // Concurrent first calls share one attempt: otherwise each would open a client of its own.
    if (!this.#acquiring) {
      this.#acquiring = this.#opener.acquirePrimary().finally(() => this.#acquiring = null);
    }
    return await this.#acquiring;
  }

  #forget(connection: Connection): void {
    this.#clients.turns.end(connection);
    this.#clients.connections.delete(connection);
    if (this.#clients.primary === connection) this.#clients.primary = null;
    clearTimeout(connection.idleTimer);
    if (!connection.closing && !this.#clients.closed && !this.#runner.closed) {
      this.#opener.lostOne(connection);
    }
    loseListeners(connection);
    loseWatchers(connection);
  }
}
