/**
 * Prompts, the one place they meet the SDK: workflows a person picks in their client (a slash
 * command in Claude Code), each a message that tells a model which tools to call, with which
 * arguments. The same registration serves both protocol versions: the SDK's McpServer answers
 * `prompts/list`, `prompts/get` and `completion/complete` (`ref/prompt`) under 2025-11-25 and
 * 2026-07-28 alike.
 *
 * A prompt argument is hostile input like any tool argument: every value is checked here
 * (shape, length, no control characters) before a prompt's text is built, and the text carries
 * values as JSON strings, data a model passes on, never words it could read as instructions.
 *
 * @module
 */

import {
  completable,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { boundCompletions } from "./bounds.ts";
import type { TmuxContext } from "./context.ts";
import { failureText } from "./errors.ts";
import { withinBudget } from "./resource_spec.ts";
import { wrapSdkHandler } from "./tool_list.ts";

/** One argument of a prompt (every prompt argument is a string). */
export interface PromptArgument {
  readonly name: string;
  /** One short sentence: a person reads it in their client's form. */
  readonly description: string;
  readonly required?: boolean;
  /** What a value must be (a pane id that looks like one, a bounded path...). */
  readonly schema: z.ZodType<string>;
  /**
   * The values that start with what was typed, from the live tmux server; `others` holds the
   * prompt's other arguments as far as the client sent them.
   */
  readonly complete?: (
    typed: string,
    ctx: TmuxContext,
    others: Readonly<Record<string, string>>,
  ) => Promise<readonly string[]>;
}

/** A prompt as a family file declares it. */
export interface PromptSpec {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly arguments: readonly PromptArgument[];
  /**
   * Every tool its text names. The prompt is offered only when all of them are: a text never
   * names a tool that is not selected or was denied.
   */
  readonly tools: readonly string[];
  /**
   * The tools of the resources it reads (see ResourceSpec.tools): it is offered only with them
   * too, as those resources are.
   */
  readonly reads?: readonly string[];
  /** The user message: the workflow, with the checked arguments (absent ones left out). */
  readonly build: (
    args: Readonly<Record<string, string>>,
    ctx: TmuxContext,
  ) => Promise<string>;
}

/** Control characters (C0, DEL, C1), shown as "?" in a message naming an unknown key. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** Longest text typed into a completion that is looked at (a longer one completes nothing). */
const MAX_TYPED = 1_024;

/**
 * A prompt's arguments checked one by one: an optional argument sent empty (as forms send a
 * field left blank) is absent. Throws invalid params naming each bad argument, never echoing
 * its value.
 */
export function checkPromptArguments(
  spec: PromptSpec,
  raw: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const problems: string[] = [];
  const checked: Record<string, string> = {};
  const known = new Set(spec.arguments.map((a) => a.name));
  const unknown = Object.keys(raw).filter((k) => !known.has(k));
  if (unknown.length > 0) {
    problems.push(
      `unknown argument${unknown.length > 1 ? "s" : ""} ${
        unknown.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 64).replace(CONTROL, "?")))
          .join(", ")
      } (${spec.name} takes ${[...known].join(", ") || "none"})`,
    );
  }
  for (const arg of spec.arguments) {
    const value = raw[arg.name];
    if (value === undefined || value === "") {
      if (arg.required) problems.push(`${arg.name} is required`);
      continue;
    }
    if (typeof value !== "string") {
      problems.push(`${arg.name} must be a string`);
      continue;
    }
    const parsed = arg.schema.safeParse(value);
    if (parsed.success) checked[arg.name] = parsed.data;
    else problems.push(`${arg.name}: ${parsed.error.issues[0]?.message ?? "not valid"}`);
  }
  if (problems.length > 0) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid arguments for prompt ${spec.name}: ${problems.join("; ")}.`,
    );
  }
  return checked;
}

/**
 * Declares `prompts` on `server` (the list is fixed for the life of the process, so no
 * `listChanged`) and registers each prompt, its arguments completable where they say how.
 * A `prompts/get` is checked by checkPromptArguments before the SDK parses it: the SDK's own
 * check (of the schema that lists which arguments are required) answers an argument missing or
 * not a string in zod's words ("expected string, received undefined").
 * Call before the server connects; with no prompts, nothing is declared.
 */
export function attachPrompts(
  server: McpServer,
  prompts: readonly PromptSpec[],
  contextFor: (signal: AbortSignal) => TmuxContext,
): void {
  if (prompts.length === 0) return;
  server.server.registerCapabilities({ prompts: { listChanged: false } });
  for (const spec of prompts) {
    const shape: Record<string, z.ZodType> = {};
    for (const arg of spec.arguments) {
      // Listed and completed here; checked in checkPromptArguments, in words a person reads.
      let field: z.ZodType<string> = z.string().describe(arg.description);
      const complete = arg.complete;
      if (complete) {
        field = completable(field, async (typed, context) => {
          if (typeof typed !== "string" || typed.length > MAX_TYPED) return [];
          const others: Record<string, string> = {};
          for (const [k, v] of Object.entries(context?.arguments ?? {})) {
            if (typeof v === "string" && v.length <= MAX_TYPED) others[k] = v;
          }
          // No tmux server, or it did not answer within the budget: nothing to offer. Raced,
          // not only signalled: a control connection still opening to a stopped tmux does not
          // heed the signal, and held a completion for tmux's own 10 s.
          return boundCompletions(
            await withinBudget((signal) => complete(typed, contextFor(signal), others)),
          );
        });
      }
      shape[arg.name] = arg.required ? field : field.optional();
    }
    server.registerPrompt(
      spec.name,
      {
        title: spec.title,
        description: spec.description,
        // Extra keys are kept, so that checkPromptArguments names them instead of the SDK
        // dropping them unseen; it also says what is wrong with each value.
        argsSchema: z.looseObject(shape),
      },
      async (parsed: Record<string, unknown>, ctx) => {
        const args = checkPromptArguments(spec, parsed);
        const tmux = contextFor(ctx.mcpReq.signal);
        let text: string;
        try {
          text = await spec.build(args, tmux);
        } catch (error) {
          // tmux did not answer as it should: the reason and what to do, never a stack trace.
          throw new ProtocolError(
            ProtocolErrorCode.InternalError,
            failureText(error, tmux.address),
          );
        }
        return {
          description: spec.description,
          messages: [{ role: "user" as const, content: { type: "text" as const, text } }],
        };
      },
    );
  }
  const byName = new Map(prompts.map((p) => [p.name, p]));
  wrapSdkHandler(server, "prompts/get", (original) => (request, extra) => {
    const params = (request as { params?: { name?: unknown; arguments?: unknown } }).params;
    const spec = typeof params?.name === "string" ? byName.get(params.name) : undefined;
    const args = params?.arguments ?? {};
    if (spec && typeof args === "object" && args !== null && !Array.isArray(args)) {
      try {
        checkPromptArguments(spec, args as Record<string, unknown>);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return original(request, extra);
  });
}
