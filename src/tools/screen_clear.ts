/**
 * Clearing a pane's screen alone for good. A screen cleared whole goes into the history in tmux
 * 3.3 (scroll-on-clear, on by default), where capture_pane, search_panes and a person scrolling
 * back still read it: clear_pane (teardown.ts) turns that off for the pane in its own step.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { chainArgv, decodeBytes } from "../tmux/format.ts";
import { TmuxError } from "../tmux/tmux_error.ts";

/** A pane's scroll-on-clear as read before a clear of its screen alone. */
export interface ScrollOnClear {
  /** Whether the pane's screen would go into its history when cleared (tmux's value for it). */
  readonly on: boolean;
  /** The pane's own value ("on", "off"), null when it takes its window's or the global one. */
  readonly own: string | null;
}

/**
 * The pane's scroll-on-clear: tmux 3.3 moves the lines of a screen cleared whole into the
 * history when it is on (the default), so that a cleared screen is still read by capture_pane,
 * search_panes and a person scrolling back. A tmux without the option (before 3.3) always does
 * when the pane keeps a history, and cannot be told not to: refused there, since what would be
 * cleared stays.
 */
export async function scrollOnClear(ctx: TmuxContext, paneId: string): Promise<ScrollOnClear> {
  const [value, own = ""] = decodeBytes(
    await ctx.read(chainArgv([
      ["display-message", "-p", "-t", paneId, "#{scroll-on-clear}"],
      ["show-options", "-pqv", "-t", paneId, "scroll-on-clear"],
    ])),
  ).split("\n");
  if (value !== "0" && value !== "1") {
    throw new ToolFailure(
      `This tmux has no scroll-on-clear (it came in tmux 3.3): clearing the screen of ${paneId} ` +
        "would move its lines into the scrollback, where they could still be read. Nothing was " +
        "cleared.",
      "Pass history: true as well to clear them with the rest of the scrollback.",
    );
  }
  return { on: value === "1", own: own === "on" || own === "off" ? own : null };
}

/**
 * Clears the screen of `paneId` without its lines going into the history: scroll-on-clear off
 * for the pane on the same command line, and its own value put back right after (none when it
 * had none). tmux runs the line as one step, so the pane's own output is not parsed meanwhile:
 * its program's clears keep the pane's setting (unless a person's hook on set-option or
 * send-keys makes tmux wait on a shell command in between). Setting an option has tmux redraw
 * every client, showing what it showed. What the pane held at the act is printed first, for
 * {@link restoredAsAtAct}.
 */
export function screenClearing(paneId: string, read: ScrollOnClear): string[][] {
  const clear = ["send-keys", "-R", "-t", paneId];
  if (!read.on) return [clear];
  return [
    ["show-options", "-pqv", "-t", paneId, "scroll-on-clear"],
    ["set-option", "-p", "-t", paneId, "scroll-on-clear", "off"],
    clear,
    restoring(paneId, read.own),
  ];
}

/** The command that gives the pane `own` as its own scroll-on-clear again (none: unset). */
function restoring(paneId: string, own: string | null): string[] {
  return own === null
    ? ["set-option", "-pu", "-t", paneId, "scroll-on-clear"]
    : ["set-option", "-p", "-t", paneId, "scroll-on-clear", own];
}

/**
 * Puts back the pane's own scroll-on-clear as it was at the act (printed first in its step),
 * should someone have changed it between the read and the act: the step put back what was read.
 */
export async function restoredAsAtAct(
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
