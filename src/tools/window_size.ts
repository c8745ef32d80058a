/**
 * Making a window or session under the person's global `window-size manual` without crashing
 * tmux, and without leaving their value changed.
 *
 * tmux 3.3a (and every release up to 3.6a at least) kills its whole server, every session on
 * it, when a window or session is created while the global `window-size` is `manual`: it reads
 * the size of the window it has not made yet (tmux/tmux#4849, where tmux's development line
 * makes it a 10000x10000 window instead). So the creation runs with the global value `latest`
 * for that instant, lent out and given back on the same command line ({@link sizeSafe}).
 *
 * tmux runs the rest of a line only while its client lives: a step killed half way (the call
 * cancelled, its timeout passed while a person's hook ran a slow `run-shell`, the process told
 * to stop) would leave `latest` for good. So the step is not stopped by the call's cancellation,
 * and whenever it did not answer, or the process ends during it, the value is given back by
 * commands of their own ({@link LENT}, registered in leftovers.ts).
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ServerChanged } from "../mcp/act_step.ts";
import { quoteNested } from "../tmux/control.ts";
import { decodeBytes } from "../tmux/format.ts";
import { isLeft, leave, type LeftoverSpec } from "../tmux/leftovers.ts";

const WINDOW_SIZE_LATEST = ["set-option", "-gw", "window-size", "latest"];
const WINDOW_SIZE_MANUAL = ["set-option", "-gw", "window-size", "manual"];

/**
 * Gives `manual` back if the global value is still `latest`, the value this server lent out: a
 * value the person chose meanwhile stays (only a `latest` they set themselves during the
 * creation is taken for ours). Read, then set, a few milliseconds apart: no tmux condition
 * reads a global window option itself (a format reads the value of a window, the current one of
 * whichever client's session tmux picks, and that window may have a value of its own).
 */
const LENT: LeftoverSpec = {
  key: "global window-size latest",
  lane: true,
  async undo(run) {
    const read = await run(["show-options", "-gqwv", "window-size"]);
    if (read.code !== 0 || decodeBytes(read.stdout).trim() !== "latest") return;
    await run(WINDOW_SIZE_MANUAL);
  },
};

/**
 * The person's global `window-size` as a creation must take it, from the value just read: a
 * `latest` that one of this server's own creations lent out (its step still running, or its
 * value not yet given back) stands for their `manual`. Another call's creation reading it then
 * must make its own safe too: tmux takes the structural steps one at a time (run.ts), and by its
 * turn the value is `manual` again.
 */
export function personsWindowSize(ctx: TmuxContext, read: string): string {
  return read === "latest" && isLeft(ctx.runner, ctx.address, LENT.key) ? "manual" : read;
}

/**
 * Commands as one command string for tmux to parse (an `if-shell` branch): each argument
 * single-quoted, a newline travelling as `"\n"` so the line holds none.
 */
function nested(commands: readonly (readonly string[])[]): string {
  return commands.map((c) => c.map(quoteNested).join(" ")).join(" ; ");
}

/**
 * `commands` (which create a window or session) made safe from the crash: the global value is
 * `latest` for that instant, and `manual` is set back in the same step, so no command of anyone
 * else's and no resize falls in between: the windows there are keep their size, and the new one
 * is sized as `latest` sizes it. The creation runs inside an `if-shell` of its own, so that its
 * failure still lets the value be set back. `windowSize` is the global value read just before
 * ({@link personsWindowSize}), or null when no server runs yet: then tmux reads it in the same
 * step, once the configuration has been loaded.
 */
export function sizeSafe(
  commands: readonly (readonly string[])[],
  windowSize: string | null,
): (readonly string[])[] {
  const around = [
    WINDOW_SIZE_LATEST,
    ["if-shell", "-F", "1", nested(commands)],
    WINDOW_SIZE_MANUAL,
  ];
  if (windowSize === null) {
    return [
      ["start-server"],
      ["if-shell", "-F", "#{==:#{window-size},manual}", nested(around), nested(commands)],
    ];
  }
  return windowSize === "manual" ? around : [...commands];
}

/**
 * Runs `step`, the creation {@link sizeSafe} made of the global `windowSize`, and gives the
 * value back if the step did not answer where that lends `latest` out. `step` is given what
 * must stop its tmux process besides its timeout: where the value is lent, the runner's close,
 * which stops the step before giving the value back at the end (the call's cancellation does
 * not stop a creation once begun, lent or not: lifecycle.ts).
 *
 * A server this step starts (`windowSize` null) lends the value only if its configuration set
 * `manual`, which nothing tells afterwards: a step cut short there is not undone, since the
 * undo would turn a configuration's own `latest` into `manual`.
 */
export async function createSizeSafe<T>(
  ctx: TmuxContext,
  windowSize: string | null | undefined,
  step: (stop: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (windowSize !== "manual") return await step(undefined);
  // Structural steps go one at a time: given back in the same lane (LENT), the value never
  // changes in the middle of another creation's line.
  const lent = leave(ctx.runner, ctx.address, LENT);
  let result: T;
  try {
    result = await lent.step(step);
  } catch (error) {
    // Given back conditionally: a refusal or failure that tmux answered finished the line, and
    // the value is `manual` already. A step that reached another server than the call read
    // lent nothing, and the undo would reach that server, whose `latest` is its own.
    if (error instanceof ServerChanged) lent.clear();
    else await lent.undo();
    throw error;
  }
  lent.clear();
  return result;
}
