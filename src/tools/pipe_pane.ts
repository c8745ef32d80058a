/**
 * pipe_pane (registered in settings.ts): a pane's output copied from now on to a file or a
 * shell command, or that pipe stopped. What it asks of tmux before and at its act, and its
 * refusals, are in pipe_checks.ts, one import below.
 *
 * @module
 */

import { runIf, type TmuxCondition } from "../mcp/act_step.ts";
import { requireOwned } from "../mcp/ownership.ts";
import { z } from "zod";
import { ToolFailure } from "../mcp/errors.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import { flag, paneIdSchema } from "../mcp/schemas.ts";
import { escapeFormat } from "../tmux/format.ts";
import { paneFields, passableString } from "./arguments.ts";
import { CONFIGURES } from "./configuring.ts";
import { alreadyPiped, appendable, NO_PIPE, shellQuote, unappendable } from "./pipe_checks.ts";

/** pipe_pane. */
export const pipePane = defineTool({
  name: "pipe_pane",
  title: "Pipe pane output",
  toolset: "execute",
  description:
    "Copy a pane's output from now on to a file (path) or a /bin/sh command; stop ends " +
    "it.",
  input: {
    paneId: paneIdSchema,
    path: passableString(4096).regex(/^\//, "an absolute path").optional(),
    command: passableString(16_384).optional(),
    stop: flag(),
  },
  output: {
    paneId: paneIdSchema,
    piped: z.boolean().describe("Whether the pane's output is piped now."),
    command: z.string().nullable().describe("The shell command tmux runs, when piping."),
  },
  annotations: CONFIGURES,
  async run(args, ctx) {
    const modes = [args.path !== undefined, args.command !== undefined, args.stop]
      .filter(Boolean).length;
    if (modes !== 1) {
      throw new ToolFailure(
        "Give exactly one of path, command or stop: true.",
        'For example {paneId: "%1", path: "/tmp/pane.log"}.',
      );
    }
    const { pane } = await ctx.paneSnapshot(args.paneId);
    await requireOwned(ctx, [pane], `Piping pane ${pane.id}`);
    const shell = args.path !== undefined ? `cat >> ${shellQuote(args.path)}` : args.command;
    if (shell !== undefined) {
      if (pane.piped) throw alreadyPiped(pane.id);
      // The path is checked first (a shell job, during which tmux runs other clients'
      // commands), then, at the very instant of the act, that no pipe was opened meanwhile.
      const conditions: TmuxCondition[] = [{ target: pane.id, format: NO_PIPE }];
      if (args.path !== undefined) {
        conditions.unshift({ target: pane.id, format: appendable(args.path), shell: true });
      }
      // tmux expands pipe-pane's command as a format: `#` is doubled so it stays text.
      const { failed } = await runIf(ctx, conditions, [
        ["pipe-pane", "-t", pane.id, "--", escapeFormat(shell)],
      ]);
      if (failed === conditions.length - 1) {
        throw alreadyPiped(pane.id, " (opened at that instant)");
      }
      if (failed !== null && args.path !== undefined) await unappendable(ctx, pane.id, args.path);
    } else if (pane.piped) await ctx.run(["pipe-pane", "-t", pane.id]);
    const now = await paneFields(ctx, pane.id, ["#{pane_pipe}"]);
    if (now === null) {
      throw new ToolFailure(`Pane ${pane.id} went away meanwhile.`, "list_panes lists the panes.");
    }
    const [piped] = now;
    return {
      data: { paneId: pane.id, piped: piped === "1", command: shell ?? null },
      summary: shell !== undefined
        ? `Pane ${pane.id}'s output now goes to: ${shell}`
        : `Pane ${pane.id} is ${piped === "1" ? "still" : "no longer"} piped.`,
    };
  },
});
