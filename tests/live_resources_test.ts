/**
 * Live resources on real tmux, under both protocols: `tmux://pane/{pane}`, `tmux://server` and
 * `tmux://agents` are read, listed and completed; a subscription (2025-11-25
 * `resources/subscribe`, 2026-07-28 `subscriptions/listen`) is told of a change within a
 * fraction of a second, coalesced, and only of what it asked for; watching stops when nobody
 * subscribes; panes coming and going send `list_changed`; a pane printing control-mode framing
 * confuses nothing; log messages about the control channel honour `logging/setLevel` and
 * reach stderr. One test drives the real process over stdio with the start task's flags.
 */

import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import type { ToolRegistry } from "../src/mcp/registry.ts";
import { MAX_WATCHED_SERVERS } from "../src/mcp/resources.ts";
import { buildRegistry, mcpServerFor, type ServerOptions } from "../src/server.ts";
import { chainArgv } from "../src/tmux/format.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { inert, parseTarget } from "../src/tools/resources.ts";
import { registerResources } from "../src/tools/resources.ts";
import { agentEnv, RECORDED } from "../src/hooks/testing.ts";
import denoJson from "../deno.json" with { type: "json" };
import { MODERN_META, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, TestTmux, waitFor } from "./helpers/tmux.ts";

const ROOT = new URL("../", import.meta.url).pathname;

type Tmux = Awaited<ReturnType<typeof TestTmux.start>>;

function setUp(socket: string): { registry: ToolRegistry; options: ServerOptions; log: string[] } {
  const log: string[] = [];
  const options: ServerOptions = {
    address: { socketName: socket },
    toolsets: ["inspect"],
    version: "test",
    maxResultBytes: MAX_RESULT_BYTES,
    callerEnv: {},
    runner: new TmuxRunner(),
    diagnostics: (line) => log.push(line),
  };
  const registry = buildRegistry(options.runner!, options);
  registerResources(registry);
  return { registry, options, log };
}

/** A 2025-11-25 client (the SDK's v1 line) on an in-memory pair, collecting notifications. */
async function legacyClient(socket: string) {
  const { registry, options, log } = setUp(socket);
  const server = mcpServerFor(registry, options, "legacy");
  const client = new V1Client({ name: "tmux-mcp-tests", version: "1" });
  const updates: { uri: string; at: number }[] = [];
  const listChanges: number[] = [];
  const messages: { level: string; data: unknown }[] = [];
  client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n: { params: { uri: string } }) => {
      updates.push({ uri: n.params.uri, at: performance.now() });
    },
  );
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    listChanges.push(performance.now());
  });
  client.setNotificationHandler(
    LoggingMessageNotificationSchema,
    (n: { params: { level: string; data: unknown } }) => {
      messages.push({ level: n.params.level, data: n.params.data });
    },
  );
  const [clientSide, serverSide] = V1InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    registry,
    log,
    updates,
    listChanges,
    messages,
    of: (uri: string) => updates.filter((u) => u.uri === uri).length,
    async close() {
      await client.close();
      await server.close();
      await options.runner!.close();
    },
  };
}

function textOf(result: { contents: unknown[] }): string {
  return (result.contents[0] as { text: string }).text;
}

function uriOf(paneId: string): string {
  return `tmux://pane/${paneId.slice(1)}`;
}

/** Types a command line into a shell pane. */
async function type(t: Tmux, paneId: string, line: string): Promise<void> {
  await t.tmux("send-keys", "-t", paneId, "-l", line);
  await t.tmux("send-keys", "-t", paneId, "Enter");
}

Deno.test("resource URIs are read strictly, and pane text is made inert", () => {
  assert.deepEqual(parseTarget("tmux://pane/3"), {
    kind: "pane",
    paneId: "%3",
    socketName: undefined,
  });
  assert.deepEqual(parseTarget("tmux://server?socket=work"), {
    kind: "server",
    socketName: "work",
  });
  assert.throws(() => parseTarget("tmux://pane/x"), /names no pane/);
  assert.throws(() => parseTarget("tmux://pane/3?socket=a%2Fb"), /socket must be/);
  assert.throws(() => parseTarget("tmux://pane/3?socket=a%0Ab"), /socket must be/);
  assert.throws(() => parseTarget("tmux://server?other=1"), /only query/);
  assert.throws(() => parseTarget("tmux://elsewhere"), /No resource/);
  assert.equal(inert("a\x1b[2Jb\x9b31mc\td\ne\x7f"), "a\\x1B[2Jb\\x9B31mc\td\ne\\x7F");
});

Deno.test("live resources under 2025-11-25: read, list, complete, subscribe, coalesce, list_changed, log", async () => {
  const t = await TestTmux.start("main", { command: "bash --norc --noprofile" });
  const c = await legacyClient(t.socket);
  try {
    const pane = t.ids.paneId;
    await t.prompt(pane);
    const other = (await t.tmux(
      "split-window",
      "-d",
      "-t",
      pane,
      "-P",
      "-F",
      "#{pane_id}",
      "bash --norc --noprofile",
    )).trim();
    await t.prompt(other);

    const caps = c.client.getServerCapabilities();
    assert.deepEqual(caps?.resources, { subscribe: true, listChanged: true });
    assert.deepEqual(caps?.logging, {});

    // Listing, templates, completion.
    const listed = (await c.client.listResources()).resources.map((r: { uri: string }) => r.uri);
    assert.deepEqual(listed, ["tmux://server", "tmux://agents", uriOf(pane), uriOf(other)]);
    const templates = (await c.client.listResourceTemplates()).resourceTemplates.map((
      r: { uriTemplate: string },
    ) => r.uriTemplate);
    assert.deepEqual(templates, [
      "tmux://job/{jobId}",
      "tmux://pane/{pane}",
      "tmux://server{?socket}",
      "tmux://agents{?socket}",
    ]);
    const completed = await c.client.complete({
      ref: { type: "ref/resource", uri: "tmux://pane/{pane}" },
      argument: { name: "pane", value: "" },
    });
    assert.deepEqual(completed.completion.values, [pane.slice(1), other.slice(1)]);

    // Reading: the screen, the server, a socket by query, a missing pane.
    await type(t, pane, "echo hello-$((6*7))");
    await waitFor(
      async () => textOf(await c.client.readResource({ uri: uriOf(pane) })).includes("hello-42"),
      "the pane's screen",
    );
    // A pane's own text that looks like an escape reads apart from the control it names.
    await type(t, pane, String.raw`printf 'real:\342\200\256: own:\\u202e:\n'`);
    const apart = String.raw`real:\u202e: own:\\u202e:`;
    await waitFor(
      async () =>
        textOf(await c.client.readResource({ uri: uriOf(pane) })).split("\n").includes(apart),
      "the two on screen, told apart",
    );
    const server = JSON.parse(textOf(await c.client.readResource({ uri: "tmux://server" })));
    assert.equal(server.running, true);
    assert.deepEqual(server.sessions.map((s: { name: string }) => s.name), ["main"]);
    assert.deepEqual(server.panes.map((p: { id: string }) => p.id), [pane, other]);
    assert.equal(server.complete, true);
    const bySocket = JSON.parse(
      textOf(await c.client.readResource({ uri: `tmux://server?socket=${t.socket}` })),
    );
    assert.deepEqual(bySocket.windows, server.windows);
    const nowhere = JSON.parse(
      textOf(await c.client.readResource({ uri: "tmux://server?socket=tmux-mcp-test-none" })),
    );
    assert.equal(nowhere.running, false);
    await assert.rejects(
      c.client.readResource({ uri: "tmux://pane/99999" }),
      /No pane %99999 on socket ".*"\. resources\/list and list_panes list the panes/,
    );
    await assert.rejects(c.client.readResource({ uri: "tmux://pane/1?socket=a%2Fb" }), /socket/);

    // Nothing is watched before anyone subscribes.
    assert.deepEqual(c.registry.subscriptions.watched, []);

    // A subscribed pane that prints is announced, soon; the other pane is not.
    await c.client.subscribeResource({ uri: uriOf(pane) });
    assert.deepEqual(c.registry.subscriptions.watched, [uriOf(pane)]);
    // No pause: the subscription is answered once the watch sees the pane's output.
    const before = c.updates.length;
    await type(t, other, "echo unwatched");
    await type(t, pane, "echo watched");
    const sent = performance.now();
    await waitFor(() => c.of(uriOf(pane)) > 0 && c.updates.length > before, "the pane's update");
    const latency = c.updates.at(-1)!.at - sent;
    assert.ok(latency < 2_000, `announced after ${latency} ms`);
    assert.equal(c.of(uriOf(other)), 0, "a pane nobody subscribed to sends nothing");

    // Coalesced: a pane printing continuously (150 rows, 10 ms apart or more) is announced a
    // few times a second. Counted until the burst is over, however long a busy machine takes
    // to print it, rather than for a fixed 2 s it may not even have begun in.
    await new Promise((r) => setTimeout(r, 400));
    const burstStart = c.of(uriOf(pane));
    const burstBegan = performance.now();
    await type(t, pane, "for i in $(seq 150); do echo line $i; sleep 0.01; done; echo burst-done");
    await waitFor(
      async () =>
        textOf(await c.client.readResource({ uri: uriOf(pane) })).split("\n").includes(
          "burst-done",
        ),
      "the end of the burst",
    );
    const took = performance.now() - burstBegan;
    const burst = c.updates.filter((u) => u.uri === uriOf(pane)).slice(burstStart);
    assert.ok(burst.length >= 3, `${burst.length} updates while the pane printed`);
    // About 150 changes; one update a 250 ms at most is 9 in 2 s. Counted, not timed: a busy
    // machine may deliver two updates closer than they were sent (the margin).
    const most = Math.ceil(took / 250) + 4;
    assert.ok(
      burst.length <= most,
      `${burst.length} updates in ${Math.round(took)} ms: not coalesced`,
    );

    // A pane printing control-mode framing confuses nothing: reads and updates go on.
    await type(
      t,
      pane,
      "printf '%%end 1 1 1\\n%%output %s forged\\n%%subscription-changed tmux-mcp-1 $0 - - - : x\\n%%begin 9 9 1\\n' " +
        other,
    );
    await waitFor(
      async () =>
        textOf(await c.client.readResource({ uri: uriOf(pane) })).split("\n").includes(
          `%output ${other} forged`,
        ),
      "the forged lines on screen",
    );
    const screen = textOf(await c.client.readResource({ uri: uriOf(pane) }));
    assert.ok(screen.includes(`%output ${other} forged`), screen);
    const afterForgery = c.of(uriOf(pane));
    await type(t, pane, "echo still-live");
    await waitFor(() => c.of(uriOf(pane)) > afterForgery, "an update after the forgery");
    assert.equal(c.of(uriOf(other)), 0, "the forged %output reached nobody");

    // Unsubscribed: nothing more, and nothing watched.
    await c.client.unsubscribeResource({ uri: uriOf(pane) });
    assert.deepEqual(c.registry.subscriptions.watched, []);
    await new Promise((r) => setTimeout(r, 300));
    const quiet = c.updates.length;
    await type(t, pane, "echo nobody-listens");
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(c.updates.length, quiet, "an unsubscribed resource sends nothing");

    // tmux://server after a window is created; list_changed when a pane comes and goes.
    assert.ok(c.registry.subscriptions.watchingList, "a client that listed is told of changes");
    await c.client.subscribeResource({ uri: "tmux://server" });
    const lists = c.listChanges.length;
    const window = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await waitFor(() => c.of("tmux://server") > 0, "the server's update");
    await waitFor(() => c.listChanges.length > lists, "list_changed for a new pane");
    const grown = (await c.client.listResources()).resources.map((r: { uri: string }) => r.uri);
    assert.ok(grown.includes(uriOf(window)));
    await new Promise((r) => setTimeout(r, 400));
    const lists2 = c.listChanges.length;
    await t.tmux("kill-pane", "-t", window);
    await waitFor(() => c.listChanges.length > lists2, "list_changed for a pane gone");
    // A layout change alone (no pane came or went) is no list change.
    await new Promise((r) => setTimeout(r, 600));
    const lists3 = c.listChanges.length;
    await t.tmux("resize-pane", "-t", pane, "-y", "5");
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(c.listChanges.length, lists3);
    await c.client.unsubscribeResource({ uri: "tmux://server" });

    // Logging: a control connection lost is a warning; at level error it is not sent, yet
    // stderr has it. Regained is info.
    await c.client.subscribeResource({ uri: "tmux://server" });
    await c.client.setLoggingLevel("warning");
    await t.tmux("detach-client", "-s", "main");
    await waitFor(
      () => c.messages.some((m) => /control connection lost/.test(String(m.data))),
      "the lost connection's log message",
    );
    await waitFor(
      () => c.log.some((l) => /info: tmux on socket ".*": control connection regained/.test(l)),
      "the connection regained (stderr)",
    );
    assert.ok(c.messages.every((m) => m.level !== "info"), "below the level set: not sent");
    await c.client.setLoggingLevel("error");
    const sentBefore = c.messages.length;
    const logged = c.log.length;
    await t.tmux("detach-client", "-s", "main");
    await waitFor(
      () => c.log.slice(logged).some((l) => /warning: .*control connection lost/.test(l)),
      "the second loss on stderr",
    );
    assert.equal(c.messages.length, sentBefore, "a warning is not sent at level error");
    assert.ok(c.log.every((l) => !l.includes("\n")));
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("a control connection ended by the end of its session is said as routine, not as trouble", async () => {
  const t = await TestTmux.start("main");
  const c = await legacyClient(t.socket);
  try {
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    await c.client.setLoggingLevel("info");
    await c.client.subscribeResource({ uri: "tmux://server" });
    const seat = async () =>
      (await t.tmux("list-clients", "-F", "#{client_control_mode} #{session_id}")).split("\n")
        .find((l) => l.startsWith("1 "))?.slice(2);
    const session = await waitFor(seat, "the control client's session");
    // Killed by somebody (a kill of the server's own does the same): tmux ends its clients.
    await t.tmux("kill-session", "-t", session);
    await waitFor(
      () =>
        c.messages.some((m) => /control connection ended with its session/.test(String(m.data))),
      "the routine end's log message",
    );
    const said = c.messages.find((m) => /ended with its session/.test(String(m.data)))!;
    assert.equal(said.level, "info");
    assert.match(String(said.data), new RegExp(`its session \\${session} \\(killed, or its last`));
    assert.ok(c.messages.every((m) => m.level !== "warning"), "no warning");
    assert.ok(c.log.some((l) => /info: .*ended with its session/.test(l)), "stderr too");
    // The next use connects again, and says so.
    await t.tmux("new-window", "-d", "-t", "other:", "sh");
    await waitFor(() => seat(), "a control client again");
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("a control connection ended by the end of the server's last session, the server kept (exit-empty off), is said as routine too", async () => {
  const t = await TestTmux.start("main");
  const c = await legacyClient(t.socket);
  try {
    await t.tmux("set-option", "-g", "exit-empty", "off");
    await c.client.setLoggingLevel("info");
    await c.client.subscribeResource({ uri: "tmux://server" });
    const pid = (await t.tmux("display-message", "-p", "#{pid}")).trim();
    await waitFor(
      async () => (await t.tmux("list-clients", "-F", "#{client_control_mode}")).includes("1"),
      "the control client",
    );
    await t.tmux("kill-session", "-t", "main");
    await waitFor(
      () =>
        c.messages.some((m) => /control connection ended with its session/.test(String(m.data))),
      "the routine end's log message",
    );
    assert.ok(c.messages.every((m) => m.level !== "warning"), "no warning");
    // The same server runs on, with no session at all.
    assert.equal((await t.tmux("display-message", "-p", "#{pid}")).trim(), pid);
    assert.equal((await t.tmux("list-sessions")).trim(), "");
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("tmux://agents is updated after `tmux-mcp hook attention`", async () => {
  const t = await TestTmux.start("main");
  const c = await legacyClient(t.socket);
  try {
    const first = JSON.parse(textOf(await c.client.readResource({ uri: "tmux://agents" })));
    assert.deepEqual(first.agents, []);
    // Answered once the marks are read: a mark from here on is told (no waiting for tmux's
    // first one-second look at its format subscription).
    await c.client.subscribeResource({ uri: "tmux://agents" });
    const words = denoJson.tasks.start.split(" ");
    const [run, ...flags] = [...words.slice(1, -1), `${ROOT}main.ts`];
    const hook = await sh(Deno.execPath(), [run, ...flags, "hook", "attention"], {
      env: cleanEnv(agentEnv(await t.facts(), t.ids.paneId)),
      stdin: JSON.stringify(RECORDED.Notification),
      allowFail: true,
    });
    assert.equal(hook.code, 0, hook.stderr);
    await waitFor(() => c.of("tmux://agents") > 0, "the agents' update");
    const agents = JSON.parse(textOf(await c.client.readResource({ uri: "tmux://agents" })));
    assert.equal(agents.agents.length, 1);
    assert.equal(agents.agents[0].windowId, t.ids.windowId);
    assert.equal(agents.agents[0].paneId, t.ids.paneId);
    assert.equal(agents.agents[0].state, "needs-input");
    assert.equal(agents.agents[0].message, RECORDED.Notification.message);
    assert.deepEqual(
      agents.agents[0].placements.map((p: { sessionName: string }) => p.sessionName),
      ["main"],
    );
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("live resources under 2026-07-28: subscriptions/listen watches only what streams ask for", async () => {
  const t = await TestTmux.start("main", { command: "bash --norc --noprofile" });
  const { registry, options } = setUp(t.socket);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = serveStdio(({ era }) => mcpServerFor(registry, options, era), {
    transport: registry.subscriptions.observe(serverSide),
  });
  const client = new Client(
    { name: "tmux-mcp-tests", version: "2" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const updates: string[] = [];
  let lists = 0;
  client.setNotificationHandler("notifications/resources/updated", (n) => {
    updates.push(n.params.uri);
  });
  client.setNotificationHandler("notifications/resources/list_changed", () => {
    lists++;
  });
  try {
    await t.prompt(t.ids.paneId);
    await client.connect(clientSide);
    assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
    assert.deepEqual(client.getServerCapabilities()?.resources, {
      subscribe: true,
      listChanged: true,
    });
    assert.equal(client.getServerCapabilities()?.logging, undefined, "deprecated: not declared");
    const uri = uriOf(t.ids.paneId);
    assert.deepEqual(registry.subscriptions.watched, []);
    const stream = await client.listen({
      resourceSubscriptions: [uri],
      resourcesListChanged: true,
    });
    await waitFor(() => registry.subscriptions.watched.length === 1, "the watch");
    assert.ok(registry.subscriptions.watchingList);
    await type(t, t.ids.paneId, "echo modern");
    await waitFor(() => updates.includes(uri), "the pane's update");
    await t.tmux("split-window", "-d", "-t", t.ids.paneId, "sh");
    await waitFor(() => lists > 0, "list_changed");
    await stream.close();
    await waitFor(() => registry.subscriptions.watched.length === 0, "the watch stopped");
    assert.equal(registry.subscriptions.watchingList, false);
  } finally {
    await client.close();
    await served.close();
    await options.runner!.close();
    await t.kill();
  }
});

/** A tmux server and an MCP server process on it, started with the start task's flags. */
async function withServerProcess(
  fn: (t: Awaited<ReturnType<typeof TestTmux.start>>, server: StdioServer) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start("main");
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await fn(t, server);
  } finally {
    await server.kill();
    await t.kill();
  }
}

Deno.test("over stdio with the start task's flags: subscriptions/listen, then the pane prints", async () => {
  const t = await TestTmux.start("main", { command: "bash --norc --noprofile" });
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  const meta = MODERN_META;
  try {
    await t.prompt(t.ids.paneId);
    const uri = uriOf(t.ids.paneId);
    const read = await server.request("resources/read", { uri, _meta: meta });
    assert.equal(read.error, undefined, JSON.stringify(read.error));
    const missing = await server.request("resources/read", {
      uri: "tmux://pane/4242",
      _meta: meta,
    });
    assert.match(missing.error!.message, /No pane %4242/);
    // The stream's request stays open; its notifications arrive meanwhile.
    server.request("subscriptions/listen", {
      notifications: { resourceSubscriptions: [uri] },
      _meta: meta,
    });
    await waitFor(
      () =>
        server.notifications.some((n) => n.method === "notifications/subscriptions/acknowledged"),
      "the acknowledgement",
    );
    // No pause: the acknowledgement is sent once the watch sees the pane's output.
    await type(t, t.ids.paneId, "echo over-stdio");
    await waitFor(
      () =>
        server.notifications.some((n) =>
          n.method === "notifications/resources/updated" && n.params?.uri === uri
        ),
      "the update over stdio",
    );
    const status = await server.closeStdin();
    assert.equal(status.code, 0);
  } finally {
    await server.kill();
    await t.kill();
  }
});

Deno.test("a listen stream hears nothing of its own before its acknowledgement", async () => {
  const t = await TestTmux.start("main", { command: "bash --norc --noprofile" });
  // A stopped server's watch is never ready: the acknowledgement waits out READY_WAIT_MS.
  const stuck = await TestTmux.start();
  const stuckPid = (await stuck.facts()).pid;
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await t.prompt(t.ids.paneId);
    const uri = uriOf(t.ids.paneId);
    Deno.kill(stuckPid, "SIGSTOP");
    const subscription = "late-ack";
    await server.writeLine(JSON.stringify({
      jsonrpc: "2.0",
      id: subscription,
      method: "subscriptions/listen",
      params: {
        notifications: {
          resourceSubscriptions: [uri, `tmux://server?socket=${stuck.socket}`],
        },
        _meta: MODERN_META,
      },
    }));
    const mine = () =>
      server.notifications.filter((n) =>
        (n.params?._meta as Record<string, unknown> | undefined)?.[
          "io.modelcontextprotocol/subscriptionId"
        ] === subscription
      );
    // The pane changes while the acknowledgement waits: the update is routed to the stream.
    let n = 0;
    await waitFor(async () => {
      if (mine().some((m) => m.method === "notifications/resources/updated")) return true;
      await type(t, t.ids.paneId, `echo change-${n++}`);
      return false;
    }, "an update for the stream");
    assert.equal(mine()[0].method, "notifications/subscriptions/acknowledged");
    await server.endsCleanly();
  } finally {
    Deno.kill(stuckPid, "SIGCONT");
    await server.kill();
    await t.kill();
    await stuck.kill();
  }
});

Deno.test("reading a pane on a socket with no server names that socket, not the server's own", async () => {
  const t = await TestTmux.start();
  const c = await legacyClient(t.socket);
  try {
    const absent = `${t.socket}-absent`;
    for (const pane of ["0", t.ids.paneId.slice(1)]) {
      const uri = `tmux://pane/${pane}?socket=${absent}`;
      const refused = await c.client.readResource({ uri })
        .then(() => null, (error: Error) => error.message);
      assert.ok(refused !== null, uri);
      assert.match(refused, new RegExp(`No tmux server is running on socket "${absent}"`));
      assert.doesNotMatch(refused, new RegExp(`"${t.socket}"`));
    }
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("a listen stream cancelled before its acknowledgement is never watched", async () => {
  await withServerProcess(async (t, server) => {
    const uri = uriOf(t.ids.paneId);
    // Control clients that follow a pane's output: the watches.
    const watching = async () =>
      (await t.tmux("list-clients", "-F", "#{client_flags}")).split("\n")
        .filter((flags) => flags.trim() !== "" && !flags.includes("no-output")).length;
    const listen = (id: string) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "subscriptions/listen",
        params: { notifications: { resourceSubscriptions: [uri] }, _meta: MODERN_META },
      });
    const cancel = (id: string) =>
      JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, _meta: MODERN_META },
      });
    const acknowledged = (id: string) =>
      server.notifications.some((n) =>
        n.method === "notifications/subscriptions/acknowledged" &&
        (n.params?._meta as Record<string, unknown>)["io.modelcontextprotocol/subscriptionId"] ===
          id
      );
    // Cancelled in the same read as the request, before the SDK acknowledges it.
    await server.writeLine(`${listen("early")}\n${cancel("early")}`);
    // A second stream on the same pane, acknowledged (so the first was handled), then cancelled:
    // nothing is left to watch.
    await server.writeLine(listen("later"));
    await waitFor(() => acknowledged("later"), "the second acknowledgement");
    assert.ok(await watching() >= 1, "the second stream is watched");
    await server.writeLine(cancel("later"));
    // A watch's client leaves 5 s after its last watcher (control_limits.ts LINGER_MS).
    await waitFor(async () => await watching() === 0, "no watch left", 15_000);
    await server.endsCleanly();
  });
});

Deno.test("a URI that names nothing is refused (2025) or left out of the grant (2026), never watched", async () => {
  const t = await TestTmux.start("main", { command: "bash --norc --noprofile" });
  const { cmd, args } = startCommand();
  // A job id of the right shape, started now.
  const job = ["0", "0".repeat(20), "1", Date.now().toString(36), "1", "1"].join("-");
  // Whatever its kind, each names no pane, host, job or socket: a read refuses it, and so must a
  // subscription (each would count toward the 512 resources and 16 servers, and be told nothing).
  const bad = [
    "tmux://pane/abc",
    "tmux://pane/3?socket=a%2Fb",
    "tmux://server?host=nowhere",
    `${uriOf(t.ids.paneId)}?host=nowhere`,
    "tmux://job/abc",
    `tmux://job/${job}?socket=a&socket=b`,
    `tmux://job/${job}?socket=a%2Fb`,
    `tmux://job/${job}?host=nowhere`,
  ];
  const legacy = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  const modern = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await legacy.initialize();
    for (const uri of bad) {
      const read = await legacy.request("resources/read", { uri });
      assert.equal(read.error?.code, -32602, `read ${uri}: ${JSON.stringify(read)}`);
      const refused = await legacy.request("resources/subscribe", { uri });
      assert.equal(refused.error?.code, -32602, `${uri}: ${JSON.stringify(refused)}`);
    }
    const good = uriOf(t.ids.paneId);
    assert.equal((await legacy.request("resources/subscribe", { uri: good })).error, undefined);

    modern.request("subscriptions/listen", {
      notifications: { resourceSubscriptions: [...bad, good] },
      _meta: MODERN_META,
    });
    await waitFor(
      () =>
        modern.notifications.some((n) => n.method === "notifications/subscriptions/acknowledged"),
      "the acknowledgement",
    );
    const ack = modern.notifications.find((n) =>
      n.method === "notifications/subscriptions/acknowledged"
    )!;
    assert.deepEqual(
      (ack.params?.notifications as { resourceSubscriptions: string[] }).resourceSubscriptions,
      [good],
    );
    // The stream stands for the pane: its output is told.
    await t.prompt(t.ids.paneId);
    await type(t, t.ids.paneId, "echo granted");
    await waitFor(
      () =>
        modern.notifications.some((n) =>
          n.method === "notifications/resources/updated" && n.params?.uri === good
        ),
      "the update for the granted URI",
    );
    await legacy.endsCleanly();
    await modern.endsCleanly();
  } finally {
    await legacy.kill();
    await modern.kill();
    await t.kill();
  }
});

Deno.test("watches are bounded: servers and resources at once, refused past it with the reason", async () => {
  await withServerProcess(async (t, server) => {
    await server.initialize();
    // Servers nobody started: each watch would try again and again, each try a tmux process.
    const absent = (i: number) => `tmux://server?socket=${t.socket}-absent-${i}`;
    for (let i = 0; i < MAX_WATCHED_SERVERS; i++) {
      const ok = await server.request("resources/subscribe", { uri: absent(i) });
      assert.equal(ok.error, undefined, JSON.stringify(ok.error));
    }
    const refused = await server.request("resources/subscribe", {
      uri: absent(MAX_WATCHED_SERVERS),
    });
    assert.equal(refused.error?.code, -32602);
    assert.match(refused.error!.message, /at most 16 tmux servers at once: unsubscribe/);
    // Another resource on a server already watched is fine; one freed makes room.
    const again = await server.request("resources/subscribe", {
      uri: `tmux://agents?socket=${t.socket}-absent-0`,
    });
    assert.equal(again.error, undefined);
    await server.request("resources/unsubscribe", { uri: absent(1) });
    const room = await server.request("resources/subscribe", { uri: absent(MAX_WATCHED_SERVERS) });
    assert.equal(room.error, undefined);
    await server.endsCleanly();
  });
});

Deno.test("tmux://server stays within the bound however many and long the names", async () => {
  await withServerProcess(async (t, server) => {
    for (let i = 0; i < 40; i++) {
      await t.tmux(
        "new-session",
        "-d",
        "-s",
        `s${i}-${"n".repeat(2_000)}`,
        "-n",
        "w".repeat(2_000),
      );
    }
    await server.initialize();
    const read = await server.request("resources/read", { uri: "tmux://server" });
    assert.equal(read.error, undefined);
    const text = (read.result?.contents as { text: string }[])[0].text;
    assert.ok(new TextEncoder().encode(text).length <= MAX_RESULT_BYTES, `${text.length}`);
    const view = JSON.parse(text) as {
      complete: boolean;
      sessions: unknown[];
      windows: unknown[];
      panes: unknown[];
      omittedSessions: number;
      omittedWindows: number;
      omittedPanes: number;
    };
    assert.equal(view.complete, false);
    assert.equal(view.sessions.length + view.omittedSessions, 41);
    assert.equal(view.windows.length + view.omittedWindows, 41);
    assert.equal(view.panes.length + view.omittedPanes, 41);
    assert.ok(view.panes.length > 0, "panes keep room of their own");
    await server.endsCleanly();
  });
});

Deno.test("resources/list stays within the bound, counting what the SDK adds to each entry", async () => {
  await withServerProcess(async (t, server) => {
    const title = "T".repeat(80);
    for (let i = 0; i < 300; i += 30) {
      await t.tmux(
        ...Array.from({ length: 30 }, () => ["new-window", "-d", "cat", ";"]).flat().slice(0, -1),
      );
    }
    await t.tmux("set-option", "-g", "allow-rename", "off");
    const ids = (await t.tmux("list-panes", "-a", "-F", "#{pane_id}")).trim().split("\n");
    for (let i = 0; i < ids.length; i += 30) {
      await t.tmux(
        ...chainArgv(ids.slice(i, i + 30).map((id) => ["select-pane", "-t", id, "-T", title])),
      );
    }
    await server.initialize();
    const listed = await server.request("resources/list");
    const bytes = new TextEncoder().encode(JSON.stringify(listed)).length;
    assert.ok(bytes <= MAX_RESULT_BYTES + 1_000, `${bytes} bytes`);
    const resources = listed.result?.resources as { uri: string; description?: string }[];
    assert.ok(resources.some((r) => r.uri === "tmux://server"));
    assert.ok(resources.filter((r) => r.uri.startsWith("tmux://pane/")).length < ids.length);
    await server.endsCleanly();
  });
});
