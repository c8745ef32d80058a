/**
 * What the tools that change configuration share (registered together in settings.ts): their
 * annotations, and the refusal of a set call that is not exactly a new value or an unset.
 *
 * @module
 */

import { ToolFailure } from "../mcp/errors.ts";
import type { ToolAnnotations } from "../mcp/tool_spec.ts";
import { changes } from "./arguments.ts";

/** Refuses a set call that is not exactly one of: a new value (maybe appended), or unset. */
export function checkSetOrUnset(
  what: "value" | "command",
  given: boolean,
  flags: { readonly unset: boolean; readonly append: boolean },
  example: string,
): void {
  if (flags.unset === given) {
    throw new ToolFailure(
      flags.unset ? `unset takes no ${what}.` : `Give a ${what}, or unset: true.`,
      `For example ${example}.`,
    );
  }
  if (flags.unset && flags.append) {
    throw new ToolFailure("append and unset contradict each other.", "Pass one of them.");
  }
}

/** Changing configuration that tmux may evaluate later: execute reach, not destructive. */
export const CONFIGURES: ToolAnnotations = changes({ destructive: false, idempotent: true });
