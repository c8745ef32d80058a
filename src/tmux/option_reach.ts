/**
 * Which tmux options reach what a person sees or sends, by name (tmux 3.3a): the server's view
 * guard (set_option, src/tools/settings.ts and option_change.ts) and the agent hook's guard
 * (src/hooks/view.ts) read the same facts, so that the hook asks about exactly the option changes the server refuses by
 * default where a person is attached.
 *
 * @module
 */

/** An option name without its array index: `status-format[1]` → `status-format`. */
export function baseName(name: string): string {
  return name.replace(/\[\d+\]$/, "");
}

/**
 * The server options that reach no client's screen, keys or terminal (tmux 3.3a): how many
 * paste buffers and messages are kept, the command prompt's history (a file read only when the
 * server starts), and whether the server exits once no session is left (then nobody is
 * attached). Every other server option reaches every client at once: what their keys send
 * (`backspace`, `user-keys`, `extended-keys`, `escape-time`, `focus-events`), what their
 * terminal is told (`terminal-overrides` and `terminal-features` at the next attach,
 * `set-clipboard`), what runs when a person copies or edits (`copy-command`, `editor`), whether
 * their sessions outlive a detach (`exit-unattached`), what their new panes are
 * (`default-terminal`): set like a global option, guarded like one.
 */
export const UNSEEN_SERVER_OPTIONS: ReadonlySet<string> = new Set([
  "buffer-limit",
  "message-limit",
  "prompt-history-limit",
  "history-file",
  "exit-empty",
]);

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
 * Window options a status line shows for every window of its session, not only the current
 * one: how its entry is drawn, and the name it shows (automatic-rename renames the window).
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
]);
