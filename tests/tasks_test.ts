/**
 * MCP tasks end to end over stdio, with the `start` task's flags and real tmux: under
 * 2025-11-25 through the SDK's v1 client (its experimental task API) and on the wire, under the
 * 2026-07-28 Tasks extension on the wire (the SDK's v2 client has no task runtime). A task runs
 * the same call a plain call runs; it is created at once, polled, read, cancelled, listed and
 * forgotten; tools that do not wait refuse to be tasks; plain calls still work; and closing
 * stdin with a task running ends the process at once.
 *
 * Ordering without sleeping: a wait's task reports "Waiting on %N" (its progress message as
 * the task's statusMessage) once its watch on the pane exists; only then does the pane print.
 */

import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { TASK_LIMITS, TASK_TOOLS, TASKS_EXTENSION } from "../src/mcp/tasks.ts";
import { type RpcMessage, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, TestTmux, waitFor } from "./helpers/tmux.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RELATED = "io.modelcontextprotocol/related-task";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

function start(socket: string): StdioServer {
  const { cmd, args } = startCommand();
  return new StdioServer(cmd, [...args, "--socket", socket], cleanEnv());
}

/** Types a command into the pane with tmux directly; printf pieces keep the echo unmatched. */
async function type(t: Started, command: string): Promise<void> {
  await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "--", command);
  await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
}

function textOf(result: Record<string, unknown>): string {
  const content = result.content as { type: string; text?: string }[] | undefined;
  return content?.[0]?.type === "text" ? content[0].text ?? "" : "";
}

/** The tmux processes that are the server's clients of `socket` (the test's own carry -f). */
async function tmuxClientsOf(socket: string): Promise<string[]> {
  const r = await sh("pgrep", ["-af", `tmux -u -L ${socket} `], { allowFail: true });
  return r.stdout.split("\n").filter((l) => l.trim() !== "" && !l.includes(" -f /dev/null "));
}

Deno.test("tasks, 2025-11-25, v1 client: created at once, working, completed, the tool's result, status notifications", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  const client = new V1Client({ name: "tmux-mcp-tests", version: "1" });
  const statuses: string[] = [];
  client.setNotificationHandler(
    TaskStatusNotificationSchema,
    (n: { params: { status: string } }) => {
      statuses.push(n.params.status);
    },
  );
  await client.connect(
    new V1StdioClientTransport({
      command: cmd,
      args: [...args, "--socket", t.socket],
      env: cleanEnv(),
      cwd: ROOT,
      stderr: "pipe",
    }),
  );
  try {
    assert.deepEqual(client.getServerCapabilities()?.tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    for (const tool of tools) {
      assert.deepEqual(
        tool.execution,
        TASK_TOOLS.has(tool.name) ? { taskSupport: "optional" } : undefined,
        tool.name,
      );
    }
    assert.ok(tools.some((tool: { name: string }) => tool.name === "wait_for_text"));

    let progressed = 0;
    const began = performance.now();
    const created = await client.request(
      {
        method: "tools/call",
        params: {
          name: "wait_for_text",
          arguments: { paneId: t.ids.paneId, patterns: ["TASK-DONE"], timeoutMs: 60_000 },
          task: { ttl: 120_000 },
        },
      },
      CreateTaskResultSchema,
      { onprogress: () => progressed++ },
    );
    assert.ok(performance.now() - began < 10_000, "answered without waiting for the pane");
    const task = created.task;
    assert.match(task.taskId, UUID);
    assert.equal(task.status, "working");
    assert.equal(task.ttl, 120_000);
    assert.equal(task.pollInterval, TASK_LIMITS.pollIntervalMs);

    await waitFor(async () => {
      const now = await client.experimental.tasks.getTask(task.taskId);
      assert.equal(now.status, "working");
      return now.statusMessage === `Waiting on ${t.ids.paneId}`;
    }, "the task's wait to watch the pane");
    assert.ok(progressed >= 1, "progress keeps the request's token");
    const listed = await client.experimental.tasks.listTasks();
    assert.deepEqual(listed.tasks.map((x: { taskId: string }) => x.taskId), [task.taskId]);

    const result = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    await type(t, "printf 'TASK-DO%sNE\\n' ''");
    const answered = await result;
    assert.notEqual(answered.isError, true, textOf(answered));
    const data = answered.structuredContent as { outcome: string; matched: { pattern: string } };
    assert.equal(data.outcome, "matched");
    assert.equal(data.matched.pattern, "TASK-DONE");
    assert.match(textOf(answered), /TASK-DONE/);
    assert.deepEqual(answered._meta?.[RELATED], { taskId: task.taskId });

    const done = await client.experimental.tasks.getTask(task.taskId);
    assert.equal(done.status, "completed");
    await waitFor(() => statuses.includes("completed"), "notifications/tasks/status");

    // A tool error fails the task (2025-11-25); tasks/result still answers the tool's result.
    const failing = await client.request({
      method: "tools/call",
      params: { name: "capture_pane", arguments: { paneId: "%999" }, task: {} },
    }, CreateTaskResultSchema).catch((e: unknown) => e as Error);
    assert.ok(failing instanceof Error, "capture_pane is no task tool");
    assert.match(failing.message, /-32601/);
    const badWait = await client.request({
      method: "tools/call",
      params: { name: "wait_for_text", arguments: { paneId: "%999", patterns: ["X"] }, task: {} },
    }, CreateTaskResultSchema);
    const errorResult = await client.experimental.tasks.getTaskResult(
      badWait.task.taskId,
      CallToolResultSchema,
    );
    assert.equal(errorResult.isError, true);
    assert.match(textOf(errorResult), /^No pane %999/);
    const failed = await client.experimental.tasks.getTask(badWait.task.taskId);
    assert.equal(failed.status, "failed");
    assert.match(failed.statusMessage ?? "", /^No pane %999/);

    // A plain call, on the same connection, as before.
    const plain = await client.callTool({
      name: "wait_for_text",
      arguments: { paneId: t.ids.paneId, patterns: ["NEVER"], timeoutMs: 100 },
    });
    assert.equal((plain.structuredContent as { outcome: string }).outcome, "timedOut");
  } finally {
    await client.close();
    await t.kill();
  }
});

/** A 2025-11-25 session on the wire. */
async function legacySession(socket: string, version = "2025-11-25"): Promise<StdioServer> {
  const server = start(socket);
  const init = await server.request("initialize", {
    protocolVersion: version,
    capabilities: {},
    clientInfo: { name: "tmux-mcp-tests", version: "raw" },
  });
  assert.equal(init.error, undefined);
  await server.notify("notifications/initialized");
  return server;
}

/** A wait for text never printed that ends on its own after 1.5 s. */
function shortWait(paneId: string) {
  return { paneId, patterns: ["NEVER-PRINTED"], timeoutMs: 1_500 };
}

function waitTask(paneId: string, extra: Record<string, unknown> = {}) {
  return {
    name: "wait_for_text",
    arguments: { paneId, patterns: ["NEVER-PRINTED"], timeoutMs: 60_000 },
    _meta: { progressToken: "p1" },
    ...extra,
  };
}

Deno.test("tasks, 2025-11-25 on the wire: cancel, unknown ids, refusals, ttl, and an older client", async () => {
  const t = await TestTmux.start();
  const server = await legacySession(t.socket);
  try {
    const created = await server.request("tools/call", waitTask(t.ids.paneId, { task: {} }));
    const task = created.result!.task as { taskId: string; ttl: number; status: string };
    assert.equal(task.ttl, TASK_LIMITS.defaultTtlMs, "no ttl asked: the default");
    await waitFor(async () => {
      const got = await server.request("tasks/get", { taskId: task.taskId });
      return got.result!.statusMessage === `Waiting on ${t.ids.paneId}`;
    }, "the wait to watch the pane");
    const progress = server.notifications.find((n) => n.method === "notifications/progress");
    assert.deepEqual(progress?.params?._meta, { [RELATED]: { taskId: task.taskId } });

    // tasks/result blocks; tasks/cancel ends the task and answers it, cancelled.
    const blocked = server.request("tasks/result", { taskId: task.taskId });
    const cancelled = await server.request("tasks/cancel", { taskId: task.taskId });
    assert.equal(cancelled.result!.status, "cancelled");
    assert.equal(cancelled.result!.taskId, task.taskId);
    const unblocked = await blocked;
    assert.equal(unblocked.error?.code, -32602);
    assert.match(unblocked.error!.message, /has no result: Cancelled by tasks\/cancel/);
    const again = await server.request("tasks/cancel", { taskId: task.taskId });
    assert.equal(again.error?.code, -32602);
    assert.match(again.error!.message, /already in terminal status 'cancelled'/);
    const status = server.notifications.find((n) =>
      n.method === "notifications/tasks/status" && n.params?.status === "cancelled"
    );
    assert.equal(status?.params?.taskId, task.taskId);
    // The wait itself stopped: its watch on the pane is gone, and a new wait times out plainly.
    const plain = await server.callTool("wait_for_text", {
      paneId: t.ids.paneId,
      patterns: ["NEVER-PRINTED"],
      timeoutMs: 100,
    });
    assert.equal((plain.structuredContent as { outcome: string }).outcome, "timedOut");

    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const unknown = await server.request(method, { taskId: "not-a-task" });
      assert.equal(unknown.error?.code, -32602, method);
      assert.match(unknown.error!.message, /no task "not-a-task"/, method);
    }
    const noId = await server.request("tasks/get", {});
    assert.equal(noId.error?.code, -32602);
    const cursor = await server.request("tasks/list", { cursor: "x" });
    assert.equal(cursor.error?.code, -32602);

    const refused = await server.request("tools/call", {
      name: "list_panes",
      arguments: {},
      task: { ttl: 1000 },
    });
    assert.equal(refused.error?.code, -32601);
    assert.match(refused.error!.message, /list_panes does not run as a task/);
    const malformed = await server.request("tools/call", waitTask(t.ids.paneId, { task: "soon" }));
    assert.equal(malformed.error?.code, -32602);

    // A ttl shorter than the call's own wait would stop the wait midway: the ttl granted covers
    // the call's timeout and a little more, whatever was asked.
    const long = await server.request("tools/call", waitTask(t.ids.paneId, { task: { ttl: 1 } }));
    const longTask = long.result!.task as { taskId: string; ttl: number };
    assert.equal(longTask.ttl, 60_000 + TASK_LIMITS.keptPastBoundMs, "the wait's 60 s covered");
    assert.equal(
      (await server.request("tasks/cancel", { taskId: longTask.taskId })).error,
      undefined,
    );
    // The ttl is honoured past that: a short wait asked with ttl 1 ends on its own, its result
    // can be fetched, and then the task is gone.
    const short = await server.request(
      "tools/call",
      waitTask(t.ids.paneId, { task: { ttl: 1 }, arguments: shortWait(t.ids.paneId) }),
    );
    const shortTask = short.result!.task as { taskId: string; ttl: number };
    assert.equal(shortTask.ttl, 1_500 + TASK_LIMITS.keptPastBoundMs);
    const ended = await server.request("tasks/result", { taskId: shortTask.taskId });
    assert.equal(
      (ended.result?.structuredContent as { outcome?: string } | undefined)?.outcome,
      "timedOut",
      `the wait ran to its own timeout, not stopped at the ttl asked: ${JSON.stringify(ended)}`,
    );
    await waitFor(async () => {
      const got = await server.request("tasks/get", { taskId: shortTask.taskId });
      return got.error?.code === -32602;
    }, "the task forgotten after its ttl");
    const listed = await server.request("tasks/list");
    assert.deepEqual(
      (listed.result!.tasks as { taskId: string }[]).map((x) => x.taskId),
      [task.taskId, longTask.taskId],
      "only the cancelled tasks are still kept",
    );
    await server.endsCleanly();
  } finally {
    await server.kill();
    await t.kill();
  }

  // A client older than 2025-11-25 is told of no tasks, and a task field changes nothing.
  const t2 = await TestTmux.start();
  const old = await legacySession(t2.socket, "2025-06-18");
  try {
    const plain = await old.request("tools/call", {
      name: "wait_for_text",
      arguments: { paneId: t2.ids.paneId, patterns: ["NEVER"], timeoutMs: 100 },
      task: {},
    });
    assert.equal((plain.result!.structuredContent as { outcome: string }).outcome, "timedOut");
    await old.endsCleanly();
  } finally {
    await old.kill();
    await t2.kill();
  }
});

/** The `_meta` of a 2026-07-28 request; `tasks` declares the extension. */
function modern(tasks: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "tmux-mcp-tests", version: "raw" },
    "io.modelcontextprotocol/clientCapabilities": tasks
      ? { extensions: { [TASKS_EXTENSION]: {} } }
      : {},
    ...extra,
  };
}

async function poll(server: StdioServer, taskId: string): Promise<RpcMessage> {
  return await server.request("tasks/get", { taskId, _meta: modern(true) });
}

Deno.test("tasks, 2026-07-28 extension on the wire: the server decides, tasks/get carries the result, cancel, refusals", async () => {
  const t = await TestTmux.start();
  const server = start(t.socket);
  try {
    const discover = await server.request("server/discover", { _meta: modern(true) });
    const capabilities = discover.result!.capabilities as Record<string, unknown>;
    assert.deepEqual(capabilities.extensions, { [TASKS_EXTENSION]: {} });
    assert.equal(capabilities.tasks, undefined, "no 2025 tasks capability");
    const list = await server.request("tools/list", { _meta: modern(true) });
    const tools = list.result!.tools as { name: string; execution?: unknown }[];
    assert.ok(tools.every((tool) => tool.execution === undefined), "2026-07-28 lists no execution");

    // A long wait from a client that declares the extension: a task handle.
    const created = await server.request("tools/call", {
      name: "wait_for_text",
      arguments: { paneId: t.ids.paneId, patterns: ["MODERN-DONE"], timeoutMs: 60_000 },
      _meta: modern(true, { progressToken: 7 }),
    });
    assert.equal(created.error, undefined, JSON.stringify(created.error));
    assert.equal(created.result!.resultType, "task");
    const taskId = created.result!.taskId as string;
    assert.match(taskId, UUID);
    assert.equal(created.result!.status, "working");
    assert.equal(created.result!.ttlMs, TASK_LIMITS.defaultTtlMs);
    assert.equal(created.result!.pollIntervalMs, TASK_LIMITS.pollIntervalMs);
    await waitFor(async () => {
      const got = await poll(server, taskId);
      assert.equal(got.result!.status, "working");
      assert.equal(got.result!.resultType, "complete");
      return got.result!.statusMessage === `Waiting on ${t.ids.paneId}`;
    }, "the task's wait to watch the pane");
    const ticks = server.notifications.filter((n) => n.method === "notifications/progress").length;
    await type(t, "printf 'MODERN-DO%sNE\\n' ''");
    const done = await waitFor(async () => {
      const got = await poll(server, taskId);
      return got.result!.status === "completed" ? got : undefined;
    }, "the task to complete");
    const result = done.result!.result as Record<string, unknown>;
    assert.equal((result.structuredContent as { outcome: string }).outcome, "matched");
    assert.match(textOf(result), /MODERN-DONE/);
    assert.equal(
      server.notifications.filter((n) => n.method === "notifications/progress").length,
      ticks,
      "no progress once the handle is given",
    );

    // A tool error is a completed task under the extension.
    const bad = await server.request("tools/call", {
      name: "wait_for_text",
      arguments: { paneId: "%999", patterns: ["X"] },
      _meta: modern(true),
    });
    assert.equal(bad.result!.resultType, "complete", "a quick call is answered plainly");
    assert.equal(bad.result!.isError, true);

    // Cancel: acknowledged, then cancelled; the wait stops.
    const second = await server.request("tools/call", {
      name: "wait_for_text",
      arguments: { paneId: t.ids.paneId, patterns: ["NEVER-PRINTED"], timeoutMs: 60_000 },
      _meta: modern(true),
    });
    const secondId = second.result!.taskId as string;
    const ack = await server.request("tasks/cancel", { taskId: secondId, _meta: modern(true) });
    assert.deepEqual(ack.result, {
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "tmux-mcp", version: "0.1.0" } },
    });
    assert.equal((await poll(server, secondId)).result!.status, "cancelled");
    const ackAgain = await server.request("tasks/cancel", {
      taskId: secondId,
      _meta: modern(true),
    });
    assert.equal(ackAgain.error, undefined, "cancelling an ended task is acknowledged");

    // Without the extension: a plain call, however long, and no tasks/* methods.
    const plain = await server.request("tools/call", {
      name: "wait_for_text",
      arguments: { paneId: t.ids.paneId, patterns: ["NEVER-PRINTED"], timeoutMs: 800 },
      _meta: modern(false),
    });
    assert.equal(plain.result!.resultType, "complete");
    assert.equal((plain.result!.structuredContent as { outcome: string }).outcome, "timedOut");
    const undeclared = await server.request("tasks/get", { taskId, _meta: modern(false) });
    assert.equal(undeclared.error?.code, -32021);
    assert.deepEqual(
      (undeclared.error as { data?: unknown }).data,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
    const unknown = await server.request("tasks/get", { taskId: "nope", _meta: modern(true) });
    assert.equal(unknown.error?.code, -32602);
    const update = await server.request("tasks/update", {
      taskId,
      inputResponses: {},
      _meta: modern(true),
    });
    assert.equal(update.error, undefined, JSON.stringify(update.error));
    for (const method of ["tasks/result", "tasks/list"]) {
      const gone = await server.request(method, { taskId, _meta: modern(true) });
      assert.equal(gone.error?.code, -32601, `${method} is not in the extension`);
    }
    // A tool that does not wait is never a task.
    const listPanes = await server.request("tools/call", {
      name: "list_panes",
      arguments: {},
      _meta: modern(true),
    });
    assert.equal(listPanes.result!.resultType, "complete");
    await server.endsCleanly();
  } finally {
    await server.kill();
    await t.kill();
  }
});

for (const era of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`tasks, ${era}: closing stdin with a task running ends the process at once, no tmux child left`, async () => {
    const t = await TestTmux.start();
    const server = era === "2025-11-25" ? await legacySession(t.socket) : start(t.socket);
    try {
      const meta = era === "2025-11-25" ? { progressToken: 1 } : modern(true, { progressToken: 1 });
      const created = await server.request("tools/call", {
        ...waitTask(t.ids.paneId, era === "2025-11-25" ? { task: {} } : {}),
        _meta: meta,
      });
      const taskId = era === "2025-11-25"
        ? (created.result!.task as { taskId: string }).taskId
        : created.result!.taskId as string;
      const get = (id: string) =>
        server.request("tasks/get", {
          taskId: id,
          ...(era === "2026-07-28" && { _meta: modern(true) }),
        });
      await waitFor(
        async () => (await get(taskId)).result!.statusMessage === `Waiting on ${t.ids.paneId}`,
        "the wait to watch the pane",
      );
      if (era === "2025-11-25") server.request("tasks/result", { taskId });
      const began = performance.now();
      const status = await server.closeStdin();
      const took = performance.now() - began;
      assert.equal(status.code, 0);
      assert.ok(took < 1_500, `exited in ${Math.round(took)} ms`);
      assert.deepEqual(await tmuxClientsOf(t.socket), []);
    } finally {
      await server.kill();
      await t.kill();
    }
  });
}
