/**
 * The process that ran a job follows its output stream until it ends (jobs.ts, followJob), in
 * waits of a bounded span each. The next wait's watch opens before the last one's closes: at no
 * moment is the stream unheard, or a program the command left running could write over the
 * shell's end in the gap and be believed (job_state.ts, hearEnds).
 */

import assert from "node:assert/strict";
import { followSpan } from "../src/tools/jobs.ts";
import { watchesHearing } from "../src/tools/job_state.ts";
import type { RunReply } from "./helpers/run_replies.ts";
import { shellPane } from "./helpers/run_replies.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

Deno.test("a job's follower hears its stream without a gap from one span of its watch to the next", async () => {
  const span = followSpan.ms;
  followSpan.ms = 40;
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket });
    const pane = await shellPane(t, "sh", "sh");
    const run = await c.ok<RunReply>("run_command", {
      paneId: pane,
      command: "sleep 2; false",
      background: true,
    });
    assert.equal(run.stillRunning, true, JSON.stringify(run));
    // Looked at every turn of the event loop for a second: many spans begin and end meanwhile.
    const until = performance.now() + 1_000;
    let looks = 0;
    while (performance.now() < until) {
      assert.ok(watchesHearing(run.jobId!) > 0, `unheard after ${looks} looks`);
      looks++;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    const job = await c.ok<{ state: string; exitStatus: number | null }>("get_command_result", {
      jobId: run.jobId!,
      waitMs: 20_000,
    });
    assert.equal(job.state, "exited", JSON.stringify(job));
    assert.equal(job.exitStatus, 1, JSON.stringify(job));
    // Its end seen, the follower lets its watch go: nothing of the job's is left heard.
    await waitFor(() => watchesHearing(run.jobId!) === 0, "the job's watches let go");
  } finally {
    followSpan.ms = span;
    await c?.close();
    await t.kill();
  }
});
