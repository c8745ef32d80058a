/**
 * Which tmux commands change what a session is made of: its current window, or whether its
 * panes, windows and the session itself go on existing.
 *
 * While a control-mode client is attached, tmux before the upstream fix of June 2026 (3.3a
 * here) sends it `%session-window-changed` for a session whose current window changed at the
 * end of a pass of its command loop, and reads the session's current window to do so: if the
 * same pass ended that session, there is none and the whole tmux server dies, every person's
 * session with it (tmux/tmux#5243; ROBUSTNESS.md). One command line (`next-window ;
 * kill-session`) does it, and so do two commands tmux reads in one pass: two lines a control
 * client sends together, or two clients whose commands arrive at once. This server keeps a
 * control client attached, so its own commands of this kind go out one at a time
 * ({@link TmuxRunner.inStructureLane}): each has been answered, and with it that pass has
 * ended, before the next is sent.
 *
 * An answer does not always mean the notice went out with it: tmux keeps the notices it owes
 * control clients in its global command queue, where a person's hook (a status-line plugin's
 * `run-shell` on `session-window-changed`) may hold them for as long as its command runs. A
 * command that may end a session therefore also waits for the notices this process's own
 * control client is still owed (owed_notices.ts).
 *
 * @module
 */

/**
 * Commands (and aliases) that may end a session: its last pane or window killed or moved
 * away, or the session or server itself killed.
 */
const ENDING = [
  "break-pane",
  "breakp",
  "join-pane",
  "joinp",
  "kill-pane",
  "killp",
  "kill-server",
  "kill-session",
  "kill-window",
  "killw",
  "move-pane",
  "movep",
  "move-window",
  "movew",
  "unlink-window",
  "unlinkw",
];

/**
 * tmux commands (and their aliases) that may change a session's current window or end a
 * pane, window or session. Conservative: a word in a command's text that names one costs only
 * the wait for the ones before it.
 */
const STRUCTURAL = [
  ...ENDING,
  "last-window",
  "last",
  "link-window",
  "linkw",
  "new-window",
  "neww",
  "next-window",
  "next",
  "previous-window",
  "prev",
  "select-window",
  "selectw",
  "swap-window",
  "swapw",
  "switch-client",
  "switchc",
];

/** Whether an argv names one of `names`, as a word of its own or inside a command string. */
function namer(names: readonly string[]): (args: readonly string[]) => boolean {
  const set = new Set(names);
  // A command name inside a command string (the commands of `if-shell`, `run-shell -C`...):
  // at the start, or after a space, `;` or `{`, and followed by a space, `;`, `}` or the end.
  const inText = new RegExp(`(?:^|[\\s;{'"])(?:${names.join("|")})(?=[\\s;}'"]|$)`);
  return (args) => {
    for (const arg of args) {
      if (set.has(arg)) return true;
      if (arg.length > 4 && inText.test(arg)) return true;
    }
    return false;
  };
}

/**
 * Whether a tmux argv (a command, a `;`-separated chain, or commands nested in another's
 * arguments) may change a session's current window or end a pane, window or session.
 */
export const changesStructure: (args: readonly string[]) => boolean = namer(STRUCTURAL);

/** Whether a tmux argv, read as {@link changesStructure} reads it, may end a session. */
export const mayEndSession: (args: readonly string[]) => boolean = namer(ENDING);
