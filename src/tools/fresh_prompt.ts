/**
 * Bringing a pane's shell to a fresh prompt before run_command types: the pane must run a POSIX
 * shell, a C-c sent only while that shell itself holds its terminal drops whatever its line
 * held, and a shell it started (a nested shell, a shell script) is told apart and refused, as C-c
 * would not end it.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { deliverInput, type InputGuardOptions } from "../mcp/input_guard.ts";
import { execFast } from "../tmux/control.ts";
import { randomHex } from "../tmux/format.ts";
import { lineEditorReads, OTHER_SHELLS, POSIX_SHELLS, shellName } from "../tmux/prompt.ts";
import type { PaneRow, Snapshot } from "../tmux/snapshot.ts";
import { paneEnded, type PaneProbe, probePane } from "./pane_probe.ts";
import { shellGuard, sleep, whichAway, whileShellAway } from "./shell_guard.ts";

/**
 * Refuses a pane whose program (`command`, as tmux names it) is not a POSIX shell at its prompt;
 * returns the shell's name. run_command's wrapper needs one.
 */
export function requirePosixShell(paneId: string, command: string): string {
  const name = shellName(command);
  if (POSIX_SHELLS.has(name)) return name;
  if (OTHER_SHELLS.has(name)) {
    throw new ToolFailure(
      `Pane ${paneId} runs ${name}, which is not a POSIX shell: run_command's wrapper (printf, ` +
        "eval and $?) needs sh, bash, zsh, dash or ksh.",
      "Use send_keys and wait_for_text in that pane, or start a POSIX shell in another pane " +
        "(split_window or create_window).",
    );
  }
  throw new ToolFailure(
    `Pane ${paneId} is running ${JSON.stringify(command)}, not a shell at its prompt; ` +
      "run_command types into a shell.",
    'Wait for it to finish (wait_for_text), interrupt it (send_keys keys: ["C-c"]), or use ' +
      "a pane running a POSIX shell (split_window or create_window).",
  );
}

/** How long the shell may take to show a fresh prompt after C-c. */
const FRESH_PROMPT_MS = 1_000;

/**
 * How long a shell (by name) in a process group of its own must hold the terminal before it is
 * taken for a nested shell: longer than a child the shell forked takes to exec its program.
 */
const NESTED_SHELL_MS = 150;

/**
 * A `/bin/sh` command for `if-shell` that exits 0 when the terminal of process `pid` (a pane's
 * own process, the leader of its session and group) is held by another process group: a
 * program the shell started as a job (not one of its own group, such as a `$(...)` of its
 * prompt). Linux: field tpgid of `/proc/PID/stat`, read after the command name's last `)` (see
 * foreground.ts); elsewhere `ps`.
 */
function otherGroupHolds(pid: number): string {
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new RangeError(`not a pid: ${pid}`);
  return `if [ -r /proc/${pid}/stat ]; then s=; ` +
    `{ while IFS= read -r l || [ -n "$l" ]; do s="$s $l"; done; } < /proc/${pid}/stat ` +
    `|| exit 1; while case $s in *")"*) true ;; *) false ;; esac; do s=\${s#*)}; done; ` +
    `set -- $s; t=$6; else t=$(ps -o tpgid= -p ${pid}) || exit 1; set -- $t; t=$1; fi; ` +
    `[ -n "$t" ] && [ "$t" -gt 0 ] 2>/dev/null && [ "$t" != ${pid} ]`;
}

/**
 * The name of the shell that holds `pane`'s terminal in a process group of its own (tmux names
 * a group's leader), or null: what a nested interactive shell (`bash` typed in bash, `su`,
 * `nix-shell`) looks like, and a shell script run as a command too.
 */
async function foregroundShell(ctx: TmuxContext, pane: PaneRow): Promise<string | null> {
  const yes = `tmux-mcp-nested-${randomHex(8)}:`;
  const result = await execFast(ctx.runner, ctx.address, [
    "if-shell",
    "-t",
    pane.id,
    otherGroupHolds(pane.pid),
    `display-message -p -t ${pane.id} "${yes}#{pane_current_command}"`,
  ], { signal: ctx.signal });
  if (result.code !== 0) return null;
  const line = new TextDecoder().decode(result.stdout).split("\n").find((l) => l.startsWith(yes));
  if (line === undefined) return null;
  const name = shellName(line.slice(yes.length));
  return POSIX_SHELLS.has(name) || OTHER_SHELLS.has(name) ? name : null;
}

/** The refusal for a nested shell `name` holding `pane`'s terminal. */
function nestedShellRefusal(pane: PaneRow, name: string): ToolFailure {
  return new ToolFailure(
    `Pane ${pane.id}'s shell (pid ${pane.pid}) is not what reads the keyboard: a shell it ` +
      `started (${name}) holds the terminal: a nested interactive shell (${name} run at the ` +
      "prompt, su, nix-shell) or a shell script. run_command types only into the pane's own " +
      "shell, and C-c does not end a nested shell. Nothing was typed.",
    'A nested shell: end it with send_keys text "exit" to return to the pane\'s own shell, ' +
      "or type into it with send_keys and wait_for_text; a script: wait for it or interrupt it " +
      '(send_keys keys: ["C-c"]); or use another pane (split_window or create_window).',
  );
}

/**
 * Brings the pane's shell to a fresh prompt before run_command types: text left on the line,
 * a line the shell holds as unfinished (an unclosed quote, a trailing backslash, an open `for`:
 * its continuation prompt, PS2), and a line editor left in vi command mode would each take the
 * typed command in and run it with other words, or not at all. No editing key reaches all of
 * them; C-c does, in every POSIX shell: the terminal sends SIGINT to its foreground group, and
 * a shell at its prompt drops the pending input and starts a new prompt (in vi insert mode).
 *
 * SIGINT goes to the terminal's foreground group: it is sent only when the pane's shell holds
 * the terminal at that instant, with no program of its own group reading it (the same test as
 * the typing; tmux checks it in the same command line), so no program the shell started gets
 * it. What it can reach: a script that is itself the pane's process and waits in `read` (it is
 * interrupted instead of answered with the typed command), a `read` typed at the prompt, and a
 * trap on INT.
 *
 * The shell handles the signal some time after the keystroke: input that arrives before it
 * has, is taken into the line it then drops (bash loses the first characters of the command).
 * So the typing waits until the shell has moved the cursor to a new row (the new prompt), at
 * most {@link FRESH_PROMPT_MS}. bash and zsh must then be reading with their line editor
 * ({@link lineEditorReads}), new row or not, else nothing is typed: what ignored the C-c may be
 * the shell's own `read` (`trap '' INT; read x`, at the prompt or a job's), which holds the
 * terminal as the shell at its prompt does, would read the typed command as its answer and
 * could then print a forged result for it (a `read` whose INT trap prints a line draws a row
 * too, but reads in canonical mode). No new row alone proves nothing: a prompt drawn inside a
 * string the output left open shows nothing.
 *
 * A program drawing the prompt (a command substitution in PS1, PROMPT_COMMAND) holds the
 * terminal for a moment: a refusal for that is tried again, until `until` (the check travels
 * with the key, so the common case costs one guarded step). A shell of another process group
 * holding the terminal for {@link NESTED_SHELL_MS} is a nested shell: refused at once, as C-c
 * would not end it; so is a program that input typed just before started (`byInput`, see
 * {@link typedProgram}).
 */
export async function freshPrompt(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  now: PaneProbe,
  force: boolean | undefined,
  until: number,
  byInput: (command: string) => Promise<boolean>,
  claim: NonNullable<InputGuardOptions["claim"]>,
): Promise<void> {
  // Refused where tmux would copy the key to other panes (as the paste that follows is).
  // The shell itself busy (in `wait` for its & jobs): C-c would interrupt it, and the typing
  // would be read by whatever it runs next. The run mark is taken in the same step (`claim`).
  const guard = {
    ...shellGuard(pane, pane.pid, now.command, force, true),
    paste: true,
    claim,
  };
  // The screen row above the cursor: where the cursor cannot move down (the bottom row, and a
  // history that does not grow: history-limit 0, or full and trimmed), the new prompt shows as
  // the rows scrolling instead. The terminal's own `^C` echo stays on the cursor's row.
  const rowAbove = async (p: PaneProbe) =>
    p.cursorY === 0 ? null : new TextDecoder().decode(
      await ctx.run([
        "capture-pane",
        "-p",
        "-t",
        pane.id,
        "-S",
        String(p.cursorY - 1),
        "-E",
        String(p.cursorY - 1),
      ]),
    );
  let before!: PaneProbe;
  let above: string | null = null;
  let nestedSince: number | null = null;
  await whileShellAway(ctx, until, async () => {
    before = await probePane(ctx, pane.id);
    above = await rowAbove(before);
    await deliverInput(ctx, snapshot, pane, guard, [["send-keys", "-t", pane.id, "C-c"]]);
  }, async (away, last) => {
    // Refused all along: perhaps another run_command's command holds the terminal.
    if (last) {
      const taken = await claim.refusal();
      if (taken) throw taken;
    }
    const nested = await foregroundShell(ctx, pane);
    if (nested === null) {
      nestedSince = null;
      // Nothing was typed: what holds the terminal is no prompt this C-c made the shell draw.
      // A program that input typed before started is refused at once.
      const p = await probePane(ctx, pane.id);
      if (p.exists && await byInput(p.command)) requirePosixShell(pane.id, p.command);
      return last ? await whichAway(ctx, pane.id, pane.pid, away) : away;
    }
    nestedSince ??= performance.now();
    if (last || performance.now() - nestedSince >= NESTED_SHELL_MS) {
      throw nestedShellRefusal(pane, nested);
    }
    return away;
  });
  const row = (p: PaneProbe) => p.historySize + p.cursorY;
  const end = performance.now() + FRESH_PROMPT_MS;
  let drawn = false;
  while (!drawn && performance.now() < end) {
    const p = await probePane(ctx, pane.id);
    if (paneEnded(before, p)) return;
    drawn = row(p) !== row(before) ||
      (above !== null && p.cursorY === before.cursorY && await rowAbove(p) !== above);
    if (!drawn) await sleep(2, ctx.signal);
  }
  // bash and zsh read their prompt with a line editor (canonical mode and echo both off); a `read`
  // of their own reads in canonical mode, which a trap on INT that prints a line can leave
  // after the C-c. Nothing new drawn: what holds the terminal ignored the C-c, or drew its
  // prompt where nothing shows (output left the terminal inside a string, a DCS or OSC, which
  // swallows rows until the markers' ST ends it). The shell's own `read` (typed at the prompt,
  // or a job's, `trap '' INT` first) holds the terminal as the shell at its prompt does, and
  // would read the command typed next as its answer, then could print a forged result for it:
  // bash and zsh tell the two apart by their line editor. Other shells read their prompt in
  // canonical mode too, so nothing tells them apart: typed into as it is (ROBUSTNESS.md says so).
  if (!LINE_EDITOR_SHELLS.has(shellName(now.command))) return;
  // Asked until the line editor reads (the prompt's programs run first), at most until the
  // deadline for them.
  const editorBy = Math.max(performance.now() + FRESH_PROMPT_MS, until);
  for (;;) {
    if (await lineEditorReads(ctx.runner, ctx.address, pane.id, ctx.signal)) return;
    if (performance.now() >= editorBy) {
      // A program the shell started holds the terminal (a prompt command that does not end):
      // the typing, which only the shell itself holding the terminal lets through, refuses
      // it by name.
      if (await otherGroupHoldsNow(ctx, pane)) return;
      throw unansweredInterrupt(pane, drawn);
    }
    await sleep(10, ctx.signal);
  }
}

/** Whether a program of a process group other than the shell's holds `pane`'s terminal now. */
async function otherGroupHoldsNow(ctx: TmuxContext, pane: PaneRow): Promise<boolean> {
  const yes = `tmux-mcp-held-${randomHex(8)}`;
  const result = await execFast(ctx.runner, ctx.address, [
    "if-shell",
    "-t",
    pane.id,
    otherGroupHolds(pane.pid),
    `display-message -p ${yes}`,
  ], { signal: ctx.signal });
  return result.code === 0 &&
    new TextDecoder().decode(result.stdout).split("\n").some((l) => l === yes);
}

/** The shells that always read their prompt with a line editor here (see {@link freshPrompt}). */
const LINE_EDITOR_SHELLS = new Set(["bash", "zsh"]);

/**
 * The refusal for a pane whose shell drew no new prompt after C-c (`editor`: it drew a row, but
 * its line editor never came to read the terminal).
 */
function unansweredInterrupt(pane: PaneRow, editor = false): ToolFailure {
  return new ToolFailure(
    `Pane ${pane.id}'s shell (pid ${pane.pid}) was given C-c for a fresh prompt, but ${
      editor
        ? "its line editor did not come to read the terminal after it (the terminal reads " +
          "whole lines, as the shell's own `read` does)"
        : "it drew no new prompt after C-c"
    }: a \`read\` or a program ignoring SIGINT? Nothing typed: whatever reads the terminal ` +
      "there would take the command as its input.",
    "Look at the pane (capture_pane): answer or end what reads there (send_keys), or use " +
      "another pane (split_window or create_window).",
  );
}
