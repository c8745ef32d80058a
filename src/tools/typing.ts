/**
 * What every input tool shares: how a tool that types is annotated, its `force` field, the check
 * that text arrives as given, and the paste through a transient buffer that paste_text and
 * run_command type with (guarded as any input, and, for run_command, on the shell holding its
 * terminal).
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import type { InputGuardOptions } from "../mcp/input_guard.ts";
import type { ToolAnnotations } from "../mcp/tool_spec.ts";
import type { PaneRow, Snapshot } from "../tmux/snapshot.ts";
import { pasteTransient } from "./buffers.ts";
import { shellGuard } from "./shell_guard.ts";

/** Annotations of a tool that types into a pane: it changes the world, and repeating it does too. */
export const TYPES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};

/** Whether to type into this server's own pane too (the input guards refuse it otherwise). */
export const forceField = z.boolean().optional();

/**
 * Refuses text tmux would not deliver as given, instead of reporting it sent: tmux ends an
 * argument at a NUL (the rest never arrives), and a lone surrogate has no UTF-8 form (a
 * replacement character would arrive instead).
 */
export function checkDeliverable(what: string, text: string, hint: string): void {
  if (text.includes("\0")) {
    throw new ToolFailure(
      `${what} holds a NUL character; tmux would cut the text there and nothing after it would arrive.`,
      hint,
    );
  }
  if (!text.isWellFormed()) {
    throw new ToolFailure(
      `${what} is not well-formed Unicode (a lone surrogate), so it cannot arrive as given.`,
      hint,
    );
  }
}

/**
 * Pastes `text` into `pane` after `before` (keys that prepare the pane), through a transient
 * buffer ({@link pasteTransient}), guarded as any input: tmux re-checks at the instant of the
 * paste that nobody watches the pane. Returns the panes reached.
 */
export async function pasteViaBuffer(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  text: string,
  options: {
    enter: boolean;
    keepNewlines: boolean;
    force?: boolean;
    before?: string[][];
    /** The pid that must hold the pane's terminal at the instant of the paste. */
    holds?: number;
    /** What tmux must name the pane's program at the instant of the paste. */
    command?: string;
    /** A claim on the pane the paste needs (see InputGuardOptions). */
    claim?: InputGuardOptions["claim"];
  },
): Promise<string[]> {
  const guard: InputGuardOptions = options.holds === undefined
    ? { force: options.force, paste: true, claim: options.claim }
    : {
      ...shellGuard(pane, options.holds, options.command, options.force),
      paste: true,
      claim: options.claim,
    };
  return await pasteTransient(ctx, snapshot, pane, text, {
    guard,
    bracketed: true,
    keepNewlines: options.keepNewlines,
    enter: options.enter,
    before: options.before,
  });
}
