/**
 * Writes src/mcp/tool_list.json: the SDK's own `tools/list` answer for every tool, so a starting
 * server answers its first tools/list without converting 56 tools' zod schemas to JSON Schema
 * (35-75 ms). Run it after changing any tool's name, description, schemas or annotations; the
 * test suite fails while the file differs from the live conversion. Beside it
 * src/mcp/front_desk.json: what the front desk answers from before the SDK has loaded (each
 * tool's toolset, each prompt's tools, the SDK's capabilities; see scripts/front_desk_facts.ts).
 *
 * Usage: deno task tool-list [--help]
 *
 * @module
 */

import { MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import { TOOLSETS } from "../src/mcp/toolsets.ts";
import { buildServer } from "../src/server.ts";
import { factsText, liveFrontDeskFacts } from "./front_desk_facts.ts";
import { commandLine } from "./cli.ts";

const HELP = `deno task tool-list — rebuild src/mcp/tool_list.json and src/mcp/front_desk.json

Usage: deno task tool-list [--help]

Writes src/mcp/tool_list.json, the SDK's own tools/list answer for every tool (so a starting
server answers its first tools/list without converting the tools' zod schemas), and beside it
src/mcp/front_desk.json: what the front desk answers from before the SDK has loaded. Run it
after changing any tool's name, description, schemas or annotations; the test suite fails
while the files differ from the live conversion.

Options:
  --help, -h  this text
`;

/** Every tool's entry as the SDK converts it now, in registration order, as JSON carries it. */
export async function liveToolList(): Promise<{ tools: { name: string }[] }> {
  const built = buildServer({
    address: {},
    toolsets: TOOLSETS,
    version: "tool-list",
    maxResultBytes: MAX_RESULT_BYTES,
    callerEnv: {},
    prebuiltToolList: false,
  });
  const handlers = (built.mcp.server as unknown as {
    _requestHandlers: Map<string, (request: unknown, extra: unknown) => Promise<unknown>>;
  })._requestHandlers;
  const answer = await handlers.get("tools/list")!({ method: "tools/list", params: {} }, {});
  await built.runner.close();
  return JSON.parse(JSON.stringify(answer));
}

if (import.meta.main) {
  commandLine("tool-list", HELP, {});
  const path = new URL("../src/mcp/tool_list.json", import.meta.url);
  const list = await liveToolList();
  await Deno.writeTextFile(path, `${JSON.stringify(list)}\n`);
  const facts = new URL("../src/mcp/front_desk.json", import.meta.url);
  await Deno.writeTextFile(facts, factsText(await liveFrontDeskFacts()));
  Deno.stdout.writeSync(
    new TextEncoder().encode(
      `wrote ${list.tools.length} tools to ${path.pathname}, and ${facts.pathname}\n`,
    ),
  );
}
