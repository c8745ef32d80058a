/**
 * Typing tools tried as an attacker would: a paste that tries to end itself and carry keys,
 * leftover text at a prompt that the next run_command would execute, and a script waiting in
 * `read` that looks like a shell. Each proven against real shells on a private tmux server.
 */

import assert from "node:assert/strict";
import { connect, withTmux } from "./helpers/mcp.ts";
import { installed } from "./helpers/run_replies.ts";
import { MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import { TOOLSETS } from "../src/mcp/toolsets.ts";
import { buildServer } from "../src/server.ts";
import { sh, TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

/**
 * A window running `shell` at its prompt. bash starts without start-up files: this machine's
 * own may be slow or print text, and the test is about bash, not about them.
 */
async function shellPane(t: TestTmux, shell = "sh"): Promise<string> {
  const command = shell === "bash" ? "bash --norc --noprofile" : shell === "zsh" ? "zsh -f" : shell;
  const id = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", command)).trim();
  await waitFor(
    async () =>
      (await t.tmux("display-message", "-p", "-t", id, "#{pane_current_command}")).trim() ===
        shell,
    `the ${shell}`,
  );
  // tmux names the shell once it has exec'd, before it drew its prompt and its line editor took
  // the terminal: keys typed until then are echoed by the terminal and read again by the
  // editor, and the cursor is not yet where the editor puts it (the vi-mode test reads it).
  await t.prompt(id);
  return id;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("paste_text refuses control characters: a paste cannot end itself or carry keys", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-paste-" });
    try {
      const pane = await shellPane(t, "bash");
      const ran = `${dir}/ran`;
      for (
        const text of [
          `echo x\x1b[201~touch ${ran}\r`,
          `\x1b[201~touch ${ran}\n`,
          `abc\x03touch ${ran}`,
          `\x1b:!touch ${ran}\r`,
          `text \u009b201~ more`,
          `bell\x07`,
        ]
      ) {
        const refusal = await c.fail("paste_text", { paneId: pane, text, enter: false });
        assert.match(refusal, /control character|acts as a key/, refusal);
        assert.match(refusal, /nothing was pasted/i);
      }
      // Tabs, newlines and CR LF are text.
      const ok = await c.ok<{ bytes: number }>("paste_text", {
        paneId: pane,
        text: "echo a\tb\r\necho c",
      });
      assert.equal(ok.bytes, "echo a\tb\necho c".length);
      await t.tmux("send-keys", "-t", pane, "C-u");
      assert.equal(await exists(ran), false, "nothing ran");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("run_command never executes text left at the prompt", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-leftover-" });
    try {
      for (const shell of ["sh", "bash"]) {
        const pane = await shellPane(t, shell);
        const leftover = `${dir}/leftover-${shell}`;
        await c.ok("send_keys", { paneId: pane, text: `touch ${leftover}; `, enter: false });
        await waitFor(
          async () =>
            (await t.tmux("capture-pane", "-p", "-t", pane)).includes(`touch ${leftover}`),
          "the leftover on screen",
        );
        const r = await c.ok<{ exitStatus: number; output: string }>("run_command", {
          paneId: pane,
          command: "echo only-this",
          timeoutMs: 10_000,
        });
        assert.equal(r.exitStatus, 0, `${shell}: ${JSON.stringify(r)}`);
        assert.equal(r.output.trim(), "only-this");
        assert.equal(await exists(leftover), false, `${shell}: the leftover never ran`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

/** The cursor's column in `pane`. */
async function cursorX(t: TestTmux, pane: string): Promise<number> {
  return Number((await t.tmux("display-message", "-p", "-t", pane, "#{cursor_x}")).trim());
}

Deno.test("run_command never executes leftovers in bash's vi modes or a pending continuation", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-leftover-" });
    const run = async (pane: string, what: string) => {
      const r = await c.ok<{ exitStatus: number; output: string; timedOut: boolean }>(
        "run_command",
        { paneId: pane, command: "echo only-this", timeoutMs: 10_000 },
      );
      assert.equal(r.exitStatus, 0, `${what}: ${JSON.stringify(r)}`);
      assert.equal(r.output.trim(), "only-this", what);
    };
    const screen = (pane: string) => t.tmux("capture-pane", "-p", "-t", pane);
    try {
      const vi = await shellPane(t, "bash");
      await t.tmux("send-keys", "-t", vi, "-l", "set -o vi");
      await t.tmux("send-keys", "-t", vi, "Enter");
      // vi insert mode, the cursor moved left: text right of it must not survive.
      const tail = `; touch ${dir}/vi-insert`;
      await t.tmux("send-keys", "-t", vi, "-l", `echo draft${tail}`);
      await waitFor(async () => (await screen(vi)).includes(`${dir}/vi-insert`), "typed");
      const end = await cursorX(t, vi);
      await t.tmux("send-keys", "-t", vi, "-N", String(tail.length), "Left");
      await waitFor(async () => await cursorX(t, vi) === end - tail.length, "cursor moved");
      await run(vi, "vi insert mode");
      // vi command mode (Escape moves the cursor one left once readline has taken it).
      await t.tmux("send-keys", "-t", vi, "-l", `touch ${dir}/vi-command`);
      await waitFor(async () => (await screen(vi)).includes(`${dir}/vi-command`), "typed");
      const at = await cursorX(t, vi);
      await t.tmux("send-keys", "-t", vi, "Escape");
      await waitFor(async () => await cursorX(t, vi) === at - 1, "in vi command mode");
      await run(vi, "vi command mode");
      // A line someone ended with Enter that the shell holds as unfinished (PS2).
      for (const shell of ["bash", "sh"]) {
        const pane = await shellPane(t, shell);
        for (
          const [name, text] of [["backslash", `touch ${dir}/${shell}-cont \\`], [
            "quote",
            `echo "abc`,
          ]]
        ) {
          const before = await screen(pane);
          await c.ok("send_keys", { paneId: pane, text });
          await waitFor(async () => (await screen(pane)) !== before, "typed");
          await waitFor(async () => /> $/.test((await screen(pane)).trimEnd() + " "), "PS2");
          await run(pane, `${shell}: ${name} continuation`);
        }
      }
      for (const e of Deno.readDirSync(dir)) assert.fail(`${e.name} was created: a leftover ran`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("run_command refuses a shell-named program holding the terminal (a script in read)", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-read-" });
    try {
      const pane = await shellPane(t, "bash");
      const got = `${dir}/got`;
      // A child bash, in the foreground, waiting for a line: tmux names it "bash" too.
      await t.tmux(
        "send-keys",
        "-t",
        pane,
        "-l",
        `bash --norc -c 'read line; printf "%s" "$line" > ${got}'`,
      );
      await t.tmux("send-keys", "-t", pane, "Enter");
      const shellPid = (await t.tmux("display-message", "-p", "-t", pane, "#{pane_pid}")).trim();
      await waitFor(async () => {
        const [group, foreground] = (await sh("ps", ["-o", "pgid=,tpgid=", "-p", shellPid]))
          .stdout.trim().split(/\s+/);
        return group !== foreground;
      }, "the script in the foreground");
      const refusal = await c.fail("run_command", {
        paneId: pane,
        command: "echo hijacked",
        timeoutMs: 3_000,
      });
      assert.match(refusal, /not what reads the keyboard/, refusal);
      assert.match(refusal, /Nothing was typed/);
      // The script got nothing from us: end it ourselves and look.
      await t.tmux("send-keys", "-t", pane, "-l", "mine");
      await t.tmux("send-keys", "-t", pane, "Enter");
      await waitFor(() => exists(got), "the script's answer");
      assert.equal(await Deno.readTextFile(got), "mine");
      // Back at the prompt, run_command works again.
      const r = await c.ok<{ output: string }>("run_command", {
        paneId: pane,
        command: "echo back",
        timeoutMs: 10_000,
      });
      assert.equal(r.output.trim(), "back");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("keys tmux never confirmed are reported as possibly typed, never as a safe retry", async () => {
  const t = await TestTmux.start();
  const built = buildServer({
    address: { socketName: t.socket },
    toolsets: TOOLSETS,
    version: "test",
    maxResultBytes: MAX_RESULT_BYTES,
    callerEnv: {},
  });
  const call = (name: string, args: Record<string, unknown>) =>
    built.registry.call(built.registry.get(name)!, args, {
      signal: new AbortController().signal,
      progress: () => Promise.resolve(),
    });
  let pid = 0;
  try {
    const pane = await shellPane(t);
    pid = (await t.facts()).pid;
    // The server stops itself after typing the text and before pressing Enter (a run-shell
    // without -b holds the queue until its job, the kill, is done): the call gets no answer,
    // and the rest of what it sent still happens once tmux resumes.
    // The hook removes itself first, so it stops the server once, not at every later key.
    await t.tmux(
      "set-hook",
      "-g",
      "after-send-keys",
      `set-hook -gu after-send-keys ; run-shell "kill -STOP ${pid}"`,
    );
    const pending = call("send_keys_batch", {
      operations: [{ paneId: pane, text: "echo RESUMED-$((40+2))" }],
    });
    await waitFor(async () => {
      const state = (await sh("ps", ["-o", "stat=", "-p", String(pid)])).stdout.trim();
      return state.startsWith("T");
    }, "the server stopped");
    const result = await pending;
    const row = (result.structuredContent as { results: { status: string; error: string }[] })
      .results[0];
    assert.equal(row.status, "failed");
    assert.match(row.error, /may still happen/, row.error);
    assert.match(row.error, /could do it twice/);
    assert.doesNotMatch(row.error, /try again\.$/);
    Deno.kill(pid, "SIGCONT");
    // Whether tmux still typed them depends on what it had read before it stopped: at most
    // once, and the server answers again.
    await call("list_panes", {});
    const shown = await t.tmux("capture-pane", "-p", "-t", pane);
    assert.ok(shown.split("RESUMED-42").length <= 2, shown);
  } finally {
    // Never leave it stopped: every later tmux call (the cleanup's too) would wait forever.
    if (pid) Deno.kill(pid, "SIGCONT");
    await built.runner.close();
    await t.kill();
  }
});

Deno.test("run_command judges a new pane's program only once it runs (not the shell about to exec it)", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-race-" });
    try {
      // A program named fish (a copy of sh: the name is what counts), started through a slow
      // default shell that execs it only after half a second, as on a loaded machine: until
      // then tmux names the pane's command "bash".
      await Deno.copyFile("/bin/sh", `${dir}/fish`);
      await Deno.chmod(`${dir}/fish`, 0o755);
      await Deno.writeTextFile(
        `${dir}/slowsh`,
        '#!/bin/bash\nmkfifo "$0.fifo" 2>/dev/null\nread -t 0.5 -u 9 9<>"$0.fifo"\nexec /bin/bash "$@"\n',
      );
      await Deno.chmod(`${dir}/slowsh`, 0o755);
      await t.tmux("set-option", "-g", "default-shell", `${dir}/slowsh`);
      const pane = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", `${dir}/fish`))
        .trim();
      const refusal = await c.fail("run_command", {
        paneId: pane,
        command: "echo typed-into-fish",
        timeoutMs: 5_000,
      });
      assert.match(refusal, /fish, which is not a POSIX shell/, refusal);
      assert.ok(!(await t.tmux("capture-pane", "-p", "-t", pane)).includes("typed-into-fish"));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("run_command on a pane tmux has yet to start its program in waits for the program, not refusing 'tmux'", async () => {
  await withTmux(async (t, c) => {
    // Until the child tmux forks for a new pane execs its program, tmux names the pane's
    // command "tmux" (the child's command line is the server's), for as long as a loaded
    // machine takes. The same seen here for a second: a process named tmux, then a shell.
    const window = async (script: string) =>
      (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "bash", "-c", script)).trim();
    const pane = await window("exec -a tmux bash -c 'sleep 1; exec sh'");
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}")).trim() ===
          "tmux",
      "the pane named tmux",
    );
    const run = await c.ok<{ exitStatus: number | null; output: string }>("run_command", {
      paneId: pane,
      command: "echo started",
      timeoutMs: 10_000,
    });
    assert.deepEqual([run.exitStatus, run.output], [0, "started"]);
    // A pane that is not blank is judged at once, whatever it is named: one named tmux is taken
    // for a tmux client (what is typed there would go on to the pane it shows).
    const named = await window("echo drawn; exec -a tmux cat");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", named)).includes("drawn"),
      "the named pane's output",
    );
    assert.match(
      await c.fail("run_command", { paneId: named, command: "echo x", timeoutMs: 10_000 }),
      /runs tmux \(a client of another tmux server/,
    );
  });
});

/** The POSIX shells installed here that run_command is tried with. */
const MARKER_SHELLS = ["sh", "bash", "zsh"].filter(installed);

Deno.test("run_command: a program cannot edit the markers on screen into an end (the splice)", async () => {
  type Run = { exitStatus: number | null; stillRunning: boolean; jobId?: string };
  type Job = { state: string; exitStatus: number | null; lostReason: string | null };
  // The command's first output row is right below its begin marker `__tmcp_NONCE_B`: one row
  // up, column 28 is where `_B` starts. Writing `_E:0...` there turns the begin marker into
  // the shape of an end marker, the nonce included, without knowing it.
  // (The other shapes, `_E:0::` and a check of another status, are in typed_test.ts.)
  const splices = ["_E:0", "_E:0:0:1700000000"];
  await withTmux(async (t, c) => {
    for (const shell of MARKER_SHELLS) {
      const pane = await shellPane(t, shell);
      for (const [i, splice] of splices.entries()) {
        const command = `printf '\\033[1A\\033[28G${splice}\\n'; sleep 100`;
        const label = `${shell}: ${splice}`;
        const background = i % 2 === 1;
        const run = await c.ok<Run>("run_command", {
          paneId: pane,
          command,
          timeoutMs: 1_000,
          background,
        });
        assert.equal(run.exitStatus, null, label);
        assert.equal(run.stillRunning, true, label);
        await t.foreground(pane, "sleep");
        const shown = await t.tmux("capture-pane", "-p", "-t", pane);
        assert.match(shown, new RegExp(`__tmcp_[0-9a-f]{20}${splice}`), `${label}: the splice`);
        const job = await c.ok<Job>("get_command_result", { jobId: run.jobId! });
        assert.equal(job.state, "running", `${label}: ${JSON.stringify(job)}`);
        assert.match(
          await c.fail("run_command", { paneId: pane, command: "echo typed" }),
          /still running an earlier run_command/,
          label,
        );
        await t.tmux("send-keys", "-t", pane, "C-c");
        const over = await c.ok<Job>("get_command_result", { jobId: run.jobId!, waitMs: 10_000 });
        assert.equal(over.state, "lost", `${label}: ${JSON.stringify(over)}`);
        assert.equal(over.exitStatus, null, label);
        assert.match(over.lostReason ?? "", /fails its check/, label);
      }
      // The pane works as before: a real end is read.
      const after = await c.ok<Run & { output: string }>("run_command", {
        paneId: pane,
        command: "echo fine; (exit 3)",
        timeoutMs: 10_000,
      });
      assert.equal(after.exitStatus, 3, shell);
      assert.equal(after.output, "fine", shell);
    }
  });
});

Deno.test({
  name: "run_command in zsh with force_float: the check printed as a float still ends the command",
  ignore: !MARKER_SHELLS.includes("zsh"),
}, async () => {
  await withTmux(async (t, c) => {
    const pane = await shellPane(t, "zsh");
    await t.tmux("send-keys", "-t", pane, "-l", "setopt force_float");
    await t.tmux("send-keys", "-t", pane, "Enter");
    await waitFor(
      async () =>
        (await c.ok<{ output: string }>("run_command", { paneId: pane, command: "echo $((1))" }))
          .output === "1.",
      "force_float on",
    );
    type Run = { exitStatus: number | null; output: string; timedOut: boolean };
    const run = await c.ok<Run>("run_command", {
      paneId: pane,
      command: "echo hello; (exit 3)",
      timeoutMs: 10_000,
    });
    assert.equal(run.timedOut, false, run.output);
    assert.equal(run.exitStatus, 3);
    assert.equal(run.output, "hello");
  });
});

/** What run_command answers, as far as these tests read it. */
interface RunReply {
  exitStatus: number | null;
  output: string;
  timedOut: boolean;
  stillRunning: boolean;
  paneDied: boolean;
  jobId?: string;
}

/** The shells with a line editor at their prompt that run_command is tried with. */
const EDITOR_SHELLS = MARKER_SHELLS.filter((name) => name === "bash" || name === "zsh");

Deno.test("run_command tells at once that a person's C-c ended the command, and frees the pane for everyone", async () => {
  await withTmux(async (t, c) => {
    for (const shell of EDITOR_SHELLS) {
      const pane = await shellPane(t, shell);
      const call = c.call("run_command", { paneId: pane, command: "sleep 50", timeoutMs: 45_000 });
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}"))
            .trim() === "sleep",
        "the command to run",
      );
      // The person at the keyboard stops it.
      await t.tmux("send-keys", "-t", pane, "C-c");
      const result = await call;
      const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
      const r = result.structuredContent as unknown as RunReply;
      assert.equal(r.timedOut, false, `${shell}: ${text}`);
      assert.equal(r.stillRunning, false, shell);
      assert.equal(r.paneDied, false, shell);
      assert.equal(r.exitStatus, null, shell);
      assert.match(text, /no exit status.*interrupted.*The pane is free/, `${shell}: ${text}`);
      // Another tmux-mcp process on the same tmux server finds the pane free: the mark that
      // said a call waited on the command went with the call.
      const other = await connect({ socketName: t.socket });
      try {
        const next = await other.ok<RunReply>("run_command", {
          paneId: pane,
          command: "echo next",
        });
        assert.equal(next.output, "next", shell);
        assert.equal(next.exitStatus, 0, shell);
      } finally {
        await other.close();
      }
    }
  });
});

Deno.test("run_command still waits on a command whose shell reads a line itself (`read`, not a prompt)", async () => {
  await withTmux(async (t, c) => {
    for (const shell of EDITOR_SHELLS) {
      const pane = await shellPane(t, shell);
      const r = await c.ok<RunReply>("run_command", {
        paneId: pane,
        command: "read answer; echo got-$answer",
        timeoutMs: 2_500,
      });
      assert.equal(r.timedOut, true, shell);
      assert.equal(r.stillRunning, true, shell);
      assert.ok(r.jobId, shell);
      // It was waiting all along: the line it reads ends it.
      await t.tmux("send-keys", "-t", pane, "-l", "yes");
      await t.tmux("send-keys", "-t", pane, "Enter");
      const done = await c.ok<{ exitStatus: number | null; output: string }>(
        "get_command_result",
        { jobId: r.jobId, waitMs: 20_000 },
      );
      assert.equal(done.exitStatus, 0, shell);
      assert.match(done.output, /got-yes/, shell);
    }
  });
});

Deno.test("run_command still waits on a command whose shell reads one key (`read -n 1`, zsh's `read -k`)", async () => {
  await withTmux(async (t, c) => {
    for (const shell of EDITOR_SHELLS) {
      const pane = await shellPane(t, shell);
      // "Press a key to go on": the shell reads one key, canonical mode off as at its prompt,
      // but with the terminal's echo on, unlike a line editor.
      const read = shell === "zsh" ? "read -k 1 x" : "read -n 1 x";
      const call = await c.call("run_command", {
        paneId: pane,
        command: `printf 'go on? '; ${read}; echo; echo got=$x`,
        timeoutMs: 4_000,
      });
      const text = call.content?.[0]?.type === "text" ? call.content[0].text : "";
      const r = call.structuredContent as unknown as RunReply;
      assert.doesNotMatch(text, /interrupted|The pane is free/, `${shell}: ${text}`);
      assert.equal(r.stillRunning, true, `${shell}: ${text}`);
      // It waited for its key all along: given one, it ends, with its status.
      await t.tmux("send-keys", "-t", pane, "-l", "y");
      const job = await c.ok<{ state: string; exitStatus: number | null; output: string }>(
        "get_command_result",
        { jobId: r.jobId!, waitMs: 10_000 },
      );
      assert.equal(job.state, "exited", `${shell}: ${JSON.stringify(job)}`);
      assert.equal(job.exitStatus, 0, shell);
      assert.match(job.output, /got=y$/, shell);
    }
  });
});

Deno.test({
  name: "run_command in busybox sh runs a long command as given, never words of its arguments",
  ignore: !["/bin", "/usr/bin"].some((dir) => {
    try {
      return Deno.statSync(`${dir}/busybox`).isFile;
    } catch {
      return false;
    }
  }),
  fn: async () => {
    await withTmux(async (t, c) => {
      const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-busybox-" });
      try {
        const pane =
          (await t.tmux("new-window", "-d", "-c", dir, "-P", "-F", "#{pane_id}", "busybox sh"))
            .trim();
        await waitFor(
          async () =>
            (await t.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}"))
                .trim() === "busybox" &&
            (await t.tmux("capture-pane", "-p", "-t", pane)).trim() !== "",
          "the busybox prompt",
        );
        // Long enough to be built up a line at a time; busybox's line editor keeps about 1 023
        // bytes of a line, and a piece cut before its closing quote would run the echo's text.
        const mark = `${dir}/ran`;
        const command = `echo ${"x".repeat(995)}${` touch ${mark}`.repeat(60)} ${"y".repeat(1500)}`;
        const r = await c.ok<RunReply>("run_command", { paneId: pane, command, timeoutMs: 10_000 });
        assert.equal(await exists(mark), false, "text of the echo's argument ran as a command");
        assert.equal(r.exitStatus, 0, JSON.stringify(r).slice(0, 300));
        assert.equal(r.output, command.slice("echo ".length));
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });
  },
});

Deno.test("run_command: an alias of the person's shell named like a word it types never reports a command that did not run", async () => {
  await withTmux(async (t, c) => {
    for (const shell of MARKER_SHELLS) {
      const pane = await shellPane(t, shell);
      // Words the typed line uses, aliased to print instead of run.
      const aliases = shell === "zsh"
        ? "alias eval='echo NO' printf='echo NO'"
        : "alias command=echo printf='echo NO'";
      const defined = await c.ok<RunReply>("run_command", { paneId: pane, command: aliases });
      assert.equal(defined.exitStatus, 0, shell);
      const r = await c.ok<RunReply>("run_command", { paneId: pane, command: "(exit 3)" });
      assert.equal(r.exitStatus, 3, `${shell}: ${JSON.stringify(r)}`);
      assert.equal(r.output, "", shell);
    }
  });
});
