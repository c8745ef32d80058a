/**
 * tmux clients running inside panes: the relays that pass what is typed into their pane on to
 * the pane they show (the usual nesting: an agent's tmux attached in a pane of an outer one).
 *
 * @module
 */

import { type TestTmux, waitFor } from "./tmux.ts";

/** The command that attaches a client of `server` to `target`, drawing at once. */
function attachCommand(server: TestTmux, target: string, flags = "", tmux = "tmux"): string {
  const f = flags === "" ? "" : ` -f ${flags}`;
  return `env -u TMUX TERM=xterm ${tmux} -u -L ${server.socket} -f /dev/null attach${f} -t '${target}'`;
}

/** {@link attachCommand} under `script`: the client on a terminal of its own. */
function wrappedCommand(server: TestTmux, target: string, tmux = "tmux"): string {
  return `env -u TMUX TERM=xterm script -qc "${attachCommand(server, target, "", tmux)}" /dev/null`;
}

/** Waits until `server` has more clients than `before` and `pane` of `host` shows a status line. */
async function attached(host: TestTmux, server: TestTmux, before: number, pane: string) {
  await waitFor(
    async () => (await server.clientTtys()).length > before,
    "the nested client attached",
  );
  // Drawn: the client has painted the session it shows into the pane.
  await waitFor(
    async () => (await host.tmux("capture-pane", "-p", "-t", pane)).includes("["),
    "the nested client's status line",
  );
}

/**
 * Starts, in a new window of `host`, a tmux client of `server` attached to `target`, with the
 * client flags `flags` if given (`active-pane`).
 */
export async function nestedClient(
  host: TestTmux,
  server: TestTmux,
  target: string,
  flags = "",
): Promise<string> {
  const pane = (await host.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
  await host.prompt(pane);
  const before = (await server.clientTtys()).length;
  await host.tmux("send-keys", "-t", pane, "-l", attachCommand(server, target, flags));
  await host.tmux("send-keys", "-t", pane, "Enter");
  await attached(host, server, before, pane);
  return pane;
}

/**
 * Starts a new session `name` of `host` whose one pane runs a tmux client of `server` attached
 * to `target`: the pane a client attached to `name` shows, and so a link in a chain of
 * clients. `wrapped`: the client runs under `script` (see {@link wrappedNestedClient}). Returns
 * the pane.
 */
export async function nestedSession(
  host: TestTmux,
  server: TestTmux,
  name: string,
  target: string,
  wrapped = false,
): Promise<string> {
  const before = (await server.clientTtys()).length;
  const command = wrapped ? wrappedCommand(server, target) : attachCommand(server, target);
  const pane = (await host.tmux(
    ...["new-session", "-d", "-s", name, "-x", "80", "-y", "24", "-P", "-F", "#{pane_id}"],
    command,
  )).trim();
  await attached(host, server, before, pane);
  return pane;
}

/**
 * Starts, in a new window of `host`, a tmux client of `server` attached to `target` under
 * `script`: a terminal of its own, not the pane's (as `asciinema rec` or `sudo` would give it).
 */
export async function wrappedNestedClient(
  host: TestTmux,
  server: TestTmux,
  target: string,
  tmux = "tmux",
): Promise<string> {
  const before = (await server.clientTtys()).length;
  const pane = (await host.tmux(
    ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
    wrappedCommand(server, target, tmux),
  )).trim();
  await attached(host, server, before, pane);
  return pane;
}
