import assert from "node:assert/strict";
import { TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import {
  CLEARING_HOOKS,
  configText,
  FOCUS_HOOK_INDEX,
  PERSON_LOOKS,
  settingsBlock,
  STATUS_MARKS,
  TMUX_DEFAULT_WINDOW_STATUS,
} from "./config.ts";
import { runHook } from "./main.ts";
import { AGENTS_CHANNEL, MESSAGE_OPTION, PANE_OPTION, STATE_OPTION } from "./marks.ts";
import { agentEnv, memoryIo, recorded } from "./testing.ts";
import { sh } from "../../tests/helpers/tmux.ts";

Deno.test("settings block: each event runs its command; guard only for the server's tools", () => {
  const block = settingsBlock("tmux", "tmux-mcp");
  const commands = (event: string) =>
    block.hooks[event].map((e) => [e.matcher ?? null, e.hooks.map((h) => h.command)]);
  assert.deepEqual(Object.keys(block.hooks), [
    "Notification",
    "PermissionRequest",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
  ]);
  assert.deepEqual(commands("Notification"), [[null, ["tmux-mcp hook attention"]]]);
  assert.deepEqual(commands("PermissionRequest"), [[null, ["tmux-mcp hook attention"]]]);
  assert.deepEqual(commands("UserPromptSubmit"), [[null, ["tmux-mcp hook working"]]]);
  assert.deepEqual(commands("PreToolUse"), [
    [null, ["tmux-mcp hook working"]],
    ["mcp__tmux__.*", ["tmux-mcp hook guard"]],
  ]);
  assert.deepEqual(commands("PostToolUse"), [[null, ["tmux-mcp hook working"]]]);
  assert.deepEqual(commands("PostToolUseFailure"), [[null, ["tmux-mcp hook working"]]]);
  assert.deepEqual(commands("Stop"), [[null, ["tmux-mcp hook done"]]]);
  for (const entries of Object.values(block.hooks)) {
    for (const e of entries) assert.ok(e.hooks.every((h) => h.type === "command"));
  }

  const named = settingsBlock("my-tmux_2", "/opt/bin/tmux-mcp");
  const guard = named.hooks.PreToolUse[1];
  assert.equal(guard.matcher, "mcp__my-tmux_2__.*");
  assert.equal(guard.hooks[0].command, "/opt/bin/tmux-mcp hook guard");
  const matcher = new RegExp(`^(?:${guard.matcher})$`);
  assert.ok(matcher.test("mcp__my-tmux_2__send_keys"));
  assert.ok(!matcher.test("mcp__tmux__send_keys") && !matcher.test("Bash"));
});

Deno.test('the printed wiring lowers "needs you" once an approved tool runs, or fails', async () => {
  const t = await TestTmux.start("main");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const block = settingsBlock("tmux", "tmux-mcp");
    // What the agent runs for an event, as settings.json wires it (guard aside: no marks).
    const fire = async (input: Record<string, unknown>) => {
      const entries = block.hooks[input.hook_event_name as string] ?? [];
      for (const { hooks } of entries) {
        for (const { command } of hooks) {
          const sub = command.replace(/^tmux-mcp hook /, "");
          if (sub === "guard") continue;
          const { io, out } = memoryIo(JSON.stringify(input), env);
          assert.equal(await runHook([sub], io), 0, out.stderr.join());
        }
      }
    };
    const state = async () =>
      (await t.tmuxRaw("show-options", "-wqv", "-t", t.ids.paneId, STATE_OPTION)).stdout.trim();
    for (const after of ["PostToolUse", "PostToolUseFailure"]) {
      await fire(recorded("PreToolUse", { tool_name: "Bash", tool_input: { command: "make" } }));
      await fire(recorded("PermissionRequest"));
      assert.equal(await state(), "needs-input");
      // The person approved: the tool runs, then ends (or fails), and the agent works on.
      await fire(recorded(after));
      assert.equal(await state(), "working", after);
    }
  } finally {
    await t.kill();
  }
});

Deno.test("config text: --settings is pure JSON, --tmux a tmux file, default both", () => {
  const settings = configText("srv", "tmux-mcp", "settings");
  assert.deepEqual(JSON.parse(settings), settingsBlock("srv", "tmux-mcp"));
  const tmux = configText("srv", "tmux-mcp", "tmux");
  assert.ok(tmux.includes(`set-hook -g 'pane-focus-in[${FOCUS_HOOK_INDEX}]'`));
  assert.ok(!tmux.includes("{\n"), "no JSON in the tmux part");
  const all = configText("srv", "tmux-mcp", "all");
  assert.ok(all.includes(settings.trimEnd()) && all.includes(tmux.trimEnd()));
  assert.ok(all.includes('registered as "srv"'));
});

/** Runs `hook config` with `args` and `env`; returns every hook command it prints. */
async function configCommands(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ commands: string[]; text: string }> {
  const { io, out } = memoryIo(null, env);
  assert.equal(await runHook(["config", ...args], io), 0, out.stderr.join());
  const settings = memoryIo(null, env);
  assert.equal(await runHook(["config", ...args, "--settings"], settings.io), 0);
  const block = JSON.parse(settings.out.stdout) as ReturnType<typeof settingsBlock>;
  const commands = Object.values(block.hooks).flatMap((entries) =>
    entries.flatMap((e) => e.hooks.map((h) => h.command))
  );
  assert.equal(commands.length, 8);
  return { commands, text: out.stdout };
}

Deno.test("config --socket / --socket-path: every hook command carries it, as a shell reads it", async () => {
  const echo = "printf '%s\\n'"; // each word the shell passes, one per line
  const cases: [string[], string[]][] = [
    [["--socket", "work"], ["--socket", "work"]],
    [["--socket=we'ird $HOME `x` name"], ["--socket", "we'ird $HOME `x` name"]],
    [["--socket-path", "/tmp/a b/tmux,1"], ["--socket-path", "/tmp/a b/tmux,1"]],
  ];
  for (const [args, words] of cases) {
    const { commands, text } = await configCommands([...args, "--command", echo]);
    for (const command of commands) {
      const run = await sh("sh", ["-c", command]);
      const got = run.stdout.split("\n").slice(0, -1);
      assert.deepEqual(got.slice(0, 1), ["hook"], command);
      assert.deepEqual(got.slice(2), words, command);
    }
    assert.ok(text.includes(`start the MCP server with the same\n#    ${words[0]} (`), text);
  }
  // Without a server named, the commands are as before.
  const plain = await configCommands([]);
  assert.ok(plain.commands.every((c) => /^tmux-mcp hook [a-z]+$/.test(c)), plain.commands.join());
  assert.ok(!plain.text.includes("guard judges"));
});

Deno.test("config takes TMUX_MCP_SOCKET* as the MCP server does, and a flag wins", async () => {
  const byEnv = await configCommands([], { TMUX_MCP_SOCKET: "from-env" });
  assert.ok(byEnv.commands.every((c) => c.endsWith(" --socket from-env")), byEnv.commands.join());
  assert.ok(byEnv.text.includes(`guard judges calls on socket "from-env": start`));
  const byPath = await configCommands([], { TMUX_MCP_SOCKET_PATH: "/tmp/p" });
  assert.ok(byPath.commands.every((c) => c.endsWith(" --socket-path /tmp/p")));
  const flag = await configCommands(["--socket", "flag"], { TMUX_MCP_SOCKET_PATH: "/tmp/p" });
  assert.ok(flag.commands.every((c) => c.endsWith(" --socket flag")), flag.commands.join());
  for (
    const [args, env] of [
      [["--socket", "a", "--socket-path", "/tmp/b"], {}],
      [[], { TMUX_MCP_SOCKET: "a", TMUX_MCP_SOCKET_PATH: "/tmp/b" }],
      [["--socket", "a/b"], {}],
    ] as [string[], Record<string, string>][]
  ) {
    const { io, out } = memoryIo(null, env);
    assert.equal(await runHook(["config", ...args], io), 1, args.join(" "));
    assert.equal(out.stdout, "");
    assert.equal(out.stderr.length, 1);
  }
});

Deno.test("tmux's default window-status-format is what config starts from", async () => {
  const t = await TestTmux.start();
  try {
    assert.equal(
      await t.tmux("show-options", "-gv", "window-status-format"),
      `${TMUX_DEFAULT_WINDOW_STATUS}\n`,
    );
    assert.equal(
      await t.tmux("show-options", "-gv", "window-status-current-format"),
      `${TMUX_DEFAULT_WINDOW_STATUS}\n`,
    );
  } finally {
    await t.kill();
  }
});

/** Loads config's tmux lines into the server, as `tmux source-file ~/.tmux.conf` would. */
async function loadTmuxLines(t: TestTmux): Promise<void> {
  const file = await Deno.makeTempFile({ prefix: "tmux-mcp-hook-conf-", suffix: ".conf" });
  try {
    await Deno.writeTextFile(file, configText("tmux", "tmux-mcp", "tmux"));
    await t.tmux("source-file", file);
  } finally {
    await Deno.remove(file);
  }
}

Deno.test("config's tmux lines load cleanly, and loading twice changes nothing", async () => {
  const t = await TestTmux.start();
  try {
    await loadTmuxLines(t);
    const hooks = () => Promise.all(CLEARING_HOOKS.map((hook) => t.tmux("show-hooks", "-g", hook)));
    const first = await hooks();
    const format = await t.tmux("show-options", "-gv", "window-status-format");
    await loadTmuxLines(t);
    assert.deepEqual(await hooks(), first);
    assert.equal(await t.tmux("show-options", "-gv", "window-status-format"), format);
    assert.deepEqual(
      first,
      CLEARING_HOOKS.map((hook) =>
        `${hook}[${FOCUS_HOOK_INDEX}] if-shell -F "${PERSON_LOOKS}" "set-option -wu ${STATE_OPTION} ; set-option -wu ${MESSAGE_OPTION} ; set-option -wu ${PANE_OPTION} ; wait-for -S ${AGENTS_CHANNEL}"\n`
      ),
    );
    assert.equal(format, `${TMUX_DEFAULT_WINDOW_STATUS}${STATUS_MARKS}\n`);
    assert.equal(await t.tmux("show-options", "-gv", "focus-events"), "on\n");
  } finally {
    await t.kill();
  }
});

Deno.test("the status format shows each state as a fixed word, and nothing it was fed", async () => {
  const t = await TestTmux.start("main");
  const dir = await Deno.makeTempDir();
  try {
    await loadTmuxLines(t);
    // A fixed name: automatic-rename would flip it between "sh" and its shell's name.
    await t.tmux("rename-window", "-t", t.ids.windowId, "agent");
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const status = async (option: string) =>
      await t.tmux("display-message", "-p", "-t", t.ids.paneId, `#{E:${option}}`);
    const plain = await t.tmux(
      "display-message",
      "-p",
      "-t",
      t.ids.paneId,
      TMUX_DEFAULT_WINDOW_STATUS,
    );
    assert.equal(await status("window-status-format"), plain, "no mark without a state");

    const expect: [string, Record<string, unknown>, string][] = [
      ["attention", recorded("Notification"), "#[reverse] needs you #[noreverse]"],
      ["working", recorded("UserPromptSubmit"), " working"],
      ["done", recorded("Stop"), " done"],
    ];
    for (const [command, input, mark] of expect) {
      const { io, out } = memoryIo(JSON.stringify(input), env);
      assert.equal(await runHook([command], io), 0, out.stderr.join());
      for (const option of ["window-status-format", "window-status-current-format"]) {
        assert.equal(await status(option), `${plain.trimEnd()}${mark}\n`, `${command} ${option}`);
      }
    }

    // Whatever lands in the options (set by hand, by a tool), the status shows none of it.
    const hostile = `#(touch ${dir}/ran)#[fg=red]#{pane_id}`;
    await t.tmux("set-option", "-w", "-t", t.ids.paneId, STATE_OPTION, hostile);
    await t.tmux("set-option", "-w", "-t", t.ids.paneId, MESSAGE_OPTION, hostile);
    assert.equal(
      await t.tmux("show-options", "-wv", "-t", t.ids.paneId, STATE_OPTION),
      `${hostile}\n`,
    );
    assert.equal(await status("window-status-format"), plain);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(dir)), []);
  } finally {
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("looking at the agent's window clears its marks (pane-focus-in), no other window's", async () => {
  const t = await TestTmux.start("main");
  try {
    await loadTmuxLines(t);
    const newWindow = async () =>
      (await t.tmux("new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}", "sh")).trim().split(
        " ",
      );
    const [agentWindow, agentPane] = await newWindow();
    const [otherWindow, otherPane] = await newWindow();
    const facts = await t.facts();
    const mark = async (pane: string, command: string, input: Record<string, unknown>) => {
      const { io, out } = memoryIo(JSON.stringify(input), agentEnv(facts, pane));
      assert.equal(await runHook([command], io), 0, out.stderr.join());
    };
    const marks = (pane: string) => t.tmux("show-options", "-w", "-t", pane);
    await t.attach("main"); // a person, looking at window 0
    await mark(agentPane, "attention", recorded("Notification", { message: "approve?" }));
    await mark(otherPane, "working", recorded("PreToolUse"));
    assert.equal(
      await marks(agentPane),
      `${MESSAGE_OPTION} approve?\n${PANE_OPTION} "${agentPane}"\n${STATE_OPTION} needs-input\n`,
    );

    await t.tmux("select-window", "-t", agentWindow);
    await waitFor(async () => (await marks(agentPane)) === "", "the marks to be cleared on focus");
    assert.equal(await marks(otherPane), `${STATE_OPTION} working\n`);

    // Also when the person moves to the agent's pane inside its window.
    await t.tmux("split-window", "-d", "-t", otherPane, "sh");
    await t.tmux("select-window", "-t", otherWindow);
    await waitFor(async () => (await marks(otherPane)) === "", "the other window's marks to go");
    await mark(otherPane, "done", recorded("Stop"));
    assert.equal(await marks(otherPane), `${STATE_OPTION} done\n`);
    await t.tmux("select-pane", "-t", `${otherWindow}.1`);
    await t.tmux("select-pane", "-t", otherPane);
    await waitFor(async () => (await marks(otherPane)) === "", "the marks to go on pane focus");
  } finally {
    await t.kill();
  }
});

Deno.test("a control-mode client attaching (an MCP server's own) clears no mark; a person arriving does", async () => {
  const t = await TestTmux.start("agent");
  try {
    await loadTmuxLines(t);
    await t.tmux("new-session", "-d", "-s", "work", "sh");
    const person = await t.attach("work"); // the person looks elsewhere
    const facts = await t.facts();
    const attention = async () => {
      const input = JSON.stringify(recorded("Notification", { message: "approve?" }));
      const { io, out } = memoryIo(input, agentEnv(facts, t.ids.paneId));
      assert.equal(await runHook(["attention"], io), 0, out.stderr.join());
    };
    await attention();
    const marks = () => t.tmux("show-options", "-w", "-t", t.ids.paneId);
    const marked =
      `${MESSAGE_OPTION} approve?\n${PANE_OPTION} "${t.ids.paneId}"\n${STATE_OPTION} needs-input\n`;
    assert.equal(await marks(), marked);
    // Runs right after the line under test, in the same list of the hook's commands.
    await t.tmux("set-hook", "-g", `pane-focus-in[${FOCUS_HOOK_INDEX + 1}]`, "set -g @seen 1");
    // What tmux-mcp does to run a command there: a control client attaches to the session,
    // and stays.
    t.controlClient("agent");
    await waitFor(
      async () => (await t.tmux("show-options", "-gqv", "@seen")) === "1\n",
      "pane-focus-in to fire for the control client",
    );
    assert.equal(await marks(), marked);
    // The pane keeps tmux's focus while that client stays: a person switching there fires no
    // second pane-focus-in, and still clears the marks.
    await t.tmux("switch-client", "-c", person, "-t", "agent");
    await waitFor(async () => (await marks()) === "", "the marks to be cleared on switching");
    // So does a person attaching there.
    await t.tmux("switch-client", "-c", person, "-t", "work");
    await attention();
    assert.equal(await marks(), marked);
    await t.attach("agent");
    await waitFor(async () => (await marks()) === "", "the marks to be cleared on attaching");
  } finally {
    await t.kill();
  }
});
