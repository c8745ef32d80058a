/**
 * What a call answers: a success as structured content with the same facts as text (bounded,
 * never cut silently), a failure as one `isError` text block with a reason and a hint, never a
 * stack trace, and zod's issues with a call's arguments as one readable sentence.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { clip, shownFailure } from "./errors.ts";
import { jsonBytes, MAX_RESULT_BYTES, replyBound, textBound } from "./bounds.ts";
import { renderReply, summaryLine } from "./render.ts";
import { MAX_SUMMARY_CHARS } from "./listing.ts";
import { fieldsAt, unknownKeysHint } from "./field_hints.ts";
import type { ToolReply } from "./tool_spec.ts";

/**
 * A success: structured content for programs, and the same facts as text for a model — the
 * one-line summary (cut to {@link MAX_SUMMARY_CHARS}), then the data rendered to read (see
 * render.ts). The text never passes {@link textBound} bytes on the wire: a tool bounds its data,
 * and should the rendering still overflow (escapes make a text up to 3.5 times its data's
 * size), the text is cut at a line and says so, keeping the result's own facts; nothing is cut
 * silently.
 *
 * Should a tool still bound its data wrongly (a field left uncut), the whole reply past
 * {@link replyBound} is never sent: it becomes an error that says so, naming the tool.
 */
export function successResult(
  reply: ToolReply<unknown>,
  maxResultBytes: number = MAX_RESULT_BYTES,
  tool = "the tool",
): CallToolResult {
  const text = renderReply(shortSummary(reply.summary), reply.data, textBound(maxResultBytes));
  const result: CallToolResult = {
    content: [{ type: "text", text }],
    structuredContent: reply.data as Record<string, unknown>,
  };
  const bytes = jsonBytes(result);
  if (bytes > replyBound(maxResultBytes)) {
    return errorResult(
      `${tool} built a result of ${bytes} bytes, past the ${
        replyBound(maxResultBytes)
      }-byte bound on a reply, so it was not sent (a bug in tmux-mcp: some field was not cut; ` +
        "please report it). Ask for less: a narrower target (one session, window or pane), " +
        "fewer lines or entries.",
    );
  }
  return result;
}

function shortSummary(summary: string): string {
  return summaryLine(summary, MAX_SUMMARY_CHARS);
}

/**
 * A failure: one text block, `isError`, no structured content, no raw control characters, and
 * a few KB at most (cut, saying so: see {@link shownFailure}).
 */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text: shownFailure(text) }], isError: true };
}

/**
 * A field name or key for a message: quoted when it is not a plain identifier, cut when long
 * (it is the caller's, of any length).
 */
function fieldName(key: PropertyKey): string {
  const text = clip(String(key), 100);
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(text) ? text : JSON.stringify(text);
}

/** What a refusal of a string adds, by the type taken instead (a model quotes numbers too). */
const STRING_INSTEAD: Readonly<Record<string, string>> = {
  array: ' (a list: ["…"])',
  number: ' (a number, without quotes: 500, not "500")',
  boolean: " (true or false, without quotes)",
};

/** Where in the arguments a field is: `operations[1].arguments`. */
function pathText(path: readonly PropertyKey[]): string {
  return path.map((step, i) =>
    typeof step === "number" ? `[${step}]` : `${i ? "." : ""}${fieldName(step)}`
  ).join("");
}

/**
 * Zod issues as one readable sentence. With the `schema` they came from, an unknown field is
 * told the field it likely meant, or the fields its place takes (field_hints.ts).
 */
export function describeIssues(error: z.ZodError, schema?: z.ZodType): string {
  return error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.length ? pathText(issue.path) : "arguments";
    if (issue.code === "unrecognized_keys") {
      const shown = issue.keys.slice(0, 5);
      const keys = shown.map(fieldName).join(", ");
      const known = schema ? fieldsAt(schema, issue.path) ?? [] : [];
      return `unknown field${issue.keys.length > 1 ? "s" : ""} ${keys}` +
        (issue.keys.length > 5 ? ` and ${issue.keys.length - 5} more` : "") +
        (issue.path.length ? ` in ${path}` : "") + unknownKeysHint(shown, known, fieldName);
    }
    if (issue.code === "invalid_type" && /received undefined$/.test(issue.message)) {
      return `${path} is required (${issue.expected})`;
    }
    if (issue.code === "invalid_type" && issue.path.length === 0) {
      return `arguments must be an object of named fields (${
        issue.message.replace(/^Invalid input: /, "")
      })`;
    }
    // A string where another type is taken (`keys: "Enter"`, `timeoutMs: "5000"`): the form it
    // takes, in the same answer.
    const form = issue.code === "invalid_type" && /received string$/.test(issue.message)
      ? STRING_INSTEAD[issue.expected] ?? ""
      : "";
    return `${path}: ${issue.message.replace(/^Invalid input: /, "")}${form}`;
  }).join("; ") + (error.issues.length > 5 ? `; and ${error.issues.length - 5} more` : "");
}
