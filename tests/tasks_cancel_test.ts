/**
 * MCP tasks cancelled at the edges, end to end over stdio with real tmux, under both protocol
 * versions:
 *
 * - a `tools/call` cancelled (`notifications/cancelled`) in the same read as it came: the SDK
 *   answers nothing, so the client never learns of a task; nothing may then be typed, or a
 *   task the client cannot see runs the command;
 * - a run_command task cancelled after its command was typed: the task is `cancelled`, as the
 *   protocol requires, yet the command runs on in the pane; the task must say so, and name the
 *   job to read or interrupt.
 *
 * Ordering without sleeping: the command's begin marker on the screen and the pane's run mark
 * in tmux say that it was typed and runs.
 */

import assert from "node:assert/strict";
import { TASKS_EXTENSION } from "../src/mcp/tasks.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, HookGate, TestTmux, waitFor } from "./helpers/tmux.ts";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;
type Era = "2025-11-25" | "2026-07-28";

function start(socket: string): StdioServer {
  const { cmd, args } = startCommand();
  return new StdioServer(cmd, [...args, "--socket", socket], cleanEnv());
}

/** A server for `era`: initialized (2025-11-25), or none needed (2026-07-28). */
async function session(socket: string, era: Era): Promise<StdioServer> {
  const server = start(socket);
  if (era === "2026-07-28") return server;
  const init = await server.request("initialize", {
    protocolVersion: era,
    capabilities: {},
    clientInfo: { name: "tmux-mcp-tests", version: "raw" },
  });
  assert.equal(init.error, undefined);
  await server.notify("notifications/initialized");
  return server;
}

/** What a request of `era` carries besides its own params: 2026-07-28 declares the extension. */
function envelope(era: Era): Record<string, unknown> {
  if (era === "2025-11-25") return {};
  return {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "tmux-mcp-tests", version: "raw" },
      "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS_EXTENSION]: {} } },
    },
  };
}

async function screen(t: Started): Promise<string> {
  return await t.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", t.ids.paneId);
}

/**
 * Starts run_command `command` as a task of `era`, holds its tmux line after its first `hook` command
 * (a person's hook that waits), cancels the task there, lets tmux go on, and returns
 * the task's status message once its call has wound down (2025-11-25: with what tasks/result
 * answered).
 */
async function cancelledAtHook(
  era: Era,
  t: Started,
  server: StdioServer,
  command: string,
  hook: string,
): Promise<string> {
  const gate = await HookGate.make();
  try {
    // The control connection warm: the steps go over it, and tmux runs a held line on.
    const warm = await server.request("tools/call", {
      name: "list_panes",
      arguments: {},
      ...envelope(era),
    });
    assert.equal(warm.error, undefined, JSON.stringify(warm.error));
    await t.tmux("set-hook", "-g", hook, gate.command);
    const created = server.request("tools/call", {
      name: "run_command",
      arguments: { paneId: t.ids.paneId, command, timeoutMs: 90_000 },
      ...(era === "2025-11-25" ? { task: {} } : {}),
      ...envelope(era),
    });
    await waitFor(() => gate.began(), `the step held after ${hook}`);
    const answer = await created;
    assert.equal(answer.error, undefined, JSON.stringify(answer.error));
    const taskId = era === "2025-11-25"
      ? (answer.result!.task as { taskId: string }).taskId
      : answer.result!.taskId as string;
    const cancel = await server.request("tasks/cancel", { taskId, ...envelope(era) });
    assert.equal(cancel.error, undefined, JSON.stringify(cancel.error));
    await gate.open();
    await t.tmux("set-hook", "-gu", hook);
    let said = "";
    if (era === "2025-11-25") {
      // tasks/result waits for the cancelled call to wind down.
      said = (await server.request("tasks/result", { taskId })).error?.message ?? "";
    }
    const got = await waitFor(
      async () => {
        const task = (await server.request("tasks/get", { taskId, ...envelope(era) }))
          .result as { status: string; statusMessage?: string };
        assert.equal(task.status, "cancelled");
        // Wound down: the message is no longer the cancel's own, or never will be.
        return task.statusMessage !== "Cancelled by tasks/cancel." || said !== "" ? task : null;
      },
      "the cancelled call to wind down",
      20_000,
    ).catch(() => null);
    return `${said}\n${got?.statusMessage ?? "Cancelled by tasks/cancel."}`;
  } finally {
    await gate.open();
    await gate.remove();
  }
}

for (const era of ["2025-11-25", "2026-07-28"] as const) {
  for (const loaded of [false, true]) {
    Deno.test(`tasks, ${era}: a tools/call cancelled in the same read as it came types nothing (the SDK ${loaded ? "loaded" : "still loading"})`, async () => {
      const t = await TestTmux.start();
      const server = await session(t.socket, era);
      try {
        // The front desk answers tools/list while the SDK loads, and hands it the call and
        // its cancellation later; a call of a tool waits for the SDK, which then reads both
        // lines at once.
        const warm = loaded
          ? { name: "list_panes", arguments: {}, ...envelope(era) }
          : envelope(era);
        const warmed = await server.request(loaded ? "tools/call" : "tools/list", warm);
        assert.equal(warmed.error, undefined, JSON.stringify(warmed.error));
        // A client asks for run_command as a task and cancels the request at once (a person
        // pressing stop): both lines in one write, so the server reads them together.
        const call = {
          jsonrpc: "2.0",
          id: "cancelled-call",
          method: "tools/call",
          params: {
            name: "run_command",
            arguments: { paneId: t.ids.paneId, command: "echo CANCELLED-TYPED-$((6*7))" },
            ...(era === "2025-11-25" ? { task: {} } : {}),
            ...envelope(era),
          },
        };
        const cancel = {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: "cancelled-call", reason: "stopped by the user", ...envelope(era) },
        };
        await server.writeLine(`${JSON.stringify(call)}\n${JSON.stringify(cancel)}`);
        if (era === "2025-11-25") {
          // Whatever the server decided, no task of it still works.
          await waitFor(async () => {
            const listed = await server.request("tasks/list");
            const tasks = listed.result!.tasks as { status: string }[];
            return tasks.every((task) => task.status !== "working");
          }, "no task working");
        }
        // A plain run_command that completes there: the pane is free, and a command the call
        // typed (it came first) has run.
        await waitFor(async () => {
          const after = await server.request("tools/call", {
            name: "run_command",
            arguments: { paneId: t.ids.paneId, command: "echo SYNC-$((1+1))" },
            ...envelope(era),
          });
          const data = after.result?.structuredContent as { exitStatus?: number } | undefined;
          return data?.exitStatus === 0;
        }, "a plain run_command to complete in the pane");
        const answered = server.notifications.some((m) => m.id === "cancelled-call");
        // Either the cancellation counts (nothing typed) or it does not (then the client is
        // answered, and so told of the task it started).
        if (!answered) {
          assert.doesNotMatch(
            await screen(t),
            /CANCELLED-TYPED-42/,
            "the call was treated as cancelled (no answer, no task given), yet its command ran",
          );
        }
        if (era === "2025-11-25") {
          const listed = await server.request("tasks/list");
          const tasks = listed.result!.tasks as { status: string }[];
          assert.ok(
            answered || tasks.every((task) => task.status !== "completed"),
            `no task the client was not told of completes: ${JSON.stringify(tasks)}`,
          );
        }
      } finally {
        await server.kill();
        await t.kill();
      }
    });
  }

  Deno.test(`tasks, ${era}: a run_command task cancelled while tmux held its typing step says the command may have been typed, and names its job`, async () => {
    const t = await TestTmux.start();
    const server = await session(t.socket, era);
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-task-typed-" });
    try {
      // Held after the paste: the mark already says typed.
      const said = await cancelledAtHook(
        era,
        t,
        server,
        `touch ${dir}/ran`,
        "after-paste-buffer",
      );
      // Whether tmux then types it or drops the rest of the line, the task cannot tell: it
      // says it may have been typed, as which job.
      assert.match(said, /may have been typed/, said);
      assert.match(said, /typed into %\d+ as job \d+-[0-9a-f]{20}-/, said);
      assert.doesNotMatch(said.split("\n")[1], /^Cancelled by tasks\/cancel\.$/, said);
    } finally {
      await server.kill();
      await t.kill();
      await Deno.remove(dir, { recursive: true });
    }
  });

  Deno.test(`tasks, ${era}: a run_command task cancelled after its command was typed says it runs on, and names its job`, async () => {
    const t = await TestTmux.start();
    const server = await session(t.socket, era);
    try {
      const created = await server.request("tools/call", {
        name: "run_command",
        arguments: { paneId: t.ids.paneId, command: "sleep 60", timeoutMs: 90_000 },
        ...(era === "2025-11-25" ? { task: {} } : {}),
        ...envelope(era),
      });
      assert.equal(created.error, undefined, JSON.stringify(created.error));
      const taskId = era === "2025-11-25"
        ? (created.result!.task as { taskId: string }).taskId
        : created.result!.taskId as string;
      // The command is typed and running once its begin marker shows; its job id is in the
      // pane's run mark (the job id, then a dot and the call's own token).
      const jobId = await waitFor(async () => {
        const mark = (await t.tmux("show-options", "-pqv", "-t", t.ids.paneId, "@tmux-mcp-run"))
          .trim();
        return mark !== "" && /_B\n/.test(await screen(t))
          ? mark.replace(/\.[0-9a-z]+$/, "")
          : null;
      }, "the command typed and begun");
      const cancel = await server.request("tasks/cancel", { taskId, ...envelope(era) });
      assert.equal(cancel.error, undefined, JSON.stringify(cancel.error));
      if (era === "2025-11-25") {
        // tasks/result, asked at once, waits for the cancelled call to wind down and says
        // what it left running.
        const result = await server.request("tasks/result", { taskId });
        assert.match(result.error?.message ?? "", new RegExp(`keeps running \\(job ${jobId}\\)`));
      }
      // The pane is still busy with the job: the command was not stopped.
      const busy = await server.request("tools/call", {
        name: "run_command",
        arguments: { paneId: t.ids.paneId, command: "echo NEXT" },
        ...envelope(era),
      });
      assert.match(JSON.stringify(busy), new RegExp(`still running .*job ${jobId}`));
      // The task stays cancelled, and once its call has wound down it says that the command
      // keeps running, as which job.
      const told = await waitFor(async () => {
        const got = await server.request("tasks/get", { taskId, ...envelope(era) });
        const task = got.result as { status: string; statusMessage?: string };
        assert.equal(task.status, "cancelled");
        return task.statusMessage?.includes(jobId) ? task : null;
      }, `the cancelled task to name job ${jobId}`);
      assert.match(told.statusMessage!, /keeps running/);
    } finally {
      await server.kill();
      await t.kill();
    }
  });
}
