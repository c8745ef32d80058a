/**
 * Which tmux options reach what a person sees or sends, by name (tmux 3.3a): the server's view
 * guard (set_option, src/tools/settings.ts and option_change.ts) and the agent hook's guard
 * (src/hooks/view.ts) read the same facts, so that the hook asks about exactly the option changes the server refuses by
 * default where a person is attached. A window's own status-line entry options move with it:
 * move_window (src/tools/placement.ts) and the hook (src/hooks/guard.ts) read them here.
 *
 * @module
 */

import { newGuard, parseRecords, recordFormat } from "./format.ts";

/** An option name without its array index: `status-format[1]` → `status-format`. */
export function baseName(name: string): string {
  return name.replace(/\[\d+\]$/, "");
}

/**
 * The server options that reach no person (tmux 3.3a): whether the server exits once no session
 * is left (then nobody is attached). Every other server option reaches every client at once:
 * how many of a person's copies (`buffer-limit`), messages (`message-limit`, their
 * `show-messages`) and command-prompt lines (`prompt-history-limit`, written to their history
 * file) are kept (lowered, tmux drops the rest at the next one added), what their keys send (`backspace`, `user-keys`,
 * `extended-keys`, `escape-time`, `focus-events`), what their terminal is told
 * (`terminal-overrides` and `terminal-features` at the next attach, `set-clipboard`), what runs
 * when a person copies or edits (`copy-command`, `editor`), what their new panes are
 * (`default-terminal`), where what they typed at the command prompt goes (`history-file`: read
 * when the server starts, and written over, truncated first, when it exits, a kill-server's
 * included; pointed elsewhere, their history file no longer gets it, and the file named loses
 * its content): set like a global option, guarded like one. `exit-unattached`, which ends the
 * server the moment no client is attached, no tool turns on ({@link ENDING_OPTIONS}); turned
 * off, it is guarded like the rest.
 */
export const UNSEEN_SERVER_OPTIONS: ReadonlySet<string> = new Set(["exit-empty"]);

/**
 * Whether setting the option named `base` (no array index) reaches no person whatever its
 * scope: a user option (`@name`), which tmux draws only where a format names it, and the server
 * options in {@link UNSEEN_SERVER_OPTIONS}. tmux takes any unambiguous start of a name for the
 * whole (`buffer-limi`); the server refuses such a name, so only full names count here.
 */
export function reachesNoPerson(base: string): boolean {
  return base.startsWith("@") || UNSEEN_SERVER_OPTIONS.has(base);
}

/**
 * The options tmux ends sessions or itself by (tmux 3.3a, both flags): `destroy-unattached`, a
 * session option, ends a session the moment no client is attached to it (a detached one at
 * once; tmux-mcp's control client never stays in one), and `exit-unattached`, a server option,
 * ends the server the moment no client is attached at all (tmux-mcp's clients then leave on
 * purpose). On, they end a person's sessions, the agent's own among them, and every program in
 * them: what kill_session and kill_server do (toolset teardown), past their guards. No tool
 * turns them on (src/tools/option_change.ts `refuseEnding`); the hook's guard asks about any
 * such change (src/hooks/view.ts).
 */
export const ENDING_OPTIONS: ReadonlySet<string> = new Set([
  "destroy-unattached",
  "exit-unattached",
]);

/**
 * The options that let a pane's programs reach a person's terminal itself (tmux 3.3a):
 * `allow-passthrough` on, tmux hands what a program wraps in `\ePtmux;...\e\\` to the terminal
 * of every client shown the pane, raw: an OSC 52 writes their clipboard, any sequence draws
 * anywhere on their screen or asks their terminal for replies. A window is one key away from a
 * person attached anywhere on the server (choose-tree, switch-client), so turning it on for any
 * window or pane is guarded as a change to every session and window: refused while a person is
 * attached unless `--allow-attended-input` (src/tools/settings.ts, and the hook's guard,
 * src/hooks/view.ts, asks the same).
 */
export const TERMINAL_OPTIONS: ReadonlySet<string> = new Set(["allow-passthrough"]);

/**
 * Whether tmux 3.3a reads `value` as a flag option's off: `off` or `no` in any case, or `0`
 * (`on`, `yes`, `1` are on; an empty value toggles; anything else tmux refuses).
 */
export function flagOff(value: string): boolean {
  return /^(?:0|off|no)$/i.test(value);
}

/**
 * Whether a change to one of {@link ENDING_OPTIONS} or {@link TERMINAL_OPTIONS} leaves it off:
 * a value tmux reads as off ({@link flagOff}; appended too, as tmux sets a flag the same way),
 * or an unset of the global or server value (`resetsToDefault`), which tmux puts back to its
 * default, off for each. An unset elsewhere lets the session, window or pane take the value
 * above it, which may be on.
 */
export function leavesOff(
  value: string | undefined,
  unset: boolean,
  resetsToDefault: boolean,
): boolean {
  return unset ? resetsToDefault && value === undefined : value !== undefined && flagOff(value);
}

/**
 * Window options a status line shows for every window of its session, not only the current
 * one: how its entry is drawn, the name it shows (automatic-rename renames the window), and
 * its alerts (monitor-*: the activity, bell or silence flag and style of its entry, and in the
 * person's session the bell or message their activity-, bell- and silence-action send their
 * terminal). tmux keeps each per window or globally, never per pane (tmux 3.3a: `set-option -p`
 * sets the whole window's), so a window's value is its own or the global one.
 */
export const STATUS_ENTRY_OPTIONS: ReadonlySet<string> = new Set([
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
  "monitor-activity",
  "monitor-bell",
  "monitor-silence",
]);

/**
 * Whether setting the option named `base` on a window (or, synchronize-panes, on a pane of it)
 * reaches every person attached to a session the window is in, shown the window or not: its
 * entry in their status line ({@link STATUS_ENTRY_OPTIONS}), and synchronize-panes, which the
 * window, one key away, keeps for when they switch to it: what they type into the pane they see
 * would reach its other panes too.
 */
export function reachesListing(base: string): boolean {
  return STATUS_ENTRY_OPTIONS.has(base) || base === "synchronize-panes";
}

/**
 * The options a window carries into another session when it moves (move_window) that reach
 * the people attached there ({@link reachesListing}): those of {@link STATUS_ENTRY_OPTIONS} but
 * automatic-rename, which tmux turns off on every window made or renamed with a name
 * (`new-window -n`, `rename-window`; its name is text that rename_window may give a window a
 * person is shown anyway, and the format it would be renamed by is automatic-rename-format,
 * which is here), and synchronize-panes, which sends what they type there to every pane of it.
 */
export const CARRIED_ENTRY_OPTIONS: readonly string[] = [
  ...[...STATUS_ENTRY_OPTIONS].filter((o) => o !== "automatic-rename"),
  "synchronize-panes",
];

/**
 * What a window's own `options` of {@link CARRIED_ENTRY_OPTIONS} do in a person's session
 * (after "would"): `draw its entry in their status line`, `send what they type in it to every
 * pane of it`, or both.
 */
export function carriedEffects(options: readonly string[]): string {
  const sync = options.includes("synchronize-panes");
  return [
    ...(options.some((o) => o !== "synchronize-panes")
      ? ["draw its entry in their status line"]
      : []),
    ...(sync ? ["send what they type in it to every pane of it"] : []),
  ].join(" and ");
}

/**
 * How option `name` of {@link CARRIED_ENTRY_OPTIONS} reads as a format: in a window's context
 * (`window`), and with none (`global`). synchronize-panes is also a pane option, and a pane's
 * own value is the one its keys follow: read as 1 where any pane of the window has it on.
 */
export function carriedExpression(name: string, where: "window" | "global"): string {
  if (name !== "synchronize-panes") return `#{${name}}`;
  return where === "global"
    ? "#{?#{synchronize-panes},1,0}"
    : "#{?#{==:#{P:#{?#{synchronize-panes},1,}},},0,1}";
}

/**
 * A window's {@link CARRIED_ENTRY_OPTIONS} as tmux expands `#{name}` in that window's
 * context (`window`) and with no window at all (`global`: the global window options), in the
 * same order: flags as 1 or 0, values unexpanded. The two differ exactly where the window has
 * its own value, other than the global one: a window whose values are all global draws its
 * entry as every other window of a status line does.
 */
export interface EntryValues {
  readonly window: readonly string[];
  readonly global: readonly string[];
}

/**
 * Reads {@link EntryValues} of window `windowId` (`@N`) with `read` (a tmux command's output):
 * the window's first, then the global ones (`list-commands -F` expands its format with no
 * session, window or pane, so an option is found among the global ones).
 */
export async function readEntryValues(
  read: (argv: string[]) => Promise<Uint8Array>,
  windowId: string,
): Promise<EntryValues> {
  const guard = newGuard();
  const format = (where: "window" | "global") =>
    recordFormat(guard, CARRIED_ENTRY_OPTIONS.map((o) => carriedExpression(o, where)));
  const n = CARRIED_ENTRY_OPTIONS.length;
  const [window] = parseRecords(
    await read(["display-message", "-p", "-t", windowId, format("window")]),
    guard,
    n,
  );
  const [global] = parseRecords(
    await read(["list-commands", "-F", format("global"), "list-commands"]),
    guard,
    n,
  );
  if (!window || !global) throw new Error("tmux printed no option values");
  return { window, global };
}

/** The options of {@link CARRIED_ENTRY_OPTIONS} whose window value is not the global one. */
export function ownEntryOptions(values: EntryValues): string[] {
  return CARRIED_ENTRY_OPTIONS.filter((_, i) => values.window[i] !== values.global[i]);
}
