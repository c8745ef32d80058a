/**
 * Starting the server from the command line: find tmux, say on stderr what is being served,
 * serve until the client goes away.
 *
 * @module
 */

import { envFix, FLAG_FIX, type ServeOptions } from "./cli.ts";
import { warn } from "./diagnostics.ts";
import { serveStdio } from "./serve.ts";
import { MAX_RESULT_BYTES } from "./mcp/bounds.ts";
import { newOwnerId } from "./mcp/ownership.ts";
import { ToolSelectionError } from "./mcp/tool_selection.ts";
import { TmuxRunner } from "./tmux/run.ts";
import { TmuxError } from "./tmux/tmux_error.ts";
import { describeServer } from "./tmux/which_server.ts";

/**
 * Starts serving; resolves with the exit status once the client has gone. A start that fails
 * says so in one line on stderr that names the fix (an MCP client shows only "connection
 * closed"); `howToRun` is the command line with the right permission flags.
 */
export async function startServer(
  options: ServeOptions,
  version: string,
  env: (name: string) => string | undefined,
  howToRun = "",
): Promise<number> {
  const runner = new TmuxRunner(
    options.ssh ? { ssh: { destinations: options.ssh, configFile: options.sshConfig } } : {},
  );
  let tmuxVersion: string;
  try {
    tmuxVersion = new TextDecoder().decode(await runner.run({}, ["-V"], { timeoutMs: 5_000 }))
      .trim();
  } catch (error) {
    warn(`tmux-mcp: cannot start: ${tmuxFailure(error, howToRun)}`);
    return 1;
  }
  const address = { socketName: options.socketName, socketPath: options.socketPath };
  const owner = options.owner ?? newOwnerId();
  const selected = [
    options.tools ? `, only tools ${options.tools.join(",")}` : "",
    options.denyTools ? `, denied tools ${options.denyTools.join(",")}` : "",
    options.allowAttendedInput ? ", input into watched panes allowed" : "",
    options.audit ? ", audit on stderr" : "",
    options.ssh ? `, ssh hosts ${options.ssh.join(",")}` : "",
    `, owner ${owner}${options.ownPanesOnly ? " (own panes only)" : ""}`,
  ].join("");
  // Said once the tool selection has been checked: a bad --tools is the only line then.
  const announce = () =>
    warn(
      `tmux-mcp ${version}: ${tmuxVersion}, ${describeServer(address, env("TMUX"))}, toolsets ${
        options.toolsets.join(",")
      }${selected}`,
    );
  try {
    await serveStdio({
      announce,
      address,
      toolsets: options.toolsets,
      tools: options.tools,
      denyTools: options.denyTools,
      selectionFrom: options.selectionFrom,
      version,
      runner,
      maxResultBytes: MAX_RESULT_BYTES,
      allowAttendedInput: options.allowAttendedInput,
      audit: options.audit,
      owner,
      ownPanesOnly: options.ownPanesOnly,
      callerEnv: { tmux: env("TMUX"), tmuxPane: env("TMUX_PANE"), ppid: Deno.ppid },
    });
  } catch (error) {
    if (!(error instanceof ToolSelectionError)) throw error;
    const fix = error.source.startsWith("TMUX_MCP_") ? envFix(error.source) : FLAG_FIX;
    warn(`tmux-mcp: cannot start: ${error.message} ${fix}`);
    return 2;
  }
  return 0;
}

/** Why `tmux -V` failed, and what fixes it, in one line. */
function tmuxFailure(error: unknown, howToRun: string): string {
  if (!(error instanceof TmuxError)) return `${String(error)} Check that tmux -V works in a shell.`;
  if (error.kind === "not-installed" && /^Not permitted/.test(error.message)) {
    // Deno refused to start tmux: a from-source start without the permission flags.
    return `Deno does not let it run tmux (it was started without --allow-run=tmux). ${howToRun}`
      .trim();
  }
  if (error.kind === "not-installed") {
    return `${error.message} Install tmux (apt install tmux, brew install tmux), or put its ` +
      "folder on the PATH the MCP client gives this server (GUI clients give a short one): " +
      `add "env": {"PATH": "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin"} (with the folder ` +
      "of `command -v tmux`) to the server's entry in the client's configuration.";
  }
  return `tmux -V failed: ${error.message} Check that tmux -V works in a shell.`;
}
