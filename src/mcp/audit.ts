/**
 * The audit trail: every call of a tool that changes something (types, runs, creates, kills,
 * arranges or changes settings — every tool not annotated read-only) is told, once it has an
 * outcome, as a log message of logger `audit` at level `info`: the tool, the ids it targeted
 * or made, and the outcome with the reason when it failed or was refused. Sent to clients whose
 * protocol has logging (they choose the level with `logging/setLevel`), and as one line on
 * stderr when the server was started with `--audit`.
 *
 * What was typed and the command lines run never appear at `info`: the arguments are given
 * whole only at level `debug`, to the client alone (never stderr), and any quoted text in a
 * failure's reason (our messages quote what a caller gave, in JSON quotes) is elided.
 *
 * A call of `call_tools_batch` is not audited itself: each of its rows is, as the call it is.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/server";
import { startUnits } from "./bounds.ts";
import type { LogFn } from "./call_log.ts";

/** What the audit needs of a tool. */
export interface AuditedTool {
  readonly name: string;
  readonly annotations: { readonly readOnlyHint: boolean };
}

/** Tools whose rows are audited instead of themselves. */
const NOT_AUDITED = new Set(["call_tools_batch"]);

/** Arguments that name what a call acts on, by name: their values are ids or names. */
const TARGET_KEYS =
  /^(paneId|windowId|session|sessionId|target|targetPaneId|targetWindowId|srcPaneId|dstPaneId|sourcePaneId|bufferName|name|jobId)$/;

/** An id as tmux writes it. */
const ID = /^[%@$]\d+$/;

/** Whether a call of `tool` is audited. */
export function audited(tool: AuditedTool): boolean {
  return !tool.annotations.readOnlyHint && !NOT_AUDITED.has(tool.name);
}

/**
 * The ids a call targeted (from its arguments) and made (top-level ids in its result), in
 * order, each once. Names are quoted and cut: they are a person's, not typed text.
 */
export function targetsOf(args: unknown, result?: unknown): string[] {
  const out: string[] = [];
  const add = (value: string) => {
    if (!out.includes(value)) out.push(value);
  };
  if (isRecord(args)) {
    for (const [key, value] of Object.entries(args)) {
      if (typeof value !== "string" || !TARGET_KEYS.test(key)) continue;
      if (ID.test(value)) add(value);
      else add(`${key}=${JSON.stringify(value.length > 64 ? `${startUnits(value, 63)}…` : value)}`);
    }
    if (typeof args.socket_name === "string") add(`socket=${JSON.stringify(args.socket_name)}`);
  }
  if (isRecord(result)) {
    for (const key of ["sessionId", "windowId", "paneId", "jobId"]) {
      const value = result[key];
      if (typeof value === "string" && (ID.test(value) || key === "jobId")) add(value);
    }
  }
  return out;
}

/** A failure's reason for the audit: its first line, with quoted text elided. */
export function auditReason(text: string): string {
  const first = text.split("\n")[0].replace(/"(?:[^"\\]|\\.)*"/g, '"…"');
  // Cut between characters: half a surrogate pair is no text a log reader can take.
  return first.length > 300 ? `${startUnits(first, 299)}…` : first;
}

/**
 * Tells the audit trail about one finished call. `log` is the call's log function;
 * `toStderr` is `--audit`.
 */
export function auditCall(
  tool: AuditedTool,
  args: unknown,
  result: CallToolResult,
  log: LogFn,
  toStderr: boolean,
): void {
  if (!audited(tool)) return;
  const targets = targetsOf(args, result.structuredContent);
  const what = `${tool.name}${targets.length > 0 ? ` ${targets.join(" ")}` : ""}`;
  const text = result.content?.find((c) => c.type === "text");
  const outcome = result.isError
    ? `failed: ${auditReason(text && "text" in text ? text.text : "")}`
    : "ok";
  log("info", `${what}: ${outcome}`, { logger: "audit", stderr: toStderr });
  const all = JSON.stringify(args) ?? "";
  const shown = all.length > 4_000 ? `${startUnits(all, 4_000)}… (${all.length} characters)` : all;
  log("debug", `${tool.name} arguments: ${shown}`, {
    logger: "audit",
    stderr: false,
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
