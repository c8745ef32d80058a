/**
 * Starting the server from the command line: find tmux, say on stderr what is being served,
 * serve until the client goes away.
 *
 * @module
 */

import type { ServeOptions } from "./cli.ts";
import { warn } from "./diagnostics.ts";
import { describeSocket } from "./mcp/errors.ts";
import { serveStdio } from "./server.ts";
import { MAX_RESULT_BYTES } from "./mcp/bounds.ts";
import { TmuxError, TmuxRunner } from "./tmux/run.ts";

/** Starts serving; resolves with the exit status once the client has gone. */
export async function startServer(
  options: ServeOptions,
  version: string,
  env: (name: string) => string | undefined,
): Promise<number> {
  const runner = new TmuxRunner();
  let tmuxVersion: string;
  try {
    tmuxVersion = new TextDecoder().decode(await runner.run({}, ["-V"], { timeoutMs: 5_000 }))
      .trim();
  } catch (error) {
    const reason = error instanceof TmuxError ? error.message : String(error);
    warn(
      `tmux-mcp: cannot start: ${reason}\n` +
        "Install tmux (apt install tmux, brew install tmux), and make sure it is on the PATH the " +
        "MCP client gives this server (GUI clients often start servers with a short PATH).",
    );
    return 1;
  }
  const address = { socketName: options.socketName, socketPath: options.socketPath };
  warn(
    `tmux-mcp ${version}: ${tmuxVersion}, ${describeSocket(address)}, toolsets ${
      options.toolsets.join(",")
    }`,
  );
  await serveStdio({
    address,
    toolsets: options.toolsets,
    version,
    runner,
    maxResultBytes: MAX_RESULT_BYTES,
    allowAttendedInput: options.allowAttendedInput,
    callerEnv: { tmux: env("TMUX"), tmuxPane: env("TMUX_PANE"), ppid: Deno.ppid },
  });
  return 0;
}
