/**
 * The stdio transport against a client that stopped reading: what waits for it stays bounded,
 * input is still read to its end, and nothing waits for it once input has ended.
 */

import { type JSONRPCMessage, parseJSONRPCMessage } from "@modelcontextprotocol/server";
import assert from "node:assert/strict";
import { StdioTransport } from "./stdio.ts";

/** An stdout whose reader never reads: the first write never completes. */
function stalledOutput() {
  let writes = 0;
  return {
    get writes() {
      return writes;
    },
    write(_bytes: Uint8Array): Promise<number> {
      writes++;
      return new Promise<number>(() => {});
    },
  };
}

/** An stdin fed by the test. */
function fedInput() {
  let feed!: ReadableStreamDefaultController<Uint8Array>;
  const input = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) });
  const encoder = new TextEncoder();
  return {
    input,
    line: (message: unknown) => feed.enqueue(encoder.encode(`${JSON.stringify(message)}\n`)),
    end: () => feed.close(),
  };
}

async function until(what: string, ok: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const updated = (uri: string, stream: string): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/resources/updated",
  params: { uri, _meta: { "io.modelcontextprotocol/subscriptionId": stream } },
});

Deno.test("updates and progress for a client that stopped reading: one waits per stream and URI, per token", async () => {
  const output = stalledOutput();
  const { input, end } = fedInput();
  const transport = new StdioTransport(parseJSONRPCMessage, undefined, { input, output });
  transport.oninputend = () => {};
  await transport.start();
  const line = (m: JSONRPCMessage) => new TextEncoder().encode(`${JSON.stringify(m)}\n`).length;
  const uris = ["tmux://pane/1", "tmux://pane/2", "tmux://pane/30"];
  const streams = ["a", "b"];
  // The first is being written (and never is); the rest wait their turn.
  transport.send(updated("tmux://pane/0", "a"));
  for (let round = 0; round < 5_000; round++) {
    for (const stream of streams) for (const uri of uris) transport.send(updated(uri, stream));
    transport.send({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: 7, progress: round, total: 5_000 },
    });
  }
  await new Promise((resolve) => setTimeout(resolve, 0));
  const oneEach = line(updated("tmux://pane/0", "a")) +
    streams.length * uris.reduce((sum, uri) => sum + line(updated(uri, "a")), 0) +
    line({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: 7, progress: 4_999, total: 5_000 },
    });
  assert.equal(transport.unwrittenBytes, oneEach);
  assert.equal(output.writes, 1);
  // An answer is never merged.
  transport.send({ jsonrpc: "2.0", id: 1, result: {} });
  transport.send({ jsonrpc: "2.0", id: 2, result: {} });
  assert.ok(transport.unwrittenBytes > oneEach);
  end();
  await transport.close();
});

Deno.test("a client that stopped reading is still read: its end of input is seen, and sends stop waiting", async () => {
  const output = stalledOutput();
  const { input, line, end } = fedInput();
  const transport = new StdioTransport(parseJSONRPCMessage, undefined, { input, output });
  const received: JSONRPCMessage[] = [];
  let ended = false;
  transport.onmessage = (m) => received.push(m);
  transport.oninputend = () => ended = true;
  await transport.start();
  // Over the 8 MB of answers past which requests wait: one answer of 9 MB.
  const waiting = transport.send({
    jsonrpc: "2.0",
    id: 0,
    result: { text: "x".repeat(9 * 1024 * 1024) },
  });
  line({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(received.length, 0, "requests wait while answers are not read");
  end();
  await until("the end of input", () => ended);
  // What was read before the end is handed on, then the end reported.
  assert.deepEqual(received.map((m) => "id" in m && m.id), [1]);
  // Nothing waits for bytes the client does not read any more.
  let settled = false;
  waiting.then(() => settled = true);
  transport.send({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: 1, progress: 1 },
  }).then(() => settled &&= true);
  await until("the sends to settle", () => settled);
  const began = performance.now();
  await transport.close();
  assert.ok(performance.now() - began < 2_000);
});

Deno.test("a close does not wait for answers a client stopped reading, nor past the exit's deadline", async () => {
  // A write stalled since long: the client is not reading, the close waits for nothing.
  const output = stalledOutput();
  const { input, end } = fedInput();
  const transport = new StdioTransport(parseJSONRPCMessage, undefined, { input, output });
  transport.oninputend = () => {};
  await transport.start();
  transport.send({ jsonrpc: "2.0", id: 1, result: { text: "x".repeat(1_000) } });
  transport.send({ jsonrpc: "2.0", id: 2, result: {} });
  end();
  // Timers never fire early: the write has waited past the stall's 100 ms by then.
  await new Promise((resolve) => setTimeout(resolve, 150));
  let began = performance.now();
  await transport.close();
  // The close used to wait 500 ms for the write whatever the client did.
  assert.ok(performance.now() - began < 400, `waited ${performance.now() - began} ms`);
  assert.equal(output.writes, 1);

  // A client that reads, slowly (a write done every 20 ms, never stalled): it gets answers
  // until the exit's deadline, not the close's own half second.
  let written = 0;
  const slow = {
    write: (bytes: Uint8Array) =>
      new Promise<number>((resolve) => setTimeout(() => resolve(bytes.length), 20)).then((n) => {
        written++;
        return n;
      }),
  };
  const fed = fedInput();
  const late = new StdioTransport(parseJSONRPCMessage, undefined, { ...fed, output: slow });
  late.oninputend = () => {};
  await late.start();
  for (let id = 0; id < 100; id++) late.send({ jsonrpc: "2.0", id, result: {} });
  fed.end();
  began = performance.now();
  late.endBy(began + 100);
  await late.close();
  const took = performance.now() - began;
  assert.ok(took >= 95 && took < 400, `waited ${took} ms for a deadline 100 ms away`);
  assert.ok(written < 100, `${written} answers written`);
});
