/**
 * Configuration: tmux options, hooks and environments — read (toolset inspect) and changed
 * (toolset execute: an option tmux reads as a format, or a hook, can run a shell command, so
 * changing them is execute reach, not manage) — and pipe_pane, which starts a shell command
 * fed by a pane's output.
 *
 * Values are read back exactly: `show-options` prints strings re-quoted the way tmux's own
 * parser reads them, and {@link unquoteOptionValue} undoes exactly that; `show-environment -s`
 * quotes every value for a shell, and {@link parseShellEnvironment} undoes that. Nothing read
 * here is ever handed to tmux as a format.
 *
 * Registered here with the option tools (show_options, show_option, set_option): the hook
 * tools in hooks.ts (show_hook keeps its seed contract there), the environment tools in
 * environment.ts, pipe_pane in pipe_pane.ts, and what the changing tools share (their
 * annotations, the refusal of a set call that is neither a value nor an unset) in
 * configuring.ts. What the option tools ask of tmux is one import below: setting_scope.ts
 * (scope, target and global as tmux flags), option_table.ts, option_read.ts and
 * option_change.ts (where an option lives, reading it back, what setting it reaches).
 *
 * @module
 */

import { changeView } from "../mcp/view_guard.ts";
import { z } from "zod";
import { fitEntries, jsonBytes, MAX_METADATA_BYTES } from "../mcp/bounds.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { checkedString, flag, listBound } from "../mcp/schemas.ts";
import { literalArg } from "./arguments.ts";
import { checkSetOrUnset, CONFIGURES } from "./configuring.ts";
import { setEnvironment, showEnvironment } from "./environment.ts";
import { setHook, showHook, showHooks } from "./hooks.ts";
import {
  checkOptionValue,
  forNewNote,
  optionView,
  refuseCommandAlias,
  refuseEnding,
  refuseMarks,
} from "./option_change.ts";
import {
  indexedEntry,
  optionEntry,
  readInheritedOptions,
  readOne,
  readOptions,
  shownValue,
  storedSummary,
} from "./option_read.ts";
import { checkOptionScope, optionTable } from "./option_table.ts";
import { baseName, reachesNoPerson } from "../tmux/option_reach.ts";
import { pipePane } from "./pipe_pane.ts";
import { noSuch, runNamed, scopeFlags, scopeSchema, unknownName } from "./setting_scope.ts";

/** Option names tmux has, plus user options (`@name`); an optional array index. */
const optionNameSchema = z.string().regex(
  /^(?:@[A-Za-z0-9_.-]{1,128}|[a-z][a-z0-9-]{0,63})(?:\[\d{1,5}\])?$/,
  "an option name such as status-left, @my-option or status-format[1]",
);

const optionScopeInput = {
  scope: scopeSchema,
  target: checkedString(4096).optional().describe("Session, @N or %N"),
  global: flag(),
  includeInherited: flag(),
};

const showOptions = defineTool({
  name: "show_options",
  title: "Show options",
  toolset: "inspect",
  description: "Options set at a scope, exact, never evaluated.",
  input: optionScopeInput,
  output: {
    scope: scopeSchema,
    targetId: z.string().nullable(),
    ...listBound,
    options: z.array(optionEntry),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const where = await scopeFlags(ctx, args.scope, args.target, args.global, "options");
    // tmux's own listing leaves out the user options a scope inherits: read those as well.
    const { entries, unvouched } = args.includeInherited
      ? await readInheritedOptions(ctx, where, MAX_METADATA_BYTES)
      : await readOptions(ctx, where, undefined, false, MAX_METADATA_BYTES);
    const { kept, omitted } = fitEntries(entries, ctx.config.maxResultBytes - 512);
    return {
      data: {
        scope: args.scope,
        targetId: where.targetId,
        complete: omitted === 0 && unvouched === 0,
        omittedEntries: omitted,
        options: kept,
      },
      summary: `${kept.length} ${where.label}.` +
        (omitted ? ` ${omitted} more left out to stay within the result bound.` : "") +
        (unvouched
          ? ` ${unvouched} more line${unvouched === 1 ? "" : "s"} of tmux's listing left out: ` +
            "a user option's name holds a newline there, and tmux would not confirm which " +
            "option they belong to; show_option reads one option by name."
          : ""),
    };
  },
});

const showOption = defineTool({
  name: "show_option",
  title: "Show option",
  toolset: "inspect",
  description: "One option at a scope, exact; set: false if unset.",
  input: { name: optionNameSchema, ...optionScopeInput },
  output: {
    name: z.string(),
    scope: scopeSchema,
    targetId: z.string().nullable(),
    set: z.boolean(),
    value: z.string().nullable().describe("The value of a non-array option, else null."),
    ...listBound,
    entries: z.array(optionEntry),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const where = await scopeFlags(ctx, args.scope, args.target, args.global, "options");
    const base = baseName(args.name);
    const table = await optionTable(ctx, base);
    checkOptionScope(base, table, args.scope, args.global, "read");
    const { entries, scalar } = await readOne(ctx, where, args.name, args.includeInherited);
    const one = scalar ?? indexedEntry(args.name, entries);
    // Each value is cut on its own; an array's entries together are fitted like a list.
    const { kept, omitted } = fitEntries(
      entries,
      ctx.config.maxResultBytes - 512 - (scalar ? jsonBytes(scalar.value) : 0),
    );
    const left = omitted
      ? ` ${omitted} more entries left out to stay within the result bound.`
      : "";
    return {
      data: {
        name: args.name,
        scope: args.scope,
        targetId: where.targetId,
        set: entries.length > 0,
        value: scalar ? scalar.value : null,
        complete: omitted === 0,
        omittedEntries: omitted,
        entries: kept,
      },
      summary: entries.length === 0
        ? `${args.name} is not set in ${where.label}.`
        : one
        ? `${args.name} = ${shownValue(one.value)} (${where.label}${
          one.inherited ? ", inherited" : ""
        }).`
        : `${args.name}: ${entries.length} entries (${where.label}).${left}`,
    };
  },
});

const setOption = defineTool({
  name: "set_option",
  title: "Set option",
  toolset: "execute",
  description: "Set, append or unset an option, exactly; format options run #(...) when drawn.",
  input: {
    name: optionNameSchema,
    value: checkedString(65_536, 0).optional(),
    ...optionScopeInput,
    unset: flag(),
    append: flag(),
  },
  output: {
    name: z.string(),
    scope: scopeSchema,
    targetId: z.string().nullable(),
    set: z.boolean().describe("Whether it is set at this scope now."),
    value: z.string().nullable(),
    entries: z.array(optionEntry),
  },
  annotations: CONFIGURES,
  async run(args, ctx) {
    checkSetOrUnset(
      "value",
      args.value !== undefined,
      args,
      '{name: "@mark", value: "1", scope: "session", target: "$0"}',
    );
    refuseMarks(args.name);
    refuseCommandAlias(args.name);
    refuseEnding(args.name, args.value, args.unset, args.scope, args.global);
    const where = await scopeFlags(ctx, args.scope, args.target, args.global, "options");
    const base = baseName(args.name);
    const table = await optionTable(ctx, base);
    checkOptionScope(base, table, args.scope, args.global, "set");
    if (args.value !== undefined) {
      await checkOptionValue(ctx, where, args.name, args.value, args.append);
    }
    const argv = ["set-option", ...where.flags];
    if (args.unset) argv.push("-u");
    if (args.append) argv.push("-a");
    argv.push("--", args.name);
    if (args.value !== undefined) argv.push(args.value);
    // A user option (the agent marks the hook's status line draws are refuseMarks') or a server
    // option that reaches no client needs no view guard: the hook's guard reads the same table.
    if (reachesNoPerson(base)) {
      await runNamed(ctx, argv.map(literalArg), "option", args.name);
    } else {
      // A session's or a window's option changes what its clients show (the status line, a
      // layout with pane borders, where typed keys go), a server option what every client
      // sends and is sent: guarded like any view change. allow-passthrough turned on anywhere
      // reaches a person's terminal once they look there: guarded like a server option.
      const what = `${args.unset ? "Unsetting" : "Setting"} ${args.name} in ${where.label}`;
      const { snapshot, scope } = await optionView(ctx, where, args.scope, base, args);
      try {
        await changeView(ctx, snapshot, scope, what, [argv]);
      } catch (error) {
        throw unknownName(error) ? noSuch("option", args.name, error) : error;
      }
    }
    const { entries, scalar } = await readOne(ctx, where, args.name, args.includeInherited);
    const one = scalar ?? indexedEntry(args.name, entries);
    return {
      data: {
        name: args.name,
        scope: args.scope,
        targetId: where.targetId,
        set: entries.some((e) => !e.inherited),
        value: scalar ? scalar.value : null,
        entries,
      },
      summary: (args.unset
        ? `Unset ${args.name} in ${where.label}.`
        : storedSummary(args.name, args.append, entries, one, where.label)) +
        await forNewNote(ctx, base, where),
    };
  },
});

/** Registers the configuration tools (show_* in inspect; set_* and pipe_pane in execute). */
export function registerSettingsTools(registry: ToolRegistry): void {
  registry.add(
    showHooks,
    showHook,
    showOptions,
    showOption,
    showEnvironment,
    setOption,
    setEnvironment,
    setHook,
    pipePane,
  );
}
