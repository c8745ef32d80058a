/**
 * Both protocol versions, end to end over stdio with the `start` task's flags, as real clients
 * speak them: the SDK's v2 client negotiating automatically (2026-07-28: no handshake,
 * `server/discover`, per-request `_meta`), the v2 client on the 2025 handshake, and the SDK's
 * v1 client (2025-11-25). Each gets discovery, a tool call with structured content, an error
 * result, progress and cancellation. Then the wire itself: what a 2026-07-28 client sends and
 * is answered, a probe followed by the 2025 handshake, and the end of input under 2026-07-28.
 */

import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import assert from "node:assert/strict";
import prebuilt from "../src/mcp/tool_list.json" with { type: "json" };
import { DEFAULT_TOOLSETS } from "../src/mcp/toolsets.ts";
import { MODERN_META, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, TestTmux, waitFor } from "./helpers/tmux.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** What a test needs of a connected client, whichever SDK line it comes from. */
interface Session {
  /** The protocol version the connection speaks. */
  readonly protocol: string;
  /** The server's name and the instructions it gave. */
  readonly serverName: string | undefined;
  readonly instructions: string | undefined;
  /** What `server/discover` answered, when the client sent one. */
  readonly discovered: Record<string, unknown> | undefined;
  listTools(): Promise<Record<string, unknown> & { tools: Record<string, unknown>[] }>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal; onprogress?: (progress: { progress: number }) => void },
  ): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

interface Flavor {
  readonly label: string;
  readonly protocol: "2026-07-28" | "2025-11-25";
  connect(socket: string): Promise<Session>;
}

/** The server process as an MCP client configures it: the start task's command line. */
function serverParameters(socket: string) {
  const { cmd, args } = startCommand();
  return {
    command: cmd,
    args: [...args, "--socket", socket],
    env: cleanEnv(),
    cwd: ROOT,
    stderr: "pipe" as const,
  };
}

function v2(mode: "auto" | "legacy"): Flavor["connect"] {
  return async (socket) => {
    const client = new Client(
      { name: "tmux-mcp-tests", version: "2" },
      { versionNegotiation: { mode } },
    );
    await client.connect(new StdioClientTransport(serverParameters(socket)));
    return {
      protocol: client.getNegotiatedProtocolVersion() ?? "",
      serverName: client.getServerVersion()?.name,
      instructions: client.getInstructions(),
      discovered: client.getDiscoverResult() as Record<string, unknown> | undefined,
      listTools: async () => await client.listTools() as never,
      callTool: async (name, args, options) =>
        await client.callTool({ name, arguments: args }, options) as never,
      close: () => client.close(),
    };
  };
}

async function v1(socket: string): Promise<Session> {
  const client = new V1Client({ name: "tmux-mcp-tests", version: "1" });
  const transport = new V1StdioClientTransport(serverParameters(socket));
  // The v1 client hands the negotiated version to a transport that takes it.
  let negotiated = "";
  Object.assign(transport, { setProtocolVersion: (version: string) => negotiated = version });
  await client.connect(transport);
  return {
    protocol: negotiated,
    serverName: client.getServerVersion()?.name,
    instructions: client.getInstructions(),
    discovered: undefined,
    listTools: async () => await client.listTools() as never,
    callTool: async (name, args, options) =>
      await client.callTool({ name, arguments: args }, undefined, options) as never,
    close: () => client.close(),
  };
}

const FLAVORS: readonly Flavor[] = [
  { label: "v2 client, automatic negotiation", protocol: "2026-07-28", connect: v2("auto") },
  { label: "v2 client, 2025 handshake", protocol: "2025-11-25", connect: v2("legacy") },
  { label: "v1 client", protocol: "2025-11-25", connect: v1 },
];

/** The default toolsets' tools, in the order the server lists them. */
function defaultToolNames(): string[] {
  const all = prebuilt.tools.map((t) => t.name);
  // The batch tool is always on; teardown is the one toolset not on by default.
  const teardown = new Set([
    "kill_pane",
    "kill_window",
    "kill_session",
    "kill_server",
    "clear_pane",
  ]);
  assert.ok(!DEFAULT_TOOLSETS.includes("teardown" as never));
  return all.filter((name) => !teardown.has(name));
}

function textOf(result: Record<string, unknown>): string {
  const content = result.content as { type: string; text?: string }[] | undefined;
  return content?.[0]?.type === "text" ? content[0].text ?? "" : "";
}

for (const flavor of FLAVORS) {
  Deno.test(`protocols: ${flavor.label} speaks ${flavor.protocol}: discovery, a call, an error, progress and cancellation`, async (t) => {
    const tmux = await TestTmux.start();
    const session = await flavor.connect(tmux.socket);
    try {
      await t.step("discovery", async () => {
        assert.equal(session.protocol, flavor.protocol);
        assert.equal(session.serverName, "tmux-mcp");
        assert.match(session.instructions ?? "", /^tmux-mcp lets you see and drive tmux/);
        const listed = await session.listTools();
        assert.deepEqual(listed.tools.map((tool) => tool.name), defaultToolNames());
        const listPanes = listed.tools.find((tool) => tool.name === "list_panes")!;
        assert.equal(
          (listPanes.inputSchema as { $schema?: string }).$schema,
          "https://json-schema.org/draft/2020-12/schema",
          "the seeded tools keep $schema, in the SDK's dialect",
        );
        if (flavor.protocol === "2026-07-28") {
          assert.ok(session.discovered, "the client probed with server/discover");
          assert.ok((session.discovered.supportedVersions as string[]).includes("2026-07-28"));
          assert.deepEqual(session.discovered.capabilities, {
            tools: { listChanged: false },
            extensions: { "io.modelcontextprotocol/tasks": {} },
            resources: { subscribe: true, listChanged: true },
            completions: {},
            prompts: { listChanged: false },
          });
          // Cacheable: the tool list is fixed for the life of the process.
          assert.equal(listed.ttlMs, 86_400_000);
          assert.equal(listed.cacheScope, "private");
          assert.equal(session.discovered.ttlMs, 86_400_000);
        } else {
          assert.equal(session.discovered, undefined);
          assert.equal(listed.ttlMs, undefined, "a 2025 answer carries no cache fields");
        }
      });

      await t.step("a tool call with structured content", async () => {
        const result = await session.callTool("list_panes", {});
        assert.notEqual(result.isError, true, textOf(result));
        const panes = (result.structuredContent as { panes: { id: string }[] }).panes;
        assert.deepEqual(panes.map((p) => p.id), [tmux.ids.paneId]);
        assert.match(textOf(result), new RegExp(`\\bid=${tmux.ids.paneId}\\b`));
      });

      await t.step("an error result", async () => {
        const result = await session.callTool("capture_pane", { paneId: "%999" });
        assert.equal(result.isError, true);
        assert.equal(result.structuredContent, undefined);
        assert.match(textOf(result), /^No pane %999 on socket .*list_panes lists them all\.$/);
        const unknown = await session.callTool("kill_server", {});
        assert.equal(unknown.isError, true, "a tool not on offer is a tool error");
        assert.match(
          textOf(unknown),
          /^MCP error -32602: Tool kill_server not found\. No tool of that name is on offer here .*tools\/list shows what is\.$/,
        );
        // A name spelt another way is answered with the tool meant.
        const slip = await session.callTool("tmux-capture-pane", { paneId: tmux.ids.paneId });
        assert.equal(slip.isError, true);
        assert.match(
          textOf(slip),
          /^MCP error -32602: Tool tmux-capture-pane not found \(did you mean capture_pane\?\)\. No tool /,
        );
      });

      await t.step("progress, then cancellation", async () => {
        const abort = new AbortController();
        const progressed = Promise.withResolvers<void>();
        let ticks = 0;
        const call = session.callTool("wait_for_text", {
          paneId: tmux.ids.paneId,
          patterns: ["NEVER-PRINTED"],
          timeoutMs: 60_000,
        }, {
          signal: abort.signal,
          onprogress: () => {
            ticks++;
            progressed.resolve();
          },
        });
        const outcome = call.then(() => "answered", (error) => `rejected: ${error}`);
        // A call that ends without progress (an error) fails here rather than waiting for ever.
        const first = await Promise.race([progressed.promise.then(() => "progress"), outcome]);
        assert.equal(first, "progress", "the wait reports progress while it runs");
        assert.ok(ticks >= 1, "the wait reports progress while it runs");
        abort.abort("the test gave up");
        assert.match(await outcome, /^rejected: /, "the cancelled call is not answered");
        // The server goes on serving, and the cancelled wait left no watch on the pane.
        const again = await session.callTool("wait_for_text", {
          paneId: tmux.ids.paneId,
          patterns: ["NEVER-PRINTED"],
          timeoutMs: 2_000,
        });
        // A loaded machine's tmux may answer the wait's first read only after its timeout: the
        // call then says so (wait_late_test.ts), as an error.
        if (again.isError) assert.match(textOf(again), /tmux was slow to answer/, textOf(again));
        else assert.equal((again.structuredContent as { outcome: string }).outcome, "timedOut");
      });
    } finally {
      await session.close();
      await tmux.kill();
    }
  });
}

function start(socket: string): StdioServer {
  const { cmd, args } = startCommand();
  return new StdioServer(cmd, [...args, "--socket", socket], cleanEnv());
}

Deno.test("protocols: 2026-07-28 on the wire: no handshake, _meta on every request, a cacheable tools/list", async () => {
  const tmux = await TestTmux.start();
  const server = start(tmux.socket);
  const legacy = start(tmux.socket);
  try {
    // The first message is a request of the protocol itself: no initialize, no discover.
    const list = await server.request("tools/list", { _meta: MODERN_META });
    assert.equal(list.error, undefined, JSON.stringify(list.error));
    assert.equal(list.result!.resultType, "complete");
    assert.equal(list.result!.ttlMs, 86_400_000);
    assert.equal(list.result!.cacheScope, "private");
    assert.deepEqual(
      (list.result!._meta as Record<string, unknown>)["io.modelcontextprotocol/serverInfo"],
      { name: "tmux-mcp", version: "0.1.0" },
    );
    // The same tools, schemas and all, as a 2025 client is shown, less `execution` (tasks are
    // an extension under 2026-07-28, negotiated per request).
    await legacy.initialize();
    const old = await legacy.request("tools/list");
    assert.deepEqual(
      list.result!.tools,
      (old.result!.tools as Record<string, unknown>[]).map(({ execution: _, ...tool }) => tool),
    );
    assert.deepEqual(Object.keys(old.result!), ["tools"]);

    const call = await server.request("tools/call", {
      name: "list_panes",
      arguments: {},
      _meta: MODERN_META,
    });
    const panes = (call.result!.structuredContent as { panes: { id: string }[] }).panes;
    assert.deepEqual(panes.map((p) => p.id), [tmux.ids.paneId]);
    assert.equal(call.result!.resultType, "complete");

    const malformed = await server.request("tools/call", { arguments: {}, _meta: MODERN_META });
    assert.deepEqual(malformed.error, {
      code: -32602,
      message: "tools/call needs params {name: a tool name, arguments: an object of named fields}.",
    });

    // Every request carries its protocol version; one without is refused, as is a handshake.
    const bare = await server.request("tools/list");
    assert.equal(bare.error?.code, -32602);
    const init = await server.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "late", version: "1" },
    });
    assert.ok(init.error, "no handshake once 2026-07-28 is spoken");
    assert.ok(
      JSON.stringify(init.error).includes("2026-07-28"),
      "the refusal names the version spoken",
    );
    await server.endsCleanly();
    await legacy.endsCleanly();
  } finally {
    await server.kill();
    await legacy.kill();
    await tmux.kill();
  }
});

Deno.test("protocols: server/discover then initialize: the probe's server is dropped and 2025-11-25 is served", async () => {
  const tmux = await TestTmux.start();
  const server = start(tmux.socket);
  try {
    const discover = await server.request("server/discover", { _meta: MODERN_META });
    assert.ok((discover.result!.supportedVersions as string[]).includes("2026-07-28"));
    assert.equal(discover.result!.instructions !== undefined, true);
    // A client that shares no 2026 version with the server falls back to the handshake.
    const init = await server.initialize();
    assert.equal(init.result!.protocolVersion, "2025-06-18");
    // The tool list is fixed at start under every protocol: no client listens for a change.
    assert.deepEqual(init.result!.capabilities, {
      tools: { listChanged: false },
      logging: {},
      resources: { subscribe: true, listChanged: true },
      completions: {},
      prompts: { listChanged: false },
    });
    const result = await server.callTool("list_panes");
    const panes = (result.structuredContent as { panes: { id: string }[] }).panes;
    assert.deepEqual(panes.map((p) => p.id), [tmux.ids.paneId]);
    // In the words a 2025 client always read.
    const malformed = await server.request("tools/call", { arguments: {} });
    assert.deepEqual(malformed.error, {
      code: -32602,
      message: "MCP error -32602: tools/call needs params {name: a tool name, arguments: an " +
        "object of named fields}.",
    });
    await server.endsCleanly();
  } finally {
    await server.kill();
    await tmux.kill();
  }
});

/** The tmux processes that are the server's clients of `socket` (the test's own carry -f). */
async function tmuxClientsOf(socket: string): Promise<string[]> {
  const r = await sh("pgrep", ["-af", `tmux -u -L ${socket} `], { allowFail: true });
  return r.stdout.split("\n").filter((l) => l.trim() !== "" && !l.includes(" -f /dev/null "));
}

Deno.test("protocols: under 2026-07-28 too, closing stdin mid-call ends the process and leaves no tmux child", async () => {
  const tmux = await TestTmux.start();
  const stuck = await TestTmux.start();
  const stuckPid = (await stuck.facts()).pid;
  const server = start(tmux.socket);
  try {
    await server.request("tools/list", { _meta: MODERN_META });
    // A stopped tmux server never answers: the probe's tmux client waits for it.
    Deno.kill(stuckPid, "SIGSTOP");
    server.request("tools/call", {
      name: "list_servers",
      arguments: { socketNames: [stuck.socket] },
      _meta: MODERN_META,
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
    await tmux.kill();
    await stuck.kill();
  }
});
