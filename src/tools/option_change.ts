/**
 * What setting an option may change and whom it reaches: the options no tool sets (the
 * owner and run marks, the agent marks, command aliases) or sets but to off (those by which
 * tmux ends sessions or itself), what a person would see change (guarded as a view change; an
 * option that opens their terminal to a pane's programs as one of every session and window),
 * and the options tmux applies only to what is made from now on.
 *
 * @module
 */

import type { ViewScope } from "../mcp/view_guard.ts";
import { decodeBytes } from "../tmux/format.ts";
import { OWNER_OPTION } from "../mcp/ownership.ts";
import { MESSAGE_OPTION, PANE_OPTION, STATE_OPTION } from "../hooks/marks.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { SESSIONS_ONLY, type Snapshot } from "../tmux/snapshot.ts";
import { checkTitleText } from "./arguments.ts";
import { clientLabel, isPerson } from "../tmux/identity.ts";
import {
  baseName,
  ENDING_OPTIONS,
  leavesOff,
  reachesListing,
  TERMINAL_OPTIONS,
} from "../tmux/option_reach.ts";
import { RUN_OPTION } from "./run_mark.ts";
import { nameCharacter } from "./typing.ts";
import type { Scope, ScopeFlags } from "./setting_scope.ts";
import { checkFormatNumbers, checkWindowCells } from "./tmux_limits.ts";
import { formatUseOf } from "../tmux/format_numbers.ts";
import { defaultSizeTaken, defaultSizeWords, readDefaultSize } from "./default_size.ts";

/**
 * Refuses the marks no tool writes, at any scope.
 *
 * The owner mark says which server created a pane; only that server writes it, when it
 * creates the pane. Written by a tool, a pane would pass for another's (and set at a window,
 * session or global level, where every pane below inherits it, for everyone's at once), and
 * `--own-panes-only` would fence nothing.
 */
export function refuseMarks(name: string): void {
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
  // The agent marks are written by `tmux-mcp hook` on its own agent's window only, and read by
  // the status line its config draws, tmux://agents and check_agents: cleared, a person no
  // longer sees that another agent needs them; forged (globally: on every window), they see
  // "needs you" where nothing waits.
  if (AGENT_MARKS.includes(base)) {
    throw new ToolFailure(
      `${base} is among the marks \`tmux-mcp hook\` puts on an agent's window (${
        AGENT_MARKS.join(", ")
      }) for a person's status line; no tool sets or unsets them.`,
      "The hook marks the window of the agent it runs for; a person clears a mark by looking " +
        "at that window.",
    );
  }
  // The rest of the namespace holds the marks tmux-mcp servers leave for one another (a lend of
  // window-size, channel notes) and any it names later: forged, a creation would take a
  // person's `latest` for a lent one and set their window-size to manual, or signal_channel's
  // warnings would lie.
  if (base.startsWith(RESERVED_PREFIX)) {
    throw new ToolFailure(
      `${base} is among the names tmux-mcp keeps for the marks its servers leave for one ` +
        `another (${RESERVED_PREFIX}*); no tool sets or unsets them.`,
      "Choose another name for a user option of your own.",
    );
  }
}

/** The window options `tmux-mcp hook` marks an agent's window with. */
const AGENT_MARKS: readonly string[] = [STATE_OPTION, MESSAGE_OPTION, PANE_OPTION];

/** User options tmux-mcp's servers keep for their marks. */
const RESERVED_PREFIX = "@tmux-mcp-";

/**
 * Control characters no option value may hold: C0 but tab and newline (a value may span
 * lines; neither starts or ends an escape sequence), DEL and C1.
 */
// deno-lint-ignore no-control-regex
const TERMINAL_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/**
 * The longest value set_option stores, appended to or not (a value is given whole up to the same,
 * the schema's bound): any value may be the subject of a format that multiplies it
 * ({@link checkOptionValue}), so it is kept to what tmux builds in a fraction of a second even
 * multiplied by the most a format may multiply it (format_numbers.ts' GROWTH_MAXIMUM: 16 MB;
 * without it, values appended to without end were 264 MB under one substitution).
 */
export const OPTION_VALUE_MAXIMUM = 65_536;

/** What every refusal of a value says besides its reason. */
const UNCHANGED = "Nothing was changed.";

/**
 * Refuses a value tmux 3.3a would crash or freeze on. Any option's value may be expanded as a
 * format: the format options when tmux draws or renames (a window's automatic-rename-format
 * on its own timer, with no client attached), any other wherever `#{E:...}` names it; so every
 * value is checked, and an appended one together with what it is appended to (at that scope,
 * as tmux appends; a style option's with the comma tmux puts between). A `default-size` is
 * the size of every window made from then on, and is held to the area every tool holds a
 * window to, read as tmux reads it (appended, with what it is appended to; default_size.ts):
 * `010000x010000` and `10000x10000 ` are a 10000x10000 window to tmux. A value beyond ASCII
 * is refused while a person's terminal would get it raw in its title ({@link checkTitleText}):
 * any option's value may show there, set-titles-string's as the title itself,
 * automatic-rename-format's in the window name it makes, any other where a title format names
 * it (`#{@note}`, `#{E:status-left}`), and that format is the person's.
 * A control character but tab and newline is refused whatever the terminal: tmux 3.3a writes a
 * title as its bytes, so an ESC, BEL or C1 control in a value a title shows starts or ends an
 * escape sequence in the person's terminal (OSC 52 writes its clipboard, ESC c resets it).
 * What would be stored, appended to or not, is held to {@link OPTION_VALUE_MAXIMUM}
 * characters: a value appended to a piece at a time is a subject formats multiply.
 */
export async function checkOptionValue(
  ctx: TmuxContext,
  where: ScopeFlags,
  name: string,
  value: string,
  append: boolean,
): Promise<void> {
  // A status line's format and its parts (status-left, window-status-format...) alone may
  // expand several other values (as tmux's own do): tmux only draws them, and no value may
  // expand them in turn (format_numbers.ts).
  const use = formatUseOf(name);
  checkFormatNumbers(value, `${name}'s value`, UNCHANGED, use);
  const control = TERMINAL_CONTROL.exec(value);
  if (control !== null) {
    throw new ToolFailure(
      `${name}'s value holds ${nameCharacter(control[0])} at character ${control.index}: tmux ` +
        "passes a value raw into a person's terminal title wherever a title format shows it " +
        "(set-titles-string, a theme's #{@option}), and there a control character starts or " +
        "ends an escape sequence.",
      "Remove control characters (tabs and newlines may stay); where the option takes tmux's own " +
        `notation (\\e, C-a), spell keys and escapes out. ${UNCHANGED}`,
    );
  }
  await checkTitleText(ctx, `${name}'s value`, value);
  let stored = value;
  if (append) {
    const read = await ctx.read(["show-options", ...where.flags, "-qv", "--", name]);
    const current = decodeBytes(read).replace(/\n$/, "");
    for (const joined of [`${current}${value}`, `${current},${value}`]) {
      checkFormatNumbers(joined, `${name}'s value with this appended`, UNCHANGED, use);
    }
    // A string option takes the text appended as it is (the comma is a style's).
    stored = `${current}${value}`;
  }
  // After the format checks, whose reasons say more. A value appended to without end is a
  // subject every substitution, quote and loop around it multiplies (format_numbers.ts).
  if (stored.length > OPTION_VALUE_MAXIMUM) {
    throw new ToolFailure(
      `${name}'s value${append ? " with this appended" : ""} would be ${stored.length} ` +
        `characters, more than ${OPTION_VALUE_MAXIMUM}: tmux 3.3a expands a value whenever a ` +
        "format names it, and the substitutions, quotes and loops around it multiply its " +
        "length (s/a/ and 3000 characters over a value of 88 KB built 264 MB and held tmux for " +
        "seconds at each draw of the status line).",
      `Keep a value within ${OPTION_VALUE_MAXIMUM} characters; keep longer text in a file or ` +
        `a buffer. ${UNCHANGED}`,
    );
  }
  // Read as tmux reads it (default_size.ts): tmux takes any value that matches its pattern,
  // leading zeros and trailing text too, and sizes a window by what sscanf makes of it. A value
  // it refuses is left to its own error.
  if (baseName(name) === "default-size" && defaultSizeTaken(stored)) {
    const size = readDefaultSize(stored);
    checkWindowCells(size.width, size.height, `A default-size of ${defaultSizeWords(stored)}`);
  }
}

/**
 * An alias is looked up before a command's name, for every client alike: an alias named
 * send-keys or capture-pane would rewrite the commands this server, every other tmux-mcp
 * server (read-only ones too) and a person send, so that a read types or a keystroke lands in
 * a watched pane, past every guard.
 */
export function refuseCommandAlias(name: string): void {
  if (baseName(name) !== "command-alias") return;
  throw new ToolFailure(
    "command-alias is not set, appended to or unset by any tool: an alias rewrites the tmux " +
      "commands every client sends (this server's, other tmux-mcp servers' and a person's), " +
      "which would walk around every guard.",
    "show_option reads the aliases; a person can change them in their tmux configuration.",
  );
}

/**
 * Refuses turning on, or leaving to be on, an option by which tmux ends sessions or itself
 * ({@link ENDING_OPTIONS}: `destroy-unattached`, `exit-unattached`), at any scope: a session
 * nobody is attached to is nobody's sight, so no view guard would stop it, yet tmux ends it (or,
 * for `exit-unattached`, the server) with every program in it the moment no client is attached,
 * a detached one at once, the agent's own session once the MCP server exits: what kill_session
 * and kill_server (toolset teardown) do, past their guards. Only a value tmux reads as off goes
 * through, or an unset of the global or server value (tmux's default, off); an unset for one
 * session would let it take the global value, which may be on. The name is the full one
 * (optionTable refuses a start of it, which tmux would take for the whole).
 */
export function refuseEnding(
  name: string,
  value: string | undefined,
  unset: boolean,
  scope: Scope,
  global: boolean,
): void {
  const base = baseName(name);
  if (!ENDING_OPTIONS.has(base)) return;
  if (leavesOff(value, unset, scope === "server" || global)) return;
  const ends = base === "exit-unattached"
    ? "the whole tmux server, every session and program in it, the moment no client is " +
      "attached to it"
    : "a session and every program in it the moment no client is attached to it (a detached " +
      "one at once)";
  throw new ToolFailure(
    `${base} is set by no tool but to off (off, no or 0): on, tmux ends ${ends}${
      unset ? ", and unset for one session it takes the global value, which may be on" : ""
    }.`,
    "kill_session and kill_server (toolset teardown) end a session or the server, under " +
      `their guards; a person may turn it on in their tmux configuration. ${UNCHANGED}`,
  );
}

/** The refusal's words for a {@link TERMINAL_OPTIONS} change while a person is attached. */
const TERMINAL_HINT = "Ask the person first, or keep it off (off, no or 0 go through); tmux-mcp " +
  "started with --allow-attended-input lifts this.";

/**
 * What a person would see change when an option is set at `where`: that session, that window
 * or the window of that pane (and, for an option of its status line entry or synchronize-panes,
 * every session it is in: {@link reachesListing}), or (global and server options) every session
 * and window. An option of {@link TERMINAL_OPTIONS} changed to anything but off (`change`:
 * the value and whether it is an unset) reaches every session and window too, wherever it is
 * set: a program's output then reaches the terminal of whoever is shown its pane, and any window
 * is one key away from a person attached anywhere on the server. While a person is attached
 * that is refused here in its own words (unless `--allow-attended-input`), and tmux checks it
 * again at the instant of the change.
 */
export async function optionView(
  ctx: TmuxContext,
  where: ScopeFlags,
  scope: Scope,
  name: string,
  change: { readonly value?: string; readonly unset: boolean },
): Promise<{ snapshot: Snapshot; scope: ViewScope }> {
  const opens = TERMINAL_OPTIONS.has(name) &&
    !leavesOff(change.value, change.unset, where.targetId === null);
  if (opens || where.snapshot === undefined || where.targetId === null) {
    const snapshot = await ctx.snapshot(SESSIONS_ONLY);
    const person = snapshot.clients.find((c) => isPerson(c) && c.windowId);
    if (opens && person && !ctx.config.allowAttendedInput) {
      throw new ToolFailure(
        `${
          change.unset
            ? `Unsetting ${name} in ${where.label} (it takes the value above, which may be on)`
            : `Turning ${name} on in ${where.label}`
        } would let its programs write to a person's ` +
          "terminal past tmux (their clipboard, anywhere on their screen, queries their " +
          "terminal answers) once they look at it, and any window is a key away: client " +
          `${clientLabel(person)} is attached.`,
        TERMINAL_HINT,
      );
    }
    return { snapshot, scope: { everything: snapshot.sessions[0]?.id ?? "" } };
  }
  const id = where.targetId;
  const listed = reachesListing(name);
  return {
    snapshot: where.snapshot,
    scope: scope === "session"
      ? { sessions: [id] }
      : scope === "window"
      ? { windows: [id], ...(listed ? { listedWindows: [id] } : {}) }
      : { windowsOf: [id], ...(listed ? { listedWindowsOf: [id] } : {}) },
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
export async function forNewNote(
  ctx: TmuxContext,
  name: string,
  where: ScopeFlags,
): Promise<string> {
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
