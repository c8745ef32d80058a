/**
 * The facts the front desk (src/mcp/front_desk.ts) answers from without loading the SDK or the
 * tools, written to src/mcp/front_desk.json by `deno task tool-list`: each tool's toolset (in
 * registration order), each prompt's tools, and the capabilities the SDK answers with (every
 * toolset, so every prompt, on offer). Also the SDK's own answers to a message sequence, which
 * tests/front_desk_test.ts compares the desk's with.
 *
 * @module
 */

import { serveStdio as serveEras } from "@modelcontextprotocol/server/stdio";
import {
  type JSONRPCMessage,
  parseJSONRPCMessage,
  type Transport,
} from "@modelcontextprotocol/server";
import { MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import { TOOLSETS } from "../src/mcp/toolsets.ts";
import { buildFullRegistry, mcpServerFor, type ServerOptions } from "../src/server.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { ToolRegistry } from "../src/mcp/registry.ts";
import { FAMILIES } from "../src/tools/families.ts";

/** A transport that records what the SDK's stdio entry sends. */
class Recorder implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly sent: JSONRPCMessage[] = [];
  #waiters: (() => void)[] = [];
  start(): Promise<void> {
    return Promise.resolve();
  }
  send(message: JSONRPCMessage): Promise<void> {
    this.sent.push(message);
    for (const wake of this.#waiters.splice(0)) wake();
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
  /** Resolves once `n` messages were sent, or rejects after a while. */
  async until(n: number, what: string): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (this.sent.length < n) {
      if (Date.now() > deadline) throw new Error(`the SDK did not answer ${what.slice(0, 300)}`);
      await new Promise<void>((wake) => {
        this.#waiters.push(wake);
        setTimeout(wake, 50);
      });
    }
  }
}

/** The server options of a start with these flags (as start.ts builds them). */
export function serverOptions(
  flags: Partial<ServerOptions> & { readonly toolsets: ServerOptions["toolsets"] },
): ServerOptions {
  return {
    address: {},
    version: "0.1.0",
    maxResultBytes: MAX_RESULT_BYTES,
    callerEnv: {},
    ...flags,
  };
}

/**
 * What the SDK (through its stdio entry, as the server runs it) answers to `messages`, one
 * answer per request, in order, as the JSON text that goes on the wire.
 */
export async function sdkAnswers(
  options: ServerOptions,
  messages: readonly unknown[],
): Promise<string[]> {
  const runner = options.runner ?? new TmuxRunner();
  const registry = buildFullRegistry(runner, options);
  const wire = new Recorder();
  const served = serveEras(({ era }) => mcpServerFor(registry, options, era), {
    transport: registry.subscriptions.observe(wire),
  });
  try {
    let requests = 0;
    for (const value of messages) {
      // What the stdio transport does first: a message that is not JSON-RPC never reaches the
      // SDK (the transport answers it).
      let message: JSONRPCMessage;
      try {
        message = parseJSONRPCMessage(value);
      } catch {
        continue;
      }
      wire.onmessage!(message);
      if ("id" in message) await wire.until(++requests, JSON.stringify(message));
    }
    return wire.sent.map((m) => JSON.stringify(m));
  } finally {
    await served.close();
    await runner.close();
  }
}

/** What src/mcp/front_desk.json holds. */
export interface FrontDeskFacts {
  readonly tools: Record<string, string>;
  /** Each tool's family (src/tools/families.ts), which loads it on first use. */
  readonly families: Record<string, string>;
  readonly prompts: string[][];
  /**
   * Each resource's tools (see ResourceSpec.tools), and what it adds to the capabilities:
   * `listChanged` (it lists what comes and goes), completions (a template's variables).
   */
  readonly resources: { tools: string[]; listChanged: boolean; completes: boolean }[];
  readonly capabilities: { readonly legacy: unknown; readonly modern: unknown };
}

/** The facts as the source says now. */
export async function liveFrontDeskFacts(): Promise<FrontDeskFacts> {
  const options = serverOptions({ toolsets: TOOLSETS });
  const runner = new TmuxRunner();
  const registry = buildFullRegistry(runner, options);
  const families = new Map<string, string>();
  for (const [family, load] of Object.entries(FAMILIES)) {
    const alone = new ToolRegistry(runner, options, TOOLSETS);
    (await load())(alone);
    for (const tool of alone.tools) families.set(tool.name, family);
  }
  await runner.close();
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const [legacy] = await sdkAnswers(options, [{
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "c", version: "1" },
    },
  }]);
  const [modern] = await sdkAnswers(options, [
    { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } },
  ]);
  return {
    tools: Object.fromEntries(registry.tools.map((t) => [t.name, t.toolset])),
    families: Object.fromEntries(registry.tools.map((t) => [t.name, families.get(t.name)!])),
    prompts: registry.prompts.map((p) => [...p.tools, ...p.reads ?? []]),
    resources: registry.resources.map((r) => ({
      tools: [...r.tools],
      listChanged: r.watchList !== undefined,
      completes: r.complete !== undefined,
    })),
    capabilities: {
      legacy: JSON.parse(legacy).result.capabilities,
      modern: JSON.parse(modern).result.capabilities,
    },
  };
}

/** front_desk.json's text for `facts`: one line, as tool_list.json. */
export function factsText(facts: FrontDeskFacts): string {
  return `${JSON.stringify(facts)}\n`;
}
