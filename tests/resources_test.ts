/**
 * What the resources, subscriptions and completions of later issues stand on, under both
 * protocol versions: a registry with resources (test ones here) lists and reads them, completes
 * a template's variable, and tells a 2025-11-25 client that subscribed (`resources/subscribe`)
 * and a 2026-07-28 client that listens (`subscriptions/listen`) of a change, each of only the
 * URIs it asked for. A server the stdio entry builds and drops (a probe) leaves no connection
 * behind. And a tool's log messages reach stderr.
 */

import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import type { ToolRegistry } from "../src/mcp/registry.ts";
import { defineTool, READ_ONLY } from "../src/mcp/tool_spec.ts";
import type { ResourceSpec } from "../src/mcp/resource_spec.ts";
import { buildRegistry, mcpServerFor, type ServerOptions } from "../src/server.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { waitFor } from "./helpers/tmux.ts";

const PANES = ["1", "2", "10"];

const RESOURCES: ResourceSpec[] = [
  {
    name: "test-static",
    title: "A fixed resource",
    description: "Always the same text.",
    mimeType: "text/plain",
    uri: "test://static",
    tools: [],
    read: () => Promise.resolve("static text"),
  },
  {
    name: "test-pane",
    title: "A pane",
    description: "One resource per pane number.",
    mimeType: "text/plain",
    uri: "test://pane/{pane}",
    tools: [],
    list: () => Promise.resolve(PANES.map((p) => ({ uri: `test://pane/${p}`, name: `pane ${p}` }))),
    complete: { pane: (typed) => Promise.resolve(PANES.filter((p) => p.startsWith(typed))) },
    read: (_uri, variables) => Promise.resolve(`pane ${variables.pane}`),
  },
];

/** A tool that logs what a pane showed, control characters and all. */
const LOGGING_TOOL = defineTool({
  name: "test_log",
  title: "Log",
  toolset: "inspect",
  description: "Logs a line.",
  input: {},
  output: {},
  annotations: READ_ONLY,
  run: (_args, ctx) => {
    ctx.log("warning", "the pane showed \x1b[2J\nfake: line");
    return Promise.resolve({ data: {}, summary: "Logged." });
  },
});

function setUp(): { registry: ToolRegistry; options: ServerOptions; lines: string[] } {
  const lines: string[] = [];
  const options: ServerOptions = {
    address: { socketName: "tmux-mcp-test-resources-unused" },
    toolsets: ["inspect"],
    version: "test",
    maxResultBytes: MAX_RESULT_BYTES,
    callerEnv: {},
    runner: new TmuxRunner(),
    diagnostics: (line) => lines.push(line),
  };
  const registry = buildRegistry(options.runner!, options);
  registry.addResource(...RESOURCES);
  registry.add(LOGGING_TOOL);
  return { registry, options, lines };
}

function textOf(contents: readonly unknown[]): string {
  return (contents[0] as { text: string }).text;
}

Deno.test("resources under 2025-11-25: list, read, complete, resources/subscribe, log to stderr", async () => {
  const { registry, options, lines } = setUp();
  const server = mcpServerFor(registry, options, "legacy");
  const client = new V1Client({ name: "tmux-mcp-tests", version: "1" });
  const updated: string[] = [];
  client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n: { params: { uri: string } }) => {
      updated.push(n.params.uri);
    },
  );
  const [clientSide, serverSide] = V1InMemoryTransport.createLinkedPair();
  try {
    await server.connect(serverSide);
    await client.connect(clientSide);
    assert.deepEqual(client.getServerCapabilities()?.resources, {
      subscribe: true,
      listChanged: false,
    });
    assert.deepEqual(client.getServerCapabilities()?.completions, {});

    const listed = await client.listResources();
    assert.deepEqual(listed.resources.map((r: { uri: string }) => r.uri), [
      "test://static",
      "test://pane/1",
      "test://pane/2",
      "test://pane/10",
    ]);
    const templates = await client.listResourceTemplates();
    // Besides the server's own (tmux://job/{jobId}, registered with the tools).
    assert.deepEqual(
      templates.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate)
        .filter((u: string) => u.startsWith("test://")),
      [
        "test://pane/{pane}",
      ],
    );
    assert.equal(textOf((await client.readResource({ uri: "test://pane/7" })).contents), "pane 7");
    assert.equal(
      textOf((await client.readResource({ uri: "test://static" })).contents),
      "static text",
    );
    const completed = await client.complete({
      ref: { type: "ref/resource", uri: "test://pane/{pane}" },
      argument: { name: "pane", value: "1" },
    });
    assert.deepEqual(completed.completion.values, ["1", "10"]);

    // Only what was subscribed to: updates of one connection arrive in order, so pane 2's would
    // have come before pane 1's.
    await client.subscribeResource({ uri: "test://pane/1" });
    registry.resourceUpdated("test://pane/2");
    registry.resourceUpdated("test://pane/1");
    await waitFor(() => updated.length > 0, "the update of pane 1");
    assert.deepEqual(updated, ["test://pane/1"]);
    await client.unsubscribeResource({ uri: "test://pane/1" });
    await client.subscribeResource({ uri: "test://pane/10" });
    registry.resourceUpdated("test://pane/1");
    registry.resourceUpdated("test://pane/10");
    await waitFor(() => updated.length > 1, "the update of pane 10");
    assert.deepEqual(updated, ["test://pane/1", "test://pane/10"]);
    await assert.rejects(client.subscribeResource({ uri: "test://elsewhere" }), /No resource/);

    // A log message reaches stderr, one line, nothing in it able to drive a terminal.
    const result = await client.callTool({ name: "test_log", arguments: {} });
    assert.notEqual(result.isError, true);
    assert.deepEqual(lines, ["tmux-mcp: warning: the pane showed \\x1B[2J\\x0Afake: line"]);
    assert.equal(registry.subscriptions.connections, 1);
  } finally {
    await client.close();
    await server.close();
    await options.runner!.close();
  }
  assert.equal(registry.subscriptions.connections, 0, "a closed server leaves");
});

Deno.test("resources under 2026-07-28: list, read, complete, subscriptions/listen", async () => {
  const { registry, options } = setUp();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = serveStdio(({ era }) => mcpServerFor(registry, options, era), {
    transport: serverSide,
  });
  const client = new Client(
    { name: "tmux-mcp-tests", version: "2" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const updated: string[] = [];
  client.setNotificationHandler("notifications/resources/updated", (n) => {
    updated.push(n.params.uri);
  });
  try {
    await client.connect(clientSide);
    assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
    assert.deepEqual(client.getServerCapabilities()?.resources, {
      subscribe: true,
      listChanged: false,
    });
    const listed = await client.listResources();
    assert.deepEqual(listed.resources.map((r) => r.uri), [
      "test://static",
      "test://pane/1",
      "test://pane/2",
      "test://pane/10",
    ]);
    assert.equal(textOf((await client.readResource({ uri: "test://pane/7" })).contents), "pane 7");
    const completed = await client.complete({
      ref: { type: "ref/resource", uri: "test://pane/{pane}" },
      argument: { name: "pane", value: "1" },
    });
    assert.deepEqual(completed.completion.values, ["1", "10"]);

    const subscription = await client.listen({ resourceSubscriptions: ["test://pane/1"] });
    assert.deepEqual(subscription.honoredFilter, { resourceSubscriptions: ["test://pane/1"] });
    registry.resourceUpdated("test://pane/2");
    registry.resourceUpdated("test://pane/1");
    await waitFor(() => updated.length > 0, "the update of pane 1");
    assert.deepEqual(updated, ["test://pane/1"]);
    await subscription.close();
    // The 2025 way of subscribing is not part of this protocol version.
    await assert.rejects(
      client.subscribeResource({ uri: "test://pane/1" }),
      /not found|not supported|resources\/subscribe/i,
    );
  } finally {
    await client.close();
    await served.close();
    await options.runner!.close();
  }
  assert.equal(registry.subscriptions.connections, 0, "a closed server leaves");
});

Deno.test("a server/discover probe followed by initialize leaves one connection, not two", async () => {
  const { registry, options } = setUp();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = serveStdio(({ era }) => mcpServerFor(registry, options, era), {
    transport: serverSide,
  });
  const answers = new Map<number, Record<string, unknown>>();
  clientSide.onmessage = (message) => {
    const m = message as { id?: number; result?: Record<string, unknown> };
    if (typeof m.id === "number" && m.result) answers.set(m.id, m.result);
  };
  await clientSide.start();
  try {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    await clientSide.send({
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: { _meta: meta },
    });
    await waitFor(() => answers.has(1), "the discover answer");
    assert.equal(registry.subscriptions.connections, 1, "the probe's server");
    await clientSide.send({
      jsonrpc: "2.0",
      id: 2,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "fallback", version: "1" },
      },
    });
    await waitFor(() => answers.has(2), "the initialize answer");
    assert.equal(answers.get(2)!.protocolVersion, "2025-11-25");
    assert.equal(registry.subscriptions.connections, 1, "the probe's server has gone");
  } finally {
    await served.close();
    await clientSide.close();
    await options.runner!.close();
  }
  assert.equal(registry.subscriptions.connections, 0);
});

Deno.test("a subscription whose watch cannot start is tried once while wanted, not at every change", async () => {
  const { registry, options, lines } = setUp();
  let tries = 0;
  registry.addResource({
    name: "test-unwatchable",
    title: "A resource that cannot be watched",
    description: "Its watch throws.",
    mimeType: "text/plain",
    uri: "test://unwatchable/{name}",
    tools: [],
    read: () => Promise.resolve("text"),
    watch: () => {
      tries++;
      throw new Error("no such thing to watch");
    },
  });
  const server = mcpServerFor(registry, options, "legacy");
  const client = new V1Client({ name: "tmux-mcp-tests", version: "1" });
  const [clientSide, serverSide] = V1InMemoryTransport.createLinkedPair();
  try {
    await server.connect(serverSide);
    await client.connect(clientSide);
    await client.subscribeResource({ uri: "test://unwatchable/a" });
    // Every subscribe and unsubscribe of another URI looks again at what is watched.
    for (let i = 0; i < 20; i++) {
      await client.subscribeResource({ uri: "test://pane/1" });
      await client.unsubscribeResource({ uri: "test://pane/1" });
    }
    const warned = () => lines.filter((l) => l.includes("cannot watch test://unwatchable/a"));
    assert.equal(tries, 1, "tried again at every change");
    assert.equal(warned().length, 1, lines.join("\n"));
    // Nobody wants it, then somebody does again: a new subscription tries once more.
    await client.unsubscribeResource({ uri: "test://unwatchable/a" });
    await client.subscribeResource({ uri: "test://unwatchable/a" });
    assert.equal(tries, 2);
    assert.equal(warned().length, 2);
    assert.deepEqual(registry.subscriptions.watched, []);
  } finally {
    await client.close();
    await server.close();
    await options.runner!.close();
  }
});
