/**
 * The numbers in a tmux format that tmux 3.3a takes without a bound, checked before a format
 * of a client's reaches tmux.
 *
 * Two modifiers of tmux 3.3a read a number and build a string that long, at any size from
 * -2^31 to 2^31-1: `p` pads to that many cells, and `e|op|f|N` prints a number with N
 * decimals. A pad of -2^31 is negated into itself, tmux builds a string of 2^31 cells and
 * exits, every session with it; a pad of 2^31-1 holds every session for half a minute, each
 * time it is expanded; a precision of 2^31-1 keeps it busy for minutes and then it exits
 * (measured on tmux 3.3a; its development line bounds both). The third, `=`, only ever
 * shortens what it trims, and takes any number unharmed (measured too), so it is left alone:
 * tmux's own default status line trims to `#{status-left-length}`. A format is expanded where
 * no one asked for it, too: a window's `automatic-rename-format` on tmux's own timer, a status
 * line for each client, a user option wherever `#{E:...}` names it.
 *
 * So a pad width or precision must be a plain number from -{@link FORMAT_NUMBER_MAXIMUM} to
 * {@link FORMAT_NUMBER_MAXIMUM}: every width a screen has, and far more precision than a
 * double holds. One that tmux would learn only by expanding something (`#{p#{@w}:x}`) is
 * refused as well, since no check here could tell what it becomes.
 *
 * The modifiers are read the way tmux 3.3a reads them (`format_build_modifiers` and
 * `format_skip` in format.c): after every `#{`, whether or not tmux would take the text after
 * it as modifiers, and inside arguments and branches alike, so that a reading that differs
 * from tmux's refuses more, never less.
 *
 * @module
 */

/** The largest pad width or precision a format may ask of tmux. */
export const FORMAT_NUMBER_MAXIMUM = 10_000;

/** Modifiers tmux 3.3a takes alone (no arguments), followed by `:` or `;`. */
const BARE = "labcdnwETSWP<>";

/** Comparison and logic modifiers of two characters. */
const OPERATORS = ["||", "&&", "!=", "==", "<=", ">="];

/** Modifiers that may take arguments. */
const WITH_ARGUMENTS = "mCNst=peq";

/** What each number-taking modifier does with its number, and which argument holds it. */
const NUMBERS: Readonly<Record<string, { index: number; what: string }>> = {
  p: { index: 0, what: "a pad width" },
  e: { index: 2, what: "a precision" },
};

/** Steps of reading after which a format is refused as too intricate to check. */
const MAX_STEPS = 10_000_000;

/** A number tmux would read as is: optional sign, digits (strtonum also takes leading blanks). */
const PLAIN = /^[ \t]*[+-]?\d+$/;

class TooIntricate extends Error {}

/** `ispunct` of the C locale, as tmux asks it about the character after a modifier. */
function isPunct(char: string | undefined): boolean {
  if (char === undefined || char.length !== 1) return false;
  const code = char.charCodeAt(0);
  return (code >= 33 && code <= 47) || (code >= 58 && code <= 64) ||
    (code >= 91 && code <= 96) || (code >= 123 && code <= 126);
}

/** Where a modifier ends (tmux's `format_is_end`). */
function isEnd(char: string | undefined): boolean {
  return char === ":" || char === ";";
}

/**
 * Reads a format's blocks and their modifiers, counting its steps against one budget. Like
 * tmux, it reads a block's modifiers within the block only: text from `limit` on is not there
 * (a C string's end).
 */
class Reader {
  #steps = 0;

  constructor(private readonly text: string) {}

  /** The character at `i`, or undefined at or past `limit`. */
  #at(i: number, limit: number): string | undefined {
    return i < limit ? this.text[i] : undefined;
  }

  /**
   * The index of the first of `ends` at or after `from` and before `limit` outside any
   * `#{...}`, `#` escaping the character after it (tmux's `format_skip`), or -1 when there is
   * none.
   */
  skip(from: number, ends: string, limit: number): number {
    let depth = 0;
    for (let i = from; i < limit; i++) {
      if (++this.#steps > MAX_STEPS) throw new TooIntricate();
      const char = this.text[i];
      const next = this.#at(i + 1, limit);
      if (char === "#" && next === "{") depth++;
      if (char === "#" && next !== undefined && ",#{}:".includes(next)) {
        i++;
        continue;
      }
      if (char === "}") depth--;
      if (ends.includes(char) && depth === 0) return i;
    }
    return -1;
  }

  /**
   * The modifiers with arguments of the block that opens at `start` (its `#{`), in order. The
   * block ends at its closing brace, as tmux finds it; one that never closes is read to the
   * end of the text (tmux leaves it as text, but appended to, or expanded again, it may close).
   */
  modifiers(start: number): { modifier: string; args: string[] }[] {
    const close = this.skip(start, "}", this.text.length);
    const limit = close === -1 ? this.text.length : close;
    const char = (i: number) => this.#at(i, limit);
    const found: { modifier: string; args: string[] }[] = [];
    let at = start + 2;
    while (at < limit && char(at) !== ":") {
      if (++this.#steps > MAX_STEPS) throw new TooIntricate();
      if (char(at) === ";") at++;
      const c = char(at);
      if (c !== undefined && BARE.includes(c) && isEnd(char(at + 1))) {
        at++;
        continue;
      }
      if (OPERATORS.includes(`${char(at)}${char(at + 1)}`) && isEnd(char(at + 2))) {
        at += 2;
        continue;
      }
      if (c === undefined || !WITH_ARGUMENTS.includes(c)) break;
      if (isEnd(char(at + 1))) {
        at++;
        continue;
      }
      const args: string[] = [];
      if (!isPunct(char(at + 1)) || char(at + 1) === "-") {
        // One argument, up to the next ":" or ";".
        const end = this.skip(at + 1, ":;", limit);
        if (end === -1) break;
        args.push(this.text.slice(at + 1, end));
        found.push({ modifier: c, args });
        at = end;
        continue;
      }
      // Arguments between a character of the caller's choice (p|5|, s/a/b/), the last one
      // also ended by ":" or ";" (e|+|f|2:).
      const wrap = char(at + 1) as string;
      const ends = `${wrap};:`;
      at++;
      do {
        if (char(at) === wrap && isEnd(char(at + 1))) {
          at++;
          break;
        }
        const end = this.skip(at + 1, ends, limit);
        if (end === -1) break;
        at++;
        args.push(this.text.slice(at, end));
        at = end;
      } while (!isEnd(char(at)));
      found.push({ modifier: c, args });
    }
    return found;
  }
}

/** How a format shows in a message: its start, to the end of its modifiers at most. */
function shown(text: string, start: number): string {
  const colon = text.indexOf(":", start);
  const end = colon === -1 ? text.length : colon + 1;
  const piece = text.slice(start, Math.min(end, start + 60));
  return piece.length < end - start ? `${piece}...` : piece;
}

/** A number argument as a message shows it: whole when short. */
function shownNumber(arg: string): string {
  return arg.length > 40 ? `${arg.slice(0, 40)}...` : arg;
}

/**
 * Why `text`, read by tmux as a format, may not reach tmux 3.3a, or undefined when it may: a
 * pad width or precision that is not a plain number within ±{@link FORMAT_NUMBER_MAXIMUM}.
 */
export function formatNumberProblem(text: string): string | undefined {
  if (!text.includes("#{")) return undefined;
  const reader = new Reader(text);
  try {
    for (let start = text.indexOf("#{"); start !== -1; start = text.indexOf("#{", start + 1)) {
      for (const { modifier, args } of reader.modifiers(start)) {
        const number = NUMBERS[modifier];
        const arg = number === undefined ? undefined : args[number.index];
        if (number === undefined || arg === undefined || arg === "") continue;
        const where = shown(text, start);
        if (!PLAIN.test(arg)) {
          return `${where} asks for ${number.what} of ${shownNumber(arg)}, not a plain number: ` +
            "tmux 3.3a would expand it first and crashes or freezes on a large result, so it " +
            `must be a plain number from -${FORMAT_NUMBER_MAXIMUM} to ${FORMAT_NUMBER_MAXIMUM}`;
        }
        const value = Number(arg.trim());
        if (Math.abs(value) > FORMAT_NUMBER_MAXIMUM) {
          return `${where} asks for ${number.what} of ${shownNumber(arg.trim())}; tmux 3.3a ` +
            "crashes or freezes on such a number (it builds a string that long, and a pad of " +
            `-2147483648 ends the server), so it must be from -${FORMAT_NUMBER_MAXIMUM} to ` +
            `${FORMAT_NUMBER_MAXIMUM}`;
        }
      }
    }
  } catch (error) {
    if (!(error instanceof TooIntricate)) throw error;
    return "its #{...} nest too deeply to check the pad widths and precisions in them";
  }
  return undefined;
}
