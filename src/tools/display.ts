/**
 * display_message: a caller's tmux format expanded for a pane, window or session. Toolset
 * execute, never inspect: a format may hold `#(...)`, which tmux runs through the shell, and
 * `#{E:...}` or `#{T:...}` expand what an option or a pane's title holds as a format in turn,
 * so no check of the text could make it read-only. Every read-only tool expands only formats
 * of this server's own; this is the one tool that hands tmux a client's format. What tmux
 * 3.3a cannot expand and survive (a pad of -2^31), or expands only by holding every session
 * (loops nested in loops, pads that add up), is refused first (tmux_limits.ts).
 *
 * @module
 */

import { z } from "zod";
import { cutString, jsonStringBytes } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import { checkedString, count } from "../mcp/schemas.ts";
import { execOnce } from "../tmux/control.ts";
import { decodeBytes, escapeTrailingSemicolon, newGuard, recordFormat } from "../tmux/format.ts";
import { judgeResult, TmuxError } from "../tmux/tmux_error.ts";
import { SESSIONS_ONLY } from "../tmux/snapshot.ts";
import { changes } from "./arguments.ts";
import { checkFormatNumbers } from "./tmux_limits.ts";

/** A pane, window or session id: the context the format is expanded in. */
const targetSchema = z.string().regex(/^[%@$]\d+$/, "a pane, window or session id (%3, @2, $0)");

/** Longest format taken. */
const MAX_FORMAT_CHARS = 16_384;

/** Room the rest of the result takes beside the text. */
const ENVELOPE_BYTES = 1_024;

/** Refuses a target that does not exist, naming what does (tmux would expand it as empty). */
async function requireTarget(ctx: TmuxContext, target: string): Promise<void> {
  if (target.startsWith("%")) await ctx.paneSnapshot(target);
  else if (target.startsWith("@")) await ctx.windowAlone(target);
  else ctx.session(await ctx.snapshot(SESSIONS_ONLY), target);
}

/**
 * `text` within `maxBytes` of JSON, keeping its start: a format's expansion reads from the
 * left. Control characters take up to six bytes in JSON, so the cut is made on that count.
 */
function boundText(text: string, maxBytes: number): { text: string; omittedBytes: number } {
  if (jsonStringBytes(text) <= maxBytes) return { text, omittedBytes: 0 };
  return cutString(text, Math.floor(maxBytes / 6));
}

/** How execOnce (control.ts) says the connection was lost with the command on its way. */
const CONNECTION_LOST = /^The connection to tmux was lost while the command was on its way/;

/**
 * What a call says when tmux did not answer while it expanded the caller's format, or
 * lost the connection it was asked on (an answer too long to read retires it), or
 * undefined for any other failure. Not "try again", as tmux's stalls otherwise say: the
 * likely cause is the format itself (one that builds a very long string holds every session
 * of the server until tmux is done), and asking again would hold it again.
 */
export function expansionTimedOut(error: unknown, target: string): ToolFailure | undefined {
  if (!(error instanceof TmuxError)) return undefined;
  // The control connection is retired over an answer too long to read (tmux built a string
  // of many megabytes): execOnce then says it was lost and the command may or may not have
  // run, which invites a retry that would build it again.
  const lost = error.kind === "failed" && CONNECTION_LOST.test(error.message);
  if (error.kind !== "timeout" && !lost) return undefined;
  return new ToolFailure(
    `${error.message} It was expanding that format for ${target}: the format itself is the ` +
      "likely cause, as one that builds a very long string (loops, substitutions or " +
      "expansions of other values that repeat each other) holds every session of the tmux " +
      "server, and the person's too, until tmux is done" +
      (lost ? ", and an answer too long to read ends the connection it came on." : "."),
    "Do not ask for the same format again: that would hold tmux again. Check that tmux " +
      "answers (list_sessions), then ask for a smaller format, one part at a time.",
  );
}

const displayMessage = defineTool({
  name: "display_message",
  title: "Expand a format",
  toolset: "execute",
  description:
    "Expand a tmux format for a pane, window or session id. #(cmd) runs a shell; its output shows on a later call.",
  input: {
    format: checkedString(MAX_FORMAT_CHARS),
    target: targetSchema,
  },
  output: {
    target: z.string(),
    paneId: z.string().describe("The pane the target resolved to."),
    text: z.string().describe("The expansion."),
    complete: z.boolean(),
    omittedBytes: count(),
  },
  annotations: changes({ destructive: false, idempotent: false }),
  async run(args, ctx) {
    // Expanded once, and the expansion comes back here: "##{" is text to tmux.
    checkFormatNumbers(args.format, "That format", "Nothing was expanded.", "expanded once");
    await requireTarget(ctx, args.target);
    const guard = newGuard();
    // The check that the target still resolves and the expansion are one command line: tmux
    // expands a target that vanished in between as empty values, with status 0.
    const resolved = recordFormat(guard, ["#{pane_id}"]);
    let result;
    try {
      result = await execOnce(ctx.runner, ctx.address, [
        "display-message",
        "-p",
        "-t",
        args.target,
        resolved,
        ";",
        "display-message",
        "-p",
        "-t",
        args.target,
        "--",
        escapeTrailingSemicolon(args.format),
      ], { signal: ctx.signal, serverPid: ctx.serverPid });
    } catch (error) {
      throw expansionTimedOut(error, args.target) ?? error;
    }
    const out = decodeBytes(judgeResult(result));
    const head = `${guard}R${guard}F`;
    const end = out.indexOf(`${guard}E\n`);
    const paneId = out.startsWith(head) && end !== -1 ? out.slice(head.length, end) : "";
    if (!/^%\d+$/.test(paneId)) {
      throw new ToolFailure(
        `${args.target} is gone from ${ctx.socketLabel}.`,
        "list_panes lists what exists.",
      );
    }
    const expanded = out.slice(end + guard.length + 2).replace(/\n$/, "");
    const cut = boundText(expanded, ctx.config.maxResultBytes - ENVELOPE_BYTES);
    return {
      data: {
        target: args.target,
        paneId,
        text: cut.text,
        complete: cut.omittedBytes === 0,
        omittedBytes: cut.omittedBytes,
      },
      summary: `Expanded for ${args.target} (pane ${paneId})` +
        (cut.omittedBytes > 0 ? `; ${cut.omittedBytes} bytes left out at the end.` : "."),
    };
  },
});

/** Registers display_message (toolset execute). */
export function registerDisplayTools(registry: ToolRegistry): void {
  registry.add(displayMessage);
}
