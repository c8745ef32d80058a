/**
 * call_tools_batch: in every toolset selection, each row checked exactly as a direct call,
 * tools outside the selection never run, stop/continue, and the response kept within bound.
 */

import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import assert from "node:assert/strict";
import { connect, withTmux } from "./helpers/mcp.ts";
import { parseRendered } from "./helpers/rendered.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";
import { jsonBytes, MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import type { Toolset } from "../src/mcp/toolsets.ts";
import { buildRegistry, mcpServerFor, type ServerOptions } from "../src/server.ts";
import { TmuxRunner } from "../src/tmux/run.ts";

interface Batch {
  results: {
    index: number;
    tool: string;
    success: boolean;
    error: string | null;
    result: Record<string, unknown> | null;
    omittedResultBytes: number;
  }[];
  stoppedAt: number | null;
  notRun: number;
  succeeded: number;
  failed: number;
  complete: boolean;
  note: string | null;
}

const windowCount = async (t: TestTmux): Promise<number> =>
  (await t.tmux("list-windows", "-a", "-F", "#{window_id}")).trim().split("\n").length;

Deno.test("call_tools_batch is offered in every toolset selection", async () => {
  for (const toolsets of [["inspect"], ["teardown"], ["manage", "execute"]] as Toolset[][]) {
    const c = await connect({ toolsets });
    try {
      const names = (await c.client.listTools()).tools.map((x: { name: string }) => x.name);
      assert.ok(names.includes("call_tools_batch"), `missing with ${toolsets}`);
    } finally {
      await c.close();
    }
  }
});

Deno.test("rows run in order, each result as a direct call gives it; stop ends at a failure", async () => {
  await withTmux(async (t, c) => {
    const r = await c.ok<Batch>("call_tools_batch", {
      operations: [
        { tool: "rename_window", arguments: { windowId: t.ids.windowId, name: "first" } },
        { tool: "get_window_info", arguments: { windowId: t.ids.windowId } },
        { tool: "rename_window", arguments: { windowId: "@999", name: "x" } },
        { tool: "rename_window", arguments: { windowId: t.ids.windowId, name: "never" } },
      ],
    });
    assert.equal(r.results.length, 3);
    assert.deepEqual(r.results.map((x) => [x.index, x.tool, x.success]), [
      [0, "rename_window", true],
      [1, "get_window_info", true],
      [2, "rename_window", false],
    ]);
    assert.equal(r.results[1].result?.name, "first", "rows see what earlier rows did");
    assert.deepEqual(
      r.results[1].result,
      await c.ok("get_window_info", { windowId: t.ids.windowId }),
      "same result as a direct call",
    );
    assert.match(String(r.results[2].error), /No window @999/);
    assert.equal(r.results[2].result, null);
    assert.deepEqual([r.stoppedAt, r.notRun, r.succeeded, r.failed], [2, 1, 2, 1]);
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", t.ids.windowId, "#{window_name}")).trim(),
      "first",
      "the row after the stop never ran",
    );
  });
});

Deno.test("continue runs every row; argument errors and unknown tools fail only their row", async () => {
  await withTmux(async (t, c) => {
    const r = await c.ok<Batch>("call_tools_batch", {
      onError: "continue",
      operations: [
        { tool: "rename_window", arguments: { windowId: t.ids.windowId, name: "ok", bogus: 1 } },
        { tool: "rename_window", arguments: { windowId: t.ids.windowId } },
        { tool: "no_such_tool", arguments: {} },
        { tool: "call_tools_batch", arguments: { operations: [] } },
        { tool: "rename_session", arguments: { session: "main", name: "a.b" } },
        { tool: "rename_window", arguments: { windowId: t.ids.windowId, name: "last" } },
        { tool: "list_panes", arguments: { sesion: "main" } },
        { tool: "rename-window", arguments: {} },
      ],
    });
    assert.deepEqual(
      r.results.map((x) => x.success),
      [false, false, false, false, false, true, false, false],
    );
    // The row's error names the tool's own fields, or the one a slip meant.
    assert.match(String(r.results[0].error), /unknown field bogus \(fields: windowId, name, /);
    assert.match(String(r.results[6].error), /unknown field sesion \(did you mean session\?\)$/);
    assert.match(
      String(r.results[7].error),
      /^No tool "rename-window" on this server \(did you mean rename_window\?\) \(its/,
    );
    assert.doesNotMatch(String(r.results[2].error), /did you mean/);
    assert.match(String(r.results[1].error), /name/);
    assert.match(String(r.results[2].error), /No tool "no_such_tool"/);
    assert.match(String(r.results[3].error), /do not nest/);
    assert.match(String(r.results[4].error), /'\.' or ':'/);
    assert.deepEqual([r.stoppedAt, r.notRun, r.failed], [null, 0, 7]);
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", t.ids.windowId, "#{window_name}")).trim(),
      "last",
    );
    assert.match(await c.fail("call_tools_batch", { operations: [] }), /operations/);
    assert.match(
      await c.fail("call_tools_batch", {
        operations: Array.from({ length: 17 }, () => ({ tool: "list_panes" })),
      }),
      /operations/,
    );
  });
});

Deno.test("a tool outside the selected toolsets fails its row and never runs", async () => {
  await withTmux(async (t, c) => {
    const before = await windowCount(t);
    const r = await c.ok<Batch>("call_tools_batch", {
      onError: "continue",
      operations: [
        { tool: "create_window", arguments: { session: "main" } },
        { tool: "kill_server", arguments: {} },
        { tool: "list_windows", arguments: {} },
      ],
    });
    assert.deepEqual(r.results.map((x) => x.success), [false, false, true]);
    assert.match(String(r.results[0].error), /No tool "create_window"/);
    assert.equal(await windowCount(t), before, "no window was created");
  }, { toolsets: ["inspect"] });
});

Deno.test("rows keep their guards, and take the batch's socket_name unless they name one", async () => {
  const t = await TestTmux.start();
  const facts = await t.facts();
  // This client's default server is elsewhere: only socket_name reaches t.
  const c = await connect({
    socketName: `${t.socket}-elsewhere`,
    callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: t.ids.paneId },
  });
  try {
    const r = await c.ok<Batch>("call_tools_batch", {
      socket_name: t.socket,
      onError: "continue",
      operations: [
        { tool: "respawn_pane", arguments: { paneId: t.ids.paneId, kill: true } },
        { tool: "kill_pane", arguments: { paneId: t.ids.paneId } },
        { tool: "list_panes", arguments: {} },
        { tool: "list_panes", arguments: { socket_name: `${t.socket}-elsewhere` } },
      ],
    });
    assert.match(String(r.results[0].error), /runs in/);
    assert.match(String(r.results[1].error), /runs in/);
    assert.deepEqual(
      (r.results[2].result?.panes as { id: string }[]).map((p) => p.id),
      [t.ids.paneId],
    );
    assert.deepEqual(r.results[3].result?.panes, [], "its own socket_name wins");
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("a response over the bound cuts row results with a note, never breaks", async () => {
  await withTmux(async (t, c) => {
    for (let i = 0; i < 6; i++) await t.tmux("split-window", "-d", "-t", "main:", "-l", "1");
    const bound = 6_000;
    const r = await c.ok<Batch>("call_tools_batch", {
      operations: Array.from({ length: 8 }, () => ({ tool: "list_panes", arguments: {} })),
    });
    assert.equal(r.complete, true, "fits the default bound");
    const small = await connect({ socketName: t.socket, maxResultBytes: bound });
    try {
      const cut = await small.ok<Batch>("call_tools_batch", {
        operations: Array.from({ length: 8 }, () => ({ tool: "list_panes", arguments: {} })),
      });
      assert.ok(jsonBytes(cut) <= bound, `${jsonBytes(cut)} bytes`);
      assert.equal(cut.complete, false);
      assert.equal(cut.results.length, 8, "every row is still reported");
      assert.ok(cut.results.every((x) => x.success));
      assert.equal(cut.results[0].result !== null, true, "leading rows keep their results");
      const dropped = cut.results.filter((x) => x.result === null);
      assert.ok(dropped.length > 0);
      assert.ok(dropped.every((x) => x.omittedResultBytes > 0));
      assert.match(String(cut.note), /left out/);
    } finally {
      await small.close();
    }
  });
});

/** A batch row's error, cut to fit: what was kept, and how many bytes it says were cut. */
function errorCut(error: string | null): { kept: string; cutBytes: number } {
  const m = /^([\s\S]*)… \((\d+) bytes cut\)$/.exec(String(error));
  return m ? { kept: m[1], cutBytes: Number(m[2]) } : { kept: String(error), cutBytes: 0 };
}

Deno.test("rows failing with long errors keep the batch a success, showing the row that typed", async () => {
  await withTmux(async (t, c) => {
    // Each failing row's error echoes its 4 000 quotes, which JSON doubles (the error is cut to
    // a few KB): a direct call of it is well within the bound, sixteen of them are not.
    const bad = { tool: "rename_session", arguments: { session: '"'.repeat(4000), name: "x" } };
    const alone = await c.fail("rename_session", bad.arguments);
    assert.ok(alone.length < 10_000);
    const r = await c.call("call_tools_batch", {
      onError: "continue",
      operations: [
        {
          tool: "send_keys",
          arguments: { paneId: t.ids.paneId, text: "echo typed-once", enter: true },
        },
        ...Array.from({ length: 15 }, () => bad),
      ],
    });
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", t.ids.paneId)).includes("typed-once\n"),
      "the first row's command ran",
    );
    const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
    assert.notEqual(r.isError, true, `the batch that typed reads as failed: ${text.slice(0, 200)}`);
    // The same call's reply, checked as a client reads it (schema, and the text carrying every
    // field), without typing again.
    const parsed = c.server.registry.get("call_tools_batch")!.outputSchema.safeParse(
      r.structuredContent,
    );
    assert.ok(parsed.success, String(parsed.error));
    assert.deepEqual(parseRendered(text).data, r.structuredContent, "the text holds every row");
    const batch = r.structuredContent as unknown as Batch;
    assert.ok(jsonBytes(batch) <= MAX_RESULT_BYTES, `${jsonBytes(batch)} bytes`);
    assert.deepEqual(batch.results.map((x) => x.success), [true, ...Array(15).fill(false)]);
    assert.equal(batch.results[0].tool, "send_keys");
    assert.notEqual(batch.results[0].result, null, "the row that typed keeps its result");
    assert.deepEqual([batch.succeeded, batch.failed, batch.notRun], [1, 15, 0]);
    const direct = alone.slice(0, 60);
    for (const row of batch.results.slice(1)) {
      const { kept, cutBytes } = errorCut(row.error);
      assert.ok(kept.startsWith(direct), `a row's error starts as the direct call's: ${kept}`);
      // Whole, as the direct call gives it (itself cut to a few KB), or cut and saying so.
      assert.ok(row.error === alone || cutBytes > 0, "a cut error says how much of it was cut");
    }
    assert.ok(batch.results.some((x) => x.error !== null && x.error !== alone), "some were cut");
    assert.match(String(batch.note), /error/);
  });
});

Deno.test("many rows, successes and failures mixed, each short, all reported within a small bound", async () => {
  await withTmux(async (t, c) => {
    for (let i = 0; i < 3; i++) await t.tmux("split-window", "-d", "-t", "main:", "-l", "1");
    const bound = 12_000;
    // Each error (about 2 KB in JSON, twice that in the text, where its quotes are escaped
    // twice) is within its own cap; with the successes' results the rows are far past the bound.
    const failing = { session: '"'.repeat(400), name: "x" };
    const alone = await c.fail("rename_session", failing);
    const operations = Array.from(
      { length: 16 },
      (_, i) =>
        i % 2 === 0
          ? { tool: "list_panes", arguments: {} }
          : { tool: "rename_session", arguments: failing },
    );
    const small = await connect({ socketName: t.socket, maxResultBytes: bound });
    try {
      const r = await small.ok<Batch>("call_tools_batch", { onError: "continue", operations });
      assert.ok(jsonBytes(r) <= bound, `${jsonBytes(r)} bytes`);
      assert.equal(r.results.length, 16, "every row is reported");
      assert.deepEqual(r.results.map((x) => x.success), operations.map((_, i) => i % 2 === 0));
      assert.deepEqual([r.succeeded, r.failed, r.stoppedAt, r.notRun], [8, 8, null, 0]);
      // Results go before the rest of the errors, the leading ones first.
      const withResult = r.results.filter((x) => x.success).map((x) => x.result !== null);
      const firstLeftOut = withResult.indexOf(false);
      assert.ok(firstLeftOut > 0, `the leading rows keep their results: ${withResult}`);
      assert.ok(withResult.slice(firstLeftOut).every((x) => !x), `in order: ${withResult}`);
      for (const row of r.results.filter((x) => !x.success)) {
        const { kept, cutBytes } = errorCut(row.error);
        assert.ok(kept.length > 0, "every failed row says why, at least in part");
        assert.ok(alone.startsWith(kept), `a cut error is the start of the whole: ${kept}`);
        assert.equal(
          new TextEncoder().encode(kept).length + cutBytes,
          new TextEncoder().encode(alone).length,
          "what was kept and what it says was cut make the whole error",
        );
      }
      assert.ok(r.results.some((x) => errorCut(x.error).cutBytes > 0), "some errors were cut");
      assert.match(String(r.note), /error/);
      assert.equal(r.complete, false);
    } finally {
      await small.close();
    }
  });
});

for (const protocol of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`a cancelled batch sends no progress once it has the cancellation (${protocol})`, async () => {
    const t = await TestTmux.start();
    const options: ServerOptions = {
      address: { socketName: t.socket },
      toolsets: ["inspect"],
      version: "test",
      maxResultBytes: MAX_RESULT_BYTES,
      callerEnv: {},
      runner: new TmuxRunner(),
    };
    const registry = buildRegistry(options.runner!, options);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    // The pair delivers each message as it is sent: what the server sends after the client's
    // cancellation, it sends after it had it.
    let cancelled = false;
    const late: string[] = [];
    const toClient = serverSide.send.bind(serverSide);
    serverSide.send = (message, sendOptions) => {
      if (cancelled && "method" in message && message.method === "notifications/progress") {
        late.push(JSON.stringify(message));
      }
      return toClient(message, sendOptions);
    };
    const toServer = clientSide.send.bind(clientSide);
    clientSide.send = (message, sendOptions) => {
      if ("method" in message && message.method === "notifications/cancelled") cancelled = true;
      return toServer(message, sendOptions);
    };
    const served = serveStdio(({ era }) => mcpServerFor(registry, options, era), {
      transport: serverSide,
    });
    const client = new Client(
      { name: "tmux-mcp-tests", version: "2" },
      { versionNegotiation: { mode: protocol === "2025-11-25" ? "legacy" : { pin: protocol } } },
    );
    try {
      await client.connect(clientSide);
      assert.equal(client.getNegotiatedProtocolVersion(), protocol);
      const abort = new AbortController();
      const call = client.callTool({
        name: "call_tools_batch",
        arguments: {
          operations: [
            {
              tool: "wait_for_text",
              arguments: { paneId: t.ids.paneId, patterns: ["NEVER-PRINTED"], timeoutMs: 60_000 },
            },
            { tool: "list_panes", arguments: {} },
          ],
          onError: "continue",
        },
      }, {
        signal: abort.signal,
        // Cancelled as the first row's wait reports it is in place: no other progress is on
        // its way then (the wait's next is a second later), so any that comes after the
        // cancellation was sent after the server had it.
        onprogress: () => abort.abort("the person gave up"),
      });
      assert.equal(await call.then(() => "answered", () => "rejected"), "rejected");
      // The batch has wound down (its row ended with the cancellation) and sent what it would.
      await registry.settle(30_000);
      assert.deepEqual(late, [], "progress for a request the server knew was cancelled");
    } finally {
      await client.close();
      await served.close();
      await options.runner!.close();
      await t.kill();
    }
  });
}

Deno.test("a row's progress is the batch's, scaled into the row's share, always increasing", async () => {
  await withTmux(async (t, c) => {
    await t.prompt(t.ids.paneId);
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const call = c.client.callTool(
      {
        name: "call_tools_batch",
        arguments: {
          operations: [
            { tool: "list_panes", arguments: {} },
            {
              tool: "wait_for_text",
              arguments: { paneId: t.ids.paneId, patterns: ["ROW-DONE"], timeoutMs: 60_000 },
            },
          ],
        },
      },
      undefined,
      { onprogress: (p: { progress: number; total?: number; message?: string }) => seen.push(p) },
    );
    // The waiting row reports before it ends, within its share (the second of two).
    const during = await waitFor(
      () => seen.find((p) => p.message?.startsWith("wait_for_text: ") && p.progress < 2),
      "the waiting row's progress",
    );
    assert.ok(during.progress > 1, JSON.stringify(seen));
    await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "echo ROW-DONE");
    await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
    const result = await call;
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    assert.deepEqual(seen.at(-1), { progress: 2, total: 2, message: "wait_for_text: ok" });
    assert.ok(seen.every((p) => p.total === 2), JSON.stringify(seen));
    for (let i = 1; i < seen.length; i++) {
      assert.ok(seen[i].progress > seen[i - 1].progress, `not increasing: ${JSON.stringify(seen)}`);
    }
  });
});
