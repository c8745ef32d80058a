/**
 * Reading `show-options` output back: values exactly ({@link unquoteOptionValue}), and a whole
 * listing only as far as tmux vouches for it ({@link readOptionListing}).
 *
 * tmux prints an option's value quoted, but its name raw, and takes any bytes in a user
 * option's name: a newline too (`set-option '@z\nstatus' off`, which any program in any pane
 * can run). `show-options` then prints a line `status off` that is no option at all, and a
 * listing cannot be split into options by its lines alone.
 *
 * @module
 */

import { decodeBytes } from "../tmux/format.ts";
import { literalArg } from "./arguments.ts";

/**
 * Undoes the quoting `show-options` applies to a string value (tmux's `args_escape`): `''`
 * for empty, `"..."` or `'...'` around text with spaces or special characters, a single
 * escaped character (`\#`), and C-style / octal escapes inside (`\n`, `\t`, `\\`, `\"`,
 * `\$`, `\001`). Octal escapes are bytes; the bytes are decoded as UTF-8 at the end.
 */
export function unquoteOptionValue(raw: string): string {
  if (raw === "''") return "";
  const quoted = raw.length >= 2 &&
    ((raw.startsWith('"') && raw.endsWith('"')) || (raw.startsWith("'") && raw.endsWith("'")));
  return unescapeC(quoted ? raw.slice(1, -1) : raw);
}

const C_ESCAPES: Record<string, number> = {
  n: 0x0a,
  t: 0x09,
  r: 0x0d,
  b: 0x08,
  a: 0x07,
  v: 0x0b,
  f: 0x0c,
  s: 0x20,
  e: 0x1b,
  E: 0x1b,
};

const encoder = new TextEncoder();

function unescapeC(text: string): string {
  const bytes: number[] = [];
  const push = (s: string) => bytes.push(...encoder.encode(s));
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c !== "\\" || i + 1 >= text.length) {
      const cp = text.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      push(ch);
      i += ch.length;
      continue;
    }
    const next = text[i + 1];
    if (/[0-7]/.test(next)) {
      let digits = "";
      let j = i + 1;
      while (j < text.length && digits.length < 3 && /[0-7]/.test(text[j])) digits += text[j++];
      bytes.push(parseInt(digits, 8) & 0xff);
      i = j;
    } else if (next in C_ESCAPES) {
      bytes.push(C_ESCAPES[next]);
      i += 2;
    } else {
      const cp = text.codePointAt(i + 1)!;
      const ch = String.fromCodePoint(cp);
      push(ch);
      i += 1 + ch.length;
    }
  }
  return decodeBytes(new Uint8Array(bytes));
}

/** One line of `show-options` / `show-hooks` output, split into its parts. */
export interface OptionLine {
  readonly name: string;
  readonly index: number | null;
  /** Whether `-A` marked it inherited (`name*`). */
  readonly inherited: boolean;
  /** The value as printed (still quoted), or null when the line has none. */
  readonly raw: string | null;
}

/**
 * Splits `name[3]* value` lines whose names hold no space or newline (built-in options, or
 * options read by a name of that kind): the value is the rest of the line.
 */
export function parseOptionLines(text: string): OptionLine[] {
  const lines: OptionLine[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const space = line.indexOf(" ");
    const head = space === -1 ? line : line.slice(0, space);
    const raw = space === -1 ? null : line.slice(space + 1);
    const m = /^(.+?)(?:\[(\d+)\])?(\*)?$/.exec(head);
    if (!m) continue;
    lines.push({
      name: m[1],
      index: m[2] === undefined ? null : Number(m[2]),
      inherited: m[3] === "*",
      raw,
    });
  }
  return lines;
}

/** A listing's options, and what of it tmux would not vouch for. */
export interface OptionListing {
  readonly lines: OptionLine[];
  /** Lines of the listing left out: no option tmux confirms could be told from them. */
  readonly unvouched: number;
}

/** Most questions one listing asks tmux past one for each of its user options. */
const MAX_EXTRA_ASKED = 64;

/**
 * The options a `show-options` listing holds, each one tmux vouches for: `argv` listed them
 * (no name given) and printed `text`; `read` runs a command for tmux's answer.
 *
 * tmux prints the user options first, sorted by name, then the built-in ones, so once the
 * user options' lines are told apart, every line after them is a built-in option's own. A user
 * option is told by asking tmux for it by name (`argv -q -- NAME` prints that option alone):
 * the lines from an `@` on, read as the shortest name that tmux answers with exactly those
 * lines. That reading is the right one: a shorter name tmux also knew would begin the right
 * one, so tmux sorted it earlier and it was taken there, and a name is taken only once. Where
 * no name fits (a race with a change, or past {@link MAX_EXTRA_ASKED} questions more than the
 * listing has user options), the rest of the listing is left out and counted: past that point
 * no line can be told from a name's part.
 */
export async function readOptionListing(
  read: (argv: string[]) => Promise<Uint8Array>,
  argv: readonly string[],
  text: string,
): Promise<OptionListing> {
  const rows = text.split("\n");
  if (rows.at(-1) === "") rows.pop();
  const starts = rows.filter((row) => row.startsWith("@"));
  // With no user option every line is an option's own.
  if (starts.length === 0) return { lines: parseOptionLines(text), unvouched: 0 };
  const answers = new Map<string, Promise<string>>();
  const ask = (name: string): Promise<string> | null => {
    let answer = answers.get(name);
    if (answer === undefined) {
      if (answers.size >= starts.length + MAX_EXTRA_ASKED) return null;
      answer = read([...argv, "-q", "--", literalArg(name)]).then(decodeBytes);
      // Asked ahead, an answer may fail before it is awaited (or never be): whoever awaits
      // it still hears the failure.
      answer.catch(() => {});
      answers.set(name, answer);
    }
    return answer;
  };
  // Most names hold no space or newline: each is asked for at once, all together.
  for (const row of starts) if (row.includes(" ")) ask(row.slice(0, row.indexOf(" ")));
  const lines: OptionLine[] = [];
  const taken = new Set<string>();
  let at = 0;
  /** The user option printed from row `at` on, and its number of rows; null if none fits. */
  const userOption = async (): Promise<{ line: OptionLine; rows: number } | null> => {
    let before = "";
    for (let last = at; last < rows.length; before += `${rows[last++]}\n`) {
      const row = rows[last];
      for (let space = row.indexOf(" "); space !== -1; space = row.indexOf(" ", space + 1)) {
        const name = before + row.slice(0, space);
        if (taken.has(name)) continue;
        const answer = ask(name);
        if (answer === null) return null;
        if (await answer !== `${before}${row}\n`) continue;
        const line = { name, index: null, inherited: false, raw: row.slice(space + 1) };
        return { line, rows: last - at + 1 };
      }
    }
    return null;
  };
  while (at < rows.length && rows[at].startsWith("@")) {
    const found = await userOption();
    if (found === null) break;
    lines.push(found.line);
    taken.add(found.line.name);
    at += found.rows;
  }
  const rest = rows.slice(at);
  // Built-in options never start with `@`: one there means the user options were not all told.
  if (rest.some((row) => row.startsWith("@"))) return { lines, unvouched: rest.length };
  return { lines: [...lines, ...parseOptionLines(rest.join("\n"))], unvouched: 0 };
}
