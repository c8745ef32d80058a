/**
 * What a server's control clients carry for whoever asked: pane watches (a pane's `%output`)
 * and server listeners (changes of windows, panes and sessions, and format subscriptions).
 * Adding one to a client, handing a client's notifications to the listeners they concern,
 * and telling watchers and listeners they lost the feed (their client went or moved, their
 * pane left its session, or tmux paused their pane's output for the client). Which client
 * carries them, and when clients come and go, is control_server.ts's business.
 *
 * @module
 */

import { type ControlResult, ControlUnavailable } from "./control_protocol.ts";
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
  checked: (args: readonly string[], signal?: AbortSignal) => Promise<void>,
): Watch {
  const watcher: Watcher = { paneId, listener, connection, closed };
  connection.watchers.add(watcher);
  return {
    sessionId: connection.sessionId,
    close: () => {
      const c = watcher.connection;
      if (!c.watchers.delete(watcher)) return;
      closed(c);
    },
    sync: async (signal) => {
      const c = watcher.connection;
      if (c.closed || !c.watchers.has(watcher)) return;
      await checked(SYNC, signal);
      try {
        await c.exec(SYNC, { signal, timeoutMs: SYNC_TIMEOUT_MS });
      } catch (error) {
        // Lost meanwhile: the watch was told, and reads the pane again.
        if (!(error instanceof ControlUnavailable) || !c.closed) throw error;
      }
    },
  };
}

/** What a watch's sync sends: any command answers; this one changes nothing and says little. */
const SYNC = ["display-message", "-p", ""];
/** Longest a sync waits for tmux (its client may be behind by megabytes of output). */
const SYNC_TIMEOUT_MS = 10_000;

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
    const result = await subscribe(connection, name, format);
    if (result.code !== 0) {
      unsubscribe(connection, name);
      throw new ControlUnavailable(`tmux refused a format subscription: ${result.stderr.trim()}`);
    }
    listener.names.set(name, key);
  }
  connection.listeners.add(listener);
  return {
    close: () => {
      if (!connection.listeners.delete(listener) || connection.closed) return;
      for (const name of listener.names.keys()) unsubscribe(connection, name);
    },
  };
}

/**
 * Subscribes `connection`'s client to `format` under `name` (`refresh-client -B`): tmux checks
 * it once a second and reports a changed value. Never session-wide (`NAME::FORMAT`): tmux
 * 3.3a checks such a subscription without asking whether the client still has a session, and
 * a client whose session was destroyed stays until its process has read tmux's farewell (a
 * moment; for ever if the process is stopped): a changed value then crashes the server, with
 * every session in it. A window's subscription (`NAME:@N:FORMAT`) is checked only where the
 * window is in the client's session, so it is hung on a window of that session (its anchor,
 * moved by {@link reanchor} when that window goes). A format is expanded alike on either
 * kind, for a server-wide value. Subscriptions of a client go to tmux in the order asked.
 */
export function subscribe(
  connection: Connection,
  name: string,
  format: string,
): Promise<ControlResult> {
  connection.subscriptions.set(name, format);
  return inOrder(connection, async () => {
    connection.anchor ||= await anchorOf(connection);
    if (!connection.anchor) {
      throw new ControlUnavailable("tmux showed no window in the control client's session");
    }
    return await subscribeAt(connection, name, connection.anchor);
  });
}

/** Drops `connection`'s subscription `name`; best effort. */
export function unsubscribe(connection: Connection, name: string): void {
  if (!connection.subscriptions.delete(name)) return;
  inOrder(connection, () => connection.exec(["refresh-client", "-B", name], { timeoutMs: 5_000 }))
    .catch(() => {});
}

/**
 * Moves `connection`'s subscriptions to a window still in its session, after a window was
 * closed or unlinked: if it was their anchor, they would report nothing more. Each is asked
 * again under its name, which replaces the old one; tmux reports the value anew, and the
 * listener tells a change only from the value it knew. Best effort: a connection whose
 * session is gone is leaving.
 */
export function reanchor(connection: Connection): void {
  inOrder(connection, async () => {
    if (connection.closed) return;
    const anchor = await anchorOf(connection);
    if (!anchor || anchor === connection.anchor) return;
    connection.anchor = anchor;
    for (const name of connection.subscriptions.keys()) {
      await subscribeAt(connection, name, anchor);
    }
  }).catch(() => {});
}

/** The current window of `connection`'s session ("" if tmux shows none). */
async function anchorOf(connection: Connection): Promise<string> {
  const result = await connection.exec([
    "display-message",
    "-p",
    ...(connection.sessionId ? ["-t", connection.sessionId] : []),
    "#{window_id}",
  ], { timeoutMs: 5_000 });
  const id = new TextDecoder().decode(result.stdout).trim();
  return result.code === 0 && /^@\d+$/.test(id) ? id : "";
}

function subscribeAt(connection: Connection, name: string, anchor: string) {
  const format = connection.subscriptions.get(name) ?? "";
  return connection.exec(["refresh-client", "-B", `${name}:${anchor}:${format}`], {
    timeoutMs: 5_000,
  });
}

/** Runs `fn` after every earlier one for `connection` has ended (subscriptions' order). */
function inOrder<T>(connection: Connection, fn: () => Promise<T>): Promise<T> {
  const run = (queues.get(connection) ?? Promise.resolve()).then(fn);
  queues.set(connection, run.then(() => {}, () => {}));
  return run;
}

const queues = new WeakMap<Connection, Promise<void>>();

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
export function loseWatchers(connection: Connection, left = false): void {
  for (const watcher of [...connection.watchers]) {
    connection.watchers.delete(watcher);
    try {
      watcher.listener({ output: [], changed: true, lost: true, left });
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
    watcher.listener({ output: [], changed: true, lost: true, left: true });
  }
}

/**
 * Tells the watchers on `connection` of the panes in `paused` (tmux said `%pause`: it dropped
 * what it held of their output for the client) that their feed was cut: output went unheard, a
 * gap a program in the pane can make by printing faster than the client reads, so it is a cut
 * (WatchBatch.left unset), and a stream with it vouches for nothing it lacks (job_state.ts).
 * Like any lost feed, the watch has ended: it reads the pane and watches it again (the
 * connection has asked tmux for the pane's output again, see Connection). Each is let go as a
 * closed watch is (`closed`: the connection may linger and leave once none is left).
 */
export function losePausedPanes(connection: Connection, paused: ReadonlySet<string>): void {
  for (const watcher of [...connection.watchers]) {
    if (!paused.has(watcher.paneId)) continue;
    connection.watchers.delete(watcher);
    try {
      watcher.listener({ output: [], changed: true, lost: true, left: false });
    } catch {
      // The watcher's own business.
    }
    watcher.closed?.(connection);
  }
}
