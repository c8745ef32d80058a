/**
 * tmux-mcp's entry point: the command line only. The MCP server is loaded on demand, so
 * `--help` and `--version` answer without loading the SDK.
 *
 * @module
 */

import denoJson from "./deno.json" with { type: "json" };
import { warn } from "./src/diagnostics.ts";
import { helpText, parseCli, USAGE, UsageError } from "./src/cli.ts";

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
    case "serve": {
      const { startServer } = await import("./src/start.ts");
      return await startServer(command.options, VERSION, readEnv);
    }
  }
}

async function writeStdout(text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
