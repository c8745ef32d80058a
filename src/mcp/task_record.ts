/**
 * A task's record: its status, its outcome once it has one, and how each protocol version
 * shows it (2025-11-25's task, the 2026-07-28 extension's task with its result). The store
 * (task_store.ts) changes records; this file only says what they hold and look like.
 *
 * @module
 */

import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { clip } from "./errors.ts";
import { TASK_LIMITS } from "./tasks.ts";

/** Where a task is in its life; all but `working` are terminal. */
export type Status = "working" | "completed" | "failed" | "cancelled";
/** A JSON-RPC error, as a failed call is answered with. */
export type RpcError = { code: number; message: string; data?: unknown };
/** How the call behind a task ended: its result, or the error it was answered with. */
export type Outcome = { result: Record<string, unknown> } | { error: RpcError };

/** One task, as its store keeps it: what it shows, what stops it, and when it is done. */
export interface TaskRecord {
  readonly taskId: string;
  status: Status;
  statusMessage?: string;
  readonly createdAt: number;
  lastUpdatedAt: number;
  readonly ttlMs: number;
  outcome?: Outcome;
  readonly controller: AbortController;
  /** Resolves once the task is terminal (or forgotten). */
  readonly ended: PromiseWithResolvers<void>;
  /**
   * Resolves once the call behind the task has returned (or never will run): a task cancelled
   * is terminal at once, while its call still winds down and may say what it left running.
   */
  readonly wound: PromiseWithResolvers<void>;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** What a task shows under both protocol versions. */
function commonView(task: TaskRecord): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
  };
}

/** A task as 2025-11-25 shows it. */
export function legacyView(task: TaskRecord): Record<string, unknown> {
  return { ...commonView(task), ttl: task.ttlMs, pollInterval: TASK_LIMITS.pollIntervalMs };
}

/** A task as the 2026-07-28 extension shows it: with its result or error once it has one. */
export function modernView(task: TaskRecord): Record<string, unknown> {
  const outcome = task.outcome;
  return {
    ...commonView(task),
    ttlMs: task.ttlMs,
    pollIntervalMs: TASK_LIMITS.pollIntervalMs,
    ...(task.status === "completed" && outcome && "result" in outcome &&
      { result: outcome.result }),
    ...(task.status === "failed" && outcome && "error" in outcome && { error: outcome.error }),
  };
}

/** A thrown error as the JSON-RPC error a plain call would have been answered with. */
export function rpcError(error: unknown): RpcError {
  if (error instanceof ProtocolError) {
    return {
      code: error.code,
      message: error.message,
      ...(error.data !== undefined && { data: error.data }),
    };
  }
  return { code: ProtocolErrorCode.InternalError, message: "Internal error" };
}

/** The text a tool result leads with: what a failed task shows as its status message. */
export function firstText(result: Record<string, unknown>): string {
  const content = result.content as { type?: string; text?: string }[] | undefined;
  const text = content?.find((c) => c.type === "text")?.text;
  return text ?? "The tool reported an error.";
}

/** A status message clipped to {@link TASK_LIMITS}.maxStatusChars, so a long one stays small. */
export function short(text: string): string {
  return clip(text, TASK_LIMITS.maxStatusChars);
}
