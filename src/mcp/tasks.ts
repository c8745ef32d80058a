/**
 * MCP tasks: a tool call that waits (for text, for quiet, for a command) can run in the
 * background while the client polls for it, under both protocol versions the server speaks.
 *
 * - 2025-11-25 (core, experimental): the client asks (`params.task: {ttl}` on `tools/call`) and
 *   gets a `CreateTaskResult` (`{task}`) at once; `tasks/get`, `tasks/result` (blocks until the
 *   task ends, answers the tool's result with the related-task `_meta`), `tasks/list`,
 *   `tasks/cancel`; `notifications/tasks/status` on every change; progress keeps the request's
 *   token. Declared as the `tasks` capability, and per tool as `execution.taskSupport`. A tool
 *   result with `isError` is a `failed` task, as that version says.
 * - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): the client declares
 *   the extension in each request's capabilities, and the server decides: a call still running
 *   after {@link TASK_LIMITS}.graceMs is answered with a task handle (`resultType: "task"`), a
 *   quicker one with its result. `tasks/get` carries the result once there is one (no
 *   `tasks/result`, no `tasks/list`), `tasks/cancel` acknowledges with an empty result,
 *   `tasks/update` has nothing to take (no task of ours asks for input). Progress ends with the
 *   handle (the extension has none for tasks); its message becomes the task's `statusMessage`.
 *
 * A task runs the very handler a plain call runs (validation, guards, bounds, output check),
 * with the task's own signal. Tasks belong to the connection (one SDK server) that made them,
 * are bounded in number, forgotten after their ttl, and cancelled when the connection ends.
 * Task ids are random UUIDs (122 bits): with no authorization on stdio, an id is what stands
 * between a task and anyone else who could ask for it.
 *
 * This file holds what tasks are offered and within what bounds (the facts the listing, the
 * capabilities and the tests read); task_store.ts runs them, per connection, and answers the
 * `tasks/*` methods; task_record.ts holds a task's record and how each version shows it.
 *
 * @module
 */

import { clampTimeout, MAX_TIMEOUT_MS } from "./wait_timeouts.ts";

/**
 * The tools that may run as tasks: those that wait. Named here, not in their family files,
 * like the other listing facts (listing.ts); a name not on offer is ignored.
 */
export const TASK_TOOLS: ReadonlySet<string> = new Set([
  "run_command",
  "get_command_result",
  "wait_for_text",
  "wait_for_idle",
]);

/** What a task tool declares in tools/list (2025-11-25; 2026-07-28 lists no `execution`). */
export const TASK_EXECUTION = { taskSupport: "optional" } as const;

/** The extension's name in capabilities (2026-07-28). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The bounds of the task store, per connection. */
export const TASK_LIMITS = {
  /** Tasks running at once; one more is refused (2025) or run as a plain call (2026). */
  maxRunning: 32,
  /** Tasks kept, finished ones included; the oldest finished one goes first. */
  maxKept: 64,
  /** Lifetime of a task from its creation, when the client names none. */
  defaultTtlMs: 10 * 60_000,
  minTtlMs: 1_000,
  maxTtlMs: 60 * 60_000,
  /**
   * How long past its call's own bound (its timeout, see {@link callBoundMs}) a task is kept
   * at least, whatever ttl was asked: a ttl shorter than the wait it was asked for would stop
   * the wait midway, and a call that ends a little late under load keeps its result.
   */
  keptPastBoundMs: 5_000,
  /** The polling interval suggested to clients. */
  pollIntervalMs: 1_000,
  /** 2026-07-28: how long a call may run before it is answered with a task instead. */
  graceMs: 500,
  /** Longest status message kept (a tool's error text, a progress message). */
  maxStatusChars: 300,
} as const;

/**
 * How long the call of a task tool may run, by its own arguments: its timeout (`waitMs` for
 * get_command_result) as the tool clamps it. The arguments are not checked yet when a task is
 * made; a value that is no number counts as absent (the call is then refused, at once).
 */
export function callBoundMs(name: string, args: unknown): number {
  const given = (key: string): number | undefined => {
    const value = typeof args === "object" && args !== null
      ? (args as Record<string, unknown>)[key]
      : undefined;
    return typeof value === "number" && Number.isFinite(value) ? value : undefined;
  };
  if (name === "get_command_result") {
    return Math.min(MAX_TIMEOUT_MS, Math.max(0, given("waitMs") ?? 0));
  }
  return clampTimeout(given("timeoutMs")).effective;
}

/**
 * The ttl a task is granted: what was asked (the default if nothing), within
 * [{@link TASK_LIMITS}.minTtlMs, maxTtlMs], and never shorter than its call may run plus
 * {@link TASK_LIMITS}.keptPastBoundMs.
 */
export function grantedTtlMs(asked: number | undefined, boundMs: number): number {
  const wanted = Math.max(TASK_LIMITS.minTtlMs, Math.round(asked ?? TASK_LIMITS.defaultTtlMs));
  return Math.min(TASK_LIMITS.maxTtlMs, Math.max(wanted, boundMs + TASK_LIMITS.keptPastBoundMs));
}
