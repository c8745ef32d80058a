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
 * @module
 */

/**
 * tmux commands (and their aliases) that may change a session's current window or end a
 * pane, window or session. Conservative: a word in a command's text that names one costs only
 * the wait for the ones before it.
 */
const STRUCTURAL = [
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
  "last-window",
  "last",
  "link-window",
  "linkw",
  "move-pane",
  "movep",
  "move-window",
  "movew",
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
  "unlink-window",
  "unlinkw",
];

const NAMES = new Set(STRUCTURAL);

/**
 * A command name inside a command string (the commands of `if-shell`, `run-shell -C`...): at
 * the start, or after a space, `;` or `{`, and followed by a space, `;`, `}` or the end.
 */
const IN_TEXT = new RegExp(
  `(?:^|[\\s;{'"])(?:${STRUCTURAL.join("|")})(?=[\\s;}'"]|$)`,
);

/**
 * Whether a tmux argv (a command, a `;`-separated chain, or commands nested in another's
 * arguments) may change a session's current window or end a pane, window or session.
 */
export function changesStructure(args: readonly string[]): boolean {
  for (const arg of args) {
    if (NAMES.has(arg)) return true;
    if (arg.length > 4 && IN_TEXT.test(arg)) return true;
  }
  return false;
}
