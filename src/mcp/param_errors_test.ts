import assert from "node:assert/strict";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { MAX_ERROR_MESSAGE_CHARS, readableParamErrors } from "./param_errors.ts";

/** A transport that records what is sent and lets the test deliver messages. */
function fakeTransport() {
  const sent: JSONRPCMessage[] = [];
  let closed = 0;
  const inner: Transport = {
    start: () => Promise.resolve(),
    close: () => {
      closed++;
      inner.onclose?.();
      return Promise.resolve();
    },
    send: (message: JSONRPCMessage) => {
      sent.push(message);
      return Promise.resolve();
    },
  };
  const deliver = (message: unknown) => inner.onmessage?.(message as JSONRPCMessage);
  return { inner, sent, deliver, closed: () => closed };
}

const zodError = (id: string | number) => ({
  jsonrpc: "2.0" as const,
  id,
  error: {
    code: -32603,
    message: JSON.stringify([{ code: "invalid_type", path: ["params", "name"], message: "bad" }]),
  },
});

Deno.test("readableParamErrors keeps nothing of a request it will not name, nor of a cancelled one", () => {
  const { inner, sent, deliver } = fakeTransport();
  const outer = readableParamErrors(inner);
  outer.onmessage = () => {};
  // Cancelled waits (tools/call is answered by the server's own checks): never remembered.
  for (let i = 0; i < 50; i++) {
    const id = `${i}-${"i".repeat(100_000)}`;
    deliver({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "wait_for_text" } });
    deliver({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
  }
  assert.equal(outer.remembered, 0, "cancelled tool calls are not kept");
  // A method the SDK checks, cancelled before its answer: forgotten with the cancellation.
  for (let i = 0; i < 50; i++) {
    deliver({ jsonrpc: "2.0", id: i, method: "prompts/get", params: {} });
    deliver({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: i } });
  }
  assert.equal(outer.remembered, 0, "cancelled prompts/get requests are forgotten");
  // A huge id is never kept: its answer still reads in one sentence, naming no method.
  const huge = "h".repeat(1_000_000);
  deliver({ jsonrpc: "2.0", id: huge, method: "prompts/get", params: {} });
  assert.equal(outer.remembered, 0, "a huge id is not kept");
  outer.send(zodError(huge) as JSONRPCMessage);
  assert.deepEqual((sent.at(-1) as { error: unknown }).error, {
    code: -32602,
    message: "Invalid params for the request: name: bad",
  });
  // An ordinary one is named, and forgotten once answered.
  deliver({ jsonrpc: "2.0", id: 7, method: "prompts/get", params: {} });
  assert.equal(outer.remembered, 1);
  outer.send(zodError(7) as JSONRPCMessage);
  assert.equal(
    (sent.at(-1) as { error: { message: string } }).error.message,
    "Invalid params for prompts/get: name: bad",
  );
  assert.equal(outer.remembered, 0);
});

Deno.test("readableParamErrors forgets every request when the connection closes, and holds a bounded number", async () => {
  const { inner, deliver } = fakeTransport();
  const outer = readableParamErrors(inner);
  outer.onmessage = () => {};
  for (let i = 0; i < 5_000; i++) {
    deliver({ jsonrpc: "2.0", id: i, method: "resources/read", params: {} });
  }
  assert.ok(outer.remembered <= 1_024, `at most 1024 remembered, not ${outer.remembered}`);
  await outer.close();
  assert.equal(outer.remembered, 0, "closed: nothing kept");
});

Deno.test("readableParamErrors sends every error cut, inert, and without a large data", () => {
  const { inner, sent } = fakeTransport();
  const outer = readableParamErrors(inner);
  const error = (message: string, data?: unknown) => {
    outer.send({ jsonrpc: "2.0", id: 1, error: { code: -32602, message, data } });
    return (sent.at(-1) as { error: { code: number; message: string; data?: unknown } }).error;
  };
  const long = error(`Prompt ${"x".repeat(900_000)} not found`, { uri: "y".repeat(900_000) });
  assert.equal(long.code, -32602);
  assert.ok(long.message.length <= MAX_ERROR_MESSAGE_CHARS, `${long.message.length}`);
  assert.match(long.message, /^Prompt x+…x+ not found$/, "the head and the end are kept");
  assert.equal(long.data, undefined, "a large data is dropped");
  const hostile = error("Prompt \u001b]0;PWNED\u0007\u009b31m not found", { uri: "a\u001b[2J" });
  assert.equal(hostile.message, "Prompt \\x1B]0;PWNED\\x07\\x9B31m not found");
  assert.deepEqual(hostile.data, { uri: "a\\x1B[2J" });
  // What is neither long nor hostile goes as it came.
  assert.deepEqual(error("Method not found", { reason: "x", n: 1 }), {
    code: -32602,
    message: "Method not found",
    data: { reason: "x", n: 1 },
  });
});
