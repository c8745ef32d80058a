/**
 * The person's global `window-size manual`, lent out as `latest` for one creation's command
 * line (window_size.ts, tmux/tmux#4849): a `latest` read while it is lent must be taken for
 * their `manual` by every creation, whichever process made the read and whenever its answer is
 * judged, or the creation is made plainly and tmux 3.3a crashes once `manual` is given back.
 */
import assert from "node:assert/strict";
import { tmuxClientsOf } from "./helpers/robust.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, HookGate, TestTmux, waitFor } from "./helpers/tmux.ts";
import { LENT_OPTION } from "../src/tools/window_size.ts";

/** A tmux-mcp process of its own on `t`, initialized (another MCP client's, say). */
async function agent(t: TestTmux, ...extra: string[]): Promise<StdioServer> {
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", t.socket, ...extra], cleanEnv());
  await s.initialize();
  return s;
}

/** A tool call that must succeed. */
async function ok(s: StdioServer, name: string, args: Record<string, unknown> = {}) {
  const r = await s.callTool(name, args);
  assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
  return r;
}

/** Whether the server on `t`'s socket answers. */
async function answers(t: TestTmux): Promise<boolean> {
  return (await t.tmuxRaw("list-sessions")).code === 0;
}

/** The global window-size. */
const windowSize = async (t: TestTmux): Promise<string> =>
  (await t.tmux("show-options", "-gwv", "window-size")).trim();

/** The lend's mark in tmux: "" when there is none. */
const mark = async (t: TestTmux): Promise<string> =>
  (await t.tmux("show-options", "-gwqv", LENT_OPTION)).trim();

/** Sets `@name` once a `show-options` reading destroy-unattached (a creation's read) has run. */
function afterCreationRead(name: string): string[] {
  return [
    "set-hook",
    "-g",
    "after-show-options",
    `if-shell -F '#{m:*destroy-unattached*,#{hook_arguments}}' 'set-option -g ${name} 1'`,
  ];
}

Deno.test("a create_window that reads the latest another process lent out does not crash tmux", async () => {
  const t = await TestTmux.start();
  const made = await HookGate.make();
  const killed = await HookGate.make();
  const a = await agent(t);
  const b = await agent(t, "--toolsets", "inspect,manage,execute,teardown");
  try {
    const scratch = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sleep 1000"))
      .trim();
    await t.tmux("set-option", "-gw", "window-size", "manual");
    // The person's slow hooks (a plugin's run-shell), each held until the test opens it.
    await t.tmux("set-hook", "-g", "after-new-window", made.command);
    await t.tmux("set-hook", "-g", "after-kill-pane", killed.command);
    await ok(a, "list_panes");
    await ok(b, "list_panes");
    // One process's creation, held by the hook: `latest` is lent out.
    const first = a.callTool("create_window", { session: "main" });
    await waitFor(() => made.began(), "the first creation held by the hook");
    assert.equal(await windowSize(t), "latest");
    // The other process: a kill held by a hook, so that its creation waits its turn.
    const kill = b.callTool("kill_pane", { paneId: scratch });
    await waitFor(() => killed.began(), "the kill held by the hook");
    await t.tmux(...afterCreationRead("@b-read"));
    const second = b.callTool("create_window", { session: "main" });
    await waitFor(
      async () => (await t.tmux("show-options", "-gqv", "@b-read")).trim() === "1",
      "the other process to read window-size latest",
    );
    // The first creation ends, `manual` given back; then the other process's turn comes.
    await made.open();
    const rFirst = await first;
    assert.notEqual(rFirst.isError, true, JSON.stringify(rFirst.content));
    assert.equal(await windowSize(t), "manual");
    await killed.open();
    await kill;
    const r = await second;
    assert.ok(await answers(t), `the tmux server is alive (it said ${JSON.stringify(r.content)})`);
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    assert.equal(await windowSize(t), "manual");
    assert.equal(await mark(t), "");
  } finally {
    await made.remove();
    await killed.remove();
    await a.closeStdin();
    await b.closeStdin();
    await t.kill();
  }
});

Deno.test("a read that saw this process's own lent latest is judged as read, not as it is later", async () => {
  const t = await TestTmux.start();
  const gate = await HookGate.make();
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-lend-" });
  const s = await agent(t);
  try {
    await t.tmux("set-option", "-gw", "window-size", "manual");
    await t.tmux("set-hook", "-g", "after-new-window", gate.command);
    await ok(s, "list_panes");
    const first = s.callTool("create_window", { session: "main" });
    await waitFor(() => gate.began(), "the first creation held by the hook");
    // The second creation reads the options while `latest` is lent out; its answer comes only
    // once the first step has answered (`manual` given back, its tmux process gone): a hook on
    // that read opens the first creation's gate and waits for that.
    await Deno.writeTextFile(
      `${dir}/release.sh`,
      `${gate.opener}\n` +
        `i=0; while [ "$(tmux -L ${t.socket} show-options -gwv window-size)" != manual ] ||\n` +
        `  pgrep -f "${t.socket} .*window-size.{0,4}latest" >/dev/null; do\n` +
        `  i=$((i+1)); [ $i -gt 500 ] && exit 0; sleep 0.01; done\n`,
    );
    await t.tmux(
      "set-hook",
      "-g",
      "after-show-options",
      "if-shell -F '#{m:*destroy-unattached*,#{hook_arguments}}' " +
        `{ set-hook -gu after-show-options ; run-shell 'sh ${dir}/release.sh' }`,
    );
    const r = await s.callTool("create_window", { session: "main" });
    const rFirst = await first;
    assert.ok(await answers(t), `the tmux server is alive (it said ${JSON.stringify(r.content)})`);
    assert.notEqual(rFirst.isError, true, JSON.stringify(rFirst.content));
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    assert.equal(await windowSize(t), "manual");
    assert.equal(await mark(t), "");
  } finally {
    await gate.remove();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await s.closeStdin();
    await t.kill();
  }
});

/** A tmux process's command line that lends `latest` out (its arguments quoted or not). */
const LENDS = /window-size\W{0,4}latest/;

// A lend whose process and tmux process were both killed (a whole process group, say) is never
// given back by them: the `latest` it leaves is still told apart from the person's own, and the
// next creation, made the safe way, gives `manual` back.
Deno.test("the latest a killed process left lent out is given back by the next creation", async () => {
  const t = await TestTmux.start();
  const gate = await HookGate.make();
  const a = await agent(t);
  const b = await agent(t);
  try {
    await t.tmux("set-option", "-gw", "window-size", "manual");
    await t.tmux("set-hook", "-g", "after-new-window", gate.command);
    a.callTool("create_window", { session: "main" }).catch(() => {});
    await waitFor(() => gate.began(), "the creation held by the hook");
    await a.kill();
    const lending = async () => (await tmuxClientsOf(t.socket)).filter((l) => LENDS.test(l));
    const [step] = await lending();
    assert.ok(step, "the lending tmux process");
    Deno.kill(Number(step.split(" ")[0]), "SIGKILL");
    await waitFor(async () => (await lending()).length === 0, "the lending tmux process to end");
    await gate.open();
    assert.equal(await windowSize(t), "latest", "left lent out");
    await ok(b, "create_window", { session: "main" });
    assert.ok(await answers(t));
    assert.equal(await windowSize(t), "manual");
    assert.equal(await mark(t), "");
  } finally {
    await gate.remove();
    await b.closeStdin();
    await t.kill();
  }
});

// The undo as the process ends leaves a value the person chose meanwhile, and takes its mark
// away all the same: a mark left behind would make the person's own later `latest` read as lent.
Deno.test("a value the person chose while the lend was out stays, and the mark goes", async () => {
  const t = await TestTmux.start();
  const gate = await HookGate.make();
  const s = await agent(t);
  try {
    await t.tmux("set-option", "-gw", "window-size", "manual");
    await t.tmux("set-hook", "-g", "after-new-window", gate.command);
    s.callTool("create_window", { session: "main" }).catch(() => {});
    await waitFor(() => gate.began(), "the creation held by the hook");
    assert.notEqual(await mark(t), "", "the lend is marked in tmux");
    await t.tmux("set-option", "-gw", "window-size", "largest");
    await s.closeStdin();
    assert.equal(await windowSize(t), "largest");
    assert.equal(await mark(t), "");
  } finally {
    await gate.open();
    await s.kill();
    await t.kill();
    await gate.remove();
  }
});
