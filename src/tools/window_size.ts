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
 * The lend is marked in tmux itself, by {@link LENT_OPTION} set and unset on that same line:
 * a creation that reads `latest` while it is lent must take it for the person's `manual`, and
 * only tmux knows that at the moment of the read. Another tmux-mcp process (another MCP
 * client's) knows nothing of this one's lends, and this one's own memory tells only what is
 * lent when the read's answer is judged, not when tmux made it. A `latest` taken for the
 * person's would be created plainly, and tmux crashes once the lender gives `manual` back.
 *
 * tmux runs the rest of a line only while its client lives: a step killed half way (the call
 * cancelled, its timeout passed while a person's hook ran a slow `run-shell`, the process told
 * to stop) would leave `latest` for good. So the step is not stopped by the call's cancellation,
 * and whenever it did not answer, or the process ends during it, the value is given back by
 * commands of their own ({@link lent}, registered in leftovers.ts). A lend that nobody gave back
 * (its process and its tmux process killed together) stays marked: the next creation, reading
 * `latest` marked, makes its own the safe way and so gives `manual` back.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { checkedAgain, ServerChanged } from "../mcp/act_step.ts";
import { nestedCommands as nested } from "../tmux/command_line.ts";
import { chainArgv, decodeBytes, randomHex } from "../tmux/format.ts";
import { leave, type LeftoverSpec } from "../tmux/leftovers.ts";
import type { TmuxRunner } from "../tmux/run.ts";

/**
 * The global (window) user option that marks `latest` as lent out, and by whom: set on the
 * lending line before `latest`, unset after `manual` is given back, so that no moment of the
 * line shows `latest` unmarked.
 */
export const LENT_OPTION = "@tmux-mcp-lent";

const WINDOW_SIZE_LATEST = ["set-option", "-gw", "window-size", "latest"];
const WINDOW_SIZE_MANUAL = ["set-option", "-gw", "window-size", "manual"];
const UNMARK = ["set-option", "-gwu", LENT_OPTION];

/**
 * Reads what {@link personsWindowSize} needs in one tmux command: every global window option,
 * the mark among them (about 1.7 KB). Two commands, even on one line, could have a person's
 * hook run between them (an `after-show-options` that waits on a `run-shell`), and a lend
 * begin or end there.
 */
export const WINDOW_OPTIONS_READ: readonly string[] = ["show-options", "-gw"];

/**
 * The value of global option `name` in `table`, {@link WINDOW_OPTIONS_READ}'s answer: "" when
 * it is not set. tmux quotes a value holding spaces or newlines, so none starts a line.
 */
function optionIn(table: string, name: string): string {
  const line = table.split("\n").find((l) => l.startsWith(`${name} `));
  return line?.slice(name.length + 1).trim() ?? "";
}

/**
 * The person's global `window-size` as a creation must take it, from `table`, the answer of
 * {@link WINDOW_OPTIONS_READ}: a `latest` marked as lent (by any process, this one too, its
 * step still running or cut short) stands for their `manual`. The creation is then made the
 * safe way, which gives `manual` back at its end: tmux takes one process's structural steps one
 * at a time (run.ts), another process's lend is given back on its own line, and a lend left
 * behind is given back by this one.
 */
export function personsWindowSize(table: string): string {
  const read = optionIn(table, "window-size");
  return read === "latest" && optionIn(table, LENT_OPTION) !== "" ? "manual" : read;
}

/** Who lends, by runner: the value of {@link LENT_OPTION} that this runner's lines set. */
const lenders = new WeakMap<TmuxRunner, string>();

/** The mark of `runner`'s lends: random, so that no other process's is taken for it. */
function lender(runner: TmuxRunner): string {
  let id = lenders.get(runner);
  if (id === undefined) lenders.set(runner, id = `lent-${randomHex(6)}`);
  return id;
}

/**
 * Gives `manual` back if the global value is still `latest` and still marked as lent, and
 * takes the mark away if it is still this runner's: a value the person chose meanwhile stays
 * (only a `latest` they set themselves during the creation is taken for lent), and their own
 * later `latest` reads as theirs. Another process's mark stays with its own line, which unsets
 * it; one whose line died is harmless (a `latest` marked is made `manual` again, which is what
 * the person had).
 *
 * Read, then set, a few milliseconds apart: no tmux condition reads the global `window-size`
 * itself (a format reads the value of a window, the current one of whichever client's session
 * tmux picks, and that window may have a value of its own). The mark, which no window has a
 * value of its own for, a condition does read: the setting commands check it again.
 */
function lent(runner: TmuxRunner): LeftoverSpec {
  const mine = lender(runner);
  return {
    key: "global window-size latest",
    lane: true,
    async undo(run) {
      const read = await run(WINDOW_OPTIONS_READ);
      if (read.code !== 0) return;
      const table = decodeBytes(read.stdout);
      const mark = optionIn(table, LENT_OPTION);
      const commands: string[][] = [];
      if (mark !== "" && optionIn(table, "window-size") === "latest") {
        commands.push(["if-shell", "-F", `#{!=:#{${LENT_OPTION}},}`, nested([WINDOW_SIZE_MANUAL])]);
      }
      if (mark === mine) {
        commands.push(["if-shell", "-F", `#{==:#{${LENT_OPTION}},${mine}}`, nested([UNMARK])]);
      }
      if (commands.length > 0) await run(chainArgv(commands));
    },
  };
}

/**
 * `commands` (which create a window or session) made safe from the crash: the global value is
 * `latest` for that instant, and `manual` is set back in the same step, so no command of anyone
 * else's and no resize falls in between: the windows there are keep their size, and the new one
 * is sized as `latest` sizes it. The creation runs inside an `if-shell` of its own, so that its
 * failure still lets the value be set back. The lend is marked around it ({@link LENT_OPTION},
 * `runner`'s mark). `windowSize` is the global value read just before
 * ({@link personsWindowSize}), or null when no server runs yet: then tmux reads it in the same
 * step, once the configuration has been loaded.
 */
export function sizeSafe(
  runner: TmuxRunner,
  commands: readonly (readonly string[])[],
  windowSize: string | null,
): (readonly string[])[] {
  const around = [
    ["set-option", "-gw", LENT_OPTION, lender(runner)],
    WINDOW_SIZE_LATEST,
    // A person's hook on the set-options above may hold the line, and a person come to see
    // what the creation changes meanwhile: tmux checks the step's conditions again right
    // before it, and else gives `manual` back at once.
    checkedAgain(["if-shell", "-F", "1", nested(commands)], [WINDOW_SIZE_MANUAL, UNMARK]),
    WINDOW_SIZE_MANUAL,
    UNMARK,
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
 * not stop a creation once begun, lent or not: creating.ts).
 *
 * A server this step starts (`windowSize` null) lends the value only if its configuration set
 * `manual`, which nothing tells beforehand: its step is left to run as any other creation's,
 * and one cut short leaves its lend marked, for the next creation to give `manual` back.
 */
export async function createSizeSafe<T>(
  ctx: TmuxContext,
  windowSize: string | null | undefined,
  step: (stop: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (windowSize !== "manual") return await step(undefined);
  // Structural steps go one at a time: given back in the same lane (lent), the value never
  // changes in the middle of another creation's line of this process.
  const left = leave(ctx.runner, ctx.address, lent(ctx.runner));
  let result: T;
  try {
    result = await left.step(step);
  } catch (error) {
    // Given back conditionally: a refusal or failure that tmux answered finished the line, and
    // the value is `manual` already. A step that reached another server than the call read
    // lent nothing, and the undo would reach that server, whose `latest` is its own.
    if (error instanceof ServerChanged) left.clear();
    else await left.undo();
    throw error;
  }
  left.clear();
  return result;
}
