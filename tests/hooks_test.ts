/**
 * `tmux-mcp hook` as an agent runs it: a separate `deno run` process started with exactly the
 * `start` task's flags (the permissions the shipped binary has), fed hook JSON on stdin.
 */

import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { MAX_INPUT_BYTES } from "../src/hooks/input.ts";
import { MESSAGE_OPTION, STATE_OPTION } from "../src/hooks/marks.ts";
import { agentEnv, RECORDED, recorded, seedDecision, toolCall } from "../src/hooks/testing.ts";
import { connect } from "./helpers/mcp.ts";
import { callOver, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, statusWithin, TestTmux, waitFor } from "./helpers/tmux.ts";

const root = new URL("../", import.meta.url).pathname;

/** The `start` task's arguments after `deno`: `run --no-prompt --allow-run=tmux,ssh ... main.ts`. */
function startArgs(): string[] {
  const words = denoJson.tasks.start.split(" ");
  assert.equal(words[0], "deno");
  assert.equal(words.at(-1), "main.ts");
  assert.ok(words.includes("--allow-run=tmux,ssh") && words.includes("--allow-env=TMUX*"));
  return [...words.slice(1, -1), `${root}main.ts`];
}

/** A hook process with every stream piped, its stdin written (and closed) by the test. */
function hookChild(command: string): Deno.ChildProcess {
  const [run, ...flags] = startArgs();
  return new Deno.Command(Deno.execPath(), {
    args: [run, ...flags, "hook", command],
    env: cleanEnv(),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function hookProcess(
  args: string[],
  stdin: string,
  env: Record<string, string> = {},
  extraFlags: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [run, ...flags] = startArgs();
  return await sh(Deno.execPath(), [run, ...extraFlags, ...flags, "hook", ...args], {
    env: cleanEnv(env),
    stdin,
    allowFail: true,
  });
}

Deno.test("the hook's module graph holds src/hooks, src/tmux, diagnostics and the tools' facts only", async () => {
  const info = await sh(Deno.execPath(), ["info", "--json", `${root}src/hooks/main.ts`]);
  const modules: string[] = JSON.parse(info.stdout).modules.map((m: { specifier: string }) =>
    m.specifier
  );
  const local = modules.map((m) => m.replace(`file://${root}`, ""));
  assert.ok(local.includes("src/hooks/main.ts") && local.includes("src/tmux/run.ts"));
  for (const m of local) {
    // front_desk.json: each tool's toolset (data, no code), which guard reads; near_miss.ts:
    // the name a mistyped hook command meant (pure, no imports).
    assert.ok(
      /^src\/(hooks|tmux)\/[a-z_]+\.ts$|^src\/(diagnostics|near_miss)\.ts$|^src\/mcp\/front_desk\.json$/
        .test(m),
      m,
    );
    assert.ok(!m.endsWith("_test.ts") && m !== "src/hooks/testing.ts", m);
  }
});

Deno.test("through main.ts the hook never loads an npm package (the serve path does)", async () => {
  const t = await TestTmux.start();
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    // --no-npm makes loading any npm module (the MCP SDK, zod) fail at run time.
    const hook = await hookProcess(["working"], JSON.stringify(RECORDED.UserPromptSubmit), env, [
      "--no-npm",
    ]);
    assert.deepEqual(hook, { code: 0, stdout: "", stderr: "" });
    assert.equal(
      await t.tmux("show-options", "-wv", "-t", t.ids.paneId, STATE_OPTION),
      "working\n",
    );
    const [run, ...flags] = startArgs();
    const serve = await sh(Deno.execPath(), [run, "--no-npm", ...flags], {
      env: cleanEnv(),
      stdin: "",
      allowFail: true,
    });
    assert.notEqual(serve.code, 0);
    assert.ok(serve.stderr.includes("npm specifiers were requested"), serve.stderr);
  } finally {
    await t.kill();
  }
});

Deno.test("spawned with the start task's flags: marks, decisions, exit codes", async () => {
  const t = await TestTmux.start("main");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const option = (name: string) => t.tmuxRaw("show-options", "-wv", "-t", t.ids.paneId, name);

    const attention = await hookProcess(["attention"], JSON.stringify(RECORDED.Notification), env);
    assert.deepEqual(attention, { code: 0, stdout: "", stderr: "" });
    assert.equal((await option(STATE_OPTION)).stdout, "needs-input\n");
    assert.equal(
      (await option(MESSAGE_OPTION)).stdout,
      `${RECORDED.Notification.message}\n`,
    );
    const done = await hookProcess(["done"], JSON.stringify(RECORDED.Stop), env);
    assert.deepEqual(done, { code: 0, stdout: "", stderr: "" });
    assert.equal((await option(STATE_OPTION)).stdout, "done\n");
    const clear = await hookProcess(["clear"], JSON.stringify(RECORDED.Stop), env);
    assert.deepEqual(clear, { code: 0, stdout: "", stderr: "" });
    assert.equal((await option(STATE_OPTION)).code, 1);

    const window2 = (await t.tmux("new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}", "sh"))
      .trim().split(" ");
    const unwatched = await hookProcess(
      ["guard"],
      toolCall("mcp__tmux__send_keys", { paneId: window2[1], text: "ls" }),
      env,
    );
    assert.deepEqual(unwatched, { code: 0, stdout: "", stderr: "" });
    const tty = await t.attach(window2[0]);
    const watched = await hookProcess(
      ["guard", "--deny"],
      toolCall("mcp__tmux__send_keys", { paneId: window2[1], text: "ls" }),
      env,
    );
    assert.equal(watched.code, 0, watched.stderr);
    assert.equal(watched.stderr, "");
    const decision = seedDecision(watched.stdout);
    assert.equal(decision.permissionDecision, "deny");
    assert.ok(decision.permissionDecisionReason.includes(tty), decision.permissionDecisionReason);

    const malformed = await hookProcess(["guard"], "{", env);
    assert.equal(malformed.code, 2);
    assert.equal(malformed.stdout, "");
    assert.match(malformed.stderr, /^tmux-mcp hook guard: hook input is not JSON: .*\n$/);
    const missing = await hookProcess(
      ["working"],
      JSON.stringify(recorded("UserPromptSubmit", { prompt: undefined })),
      env,
    );
    assert.equal(missing.code, 1);
    assert.equal(
      missing.stderr,
      "tmux-mcp hook working: UserPromptSubmit input: missing prompt.\n",
    );
  } finally {
    await t.kill();
  }
});

Deno.test("spawned where no tmux server runs, or TMUX names one gone: silent, guard too; --help and config need nothing", async () => {
  // tmux's default server is `default` in $TMUX_TMPDIR/tmux-UID: a private folder has none.
  const tmpdir = await Deno.makeTempDir({ prefix: "tmux-mcp-hooks-" });
  try {
    const uid = (await sh("id", ["-u"])).stdout.trim();
    const envs: Record<string, string>[] = [
      { TMUX_TMPDIR: tmpdir }, // a terminal outside tmux
      { TMUX_TMPDIR: tmpdir, TMUX_PANE: "%3" }, // TMUX unset to start tmux inside tmux
      { TMUX_TMPDIR: tmpdir, TMUX: `${tmpdir}/gone,4242,0` }, // a popup whose server exited
    ];
    for (const env of envs) {
      for (const command of ["attention", "working", "done", "clear", "guard"]) {
        // No server: the MCP server's call fails as well, and no pane is there to protect.
        const r = await hookProcess([command], toolCall("mcp__tmux__kill_server", {}), env);
        assert.deepEqual(r, { code: 0, stdout: "", stderr: "" }, `${command} ${env.TMUX ?? ""}`);
      }
    }
    // Asking started no server.
    const probe = await sh("tmux", ["-S", `${tmpdir}/tmux-${uid}/default`, "ls"], {
      allowFail: true,
    });
    assert.match(probe.stderr, /^(no server running|error connecting)/, probe.stderr);
  } finally {
    await Deno.remove(tmpdir, { recursive: true });
  }
  const help = await hookProcess(["--help"], "");
  assert.equal(help.code, 0);
  assert.ok(help.stdout.startsWith("tmux-mcp hook — "));
  const config = await hookProcess(["config", "--settings", "--server-name", "tmux2"], "");
  assert.equal(config.code, 0);
  assert.equal(JSON.parse(config.stdout).hooks.PreToolUse[1].matcher, "mcp__tmux2__.*");
});

/** The TMUX* variables of a program started in a `display-popup` shown on `client`. */
async function popupEnv(t: TestTmux, client: string): Promise<Record<string, string>> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-popup-" });
  try {
    const file = `${dir}/env`;
    await t.tmux(
      "display-popup",
      "-c",
      client,
      "-E",
      `env | grep '^TMUX' > ${file}.part; mv ${file}.part ${file}`,
    );
    const text = await waitFor(
      () => Deno.readTextFile(file).catch(() => undefined),
      "the popup's environment",
    );
    return Object.fromEntries(
      text.split("\n").filter((line) => line !== "").map((line) => {
        const at = line.indexOf("=");
        return [line.slice(0, at), line.slice(at + 1)];
      }),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Whether the MCP server, started with no server flag in `env`, sees `paneId` as watched. */
async function serverSeesWatched(env: Record<string, string>, paneId: string): Promise<boolean> {
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, [...args, "--toolsets", "inspect"], cleanEnv(env));
  try {
    await server.initialize();
    const listed = await callOver(server, "list_panes", {});
    assert.equal(listed.isError, false, listed.text);
    const panes = listed.data.panes as { id: string; isAttended: boolean }[];
    return panes.some((p) => p.id === paneId && p.isAttended);
  } finally {
    await server.closeStdin();
  }
}

Deno.test("spawned in a tmux popup (TMUX, no TMUX_PANE): guard judges TMUX's server, which the MCP server started there reaches", async () => {
  const t = await TestTmux.start("person");
  try {
    const [window, watched] =
      (await t.tmux("new-window", "-d", "-n", "vim", "-P", "-F", "#{window_id} #{pane_id}", "sh"))
        .trim().split(" ");
    const tty = await t.attach(window);
    // `display-popup -E claude` over the pane a person works in: the agent, its hooks and its
    // MCP server get the popup's environment.
    const env = await popupEnv(t, tty);
    assert.ok(env.TMUX?.startsWith(`${(await t.facts()).socketPath},`), JSON.stringify(env));
    assert.equal(env.TMUX_PANE, undefined, "tmux gives a popup TMUX but no TMUX_PANE");
    assert.ok(await serverSeesWatched(env, watched), "the MCP server reaches the person's server");
    // The hook, wired as config prints it (no --socket), in the same environment.
    for (
      const [tool, args] of [
        ["send_keys", { paneId: watched, text: "rm -rf build", enter: true }],
        ["kill_pane", { paneId: watched, force: true }],
        ["kill_server", {}],
      ] as const
    ) {
      const r = await hookProcess(["guard"], toolCall(`mcp__tmux__${tool}`, args), env);
      assert.equal(r.code, 0, r.stderr);
      const reason = seedDecision(r.stdout).permissionDecisionReason;
      assert.ok(reason.includes(`pane ${watched} (`) && reason.includes(tty), reason);
      assert.ok(!reason.includes("own pane"), reason);
    }
  } finally {
    await t.kill();
  }
});

Deno.test("spawned outside tmux, wired as config prints it: guard judges tmux's default server, which the MCP server reaches", async () => {
  const t = await TestTmux.start("person");
  // tmux's default server for this environment: `default` in a private TMUX_TMPDIR's tmux-UID
  // folder, here the test server's socket (nobody's own default server is used).
  const tmpdir = await Deno.makeTempDir({ prefix: "tmux-mcp-hooks-" });
  try {
    const uid = (await sh("id", ["-u"])).stdout.trim();
    await Deno.mkdir(`${tmpdir}/tmux-${uid}`, { mode: 0o700 });
    await Deno.symlink((await t.facts()).socketPath, `${tmpdir}/tmux-${uid}/default`);
    const [window, watched] =
      (await t.tmux("new-window", "-d", "-n", "vim", "-P", "-F", "#{window_id} #{pane_id}", "sh"))
        .trim().split(" ");
    const tty = await t.attach(window);
    const outside = { TMUX_TMPDIR: tmpdir };
    assert.ok(await serverSeesWatched(outside, watched), "the MCP server reaches the default");
    const config = await hookProcess(["config", "--settings"], "", outside);
    const guardCommand: string = JSON.parse(config.stdout).hooks.PreToolUse[1].hooks[0].command;
    assert.equal(guardCommand, "tmux-mcp hook guard");
    const call = toolCall("mcp__tmux__kill_pane", { paneId: watched, force: true });
    // Also with TMUX unset and TMUX_PANE left (tmux started inside tmux): tmux, and so the MCP
    // server, takes that for outside.
    for (const env of [outside, { ...outside, TMUX_PANE: t.ids.paneId }]) {
      const r = await hookProcess(["guard"], call, env);
      assert.equal(r.code, 0, r.stderr);
      const reason = seedDecision(r.stdout).permissionDecisionReason;
      assert.equal(
        reason,
        `kill_pane would kill pane ${watched} (person:1.0 "vim"), which a person is watching ` +
          `(client ${tty}).`,
      );
    }
  } finally {
    await t.kill();
    await Deno.remove(tmpdir, { recursive: true });
  }
});

Deno.test("spawned: guard asks before split_window selects a new pane in a person's window, which a server with --allow-attended-input does", async () => {
  const t = await TestTmux.start("person");
  // With --allow-attended-input the server leaves asking the person to this hook.
  const c = await connect({ socketName: t.socket, allowAttendedInput: true });
  try {
    const [window, watched] =
      (await t.tmux("new-window", "-d", "-n", "vim", "-P", "-F", "#{window_id} #{pane_id}", "sh"))
        .trim().split(" ");
    const tty = await t.attach(window);
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const args = { paneId: watched, command: "cat > /dev/null", select: true };
    const r = await hookProcess(["guard"], toolCall("mcp__tmux__split_window", args), env);
    assert.equal(r.code, 0, r.stderr);
    const reason = seedDecision(r.stdout).permissionDecisionReason;
    assert.ok(reason.startsWith(`split_window would split pane ${watched}`), reason);
    assert.ok(reason.includes(`client ${tty}`), reason);
    // What it asks about: the agent's program takes the person's keys.
    const made = await c.ok<{ paneId: string }>("split_window", args);
    const active = (await t.tmux("display-message", "-p", "-t", window, "#{pane_id}")).trim();
    assert.equal(active, made.paneId, "what the person types next goes to the agent's pane");
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("stdin is read whole across many pipe chunks, and refused past its limit", async () => {
  const t = await TestTmux.start();
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    // A 1 MiB prompt arrives in many 64 KiB pipe reads; every byte must be read before parsing.
    const big = JSON.stringify(recorded("UserPromptSubmit", { prompt: "é".repeat(512 * 1024) }));
    const ok = await hookProcess(["working"], big, env);
    assert.deepEqual(ok, { code: 0, stdout: "", stderr: "" });
    assert.equal(
      await t.tmux("show-options", "-wv", "-t", t.ids.paneId, STATE_OPTION),
      "working\n",
    );
  } finally {
    await t.kill();
  }
  // Past MAX_INPUT_BYTES the hook says so, having read all of it: the writer never meets a
  // closed pipe.
  const child = hookChild("working");
  const writer = child.stdin.getWriter();
  const chunk = new Uint8Array(1024 * 1024).fill(0x20);
  for (let i = 0; i < (MAX_INPUT_BYTES >> 20) + 2; i++) await writer.write(chunk);
  await writer.close();
  const out = await child.output();
  assert.equal(out.code, 1);
  assert.equal(new TextDecoder().decode(out.stdout), "");
  assert.match(new TextDecoder().decode(out.stderr), /^tmux-mcp hook working: .*larger than/);
});

Deno.test("a hook answers once its input is whole, though the agent keeps stdin open", async () => {
  for (
    const [command, stdin, code] of [
      ["guard", toolCall("mcp__tmux__list_sessions", {}), 0],
      ["working", JSON.stringify(recorded("UserPromptSubmit", { prompt: 'a "} quoted \\" ]' })), 0],
    ] as const
  ) {
    const child = hookChild(command);
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    // Not closed until the hook has exited on its own; a bound, so that a hook that waits for
    // the end of its input fails the test instead of hanging it.
    const status = await statusWithin(child, 20_000);
    if (status === "still running") {
      child.kill("SIGKILL");
      await child.status;
    }
    await writer.close().catch(() => {});
    await child.stdout.cancel();
    await child.stderr.cancel();
    assert.ok(
      status !== "still running",
      `${command}: still running 20 s after its input was whole`,
    );
    assert.equal(status.code, code, command);
  }
});

Deno.test("spawned: guard judges the server config's --socket names, and TMUX_MCP_SOCKET's", async () => {
  const a = await TestTmux.start("agent");
  const b = await TestTmux.start("bee");
  try {
    const env = agentEnv(await a.facts(), a.ids.paneId);
    const [bWindow, bPane] =
      (await b.tmux("new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}", "sh"))
        .trim().split(" ");
    const tty = await b.attach(bWindow);
    const call = toolCall("mcp__tmux__send_keys", { paneId: bPane, text: "ls" });
    // The wiring as config prints it for an MCP server started with --socket B.
    const config = await hookProcess(["config", "--settings", "--socket", b.socket], "");
    assert.equal(config.code, 0, config.stderr);
    const guardCommand: string = JSON.parse(config.stdout).hooks.PreToolUse[1].hooks[0].command;
    assert.equal(guardCommand, `tmux-mcp hook guard --socket ${b.socket}`);
    const asked = (r: { code: number; stdout: string; stderr: string }) => {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, "");
      const reason = seedDecision(r.stdout).permissionDecisionReason;
      assert.ok(reason.includes(`pane ${bPane}`) && reason.includes(tty), reason);
    };
    asked(await hookProcess(guardCommand.split(" ").slice(2), call, env));
    asked(await hookProcess(["guard"], call, { ...env, TMUX_MCP_SOCKET: b.socket }));
    // Told nothing, it judges the agent's server, where that pane id is nobody's to watch.
    assert.deepEqual(await hookProcess(["guard"], call, env), { code: 0, stdout: "", stderr: "" });
  } finally {
    await b.kill();
    await a.kill();
  }
});

Deno.test("spawned: guard asks about a batch whose kill unzooms a person's window before it types into a pane there", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    // The person's session: one window, three panes, the first zoomed (the others hidden).
    const shown = (await t.tmux("new-session", "-d", "-s", "person", "-P", "-F", "#{pane_id}"))
      .trim();
    const split = async () =>
      (await t.tmux("split-window", "-d", "-t", shown, "-P", "-F", "#{pane_id}", "sh")).trim();
    const hidden1 = await split();
    const hidden2 = await split();
    await t.tmux("resize-pane", "-Z", "-t", shown);
    const tty = await t.attach("person");
    const operations = [
      { tool: "kill_pane", arguments: { paneId: hidden1, force: true } },
      {
        tool: "send_keys",
        arguments: { paneId: hidden2, text: "echo typed-by-agent", force: true },
      },
    ];
    const decision = await hookProcess(
      ["guard"],
      toolCall("mcp__tmux__call_tools_batch", { operations }),
      env,
    );
    assert.equal(decision.code, 0, decision.stderr);
    assert.equal(seedDecision(decision.stdout).permissionDecision, "ask", decision.stdout);

    // Why: where the person let the server type where they watch (--allow-attended-input, so
    // the hook is the only one asking), the first operation unzooms their window and the second
    // types into a pane now on their screen.
    const c = await connect({ socketName: t.socket, allowAttendedInput: true });
    try {
      await c.ok("call_tools_batch", { operations });
    } finally {
      await c.close();
    }
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", shown, "#{window_zoomed_flag}")).trim(),
      "0",
    );
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", hidden2)).includes("typed-by-agent"),
      "the typed text in the pane the person now sees",
    );
    const now = await hookProcess(
      ["guard"],
      toolCall("mcp__tmux__send_keys", { paneId: hidden2, text: "x" }),
      env,
    );
    assert.ok(seedDecision(now.stdout).permissionDecisionReason.includes(tty), now.stdout);
  } finally {
    await t.kill();
  }
});

Deno.test("spawned: guard asks about a forced kill a batch makes after a wait, though nobody watches yet", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const target =
      (await t.tmux("new-session", "-d", "-s", "person", "-P", "-F", "#{pane_id}", "sh"))
        .trim();
    await t.prompt(target);
    const operations = [
      {
        tool: "wait_for_text",
        arguments: { paneId: target, patterns: ["build-done"], timeoutMs: 60_000 },
      },
      { tool: "kill_pane", arguments: { paneId: target, force: true } },
    ];
    const decision = await hookProcess(
      ["guard"],
      toolCall("mcp__tmux__call_tools_batch", { operations }),
      env,
    );
    assert.equal(decision.code, 0, decision.stderr);
    assert.equal(seedDecision(decision.stdout).permissionDecision, "ask", decision.stdout);

    // Why: a wait holds the batch (up to 120 s a row), and the person comes to look at the
    // pane meanwhile; the kill, forced, then takes the pane on their screen.
    const c = await connect({
      socketName: t.socket,
      callerEnv: { tmux: env.TMUX, tmuxPane: env.TMUX_PANE },
    });
    try {
      const batch = c.call("call_tools_batch", { operations });
      await t.attach("person");
      // Printed again and again until the pane goes, whenever the wait began to look.
      await t.tmux(
        "send-keys",
        "-t",
        target,
        "while :; do printf 'build-%s\\n' done; sleep 0.2; done",
        "Enter",
      );
      const r = await batch;
      assert.notEqual(r.isError, true, JSON.stringify(r));
    } finally {
      await c.close();
    }
    const panes = (await t.tmux("list-panes", "-a", "-F", "#{pane_id}")).split("\n");
    assert.ok(!panes.includes(target), "the pane the person came to watch was killed");
  } finally {
    await t.kill();
  }
});

Deno.test("spawned with the server's flags before `hook`: only a guard blocks (exit 2), the others fail open (exit 1), and the fix is named", async () => {
  const [run, ...flags] = startArgs();
  const line = async (before: string[], after: string[]) =>
    await sh(Deno.execPath(), [run, ...flags, ...before, "hook", ...after], {
      env: cleanEnv(),
      stdin: toolCall("mcp__tmux__list_panes", {}),
      allowFail: true,
    });
  for (const command of ["working", "done", "attention", "clear"]) {
    const r = await line(["--read-only"], [command]);
    assert.equal(r.code, 1, `${command}: ${r.stderr}`);
    assert.match(r.stderr, /A hook command goes right after the program/, r.stderr);
  }
  const guard = await line(["--socket", "work"], ["guard"]);
  assert.equal(guard.code, 2, guard.stderr);
  // A misspelt guard blocks too: a guard that cannot run must not let every call through.
  const misspelt = await hookProcess(["gaurd"], toolCall("mcp__tmux__kill_server", {}));
  assert.equal(misspelt.code, 2, misspelt.stderr);
  assert.match(misspelt.stderr, /guard/);
  // config refuses to print such a line.
  const config = await hookProcess(["config", "--command", "tmux-mcp --socket work"], "");
  assert.equal(config.code, 1, config.stdout);
  assert.match(config.stderr, /has a flag after the program/, config.stderr);
  assert.equal(config.stdout, "");
});
