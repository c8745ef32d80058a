/**
 * tmux-mcp's entry point: the command line only. The MCP server is loaded on demand, so
 * `--help` and `--version` answer without loading the SDK, and `hook` (which runs on every
 * prompt and tool call of an agent) loads neither the SDK nor the command-line parser.
 *
 * @module
 */

import denoJson from "./deno.json" with { type: "json" };
import { warn } from "./src/diagnostics.ts";

/** The version, from deno.json: one place. */
export const VERSION: string = denoJson.version;

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

async function main(argv: string[]): Promise<number> {
  // parseCli answers `hook` by this first word too; checking it before loading cli.ts spares
  // every hook call node:util's start-up (~15 ms).
  if (argv[0] === "hook") return await runHook(argv.slice(1));
  const { helpText, parseCli, USAGE, UsageError } = await import("./src/cli.ts");
  let command;
  try {
    command = parseCli(argv, readEnv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    warn(`tmux-mcp: ${error.message}\n${USAGE}`);
    return 2;
  }
  switch (command.kind) {
    case "help":
      await writeStdout(helpText(VERSION));
      return 0;
    case "version":
      await writeStdout(`tmux-mcp ${VERSION}\n`);
      return 0;
    case "hook":
      return await runHook(command.args);
    case "serve": {
      const { startServer } = await import("./src/start.ts");
      return await startServer(command.options, VERSION, readEnv);
    }
  }
}

/** `tmux-mcp hook ...`: src/hooks/ only, never the server. */
async function runHook(args: readonly string[]): Promise<number> {
  const hooks = await import("./src/hooks/main.ts");
  return await hooks.runHook(args);
}

async function writeStdout(text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
