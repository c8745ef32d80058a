/**
 * When a tmux server's control clients leave: looked at again as other clients attach, detach
 * or move, ours leave a session a person has taken back, a session tmux moved them into, and a
 * server that would exit without them (`exit-unattached`); a client for watches leaves a while
 * after its last watcher, one that is leaving a moment after its last answer, and all of them
 * at once when the server's control closes. The last to go puts the person's sessions back in
 * the order it found them (control_seating.ts). control_server.ts calls it as its clients'
 * sessions change and their watches end.
 *
 * @module
 */

import type { ServerClients } from "./control_clients.ts";
import type { Connection } from "./control_connection.ts";
import { loseMovedPanes, loseWatchers } from "./control_feeds.ts";
import { LEAVING_MS, LINGER_MS, NO_SESSION_BACKOFF_MS } from "./control_limits.ts";
import {
  isSomeone,
  othersIn,
  readSeating,
  restoreRecency,
  sessionShared,
} from "./control_seating.ts";
import type { SessionStanding } from "./recency.ts";

/** Sees the control clients of one server, its {@link ServerClients}, leave. */
export class ClientLeaving {
  readonly #clients: ServerClients;
  #reviewing = false;
  #reviewAgain = false;

  /** Sees `clients`' clients leave. */
  constructor(clients: ServerClients) {
    this.#clients = clients;
  }

  /** Whether the clients' placement is being looked at again. */
  get reviewing(): boolean {
    return this.#reviewing;
  }

  /**
   * Looks again where the primary client sits, after another client attached, detached or
   * moved: once someone has used its session since our client joined it and nobody but
   * tmux-mcp is attached there any more (a person worked there, then left), a plain `tmux
   * attach` should find that session free. The client then leaves it, a moment after its last
   * answer; the next call opens a new one elsewhere (see recency.ts). A client carrying format
   * subscriptions stays.
   */
  reviewPlacement(): void {
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
      } while (this.#reviewAgain && !this.#clients.closed);
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
    const connections = this.#clients.connections;
    const connection = [...connections].find((c) => !c.closed && c.clientName !== "");
    if (!connection) return false;
    try {
      const seating = await readSeating(connection);
      if (seating === null || !seating.standings.some((s) => s.exitUnattached)) return false;
      if (seating.clients.some((c) => isSomeone(c, connections))) return false;
      this.#clients.noSessionUntil = performance.now() + NO_SESSION_BACKOFF_MS;
      await this.#clients.turns.inTurn(() => this.closeAll());
      return true;
    } catch {
      // Lost meanwhile: gone anyway.
      return false;
    }
  }

  async #leaveIfReclaimed(): Promise<void> {
    const connection = this.#clients.primary;
    if (!connection || connection.closed || connection.listeners.size > 0) return;
    const touch = this.#clients.touches.get(connection.sessionId);
    if (!touch) return;
    try {
      const seating = await readSeating(connection);
      if (seating === null || this.#clients.primary !== connection) return;
      const here = seating.standings.find((s) => s.id === connection.sessionId);
      if (!here || here.activity <= touch.bumped) return;
      // Only where a new client can go that nobody is attached to: elsewhere it would be back.
      const free = (s: SessionStanding) => s.clients === 0 && !s.destroyUnattached;
      if (!seating.standings.some((s) => s.id !== here.id && free(s))) return;
      if (othersIn(here.id, seating.clients, this.#clients.connections)) return;
      connection.leaving = true;
      this.#clients.primary = null;
      this.maybeLinger(connection);
    } catch {
      // Lost meanwhile: it is gone anyway.
    }
  }

  /**
   * After a structural change, a watched pane may have left the connection's session (its
   * window moved or unlinked, or the connection was moved to another session): such watchers
   * are told they lost the feed, so they reattach where the pane now is.
   */
  recheck(connection: Connection): void {
    if (connection.closed) return;
    if (connection.moved && !connection.leaving) return this.#leaveMoved(connection);
    if (connection.watchers.size === 0) return;
    loseMovedPanes(connection).then(() => {
      this.maybeLinger(connection);
    }).catch(() => {
      // The connection went away meanwhile; ServerControl's #forget told the watchers.
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
    if (this.#clients.primary === connection) this.#clients.primary = null;
    // Its watchers attach again elsewhere: given up, not cut (WatchBatch.left).
    loseWatchers(connection, true);
    this.maybeLinger(connection);
  }

  /**
   * Makes a client for watches leave when windows tmux said closed (`windowIds`) still exist:
   * moved or unlinked, perhaps out of its session. tmux 3.3a keeps such a client's place in the
   * output of the panes that left and never moves it again, so it holds all they print from
   * then on in memory (a busy pane: megabytes a second, for as long as the client stays, which a
   * long wait elsewhere in its session may make minutes), and a respawn of one of them would
   * crash it unless its place is moved up first (control.ts's withPlaceResets). Its watchers
   * attach again, to a new client, which holds no such place. A window closed for good changes
   * nothing.
   */
  leaveIfWindowsMoved(connection: Connection, windowIds: readonly string[]): void {
    const ids = windowIds.filter((id) => /^@\d+$/.test(id));
    if (ids.length === 0 || connection.closed || connection.leaving) return;
    connection.exec(["list-windows", "-a", "-F", "#{window_id}"], { timeoutMs: 5_000 })
      .then((listed) => {
        if (listed.code !== 0 || connection.closed || connection.leaving) return;
        const present = new Set(new TextDecoder().decode(listed.stdout).split("\n"));
        if (ids.some((id) => present.has(id))) this.#leaveMoved(connection);
      })
      .catch(() => {
        // The connection went away meanwhile: its watchers were told.
      });
  }

  /**
   * Closes `connection` once it has been idle a while: {@link LINGER_MS} after its last watcher
   * left, {@link LEAVING_MS} after its last answer when it is leaving.
   */
  maybeLinger(connection: Connection): void {
    const clients = this.#clients;
    if (connection.watchers.size > 0 || connection === clients.primary || connection.closed) {
      return;
    }
    clearTimeout(connection.idleTimer);
    connection.idleTimer = setTimeout(async () => {
      const idle = () =>
        connection.watchers.size === 0 && connection !== clients.primary && !connection.closed;
      if (!idle()) return;
      // Answers still on their way: look again later.
      if (connection.pending > 0) return this.maybeLinger(connection);
      // Someone not tmux-mcp is attached to the session it joined (a person, say): leaving
      // changes nothing for a plain attach, and staying keeps our client older than their next
      // key, where a new one for the next wait would be newer (tmux gives client-less commands
      // to the newest client of the session; see recency.ts). It leaves once they have. A
      // client tmux moved there is leaving already (#leaveMoved).
      if (!connection.leaving && await sessionShared(connection, clients.connections)) {
        if (idle()) this.maybeLinger(connection);
        return;
      }
      if (!idle()) return;
      this.#closeNow(connection).catch(() => {});
    }, connection.leaving ? LEAVING_MS : LINGER_MS);
  }

  /**
   * Forgets `connection` and closes it in its turn, the person's sessions put back in the order
   * it found them (control_seating.ts's restoreRecency).
   */
  #closeNow(connection: Connection): Promise<void> {
    const clients = this.#clients;
    clients.connections.delete(connection);
    return clients.turns.inTurn(async () => {
      await restoreRecency(clients.runner, clients.address, connection, clients.touches);
      clients.turns.end(connection);
      await connection.close();
    });
  }

  /** Closes every connection (their watchers and listeners are told they lost the feed). */
  async closeAll(): Promise<void> {
    const clients = this.#clients;
    // The last to leave puts the person's sessions back in the order it found them.
    const live = [...clients.connections].filter((c) => !c.closed);
    const last = live.find((c) => c === clients.primary) ?? live.at(-1);
    await Promise.allSettled(live.filter((c) => c !== last).map((c) => c.close()));
    if (last) {
      await restoreRecency(clients.runner, clients.address, last, clients.touches);
      await last.close();
    }
    await Promise.allSettled([...clients.connections].map((c) => c.close()));
    clients.connections.clear();
    clients.primary = null;
  }
}
