/**
 * run_command against a person's own shell settings: a right prompt, PS0, preexec, a DEBUG
 * trap, xtrace, functions named like the words it types. Every pane starts its shell with a
 * start-up file of its own, as a person's shell reads theirs.
 */

import assert from "node:assert/strict";
import { type TestClient, withTmux } from "./helpers/mcp.ts";
import { type TestTmux, waitFor } from "./helpers/tmux.ts";

interface Run {
  exitStatus: number | null;
  output: string;
  outputComplete: boolean;
  jobId?: string;
}

interface Job {
  state: string;
  exitStatus: number | null;
  output: string;
  outputComplete: boolean;
  lostReason: string | null;
}

/**
 * A window running `shell` with `rc` as its start-up file (bash: --rcfile, zsh: ZDOTDIR's
 * .zshrc, sh: ENV) in `dir`, once it shows its prompt (`$ `, which `rc` sets). Returns its pane.
 */
async function configured(t: TestTmux, dir: string, shell: string, rc: string): Promise<string> {
  const file = shell === "bash" ? "bashrc" : shell === "zsh" ? ".zshrc" : "shrc";
  await Deno.writeTextFile(`${dir}/${file}`, rc);
  const command = shell === "bash"
    ? `bash --rcfile ${dir}/bashrc --noprofile`
    : shell === "zsh"
    ? `env ZDOTDIR=${dir} zsh`
    : `env ENV=${dir}/shrc ${shell}`;
  const id = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-c", dir, command))
    .trim();
  const names = shell === "sh" ? ["sh", "dash"] : [shell];
  await waitFor(async () => {
    const now = (await t.tmux("display-message", "-p", "-t", id, "#{pane_current_command}"))
      .trim();
    const rows = (await t.tmux("capture-pane", "-p", "-t", id)).trimEnd().split("\n");
    return names.includes(now) && rows[rows.length - 1].startsWith("$");
  }, `the ${shell} prompt in ${id}`);
  return id;
}

/** Runs `fn` with a directory of its own for start-up files, removed after. */
async function inDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-shell-settings-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * A command in the background that a person interrupts (lost, without its end marker), then
 * another run_command in the pane: the lost job's output ends where that command's line was
 * typed, and says it may be cut short.
 */
async function lostThenNext(c: TestClient, t: TestTmux, pane: string): Promise<void> {
  const first = await c.ok<Run>("run_command", {
    paneId: pane,
    command: "echo fi''rst; sleep 30",
    background: true,
  });
  await t.foreground(pane, "sleep");
  await t.tmux("send-keys", "-t", pane, "C-c");
  const lost = await c.ok<Job>("get_command_result", { jobId: first.jobId, waitMs: 10_000 });
  assert.equal(lost.state, "lost", JSON.stringify(lost));
  const next = await c.ok<Run>("run_command", { paneId: pane, command: "echo sec''ond" });
  assert.equal(next.exitStatus, 0, JSON.stringify(next));
  assert.equal(next.output, "second", JSON.stringify(next));
  const after = await c.ok<Job>("get_command_result", { jobId: first.jobId });
  assert.match(after.output, /^first\b/, JSON.stringify(after));
  assert.doesNotMatch(after.output, /second|__tmcp/, JSON.stringify(after));
  assert.equal(after.outputComplete, false, JSON.stringify(after));
  assert.match(after.lostReason ?? "", /later run_command/);
}

Deno.test("run_command: a lost job's output ends at the next command's line beside zsh's right prompt", async () => {
  await withTmux(
    async (t, c) => {
      await inDir(async (dir) => {
        // A wide pane: zsh keeps RPROMPT on the row of a typed line that fits beside it.
        const pane = await configured(t, dir, "zsh", "PS1='$ '; RPROMPT='[%*]'");
        await lostThenNext(c, t, pane);
      });
    },
    {},
    { width: 320, height: 40 },
  );
});

Deno.test("run_command: a lost job's output ends at the next command's line when bash's PS0 prints", async () => {
  await withTmux(async (t, c) => {
    await inDir(async (dir) => {
      const pane = await configured(t, dir, "bash", "PS1='$ '; PS0='started \\t\\n'");
      await lostThenNext(c, t, pane);
    });
  });
});

Deno.test("run_command: a lost job's output ends at the next command's line when zsh's preexec prints", async () => {
  await withTmux(async (t, c) => {
    await inDir(async (dir) => {
      const pane = await configured(t, dir, "zsh", "PS1='$ '; preexec() { print started }");
      await lostThenNext(c, t, pane);
    });
  });
});

/** The start-up file that turns xtrace on in `shell`. */
function xtrace(shell: string): string {
  return shell === "zsh" ? "PS1='$ '; setopt xtrace" : "PS1='$ '; set -x";
}

for (const shell of ["bash", "sh", "zsh"]) {
  Deno.test(`run_command with xtrace on (${shell}): the output holds no trace of the words around the command`, async () => {
    await withTmux(async (t, c) => {
      await inDir(async (dir) => {
        const pane = await configured(t, dir, shell, xtrace(shell));
        // Plain, and decoded first; the last line without a newline stays a line of its own.
        for (
          const [command, last, status] of [
            ["printf abc", "abc", 0],
            ["printf 'x%s' y", "xy", 0],
            ["(exit 3)", null, 3],
          ] as const
        ) {
          const r = await c.ok<Run>("run_command", { paneId: pane, command });
          const label = `${command}: ${JSON.stringify(r)}`;
          assert.equal(r.exitStatus, status, label);
          if (last !== null) assert.equal(r.output.split("\n").at(-1), last, label);
          // The command's own trace stays (the person asked for it); none of the wrapper's.
          assert.match(r.output, /eval/, label);
          assert.doesNotMatch(r.output, /__tmcp|%b|__tmux_mcp_cmd|date|EPOCH/, label);
        }
      });
    });
  });

  Deno.test(`run_command with xtrace on (${shell}): a command that clears the screen returns what it printed after`, async () => {
    await withTmux(async (t, c) => {
      await inDir(async (dir) => {
        const pane = await configured(t, dir, shell, xtrace(shell));
        const r = await c.ok<Run>("run_command", { paneId: pane, command: "clear; echo af''ter" });
        assert.equal(r.exitStatus, 0, JSON.stringify(r));
        assert.ok(r.output.split("\n").includes("after"), JSON.stringify(r));
      });
    });
  });
}

Deno.test("run_command: what a zsh TRAPDEBUG prints (a title) never becomes part of the command", async () => {
  await withTmux(async (t, c) => {
    await inDir(async (dir) => {
      const pane = await configured(
        t,
        dir,
        "zsh",
        "PS1='$ '; TRAPDEBUG() { print -Pn '\\e]0;%n: %~\\a' }",
      );
      const r = await c.ok<Run>("run_command", {
        paneId: pane,
        command: `echo "quoted"; (exit 3)`,
      });
      assert.equal(r.exitStatus, 3, JSON.stringify(r));
      assert.equal(r.output, "quoted", JSON.stringify(r));
      // Long enough to be built up a line at a time.
      const long = `echo "${"é".repeat(1_000)}"`;
      const built = await c.ok<Run>("run_command", { paneId: pane, command: long });
      assert.equal(built.exitStatus, 0, JSON.stringify(built).slice(0, 300));
      assert.equal(built.output, "é".repeat(1_000));
    });
  });
});

for (const shell of ["bash", "zsh"]) {
  Deno.test(`run_command (${shell}): functions named like the words it types never change what it reports`, async () => {
    await withTmux(async (t, c) => {
      await inDir(async (dir) => {
        // A wrapper of one's own: for a command that never ran, `command` printed and reported
        // status 0; `printf` printed no marker, and a command that ran read as never started.
        const rc = "PS1='$ '; command() { echo wrapped; }; printf() { :; }; eval() { :; }";
        const pane = await configured(t, dir, shell, rc);
        for (const command of [`touch ${dir}/plain`, `touch "${dir}/decoded"; (exit 3)`]) {
          const r = await c.ok<Run>("run_command", { paneId: pane, command, timeoutMs: 5_000 });
          const status = command.endsWith("(exit 3)") ? 3 : 0;
          assert.equal(r.exitStatus, status, `${command}: ${JSON.stringify(r)}`);
          assert.equal(r.output, "", `${command}: ${JSON.stringify(r)}`);
        }
        assert.ok((await Deno.stat(`${dir}/plain`)).isFile);
        assert.ok((await Deno.stat(`${dir}/decoded`)).isFile);
      });
    });
  });
}

for (const [shell, rc] of [["bash", ""], ["bash", "set -o posix"], ["zsh", ""], ["sh", ""]]) {
  Deno.test(`run_command (${[shell, rc].filter(Boolean).join(", ")}): a syntax error in the command still ends with its status`, async () => {
    await withTmux(async (t, c) => {
      await inDir(async (dir) => {
        const pane = await configured(t, dir, shell, `PS1='$ '; ${rc}`);
        for (const command of ["if", "echo 'unbalanced"]) {
          const r = await c.ok<Run>("run_command", { paneId: pane, command, timeoutMs: 5_000 });
          assert.ok(r.exitStatus !== null && r.exitStatus !== 0, JSON.stringify(r));
          assert.equal(r.outputComplete, true, JSON.stringify(r));
        }
        const after = await c.ok<Run>("run_command", { paneId: pane, command: "echo a''fter" });
        assert.equal(after.output, "after");
      });
    });
  });
}
