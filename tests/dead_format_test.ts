/**
 * A shell that exits in a remain-on-exit pane whose `remain-on-exit-format` is set (tmux 3.3
 * has the option): the line tmux draws on the pane's bottom row is no output, whatever the
 * format says, and only that row goes. It may hold pane content (`#{pane_title}`), show the
 * same text as an output row, sit on one row with output (tmux marks the row above it as
 * wrapped, so a joined capture puts the two together), be empty, or hold a line break.
 *
 * The commands sleep a moment before they exit, so that tmux has read all they printed (it
 * drops what it has not read when the terminal closes) and the output is known to the byte.
 */

import assert from "node:assert/strict";
import { JOB_ANSWER_BYTES } from "../src/tools/job_state.ts";
import { type RunOptions, TmuxRunner } from "../src/tmux/run.ts";
import type { ServerAddress } from "../src/tmux/server_address.ts";
import type { JobReply, RunReply } from "./helpers/run_replies.ts";
import { connect, type TestClient, withTmux } from "./helpers/mcp.ts";
import type { StartedTmux } from "./helpers/mcp.ts";
import { TestTmux } from "./helpers/tmux.ts";

/** Runs `command` in the server's pane with remain-on-exit on and the format `format`. */
async function runDying(
  t: StartedTmux,
  c: TestClient,
  format: string,
  command: string,
): Promise<RunReply> {
  await t.tmux("set-option", "-g", "remain-on-exit", "on");
  await t.tmux("set-option", "-g", "remain-on-exit-format", format);
  return await c.ok<RunReply>("run_command", {
    paneId: t.ids.paneId,
    command,
    timeoutMs: 10_000,
  });
}

Deno.test("a format's line is no output: the tester's case, as run_command reads it", async () => {
  await withTmux(async (t, c) => {
    const run = await runDying(t, c, "[exited #{pane_dead_status}]", "echo out2; exit 5");
    assert.equal(run.exitStatus, 5);
    // "" when tmux learnt of the exit before it read the line (see jobs_test.ts).
    assert.match(run.output, /^(out2)?$/, JSON.stringify(run.output));
  });
});

Deno.test("a format's line is no output, read in the background too", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    await t.tmux("set-option", "-g", "remain-on-exit-format", "[exited #{pane_dead_status}]");
    const run = await c.ok<RunReply>("run_command", {
      paneId: t.ids.paneId,
      command: "echo out1; sleep 0.3; exit 7",
      background: true,
    });
    const job = await c.ok<JobReply>("get_command_result", { jobId: run.jobId, waitMs: 10_000 });
    assert.equal(job.state, "lost", JSON.stringify(job));
    assert.equal(job.output, "out1");
  });
});

Deno.test("a format that shows the pane's title: the title is not output", async () => {
  await withTmux(async (t, c) => {
    const run = await runDying(
      t,
      c,
      "exit status 0 -- all good #{pane_title}",
      "printf '\\033]2;OK-TITLE\\007'; echo out1; sleep 0.3; exit 7",
    );
    assert.equal(run.exitStatus, 7);
    assert.equal(run.output, "out1");
  });
});

Deno.test("a format's line on the row of output without a final newline: the output stays", async () => {
  await withTmux(async (t, c) => {
    const run = await runDying(
      t,
      c,
      "[exited #{pane_dead_status}]",
      "seq 1 40; printf abc; sleep 0.3; exit 5",
    );
    assert.equal(run.exitStatus, 5);
    assert.ok(run.output.endsWith("\n39\n40\nabc"), JSON.stringify(run.output));
  });
  // tmux's default format ("Pane is dead (status 5, TIME)") the same.
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const run = await c.ok<RunReply>("run_command", {
      paneId: t.ids.paneId,
      command: "seq 1 40; printf abc; sleep 0.3; exit 5",
      timeoutMs: 10_000,
    });
    assert.ok(run.output.endsWith("\n39\n40\nabc"), JSON.stringify(run.output));
  });
});

Deno.test("a format that draws what the output's last row shows: that row stays", async () => {
  await withTmux(async (t, c) => {
    const run = await runDying(
      t,
      c,
      "#{pane_title}",
      "printf '\\033]2;same line\\007'; echo same line; echo same line; sleep 0.3; exit 3",
    );
    assert.equal(run.exitStatus, 3);
    assert.equal(run.output, "same line\nsame line");
  });
  // The same on the bottom row, joined with the output there.
  await withTmux(async (t, c) => {
    const run = await runDying(
      t,
      c,
      "#{pane_title}",
      "seq 1 40; printf '\\033]2;tail\\007'; printf tail; sleep 0.3; exit 3",
    );
    assert.ok(run.output.endsWith("\n40\ntail"), JSON.stringify(run.output));
  });
});

Deno.test("an empty format draws nothing, and a line break in one is drawn as none", async () => {
  await withTmux(async (t, c) => {
    const run = await runDying(t, c, "", "echo out; echo; sleep 0.3; exit 4");
    assert.equal(run.exitStatus, 4);
    assert.equal(run.output, "out");
  });
  await withTmux(async (t, c) => {
    const run = await runDying(
      t,
      c,
      "line1\nline2 #{pane_dead_status}",
      "echo out; sleep 0.3; exit 4",
    );
    assert.equal(run.exitStatus, 4);
    assert.equal(run.output, "out");
  });
});

Deno.test("a format that runs a command (#(...)) is not run again to read the pane", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-dead-format-" });
  try {
    const ran = `${dir}/ran`;
    await withTmux(async (t, c) => {
      const run = await runDying(
        t,
        c,
        `x #(echo ran >> ${ran}) y`,
        "echo out; sleep 0.3; exit 2",
      );
      assert.equal(run.exitStatus, 2);
      // tmux ran it once, to draw its line; a read of the pane expanding it would run it again.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await Deno.readTextFile(ran), "ran\n");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A runner that counts the reads of a dead pane's line and rows streamed from tmux. */
class StreamCounter extends TmuxRunner {
  deadStreams = 0;
  constructor() {
    super({ control: false });
  }

  override stream(
    address: ServerAddress,
    args: readonly string[],
    sink: (chunk: Uint8Array) => void | Promise<void>,
    options: RunOptions = {},
  ): Promise<{ code: number; stderr: string }> {
    if (args.some((a) => a.includes("remain-on-exit-format"))) this.deadStreams++;
    return super.stream(address, args, sink, options);
  }
}

Deno.test("a dead pane's rows streamed (more than a read holds whole) lose tmux's line the same", async () => {
  // 1 050 rows of 400 cells of a letter and ten combining marks (21 bytes a cell): about 8.8 MB,
  // more than a job's read holds whole; then output without a final newline on the bottom row.
  assert.ok(JOB_ANSWER_BYTES < 1_050 * 400 * 21);
  const cell = `e${"\u0301".repeat(10)}`;
  const rows = Array.from({ length: 1_050 }, (_, i) => `${i} ${cell.repeat(400)}`);
  const path = await Deno.makeTempFile({ prefix: "tmux-mcp-dead-format-" });
  const t = await TestTmux.start("main", { width: 420, height: 10 });
  const runner = new StreamCounter();
  let c: TestClient | undefined;
  try {
    await Deno.writeTextFile(path, `${rows.join("\n")}\n`);
    c = await connect({ socketName: t.socket, runner });
    await t.tmux("set-option", "-g", "history-limit", "2000");
    const pane = (await t.shellWindow()).paneId;
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    await t.tmux("set-option", "-g", "remain-on-exit-format", "[exited #{pane_dead_status}]");
    const run = await c.ok<RunReply & { omittedBytes: number }>("run_command", {
      paneId: pane,
      command: `cat '${path}'; printf abc; sleep 0.5; exit 5`,
      timeoutMs: 60_000,
    });
    assert.equal(run.exitStatus, 5);
    assert.ok(runner.deadStreams > 0, "the dead pane's rows were streamed");
    assert.ok(run.output.endsWith(`\n${rows.at(-1)}\nabc`), JSON.stringify(run.output.slice(-80)));
    assert.ok(run.omittedBytes > 0);
  } finally {
    await c?.close();
    await t.kill();
    await Deno.remove(path);
  }
});
