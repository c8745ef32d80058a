/**
 * What the server answers a JSON value that the SDK's message check refused, as JSON-RPC asks
 * and the SDK's own transport does not: a batch, a malformed request or a request valid but for
 * its `_meta.progressToken` each get the error that names what is wrong; a malformed response
 * or notification gets nothing (no one waits for it, and two peers would bounce errors).
 *
 * It imports nothing of the SDK but types, as stdio.ts (which reads stdin while the SDK loads).
 *
 * @module
 */

import type { JSONRPCMessage } from "@modelcontextprotocol/server";

/** Checks that a JSON value is a JSON-RPC message (the SDK's parseJSONRPCMessage); throws if not. */
export type MessageCheck = (value: unknown) => JSONRPCMessage;

/** The error a refused message is answered with. */
export interface Refusal {
  readonly id: string | number | null;
  readonly code: number;
  readonly message: string;
}

/**
 * The answer to a value `check` refused, or null when it gets none: the transport answers
 * the client's mistakes instead of dropping them, so that a client is not left waiting.
 */
export function refusalOf(value: unknown, check: MessageCheck): Refusal | null {
  if (Array.isArray(value)) {
    return {
      id: null,
      code: -32600,
      message:
        "Invalid request: JSON-RPC batches are not taken; send each message on a line of its own.",
    };
  }
  const fields = typeof value === "object" && value !== null ? value : {};
  // A response (even a malformed one) is never answered: two peers would bounce errors.
  if (!("method" in fields) && ("result" in fields || "error" in fields)) return null;
  // A malformed notification has no one to answer.
  if ("method" in fields && !("id" in fields)) return null;
  if (badProgressToken(value, check)) {
    return {
      id: idOf(value) ?? null,
      code: -32602,
      message:
        "Invalid params: _meta.progressToken must be a string or an integer (within ±(2^53 - 1)).",
    };
  }
  return {
    id: idOf(value) ?? null,
    code: -32600,
    message: "Invalid request: not a JSON-RPC 2.0 message.",
  };
}

/**
 * Whether a request the check refused is a valid one but for its `_meta.progressToken` (null,
 * an object, 1.5, 2^60): its params are what is wrong, not the message, and the answer says
 * which field.
 */
function badProgressToken(value: unknown, check: MessageCheck): boolean {
  const request = value as { params?: { _meta?: unknown } } | null;
  const meta = request?.params?._meta;
  if (typeof meta !== "object" || meta === null || !("progressToken" in meta)) return false;
  const { progressToken: _, ...rest } = meta as Record<string, unknown>;
  try {
    check({ ...request, params: { ...request!.params, _meta: rest } });
    return true;
  } catch {
    return false;
  }
}

function idOf(value: unknown): string | number | null | undefined {
  if (typeof value !== "object" || value === null || !("id" in value)) return undefined;
  const id = (value as { id: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
