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
    /** One line as written (a number JSON.stringify would not write). */
    text: (line: string) => feed.enqueue(encoder.encode(`${line}\n`)),
    end: () => feed.close(),
  };
}

/**
 * A started transport whose client stopped reading ({@link stalledOutput}), its input fed by
 * hand ({@link fedInput}: `end` ends it).
 */
async function stalledTransport() {
  const output = stalledOutput();
  const { input, end } = fedInput();
  const transport = new StdioTransport(parseJSONRPCMessage, undefined, { input, output });
  transport.oninputend = () => {};
  await transport.start();
  return { transport, output, end };
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
  const { transport, output, end } = await stalledTransport();
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
  const { transport, output, end } = await stalledTransport();
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

/** An stdout that a client reads at once: each line it gets, parsed. */
function readOutput() {
  const lines: { id?: unknown; error?: { code: number; message: string } }[] = [];
  /** The lines as written. */
  const raw: string[] = [];
  const decoder = new TextDecoder();
  let partial = "";
  return {
    lines,
    raw,
    write(bytes: Uint8Array): Promise<number> {
      partial += decoder.decode(bytes);
      const parts = partial.split("\n");
      partial = parts.pop()!;
      raw.push(...parts);
      for (const part of parts) lines.push(JSON.parse(part));
      return Promise.resolve(bytes.length);
    },
  };
}

/** A transport reading `input` and writing to a client that reads, with what it hands on. */
async function reading(input: ReadableStream<Uint8Array>) {
  const output = readOutput();
  const transport = new StdioTransport(parseJSONRPCMessage, undefined, { input, output });
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (m) => received.push(m);
  transport.oninputend = () => {};
  await transport.start();
  return { transport, output, received };
}

const call = (id: number | string, extra: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "wait_for_text", arguments: { paneId: "%0" }, ...extra },
});

const ids = (messages: JSONRPCMessage[]) => messages.map((m) => "id" in m ? m.id : null);

Deno.test("requests waiting for their answers are bounded in number: past the bound one is refused at once, and taken again once some are answered", async () => {
  const fed = fedInput();
  const { transport, output, received } = await reading(fed.input);
  for (let id = 0; id < 1_030; id++) fed.line(call(id));
  await until("every line read", () => received.length + output.lines.length === 1_030);
  assert.equal(received.length, 1_024);
  assert.deepEqual(output.lines.map((l) => l.id), [1_024, 1_025, 1_026, 1_027, 1_028, 1_029]);
  for (const line of output.lines) {
    assert.equal(line.error?.code, -32029);
    assert.match(line.error?.message ?? "", /1024 requests are waiting for their answers/);
    assert.match(line.error?.message ?? "", /was not run/);
  }
  // Notifications still go through; a cancel, and an answer, make room.
  fed.line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 0 } });
  await transport.send({ jsonrpc: "2.0", id: 1, result: {} });
  fed.line(call("again-1"));
  fed.line(call("again-2"));
  fed.line(call("again-3"));
  await until("the next lines read", () => received.length === 1_027 && output.lines.length >= 8);
  assert.deepEqual(ids(received.slice(-3)), [null, "again-1", "again-2"]);
  assert.equal(output.lines.at(-1)?.id, "again-3");
  assert.equal(output.lines.at(-1)?.error?.code, -32029);
  fed.end();
  await transport.close();
});

Deno.test("requests waiting for their answers are bounded in bytes, and one alone is taken whatever its size", async () => {
  const fed = fedInput();
  const { transport, output, received } = await reading(fed.input);
  // Nine lines of just under a megabyte each: eight fit the bound, not the ninth.
  const pad = "x".repeat(1024 * 1024 - 200);
  for (let id = 0; id < 9; id++) fed.line(call(id, { pad }));
  await until("every line read", () => received.length + output.lines.length === 9);
  assert.equal(received.length, 8);
  assert.deepEqual(output.lines.map((l) => [l.id, l.error?.code]), [[8, -32029]]);
  assert.match(output.lines[0].error?.message ?? "", /8 MB/);
  // Answered, all of them: a single request larger than the bound is taken.
  for (let id = 0; id < 8; id++) await transport.send({ jsonrpc: "2.0", id, result: {} });
  fed.line(call("large", { pad: "x".repeat(20 * 1024 * 1024) }));
  await until("the large request", () => received.length === 9);
  assert.equal(ids(received).at(-1), "large");
  fed.end();
  await transport.close();
});

Deno.test("a request whose id is already waiting for its answer is refused, and the first keeps it", async () => {
  const fed = fedInput();
  const { transport, output, received } = await reading(fed.input);
  fed.line(call(7));
  fed.line(call(7));
  fed.line(call("7"));
  await until("every line read", () => received.length + output.lines.length === 3);
  assert.deepEqual(ids(received), [7, "7"]);
  assert.equal(output.lines.length, 1);
  assert.equal(output.lines[0].id, 7);
  assert.equal(output.lines[0].error?.code, -32600);
  assert.match(output.lines[0].error?.message ?? "", /id 7 is already in use/);
  // Answered, the id may be used again.
  await transport.send({ jsonrpc: "2.0", id: 7, result: {} });
  fed.line(call(7));
  await until("the id used again", () => received.length === 3);
  fed.end();
  await transport.close();
});

Deno.test("a message goes out with C1 controls, line separators and bidi controls escaped, and parses to the same value", async () => {
  const fed = fedInput();
  const { transport, output } = await reading(fed.input);
  // A folder a pane's program made: a C1 CSI, NEL (a line break to Python's splitlines), U+2028,
  // an RLO.
  const cwd = "/tmp/c1\u009b31mRED\u0085next\u2028line\u202etxt.exe";
  const message = {
    jsonrpc: "2.0" as const,
    id: 1,
    result: { structuredContent: { panes: [{ cwd }] } },
  };
  await transport.send(message);
  assert.equal(output.raw.length, 1);
  assert.doesNotMatch(output.raw[0], /[\u0080-\u009f\u2028\u2029\u202a-\u202e]/);
  assert.match(output.raw[0], /\\u009b31mRED\\u0085next\\u2028line\\u202etxt/);
  assert.deepEqual(JSON.parse(output.raw[0]), message);
  // Python's splitlines keeps it one line; so does any split at U+2028.
  assert.equal(output.raw[0].split(/[\n\u0085\u2028\u2029]/).length, 1);
  fed.end();
  await transport.close();
});

Deno.test("an answer written late untracks its own request, not a later one the client gave its id after cancelling it", async () => {
  // An stdout that holds every write until released, then writes them as an open one does.
  const open = readOutput();
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const output = {
    write: async (bytes: Uint8Array) => {
      await released;
      return await open.write(bytes);
    },
  };
  const fed = fedInput();
  const transport = new StdioTransport(parseJSONRPCMessage, undefined, {
    input: fed.input,
    output,
  });
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (m) => received.push(m);
  transport.oninputend = () => {};
  await transport.start();
  fed.line({ jsonrpc: "2.0", id: "x", method: "ping" });
  await until("the ping read", () => received.length === 1);
  // Its answer waits for the client to read; meanwhile the client cancels it and reuses its id.
  const answered = transport.send({ jsonrpc: "2.0", id: "x", result: {} });
  fed.line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "x" } });
  fed.line(call("x"));
  await until("the cancel and the call read", () => received.length === 3);
  release();
  await answered;
  // The call with id x still waits for its answer: another with its id is refused.
  fed.line(call("x"));
  await until("the second call answered", () => open.lines.length === 2);
  assert.equal(received.length, 3, "the second call was not handed on");
  assert.equal(open.lines[1].id, "x");
  assert.equal(open.lines[1].error?.code, -32600);
  assert.match(open.lines[1].error?.message ?? "", /already in use/);
  fed.end();
  await transport.close();
});

Deno.test("list changes for a client that stopped reading: one waits per method and stream", async () => {
  const { transport, end } = await stalledTransport();
  const line = (m: JSONRPCMessage) => new TextEncoder().encode(`${JSON.stringify(m)}\n`).length;
  const changed = (method: string, stream: string | null): JSONRPCMessage => ({
    jsonrpc: "2.0",
    method,
    ...(stream !== null &&
      { params: { _meta: { "io.modelcontextprotocol/subscriptionId": stream } } }),
  });
  const methods = [
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
  ];
  const streams = ["a", "b", null];
  // The first is being written (and never is); the rest wait their turn.
  transport.send(updated("tmux://pane/0", "a"));
  for (let round = 0; round < 2_000; round++) {
    for (const method of methods) {
      for (const stream of streams) transport.send(changed(method, stream));
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 0));
  let oneEach = line(updated("tmux://pane/0", "a"));
  for (const method of methods) {
    for (const stream of streams) oneEach += line(changed(method, stream));
  }
  assert.equal(transport.unwrittenBytes, oneEach);
  end();
  await transport.close();
});

Deno.test("a request id past the safe integers is refused with a null id, never answered as another number", async () => {
  const fed = fedInput();
  const { transport, output, received } = await reading(fed.input);
  fed.text('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}');
  fed.text('{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}');
  fed.text('{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}');
  await until("every line read", () => received.length + output.lines.length === 3);
  assert.deepEqual(ids(received), [9007199254740991]);
  assert.deepEqual(output.lines.map((l) => [l.id, l.error?.code]), [[null, -32600], [
    null,
    -32600,
  ]]);
  assert.match(output.lines[0].error?.message ?? "", /safe integer/);
  fed.end();
  await transport.close();
});
