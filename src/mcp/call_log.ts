/**
 * A call's log: the levels of MCP's log messages, the function a tool logs through, and the
 * stderr writer every message reaches.
 *
 * @module
 */

import { warn } from "../diagnostics.ts";

/** The levels of a log message (MCP's, after syslog). */
export type LogLevel =
  | "debug"
  | "info"
  | "notice"
  | "warning"
  | "error"
  | "critical"
  | "alert"
  | "emergency";

/**
 * A log message about a call. It always reaches stderr (protocol 2026-07-28 deprecates log
 * notifications, and a stdio server's stderr is where clients keep its log); it is also sent as
 * a `notifications/message` only to a client that asked for them at that level, on a server
 * that declares logging.
 */
export type LogFn = (level: LogLevel, message: string, options?: LogOptions) => void;

/** Where a log message goes besides the default. */
export interface LogOptions {
  /** The logger a client sees (default `tmux-mcp`; the audit trail is `audit`). */
  readonly logger?: string;
  /** Whether stderr gets it too (default true). */
  readonly stderr?: boolean;
}

/**
 * A log function that writes one line per message to stderr (or `write`), control characters
 * and line breaks shown as `\xNN`: a message may quote what a pane showed, and must neither
 * drive the terminal it is read on nor pass for another line of the log.
 */
export function stderrLog(write: (line: string) => void = warn): LogFn {
  return (level, message, options) => {
    if (options?.stderr === false) return;
    const label = options?.logger && options.logger !== "tmux-mcp" ? options.logger : level;
    write(
      `tmux-mcp: ${label}: ${
        message.replace(
          // deno-lint-ignore no-control-regex
          /[\u0000-\u001f\u007f]/g,
          (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`,
        )
      }`,
    );
  };
}
