/**
 * Which tmux server: its pid and when it started. The pid alone does not tell one server from
 * the next on the same socket: a tmux server in a container (a pid namespace of its own) gets
 * the same small pid each time the container starts, and its panes the same ids and pids. tmux
 * tells when its server started (`#{start_time}`) to the second, so only a server restarted
 * with the same pid within the same second is taken for its predecessor.
 *
 * @module
 */

/** A tmux server, as told apart from any other that ran or runs on its socket. */
export interface ServerIdentity {
  readonly pid: number;
  /** When it started: tmux's `#{start_time}`, seconds since the epoch. */
  readonly startTime: number;
}

/** What tmux prints for {@link parseServerIdentity}. */
export const SERVER_IDENTITY_FORMAT = "#{pid} #{start_time}";

/** The server `text` (as {@link SERVER_IDENTITY_FORMAT} prints it) names; null for anything else. */
export function parseServerIdentity(text: string): ServerIdentity | null {
  const m = /^(\d{1,12}) (\d{1,15})$/.exec(text);
  return m ? { pid: Number(m[1]), startTime: Number(m[2]) } : null;
}

/** Whether `a` and `b` are the same server. */
export function sameServer(a: ServerIdentity, b: ServerIdentity): boolean {
  return a.pid === b.pid && a.startTime === b.startTime;
}

/** A tmux condition that holds only on the server `id` (`#{==:…}` of its pid and start). */
export function onServerFormat(id: ServerIdentity): string {
  return `#{&&:#{==:#{pid},${id.pid}},#{==:#{start_time},${id.startTime}}}`;
}

/**
 * The servers `then` and `now` (null: one that did not say which) for a message on a server
 * that changed: their pids, and when each started where the pid is the same.
 */
export function serversText(then: ServerIdentity, now: ServerIdentity | null): string {
  if (now === null) return `pid ${then.pid} then, another now`;
  if (now.pid !== then.pid) return `pid ${then.pid} then, ${now.pid} now`;
  return `pid ${then.pid} then and now, started ${isoSeconds(then.startTime)} then and ` +
    `${isoSeconds(now.startTime)} now`;
}

/** A start time (seconds since the epoch) as ISO 8601. */
function isoSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
}
