/**
 * Which tmux server the MCP server talks to, as a hook learns it: the server's own
 * `--socket NAME` / `--socket-path PATH` flags and `TMUX_MCP_SOCKET` / `TMUX_MCP_SOCKET_PATH`
 * variables, read by the server's rules (src/cli.ts): a flag wins over both variables, one of
 * each pair, an empty variable counts as unset. `guard` judges that server; without one it
 * judges the agent's own (the server `TMUX` names, which is also the MCP server's default).
 *
 * One set of rules for both: src/cli.ts (the server's command line) and src/hooks/ (which
 * must not load cli.ts, its help text and toolset tables, on every hook call) both read the
 * choice here.
 *
 * @module
 */

import type { ServerAddress } from "./server_address.ts";

/** The socket flags as given on the hook's command line (undefined: not given). */
export interface SocketFlags {
  readonly socket?: string;
  readonly socketPath?: string;
}

/** A socket choice the MCP server would refuse to start with: one line saying why. */
export class SocketChoiceError extends Error {
  /** The environment variable at fault, or undefined when the flags are. */
  readonly variable?: string;

  /** An error with its one-line reason. */
  constructor(message: string, variable?: string) {
    super(message);
    this.name = "SocketChoiceError";
    this.variable = variable;
  }
}

/**
 * The server the flags or variables name, or null when none does (tmux's own choice). Throws
 * {@link SocketChoiceError} with the message the MCP server gives for the same input.
 */
export function resolveSocket(
  flags: SocketFlags,
  env: (name: string) => string | undefined,
): ServerAddress | null {
  if (flags.socket !== undefined && flags.socketPath !== undefined) {
    throw new SocketChoiceError("--socket and --socket-path name two servers; give one.");
  }
  if (flags.socket !== undefined) return { socketName: checkName(flags.socket, "--socket") };
  if (flags.socketPath !== undefined) {
    return { socketPath: checkPath(flags.socketPath, "--socket-path") };
  }
  const envName = nonEmpty(env("TMUX_MCP_SOCKET"));
  const envPath = nonEmpty(env("TMUX_MCP_SOCKET_PATH"));
  if (envName !== undefined && envPath !== undefined) {
    throw new SocketChoiceError(
      "TMUX_MCP_SOCKET and TMUX_MCP_SOCKET_PATH are both set; set one.",
      "TMUX_MCP_SOCKET_PATH",
    );
  }
  if (envName !== undefined) return { socketName: checkName(envName, "TMUX_MCP_SOCKET") };
  if (envPath !== undefined) return { socketPath: checkPath(envPath, "TMUX_MCP_SOCKET_PATH") };
  return null;
}

/** `--socket NAME` or `--socket-path PATH` for a resolved server; nothing for tmux's choice. */
export function socketFlagArgs(server: ServerAddress | null): string[] {
  if (server?.socketPath) return ["--socket-path", server.socketPath];
  if (server?.socketName) return ["--socket", server.socketName];
  return [];
}

/**
 * `socket "work"`, `socket path /tmp/s`: how a reason names a server. A call's `socket_name` is
 * the model's own: quoted with JSON's escapes, a quote in it cannot end the label.
 */
export function socketLabel(server: ServerAddress): string {
  return server.socketPath
    ? `socket path ${server.socketPath}`
    : `socket ${JSON.stringify(server.socketName ?? "")}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/**
 * A name or path that held bytes that are not UTF-8 reaches tmux-mcp with U+FFFD in their
 * place (Deno's arguments are decoded lossily): it would name another socket than the one meant.
 */
function checkUnicode(value: string, source: string): void {
  if (value.includes("\uFFFD")) {
    throw new SocketChoiceError(
      `${source}: ${JSON.stringify(value)} holds bytes that are not UTF-8 (read as U+FFFD), ` +
        "so it would name another socket: give the socket a UTF-8 name or path.",
      source.startsWith("--") ? undefined : source,
    );
  }
}

function checkName(value: string, source: string): string {
  checkUnicode(value, source);
  // deno-lint-ignore no-control-regex
  if (value === "" || value.includes("/") || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new SocketChoiceError(
      `${source}: ${JSON.stringify(value)} is not a socket name (no "/"; use --socket-path for ` +
        "a path).",
      source.startsWith("--") ? undefined : source,
    );
  }
  return value;
}

function checkPath(value: string, source: string): string {
  checkUnicode(value, source);
  if (value === "" || value.includes("\0")) {
    throw new SocketChoiceError(
      `${source}: empty or invalid path.`,
      source.startsWith("--") ? undefined : source,
    );
  }
  return value;
}
