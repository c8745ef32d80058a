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
 * @module
 */

import { changeView, runIf, type TmuxCondition, type ViewScope } from "../mcp/guards.ts";
import { OWNER_OPTION, requireOwned } from "../mcp/ownership.ts";
import { RUN_OPTION } from "./run_mark.ts";
import { z } from "zod";
import {
  boundMetadata,
  cutJsonString,
  cutString,
  fitEntries,
  jsonBytes,
  MAX_METADATA_BYTES,
  withOmittedMetadata,
} from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import {
  type AnyTool,
  defineTool,
  READ_ONLY,
  socketNameField,
  type ToolAnnotations,
  type ToolRegistry,
} from "../mcp/registry.ts";
import {
  checkedString,
  flag,
  int,
  listBound,
  metadataBound,
  paneIdSchema,
  sessionIdSchema,
  sessionRefSchema,
} from "../mcp/schemas.ts";
import { shellSays } from "../tmux/if_shell.ts";
import { decodeBytes, escapeFormat } from "../tmux/format.ts";
import { TmuxError, type TmuxRunner } from "../tmux/run.ts";
import { SERVER_ONLY, SESSIONS_ONLY, type Snapshot } from "../tmux/snapshot.ts";
import { changes, envNameSchema, literalArg, paneFields } from "./arguments.ts";
import { parseOptionLines, readOptionListing, unquoteOptionValue } from "./option_lines.ts";

// ---------------------------------------------------------------------------------------------
// Reading tmux's environment back

/** One variable of a tmux environment. */
export interface EnvVariable {
  readonly name: string;
  /** The value, or null for a variable marked to be removed from new processes. */
  readonly value: string | null;
}

/**
 * Parses `show-environment -s`: `NAME="value"; export NAME;` (the value with `$`, `` ` ``,
 * `"` and `\` escaped by a backslash, newlines raw) or `unset NAME;`, one statement a line.
 * Works on bytes so that any byte in a value survives; throws on anything else (never guess).
 */
export function parseShellEnvironment(stdout: Uint8Array): EnvVariable[] {
  const out: EnvVariable[] = [];
  let i = 0;
  const at = (s: string) => {
    for (let k = 0; k < s.length; k++) if (stdout[i + k] !== s.charCodeAt(k)) return false;
    return true;
  };
  const until = (stop: number) => {
    const start = i;
    while (i < stdout.length && stdout[i] !== stop) i++;
    if (i >= stdout.length) throw new Error("show-environment output ended early");
    return decodeBytes(stdout.subarray(start, i));
  };
  const expect = (s: string) => {
    if (!at(s)) throw new Error(`show-environment output: expected ${JSON.stringify(s)}`);
    i += s.length;
  };
  while (i < stdout.length) {
    if (at("unset ")) {
      i += 6;
      const name = until(0x3b); // ;
      expect(";\n");
      out.push({ name, value: null });
      continue;
    }
    const name = until(0x3d); // =
    expect('="');
    const bytes: number[] = [];
    while (i < stdout.length && stdout[i] !== 0x22) {
      if (stdout[i] === 0x5c && i + 1 < stdout.length) i++;
      bytes.push(stdout[i++]);
    }
    expect(`"; export ${name};\n`);
    out.push({ name, value: decodeBytes(new Uint8Array(bytes)) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Scopes and targets

const SCOPES = ["server", "session", "window", "pane"] as const;
type Scope = typeof SCOPES[number];

/** Where an option or hook lives in tmux, as flags for show-/set-options and -hooks. */
interface ScopeFlags {
  readonly flags: string[];
  /** What it is, for messages: "global session options", "window @2"... */
  readonly label: string;
  /** The resolved target id, or null for global and server scopes. */
  readonly targetId: string | null;
  /** The read that found the target (its clients say who watches it), when there is one. */
  readonly snapshot?: Snapshot;
}

/**
 * Turns scope, target and global into tmux flags, refusing what tmux would silently read
 * some other way: a missing target (tmux would pick a "best" session on its own), a target
 * with global (tmux ignores the target), a target that does not exist (looked up in a read of
 * what the scope names: the sessions, the windows, or that pane).
 */
async function scopeFlags(
  ctx: TmuxContext,
  scope: Scope,
  target: string | null | undefined,
  global: boolean,
  what: "options" | "hooks",
): Promise<ScopeFlags> {
  const hasTarget = target !== undefined && target !== null;
  if (scope === "server") {
    if (hasTarget) {
      throw new ToolFailure(
        `Server ${what} have no target; got ${JSON.stringify(target)}.`,
        `Drop target, or choose scope session, window or pane.`,
      );
    }
    return what === "options"
      ? { flags: ["-s"], label: "server options", targetId: null }
      : { flags: ["-g"], label: "global hooks", targetId: null };
  }
  if (global && hasTarget) {
    throw new ToolFailure(
      `Global ${what} have no target, and tmux would ignore ${JSON.stringify(target)}.`,
      `Drop target to read the global ${what}, or drop global for the ${scope}'s own.`,
    );
  }
  if (global) {
    return scope === "session"
      ? { flags: ["-g"], label: `global session ${what}`, targetId: null }
      : { flags: ["-g", "-w"], label: `global window ${what}`, targetId: null };
  }
  if (!hasTarget) {
    throw new ToolFailure(
      `Which ${scope}? ${scope[0].toUpperCase()}${scope.slice(1)} ${what} need a target.`,
      `Pass target (${
        scope === "session" ? "a session id or name" : scope === "window" ? "@N" : "%N"
      }), or global: true for the global ${what}.`,
    );
  }
  switch (scope) {
    case "session": {
      const snapshot = await ctx.snapshot(SESSIONS_ONLY);
      const s = ctx.session(snapshot, target);
      return { flags: ["-t", s.id], label: `session ${s.id}`, targetId: s.id, snapshot };
    }
    case "window": {
      const { snapshot, window: w } = await ctx.windowAlone(target);
      return { flags: ["-w", "-t", w.id], label: `window ${w.id}`, targetId: w.id, snapshot };
    }
    case "pane": {
      const { snapshot, pane: p } = await ctx.paneSnapshot(target);
      return { flags: ["-p", "-t", p.id], label: `pane ${p.id}`, targetId: p.id, snapshot };
    }
  }
}

const scopeSchema = z.enum(SCOPES);

/** Option names tmux has, plus user options (`@name`); an optional array index. */
const optionNameSchema = z.string().regex(
  /^(?:@[A-Za-z0-9_.-]{1,128}|[a-z][a-z0-9-]{0,63})(?:\[\d{1,5}\])?$/,
  "an option name such as status-left, @my-option or status-format[1]",
);

/** Hook names are lower-case words with dashes; an optional array index. */
const HOOK_NAME = /^[a-z][a-z0-9-]{0,63}(?:\[(\d{1,5})\])?$/;

// ---------------------------------------------------------------------------------------------
// Options

/** Whether tmux refused a name it does not know (it says "invalid option" for hooks too). */
function unknownName(error: unknown): error is TmuxError {
  return error instanceof TmuxError && /^(invalid|unknown|ambiguous) option/.test(error.message);
}

function noSuch(kind: "option" | "hook", name: string | undefined, error: TmuxError): ToolFailure {
  return new ToolFailure(
    `tmux has no ${kind} ${JSON.stringify(name)} (${error.message}).`,
    kind === "option"
      ? "show_options lists the options of a scope."
      : "show_hooks lists the hooks tmux knows.",
  );
}

/** Runs a command that names an option or hook, refusing a name tmux does not know. */
async function runNamed(
  ctx: TmuxContext,
  argv: string[],
  kind: "option" | "hook",
  name: string | undefined,
): Promise<Uint8Array> {
  try {
    return await ctx.run(argv);
  } catch (error) {
    throw unknownName(error) ? noSuch(kind, name, error) : error;
  }
}

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
async function optionTable(ctx: TmuxContext, base: string): Promise<OptionTable | null> {
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
function checkOptionScope(
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
function baseName(name: string): string {
  return name.replace(/\[\d+\]$/, "");
}

const optionEntry = z.strictObject({
  name: z.string(),
  index: int().nullable().describe("Array index for array options (status-format[1]), else null."),
  value: z.string().describe("The value exactly as stored (tmux's quoting undone)."),
  inherited: z.boolean().describe("Not set here: inherited from a parent scope."),
  ...metadataBound,
});

type OptionEntry = z.infer<typeof optionEntry>;

/**
 * Longest single option value show_option and set_option return before cutting it, in bytes
 * of JSON (escapes counted): the value travels twice in a result (`value` and its entry), so
 * each copy gets under half the bound.
 */
function maxOptionValueBytes(ctx: TmuxContext): number {
  return Math.min(65_536, Math.floor((ctx.config.maxResultBytes - 4_096) / 2));
}

/** A value as a summary shows it: its start, quoted; the result holds the rest. */
function shownValue(value: string, bytes = 200): string {
  const cut = cutString(value, bytes);
  return `${JSON.stringify(cut.text)}${cut.omittedBytes > 0 ? "…" : ""}`;
}

/** Most entries of an array a set_option summary shows; its result holds them all. */
const SHOWN_ENTRIES = 3;

/**
 * What set_option says it stored. Given no index, tmux replaces an array option
 * (terminal-features, status-format...) whole, the value split at the array's separator into
 * its entries, and `append` adds entries at its end: the summary says what the array holds.
 */
function storedSummary(
  name: string,
  append: boolean,
  entries: readonly OptionEntry[],
  one: OptionEntry | null,
  label: string,
): string {
  if (one) return `${name} = ${shownValue(one.value)} in ${label}.`;
  if (/\[\d+\]$/.test(name)) return `${name} is not set in ${label}.`;
  const shown = append ? entries.slice(-SHOWN_ENTRIES) : entries.slice(0, SHOWN_ENTRIES);
  const listed =
    (shown.length < entries.length ? `the ${append ? "last" : "first"} ${shown.length}: ` : "") +
    shown.map((e) => `[${e.index}] ${shownValue(e.value, 80)}`).join(", ");
  return (entries.length === 0
    ? `${name} has no entries in ${label}`
    : `${name}: ${entries.length} entr${entries.length === 1 ? "y" : "ies"} (${listed}) in ` +
      label) +
    (append ? "." : "; set without an index, it replaced the whole array.");
}

/**
 * Options at `where`: the one named, or (no name) every one tmux vouches for, with the number
 * of lines of its listing it would not vouch for (see {@link readOptionListing}).
 */
async function readOptions(
  ctx: TmuxContext,
  where: ScopeFlags,
  name: string | undefined,
  inherited: boolean,
  maxValueBytes: number,
): Promise<{ entries: OptionEntry[]; unvouched: number }> {
  const argv = ["show-options", ...where.flags];
  if (inherited) argv.push("-A");
  let out: Uint8Array;
  try {
    out = await ctx.read(name === undefined ? argv : [...argv, "--", name]);
  } catch (error) {
    // tmux says "invalid option" for an unset user option and an unknown name alike.
    if (unknownName(error) && name?.startsWith("@")) return { entries: [], unvouched: 0 };
    throw unknownName(error) ? noSuch("option", name, error) : error;
  }
  const { lines, unvouched } = name === undefined
    ? await readOptionListing((more) => ctx.read(more), argv, decodeBytes(out))
    : { lines: parseOptionLines(decodeBytes(out)), unvouched: 0 };
  const entries = lines.filter((l) => l.raw !== null).map((l) => {
    // Cut by its size in JSON: a value of quotes or control characters takes two to six
    // times its bytes there, and the reply's bound is on JSON.
    const value = cutJsonString(unquoteOptionValue(l.raw!), maxValueBytes);
    return withOmittedMetadata(
      boundMetadata(
        { name: l.name, index: l.index, value: value.text, inherited: l.inherited },
        ["value"],
        maxValueBytes,
      ),
      value.omittedBytes,
    );
  });
  return { entries, unvouched };
}

/** The one entry an indexed name (`status-format[1]`) reads back, if it is set. */
function indexedEntry(name: string, entries: readonly OptionEntry[]): OptionEntry | null {
  const m = /\[(\d+)\]$/.exec(name);
  if (!m) return null;
  return entries.find((e) => e.index === Number(m[1])) ?? null;
}

/** One option read back: its entries, and the entry of a non-array option. */
async function readOne(
  ctx: TmuxContext,
  where: ScopeFlags,
  name: string,
  includeInherited: boolean,
): Promise<{ entries: OptionEntry[]; scalar: OptionEntry | null }> {
  const index = /\[(\d+)\]$/.exec(name);
  // Asked for one index, tmux prints one it does not hold as set to '': the array is read
  // whole and only that index kept, if it is there.
  const read = await readOptions(
    ctx,
    where,
    index === null ? name : baseName(name),
    includeInherited,
    maxOptionValueBytes(ctx),
  );
  const entries = index === null
    ? read.entries
    : read.entries.filter((e) => e.index === Number(index[1]));
  return { entries, scalar: entries.length === 1 && entries[0].index === null ? entries[0] : null };
}

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

/**
 * The owner mark says which server created a pane; only that server writes it, when it
 * creates the pane. Written by a tool, a pane would pass for another's (and set at a window,
 * session or global level, where every pane below inherits it, for everyone's at once), and
 * `--own-panes-only` would fence nothing.
 */
function refuseMarks(name: string): void {
  const base = name.replace(/\[\d+\]$/, "");
  if (base === OWNER_OPTION) {
    throw new ToolFailure(
      `${OWNER_OPTION} is the mark a tmux-mcp server puts on the panes it creates; no tool sets ` +
        "or unsets it.",
      "Create the panes to work in (create_window, split_window, create_session): they carry " +
        "this server's mark.",
    );
  }
  // Cleared or forged (at any scope: a server's value shows through every pane's), it would
  // let a run_command type into another's command, or keep every pane busy.
  if (base === RUN_OPTION) {
    throw new ToolFailure(
      `${RUN_OPTION} marks a pane busy with a run_command's command, for every tmux-mcp server; ` +
        "no tool sets or unsets it.",
      "get_command_result says when the command has ended; the mark goes with it.",
    );
  }
}

/**
 * An alias is looked up before a command's name, for every client alike: an alias named
 * send-keys or capture-pane would rewrite the commands this server, every other tmux-mcp
 * server (read-only ones too) and a person send, so that a read types or a keystroke lands in
 * a watched pane, past every guard.
 */
function refuseCommandAlias(name: string): void {
  if (baseName(name) !== "command-alias") return;
  throw new ToolFailure(
    "command-alias is not set, appended to or unset by any tool: an alias rewrites the tmux " +
      "commands every client sends (this server's, other tmux-mcp servers' and a person's), " +
      "which would walk around every guard.",
    "show_option reads the aliases; a person can change them in their tmux configuration.",
  );
}

/**
 * Window options a status line shows for every window of its session, not only the current
 * one: how its entry is drawn, and the name it shows (automatic-rename renames the window).
 */
const LISTED = new Set([
  "window-status-activity-style",
  "window-status-bell-style",
  "window-status-current-format",
  "window-status-current-style",
  "window-status-format",
  "window-status-last-style",
  "window-status-separator",
  "window-status-style",
  "automatic-rename",
  "automatic-rename-format",
]);

/**
 * What a person would see change when a session or window option is set at `where`: that
 * session, that window (and, for an option of its status line entry, every session it is
 * in), the window of that pane, or (global options) every session and window.
 */
async function optionView(
  ctx: TmuxContext,
  where: ScopeFlags,
  scope: Scope,
  name: string,
): Promise<{ snapshot: Snapshot; scope: ViewScope }> {
  if (where.snapshot === undefined || where.targetId === null) {
    const snapshot = await ctx.snapshot(SESSIONS_ONLY);
    return { snapshot, scope: { everything: snapshot.sessions[0]?.id ?? "" } };
  }
  const id = where.targetId;
  return {
    snapshot: where.snapshot,
    scope: scope === "session"
      ? { sessions: [id] }
      : scope === "window"
      ? { windows: [id], ...(LISTED.has(name) ? { listedWindows: [id] } : {}) }
      : { windowsOf: [id] },
  };
}

/**
 * Options tmux reads only when it makes something, so a change reaches what is made from now
 * on while what exists keeps what it was made with (each measured on tmux 3.3a): a pane's
 * history limit is fixed when the pane is created (a respawn keeps it), the TERM its program
 * gets when the program starts, a window's index when the window is created, and a client's
 * terminal description when the client attaches. `made` says to what the change applies.
 */
const FOR_NEW: Readonly<Record<string, { kind: "pane" | "window" | "client"; made: string }>> = {
  "history-limit": { kind: "pane", made: "panes created" },
  "default-terminal": { kind: "pane", made: "panes created or respawned" },
  "base-index": { kind: "window", made: "windows created" },
  "terminal-features": { kind: "client", made: "clients that attach" },
  "terminal-overrides": { kind: "client", made: "clients that attach" },
};

/**
 * For an option in {@link FOR_NEW}: says that the change applies to what is made from now on,
 * and how many existing panes, windows or (a person's) clients in its reach keep what they had.
 */
async function forNewNote(ctx: TmuxContext, name: string, where: ScopeFlags): Promise<string> {
  const applies = FOR_NEW[name];
  if (applies === undefined) return "";
  const { kind, made } = applies;
  const within = where.targetId === null ? ["-a"] : ["-t", where.targetId];
  const argv = kind === "client"
    ? ["list-clients", "-F", "#{client_control_mode}"]
    : kind === "window"
    ? ["list-windows", ...within, "-F", "0"]
    : ["list-panes", ...(where.targetId === null ? [] : ["-s"]), ...within, "-F", "0"];
  // Only the count is lost if this read fails: the note stays true without it.
  const listed = await ctx.read(argv).catch(() => new Uint8Array());
  const n = new TextDecoder().decode(listed).split("\n").filter((l) => l === "0").length;
  const there = kind === "client"
    ? "attached"
    : where.targetId === null
    ? "on this server"
    : `in ${where.label}`;
  const existing = n === 0
    ? ""
    : n === 1
    ? `; the ${kind} already ${there} keeps what it had`
    : `; the ${n} ${kind}s already ${there} keep what they had`;
  return ` tmux applies ${name} only to ${made} from now on${existing}.`;
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
    const argv = ["set-option", ...where.flags];
    if (args.unset) argv.push("-u");
    if (args.append) argv.push("-a");
    argv.push("--", args.name);
    if (args.value !== undefined) argv.push(args.value);
    if (table === null || table === "server") {
      await runNamed(ctx, argv.map(literalArg), "option", args.name);
    } else {
      // A session's or a window's option changes what its clients show (the status line, a
      // layout with pane borders, where typed keys go): guarded like any view change.
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

const hookEntry = z.strictObject({
  hook_name: z.string().describe("Hook name (e.g. 'pane-exited')."),
  command: z.string().describe("tmux command string registered at that index, as tmux prints it."),
  index: int().nullable().describe(
    "Array index (every tmux hook is an array; a plain set-hook lands at 0).",
  ),
});

type HookEntry = z.infer<typeof hookEntry>;

/** Parses `show-hooks` output: `name[i] command` per set entry; a bare `name` is unset. */
function hookEntries(text: string): HookEntry[] {
  return parseOptionLines(text).filter((l) => l.raw !== null).map((l) => ({
    hook_name: l.name,
    command: l.raw!,
    index: l.index,
  }));
}

/** The snake_case, nullable scope arguments of the seed. */
const seedHookInput = {
  scope: scopeSchema.nullable().default(null),
  target: checkedString(4096).nullable().default(null).describe("Session, @N or %N"),
  global_: z.boolean().default(false),
};

function inferHookScope(scope: Scope | null, target: string | null): Scope {
  if (scope !== null) return scope;
  if (target === null) return "server";
  if (/^%\d+$/.test(target)) return "pane";
  if (/^@\d+$/.test(target)) return "window";
  return "session";
}

async function readHooks(
  ctx: TmuxContext,
  flags: string[],
  name: string | undefined,
): Promise<HookEntry[]> {
  const argv = ["show-hooks", ...flags, ...(name ? ["--", name] : [])];
  return hookEntries(decodeBytes(await runNamed(ctx, argv, "hook", name)));
}

/** Hooks of a scope; "server" means every global hook, from both of tmux's global trees. */
async function hooksAt(
  ctx: TmuxContext,
  where: ScopeFlags,
  scope: Scope,
  name: string | undefined,
): Promise<HookEntry[]> {
  const entries = await readHooks(ctx, where.flags, name);
  if (scope !== "server" || name !== undefined) return entries;
  // tmux keeps session hooks in the global session tree and window/pane hooks in the global
  // window tree; `show-hooks -g` lists only the first.
  const seen = new Set(entries.map((e) => `${e.hook_name}[${e.index}]`));
  for (const e of await readHooks(ctx, ["-g", "-w"], undefined)) {
    if (!seen.has(`${e.hook_name}[${e.index}]`)) entries.push(e);
  }
  return entries;
}

function checkHookName(name: string): { base: string; index: number | null } {
  const m = HOOK_NAME.exec(name);
  if (!m) {
    // The seed contract puts no bound on hook_name: echo only its start.
    const shown = cutString(name, 80);
    throw new ToolFailure(
      `${JSON.stringify(shown.text)}${
        shown.omittedBytes > 0 ? ` (and ${shown.omittedBytes} more bytes)` : ""
      } is not a hook name.`,
      "Hook names look like pane-exited or session-renamed[2]; show_hooks lists them.",
    );
  }
  return { base: name.replace(/\[\d+\]$/, ""), index: m[1] === undefined ? null : Number(m[1]) };
}

/** Where tmux keeps a hook: with the session options, or with the window and pane options. */
type HookTree = "session" | "window";

/**
 * Which of tmux's trees holds hook `base`, from tmux's own lists (`show-hooks -g` names the
 * session hooks, `show-hooks -gw` the window and pane ones); refused when neither names it.
 * tmux's `show-hooks NAME` and `set-hook NAME` take any option's name (`status`,
 * `default-command`), so a name is checked here, not left to them.
 */
async function hookTree(ctx: TmuxContext, base: string): Promise<HookTree> {
  const names = async (flags: string[]) =>
    new Set(hookNames(decodeBytes(await ctx.read(["show-hooks", ...flags]))));
  const [sessionHooks, windowHooks] = await Promise.all([names(["-g"]), names(["-g", "-w"])]);
  if (windowHooks.has(base)) return "window";
  if (sessionHooks.has(base)) return "session";
  throw new ToolFailure(
    `${JSON.stringify(base)} is not a hook name (tmux has no hook by that name${
      OPTION_LIKE.test(base) ? "; it may be an option: show_option reads those" : ""
    }).`,
    "Hook names look like pane-exited or session-renamed[2]; show_hooks lists them.",
  );
}

/** Names in `show-hooks` output: `name` or `name[i] command` per line. */
function hookNames(text: string): string[] {
  return text.split("\n").filter((l) => l !== "").map((l) => l.replace(/[[ ].*$/, ""));
}

/** A lower-case dashed word, the shape of option names too. */
const OPTION_LIKE = /^[a-z][a-z0-9-]*$/;

/**
 * Refuses a scope tmux would not keep hook `base` at: told to set a window hook on a session,
 * tmux puts it on the session's current window; a session hook asked of a window or pane goes
 * to the session. Either way the reply would name a place the hook is not.
 */
function checkHookScope(base: string, tree: HookTree, scope: Scope): void {
  if (scope === "server") return;
  if (tree === "session" && scope === "session") return;
  if (tree === "window" && scope !== "session") return;
  throw new ToolFailure(
    tree === "session"
      ? `${base} is a session hook: tmux keeps it per session or globally, not per ${scope}.`
      : `${base} is a window hook: tmux keeps it per window, per pane or globally, not per ` +
        "session.",
    tree === "session"
      ? 'Use scope "session" with a session as target, or scope "server".'
      : 'Use scope "window" (target @N) or "pane" (target %N), or "server" for every window.',
  );
}

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

const envEntry = z.strictObject({
  name: z.string(),
  value: z.string().nullable().describe("The value, or null when marked for removal."),
  removed: z.boolean().describe(
    "Marked to be removed from the environment of new processes (tmux shows it as -NAME).",
  ),
  ...metadataBound,
});

/** The session named (its id), or null for the global environment; refused with no server. */
async function environmentSession(
  ctx: TmuxContext,
  session: string | undefined,
): Promise<string | null> {
  if (session !== undefined) return ctx.session(await ctx.snapshot(SESSIONS_ONLY), session).id;
  ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
  return null;
}

/** Longest environment value returned before it is cut. */
const MAX_ENV_VALUE_BYTES = 16_384;

async function readEnvironment(ctx: TmuxContext, sessionId: string | null) {
  const out = await ctx.read([
    "show-environment",
    "-s",
    ...(sessionId === null ? ["-g"] : ["-t", sessionId]),
  ]);
  return parseShellEnvironment(out).map((v) =>
    boundMetadata(
      { name: v.name, value: v.value, removed: v.value === null },
      ["value"],
      MAX_ENV_VALUE_BYTES,
    )
  );
}

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

/** Quotes text as one POSIX shell word. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * Holds in tmux at the instant of the act: the pane has no pipe open. tmux's `pipe-pane`
 * closes the pane's pipe before it opens one (with `-o` too, which then opens none), and the
 * open pipe may be a person's log of the pane: it is never replaced unasked.
 */
const NO_PIPE = "#{!=:#{pane_pipe},1}";

/**
 * A `/bin/sh` command (for `if-shell`) that exits 0 when `path` can be opened for appending,
 * as `cat >>` opens it: a `cat` that cannot open its file ends at once, yet tmux shows the
 * pipe open until the pane next prints, so the pipe's own state says nothing. Opening creates
 * a missing file, as `cat >>` would a moment later. A FIFO is not opened (that waits for a
 * reader, and tmux's answer with it): write permission is asked instead. tmux expands the
 * command as a format first: `#` is doubled so it stays text.
 */
function appendable(path: string): string {
  const p = shellQuote(path);
  return escapeFormat(`if [ -p ${p} ]; then [ -w ${p} ]; else : >> ${p}; fi`);
}

/** Whether the `/bin/sh` command `test` exits 0, run by tmux (on the tmux server's machine). */
function shellTest(ctx: TmuxContext, paneId: string, test: string): Promise<boolean> {
  return shellSays(ctx.runner, ctx.address, paneId, escapeFormat(test), ctx.signal);
}

/** The refusal of a path `cat >>` cannot open, saying why (asked on the tmux server's machine). */
async function unappendable(ctx: TmuxContext, paneId: string, path: string): Promise<never> {
  const folder = path.slice(0, path.lastIndexOf("/")) || "/";
  const why = await shellTest(ctx, paneId, `[ -d ${shellQuote(path)} ]`)
    ? "it is a folder"
    : await shellTest(ctx, paneId, `[ -d ${shellQuote(folder)} ]`)
    ? "it cannot be opened for appending (no permission to write it or its folder)"
    : `its folder ${JSON.stringify(folder)} does not exist`;
  throw new ToolFailure(
    `Cannot pipe pane ${paneId}'s output to ${JSON.stringify(path)}: ${why}. Nothing was piped.`,
    "Give a path in a folder that exists and may be written, on the machine tmux runs on.",
  );
}

/** The refusal of a second pipe: opening one would close the pane's pipe, perhaps a person's. */
function alreadyPiped(paneId: string, when = ""): ToolFailure {
  return new ToolFailure(
    `Pane ${paneId}'s output is already piped${when} (perhaps a person's log of it); a new ` +
      "pipe would close that one. Nothing was changed.",
    `If replacing it is really wanted, pipe_pane {paneId: "${paneId}", stop: true} ends it ` +
      "first.",
  );
}

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
