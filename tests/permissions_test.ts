import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { cleanEnv, sh } from "./helpers/tmux.ts";
import { startCommand } from "./helpers/stdio.ts";

const FLAGS = "--no-prompt --allow-run=tmux,ssh --allow-env=TMUX* --ignore-env";

Deno.test("the start task and every compile target bake in the same, least permissions", () => {
  const tasks = denoJson.tasks as Record<string, string | { command?: string }>;
  const command = (name: string) => {
    const task = tasks[name];
    return typeof task === "string" ? task : task.command ?? "";
  };
  const permissionFlags = (line: string) =>
    line.split(/\s+/).filter((w) =>
      /^--(no-prompt|allow-|deny-|ignore-|env-file)/.test(w) || w === "-A"
    );
  const start = permissionFlags(command("start"));
  assert.deepEqual(
    start,
    FLAGS.split(" "),
    "the start task's flags are the least the server needs",
  );
  const targets = Object.keys(tasks).filter((n) => /^compile:.+-.+-/.test(n));
  assert.deepEqual(targets.sort(), [
    "compile:aarch64-apple-darwin",
    "compile:aarch64-unknown-linux-gnu",
    "compile:x86_64-apple-darwin",
    "compile:x86_64-unknown-linux-gnu",
  ]);
  // Runtime flags (the heap's young generation is kept small: see README, Memory) too.
  const v8Flags = (line: string) => line.split(/\s+/).filter((w) => w.startsWith("--v8-flags"));
  assert.deepEqual(v8Flags(command("start")), [
    "--v8-flags=--max-semi-space-size=2,--heap-growing-percent=30",
  ]);
  for (const target of targets) {
    const line = command(target);
    assert.deepEqual(permissionFlags(line), start, `${target} bakes in the start task's flags`);
    assert.deepEqual(v8Flags(line), v8Flags(command("start")), `${target}: same V8 flags`);
    assert.match(line, /^deno compile /);
    assert.match(line, new RegExp(`--target ${target.slice("compile:".length)} `));
    assert.match(line, new RegExp(`--output dist/tmux-mcp-${target.slice("compile:".length)} `));
  }
});

Deno.test("under the baked flags the runtime itself refuses files, other programs, env and net", async () => {
  const { cmd, args } = startCommand();
  const fixture = new URL("./fixtures/forbidden.ts", import.meta.url).pathname;
  const flags = args.slice(1, args.indexOf(args.find((a) => a.endsWith("main.ts"))!));
  const r = await sh(cmd, ["run", ...flags, fixture], {
    env: cleanEnv({ HOME: "/root", TMUX_MCP_SOCKET: "visible" }),
  });
  const results = JSON.parse(r.stdout) as Record<string, string>;
  assert.match(results.readFile, /^NotCapable: Requires read access/);
  assert.match(results.writeFile, /^NotCapable: Requires write access/);
  assert.match(results.spawnSh, /^NotCapable: Requires run access to "sh"/);
  assert.match(results.net, /^NotCapable: Requires net access/);
  assert.match(results.ffi, /^NotCapable: Requires ffi access/);
  assert.match(results.sys, /^NotCapable: Requires sys access/);
  // --ignore-env: variables outside TMUX* read as unset rather than failing the server.
  assert.equal(results.readHome, 'allowed: "undefined"');
  assert.equal(results.readPath, 'allowed: "undefined"');
  assert.equal(results.readTmuxEnv, 'allowed: "visible"');
  assert.equal(results.spawnTmux, "allowed: 0");
  const visible = JSON.parse(results.envObject.slice("allowed: ".length)) as string[];
  assert.ok(visible.every((name) => name.startsWith("TMUX")), `only TMUX* is visible: ${visible}`);
});

Deno.test("the README's from-source command lines carry exactly the start task's flags", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const start = denoJson.tasks.start.split(/\s+/).slice(2, -1);
  // Shell lines: from `deno run` to `--config`, continuation lines joined, quotes dropped.
  const shell = readme.replaceAll("\\\n", " ").split("\n")
    .filter((line) => /deno run --no-prompt .*--config /.test(line));
  assert.ok(shell.length >= 3, `the README shows the command line: ${shell.length}`);
  for (const line of shell) {
    const words = line.slice(
      line.indexOf("deno run ") + "deno run ".length,
      line.indexOf(" --config "),
    )
      .split(/\s+/).map((w) => w.replace(/^["']+|["']+$/g, ""));
    assert.deepEqual(words, start, line);
    assert.ok(line.includes("'--allow-env=TMUX*'"), `the * is quoted for zsh: ${line}`);
  }
  // JSON args lists: the same flags, then --config and main.ts.
  const blocks = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1])
    .filter((b) => b.includes('"--config"'));
  assert.ok(blocks.length >= 1, "a JSON example from source");
  for (const block of blocks) {
    const server = Object.values(
      (JSON.parse(block) as { mcpServers: Record<string, { args: string[] }> }).mcpServers,
    )[0];
    const config = server.args.indexOf("--config");
    assert.deepEqual(server.args.slice(0, config), ["run", ...start]);
    assert.match(server.args[config + 1], /\/deno\.json$/);
    assert.match(server.args[config + 2], /\/main\.ts$/);
  }
});

Deno.test("a hook that may not read TMUX* says so and, as guard, blocks instead of passing all", async () => {
  const main = new URL("../main.ts", import.meta.url).pathname;
  const config = new URL("../deno.json", import.meta.url).pathname;
  const input = JSON.stringify({
    session_id: "s",
    transcript_path: "/tmp/t",
    cwd: "/tmp",
    hook_event_name: "PreToolUse",
    tool_name: "mcp__tmux__kill_server",
    tool_input: {},
    tool_use_id: "t1",
  });
  for (const [command, code] of [["guard", 2], ["working", 1]] as const) {
    const child = new Deno.Command(Deno.execPath(), {
      // The start task's flags without --allow-env=TMUX*.
      args: ["run", "--no-prompt", "--allow-run=tmux", "--config", config, main, "hook", command],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: { TMUX: "/tmp/tmux-0/x,1,0", TMUX_PANE: "%0" },
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
    const out = await child.output();
    assert.equal(out.code, code, command);
    assert.equal(new TextDecoder().decode(out.stdout), "");
    assert.match(
      new TextDecoder().decode(out.stderr),
      /Deno does not let it read TMUX, TMUX_PANE.*--allow-env=TMUX\*/,
    );
  }
});

Deno.test("under the baked flags, ssh may run only in a server given --ssh hosts", async () => {
  const { cmd, args } = startCommand();
  const probe = new URL("./fixtures/ssh_permission_probe.ts", import.meta.url).pathname;
  const main = args.findIndex((a) => a.endsWith("main.ts"));
  /** What the program, started as the start task starts it, kept of ssh when it exited. */
  const sshState = async (
    words: string[],
    env: Record<string, string> = {},
    stdin = "",
  ): Promise<string> => {
    const r = await sh(
      cmd,
      [...args.slice(0, main), `--preload=${probe}`, ...args.slice(main), ...words],
      { env: cleanEnv(env), stdin, allowFail: true },
    );
    const state = r.stderr.match(/^ssh-permission: (\w+)$/m);
    assert.ok(state, `${words.join(" ")}: ${r.stderr}`);
    return state[1];
  };
  // With hosts the server keeps ssh (it exits at once: stdin is closed).
  assert.equal(await sshState(["--ssh", "build-box"]), "granted");
  assert.equal(await sshState([], { TMUX_MCP_SSH: "build-box" }), "granted");
  // Without, and in every hook, which never runs ssh, the runtime refuses it.
  assert.notEqual(await sshState([]), "granted");
  assert.notEqual(await sshState(["--version"]), "granted");
  for (const hook of [["hook", "guard"], ["hook", "working"], ["hook", "--help"]]) {
    assert.notEqual(await sshState(hook, {}, "{}"), "granted", hook.join(" "));
  }
});
