import assert from "node:assert/strict";
import { cleanEnv, sh, TestTmux, waitFor } from "./helpers/tmux.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";

function start(args: string[], env: Record<string, string> = {}): StdioServer {
  const { cmd, args: base } = startCommand();
  return new StdioServer(cmd, [...base, ...args], cleanEnv(env));
}

/** The tmux processes that are our clients of this socket (the server itself was started differently). */
async function tmuxClientsOf(socket: string): Promise<string[]> {
  const r = await sh("pgrep", ["-af", `tmux -u -L ${socket} `], { allowFail: true });
  // The test's own tmux commands carry -f /dev/null; the server's clients never do.
  return r.stdout.split("\n").filter((l) => l.trim() !== "" && !l.includes(" -f /dev/null "));
}

Deno.test("e2e: the start task's flags serve initialize, tools/list and list_panes over stdio", async () => {
  const t = await TestTmux.start();
  const server = start(["--socket", t.socket]);
  try {
    const init = await server.initialize();
    assert.equal((init.result!.serverInfo as { name: string }).name, "tmux-mcp");
    const list = await server.request("tools/list");
    const names = (list.result!.tools as { name: string }[]).map((tool) => tool.name);
    assert.ok(names.includes("list_panes") && names.includes("get_server_info"));
    assert.ok(!names.includes("kill_server"), "teardown is off by default");
    // The list is built once and kept: a second request gets the same tools, schemas and all.
    const again = await server.request("tools/list");
    assert.deepEqual(again.result, list.result);
    const result = await server.callTool("list_panes");
    const panes = (result.structuredContent as { panes: { id: string }[] }).panes;
    assert.deepEqual(panes.map((p) => p.id), [t.ids.paneId]);
    // A model's slip in a field's name is answered with the field it meant, in one call.
    const slip = await server.callTool("wait_for_text", {
      pane_id: t.ids.paneId,
      pattern: "x",
      timeout: 100,
    });
    assert.equal(slip.isError, true);
    assert.equal(
      (slip.content as { text: string }[])[0].text,
      "Invalid arguments for wait_for_text: paneId is required (string); unknown fields " +
        "pane_id, pattern, timeout (did you mean paneId for pane_id, patterns for pattern, " +
        "timeoutMs for timeout?)",
    );
    const status = await server.closeStdin();
    assert.equal(status.code, 0);
    assert.match(
      server.stderr,
      new RegExp(`tmux-mcp \\S+: tmux \\S+, socket "${t.socket}", toolsets inspect,manage,execute`),
    );
  } finally {
    await server.kill();
    await t.kill();
  }
});

Deno.test("e2e: TMUX and TMUX_PANE pass the baked --allow-env=TMUX* and mark the caller's pane", async () => {
  const t = await TestTmux.start();
  const { socketPath, pid } = await t.facts();
  const server = start([], {
    TMUX: `${socketPath},${pid},0`,
    TMUX_PANE: t.ids.paneId,
    TMUX_MCP_SOCKET: t.socket,
  });
  try {
    await server.initialize();
    const result = await server.callTool("list_panes");
    const panes =
      (result.structuredContent as { panes: { id: string; isCallerPane: boolean }[] }).panes;
    assert.deepEqual(panes.map((p) => [p.id, p.isCallerPane]), [[t.ids.paneId, true]]);
  } finally {
    await server.kill();
    await t.kill();
  }
});

Deno.test("e2e: closing stdin mid-call ends the process and leaves no tmux child behind", async () => {
  const t = await TestTmux.start();
  const stuck = await TestTmux.start();
  const stuckPid = (await stuck.facts()).pid;
  const server = start(["--socket", t.socket]);
  try {
    await server.initialize();
    // A stopped tmux server never answers: the probe's tmux client waits for it.
    Deno.kill(stuckPid, "SIGSTOP");
    server.request("tools/call", {
      name: "list_servers",
      arguments: { socketNames: [stuck.socket] },
    });
    await waitFor(
      async () => (await tmuxClientsOf(stuck.socket)).length > 0,
      "the probe in flight",
    );
    const status = await server.closeStdin();
    assert.equal(status.code, 0);
    assert.deepEqual(await tmuxClientsOf(stuck.socket), []);
  } finally {
    Deno.kill(stuckPid, "SIGCONT");
    await server.kill();
    await t.kill();
    await stuck.kill();
  }
});

Deno.test("e2e: a bad flag is the usage, then one line naming it, exit 2", async () => {
  const { cmd, args } = startCommand();
  for (
    const bad of [["--bogus"], ["--toolsets", "nope"], ["--socket", "a", "--socket-path", "/b"]]
  ) {
    const r = await sh(cmd, [...args, ...bad], { allowFail: true, env: cleanEnv() });
    assert.equal(r.code, 2, `${bad} exits 2`);
    assert.equal(r.stdout, "", "nothing on stdout");
    const lines = r.stderr.trim().split("\n");
    assert.match(lines[0], /^usage: tmux-mcp /);
    // The last line says what is wrong, as --help tells a person to read it.
    assert.match(lines.at(-1)!, /^tmux-mcp: /);
    assert.equal(lines.filter((l) => l.startsWith("tmux-mcp: ")).length, 1);
  }
});

Deno.test("e2e: --help and --version answer on stdout and exit 0", async () => {
  const { cmd, args } = startCommand();
  const help = await sh(cmd, [...args, "--help"], { env: cleanEnv() });
  assert.match(help.stdout, /--socket-path PATH/);
  const version = await sh(cmd, [...args, "--version"], { env: cleanEnv() });
  assert.match(version.stdout, /^tmux-mcp \d+\.\d+\.\d+\n$/);
});

Deno.test("e2e: tmux missing from PATH is a clear startup error", async () => {
  const { cmd, args } = startCommand();
  const r = await sh(cmd, args, { allowFail: true, env: cleanEnv({ PATH: "/nonexistent" }) });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /tmux is not installed or not on PATH/);
  assert.match(r.stderr, /PATH the MCP client gives/);
  assert.equal(r.stdout, "");
});

Deno.test("e2e: a start without the permission flags says so and prints the command that works", async () => {
  const { cmd, args } = startCommand();
  const main = args.at(-1)!;
  for (const flags of [["--no-prompt"], ["--no-prompt", "--allow-run=tmux"]]) {
    const r = await sh(cmd, ["run", ...flags, main], { allowFail: true, env: cleanEnv() });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^tmux-mcp: cannot start: Deno does not let it read the TMUX\*/);
    assert.ok(
      r.stderr.includes(`--allow-env=TMUX*' --ignore-env`) && r.stderr.includes(" --config "),
      r.stderr,
    );
  }
  const noRun = await sh(cmd, ["run", "--no-prompt", "--allow-env=TMUX*", main], {
    allowFail: true,
    env: cleanEnv(),
  });
  assert.equal(noRun.code, 1);
  assert.match(
    noRun.stderr,
    /^tmux-mcp: cannot start: Deno does not let it run tmux .*--allow-run=tmux/,
  );
});

Deno.test("e2e: a bad variable's line names the variable and where to fix it", async () => {
  const { cmd, args } = startCommand();
  const r = await sh(cmd, args, {
    allowFail: true,
    env: cleanEnv({ TMUX_MCP_TOOLSETS: "everything" }),
  });
  assert.equal(r.code, 2);
  assert.match(
    r.stderr.trim().split("\n").at(-1)!,
    /^tmux-mcp: TMUX_MCP_TOOLSETS: unknown toolset "everything".*Correct or remove TMUX_MCP_TOOLSETS in the environment the MCP client gives this server/,
  );
});

type ServerInfo = {
  running: boolean;
  socket: string;
  socketPath: string;
  clients: number;
  controlClients: number;
  callerPaneId: string | null;
};

Deno.test("e2e: get_server_info names the server TMUX names as such, and counts people apart from programs", async () => {
  const t = await TestTmux.start();
  const { socketPath, pid } = await t.facts();
  // No --socket: tmux itself takes the server from TMUX, as it does for a person's tmux command.
  const server = start([], { TMUX: `${socketPath},${pid},0`, TMUX_PANE: t.ids.paneId });
  try {
    await server.initialize();
    const first = (await server.callTool("get_server_info")).structuredContent as ServerInfo;
    assert.equal(first.socket, `the server this process runs in (TMUX: ${socketPath})`);
    assert.equal(first.socketPath, socketPath);
    assert.equal(first.callerPaneId, t.ids.paneId);
    await t.attach("main");
    const info = (await server.callTool("get_server_info")).structuredContent as ServerInfo;
    const modes = (await t.tmux("list-clients", "-F", "#{client_control_mode}")).trim().split("\n");
    assert.equal(info.clients, 1, "the person attached, not this server's control client");
    assert.equal(info.controlClients, modes.filter((m) => m === "1").length);
    assert.ok(info.controlClients >= 1, "this server's own connection is a control client");
    const sessions = (await server.callTool("list_sessions")).structuredContent as {
      sessions: { attachedClients: number; controlClients: number }[];
    };
    assert.equal(sessions.sessions[0].attachedClients, info.clients);
    assert.equal(sessions.sessions[0].controlClients, info.controlClients);
    // A person on tmux -CC (iTerm2) is in control mode, on a terminal: a person, not a program.
    await t.attach("main", { control: true });
    const withCC = (await server.callTool("get_server_info")).structuredContent as ServerInfo;
    assert.equal(withCC.clients, 2, "the -CC person counts among the people");
    assert.equal(withCC.controlClients, info.controlClients, "and not among the programs");
    const clients = await server.callTool("list_clients");
    const text = (clients.content as { type: string; text: string }[])[0].text;
    assert.match(text, /^\d+ clients \(2 of them people\)\./);
    const after = (await server.callTool("list_sessions")).structuredContent as {
      sessions: { attachedClients: number; controlClients: number; watched: boolean }[];
    };
    assert.equal(after.sessions[0].attachedClients, 2);
    assert.equal(after.sessions[0].controlClients, info.controlClients);
    assert.match(server.stderr, /, the server this process runs in \(TMUX: .*\), toolsets /);
  } finally {
    await server.kill();
    await t.kill();
  }
});

Deno.test("e2e: without TMUX or a socket, get_server_info names tmux's default socket", async () => {
  // tmux's default socket lives in $TMUX_TMPDIR: a private one keeps the person's server out.
  const tmpdir = await Deno.makeTempDir({ prefix: "tmux-mcp-e2e-" });
  const server = start([], { TMUX_TMPDIR: tmpdir });
  let pid = 0;
  let path = "";
  try {
    await server.initialize();
    const absent = (await server.callTool("get_server_info")).structuredContent as ServerInfo;
    assert.deepEqual(
      [absent.running, absent.socket],
      [false, "tmux's default socket (tmux -L default)"],
    );
    await server.callTool("create_session", { name: "d", command: "sh" });
    const info = (await server.callTool("get_server_info")).structuredContent as
      & ServerInfo
      & { pid: number };
    pid = info.pid;
    path = info.socketPath;
    assert.equal(info.socket, "tmux's default socket (tmux -L default)");
    assert.ok(path.startsWith(`${tmpdir}/`) && path.endsWith("/default"), path);
    assert.equal(info.clients, 0);
    assert.match(server.stderr, /, tmux's default socket \(tmux -L default\), toolsets /);
  } finally {
    await server.kill();
    // The server the test made lives under tmpdir, whether or not a call reported it.
    const sockets = new Set(path ? [path] : []);
    for await (const dir of Deno.readDir(tmpdir)) {
      if (dir.isDirectory && dir.name.startsWith("tmux-")) {
        sockets.add(`${tmpdir}/${dir.name}/default`);
      }
    }
    for (const socket of sockets) {
      await sh("tmux", ["-S", socket, "kill-server"], { allowFail: true, timeoutMs: 3_000 });
    }
    if (pid) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // gone with kill-server
      }
    }
    await Deno.remove(tmpdir, { recursive: true });
  }
});
