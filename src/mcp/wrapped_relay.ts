/**
 * A tmux client a person started in a pane under a wrapper (`script`, `asciinema rec`, `sudo`
 * with use_pty, an editor's terminal): its terminal is the wrapper's, not the pane's, so the
 * input guard cannot know it by its terminal (relay.ts) — yet what is typed into the pane goes
 * on through the wrapper to it, and on to the pane it shows (the agent's own, or a watched one).
 * Such a client descends from the pane's process; the system where tmux runs says so
 * (foreground.ts `descendsFrom`, by tmux's `if-shell`).
 *
 * @module
 */

import { descendsFrom } from "../tmux/foreground.ts";
import { randomHex } from "../tmux/format.ts";
import type { ClientRow, PaneRow, Snapshot } from "../tmux/snapshot.ts";
import type { TmuxContext } from "./context.ts";

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
 * is known by it), with one tmux command for every pane and client not asked about before. A
 * question that cannot be answered (tmux refused it) counts as no client: the guard reads
 * terminals as before.
 */
export async function wrappedClients(
  ctx: TmuxContext,
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
    const yes = `tmux-mcp-under-${randomHex(8)}:`;
    const argv = ask.flatMap(({ pane, client }, i) => [
      ...(i > 0 ? [";"] : []),
      "if-shell",
      descendsFrom(client.pid, pane.pid),
      `display-message -p ${yes}${i}`,
    ]);
    let out: string;
    try {
      out = new TextDecoder().decode(await ctx.read(argv));
    } catch {
      return new Map();
    }
    const under = new Set(
      out.split("\n").filter((l) => l.startsWith(yes)).map((l) => Number(l.slice(yes.length))),
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
