/**
 * Jobs: a run_command that outlives its call is read back by get_command_result — with its exit
 * status and output, in this process or in the next one (nothing is kept only in memory) — and
 * is reported lost, with the reason, when its outcome can never be read.
 */

import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { typedCommand } from "../src/tools/typed.ts";
import { jobIdOf, parseJobId } from "../src/tools/job_id.ts";
import { connect, type TestClient, withTmux } from "./helpers/mcp.ts";
import { MODERN_META, startCommand, StdioServer } from "./helpers/stdio.ts";
import { hub } from "./helpers/wait_text.ts";
import { cleanEnv, HookGate, ShellGate, TestTmux, waitFor } from "./helpers/tmux.ts";
import { parseMark, RUN_OPTION } from "../src/tools/run_mark.ts";

type Run = {
  exitStatus: number | null;
  output: string;
  timedOut: boolean;
  stillRunning: boolean;
  paneDied: boolean;
  jobId?: string;
};

type Job = {
  jobId: string;
  paneId: string;
  state: "running" | "exited" | "lost";
  exitStatus: number | null;
  lostReason: string | null;
  output: string;
  outputComplete: boolean;
  omittedBytes: number;
  durationMs: number;
  waitedMs: number;
  waitClamped: boolean;
};

Deno.test("job ids: every part survives the round trip; anything else is not an id", () => {
  const ref = {
    paneId: "%12",
    nonce: "0123456789abcdef0123",
    panePid: 4_194_304,
    startMs: 1_796_000_000_123,
    startAbs: 200_000,
    serverPid: 77,
    serverStart: 1_796_000_000,
  };
  const id = jobIdOf(ref);
  assert.match(id, /^[0-9a-z-]+$/, "safe in a URI");
  assert.deepEqual(parseJobId(id), ref);
  for (
    const bad of [
      "",
      "12",
      `${id}-1`,
      id.replace("-", "_"),
      id.toUpperCase(),
      "%12-0123456789abcdef0123-1-1-1-1-1",
      "12-0123456789abcdef012-1-1-1-1-1",
      "12-0123456789abcdef0123-1-1-1-zzzzzzzzz-1",
      "12-0123456789abcdef0123-1-1-1-1-1\n",
      // The form before the server's start time was part of an id: no server it names is known.
      "12-0123456789abcdef0123-1-1-1-1",
    ]
  ) {
    assert.equal(parseJobId(bad), null, JSON.stringify(bad));
  }
});

Deno.test("a pane whose shell a signal ends while run_command waits: paneDied, said with the signal", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const p = t.ids.paneId;
    const running = c.call("run_command", { paneId: p, command: "sleep 30", timeoutMs: 20_000 });
    const shell = Number((await t.tmux("display-message", "-p", "-t", p, "#{pane_pid}")).trim());
    const sleeper = await waitFor(async () => {
      const found = new Deno.Command("pgrep", { args: ["-P", String(shell), "sleep"] });
      return Number(new TextDecoder().decode((await found.output()).stdout).trim()) || null;
    }, "the command running");
    // The shell first (the pane's process: its end is the signal), then what holds the terminal.
    Deno.kill(shell, "SIGKILL");
    Deno.kill(sleeper, "SIGKILL");
    const result = await running;
    const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
    assert.notEqual(result.isError, true, text);
    const run = result.structuredContent as Run;
    assert.deepEqual([run.paneDied, run.exitStatus], [true, null]);
    assert.match(text, /the pane's shell exited while the command ran \(signal 9\)/);
  });
});

Deno.test("a command outliving its 500 ms timeout is read back with its exit status and output", async () => {
  await using gate = await ShellGate.make();
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    const began = performance.now();
    // It ends once told to, not after a few seconds: on a loaded machine the calls below that
    // find it running may take longer than that.
    const run = await c.ok<Run>("run_command", {
      paneId: p,
      command: `echo started; ${gate.wait}; echo finished; (exit 7)`,
      timeoutMs: 500,
    });
    const returned = performance.now();
    assert.equal(run.timedOut, true);
    assert.equal(run.stillRunning, true);
    assert.equal(run.exitStatus, null);
    assert.ok(run.jobId, "a timed-out run carries a jobId");
    const now = await c.ok<Job>("get_command_result", { jobId: run.jobId });
    assert.equal(now.state, "running");
    assert.equal(now.exitStatus, null);
    assert.equal(now.waitedMs < 1_000, true, "waitMs 0 answers at once");
    // The pane stays busy while the job runs, and the refusal names the job.
    const busy = await c.fail("run_command", { paneId: p, command: "echo other" });
    assert.match(busy, new RegExp(`still running an earlier run_command.*${run.jobId}`, "s"));
    // Held two seconds past the call's return: started before it and ended after this, it
    // ran at least that long, which a shell that tells its end to the second (sh) says
    // within one.
    const rest = 2_000 - (performance.now() - returned);
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    const held = performance.now() - returned;
    await gate.open();
    const done = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 20_000 });
    const most = performance.now() - began;
    assert.equal(done.state, "exited");
    assert.equal(done.exitStatus, 7);
    assert.equal(done.output, "started\nfinished");
    assert.equal(done.outputComplete, true);
    assert.equal(done.lostReason, null);
    assert.ok(
      done.durationMs >= held - 1_000 && done.durationMs <= most + 50,
      `${done.durationMs} ms, between ${Math.round(held)} and ${Math.round(most)}`,
    );
    // Read again later: the same answer.
    const again = await c.ok<Job>("get_command_result", { jobId: run.jobId });
    assert.equal(again.state, "exited");
    assert.equal(again.exitStatus, 7);
    // And the pane is free again.
    const next = await c.ok<Run>("run_command", { paneId: p, command: "echo next" });
    assert.equal(next.exitStatus, 0);
    assert.equal(next.jobId, undefined, "a finished run carries no jobId");
  });
});

Deno.test("background: the call returns once typed; the job is read when it ends", async () => {
  await using gate = await ShellGate.make();
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    // It ends once told to, after the wait for its end has begun (a second's sleep may be over
    // before the call looks, on a loaded machine).
    const run = await c.ok<Run>("run_command", {
      paneId: p,
      command: `${gate.wait}; echo bg-done`,
      background: true,
    });
    assert.equal(run.timedOut, false);
    assert.equal(run.stillRunning, true);
    assert.ok(run.jobId);
    const waiting = c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 20_000 });
    await gate.open();
    const done = await waiting;
    assert.equal(done.state, "exited");
    assert.equal(done.exitStatus, 0);
    assert.equal(done.output, "bg-done");
    assert.ok(done.waitedMs < 15_000);
  });
});

Deno.test("a job read back in bash says how long it ran to the ms, not to the second", async () => {
  const t = await TestTmux.start("main", { command: "bash --norc --noprofile" });
  let c: TestClient | undefined;
  try {
    const p = t.ids.paneId;
    await t.prompt(p);
    c = await connect({ socketName: t.socket });
    // Whole seconds of the end minus the start in ms said anything from 0 to 700 ms of it.
    const run = await c.ok<Run>("run_command", {
      paneId: p,
      command: "sleep 0.7; echo ran",
      background: true,
    });
    assert.ok(run.jobId, JSON.stringify(run));
    const done = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 20_000 });
    assert.equal(done.state, "exited", JSON.stringify(done));
    assert.equal(done.output, "ran");
    assert.ok(done.durationMs >= 700 && done.durationMs < 15_000, `${done.durationMs} ms`);
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("a job survives a restart of the server process", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  const start = () => new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    const first = start();
    await first.initialize();
    const run = (await first.callTool("run_command", {
      paneId: t.ids.paneId,
      command: "sleep 2; printf 'a\\nb\\n'; (exit 3)",
      timeoutMs: 300,
    })).structuredContent as Run;
    assert.ok(run.jobId, JSON.stringify(run));
    await first.endsCleanly();

    const second = start();
    try {
      await second.initialize();
      const done = (await second.callTool("get_command_result", {
        jobId: run.jobId,
        waitMs: 20_000,
      })).structuredContent as Job;
      assert.equal(done.state, "exited", JSON.stringify(done));
      assert.equal(done.exitStatus, 3);
      assert.equal(done.output, "a\nb");
      assert.ok(done.durationMs >= 1_000, `${done.durationMs} ms`);
      // A process that never saw the job still keeps the pane from a second command while
      // one runs: the shell does not hold its terminal.
      const busy = (await second.callTool("run_command", {
        paneId: t.ids.paneId,
        command: "sleep 30",
        background: true,
      })).structuredContent as Run;
      const refused = await second.request("tools/call", {
        name: "run_command",
        arguments: { paneId: t.ids.paneId, command: "echo no" },
      });
      const result = refused.result as { isError?: boolean; content: { text: string }[] };
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /still running an earlier run_command/);
      // A background call returns once the line is typed: a C-c before the shell ran it would
      // drop the line, begin marker and all, and the job would be lost for another reason.
      await t.foreground(t.ids.paneId, "sleep");
      await t.tmux("send-keys", "-t", t.ids.paneId, "C-c");
      const lost = (await second.callTool("get_command_result", {
        jobId: busy.jobId,
        waitMs: 20_000,
      })).structuredContent as Job;
      assert.equal(lost.state, "lost");
      assert.match(lost.lostReason!, /back at its prompt without the command's end marker/);
    } finally {
      await second.closeStdin();
    }
  } finally {
    await t.kill();
  }
});

// ---------------------------------------------------------------------------------------------
// run_command's run mark (run_mark.ts) goes on with its C-c, saying until when the call waits on
// the command. A process that ends mid-call gives it back on its way out: a pane it typed
// nothing into is free for the next tmux-mcp at once, and one it typed into stays busy while
// the command runs, with no call waiting on it.

/** The run mark of `paneId` ("" when none). */
async function runMark(t: TestTmux, paneId: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", paneId, `#{${RUN_OPTION}}`)).trim();
}

for (const how of ["SIGTERM", "stdin EOF"] as const) {
  Deno.test(`run_command's process ended (${how}) after its C-c, before typing: the next tmux-mcp may run a command there`, async () => {
    const t = await TestTmux.start();
    const gate = await HookGate.make();
    const { cmd, args } = startCommand();
    const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
    let s2: StdioServer | undefined;
    try {
      await s.initialize();
      await s.callTool("list_panes");
      // A person's hook after send-keys (a plugin's run-shell) holds the C-c step's line.
      await t.tmux("set-hook", "-g", "after-send-keys", gate.command);
      s.callTool("run_command", { paneId: t.ids.paneId, command: "echo first", timeoutMs: 120_000 })
        .catch(() => {});
      await waitFor(() => gate.began(), "the C-c step to be held");
      await s.end(how);
      assert.equal(await runMark(t, t.ids.paneId), "", "the mark of a call that typed nothing");
      await gate.open();
      await t.tmux("set-hook", "-gu", "after-send-keys");
      const shown = await t.tmux("capture-pane", "-p", "-t", t.ids.paneId);
      assert.doesNotMatch(shown, /first/, "nothing of the first command was typed");
      s2 = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
      await s2.initialize();
      const r = await s2.callTool("run_command", {
        paneId: t.ids.paneId,
        command: "echo second",
        timeoutMs: 10_000,
      });
      assert.notEqual(r.isError, true, JSON.stringify(r.content).slice(0, 600));
    } finally {
      await gate.open();
      await s.kill();
      await s2?.kill();
      await t.kill();
      await gate.remove();
    }
  });
}

Deno.test("run_command's process ended while a person's hook holds its typing after the paste: the mark names the job, no call waiting", async () => {
  const t = await TestTmux.start();
  const gate = await HookGate.make();
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await s.initialize();
    await s.callTool("list_panes");
    // Held after the paste, before its Enter: the command may be typed, so the pane is busy
    // until it is seen to end (here: never begun, it reads as over within moments).
    await t.tmux("set-hook", "-g", "after-paste-buffer", gate.command);
    s.callTool("run_command", { paneId: t.ids.paneId, command: "echo first", timeoutMs: 120_000 })
      .catch(() => {});
    await waitFor(() => gate.began(), "the typing step to be held");
    await s.end("SIGTERM");
    const mark = parseMark(await runMark(t, t.ids.paneId));
    assert.ok(mark, "the mark stays");
    assert.equal(mark.waitedOnUntil, null, "no call waits on the job any more");
    const ours = (await t.tmux("list-buffers", "-F", "#{buffer_name}")).split("\n")
      .filter((n) => n.startsWith("tmux-mcp-"));
    assert.deepEqual(ours, [], "the transient paste buffer");
  } finally {
    await gate.open();
    await s.kill();
    await t.kill();
    await gate.remove();
  }
});

Deno.test("run_command's process ended while its command runs: the next tmux-mcp finds the pane busy, with no call waiting on it", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  const start = () => new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  const s = start();
  let s2: StdioServer | undefined;
  try {
    await s.initialize();
    s.callTool("run_command", { paneId: t.ids.paneId, command: "sleep 30", timeoutMs: 120_000 })
      .catch(() => {});
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_current_command}"))
          .trim() === "sleep",
      "the command to run",
    );
    await s.end("SIGTERM");
    const mark = parseMark(await runMark(t, t.ids.paneId));
    assert.ok(mark, "the mark stays while the command runs");
    assert.equal(mark.waitedOnUntil, null, "no call waits on the job any more");
    s2 = start();
    await s2.initialize();
    const r = await s2.callTool("run_command", { paneId: t.ids.paneId, command: "echo no" });
    const text = (r.content as { text: string }[])[0].text;
    assert.equal(r.isError, true, text);
    assert.match(text, /busy with a command another run_command typed/);
    assert.doesNotMatch(text, /waits on it/);
  } finally {
    await t.tmux("send-keys", "-t", t.ids.paneId, "C-c").catch(() => {});
    await s.kill();
    await s2?.kill();
    await t.kill();
  }
});

Deno.test("a job read as ended reads the same every time, whatever later changes its end marker", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-end-" });
  const t = await TestTmux.start();
  const c = await connect({ socketName: t.socket });
  try {
    const p = t.ids.paneId;
    // A child the command leaves behind writes to the terminal once told to: over the status
    // digit of the end marker (one row up from the prompt, column 31), then over the whole row.
    const child = (go: string, write: string) =>
      `(while [ ! -e ${dir}/${go} ]; do sleep 0.05; done; printf '\\0337\\033[1A${write}\\0338')` +
      " >/dev/tty 2>&1 &";
    const run = await c.ok<Run>("run_command", {
      paneId: p,
      command: `${child("digit", "\\033[31G0")} ${child("row", "\\033[2K")} echo o''ut; false`,
      background: true,
    });
    const first = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 10_000 });
    assert.equal(first.state, "exited");
    assert.equal(first.exitStatus, 1);
    assert.equal(first.output, "out");
    const same = (job: Job, label: string) => {
      for (const field of ["state", "exitStatus", "output", "outputComplete", "durationMs"]) {
        assert.deepEqual(
          job[field as keyof Job],
          first[field as keyof Job],
          `${label}: ${field}: ${JSON.stringify(job)}`,
        );
      }
    };

    await Deno.writeTextFile(`${dir}/digit`, "");
    await waitFor(async () => /_E:0:/.test(await t.tmux("capture-pane", "-p", "-t", p)), "0");
    same(await c.ok<Job>("get_command_result", { jobId: run.jobId }), "status rewritten");
    // A process that never read the job sees the rewritten marker fail its check: lost, said
    // why, never the status written over it.
    const { cmd, args } = startCommand();
    const fresh = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
    try {
      await fresh.initialize();
      const other = (await fresh.callTool("get_command_result", {
        jobId: run.jobId,
        waitMs: 10_000,
      })).structuredContent as Job;
      assert.equal(other.state, "lost", JSON.stringify(other));
      assert.equal(other.exitStatus, null);
      assert.match(other.lostReason!, /fails its check/);
    } finally {
      await fresh.closeStdin();
    }

    await Deno.writeTextFile(`${dir}/row`, "");
    await waitFor(
      async () => !/__tmcp_\w+_E:/.test(await t.tmux("capture-pane", "-p", "-t", p)),
      "the end marker erased",
    );
    same(await c.ok<Job>("get_command_result", { jobId: run.jobId }), "row erased");
    // The pane gone (another window keeps the server): still the same.
    await t.tmux("new-window", "-d");
    await t.tmux("kill-pane", "-t", p);
    same(await c.ok<Job>("get_command_result", { jobId: run.jobId }), "pane killed");
  } finally {
    await c.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a job whose pane is killed, respawned or dies is lost, with the reason", async () => {
  await withTmux(async (t, c) => {
    const started = async (paneId: string) => {
      const run = await c.ok<Run>("run_command", {
        paneId,
        command: "sleep 8",
        background: true,
      });
      await t.foreground(paneId, "sleep");
      return run.jobId!;
    };
    const split = async () => {
      const paneId = (await t.tmux(
        "split-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        t.ids.paneId,
        "sh",
      )).trim();
      await t.prompt(paneId);
      return paneId;
    };

    const killed = await split();
    const killedJob = await started(killed);
    await t.tmux("kill-pane", "-t", killed);
    const a = await c.ok<Job>("get_command_result", { jobId: killedJob });
    assert.equal(a.state, "lost");
    assert.match(
      a.lostReason!,
      /no longer exists \(its shell exited, or it was killed, or its session ended\)/,
    );

    // A job that ends its own shell (no remain-on-exit: the pane closes with it).
    const exits = await split();
    const exitJob = (await c.ok<Run>("run_command", {
      paneId: exits,
      command: "sleep 0.2; exit",
      background: true,
    })).jobId!;
    const exited = await c.ok<Job>("get_command_result", { jobId: exitJob, waitMs: 20_000 });
    assert.equal(exited.state, "lost");
    assert.match(exited.lostReason!, /no longer exists \(its shell exited/);

    const respawned = await split();
    const respawnedJob = await started(respawned);
    await t.tmux("respawn-pane", "-k", "-t", respawned, "sh");
    const b = await c.ok<Job>("get_command_result", { jobId: respawnedJob });
    assert.equal(b.state, "lost");
    assert.match(b.lostReason!, /respawned/);

    // A waiting call learns of the loss as it happens.
    const dies = await split();
    await t.tmux("set-option", "-p", "-t", dies, "remain-on-exit", "on");
    const diesJob = await started(dies);
    const waiting = c.ok<Job>("get_command_result", { jobId: diesJob, waitMs: 20_000 });
    const shellPid = Number(
      (await t.tmux("display-message", "-p", "-t", dies, "#{pane_pid}")).trim(),
    );
    Deno.kill(shellPid, "SIGKILL");
    const died = await waiting;
    assert.equal(died.state, "lost");
    assert.match(died.lostReason!, /exited.*before the command's end/);
    // What the shell wrote last may not have been read by tmux before it closed the terminal.
    assert.match(died.lostReason!, /printed last may be missing/);
    assert.equal(died.outputComplete, false);
  });
});

Deno.test("an interrupted job is lost; a quiet job is running; a job waited on is exited", async () => {
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    const run = await c.ok<Run>("run_command", {
      paneId: p,
      command: "sleep 30",
      background: true,
    });
    await t.foreground(p, "sleep");
    const quiet = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 300 });
    assert.equal(quiet.state, "running", "a quiet program is still running");
    assert.equal(quiet.waitClamped, false);
    const waiting = c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 20_000 });
    await t.tmux("send-keys", "-t", p, "C-c");
    const lost = await waiting;
    assert.equal(lost.state, "lost");
    assert.match(lost.lostReason!, /interrupted/);
    assert.equal(lost.exitStatus, null);
  });
});

/** A new window running bash (prompt `P> `), once it shows its prompt. */
async function bashPane(t: TestTmux): Promise<string> {
  return await t.showing("env PS1='P> ' bash --norc --noprofile", "P>");
}

Deno.test({
  name: "a job that keeps the shell itself busy (wait for its & jobs) runs until it ends; " +
    "the pane is refused meanwhile",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using gate = await ShellGate.make();
    await withTmux(async (t, c) => {
      const p = await bashPane(t);
      // Two & jobs that end once told to (not after a few seconds, which the calls below may
      // take on a loaded machine).
      const job = `(${gate.wait})`;
      const run = await c.ok<Run>("run_command", {
        paneId: p,
        command: `${job} & ${job} & wait; echo both-done; (exit 4)`,
        timeoutMs: 500,
      });
      assert.equal(run.stillRunning, true, JSON.stringify(run));
      // The shell holds its terminal in `wait`, quiet: it is not back at its prompt.
      const mid = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 1_000 });
      assert.equal(mid.state, "running", JSON.stringify(mid));
      assert.ok(mid.waitedMs >= 900, `waited ${mid.waitedMs} ms`);
      // Another run_command would press C-c into the wait: refused, nothing typed.
      const refused = await c.fail("run_command", { paneId: p, command: "echo n''ext" });
      assert.match(refused, /still running an earlier run_command/);
      await gate.open();
      const done = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 20_000 });
      assert.deepEqual([done.state, done.exitStatus], ["exited", 4], JSON.stringify(done));
      assert.match(done.output, /both-done$/);
      assert.doesNotMatch(done.output, /next|\^C/);
    });
  },
});

Deno.test({
  name: "run_command refuses a shell busy in wait that it did not start, and presses no C-c",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await withTmux(async (t, c) => {
      const p = await bashPane(t);
      // The job ends when the test ends it, not after a while: on a loaded machine a `sleep 3`
      // may be over before the call looks, and the shell then rightly found at its prompt.
      await t.tmux("send-keys", "-t", p, "-l", "sleep 1000 & wait; echo w''aited");
      await t.tmux("send-keys", "-t", p, "Enter");
      const job = await waitFor(
        async () => /^\[1\] (\d+)$/m.exec(await t.tmux("capture-pane", "-p", "-t", p)),
        "the job",
      );
      const refused = await c.fail("run_command", { paneId: p, command: "echo n''ext" });
      assert.match(refused, /busy itself.*wait/);
      Deno.kill(Number(job[1]), "SIGTERM");
      await waitFor(
        async () => /^waited$/m.test(await t.tmux("capture-pane", "-p", "-t", p)),
        "the wait to end once its job is over",
        10_000,
      );
      const screen = await t.tmux("capture-pane", "-p", "-t", p);
      assert.doesNotMatch(screen, /\^C|next/, screen);
      const next = await c.ok<Run>("run_command", { paneId: p, command: "echo n''ext" });
      assert.equal(next.output, "next");
    });
  },
});

Deno.test("a lost job's output stops where the next command was typed", async () => {
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    const run = await c.ok<Run>("run_command", {
      paneId: p,
      command: "echo o''ne; sleep 30",
      timeoutMs: 300,
    });
    assert.equal(run.stillRunning, true);
    await t.foreground(p, "sleep");
    await t.tmux("send-keys", "-t", p, "C-c");
    const lost = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 10_000 });
    assert.equal(lost.state, "lost");
    const next = await c.ok<Run>("run_command", { paneId: p, command: "echo n''ext" });
    assert.equal(next.output, "next");
    const again = await c.ok<Job>("get_command_result", { jobId: run.jobId });
    assert.equal(again.state, "lost");
    assert.match(again.output, /^one\b/);
    assert.doesNotMatch(again.output, /next|__tmcp/, again.output);
  });
});

Deno.test("a job's own output that shows run_command's lines is kept in full, running and lost", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // What `history`, a history file or a note may show: typed lines and marker words. (With
    // its begin marker a few rows below, a typed line reads as a later command's: a lost job's
    // output would be cut there, and said to be.)
    const other = "fedcba9876543210fedc";
    const typed = typedCommand("echo first", other, "sh");
    const shown = [
      `    2  ${typed}`,
      "    3  history",
      typed,
      `__tmcp ${other} is a word`,
      ...Array.from({ length: 8 }, (_, i) => `note ${i}`),
      `__tmcp_${other}_B`,
    ];
    await Deno.writeTextFile(`${dir}/history`, shown.join("\n") + "\n");
    await withTmux(async (t, c) => {
      const p = t.ids.paneId;
      const run = await c.ok<Run>("run_command", {
        paneId: p,
        command: `echo ST''ART; cat ${dir}/history; echo E''ND; sleep 30`,
        background: true,
      });
      await t.foreground(p, "sleep");
      const whole = ["START", ...shown, "END"].join("\n");
      const running = await c.ok<Job>("get_command_result", { jobId: run.jobId });
      assert.equal(running.state, "running");
      assert.equal(running.output, whole);
      assert.equal(running.outputComplete, true);
      await t.tmux("send-keys", "-t", p, "C-c");
      const lost = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 10_000 });
      assert.equal(lost.state, "lost");
      assert.ok(lost.output.startsWith(`${whole}\n^C`), lost.output);
      assert.equal(lost.outputComplete, true);
      // The next command's line ends the lost job's output: cut there, and said so.
      const next = await c.ok<Run>("run_command", { paneId: p, command: "echo n''ext" });
      assert.equal(next.output, "next");
      const after = await c.ok<Job>("get_command_result", { jobId: run.jobId });
      assert.ok(after.output.startsWith(`${whole}\n^C`), after.output);
      assert.doesNotMatch(after.output, /next|command eval 'echo n/, after.output);
      assert.equal(after.outputComplete, false);
      assert.match(after.lostReason ?? "", /later run_command/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a shell that exits in a remain-on-exit pane: output ends at its last row, maybe short", async () => {
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    await t.tmux("set-option", "-p", "-t", p, "remain-on-exit", "on");
    const run = await c.ok<Run & { outputComplete: boolean }>("run_command", {
      paneId: p,
      command: "echo b''ye; exit 5",
      timeoutMs: 10_000,
    });
    assert.equal(run.paneDied, true);
    assert.equal(run.exitStatus, 5);
    // Without tmux's `Pane is dead` line; "" when tmux learnt of the exit before it read the
    // line (a loaded machine; see input_test.ts), which is why it is never called complete.
    assert.match(run.output, /^(bye)?$/, JSON.stringify(run.output));
    assert.equal(run.outputComplete, false);
  });
});

Deno.test("get_command_result refuses what is not a job of this server, clearly", async () => {
  await withTmux(async (t, c) => {
    const notId = await c.call("get_command_result", { jobId: "12; rm -rf /" });
    assert.equal(notId.isError, true);
    const clamped = await c.call("get_command_result", { jobId: "1", waitMs: -1 });
    assert.equal(clamped.isError, true);
    const { pid, startTime } = await t.facts();
    const foreign = jobIdOf({
      paneId: t.ids.paneId,
      nonce: "0123456789abcdef0123",
      panePid: 1,
      startMs: Date.now(),
      startAbs: 0,
      serverPid: pid + 1,
      serverStart: startTime,
    });
    const text = await c.fail("get_command_result", { jobId: foreign });
    assert.match(text, /another tmux server/);
    assert.match(text, /socket_name/);
    // A server of the same pid that ran before (a container's tmux, restarted) is another.
    const before = jobIdOf({
      paneId: t.ids.paneId,
      nonce: "0123456789abcdef0123",
      panePid: 1,
      startMs: (startTime - 60) * 1000,
      startAbs: 0,
      serverPid: pid,
      serverStart: startTime - 60,
    });
    assert.match(
      await c.fail("get_command_result", { jobId: before }),
      /another tmux server, since ended: the server on .* was restarted with the same pid/,
    );
    // On the right server, a job that was never typed there: the pane was not respawned, but
    // no marker of it ever appears and the shell is at its prompt.
    const [panePid] = (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_pid}"))
      .trim().split(" ").map(Number);
    const never = jobIdOf({
      paneId: t.ids.paneId,
      nonce: "0123456789abcdef0123",
      panePid,
      startMs: Date.now() - 60_000,
      startAbs: 0,
      serverPid: pid,
      serverStart: startTime,
    });
    const job = await c.ok<Job>("get_command_result", { jobId: never });
    assert.equal(job.state, "lost");
    assert.match(job.lostReason!, /begin marker is not in the pane's history/);
  });
});

Deno.test("a job id that starts in the future is refused, not read as running for ever", async () => {
  await withTmux(async (t, c) => {
    const { pid, startTime } = await t.facts();
    const [panePid] = (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_pid}"))
      .trim().split(" ").map(Number);
    const startingIn = (ms: number) =>
      jobIdOf({
        paneId: t.ids.paneId,
        nonce: "0123456789abcdef0123",
        panePid,
        startMs: Date.now() + ms,
        startAbs: 0,
        serverPid: pid,
        serverStart: startTime,
      });
    const forged = startingIn(365 * 24 * 3_600_000);
    const text = await c.fail("get_command_result", { jobId: forged });
    assert.match(
      text,
      /is not a job id run_command returned: its start time is \d+ min in the future/,
    );
    const uri = `tmux://job/${forged}`;
    const read = await c.client.readResource({ uri }).catch((e: Error) => e);
    assert.ok(read instanceof Error && /in the future/.test(read.message), String(read));
    const subscribed = await c.client.subscribeResource({ uri }).catch((e: Error) => e);
    assert.ok(subscribed instanceof Error && /in the future/.test(subscribed.message));
    // A clock stepped back a little since run_command is not a forgery.
    const skewed = await c.call("get_command_result", { jobId: startingIn(60_000) });
    assert.notEqual(skewed.isError, true);
  });
});

Deno.test("a job's output is bounded keeping its tail, and says so", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket, maxResultBytes: 8_000 });
    await t.tmux("set-option", "-g", "history-limit", "5000");
    const run = await c.ok<Run>("run_command", {
      paneId: t.ids.paneId,
      command: "sleep 0.5; seq 1 3000",
      background: true,
    });
    const done = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 20_000 });
    assert.equal(done.state, "exited");
    assert.ok(done.omittedBytes > 0);
    assert.equal(done.outputComplete, false);
    assert.ok(done.output.endsWith("2999\n3000"), done.output.slice(-20));
  } finally {
    await c?.close();
    await t.kill();
  }
});

/** The URIs of every `notifications/resources/updated` the client `c` hears, as they come. */
function updatesHeard(c: TestClient): string[] {
  const updates: string[] = [];
  c.client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n: { params: { uri: string } }) => {
      updates.push(n.params.uri);
    },
  );
  return updates;
}

Deno.test("tmux://job/{jobId} under 2025-11-25: read, complete, and an update when the job ends", async () => {
  await using gate = await ShellGate.make();
  await withTmux(async (t, c) => {
    const updates = updatesHeard(c);
    const p = t.ids.paneId;
    const other = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", p, "sh"))
      .trim();
    await t.prompt(other);
    // Ends once told to (after the subscription), not after a second: the calls before the
    // read below that finds it running may take longer than that on a loaded machine.
    const watched = await c.ok<Run>("run_command", {
      paneId: p,
      command: `${gate.wait}; echo watched-done`,
      background: true,
    });
    const unwatched = await c.ok<Run>("run_command", {
      paneId: other,
      command: "sleep 1; echo unwatched-done",
      background: true,
    });
    const uri = `tmux://job/${watched.jobId}`;
    const listed = await c.client.listResources();
    assert.ok(
      listed.resources.some((r: { uri: string }) => r.uri === uri),
      "a job this process started is listed",
    );
    const completion = await c.client.complete({
      ref: { type: "ref/resource", uri: "tmux://job/{jobId}" },
      argument: { name: "jobId", value: watched.jobId!.slice(0, 3) },
    });
    assert.ok(completion.completion.values.includes(watched.jobId!));
    const first = JSON.parse(
      (await c.client.readResource({ uri })).contents[0].text as string,
    ) as Job;
    assert.equal(first.state, "running");
    await c.client.subscribeResource({ uri });
    await gate.open();
    await waitFor(() => updates.includes(uri), "the update when the job ends", 15_000);
    const last = JSON.parse(
      (await c.client.readResource({ uri })).contents[0].text as string,
    ) as Job;
    assert.equal(last.state, "exited");
    assert.equal(last.output, "watched-done");
    // The other job ended too (read it), but nobody subscribed to it: no update was sent.
    await c.ok<Job>("get_command_result", { jobId: unwatched.jobId, waitMs: 15_000 });
    assert.deepEqual(updates.filter((u) => u !== uri), []);
    const bad = await c.client.readResource({ uri: "tmux://job/nope" }).catch((e: Error) => e);
    assert.ok(bad instanceof Error && /not a job id/.test(bad.message), String(bad));
  });
});

Deno.test("tmux://job/{jobId} over stdio under 2026-07-28: subscriptions/listen hears the end", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  const meta = MODERN_META;
  try {
    const call = await server.request("tools/call", {
      name: "run_command",
      arguments: { paneId: t.ids.paneId, command: "sleep 1; echo modern-job", background: true },
      _meta: meta,
    });
    const run = (call.result as { structuredContent: Run }).structuredContent;
    assert.ok(run.jobId, JSON.stringify(call));
    const uri = `tmux://job/${run.jobId}`;
    server.request("subscriptions/listen", {
      notifications: { resourceSubscriptions: [uri] },
      _meta: meta,
    });
    await waitFor(
      () =>
        server.notifications.some((n) =>
          n.method === "notifications/resources/updated" && n.params?.uri === uri
        ),
      "the job's update over stdio",
      15_000,
    );
    const read = await server.request("resources/read", { uri, _meta: meta });
    const job = JSON.parse(
      (read.result as { contents: { text: string }[] }).contents[0].text,
    ) as Job;
    assert.equal(job.state, "exited");
    assert.equal(job.output, "modern-job");
    await server.endsCleanly();
  } finally {
    await server.kill();
    await t.kill();
  }
});

Deno.test("a job on another tmux server is listed and read with its socket", async () => {
  await withTmux(async (_t, c) => {
    const other = await TestTmux.start();
    try {
      await other.prompt(other.ids.paneId);
      const run = await c.ok<Run>("run_command", {
        paneId: other.ids.paneId,
        command: "sleep 30",
        background: true,
        socket_name: other.socket,
      });
      const uri = `tmux://job/${run.jobId}?socket=${other.socket}`;
      const listed = await c.client.listResources();
      assert.ok(listed.resources.some((r: { uri: string }) => r.uri === uri), uri);
      const read = JSON.parse(
        (await c.client.readResource({ uri })).contents[0].text as string,
      ) as Job;
      assert.equal(read.state, "running");
      await other.tmux("send-keys", "-t", other.ids.paneId, "C-c");
    } finally {
      await other.kill();
    }
  });
});

Deno.test("a job subscription still hears the end after its tmux server stalled past a timeout", async () => {
  await using gate = await ShellGate.make();
  await withTmux(async (t, c) => {
    const updates = updatesHeard(c);
    const run = await c.ok<Run>("run_command", {
      paneId: t.ids.paneId,
      command: `${gate.wait}; echo job-done`,
      background: true,
    });
    const uri = `tmux://job/${run.jobId}`;
    await c.client.subscribeResource({ uri });
    const { pid } = await t.facts();
    // tmux stops answering (a person's hook running a slow synchronous run-shell, a loaded
    // machine) until the watch's read has timed out: the watch says so, once.
    Deno.kill(pid, "SIGSTOP");
    try {
      await waitFor(() => updates.length > 0, "the watch to tell of its failed read", 60_000);
    } finally {
      Deno.kill(pid, "SIGCONT");
    }
    const told = updates.length;
    const during = JSON.parse(
      (await c.client.readResource({ uri })).contents[0].text as string,
    ) as Job;
    assert.equal(during.state, "running", "the job still runs after the stall");
    // Its watch back on the output before the job ends: a stall that outlasts a command's
    // timeout retires the connection, a gap a program could make, in which an end reads lost.
    await waitFor(() => hub(t, c).watchers >= 1, "the job's watch back on its output");
    await gate.open();
    const done = await c.ok<Job>("get_command_result", { jobId: run.jobId, waitMs: 20_000 });
    assert.equal(done.state, "exited", JSON.stringify(done));
    // The watch tried again once tmux answered: the end is told.
    await waitFor(() => updates.length > told, "the subscriber to be told the job ended");
    assert.deepEqual(updates, updates.map(() => uri));
  });
});

Deno.test("a command that ends its own tmux server is said to be typed, its pane and job gone with the server", async () => {
  const said = (text: string, what: string) => {
    assert.match(
      text,
      /^The command was typed into %\d+ \(job [-0-9a-z]+\), and then the tmux server/,
      what,
    );
    assert.match(text, /went away before the command was seen to end/, what);
    assert.match(text, /exit in a last pane, or tmux kill-server/, what);
    assert.match(text, /no exit status to read: the pane and the job went with the server/, what);
    assert.match(text, /check before running it again/, what);
    assert.doesNotMatch(text, /try again|get_command_result/i, what);
  };
  // `exit` in the last pane of its server ends the server, and `tmux kill-server` run in a pane
  // ends the server the pane is on (its TMUX): run_command's wait meets the server gone.
  for (const command of ["exit", "tmux kill-server"]) {
    await withTmux(async (t, c) => {
      const pane = await bashPane(t);
      for (const other of (await t.tmux("list-panes", "-a", "-F", "#{pane_id}")).split("\n")) {
        if (other.trim() !== "" && other.trim() !== pane) {
          await t.tmux("kill-pane", "-t", other.trim());
        }
      }
      said(await c.fail("run_command", { paneId: pane, command, timeoutMs: 20_000 }), command);
      // The server ends (a moment after its clients are told: it may still answer meanwhile).
      await waitFor(
        async () =>
          /no server running|error connecting/.test(
            await t.tmux("list-sessions").then(() => "running", (e: Error) => e.message),
          ),
        "the server gone",
      );
    });
  }
  // A job read while waiting: it ended with its server.
  await withTmux(async (t, c) => {
    const run = await c.ok<Run>("run_command", {
      paneId: await bashPane(t),
      command: "sleep 0.3; tmux kill-server",
      background: true,
    });
    const text = await c.fail("get_command_result", { jobId: run.jobId!, waitMs: 20_000 });
    assert.match(
      text,
      new RegExp(
        `^Job ${run.jobId} ended with its tmux server: the server on .* went away while the call read the job`,
      ),
    );
    assert.match(text, /exit in a last pane, or tmux kill-server/);
    assert.match(text, /There is no exit status to read/);
    const after = await c.fail("get_command_result", { jobId: run.jobId! });
    assert.match(after, new RegExp(`job ${run.jobId} ended with its server`));
    assert.match(after, /If the job was started on another socket, pass that socket_name/);
  });
});

Deno.test("a job subscription is told when the job's tmux server is gone", async () => {
  await withTmux(async (t, c) => {
    const updates = updatesHeard(c);
    const run = await c.ok<Run>("run_command", {
      paneId: t.ids.paneId,
      command: "sleep 60",
      background: true,
    });
    const uri = `tmux://job/${run.jobId}`;
    await c.client.subscribeResource({ uri });
    await t.tmux("kill-server").catch(() => "");
    await waitFor(() => updates.includes(uri), "the subscriber to be told the server went");
    const read = await c.client.readResource({ uri }).catch((e: Error) => e);
    assert.ok(read instanceof Error && /ended with its server/.test(read.message), String(read));
  });
});
