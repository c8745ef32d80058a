/**
 * The `tools/list` answer: built with the source (tool_list.json) instead of while a client
 * waits, portable to every client, and handed to the SDK so that it still carries what the
 * protocol in use adds to it (the cache hint of 2026-07-28).
 *
 * @module
 */

import type { McpServer } from "@modelcontextprotocol/server";
import { SEEDED_SCHEMAS } from "./listing.ts";
import { portableSchema } from "./portable_schema.ts";
import prebuiltToolList from "./tool_list.json" with { type: "json" };

/** A request handler as the SDK stores it. */
export type Handler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * The SDK's handler of `method`, where its own answer is wrapped or replaced. The SDK keeps no
 * public getter for it: should a later version keep its handlers elsewhere, the server refuses
 * to start rather than silently answer as the SDK would (slower lists, rawer errors).
 */
export function sdkHandler(server: McpServer, method: string): Handler {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, Handler> })
    ._requestHandlers;
  const handler = handlers?.get(method);
  if (!handler) {
    throw new Error(`the MCP SDK keeps no ${method} handler where src/mcp/tool_list.ts looks`);
  }
  return handler;
}

/**
 * Puts `wrap(original)` in place of the SDK's handler of `method` (see {@link sdkHandler}):
 * the wrapper answers first, and calls the SDK's own when it passes the request on.
 */
export function wrapSdkHandler(
  server: McpServer,
  method: string,
  wrap: (original: Handler) => Handler,
): void {
  const original = sdkHandler(server, method);
  (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers
    .set(method, wrap(original));
}

/** A tool as tool_list.json lists it. */
export type ListedTool = (typeof prebuiltToolList.tools)[number];

/** tool_list.json by tool name. */
export function prebuiltByName(): Map<string, ListedTool> {
  return new Map(prebuiltToolList.tools.map((t) => [t.name, t]));
}

/**
 * The tool list is fixed once the server is built (toolsets are chosen at start), but the SDK
 * turns every tool's zod schemas into JSON Schema again on each `tools/list`: 35-75 ms for 56
 * tools, on the path of every client's start. So the answer comes from `tool_list.json`, the
 * SDK's own answer for every tool made portable (portableSchema) and written at build time
 * (`deno task tool-list`; a test fails when it differs from the live conversion), in the order
 * the tools were registered; without it (`prebuilt` undefined, or a tool missing from it) the
 * SDK answers once and that answer, made portable, is kept. The answer is replaced through the
 * SDK's own registration, so that it still stamps the cache hint (see server.ts) on it.
 */
export function rememberToolList(
  server: McpServer,
  tools: readonly { name: string }[],
  prebuilt: Map<string, ListedTool> | undefined,
): void {
  const original = sdkHandler(server, "tools/list");
  let kept: Record<string, unknown> | null = null;
  if (prebuilt) {
    const listed = tools.map((t) => prebuilt.get(t.name));
    if (listed.every((t) => t !== undefined)) kept = { tools: listed };
  }
  server.server.setRequestHandler("tools/list", async (request, ctx) => {
    if (kept === null) {
      kept = portableList(await original(request, ctx)) as Record<string, unknown>;
    }
    return kept as never;
  });
}

/**
 * The SDK's tools/list answer with every schema made portable (output schemas as structure
 * only), and without `execution: {taskSupport: "forbidden"}`, which is what a tool without
 * `execution` means: every byte of the list is read at every client's start.
 */
function portableList(answer: unknown): unknown {
  const { tools, ...rest } = answer as { tools: Record<string, unknown>[] };
  return {
    ...rest,
    tools: tools.map((tool) => {
      const asSeeded = SEEDED_SCHEMAS.has(tool.name as string);
      const { execution, ...out } = tool;
      if (!isForbiddenTasks(execution)) out.execution = execution;
      if (tool.inputSchema) {
        out.inputSchema = portableSchema(tool.inputSchema as Record<string, unknown>, {
          asSeeded,
        });
      }
      if (tool.outputSchema) {
        out.outputSchema = portableSchema(tool.outputSchema as Record<string, unknown>, {
          asSeeded,
          output: true,
        });
      }
      return out;
    }),
  };
}

function isForbiddenTasks(execution: unknown): boolean {
  if (execution === undefined) return true;
  const e = execution as Record<string, unknown>;
  return Object.keys(e).length === 1 && e.taskSupport === "forbidden";
}
