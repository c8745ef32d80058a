/**
 * The environment tools: show_environment and set_environment (registered in settings.ts),
 * a session's or the global environment, which new processes start with. Values are read back
 * exactly, as environment_read.ts reads them, one import below.
 *
 * @module
 */

import { z } from "zod";
import { fitEntries } from "../mcp/bounds.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { flag, listBound, sessionIdSchema, sessionRefSchema } from "../mcp/schemas.ts";
import { envNameSchema, literalArg, passableString } from "./arguments.ts";
import { CONFIGURES } from "./configuring.ts";
import { envEntry, environmentSession, readEnvironment, readVariable } from "./environment_read.ts";

/** show_environment. */
export const showEnvironment = defineTool({
  name: "show_environment",
  title: "Show environment",
  toolset: "inspect",
  description: "A session's or the global environment; values may be secrets: repeat none unless " +
    "asked.",
  input: {
    session: sessionRefSchema.optional(),
    name: envNameSchema.optional(),
  },
  output: {
    scope: z.enum(["global", "session"]),
    sessionId: sessionIdSchema.nullable(),
    ...listBound,
    variables: z.array(envEntry),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const sessionId = await environmentSession(ctx, args.session);
    // One variable by its name: no other name can make that answer ambiguous.
    const variables = args.name === undefined
      ? await readEnvironment(ctx, sessionId)
      : [await readVariable(ctx, sessionId, args.name)].filter((v) => v !== undefined);
    const { kept, omitted } = fitEntries(variables, ctx.config.maxResultBytes - 512);
    const where = sessionId === null ? "the global environment" : `session ${sessionId}`;
    return {
      data: {
        scope: sessionId === null ? "global" as const : "session" as const,
        sessionId,
        complete: omitted === 0,
        omittedEntries: omitted,
        variables: kept,
      },
      summary: args.name !== undefined && kept.length === 0
        ? `${args.name} is not in ${where}.`
        : `${kept.length} variable${kept.length === 1 ? "" : "s"} in ${where}.` +
          (omitted ? ` ${omitted} more left out to stay within the result bound.` : ""),
    };
  },
});

/** set_environment. */
export const setEnvironment = defineTool({
  name: "set_environment",
  title: "Set environment",
  toolset: "execute",
  description: "Set, unset or remove a variable in a session's or the global environment (new " +
    "processes).",
  input: {
    name: envNameSchema,
    value: passableString(65_536, 0).optional(),
    session: sessionRefSchema.optional(),
    unset: flag(),
    remove: flag(),
  },
  output: {
    name: z.string(),
    scope: z.enum(["global", "session"]),
    sessionId: sessionIdSchema.nullable(),
    present: z.boolean().describe("Whether this environment has an entry for it now."),
    value: z.string().nullable(),
    removed: z.boolean(),
  },
  annotations: CONFIGURES,
  async run(args, ctx) {
    const modes = [args.value !== undefined, args.unset, args.remove].filter(Boolean).length;
    if (modes !== 1) {
      throw new ToolFailure(
        "Give exactly one of value, unset: true or remove: true.",
        'For example {name: "EDITOR", value: "vim", session: "main"}.',
      );
    }
    const sessionId = await environmentSession(ctx, args.session);
    const argv = ["set-environment", ...(sessionId === null ? ["-g"] : ["-t", sessionId])];
    if (args.unset) argv.push("-u");
    if (args.remove) argv.push("-r");
    argv.push("--", args.name);
    if (args.value !== undefined) argv.push(literalArg(args.value));
    await ctx.run(argv);
    // Its own variable only, read back by name: another's odd name cannot break the reply.
    const now = await readVariable(ctx, sessionId, args.name);
    const where = sessionId === null ? "the global environment" : `session ${sessionId}`;
    return {
      data: {
        name: args.name,
        scope: sessionId === null ? "global" as const : "session" as const,
        sessionId,
        present: now !== undefined,
        value: now?.value ?? null,
        removed: now?.removed ?? false,
      },
      summary: now === undefined
        ? `${args.name} is not in ${where}.`
        : now.removed
        ? `${args.name} is marked removed in ${where}.`
        : `${args.name} is set in ${where}.`,
    };
  },
});
