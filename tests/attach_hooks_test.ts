/**
 * A person's hooks that run when tmux-mcp's control client attaches (`client-attached`,
 * `client-session-changed`, `pane-focus-in`): what they print must neither break the
 * connection (tmux 3.3a writes a hook's `display-message -p` bare, outside any answer) nor
 * leave a pane in view-mode (where tmux shows a hook's `run-shell` output), and a person's own
 * view-mode is never taken from them.
 */

import assert from "node:assert/strict";
import { setControlLimits } from "../src/tmux/control_limits.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { landing, threeSessions } from "./helpers/recency.ts";
import { TestTmux, waitFor, within } from "./helpers/tmux.ts";

/** How many control clients are attached to `t` now. */
async function controlClients(t: TestTmux): Promise<number> {
  return (await t.tmux("list-clients", "-F", "#{client_control_mode}")).split("\n")
    .filter((l) => l === "1").length;
}

Deno.test("a person's client-attached hook that prints does not make every call attach a new control client", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    // An ordinary configuration line: greet whoever attaches (and count the attaches).
    await t.tmux("set-option", "-g", "@attaches", "0");
    await t.tmux(
      "set-hook",
      "-g",
      "client-attached",
      "display-message -p hello ; set-option -gF @attaches '#{e|+:#{@attaches},1}'",
    );
    c = await connect({ socketName: t.socket });
    for (let i = 0; i < 4; i++) await c.ok("list_panes");
    const attaches = Number((await t.tmux("show-options", "-gv", "@attaches")).trim());
    assert.equal(attaches, 1, `4 calls attached ${attaches} control clients`);
    assert.equal(await controlClients(t), 1, "the one client is still attached");
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("a person's client-attached run-shell hook does not leave the pane about to be typed into in view-mode", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    await t.tmux("set-hook", "-g", "client-attached", "run-shell 'echo welcome back'");
    c = await connect({ socketName: t.socket });
    const result = await c.call("send_keys", { paneId: t.ids.paneId, keys: ["Enter"] });
    const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
    const mode = (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_mode}")).trim();
    assert.notEqual(result.isError, true, `nobody touched the pane, yet: ${text} (mode ${mode})`);
    assert.equal(mode, "", "our attach's hook left no mode behind");
  } finally {
    await c?.close();
    await t.kill();
  }
});

/** The pane of a new session "work", its shell at its prompt. */
async function workPane(t: TestTmux): Promise<string> {
  const pane = (await t.tmux("new-session", "-d", "-s", "work", "-P", "-F", "#{pane_id}", "sh"))
    .trim();
  await t.prompt(pane);
  return pane;
}

/** Whether a file is at `path` (a gate a hook's job opens or waits for). */
function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}

/** The mode `paneId` shows now ("" for none). */
async function modeOf(t: TestTmux, paneId: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_mode}")).trim();
}

const GREETING = "run-shell 'echo welcome back'";

Deno.test("a person's own view-mode, there before tmux-mcp attached or entered after, is never left by it", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    const pane = t.ids.paneId;
    await t.tmux("set-hook", "-g", "client-attached", GREETING);
    // The person ran a command whose output tmux shows in view-mode on their pane.
    await t.tmux("run-shell", "-t", pane, "echo mine");
    assert.equal(await modeOf(t, pane), "view-mode");
    c = await connect({ socketName: t.socket });
    await c.ok("list_panes"); // attaches: the hook's output joins the person's view-mode
    assert.equal(await modeOf(t, pane), "view-mode", "theirs before the attach");
    await t.tmux("send-keys", "-X", "-t", pane, "cancel");
    await t.tmux("run-shell", "-t", pane, "echo mine again");
    await c.ok("list_panes");
    assert.equal(await modeOf(t, pane), "view-mode", "theirs after the attach");
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("a hook's view-mode over a person's copy mode is left, and their copy mode stays", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    const pane = t.ids.paneId;
    await t.tmux("set-hook", "-g", "client-attached", GREETING);
    await t.tmux("copy-mode", "-t", pane);
    c = await connect({ socketName: t.socket });
    await c.ok("list_panes");
    // On a loaded machine the hook's line may come after the call's answer: the handshake still
    // takes it back.
    await waitFor(async () => await modeOf(t, pane) === "copy-mode", "the person's copy mode");
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", pane, "#{pane_in_mode}")).trim(),
      "1",
      "one mode: the person's",
    );
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("a watch joining the session a person works in leaves no hook's view-mode on their screen", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    const work = await workPane(t);
    await t.attach("work");
    // Set once the person is in: their own attach greeted them, ours must not.
    await t.tmux("set-hook", "-g", "client-attached", GREETING);
    c = await connect({ socketName: t.socket });
    const waited = await c.ok<{ outcome: string; transport: string }>("wait_for_text", {
      paneId: work,
      patterns: ["never printed"],
      timeoutMs: 300,
    });
    assert.deepEqual([waited.outcome, waited.transport], ["timedOut", "control"]);
    assert.equal(await modeOf(t, work), "", "the person's pane shows their shell");
    assert.equal(await modeOf(t, t.ids.paneId), "", "nor the session our first client joined");
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("the refusal of a pane in view-mode says a hook may have put it there, tmux-mcp's attach too", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket });
    await c.ok("list_panes");
    // A hook's run-shell that took longer than the attach waits for shows up like this.
    await t.tmux("run-shell", "-t", t.ids.paneId, "echo late greeting");
    const refusal = await c.fail("send_keys", { paneId: t.ids.paneId, keys: ["Enter"] });
    assert.match(refusal, /is in view-mode/);
    assert.match(refusal, /hook/);
    assert.match(refusal, /tmux-mcp/);
    assert.match(refusal, /exit_copy_mode/);
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("a person's job running as a watch's client puts their last session back on top is not waited for, and its view-mode stays theirs", async () => {
  const { t, panes } = await threeSessions();
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-person-job-" });
  // Waited for, the person's job would hold the attaches until it ended.
  const runner = new TmuxRunner();
  setControlLimits(runner, { hookJobsWaitMs: 600_000 });
  let c: TestClient | undefined;
  try {
    // The person's run-shell, still running: it prints into a view-mode on their pane of $1
    // once the gate opens.
    await Deno.writeTextFile(
      `${dir}/job.sh`,
      'd=$(dirname "$0")\ntouch "$d/began"\n' +
        'while test -d "$d" && ! test -e "$d/open"; do sleep 0.02; done\necho their output\n',
    );
    await t.tmux("run-shell", "-b", "-t", panes[1], `sh ${dir}/job.sh`);
    await waitFor(() => exists(`${dir}/began`), "their job");
    c = await connect({ socketName: t.socket, runner });
    await within(c.ok("list_panes"), 20_000, "the first call");
    // A command in the third session attaches a client there to follow its output, which then
    // moves for a moment to $1 (the person's last) to put it back on top.
    await within(
      c.ok("run_command", { paneId: panes[2], command: "true" }),
      20_000,
      "run_command in the third session",
    );
    assert.equal(await landing(t), "$1");
    await Deno.writeTextFile(`${dir}/open`, "");
    await waitFor(async () => await modeOf(t, panes[1]) === "view-mode", "their job's output");
    await c.ok("list_panes");
    assert.equal(await modeOf(t, panes[1]), "view-mode", "their view-mode is left to them");
  } finally {
    await c?.close();
    await runner.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hooks whose jobs run one after the other as a watch joins a person's session leave no view-mode when the last ends", async () => {
  const t = await TestTmux.start();
  // However slow the machine, the jobs are waited for to their end.
  const runner = new TmuxRunner();
  setControlLimits(runner, { hookJobsWaitMs: 600_000 });
  let c: TestClient | undefined;
  try {
    const work = await workPane(t);
    await t.attach("work");
    // tmux runs a hook's run-shell in its one queue of hooks: the client-attached job starts
    // only once the client-session-changed job (run first, for the same attach) has ended, and
    // the notice of the first job's view-mode waits behind the second.
    await t.tmux("set-hook", "-g", "client-session-changed", "run-shell 'sleep 0.2; echo moved'");
    await t.tmux("set-hook", "-g", "client-attached", "run-shell 'sleep 0.3; echo welcome back'");
    c = await connect({ socketName: t.socket, runner });
    await c.ok("list_panes");
    const waited = await c.ok<{ outcome: string; transport: string }>("wait_for_text", {
      paneId: work,
      patterns: ["never printed"],
      timeoutMs: 0,
    });
    assert.equal(waited.transport, "control");
    await waitFor(
      async () => !/sleep 0\./.test(await t.tmux("show-messages", "-J")),
      "the hooks' jobs to end",
    );
    // The handshake's last read and its cancel may come a moment after the jobs' end.
    await waitFor(
      async () => await modeOf(t, work) === "",
      "the person's pane to show their shell",
    );
    await waitFor(
      async () => await modeOf(t, t.ids.paneId) === "",
      "nor the session our first client joined",
    );
  } finally {
    await c?.close();
    await runner.close();
    await t.kill();
  }
});

/** Every pane of `t` in a mode now, as `%N mode` lines. */
async function panesInModes(t: TestTmux): Promise<string[]> {
  return (await t.tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_mode}")).split("\n")
    .filter((l) => / \S+$/.test(l));
}

Deno.test("hooks of the client that puts a person's last session back on top leave no view-mode in any session", async () => {
  const { t, panes } = await threeSessions();
  let c: TestClient | undefined;
  try {
    // What a hook's job prints once its client has left lands on the pane tmux finds from
    // nothing (the last used session's): not a pane of the session the client joined.
    await t.tmux("set-hook", "-g", "client-session-changed", "run-shell 'sleep 0.2; echo moved'");
    await t.tmux("set-hook", "-g", "client-attached", "run-shell 'sleep 0.3; echo welcome back'");
    c = await connect({ socketName: t.socket });
    await within(c.ok("list_panes"), 20_000, "the first call");
    await within(
      c.ok("run_command", { paneId: panes[2], command: "true" }),
      20_000,
      "run_command in the third session",
    );
    await waitFor(
      async () => !/sleep 0\./.test(await t.tmux("show-messages", "-J")),
      "the hooks' jobs to end",
    );
    assert.deepEqual(await panesInModes(t), []);
    assert.equal(await landing(t), "$1");
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("a view-mode a person opens while an attach's hook job runs stays theirs, though tmux tells it only at the job's end", async () => {
  const t = await TestTmux.start();
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-hook-gate-" });
  // Waited for as long as the test holds the gate.
  const runner = new TmuxRunner();
  setControlLimits(runner, { hookJobsWaitMs: 600_000 });
  let c: TestClient | undefined;
  try {
    // A pane beside the one the hook's output lands on (the session's active pane), in the
    // one session our client can join.
    const work =
      (await t.tmux("split-window", "-d", "-t", t.ids.paneId, "-P", "-F", "#{pane_id}", "sh"))
        .trim();
    await t.prompt(work);
    await t.tmux(
      "set-hook",
      "-g",
      "client-attached",
      `run-shell "touch ${dir}/began; while ! test -e ${dir}/open; do sleep 0.02; done; echo welcome"`,
    );
    c = await connect({ socketName: t.socket, runner });
    const first = c.ok("list_panes");
    await waitFor(() => exists(`${dir}/began`), "the hook's job");
    // The person's own run-shell, on the pane beside and on the one the hook's output lands on:
    // their view-modes open now, and tmux's notices of them wait in the queue the hook's job
    // holds.
    await t.tmux("run-shell", "-t", work, "echo mine");
    await t.tmux("run-shell", "-t", t.ids.paneId, "echo mine too");
    assert.equal(await modeOf(t, work), "view-mode");
    // The job ends only once the handshake has read the panes twice since (each read lists the
    // sessions, and a person's after-list-sessions hook counts it): a view-mode opened in the
    // very read where a job ends is taken for the job's.
    await t.tmux("set-option", "-g", "@reads", "0");
    await t.tmux(
      "set-hook",
      "-g",
      "after-list-sessions",
      "set-option -gF @reads '#{e|+:#{@reads},1}'",
    );
    await waitFor(
      async () => Number((await t.tmux("show-options", "-gv", "@reads")).trim()) >= 2,
      "two reads of the handshake",
    );
    await Deno.writeTextFile(`${dir}/open`, "");
    await within(first, 20_000, "the first call");
    assert.deepEqual(
      (await panesInModes(t)).sort(),
      [`${t.ids.paneId} view-mode`, `${work} view-mode`].sort(),
      "the person's view-modes are theirs (the hook's line added to one of them)",
    );
  } finally {
    await c?.close();
    await runner.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a person's hook job that ends as tmux-mcp attaches elsewhere leaves its greeting on their pane", async () => {
  const t = await TestTmux.start();
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-person-hook-" });
  let c: TestClient | undefined;
  try {
    const work = await workPane(t);
    // Greets people only (tmux-mcp's clients carry their own TERM), once the test opens it.
    await t.tmux(
      "set-hook",
      "-g",
      "client-attached",
      `if-shell -F "#{!=:#{client_termname},tmux-mcp}" "run-shell \\"touch ${dir}/began; ` +
        `while ! test -e ${dir}/open; do sleep 0.02; done; echo welcome\\""`,
    );
    await t.attach("work");
    await waitFor(() => exists(`${dir}/began`), "the greeting");
    c = await connect({ socketName: t.socket });
    // Our client attaches to main; its handshake waits in tmux's queue of hooks behind the
    // person's job, which ends after the modes before the attach were read.
    const first = c.ok("list_panes");
    await waitFor(
      async () => (await t.tmux("list-clients", "-F", "#{client_termname}")).includes("tmux-mcp"),
      "our client to attach",
    );
    await Deno.writeTextFile(`${dir}/open`, "");
    await within(first, 20_000, "the first call");
    assert.equal(await modeOf(t, work), "view-mode", "the person's greeting is theirs");
  } finally {
    await c?.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a hook's line raising a person's view-mode above their copy mode leaves both theirs", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    const work = await workPane(t);
    await t.attach("work");
    await t.tmux("set-hook", "-g", "client-attached", GREETING);
    // The person's output in view-mode, and their copy mode over it: two modes.
    await t.tmux("run-shell", "-t", work, "echo mine");
    await t.tmux("copy-mode", "-t", work);
    const stack = () => t.tmux("display-message", "-p", "-t", work, "#{pane_in_mode} #{pane_mode}");
    assert.equal((await stack()).trim(), "2 copy-mode");
    c = await connect({ socketName: t.socket });
    const waited = await c.ok<{ transport: string }>("wait_for_text", {
      paneId: work,
      patterns: ["never printed"],
      timeoutMs: 300,
    });
    assert.equal(waited.transport, "control");
    // tmux raised their view-mode above the copy mode for the greeting: no mode more, none
    // taken.
    assert.equal((await stack()).split(" ")[0], "2", "both of the person's modes stay");
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("a hook's job whose shell exits while a process it left holds its output is waited for until its output is placed", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    // The job's shell exits at once; tmux lists the job with pid -1 until the subshell it left
    // closes the output, and only then shows the output in view-mode.
    await t.tmux(
      "set-hook",
      "-g",
      "client-attached",
      "run-shell '(sleep 0.4; echo late) & echo welcome'",
    );
    c = await connect({ socketName: t.socket });
    await c.ok("list_panes");
    await waitFor(
      async () => !/sleep 0\.4/.test(await t.tmux("show-messages", "-J")),
      "the hook's job to end",
    );
    await waitFor(async () => await modeOf(t, t.ids.paneId) === "", "the pane to show its shell");
  } finally {
    await c?.close();
    await t.kill();
  }
});
