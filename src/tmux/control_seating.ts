/**
 * Who sits where on a tmux server, as the rules that keep our control clients out of a
 * person's way read it: every session's standing and every client's session (recency.ts parses
 * them), whether someone not tmux-mcp is attached beside a client of ours, the refusal to
 * attach where ours would keep an `exit-unattached` server alive, and, as a client leaves,
 * putting the person's sessions back in the order it found them. control_server.ts applies
 * these rules to the clients of one server.
 *
 * @module
 */

import { ControlUnavailable } from "./control_protocol.ts";
import type { Connection } from "./control_connection.ts";
import {
  holdsOpen,
  parseSeats,
  parseStandings,
  type Seat,
  SEAT_FORMAT,
  type SessionStanding,
  sessionToRestore,
  STANDING_FORMAT,
  type Touch,
} from "./recency.ts";
import type { TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";

/** A tmux server's sessions and clients, as a leaving, idle or attaching client reads them. */
export interface Seating {
  readonly standings: SessionStanding[];
  readonly clients: readonly Seat[];
}

/**
 * Refuses to attach where our client would be what keeps the server alive: `exit-unattached`
 * is on and nobody but tmux-mcp is attached (see {@link holdsOpen}).
 */
export function requireOthers({ standings, clients }: Seating): void {
  if (holdsOpen(standings, clients)) {
    throw new ControlUnavailable(
      "exit-unattached is on and no client but tmux-mcp's is attached: a control client " +
        "would keep the server alive",
    );
  }
}

/**
 * Every session with its last use, clients and destroy-unattached (see recency.ts), and every
 * client's session and kind: read by one tmux process, before a client of ours attaches.
 * `closed`: the server's clients are being let go, so none is to attach.
 */
export async function seatingToAttach(
  runner: TmuxRunner,
  address: ServerAddress,
  closed: boolean,
): Promise<Seating> {
  if (closed || runner.closed) throw new ControlUnavailable("shutting down");
  const result = await runner.exec(address, [
    "list-sessions",
    "-F",
    STANDING_FORMAT,
    ";",
    "list-clients",
    "-F",
    SEAT_FORMAT,
  ]);
  if (result.code !== 0) return { standings: [], clients: [] };
  const text = new TextDecoder().decode(result.stdout);
  return { standings: parseStandings(text), clients: parseSeats(text) };
}

/**
 * Before `connection` leaves: if a session our clients used now stands where a person's
 * plain `tmux attach` would pick it, though another was more recently used before we came,
 * the client moves to that one for a moment (see recency.ts). `touches`: the sessions the
 * server's clients attached to, and their last use before. Best effort: never throws.
 */
export async function restoreRecency(
  runner: TmuxRunner,
  address: ServerAddress,
  connection: Connection,
  touches: Map<string, Touch>,
): Promise<void> {
  if (touches.size === 0 || connection.closed || connection.clientName === "") return;
  try {
    const seating = await readSeating(connection);
    if (seating === null) return;
    const { standings, clients } = seating;
    for (const id of touches.keys()) {
      if (!standings.some((s) => s.id === id)) touches.delete(id);
    }
    const others = new Map<string, number>();
    for (const { sessionId, name } of clients) {
      if (name !== connection.clientName) others.set(sessionId, (others.get(sessionId) ?? 0) + 1);
    }
    const target = sessionToRestore(standings, others, touches);
    if (target === null) return;
    // Our own move, on its way out: not one tmux made (ServerControl's #leaveMoved).
    connection.leaving = true;
    // -E: as when attaching, this process's environment stays out of the session.
    await runner.inStructureLane(
      address,
      () => connection.exec(["switch-client", "-E", "-t", target], { timeoutMs: 2_000 }),
    );
  } catch {
    // The connection or the server went away: nothing left to put back.
  }
}

/**
 * Whether someone not tmux-mcp (see {@link isSomeone}) is attached to `connection`'s session;
 * `ours`: the server's clients.
 */
export async function sessionShared(
  connection: Connection,
  ours: Iterable<Connection>,
): Promise<boolean> {
  try {
    const seating = await readSeating(connection);
    return seating !== null && othersIn(connection.sessionId, seating.clients, ours);
  } catch {
    return false;
  }
}

/** Every session's standing and every client's session, read over `connection`. */
export async function readSeating(connection: Connection): Promise<Seating | null> {
  const options = { timeoutMs: 2_000 };
  const [sessions, clients] = await Promise.all([
    connection.exec(["list-sessions", "-F", STANDING_FORMAT], options),
    connection.exec(["list-clients", "-F", SEAT_FORMAT], options),
  ]);
  if (sessions.code !== 0 || clients.code !== 0) return null;
  return {
    standings: parseStandings(new TextDecoder().decode(sessions.stdout)),
    clients: parseSeats(new TextDecoder().decode(clients.stdout)),
  };
}

/**
 * Whether `client` is someone the rules that keep our clients out of the way wait for: a
 * person, or another program. Not a client of this process (one of `ours`), nor one of another
 * tmux-mcp process (see identity.ts `isOwnKind`): that one follows the same rules, and waiting
 * for each other, two processes would keep each other attached for ever.
 */
export function isSomeone(client: Seat, ours: Iterable<Connection>): boolean {
  if (client.ownKind) return false;
  return ![...ours].some((c) => c.clientName === client.name);
}

/**
 * Whether someone not tmux-mcp (see {@link isSomeone}) is attached to session `sessionId`;
 * `ours`: the server's clients.
 */
export function othersIn(
  sessionId: string,
  clients: Seating["clients"],
  ours: Iterable<Connection>,
): boolean {
  return clients.some((c) => c.sessionId === sessionId && isSomeone(c, ours));
}
