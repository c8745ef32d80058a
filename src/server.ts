/**
 * Assembly: configuration in, an MCP server with every tool family out, and the stdio
 * lifecycle (the process ends when the client closes stdin, leaving no tmux child behind).
 *
 * @module
 */

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ServerConfig } from "./mcp/context.ts";
import { ToolRegistry } from "./mcp/registry.ts";
import { StdioTransport } from "./mcp/stdio.ts";
import type { Toolset } from "./mcp/toolsets.ts";
import { TmuxRunner } from "./tmux/run.ts";
import { registerBatchTools } from "./tools/batch.ts";
import { registerBufferTools } from "./tools/buffers.ts";
import { registerCaptureTools } from "./tools/capture.ts";
import { registerDiscoveryTools } from "./tools/discovery.ts";
import { registerInputTools } from "./tools/input.ts";
import { registerWaitTools } from "./tools/wait.ts";
import { registerLayoutTools } from "./tools/layout.ts";
import { registerLifecycleTools } from "./tools/lifecycle.ts";
import { registerSearchTools } from "./tools/search.ts";
import { registerSettingsTools } from "./tools/settings.ts";
import { registerTeardownTools } from "./tools/teardown.ts";

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
}

/** A built server and the parts a caller may need to close or inspect. */
export interface BuiltServer {
  readonly mcp: McpServer;
  readonly registry: ToolRegistry;
  readonly runner: TmuxRunner;
}

/** Explains the server to a client at initialization. */
const INSTRUCTIONS =
  "tmux-mcp lets you see and drive tmux. Start with list_panes (or list_sessions) to learn ids; " +
  "target panes by id (%N), windows by id (@N), sessions by id ($N) or name. isCallerPane marks " +
  "the pane this server runs in and isAttended marks panes a person is watching: leave both " +
  "alone unless asked. Every tool takes socket_name (tmux -L) to reach another tmux server than " +
  "the one this server was started for; list_servers finds them.";

/** Builds an MCP server with every tool family registered for the selected toolsets. */
export function buildServer(options: ServerOptions): BuiltServer {
  const runner = options.runner ?? new TmuxRunner();
  const registry = new ToolRegistry(runner, options, options.toolsets);
  registerDiscoveryTools(registry);
  registerInputTools(registry);
  registerWaitTools(registry);
  registerCaptureTools(registry);
  registerSearchTools(registry);
  registerLifecycleTools(registry);
  registerLayoutTools(registry);
  registerBufferTools(registry);
  registerSettingsTools(registry);
  registerTeardownTools(registry);
  // Last: the batch reaches the tools above through the registry.
  registerBatchTools(registry);
  const mcp = new McpServer(
    { name: "tmux-mcp", version: options.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  registry.attach(mcp, { prebuiltToolList: options.prebuiltToolList });
  return { mcp, registry, runner };
}

/**
 * Serves over stdio until the client closes stdin (or the process is told to stop), then
 * answers what is nearly done, kills any tmux child still running and resolves.
 */
export async function serveStdio(options: ServerOptions): Promise<void> {
  const built = buildServer(options);
  const transport = new StdioTransport();
  const closed = Promise.withResolvers<"input" | "signal">();
  transport.oninputend = () => closed.resolve("input");
  transport.onclose = () => closed.resolve("input");
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(signal, () => closed.resolve("signal"));
    } catch {
      // Not every platform has every signal; end of input still ends the process.
    }
  }
  await built.mcp.connect(transport);
  const why = await closed.promise;
  // Answer what is nearly done (a client that closed its input may still read), then kill what
  // is not: the whole exit stays well within a second, on a loaded machine too. Told to stop,
  // there is less reason to wait.
  await built.registry.settle(why === "signal" ? 150 : 350);
  await built.runner.close(250);
  await built.mcp.close().catch(() => {});
}
