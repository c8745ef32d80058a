/**
 * Bad protocol, through the real stdio process started with the `start` task's flags (issue
 * 9): malformed JSON lines, unknown methods, requests without ids, invalid requests, a line
 * of several megabytes, a request cancelled mid-flight. JSON-RPC errors where the protocol
 * asks for them, nothing but JSON-RPC on stdout, and the server keeps serving.
 *
 * The tests at the end pin what the protocol asks for and the SDK's stdio transport does not
 * do yet (see the report in ROBUSTNESS.md); they fail until src/server.ts handles it.
 */

import assert from "node:assert/strict";
import { MAX_LISTEN_STREAMS } from "../src/mcp/listen_streams.ts";
import { newFigures, reportFigures, sleep } from "./helpers/robust.ts";
import { MODERN_META, type RpcMessage, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, statusWithin, TestTmux, trackChild, waitFor } from "./helpers/tmux.ts";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

/** A private tmux server and the real server process on it, initialized. */
async function withServer(fn: (t: Started, s: StdioServer) => Promise<void>): Promise<void> {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await s.initialize();
    await fn(t, s);
  } finally {
    await s.kill();
    await t.kill();
  }
}

/** The server still answers list_panes with the one pane of `t`, within a few seconds. */
async function stillServing(t: Started, s: StdioServer, after: string): Promise<void> {
  const answer = await s.answerWithin(
    s.request("tools/call", { name: "list_panes", arguments: {} }),
    10_000,
  );
  assert.ok(typeof answer === "object", `after ${after}: ${answer}`);
  const panes = (answer.result?.structuredContent as { panes?: { id: string }[] })?.panes ?? [];
  assert.deepEqual(panes.map((p) => p.id), [t.ids.paneId], `after ${after}`);
}

/**
 * Starts a server process of its own, writes `bytes` first (they may be anything, invalid
 * UTF-8 included), then initializes and calls list_panes; returns every message it answered.
 */
/** A server process on `t` with its stdin and stdout piped as they are, no client around it. */
function rawServer(t: Started, what: string) {
  const { cmd, args } = startCommand();
  const child = new Deno.Command(cmd, {
    args: [...args, "--socket", t.socket],
    env: cleanEnv(),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  trackChild(child, what);
  const line = (m: unknown) => new TextEncoder().encode(`${JSON.stringify(m)}\n`);
  return { child, writer: child.stdin.getWriter(), line };
}

async function rawExchange(t: Started, bytes: Uint8Array): Promise<RpcMessage[]> {
  const { child, writer, line } = rawServer(t, "a raw MCP server process");
  await writer.write(bytes);
  await writer.write(line({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  }));
  await writer.write(line({ jsonrpc: "2.0", method: "notifications/initialized" }));
  await writer.write(line({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "list_panes", arguments: {} },
  }));
  const messages: RpcMessage[] = [];
  let buffer = "";
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  try {
    while (!messages.some((m) => m.id === 2)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let nl;
      while ((nl = buffer.indexOf("\n")) !== -1) {
        messages.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
    }
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {});
    await reader.cancel().catch(() => {});
    await child.status;
  }
  return messages;
}

const MALFORMED: readonly string[] = [
  "{",
  "not json at all",
  '{"jsonrpc":"2.0","id":1,"method":',
  "[]",
  "null",
  "123",
  '"a string"',
  "{}",
  '{"jsonrpc":"2.0"}',
  '{"jsonrpc":"1.0","id":900,"method":"tools/list"}',
  '{"id":901,"method":"tools/list"}',
  '[{"jsonrpc":"2.0","id":902,"method":"tools/list"}]',
  '{"jsonrpc":"2.0","id":{"an":"object"},"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":903,"method":42}',
  '{"jsonrpc":"2.0","id":904,"result":{}}',
  '{"jsonrpc":"2.0","id":905,"error":{"code":1,"message":"a response nobody asked for"}}',
  "\u0000\u0001\u001b[2J",
  `{"jsonrpc":"2.0","id":906,"method":"tools/list","params":${"[".repeat(10_000)}}`,
  "   ",
];

Deno.test("robustness protocol: malformed lines, unknown methods and notifications leave the server serving", async () => {
  const figures = newFigures();
  await withServer(async (t, s) => {
    for (const line of MALFORMED) {
      figures.inputs++;
      await s.writeLine(line);
      await stillServing(t, s, `the line ${JSON.stringify(line.slice(0, 60))}`);
    }
    // A lone surrogate escaped in JSON, where a tool argument goes.
    figures.inputs++;
    const surrogate = await s.answerWithin(
      s.request("tools/call", { name: "list_panes", arguments: { session: "\ud800" } }),
      10_000,
    );
    assert.ok(typeof surrogate === "object" && surrogate.result?.isError, "a lone surrogate");
    await stillServing(t, s, "a lone surrogate");

    // Unknown methods with an id: -32601, with that id, whatever its type.
    for (const id of [7_001, "a string id", 0]) {
      figures.inputs++;
      const answer = new Promise<RpcMessage>((resolve) => {
        const check = () => {
          const found = s.notifications.find((m) => m.id === id && m.error);
          if (found) resolve(found);
          else setTimeout(check, 10);
        };
        check();
      });
      await s.writeLine(JSON.stringify({ jsonrpc: "2.0", id, method: "no/such/method" }));
      const got = await s.answerWithin(answer, 10_000);
      assert.ok(typeof got === "object", `unknown method with id ${JSON.stringify(id)}: ${got}`);
      assert.equal(got.error?.code, -32601);
    }

    // Requests without an id are notifications: never answered, and the server goes on.
    const seen = s.notifications.length;
    const notifications = [
      { jsonrpc: "2.0", method: "no/such/notification" },
      { jsonrpc: "2.0", method: "tools/list" },
      { jsonrpc: "2.0", method: "tools/call", params: { name: "list_panes", arguments: {} } },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 424242 } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "x" } },
    ];
    for (const n of notifications) {
      figures.inputs++;
      await s.writeLine(JSON.stringify(n));
    }
    await stillServing(t, s, "notifications");
    await sleep(300);
    const answered = s.notifications.slice(seen).filter((m) => m.method === undefined);
    assert.deepEqual(answered, [], "no answer to a notification");

    // Every line on stdout was JSON-RPC (the helper parses each one), and the process lives.
    for (const m of s.notifications) assert.equal(m.jsonrpc, "2.0");
    let exited = false;
    s.child.status.then(() => exited = true);
    await sleep(50);
    assert.equal(exited, false, "the process is still running");
  });
  reportFigures("protocol", figures);
});

Deno.test("robustness protocol: bytes that are not UTF-8 do not stop the server", async () => {
  const t = await TestTmux.start();
  try {
    const messages = await rawExchange(
      t,
      new Uint8Array([0x7b, 0xff, 0xfe, 0xc0, 0x80, 0x0d, 0x7d, 0x0a, 0xed, 0xa0, 0x80, 0x0a]),
    );
    const answer = messages.find((m) => m.id === 2);
    assert.ok(answer, `list_panes after invalid UTF-8: ${JSON.stringify(messages)}`);
    const panes = (answer.result?.structuredContent as { panes?: { id: string }[] })?.panes ?? [];
    assert.deepEqual(panes.map((p) => p.id), [t.ids.paneId]);
  } finally {
    await t.kill();
  }
});

/**
 * Sends a search_panes request of `megabytes` MB on one line; it must be answered (refused:
 * the pattern is far past its bound) and the server must go on.
 */
async function hugeLine(t: Started, s: StdioServer, megabytes: number): Promise<RpcMessage> {
  const pattern = "x".repeat(megabytes * 1024 * 1024);
  const answer = await s.answerWithin(
    s.request("tools/call", { name: "search_panes", arguments: { pattern } }),
    60_000,
  );
  assert.ok(typeof answer === "object", `a ${megabytes} MB request: ${answer}`);
  await stillServing(t, s, `a ${megabytes} MB line`);
  return answer;
}

Deno.test("robustness protocol: a line of several megabytes is answered and the server keeps serving", async () => {
  await withServer(async (t, s) => {
    // 4 MB: under the SDK transport's 10 MiB buffer, which grows by copying (see below).
    const answer = await hugeLine(t, s, 4);
    const text = JSON.stringify(answer);
    assert.ok(text.length < 10_000, `the refusal does not echo the line (${text.length} chars)`);
    await s.writeLine("y".repeat(4 * 1024 * 1024));
    await stillServing(t, s, "4 MB of garbage");
  });
});

Deno.test("robustness protocol: a wait cancelled mid-flight stops at once and the server keeps serving", async () => {
  await withServer(async (t, s) => {
    const id = 31_337;
    await s.writeLine(JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name: "wait_for_text",
        arguments: { paneId: t.ids.paneId, patterns: ["NEVER-PRINTED"], timeoutMs: 60_000 },
        _meta: { progressToken: "cancel-me" },
      },
    }));
    const progress = () =>
      s.notifications.filter((m) =>
        m.method === "notifications/progress" && m.params?.progressToken === "cancel-me"
      ).length;
    // The wait is running: it reported progress (a tick a second). Its first comes once the
    // process's first call has set up (tools loaded, control client attached, screen matched),
    // which took a loaded machine over 10 s.
    await waitFor(() => progress() >= 2, "the wait to report progress while it runs", 60_000);
    await s.notify("notifications/cancelled", { requestId: id, reason: "the test gave up" });
    await stillServing(t, s, "the cancellation");
    const after = progress();
    await sleep(2_500);
    assert.equal(progress(), after, "no progress after the cancellation: the wait ended");
    assert.equal(
      s.notifications.some((m) => m.id === id),
      false,
      "a cancelled request gets no answer",
    );
    // A new wait on the same pane works (the old one left no watch behind).
    const again = await s.answerWithin(
      s.request("tools/call", {
        name: "wait_for_text",
        arguments: { paneId: t.ids.paneId, patterns: ["NEVER-PRINTED"], timeoutMs: 200 },
      }),
      10_000,
    );
    assert.ok(typeof again === "object", `a second wait: ${again}`);
    assert.equal(
      (again.result?.structuredContent as { outcome?: string })?.outcome,
      "timedOut",
    );
  });
});

// ---------------------------------------------------------------------------------------------
// What the protocol asks for and the SDK's stdio transport did not do (it dropped such lines
// silently, and closed on a line over 10 MiB): src/mcp/stdio.ts answers them.

Deno.test("a 10 MB line is refused with an error and the server keeps serving", async () => {
  await withServer(async (t, s) => {
    await hugeLine(t, s, 10);
  });
});

Deno.test("a malformed line is answered with a JSON-RPC parse error", async () => {
  await withServer(async (_t, s) => {
    const seen = s.notifications.length;
    await s.writeLine("{ not json");
    const errorsNow = () => s.notifications.slice(seen).filter((m) => m.error);
    await waitFor(() => errorsNow().length > 0, "the parse error");
    // Lines are answered in order: once a later request is answered, no second error follows.
    await s.request("ping");
    const errors = errorsNow();
    assert.equal(errors.length, 1, "one answer");
    assert.equal(errors[0].error?.code, -32700);
    assert.equal(errors[0].id, null);
  });
});

Deno.test("an invalid request with an id is answered with -32600 or -32602", async () => {
  await withServer(async (_t, s) => {
    const cases: [number, unknown][] = [
      [950, { jsonrpc: "1.0", id: 950, method: "tools/list" }],
      [951, { jsonrpc: "2.0", id: 951, method: "tools/call" }],
      [952, { jsonrpc: "2.0", id: 952, method: "tools/call", params: { arguments: {} } }],
    ];
    for (const [, request] of cases) await s.writeLine(JSON.stringify(request));
    await waitFor(
      () => cases.every(([id]) => s.notifications.some((m) => m.id === id)),
      "an answer to each request",
    );
    for (const [id] of cases) {
      const answer = s.notifications.find((m) => m.id === id);
      assert.ok(answer?.error, `request ${id} is answered with an error`);
      assert.ok([-32600, -32602].includes(answer.error.code), `${id}: ${answer.error.code}`);
    }
  });
});

Deno.test("a batch, a bare value or an object that is no message gets one -32600; a response gets none", async () => {
  await withServer(async (_t, s) => {
    const seen = s.notifications.length;
    const client = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -1, message: "x" } });
    const lines = [
      JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }]),
      "[]",
      "42",
      JSON.stringify({ jsonrpc: "2.0" }),
      client, // a client's error response: answering it could bounce for ever
      JSON.stringify({ jsonrpc: "2.0", id: 79, result: {} }),
    ];
    for (const line of lines) await s.writeLine(line);
    await s.request("ping");
    const answers = s.notifications.slice(seen).filter((m) => m.error);
    assert.equal(answers.length, 4, JSON.stringify(answers));
    assert.ok(answers.every((m) => m.id === null && m.error?.code === -32600));
    assert.match(answers[0].error!.message, /batches are not taken/);
  });
});

Deno.test("a line over the limit is refused with the message's own id, first key or last", async () => {
  await withServer(async (_t, s) => {
    const big = "x".repeat(33 * 1024 * 1024);
    // The id last, as the SDK's clients write requests; an `id` inside the params is not it.
    const last = `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"search_panes",` +
      `"arguments":{"id":2,"pattern":"${big}"}},"id":77}`;
    await s.writeLine(last);
    await waitFor(() => s.notifications.some((m) => m.id === 77), "the refusal of 77", 30_000);
    assert.ok(!s.notifications.some((m) => m.id === 2), "no answer for the id in the params");
    const first = `{"jsonrpc":"2.0","id":"first","method":"ping","params":{"pad":"${big}"}}`;
    await s.writeLine(first);
    await waitFor(() => s.notifications.some((m) => m.id === "first"), "the refusal", 30_000);
    assert.equal(s.notifications.find((m) => m.id === 77)?.error?.code, -32600);
  });
});

Deno.test("a client that stops reading, or closes our stdout, cannot hold the process", async () => {
  const t = await TestTmux.start();
  try {
    for (const how of ["stops reading, then closes stdin", "closes stdout"] as const) {
      const { child, writer, line } = rawServer(t, `the MCP server (${how})`);
      await writer.write(line({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      }));
      if (how === "closes stdout") await child.stdout.cancel();
      // Answers of ~80 KB each: more than a pipe holds.
      for (let i = 1; i <= 20; i++) {
        await writer.write(line({ jsonrpc: "2.0", id: i, method: "tools/list" }));
      }
      if (how === "stops reading, then closes stdin") await writer.close();
      // Ends by itself (each way within about a second): bounded, so that a process that stays
      // fails the test instead of holding it.
      const status = await statusWithin(child, 30_000);
      if (status === "still running") {
        child.kill("SIGKILL");
        await child.status;
        await writer.close().catch(() => {});
        await child.stdout.cancel().catch(() => {});
      }
      assert.ok(status !== "still running", `${how}: the process did not end`);
      assert.equal(status.code, 0, how);
      if (how === "closes stdout") await writer.close().catch(() => {});
      else await child.stdout.cancel();
    }
  } finally {
    await t.kill();
  }
});

/** Whether a thread of process `pid` is blocked writing to a full pipe (Linux's ps). */
async function blockedOnPipe(pid: number): Promise<boolean> {
  const r = await sh("ps", ["-L", "-o", "wchan:40=", "-p", String(pid)], { allowFail: true });
  return /pipe_write/.test(r.stdout);
}

Deno.test("a 2026-07-28 client that stops reading with a listen stream on a busy pane cannot hold the process", async () => {
  const t = await TestTmux.start("main", { command: "sh" });
  try {
    await t.tmux("send-keys", "-t", t.ids.paneId, "while :; do echo busy; done", "Enter");
    for (const how of ["closes stdin", "SIGTERM"] as const) {
      const { child, writer, line } = rawServer(t, `the MCP server (listen, ${how})`);
      const meta = MODERN_META;
      const uri = `tmux://pane/${t.ids.paneId.slice(1)}`;
      for (let i = 0; i < 3; i++) {
        await writer.write(line({
          jsonrpc: "2.0",
          id: `listen-${i}`,
          method: "subscriptions/listen",
          params: { notifications: { resourceSubscriptions: [uri] }, _meta: meta },
        }));
      }
      // Read until the streams are acknowledged and updates flow, then stop reading. Bounded:
      // should no update come, the process is killed, its stdout ends and the test says so.
      const reader = child.stdout.getReader();
      const decoder = new TextDecoder();
      let seen = "";
      const reading = setTimeout(() => child.kill("SIGKILL"), 60_000);
      try {
        while (!seen.includes("notifications/resources/updated")) {
          const { value, done } = await reader.read();
          if (done) break;
          seen += decoder.decode(value, { stream: true });
        }
      } finally {
        clearTimeout(reading);
      }
      assert.match(seen, /notifications\/resources\/updated/);
      // Answers of ~80 KB each: more than a pipe holds, behind the updates.
      for (let i = 1; i <= 3; i++) {
        await writer.write(
          line({ jsonrpc: "2.0", id: i, method: "tools/list", params: { _meta: meta } }),
        );
      }
      if (Deno.build.os === "linux") {
        await waitFor(() => blockedOnPipe(child.pid), "the server blocked writing to its stdout");
      }
      const began = performance.now();
      if (how === "closes stdin") await writer.close();
      else child.kill("SIGTERM");
      const status = await statusWithin(child, 5_000);
      const took = performance.now() - began;
      if (status === "still running") child.kill("SIGKILL");
      await child.status;
      await writer.close().catch(() => {});
      await reader.cancel().catch(() => {});
      assert.notEqual(status, "still running", `${how}: the process did not end`);
      assert.ok(took < 2_500, `${how}: ended after ${Math.round(took)} ms`);
    }
  } finally {
    await t.kill();
  }
});

Deno.test("params the SDK checks itself are refused -32602 in one sentence, not zod's JSON", async () => {
  await withServer(async (_t, s) => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["logging/setLevel", { level: "verbose" }, /^Invalid params for logging\/setLevel: level: /],
      ["resources/read", {}, /^Invalid params for resources\/read: uri: .*expected string/],
      ["prompts/get", {}, /^Invalid params for prompts\/get: name: /],
      // A prompt's own arguments are checked before the SDK's parse, in the prompt's words.
      [
        "prompts/get",
        { name: "run_and_watch", arguments: { "a\u009b2J": 5, paneId: 7 } },
        /^Invalid arguments for prompt run_and_watch: unknown argument "a\?2J" .*; paneId must be a string; command is required\.$/,
      ],
      ["completion/complete", {}, /^Invalid params for completion\/complete: /],
    ];
    for (const [method, params, why] of cases) {
      const answer = await s.request(method, params);
      assert.equal(answer.error?.code, -32602, `${method}: ${JSON.stringify(answer)}`);
      assert.match(answer.error!.message, why);
      assert.ok(!answer.error!.message.includes("\n"), "one line");
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(answer.error!.message, /[\u0000-\u001f\u007f-\u009f]/);
    }
  });
});

Deno.test("a name like an Object member (constructor, toString) is unknown, not an internal error", async () => {
  await withServer(async (t, s) => {
    const complete = (name: string, value: string) =>
      s.request("completion/complete", {
        ref: { type: "ref/resource", uri: "tmux://pane/{pane}" },
        argument: { name, value },
      });
    const names = [
      "constructor",
      "toString",
      "valueOf",
      "hasOwnProperty",
      "isPrototypeOf",
      "__lookupGetter__",
      "__proto__",
      "toLocaleString",
    ];
    for (const name of names) {
      const answer = await complete(name, "ab");
      assert.deepEqual(answer.result?.completion, { values: [], hasMore: false }, name);
    }
    // Names the SDK looks up in its own tables: not found, as any other unknown name.
    for (const name of ["constructor", "toString", "hasOwnProperty"]) {
      const prompt = await s.request("prompts/get", { name, arguments: {} });
      assert.equal(prompt.error?.message, `Prompt ${name} not found`);
      const ref = await s.request("completion/complete", {
        ref: { type: "ref/resource", uri: name },
        argument: { name: "a", value: "" },
      });
      assert.equal(ref.error?.message, `Resource template ${name} not found`);
    }
    // The template's own variable still completes.
    const pane = await complete("pane", "");
    const values = (pane.result?.completion as { values: string[] }).values;
    assert.ok(values.includes(t.ids.paneId.slice(1)), JSON.stringify(pane));
  });
});

Deno.test("an error echoes little of what the client sent, and none of its control characters", async () => {
  await withServer(async (_t, s) => {
    // Four times the reply bound's ~100 KB, were it echoed whole (or twice: message and data).
    const x = "x".repeat(400_000);
    const errors: [string, string, Record<string, unknown>][] = [
      ["pane digits", "resources/read", { uri: `tmux://pane/${"9".repeat(400_000)}` }],
      ["socket", "resources/read", { uri: `tmux://server?socket=${x}` }],
      ["job id", "resources/read", { uri: `tmux://job/${x}` }],
      ["unknown resource", "resources/read", { uri: `tmux://nope/${x}` }],
      ["subscribe", "resources/subscribe", { uri: `tmux://nope/${x}` }],
      ["subscribe pane", "resources/subscribe", { uri: `tmux://pane/${x}` }],
      ["prompt", "prompts/get", { name: x, arguments: {} }],
      ["complete prompt", "completion/complete", {
        ref: { type: "ref/prompt", name: x },
        argument: { name: "a", value: "" },
      }],
      ["complete template", "completion/complete", {
        ref: { type: "ref/resource", uri: x },
        argument: { name: "a", value: "" },
      }],
    ];
    for (const [what, method, params] of errors) {
      const answer = await s.request(method, params);
      assert.equal(answer.error?.code, -32602, `${what}: ${JSON.stringify(answer).slice(0, 200)}`);
      const size = JSON.stringify(answer).length;
      assert.ok(size < 2_000, `${what}: the answer is ${size} characters`);
    }
    // An unknown argument of a tool: its isError result names the field, cut.
    const call = await s.request("tools/call", { name: "list_panes", arguments: { [x]: 1 } });
    const text = (call.result?.content as { text: string }[])[0].text;
    assert.ok(call.result?.isError && text.length < 2_000, `unknown field: ${text.length}`);
    assert.match(text, /unknown field "x+…"/);

    // Control characters in the messages the SDK builds: shown, never sent raw.
    const hostile = "\u001b]0;PWNED\u0007\u001b[2J\u009b31m";
    const raw: [string, string, Record<string, unknown>][] = [
      ["prompt", "prompts/get", { name: hostile, arguments: {} }],
      ["complete template", "completion/complete", {
        ref: { type: "ref/resource", uri: hostile },
        argument: { name: "a", value: "" },
      }],
      ["resource", "resources/read", { uri: `tmux://pane/1${hostile}` }],
      ["unknown resource", "resources/read", { uri: `tmux://nope/${hostile}` }],
    ];
    for (const [what, method, params] of raw) {
      const answer = await s.request(method, params);
      assert.ok(answer.error, `${what}: ${JSON.stringify(answer)}`);
      // deno-lint-ignore no-control-regex
      const control = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
      assert.doesNotMatch(answer.error.message, control, what);
      const data = (answer.error as { data?: unknown }).data;
      for (const text of strings(data)) assert.doesNotMatch(text, control, `${what}: data`);
    }
    const prompt = await s.request("prompts/get", { name: hostile, arguments: {} });
    assert.equal(prompt.error?.message, "Prompt \\x1B]0;PWNED\\x07\\x1B[2J\\x9B31m not found");
  });
});

/** Every string inside a JSON value. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value !== "object" || value === null) return [];
  return Object.values(value).flatMap(strings);
}

Deno.test("a request with a bad progress token is refused -32602 naming the field", async () => {
  await withServer(async (t, s) => {
    for (const token of [null, {}, 1.5, true, 2 ** 60, ["a"]]) {
      const answer = await s.request("tools/call", {
        name: "list_panes",
        arguments: {},
        _meta: { progressToken: token },
      });
      const what = `progressToken ${JSON.stringify(token)}`;
      assert.equal(answer.error?.code, -32602, `${what}: ${JSON.stringify(answer)}`);
      assert.match(answer.error!.message, /_meta\.progressToken must be a string or an integer/);
    }
    // Still a JSON-RPC matter when the request itself is malformed.
    await s.writeLine(JSON.stringify({
      jsonrpc: "1.0",
      id: 960,
      method: "tools/list",
      params: { _meta: { progressToken: null } },
    }));
    await waitFor(() => s.notifications.some((m) => m.id === 960), "the refusal");
    assert.equal(s.notifications.find((m) => m.id === 960)?.error?.code, -32600);
    await stillServing(t, s, "bad progress tokens");
  });
});

Deno.test("one listen stream past the bound is refused as busy, in a sentence that says how to make room, and a cancel makes it", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    const listen = () =>
      s.send("subscriptions/listen", {
        notifications: { resourcesListChanged: true },
        _meta: MODERN_META,
      });
    const acknowledged = () =>
      s.notifications.filter((n) => n.method === "notifications/subscriptions/acknowledged")
        .length;
    const open = Array.from({ length: MAX_LISTEN_STREAMS }, listen);
    await waitFor(() => acknowledged() === MAX_LISTEN_STREAMS, "every stream acknowledged");
    const refused = await s.answerWithin(listen().answer, 10_000);
    assert.ok(typeof refused === "object", String(refused));
    assert.equal(refused.error?.code, -32029);
    assert.match(refused.error?.message ?? "", /Too many listen streams are open .*\(1024\)/);
    assert.match(refused.error?.message ?? "", /cancel one/);
    // A cancelled stream makes room for the next.
    await s.notify("notifications/cancelled", { requestId: open[0].id, _meta: MODERN_META });
    const next = listen();
    await waitFor(() => acknowledged() === MAX_LISTEN_STREAMS + 1, "the next one acknowledged");
    assert.equal(s.answeredAt.has(next.id), false, "the next stream is open, not answered");
    const listed = await s.request("tools/call", {
      name: "list_panes",
      arguments: {},
      _meta: MODERN_META,
    });
    const panes = (listed.result?.structuredContent as { panes?: { id: string }[] })?.panes;
    assert.deepEqual(panes?.map((p) => p.id), [t.ids.paneId], JSON.stringify(listed));
  } finally {
    await s.kill();
    await t.kill();
  }
});
