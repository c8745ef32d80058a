/**
 * Every error answer on its way to the client, bounded and inert, and the SDK's answers of
 * bad params made readable.
 *
 * An error's message is cut to {@link MAX_ERROR_MESSAGE_CHARS} and its control characters
 * shown (`\xNN`, see {@link visible}); a `data` over {@link MAX_ERROR_DATA_CHARS} is dropped and
 * the strings of one within it shown the same way. The server's own messages cut what they echo
 * of a client's strings already; the SDK's (`Prompt <name> not found`, `Resource template <uri>
 * not found`, `Resource not found: <uri>`) echo them whole, raw escape sequences and all.
 *
 * The SDK checks the params of the methods it serves itself (`logging/setLevel`,
 * `resources/read`, `prompts/get`, `completion/complete`, the list cursors) and answers a
 * mismatch as an internal error (-32603) whose message is zod's issues as multi-line JSON. Seen
 * through here, such an answer goes out as invalid params (-32602) in one sentence, as the
 * server's own checks of `tools/call` and the tasks methods answer.
 *
 * @module
 */

import type { JSONRPCMessage, Transport, TransportSendOptions } from "@modelcontextprotocol/server";
import { clip, visible } from "./errors.ts";

/**
 * The methods the SDK checks the params of itself (see the module): only their requests are
 * remembered, so that their answers can name them. A `tools/call` (which may wait for minutes
 * and be cancelled) is checked by the server's own code and never remembered.
 */
const SDK_CHECKED = new Set([
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "tools/list",
]);

/** Longest id (in characters) remembered; a longer one's answer names no method. */
const MAX_REMEMBERED_ID_CHARS = 256;

/** Requests remembered at once, at most; beyond, an answer names no method. */
const MAX_REMEMBERED = 1_024;

/** The transport {@link readableParamErrors} returns. */
export interface ReadableParamErrors extends Transport {
  /** How many requests are remembered now (for tests: nothing is kept for long). */
  readonly remembered: number;
}

/**
 * The transport, its answers of zod's issues made one readable sentence (see the module).
 * What it remembers of a request (its method, by id) is bounded: only the methods the SDK
 * checks, ids of at most {@link MAX_REMEMBERED_ID_CHARS} characters, at most
 * {@link MAX_REMEMBERED} at once, forgotten when answered, cancelled, or the connection closes.
 * A request the client cancels is never answered: without that, its id (up to a line's 32 MiB)
 * was kept for the life of the process.
 */
export function readableParamErrors(inner: Transport): ReadableParamErrors {
  /** The method of each request read and not answered yet, by id. */
  const methods = new Map<string | number, string>();
  const outer: ReadableParamErrors = {
    start: () => inner.start(),
    close: () => {
      methods.clear();
      return inner.close();
    },
    send: (message: JSONRPCMessage, options?: TransportSendOptions) =>
      inner.send(rewrite(message, methods), options),
    setProtocolVersion: (version: string) => inner.setProtocolVersion?.(version),
    get remembered() {
      return methods.size;
    },
  };
  inner.onmessage = (message, extra) => {
    const m = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    if (
      typeof m.method === "string" && SDK_CHECKED.has(m.method) &&
      (typeof m.id === "number" ||
        (typeof m.id === "string" && m.id.length <= MAX_REMEMBERED_ID_CHARS)) &&
      methods.size < MAX_REMEMBERED
    ) {
      methods.set(m.id, m.method);
    } else if (m.method === "notifications/cancelled") {
      // A cancelled request is not answered.
      const id = m.params?.requestId;
      if (typeof id === "string" || typeof id === "number") methods.delete(id);
    }
    outer.onmessage?.(message, extra);
  };
  inner.onerror = (error) => outer.onerror?.(error);
  inner.onclose = () => {
    methods.clear();
    outer.onclose?.();
  };
  return outer;
}

/** Longest error message sent, in characters (after its control characters are shown). */
export const MAX_ERROR_MESSAGE_CHARS = 1_000;

/** Largest error `data` sent, in characters of its JSON; a larger one is dropped. */
export const MAX_ERROR_DATA_CHARS = 1_024;

function rewrite(message: JSONRPCMessage, methods: Map<string | number, string>): JSONRPCMessage {
  const m = message as {
    id?: unknown;
    method?: unknown;
    error?: { code?: unknown; message?: unknown; data?: unknown };
  };
  if (m.method !== undefined) return message;
  let method: string | undefined;
  if (typeof m.id === "string" || typeof m.id === "number") {
    method = methods.get(m.id);
    methods.delete(m.id);
  }
  if (typeof m.error !== "object" || m.error === null) return message;
  const issue = m.error.code === -32603 && typeof m.error.message === "string"
    ? firstIssue(m.error.message)
    : null;
  const error = issue === null
    ? m.error
    : { code: -32602, message: `Invalid params for ${method ?? "the request"}: ${issue}` };
  return { ...message, error: boundedError(error) } as JSONRPCMessage;
}

/** An error as it is sent: its message cut and inert, a large `data` dropped (see the module). */
export function boundedError(
  error: { code?: unknown; message?: unknown; data?: unknown },
): { code: unknown; message: string; data?: unknown } {
  const message = clipMiddle(visible(String(error.message ?? "")), MAX_ERROR_MESSAGE_CHARS);
  if (error.data === undefined) return { code: error.code, message };
  const json = JSON.stringify(error.data);
  if (json === undefined || json.length > MAX_ERROR_DATA_CHARS) {
    return { code: error.code, message };
  }
  const data = JSON.parse(
    json,
    (_key, value) => typeof value === "string" ? visible(value) : value,
  );
  return { code: error.code, message, data };
}

/** `path: message` of the first of zod's issues, when `text` is their JSON; else null. */
export function firstIssue(text: string): string | null {
  if (!text.startsWith("[")) return null;
  let issues: unknown;
  try {
    issues = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(issues) || issues.length === 0) return null;
  const first = issues[0] as { message?: unknown; path?: unknown };
  if (typeof first?.message !== "string" || !Array.isArray(first.path)) return null;
  // The SDK checks the whole request: its params are what the caller sent.
  const path = first.path.filter((p, i) => !(i === 0 && p === "params")).map(String).join(".");
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  // A path holds the caller's own keys: no control character of theirs reaches a terminal.
  return visible(`${path ? `${path}: ` : ""}${first.message}${more}`.replace(/\s*\n\s*/g, " "));
}

/**
 * `text` within `max` characters: a longer one keeps its head and its last fifth around `…`,
 * so that a message with a long name inside (`Prompt <name> not found`) still says what it is.
 */
function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  let tail = Math.floor(max / 5);
  const first = text.charCodeAt(text.length - tail);
  if (first >= 0xdc00 && first <= 0xdfff) tail--; // never half a surrogate pair
  return `${clip(text, max - tail)}${text.slice(text.length - tail)}`;
}
