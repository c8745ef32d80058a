/**
 * A smoke test of a real server process against a real tmux: initialize, tools/list, create a
 * session on a private socket, list_panes, capture_pane, kill what it made. Run it against a
 * compiled binary (`deno task smoke dist/tmux-mcp-x86_64-unknown-linux-gnu`), or with no
 * argument against `deno run` with exactly the flags the binary bakes in.
 *
 * Usage: deno task smoke [path-to-binary | --bundle]
 *   --bundle   run dist/tmux-mcp.js (the bundled code the binaries embed) with the baked flags
 *
 * @module
 */

import { startCommand, StdioServer } from "../tests/helpers/stdio.ts";

const arg = Deno.args[0];
let cmd: string;
let args: string[];
if (arg === undefined || arg === "--bundle") {
  ({ cmd, args } = startCommand());
  if (arg === "--bundle") {
    args = args.map((a) => a.endsWith("/main.ts") ? a.replace(/main\.ts$/, "dist/tmux-mcp.js") : a);
  }
} else {
  cmd = arg.includes("/") ? arg : `./${arg}`;
  args = [];
}

const socket = `tmux-mcp-smoke-${crypto.randomUUID().slice(0, 8)}`;
const env = Deno.env.toObject();
delete env.TMUX;
delete env.TMUX_PANE;
const server = new StdioServer(cmd, [
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

let status = 1;
try {
  const init = await server.initialize();
  check(
    (init.result?.serverInfo as { name?: string })?.name === "tmux-mcp",
    `initialize (${cmd} ${args.join(" ")})`,
  );
  const tools = (await server.request("tools/list")).result?.tools as { name: string }[];
  check(tools.length > 20, `tools/list lists ${tools.length} tools`);
  // sh, not the login shell: a login shell's rc files can take seconds on a loaded machine.
  const created = await tool("create_session", { name: "smoke", command: "sh" });
  check(
    typeof created.paneId === "string",
    `create_session made ${created.sessionId} ${created.paneId}`,
  );
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
  await new Deno.Command("tmux", {
    args: ["-L", socket, "kill-server"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  })
    .output();
}
say(status === 0 ? "smoke: passed" : "smoke: FAILED");
Deno.exit(status);
