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
 * The client of this server that runs under a wrapper in `pane` (see the module), or null.
 * Asked only about clients on a terminal other than the pane's (one on the pane's own terminal
 * is known by it), with one tmux command for all clients not asked about before. A question
 * that cannot be answered (tmux refused it) counts as no client: the guard reads terminals as
 * before.
 */
export async function wrappedClient(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
): Promise<ClientRow | null> {
  if (pane.pid <= 0 || pane.dead) return null;
  const server = snapshot.server?.pid ?? null;
  const candidates = snapshot.clients.filter((c) =>
    c.tty !== "" && c.tty !== pane.tty && c.pid > 0
  );
  const ask = candidates.filter((c) => !known.has(keyOf(server, pane, c)));
  if (ask.length > 0) {
    const yes = `tmux-mcp-under-${randomHex(8)}:`;
    const argv = ask.flatMap((c, i) => [
      ...(i > 0 ? [";"] : []),
      "if-shell",
      descendsFrom(c.pid, pane.pid),
      `display-message -p ${yes}${c.pid}`,
    ]);
    let out: string;
    try {
      out = new TextDecoder().decode(await ctx.read(argv));
    } catch {
      return null;
    }
    const under = new Set(
      out.split("\n").filter((l) => l.startsWith(yes)).map((l) => Number(l.slice(yes.length))),
    );
    if (known.size + ask.length > MAX_KNOWN) known.clear();
    for (const c of ask) known.set(keyOf(server, pane, c), under.has(c.pid));
  }
  return candidates.find((c) => known.get(keyOf(server, pane, c)) === true) ?? null;
}
