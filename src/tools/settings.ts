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
 * `show_hook` keeps its seed contract (seed 000): snake_case input `hook_name`, `scope`,
 * `target`, `global_` and a nullable `socket_name`; output `entries[{hook_name, command,
 * index}]`, none when the hook is unset, one per array index otherwise.
 *
 * The tools are here; what they ask of tmux is one import below: setting_scope.ts (scope,
 * target and global as tmux flags), option_table.ts, option_read.ts and option_change.ts
 * (where an option lives, reading it back, what setting it reaches), hook_tree.ts,
 * environment_read.ts and pipe_checks.ts.
 *
 * @module
 */

import { runIf, type TmuxCondition } from "../mcp/act_step.ts";
import { changeView } from "../mcp/view_guard.ts";
import { requireOwned } from "../mcp/ownership.ts";
import { z } from "zod";
import { fitEntries, jsonBytes, MAX_METADATA_BYTES } from "../mcp/bounds.ts";
import { ToolFailure } from "../mcp/errors.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import {
  type AnyTool,
  defineTool,
  READ_ONLY,
  socketNameField,
  type ToolAnnotations,
} from "../mcp/tool_spec.ts";
import {
  checkedString,
  flag,
  listBound,
  paneIdSchema,
  sessionIdSchema,
  sessionRefSchema,
} from "../mcp/schemas.ts";
import { escapeFormat } from "../tmux/format.ts";
import { SERVER_ONLY } from "../tmux/snapshot.ts";
import { changes, envNameSchema, literalArg, paneFields } from "./arguments.ts";
import { envEntry, environmentSession, readEnvironment } from "./environment_read.ts";
import {
  checkHookName,
  checkHookScope,
  hookEntry,
  hooksAt,
  hookTree,
  inferHookScope,
} from "./hook_tree.ts";
import {
  checkOptionValue,
  forNewNote,
  optionView,
  reachesNoView,
  refuseCommandAlias,
  refuseMarks,
} from "./option_change.ts";
import {
  indexedEntry,
  optionEntry,
  readOne,
  readOptions,
  shownValue,
  storedSummary,
} from "./option_read.ts";
import { baseName, checkOptionScope, optionTable } from "./option_table.ts";
import { alreadyPiped, appendable, NO_PIPE, shellQuote, unappendable } from "./pipe_checks.ts";
import { noSuch, runNamed, scopeFlags, scopeSchema, unknownName } from "./setting_scope.ts";
import { checkFormatNumbers } from "./tmux_limits.ts";

// ---------------------------------------------------------------------------------------------
// Options

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
    const { entries, unvouched } = await readOptions(
      ctx,
      where,
      undefined,
      args.includeInherited,
      MAX_METADATA_BYTES,
    );
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

/** Refuses a set call that is not exactly one of: a new value (maybe appended), or unset. */
function checkSetOrUnset(
  what: "value" | "command",
  given: boolean,
  flags: { readonly unset: boolean; readonly append: boolean },
  example: string,
): void {
  if (flags.unset === given) {
    throw new ToolFailure(
      flags.unset ? `unset takes no ${what}.` : `Give a ${what}, or unset: true.`,
      `For example ${example}.`,
    );
  }
  if (flags.unset && flags.append) {
    throw new ToolFailure("append and unset contradict each other.", "Pass one of them.");
  }
}

/** Changing configuration that tmux may evaluate later: execute reach, not destructive. */
const CONFIGURES: ToolAnnotations = changes({ destructive: false, idempotent: true });

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
    if (reachesNoView(table, base)) {
      await runNamed(ctx, argv.map(literalArg), "option", args.name);
    } else {
      // A session's or a window's option changes what its clients show (the status line, a
      // layout with pane borders, where typed keys go), a server option what every client
      // sends and is sent: guarded like any view change.
      const what = `${args.unset ? "Unsetting" : "Setting"} ${args.name} in ${where.label}`;
      const { snapshot, scope } = await optionView(ctx, where, args.scope, base);
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

// ---------------------------------------------------------------------------------------------
// Hooks (show_hook: seed 000)

/** The snake_case, nullable scope arguments of the seed. */
const seedHookInput = {
  scope: scopeSchema.nullable().default(null),
  target: checkedString(4096).nullable().default(null).describe("Session, @N or %N"),
  global_: z.boolean().default(false),
};

/** The nullable `socket_name` the seed contract declares (null means the default server). */
const nullableSocketName = socketNameField.unwrap().nullable().default(null);

/** A seed tool's input takes `socket_name: null` as the seeds declare. */
function withNullableSocketName(tool: AnyTool): AnyTool {
  return { ...tool, inputSchema: tool.inputSchema.extend({ socket_name: nullableSocketName }) };
}

const showHooks = withNullableSocketName(defineTool({
  name: "show_hooks",
  title: "Show hooks",
  toolset: "inspect",
  description: "Hooks at a scope (default: global), an entry per array index.",
  input: seedHookInput,
  output: {
    entries: z.array(hookEntry),
    ...listBound,
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const scope = inferHookScope(args.scope, args.target);
    ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
    const where = await scopeFlags(ctx, scope, args.target, args.global_, "hooks");
    const entries = await hooksAt(ctx, where, scope, undefined);
    const { kept, omitted } = fitEntries(entries, ctx.config.maxResultBytes - 256);
    return {
      data: { entries: kept, complete: omitted === 0, omittedEntries: omitted },
      summary: `${kept.length} hook entr${kept.length === 1 ? "y" : "ies"} in ${where.label}.` +
        (omitted ? ` ${omitted} more left out to stay within the result bound.` : ""),
    };
  },
}));

const showHook = withNullableSocketName(defineTool({
  name: "show_hook",
  title: "Show hook",
  toolset: "inspect",
  description: "Look up a specific tmux hook by name. An entry per array index.",
  input: {
    hook_name: z.string().describe('Hook to look up (e.g. "pane-exited").'),
    ...seedHookInput,
  },
  // Exactly the seed's output: entries only (a cut, which only thousands of entries could
  // cause, is said in the summary).
  output: { entries: z.array(hookEntry) },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const { base, index } = checkHookName(args.hook_name);
    const scope = inferHookScope(args.scope, args.target);
    ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
    checkHookScope(base, await hookTree(ctx, base), scope);
    const where = await scopeFlags(ctx, scope, args.target, args.global_, "hooks");
    const all = (await hooksAt(ctx, where, scope, base)).filter((e) =>
      e.hook_name === base && (index === null || e.index === index)
    );
    // One hook's entries are few; should a server hold thousands, keep what fits and say so.
    const { kept, omitted } = fitEntries(all, ctx.config.maxResultBytes - 64);
    return {
      data: { entries: kept },
      summary: (kept.length === 0
        ? `${args.hook_name} is not set in ${where.label}.`
        : `${args.hook_name}: ${kept.length} entr${
          kept.length === 1 ? "y" : "ies"
        } in ${where.label}.`) +
        (omitted ? ` ${omitted} more entries left out to stay within the result bound.` : ""),
    };
  },
}));

const setHook = defineTool({
  name: "set_hook",
  title: "Set hook",
  toolset: "execute",
  description: "Set, append or unset a hook (tmux commands run on an event); it outlives this " +
    "server.",
  input: {
    name: checkedString(80, 0),
    command: checkedString(16_384).optional(),
    scope: scopeSchema.default("server"),
    target: checkedString(4096).optional().describe("Session, @N or %N"),
    global: flag(),
    append: flag(),
    unset: flag(),
  },
  output: { entries: z.array(hookEntry) },
  annotations: { ...CONFIGURES, idempotentHint: false },
  async run(args, ctx) {
    const { base } = checkHookName(args.name);
    checkSetOrUnset(
      "command",
      args.command !== undefined,
      args,
      '{name: "pane-exited", command: "display-message gone"}',
    );
    // A hook's command may hand tmux a format (display-message, set-option -F, if-shell -F):
    // one spelled out in it is checked like display_message's. This is no fence (a hook can
    // run any command, kill-server too), only no way to crash tmux by a slip.
    if (args.command !== undefined) {
      checkFormatNumbers(args.command, "That hook command", "Nothing was changed.");
    }
    ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
    checkHookScope(base, await hookTree(ctx, base), args.scope);
    const where = await scopeFlags(ctx, args.scope, args.target, args.global, "hooks");
    const argv = ["set-hook", ...where.flags];
    if (args.unset) argv.push("-u");
    if (args.append) argv.push("-a");
    argv.push("--", args.name);
    if (args.command !== undefined) argv.push(literalArg(args.command));
    await runNamed(ctx, argv, "hook", args.name);
    const entries = (await hooksAt(ctx, where, args.scope, base)).filter((e) =>
      e.hook_name === base
    );
    return {
      data: { entries },
      summary: `${base} now has ${entries.length} entr${
        entries.length === 1 ? "y" : "ies"
      } in ${where.label}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// Environment

const showEnvironment = defineTool({
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
    let variables = await readEnvironment(ctx, sessionId);
    if (args.name !== undefined) variables = variables.filter((v) => v.name === args.name);
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

const setEnvironment = defineTool({
  name: "set_environment",
  title: "Set environment",
  toolset: "execute",
  description: "Set, unset or remove a variable in a session's or the global environment (new " +
    "processes).",
  input: {
    name: envNameSchema,
    value: checkedString(65_536, 0).optional(),
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
    if (args.value !== undefined && !args.value.isWellFormed()) {
      throw new ToolFailure("The value is not well-formed Unicode.", "Nothing was changed.");
    }
    const sessionId = await environmentSession(ctx, args.session);
    const argv = ["set-environment", ...(sessionId === null ? ["-g"] : ["-t", sessionId])];
    if (args.unset) argv.push("-u");
    if (args.remove) argv.push("-r");
    argv.push("--", args.name);
    if (args.value !== undefined) argv.push(literalArg(args.value));
    await ctx.run(argv);
    const now = (await readEnvironment(ctx, sessionId)).find((v) => v.name === args.name);
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

// ---------------------------------------------------------------------------------------------
// pipe_pane

const pipePane = defineTool({
  name: "pipe_pane",
  title: "Pipe pane output",
  toolset: "execute",
  description:
    "Copy a pane's output from now on to a file (path) or a /bin/sh command; stop ends " +
    "it.",
  input: {
    paneId: paneIdSchema,
    path: checkedString(4096).regex(/^\//, "an absolute path").optional(),
    command: checkedString(16_384).optional(),
    stop: flag(),
  },
  output: {
    paneId: paneIdSchema,
    piped: z.boolean().describe("Whether the pane's output is piped now."),
    command: z.string().nullable().describe("The shell command tmux runs, when piping."),
  },
  annotations: CONFIGURES,
  async run(args, ctx) {
    const modes = [args.path !== undefined, args.command !== undefined, args.stop]
      .filter(Boolean).length;
    if (modes !== 1) {
      throw new ToolFailure(
        "Give exactly one of path, command or stop: true.",
        'For example {paneId: "%1", path: "/tmp/pane.log"}.',
      );
    }
    const { pane } = await ctx.paneSnapshot(args.paneId);
    await requireOwned(ctx, [pane], `Piping pane ${pane.id}`);
    const shell = args.path !== undefined ? `cat >> ${shellQuote(args.path)}` : args.command;
    if (shell !== undefined) {
      if (pane.piped) throw alreadyPiped(pane.id);
      // The path is checked first (a shell job, during which tmux runs other clients'
      // commands), then, at the very instant of the act, that no pipe was opened meanwhile.
      const conditions: TmuxCondition[] = [{ target: pane.id, format: NO_PIPE }];
      if (args.path !== undefined) {
        conditions.unshift({ target: pane.id, format: appendable(args.path), shell: true });
      }
      // tmux expands pipe-pane's command as a format: `#` is doubled so it stays text.
      const { failed } = await runIf(ctx, conditions, [
        ["pipe-pane", "-t", pane.id, "--", escapeFormat(shell)],
      ]);
      if (failed === conditions.length - 1) {
        throw alreadyPiped(pane.id, " (opened at that instant)");
      }
      if (failed !== null && args.path !== undefined) await unappendable(ctx, pane.id, args.path);
    } else if (pane.piped) await ctx.run(["pipe-pane", "-t", pane.id]);
    const now = await paneFields(ctx, pane.id, ["#{pane_pipe}"]);
    if (now === null) {
      throw new ToolFailure(`Pane ${pane.id} went away meanwhile.`, "list_panes lists the panes.");
    }
    const [piped] = now;
    return {
      data: { paneId: pane.id, piped: piped === "1", command: shell ?? null },
      summary: shell !== undefined
        ? `Pane ${pane.id}'s output now goes to: ${shell}`
        : `Pane ${pane.id} is ${piped === "1" ? "still" : "no longer"} piped.`,
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
