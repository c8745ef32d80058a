/**
 * An MCP client connected to a fresh server through the SDK's in-memory transport. Every
 * successful result is checked against the tool's declared output schema, so a test cannot
 * pass on a result a real client would reject.
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types.js";
import assert from "node:assert/strict";
import { MAX_RESULT_BYTES } from "../../src/mcp/bounds.ts";
import type { Toolset } from "../../src/mcp/toolsets.ts";
import { buildServer, type BuiltServer } from "../../src/server.ts";
import type { CallerEnv } from "../../src/tmux/identity.ts";
import type { TmuxRunner } from "../../src/tmux/run.ts";
import { TmuxContext } from "../../src/mcp/context.ts";
import { TOOLSETS } from "../../src/mcp/toolsets.ts";
import { parseRendered } from "./rendered.ts";
import { TestTmux } from "./tmux.ts";

/** What a test may set when connecting. */
export interface ConnectOptions {
  readonly socketName?: string;
  /** A socket path (tmux -S), instead of a name. */
  readonly socketPath?: string;
  readonly toolsets?: readonly Toolset[];
  readonly callerEnv?: CallerEnv;
  readonly maxResultBytes?: number;
  /** The runner the server uses (a test's own, to count what it reads). */
  readonly runner?: TmuxRunner;
  /** `--tools` and `--deny-tools`. */
  readonly tools?: readonly string[];
  readonly denyTools?: readonly string[];
  /** `--owner` and `--own-panes-only`. */
  readonly owner?: string;
  readonly ownPanesOnly?: boolean;
  /** `--allow-attended-input`. */
  readonly allowAttendedInput?: boolean;
}

/**
 * What a summary line never holds raw, whatever a pane put in the values it names: line breaks
 * of any kind, controls, bidirectional controls.
 */
const NOT_IN_SUMMARY =
  // deno-lint-ignore no-control-regex
  /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** A connected client and helpers. */
export interface TestClient {
  readonly client: Client;
  readonly server: BuiltServer;
  /** Calls a tool; returns the raw result. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Calls a tool that must succeed; returns its structured content, schema-checked. */
  ok<T = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<T>;
  /** Calls a tool that must fail; returns its error text. */
  fail(name: string, args?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/**
 * The SDK client's schema validator, each schema compiled once for every client of the run: a
 * client compiles a validator for every output schema tools/list gives it (65 ms for the whole
 * catalogue), which every test's connect paid again for the same schemas. Validation itself
 * is the SDK's own, unchanged.
 */
const sharedValidator: jsonSchemaValidator = (() => {
  const ajv = new AjvJsonSchemaValidator();
  const compiled = new Map<string, JsonSchemaValidator<unknown>>();
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      const key = JSON.stringify(schema);
      let validator = compiled.get(key);
      if (!validator) compiled.set(key, validator = ajv.getValidator(schema));
      return validator as JsonSchemaValidator<T>;
    },
  };
})();

/** Connects a client to a new server built with `options`. */
export async function connect(options: ConnectOptions = {}): Promise<TestClient> {
  const server = buildServer({
    address: options.socketPath !== undefined
      ? { socketPath: options.socketPath }
      : { socketName: options.socketName },
    toolsets: options.toolsets ?? TOOLSETS,
    version: "test",
    maxResultBytes: options.maxResultBytes ?? MAX_RESULT_BYTES,
    callerEnv: options.callerEnv ?? {},
    runner: options.runner,
    tools: options.tools,
    denyTools: options.denyTools,
    owner: options.owner,
    ownPanesOnly: options.ownPanesOnly,
    allowAttendedInput: options.allowAttendedInput,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "tmux-mcp-tests", version: "1" }, {
    jsonSchemaValidator: sharedValidator,
  });
  await server.mcp.connect(serverSide);
  await client.connect(clientSide);
  await client.listTools();

  // A call that waits (timeoutMs) gets a minute more than its own wait before the client gives
  // up: the reply, not the client's request timeout, is what a test checks.
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    await client.callTool({ name, arguments: args }, undefined, {
      timeout: typeof args.timeoutMs === "number" ? args.timeoutMs + 60_000 : undefined,
    }) as CallToolResult;

  return {
    client,
    server,
    call,
    async ok<T>(name: string, args: Record<string, unknown> = {}) {
      const result = await call(name, args);
      const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
      assert.notEqual(result.isError, true, `${name} failed: ${text}`);
      const tool = server.registry.get(name);
      assert.ok(tool, `no tool ${name}`);
      const parsed = tool.outputSchema.safeParse(result.structuredContent);
      assert.ok(parsed.success, `${name} result does not match its schema: ${parsed.error}`);
      const rendered = parseRendered(text);
      assert.deepEqual(
        rendered.data,
        result.structuredContent,
        "the text carries every field of the structured content",
      );
      assert.doesNotMatch(rendered.summary, NOT_IN_SUMMARY, "the summary is one visible line");
      return result.structuredContent as T;
    },
    async fail(name: string, args: Record<string, unknown> = {}) {
      const result = await call(name, args);
      assert.equal(result.isError, true, `${name} should have failed`);
      assert.equal(result.structuredContent, undefined, "no structured content on errors");
      const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
      assert.ok(text.length > 0);
      assert.ok(!/\n\s+at /.test(text), `no stack traces: ${text}`);
      return text;
    },
    async close() {
      await client.close();
      await server.mcp.close();
      await server.runner.close();
    },
  };
}

/** A started private tmux server, with the ids of its first session, window and pane. */
export type StartedTmux = Awaited<ReturnType<typeof TestTmux.start>>;

/** Runs `fn` with a private tmux server and an MCP client connected to it; cleans both up. */
export async function withTmux(
  fn: (t: StartedTmux, c: TestClient) => Promise<void>,
  options: Omit<ConnectOptions, "socketName"> = {},
  server: { width?: number; height?: number; noChildLeft?: boolean } = {},
): Promise<void> {
  const t = await TestTmux.start("main", { width: server.width, height: server.height });
  let c: TestClient | undefined;
  try {
    c = await connect({ ...options, socketName: t.socket });
    await fn(t, c);
  } finally {
    await c?.close();
    await t.kill();
  }
  if (server.noChildLeft) assert.equal(c?.server.runner.running, 0, "no tmux child left behind");
}

/** A tool call's summary line and its structured content; the call must succeed. */
export async function summaryOf(
  c: TestClient,
  name: string,
  args: Record<string, unknown>,
): Promise<{ summary: string; data: Record<string, unknown> }> {
  const r = await c.call(name, args);
  const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
  assert.notEqual(r.isError, true, text);
  return { summary: text.split("\n")[0], data: r.structuredContent as Record<string, unknown> };
}

/** A context on the server `socketName`, for calling a tool family's exported helpers directly. */
export function testContext(runner: TmuxRunner, socketName: string): TmuxContext {
  return new TmuxContext(
    runner,
    { address: { socketName }, callerEnv: {}, maxResultBytes: MAX_RESULT_BYTES },
    undefined,
    new AbortController().signal,
    () => Promise.resolve(),
  );
}
