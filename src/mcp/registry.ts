/**
 * The tool registry: which declared tools are on offer (toolsets, `--tools`, `--deny-tools`:
 * tool_selection.ts; tools whose code loads on first use: lazy_tools.ts), how each call is
 * validated and run, and the one place that hands tools to the MCP SDK. A family declares its
 * tools with tool_spec.ts; what a call answers is tool_result.ts's; what a call brings through
 * the SDK is sdk_calls.ts's. The SDK's types stay behind this module and its neighbours
 * (tool_list.ts, sdk_calls.ts, tool_result.ts, resource_spec.ts, resources.ts, stdio.ts) and
 * server.ts: moving from the SDK's v1 line (`@modelcontextprotocol/sdk`) to its v2 line
 * (`@modelcontextprotocol/server`) changed no tool.
 *
 * Every tool gets: an optional `socket_name`; strict input validation (unknown fields are an
 * error, not silently dropped); an output schema its structured content is checked against;
 * a text block that carries the same data; and failures as `isError` results with a reason
 * and a hint, never a stack trace.
 *
 * @module
 */

import type { CallToolResult, McpServer, ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import { giveBackOnFirstCall } from "../tmux/left_behind.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import { learnSocket, type ProgressFn, type ServerConfig, TmuxContext } from "./context.ts";
import { type LogFn, stderrLog } from "./call_log.ts";
import { auditCall } from "./audit.ts";
import { failureText } from "./errors.ts";
import type { Toolset, ToolToolset } from "./toolsets.ts";
import { checkSelection, offers, type ToolSelection } from "./tool_selection.ts";
import { lazySchema, lazyStub } from "./lazy_tools.ts";
import { MAX_RESULT_BYTES } from "./bounds.ts";
import { toolMeta } from "./listing.ts";
import type { ResourceSpec } from "./resource_spec.ts";
import { type Era, ResourceSubscriptions } from "./resources.ts";
import { attachPrompts, type PromptSpec } from "./prompts.ts";
import { TASK_EXECUTION, TASK_TOOLS } from "./tasks.ts";
import { ToolTasks } from "./task_store.ts";
import { prebuiltByName, rememberToolList } from "./tool_list.ts";
import type { AnyTool, LazyTool } from "./tool_spec.ts";
import { describeIssues, errorResult, successResult } from "./tool_result.ts";
import { logSender, progressSender, rejectMalformedCalls } from "./sdk_calls.ts";

/** What a call brings besides its arguments. */
export interface CallExtras {
  readonly signal: AbortSignal;
  readonly progress: ProgressFn;
  /** Where the call's log messages go (default: stderr only). */
  readonly log?: LogFn;
}

/** How {@link ToolRegistry.attach} hands the registry to one SDK server. */
export interface AttachOptions {
  /** Answer tools/list from the list built with the source (default true). */
  readonly prebuiltToolList?: boolean;
  /** The protocol generation the SDK server speaks (default: 2025-11-25 and older). */
  readonly era?: Era;
}

/** The tools (and resources) a server offers, and how each call is run. */
export class ToolRegistry {
  readonly #tools = new Map<string, AnyTool>();
  readonly #resources: ResourceSpec[] = [];
  readonly #prompts: PromptSpec[] = [];
  /** The connections told when a resource changes (see {@link resourceUpdated}). */
  readonly subscriptions: ResourceSubscriptions = new ResourceSubscriptions();
  /** The calls running as MCP tasks, per connection (see task_store.ts). */
  readonly tasks: ToolTasks = new ToolTasks();
  readonly #runner: TmuxRunner;
  readonly #config: ServerConfig;
  readonly #toolsets: ReadonlySet<Toolset>;
  readonly #selection: ToolSelection;
  /** Every tool declared, on offer or not, with its toolset: to check a selection's names. */
  readonly #declared = new Map<string, ToolToolset>();
  /** Tools declared lazily and not loaded yet: what loads each one's family. */
  readonly #stubs = new Map<string, () => Promise<void>>();
  #inFlight = 0;
  /**
   * Aborted when the process is ending ({@link endCalls}): every call's and resource read's
   * signal follows it, as it follows the client's cancellation.
   */
  readonly #ending = new AbortController();

  /**
   * A registry that offers only tools of the given toolsets and, within them, only the tools
   * `selection` names (all when it names none) and none it denies.
   */
  constructor(
    runner: TmuxRunner,
    config: ServerConfig,
    toolsets: Iterable<Toolset>,
    selection: ToolSelection = {},
  ) {
    this.#runner = runner;
    this.#config = config;
    this.#toolsets = new Set(toolsets);
    this.#selection = selection;
    this.#hosts = runner.hosts;
  }

  /** The SSH destinations a call may name in `host` (`--ssh`), exactly as given. */
  readonly #hosts: readonly string[];

  /**
   * With `--ssh`, every tool takes an optional `host` (one of the destinations, checked by the
   * schema) and a result may carry it; without, neither exists and the schemas are unchanged.
   */
  #withHost(tool: AnyTool): AnyTool {
    if (this.#hosts.length === 0) return tool;
    // Like socket_name it spends no words in every tool: an SSH destination, else this machine.
    const host = z.enum(this.#hosts as [string, ...string[]]).optional();
    return {
      ...tool,
      inputSchema: tool.inputSchema.extend({ host }),
      outputSchema: tool.outputSchema.extend({ host: z.string().optional() }),
    };
  }

  /**
   * Adds tools; those outside the selected toolsets, outside `--tools` or in `--deny-tools`
   * are dropped here, so they never exist. A tool of {@link ALWAYS_ON} is kept in every
   * selection of toolsets.
   */
  add(...tools: AnyTool[]): void {
    for (const tool of tools) {
      // A lazily declared tool is registered for real when its family loads: it takes the
      // stub's place (and its place in the list).
      const replacing = this.#stubs.delete(tool.name);
      if (!replacing && this.#declared.has(tool.name)) {
        throw new Error(`tool ${tool.name} declared twice`);
      }
      this.#declared.set(tool.name, tool.toolset);
      if (this.#offers(tool.name, tool.toolset)) this.#tools.set(tool.name, this.#withHost(tool));
    }
  }

  /** Whether a tool of `toolset` named `name` is on offer: its toolset, --tools, --deny-tools. */
  #offers(name: string, toolset: ToolToolset): boolean {
    return offers(name, toolset, this.#selection, this.#toolsets);
  }

  /**
   * Declares tools whose code and schemas load on first use: each is listed and selected like
   * any other from the start; its first call (or validation) loads its family, which registers
   * the tool for real through {@link add}. Only where tools/list is answered from the list built
   * with the source, without SSH hosts (whose `host` argument changes every schema).
   */
  declareLazy(...tools: LazyTool[]): void {
    for (const lazy of tools) {
      if (this.#declared.has(lazy.name)) throw new Error(`tool ${lazy.name} declared twice`);
      if (this.#hosts.length > 0) throw new Error("tools with SSH hosts cannot be lazy");
      this.#declared.set(lazy.name, lazy.toolset);
      this.#stubs.set(lazy.name, lazy.load);
      if (!this.#offers(lazy.name, lazy.toolset)) continue;
      this.#tools.set(lazy.name, lazyStub(lazy));
    }
  }

  /** Whether `name` is declared lazily and its family not loaded yet. */
  isLazy(name: string): boolean {
    return this.#stubs.has(name);
  }

  /**
   * The tool `name` with its code and schemas, loading its family first when it was declared
   * lazily (concurrent first calls share one load: the family's loader). Undefined when no such
   * tool is on offer.
   */
  async loaded(name: string): Promise<AnyTool | undefined> {
    const load = this.#stubs.get(name);
    if (load) {
      await load();
      if (this.#stubs.has(name)) throw new Error(`its family does not declare ${name}`);
    }
    return this.#tools.get(name);
  }

  /**
   * Checks the names of `--tools` and `--deny-tools` once every tool is declared: a name no
   * tool has, or a tool named in `--tools` whose toolset is not selected, is a mistake the
   * person who started the server must hear of, not a tool silently missing.
   */
  checkSelection(): void {
    checkSelection(this.#declared, this.#selection, this.#toolsets, this.#tools.size);
  }

  /** The tools on offer. */
  get tools(): AnyTool[] {
    return [...this.#tools.values()];
  }

  /** Looks a tool up by name (undefined when not on offer). */
  get(name: string): AnyTool | undefined {
    return this.#tools.get(name);
  }

  /** Adds resources, before any SDK server is attached (the list is fixed from then on). */
  addResource(...resources: ResourceSpec[]): void {
    for (const resource of resources) {
      if (this.#resources.some((r) => r.name === resource.name)) {
        throw new Error(`resource ${resource.name} declared twice`);
      }
      this.#resources.push(resource);
    }
  }

  /** The resources on offer: those whose every tool is on offer (see ResourceSpec.tools). */
  get resources(): readonly ResourceSpec[] {
    return this.#resources.filter((r) => r.tools.every((name) => this.#tools.has(name)));
  }

  /**
   * Adds prompts, once every tool is declared and before any SDK server is attached. A prompt
   * names only declared tools (a misspelt name is a mistake found at start).
   */
  addPrompt(...prompts: PromptSpec[]): void {
    for (const prompt of prompts) {
      if (this.#prompts.some((p) => p.name === prompt.name)) {
        throw new Error(`prompt ${prompt.name} declared twice`);
      }
      const undeclared = prompt.tools.filter((name) => !this.#declared.has(name));
      if (undeclared.length > 0) {
        throw new Error(`prompt ${prompt.name} names undeclared tools: ${undeclared.join(", ")}`);
      }
      this.#prompts.push(prompt);
    }
  }

  /**
   * The prompts on offer: those whose every tool is on offer, so that no prompt's text names
   * a tool outside the toolsets, outside `--tools` or in `--deny-tools`.
   */
  get prompts(): readonly PromptSpec[] {
    return this.#prompts.filter((p) =>
      [...p.tools, ...p.reads ?? []].every((name) => this.#tools.has(name))
    );
  }

  /**
   * Says that the resource at `uri` changed, to every client that asked to hear it, under
   * either protocol version.
   */
  resourceUpdated(uri: string): void {
    this.subscriptions.updated(uri);
  }

  /**
   * Stops every call and resource read still running, as the client's cancellation does: the
   * process is ending, and what is left of them would only slow its end (a regex search keeps
   * the event loop busy between its turns, stretching every step of the exit). Each stops at
   * its next turn and undoes what it owed; calls that start after it are stopped at once.
   */
  endCalls(): void {
    this.#ending.abort();
  }

  /** `signal`, or the process's end ({@link endCalls}). */
  #untilEnd(signal: AbortSignal): AbortSignal {
    return AbortSignal.any([signal, this.#ending.signal]);
  }

  /** A context for work done outside a tool call (reading a resource), on the server's socket. */
  contextFor(signal: AbortSignal): TmuxContext {
    return new TmuxContext(
      this.#runner,
      this.#config,
      undefined,
      this.#untilEnd(signal),
      () => Promise.resolve(),
      stderrLog(this.#config.diagnostics),
    );
  }

  /**
   * Validates and runs one call, returning an MCP tool result. Never throws: every failure is
   * an `isError` result.
   */
  async call(declared: AnyTool, rawArgs: unknown, extras: CallExtras): Promise<CallToolResult> {
    const log = extras.log ?? stderrLog(this.#config.diagnostics);
    // A lazily declared tool is called through its stub (the SDK and the batch hold it): the
    // tool itself is the registry's once its family is loaded.
    let tool: AnyTool;
    try {
      tool = await this.loaded(declared.name) ?? declared;
    } catch (error) {
      const refused = errorResult(loadFailure(declared.name, error));
      auditCall(declared, rawArgs, refused, log, this.#config.audit === true);
      return refused;
    }
    const parsed = tool.inputSchema.safeParse(rawArgs ?? {});
    if (
      !parsed.success && this.#hosts.length === 0 && typeof rawArgs === "object" &&
      rawArgs !== null && "host" in rawArgs
    ) {
      const refused = errorResult(
        `Invalid arguments for ${tool.name}: host: this server reaches no SSH hosts (it was ` +
          "started without --ssh); omit host to act on this machine.",
      );
      auditCall(tool, rawArgs, refused, log, this.#config.audit === true);
      return refused;
    }
    if (!parsed.success) {
      const refused = errorResult(
        `Invalid arguments for ${tool.name}: ${describeIssues(parsed.error, tool.inputSchema)}`,
      );
      auditCall(tool, rawArgs, refused, log, this.#config.audit === true);
      return refused;
    }
    const args = parsed.data as Record<string, unknown>;
    const socketName = args.socket_name as string | undefined;
    const signal = this.#untilEnd(extras.signal);
    if (args.host === undefined) {
      await learnSocket(this.#runner, this.#config, socketName, signal);
    }
    const ctx = new TmuxContext(
      this.#runner,
      this.#config,
      socketName,
      signal,
      extras.progress,
      log,
      args.host as string | undefined,
    );
    // A person may have changed tmux's command-alias since the last call (tmux says nothing).
    ctx.runner.aliasesMayHaveChanged(ctx.address);
    this.#inFlight++;
    let result: CallToolResult;
    try {
      // What a tmux-mcp process killed outright left on this server (a person's scroll-on-clear
      // turned off, a buffer their prefix ] would paste) goes before this process's first call
      // there acts or reads; a buffer still too young to tell from a live one's, once it is not.
      await giveBackOnFirstCall(ctx.runner, ctx.address, ctx.signal);
      const reply = await tool.run(args, ctx);
      // A result from another machine says which: %3 there is not %3 here.
      result = successResult(
        ctx.host === undefined
          ? reply
          : { ...reply, data: { host: ctx.host, ...reply.data as Record<string, unknown> } },
        this.#config.maxResultBytes,
        tool.name,
      );
    } catch (error) {
      result = errorResult(failureText(error, ctx.address, {
        answered: ctx.answered,
        answeredPid: ctx.answeredPid,
        changes: !tool.annotations.readOnlyHint,
      }));
    } finally {
      this.#inFlight--;
    }
    auditCall(tool, args, result, log, this.#config.audit === true);
    return result;
  }

  /**
   * Resolves when no call is running, or after `waitMs`: a client that closes its end right
   * after its last request still gets the answers that are nearly done.
   */
  async settle(waitMs: number): Promise<void> {
    const until = Date.now() + waitMs;
    while (this.#inFlight > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** What the SDK is given as a lazily declared tool's schema ({@link lazySchema}). */
  #lazySchema(name: string, which: "input" | "output"): z.ZodObject {
    return lazySchema(name, which, (n) => this.loaded(n));
  }

  /** Hands every tool (and resource, and prompt) on offer to an SDK server. */
  attach(server: McpServer, options: AttachOptions = {}): void {
    // Arguments are validated in call(), with messages written for a model ("paneId is
    // required"); the SDK's own pass would answer first, in zod's words ("expected string,
    // received undefined"), and would turn arguments that are not an object into a protocol
    // error instead of a tool error.
    (server as unknown as { validateToolInput: (tool: unknown, args: unknown) => unknown })
      .validateToolInput = (_tool: unknown, args: unknown) => Promise.resolve(args);
    // The prebuilt list declares the default result bound in its _meta.
    // With --ssh the schemas gain `host`: the SDK converts them live instead.
    const prebuilt = options.prebuiltToolList !== false && this.#hosts.length === 0 &&
        this.#config.maxResultBytes === MAX_RESULT_BYTES
      ? prebuiltByName()
      : undefined;
    for (const tool of this.#tools.values()) {
      const registered = server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: this.#stubs.has(tool.name)
            ? this.#lazySchema(tool.name, "input")
            : tool.inputSchema,
          outputSchema: this.#stubs.has(tool.name)
            ? this.#lazySchema(tool.name, "output")
            : tool.outputSchema,
          annotations: { title: tool.title, ...tool.annotations },
          _meta: toolMeta(tool.name, this.#config.maxResultBytes),
        },
        // call() validates (the SDK's own pass is off, see above), so a batch row and a direct
        // call take exactly the same path.
        (args: unknown, ctx: ServerContext) =>
          this.call(tool, args, {
            signal: ctx.mcpReq.signal,
            progress: progressSender(ctx),
            log: logSender(ctx, this.#config),
          }),
      );
      // The SDK converts a tool's output schema again on its first call, to project results
      // for the protocol version in use; the listed schema says the same (an object).
      const listed = prebuilt?.get(tool.name)?.outputSchema;
      if (listed) registered.outputSchemaJson = listed;
      // The tools that wait may run as MCP tasks (the SDK's registerTool drops `execution`).
      if (TASK_TOOLS.has(tool.name)) registered.execution = TASK_EXECUTION;
    }
    const calls = this.tasks.attach(server, options.era ?? "legacy");
    rejectMalformedCalls(server, this.#tools, options.era ?? "legacy", calls);
    rememberToolList(server, this.tools, prebuilt);
    this.subscriptions.attach(
      server,
      options.era ?? "legacy",
      this.resources,
      (signal) => this.contextFor(signal),
    );
    attachPrompts(server, this.prompts, (signal) => this.contextFor(signal));
  }
}

/**
 * Why tool `name`'s family did not load. From source, Deno lets the server read only the code
 * it started with: a file of it changed since (an update or a `git pull` of the checkout) is
 * refused as a read the server has no permission for, and Deno's own words would send the
 * reader to `--allow-read`, a permission the server must not have. Said as what it is, with the
 * fix: restart the server.
 */
function loadFailure(name: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Deno.errors.NotCapable || /^Requires read access/.test(message)) {
    return `${name} could not be loaded: this server's code changed on disk since it started ` +
      "(an update of its checkout?), and it may read only the code it started with. Restart " +
      "the MCP server (reconnect it in the client) to load the new code; nothing was done.";
  }
  return `${name} could not be loaded: ${message}`;
}
