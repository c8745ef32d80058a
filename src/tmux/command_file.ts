/**
 * A command line too long for a tmux process's arguments, given to it as a file on its stdin
 * instead (`tmux source-file -`).
 *
 * A tmux client sends its whole command, every argument with its terminating NUL, to its server
 * in one message: tmux 3.3a takes at most 16 364 bytes (its 16 KB message, less the message's
 * header and the argument count) and refuses more before anything runs ("command too long").
 * A step this server has tmux check in the same step (that the server is still the one the call
 * read, that nobody watches the pane, that window-size is safe to create under) carries its act
 * as the text of an `if-shell` branch, quoted once more for each check: a single quote grows to
 * four bytes a layer, a newline to six. So an act well inside that limit (a window's 8 KB
 * command full of quotes) may not fit once checked.
 *
 * A file tmux reads has no such limit: the same commands, each argument quoted the way tmux's
 * parser reads an `if-shell` branch, run as the same one step, print the same output and fail
 * with the same complaints. Only a line past the limit goes this way; every other call keeps its
 * arguments.
 *
 * @module
 */

import { argvCommands, nestedCommands } from "./command_line.ts";

/**
 * Most bytes of arguments (each with its NUL, as tmux counts them) a tmux process is given:
 * tmux 3.3a takes 16 364 (16 384 for a message, less its 16-byte header and 4 for the count);
 * the margin leaves room for a tmux whose message header is larger, since a longer line costs
 * nothing but going by stdin.
 */
export const MAX_ARGV_BYTES = 16_000;

/**
 * The commands tmux 3.3a starts a server for (its flag `CMD_STARTSERVER`), by name and alias:
 * a tmux process given `source-file` starts none, so a line holding one starts the server first.
 */
const START_SERVER = new Set([
  "attach-session",
  "attach",
  "list-commands",
  "lscm",
  "list-keys",
  "lsk",
  "new-session",
  "new",
  "start-server",
  "start",
]);

/** Bytes tmux counts for `args`: each argument's UTF-8 and its NUL. */
export function argvBytes(args: readonly string[]): number {
  const encoder = new TextEncoder();
  let total = 0;
  for (const arg of args) total += encoder.encode(arg).length + 1;
  return total;
}

/**
 * The arguments and stdin that run `args` (a command line as argv, the address flags apart) as
 * a file tmux reads from its stdin, or null when `args` fit in a tmux process's message
 * ({@link MAX_ARGV_BYTES}) or `stdin` is taken already (a load-buffer's text): then `args` run
 * as they are. The file is one line, each argument single-quoted and a newline travelling as
 * `"\n"`, so tmux's parser expands nothing in it (no `$VAR`, no `~`, no `%if`); tmux splits
 * `args` into commands as it splits arguments (at a final `;`) first.
 */
export function asCommandFile(
  args: readonly string[],
  stdin?: Uint8Array,
): { args: string[]; stdin: Uint8Array } | null {
  if (stdin !== undefined || argvBytes(args) <= MAX_ARGV_BYTES) return null;
  const commands = argvCommands(args);
  if (commands.length === 0) return null;
  const line = nestedCommands(commands);
  const starts = commands.some((c) => START_SERVER.has(c[0]));
  return {
    args: [...(starts ? ["start-server", ";"] : []), "source-file", "-"],
    stdin: new TextEncoder().encode(`${line}\n`),
  };
}

/**
 * The answer of a tmux process given a command file ({@link asCommandFile}), as the same
 * commands given as arguments answer. A command that fails complains on stderr either way, in
 * the same words; but a line tmux's parser refuses (an unknown command or flag) runs nothing
 * either way, and for a file tmux prints the complaint on stdout, naming the file and line
 * (`-:1: unknown command: x`), where for arguments it prints it on stderr, bare.
 */
export function argvAnswer<T extends { code: number; stdout: Uint8Array; stderr: string }>(
  result: T,
): T {
  if (result.code === 0 || result.stderr.trim() !== "") return result;
  const out = new TextDecoder().decode(result.stdout);
  if (!PARSE_COMPLAINT.test(out)) return result;
  return { ...result, stdout: new Uint8Array(), stderr: out.replace(/^-:\d+: /gm, "") };
}

/** How tmux's parser begins a complaint about the file on stdin: its name `-` and the line. */
const PARSE_COMPLAINT = /^-:\d+: /;
