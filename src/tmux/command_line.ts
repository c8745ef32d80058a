/**
 * Commands as one line of tmux's command language: an argv split into commands the way tmux
 * splits its own arguments, each argument quoted so tmux's parser reads it back unchanged, and
 * the one line a control client sends for it. The same quoting serves a command string tmux
 * parses elsewhere (an `if-shell` branch, a file given to `source-file`).
 *
 * @module
 */

import { ControlUnavailable } from "./control_protocol.ts";
import { refuseNul } from "./tmux_error.ts";

/**
 * Splits an argv the way tmux itself does when given arguments (`cmd_parse_from_arguments`):
 * an argument ending in `;` ends a command (the `;` dropped), unless it ends in `\;`, which
 * stands for a literal final `;`. So a control line built from the result means exactly what
 * the same argv means to a spawned tmux.
 */
export function argvCommands(args: readonly string[]): string[][] {
  const commands: string[][] = [];
  let current: string[] = [];
  for (const arg of args) {
    let value = arg;
    let end = false;
    if (value.endsWith(";")) {
      value = value.slice(0, -1);
      if (value.endsWith("\\")) value = `${value.slice(0, -1)};`;
      else end = true;
    }
    if (!end || value !== "") current.push(value);
    if (end) {
      commands.push(current);
      current = [];
    }
  }
  if (current.length > 0) commands.push(current);
  return commands.filter((c) => c.length > 0);
}

/**
 * Quotes one argument for tmux's command parser: inside single quotes nothing is special
 * (`;`, `#`, `$`, `~`, `{`, `}`, `\`, `%`), and a single quote travels as `'\''`.
 */
export function quoteArgument(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/**
 * One argument quoted for a command string tmux parses (an `if-shell` branch, a file it reads):
 * single-quoted ({@link quoteArgument}), except that a newline goes as `"\n"` and a carriage
 * return as `"\r"` (double-quoted escapes tmux's parser turns back into them), so the string
 * holds neither: a newline would end a control line, or a file's line.
 */
export function quoteNested(arg: string): string {
  return quoteArgument(arg).replaceAll("\n", `'"\\n"'`).replaceAll("\r", `'"\\r"'`);
}

/**
 * Commands as one command string for tmux to parse (an `if-shell` branch): each argument
 * {@link quoteNested}, so the string holds no newline.
 */
export function nestedCommands(commands: readonly (readonly string[])[]): string {
  return commands.map((c) => c.map(quoteNested).join(" ")).join(" ; ");
}

/**
 * The control-mode line for an argv, or {@link ControlUnavailable} when it cannot be one: a
 * newline ends a control line, and a command name must be a plain word (a quoted `NAME=value`
 * in command position would be an environment assignment to tmux's parser). An argument
 * holding a NUL character is refused outright (`NulArgument`, tmux_error.ts), not left to a
 * tmux process: tmux would cut the line there and run what comes before, and no process can
 * be started with one either.
 */
export function controlLine(args: readonly string[]): string {
  refuseNul(args);
  const commands = argvCommands(args);
  if (commands.length === 0) throw new ControlUnavailable("no command to send");
  for (const command of commands) {
    if (!/^[a-z][a-z-]*$/.test(command[0])) {
      throw new ControlUnavailable(`"${command[0]}" is not a tmux command name`);
    }
    if (command.some((a) => a.includes("\n"))) {
      throw new ControlUnavailable("an argument holds a newline, which ends a control line");
    }
  }
  return commands.map((c) => c.map(quoteArgument).join(" ")).join(" ; ");
}
