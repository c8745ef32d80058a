import assert from "node:assert/strict";
import { cleanEnv, TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { runHook } from "./main.ts";
import {
  AGENTS_CHANNEL,
  MESSAGE_OPTION,
  oneLine,
  PANE_OPTION,
  quoted,
  STATE_OPTION,
} from "./marks.ts";
import { summaryLine } from "../mcp/render.ts";
import { agentEnv, memoryIo, recorded } from "./testing.ts";

Deno.test("oneLine flattens control characters and cuts visibly", () => {
  assert.equal(oneLine("a\tb\nc\r\n d\u001b[31m", 100), "a b c d [31m");
  assert.equal(oneLine("  spaced  out  ", 100), "spaced out");
  assert.equal(oneLine("日本🙂語", 3), "日本…");
  assert.equal(oneLine("🙂🙂🙂", 3), "🙂🙂🙂");
  assert.equal(oneLine("#(touch x) ; '\" -", 100), "#(touch x) ; '\" -");
});

Deno.test("oneLine shows bidirectional controls as their escapes, never cut in two", () => {
  // U+202E shows the rest right to left: a window so named reads "vim(not watching)".
  assert.equal(oneLine("vim\u202e)gnihctaw ton", 100), "vim\\u202e)gnihctaw ton");
  assert.equal(
    oneLine("\u061ca\u200eb\u200fc\u202ad\u2066e\u2069", 100),
    "\\u061ca\\u200eb\\u200fc\\u202ad\\u2066e\\u2069",
  );
  // An escape counts at its length: the line stays within its bound, and is cut before it.
  assert.equal(oneLine("ab\u202ecd", 9), "ab\\u202e…");
  assert.equal(oneLine("ab\u202ecd", 8), "ab…");
  assert.equal(oneLine("ab\u202e", 8), "ab\\u202e");
});

Deno.test("oneLine leaves raw no character a tool reply's summary line escapes", () => {
  // One set for what a person reads, in a tool reply or in the hook's prompt and status line.
  for (let code = 0; code <= 0xffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const c = String.fromCharCode(code);
    if (summaryLine(c) === c) continue;
    assert.ok(!oneLine(`a${c}b`, 20).includes(c), `U+${code.toString(16)}`);
    assert.ok(!quoted(`a${c}b`, 20).includes(c), `U+${code.toString(16)}`);
  }
});

Deno.test("quoted is a JSON string that reads back as the line, direction controls escaped", () => {
  const name = 'vim"\\\u202e)x\u2066';
  const q = quoted(name, 60);
  assert.equal(q, '"vim\\"\\\\\\u202e)x\\u2066"');
  assert.equal(JSON.parse(q), name);
  assert.equal(quoted("a\nb", 60), '"a b"');
});

/** A person-like client whose terminal output is recorded, so a test can read its screen. */
async function attachLogged(
  t: TestTmux,
  target: string,
): Promise<{ tty: string; screen: () => string; close: () => Promise<void> }> {
  const log = await Deno.makeTempFile({ prefix: "tmux-mcp-hook-client-" });
  const before = new Set(await t.clientTtys());
  const child = new Deno.Command("script", {
    args: ["-qfc", `tmux -u -L ${t.socket} attach -t '${target}'`, log],
    env: cleanEnv({ TERM: "xterm" }),
    clearEnv: true,
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const close = async () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone with the server
    }
    await child.status;
    await child.stdin.close().catch(() => {});
    await Deno.remove(log).catch(() => {});
  };
  try {
    const tty = await waitFor(async () => {
      const now = await t.clientTtys();
      return now.find((tty) => !before.has(tty));
    }, "a logged client");
    return { tty, screen: () => Deno.readTextFileSync(log), close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function hook(
  command: string,
  input: Record<string, unknown>,
  env: Record<string, string>,
): Promise<void> {
  const { io, out } = memoryIo(JSON.stringify(input), env);
  const code = await runHook([command], io);
  assert.deepEqual({ code, ...out }, { code: 0, stdout: "", stderr: [] }, command);
}

const show = (t: TestTmux, pane: string, option: string) =>
  t.tmuxRaw("show-options", "-wv", "-t", pane, option);

Deno.test("two agents in one window: one working on never lowers the other's needs-input", async () => {
  const t = await TestTmux.start("main");
  try {
    const facts = await t.facts();
    const a = t.ids.paneId;
    const b = (await t.tmux("split-window", "-d", "-t", a, "-P", "-F", "#{pane_id}", "sh")).trim();
    const [envA, envB] = [agentEnv(facts, a), agentEnv(facts, b)];
    const state = async () => (await show(t, a, STATE_OPTION)).stdout;
    await hook("attention", recorded("PermissionRequest"), envA);
    assert.equal(await state(), "needs-input\n");
    assert.equal((await show(t, a, PANE_OPTION)).stdout, `${a}\n`);
    // B's routine marks leave A's call for the person up, message and all.
    for (
      const [command, event] of [["working", "PreToolUse"], ["done", "Stop"], ["clear", "Stop"]]
    ) {
      await hook(command, recorded(event), envB);
      assert.equal(await state(), "needs-input\n", `B's ${command}`);
      assert.equal((await show(t, a, MESSAGE_OPTION)).stdout, "asks permission to use Bash\n");
    }
    // A itself goes on (the person answered): its working lowers it, and B's marks count again.
    await hook("working", recorded("PostToolUse"), envA);
    assert.equal(await state(), "working\n");
    assert.equal((await show(t, a, PANE_OPTION)).stdout, "");
    await hook("done", recorded("Stop"), envB);
    assert.equal(await state(), "done\n");
    // The latest call for the person is the one that counts; its own agent's done lowers it.
    await hook("attention", recorded("Notification"), envA);
    await hook("attention", recorded("PermissionRequest"), envB);
    await hook("working", recorded("PreToolUse"), envA);
    assert.equal(await state(), "needs-input\n");
    await hook("done", recorded("Stop"), envB);
    assert.equal(await state(), "done\n");
    // A needs-input from before panes were recorded is anybody's, as it was.
    await t.tmux("set-option", "-w", "-t", a, STATE_OPTION, "needs-input");
    await hook("clear", recorded("Stop"), envB);
    assert.equal(await state(), "");
  } finally {
    await t.kill();
  }
});

Deno.test("every mark signals the agents' wait channel, so a watcher sees it at once", async () => {
  const t = await TestTmux.start();
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    for (const command of ["working", "attention", "done", "clear"]) {
      // A waiter already waiting is woken by the hook's signal; one started after it would
      // return at once too (tmux keeps an unheard signal), so this proves the signal either way.
      const waiter = new Deno.Command("tmux", {
        args: ["-L", t.socket, "wait-for", AGENTS_CHANNEL],
        env: cleanEnv(),
        clearEnv: true,
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      await hook(command, recorded("Notification"), env);
      // Not signalled: fail (after long enough for any machine) rather than hang.
      let heard = true;
      const unheard = setTimeout(() => {
        heard = false;
        waiter.kill();
      }, 10_000);
      const { code, stderr } = await waiter.output();
      clearTimeout(unheard);
      assert.ok(heard, `${command} did not signal ${AGENTS_CHANNEL}`);
      assert.equal(code, 0, new TextDecoder().decode(stderr));
    }
  } finally {
    await t.kill();
  }
});

Deno.test("attention stores any message exactly and never runs what is in it", async () => {
  const t = await TestTmux.start();
  const marker = `${await Deno.makeTempDir()}/ran`;
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const messages: [string, string][] = [
      [
        `#(touch ${marker}) #{pane_id} ##[fg=red] 100%`,
        `#(touch ${marker}) #{pane_id} ##[fg=red] 100%`,
      ],
      ["finish this;", "finish this;"],
      ["-t %0 looks like a flag", "-t %0 looks like a flag"],
      [`quotes ' " and \\ backslash, 日本🙂`, `quotes ' " and \\ backslash, 日本🙂`],
      ["tab\there\nnew line", "tab here new line"],
      ["x".repeat(600), `${"x".repeat(499)}…`],
    ];
    for (const [message, stored] of messages) {
      await hook("attention", recorded("Notification", { message }), env);
      assert.equal((await show(t, t.ids.paneId, MESSAGE_OPTION)).stdout, `${stored}\n`);
      assert.equal((await show(t, t.ids.paneId, STATE_OPTION)).stdout, "needs-input\n");
      // A format that shows the option prints it as stored: nothing expanded, nothing run.
      const shown = await t.tmux(
        "display-message",
        "-p",
        "-t",
        t.ids.paneId,
        `#{${MESSAGE_OPTION}}`,
      );
      assert.equal(shown, `${stored}\n`);
    }
    await hook("attention", recorded("PermissionRequest"), env);
    assert.equal(
      (await show(t, t.ids.paneId, MESSAGE_OPTION)).stdout,
      "asks permission to use Bash\n",
    );
    await hook("attention", recorded("Stop"), env);
    assert.equal((await show(t, t.ids.paneId, MESSAGE_OPTION)).stdout, "waiting for your input\n");
    await assert.rejects(Deno.stat(marker));
  } finally {
    await t.kill();
    await Deno.remove(marker.slice(0, -4), { recursive: true });
  }
});

Deno.test("attention tells every client not looking at the pane, escaped, and only them", async () => {
  const t = await TestTmux.start("main");
  const clients: Awaited<ReturnType<typeof attachLogged>>[] = [];
  try {
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const watcher = await attachLogged(t, "main");
    clients.push(watcher);
    const elsewhere = await attachLogged(t, "other");
    clients.push(elsewhere);
    const message = "#{pane_id} #(echo hi) ok;";
    await hook("attention", recorded("Notification", { message }), env);
    await waitFor(
      () =>
        /Agent in main:0\.0 "[^"]*" needs you: /.test(elsewhere.screen()) &&
        elsewhere.screen().includes(`needs you: ${message}`),
      "the message, verbatim, on the other client",
    );
    // One client's output keeps its order: once a later message arrived, an earlier one would have.
    await t.tmux("display-message", "-c", watcher.tty, "sync-mark-1");
    await waitFor(() => watcher.screen().includes("sync-mark-1"), "the sync message");
    assert.ok(!watcher.screen().includes("needs you"), "the watcher is not interrupted");
  } finally {
    for (const c of clients) await c.close();
    await t.kill();
  }
});

Deno.test("the status line names the window quoted and escaped, whatever its name holds", async () => {
  const t = await TestTmux.start("main");
  const clients: Awaited<ReturnType<typeof attachLogged>>[] = [];
  try {
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    // A name a model may give: a quote to end the sentence's, a backslash, a format (tmux
    // expands rename-window's argument, so `##` is stored as `#`, and doubles the backslash).
    await t.tmux("rename-window", "-t", t.ids.paneId, 'a"b\\ ##{pane_id} c');
    const stored = (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{window_name}"))
      .trimEnd();
    assert.ok(stored.includes('"') && stored.includes("#{pane_id}"), stored);
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const elsewhere = await attachLogged(t, "other");
    clients.push(elsewhere);
    await hook("attention", recorded("Notification", { message: "hi" }), env);
    await waitFor(
      () =>
        elsewhere.screen().includes(`Agent in main:0.0 ${JSON.stringify(stored)} needs you: hi`),
      "the window's name, quoted with its quote and backslash escaped",
    );
  } finally {
    for (const c of clients) await c.close();
    await t.kill();
  }
});

Deno.test("done flags an unwatched window to every client, and a watched one to nobody", async () => {
  const t = await TestTmux.start("main");
  const clients: Awaited<ReturnType<typeof attachLogged>>[] = [];
  try {
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const client = await attachLogged(t, "other");
    clients.push(client);
    await hook("attention", recorded("Notification"), env);
    await hook("done", recorded("Stop"), env);
    assert.equal((await show(t, t.ids.paneId, STATE_OPTION)).stdout, "done\n");
    assert.equal((await show(t, t.ids.paneId, MESSAGE_OPTION)).code, 1, "message unset");
    await waitFor(
      () => /Agent in main:0\.0 "[^"]*" is done\./.test(client.screen()),
      "the done message",
    );
    // Replace the message on the status line, so redraws no longer repeat it.
    await t.tmux("display-message", "-c", client.tty, "sync-mark-A");
    await waitFor(() => client.screen().includes("sync-mark-A"), "the first sync message");

    await t.attach("main"); // now a person looks at the agent's pane
    await hook("done", recorded("Stop"), env);
    assert.equal((await show(t, t.ids.paneId, STATE_OPTION)).stdout, "done\n");
    await t.tmux("display-message", "-c", client.tty, "sync-mark-B");
    await waitFor(() => client.screen().includes("sync-mark-B"), "the second sync message");
    const screen = client.screen();
    const b = screen.indexOf("sync-mark-B");
    const between = screen.slice(screen.lastIndexOf("sync-mark-A", b), b);
    assert.ok(!between.includes("is done."), "not told again while someone watches");
  } finally {
    for (const c of clients) await c.close();
    await t.kill();
  }
});
