/**
 * Failures as a model should see them: one sentence saying what is wrong and a hint naming
 * the next call to make. Never a stack trace.
 *
 * @module
 */

import { TmuxError } from "../tmux/run.ts";

/** A refusal or failure a tool reports to its caller as an `isError` result. */
export class ToolFailure extends Error {
  /** What to do next, e.g. "list_panes lists them all." */
  readonly hint: string;

  /** A failure with its reason and a hint. */
  constructor(message: string, hint = "") {
    super(message);
    this.name = "ToolFailure";
    this.hint = hint;
  }
}

/** Describes a server address for messages. */
export function describeSocket(
  socket: { socketName?: string; socketPath?: string; host?: string },
): string {
  const on = socket.host !== undefined ? ` on host ${JSON.stringify(socket.host)}` : "";
  if (socket.socketPath) return `socket path ${socket.socketPath}${on}`;
  if (socket.socketName) return `socket "${socket.socketName}"${on}`;
  return `the default socket${on}`;
}

/** Turns anything thrown inside a tool into the text of an `isError` result. */
export function failureText(
  error: unknown,
  socket: { socketName?: string; socketPath?: string; host?: string },
): string {
  if (error instanceof ToolFailure) {
    return error.hint ? `${error.message} ${error.hint}` : error.message;
  }
  if (error instanceof TmuxError) {
    switch (error.kind) {
      case "no-server":
        return `No tmux server is running on ${describeSocket(socket)}. ` +
          `create_session starts one; list_servers shows the servers that are running.`;
      case "no-target":
        return `tmux could not find the target: ${error.message}. ` +
          `list_panes, list_windows and list_sessions list what exists.`;
      case "not-installed":
        return `${error.message} Install tmux, or put it on the PATH the MCP client gives this server.`;
      case "timeout":
        return `${error.message} The tmux server may be busy or stuck; try again.`;
      case "cancelled":
        return "The call was cancelled before tmux finished.";
      case "failed":
        // A tmux process sends its whole command line in one message of at most 16 KB and
        // refuses a longer one before anything runs (the control connection has no such
        // limit, but was unavailable for this call).
        if (/^command too long/.test(error.message)) {
          return "tmux refused: command too long. A tmux process takes a command line of at " +
            "most 16 KB, and the control connection (which takes more) was unavailable for " +
            "this call; nothing was done. Send less at once (paste_text takes long text whole).";
        }
        return `tmux refused: ${error.message}`;
      case "unreachable":
        return `${error.message} Other hosts and this machine are unaffected; the next call ` +
          "to this host connects again (list_servers shows which hosts answer).";
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return `Internal error: ${message.split("\n")[0]}`;
}
