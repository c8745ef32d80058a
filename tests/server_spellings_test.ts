/**
 * One tmux server, two spellings of its address: the one this process was started for (a
 * socket path, the server `TMUX` names, or, with neither flag nor `TMUX`, tmux's default) and
 * the `socket_name` a call gives for the same socket. Every per-server turn is keyed by the
 * address: the control client (attached one at a time, as tmux 3.3a crashes when two
 * handshake at once, tmux/tmux#4980), the structure lane (tmux/tmux#5243), the buffer bound's
 * turn, the window-size lend's give-back. Calls with either spelling must share them, and a
 * name that only looks like the configured socket must still reach its own server.
 */

import assert from "node:assert/strict";
import { connect, type StartedTmux, type TestClient } from "./helpers/mcp.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, SOCKET_PREFIX, TestTmux } from "./helpers/tmux.ts";

/** The control clients attached to the server `tmux` (a tmux with its address) reaches. */
async function controlClients(tmux: (...args: string[]) => Promise<string>): Promise<number> {
  return (await tmux("list-clients", "-F", "#{client_control_mode}"))
    .split("\n").filter((l) => l === "1").length;
}

/** The panes a tool call over stdio listed. */
function panesOf(result: Record<string, unknown>): string[] {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const { panes } = result.structuredContent as { panes: { id: string }[] };
  return panes.map((p) => p.id);
}

/**
 * Makes `calls` at once through a client started for a fresh server by its socket path;
 * the control clients that server then has.
 */
async function clientsAfter(
  calls: (t: StartedTmux, c: TestClient) => Promise<unknown>[],
): Promise<number> {
  const t = await TestTmux.start();
  const path = (await t.tmux("display-message", "-p", "#{socket_path}")).trim();
  const c = await connect({ socketPath: path });
  try {
    await Promise.all(calls(t, c));
    return await controlClients((...a) => t.tmux(...a));
  } finally {
    await c.close();
    await t.kill();
  }
}

Deno.test("calls that name the configured socket path by its socket name share its one control client", async () => {
  const clients = await clientsAfter((t, c) => [
    c.ok("list_panes", {}),
    c.ok("list_panes", { socket_name: t.socket }),
    c.ok("get_pane_info", { paneId: t.ids.paneId }),
    c.ok("get_pane_info", { paneId: t.ids.paneId, socket_name: t.socket }),
  ]);
  assert.equal(clients, 1);
});

Deno.test("a resource whose ?socket= names the configured socket path shares its one control client", async () => {
  const clients = await clientsAfter((t, c) => [
    c.ok("list_panes", {}),
    c.client.readResource({ uri: `tmux://server?socket=${t.socket}` }),
  ]);
  assert.equal(clients, 1);
});

Deno.test("a socket path in another folder is not the socket name it ends with", async () => {
  const t = await TestTmux.start();
  const dir = await Deno.makeTempDir({ prefix: SOCKET_PREFIX });
  // Another server whose socket file has t's socket name, outside tmux's socket folder.
  const path = `${dir}/${t.socket}`;
  const there = (...args: string[]) =>
    sh("tmux", ["-u", "-S", path, "-f", "/dev/null", ...args]).then((r) => r.stdout);
  const c = await connect({ socketPath: path });
  try {
    const pane = (await there("new-session", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const [own, named] = await Promise.all([
      c.ok<{ panes: { id: string }[] }>("list_panes", {}),
      c.ok<{ panes: { id: string }[] }>("list_panes", { socket_name: t.socket }),
    ]);
    const serverOf = async (tmux: (...args: string[]) => Promise<string>) =>
      (await tmux("display-message", "-p", "#{pid}")).trim();
    assert.notEqual(await serverOf(there), await serverOf((...a) => t.tmux(...a)));
    assert.deepEqual(own.panes.map((p) => p.id), [pane]);
    assert.deepEqual(named.panes.map((p) => p.id), [t.ids.paneId]);
  } finally {
    await c.close();
    await there("kill-server").catch(() => {});
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

// The most common start: no flag, not inside tmux. list_servers names that server socketName
// "default" and says to pass it as socket_name. A private TMUX_TMPDIR keeps this test's
// default server apart from the person's; the process runs with the start task's flags.
Deno.test("with no flag and no TMUX, socket_name default shares the default server's one control client", async () => {
  const dir = await Deno.makeTempDir({ prefix: SOCKET_PREFIX });
  const env = cleanEnv({ TMUX_TMPDIR: dir });
  const tmux = (...args: string[]) =>
    sh("tmux", ["-u", "-f", "/dev/null", ...args], { env }).then((r) => r.stdout);
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, args, env);
  try {
    const pane = (await tmux("new-session", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await server.initialize();
    const lists = await Promise.all([
      server.callTool("list_panes", {}),
      server.callTool("list_panes", { socket_name: "default" }),
      server.callTool("get_pane_info", { paneId: pane }),
      server.callTool("get_pane_info", { paneId: pane, socket_name: "default" }),
    ]);
    assert.deepEqual(lists.slice(0, 2).map(panesOf), [[pane], [pane]]);
    assert.equal(await controlClients(tmux), 1);
    await server.closeStdin();
  } finally {
    await server.kill();
    await tmux("kill-server").catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("inside tmux, the socket name of the server TMUX names shares its one control client", async () => {
  const t = await TestTmux.start();
  const facts = await t.facts();
  const { cmd, args } = startCommand();
  const server = new StdioServer(
    cmd,
    args,
    cleanEnv({ TMUX: `${facts.socketPath},${facts.pid},0`, TMUX_PANE: t.ids.paneId }),
  );
  try {
    await server.initialize();
    const lists = await Promise.all([
      server.callTool("list_panes", {}),
      server.callTool("list_panes", { socket_name: t.socket }),
    ]);
    assert.deepEqual(lists.map(panesOf), [[t.ids.paneId], [t.ids.paneId]]);
    assert.equal(await controlClients((...a) => t.tmux(...a)), 1);
    await server.closeStdin();
  } finally {
    await server.kill();
    await t.kill();
  }
});
