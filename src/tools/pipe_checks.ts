/**
 * What pipe_pane asks of tmux before and at its act, and its refusals: that a path can be
 * opened for appending as `cat >>` opens it (asked on the tmux server's machine, where the
 * pipe runs), and that the pane has no pipe open, which may be a person's log of it.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { shellSays } from "../tmux/if_shell.ts";
import { escapeFormat } from "../tmux/format.ts";

/** Quotes text as one POSIX shell word. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * Holds in tmux at the instant of the act: the pane has no pipe open. tmux's `pipe-pane`
 * closes the pane's pipe before it opens one (with `-o` too, which then opens none), and the
 * open pipe may be a person's log of the pane: it is never replaced unasked.
 */
export const NO_PIPE = "#{!=:#{pane_pipe},1}";

/**
 * A `/bin/sh` command (for `if-shell`) that exits 0 when `path` can be opened for appending,
 * as `cat >>` opens it: a `cat` that cannot open its file ends at once, yet tmux shows the
 * pipe open until the pane next prints, so the pipe's own state says nothing. Opening creates
 * a missing file, as `cat >>` would a moment later. A FIFO is not opened (that waits for a
 * reader, and tmux's answer with it): write permission is asked instead. A device is refused
 * ({@link DEVICE}). tmux expands the command as a format first: `#` is doubled so it stays text.
 */
export function appendable(path: string): string {
  const p = shellQuote(path);
  return escapeFormat(
    `if ${DEVICE(p)}; then false; elif [ -p ${p} ]; then [ -w ${p} ]; else : >> ${p}; fi`,
  );
}

/**
 * A shell test that holds when the quoted path `p` is a device (through links too): a
 * terminal's, perhaps the one a person watches (another pane's, or their own client's), would
 * get the pane's output drawn on it, and the terminal's answers to what that output asks
 * (cursor position, device attributes) typed into the program reading it; a disk's would be
 * written over.
 */
const DEVICE = (p: string) => `[ -c ${p} ] || [ -b ${p} ]`;

/** Whether the `/bin/sh` command `test` exits 0, run by tmux (on the tmux server's machine). */
function shellTest(ctx: TmuxContext, paneId: string, test: string): Promise<boolean> {
  return shellSays(ctx.runner, ctx.address, paneId, escapeFormat(test), ctx.signal);
}

/** The refusal of a path `cat >>` cannot open, saying why (asked on the tmux server's machine). */
export async function unappendable(ctx: TmuxContext, paneId: string, path: string): Promise<never> {
  const folder = path.slice(0, path.lastIndexOf("/")) || "/";
  const why = await shellTest(ctx, paneId, DEVICE(shellQuote(path)))
    ? "it is a device (a terminal's would show the output to whoever watches it, and type " +
      "the terminal's answers into what reads it)"
    : await shellTest(ctx, paneId, `[ -d ${shellQuote(path)} ]`)
    ? "it is a folder"
    : await shellTest(ctx, paneId, `[ -d ${shellQuote(folder)} ]`)
    ? "it cannot be opened for appending (no permission to write it or its folder)"
    : `its folder ${JSON.stringify(folder)} does not exist`;
  throw new ToolFailure(
    `Cannot pipe pane ${paneId}'s output to ${JSON.stringify(path)}: ${why}. Nothing was piped.`,
    "Give the path of a file (a new one, or one to append to) in a folder that exists and may " +
      "be written, on the machine tmux runs on.",
  );
}

/** The refusal of a second pipe: opening one would close the pane's pipe, perhaps a person's. */
export function alreadyPiped(paneId: string, when = ""): ToolFailure {
  return new ToolFailure(
    `Pane ${paneId}'s output is already piped${when} (perhaps a person's log of it); a new ` +
      "pipe would close that one. Nothing was changed.",
    `If replacing it is really wanted, pipe_pane {paneId: "${paneId}", stop: true} ends it ` +
      "first.",
  );
}
