/**
 * The front desk: answers a connection's opening requests while the MCP SDK and the tools still
 * load (about 100 ms of a cold start, the rest being the runtime's own), then hands the
 * connection over to the SDK as if the SDK had answered them itself.
 *
 * It answers only what it can answer exactly as the SDK would, byte for byte: `initialize`
 * (2025-11-25 and older, with the SDK's version negotiation), `notifications/initialized`,
 * `ping` (2025), `server/discover` and `tools/list` under both protocols, from the prebuilt list
 * (tool_list.json) and the facts `deno task tool-list` writes beside it (front_desk.json:
 * each tool's toolset, each prompt's tools, the SDK's capabilities). And only requests whose
 * shape it is sure the SDK accepts: anything else (an error to answer, another method, an
 * unusual field) is held for the SDK, and from then on everything is, so that the SDK answers
 * it in arrival order. tests/front_desk_test.ts compares every answer with the SDK's own.
 *
 * At the hand-over the SDK is given every message the desk took, in order (requests under ids
 * of its own, their answers swallowed and checked against the desk's), so that its session
 * (era, negotiated version, client capabilities) is what it would have been, then the held
 * messages, then the rest of the connection.
 *
 * Nothing here imports the SDK (types only) or zod: this module loads in about a millisecond.
 *
 * @module
 */

import type { JSONRPCMessage, Transport, TransportSendOptions } from "@modelcontextprotocol/server";
import { warn } from "../diagnostics.ts";
import facts from "./front_desk.json" with { type: "json" };
import type { MessageCheck } from "./invalid_message.ts";
import { FIXED_FOR_THE_PROCESS, INSTRUCTIONS, SERVER_NAME } from "./server_info.ts";
import { StdioTransport } from "./stdio.ts";
import prebuilt from "./tool_list.json" with { type: "json" };

/** What the desk needs to know of the server's start (the command line). */
export interface DeskOptions {
  /** The version in `serverInfo`. */
  readonly version: string;
  /** The toolsets selected. */
  readonly toolsets: readonly string[];
  /** `--tools`. */
  readonly tools?: readonly string[];
  /** `--deny-tools`. */
  readonly denyTools?: readonly string[];
  /**
   * Whether the prebuilt list is the server's list (default true). Not so when the schemas
   * differ from it (`--ssh` adds `host`, other result bounds): tools/list is the SDK's then.
   */
  readonly prebuiltList?: boolean;
}

/** What the desk did with one message. */
export type Taken =
  /** Left for the SDK (so is everything after it). */
  | undefined
  /** Taken; `answer` is what to send (none for a notification). */
  | { readonly answer?: Record<string, unknown> };

const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"];
const MODERN_VERSION = "2026-07-28";
const TASKS_SINCE = "2025-11-25";
const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  relatedTask: "io.modelcontextprotocol/related-task",
} as const;
const LOG_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

type Json = Record<string, unknown>;

/**
 * The answering part, without any I/O: what the SDK would answer to each message of the
 * connection's opening, or undefined where the desk is not sure (then, and from then on, the
 * SDK answers).
 */
export class DeskAnswers {
  #phase: "opening" | "probe" | "legacy" | "modern" | "off";
  readonly #serverInfo: Json;
  readonly #listed: Json[] | undefined;
  readonly #prompts: boolean;
  /** The resources on offer, as front_desk.json describes them. */
  readonly #resources: typeof facts.resources;

  /** Answers for a server started with `options`. */
  constructor(options: DeskOptions) {
    this.#serverInfo = { name: SERVER_NAME, version: options.version };
    const selected = selection(options);
    this.#phase = selected ? "opening" : "off";
    this.#listed = selected && options.prebuiltList !== false
      ? prebuilt.tools.filter((t) => selected.has(t.name))
      : undefined;
    this.#prompts = selected !== undefined &&
      facts.prompts.some((tools) => tools.every((name) => selected.has(name)));
    this.#resources = selected === undefined
      ? []
      : facts.resources.filter((r) => r.tools.every((name) => selected.has(name)));
  }

  /** Whether the desk still takes messages. */
  get open(): boolean {
    return this.#phase !== "off";
  }

  /** What the desk does with the next message of the connection (a parsed JSON value). */
  take(value: unknown): Taken {
    if (this.#phase === "off") return undefined;
    const taken = this.#take(value);
    if (taken === undefined) this.#phase = "off";
    return taken;
  }

  #take(value: unknown): Taken {
    const message = plainMessage(value);
    if (!message) return undefined;
    const { id, method, params } = message;
    const meta = params?._meta as Json | undefined;
    const reply = (result: Json) => ({ answer: { result, jsonrpc: "2.0", id } });
    if (meta !== undefined && META.protocolVersion in meta) {
      // A 2026-07-28 request: its envelope must be one the SDK accepts.
      if (id === undefined || !modernEnvelope(meta) || Object.keys(params!).length !== 1) {
        return undefined;
      }
      if (this.#phase === "legacy") return undefined;
      const stamped = (result: Json): Json => ({
        ...result,
        resultType: "complete",
        ...FIXED_FOR_THE_PROCESS,
        _meta: { [META.serverInfo]: this.#serverInfo },
      });
      if (method === "server/discover") {
        if (this.#phase === "opening") this.#phase = "probe";
        return reply(stamped({
          supportedVersions: [MODERN_VERSION],
          capabilities: this.#capabilities(facts.capabilities.modern),
          instructions: INSTRUCTIONS,
        }));
      }
      if (method === "tools/list" && this.#listed) {
        this.#phase = "modern";
        return reply(stamped({ tools: this.#listed.map(modernTool) }));
      }
      return undefined;
    }
    // 2025-11-25 and older.
    if (meta !== undefined && !legacyMeta(meta)) return undefined;
    if (method === "initialize" && id !== undefined) {
      if (this.#phase !== "opening" && this.#phase !== "probe") return undefined;
      const request = initializeParams(params);
      if (!request) return undefined;
      this.#phase = "legacy";
      const version = LEGACY_VERSIONS.includes(request.protocolVersion)
        ? request.protocolVersion
        : LEGACY_VERSIONS[0];
      // Tasks came with 2025-11-25: an older client is told of none (task_store.ts).
      const all = this.#capabilities(facts.capabilities.legacy);
      const { tasks: _, ...withoutTasks } = all;
      return reply({
        protocolVersion: version,
        capabilities: version >= TASKS_SINCE ? all : withoutTasks,
        serverInfo: this.#serverInfo,
        instructions: INSTRUCTIONS,
      });
    }
    if (this.#phase !== "legacy" || (params && Object.keys(params).some((k) => k !== "_meta"))) {
      return undefined;
    }
    if (method === "notifications/initialized" && id === undefined) return {};
    if (method === "ping" && id !== undefined) return reply({});
    if (method === "tools/list" && id !== undefined && this.#listed) {
      return reply({ tools: this.#listed });
    }
    return undefined;
  }

  /**
   * The SDK's capabilities as written at build time, without prompts or resources when none
   * is on offer (nor completions without either).
   */
  #capabilities(all: Json): Json {
    const resources = this.#resources;
    // Completion is for prompt arguments and resource templates' variables.
    const completes = this.#prompts || resources.some((r) => r.completes);
    const offered = (key: string) =>
      (key !== "prompts" || this.#prompts) && (key !== "resources" || resources.length > 0) &&
      (key !== "completions" || completes);
    return Object.fromEntries(
      Object.entries(all).filter(([key]) => offered(key)).map(([key, value]) =>
        key === "resources"
          ? [key, { ...value as object, listChanged: resources.some((r) => r.listChanged) }]
          : [key, value]
      ),
    );
  }
}

/**
 * The tools on offer, as the registry selects them, or undefined when the selection names a
 * tool that does not exist or is outside the toolsets (the server refuses to start then).
 */
function selection(options: DeskOptions): Set<string> | undefined {
  const toolsets = facts.tools as Record<string, string>;
  const known = (name: string) => Object.hasOwn(toolsets, name);
  if (![...options.tools ?? [], ...options.denyTools ?? []].every(known)) return undefined;
  const inSets = (name: string) =>
    toolsets[name] === "always" || options.toolsets.includes(toolsets[name]);
  if (!(options.tools ?? []).every(inSets)) return undefined;
  const offered = new Set(
    Object.keys(toolsets).filter((name) =>
      inSets(name) && (!options.tools || options.tools.includes(name)) &&
      !options.denyTools?.includes(name)
    ),
  );
  // No tool left: refused too (ToolRegistry.checkSelection).
  return offered.size > 0 ? offered : undefined;
}

/** A tool as 2026-07-28 lists it: without `execution` (tasks are an extension there). */
function modernTool(tool: Json): Json {
  const { execution: _, ...rest } = tool;
  return rest;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An object whose every value is an object (`z.record(z.string(), JSONObject)`). */
function isObjectRecord(value: unknown): boolean {
  return isObject(value) && Object.values(value).every(isObject);
}

function optional(value: unknown, check: (v: unknown) => boolean): boolean {
  return value === undefined || check(value);
}

const isString = (v: unknown) => typeof v === "string";
const isBoolean = (v: unknown) => typeof v === "boolean";
const isId = (v: unknown) => typeof v === "string" || Number.isSafeInteger(v);

/**
 * A request or notification exactly as the SDK's JSON-RPC check accepts and passes it on
 * unchanged (strict envelope; a `_meta` without the 2025 task key, whose inner keys the SDK
 * would drop).
 */
function plainMessage(
  value: unknown,
): { id?: string | number; method: string; params?: Json } | undefined {
  if (!isObject(value) || value.jsonrpc !== "2.0" || typeof value.method !== "string") {
    return undefined;
  }
  if (Object.keys(value).some((k) => !["jsonrpc", "id", "method", "params"].includes(k))) {
    return undefined;
  }
  if ("id" in value && !isId(value.id)) return undefined;
  if (!optional(value.params, isObject)) return undefined;
  const params = value.params as Json | undefined;
  if (params && "_meta" in params) {
    const meta = params._meta;
    if (!isObject(meta) || META.relatedTask in meta) return undefined;
    if (!optional(meta.progressToken, isId)) return undefined;
  }
  return value as { id?: string | number; method: string; params?: Json };
}

/** A 2026-07-28 envelope the SDK accepts (conservatively: known keys, known shapes). */
function modernEnvelope(meta: Json): boolean {
  const allowed: string[] = [
    META.protocolVersion,
    META.clientInfo,
    META.clientCapabilities,
    META.logLevel,
    "progressToken",
  ];
  return Object.keys(meta).every((k) => allowed.includes(k)) &&
    meta[META.protocolVersion] === MODERN_VERSION &&
    optional(meta[META.clientInfo], implementation) &&
    clientCapabilities(meta[META.clientCapabilities], false) &&
    optional(meta[META.logLevel], (v) => LOG_LEVELS.includes(v as string));
}

/** A 2025 request's `_meta`: no 2026 key the SDK might read. */
function legacyMeta(meta: Json): boolean {
  return Object.keys(meta).every((k) => k === "progressToken" || !k.startsWith("io.model"));
}

/** `initialize` params the SDK accepts (conservatively), or undefined. */
function initializeParams(params: Json | undefined): { protocolVersion: string } | undefined {
  if (!params || typeof params.protocolVersion !== "string") return undefined;
  if (!implementation(params.clientInfo) || !clientCapabilities(params.capabilities, true)) {
    return undefined;
  }
  return { protocolVersion: params.protocolVersion };
}

/** `clientInfo`: name and version, and only plain strings beside them. */
function implementation(value: unknown): boolean {
  return isObject(value) && isString(value.name) && isString(value.version) &&
    Object.entries(value).every(([k, v]) =>
      ["name", "version", "title", "description", "websiteUrl"].includes(k) && isString(v)
    );
}

/**
 * The 2025 task capability's `requests`: objects, and where the SDK knows the request
 * (`sampling.createMessage`, `elicitation.create`), an object there too.
 */
function taskRequests(value: unknown): boolean {
  if (!isObjectRecord(value)) return false;
  const { sampling, elicitation } = value as Record<string, Json>;
  return optional(sampling?.createMessage, isObject) && optional(elicitation?.create, isObject);
}

/** Client capabilities of known keys and shapes (2025 also has `tasks`). */
function clientCapabilities(value: unknown, legacy: boolean): boolean {
  if (!isObject(value)) return false;
  const shapes: Record<string, (v: unknown) => boolean> = {
    experimental: isObjectRecord,
    extensions: isObjectRecord,
    roots: (v) => isObject(v) && optional(v.listChanged, isBoolean),
    sampling: (v) => isObject(v) && optional(v.context, isObject) && optional(v.tools, isObject),
    elicitation: (v) =>
      isObject(v) && optional(v.form, (f) => isObject(f) && optional(f.applyDefaults, isBoolean)) &&
      optional(v.url, isObject),
    ...(legacy && {
      tasks: (v: unknown) =>
        isObject(v) && optional(v.list, isObject) && optional(v.cancel, isObject) &&
        optional(v.requests, taskRequests),
    }),
  };
  return Object.entries(value).every(([k, v]) => Object.hasOwn(shapes, k) && shapes[k](v));
}

/** How long the desk waits, after its last answer, for a request it can answer. */
const QUIET_MS = 20;

/** The desk that main.ts opened, until the server claims it. */
let opened: FrontDesk | undefined;

/**
 * Reads stdin and answers the opening requests while the server's code loads. `sdkWanted`
 * resolves when the code should load: once a message needs the SDK, tools/list is answered
 * (the client has what it starts with), input ends, or nothing came to answer for
 * {@link QUIET_MS}. Loading the SDK blocks the process for its whole length, so starting it
 * while the client is still in its opening exchange would only make the client wait.
 */
export class FrontDesk {
  /** stdin and stdout, reading from now on. */
  readonly transport: StdioTransport;
  readonly #answers: DeskAnswers;
  /** Every message taken, in order, with what the desk answered. */
  readonly #taken: { readonly message: Json; readonly answer?: Json }[] = [];
  readonly #wanted = Promise.withResolvers<void>();
  /** Which wait for a quiet spell counts: an earlier one that ends is stale. */
  #quietRound = 0;

  /** Opens the desk: reading starts at once. */
  constructor(options: DeskOptions) {
    this.#answers = new DeskAnswers(options);
    this.transport = new StdioTransport(undefined, (value) => this.#offer(value));
    if (!this.#answers.open) this.#want();
    else this.#quiet();
    this.transport.onheldend = () => this.#want();
    this.transport.start();
  }

  /** Resolves when the server's code should be loaded. */
  get sdkWanted(): Promise<void> {
    return this.#wanted.promise;
  }

  #offer(value: unknown): boolean {
    const taken = this.#answers.take(value);
    if (taken === undefined) {
      this.#want();
      return false;
    }
    this.#taken.push({ message: value as Json, answer: taken.answer });
    if (taken.answer) this.transport.sendRaw(taken.answer);
    if ((value as Json).method === "tools/list") this.#want();
    else this.#quiet();
    return true;
  }

  /**
   * Waits {@link QUIET_MS} for the next message. Not with `setTimeout`: a process's first timer
   * sets up the runtime's timers, 7-11 ms here, and the desk's first answer waited for it (a
   * `deno run` of an empty module pays nothing of it); `AbortSignal.timeout` takes under 1 ms.
   */
  #quiet(): void {
    const round = ++this.#quietRound;
    AbortSignal.timeout(QUIET_MS).addEventListener("abort", () => {
      if (round === this.#quietRound) this.#want();
    }, { once: true });
  }

  #want(): void {
    this.#quietRound++;
    this.#wanted.resolve();
  }

  /**
   * The connection for the SDK's stdio entry: starting it gives the SDK every message the desk
   * took (its answers swallowed, and checked against the desk's: a difference is a bug, said
   * on stderr), then the held messages and all that follows, through `check`.
   */
  handOver(check: MessageCheck): Transport {
    this.#want();
    const wire = this.transport;
    const replayed = new Map<string, Json>();
    const prefix = `tmux-mcp-front-desk-${crypto.randomUUID()}-`;
    const handed: Transport = {
      start: () => {
        for (const [i, { message, answer }] of this.#taken.entries()) {
          let copy = message;
          if (answer) {
            const id = `${prefix}${i}`;
            replayed.set(id, answer);
            copy = { ...message, id };
          }
          let checked: JSONRPCMessage;
          try {
            checked = check(copy);
          } catch {
            warn(
              `tmux-mcp: the front desk took a message the SDK refuses: ${
                JSON.stringify(message).slice(0, 200)
              }`,
            );
            continue;
          }
          handed.onmessage?.(checked);
        }
        wire.release(check);
        return Promise.resolve();
      },
      send: (message: JSONRPCMessage, _options?: TransportSendOptions) => {
        const id = (message as { id?: unknown }).id;
        const mine = typeof id === "string" ? replayed.get(id) : undefined;
        if (mine === undefined) return wire.send(message);
        replayed.delete(id as string);
        const sdk = digest({ ...message, id: mine.id } as Json);
        const desk = digest(mine);
        if (sdk !== desk) {
          warn(
            `tmux-mcp: the front desk answered ${desk.slice(0, 300)} where the SDK answers ${
              sdk.slice(0, 300)
            }`,
          );
        }
        return Promise.resolve();
      },
      close: () => wire.close(),
    };
    wire.onmessage = (message) => handed.onmessage?.(message);
    wire.onerror = (error) => handed.onerror?.(error);
    wire.onclose = () => handed.onclose?.();
    return handed;
  }
}

/**
 * An answer as text to compare, a tool list as its names only: serializing the whole list
 * twice more would leave about 2 MB more resident (tests/front_desk_test.ts compares it all).
 */
function digest(answer: Json): string {
  const result = answer.result as Json | undefined;
  if (!result || !Array.isArray(result.tools)) return JSON.stringify(answer);
  const names = (result.tools as Json[]).map((t) => t.name);
  return JSON.stringify({ ...answer, result: { ...result, tools: names } });
}

/** Opens the front desk for this process (main.ts, before the server's code loads). */
export function openFrontDesk(options: DeskOptions): FrontDesk {
  opened ??= new FrontDesk(options);
  return opened;
}

/** The desk opened for this process, once: the server takes the connection over from it. */
export function claimFrontDesk(): FrontDesk | undefined {
  const desk = opened;
  opened = undefined;
  return desk;
}
