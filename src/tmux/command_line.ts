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

/**
 * How many answers (`%begin … 1` blocks) a control line may bring, besides its sentinel's: the
 * check `ControlProtocol.send` makes on what it reads, so that a block nobody's command
 * framed cannot pass for one of ours. tmux 3.3a prints what a hook's `display-message -p`
 * writes bare, between blocks, to the control client used last; a hook that holds this
 * client's queue (`run-shell` in an `after-` hook: tmux writes the command's `%end` at once,
 * then waits) lets another hook print a whole forged block there, flags 1 and a number learnt
 * from a control client of its own, before the sentinel comes.
 *
 * Checked on real tmux 3.3a: each top-level command of the line answers once; a command that
 * fails ends the line (its `%error` is the last block), and a line tmux cannot parse answers
 * once, with an error. The commands an `if-shell` branch (or `run-shell -C`) runs answer as
 * the line's own (flags 1), nested ones too, after the `if-shell`'s own block; under `-b` they
 * come later as flags 0 (counted anyway: a bound only). Hooks run with this client answer with
 * flags 0 and are not counted. A file given to `source-file` is not seen here: no bound.
 */
export interface AnswerBlocks {
  /** Most blocks the line may answer with. */
  readonly most: number;
  /**
   * Whether the line runs no command text of its own (no `if-shell` branch): then every
   * command answers in order until one fails, and no block follows a failed one.
   */
  readonly exact: boolean;
}

/** Command names (and the prefixes tmux takes for them) that run command text they are given. */
function runsCommands(name: string): "text" | "file" | null {
  if (name === "if" || name === "run") return "text";
  if (name.length < 2) return null;
  if ("if-shell".startsWith(name) || "run-shell".startsWith(name)) return "text";
  if (name === "source" || "source-file".startsWith(name)) return "file";
  return null;
}

/**
 * A command string split into commands of words, as tmux's parser reads it closely enough to
 * count them, erring only towards more: `;` outside quotes ends a command, `'…'` is literal,
 * `"…"` takes backslash escapes, `\x` is `x`, `{ … }` is one word (its text, a command list),
 * and a newline ends a command (a `#` comment is read as words: more, never fewer).
 */
function parseCommands(text: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = "";
  let inWord = false;
  const endWord = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "'") {
      const j = text.indexOf("'", i + 1);
      word += text.slice(i + 1, j === -1 ? text.length : j);
      inWord = true;
      i = j === -1 ? text.length : j + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === "\\" && i + 1 < text.length) {
          const e = text[i + 1];
          word += e === "n" ? "\n" : e === "r" ? "\r" : e === "t" ? "\t" : e;
          i += 2;
        } else word += text[i++];
      }
      i++;
    } else if (c === "\\") {
      word += text[i + 1] ?? "";
      inWord = true;
      i += 2;
    } else if (c === "{" && !inWord) {
      const end = closingBrace(text, i);
      words.push(text.slice(i + 1, end));
      i = end + 1;
    } else if (c === ";" || c === "\n") {
      endCommand();
      i++;
    } else if (c === " " || c === "\t" || c === "\r") {
      endWord();
      i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  endCommand();
  return commands;
}

/** Where the `}` matching the `{` at `open` is (quotes skipped); the end when none. */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "'") {
      const j = text.indexOf("'", i + 1);
      i = j === -1 ? text.length : j;
    } else if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    } else if (c === "\\") i++;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return text.length;
}

/** Most blocks `commands` answer with, the command text they run counted (see AnswerBlocks). */
function mostBlocks(commands: readonly (readonly string[])[], depth: number): number {
  let most = 0;
  for (const [name, ...args] of commands) {
    most += 1;
    const runs = runsCommands(name);
    if (runs === "file" || (runs === "text" && depth > 8)) return Infinity;
    if (runs === "text") {
      // Whichever argument is a branch (one runs): the most any of them may answer.
      let branch = 0;
      for (const arg of args) branch = Math.max(branch, mostBlocks(parseCommands(arg), depth + 1));
      most += branch;
    }
  }
  return most;
}

/** The answers an argv sent as {@link controlLine} may bring (see {@link AnswerBlocks}). */
export function answerBlocks(args: readonly string[]): AnswerBlocks {
  const commands = argvCommands(args);
  return {
    most: mostBlocks(commands, 0),
    exact: commands.every(([name]) => runsCommands(name) === null),
  };
}
