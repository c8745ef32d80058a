/**
 * A server that runs for months keeps nothing for good of the panes and tmux servers it was once
 * handed: a run_command's run is forgotten once it is read over or its pane is gone, and only
 * the start of its command is kept meanwhile; the moments after typing are forgotten once over;
 * list_panes notes only the sizes of large servers. (Key-name verdicts: src/tmux/keys_test.ts.)
 */

import assert from "node:assert/strict";
import { MAX_RUNS, runsFor, type RunState, takeRun } from "../src/tools/busy_panes.ts";
import { endsFor } from "../src/tools/prompt_programs.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { lookedServers } from "../src/tmux/left_behind.ts";
import { connect, withTmux } from "./helpers/mcp.ts";
import { testSocketName, TestTmux, waitFor } from "./helpers/tmux.ts";

type Run = { exitStatus: number | null; stillRunning: boolean; jobId?: string };
type Job = { state: "running" | "exited" | "lost" };

Deno.test("run_command: runs of panes killed while their command ran are forgotten; only a command's start is kept", async () => {
  const runner = new TmuxRunner();
  await withTmux(async (t, c) => {
    const long = "x".repeat(60_000);
    for (let i = 0; i < 12; i++) {
      const made = await c.ok<{ paneId: string }>("split_window", {
        paneId: t.ids.paneId,
        command: "sh",
      });
      await t.prompt(made.paneId);
      const run = await c.ok<Run>("run_command", {
        paneId: made.paneId,
        command: `sleep 30 # ${i} ${long}`,
        background: true,
      });
      assert.equal(run.stillRunning, true);
      await c.ok("kill_pane", { paneId: made.paneId });
    }
    const table = runsFor(runner);
    // The last one's pane went after its call: it is found gone by the next run_command.
    assert.ok(table.size <= 1, `${table.size} runs kept of panes that are gone`);
    for (const run of table.values()) {
      assert.ok(run.command.length <= 80, `${run.command.length} characters of a command kept`);
    }
  }, { runner });
});

Deno.test("get_command_result forgets a run it reads over; a running one still keeps its pane busy", async () => {
  const runner = new TmuxRunner();
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    const run = await c.ok<Run>("run_command", {
      paneId: p,
      command: `sleep 30 # ${"y".repeat(60_000)}`,
      background: true,
    });
    assert.ok(run.jobId);
    const table = runsFor(runner);
    assert.equal((await c.ok<Job>("get_command_result", { jobId: run.jobId })).state, "running");
    assert.equal(table.size, 1, "a running job's run is kept");
    const refused = await c.fail("run_command", { paneId: p, command: "true" });
    // The refusal shows the command's start (80 bytes), and names the job.
    assert.match(refused, /still running an earlier run_command \("sleep 30 # y{69}", started/);
    assert.ok(refused.includes(run.jobId), refused);
    // A background call returns once the line is typed. A C-c in the moment between the
    // shell's fork and its handing the terminal to sleep reaches the shell alone, which then
    // waits out the sleep (seen in CI: the job still ran 20 s later).
    await t.foreground(p, "sleep");
    await c.ok("send_keys", { paneId: p, keys: ["C-c"] });
    const over = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 20_000 });
    assert.equal(over.state, "lost");
    assert.equal(table.size, 0, "the run read over is forgotten");
    const next = await c.ok<Run>("run_command", { paneId: p, command: "echo next" });
    assert.equal(next.exitStatus, 0);
    assert.equal(table.size, 0);
  }, { runner });
});

Deno.test("runs beyond the bound: the oldest no call waits on are forgotten", () => {
  const table = new Map<string, RunState>();
  const run = (attached: boolean): RunState => ({ ref: null, command: "true", since: 0, attached });
  takeRun(table, "waited on", run(true));
  for (let i = 0; i < MAX_RUNS + 50; i++) takeRun(table, `%${i}`, run(false));
  assert.equal(table.size, MAX_RUNS);
  assert.ok(table.has("waited on"), "a run a call waits on stays");
  assert.ok(table.has(`%${MAX_RUNS + 49}`), "the newest stays");
  assert.ok(!table.has("%0"), "the oldest went");
});

Deno.test("send_keys: the moments noted after typing into panes since gone are forgotten once over", async () => {
  const runner = new TmuxRunner();
  await withTmux(async (t, c) => {
    for (let i = 0; i < 12; i++) {
      const made = await c.ok<{ paneId: string }>("split_window", {
        paneId: t.ids.paneId,
        command: "sh",
      });
      await t.prompt(made.paneId);
      await c.ok("send_keys", { paneId: made.paneId, text: `echo ${i}` });
      await c.ok("kill_pane", { paneId: made.paneId });
    }
    const ends = endsFor(runner);
    // Typing goes on in the one pane left: the moments of the others pass, and go.
    await waitFor(async () => {
      await c.ok("send_keys", { paneId: t.ids.paneId, text: "true" });
      return ends.size === 1;
    }, `one moment kept (${ends.size} now)`);
  }, { runner });
});

Deno.test("list_panes keeps nothing of sockets with no server, nor of small servers", async () => {
  const runner = new TmuxRunner();
  // The per-server tables every module keeps for this runner, as they are made.
  const tables: Map<unknown, unknown>[] = [];
  const set = WeakMap.prototype.set;
  WeakMap.prototype.set = function (this: WeakMap<WeakKey, unknown>, key, value) {
    if (key === runner && value instanceof Map) tables.push(value);
    return set.call(this, key, value);
  };
  const t = await TestTmux.start();
  try {
    const c = await connect({ socketName: t.socket, runner });
    try {
      const names = Array.from({ length: 20 }, () => testSocketName());
      for (const name of names) {
        const listed = await c.ok<{ panes: unknown[] }>("list_panes", { socket_name: name });
        assert.deepEqual(listed.panes, []);
      }
      assert.equal((await c.ok<{ panes: unknown[] }>("list_panes")).panes.length, 1);
      const kept = tables.flatMap((table) =>
        [...table.keys()].filter((key) =>
          typeof key === "string" && [...names, t.socket].some((name) => key.includes(name)) &&
          typeof table.get(key) === "number"
        )
      );
      assert.deepEqual(kept, [], "no listing size kept");
    } finally {
      await c.close();
    }
  } finally {
    WeakMap.prototype.set = set;
    await t.kill();
  }
});

Deno.test("many socket_names over a long life: the per-server readings kept stay bounded", async () => {
  const runner = new TmuxRunner();
  const servers: TestTmux[] = [];
  const t = await TestTmux.start();
  try {
    const c = await connect({ socketName: t.socket, runner });
    try {
      // Sockets with no server: each call reads its command-alias table first.
      for (let i = 0; i < 40; i++) {
        await c.ok("list_sessions", { socket_name: testSocketName() });
      }
      assert.ok(runner.aliasServers <= 16, `${runner.aliasServers} alias readings kept`);
      // Servers called once and gone: each first call looks for what processes gone left.
      for (let i = 0; i < 70; i++) {
        const s = await TestTmux.start();
        servers.push(s);
        await c.ok("list_sessions", { socket_name: s.socket });
      }
      assert.ok(lookedServers(runner) <= 64, `${lookedServers(runner)} servers kept as looked at`);
      assert.ok(runner.aliasServers <= 16, `${runner.aliasServers} alias readings kept`);
    } finally {
      await c.close();
    }
  } finally {
    for (const s of servers) await s.kill();
    await t.kill();
  }
});
