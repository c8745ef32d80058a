/**
 * Keys meant for a shell at its prompt, guarded on the shell itself holding its terminal: the
 * guard tmux checks in the same step as the keys (so a refused step typed nothing), the refusal
 * it gives (the shell away, or busy itself), and the loop that tries such a step again while the
 * programs drawing the prompt hold the terminal for a moment.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import type { InputGuardOptions } from "../mcp/input_guard.ts";
import { shellHoldsTerminal } from "../tmux/foreground.ts";
import { shellSays } from "../tmux/if_shell.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import type { PaneRow } from "../tmux/snapshot.ts";

/**
 * The refusal of a keystroke meant for a shell at its prompt because the shell did not hold its
 * terminal at that instant, or was busy itself (in `wait`): nothing was typed (the check travels
 * with the keys), so the step may be tried again ({@link whileShellAway}).
 */
class ShellAway extends ToolFailure {}

/**
 * The refusal of a guard that tested both at once (see {@link shellGuard}): the shell did not
 * hold its terminal, or was busy itself. Which one, a second look tells ({@link whichAway}).
 */
class AwayOrBusy extends ShellAway {
  constructor(readonly away: ShellAway, readonly busy: ShellAway) {
    super(away.message, away.hint);
  }
}

/**
 * The guard of a keystroke meant for a shell at its prompt: process `holds` must hold the
 * pane's terminal at that instant (foreground.ts), and tmux must still name `command`.
 * `idle`: and the shell must not be busy itself (in `wait`, a loop of builtins: shellIdle).
 * Both are one shell condition (one `/bin/sh` for tmux to start on every guarded key); its
 * refusal is an {@link AwayOrBusy}, told apart only when it is given ({@link whichAway}).
 */
export function shellGuard(
  pane: PaneRow,
  holds: number,
  command: string | undefined,
  force: boolean | undefined,
  idle = false,
): InputGuardOptions {
  const hint = 'Wait for it to end (wait_for_text), interrupt it (send_keys keys: ["C-c"]), or ' +
    "use another pane (split_window or create_window).";
  const away = new ShellAway(
    `Pane ${pane.id}'s shell (pid ${holds}) is not what reads the keyboard: a program ` +
      "it started is in the foreground (perhaps one named like the shell, such as a " +
      "script waiting in read). Nothing was typed.",
    hint,
  );
  const busy = new ShellAway(
    `Pane ${pane.id}'s shell (pid ${holds}) is busy itself, not at its prompt: it runs ` +
      "a builtin such as wait (for its & jobs) or a loop. Nothing was typed.",
    hint.replace("wait_for_text", "wait_for_idle with atPrompt"),
  );
  return {
    force,
    command,
    shellConditions: [
      { target: pane.id, format: shellHoldsTerminal(holds, { idle }), shell: true },
    ],
    shellRefusals: [idle ? new AwayOrBusy(away, busy) : away],
  };
}

/**
 * The refusal that applies of an {@link AwayOrBusy} (any other as it is): the shell `holds`
 * holds its terminal now, so it was busy itself; else a program it started holds it.
 */
export async function whichAway(
  ctx: TmuxContext,
  paneId: string,
  holds: number,
  refusal: ShellAway,
): Promise<ShellAway> {
  if (!(refusal instanceof AwayOrBusy)) return refusal;
  const held = await shellSays(
    ctx.runner,
    ctx.address,
    paneId,
    shellHoldsTerminal(holds),
    ctx.signal,
  );
  return held ? refusal.busy : refusal.away;
}

/**
 * Runs `attempt`, a step guarded by {@link shellGuard}, again every 20 ms while it is refused
 * only because the pane's shell does not hold its terminal, until `until`: the check travels
 * with the keys in the same tmux step, so a refused attempt typed nothing. The shell runs the
 * programs that draw its prompt (PROMPT_COMMAND, a `$(...)` in PS1, zsh's precmd) with the
 * terminal theirs for a moment, every time it draws one, and run_command's own C-c makes it
 * draw one. `refused` is told of each refusal (it may throw a better one, as for a nested
 * shell) and, when the time is up, gives the refusal thrown.
 */
export async function whileShellAway<T>(
  ctx: TmuxContext,
  until: number,
  attempt: () => Promise<T>,
  refused: (away: ShellAway, last: boolean) => Promise<Error>,
): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ShellAway)) throw error;
      const last = performance.now() >= until;
      const failure = await refused(error, last);
      if (last) throw failure;
      await sleep(20, ctx.signal);
    }
  }
}

/** Waits `ms`, or until `signal` aborts (then throws the cancellation). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new TmuxError("cancelled", "cancelled"));
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new TmuxError("cancelled", "cancelled"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
