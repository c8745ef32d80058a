/**
 * Two tmux-mcp processes on one tmux server (two MCP clients: an editor's and a terminal
 * agent's). Each keeps control clients of its own, and the rules that keep a control client
 * out of a person's way ("leave once nobody else is here") must see the other process's
 * clients as tmux-mcp too, not as someone: else each keeps the other attached for ever, and
 * the server, or the person's session, is never left as it would be without tmux-mcp.
 * Another program's control client, and a person on a terminal whatever their `TERM`, still
 * count as someone.
 */
import assert from "node:assert/strict";
import { startOn, StdioServer } from "./helpers/stdio.ts";
import { sh, TestTmux, waitFor } from "./helpers/tmux.ts";
import { controlFor } from "../src/tmux/control.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { OWN_KIND_FORMAT, OWN_TERM } from "../src/tmux/identity.ts";

/** A tool call that must succeed. */
async function ok(s: StdioServer, name: string, args: Record<string, unknown> = {}) {
  const r = await s.callTool(name, args);
  assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
}

/** Whether the server on `t`'s socket answers. */
async function answers(t: TestTmux): Promise<boolean> {
  return (await t.tmuxRaw("list-sessions")).code === 0;
}

/** The sessions control clients are attached to (`$N`, sorted); none once the server is gone. */
async function controls(t: TestTmux): Promise<string[]> {
  const r = await t.tmuxRaw("list-clients", "-F", "#{client_control_mode} #{session_id}");
  return r.stdout.split("\n").filter((l) => l.startsWith("1 ")).map((l) => l.slice(2)).sort();
}

/** Runs `body` with two tmux-mcp processes on a fresh server, then ends them and the server. */
async function withTwo(
  body: (t: TestTmux, a: StdioServer, b: StdioServer) => Promise<void>,
  session?: string,
): Promise<void> {
  const t = await TestTmux.start(session);
  const a = await startOn(t.socket);
  const b = await startOn(t.socket);
  try {
    await body(t, a, b);
  } finally {
    await a.closeStdin();
    await b.closeStdin();
    await t.kill();
  }
}

Deno.test("two processes: exit-unattached turned on while only their clients are attached: the server exits", async () => {
  await withTwo(async (t, a, b) => {
    await ok(a, "list_panes");
    await ok(b, "list_panes");
    assert.equal((await controls(t)).length, 2, "one control client of each process");
    // Without tmux-mcp no client is attached: tmux would exit at once.
    await t.tmux("set-option", "-g", "exit-unattached", "on");
    await waitFor(async () => !(await answers(t)), "the server to exit as it would without us");
  });
});

Deno.test("two processes: under exit-unattached, the server exits when the last person leaves", async () => {
  await withTwo(async (t, a, b) => {
    const tty = await t.attach("main");
    await t.tmux("set-option", "-g", "exit-unattached", "on");
    // Each attaches: the person keeps the server either way.
    await ok(a, "list_panes");
    await ok(b, "list_panes");
    assert.equal((await controls(t)).length, 2, "one control client of each process");
    await t.tmux("detach-client", "-t", tty);
    await waitFor(async () => !(await answers(t)), "the server to exit with the last person");
  });
});

Deno.test("two processes: clients that followed panes into a person's session leave after the person", async () => {
  await withTwo(async (t, a, b) => {
    const second =
      (await t.tmux("new-session", "-d", "-s", "second", "-P", "-F", "#{pane_id}", "sh"))
        .trim();
    await t.prompt(second);
    const person = await t.attach("second");
    const pane = async () =>
      (await t.tmux("new-window", "-d", "-t", "second", "-P", "-F", "#{pane_id}", "sh")).trim();
    const [pa, pb] = [await pane(), await pane()];
    await t.prompt(pa);
    await t.prompt(pb);
    // A wait on each pane: each process follows its pane's output from the person's session.
    await ok(a, "run_command", { paneId: pa, command: "true" });
    await ok(b, "run_command", { paneId: pb, command: "true" });
    const secondId = (await t.tmux("display-message", "-p", "-t", "second", "#{session_id}"))
      .trim();
    assert.equal(
      (await controls(t)).filter((s) => s === secondId).length,
      2,
      "both processes follow their pane in the person's session",
    );
    await t.tmux("detach-client", "-t", person);
    await waitFor(
      async () => !(await controls(t)).includes(secondId),
      "both clients to leave the person's session",
    );
  }, "first");
});

Deno.test("two processes: another program's client still counts as someone; both leave after it", async () => {
  await withTwo(async (t, a, b) => {
    const other = t.controlClient("main");
    await waitFor(async () => (await controls(t)).length === 1, "the other program's client");
    await t.tmux("set-option", "-g", "exit-unattached", "on");
    await ok(a, "list_panes");
    await ok(b, "list_panes");
    await waitFor(
      async () => (await controls(t)).length === 3,
      "a client of each process beside the other program's",
    );
    await other.stdin.close();
    await other.status;
    await waitFor(async () => !(await answers(t)), "the server to exit after the program left");
  });
});

/** A terminfo folder in `dir` with xterm's entry under the name `name`; returns the folder. */
async function terminfoNamed(name: string, dir: string): Promise<string> {
  const xterm = await sh("infocmp", ["-x", "xterm"]);
  const entry = xterm.stdout.replace(/^xterm[^,\n]*,/m, `${name}|xterm under another name,`);
  await sh("tic", ["-x", "-o", dir, "-"], { stdin: entry });
  return dir;
}

Deno.test("tmux-mcp's own kind: its control clients, never a person on a terminal nor another program", async () => {
  const t = await TestTmux.start();
  const runner = new TmuxRunner();
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-terminfo-" });
  try {
    const kinds = async () =>
      (await t.tmux(
        "list-clients",
        "-F",
        "#{?client_control_mode,control,plain} #{?client_tty,tty,pipe} #{client_termname} " +
          OWN_KIND_FORMAT,
      )).trim().split("\n").sort();
    // A person whose terminal is named as tmux-mcp names its clients (with a terminfo entry,
    // else tmux refuses the terminal), attached plainly and in control mode (iTerm2).
    const env = { TERM: OWN_TERM, TERMINFO: await terminfoNamed(OWN_TERM, dir) };
    await t.attach("main", { env });
    await t.attach("main", { control: true, env });
    const other = t.controlClient("main");
    await controlFor(runner, { socketName: t.socket }).exec(["display-message", "-p", "x"]);
    await waitFor(async () => (await kinds()).length === 4, "four clients");
    assert.deepEqual(await kinds(), [
      "control pipe tmux-mcp 1",
      "control pipe xterm 0",
      "control tty tmux-mcp 0",
      "plain tty tmux-mcp 0",
    ]);
    await other.stdin.close();
    await other.status;
  } finally {
    await runner.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});
