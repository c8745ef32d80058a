import assert from "node:assert/strict";
import { sh as run, TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { shellHoldsTerminal, shellIdle } from "./foreground.ts";

async function sh(script: string): Promise<number> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", script],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  return out.code;
}

Deno.test("shellHoldsTerminal takes only a pid", () => {
  assert.throws(() => shellHoldsTerminal(0), RangeError);
  assert.throws(() => shellHoldsTerminal(1.5), RangeError);
  assert.throws(() => shellHoldsTerminal(Number.NaN), RangeError);
});

Deno.test("shellHoldsTerminal: a process that is gone holds nothing", async () => {
  assert.notEqual(await sh(shellHoldsTerminal(2 ** 30)), 0);
});

// ---------------------------------------------------------------------------------------------
// Through tmux's if-shell, as the guards ask it, on processes that lie about themselves

/** Asks tmux, as the guards do, whether pane `paneId`'s own process holds its terminal. */
async function holds(t: TestTmux, paneId: string): Promise<boolean> {
  const pid = Number((await t.tmux("display-message", "-p", "-t", paneId, "#{pane_pid}")).trim());
  const out = await t.tmux(
    "if-shell",
    "-t",
    paneId,
    shellHoldsTerminal(pid),
    "display-message -p yes",
    "display-message -p no",
  );
  return out.trim() === "yes";
}

/** A pane running `script` (in tmux's default shell, as the pane's own process). */
async function paneRunning(t: TestTmux, script: string): Promise<string> {
  return (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", script)).trim();
}

/** Waits until process `pid`'s kernel name (`comm`) starts with `prefix`. */
async function named(t: TestTmux, paneId: string, prefix: string): Promise<void> {
  const pid = (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_pid}")).trim();
  let comm = "";
  await waitFor(
    // Read by a process of its own: this one may not read /proc (the test task's flags).
    async () =>
      (comm = (await run("cat", [`/proc/${pid}/comm`], { allowFail: true })).stdout)
        .startsWith(prefix),
    `${paneId} (pid ${pid}) renamed`,
  ).catch((error) => {
    throw new Error(`${error.message}: its name is ${JSON.stringify(comm)}`);
  });
}

Deno.test({
  name:
    "shellHoldsTerminal answers the truth through if-shell, whatever name a process gives itself",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const t = await TestTmux.start();
    try {
      // The pane's shell at its prompt holds its terminal.
      assert.equal(await holds(t, t.ids.paneId), true);
      // A shell with job control running a program in the foreground does not.
      const busy = await paneRunning(t, "set -m; sleep 1000; exit");
      await t.foreground(busy, "sleep");
      assert.equal(await holds(t, busy), false);
      // `/proc/PID/stat` prints the name raw: a `)` and a newline in it must not make the
      // fields after it look like the process's own. Each name below claims the opposite of
      // the truth on its first line (fields 3 and 6 of the tail are the process group and
      // the terminal's foreground group).
      const fakeHolds = await paneRunning(
        t,
        `printf 'x) S 1 7 7 0 7\\n' > /proc/$$/comm; set -m; sleep 1000; exit`,
      );
      await t.foreground(fakeHolds, "sleep");
      await named(t, fakeHolds, "x)");
      assert.equal(await holds(t, fakeHolds), false);
      const fakeBusy = await paneRunning(t, `printf 'x) S 1 7 7 0 9\\n' > /proc/$$/comm; read v`);
      await named(t, fakeBusy, "x)");
      assert.equal(await holds(t, fakeBusy), true);
      const noNewline = await paneRunning(t, `printf 'y) S 1 7 7 0 9' > /proc/$$/comm; read v`);
      await named(t, noNewline, "y)");
      assert.equal(await holds(t, noNewline), true);
    } finally {
      await t.kill();
    }
  },
});

/** Waits until process `pid` has a child that runs `name` (read by a process of its own). */
async function childNamed(t: TestTmux, paneId: string, name: string): Promise<void> {
  const pid = (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_pid}")).trim();
  await waitFor(
    async () =>
      (await run("sh", [
        "-c",
        `for c in $(cat /proc/${pid}/task/${pid}/children); do cat /proc/$c/comm; done`,
      ], {
        allowFail: true,
      })).stdout.trim() === name,
    `${paneId} (pid ${pid}) running ${name}`,
  );
}

Deno.test({
  name: "shellHoldsTerminal: a program in the shell's own process group holds the terminal",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const t = await TestTmux.start();
    try {
      // `sh -c 'PROGRAM; exec sh'`: a shell without job control runs PROGRAM in its own
      // process group, so the group test alone says the shell holds the terminal.
      const cat = await paneRunning(t, "cat; exec sh");
      await childNamed(t, cat, "cat");
      assert.equal(await holds(t, cat), false);
      // A background child of such a shell reads /dev/null, not the terminal: the shell
      // itself (here in read) is what reads the keyboard.
      const bg = await paneRunning(t, "sleep 1000 </dev/null & read v");
      await childNamed(t, bg, "sleep");
      assert.equal(await holds(t, bg), true);
      // A child whose input is not the terminal but which has the terminal open on another
      // descriptor (a `$(...)`'s program that moved its input away) reads it all the same:
      // through /dev/tty, or through the pane's terminal opened by its path.
      const devTty = await paneRunning(t, "sleep 1000 </dev/null 3</dev/tty; exec sh");
      await childNamed(t, devTty, "sleep");
      assert.equal(await holds(t, devTty), false, "a child with /dev/tty open");
      const byPath = await paneRunning(t, 'p=$(tty); sleep 1000 </dev/null 3<"$p"; exec sh');
      await childNamed(t, byPath, "sleep");
      assert.equal(await holds(t, byPath), false, "a child with the terminal open by its path");
    } finally {
      await t.kill();
    }
  },
});

/** Asks tmux, as the prompt test does, whether pane `paneId`'s own process is idle. */
async function idle(t: TestTmux, paneId: string): Promise<boolean> {
  const pid = Number((await t.tmux("display-message", "-p", "-t", paneId, "#{pane_pid}")).trim());
  const out = await t.tmux(
    "if-shell",
    "-t",
    paneId,
    shellIdle(pid),
    "display-message -p yes",
    "display-message -p no",
  );
  return out.trim() === "yes";
}

Deno.test({
  name:
    "shellIdle: a shell in wait, in a loop of builtins or in $(...) is busy; at its prompt or in read, not",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const t = await TestTmux.start();
    try {
      // A shell that drew its prompt still runs (kernel state R) until it waits for a line, as
      // long as a loaded machine leaves it unscheduled: idle once it waits, not at once.
      await waitFor(() => idle(t, t.ids.paneId), "the shell at its prompt to look idle");
      const waits = await paneRunning(t, "sleep 1000 </dev/null & wait");
      await childNamed(t, waits, "sleep");
      assert.equal(await holds(t, waits), true, "it holds its terminal");
      await waitFor(async () => !await idle(t, waits), "the shell in wait to look busy");
      const loops = await paneRunning(t, "while :; do :; done");
      await waitFor(async () => !await idle(t, loops), "the loop to look busy");
      assert.equal(await idle(t, loops), false, "a loop of builtins stays busy");
      // Waiting for a command substitution, the shell reads its pipe: the program inside runs
      // in the shell's process group, and with its input away from the terminal nothing else
      // tells it. (The pane's command runs in the default shell, bash here, which forks a
      // subshell for a `$(...)` with a redirection: `exec` makes sleep the shell's own child.)
      const subst = await paneRunning(t, "x=$(exec sleep 1000 </dev/null); read v");
      await childNamed(t, subst, "sleep");
      await waitFor(async () => !await idle(t, subst), "the shell in $(...) to look busy");
      const reads = await paneRunning(t, "sleep 1000 </dev/null & read v");
      await childNamed(t, reads, "sleep");
      // Past its fork, the shell runs on to read (busy until it gets there, as above).
      await waitFor(() => idle(t, reads), "read to wait as a prompt does");
      assert.equal(await sh(shellIdle(2 ** 30)), 0, "a process that is gone is not busy");
    } finally {
      await t.kill();
    }
  },
});
