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
 *   view-mode on its session's active pane, often a pane a person looks at. Its handshake
 *   waits (briefly) for tmux's jobs to end and leaves each view-mode they brought
 *   (control_attach.ts's leaveHookModes). What such a hook prints with `display-message -p`
 *   comes to the client itself, outside any answer, and is dropped.
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
 * How a client is started and its handshake are control_attach.ts's, the turns in which
 * clients start and end control_turns.ts's, and the watches and listeners they carry
 * control_feeds.ts's.
 *
 * @module
 */

import { warn } from "../diagnostics.ts";
import { controlLine } from "./command_line.ts";
import { type ControlResult, ControlUnavailable } from "./control_protocol.ts";
import type { Notifications } from "./control_notifications.ts";
import { OwedNotices } from "./owed_notices.ts";
import {
  EXIT_UNATTACHED_SUBSCRIPTION,
  leaveHookModes,
  noteAttach,
  spawnClient,
} from "./control_attach.ts";
import {
  Connection,
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
  loseMovedPanes,
  loseWatchers,
  tellListeners,
} from "./control_feeds.ts";
import type { ViaOptions } from "./control.ts";
import { backEvent, type ControlEvent, lostEvent } from "./control_events.ts";
import {
  ATTACH_BACKOFF_MS,
  ATTACH_TIMEOUT_MS,
  LEAVING_MS,
  limitsOf,
  LINGER_MS,
  MAX_CONNECTIONS,
  NO_SESSION_BACKOFF_MS,
} from "./control_limits.ts";
import {
  isSomeone,
  liftAfterAttach,
  othersIn,
  readSeating,
  requireOthers,
  restoreRecency,
  seatingToAttach,
  sessionShared,
} from "./control_seating.ts";
import { holdsOpen, type SessionStanding, sessionToJoin, type Touch } from "./recency.ts";
import { ClientTurns } from "./control_turns.ts";
import type { TmuxRunner } from "./run.ts";
import { remoteTimeout } from "./remote_call.ts";
import { addressKey, type ServerAddress } from "./server_address.ts";

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
  readonly #connections = new Set<Connection>();
  readonly #opening = new Map<string, Promise<Connection>>();
  /** Its clients start and end one at a time (control_turns.ts). */
  readonly #turns: ClientTurns;
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
  /** The notices tmux still owes our clients (owed_notices.ts). */
  readonly #owed = new OwedNotices();

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
    this.#turns = new ClientTurns(hooks?.ending);
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
    const ending = this.#turns.inTurn(() => this.#closeAll()).catch(() => {});
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
   * Runs `send`, a structural command (`args`) bound for this server however it travels,
   * with the notices tmux owes our clients counted around it (owed_notices.ts): one that may
   * end a session first waits for those still owed, or is refused. Attaches no client.
   */
  async structural<T>(
    args: readonly string[],
    send: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const live = [...this.#connections].filter((c) => c.attached);
    const witness = live.find((c) => c === this.#primary) ?? live[0] ?? null;
    return await this.#owed.around(witness, args, send, signal);
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
      // Before the seating is read: a wait beyond the bound polls without asking tmux first.
      this.#requireWatchRoom();
      const seating = await seatingToAttach(this.#runner, this.#address, this.#closed);
      requireOthers(seating);
      const { standings } = seating;
      const target = sessionToJoin(standings, sessionIds);
      if (!target) {
        throw new ControlUnavailable(
          "no session of this pane can take a control client (destroy-unattached is on)",
        );
      }
      connection = await this.#open(target, standings, true);
    }
    clearTimeout(connection.idleTimer);
    return addWatcher(connection, paneId, listener, (c) => this.#maybeLinger(c));
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
      this.#reviewPlacement();
    }
    tellListeners(this.#connections, connection, notifications);
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
      await restoreRecency(this.#runner, this.#address, last, this.#touches);
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
    const seating = await seatingToAttach(this.#runner, this.#address, this.#closed);
    if (holdsOpen(seating.standings, seating.clients)) {
      this.#noSessionUntil = performance.now() + NO_SESSION_BACKOFF_MS;
    }
    requireOthers(seating);
    const { standings } = seating;
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
   * Refuses a new client for watches once watches hold all clients but one: the last is kept
   * for commands. Had watches taken every one while the command client was down (lost, or
   * retired for a slow answer), it could not come back, and every command, each polling
   * wait's read among them, would start a tmux process of its own.
   */
  #requireWatchRoom(): void {
    const watching = [...this.#connections].filter((c) => !c.closed && c.forWatches).length;
    if (watching >= MAX_CONNECTIONS - 1) {
      throw new ControlUnavailable(
        `already ${watching} control clients carry watches on this server (one is kept for commands)`,
      );
    }
  }

  /** Refuses while control clients are not tried (one failed to attach lately). */
  #requireAttaching(): void {
    if (performance.now() < this.#attachFailedUntil) {
      throw new ControlUnavailable(
        "a control client failed to attach lately (refused, not attached in time, or broken)",
      );
    }
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
    const promise = this.#turns.inTurn(() => this.#connect(sessionId, before, forWatches))
      .finally(() => this.#opening.delete(key));
    this.#opening.set(key, promise);
    return promise;
  }

  /**
   * Looks again where the primary client sits, after another client attached, detached or
   * moved: once someone has used its session since our client joined it and nobody but
   * tmux-mcp is attached there any more (a person worked there, then left), a plain `tmux
   * attach` should find that session free. The client then leaves it, a moment after its last
   * answer; the next call opens a new one elsewhere (see recency.ts). A client carrying format
   * subscriptions stays.
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
   * once no client is attached (`exit-unattached`) and every client still attached is
   * tmux-mcp's (ours, or another tmux-mcp process's, which does the same), all of ours leave
   * at once, watchers told they lost the feed (they poll from then on), so the server exits as
   * it would without tmux-mcp. Returns whether they left.
   */
  async #leaveIfLast(): Promise<boolean> {
    const connection = [...this.#connections].find((c) => !c.closed && c.clientName !== "");
    if (!connection) return false;
    try {
      const seating = await readSeating(connection);
      if (seating === null || !seating.standings.some((s) => s.exitUnattached)) return false;
      if (seating.clients.some((c) => isSomeone(c, this.#connections))) return false;
      this.#noSessionUntil = performance.now() + NO_SESSION_BACKOFF_MS;
      await this.#turns.inTurn(() => this.#closeAll());
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
      const seating = await readSeating(connection);
      if (seating === null || this.#primary !== connection) return;
      const here = seating.standings.find((s) => s.id === connection.sessionId);
      if (!here || here.activity <= touch.bumped) return;
      // Only where a new client can go that nobody is attached to: elsewhere it would be back.
      const free = (s: SessionStanding) => s.clients === 0 && !s.destroyUnattached;
      if (!seating.standings.some((s) => s.id !== here.id && free(s))) return;
      if (othersIn(here.id, seating.clients, this.#connections)) return;
      connection.leaving = true;
      this.#primary = null;
      this.#maybeLinger(connection);
    } catch {
      // Lost meanwhile: it is gone anyway.
    }
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
    if (forWatches) this.#requireWatchRoom();
    const child = await spawnClient(this.#runner, this.#address, sessionId, forWatches);
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
      // Refused (tmux let it go before it attached): not tried again for a moment either.
      const backoff = timedOut || connection.retired !== null
        ? ATTACH_BACKOFF_MS
        : limitsOf(this.#runner).refusedBackoffMs;
      this.#attachFailedUntil = performance.now() + backoff;
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
    await leaveHookModes(
      connection,
      await noteAttach(connection, before, this.#touches),
      limitsOf(this.#runner).hookJobsWaitMs,
      () => this.#closed,
    );
    if (connection.retired !== null) {
      // Broken before its handshake ended (it is gone already): as if it never attached.
      this.#attachFailedUntil = performance.now() + ATTACH_BACKOFF_MS;
      throw new ControlUnavailable(
        `the control client broke as it attached: ${connection.retired}`,
      );
    }
    await liftAfterAttach(
      this.#runner,
      this.#address,
      connection,
      this.#touches,
      this.#connections,
    );
    if (this.#down !== null) {
      const was = this.#down;
      this.#down = null;
      this.#report(backEvent(was, this.#address));
    }
    return connection;
  }

  #forget(connection: Connection): void {
    this.#turns.end(connection);
    this.#connections.delete(connection);
    if (this.#primary === connection) this.#primary = null;
    clearTimeout(connection.idleTimer);
    if (!connection.closing && !this.#closed && !this.#runner.closed) this.#lostOne();
    loseListeners(connection);
    loseWatchers(connection);
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
    loseMovedPanes(connection).then(() => {
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
    loseWatchers(connection);
    this.#maybeLinger(connection);
  }

  /**
   * A connection ended that we did not close: reported once until one connects again, as the
   * server gone or the connection lost (control_events.ts's lostEvent tells which).
   */
  #lostOne(): void {
    if (this.#down !== null) return;
    this.#down = "lost";
    lostEvent(this.#runner, this.#address).then((event) => {
      if (this.#down !== "lost") return;
      if (event.kind === "gone") this.#down = "gone";
      this.#report(event);
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
      // Someone not tmux-mcp is attached to the session it joined (a person, say): leaving
      // changes nothing for a plain attach, and staying keeps our client older than their next
      // key, where a new one for the next wait would be newer (tmux gives client-less commands
      // to the newest client of the session; see recency.ts). It leaves once they have. A
      // client tmux moved there is leaving already (#leaveMoved).
      if (!connection.leaving && await sessionShared(connection, this.#connections)) {
        if (idle()) this.#maybeLinger(connection);
        return;
      }
      if (!idle()) return;
      this.#connections.delete(connection);
      this.#turns.inTurn(async () => {
        await restoreRecency(this.#runner, this.#address, connection, this.#touches);
        this.#turns.end(connection);
        await connection.close();
      }).catch(() => {});
    }, connection.leaving ? LEAVING_MS : LINGER_MS);
  }
}
