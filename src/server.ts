/**
 * Assembly with every tool family loaded at once: for tests and scripts, and for a stdio server
 * whose tools/list cannot come from the list built with the source (with SSH hosts, or another
 * result bound). A stdio server otherwise loads each family on first use (serve.ts).
 *
 * @module
 */

import type { McpServer } from "@modelcontextprotocol/server";
import type { ToolRegistry } from "./mcp/registry.ts";
import { TmuxRunner } from "./tmux/run.ts";
import {
  emptyRegistry,
  mcpServerFor,
  type ServerOptions,
  withResourcesAndPrompts,
} from "./serve.ts";
import { registerBatchTools } from "./tools/batch.ts";
import { registerBufferTools } from "./tools/buffers.ts";
import { registerCaptureTools } from "./tools/capture.ts";
import { registerDiscoveryTools } from "./tools/discovery.ts";
import { registerDisplayTools } from "./tools/display.ts";
import { registerInputTools } from "./tools/input.ts";
import { JOB_SERVING, registerJobTools } from "./tools/jobs.ts";
import { jobResource } from "./tools/job_resource.ts";
import { registerWaitTools } from "./tools/wait.ts";
import { registerLayoutTools } from "./tools/layout.ts";
import { registerLifecycleTools } from "./tools/lifecycle.ts";
import { registerMoveTools } from "./tools/moves.ts";
import { registerSearchTools } from "./tools/search.ts";
import { registerSettingsTools } from "./tools/settings.ts";
import { registerTeardownTools } from "./tools/teardown.ts";

/** A built server and the parts a caller may need to close or inspect. */
export interface BuiltServer {
  readonly mcp: McpServer;
  readonly registry: ToolRegistry;
  readonly runner: TmuxRunner;
}

/** Builds an MCP server with every tool family registered for the selected toolsets. */
export function buildServer(options: ServerOptions): BuiltServer {
  const runner = options.runner ?? new TmuxRunner();
  const registry = buildFullRegistry(runner, options);
  return { mcp: mcpServerFor(registry, options), registry, runner };
}

/** {@link buildRegistry} with the resources and prompts: what a server offers. */
export function buildFullRegistry(runner: TmuxRunner, options: ServerOptions): ToolRegistry {
  return withResourcesAndPrompts(buildRegistry(runner, options));
}

/**
 * Every tool family's tools, for the selected toolsets: built once per process, whatever the
 * connection's protocol (and open to more, such as resources, before a server is made of it).
 */
export function buildRegistry(runner: TmuxRunner, options: ServerOptions): ToolRegistry {
  const registry = emptyRegistry(runner, options);
  registerDiscoveryTools(registry);
  registerInputTools(registry);
  registerJobTools(registry);
  registry.addResource(jobResource(JOB_SERVING));
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

export { mcpServerFor, type ServerOptions, serveStdio } from "./serve.ts";
