/**
 * A smoke test of a real server process against a real tmux: initialize, tools/list, create a
 * session on a private socket, list_panes, capture_pane, kill what it made. Run it against a
 * compiled binary (`deno task smoke dist/tmux-mcp-x86_64-unknown-linux-gnu`), or with no
 * argument against the from-source command line the README gives MCP clients: `deno run` with
 * exactly the flags the binary bakes in, `--config` and main.ts by absolute path.
 *
 * The server and its hook run in another directory than the checkout, one holding a deno.json
 * and a package.json of its own (as a client started in someone's project would start it): the
 * command must find the checkout's import map, lockfile and npm packages all the same.
 *
 * Usage: deno task smoke [path-to-binary | --bundle] [--help]
 *   --bundle   run dist/bundle/main.js (the bundled code the binaries embed) with the baked
 *              flags, and check that its hook path never loads the server's code
 *
 * @module
 */

import denoJson from "../deno.json" with { type: "json" };
import { fromSourceArgs, shellLine } from "../src/cli.ts";
import { startCommand, StdioServer } from "../tests/helpers/stdio.ts";
import { commandLine, refuse } from "./cli.ts";

/** The checkout this script belongs to. */
const ROOT = new URL("../", import.meta.url).pathname;

/** The bundle's entry, beside its chunks (`deno task bundle` splits code per dynamic import). */
const BUNDLE_ENTRY = "dist/bundle/main.js";

const HELP = `deno task smoke — a smoke test of a real server process against a real tmux

Usage: deno task smoke [path-to-binary | --bundle] [--help]

Starts the server (with no argument: the from-source command line the README gives MCP
clients, deno run with exactly the flags the binary bakes in, --config and main.ts by absolute
path) in another directory than the checkout, one with a deno.json and package.json of its
own, and checks: initialize, tools/list, create_session on a private socket, list_panes,
run_command, capture_pane, the hook, kill_session. Ends the tmux server it made. Prints one
line per check, then "smoke: passed" (exit 0) or "smoke: FAILED" (exit 1).

Options:
  path-to-binary  run this compiled binary (dist/tmux-mcp-<target>) instead
  --bundle        run ${BUNDLE_ENTRY} (the bundled code the binaries embed) with the baked
                  flags, and check that its hook path never loads the server's code
  --help, -h      this text
`;

const { values, positionals } = commandLine("smoke", HELP, {
  bundle: { type: "boolean", default: false },
}, true);
if (positionals.length > 1) refuse("smoke", `one binary at most, not ${positionals.join(" ")}`);
if (values.bundle && positionals.length > 0) refuse("smoke", "a binary or --bundle, not both");
const arg = values.bundle ? "--bundle" : positionals[0];
let cmd: string;
let args: string[];
if (arg === undefined) {
  cmd = Deno.execPath();
  args = fromSourceArgs(denoJson.tasks.start, ROOT);
} else if (arg === "--bundle") {
  ({ cmd, args } = startCommand());
  args = args.map((a) => a.endsWith("/main.ts") ? a.replace(/main\.ts$/, BUNDLE_ENTRY) : a);
} else {
  cmd = await Deno.realPath(arg).catch(() => refuse("smoke", `no binary ${arg}`));
  args = [];
}

/** Runs a helper program; its stdout. (The task runs without --allow-write: files go by sh.) */
async function run(program: string, ...programArgs: string[]): Promise<string> {
  const out = await new Deno.Command(program, {
    args: programArgs,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`smoke: ${program} ${programArgs.join(" ")} failed`);
  return new TextDecoder().decode(out.stdout);
}

/** Where the server runs: not the checkout, and with a deno.json that must not be used. */
const elsewhere = (await run(
  "mktemp",
  "-d",
  `${(Deno.env.get("TMPDIR") || "/tmp").replace(/\/$/, "")}/tmux-mcp-smoke-cwd.XXXXXX`,
)).trim();
await run(
  "sh",
  "-c",
  'printf %s "$2" > "$1/deno.json" && printf %s "$3" > "$1/package.json"',
  "sh",
  elsewhere,
  JSON.stringify({ imports: { "zod": "npm:left-pad@1.3.0", "re2js": "npm:left-pad@1.3.0" } }),
  JSON.stringify({ type: "commonjs" }),
);

const socket = `tmux-mcp-smoke-${crypto.randomUUID().slice(0, 8)}`;
const env = Deno.env.toObject();
delete env.TMUX;
delete env.TMUX_PANE;
// StdioServer starts its process in the checkout: sh moves it to the other directory first.
const server = new StdioServer("sh", [
  "-c",
  'cd "$1" && shift && exec "$@"',
  "sh",
  elsewhere,
  cmd,
  ...args,
  "--socket",
  socket,
  "--toolsets",
  "inspect,manage,execute,teardown",
], env);

function say(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

function check(condition: unknown, what: string): void {
  if (!condition) throw new Error(`smoke: ${what}`);
  say(`ok   ${what}`);
}

type Result = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: { text: string }[];
};

async function tool(
  name: string,
  a: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const result = await server.callTool(name, a) as Result;
  if (result.isError) throw new Error(`smoke: ${name} failed: ${result.content?.[0]?.text}`);
  return result.structuredContent ?? {};
}

/** Runs tmux on the smoke test's own server; its stdout, or "" when it fails. */
async function tmux(...tmuxArgs: string[]): Promise<string> {
  const out = await new Deno.Command("tmux", {
    args: ["-L", socket, ...tmuxArgs],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

/** The smoke server's pid and socket file, once known: what the end removes. */
const made = { pid: 0, socketPath: "" };

/** Where tmux puts the socket of `-L name`: `$TMUX_TMPDIR` or /tmp, then `tmux-<uid>`. */
async function defaultSocketPath(): Promise<string> {
  const id = await new Deno.Command("id", { args: ["-u"], stdout: "piped", stderr: "null" })
    .output();
  const uid = new TextDecoder().decode(id.stdout).trim();
  return `${(env.TMUX_TMPDIR || "/tmp").replace(/\/$/, "")}/tmux-${uid}/${socket}`;
}

/**
 * Ends the smoke server and removes its socket file (tmux 3.3 leaves it behind when its last
 * session goes): kill-server, then the pid if it still runs (a server its socket cannot
 * reach), then the file. The task runs without --allow-write, so `rm` removes it.
 */
async function cleanUp(): Promise<void> {
  await tmux("kill-server");
  if (made.pid > 0) {
    const ps = await new Deno.Command("ps", {
      args: ["-ww", "-o", "args=", "-p", String(made.pid)],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (new TextDecoder().decode(ps.stdout).includes(socket)) Deno.kill(made.pid, "SIGKILL");
  }
  const path = made.socketPath || await defaultSocketPath();
  if (path.endsWith(`/${socket}`)) {
    await new Deno.Command("rm", { args: ["-f", "--", path], stdout: "null", stderr: "null" })
      .output();
  }
}

/** `tmux-mcp hook working` from the same program, inside the pane it made: marks its window. */
async function checkHook(paneId: string): Promise<void> {
  const facts = (await tmux("display-message", "-p", "-t", paneId, "#{socket_path},#{pid}"))
    .trim();
  const hook = new Deno.Command(cmd, {
    args: [...args, "hook", "working"],
    env: { ...env, TMUX: `${facts},0`, TMUX_PANE: paneId },
    cwd: elsewhere,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = hook.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify({
    session_id: "smoke",
    transcript_path: "/dev/null",
    cwd: "/",
    hook_event_name: "UserPromptSubmit",
    prompt: "smoke",
  })));
  await writer.close();
  const out = await hook.output();
  const err = new TextDecoder().decode(out.stderr);
  check(
    out.code === 0 && out.stdout.length === 0 && err === "",
    `hook working exits 0${err ? `: ${err}` : ""}`,
  );
  const state = await tmux("show-options", "-wv", "-t", paneId, "@agent-state");
  check(state === "working\n", "hook working marks the window");
}

/**
 * The bundle must keep the hook path light: what `main.js` loads statically, plus the chunk
 * its hook path imports, must not hold the server (the MCP SDK's `tools/list` handling).
 */
async function checkBundleSplit(): Promise<void> {
  const dir = BUNDLE_ENTRY.slice(0, BUNDLE_ENTRY.lastIndexOf("/") + 1);
  const read = (file: string) => Deno.readTextFile(dir + file);
  const staticImports = (code: string) =>
    [...code.matchAll(/(?:\bfrom|\bimport)\s*["']\.\/([^"']+)["']/g)].map((m) => m[1]);
  const dynamicImports = (code: string) =>
    [...code.matchAll(/\bimport\(\s*["']\.\/([^"']+)["']\s*\)/g)].map((m) => m[1]);
  const closure = async (file: string, seen = new Set<string>()) => {
    if (seen.has(file)) return seen;
    seen.add(file);
    for (const next of staticImports(await read(file))) await closure(next, seen);
    return seen;
  };
  const entry = await read("main.js");
  const lazy = dynamicImports(entry);
  let hookChunk: string | undefined;
  let serverChunk: string | undefined;
  for (const chunk of lazy) {
    const code = [...await closure(chunk)];
    const texts = await Promise.all(code.map(read));
    if (texts.some((t) => t.includes("usage: tmux-mcp hook"))) hookChunk = chunk;
    if (texts.some((t) => t.includes("tools/list"))) serverChunk = chunk;
  }
  check(hookChunk && serverChunk, `the bundle splits per entry path (${lazy.join(", ")})`);
  const hookPath = await closure("main.js", await closure(hookChunk!));
  const heavy = [];
  for (const file of hookPath) if ((await read(file)).includes("tools/list")) heavy.push(file);
  check(
    heavy.length === 0,
    `the hook path (${[...hookPath].join(", ")}) loads no server code${
      heavy.length ? `: ${heavy.join(", ")}` : ""
    }`,
  );
  // The SDK's Node shims (node:process for a stdio transport we do not use, ajv for elicitation
  // we do not ask for) cost ~40 ms at every start: the bundle takes the SDK's portable shims.
  const serverPath = await closure(serverChunk!);
  const nodeProcess = [];
  for (const file of serverPath) {
    if (/["']node:process["']/.test(await read(file))) nodeProcess.push(file);
  }
  check(
    nodeProcess.length === 0,
    `the server path loads no node:process${
      nodeProcess.length ? `: ${nodeProcess.join(", ")}` : ""
    }`,
  );
}

let status = 1;
try {
  if (arg === "--bundle") await checkBundleSplit();
  const init = await server.initialize();
  check(
    (init.result?.serverInfo as { name?: string })?.name === "tmux-mcp",
    `initialize, started in ${elsewhere} (a deno.json of its own) as ${shellLine([cmd, ...args])}`,
  );
  const tools = (await server.request("tools/list")).result?.tools as { name: string }[];
  check(tools.length > 20, `tools/list lists ${tools.length} tools`);
  // sh, not the login shell: a login shell's rc files can take seconds on a loaded machine.
  const created = await tool("create_session", { name: "smoke", command: "sh" });
  check(
    typeof created.paneId === "string",
    `create_session made ${created.sessionId} ${created.paneId}`,
  );
  const [pid, socketPath] = (await tmux("display-message", "-p", "#{pid}\t#{socket_path}"))
    .trim().split("\t");
  made.pid = Number(pid) || 0;
  made.socketPath = socketPath ?? "";
  const panes = (await tool("list_panes")).panes as { id: string }[];
  check(panes.some((p) => p.id === created.paneId), "list_panes shows the new pane");
  const ran = await tool("run_command", {
    paneId: created.paneId,
    command: "echo smoke-$((40+2))",
  });
  check(
    ran.exitStatus === 0 && String(ran.output).includes("smoke-42"),
    "run_command runs in the pane",
  );
  const captured = await tool("capture_pane", { paneId: created.paneId });
  check(String(captured.text).includes("smoke-42"), "capture_pane reads it back");
  await checkHook(String(created.paneId));
  const killed = await tool("kill_session", { session: created.sessionId });
  const removed = killed.removed as { sessions: { id: string }[]; panes: string[] };
  check(
    removed.sessions.some((s) => s.id === created.sessionId) &&
      removed.panes.includes(String(created.paneId)),
    "kill_session reports what it removed",
  );
  status = 0;
} catch (error) {
  say(error instanceof Error ? error.message : String(error));
  if (server.stderr) say(`server stderr:\n${server.stderr}`);
} finally {
  await server.closeStdin();
  await cleanUp();
  await run("rm", "-rf", "--", elsewhere).catch(() => {});
}
say(status === 0 ? "smoke: passed" : "smoke: FAILED");
Deno.exit(status);
