/**
 * What one `tools/call` brings through the SDK besides its tool: its params checked before the
 * SDK parses them (a malformed call or a tool not on offer answered in one sentence), and the
 * channels back to the client for that request (progress, log messages). The registry's
 * attach() (registry.ts) wires these into each SDK server.
 *
 * @module
 */

import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { ProgressFn, ServerConfig } from "./context.ts";
import { type LogFn, logLine, stderrLog } from "./call_log.ts";
import { clip } from "./errors.ts";
import type { Era } from "./resources.ts";
import type { TaskCalls } from "./task_store.ts";
import { wrapSdkHandler } from "./tool_list.ts";
import { errorResult } from "./tool_result.ts";
import { meantHint } from "../near_miss.ts";

/**
 * A `tools/call` whose params are not `{name, arguments?: object}` is the client's mistake:
 * answer it as invalid params (-32602) in one sentence. The SDK's request parsing would answer
 * with its schema error, a raw dump of zod's issues.
 *
 * A call of a tool that is not on offer (not selected, or never existed) is answered as a tool
 * error a model reads, in the words the SDK's v1 line used, as it always was: the v2 line
 * answers it with a protocol error instead, which a client may hide from the model.
 *
 * A well-formed call goes to `calls`, which runs it as an MCP task or plainly (task_store.ts).
 */
export function rejectMalformedCalls(
  server: McpServer,
  offered: { has(name: string): boolean; keys(): Iterable<string> },
  era: Era,
  calls: TaskCalls,
): void {
  const needs =
    "tools/call needs params {name: a tool name, arguments: an object of named fields}.";
  // To a 2025 client in the SDK's v1 words, which put the code before every message.
  const malformed = era === "legacy" ? `MCP error -32602: ${needs}` : needs;
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  wrapSdkHandler(server, "tools/call", (original) => (request, extra) => {
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
    if (!offered.has(params.name)) {
      return Promise.resolve(errorResult(
        `MCP error -32602: Tool ${clip(params.name, 100)} not found` +
          `${meantHint(params.name, [...offered.keys()])}. No tool ` +
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
export function progressSender(ctx: ServerContext): ProgressFn {
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
export function logSender(ctx: ServerContext, config: ServerConfig): LogFn {
  const stderr = stderrLog(config.diagnostics);
  return (level, message, options) => {
    stderr(level, message, options);
    ctx.mcpReq.log(level, logLine(message), options?.logger ?? "tmux-mcp").catch(() => {
      // A client that went away cannot be told; stderr has it.
    });
  };
}
