/**
 * A stdio server declares every tool from the list built with the source and loads a tool's
 * family on its first call (src/serve.ts, src/tools/families.ts). What a client sees must not
 * change: the same tools in the same order with the same descriptions, annotations, selection
 * rules, results and refusals, resources and templates; a family loads once however many calls
 * race for it, and only when one of its tools is used.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import { ToolRegistry } from "../src/mcp/registry.ts";
import { ToolSelectionError } from "../src/mcp/tool_selection.ts";
import { defineTool, READ_ONLY } from "../src/mcp/tool_spec.ts";
import { z } from "zod";
import { DEFAULT_TOOLSETS, TOOLSETS } from "../src/mcp/toolsets.ts";
import { buildFullRegistry, mcpServerFor, type ServerOptions } from "../src/server.ts";
import { servingRegistry } from "../src/serve.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { TestTmux } from "./helpers/tmux.ts";

function options(socketName: string, more: Partial<ServerOptions> = {}): ServerOptions {
  return {
    address: { socketName },
    toolsets: TOOLSETS,
    version: "test",
    maxResultBytes: MAX_RESULT_BYTES,
    callerEnv: {},
    runner: new TmuxRunner(),
    ...more,
  };
}

function eager(opts: ServerOptions): ToolRegistry {
  return buildFullRegistry(opts.runner!, opts);
}

function lazy(opts: ServerOptions): ToolRegistry {
  const registry = servingRegistry(opts.runner!, opts);
  assert.ok(registry, "default options serve lazily");
  return registry;
}

/** A client of an SDK server over `registry`. */
async function client(registry: ToolRegistry, opts: ServerOptions): Promise<Client> {
  const server = mcpServerFor(registry, opts);
  const c = new Client({ name: "lazy-tools-test", version: "1" });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await c.connect(clientSide);
  return c;
}

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  await c.callTool({ name, arguments: args }) as CallToolResult;

Deno.test("lazy tools: declared as the loaded ones are, in the same order, with the same selection", async () => {
  const opts = options("unused");
  try {
    const loaded = eager(opts);
    const declared = lazy(opts);
    const facts = (r: ToolRegistry) =>
      r.tools.map((t) => ({
        name: t.name,
        title: t.title,
        toolset: t.toolset,
        description: t.description,
        annotations: { title: t.title, ...t.annotations },
      }));
    assert.deepEqual(facts(declared), facts(loaded));
    assert.ok(declared.tools.every((t) => declared.isLazy(t.name)));
    assert.deepEqual(declared.resources.map((r) => [r.name, r.uri]), [
      ...loaded.resources.map((r) => [r.name, r.uri]),
    ]);
    assert.deepEqual(declared.prompts.map((p) => p.name), loaded.prompts.map((p) => p.name));

    const selected = { toolsets: DEFAULT_TOOLSETS, denyTools: ["send_keys"] };
    assert.deepEqual(
      lazy(options("unused", selected)).tools.map((t) => t.name),
      eager(options("unused", selected)).tools.map((t) => t.name),
    );
    assert.throws(
      () => servingRegistry(opts.runner!, options("unused", { tools: ["list_pane"] })),
      ToolSelectionError,
    );
    assert.throws(
      () =>
        servingRegistry(
          opts.runner!,
          options("unused", { toolsets: ["inspect"], tools: ["kill_pane"] }),
        ),
      /toolsets that are not selected/,
    );
    // Where tools/list cannot come from the list built with the source: loaded at start.
    assert.equal(servingRegistry(opts.runner!, options("unused", { maxResultBytes: 5_000 })), null);
    assert.equal(
      servingRegistry(opts.runner!, options("unused", { prebuiltToolList: false })),
      null,
    );
    const ssh = new TmuxRunner({ ssh: { destinations: ["devbox"] } });
    assert.equal(servingRegistry(ssh, options("unused", { runner: ssh })), null);
    await ssh.close();
  } finally {
    await opts.runner!.close();
  }
});

Deno.test("lazy tools: a call loads its family only; results and refusals are those of loaded tools", async () => {
  const t = await TestTmux.start("lazy");
  // The answers compared below must not straddle the window's rename after its shell.
  await t.settledName(t.ids.windowId);
  // One runner (one control client) for both, so that both see the same server.
  const lazyOpts = options(t.socket);
  const eagerOpts = { ...lazyOpts };
  const registry = lazy(lazyOpts);
  const l = await client(registry, lazyOpts);
  const e = await client(eager(eagerOpts), eagerOpts);
  try {
    // One family's tools at once, racing: the family loads once (a second load would declare
    // its tools twice and fail), and no other family loads.
    const results = await Promise.all(
      ["list_sessions", "list_windows", "list_panes", "get_server_info", "list_clients"].map((
        name,
      ) => call(l, name, {})),
    );
    assert.ok(results.every((r: CallToolResult) => r.isError !== true), JSON.stringify(results));
    const discovery = ["list_sessions", "list_panes", "get_pane_info", "list_servers"];
    assert.ok(discovery.every((name) => !registry.isLazy(name)));
    assert.ok(
      ["send_keys", "capture_pane", "kill_pane", "call_tools_batch"].every((name) =>
        registry.isLazy(name)
      ),
    );

    // The same answers, checked by the client against the output schemas the list declares.
    for (
      const [name, args] of [
        ["list_sessions", {}],
        ["list_windows", {}],
        ["capture_pane", { paneId: t.ids.paneId, maxLines: 5 }],
        ["get_window_info", { windowId: t.ids.windowId }],
      ] as const
    ) {
      const [a, b] = [await call(l, name, args), await call(e, name, args)];
      assert.deepEqual(a, b, name);
    }
    // Refusals in the same words, from a tool never loaded before.
    for (
      const [name, args] of [
        ["send_keys", { paneId: "nope", text: "x" }],
        ["search_panes", {}],
        ["resize_pane", { paneId: t.ids.paneId, bogus: 1 }],
        ["kill_window", { windowId: "@999" }],
      ] as const
    ) {
      const [a, b] = [await call(l, name, args), await call(e, name, args)];
      assert.equal(a.isError, true, name);
      assert.deepEqual(a, b, name);
    }
    // A batch loads the families of its rows.
    const batch = await call(l, "call_tools_batch", {
      operations: [
        { tool: "get_session_info", arguments: { session: "lazy" } },
        { tool: "snapshot_pane", arguments: { paneId: t.ids.paneId } },
      ],
    });
    assert.equal(batch.isError, undefined, JSON.stringify(batch));
    assert.equal((batch.structuredContent as { succeeded: number }).succeeded, 2);
  } finally {
    await l.close();
    await e.close();
    await lazyOpts.runner!.close();
    await t.kill();
  }
});

Deno.test("lazy tools: a family that fails to load is an error result naming why, and is tried again", async () => {
  const opts = options("unused", { toolsets: ["inspect"] });
  const registry = new ToolRegistry(opts.runner!, opts, ["inspect"]);
  let attempts = 0;
  const extras = { signal: new AbortController().signal, progress: () => Promise.resolve() };
  registry.declareLazy({
    name: "echo",
    title: "Echo",
    toolset: "inspect",
    description: "Says what it is given.",
    annotations: READ_ONLY,
    load: () => {
      if (++attempts === 1) return Promise.reject(new Error("the chunk is missing"));
      registry.add(defineTool({
        name: "echo",
        title: "Echo",
        toolset: "inspect",
        description: "Says what it is given.",
        input: { text: z.string() },
        output: { text: z.string() },
        annotations: READ_ONLY,
        run: (args) => Promise.resolve({ data: { text: args.text }, summary: args.text }),
      }));
      return Promise.resolve();
    },
  });
  try {
    assert.ok(registry.isLazy("echo"));
    const failed = await registry.call(registry.get("echo")!, { text: "hi" }, extras);
    assert.equal(failed.isError, true);
    assert.match(
      (failed.content[0] as { text: string }).text,
      /^echo could not be loaded: the chunk is missing$/,
    );
    assert.ok(registry.isLazy("echo"), "still declared, to be loaded again");
    const stub = registry.get("echo")!;
    const ok = await registry.call(stub, { text: "hi" }, extras);
    assert.deepEqual(ok.structuredContent, { text: "hi" });
    assert.equal(registry.isLazy("echo"), false);
    // The stub a client or a batch still holds reaches the loaded tool; arguments are checked.
    const refused = await registry.call(stub, { text: 1 }, extras);
    assert.equal(refused.isError, true);
    assert.match((refused.content[0] as { text: string }).text, /text/);
    assert.equal(attempts, 2);
    assert.throws(() => registry.add(registry.get("echo")!), /declared twice/);
  } finally {
    await opts.runner!.close();
  }
});
