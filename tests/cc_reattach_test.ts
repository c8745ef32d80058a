/**
 * A person's terminal re-attached as `tmux -CC` (iTerm2's integration) under the name its plain
 * client had: tmux names a client by its terminal, so the whole-session client that shows every
 * window of the session as a tab comes back as `/dev/pts/N`, the name the act's read saw showing
 * one window. tmux must still count it as seeing the pane at the instant of the act.
 */

import assert from "node:assert/strict";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { cleanEnv, HookGate, ShellGate, TestTmux, waitFor } from "./helpers/tmux.ts";

/** A person's terminal: a shell under script, in which they type tmux commands. */
function terminal(): { type: (s: string) => Promise<void>; end: () => Promise<void> } {
  const term = new Deno.Command("script", {
    args: ["-qfc", "sh", "/dev/null"],
    env: cleanEnv({ TERM: "xterm", PS1: "$ " }),
    clearEnv: true,
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const keyboard = term.stdin.getWriter();
  return {
    type: (s) => keyboard.write(new TextEncoder().encode(s)),
    end: async () => {
      try {
        term.kill("SIGKILL");
      } catch { /* gone */ }
      await term.status;
    },
  };
}

Deno.test("send_keys: the person's terminal comes back as tmux -CC while a hook holds the step after its read: tmux counts the client as new, nothing is typed", async () => {
  const t = await TestTmux.start("main");
  const gate = await HookGate.make();
  const person = terminal();
  let c: TestClient | undefined;
  const clients = async () =>
    (await t.tmux("list-clients", "-F", "#{client_name} #{client_control_mode}")).trim();
  try {
    const [paneId] = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{pane_id}"))
      .trim().split(" ");
    await t.prompt(paneId);
    await person.type(`tmux -u -L ${t.socket} attach -t main\n`);
    const tty = await waitFor(
      async () => (await t.clientTtys()).find((x) => x.startsWith("/dev/")),
      "the person's plain client",
    );
    c = await connect({ socketName: t.socket });
    await c.ok("list_panes", {});
    // tmux keeps the second of a session's last attach (this server's control client's too):
    // the -CC client attaches in a later one, as a person's hands would (a wait for the clock,
    // not a guess).
    const attached = Number(
      (await t.tmux("display-message", "-p", "-t", "main", "#{session_last_attached}")).trim(),
    );
    await waitFor(() => Math.floor(Date.now() / 1000) > attached, "the next second");
    // A person's hook holds tmux-mcp's line right after the guard's read.
    await t.onceAfterGuardRead(gate.command);
    const call = c.call("send_keys", { paneId, text: "echo TYPED-IN-A-TAB" });
    await waitFor(() => gate.began(), "the step to be held after the read");
    await t.detach(tty);
    await person.type(`tmux -u -L ${t.socket} -CC attach -t main\n`);
    await waitFor(async () => (await clients()).includes(`${tty} 1`), "the -CC client");
    await gate.open();
    const r = await call;
    const text = (r.content as { text?: string }[]).map((x) => x.text ?? "").join("\n");
    assert.equal(r.isError, true, text);
    assert.match(text, /-CC/, `the refusal names the whole-session client: ${text}`);
    const shown = await t.tmux("capture-pane", "-p", "-t", paneId);
    assert.doesNotMatch(shown, /TYPED-IN-A-TAB/, "nothing was typed");
  } finally {
    await gate.open();
    await c?.close();
    await t.kill();
    await person.end();
    await gate.remove();
  }
});

Deno.test("run_command: the person's terminal detaches and comes back as tmux -CC between the C-c and the typing: nothing is typed into the tab it shows", async () => {
  const t = await TestTmux.start("main");
  const gate = await ShellGate.make();
  const armed = await Deno.makeTempDir({ prefix: "tmux-mcp-arm-" });
  let c: TestClient | undefined;
  const person = terminal();
  const type = person.type;
  const clients = async () =>
    (await t.tmux("list-clients", "-F", "#{client_name} #{client_control_mode}")).trim();
  try {
    // The prompt's command waits at the gate once armed: after the C-c, the typing step waits
    // for it (a prompt program holds the terminal) while the person re-attaches.
    const prompt = `[ -e '${armed}/on' ] && { ${gate.wait}; }; true`;
    const [paneId] = (await t.tmux(
      "new-window",
      "-d",
      "-t",
      "main:",
      "-P",
      "-F",
      "#{pane_id}",
      `env PROMPT_COMMAND="${prompt}" PS1='bash$ ' bash --norc --noprofile`,
    )).trim().split(" ");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).includes("bash$"),
      "bash's prompt",
    );
    await type(`tmux -u -L ${t.socket} attach -t main\n`);
    const tty = await waitFor(
      async () => (await t.clientTtys()).find((x) => x.startsWith("/dev/")),
      "the person's plain client",
    );
    c = await connect({ socketName: t.socket });
    await Deno.writeTextFile(`${armed}/on`, "");
    const call = c.call("run_command", { paneId, command: "echo RAN-IN-A-TAB", timeoutMs: 15_000 });
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).includes("^C"),
      "the C-c step",
    );
    await t.detach(tty);
    await type(`tmux -u -L ${t.socket} -CC attach -t main\n`);
    await waitFor(async () => (await clients()).includes(`${tty} 1`), "the -CC client");
    await gate.open();
    const r = await call;
    const text = (r.content as { text?: string }[]).map((x) => x.text ?? "").join("\n");
    assert.equal(r.isError, true, text);
    assert.match(text, /-CC/, `the refusal names the whole-session client: ${text}`);
    assert.match(text, /C-c/, `the refusal says the C-c was pressed: ${text}`);
    const shown = await t.tmux("capture-pane", "-p", "-t", paneId);
    assert.doesNotMatch(shown, /RAN-IN-A-TAB/, "nothing of the command was typed");
  } finally {
    await gate.open();
    await c?.close();
    await t.kill();
    await person.end();
    await gate[Symbol.asyncDispose]();
    await Deno.remove(armed, { recursive: true }).catch(() => {});
  }
});

Deno.test("a visit that attached and left before the read does not make acts refuse afterwards, the people still attached idle", async () => {
  const t = await TestTmux.start("main");
  let c: TestClient | undefined;
  try {
    await t.attach("main");
    const { windowId, paneId } = await t.shellWindow("main");
    c = await connect({ socketName: t.socket });
    await c.ok("clear_pane", { paneId });
    // Someone attaches from another terminal, in a later second than anything seen so far, and
    // leaves again; the person stays idle.
    const now = Math.floor(Date.now() / 1000);
    await waitFor(() => Math.floor(Date.now() / 1000) > now, "the next second");
    const visitor = await t.attach("main");
    await t.detach(visitor);
    const left = Number(
      (await t.tmux("display-message", "-p", "-t", "main", "#{session_last_attached}")).trim(),
    );
    // The next second: an attach since the read would count from there.
    await waitFor(() => Math.floor(Date.now() / 1000) > left, "the next second");
    await c.ok("clear_pane", { paneId });
    await c.ok("select_layout", { windowId, layout: "tiled" });
  } finally {
    await c?.close();
    await t.kill();
  }
});
