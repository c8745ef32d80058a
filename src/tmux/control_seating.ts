/**
 * Who sits where on a tmux server, as the rules that keep our control clients out of a
 * person's way read it: every session's standing and every client's session (recency.ts parses
 * them), whether someone not tmux-mcp is attached beside a client of ours, the refusal to
 * attach where ours would keep an `exit-unattached` server alive, and putting the person's
 * sessions back in the order a client found them: right after it attached (for a process
 * killed outright, which says no goodbye), and as it leaves. control_opening.ts,
 * control_leaving.ts and control_server.ts apply these rules to the clients of one server.
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
  sessionToLift,
  sessionToRestore,
  STANDING_FORMAT,
  type Touch,
} from "./recency.ts";
import { OWN_TERM } from "./identity.ts";
import { jobsAndModes, leaveHookModes } from "./control_attach.ts";
import { boundFromRun, limitsOf } from "./control_limits.ts";
import { LEAVE_AT_ONCE } from "./control_leave.ts";
import type { PersistentChild, TmuxRunner } from "./run.ts";
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
  ], { aliasUnchecked: true }); // the opening a read of the aliases may wait for
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
    // Our own move, on its way out: not one tmux made (control_leaving.ts's #leaveMoved).
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
 * Longest a momentary client ({@link liftAfterAttach}) may take to attach and leave, from when
 * tmux runs (see {@link momentary}).
 */
const LIFT_TIMEOUT_MS = 2_000;

/**
 * Right after `connection` attached: if its attach made the session it joined the most
 * recently used, though another was before we came, a momentary client of ours attaches to
 * that one and leaves at once, which makes it the most recently used again (see recency.ts
 * `sessionToLift`). The order then holds whether this process says goodbye or not: one killed
 * outright runs no {@link restoreRecency}. `touches`: the sessions the server's clients
 * attached to, and their last use before; `ours`: the server's clients. Best effort: never
 * throws.
 */
export async function liftAfterAttach(
  runner: TmuxRunner,
  address: ServerAddress,
  connection: Connection,
  touches: ReadonlyMap<string, Touch>,
  ours: Iterable<Connection>,
): Promise<void> {
  if (touches.size === 0 || connection.closed) return;
  try {
    // Read by a tmux process of its own, as before the attach: every call over the connection
    // ends with a `display-message` of the protocol's, which runs a person's
    // after-display-message hooks once more.
    const seating = await seatingToAttach(runner, address, false);
    const held = new Set(
      seating.clients.filter((c) => isSomeone(c, ours)).map((c) => c.sessionId),
    );
    const target = sessionToLift(seating.standings, touches, held);
    if (target === null) return;
    // What a person's hooks put on the panes as it attaches is taken back as for our own
    // attach, once the jobs started since are over (not those running before: no hook of this
    // attach started them), and only where a view-mode was pushed on a session's active pane
    // since the modes read in the same step as the jobs (control_attach.ts's leaveHookModes):
    // once the client has left, tmux shows its hooks' output outside the session it joined.
    const { jobs: older, modes } = await jobsAndModes(connection);
    // As our clients attach (control_attach.ts): -E keeps this process's environment out of
    // the session, and TERM marks the client as tmux-mcp's for other tmux-mcp processes.
    const child = await runner.spawnPersistent(address, [
      "-C",
      "attach-session",
      "-E",
      "-f",
      "ignore-size,no-output",
      "-t",
      target,
      ...LEAVE_AT_ONCE,
    ], { TERM: OWN_TERM });
    await momentary(child, limitsOf(runner).remoteStartMs);
    const waitMs = limitsOf(runner).hookJobsWaitMs;
    await leaveHookModes(connection, null, modes, waitMs, () => connection.closed, older, true);
  } catch {
    // The connection or the server went away: nothing to keep in order.
  }
}

/**
 * Lets a control client just started go: it leaves as a detach in its own command line, right
 * after its attach (control_leave.ts), and its stdin is closed once tmux has answered the
 * attach (tmux ends a control client at its end of file at the latest), so that the attach is
 * never cut short, and everything tmux writes to it is read to the end (a control client whose
 * reader went away while tmux wrote to it crashed tmux 3.3a's server in stress runs, run.ts).
 * Killed (SIGTERM) after {@link LIFT_TIMEOUT_MS} from when tmux runs: on an SSH host the remote
 * shell's start-up files come first, within `remoteStartMs` (control_limits.ts).
 */
async function momentary(child: PersistentChild, remoteStartMs: number): Promise<void> {
  const stopBound = boundFromRun(child, remoteStartMs, LIFT_TIMEOUT_MS, () => child.kill());
  try {
    // Its detach comes within its own handshake, which holds our other acts back. Its end of
    // file is an act of ours too (should the detach not have run, tmux tells every control
    // client an attached one detached): never while another client of ours shakes hands
    // (handshake_hold.ts), counted until it has exited.
    let ending: Promise<void> | null = null;
    const closeStdin = () =>
      ending ??= child.act().then((over) => {
        child.status.then(over, over);
        return child.stdin.close().catch(() => {});
      });
    let answered = false;
    let text = "";
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const chunk of child.stdout) {
        child.answered();
        if (answered) continue;
        text += decoder.decode(chunk, { stream: true });
        if (/^%(end|error) /m.test(text)) {
          answered = true;
          text = "";
          closeStdin();
        }
      }
    })();
    const complaints = child.stderr.pipeTo(new WritableStream()).catch(() => {});
    await child.status;
    if (!answered) closeStdin();
    await Promise.all([reading.catch(() => {}), complaints, ending]);
  } finally {
    stopBound();
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
