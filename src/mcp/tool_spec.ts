/**
 * How a tool family declares a tool: its spec (name, toolset, schemas, honest annotations, the
 * code that runs it), the reply it returns, and {@link defineTool}, which gives every tool an
 * optional `socket_name` and strict input validation (unknown fields are an error, not
 * silently dropped). The registry (registry.ts) stores what this declares.
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "./context.ts";
import type { ToolToolset } from "./toolsets.ts";
import { checkedString } from "./schemas.ts";

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
