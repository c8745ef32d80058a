/**
 * Clearing a pane's screen alone for good. A screen cleared whole goes into the history in tmux
 * 3.3 (scroll-on-clear, on by default), where capture_pane, search_panes and a person scrolling
 * back still read it: clear_pane (teardown.ts) turns that off for the pane in its own step.
 *
 * @module
 */

import { checkedAgain, PartialAct, Unconfirmed } from "../mcp/act_step.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { chainArgv, decodeBytes } from "../tmux/format.ts";
import {
  giveBackLeft,
  givingScrollBack,
  markingScroll,
  ownClient,
  restoringScroll as restoring,
  scrollMark,
} from "../tmux/left_behind.ts";
import { leave, type LeftoverSpec } from "../tmux/leftovers.ts";
import { TmuxError } from "../tmux/tmux_error.ts";

/** A pane's scroll-on-clear as read before a clear of its screen alone. */
export interface ScrollOnClear {
  /** Whether the pane's screen would go into its history when cleared (tmux's value for it). */
  readonly on: boolean;
  /** The pane's own value ("on", "off"), null when it takes its window's or the global one. */
  readonly own: string | null;
  /**
   * The mark the step sets on the pane while its value is off (left_behind.ts): the own value,
   * this process's control client and tmux's clock, so that a later process gives the value
   * back should this one be killed in between. Null when it is not turned off, or no control
   * client of this process's is there to name (then only this process gives it back).
   */
  readonly mark: string | null;
}

/**
 * The pane's scroll-on-clear: tmux 3.3 moves the lines of a screen cleared whole into the
 * history when it is on (the default), so that a cleared screen is still read by capture_pane,
 * search_panes and a person scrolling back. A tmux without the option (before 3.3) always does
 * when the pane keeps a history, and cannot be told not to: refused there, since what would be
 * cleared stays.
 */
export async function scrollOnClear(ctx: TmuxContext, paneId: string): Promise<ScrollOnClear> {
  // A value that a killed process's clear left off is the pane's own again before it is read.
  await giveBackLeft((a) => ctx.read(a), (a) => ctx.run(a), { panes: paneId, buffers: false });
  const [read, own = ""] = decodeBytes(
    await ctx.read(chainArgv([
      ["display-message", "-p", "-t", paneId, "#{pane_id} #{scroll-on-clear}"],
      ["show-options", "-pqv", "-t", paneId, "scroll-on-clear"],
    ])),
  ).split("\n");
  const [shown, value] = read.split(" ");
  // tmux answers for a missing pane too, every value empty (or a client's own pane's).
  if (shown !== paneId) {
    ctx.pane(await ctx.paneList(), paneId);
    throw new ToolFailure(`Pane ${paneId} could not be read; nothing was cleared.`);
  }
  if (value !== "0" && value !== "1") {
    throw new ToolFailure(
      `This tmux has no scroll-on-clear (it came in tmux 3.3): clearing the screen of ${paneId} ` +
        "would move its lines into the scrollback, where they could still be read. Nothing was " +
        "cleared.",
      "Pass history: true as well to clear them with the rest of the scrollback.",
    );
  }
  const on = value === "1";
  const ownValue = own === "on" || own === "off" ? own : null;
  const owner = on ? await ownClient(ctx.runner, ctx.address, ctx.signal) : null;
  return {
    on,
    own: ownValue,
    mark: owner === null ? null : scrollMark(ownValue, owner.name, owner.clock),
  };
}

/**
 * Clears the screen of `paneId` without its lines going into the history: scroll-on-clear off
 * for the pane on the same command line, and its own value put back right after (none when it
 * had none). tmux runs the line as one step, so the pane's own output is not parsed meanwhile:
 * its program's clears keep the pane's setting (unless a person's hook on set-option or
 * send-keys makes tmux wait on a shell command in between). Setting an option has tmux redraw
 * every client, showing what it showed. What the pane held at the act is printed first, for
 * {@link restoredAsAtAct}. The pane is marked ({@link ScrollOnClear.mark}) before the turn-off
 * and unmarked after the value is back, so that no moment of the line shows `off` unmarked.
 */
export function screenClearing(paneId: string, read: ScrollOnClear): string[][] {
  const clear = ["send-keys", "-R", "-t", paneId];
  if (!read.on) return [clear];
  const marking = read.mark === null ? null : markingScroll(paneId, read.mark);
  const after = [restoring(paneId, read.own), ...(marking ? [marking.unset] : [])];
  return [
    ["show-options", "-pqv", "-t", paneId, "scroll-on-clear"],
    ...(marking ? [marking.set] : []),
    ["set-option", "-p", "-t", paneId, "scroll-on-clear", "off"],
    // A person's hook on the set-options above may hold the line and a person come to watch
    // meanwhile: tmux checks again right before the clear, and else puts the value back.
    checkedAgain(clear, after, {
      message: `Clearing ${paneId} was not done: a person's client came to show it while the ` +
        "step was under way (a person's tmux hook held tmux-mcp's step between its commands); " +
        "nothing was cleared, and its scroll-on-clear is as it was.",
      hint: "Ask the person first; pass force: true only when they agreed.",
    }),
    ...after,
  ];
}

/**
 * What the step of {@link screenClearing} leaves on pane `paneId` until it has answered
 * (leftovers.ts): its scroll-on-clear off. A person's hook on set-option (a plugin's slow
 * `run-shell`) holds the step's line right after the turn-off, and the call may be cancelled or
 * its process end there: tmux then drops the rest of the line of a client that is gone, and the
 * pane would keep `off` for good. The undo gives the pane its own value as read (none: unset),
 * only while the pane's value is still off: one that someone set since stays theirs; and takes
 * the step's mark away. A process killed outright runs no undo: the mark tells the next one
 * (left_behind.ts).
 */
export function scrollOnClearLeftover(paneId: string, read: ScrollOnClear): LeftoverSpec {
  const undo = givingScrollBack(paneId, read.own, read.mark, false);
  return {
    key: `scroll-on-clear ${paneId}`,
    async undo(run) {
      // A pane gone takes its option with it: tmux's refusal of the target is no failure here.
      await run(undo);
    },
  };
}

/**
 * Runs `step`, the act whose line holds {@link screenClearing}'s commands (given the call's
 * access, stopped by its cancellation or by the process's end), and puts back the pane's own
 * scroll-on-clear {@link restoredAsAtAct}. From the turn-off until the step has answered, the
 * value is this process's to put back ({@link scrollOnClearLeftover}): also when the call is
 * cancelled, or the process ends, while a person's hook holds that line. Returns the step's
 * output.
 */
export async function clearScreenAlone(
  ctx: TmuxContext,
  paneId: string,
  read: ScrollOnClear,
  step: (ctx: TmuxContext) => Promise<Uint8Array>,
): Promise<Uint8Array> {
  if (!read.on) return await step(ctx);
  const left = leave(ctx.runner, ctx.address, scrollOnClearLeftover(paneId, read));
  try {
    // The process's end stops the step as the call's cancellation does: a tmux process of its
    // own is killed (tmux drops the rest of its line), and the close puts the value back.
    const out = await left.step((closing) => step(ctx.orClosing(closing)));
    await restoredAsAtAct(ctx, paneId, read, out);
    left.clear();
    return out;
  } catch (error) {
    // Stopped by tmux before the clear: the step put back what was read, and the value as it
    // was at the act is printed first.
    if (error instanceof PartialAct) await restoredAsAtAct(ctx, paneId, read, error.stdout);
    // Refused by tmux at the act (or another server reached), nothing of the line ran.
    if (error instanceof ToolFailure && !(error instanceof Unconfirmed)) left.clear();
    else await left.undo();
    throw error;
  }
}

/**
 * Puts back the pane's own scroll-on-clear as it was at the act (printed first in its step),
 * should someone have changed it between the read and the act: the step put back what was read.
 */
async function restoredAsAtAct(
  ctx: TmuxContext,
  paneId: string,
  read: ScrollOnClear,
  out: Uint8Array,
): Promise<void> {
  if (!read.on) return;
  const printed = decodeBytes(out).split("\n")[0];
  const atAct = printed === "on" || printed === "off" ? printed : null;
  if (atAct === read.own) return;
  try {
    await ctx.run(restoring(paneId, atAct));
  } catch (error) {
    // A pane gone meanwhile has no option left to put back (the reply says it went).
    if (!(error instanceof TmuxError && error.kind === "no-target")) throw error;
  }
}
