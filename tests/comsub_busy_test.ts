/**
 * A shell waiting for a command substitution is not at its prompt: `x=$(prog)` where prog's
 * input is not the terminal (`</dev/null`, or a program that moves its own fd 0 away) leaves
 * the shell holding its terminal, blocked reading the `$(...)` pipe, and prog in the shell's
 * own process group, the terminal's foreground group. Neither get_pane_info nor wait_for_idle
 * may call that the prompt, and run_command may neither press C-c there (it would reach prog)
 * nor type (a raw-mode reader of /dev/tty inside the `$(...)` would read the command and could
 * print a forged result for it). Shells at a real prompt still are at it.
 *
 * Ordering without sleeping: the test waits for the program to be a child of the pane's
 * process (read from /proc by a process of its own) before it asks.
 */

import assert from "node:assert/strict";
import { installed, type JobReply, type RunReply, shellPane } from "./helpers/run_replies.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { sh as run, TestTmux, waitFor } from "./helpers/tmux.ts";

interface Info {
  atPrompt: boolean;
}

interface Idle {
  outcome: string;
  atPrompt: boolean;
}

/**
 * The shells tried, and how each runs `prog` as the direct child of a `$(...)`: bash forks a
 * subshell for a command with a redirection there (whose input is still the terminal), so its
 * `exec` makes the program that child.
 */
const SHELLS = [
  { start: "sh", name: "sh", comsub: (prog: string) => `x=$(${prog})` },
  { start: "bash --norc --noprofile", name: "bash", comsub: (prog: string) => `x=$(exec ${prog})` },
  { start: "zsh -f", name: "zsh", comsub: (prog: string) => `x=$(${prog})` },
].filter((s) => installed(s.start.split(" ")[0]));

/** Pane `paneId`'s process: tmux's `pane_pid`. */
async function panePid(t: TestTmux, paneId: string): Promise<number> {
  return Number((await t.tmux("display-message", "-p", "-t", paneId, "#{pane_pid}")).trim());
}

/** The pid of a child of process `pid` named `name`, or null (read by a process of its own). */
async function childNamed(pid: number, name: string): Promise<number | null> {
  const out = (await run("sh", [
    "-c",
    `for c in $(cat /proc/${pid}/task/${pid}/children); do echo "$c $(cat /proc/$c/comm)"; done`,
  ], { allowFail: true })).stdout;
  const line = out.split("\n").find((l) => l.split(" ")[1] === name);
  return line === undefined ? null : Number(line.split(" ")[0]);
}

/** Whether process `pid` still runs as `name`. */
async function alive(pid: number, name: string): Promise<boolean> {
  const out = await run("cat", [`/proc/${pid}/comm`], { allowFail: true });
  return out.stdout.trim() === name;
}

async function screen(t: TestTmux, pane: string): Promise<string> {
  return await t.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", pane);
}

/** Asserts that pane `pane` reads as at its prompt, to both tools that say so. */
async function atPrompt(c: TestClient, pane: string, label: string): Promise<void> {
  const idle = await c.ok<Idle>("wait_for_idle", { paneId: pane, atPrompt: true, quietMs: 100 });
  assert.equal(idle.outcome, "idle", `${label}: ${JSON.stringify(idle)}`);
  assert.equal(idle.atPrompt, true, `${label}: ${JSON.stringify(idle)}`);
  assert.equal((await c.ok<Info>("get_pane_info", { paneId: pane })).atPrompt, true, label);
}

for (const shell of SHELLS) {
  Deno.test({
    name:
      `${shell.name}: a command substitution running a program whose input is not the terminal is not the prompt`,
    ignore: Deno.build.os !== "linux",
    async fn() {
      const t = await TestTmux.start();
      let c: TestClient | undefined;
      try {
        const pane = await shellPane(t, shell.start, shell.name);
        const pid = await panePid(t, pane);
        c = await connect({ socketName: t.socket });
        await atPrompt(c, pane, "a new shell");
        await t.tmux(
          "send-keys",
          "-t",
          pane,
          `${shell.comsub("sleep 1000 </dev/null")}; echo "ended$x"`,
          "Enter",
        );
        const sleep = await waitFor(() => childNamed(pid, "sleep"), "the sleep started");
        const info = await c.ok<Info>("get_pane_info", { paneId: pane });
        assert.equal(info.atPrompt, false, "get_pane_info while $(sleep) runs");
        const idle = await c.ok<Idle>("wait_for_idle", {
          paneId: pane,
          atPrompt: true,
          quietMs: 200,
          timeoutMs: 800,
        });
        assert.equal(idle.outcome, "timedOut", JSON.stringify(idle));
        assert.equal(idle.atPrompt, false, JSON.stringify(idle));
        // Neither its C-c (which would end the sleep) nor the command goes in.
        const before = await screen(t, pane);
        const reply = await c.call("run_command", {
          paneId: pane,
          command: "echo TYPED-$((6 * 7))",
          timeoutMs: 5_000,
        });
        assert.equal(reply.isError, true, JSON.stringify(reply));
        assert.equal(await alive(sleep, "sleep"), true, "the sleep got no C-c");
        assert.equal(await screen(t, pane), before, "nothing typed");
        // Once the sleep ends, the shell is back at its prompt, and run_command runs there.
        Deno.kill(sleep, "SIGTERM");
        await atPrompt(c, pane, "after the sleep");
        const ran = await c.ok<RunReply>("run_command", {
          paneId: pane,
          command: "echo TYPED-$((6 * 7))",
          timeoutMs: 10_000,
        });
        assert.equal(ran.exitStatus, 0, JSON.stringify(ran));
        assert.match(ran.output, /^TYPED-42$/m);
      } finally {
        await c?.close();
        await t.kill();
      }
    },
  });

  Deno.test({
    name:
      `${shell.name}: a run_command job waiting for a command substitution runs, and another process's run_command is refused`,
    ignore: Deno.build.os !== "linux",
    async fn() {
      // Found in dash: job A read as lost to another server process, whose run_command then
      // pressed C-c into it and typed.
      const t = await TestTmux.start();
      let c1: TestClient | undefined;
      let c2: TestClient | undefined;
      try {
        const pane = await shellPane(t, shell.start, shell.name);
        const pid = await panePid(t, pane);
        c1 = await connect({ socketName: t.socket });
        c2 = await connect({ socketName: t.socket });
        const a = await c1.ok<RunReply>("run_command", {
          paneId: pane,
          command: `${shell.comsub("sleep 1000 </dev/null")}; echo "ended$x"`,
          background: true,
        });
        const sleep = await waitFor(() => childNamed(pid, "sleep"), "the sleep started");
        const job = await c2.ok<JobReply>("get_command_result", { jobId: a.jobId!, waitMs: 0 });
        assert.equal(job.state, "running", JSON.stringify(job));
        const before = await screen(t, pane);
        const reply = await c2.call("run_command", {
          paneId: pane,
          command: "echo B-$((6 * 7))",
          timeoutMs: 5_000,
        });
        assert.equal(reply.isError, true, JSON.stringify(reply));
        assert.equal(await alive(sleep, "sleep"), true, "job A's sleep got no C-c");
        assert.equal(await screen(t, pane), before, "nothing typed into job A");
      } finally {
        await c1?.close();
        await c2?.close();
        await t.kill();
      }
    },
  });

  Deno.test({
    name:
      `${shell.name}: run_command types nothing into a raw /dev/tty reader inside a command substitution`,
    ignore: Deno.build.os !== "linux" || !installed("python3"),
    async fn() {
      const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-comsub-" });
      // It moves its own input to /dev/null, as a forger would, then reads the terminal raw
      // (C-c arrives as a byte) and keeps every byte it gets.
      await Deno.writeTextFile(
        `${dir}/reader.py`,
        [
          "import os, sys, tty",
          'os.dup2(os.open("/dev/null", os.O_RDONLY), 0)',
          'fd = os.open("/dev/tty", os.O_RDWR)',
          "tty.setraw(fd)",
          "got = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)",
          'open(sys.argv[1] + ".ready", "w").close()',
          "while True:",
          "    b = os.read(fd, 4096)",
          "    if not b: break",
          "    os.write(got, b)",
          "",
        ].join("\n"),
      );
      const t = await TestTmux.start();
      let c: TestClient | undefined;
      try {
        const pane = await shellPane(t, shell.start, shell.name);
        const pid = await panePid(t, pane);
        await t.tmux(
          "send-keys",
          "-t",
          pane,
          `${shell.comsub(`python3 ${dir}/reader.py ${dir}/got`)}; echo "ended$x"`,
          "Enter",
        );
        await waitFor(
          async () =>
            await childNamed(pid, "python3") !== null &&
            await Deno.stat(`${dir}/got.ready`).then(() => true, () => false),
          "the reader in raw mode",
        );
        c = await connect({ socketName: t.socket });
        const reply = await c.call("run_command", {
          paneId: pane,
          command: "make test",
          timeoutMs: 3_000,
        });
        assert.equal(reply.isError, true, JSON.stringify(reply));
        const got = await Deno.readTextFile(`${dir}/got`).catch(() => "");
        assert.equal(got, "", "the reader received nothing");
      } finally {
        await c?.close();
        await t.kill();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

Deno.test({
  name: "shells at a real prompt are at it: bash in vi mode with a PROMPT_COMMAND, and fish",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const t = await TestTmux.start();
    let c: TestClient | undefined;
    try {
      c = await connect({ socketName: t.socket });
      const bash = await shellPane(
        t,
        `env PROMPT_COMMAND='p=$(echo x)' bash --norc --noprofile -o vi`,
        "bash",
      );
      await atPrompt(c, bash, "bash -o vi");
      const ran = await c.ok<RunReply>("run_command", {
        paneId: bash,
        command: "echo TYPED-$((6 * 7))",
        timeoutMs: 10_000,
      });
      assert.equal(ran.exitStatus, 0, JSON.stringify(ran));
      await atPrompt(c, bash, "bash -o vi after a command");
      if (installed("fish")) {
        const fish = await shellPane(t, "fish --no-config", "fish");
        await atPrompt(c, fish, "fish");
      }
    } finally {
      await c?.close();
      await t.kill();
    }
  },
});
