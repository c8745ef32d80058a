/**
 * Whether a pane sits at its shell's prompt: the one answer `wait_for_idle`, `get_pane_info`
 * and `snapshot_pane` share, and the shell names `run_command` checks a pane against.
 *
 * At the prompt means: the pane is alive, tmux names a shell as its foreground program
 * (`pane_current_command`), and the pane's own process (`pane_pid`) holds the terminal — the
 * kernel's test of foreground.ts, asked through tmux's `if-shell`. The second test is what
 * tells a shell at its prompt from a script the shell started that is named like it (`bash
 * script.sh` blocked in `read`): the script runs in its own process group, which then owns
 * the terminal; and from a program a shell without job control runs in its own group (`sh -c
 * 'vim notes; exec sh'`), a child of the shell in the foreground group reading the terminal.
 *
 * A shell that holds its terminal but is busy itself is not at its prompt either: in `wait`
 * for its `&` jobs, or running a loop of builtins (foreground.ts `shellIdle`; Linux only).
 *
 * What it cannot tell: a pane whose own process IS such a script (started with it instead of
 * an interactive shell) looks at its prompt while it reads; and an interactive shell running
 * a builtin that reads the keyboard (`read` typed at the prompt) holds the terminal itself,
 * waiting as it does at its prompt.
 * Between Enter and the moment the shell hands the terminal to the command it starts (a few
 * milliseconds) the shell is still at its prompt.
 *
 * @module
 */

import { shellHoldsTerminal } from "./foreground.ts";
import { ifShellStream, ifShellThen, shellSays } from "./if_shell.ts";
import type { TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";

/** Shells whose grammar run_command's wrapper (printf, eval, `$?`) relies on. */
export const POSIX_SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "dash",
  "ash",
  "ksh",
  "mksh",
  "lksh",
  "pdksh",
  "oksh",
  "zsh",
  "yash",
  "posh",
  "busybox",
  "osh",
]);

/** Shells known not to be POSIX: named in run_command's refusal so the hint is precise. */
export const OTHER_SHELLS: ReadonlySet<string> = new Set([
  "fish",
  "nu",
  "nushell",
  "pwsh",
  "powershell",
  "csh",
  "tcsh",
  "xonsh",
  "elvish",
  "ion",
  "rc",
  "es",
  "murex",
  "ysh",
  "oil",
  "nsh",
  "tclsh",
]);

/** `pane_current_command` as a shell name: no login dash, no path, no version suffix. */
export function shellName(command: string): string {
  const base = command.trim().replace(/^-/, "").split("/").pop() ?? "";
  return base.toLowerCase().replace(/-?\d+(\.\d+)*$/, "");
}

/** Whether tmux's name for a pane's foreground program is a shell (POSIX or not). */
export function isShellCommand(command: string): boolean {
  const name = shellName(command);
  return POSIX_SHELLS.has(name) || OTHER_SHELLS.has(name);
}

/** What the prompt test needs to know of a pane, as a snapshot or probe read it. */
export interface PromptFacts {
  readonly dead: boolean;
  /** `pane_pid`: the pane's own process. */
  readonly pid: number;
  /** `pane_current_command`: the foreground program's name. */
  readonly command: string;
}

/**
 * Whether pane `paneId` is at its shell's prompt (see the module note). A dead pane, a pane
 * whose foreground program is not named like a shell, and a pane that is gone are not; only
 * a live shell costs a tmux call (`if-shell`, whose `/bin/sh` tmux runs: this process needs no
 * permission to read `/proc`).
 */
export async function paneAtPrompt(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  facts: PromptFacts,
  signal?: AbortSignal,
): Promise<boolean> {
  return await atPromptThen(runner, address, paneId, facts, [], signal) !== null;
}

/**
 * The output of tmux command `then` (argv), run in the same step right after the test of
 * {@link paneAtPrompt} passed; null when pane `paneId` is not at its prompt (`then` runs either
 * way, its output is dropped). What `then` reads of the pane is what it showed once its shell
 * held the terminal: nothing the shell printed before it got there is missing.
 */
export async function atPromptThen(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  facts: PromptFacts,
  then: readonly string[],
  signal?: AbortSignal,
  answerBound?: number,
): Promise<Uint8Array | null> {
  const test = promptTest(facts);
  if (test === null) return null;
  return await ifShellThen(runner, address, paneId, test, then, signal, answerBound);
}

/**
 * As {@link atPromptThen}, for a `then` that may print more than a read holds whole: its output
 * goes to `sink` as it streams, only when the pane is at its prompt. Whether it is.
 */
export async function atPromptStream(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  facts: PromptFacts,
  then: readonly string[],
  sink: (chunk: Uint8Array) => void,
  signal?: AbortSignal,
): Promise<boolean> {
  const test = promptTest(facts);
  if (test === null) return false;
  return await ifShellStream(runner, address, paneId, test, then, sink, signal);
}

/** The `/bin/sh` test of {@link paneAtPrompt}; null for a pane that cannot be at one. */
function promptTest(facts: PromptFacts): string | null {
  if (facts.dead || !isShellCommand(facts.command)) return null;
  if (!Number.isSafeInteger(facts.pid) || facts.pid <= 0) return null;
  return shellHoldsTerminal(facts.pid, { idle: true });
}

/**
 * Whether pane `paneId`'s terminal reads keys one by one without the terminal's echo
 * (canonical mode and echo both off): a line editor reads it, as at an interactive shell's
 * prompt (bash's readline, zsh's ZLE, the editors of ksh93, mksh, yash and busybox sh, each
 * measured). A shell's own `read` builtin reads lines in canonical mode, and a one-key read
 * (`read -n 1`, zsh's `read -k`) keeps the echo; a shell without a line editor even at its
 * prompt (dash, `bash --noediting`) reads lines in canonical mode too. So a shell that holds
 * its terminal and reads it this way waits at its prompt, not in a `read` of a command (except
 * `read -e`, zsh's `vared` and a silent one-key `read -s -n 1`, which read the same way). False
 * when it cannot be told.
 *
 * Asked as `stty -a` on the pane's terminal, run by tmux's `if-shell` (the terminal's path is
 * tmux's own `#{pane_tty}`, never text of ours): reading a terminal's settings changes nothing.
 */
export async function lineEditorReads(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  signal?: AbortSignal,
): Promise<boolean> {
  if (!/^%\d+$/.test(paneId)) return false;
  return await shellSays(
    runner,
    address,
    paneId,
    `stty -a < '#{pane_tty}' 2>/dev/null | tr -s ' ;\\011' '\\n' | grep -cxE -- '-(icanon|echo)' | ` +
      "grep -qx 2",
    signal,
  );
}
