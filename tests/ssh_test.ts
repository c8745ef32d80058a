/**
 * tmux on other machines over SSH, end to end: a real OpenSSH server on 127.0.0.1 (started
 * here, its own keys and config in a temporary folder), reached under two aliases (`h1`, `h2`)
 * plus one that never answers (`dead`); the remote tmux servers are private sockets reached
 * through it by `socket_name`. The remote shell prints text and forged control-mode framing
 * before every command (see helpers/sshd.ts): nothing of it may be read as tmux's.
 *
 * Skipped, saying why, only where sshd cannot be started; CI installs openssh-server.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { AGENTS_CHANNEL } from "../src/hooks/marks.ts";
import { controlFor, observeControl } from "../src/tmux/control.ts";
import type { ControlEvent } from "../src/tmux/control_events.ts";
import { OWN_KIND_FORMAT } from "../src/tmux/identity.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { fixtureTest } from "./helpers/skippable.ts";
import { type Sshd, startSshd } from "./helpers/sshd.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

const started = await startSshd(["h1", "h2"]);
const skip = typeof started === "string" ? started : null;
// deno-lint-ignore no-console
if (skip) console.error(`ssh_test: skipped: ${skip}`);
const sshTest = fixtureTest(skip, { sanitize: false });
const stopTest = fixtureTest(skip);

/** Adds a `dead` alias: port 1, where nothing listens. */
async function withDeadHost(sshd: Sshd): Promise<void> {
  await Deno.writeTextFile(
    sshd.config,
    "Host dead\n  HostName 127.0.0.1\n  Port 1\n  ConnectTimeout 2\n",
    { append: true },
  );
}

async function withHosts(
  fn: (a: Server, b: Server, c: TestClient, sshd: Sshd) => Promise<void>,
): Promise<void> {
  const sshd = started as Sshd;
  const a = await TestTmux.start("main", { command: "bash --norc --noprofile" });
  const b = await TestTmux.start("other", { command: "bash --norc --noprofile" });
  const runner = new TmuxRunner({
    ssh: { destinations: ["h1", "h2", "dead"], configFile: sshd.config, connectTimeoutS: 2 },
  });
  const c = await connect({ runner });
  try {
    await fn(a, b, c, sshd);
  } finally {
    await c.close();
    assert.equal(runner.running, 0, "no tmux or ssh child left behind");
    await a.kill();
    await b.kill();
  }
}

/** Subscribes to `uri`; the URIs of the updates that come, in order. */
async function subscribe(c: TestClient, uri: string): Promise<string[]> {
  const updates: string[] = [];
  c.client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n: { params: { uri: string } }) => {
      updates.push(n.params.uri);
    },
  );
  await c.client.subscribeResource({ uri });
  return updates;
}

async function prompt(t: TestTmux, paneId: string): Promise<void> {
  await waitFor(
    async () => /[$#]$/.test((await t.tmux("capture-pane", "-p", "-t", paneId)).trimEnd()),
    "a bash prompt",
  );
}

sshTest("ssh: list, capture, send, run_command and wait_for_text on a remote tmux", async () => {
  await withDeadHost(started as Sshd);
  await withHosts(async (a, _b, c) => {
    const on = { host: "h1", socket_name: a.socket };
    const p = a.ids.paneId;
    await prompt(a, p);

    // Listing: the seed shape, plus which host the ids belong to.
    const panes = await c.ok<{ host: string; panes: { id: string }[] }>("list_panes", on);
    assert.equal(panes.host, "h1");
    assert.deepEqual(panes.panes.map((x) => x.id), [p]);
    const info = await c.ok<{ host: string }>("get_server_info", on);
    assert.equal(info.host, "h1");
    // Without host: this machine, and no host field at all.
    const local = await c.ok("list_panes", { socket_name: a.socket });
    assert.equal("host" in local, false);

    // Typing and reading back.
    await c.ok("send_keys", { ...on, paneId: p, text: "echo typed-over-ssh" });
    await waitFor(async () => {
      const cap = await c.ok<{ text: string; host: string }>("capture_pane", {
        ...on,
        paneId: p,
      });
      assert.equal(cap.host, "h1");
      return cap.text.split("\n").includes("typed-over-ssh");
    }, "the typed line on the remote screen");

    // run_command: output and exit status through the remote pane.
    const ran = await c.ok<{ exitStatus: number; output: string; host: string }>(
      "run_command",
      { ...on, paneId: p, command: "printf 'a%sb\\n' -; false", timeoutMs: 15_000 },
    );
    assert.equal(ran.host, "h1");
    assert.equal(ran.exitStatus, 1);
    assert.match(ran.output, /a-b/);

    // A background job there is listed with its host and read as a resource.
    const job = await c.ok<{ jobId: string }>("run_command", {
      ...on,
      paneId: p,
      command: "echo job-over-ssh",
      background: true,
    });
    const jobUri = `tmux://job/${job.jobId}?socket=${a.socket}&host=h1`;
    const resources = await c.client.listResources();
    assert.ok(resources.resources.some((r: { uri: string }) => r.uri === jobUri), jobUri);
    await waitFor(
      async () => {
        const read = await c.client.readResource({ uri: jobUri });
        return (JSON.parse(read.contents[0].text as string) as { state: string }).state ===
          "exited";
      },
      "the remote job read as a resource",
      15_000,
    );

    // wait_for_text: event-driven over the remote control client.
    const waiting = c.ok<{ outcome: string; lines: string[] }>("wait_for_text", {
      ...on,
      paneId: p,
      patterns: ["remote-ready"],
      timeoutMs: 20_000,
    });
    await waitFor(
      () => controlFor(c.server.runner, { host: "h1", socketName: a.socket }).watchers > 0,
      "the wait to watch the remote pane",
      15_000,
    );
    // Its control clients there (one for commands, one watching; the local call above has
    // one too) carry tmux-mcp's mark, so that a tmux-mcp on that host knows them
    // (identity.ts isOwnKind).
    const kinds = (await a.tmux("list-clients", "-F", OWN_KIND_FORMAT)).trim().split("\n");
    assert.ok(kinds.length >= 2 && kinds.every((k) => k === "1"), kinds.join(" "));
    await a.tmux("send-keys", "-t", p, "-l", "printf 'remote-%s\\n' ready");
    await a.tmux("send-keys", "-t", p, "Enter");
    const waited = await waiting;
    assert.equal(waited.outcome, "matched");

    // list_servers: every host, the dead one with its reason.
    const servers = await c.ok<{
      servers: { host?: string; running: boolean; error: string | null; roles: string[] }[];
    }>("list_servers", { socketNames: [a.socket] });
    const h1 = servers.servers.filter((s) => s.host === "h1");
    assert.ok(h1.some((s) => s.running), JSON.stringify(servers));
    const dead = servers.servers.find((s) => s.host === "dead");
    assert.ok(dead && !dead.running && dead.error, JSON.stringify(dead));

    // A dead host fails its calls clearly and leaves the others working.
    const failed = await c.fail("list_panes", { host: "dead" });
    assert.match(failed, /Host "dead" did not answer over SSH/);
    assert.match(failed, /unaffected/);
    await c.ok("list_panes", on);
  });
});

sshTest(
  "ssh: unknown hosts refused, watched remote panes refused, batch across two hosts",
  async () => {
    await withHosts(async (a, b, c) => {
      // An unconfigured host is refused with the list, before anything runs.
      const unknown = await c.fail("list_panes", { host: "elsewhere" });
      assert.match(unknown, /host/);
      assert.match(unknown, /"h1"/);
      const option = await c.fail("list_panes", { host: "-oProxyCommand=touch /tmp/x" });
      assert.match(option, /"h1"/);

      // Two hosts in one batch: each row on its own host, each result says which.
      const batch = await c.ok<{
        results: { success: boolean; result: { host: string; panes: { id: string }[] } }[];
      }>("call_tools_batch", {
        operations: [
          { tool: "list_panes", arguments: { host: "h1", socket_name: a.socket } },
          { tool: "list_panes", arguments: { host: "h2", socket_name: b.socket } },
          { tool: "list_panes", arguments: { socket_name: a.socket } },
        ],
      });
      assert.deepEqual(batch.results.map((r) => r.success), [true, true, true]);
      assert.deepEqual(batch.results.map((r) => r.result.host), ["h1", "h2", undefined]);
      assert.equal(batch.results[0].result.panes[0].id, a.ids.paneId);
      assert.equal(batch.results[1].result.panes[0].id, b.ids.paneId);

      // A pane a person watches on the remote server is refused there too.
      await a.attach("main");
      const refused = await c.fail("send_keys", {
        host: "h1",
        socket_name: a.socket,
        paneId: a.ids.paneId,
        text: "echo NOPE",
      });
      assert.match(refused, /watch/i);
      const screen = await a.tmux("capture-pane", "-p", "-t", a.ids.paneId);
      assert.ok(!screen.includes("NOPE"), screen);
    });
  },
);

sshTest(
  "ssh: a resource subscription, and the connection killed mid-call then recovered",
  async () => {
    await withHosts(async (a, _b, c, sshd) => {
      const p = a.ids.paneId;
      await prompt(a, p);
      const uri = `tmux://pane/${p.slice(1)}?socket=${a.socket}&host=h1`;
      const updates = await subscribe(c, uri);
      const hub = controlFor(c.server.runner, { host: "h1", socketName: a.socket });
      await waitFor(() => hub.watchers > 0, "the subscription to watch the pane", 15_000);
      await a.tmux("send-keys", "-t", p, "-l", "echo subscribed-line");
      await a.tmux("send-keys", "-t", p, "Enter");
      await waitFor(() => updates.includes(uri), "a resource update from the remote pane");
      const read = await c.client.readResource({ uri });
      const text = (read.contents[0] as { text: string }).text;
      assert.ok(text.includes("subscribed-line"), text);
      await c.client.unsubscribeResource({ uri });

      // A wait in progress when the SSH connection dies: it is not fooled (the feed is lost,
      // it reconnects or fails clearly), and the next calls reach the host again.
      const waiting = c.call("wait_for_text", {
        host: "h1",
        socket_name: a.socket,
        paneId: p,
        patterns: ["after-the-drop"],
        timeoutMs: 20_000,
      });
      await waitFor(() => hub.watchers > 0, "the wait to watch the pane", 15_000);
      const sessions = await sshd.sessions();
      assert.ok(sessions.length > 0);
      for (const pid of sessions) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // Gone with its parent.
        }
      }
      await a.tmux("send-keys", "-t", p, "-l", "echo after-the-$((0))drop | tr -d 0");
      await a.tmux("send-keys", "-t", p, "Enter");
      const result = await waiting;
      const said = result.content?.[0]?.type === "text" ? result.content[0].text : "";
      if (result.isError) assert.match(said, /SSH|connection|tmux/i);
      else {
        assert.equal((result.structuredContent as { outcome: string }).outcome, "matched", said);
      }
      // Recovered: a fresh connection.
      await waitFor(
        async () => {
          const r = await c.call("list_panes", { host: "h1", socket_name: a.socket });
          return r.isError !== true;
        },
        "the host to answer again",
        15_000,
      );
      await c.ok("send_keys", { host: "h1", socket_name: a.socket, paneId: p, text: "echo back" });
    });
  },
);

sshTest(
  "ssh: tmux://agents on a host is told of a mark at once, and leaves no waiter behind",
  async () => {
    await withHosts(async (a, _b, c) => {
      const uri = `tmux://agents?socket=${a.socket}&host=h1`;
      const updates = await subscribe(c, uri);
      // An SSH connection can take seconds on a loaded machine, and one that failed there (a
      // control client not attached within its time) is tried again only after a pause, as
      // the product is built to: what this test checks comes after. Failing, it says where
      // the way to the waiter broke.
      await waitFor(
        async () => (await agentWaiters(a.socket)).length === 1,
        "the remote waiter",
        60_000,
      ).catch(async (error) => {
        throw new Error(`${error.message}; ${await remoteState(c, a.socket)}`);
      });
      await a.tmux(
        ...["set-option", "-w", "-t", a.ids.paneId, "@agent-state", "needs-input"],
        ...[";", "wait-for", "-S", AGENTS_CHANNEL],
      );
      await waitFor(() => updates.includes(uri), "the agents' update from the host", 15_000);
      const read = await c.client.readResource({ uri });
      const agents = JSON.parse((read.contents[0] as { text: string }).text).agents;
      assert.deepEqual(agents.map((x: { state: string }) => x.state), ["needs-input"]);
      // Unsubscribed: the remote `tmux wait-for` goes too, though its ssh client was killed.
      await c.client.unsubscribeResource({ uri });
      await waitFor(
        async () => (await agentWaiters(a.socket)).length === 0,
        "no waiter left",
        15_000,
      );
    });
  },
);

/** What a failed wait for the remote waiter reports: how far the way to it got. */
async function remoteState(c: TestClient, socket: string): Promise<string> {
  const control = controlFor(c.server.runner, { host: "h1", socketName: socket });
  const listed = await c.call("list_panes", { host: "h1", socket_name: socket });
  const said = listed.content?.[0]?.type === "text" ? listed.content[0].text : "";
  return `waiters: ${JSON.stringify(await agentWaiters(socket))}; control client attached: ` +
    `${control.attached}, live: ${control.connections}; list_panes on h1: ` +
    (listed.isError ? `failed: ${said}` : "answered");
}

/** The `tmux wait-for tmux-mcp-agents` processes of `socket`, wherever they were started. */
async function agentWaiters(socket: string): Promise<string[]> {
  const { stdout } = await sh("ps", ["-eo", "args="]);
  return stdout.split("\n").filter((line) =>
    line.includes(socket) && line.includes(`wait-for ${AGENTS_CHANNEL}`) &&
    !line.startsWith("ssh")
  );
}

Deno.test({
  name: "ssh: host is refused where no --ssh was given, and no ssh runs",
  async fn() {
    const t = await TestTmux.start();
    const c = await connect({ socketName: t.socket });
    try {
      const text = await c.fail("list_panes", { host: "h1" });
      assert.match(text, /started without --ssh/);
      const tool = c.server.registry.get("list_panes");
      assert.equal(tool?.inputSchema.shape.host, undefined, "no host argument without --ssh");
      assert.deepEqual(c.server.runner.hosts, []);
    } finally {
      await c.close();
      await t.kill();
    }
  },
});

sshTest("ssh: the real process under the baked flags (no file access) reaches a host", async () => {
  const sshd = started as Sshd;
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  const server = new StdioServer(
    cmd,
    [...args, "--ssh", "h1", "--ssh", "h2", "--ssh-config", sshd.config],
    cleanEnv(),
  );
  try {
    await server.initialize();
    const listed = await server.request("tools/list");
    const tools = listed.result?.tools as { name: string; inputSchema: unknown }[];
    const schema = tools.find((x) => x.name === "list_panes")?.inputSchema as {
      properties: { host?: { enum?: string[] } };
    };
    assert.deepEqual(schema.properties.host?.enum, ["h1", "h2"], "the hosts, in the schema");
    const r = await server.callTool("list_panes", { host: "h2", socket_name: t.socket }) as {
      isError?: boolean;
      structuredContent?: { host: string; panes: { id: string }[] };
      content?: { text: string }[];
    };
    assert.notEqual(r.isError, true, r.content?.[0]?.text);
    assert.equal(r.structuredContent?.host, "h2");
    assert.deepEqual(r.structuredContent?.panes.map((p) => p.id), [t.ids.paneId]);
    assert.match(server.stderr, /ssh hosts h1,h2/);
    await server.closeStdin();
    assert.equal((await server.child.status).code, 0);
  } finally {
    await server.kill();
    await t.kill();
  }
});

sshTest("ssh: a host that is this machine guards the caller's own pane as locally", async () => {
  // This server runs in pane a (TMUX/TMUX_PANE say so), and h1 is an alias of this very
  // machine: through it, pane a is still the caller's own, and must not be typed into.
  const sshd = started as Sshd;
  const a = await TestTmux.start("main", { command: "bash --norc --noprofile" });
  const b = await TestTmux.start("other", { command: "bash --norc --noprofile" });
  const tmuxEnv = (await a.tmux("display-message", "-p", "#{socket_path},#{pid},0")).trim();
  const runner = new TmuxRunner({
    ssh: { destinations: ["h1"], configFile: sshd.config, connectTimeoutS: 2 },
  });
  const c = await connect({
    runner,
    socketName: a.socket,
    callerEnv: { tmux: tmuxEnv, tmuxPane: a.ids.paneId },
  });
  try {
    const on = { host: "h1", socket_name: a.socket };
    const panes = await c.ok<{ panes: { id: string; isCallerPane: boolean }[] }>(
      "list_panes",
      on,
    );
    assert.deepEqual(panes.panes.map((p) => [p.id, p.isCallerPane]), [[a.ids.paneId, true]]);
    const refused = await c.fail("send_keys", { ...on, paneId: a.ids.paneId, text: "echo NOPE" });
    assert.match(refused, /own pane|caller/i);
    const screen = await a.tmux("capture-pane", "-p", "-t", a.ids.paneId);
    assert.ok(!screen.includes("NOPE"), screen);
    // Another server on that host is not the caller's: its pane with the same id is not.
    const other = await c.ok<{ panes: { id: string; isCallerPane: boolean }[] }>(
      "list_panes",
      { host: "h1", socket_name: b.socket },
    );
    assert.deepEqual(other.panes.map((p) => p.isCallerPane), [false]);
    await c.ok("send_keys", {
      host: "h1",
      socket_name: b.socket,
      paneId: b.ids.paneId,
      text: "echo",
    });
  } finally {
    await c.close();
    assert.equal(runner.running, 0, "no tmux or ssh child left behind");
    await a.kill();
    await b.kill();
  }
});

// Some MCP clients pass the server a short list of variables, without TMUX: then only the
// parent process names the caller's pane. A tester's server ran in a pane that way, with an
// --ssh alias of this machine: typing into its own pane was refused without host, and done
// with it, since a parent process was never believed on a host.
sshTest(
  "ssh: a host that is this machine guards the caller's pane by its parent process, TMUX unset",
  async () => {
    const sshd = started as Sshd;
    const a = await TestTmux.start("main", { command: "bash --norc --noprofile" });
    const p = a.ids.paneId;
    const panePid = Number((await a.tmux("display-message", "-p", "-t", p, "#{pane_pid}")).trim());
    const runner = new TmuxRunner({
      ssh: { destinations: ["h1"], configFile: sshd.config, connectTimeoutS: 2 },
    });
    // This server's parent process is the pane's own (a client started in it), and nothing more.
    const c = await connect({ runner, socketName: a.socket, callerEnv: { ppid: panePid } });
    try {
      await prompt(a, p);
      const screen = () => a.tmux("capture-pane", "-p", "-t", p);
      for (const on of [{ socket_name: a.socket }, { host: "h1", socket_name: a.socket }]) {
        const refused = await c.fail("send_keys", { ...on, paneId: p, text: "echo NOPE" });
        assert.match(refused, /own pane|caller/i, JSON.stringify(on));
      }
      assert.ok(!(await screen()).includes("NOPE"), await screen());
      const panes = await c.ok<{ panes: { id: string; isCallerPane: boolean }[] }>(
        "list_panes",
        { host: "h1", socket_name: a.socket },
      );
      assert.deepEqual(panes.panes.map((x) => [x.id, x.isCallerPane]), [[p, true]]);
      // Forced, both go in.
      const typed = { paneId: p, enter: false, force: true };
      await c.ok("send_keys", { socket_name: a.socket, text: "here-", ...typed });
      await c.ok("send_keys", { host: "h1", socket_name: a.socket, text: "there", ...typed });
      await waitFor(async () => (await screen()).includes("here-there"), "the forced keys");
    } finally {
      await c.close();
      assert.equal(runner.running, 0, "no tmux or ssh child left behind");
      await a.kill();
    }
  },
);

sshTest(
  "ssh: a frozen connection: the connection lost, not the server gone; timeouts say why",
  async () => {
    const sshd = started as Sshd;
    const a = await TestTmux.start("main", { command: "bash --norc --noprofile" });
    const runner = new TmuxRunner({
      timeoutMs: 2_000,
      ssh: { destinations: ["h1"], configFile: sshd.config, connectTimeoutS: 2 },
    });
    const events: ControlEvent[] = [];
    const stop = observeControl(runner, (e) => events.push(e));
    const c = await connect({ runner });
    let frozen: number[] = [];
    try {
      const on = { host: "h1", socket_name: a.socket };
      await c.ok("list_panes", on);
      // The SSH connection freezes (sshd's sessions stopped): the call times out, its control
      // connection is retired, and the check of the server gets no answer either.
      frozen = await sshd.sessions();
      assert.ok(frozen.length > 0);
      for (const pid of frozen) Deno.kill(pid, "SIGSTOP");
      const hub = controlFor(runner, { host: "h1", socketName: a.socket });
      // Either way a timeout says the command may still run on the host later.
      await assert.rejects(
        hub.exec(["list-panes"], { timeoutMs: 1_000 }),
        /did not answer within 1000 ms \(host "h1": the command may still run there later/,
      );
      await assert.rejects(
        runner.run({ host: "h1", socketName: a.socket }, ["list-panes"], { timeoutMs: 1_000 }),
        /did not answer within 1000 ms \(host "h1": the command may still run there later/,
      );
      await waitFor(() => events.length > 0, "the control event", 15_000);
      assert.equal(events[0].kind, "lost", JSON.stringify(events));
      assert.match(events[0].message, /host "h1" does not answer/);
    } finally {
      for (const pid of frozen) {
        try {
          Deno.kill(pid, "SIGCONT");
        } catch {
          // Gone.
        }
      }
      stop();
      await c.close();
      await a.kill();
    }
  },
);

sshTest(
  "ssh: a start-up file that prints without a final newline leaves the host usable",
  async () => {
    // A terminal title (`printf '\033]0;title\007'`) is common in rc files: the marker that
    // follows it must still be found, by the connection, one-shot calls and control clients.
    const sshd = started as Sshd;
    await Deno.writeTextFile(sshd.noNewline, "");
    try {
      await withHosts(async (a, _b, c) => {
        const on = { host: "h1", socket_name: a.socket };
        const panes = await c.ok<{ panes: { id: string }[] }>("list_panes", on);
        assert.deepEqual(panes.panes.map((x) => x.id), [a.ids.paneId]);
        const info = await c.ok<{ host: string }>("get_server_info", on);
        assert.equal(info.host, "h1");
        const servers = await c.ok<{
          servers: { host?: string; running: boolean; error: string | null }[];
        }>("list_servers", { socketNames: [a.socket] });
        const h1 = servers.servers.filter((s) => s.host === "h1");
        assert.ok(h1.some((s) => s.running && s.error === null), JSON.stringify(servers));
        // A failing remote call still reports tmux's own complaint, not the start-up text.
        const missing = await c.fail("capture_pane", { ...on, paneId: "%999" });
        assert.doesNotMatch(missing, /rc: |title/, missing);
      });
    } finally {
      await Deno.remove(sshd.noNewline);
    }
  },
);

sshTest(
  "ssh: a command line past a tmux process's arguments reaches the remote tmux on its stdin",
  async () => {
    await withHosts(async (a, _b, c) => {
      // 2 000 single-quoted words: each check of the creation's step quotes them once more.
      const command = `set -- ${Array(2_000).fill("'x'").join(" ")}; echo "got $# words"`;
      const made = await c.ok<{ windowId: string; paneId: string; host: string }>(
        "create_window",
        { host: "h1", socket_name: a.socket, session: "main", command: `${command}; sleep 100` },
      );
      assert.equal(made.host, "h1");
      await waitFor(
        async () => (await a.tmux("capture-pane", "-p", "-t", made.paneId)).includes("got 2000"),
        "the remote command's output",
      );
      // What the remote tmux's parser refuses reads as for arguments, after the marker.
      const runner = c.server.runner;
      const refused = await runner.exec({ host: "h1", socketName: a.socket }, [
        "frobnicate",
        "y".repeat(20_000),
      ]);
      assert.deepEqual([refused.code, refused.stderr], [1, "unknown command: frobnicate\n"]);
    });
  },
);

stopTest("ssh: sshd stops", async () => {
  await (started as Sshd).stop();
});
