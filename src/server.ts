/**
 * Assembly: configuration in, an MCP server with every tool family out, and the stdio
 * lifecycle (the process ends when the client closes stdin, leaving no tmux child behind).
 *
 * @module
 */

import { McpServer, parseJSONRPCMessage } from "@modelcontextprotocol/server";
import { serveStdio as serveEras } from "@modelcontextprotocol/server/stdio";
import type { ServerConfig } from "./mcp/context.ts";
import { ToolRegistry } from "./mcp/registry.ts";
import type { Era } from "./mcp/resources.ts";
import { claimFrontDesk } from "./mcp/front_desk.ts";
import { FIXED_FOR_THE_PROCESS, INSTRUCTIONS, SERVER_NAME } from "./mcp/server_info.ts";
import { StdioTransport } from "./mcp/stdio.ts";
import type { Toolset } from "./mcp/toolsets.ts";
import { TmuxRunner } from "./tmux/run.ts";
import { registerBatchTools } from "./tools/batch.ts";
import { registerBufferTools } from "./tools/buffers.ts";
import { registerCaptureTools } from "./tools/capture.ts";
import { registerDiscoveryTools } from "./tools/discovery.ts";
import { registerDisplayTools } from "./tools/display.ts";
import { registerInputTools } from "./tools/input.ts";
import { registerJobTools } from "./tools/jobs.ts";
import { registerWaitTools } from "./tools/wait.ts";
import { registerLayoutTools } from "./tools/layout.ts";
import { registerLifecycleTools } from "./tools/lifecycle.ts";
import { registerMoveTools } from "./tools/moves.ts";
import { registerSearchTools } from "./tools/search.ts";
import { registerSettingsTools } from "./tools/settings.ts";
import { registerTeardownTools } from "./tools/teardown.ts";
import { registerResources } from "./tools/resources.ts";
import { registerPrompts } from "./tools/prompts.ts";

/** Everything needed to build a server. */
export interface ServerOptions extends ServerConfig {
  /** The toolsets on offer. */
  readonly toolsets: readonly Toolset[];
  /** The version reported to clients. */
  readonly version: string;
  /** The runner to use (tests pass their own to count children). */
  readonly runner?: TmuxRunner;
  /** Answer tools/list from the list built with the source (default true; see registry). */
  readonly prebuiltToolList?: boolean;
  /** Only these tools of the toolsets exist (`--tools`). */
  readonly tools?: readonly string[];
  /** These tools do not exist (`--deny-tools`). */
  readonly denyTools?: readonly string[];
}

/** A built server and the parts a caller may need to close or inspect. */
export interface BuiltServer {
  readonly mcp: McpServer;
  readonly registry: ToolRegistry;
  readonly runner: TmuxRunner;
}

/** Builds an MCP server with every tool family registered for the selected toolsets. */
export function buildServer(options: ServerOptions): BuiltServer {
  const runner = options.runner ?? new TmuxRunner();
  const registry = buildRegistry(runner, options);
  registerResources(registry);
  registerPrompts(registry);
  return { mcp: mcpServerFor(registry, options), registry, runner };
}

/**
 * Every tool family's tools, for the selected toolsets: built once per process, whatever the
 * connection's protocol (and open to more, such as resources, before a server is made of it).
 */
export function buildRegistry(runner: TmuxRunner, options: ServerOptions): ToolRegistry {
  const registry = new ToolRegistry(runner, options, options.toolsets, {
    tools: options.tools,
    denyTools: options.denyTools,
  });
  registerDiscoveryTools(registry);
  registerInputTools(registry);
  registerJobTools(registry);
  registerWaitTools(registry);
  registerCaptureTools(registry);
  registerSearchTools(registry);
  registerLifecycleTools(registry);
  registerLayoutTools(registry);
  registerMoveTools(registry);
  registerBufferTools(registry);
  registerSettingsTools(registry);
  registerDisplayTools(registry);
  registerTeardownTools(registry);
  // Last: the batch reaches the tools above through the registry.
  registerBatchTools(registry);
  registry.checkSelection();
  return registry;
}

/**
 * One SDK server over the registry: cheap (the tools are declared once, in the registry), so
 * the stdio entry may build one per connection era and throw one away; it holds no tmux child,
 * and what the registry keeps for it (its resource subscriptions) goes when it closes.
 *
 * To a 2026-07-28 client it says the tool list never changes (`listChanged: false`), so no
 * client listens for a change that cannot come; a 2025 client is told what it always was.
 */
export function mcpServerFor(
  registry: ToolRegistry,
  options: ServerOptions,
  era: Era = "legacy",
): McpServer {
  const mcp = new McpServer(
    { name: SERVER_NAME, version: options.version },
    {
      // Logging for the protocols that have it: 2026-07-28 deprecates it (a message outside a
      // request has no channel there), and stderr carries every line anyway.
      capabilities: {
        tools: era === "modern" ? { listChanged: false } : {},
        ...(era === "legacy" ? { logging: {} } : {}),
      },
      instructions: INSTRUCTIONS,
      cacheHints: {
        "tools/list": FIXED_FOR_THE_PROCESS,
        "prompts/list": FIXED_FOR_THE_PROCESS,
        "server/discover": FIXED_FOR_THE_PROCESS,
      },
    },
  );
  registry.attach(mcp, { prebuiltToolList: options.prebuiltToolList, era });
  return mcp;
}

/**
 * Serves over stdio until the client closes stdin (or the process is told to stop), then
 * answers what is nearly done, kills any tmux child still running and resolves.
 *
 * The SDK's stdio entry reads the connection's first message and serves the protocol it
 * speaks: a 2026-07-28 request (its version in `_meta`, no handshake) or `server/discover`
 * gets that protocol, `initialize` gets 2025-11-25 or older exactly as before. It builds an
 * SDK server per era it tries (a discover followed by `initialize` builds two); both share
 * the one registry and runner, which outlive them.
 */
export async function serveStdio(options: ServerOptions): Promise<void> {
  const runner = options.runner ?? new TmuxRunner();
  const registry = buildRegistry(runner, options);
  registerResources(registry);
  registerPrompts(registry);
  // The front desk main.ts opened has read (and answered) the connection's opening so far.
  const desk = claimFrontDesk();
  const transport = desk?.transport ?? new StdioTransport(parseJSONRPCMessage);
  const closed = Promise.withResolvers<"input" | "signal">();
  transport.oninputend = () => closed.resolve("input");
  transport.closed.then(() => closed.resolve("input"));
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(signal, () => closed.resolve("signal"));
    } catch {
      // Not every platform has every signal; end of input still ends the process.
    }
  }
  // Seen through, so that resources are watched only while a listen stream asks for them.
  const served = serveEras(({ era }) => mcpServerFor(registry, options, era), {
    transport: registry.subscriptions.observe(
      desk ? desk.handOver(parseJSONRPCMessage) : transport,
    ),
  });
  const why = await closed.promise;
  // Tasks run in the background for a client that is gone: stop them, which also answers any
  // tasks/result waiting on one.
  registry.tasks.cancelAll("the client went away");
  // Answer what is nearly done (a client that closed its input may still read), then kill what
  // is not: the whole exit stays well within a second, on a loaded machine too. Told to stop,
  // there is less reason to wait.
  await transport.settle(why === "signal" ? 150 : 450);
  await runner.close(250);
  await served.close().catch(() => {});
}
