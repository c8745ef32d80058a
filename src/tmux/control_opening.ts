/**
 * Opening a tmux server's control clients: the client for commands (attached where nobody
 * works, when there is such a session) and clients for watches (attached to a watched pane's
 * session), one at a time, within the bound on clients per server and with a pause in trying
 * after one failed to attach or no session could take one. Its handshake done, a client's
 * coming back is reported, as its loss was (control_events.ts). control_server.ts asks it for
 * clients; how one is started and its handshake are control_attach.ts's.
 *
 * @module
 */

import { ControlUnavailable } from "./control_protocol.ts";
import type { Notifications } from "./control_notifications.ts";
import { leaveHookModes, modesBefore, noteAttach, spawnClient } from "./control_attach.ts";
import type { ServerClients } from "./control_clients.ts";
import { Connection } from "./control_connection.ts";
import { backEvent, type ControlEvent, lostEvent } from "./control_events.ts";
import {
  ATTACH_BACKOFF_MS,
  boundFromRun,
  ENDING_WAIT_MS,
  limitsOf,
  MAX_CONNECTIONS,
  NO_SESSION_BACKOFF_MS,
} from "./control_limits.ts";
import { liftAfterAttach, requireOthers, seatingToAttach } from "./control_seating.ts";
import { holdsOpen, type SessionStanding, sessionToJoin } from "./recency.ts";

/** What a {@link ClientOpener} tells the server's control, and what it hands new clients. */
export interface OpenerHooks {
  /** What an operator is told: the channel lost or gone, and back. */
  readonly report: (event: ControlEvent) => void;
  /** A client for commands was opened: the set of servers may now hold too many. */
  readonly opened: () => void;
  /** A client ended (control_connection.ts's `onLost`). */
  readonly forget: (connection: Connection) => void;
  /** Windows, panes or sessions changed around a client (its `onChanged`). */
  readonly recheck: (connection: Connection) => void;
  /** A client's server-wide notifications (its `onEvents`). */
  readonly events: (connection: Connection, notifications: Notifications) => void;
}

/** Opens the control clients of one server, into its {@link ServerClients}. */
export class ClientOpener {
  readonly #clients: ServerClients;
  readonly #hooks: OpenerHooks;
  readonly #opening = new Map<string, Promise<Connection>>();
  /** Clients for watches past {@link holdWatchOpenings}'s gate, until open or failed. */
  readonly #watchesConnecting = new Set<Promise<Connection>>();
  /** How many holds of {@link holdWatchOpenings} run, and what settles when the last ends. */
  #holds = 0;
  #holdsEnded: PromiseWithResolvers<void> | null = null;
  /** Until when no control client is tried, after one failed to attach (see ATTACH_BACKOFF_MS). */
  #attachFailedUntil = 0;
  /** What was last reported as down (the connection, or the server), until it is back. */
  #down: "lost" | "gone" | null = null;

  /** Opens into `clients`; `hooks` are told, and given to each client. */
  constructor(clients: ServerClients, hooks: OpenerHooks) {
    this.#clients = clients;
    this.#hooks = hooks;
  }

  /** Whether a client is being opened. */
  get opening(): boolean {
    return this.#opening.size > 0;
  }

  /** Resolves once every client being opened is open or failed. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#opening.values()]);
  }

  /**
   * Runs `act` while no client for watches of ours attaches: those attaching already have done
   * so first (they are listed then), and those asked for meanwhile wait until it ends. A
   * respawn reads the server's clients and moves up each one's place in the pane's output on
   * its own line (control.ts's withPlaceResets): a client of ours attached in between would be
   * missed, and a busy pane's output queued for it would crash tmux 3.3a at the respawn.
   */
  async holdWatchOpenings<T>(act: () => Promise<T>): Promise<T> {
    if (this.#holds++ === 0) this.#holdsEnded = Promise.withResolvers<void>();
    try {
      await Promise.allSettled([...this.#watchesConnecting]);
      return await act();
    } finally {
      if (--this.#holds === 0) {
        this.#holdsEnded?.resolve();
        this.#holdsEnded = null;
      }
    }
  }

  /**
   * The client for commands: one already open, else a new one in the session recency.ts
   * picks. Throws {@link ControlUnavailable} when none can be had (the caller spawns).
   */
  async acquirePrimary(): Promise<Connection> {
    const { connections } = this.#clients;
    // Never one opened for watches: it receives every byte its session's panes print.
    const open = [...connections].find((c) => !c.closed && !c.leaving && !c.forWatches);
    if (open) {
      await open.ready;
      this.#clients.primary = open;
      return open;
    }
    this.#requireAttaching();
    // Without a session to attach to, every call would first ask tmux again: ask at most
    // once a second and spawn meanwhile.
    if (performance.now() < this.#clients.noSessionUntil) {
      throw new ControlUnavailable("no session a control client could attach to");
    }
    const { runner, address } = this.#clients;
    const seating = await seatingToAttach(runner, address, this.#clients.closed);
    if (holdsOpen(seating.standings, seating.clients)) {
      this.#clients.noSessionUntil = performance.now() + NO_SESSION_BACKOFF_MS;
    }
    requireOthers(seating);
    const { standings } = seating;
    const target = sessionToJoin(standings);
    if (target === undefined) {
      this.#clients.noSessionUntil = performance.now() + NO_SESSION_BACKOFF_MS;
      throw new ControlUnavailable("no session a control client could attach to");
    }
    this.#clients.primary = await this.#open(target, standings, false);
    this.#hooks.opened();
    return this.#clients.primary;
  }

  /**
   * A new client to carry watches, attached to one of `sessionIds` (the sessions a watched
   * pane's window is linked into). Throws {@link ControlUnavailable} when none can be attached
   * (the caller polls instead).
   */
  async openForWatches(sessionIds: readonly string[]): Promise<Connection> {
    this.#requireAttaching();
    // Before the seating is read: a wait beyond the bound polls without asking tmux first.
    this.#requireWatchRoom();
    const { runner, address } = this.#clients;
    const seating = await seatingToAttach(runner, address, this.#clients.closed);
    requireOthers(seating);
    const { standings } = seating;
    const target = sessionToJoin(standings, sessionIds);
    if (!target) {
      throw new ControlUnavailable(
        "no session of this pane can take a control client (destroy-unattached is on)",
      );
    }
    return await this.#open(target, standings, true);
  }

  /**
   * Refuses a new client for watches once watches hold all clients but one: the last is kept
   * for commands. Had watches taken every one while the command client was down (lost, or
   * retired for a slow answer), it could not come back, and every command, each polling
   * wait's read among them, would start a tmux process of its own. A client that is leaving
   * (gone within control_limits.ts LEAVING_MS) takes no room: one window moved out of a session
   * makes the clients it concerns leave together, and their watchers, told at once, attach
   * again; refused then, each would poll for the rest of its wait.
   */
  #requireWatchRoom(): void {
    const { connections } = this.#clients;
    const watching = [...connections].filter((c) => !c.closed && !c.leaving && c.forWatches)
      .length;
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
    const connect = () =>
      this.#clients.turns.inTurn(() => this.#connect(sessionId, before, forWatches));
    const promise = (forWatches ? this.#connectWatches(connect) : connect())
      .finally(() => this.#opening.delete(key));
    this.#opening.set(key, promise);
    return promise;
  }

  /**
   * Runs `connect` (a client for watches) once no {@link holdWatchOpenings} runs. Past the gate,
   * from the same synchronous step on, it is among those a hold waits for.
   */
  async #connectWatches(connect: () => Promise<Connection>): Promise<Connection> {
    while (this.#holdsEnded !== null) await this.#holdsEnded.promise;
    const connecting = connect();
    this.#watchesConnecting.add(connecting);
    try {
      return await connecting;
    } finally {
      this.#watchesConnecting.delete(connecting);
    }
  }

  async #connect(
    sessionId: string,
    before: number | undefined,
    forWatches: boolean,
  ): Promise<Connection> {
    const { runner, address, connections, touches } = this.#clients;
    if (this.#clients.closed || runner.closed) throw new ControlUnavailable("shutting down");
    this.#requireAttaching();
    const staying = [...connections].filter((c) => !c.closed && !c.leaving).length;
    if (staying >= MAX_CONNECTIONS) {
      throw new ControlUnavailable(`already ${MAX_CONNECTIONS} control clients on this server`);
    }
    if (forWatches) this.#requireWatchRoom();
    // Each session's active pane and its modes just before the attach: its handshake takes back
    // only a view-mode pushed since, as the attach's hooks' jobs ended (leaveHookModes).
    const modes = await modesBefore(runner, address);
    const child = await spawnClient(runner, address, sessionId, forWatches);
    const connection = new Connection(
      child,
      this.#hooks.forget,
      this.#hooks.recheck,
      this.#hooks.events,
    );
    connection.forWatches = forWatches;
    connections.add(connection);
    let stopBound = () => {};
    let timedOut = false;
    try {
      await Promise.race([
        connection.ready,
        new Promise((_, reject) => {
          // On an SSH host the remote shell runs its start-up files first: the attach's time
          // counts from when tmux runs there, the start-up having a bound of its own.
          const { attachTimeoutMs, remoteStartMs } = limitsOf(runner);
          stopBound = boundFromRun(child, remoteStartMs, attachTimeoutMs, (passed) => {
            timedOut = true;
            // No tmux runs there yet (it waits for its go, ssh_wire.ts): its ssh ends at
            // once, where a close would wait for the start-up files to end.
            if (passed === "start") child.kill();
            reject(
              new ControlUnavailable(
                passed === "start"
                  ? `the remote shell did not start tmux within ${remoteStartMs} ms`
                  : `tmux did not attach a control client within ${attachTimeoutMs} ms`,
              ),
            );
          });
        }),
      ]);
    } catch (error) {
      // Refused (tmux let it go before it attached): not tried again for a moment either.
      const backoff = timedOut || connection.retired !== null
        ? ATTACH_BACKOFF_MS
        : limitsOf(runner).refusedBackoffMs;
      this.#attachFailedUntil = performance.now() + backoff;
      // Not waited for past a moment: a client that never answered may take long to end (on
      // an SSH host, its pipes stay the host's master's a while after its ssh exited), and this
      // turn holds every other opening on the server. Counted as ending meanwhile: the next
      // client starts once it is gone, or at ENDING_WAIT_MS (control_turns.ts).
      this.#clients.turns.end(connection);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        connection.close(),
        new Promise((resolve) => timer = setTimeout(resolve, ENDING_WAIT_MS)),
      ]);
      clearTimeout(timer);
      connections.delete(connection);
      throw error;
    } finally {
      stopBound();
    }
    if (this.#clients.closed) {
      await connection.close();
      throw new ControlUnavailable("shutting down");
    }
    await leaveHookModes(
      connection,
      await noteAttach(connection, before, touches),
      modes,
      limitsOf(runner).hookJobsWaitMs,
      () => this.#clients.closed,
    );
    if (connection.retired !== null) {
      // Broken before its handshake ended (it is gone already): as if it never attached.
      this.#attachFailedUntil = performance.now() + ATTACH_BACKOFF_MS;
      throw new ControlUnavailable(
        `the control client broke as it attached: ${connection.retired}`,
      );
    }
    await liftAfterAttach(runner, address, connection, touches, connections);
    if (this.#down !== null) {
      const was = this.#down;
      this.#down = null;
      this.#hooks.report(backEvent(was, address));
    }
    return connection;
  }

  /**
   * A connection ended that we did not close: reported once until one connects again, as the
   * server gone or the connection lost (control_events.ts's lostEvent tells which; `lost`: the
   * connection, whose session's end ends it as routine).
   */
  lostOne(lost: Connection): void {
    if (this.#down !== null) return;
    this.#down = "lost";
    const { runner, address } = this.#clients;
    (lost.serverPid ?? Promise.resolve(null)).catch(() => null).then((serverPid) =>
      lostEvent(runner, address, { sessionId: lost.sessionId, serverPid })
    ).then((event) => {
      if (this.#down !== "lost") return;
      if (event.kind === "gone") this.#down = "gone";
      this.#hooks.report(event);
    });
  }
}
