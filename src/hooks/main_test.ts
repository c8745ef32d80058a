import assert from "node:assert/strict";
import { TestTmux } from "../../tests/helpers/tmux.ts";
import { HOOK_COMMANDS, hookHelpText, runHook } from "./main.ts";
import { MESSAGE_OPTION, PANE_OPTION, STATE_OPTION } from "./marks.ts";
import {
  agentEnv,
  memoryIo,
  RECORDED,
  recorded,
  restartServer,
  seedDecision,
  toolCall,
} from "./testing.ts";

async function run(
  args: string[],
  stdin: string | Uint8Array | null,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string[] }> {
  const { io, out } = memoryIo(stdin, env);
  const code = await runHook(args, io);
  return { code, ...out };
}

const PANE_COMMANDS = HOOK_COMMANDS.filter((c) => c !== "config");
const MARK_COMMANDS = PANE_COMMANDS.filter((c) => c !== "guard");
const QUIET = { code: 0, stdout: "", stderr: [] };

Deno.test("--help prints the hook help on stdout", async () => {
  for (const args of [["--help"], ["-h"], ["help"], ["guard", "--help"], ["config", "-h"]]) {
    assert.deepEqual(await run(args, null), { code: 0, stdout: hookHelpText(), stderr: [] });
  }
  for (const c of HOOK_COMMANDS) assert.ok(hookHelpText().includes(`  ${c} `), c);
});

Deno.test("usage errors: one reason and the usage; only guard's block (exit 2)", async () => {
  const cases: [string[], number, string][] = [
    [[], 1, "a hook command is missing"],
    [["bogus"], 1, 'unknown hook command "bogus"'],
    [["working", "--deny"], 1, 'working: unknown argument "--deny"'],
    [["guard", "--dny"], 2, 'guard: unknown argument "--dny".'],
    [["guard", "--deyn"], 2, 'guard: unknown argument "--deyn" (did you mean --deny?)'],
    // A misspelt guard blocks too: a guard that cannot run must not let every call through.
    [["gaurd"], 2, 'unknown hook command "gaurd" (did you mean guard?)'],
    [["config", "--command", "tmux-mcp --socket work"], 1, "has a flag after the program"],
    [["config", "--command", "deno run -A /x/main.ts --read-only"], 1, "flag after the program"],
    [["config", "--server_name", "x"], 1, '"--server_name" (did you mean --server-name?)'],
    [["working", "--deny"], 1, 'working: unknown argument "--deny".'],
    [["guard", "--deny=yes"], 2, "unknown argument"],
    // However malformed, a command line that asks for guard blocks.
    [["--dny", "guard"], 2, 'guard: unknown argument "--dny"'],
    [["--socket"], 1, "a hook command is missing"],
    [["--socket", "guard"], 2, "a hook command is missing"],
    [["--bogus", "x", "guard"], 2, 'unknown hook command "x"'],
    [["config", "--server-name"], 1, "--server-name needs a value"],
    [["config", "--server-name", "a.b"], 1, 'use letters, digits, "-" and "_"'],
    [["config", "--server-name=a b"], 1, "--server-name"],
    [["config", "--command", " "], 1, "--command is empty"],
    [["config", "--settings", "--tmux"], 1, "give one"],
    [["config", "--tmux=1"], 1, "takes no value"],
  ];
  for (const [args, code, fragment] of cases) {
    const r = await run(args, JSON.stringify(RECORDED.Stop));
    assert.equal(r.code, code, args.join(" "));
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.length, 1);
    assert.ok(r.stderr[0].startsWith("tmux-mcp hook: "), r.stderr[0]);
    assert.ok(r.stderr[0].includes(fragment), `${r.stderr[0]} ∌ ${fragment}`);
    assert.ok(r.stderr[0].includes("usage: tmux-mcp hook"));
  }
});

Deno.test("config prints without stdin or tmux, with its options", async () => {
  const r = await run(
    ["config", "--server-name=work", "--command", "/opt/tmux-mcp", "--settings"],
    null,
  );
  assert.equal(r.code, 0);
  assert.deepEqual(r.stderr, []);
  const block = JSON.parse(r.stdout);
  assert.equal(block.hooks.PreToolUse[1].matcher, "mcp__work__.*");
  assert.equal(block.hooks.Stop[0].hooks[0].command, "/opt/tmux-mcp hook done");
  const all = await run(["config"], null);
  assert.ok(
    all.stdout.includes('"matcher":"mcp__tmux__.*"') && all.stdout.includes("pane-focus-in"),
  );
});

Deno.test("outside tmux the marking commands do nothing, silently", async () => {
  // guard judges tmux's default server there, as the MCP server reaches it: tests/hooks_test.ts
  // runs it with a private one.
  for (const command of MARK_COMMANDS) {
    for (const input of Object.values(RECORDED)) {
      assert.deepEqual(await run([command], JSON.stringify(input)), QUIET, command);
      assert.deepEqual(await run([command], JSON.stringify(input), { TMUX_PANE: "" }), QUIET);
    }
    // Even on a call the guard would ask about.
    assert.deepEqual(await run([command], toolCall("mcp__tmux__kill_server", {})), QUIET);
  }
});

Deno.test("malformed input: exit 1 with one line, but guard fails closed with 2", async () => {
  const bad: (string | Uint8Array | null)[] = [
    "",
    "not json",
    "[1]",
    JSON.stringify(recorded("Notification", { message: undefined })),
    JSON.stringify(recorded("PreToolUse", { tool_input: "x" })),
    new Uint8Array([0xff]),
    null, // stdin is a terminal
  ];
  for (const command of PANE_COMMANDS) {
    for (const stdin of bad) {
      // The input is checked first, inside tmux or not.
      const envs: Record<string, string>[] = [{}, { TMUX: "/tmp/nowhere,1,0", TMUX_PANE: "%0" }];
      for (const env of envs) {
        const r = await run([command], stdin, env);
        assert.equal(r.code, command === "guard" ? 2 : 1, `${command} ${String(stdin)}`);
        assert.equal(r.stdout, "");
        assert.equal(r.stderr.length, 1);
        assert.ok(!r.stderr[0].includes("\n"));
        assert.ok(r.stderr[0].startsWith(`tmux-mcp hook ${command}: `), r.stderr[0]);
      }
    }
  }
  const named = await run(
    ["working"],
    JSON.stringify(recorded("SubagentStop", { agent_id: undefined })),
  );
  assert.ok(named.stderr[0].includes("SubagentStop input: missing agent_id"), named.stderr[0]);
});

Deno.test("stdin that never brings a whole input: the guard blocks once its time is up", async () => {
  for (const command of PANE_COMMANDS) {
    const { io, out } = memoryIo(null);
    // An agent that keeps stdin open with half an object on it: the read never ends.
    const code = await runHook([command], {
      ...io,
      readStdin: () => new Promise(() => {}),
      stdinDeadlineMs: 50,
    });
    assert.equal(code, command === "guard" ? 2 : 1, command);
    assert.equal(out.stdout, "");
    assert.match(out.stderr[0], /no whole hook input \(JSON\) within 0\.05 s/, out.stderr[0]);
  }
});

Deno.test("a TMUX_PANE the hook cannot place is an error, not a guess", async () => {
  const input = JSON.stringify(RECORDED.UserPromptSubmit);
  const guarded = toolCall("mcp__tmux__kill_pane", { paneId: "%1" });
  const cases: [Record<string, string>, string][] = [
    [{ TMUX_PANE: "%1", TMUX: "garbage" }, 'TMUX is "garbage"'],
    [{ TMUX_PANE: "1", TMUX: "/tmp/s,1,0" }, "not a pane id"],
  ];
  for (const [env, fragment] of cases) {
    for (const command of PANE_COMMANDS) {
      const r = await run([command], command === "guard" ? guarded : input, env);
      assert.equal(r.code, command === "guard" ? 2 : 1);
      assert.ok(r.stderr[0].includes(fragment), r.stderr[0]);
    }
    // The guard has no opinion on tools it does not guard: those never needed the pane.
    const read = toolCall("mcp__tmux__list_sessions", {});
    assert.deepEqual(await run(["guard"], read, env), QUIET);
  }
  // TMUX unset with TMUX_PANE left (tmux started inside tmux): outside tmux, as tmux takes it
  // (guard then judges tmux's default server: tests/hooks_test.ts).
  for (const command of MARK_COMMANDS) {
    assert.deepEqual(await run([command], input, { TMUX_PANE: "%1" }), QUIET, command);
  }
});

Deno.test("working, attention, done, clear mark the agent's window and only it", async () => {
  const t = await TestTmux.start("main");
  try {
    const otherPane = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const marks = () => t.tmux("show-options", "-w", "-t", t.ids.paneId);
    const step = async (command: string, input: Record<string, unknown>, expected: string) => {
      assert.deepEqual(await run([command], JSON.stringify(input), env), QUIET, command);
      assert.equal(await marks(), expected, `${command} ${input.hook_event_name}`);
    };
    const needs = (m: string) =>
      `${MESSAGE_OPTION} ${m}\n${PANE_OPTION} "${t.ids.paneId}"\n${STATE_OPTION} needs-input\n`;
    const state = (s: string) => `${STATE_OPTION} ${s}\n`;

    await step(
      "attention",
      RECORDED.Notification,
      needs('"Claude needs your permission to use Bash"'),
    );
    await step("working", RECORDED.UserPromptSubmit, state("working"));
    await step("attention", RECORDED.PermissionRequest, needs('"asks permission to use Bash"'));
    await step("working", RECORDED.PreToolUse, state("working"));
    // A subagent's end is not the agent's: the window stays working.
    await step("done", RECORDED.SubagentStop, state("working"));
    await step("done", RECORDED.Stop, state("done"));
    await step("clear", RECORDED.UserPromptSubmit, "");
    await step("clear", RECORDED.Stop, ""); // clearing twice is fine
    // Any command accepts any event's input.
    for (const input of Object.values(RECORDED)) {
      await step("working", input, state("working"));
      await step("done", input, state(input === RECORDED.SubagentStop ? "working" : "done"));
      await step("clear", input, "");
    }
    assert.equal(await t.tmux("show-options", "-w", "-t", otherPane), "", "other window untouched");
  } finally {
    await t.kill();
  }
});

Deno.test("a pane or server that is gone: exit 1, one line, nothing marked", async () => {
  const t = await TestTmux.start("main");
  try {
    const facts = await t.facts();
    const input = JSON.stringify(RECORDED.Notification);
    for (const command of ["attention", "done"]) {
      const gone = await run([command], input, agentEnv(facts, "%99"));
      assert.equal(gone.code, 1);
      assert.ok(gone.stderr[0].includes("%99, which no longer exists"), gone.stderr[0]);
      // TMUX names a server since restarted on the same socket: pane ids now mean other panes.
      const restarted = await run(
        [command],
        input,
        agentEnv({ ...facts, pid: facts.pid + 1 }, t.ids.paneId),
      );
      assert.equal(restarted.code, 1);
      assert.ok(restarted.stderr[0].includes("another tmux server"), restarted.stderr[0]);
    }
    const working = await run(["working"], input, agentEnv(facts, "%99"));
    assert.equal(working.code, 1);
    assert.ok(working.stderr[0].includes("names a pane this tmux server does not have"));
    assert.ok(working.stderr[0].includes("%99"), working.stderr[0]);
    assert.equal(await t.tmux("show-options", "-w", "-t", t.ids.paneId), "");

    await t.tmuxRaw("kill-server");
    for (const command of ["attention", "working", "done", "clear"]) {
      const r = await run([command], input, agentEnv(facts, t.ids.paneId));
      assert.equal(r.code, 1, command);
      assert.equal(r.stdout, "");
      assert.equal(r.stderr.length, 1);
    }
  } finally {
    await t.kill();
  }
});

Deno.test("TMUX naming a server since restarted on its socket: %0 again, nothing marked", async () => {
  const t = await TestTmux.start("main");
  try {
    const before = await t.facts();
    const stale = agentEnv(before, t.ids.paneId);
    // A new server on the same socket gives pane ids out again: %0 is somebody else's pane now.
    const again = await restartServer(t, "other");
    const now = await t.facts();
    assert.equal(again, t.ids.paneId);
    assert.equal(now.socketPath, before.socketPath);
    assert.notEqual(now.pid, before.pid);
    await t.tmux("set-option", "-w", "-t", again, STATE_OPTION, "done");
    const marks = () => t.tmux("show-options", "-w", "-t", again);
    for (const command of ["working", "clear", "attention", "done"]) {
      const r = await run([command], JSON.stringify(RECORDED.Notification), stale);
      assert.equal(r.code, 1, command);
      assert.equal(r.stdout, "");
      assert.equal(r.stderr.length, 1, command);
      assert.ok(r.stderr[0].startsWith(`tmux-mcp hook ${command}: `), r.stderr[0]);
      assert.ok(r.stderr[0].includes("another tmux server"), r.stderr[0]);
      assert.equal(await marks(), `${STATE_OPTION} done\n`, `${command} left the mark alone`);
    }
    for (const command of ["working", "clear"]) {
      const r = await run([command], JSON.stringify(RECORDED.Stop), stale);
      assert.ok(r.stderr[0].includes(`pid ${before.pid}`), r.stderr[0]);
      assert.ok(r.stderr[0].includes(`is pid ${now.pid}`), r.stderr[0]);
    }
    // The same commands with the live server's TMUX act as ever.
    const live = agentEnv(now, again);
    assert.deepEqual(await run(["working"], JSON.stringify(RECORDED.Stop), live), QUIET);
    assert.equal(await marks(), `${STATE_OPTION} working\n`);
    assert.deepEqual(await run(["clear"], JSON.stringify(RECORDED.Stop), live), QUIET);
    assert.equal(await marks(), "");
  } finally {
    await t.kill();
  }
});

Deno.test("config --command takes a program's line with flags before the program", async () => {
  for (
    const line of [
      "tmux-mcp",
      "/opt/bin/tmux-mcp-x86_64-unknown-linux-gnu",
      "deno run --no-prompt --allow-run=tmux,ssh --config /x/deno.json /x/main.ts",
      "'/path with/main.ts'",
    ]
  ) {
    const r = await run(["config", "--settings", "--command", line], "");
    assert.equal(r.code, 0, `${line}: ${r.stderr}`);
    assert.ok(r.stdout.includes(`${line} hook working`), r.stdout);
  }
});

Deno.test("guard denies, saying why, where the agent's permission mode shows no prompt for an ask", async () => {
  const t = await TestTmux.start("main");
  try {
    const tty = await t.attach("main");
    const modes = [
      ["default", "ask"],
      ["acceptEdits", "ask"],
      ["plan", "ask"],
      ["auto", "deny"],
      ["dontAsk", "deny"],
      ["bypassPermissions", "deny"],
      ["DontAsk", "deny"],
      ["a mode of tomorrow", "deny"],
    ];
    for (const [mode, decision] of modes) {
      const input = recorded("PreToolUse", {
        tool_name: "mcp__tmux__send_keys",
        tool_input: { paneId: t.ids.paneId, text: "ls", socket_name: t.socket },
        permission_mode: mode,
      });
      const { io, out } = memoryIo(JSON.stringify(input));
      assert.equal(await runHook(["guard"], io), 0, out.stderr.join("\n"));
      const d = seedDecision(out.stdout);
      assert.equal(d.permissionDecision, decision, mode);
      assert.ok(d.permissionDecisionReason.includes(tty), d.permissionDecisionReason);
      if (decision === "deny") {
        assert.match(d.permissionDecisionReason, new RegExp(`permission mode ${mode}`));
      }
    }
  } finally {
    await t.kill();
  }
});
