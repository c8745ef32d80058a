/**
 * The hook tools: show_hooks, show_hook and set_hook (registered in settings.ts). A hook runs
 * tmux commands on an event and outlives this server, so set_hook is execute reach.
 *
 * `show_hook` keeps its seed contract (seed 000): snake_case input `hook_name`, `scope`,
 * `target`, `global_` and a nullable `socket_name`; output `entries[{hook_name, command,
 * index}]`, none when the hook is unset, one per array index otherwise.
 *
 * What they ask of tmux is one import below: hook_tree.ts (hooks read back, a name and scope
 * checked) and setting_scope.ts (scope, target and global as tmux flags).
 *
 * @module
 */

import { z } from "zod";
import { fitEntries } from "../mcp/bounds.ts";
import { isNoServer } from "../mcp/errors.ts";
import { type AnyTool, defineTool, READ_ONLY, socketNameField } from "../mcp/tool_spec.ts";
import { checkedString, flag, listBound } from "../mcp/schemas.ts";
import { SERVER_ONLY } from "../tmux/snapshot.ts";
import { literalArg, passableString } from "./arguments.ts";
import { checkSetOrUnset, CONFIGURES } from "./configuring.ts";
import {
  checkHookName,
  checkHookScope,
  hookEntry,
  hooksAt,
  hookTree,
  inferHookScope,
} from "./hook_tree.ts";
import { runNamed, scopeFlags, scopeSchema } from "./setting_scope.ts";
import { checkFormatNumbers } from "./tmux_limits.ts";

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

/** show_hooks. */
export const showHooks = withNullableSocketName(defineTool({
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

/** show_hook (seed 000). */
export const showHook = withNullableSocketName(defineTool({
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

/** set_hook. */
export const setHook = defineTool({
  name: "set_hook",
  title: "Set hook",
  toolset: "execute",
  description: "Set, append or unset a hook (tmux commands run on an event); it outlives this " +
    "server.",
  input: {
    name: checkedString(80, 0),
    command: passableString(16_384).optional(),
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
    let entries;
    try {
      entries = (await hooksAt(ctx, where, args.scope, base)).filter((e) => e.hook_name === base);
    } catch (error) {
      if (!isNoServer(error)) throw error;
      // tmux ran it at once (after-set-hook, or an event the setting brought about), and its
      // command ended the server: the call did what it was asked, and no hook is left.
      const done = args.unset ? "unset" : args.append ? "appended to" : "set";
      return {
        data: { entries: [] },
        summary: `${args.name} was ${done} in ${where.label}; the tmux server on ` +
          `${ctx.socketLabel} then ended, its hooks with it, before they could be read back ` +
          "(a hook's command, such as kill-server, may have ended it).",
      };
    }
    return {
      data: { entries },
      summary: `${base} now has ${entries.length} entr${
        entries.length === 1 ? "y" : "ies"
      } in ${where.label}.`,
    };
  },
});
