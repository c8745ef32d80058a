/**
 * `deno task inspect:strict`: the MCP Inspector's own check of the tool list, as a user would run
 * it (`--cli --method tools/list --strict`): every tool schema must be portable across clients
 * and model providers (no `type: [..., "null"]` unions, no schema that constrains nothing...).
 * `tests/listing_test.ts` holds the list to the same rules without the Inspector at hand; this
 * runs the real one, pinned, so a rule it adds or a schema we change cannot slip through.
 *
 * It installs the Inspector with npm into a temporary folder, first makes sure its check still
 * reports what it should (a one-tool server with two unportable properties must get two
 * findings), then lists this server's tools for the default toolsets and for every toolset,
 * started with exactly the `start` task's flags, and fails on any finding, warnings included.
 * No tmux server is needed: listing tools starts none.
 *
 * Usage: deno task inspect:strict [--help] (needs Node.js, npm and the npm registry)
 *
 * @module
 */

import { DEFAULT_TOOLSETS, TOOLSETS } from "../src/mcp/toolsets.ts";
import { startCommand } from "../tests/helpers/stdio.ts";
import { output, say, succeed } from "./programs.ts";
import { commandLine } from "./cli.ts";

const PACKAGE = "@modelcontextprotocol/inspector@2.12.0";

/** A server whose one tool has two properties the Inspector must flag. */
const UNPORTABLE_SERVER = `
const out = (m) => Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(m) + "\\n"));
let buf = "";
for await (const chunk of Deno.stdin.readable) {
  buf += new TextDecoder().decode(chunk, { stream: true });
  let nl;
  while ((nl = buf.indexOf("\\n")) !== -1) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (m.id === undefined) continue;
    if (m.method === "initialize") {
      out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} }, serverInfo: { name: "unportable", version: "1" } } });
    } else if (m.method === "tools/list") {
      out({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "x", inputSchema: {
        type: "object", properties: { a: { type: ["string", "null"] }, b: {} } } }] } });
    } else out({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no such method" } });
  }
}
`;

interface Listed {
  readonly tools: number;
  readonly findings: { toolName: string; findings: { severity: string; path: string }[] }[];
}

/** What this script needs to fetch the Inspector. */
const NEEDS = "inspect:strict needs Node.js and npm.";

/** The Inspector's tools/list of the server started by `command`, with its findings. */
async function inspect(cli: string, command: string[]): Promise<Listed> {
  const out = await output("node", [
    cli,
    "--cli",
    "--method",
    "tools/list",
    "--strict",
    "--format",
    "json",
    "--",
    ...command,
  ], NEEDS);
  const stdout = new TextDecoder().decode(out.stdout);
  let parsed: { result?: { tools?: unknown[] }; schemaFindings?: Listed["findings"] };
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw new Error(
      `the Inspector gave no JSON (status ${out.code}): ${stdout.slice(0, 500)}\n` +
        new TextDecoder().decode(out.stderr).slice(0, 2_000),
    );
  }
  return { tools: parsed.result?.tools?.length ?? 0, findings: parsed.schemaFindings ?? [] };
}

const HELP = `deno task inspect:strict — the MCP Inspector's --strict check of the tool schemas

Usage: deno task inspect:strict [--help] (needs Node.js, npm and the npm registry)

Installs ${PACKAGE} with npm into a temporary folder, makes sure
its check still reports what it should (a one-tool server with two unportable properties must
get two findings), then runs its tools/list --strict on this server, started with exactly the
start task's flags, for the default toolsets and for every toolset. Fails (exit 1) on any
finding, warnings included. Needs no tmux server.

Options:
  --help, -h  this text
`;

commandLine("inspect:strict", HELP, {});

const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-inspector-" });
let failed = false;
try {
  // No install script of the Inspector's dependencies runs: only its CLI is needed.
  await succeed("npm", [
    "install",
    "--prefix",
    dir,
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
    PACKAGE,
  ], NEEDS);
  const home = `${dir}/node_modules/@modelcontextprotocol/inspector`;
  const pkg = JSON.parse(await Deno.readTextFile(`${home}/package.json`));
  const cli = `${home}/${pkg.bin["mcp-inspector"]}`;

  // The check itself: an unportable schema must be reported, or a pass below means nothing.
  await Deno.writeTextFile(`${dir}/unportable.js`, UNPORTABLE_SERVER);
  const control = await inspect(cli, [Deno.execPath(), "run", "--quiet", `${dir}/unportable.js`]);
  const caught = control.findings.flatMap((t) => t.findings).length;
  if (control.tools !== 1 || caught < 2) {
    throw new Error(
      `${PACKAGE} reported ${caught} findings for a tool with two unportable properties: ` +
        "its check no longer works as this script expects",
    );
  }
  say(`ok   ${PACKAGE} --strict reports unportable schemas (${caught} findings)`);

  const { cmd, args } = startCommand();
  const socket = `tmux-mcp-inspect-${crypto.randomUUID().slice(0, 8)}`;
  for (const toolsets of [DEFAULT_TOOLSETS, TOOLSETS]) {
    const listed = await inspect(cli, [
      cmd,
      ...args,
      "--socket",
      socket,
      "--toolsets",
      toolsets.join(","),
    ]);
    const label = `tools/list --strict, toolsets ${toolsets.join(",")}`;
    if (listed.tools === 0) {
      failed = true;
      say(`FAIL ${label}: no tools listed`);
    } else if (listed.findings.length > 0) {
      failed = true;
      say(`FAIL ${label}: ${listed.tools} tools, findings:`);
      for (const tool of listed.findings) {
        for (const f of tool.findings) {
          say(`     ${tool.toolName} ${f.path}: ${f.severity}`);
        }
      }
    } else {
      say(`ok   ${label}: ${listed.tools} tools, no finding`);
    }
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
if (failed) Deno.exit(1);
