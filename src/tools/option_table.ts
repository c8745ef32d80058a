/**
 * Where tmux keeps an option: the table (server, session, window, pane) it picks from the
 * name alone, asked of tmux once per server and name; the refusal of a name tmux would take
 * for another (any unambiguous start of a built-in option's name); and the refusal of a scope
 * tmux would not keep the option at (it would read or write another table's value instead).
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { type Scope, unknownName } from "./setting_scope.ts";

/**
 * The table tmux keeps an option in. tmux picks it from the name alone, whatever -s, -w or -p
 * say: `set-option -s status off` sets the status of the session tmux takes as current,
 * `set-option -t main escape-time 7` the server's, and `-p` on an option tmux keeps per window
 * only sets the pane's whole window. "pane" is a window option tmux also keeps per pane.
 */
type OptionTable = "server" | "session" | "window" | "pane";

/**
 * What tmux answered about a built-in option's name: where it keeps the option, or (a start of
 * another option's name) the full name it takes it for.
 */
type KnownOption = { readonly table: OptionTable } | { readonly takenFor: string };

/** Each built-in option name asked about, by server and name (see {@link optionTable}). */
const knownTables = new WeakMap<TmuxRunner, Map<string, KnownOption>>();

/** Enough for every built-in option of a few servers; past it the map starts again. */
const MAX_KNOWN_TABLES = 2_048;

function tablesFor(runner: TmuxRunner): Map<string, KnownOption> {
  let map = knownTables.get(runner);
  if (!map) {
    map = new Map();
    knownTables.set(runner, map);
  }
  return map;
}

/**
 * A pane target no pane can match (a pane id is `%` and digits): tmux finds no target, and
 * says which kind it lacked.
 */
const NO_PANE = "%none";

/**
 * Where tmux keeps option `base`, asked of tmux for that one name: `show-options -p -t %none
 * NAME` prints a server option (its table needs no target), and for any other says what its
 * table needed and did not find: "no such session", "no such window", or (a window option tmux
 * also keeps per pane, -p given) "no such pane". tmux's lists (`show-options -s`, `-g`,
 * `-gw`) cannot answer this: a user option's name may hold a newline, which they print raw,
 * so a pane can plant a line that reads as any built-in option of any table. Null for a user
 * option (`@name`), which lives wherever it is set. Refused when tmux has no such option.
 *
 * Refused too when `base` is not an option's full name: tmux 3.3a takes any unambiguous start
 * of a built-in option's name for that option (`command-alia` is command-alias, `default-si`
 * default-size), and a check keyed on the name given would miss the option tmux sets: with
 * only full names let through, every check by name (the refusal of command-alias, the status
 * line's entries, default-size's area) is of the option tmux sets.
 */
export async function optionTable(ctx: TmuxContext, base: string): Promise<OptionTable | null> {
  if (base.startsWith("@")) return null;
  // A built-in option's name and table are tmux's (they come with the tmux that runs): asked
  // once per server and name. A name tmux does not know is asked afresh each time.
  const known = tablesFor(ctx.runner);
  const key = `${ctx.socketLabel}\0${base}`;
  let option = known.get(key);
  if (option === undefined) {
    const name = await fullName(ctx, base);
    option = name === base ? { table: await tableOf(ctx, base) } : { takenFor: name };
    if (known.size >= MAX_KNOWN_TABLES) known.clear();
    known.set(key, option);
  }
  if ("takenFor" in option) {
    throw new ToolFailure(
      `tmux would take ${JSON.stringify(base)} for the option ${option.takenFor} (it reads the ` +
        "start of an option's name as the whole name); option names are taken only in full.",
      `Give the full option name: ${option.takenFor}.`,
    );
  }
  return option.table;
}

/**
 * The full name of the built-in option tmux takes `base` for: `show-options -g NAME` prints
 * the option under its full name (`command-alias[0] ...`, an empty array's name alone), from
 * the global or server options, which hold every built-in option. The first line is tmux's
 * own: a user option is never printed for a name without `@`.
 */
async function fullName(ctx: TmuxContext, base: string): Promise<string> {
  let out: Uint8Array;
  try {
    out = await ctx.read(["show-options", "-g", "--", base]);
  } catch (error) {
    if (unknownName(error)) {
      throw new ToolFailure(
        /^ambiguous/.test(error.message)
          ? `tmux has no option ${JSON.stringify(base)}, and would take it for no one option ` +
            "either: it starts the names of several."
          : `tmux has no option ${JSON.stringify(base)}.`,
        "show_options lists the options of a scope (hooks: show_hooks and set_hook).",
      );
    }
    throw error;
  }
  const named = /^([a-z][a-z0-9-]*)(?:\[\d+\])?(?: |\n|$)/.exec(new TextDecoder().decode(out));
  if (named === null) {
    throw new ToolFailure(
      `tmux did not name the option it takes ${JSON.stringify(base)} for.`,
      "show_options lists the options of a scope.",
    );
  }
  return named[1];
}

/** Where tmux keeps built-in option `base`, a full name (see {@link optionTable}). */
async function tableOf(ctx: TmuxContext, base: string): Promise<OptionTable> {
  try {
    await ctx.read(["show-options", "-p", "-t", NO_PANE, "--", base]);
    return "server";
  } catch (error) {
    const lacked = error instanceof TmuxError
      ? /^no such (session|window|pane): /.exec(error.message)?.[1]
      : undefined;
    if (lacked === undefined) throw error;
    return lacked as OptionTable;
  }
}

/**
 * Refuses a scope tmux would not keep option `base` at: tmux would read or write it in the
 * table it belongs to (another session's, a whole window's, the server's) and the reply would
 * name a place the option is not. `global` with scope pane means the global window options.
 */
export function checkOptionScope(
  base: string,
  table: OptionTable | null,
  scope: Scope,
  global: boolean,
  verb: "set" | "read",
): void {
  if (table === null || table === scope) return;
  if (table === "pane" && scope === "window") return;
  if (table === "window" && scope === "pane" && global) return;
  const instead = table === "server"
    ? "the server's one value"
    : table === "session"
    ? scope === "server"
      ? "the session tmux takes as current"
      : `the whole session of that ${scope}`
    : scope === "pane"
    ? "the pane's whole window"
    : scope === "session"
    ? "that session's current window"
    : "the window tmux takes as current";
  const kept = {
    server: "a server option: tmux keeps one value for the whole server",
    session: "a session option: tmux keeps it per session or globally",
    window: "a window option: tmux keeps it per window or globally",
    pane: "a window option: tmux keeps it per window, per pane or globally",
  }[table];
  throw new ToolFailure(
    `${base} is ${kept}, not ${
      scope === "server" ? "as a server option" : `per ${scope}`
    }; tmux would have ${verb} ${instead} instead.`,
    {
      server: 'Use scope "server".',
      session: 'Use scope "session" with a session as target, or global: true for every ' +
        "session.",
      window: 'Use scope "window" with target @N, or global: true for every window.',
      pane: 'Use scope "window" (target @N) or "pane" (target %N), or global: true for every ' +
        "window.",
    }[table],
  );
}
