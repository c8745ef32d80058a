/**
 * What a server's control clients carry for whoever asked: pane watches (a pane's `%output`)
 * and server listeners (changes of windows, panes and sessions, and format subscriptions).
 * Adding one to a client, handing a client's notifications to the listeners they concern,
 * and telling watchers and listeners they lost the feed (their client went or moved, or their
 * pane left its session). Which client carries them, and when clients come and go, is
 * control_server.ts's business.
 *
 * @module
 */

import { ControlUnavailable } from "./control_protocol.ts";
import type { Notifications } from "./control_notifications.ts";
import type {
  Connection,
  Listener,
  Listening,
  ServerEvents,
  Watch,
  Watcher,
  WatchListener,
} from "./control_connection.ts";

/**
 * Adds a watch of `paneId` to `connection`, which delivers what the pane writes to
 * `listener`; `closed` is told the connection it was on once the watch is closed (it may then
 * linger and leave).
 */
export function addWatcher(
  connection: Connection,
  paneId: string,
  listener: WatchListener,
  closed: (connection: Connection) => void,
): Watch {
  const watcher: Watcher = { paneId, listener, connection };
  connection.watchers.add(watcher);
  return {
    sessionId: connection.sessionId,
    close: () => {
      const c = watcher.connection;
      if (!c.watchers.delete(watcher)) return;
      closed(c);
    },
  };
}

/**
 * Adds a listener for `events` to `connection`, with the format subscriptions of `formats`
 * (by key), each under a name `nextName` gives (unique on the server). Throws
 * {@link ControlUnavailable} when tmux refuses one.
 */
export async function addListener(
  connection: Connection,
  events: ServerEvents,
  formats: Readonly<Record<string, string>>,
  nextName: () => string,
): Promise<Listening> {
  const listener: Listener = { events, names: new Map(), connection };
  for (const [key, format] of Object.entries(formats)) {
    const name = nextName();
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

/**
 * Hands `connection`'s server-wide notifications to the listeners they concern: a change of
 * the server's topology to every listener of `connections` (the server's clients), a
 * subscription's new value to the listener on `connection` that subscribed to it.
 */
export function tellListeners(
  connections: Iterable<Connection>,
  connection: Connection,
  { topology, subscriptions }: Notifications,
): void {
  const call = (f: () => void) => {
    try {
      f();
    } catch {
      // A listener's failure is its own.
    }
  };
  if (topology) {
    for (const c of connections) {
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

/** Tells every listener on `connection`, which is gone, that it has ended. */
export function loseListeners(connection: Connection): void {
  for (const listener of [...connection.listeners]) {
    connection.listeners.delete(listener);
    try {
      listener.events.lost?.("the control connection was lost");
    } catch {
      // The listener's own business.
    }
  }
}

/** Tells every watcher on `connection` that it lost the feed (its watch has ended). */
export function loseWatchers(connection: Connection): void {
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
 * Tells the watchers on `connection` whose pane is no longer in its session (its window
 * moved or unlinked, or the connection was moved to another session) that they lost the
 * feed, so they reattach where the pane now is. Rejects when the connection went away
 * meanwhile.
 */
export async function loseMovedPanes(connection: Connection): Promise<void> {
  const result = await connection.exec(
    ["list-panes", "-s", "-t", connection.sessionId, "-F", "#{pane_id}"],
    { timeoutMs: 5_000 },
  );
  const present = new Set(new TextDecoder().decode(result.stdout).split("\n"));
  for (const watcher of [...connection.watchers]) {
    if (result.code === 0 && present.has(watcher.paneId)) continue;
    connection.watchers.delete(watcher);
    watcher.listener({ output: [], changed: true, lost: true });
  }
}
