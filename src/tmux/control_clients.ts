/**
 * What the parts of one tmux server's control-client pool share: the clients it has, which of
 * them carries commands, the turns in which they start and end, the sessions they attached to
 * (with their last use before, for recency.ts), whether the pool is closed, and until when no
 * client for commands is tried for want of a session. control_server.ts keeps one per server;
 * control_opening.ts adds clients to it, control_leaving.ts sees them leave.
 *
 * @module
 */

import type { Connection } from "./control_connection.ts";
import { ClientTurns } from "./control_turns.ts";
import type { Touch } from "./recency.ts";
import type { TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";

/**
 * One server's control clients, as the files that open them, use them and see them leave
 * share them: one record, so that each of those reads what the others changed.
 */
export class ServerClients {
  readonly runner: TmuxRunner;
  readonly address: ServerAddress;
  readonly connections = new Set<Connection>();
  /** Its clients start and end one at a time (control_turns.ts). */
  readonly turns: ClientTurns;
  /** The client that carries commands: never one opened for watches. */
  primary: Connection | null = null;
  /** Sessions our clients attached to, and their last use before (see recency.ts). */
  readonly touches = new Map<string, Touch>();
  /** Retired or closed: no client opens any more. */
  closed = false;
  /** Until when no client for commands is tried, after no session could take one. */
  noSessionUntil = 0;

  /** `ending`: a retired predecessor's clients, still ending (see {@link ClientTurns}). */
  constructor(runner: TmuxRunner, address: ServerAddress, ending?: Promise<void>) {
    this.runner = runner;
    this.address = address;
    this.turns = new ClientTurns(ending);
  }

  /** How many of its clients are live (not closed). */
  get live(): number {
    return [...this.connections].filter((c) => !c.closed).length;
  }
}
