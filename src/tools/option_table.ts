/**
 * Where tmux keeps an option: the table (server, session, window, pane) it picks from the
 * name alone, asked of tmux once per server and name, and the refusal of a scope tmux would
 * not keep the option at (it would read or write another table's value instead).
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

/** Where tmux keeps each built-in option, by server and name (see {@link optionTable}). */
const knownTables = new WeakMap<TmuxRunner, Map<string, OptionTable>>();

/** Enough for every built-in option of a few servers; past it the map starts again. */
const MAX_KNOWN_TABLES = 2_048;

function tablesFor(runner: TmuxRunner): Map<string, OptionTable> {
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
 */
export async function optionTable(ctx: TmuxContext, base: string): Promise<OptionTable | null> {
  if (base.startsWith("@")) return null;
  // A built-in option's table is tmux's (it comes with the tmux that runs): asked once per
  // server and name. A name tmux does not know is asked afresh each time.
  const known = tablesFor(ctx.runner);
  const key = `${ctx.socketLabel}\0${base}`;
  let table = known.get(key);
  if (table !== undefined) return table;
  try {
    await ctx.read(["show-options", "-p", "-t", NO_PANE, "--", base]);
    table = "server";
  } catch (error) {
    if (unknownName(error)) {
      throw new ToolFailure(
        `tmux has no option ${JSON.stringify(base)}.`,
        "show_options lists the options of a scope (hooks: show_hooks and set_hook).",
      );
    }
    const lacked = error instanceof TmuxError
      ? /^no such (session|window|pane): /.exec(error.message)?.[1]
      : undefined;
    if (lacked === undefined) throw error;
    table = lacked as OptionTable;
  }
  if (known.size >= MAX_KNOWN_TABLES) known.clear();
  known.set(key, table);
  return table;
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

/** An option name without its array index. */
export function baseName(name: string): string {
  return name.replace(/\[\d+\]$/, "");
}
