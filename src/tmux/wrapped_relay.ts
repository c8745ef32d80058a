/**
 * A tmux client a person started in a pane under a wrapper (`script`, `asciinema rec`, `sudo`
 * with use_pty, an editor's terminal): its terminal is the wrapper's, not the pane's, so the
 * input guard cannot know it by its terminal (relay.ts) — yet what is typed into the pane goes
 * on through the wrapper to it, and on to the pane it shows (the agent's own, or a watched one).
 * Such a client descends from the pane's process; the system where tmux runs says so
 * (foreground.ts `descendsFrom`, by tmux's `if-shell`). The server's input guard and the agent
 * hook both ask, along the whole chain of clients the keys pass through (relay.ts).
 *
 * @module
 */

import { descendsFrom, drawnNothing, tmuxBelow, tmuxChild } from "./foreground.ts";
import { isShellCommand } from "./prompt.ts";
import { shellsSay } from "./if_shell.ts";
import { noteForeign, noteWrapped, relayFrom, takesKeys, terminalClient } from "./relay.ts";
import type { ClientRow, PaneRow, Snapshot } from "./snapshot.ts";

/** Runs one tmux command (its argv) on the snapshot's server; its output. */
export type TmuxRead = (argv: string[]) => Promise<Uint8Array>;

/**
 * What was learnt of a pane's process and a client's: whether the client descends from it.
 * Keyed by server, pane process and client (pid and terminal): a process's ancestors do not
 * change while it lives, except by being handed to init, which makes it descend from no pane.
 */
const known = new Map<string, boolean>();

/** Most answers kept: a long session sees few panes typed into and fewer clients. */
const MAX_KNOWN = 4_096;

function keyOf(server: number | null, pane: PaneRow, client: ClientRow): string {
  return `${server}:${pane.pid}:${client.pid}:${client.tty}`;
}

/**
 * The clients of this server that run under a wrapper in `panes` (see the module), by pane.
 * Asked only about clients on a terminal other than the pane's (one on the pane's own terminal
 * is known by it), with one tmux command for every pane and client not asked about before (a
 * long one goes to tmux as a file: command_file.ts). A question tmux does not answer fails the
 * read, as any read of the guard's does: taken for "no client", it would let keys through
 * unjudged.
 */
export async function wrappedClients(
  read: TmuxRead,
  snapshot: Snapshot,
  panes: readonly PaneRow[],
): Promise<Map<string, ClientRow>> {
  const server = snapshot.server?.pid ?? null;
  const pairs = panes.filter((p) => p.pid > 0 && !p.dead).flatMap((pane) =>
    snapshot.clients.filter((c) => c.tty !== "" && c.tty !== pane.tty && c.pid > 0)
      .map((client) => ({ pane, client, key: keyOf(server, pane, client) }))
  );
  const ask = pairs.filter((q) => !known.has(q.key));
  if (ask.length > 0) {
    const under = await shellsSay(
      read,
      ask.map(({ pane, client }) => descendsFrom(client.pid, pane.pid)),
    );
    if (known.size + ask.length > MAX_KNOWN) known.clear();
    ask.forEach((q, i) => known.set(q.key, under.has(i)));
  }
  const found = new Map<string, ClientRow>();
  for (const { pane, client, key } of pairs) {
    if (!found.has(pane.id) && known.get(key) === true) found.set(pane.id, client);
  }
  return found;
}

/**
 * The panes of `panes` below whose process a tmux program runs (foreground.ts `tmuxBelow`): where
 * no client of this server runs there ({@link wrappedClients}), a client of another server under
 * a wrapper, which typing there reaches as it would a plain one (relay.ts `noteForeign`). Asked
 * about every pane but a shell's (a shell at the front reads the keyboard itself; one running a
 * script is named after its shell and left: tmux forks itself for every question, which costs
 * more the more memory it holds, 6 ms at 65 MB, and typing into shells is the common call) and one
 * known by name to run tmux (named so and drawn: relay.ts), in one tmux command. Answers are not
 * kept (a client may start there at any moment) beyond one call's reads: `asked`, by pane and
 * process.
 */
async function tmuxUnder(
  read: TmuxRead,
  panes: readonly PaneRow[],
  asked: Map<string, boolean> = new Map(),
): Promise<Set<string>> {
  const paneKey = (p: PaneRow) => `${p.id}:${p.pid}`;
  const ask = panes.filter((p) =>
    p.pid > 0 && !p.dead && !isShellCommand(p.command) &&
    !(tmuxChild(p.command) && !drawnNothing(p)) && !asked.has(paneKey(p))
  );
  if (ask.length > 0) {
    const below = await shellsSay(read, ask.map((p) => tmuxBelow(p.pid)));
    ask.forEach((p, i) => asked.set(paneKey(p), below.has(i)));
  }
  return new Set(panes.filter((p) => asked.get(paneKey(p)) === true).map((p) => p.id));
}

/**
 * Notes in `snapshot` (relay.ts `noteWrapped`, `noteForeign`) every client under a wrapper that
 * typing into `from` reaches, of this server or another: in those panes, and in each pane shown
 * further along the chain of clients (a client on a pane's terminal showing a pane that runs a
 * wrapped one, and so on). Each pane is asked about once; the chain ends where no pane it
 * reaches is new. `asked`: {@link tmuxUnder}'s answers for the call so far.
 */
export async function noteWrappedAlong(
  read: TmuxRead,
  snapshot: Snapshot,
  from: readonly PaneRow[],
  asked: Map<string, boolean> = new Map(),
): Promise<void> {
  const looked = new Set<string>();
  let next: readonly PaneRow[] = from;
  while (next.length > 0) {
    next.forEach((p) => looked.add(p.id));
    const ask = next.filter((p) => takesKeys(p) && terminalClient(snapshot, p.tty) === undefined);
    const found = await wrappedClients(read, snapshot, ask);
    for (const [id, client] of found) noteWrapped(snapshot, id, client);
    const others = ask.filter((p) => !found.has(p.id));
    for (const id of await tmuxUnder(read, others, asked)) noteForeign(snapshot, id);
    next = from.flatMap((p) => relayFrom(snapshot, p)?.reached ?? [])
      .filter((p, i, all) => !looked.has(p.id) && all.findIndex((q) => q.id === p.id) === i);
  }
}
