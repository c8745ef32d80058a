/**
 * The line run_command types at a shell's prompt: the command turned into `printf %b` units, so
 * the typed line holds none of the command's own quotes, `!`, `$` or newlines, wrapped in the
 * words that print its begin and end markers (job_markers.ts reads them back), and built up in a shell
 * variable a line at a time when it is too long for one line editor's line.
 *
 * @module
 */

import { markerWords } from "./job_markers.ts";

/** Bytes that travel as themselves in the typed command; everything else as `\0ooo`. */
const PLAIN = /^[A-Za-z0-9 ,._+:@%/=-]$/;

/**
 * The command as units of a quoted word the shell decodes: plain ASCII as itself, every other
 * byte as an octal escape, `\0ooo` for `printf %b` or `\ooo` for `$'...'` (`ansi`). The typed
 * line then holds no quote, `!` (bash history expansion), `#`, `$`, backtick, tab (completion)
 * or newline of the command's own, whatever the command is.
 */
function escapedUnits(command: string, ansi: boolean): string[] {
  const units: string[] = [];
  const prefix = ansi ? "\\" : "\\0";
  for (const byte of new TextEncoder().encode(command)) {
    const ch = String.fromCharCode(byte);
    units.push(byte < 0x80 && PLAIN.test(ch) ? ch : prefix + byte.toString(8).padStart(3, "0"));
  }
  return units;
}

/**
 * Longest line typed at once: busybox sh's line editor keeps about 1 023 bytes of a line and
 * drops the rest without a word (a shell without line editing reads at most 4 095).
 */
const MAX_TYPED_LINE = 960;
/** Longest piece of a long command a line holds (with its assignment: under MAX_TYPED_LINE). */
const MAX_PIECE = 900;

/**
 * What is typed at the prompt. The markers are printed by printf from two separate words, so
 * the echo of this very line never contains them; only running it does. A leading space keeps
 * it out of history in bash (HISTCONTROL=ignorespace/ignoreboth) and zsh (HIST_IGNORE_SPACE).
 *
 * The line starts no process the command does not: a command of plain bytes only is typed as
 * itself; otherwise zsh decodes it as a `$'...'` word, bash with `printf -v` into a variable
 * (removed after the end marker), and other shells by `$(printf %b ...)`, whose subshell POSIX
 * offers no way around. zsh's TRAPDEBUG runs in that subshell too, and what it prints there
 * (a title escape) became part of the command; and `printf -v` came only with zsh 5.3 (an
 * older zsh prints `-v`, and would eval whatever the variable still held).
 */
export function typedCommand(command: string, nonce: string, shell = "sh"): string {
  const zsh = shell === "zsh";
  const units = escapedUnits(command, zsh);
  // A syntax error inside a plain eval aborts the whole typed line in an interactive POSIX
  // shell, end marker included; `command eval` keeps the line going (POSIX: command strips a
  // special builtin's power to abort), and so does `builtin eval` in bash (posix mode too) and
  // zsh (whose `command` runs only external programs).
  // Words typed quoted (`\eval`) are never taken for an alias of the person's shell (an alias
  // `command=echo` would print the command and report status 0); a backslash does not stop a
  // function of that name, `builtin` does (a function `command` made a command that never ran
  // read as status 0, one named `printf` one that ran as never started). sh has no `builtin`.
  const bash = shell === "bash";
  const builtin = bash || zsh ? "\\builtin " : "\\";
  const evaluate = bash || zsh ? `${builtin}eval` : "\\command eval";
  const printf = `${builtin}printf`;
  const markers = markerWords(nonce, printf);
  const payload = units.join("");
  const plain = payload.length === units.length;
  /** Units as one quoted word: in zsh one the shell decodes as it reads it. */
  const quoted = (text: string) => zsh && !plain ? `$'${text}'` : `'${text}'`;
  /**
   * The whole line, given the command as one shell word. With xtrace on (`set -x`, zsh's
   * `setopt xtrace`) the shell traces every word it runs to stderr, ours too: they go in
   * groups whose stderr is /dev/null (their own errors with them), the begin marker and the
   * decoding before the command, the end marker and the clean-up after it (`$?` is still the
   * command's status at the start of a group). The command itself stays outside them: its own
   * stderr and trace are the person's.
   */
  const run = (word: string, tail: string) => {
    const [decode, command] = plain || zsh
      ? ["", word]
      : bash
      ? [`; ${printf} -v ${VARIABLE} %b ${word}`, `"$${VARIABLE}"`]
      : ["", `"$(${quiet(`${printf} %b ${word}`)})"`];
    return ` ${quiet(markers.begin + decode)}; ${evaluate} ${command}; ` +
      quiet(markers.end + tail);
  };
  const line = run(quoted(payload), bash && !plain ? `; unset ${VARIABLE}` : "");
  if (line.length + 2 <= MAX_TYPED_LINE) return line;
  // Too long for one line: build it up in a variable, a line at a time (untraced too).
  const lines = [` ${quiet(`${VARIABLE}=''`)}`];
  const add = (piece: string) =>
    lines.push(` ${quiet(`${VARIABLE}="$${VARIABLE}"${quoted(piece)}`)}`);
  let chunk = "";
  for (const unit of units) {
    if (chunk.length + unit.length > MAX_PIECE) {
      add(chunk);
      chunk = "";
    }
    chunk += unit;
  }
  if (chunk !== "") add(chunk);
  lines.push(run(`"$${VARIABLE}"`, `; unset ${VARIABLE}`));
  return lines.join("\n");
}

/** Shell words run with their stderr (and so their xtrace) going to /dev/null. */
function quiet(words: string): string {
  return `{ ${words}; } 2>/dev/null`;
}

/** The shell variable a long or (in bash) decoded command is held in while it runs. */
const VARIABLE = "__tmux_mcp_cmd";
