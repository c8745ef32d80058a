/**
 * Waits while the tmux server stops answering (SIGSTOP: a machine under load, a laptop lid, a
 * debugger), through the real stdio process. run_command's command, once typed, runs whatever
 * tmux does: the reply must never read as "nothing ran, try again" (a model that retries runs
 * it twice). And a wait with time left outlives a call tmux did not answer in time: it goes on
 * once tmux answers again.
 *
 * The moments are the server's own: run_command's and wait_for_text's first progress is sent
 * once the wait has begun (for run_command, once the command was typed), and the server's
 * warning that a control connection was retired says a call has gone unanswered. No sleeps.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type RpcMessage, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";

/** The text of a tools/call answer (or its JSON-RPC error). */
function textOf(answer: RpcMessage): string {
  if (answer.error) return `JSON-RPC error: ${answer.error.message}`;
  const content = (answer.result?.content ?? []) as { type: string; text?: string }[];
  return content.find((c) => c.type === "text")?.text ?? "";
}

/** Whether a progress notification for `token` has arrived. */
function progressed(s: StdioServer, token: string): boolean {
  return s.notifications.some((n) =>
    n.method === "notifications/progress" && n.params?.progressToken === token
  );
}

/** The tmux server's pid. */
async function serverPid(t: TestTmux): Promise<number> {
  return Number((await t.tmux("display-message", "-p", "#{pid}")).trim());
}

/** Whether the server has said a tmux call went unanswered (it then retires its connection). */
function unanswered(s: StdioServer): boolean {
  return /did not answer within/.test(s.stderr);
}

/**
 * Runs `body` with the MCP server started for `t`'s tmux server; `stop` and `resume` stop and
 * continue that tmux server, which is continued at the end in any case.
 */
async function withStoppable(
  body: (
    s: StdioServer,
    stop: () => void,
    resume: () => void,
    t: TestTmux & {
      ids: { paneId: string };
    },
  ) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start();
  const pid = await serverPid(t);
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  let stopped = false;
  const stop = () => {
    Deno.kill(pid, "SIGSTOP");
    stopped = true;
  };
  const resume = () => {
    Deno.kill(pid, "SIGCONT");
    stopped = false;
  };
  try {
    await s.initialize();
    await s.callTool("list_panes");
    await body(s, stop, resume, t);
  } finally {
    if (stopped) resume();
    await s.kill();
    await t.kill();
  }
}

Deno.test("run_command whose tmux stops after the command was typed says it runs, as a job, not 'try again'", async () => {
  await withStoppable(async (s, stop, resume, t) => {
    // A timeout past the 10 s a tmux call is given: the call could have waited tmux out.
    const run = s.send("tools/call", {
      name: "run_command",
      arguments: { paneId: t.ids.paneId, command: "sleep 1000", timeoutMs: 15_000 },
      _meta: { progressToken: "run" },
    });
    await waitFor(() => progressed(s, "run"), "run_command's first progress (the command typed)");
    // Stopped until the call has answered, then it goes on.
    stop();
    const answer = await run.answer;
    resume();
    const text = textOf(answer);
    // The command was typed and runs in the pane (its begin marker is printed there).
    await waitFor(async () => {
      const screen = await t.tmux("capture-pane", "-p", "-J", "-t", t.ids.paneId);
      return /__tmcp_[0-9a-f]+_B\s*$/m.test(screen);
    }, "the command running in the pane");
    assert.equal(answer.result?.isError, true, text);
    assert.doesNotMatch(text, /try again/i);
    assert.match(text, /was typed into %\d+ and keeps running as job /);
    assert.match(text, /Do not run it again/);
    // The job it names is the command's: read once tmux answers.
    const jobId = /as job (\S+), but tmux stopped answering/.exec(text)?.[1];
    assert.ok(jobId, text);
    const job = await s.callTool("get_command_result", { jobId });
    assert.notEqual(job.isError, true, JSON.stringify(job.content));
    assert.equal((job.structuredContent as { state: string }).state, "running");
  });
});

Deno.test("run_command waits out a tmux that stopped answering for a while, and reads the command's end", async () => {
  await withStoppable(async (s, stop, resume, t) => {
    const run = s.send("tools/call", {
      name: "run_command",
      arguments: { paneId: t.ids.paneId, command: 'read -r x; echo "got-$x"', timeoutMs: 120_000 },
      _meta: { progressToken: "run" },
    });
    await waitFor(() => progressed(s, "run"), "run_command's first progress (the command typed)");
    stop();
    // A call went unanswered (after the 10 s it is given); tmux then goes on.
    await waitFor(() => unanswered(s), "a tmux call unanswered", 60_000);
    resume();
    await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "hello");
    await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
    const answer = await run.answer;
    const text = textOf(answer);
    assert.notEqual(answer.result?.isError, true, text);
    const data = answer.result?.structuredContent as { exitStatus: number; output: string };
    assert.equal(data.exitStatus, 0, text);
    assert.match(data.output, /got-hello/);
  });
});

Deno.test("wait_for_text waits out a tmux that stopped answering for a while, and matches what came after", async () => {
  await withStoppable(async (s, stop, resume, t) => {
    const wait = s.send("tools/call", {
      name: "wait_for_text",
      arguments: { paneId: t.ids.paneId, patterns: ["ready-42"], timeoutMs: 120_000 },
      _meta: { progressToken: "wait" },
    });
    await waitFor(() => progressed(s, "wait"), "wait_for_text's first progress (the wait begun)");
    stop();
    await waitFor(() => unanswered(s), "a tmux call unanswered", 60_000);
    resume();
    // The line typed does not match; what it prints does.
    await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "echo ready-$((40 + 2))");
    await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
    const answer = await wait.answer;
    const text = textOf(answer);
    assert.notEqual(answer.result?.isError, true, text);
    assert.equal((answer.result?.structuredContent as { outcome: string }).outcome, "matched");
  });
});
