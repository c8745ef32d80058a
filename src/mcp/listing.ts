/**
 * How tools are listed beyond their schemas: what clients that load tool definitions lazily, or
 * inline results only up to a size, need to know of each tool (`_meta`), and which tools keep
 * their schemas exactly as a seed contract prints them.
 *
 * Claude Code keeps MCP tool definitions behind its tool search and loads up front only the
 * tools marked `anthropic/alwaysLoad`; it saves a result over 50 000 characters to a file and
 * shows the model only the path, unless the tool declares `anthropic/maxResultSizeChars`.
 * Other clients ignore both keys.
 *
 * @module
 */

import { MAX_RESULT_BYTES, textBound } from "./bounds.ts";

/** Tools an agent needs first: to find panes, read them, type into them and wait on them. */
export const ALWAYS_LOAD: ReadonlySet<string> = new Set([
  "list_sessions",
  "list_windows",
  "list_panes",
  "capture_pane",
  "send_keys",
  "run_command",
  "wait_for_text",
]);

/**
 * Tools a call of which may fill the server's whole result bound (a long capture, a big
 * server's list, a search over scrollback, a batch): past the 50 000 characters a client
 * shows inline by default. Tools whose results stay far below it are not here.
 */
export const LARGE_RESULTS: ReadonlySet<string> = new Set([
  "list_sessions",
  "list_windows",
  "list_panes",
  "list_clients",
  "get_session_info",
  "get_window_info",
  "capture_pane",
  "snapshot_pane",
  "capture_since",
  "show_buffer",
  "search_panes",
  "wait_for_text",
  "run_command",
  "get_command_result",
  "list_buffers",
  "show_hooks",
  "show_hook",
  "show_options",
  "show_option",
  "show_environment",
  "set_option",
  "display_message",
  "call_tools_batch",
]);

/**
 * Tools whose schemas are a seed contract's printed with `$schema` and zod's safe-integer
 * bounds (seeds 001 and 003): listed exactly so. show_hook's seed (000) prints neither.
 */
export const SEEDED_SCHEMAS: ReadonlySet<string> = new Set(["list_panes", "list_windows"]);

/** Longest summary line a result's text starts with; longer ones are cut (the data is whole). */
export const MAX_SUMMARY_CHARS = 1_000;

/**
 * The most characters a successful result's text holds when its data fills `maxResultBytes`:
 * what the registry enforces ({@link textBound}).
 */
export function maxResultChars(maxResultBytes: number = MAX_RESULT_BYTES): number {
  return textBound(maxResultBytes);
}

/** A tool's `_meta` in tools/list, or undefined when it has nothing to say. */
export function toolMeta(
  name: string,
  maxResultBytes: number = MAX_RESULT_BYTES,
): Record<string, unknown> | undefined {
  const meta: Record<string, unknown> = {};
  if (ALWAYS_LOAD.has(name)) meta["anthropic/alwaysLoad"] = true;
  if (LARGE_RESULTS.has(name)) {
    meta["anthropic/maxResultSizeChars"] = maxResultChars(maxResultBytes);
  }
  return Object.keys(meta).length > 0 ? meta : undefined;
}
