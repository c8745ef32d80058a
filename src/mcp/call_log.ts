/**
 * A call's log: the levels of MCP's log messages, the function a tool logs through, and the
 * stderr writer every message reaches.
 *
 * @module
 */

import { warn } from "../diagnostics.ts";
import { CONTROLS, SEPARATORS_AND_BIDI, unicodeEscape } from "./render_value.ts";

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

/** What a log line never holds as it is: C0 and C1 controls, DEL, line separators, bidi. */
const NOT_IN_LOG = new RegExp(`[${CONTROLS}${SEPARATORS_AND_BIDI}]`, "g");

/**
 * `message` as one inert line, wherever it is read (stderr, a client's log view): the C0 and
 * C1 controls and DEL shown as `\xNN` (tab and line breaks among them; C1's CSI drives a
 * terminal as ESC [ does), line separators and bidi controls as `\uXXXX`. A message may quote
 * what a pane showed or a name a model gave, which must neither drive the terminal the log is
 * read on, nor pass for another line of it, nor make it read in another order.
 */
export function logLine(message: string): string {
  return message.replace(
    NOT_IN_LOG,
    (c) =>
      c.charCodeAt(0) <= 0x9f
        ? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`
        : unicodeEscape(c),
  );
}

/** A log function that writes one line per message ({@link logLine}) to stderr (or `write`). */
export function stderrLog(write: (line: string) => void = warn): LogFn {
  return (level, message, options) => {
    if (options?.stderr === false) return;
    const label = options?.logger && options.logger !== "tmux-mcp" ? options.logger : level;
    write(`tmux-mcp: ${label}: ${logLine(message)}`);
  };
}
