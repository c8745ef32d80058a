/**
 * Serving over stdio: an MCP server per connection era over one registry, until the client
 * closes stdin (the process then leaves no tmux child behind).
 *
 * Where tools/list comes from the list built with the source (no SSH hosts, the default
 * result bound), every tool is declared from that list and its family (src/tools/families.ts)
 * loads on its first call: an idle server holds none of the tools' code and schemas. Anywhere
 * else every family loads at start (server.ts, which tests and scripts build with).
 *
 * @module
 */

import { McpServer, parseJSONRPCMessage } from "@modelcontextprotocol/server";
import { serveStdio as serveEras } from "@modelcontextprotocol/server/stdio";
import { MAX_RESULT_BYTES } from "./mcp/bounds.ts";
import type { ServerConfig } from "./mcp/context.ts";
import { claimFrontDesk } from "./mcp/front_desk.ts";
import facts from "./mcp/front_desk.json" with { type: "json" };
import { ToolRegistry } from "./mcp/registry.ts";
import type { ToolSelection } from "./mcp/tool_selection.ts";
import type { LazyTool } from "./mcp/tool_spec.ts";
import type { Era } from "./mcp/resources.ts";
import { MAX_LISTEN_STREAMS } from "./mcp/listen_streams.ts";
import { readableParamErrors } from "./mcp/param_errors.ts";
import { FIXED_FOR_THE_PROCESS, INSTRUCTIONS, SERVER_NAME } from "./mcp/server_info.ts";
import { StdioTransport } from "./mcp/stdio.ts";
import { prebuiltByName } from "./mcp/tool_list.ts";
import type { Toolset, ToolToolset } from "./mcp/toolsets.ts";
import { givesBackAtClose } from "./tmux/leftovers.ts";
import { TmuxRunner } from "./tmux/run.ts";
import { FAMILIES, type Family } from "./tools/families.ts";
import { LAZY_JOB_RESOURCE } from "./tools/job_resource.ts";
import { registerPrompts } from "./tools/prompts.ts";
import { registerResources } from "./tools/resources.ts";

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
  /** The flag or variable that gave the toolsets, `tools` and `denyTools` (for messages). */
  readonly selectionFrom?: ToolSelection["from"];
  /** Called once the tools are chosen (a bad `--tools` fails before), before serving. */
  readonly announce?: () => void;
}

/**
 * One SDK server over the registry: cheap (the tools are declared once, in the registry), so
 * the stdio entry may build one per connection era and throw one away; it holds no tmux child,
 * and what the registry keeps for it (its resource subscriptions) goes when it closes.
 *
 * It says the tool list never changes (`listChanged: false`), under every protocol: the flags
 * fix it at start, so no client should listen for a change that cannot come.
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
        tools: { listChanged: false },
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
  withoutPrototypes(mcp);
  if (era === "legacy") infoUntilAsked(mcp);
  registry.attach(mcp, { prebuiltToolList: options.prebuiltToolList, era });
  return mcp;
}

/**
 * A 2025 client that never sent `logging/setLevel` gets log messages from `info` up, not
 * `debug`: debug lines carry a call's whole arguments (text typed, commands run, values of
 * environment variables), and most clients never set a level but may keep what they are sent
 * in a log file. The SDK filters only by a level the client set, and sends everything
 * otherwise; MCP leaves the choice to the server until the client sets one. The SDK looks up
 * the level of a connection without a session id (stdio) under `undefined`, and
 * `logging/setLevel` replaces it there. (A 2026-07-28 server declares no logging; were it to,
 * the SDK takes the level from each request's `_meta` and sends nothing to one that gives none.)
 */
function infoUntilAsked(mcp: McpServer): void {
  const levels = (mcp.server as unknown as { _loggingLevels?: unknown })._loggingLevels;
  if (!(levels instanceof Map)) {
    throw new Error("the MCP SDK keeps no _loggingLevels: the default log level cannot be set");
  }
  levels.set(undefined, "info");
}

/**
 * The SDK keeps what is registered in plain objects and looks a client's names up in them
 * (`_registeredPrompts[name]`): `constructor` or `toString` found Object's own function there,
 * and `prompts/get` answered "Prompt constructor disabled". Emptied of their prototype before
 * anything is registered, they hold only what was registered.
 */
function withoutPrototypes(mcp: McpServer): void {
  const fields = mcp as unknown as Record<string, unknown>;
  for (
    const key of [
      "_registeredTools",
      "_registeredPrompts",
      "_registeredResources",
      "_registeredResourceTemplates",
    ]
  ) {
    const map = fields[key];
    if (typeof map === "object" && map !== null) Object.setPrototypeOf(map, null);
  }
}

/**
 * The registry a stdio server serves from, every tool declared lazily (see the module's
 * comment); null where tools/list cannot come from the list built with the source.
 */
export function servingRegistry(runner: TmuxRunner, options: ServerOptions): ToolRegistry | null {
  if (
    runner.hosts.length > 0 || options.maxResultBytes !== MAX_RESULT_BYTES ||
    options.prebuiltToolList === false
  ) {
    return null;
  }
  const registry = emptyRegistry(runner, options);
  const loading = new Map<Family, Promise<void>>();
  const load = (family: Family): Promise<void> => {
    let loaded = loading.get(family);
    if (!loaded) {
      loaded = FAMILIES[family]().then((register) => register(registry));
      // A family that failed to load is tried again by the next call.
      loaded.catch(() => loading.delete(family));
      loading.set(family, loaded);
    }
    return loaded;
  };
  const toolsets = facts.tools as Record<string, ToolToolset>;
  const families = facts.families as Record<string, Family>;
  const declared: LazyTool[] = [...prebuiltByName().values()].map((listed) => ({
    name: listed.name,
    title: listed.title ?? listed.name,
    toolset: toolsets[listed.name],
    description: listed.description ?? "",
    annotations: listed.annotations ?? {},
    load: () => load(families[listed.name]),
  }));
  registry.declareLazy(...declared);
  registry.addResource(LAZY_JOB_RESOURCE);
  registry.checkSelection();
  return withResourcesAndPrompts(registry);
}

/** A registry of no tools yet, offering `options`' toolsets and `--tools`/`--deny-tools`. */
export function emptyRegistry(runner: TmuxRunner, options: ServerOptions): ToolRegistry {
  runner.home ??= options.address;
  return new ToolRegistry(runner, options, options.toolsets, {
    tools: options.tools,
    denyTools: options.denyTools,
    from: options.selectionFrom,
  });
}

/** Adds what a registry offers besides its tools: the resources and the prompts. */
export function withResourcesAndPrompts(registry: ToolRegistry): ToolRegistry {
  registerResources(registry);
  registerPrompts(registry);
  return registry;
}

/** Every family loaded at start (server.ts), with the resources and prompts. */
async function fullRegistry(runner: TmuxRunner, options: ServerOptions): Promise<ToolRegistry> {
  const { buildFullRegistry } = await import("./server.ts");
  return buildFullRegistry(runner, options);
}

/**
 * Serves over stdio until the client closes stdin (or the process is told to stop: one of
 * {@link STOP_SIGNALS}), then answers what is nearly done, gives back what calls changed in
 * tmux for a moment, kills any tmux child still running and resolves.
 *
 * The SDK's stdio entry reads the connection's first message and serves the protocol it
 * speaks: a 2026-07-28 request (its version in `_meta`, no handshake) or `server/discover`
 * gets that protocol, `initialize` gets 2025-11-25 or older exactly as before. It builds an
 * SDK server per era it tries (a discover followed by `initialize` builds two); both share
 * the one registry and runner, which outlive them.
 */
export async function serveStdio(options: ServerOptions): Promise<void> {
  const runner = options.runner ?? new TmuxRunner();
  const registry = servingRegistry(runner, options) ?? await fullRegistry(runner, options);
  options.announce?.();
  // The front desk main.ts opened has read (and answered) the connection's opening so far.
  const desk = claimFrontDesk();
  const transport = desk?.transport ?? new StdioTransport(parseJSONRPCMessage);
  const closed = Promise.withResolvers<"input" | "signal">();
  transport.oninputend = () => closed.resolve("input");
  transport.closed.then(() => closed.resolve("input"));
  for (const signal of STOP_SIGNALS) {
    try {
      Deno.addSignalListener(signal, () => closed.resolve("signal"));
    } catch {
      // Not every platform has every signal; end of input still ends the process.
    }
  }
  // Seen through, so that resources are watched only while a listen stream asks for them.
  const served = serveEras(({ era }) => mcpServerFor(registry, options, era), {
    transport: readableParamErrors(
      registry.subscriptions.observe(desk ? desk.handOver(parseJSONRPCMessage) : transport),
    ),
    maxSubscriptions: MAX_LISTEN_STREAMS,
  });
  const why = await closed.promise;
  // One deadline for the whole exit, its steps' shares cut from it: each step's own bound,
  // added up, went past the second when tmux did not answer and the client did not read.
  const endBy = performance.now() + EXIT_WITHIN_MS;
  // What takes a while to give back (an undo on an SSH host) begins while the answers settle.
  runner.beginClose();
  transport.endBy(endBy);
  // Tasks run in the background for a client that is gone: stop them, which also answers any
  // tasks/result waiting on one.
  registry.tasks.cancelAll("the client went away");
  // Answer what is nearly done (a client that closed its input may still read), then kill what
  // is not. Told to stop, there is less reason to wait; nor with a person's setting to give back
  // (a creation's lent window-size): on a loaded machine its two tmux processes took longer than
  // the share left after the longer wait, and the person kept `latest`. With nothing to give
  // back, the answers get that share too: on a loaded machine a call sent with the end of input
  // (its tool loaded, tmux asked) took longer than 300 ms, and went unanswered.
  await transport.settle(why === "signal" || givesBackAtClose(runner) ? 150 : 450);
  registry.endCalls();
  // The give-backs (a person's options put back) get what is left but the children's and the
  // last answers' shares: they matter most.
  await runner.close({
    hooksBy: endBy - CHILDREN_MS - LAST_WRITE_MS,
    by: endBy - LAST_WRITE_MS,
  });
  // The SDK's close writes each listen stream's last answer first; the transport waits for
  // bytes only while the client reads them, and not past the deadline; this bound is the
  // backstop: the process ends whatever the client does.
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    served.close().catch(() => {}),
    new Promise((resolve) => timer = setTimeout(resolve, endBy - performance.now())),
  ]);
  clearTimeout(timer);
}

/**
 * The signals that end the process the way a closed stdin does, giving back what calls under
 * way changed in tmux (leftovers.ts) and ending every tmux child: SIGINT and SIGTERM, a client
 * or a person stopping it; SIGHUP, the terminal the MCP client runs in closed (its process
 * group is hung up); SIGQUIT, a person's `C-\`. Left to the default action, any of them ends
 * the process on the spot: a person's window-size left lent out, a buffer of ours their next
 * `prefix ]` pastes, a pane refused as busy, `wait-for` children running on.
 */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;

/**
 * From end of input or a stop signal to the end of {@link serveStdio}: the process then exits,
 * within the second DESIGN promises, with room for a loaded machine's late timers.
 */
const EXIT_WITHIN_MS = 850;

/** The share of {@link EXIT_WITHIN_MS} kept for killed tmux children to be gone. */
const CHILDREN_MS = 150;

/** The share of {@link EXIT_WITHIN_MS} kept last for answers a reading client still takes. */
const LAST_WRITE_MS = 100;
