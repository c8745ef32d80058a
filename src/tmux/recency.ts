/**
 * Which session a control client joins, and how it leaves the person's sessions in the order
 * it found them.
 *
 * tmux picks a session by recent use where nothing names one: a plain `tmux attach` takes the
 * most recently used session that no client is attached to, and a command run outside tmux
 * with no target takes the most recently used session (cmd-find.c). A control client counts
 * for both: attaching marks its session used now, and while attached the session is not
 * "unattached". Unchecked, a person who comes back and types `tmux attach` lands in whichever
 * session our client last joined, not in theirs.
 *
 * So a control client joins, when it has a choice, the least recently used session nobody is
 * attached to (never a plain attach's pick while another unattached one was used later); and
 * before leaving, it moves for a moment to the
 * session that was most recently used before we touched any (which marks it used again), so
 * that it is on top once more. A process killed outright (SIGKILL) says no goodbye: so right
 * after a client of ours attached, another attaches for a moment to the session that was most
 * recently used before (and leaves at once), which puts that one back on top from the start;
 * not to a session someone is attached to (their hooks would run where they look). tmux keeps last use to the microsecond but shows it in seconds:
 * uses within one second cannot be ordered by reading them. There the pick prefers a session we
 * never touched, then the newer session, and the move is made.
 *
 * A client that must join a person's session (to follow a pane's output there) cannot keep out
 * of tmux's other choice by recency: commands that need a client and name none go to the
 * session's most recently active client, and tmux counts a client's activity from its creation
 * and the person's keys. So such a client stays while anyone but tmux-mcp is attached there
 * (control_leaving.ts): after the person's next key it is never the newest again, where a fresh
 * one per wait would be.
 *
 * @module
 */

import { OWN_KIND_FORMAT } from "./identity.ts";

/** A session as tmux ranks it for a target-less attach or command. */
export interface SessionStanding {
  readonly id: string;
  /** `session_activity`: last use, in seconds since the epoch. */
  readonly activity: number;
  /** `session_attached`: clients attached to it, control clients included. */
  readonly clients: number;
  /** `destroy-unattached` on: it ends when its last client leaves, so we never join it. */
  readonly destroyUnattached: boolean;
  /**
   * The server's `exit-unattached` (the same on every row): on, the server exits once no
   * client is attached, and a control client of ours must not be the one that keeps it.
   */
  readonly exitUnattached: boolean;
}

/** The list-sessions format {@link parseStandings} reads. */
export const STANDING_FORMAT =
  "#{session_id} #{session_activity} #{session_attached} #{destroy-unattached} " +
  "#{exit-unattached}";

/** Reads list-sessions output in {@link STANDING_FORMAT}; lines that do not fit are skipped. */
export function parseStandings(text: string): SessionStanding[] {
  const standings: SessionStanding[] = [];
  for (const line of text.split("\n")) {
    const [id, activity, clients, destroy, exit] = line.split(" ");
    if (!/^\$\d+$/.test(id ?? "") || !/^\d+$/.test(activity ?? "")) continue;
    standings.push({
      id,
      activity: Number(activity),
      clients: /^\d+$/.test(clients ?? "") ? Number(clients) : 0,
      destroyUnattached: destroy === "1" || destroy === "on",
      exitUnattached: exit === "1" || exit === "on",
    });
  }
  return standings;
}

/** A client attached to a session, as a leaving or attaching control client reads it. */
export interface Seat {
  readonly sessionId: string;
  /** `client_name`: its terminal, or `client-<pid>` without one. */
  readonly name: string;
  /** Whether it is tmux-mcp's, this process's or another's (see identity.ts `isOwnKind`). */
  readonly ownKind: boolean;
}

/**
 * The list-clients format {@link parseSeats} reads: tab-separated, so that no line of it reads
 * as a line of {@link STANDING_FORMAT} (space-separated, and no field of it holds a tab), and
 * the two can come back from one tmux invocation. Nothing a client chose reaches it: its name
 * is its terminal's path or `client-<pid>`, and its kind is `1` or `0`.
 */
export const SEAT_FORMAT = `#{session_id}\t${OWN_KIND_FORMAT}\t#{client_name}`;

/** Reads list-clients output in {@link SEAT_FORMAT}; lines that do not fit are skipped. */
export function parseSeats(text: string): Seat[] {
  return text.split("\n").map((line) => line.split("\t"))
    .filter(([id, kind, name]) =>
      /^\$\d+$/.test(id ?? "") && (kind === "0" || kind === "1") && name !== undefined
    )
    .map(([sessionId, kind, ...name]) => ({
      sessionId,
      name: name.join("\t"),
      ownKind: kind === "1",
    }));
}

/**
 * Whether a control client attaching (or staying) would keep the server alive on its own:
 * `exit-unattached` is on and every client attached is tmux-mcp's, this process's or another
 * tmux-mcp process's (two MCP clients on one server): without tmux-mcp, nobody would be.
 */
export function holdsOpen(
  standings: readonly SessionStanding[],
  seats: readonly Seat[],
): boolean {
  if (!standings.some((s) => s.exitUnattached)) return false;
  return seats.every((s) => s.ownKind);
}

/** A session's number, for stable tie-breaks (`$12` → 12). */
function numberOf(id: string): number {
  return Number(id.slice(1));
}

/**
 * The session a control client should join: of `standings` (limited to `among`, when given)
 * and never a destroy-unattached one, the least recently used, preferring sessions no client
 * is attached to. Undefined when none may be joined.
 *
 * Not a session a person is attached to, when there is a choice: once they detach, it would be
 * their plain attach's pick while our client still sits there; and tmux hands commands that
 * need a client (`display-message`, `switch-client`, `display-popup` run with no `-c` from a
 * pane) to the session's most recently active client, which a client that joined after the
 * person's last key is.
 */
export function sessionToJoin(
  standings: readonly SessionStanding[],
  among?: readonly string[],
): string | undefined {
  const open = standings.filter((s) =>
    !s.destroyUnattached && (among === undefined || among.includes(s.id))
  );
  const alone = open.filter((s) => s.clients === 0);
  const from = alone.length > 0 ? alone : open;
  if (from.length === 0) return undefined;
  return from.reduce((a, b) =>
    b.activity < a.activity || (b.activity === a.activity && numberOf(b.id) < numberOf(a.id))
      ? b
      : a
  ).id;
}

/** What this process did to a session's last use. */
export interface Touch {
  /** Its last use before our first attach to it (or the person's, if later than ours). */
  readonly before: number;
  /** The last use our latest attach gave it. */
  readonly bumped: number;
}

/** The record after one of our clients attached to a session last used at `before`. */
export function touched(previous: Touch | undefined, before: number, bumped: number): Touch {
  // A use after our last attach was someone else's: it is the session's own.
  const own = previous === undefined || before > previous.bumped ? before : previous.before;
  return { before: own, bumped };
}

/**
 * The session a leaving control client should move to for a moment, so that the session a
 * plain `tmux attach` would have picked without us is the most recently used again; null when
 * it already is, or cannot be (it is destroy-unattached, which we never join).
 *
 * `others` counts, per session, the clients other than the leaving one: a session without any
 * is what tmux calls unattached once we leave.
 */
export function sessionToRestore(
  standings: readonly SessionStanding[],
  others: ReadonlyMap<string, number>,
  touches: ReadonlyMap<string, Touch>,
): string | null {
  const unattached = standings.filter((s) => (others.get(s.id) ?? 0) === 0);
  if (unattached.length < 2) return null;
  const pick = mostRecentWithoutUs(unattached, touches);
  if (pick.destroyUnattached) return null;
  return leads(pick, unattached) ? null : pick.id;
}

/**
 * The session a control client of ours should attach to for a moment (and leave at once),
 * right after one of ours attached, so that the session most recently used before we came is
 * the most recently used again from then on: should this process be killed outright, no
 * goodbye ({@link sessionToRestore}) would run, and the attach would stay the last use of the
 * session it joined. Null when that session leads already, or must not be joined: it ends when
 * its last client leaves (destroy-unattached), or someone not tmux-mcp is attached to it
 * (`held`), whose hooks would run and whose pane would be focused by a client of ours coming
 * and going.
 *
 * Unlike {@link sessionToRestore}, it ranks every session, attached or not: one a person is
 * attached to now is their plain attach's pick once they have left it.
 */
export function sessionToLift(
  standings: readonly SessionStanding[],
  touches: ReadonlyMap<string, Touch>,
  held: ReadonlySet<string>,
): string | null {
  if (standings.length < 2) return null;
  const pick = mostRecentWithoutUs(standings, touches);
  if (pick.destroyUnattached || held.has(pick.id)) return null;
  return leads(pick, standings) ? null : pick.id;
}

/** Of `sessions` (not empty), the one most recently used as it would be without us. */
function mostRecentWithoutUs(
  sessions: readonly SessionStanding[],
  touches: ReadonlyMap<string, Touch>,
): SessionStanding {
  /** Its last use as it would be without us. */
  const own = (s: SessionStanding) => {
    const touch = touches.get(s.id);
    return touch !== undefined && s.activity <= touch.bumped ? touch.before : s.activity;
  };
  // In a tie (the same second), a session we never touched, then the newer: sessions made
  // in one second by a script rank by creation, and tmux's microseconds favour the later.
  const rank = (s: SessionStanding) =>
    [own(s), touches.has(s.id) ? 0 : 1, s.activity, numberOf(s.id)] as const;
  return sessions.reduce((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return y[i] > x[i] ? b : a;
    return a;
  });
}

/**
 * Whether `pick` was used later than every other of `sessions`, as far as seconds tell: in a
 * tie, tmux's microseconds may rank another first.
 */
function leads(pick: SessionStanding, sessions: readonly SessionStanding[]): boolean {
  return sessions.every((s) => s === pick || pick.activity > s.activity);
}
