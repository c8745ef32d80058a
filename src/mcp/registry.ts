/**
 * The tool registry: how a tool family declares a tool, and the one place that hands tools to
 * the MCP SDK. The SDK's types stay behind this module and its neighbours (tool_list.ts,
 * resources.ts, stdio.ts) and server.ts: moving from the SDK's v1 line
 * (`@modelcontextprotocol/sdk`) to its v2 line (`@modelcontextprotocol/server`) changed no tool.
 *
 * Every tool gets: an optional `socket_name`; strict input validation (unknown fields are an
 * error, not silently dropped); an output schema its structured content is checked against;
 * a text block that carries the same data; and failures as `isError` results with a reason
 * and a hint, never a stack trace.
 *
 * @module
 */

import {
  type CallToolResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import type { TmuxRunner } from "../tmux/run.ts";
import {
  type LogFn,
  type ProgressFn,
  type ServerConfig,
  stderrLog,
  TmuxContext,
} from "./context.ts";
import { auditCall } from "./audit.ts";
import { clip, failureText, visible } from "./errors.ts";
import { ALWAYS_ON, type Toolset, type ToolToolset } from "./toolsets.ts";
import { jsonBytes, MAX_RESULT_BYTES, replyBound, textBound } from "./bounds.ts";
import { renderReply, summaryLine } from "./render.ts";
import { MAX_SUMMARY_CHARS, toolMeta } from "./listing.ts";
import { type Era, type ResourceSpec, ResourceSubscriptions } from "./resources.ts";
import { checkedString } from "./schemas.ts";
import { attachPrompts, type PromptSpec } from "./prompts.ts";
import { TASK_EXECUTION, TASK_TOOLS, type TaskCalls, ToolTasks } from "./tasks.ts";
import { type Handler, prebuiltByName, rememberToolList, sdkHandler } from "./tool_list.ts";

/** Honest hints about what a tool does (MCP tool annotations). */
export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/** Annotations of a tool that only reads. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** What a tool returns on success: the structured data and a one-line summary for people. */
export interface ToolReply<T> {
  readonly data: T;
  readonly summary: string;
}

/**
 * The `socket_name` every tool accepts (tmux -L; default: the server this one was started
 * for). It is repeated in every tool a model is shown, so it spends no words there: the
 * server's instructions say what it is, once.
 */
export const socketNameField = checkedString(256).regex(
  // deno-lint-ignore no-control-regex
  /^[^/\x00-\x1f\x7f]+$/,
  "a socket name: no '/', no control characters",
).optional();

/** A tool as a family file declares it. */
export interface ToolSpec<I extends z.ZodRawShape, O extends z.ZodRawShape> {
  readonly name: string;
  readonly title: string;
  readonly toolset: ToolToolset;
  readonly description: string;
  readonly input: I;
  readonly output: O;
  readonly annotations: ToolAnnotations;
  readonly run: (
    args: z.infer<z.ZodObject<I>>,
    ctx: TmuxContext,
  ) => Promise<ToolReply<z.infer<z.ZodObject<O>>>>;
}

/** A declared tool with its types erased, as the registry stores it. */
export interface AnyTool {
  readonly name: string;
  readonly title: string;
  readonly toolset: ToolToolset;
  readonly description: string;
  readonly inputSchema: z.ZodObject;
  readonly outputSchema: z.ZodObject;
  readonly annotations: ToolAnnotations;
  readonly run: (args: Record<string, unknown>, ctx: TmuxContext) => Promise<ToolReply<unknown>>;
}

/**
 * A tool offered before its family is loaded: what listing and selecting it take (from the
 * list built with the source), and what loads its family, which then registers the tool for
 * real (see {@link ToolRegistry.declareLazy}).
 */
export interface LazyTool {
  readonly name: string;
  readonly title: string;
  readonly toolset: ToolToolset;
  readonly description: string;
  readonly annotations: ToolAnnotations;
  readonly load: () => Promise<void>;
}

/** Declares a tool, keeping its argument and result types for the family file's own code. */
export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(
  spec: ToolSpec<I, O>,
): AnyTool {
  return {
    name: spec.name,
    title: spec.title,
    toolset: spec.toolset,
    description: spec.description,
    inputSchema: z.strictObject({ ...spec.input, socket_name: socketNameField }),
    outputSchema: z.strictObject(spec.output),
    annotations: spec.annotations,
    run: spec.run as AnyTool["run"],
  };
}

/** Which tools of the selected toolsets exist: `--tools` and `--deny-tools`. */
export interface ToolSelection {
  /** Only these (absent: all). */
  readonly tools?: readonly string[];
  /** Not these. */
  readonly denyTools?: readonly string[];
  /** The flag or variable that gave each, for messages (default: the flags). */
  readonly from?: {
    readonly tools?: string;
    readonly denyTools?: string;
    readonly toolsets?: string;
  };
}

/** A selection that names a tool that does not exist (or cannot, in these toolsets). */
export class ToolSelectionError extends Error {
  /** The flag or environment variable to correct. */
  readonly source: string;

  /** The message says what is wrong and lists the valid names. */
  constructor(message: string, source: string) {
    super(message);
    this.name = "ToolSelectionError";
    this.source = source;
  }
}

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
  /** The calls running as MCP tasks, per connection (see tasks.ts). */
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
    const { tools: only, denyTools: denied } = this.#selection;
    if (only && !only.includes(name)) return false;
    if (denied?.includes(name)) return false;
    return toolset === ALWAYS_ON || this.#toolsets.has(toolset);
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
      const notLoaded = (): never => {
        throw new Error(`${lazy.name} is not loaded yet (ToolRegistry.loaded loads it)`);
      };
      this.#tools.set(lazy.name, {
        name: lazy.name,
        title: lazy.title,
        toolset: lazy.toolset,
        description: lazy.description,
        annotations: lazy.annotations,
        get inputSchema() {
          return notLoaded();
        },
        get outputSchema() {
          return notLoaded();
        },
        run: notLoaded,
      });
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
    const valid = () => [...this.#declared.keys()].sort().join(", ");
    const from = this.#selection.from ?? {};
    const toolsFrom = from.tools ?? "--tools";
    const lists = [
      [toolsFrom, this.#selection.tools],
      [from.denyTools ?? "--deny-tools", this.#selection.denyTools],
    ] as const;
    for (const [source, names] of lists) {
      const unknown = (names ?? []).filter((n) => !this.#declared.has(n));
      if (unknown.length > 0) {
        throw new ToolSelectionError(
          `${source}: no tool is named ${unknown.map((n) => JSON.stringify(n)).join(", ")}. ` +
            `Valid names: ${valid()}.`,
          source,
        );
      }
    }
    const outside = (this.#selection.tools ?? []).filter((n) => {
      const toolset = this.#declared.get(n);
      return toolset !== ALWAYS_ON && !this.#toolsets.has(toolset as Toolset);
    });
    if (outside.length > 0) {
      const needs = outside.map((n) => `${n} (${this.#declared.get(n)})`).join(", ");
      const toolsetsFrom = from.toolsets ?? "--toolsets";
      const toolsets = toolsetsFrom === "--read-only"
        ? "--toolsets in place of --read-only"
        : toolsetsFrom;
      throw new ToolSelectionError(
        `${toolsFrom} names tools of toolsets that are not selected: ${needs}. Add their ` +
          `toolsets to ${toolsets}, or leave them out of ${toolsFrom}.`,
        toolsFrom,
      );
    }
    if (this.#tools.size === 0) {
      const source = this.#selection.denyTools ? from.denyTools ?? "--deny-tools" : toolsFrom;
      throw new ToolSelectionError(
        `${source} leaves no tool on offer: a server without tools has nothing to do.`,
        source,
      );
    }
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

  /** A context for work done outside a tool call (reading a resource), on the server's socket. */
  contextFor(signal: AbortSignal): TmuxContext {
    return new TmuxContext(
      this.#runner,
      this.#config,
      undefined,
      signal,
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
      const refused = errorResult(
        `${declared.name} could not be loaded: ${error instanceof Error ? error.message : error}`,
      );
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
        `Invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}`,
      );
      auditCall(tool, rawArgs, refused, log, this.#config.audit === true);
      return refused;
    }
    const args = parsed.data as Record<string, unknown>;
    const socketName = args.socket_name as string | undefined;
    const ctx = new TmuxContext(
      this.#runner,
      this.#config,
      socketName,
      extras.signal,
      extras.progress,
      log,
      args.host as string | undefined,
    );
    this.#inFlight++;
    let result: CallToolResult;
    try {
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
      result = errorResult(failureText(error, ctx.address));
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

  /**
   * What the SDK is given as a lazily declared tool's schema: a Standard Schema whose checks
   * load the tool and use its real schema. The SDK never converts it (tools/list comes from the
   * list built with the source, and so does the output schema it projects results with).
   */
  #lazySchema(name: string, which: "input" | "output"): z.ZodObject {
    const validate = async (value: unknown) => {
      const tool = await this.loaded(name);
      if (!tool) throw new Error(`${name} is not on offer`);
      return await (which === "input" ? tool.inputSchema : tool.outputSchema)["~standard"]
        .validate(value);
    };
    return { "~standard": { version: 1, vendor: "tmux-mcp", validate } } as unknown as z.ZodObject;
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
    rejectMalformedCalls(server, (name) => this.#tools.has(name), options.era ?? "legacy", calls);
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
 * A `tools/call` whose params are not `{name, arguments?: object}` is the client's mistake:
 * answer it as invalid params (-32602) in one sentence. The SDK's request parsing would answer
 * with its schema error, a raw dump of zod's issues.
 *
 * A call of a tool that is not on offer (not selected, or never existed) is answered as a tool
 * error a model reads, in the words the SDK's v1 line used, as it always was: the v2 line
 * answers it with a protocol error instead, which a client may hide from the model.
 *
 * A well-formed call goes to `calls`, which runs it as an MCP task or plainly (tasks.ts).
 */
function rejectMalformedCalls(
  server: McpServer,
  offered: (name: string) => boolean,
  era: Era,
  calls: TaskCalls,
): void {
  const needs =
    "tools/call needs params {name: a tool name, arguments: an object of named fields}.";
  // To a 2025 client in the SDK's v1 words, which put the code before every message.
  const malformed = era === "legacy" ? `MCP error -32602: ${needs}` : needs;
  const original = sdkHandler(server, "tools/call");
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })
    ._requestHandlers;
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  handlers.set("tools/call", (request, extra) => {
    const params = isObject(request) ? request.params : undefined;
    if (
      !isObject(params) || typeof params.name !== "string" ||
      (params.arguments !== undefined && params.arguments !== null &&
        !isObject(params.arguments))
    ) {
      return Promise.reject(
        new ProtocolError(ProtocolErrorCode.InvalidParams, malformed),
      );
    }
    if (!offered(params.name)) {
      return Promise.resolve(errorResult(
        `MCP error -32602: Tool ${clip(params.name, 100)} not found. No tool ` +
          "of that name is on offer here (its toolset may not be selected, or --tools / " +
          "--deny-tools left it out); tools/list shows what is.",
      ));
    }
    if (params.arguments === null) {
      // No arguments, as the SDK's v1 line read it; the v2 line's parsing refuses null.
      const { arguments: _, ...rest } = params;
      return calls.call({ ...request as Record<string, unknown>, params: rest }, extra, original);
    }
    return calls.call(request as Record<string, unknown>, extra, original);
  });
}

/**
 * Progress for one call, when its request asked for it (`_meta.progressToken`, in either
 * protocol version), sent as a notification related to that request, and only while the
 * request is in progress: once it is cancelled (or its task is), the client has forgotten the
 * token, and a tool winding down (a batch closing its row) sends nothing more.
 */
function progressSender(ctx: ServerContext): ProgressFn {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return () => Promise.resolve();
  const signal = ctx.mcpReq.signal;
  return async (progress, total, message) => {
    if (signal.aborted) return;
    try {
      await ctx.mcpReq.notify({
        method: "notifications/progress",
        params: { progressToken: token, progress, total, message },
      });
    } catch {
      // A client that went away cannot be told; the call itself decides what to do.
    }
  };
}

/**
 * A call's log: every message to stderr, and through the SDK to a 2025 client at or above the
 * level it set by `logging/setLevel` (`info` until it sets one: see serve.ts). The SDK sends
 * them only when the server declares logging, which it does not under 2026-07-28.
 */
function logSender(ctx: ServerContext, config: ServerConfig): LogFn {
  const stderr = stderrLog(config.diagnostics);
  return (level, message, options) => {
    stderr(level, message, options);
    ctx.mcpReq.log(level, message, options?.logger ?? "tmux-mcp").catch(() => {
      // A client that went away cannot be told; stderr has it.
    });
  };
}

/**
 * A success: structured content for programs, and the same facts as text for a model — the
 * one-line summary (cut to {@link MAX_SUMMARY_CHARS}), then the data rendered to read (see
 * render.ts). The text never passes {@link textBound} bytes on the wire: a tool bounds its data,
 * and should the rendering still overflow (escapes make a text up to 3.5 times its data's
 * size), the text is cut at a line and says so, keeping the result's own facts; nothing is cut
 * silently.
 *
 * Should a tool still bound its data wrongly (a field left uncut), the whole reply past
 * {@link replyBound} is never sent: it becomes an error that says so, naming the tool.
 */
export function successResult(
  reply: ToolReply<unknown>,
  maxResultBytes: number = MAX_RESULT_BYTES,
  tool = "the tool",
): CallToolResult {
  const text = renderReply(shortSummary(reply.summary), reply.data, textBound(maxResultBytes));
  const result: CallToolResult = {
    content: [{ type: "text", text }],
    structuredContent: reply.data as Record<string, unknown>,
  };
  const bytes = jsonBytes(result);
  if (bytes > replyBound(maxResultBytes)) {
    return errorResult(
      `${tool} built a result of ${bytes} bytes, past the ${
        replyBound(maxResultBytes)
      }-byte bound on a reply, so it was not sent (a bug in tmux-mcp: some field was not cut; ` +
        "please report it). Ask for less: a narrower target (one session, window or pane), " +
        "fewer lines or entries.",
    );
  }
  return result;
}

function shortSummary(summary: string): string {
  return summaryLine(summary, MAX_SUMMARY_CHARS);
}

/** A failure: one text block, `isError`, no structured content, no raw control characters. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text: visible(text) }], isError: true };
}

/**
 * A field name or key for a message: quoted when it is not a plain identifier, cut when long
 * (it is the caller's, of any length).
 */
function fieldName(key: PropertyKey): string {
  const text = clip(String(key), 100);
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(text) ? text : JSON.stringify(text);
}

/** Zod issues as one readable sentence. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.length ? issue.path.map(fieldName).join(".") : "arguments";
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.slice(0, 5).map(fieldName).join(", ");
      return `unknown field${issue.keys.length > 1 ? "s" : ""} ${keys}` +
        (issue.keys.length > 5 ? ` and ${issue.keys.length - 5} more` : "");
    }
    if (issue.code === "invalid_type" && /received undefined$/.test(issue.message)) {
      return `${path} is required (${issue.expected})`;
    }
    if (issue.code === "invalid_type" && issue.path.length === 0) {
      return `arguments must be an object of named fields (${
        issue.message.replace(/^Invalid input: /, "")
      })`;
    }
    return `${path}: ${issue.message.replace(/^Invalid input: /, "")}`;
  }).join("; ") + (error.issues.length > 5 ? `; and ${error.issues.length - 5} more` : "");
}
