/**
 * tmux-mcp's entry point: the command line only. The MCP server is loaded on demand, so
 * `--help` and `--version` answer without loading the SDK, and `hook` (which runs on every
 * prompt and tool call of an agent) loads neither the SDK nor the command-line parser.
 *
 * @module
 */

import denoJson from "./deno.json" with { type: "json" };
import { notUnicode, notUnicodeText, warn } from "./src/diagnostics.ts";

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
  // every hook call loading the command line's parser, help text and toolset tables.
  if (argv[0] === "hook") {
    dropSsh();
    return await runHook(argv.slice(1));
  }
  const cli = await import("./src/cli.ts");
  const { ENV_VARIABLES, helpText, parseCli, USAGE, UsageError } = cli;
  let command;
  try {
    command = parseCli(argv, readEnv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (argv.includes("hook")) {
      // A hook's line with the server's flags before `hook`: an agent takes exit 2 of any hook
      // but the guard as "block" (every prompt, or every stop), so only a guard's blocks.
      warn(
        `tmux-mcp: ${error.message} A hook command goes right after the program: ` +
          "`tmux-mcp hook <command> [--socket NAME | --socket-path PATH]`; flags before `hook` " +
          "are the MCP server's.",
      );
      const { asksForGuard } = await import("./src/hooks/main.ts");
      return asksForGuard(argv) ? 2 : 1;
    }
    // The usage, then what is wrong: the last line is the one a person running the command by
    // hand is told to read (--help, README).
    warn(`${USAGE.trimEnd()}\ntmux-mcp: ${error.message}`);
    return 2;
  }
  if (command.kind !== "serve" || !command.options.ssh) dropSsh();
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
      refuseDebugSignal();
      const howToRun = runHint(cli.fromSourceArgs, cli.shellLine);
      // Without --allow-env=TMUX* every variable reads as unset: a TMUX_MCP_TOOLSETS=inspect
      // meant to keep the server read-only would be ignored without a word. Refuse instead.
      const unreadable = ENV_VARIABLES.filter((variable) =>
        Deno.permissions.querySync({ name: "env", variable }).state !== "granted"
      );
      if (unreadable.length > 0) {
        const what = unreadable.length === ENV_VARIABLES.length
          ? "the TMUX* environment variables"
          : unreadable.join(", ");
        warn(
          `tmux-mcp: cannot start: Deno does not let it read ${what} (it was started ` +
            `without --allow-env=TMUX*). ${howToRun}`,
        );
        return 1;
      }
      const garbled = notUnicode(ENV_VARIABLES);
      if (garbled.length > 0) {
        warn(`tmux-mcp: cannot start: ${notUnicodeText(garbled)}`);
        return 2;
      }
      // The connection's opening requests are answered while the server's code loads (that
      // blocks the process for ~100 ms): the front desk reads stdin from now on.
      let start;
      try {
        const { openFrontDesk } = await import("./src/mcp/front_desk.ts");
        const { options } = command;
        const desk = openFrontDesk({
          version: VERSION,
          toolsets: options.toolsets,
          tools: options.tools,
          denyTools: options.denyTools,
          // With SSH hosts every schema gains `host`: the SDK lists the tools then.
          prebuiltList: !("ssh" in options && options.ssh),
        });
        await desk.sdkWanted;
        start = await import("./src/start.ts");
      } catch (error) {
        warn(`tmux-mcp: cannot start: its code did not load: ${firstLine(error)} ${LOAD_FIX}`);
        return 1;
      }
      return await start.startServer(command.options, VERSION, readEnv, howToRun);
    }
  }
}

/**
 * Ends the process at once on SIGUSR1. Deno (2.9.2 on) opens an inspector on 127.0.0.1:9229
 * when a process that has run for half a second receives it: a port with no password, open to
 * every local user for the rest of the process's life, through which code runs inside the
 * server with its permission to run tmux (and through tmux, a shell). No flag turns that off;
 * a listener of the program's own runs alongside it, and ending the process there ends it
 * before the inspector is announced. Nothing is given back (the control clients end with the
 * process's pipes; a mark a call left stays, as after a kill).
 */
function refuseDebugSignal(code = 1, what = "this server"): void {
  try {
    Deno.addSignalListener("SIGUSR1", () => {
      warn(
        `tmux-mcp: received SIGUSR1, which would open a debugger port into ${what}: ` +
          "exiting at once.",
      );
      Deno.exit(code);
    });
  } catch {
    // No SIGUSR1 here (Windows): nothing opens the inspector by a signal either.
  }
}

/**
 * What to do when the server's code does not load: from source that is almost always the npm
 * packages (never fetched, or no registry reachable) or a deno.json that was not found.
 */
const LOAD_FIX = "From source: run `deno install --frozen` once in the checkout (it fetches " +
  "the npm packages, so it needs the npm registry), and start main.ts with " +
  "--config <checkout>/deno.json (README, From source).";

function firstLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const first = text.split("\n")[0];
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

/**
 * The command line that starts this server with the right flags, for messages about a start
 * without them: from a checkout (main.ts is a file), the exact `deno run` line for it.
 */
function runHint(
  fromSourceArgs: (startTask: string, checkout: string) => string[],
  shellLine: (argv: readonly string[]) => string,
): string {
  const url = new URL(import.meta.url);
  const start = denoJson.tasks.start;
  if (url.protocol === "file:" && url.pathname.endsWith("/main.ts")) {
    const checkout = decodeURIComponent(url.pathname.slice(0, -"/main.ts".length));
    return `Start it with the flags a release binary bakes in: ${
      shellLine(["deno", ...fromSourceArgs(start, checkout)])
    }`;
  }
  return `Start it with the flags a release binary bakes in: ${start}`;
}

/**
 * Gives up running ssh, for a start that will not reach an SSH host (no `--ssh`, or a hook):
 * the baked `--allow-run=tmux,ssh` grants ssh to every start, and an ssh Deno lets run can run
 * anything (`-o ProxyCommand=...`). Revoking only narrows a grant: under a wider one
 * (`--allow-run` for every program) it changes nothing.
 */
function dropSsh(): void {
  Deno.permissions.revokeSync({ name: "run", command: "ssh" });
}

/**
 * `tmux-mcp hook ...`: src/hooks/ only, never the server. A hook may run tmux as the server
 * does, and the guard waits on its input up to seconds: SIGUSR1 ends it as it ends the server
 * ({@link refuseDebugSignal}), the guard with 2, so that the agent blocks the call it was asked
 * about rather than let it through.
 */
async function runHook(args: readonly string[]): Promise<number> {
  const hooks = await import("./src/hooks/main.ts");
  refuseDebugSignal(hooks.asksForGuard(args) ? 2 : 1, "this hook");
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
