/**
 * Where typing into a pane goes when the pane runs a tmux client: on to the pane that client
 * shows, and from there on again when that pane runs a client too (a chain of clients, each
 * attached inside a pane of the one before). The input guard and the agent hook follow the
 * whole chain: a chain of two clients reaches a pane a person watches as surely as one does.
 *
 * @module
 */

import { drawnNothing, tmuxChild } from "./foreground.ts";
import { inputCohort } from "./identity.ts";
import type { ClientRow, PaneRow, Snapshot } from "./snapshot.ts";

/** One client the keys pass through: it runs in a pane and shows `shown`. */
export interface RelayHop {
  readonly client: ClientRow;
  readonly shown: PaneRow;
}

/** What input into a pane that runs a tmux client reaches. */
export interface Relay {
  /** The clients of this server the keys pass through, in turn; empty when none is. */
  readonly hops: readonly RelayHop[];
  /**
   * Every pane the keys reach past the first client: the panes shown along the chain, and
   * those synchronize-panes copies them to.
   */
  readonly reached: readonly PaneRow[];
  /**
   * A pane the keys reach runs a tmux program with no client of this server on its terminal:
   * a client of another server, as far as can be told (`from`: that pane).
   */
  readonly onward: PaneRow | null;
  /**
   * A client on the way shows a pane the snapshot does not hold (a read of one window): where
   * the keys go from there is not known, and a guard must not take it for nowhere.
   */
  readonly unknown: boolean;
}

/**
 * Clients known to run in a pane under a wrapper (a terminal of their own: wrapped_relay.ts),
 * by the snapshot they were found for and the pane.
 */
const wrapped = new WeakMap<Snapshot, Map<string, ClientRow>>();

/**
 * Panes known to run a tmux program below a wrapper with no client of this server there: a
 * client of another server (wrapped_relay.ts), by the snapshot they were found for.
 */
const foreign = new WeakMap<Snapshot, Set<string>>();

/** Notes, for `snapshot`, that a client of another server runs in `paneId` under a wrapper. */
export function noteForeign(snapshot: Snapshot, paneId: string): void {
  const panes = foreign.get(snapshot) ?? new Set<string>();
  panes.add(paneId);
  foreign.set(snapshot, panes);
}

/** Notes, for `snapshot`, that `client` runs in `paneId` under a wrapper. */
export function noteWrapped(snapshot: Snapshot, paneId: string, client: ClientRow): void {
  const panes = wrapped.get(snapshot) ?? new Map<string, ClientRow>();
  panes.set(paneId, client);
  wrapped.set(snapshot, panes);
}

/**
 * Whether what is typed into a pane reaches its program: a pane that is dead, in a mode or has
 * its input off gives it nothing (and tmux copies no key to such a synchronized sibling).
 */
export function takesKeys(pane: PaneRow): boolean {
  return !pane.dead && !pane.inMode && !pane.inputOff;
}

/** The client of `snapshot`'s server whose terminal is `tty` (a pane's), if any. */
export function terminalClient(snapshot: Snapshot, tty: string): ClientRow | undefined {
  return tty === "" ? undefined : snapshot.clients.find((c) => c.tty === tty);
}

/**
 * The client of this server whose terminal is `pane`'s (or that runs in it under a wrapper,
 * {@link noteWrapped}), or null; none where the pane does not take keys ({@link takesKeys}).
 */
function clientIn(snapshot: Snapshot, pane: PaneRow): ClientRow | null {
  if (!takesKeys(pane)) return null;
  return terminalClient(snapshot, pane.tty) ?? wrapped.get(snapshot)?.get(pane.id) ?? null;
}

/**
 * Whether `pane` runs a client of this server that takes what is typed there (on the pane's
 * terminal, or under a wrapper as noted): the keys go on to the panes it shows.
 */
export function runsClient(snapshot: Snapshot, pane: PaneRow): boolean {
  return clientIn(snapshot, pane) !== null;
}

/**
 * Whether a pane that takes keys runs tmux that has drawn something, or a client of another
 * server under a wrapper ({@link noteForeign}; see relayFrom).
 */
function runsOtherTmux(snapshot: Snapshot, pane: PaneRow): boolean {
  return takesKeys(pane) &&
    ((tmuxChild(pane.command) && !drawnNothing(pane)) ||
      foreign.get(snapshot)?.has(pane.id) === true);
}

/**
 * What typing into `pane` passes through, or null when it runs no tmux client. A client of this
 * server is known by its terminal (the pane's); a program tmux names `tmux` with none of this
 * server's clients on it counts as another server's client, unless the pane is blank: tmux
 * names a new pane's program after itself until its child has started it, and a client draws
 * the screen at once. The chain is followed through every client of this server (each shown
 * pane, and the panes synchronize-panes copies its keys to), each pane once.
 */
export function relayFrom(snapshot: Snapshot, pane: PaneRow): Relay | null {
  const first = clientIn(snapshot, pane);
  if (first === null) {
    return runsOtherTmux(snapshot, pane)
      ? { hops: [], reached: [], onward: pane, unknown: false }
      : null;
  }
  return followClient(snapshot, first, new Set([pane.id]));
}

/**
 * The chain from `client`, a client of this server (found by a terminal it runs on): the pane
 * it shows and onward. `seen`: the panes already on the way, followed no further.
 */
export function followClient(
  snapshot: Snapshot,
  client: ClientRow,
  seen: Set<string> = new Set(),
): Relay {
  const hops: RelayHop[] = [];
  const reached: PaneRow[] = [];
  let onward: PaneRow | null = null;
  let unknown = false;
  const queue: ClientRow[] = [client];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const shown = snapshot.panes.find((p) => p.id === next!.paneId);
    if (!shown) {
      unknown = true;
      continue;
    }
    hops.push({ client: next, shown });
    // A client with an active pane of its own (`-f active-pane`) types into that pane, which no
    // format names: any pane of the window it shows.
    const into = next.ownActivePane
      ? snapshot.panes.filter((p) => p.windowId === shown.windowId).flatMap((p) =>
        inputCohort(snapshot, p)
      )
      : inputCohort(snapshot, shown);
    for (const p of into) {
      if (seen.has(p.id)) continue;
      seen.add(p.id);
      reached.push(p);
      // Where the pane takes no keys (clientIn, runsOtherTmux), they stop there.
      const further = clientIn(snapshot, p);
      if (further) queue.push(further);
      else if (onward === null && runsOtherTmux(snapshot, p)) onward = p;
    }
  }
  return { hops, reached, onward, unknown };
}

/**
 * The panes the chain's clients show: `%4` for one client, `%4 and on through tmux clients there
 * to %2` for more.
 */
export function chainText(relay: Relay): string {
  const [first, ...more] = relay.hops.map((hop) => hop.shown.id);
  return more.length === 0
    ? first ?? ""
    : `${first} and on through tmux clients there to ${more.join(", ")}`;
}
