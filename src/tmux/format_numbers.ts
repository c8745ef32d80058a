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
 * double holds; or, signed or not, one of the sizes tmux itself keeps small
 * ({@link BOUNDED_SIZES}: `#{p-#{client_width}:─}` draws a rule as wide as the client). Any
 * other number tmux would learn only by expanding something (`#{p#{@w}:x}`) is refused: a
 * user option may be set to -2^31 at any time after the check.
 *
 * Small numbers can add up to as much. A loop (`S:`, `W:`, `P:`) repeats its format for each
 * session, window or pane, and one inside a loop of the same or a wider kind for each item of
 * both: 24 `#{S:` nested over two sessions build 2^24 characters, which held tmux 3.3a for
 * 9.5 s at each expansion (measured), an automatic-rename-format of them every few seconds
 * with no one asking. Substitutions (`s/x/xx/`) and quotes (`q:`) lengthen what they hold, and
 * nested multiply too. `E:` and `T:` expand a value again, which may be a user option that
 * does the same: ten tiny options, each expanding the one before twice, make 2^10, thirty
 * 2^30. And pads that are each small add up, a value appended to a piece at a time. So only
 * S: around W: around P: nests (bounded by the panes there are), what encloses a part may
 * multiply it by {@link GROWTH_MAXIMUM} at most, pads and precisions total
 * {@link PAD_TOTAL_MAXIMUM} cells at most, and a stored value expands another by its name once
 * at most, where nothing repeats it (one branch of a conditional, tmux expanding one only): a
 * chain of values then grows with its length, not as a power of it. A status line's parts
 * (status-left, window-status-format...) may expand several other values, each once, and its
 * format more often, as tmux's own does in its window list; no value may expand one of those
 * in turn ({@link FormatUse}). What `E:` and `T:` expand is an option, named: never a format
 * variable, several of which hold text a pane's program sets (its title, its directory),
 * and a title of nested `#{S:` would freeze tmux each time. A substitution's replacement a
 * format makes grows with the subject's length times its own, and a regular expression's
 * back-reference (`\1`) makes glibc's matcher backtrack for seconds on a short subject: both
 * are refused. A replacement written out is held to {@link REPLACEMENT_MAXIMUM} characters,
 * quotes to {@link QUOTE_NESTING_MAXIMUM} deep, and growth to a small multiple, as the subject
 * may be a value of 64 KiB (set_option's bound) or a title a program set. Counted repetitions
 * in a pattern (`(a{1,200}){1,200}`) make glibc compile a matcher of their product's size,
 * 3.9 s for that one, at each expansion: their bounds and product are held small
 * ({@link patternCopies}), and a pattern's length too. And every `E:` and `T:` may expand a
 * value of {@link PAD_TOTAL_MAXIMUM} cells, so a format holds {@link EXPANSION_MAXIMUM} at most
 * on any path, and a name's index is read as tmux reads it (`@a[3]` is all of `@a`).
 *
 * The modifiers are read the way tmux 3.3a reads them (`format_build_modifiers` and
 * `format_skip` in format.c), inside arguments and branches alike, so that a reading that
 * differs from tmux's refuses more, never less. Which `#{` open a block depends on how often
 * tmux expands the text ({@link FormatUse}): each expansion turns `##` into `#`, so after an
 * even run of `#` a `{` is text to that expansion (`##{p99999:x}` shows as `#{p99999:x}`),
 * after an odd run (`###{`) it opens a block; but the text a `#{E:...}` or `#{T:...}` makes is
 * expanded again, and so is what a `#(...)` command hands to a `tmux` it runs, so there and in
 * stored text every `#{` counts.
 *
 * @module
 */

/** The largest pad width or precision a format may ask of tmux. */
export const FORMAT_NUMBER_MAXIMUM = 10_000;

/**
 * The format variables and options a pad width or precision may be, alone in its argument and
 * signed or not (`p-#{client_width}`): tmux 3.3a keeps each within 65535 however it is set,
 * and pads of ±65535 cells are as quick as any (measured). Only tmux's own names: a user
 * option (`@name`) may be set to any number after the check, by anyone.
 */
export const BOUNDED_SIZES: readonly string[] = [
  // A terminal's columns and rows, 16 bits from the kernel (TIOCGWINSZ); a control client's,
  // which refresh-client -C holds to 10000 a side.
  "client_width",
  "client_height",
  // tmux clamps every size it gives a window to 10000 a side (WINDOW_MAXIMUM), and
  // resize-window refuses more.
  "window_width",
  "window_height",
  // A pane lies within its window.
  "pane_width",
  "pane_height",
  // Options tmux takes from 0 to 32767 only ("value is too large").
  "status-left-length",
  "status-right-length",
];

/** A pad width or precision that is one bounded size, signed or not, as tmux would read it. */
const BOUNDED = new RegExp(`^[ \\t]*[+-]?#\\{(?:${BOUNDED_SIZES.join("|")})\\}$`);

/**
 * How often tmux may expand a text, which decides what an escaped `#{` is.
 *
 * - `"expanded once"`: tmux expands it once and the result goes no further
 *   (`display-message -p`): after an even run of `#`, `{` is text.
 * - `"stored"`: an option's value or a hook's command, read later by whatever reads it, any
 *   number of times: `#{E:@x}` inside the branch of another `#{E:...}` expands the value
 *   twice, and a hook's command line is parsed first (`$X##{p5:x}` with X set to `#` pads;
 *   both measured on tmux 3.3a). Every `#{` counts.
 * - `"drawn part"`: a part of the status line tmux draws ({@link DRAWN_PARTS}: `status-left`,
 *   `status-right`, `window-status-format`, `window-status-current-format`), stored as above:
 *   no value but the status line's own format may expand it again, so it may expand several
 *   other values, each named once (a theme's `#{E:@theme_a}#{E:@theme_b}`).
 * - `"drawn"`: a status line's format (`status-format[N]`), stored as above: tmux draws it,
 *   and no value may expand it again (`#{E:status-format[0]}` is refused in any stored
 *   value), so it alone may expand other values, its parts among them, as often as tmux's own
 *   status line does.
 */
export type FormatUse = "expanded once" | "stored" | "drawn part" | "drawn";

/**
 * The parts of the status line tmux 3.3a draws, whose values may expand several other values
 * ({@link FormatUse} `"drawn part"`): tmux's own status-format[0] expands each.
 */
export const DRAWN_PARTS: ReadonlySet<string> = new Set([
  "status-left",
  "status-right",
  "window-status-format",
  "window-status-current-format",
]);

/**
 * How tmux expands the value of the option `name` (an array's item too): a status line's
 * format and its parts are drawn ({@link FormatUse}), any other value is stored.
 */
export function formatUseOf(name: string): FormatUse {
  const base = baseName(name);
  if (base === "status-format") return "drawn";
  return DRAWN_PARTS.has(base) ? "drawn part" : "stored";
}

/**
 * The names of tmux 3.3a's own options, server, session, window and pane (`show-options -s`,
 * `-g`, `-gw`, `-gp`). tmux looks a name after `E:` or `T:` up among the options first, and
 * only when none has it among the format variables, several of which hold text a pane's
 * program sets: its title (`pane_title`, by ESC ]2), its directory (`pane_current_path`, by
 * OSC 7), its command, its window's name. Expanded as a format, a title of nested `#{S:` held
 * every command of the person for seconds; so `E:` and `T:` may name only these and user
 * options (`@name`).
 */
export const TMUX_OPTIONS: ReadonlySet<string> = new Set([
  "activity-action",
  "aggressive-resize",
  "allow-passthrough",
  "allow-rename",
  "alternate-screen",
  "assume-paste-time",
  "automatic-rename",
  "automatic-rename-format",
  "backspace",
  "base-index",
  "bell-action",
  "buffer-limit",
  "clock-mode-colour",
  "clock-mode-style",
  "command-alias",
  "copy-command",
  "copy-mode-current-match-style",
  "copy-mode-mark-style",
  "copy-mode-match-style",
  "cursor-colour",
  "cursor-style",
  "default-command",
  "default-shell",
  "default-size",
  "default-terminal",
  "destroy-unattached",
  "detach-on-destroy",
  "display-panes-active-colour",
  "display-panes-colour",
  "display-panes-time",
  "display-time",
  "editor",
  "escape-time",
  "exit-empty",
  "exit-unattached",
  "extended-keys",
  "fill-character",
  "focus-events",
  "history-file",
  "history-limit",
  "key-table",
  "lock-after-time",
  "lock-command",
  "main-pane-height",
  "main-pane-width",
  "message-command-style",
  "message-limit",
  "message-style",
  "mode-keys",
  "mode-style",
  "monitor-activity",
  "monitor-bell",
  "monitor-silence",
  "mouse",
  "other-pane-height",
  "other-pane-width",
  "pane-active-border-style",
  "pane-base-index",
  "pane-border-format",
  "pane-border-indicators",
  "pane-border-lines",
  "pane-border-status",
  "pane-border-style",
  "pane-colours",
  "popup-border-lines",
  "popup-border-style",
  "popup-style",
  "prefix",
  "prefix2",
  "prompt-history-limit",
  "remain-on-exit",
  "remain-on-exit-format",
  "renumber-windows",
  "repeat-time",
  "scroll-on-clear",
  "set-clipboard",
  "set-titles",
  "set-titles-string",
  "silence-action",
  "status",
  "status-bg",
  "status-fg",
  "status-format",
  "status-interval",
  "status-justify",
  "status-keys",
  "status-left",
  "status-left-length",
  "status-left-style",
  "status-position",
  "status-right",
  "status-right-length",
  "status-right-style",
  "status-style",
  "synchronize-panes",
  "terminal-features",
  "terminal-overrides",
  "update-environment",
  "user-keys",
  "visual-activity",
  "visual-bell",
  "visual-silence",
  "window-active-style",
  "window-size",
  "window-status-activity-style",
  "window-status-bell-style",
  "window-status-current-format",
  "window-status-current-style",
  "window-status-format",
  "window-status-last-style",
  "window-status-separator",
  "window-status-style",
  "window-style",
  "word-separators",
  "wrap-search",
  "xterm-keys",
]);

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

/** A block as {@link Reader.block} reads it. */
interface Block {
  readonly modifiers: { modifier: string; args: string[] }[];
  /** Where the block ends: its closing brace, or the end of the text. */
  readonly end: number;
  /**
   * Whether every `#{` in it counts, escaped or not: tmux expands what an `E` or `T` modifier
   * makes once more, and splits arguments wrapped in `#` where it may cut a run of `#`.
   */
  readonly everyBrace: boolean;
  /** What follows its modifiers' ":" (a name, or a format), or undefined when none do. */
  readonly copy: string | undefined;
}

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
   * The block that opens at `start` (its `#{`): its modifiers with arguments, in order; where
   * it ends, at its closing brace as tmux finds it (one that never closes is read to the end
   * of the text: tmux leaves it as text, but appended to, or expanded again, it may close);
   * and whether every `#{` inside it counts ({@link Block}).
   */
  block(start: number): Block {
    const close = this.skip(start, "}", this.text.length);
    const limit = close === -1 ? this.text.length : close;
    const char = (i: number) => this.#at(i, limit);
    const found: { modifier: string; args: string[] }[] = [];
    let everyBrace = false;
    let at = start + 2;
    while (at < limit && char(at) !== ":") {
      if (++this.#steps > MAX_STEPS) throw new TooIntricate();
      if (char(at) === ";") at++;
      const c = char(at);
      if (c !== undefined && BARE.includes(c) && isEnd(char(at + 1))) {
        if (c === "E" || c === "T") everyBrace = true;
        found.push({ modifier: c, args: [] });
        at++;
        continue;
      }
      if (OPERATORS.includes(`${char(at)}${char(at + 1)}`) && isEnd(char(at + 2))) {
        at += 2;
        continue;
      }
      if (c === undefined || !WITH_ARGUMENTS.includes(c)) break;
      if (isEnd(char(at + 1))) {
        found.push({ modifier: c, args: [] });
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
      if (wrap === "#") everyBrace = true;
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
    const copy = found.length > 0 && char(at) === ":" ? this.text.slice(at + 1, limit) : undefined;
    return { modifiers: found, end: limit, everyBrace, copy };
  }

  /**
   * Where the shell command of a `#(` at `start` ends, as tmux finds it (counting parentheses,
   * no escapes), or the end of the text when it never does.
   */
  jobEnd(start: number): number {
    let depth = 1;
    for (let i = start + 2; i < this.text.length; i++) {
      if (++this.#steps > MAX_STEPS) throw new TooIntricate();
      if (this.text[i] === "(") depth++;
      if (this.text[i] === ")" && --depth === 0) return i;
    }
    return this.text.length;
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

/** How many `#` there are in a row ending at `at`. */
function hashesBefore(text: string, at: number): number {
  let n = 0;
  while (at - n >= 0 && text[at - n] === "#") n++;
  return n;
}

/** What a refusal adds when the `#{` it names is escaped for one expansion only. */
function escapedNote(use: FormatUse): string {
  return use !== "expanded once"
    ? " (doubling the # keeps it text for one expansion only, and tmux may expand a stored " +
      "value more than once)"
    : " (doubling the # keeps it text for one expansion only, and tmux reads this part " +
      "again: inside E:, T:, #(...) or arguments wrapped in #)";
}

/** Why one pad width or precision may not reach tmux, or undefined when it may. */
function numberProblem(where: string, what: string, arg: string): string | undefined {
  if (BOUNDED.test(arg)) return undefined;
  if (!PLAIN.test(arg)) {
    return `${where} asks for ${what} of ${shownNumber(arg)}, not a plain number nor a size ` +
      "tmux bounds itself: tmux 3.3a would expand it first and crashes or freezes on a large " +
      "result (a user option may be set to any number later), so use a literal from " +
      `-${FORMAT_NUMBER_MAXIMUM} to ${FORMAT_NUMBER_MAXIMUM} or, signed or not, one of ` +
      BOUNDED_SIZES.map((name) => `#{${name}}`).join(", ");
  }
  const value = Number(arg.trim());
  if (Math.abs(value) > FORMAT_NUMBER_MAXIMUM) {
    return `${where} asks for ${what} of ${shownNumber(arg.trim())}; tmux 3.3a ` +
      "crashes or freezes on such a number (it builds a string that long, and a pad of " +
      `-2147483648 ends the server), so it must be from -${FORMAT_NUMBER_MAXIMUM} to ` +
      `${FORMAT_NUMBER_MAXIMUM}`;
  }
  return undefined;
}

/** The loops of tmux 3.3a, widest first: sessions, a session's windows, a window's panes. */
const LOOPS: Readonly<Record<string, { rank: number; over: string }>> = {
  S: { rank: 0, over: "sessions" },
  W: { rank: 1, over: "windows" },
  P: { rank: 2, over: "panes" },
};

/**
 * How many items a loop is counted as: the sessions, windows or panes it repeats its format
 * for. `S:` around `W:` around `P:` visits each pane once, so a loop inside a wider one counts
 * as one more item of that loop, not as many again.
 */
export const LOOP_ITEMS = 100;

/**
 * The most cells of padding and precision one value may ask of tmux in all, each width
 * counted as often as the loops and substitutions around it may repeat it.
 */
export const PAD_TOTAL_MAXIMUM = 100_000;

/**
 * The most that the loops, substitutions and quotes around any part of a value may multiply
 * its length by, in all (a loop counted as {@link LOOP_ITEMS}, a quote `q:` as 2, a
 * substitution as its replacement's length and one more).
 */
export const GROWTH_MAXIMUM = 256;
// 256 times a value of 64 KiB (set_option's bound) is 16 MB, built in about a tenth of a
// second, and a format of 16 KiB (display_message's) 4 MB; 10 000 times an 88 KB value built
// 264 MB (3.2 s).

/**
 * The longest replacement a substitution (`s/x/replacement/`) may write out: each match of the
 * subject turns into it, so it multiplies the subject's length, and a subject may be a value
 * of 64 KiB or a pane's title its program set (`s/a/` and 3000 characters over a value of
 * 88 KB built 264 MB and held tmux 3.3a for 3.2 s).
 */
export const REPLACEMENT_MAXIMUM = 64;

/**
 * The most quotes (`q:`) that may enclose a part: each doubles what it holds at most, and a
 * quote of a quote is rarely what anyone means.
 */
export const QUOTE_NESTING_MAXIMUM = 2;

/**
 * The most expansions of values again (`E:`, `T:`) one value or format may hold on any path
 * through it (a conditional's larger branch counted), each of a value up to
 * {@link PAD_TOTAL_MAXIMUM} cells: tmux 3.3a's own status-format[0] holds fewer, and 1500 of
 * one value of 100 000 cells held tmux 1.4 s at each draw.
 */
export const EXPANSION_MAXIMUM = 32;

/** tmux 3.3a's array options, whose items `E:` may name apart (`status-format[1]`). */
const ARRAY_OPTIONS: ReadonlySet<string> = new Set([
  "command-alias",
  "pane-colours",
  "status-format",
  "terminal-features",
  "terminal-overrides",
  "update-environment",
  "user-keys",
]);

/**
 * The value `E:` or `T:` of `name` expands, as tmux 3.3a finds it: a user option or an option
 * that is no array ignores an index (`@a[3]` is all of `@a`), an array's item is its own.
 */
function expandedName(name: string): string {
  const base = baseName(name);
  return ARRAY_OPTIONS.has(base) ? name : base;
}

/** An option's name, as `E:` or `T:` may name one (an array option's item too). */
const OPTION_NAME = /^@?[A-Za-z0-9_-]+(?:\[\d+\])?$/;

/** An option's name without an array index (`status-format[0]` is `status-format`). */
function baseName(name: string): string {
  return name.replace(/\[\d+\]$/, "");
}

/** A block read so far that may enclose the next: where it ends and what holds it there. */
interface Frame {
  readonly end: number;
  /** What it and the blocks around it multiply what it holds by (loops, quotes, substitutions). */
  readonly repeats: number;
  /** The rank of the narrowest loop it or a block around it runs ({@link LOOPS}), or -1. */
  readonly loop: number;
  /** How many quotes (`q:`) it and the blocks around it run. */
  readonly quotes: number;
}

/** The outermost frame: nothing around it. */
const TOP: Frame = { end: Infinity, repeats: 1, loop: -1, quotes: 0 };

/** A multiple past any bound here, kept finite (a width of 0 times it stays 0). */
const HUGE = 1e15;

/**
 * Why a regular expression's pattern may not reach tmux 3.3a, or undefined when it may. A
 * back-reference (`\1` to `\9`) makes glibc's matcher try every way to split the subject:
 * `^(.*)(.*)(.*)(.*)(.*)(.*)\6\5\4\3\2\1$` against 17 characters held tmux for 3 s,
 * against 41 for more than 30 (it ignored SIGTERM meanwhile). tmux expands a pattern before it
 * compiles it, so a pattern a format makes (`#{...}`, `#(...)`) may hold one too.
 */
function patternProblem(shownBlock: string, pattern: string): string | undefined {
  const reference = /\\[1-9]/.exec(pattern);
  if (reference !== null) {
    return `${shownBlock} has a back-reference (${reference[0]}) in its regular expression's ` +
      "pattern: tmux 3.3a's matcher tries every way to split the subject to match it, which " +
      "grows as a power of the subject's length (one of six groups held tmux for 3 s on 17 " +
      "characters, for more than 30 on 41), and a stored value is matched whenever tmux draws " +
      "or renames; match without them (back-references in a substitution's replacement are " +
      "fine)";
  }
  if (pattern.includes("#{") || pattern.includes("#(")) {
    return `${shownBlock} builds its regular expression's pattern from a format: tmux expands ` +
      "it first, and text it makes (an option's value, a pane's title) may hold a " +
      "back-reference, whose matching grows as a power of the subject's length; write the " +
      "pattern out";
  }
  // tmux expands the pattern before compiling it: "#," is a comma to the matcher.
  const compiled = pattern.replace(/#([,#{}:])/g, "$1");
  if (compiled.length > PATTERN_MAXIMUM) {
    return `${shownBlock} has a regular expression's pattern of ${compiled.length} ` +
      "characters: glibc compiles each character and repetition into its matcher, which " +
      "tmux 3.3a builds anew at each expansion, and a stored value is matched whenever tmux " +
      `draws or renames; keep a pattern within ${PATTERN_MAXIMUM} characters`;
  }
  const copies = patternCopies(compiled);
  if (copies.bound > REPEAT_BOUND_MAXIMUM || copies.nested > REPEAT_PRODUCT_MAXIMUM) {
    return `${shownBlock} has counted repetitions in its regular expression's pattern that ` +
      `make glibc copy a part ${Math.max(copies.bound, copies.nested)} times ` +
      "(a {m,n} copies what it repeats n times, and nested ones multiply): " +
      "(a{1,200}){1,200} held tmux 3.3a for 3.9 s, and it compiles the pattern anew at each " +
      `expansion; keep each bound within ${REPEAT_BOUND_MAXIMUM} and their product through ` +
      `nesting within ${REPEAT_PRODUCT_MAXIMUM} (use * or + where any count will do)`;
  }
  return undefined;
}

/** The longest regular expression's pattern (`m/r:`, `C/r:`, `s/`) a format may hold. */
export const PATTERN_MAXIMUM = 256;

/** The largest bound a counted repetition (`{m,n}`) of a pattern may have. */
export const REPEAT_BOUND_MAXIMUM = 255;

/**
 * The most that counted repetitions nested in a pattern may multiply a part by: glibc's
 * matcher, as tmux 3.3a compiles it, copies the repeated part once for each count of its bound.
 */
export const REPEAT_PRODUCT_MAXIMUM = 256;

/**
 * How often glibc's regcomp copies a part of an extended regular expression: the largest
 * bound of any counted repetition (`{m,n}` counted as n, `{m}` as m, `{m,}` as m), and the
 * largest product of bounds through nesting (`(a{1,200}){1,200}` is 40 000). `*`, `+`, `?`
 * and `{m,}`'s open end are loops in the matcher, not copies, and count as 1
 * (`(a*)*` compiles and matches quickly). Bracket expressions and escaped characters are one
 * atom each.
 */
export function patternCopies(pattern: string): { bound: number; nested: number } {
  let bound = 0;
  // The product of the bounds of the groups open around the reader, and of each open group
  // the largest product inside it so far.
  const stack: { inner: number }[] = [{ inner: 1 }];
  // The copies the atom just read holds (what a repetition after it multiplies).
  let last = 1;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === "\\") {
      i++;
      last = 1;
    } else if (char === "[") {
      // A bracket expression: "]" first (after an optional "^") is a member, not its end.
      let j = i + 1;
      if (pattern[j] === "^") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") {
        // [:alpha:], [.x.] and [=x=] hold a "]" of their own.
        if (pattern[j] === "[" && ":.=".includes(pattern[j + 1] ?? "")) {
          const close = pattern.indexOf(`${pattern[j + 1]}]`, j + 2);
          j = close === -1 ? pattern.length : close + 2;
        } else j++;
      }
      i = j;
      last = 1;
    } else if (char === "(") {
      stack.push({ inner: 1 });
      last = 1;
    } else if (char === ")" && stack.length > 1) {
      last = stack.pop()!.inner;
      const top = stack[stack.length - 1];
      top.inner = Math.max(top.inner, last);
    } else if (char === "{") {
      const count = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (count === null) {
        last = 1;
        continue;
      }
      const low = Number(count[1]);
      const high = count[2] === undefined ? low : count[3] === "" ? low : Number(count[3]);
      const times = Math.max(low, high, 1);
      bound = Math.max(bound, times);
      last = Math.min(last * times, HUGE);
      const top = stack[stack.length - 1];
      top.inner = Math.max(top.inner, last);
      i += count[0].length - 1;
    } else if (!"*+?|^$".includes(char)) {
      last = 1;
    }
  }
  // A group never closed is read to the end, as what it holds.
  const nested = stack.reduce((most, { inner }) => Math.max(most, inner), 1);
  return { bound, nested };
}

/** The pattern of a `m/r:` or `C/r:` block, or of a substitution: a regular expression. */
function regexPattern(
  modifier: string,
  args: string[],
  copy: string | undefined,
): string | undefined {
  if (modifier === "s") return args[0];
  if ((modifier !== "m" && modifier !== "C") || !(args[0] ?? "").includes("r")) return undefined;
  if (copy === undefined || modifier === "C") return copy;
  // m's pattern ends at its first comma outside any block, as tmux splits it.
  const comma = new Reader(copy).skip(0, ",", copy.length);
  return comma === -1 ? copy : copy.slice(0, comma);
}

/**
 * Why `E:` or `T:` of `name` may not reach tmux for `use`, or undefined when it may: only an
 * option's name ({@link TMUX_OPTIONS}, `@name`), and, for a value tmux may expand again, none
 * that may expand it back.
 */
function expansionNameProblem(
  shownBlock: string,
  name: string,
  use: FormatUse,
): string | undefined {
  if (!OPTION_NAME.test(name)) {
    return `${shownBlock} expands again what a format makes (E: or T: of ` +
      `${shownNumber(name)}, not of an option's name): text built from other values or set by ` +
      "a pane's program (its title, its directory) may form blocks that freeze tmux, or " +
      "expand this value or a status line again; expand a value by its name (#{E:@name}, " +
      "#{T:status-left})";
  }
  const base = baseName(name);
  if (!base.startsWith("@") && !TMUX_OPTIONS.has(base)) {
    return `${shownBlock} expands ${shownNumber(name)}, which is no tmux option: tmux would ` +
      "expand a format variable's text as a format, and a pane's program sets several " +
      "(pane_title by its title, pane_current_path, pane_current_command, window_name), so a " +
      "program printing a title of nested #{S: would hold tmux for seconds each time; expand a " +
      "user option (#{E:@name}) or one of tmux's options, or show the variable as text " +
      `(#{${shownNumber(name)}})`;
  }
  if (base === "status-format" && (use === "stored" || use === "drawn")) {
    return `${shownBlock} expands a status line's format again: tmux draws those, and ` +
      "they may expand other values many times over, so a value that expands one in turn " +
      "may repeat itself a power of times; name the parts it needs instead";
  }
  if (
    (base === "status-format" || DRAWN_PARTS.has(base)) && use !== "expanded once" &&
    use !== "drawn"
  ) {
    return `${shownBlock} expands a value tmux draws (${name}): status-left, status-right, ` +
      "window-status-format and window-status-current-format may each expand several other " +
      "values, so values expanding them in turn could double at each turn of a cycle; only " +
      "a status line's status-format[N] may expand them: expand the options they name instead";
  }
  return undefined;
}

/**
 * How a block (its modifiers, and the name or format after them), inside `around`, may grow
 * what it holds, and the first growth rule of {@link formatNumberProblem} it breaks, if any.
 */
function growthOf(
  shownBlock: string,
  { modifiers, copy }: Block,
  around: Frame,
  use: FormatUse,
): { repeats: number; loop: number; quotes: number; problem?: string } {
  let factor = 1;
  let loop = around.loop;
  let quotes = around.quotes;
  let expands = false;
  let problem: string | undefined;
  for (const { modifier, args } of modifiers) {
    const looping = LOOPS[modifier];
    const pattern = regexPattern(modifier, args, copy);
    if (pattern !== undefined) problem ??= patternProblem(shownBlock, pattern);
    if (looping !== undefined) {
      if (loop >= looping.rank && problem === undefined) {
        const outer = Object.values(LOOPS).find((l) => l.rank === loop)?.over;
        problem = `${shownBlock} loops over ${looping.over} inside a loop over ${outer}: tmux ` +
          "3.3a repeats the inner loop whole for each item of the outer one, so loops nested " +
          "like that grow as a power of the number of items (24 of them over two sessions " +
          "build 2^24 characters and hold every session for seconds at each expansion); only " +
          "S: around W: around P: is bounded, by the panes there are";
      }
      // Inside a wider loop, a narrower one visits that loop's items' parts, once each.
      if (loop === -1) factor *= LOOP_ITEMS;
      loop = Math.max(loop, looping.rank);
    } else if (modifier === "q") {
      factor *= 2;
      quotes++;
    } else if (modifier === "s") {
      // Each match, at most one a character (an empty one too), turns into the replacement,
      // a back reference (\1, two characters) into at most the match.
      const replacement = args[1] ?? "";
      if (replacement.includes("#{") || replacement.includes("#(")) {
        // tmux expands the replacement first: as long as any value, each match becomes all
        // of it (6000 x replaced by 6000 x built 36 million bytes).
        problem ??= `${shownBlock} replaces each match with text a format makes: tmux ` +
          "expands the replacement first, so the result grows as the subject's length times " +
          "the replacement's, each as long as any value (6000 characters in both built 36 " +
          "million bytes); write the replacement out";
        factor = HUGE;
      } else if (replacement.length > REPLACEMENT_MAXIMUM) {
        problem ??= `${shownBlock} replaces each match with ${replacement.length} ` +
          "characters: each match of the subject turns into all of them, so the result grows " +
          "as the subject's length times the replacement's (3000 characters over a value of " +
          "88 KB built 264 MB and held tmux 3.3a for seconds), and a subject may be a long " +
          `value or a pane's title; keep a replacement within ${REPLACEMENT_MAXIMUM} characters`;
        factor = HUGE;
      } else if (replacement !== "") {
        factor *= replacement.length + 1;
      }
    } else if (modifier === "E" || modifier === "T") {
      expands = true;
    }
  }
  const repeats = Math.min(around.repeats * factor, HUGE);
  if (problem === undefined && repeats > GROWTH_MAXIMUM) {
    problem = `${shownBlock} sits inside loops, substitutions and quotes that may multiply ` +
      `its length by ${repeats} (a loop counted as ${LOOP_ITEMS} items, a q: as 2, a ` +
      "substitution as its replacement's length and one more): nested, they grow as a " +
      `power, and tmux builds all of it at each expansion; keep it within ${GROWTH_MAXIMUM}`;
  }
  if (problem === undefined && quotes > QUOTE_NESTING_MAXIMUM) {
    problem = `${shownBlock} quotes inside ${quotes - 1} other quotes (q:): each may double ` +
      `what it holds; keep to ${QUOTE_NESTING_MAXIMUM} nested at most`;
  }
  if (expands && problem === undefined) {
    problem = expansionNameProblem(shownBlock, copy ?? "", use);
  }
  // What a stored value expands again may be another stored value, which may do the same.
  if (expands && use === "stored" && problem === undefined && repeats > 1) {
    problem = `${shownBlock} expands a value again (E: or T:) inside a loop, a substitution ` +
      "or a quote, which repeat or lengthen what it makes: options that each do so, one " +
      "naming the next, grow as a power of their number (ten of them, each a few " +
      "characters, make 2^10 and thirty 2^30), and tmux expands a stored value whenever " +
      "it draws or renames; expand it outside, once, or name the option plainly " +
      "(#{@name}), which shows its value as text";
  }
  return { repeats, loop, quotes, problem };
}

/**
 * The expansions of values again (`E:`, `T:`) on the path through a text that has the most:
 * where each starts, in all and by the name expanded.
 */
interface Tally {
  readonly path: number[];
  readonly names: Map<string, number[]>;
}

/** `more` added to `tally`, as text that follows it. */
function addTally(tally: Tally, more: Tally): void {
  tally.path.push(...more.path);
  for (const [name, starts] of more.names) {
    tally.names.set(name, [...(tally.names.get(name) ?? []), ...starts]);
  }
}

/** The larger of two branches tmux picks one of: in all, and for each name. */
function largerTally(a: Tally, b: Tally): Tally {
  const names = new Map(a.names);
  for (const [name, starts] of b.names) {
    if (starts.length > (names.get(name)?.length ?? 0)) names.set(name, starts);
  }
  return { path: b.path.length > a.path.length ? b.path : a.path, names };
}

/**
 * The expansions of values again in `text` from `from` to `to`, every `#{` counted (a stored
 * value's): a conditional (`#{?cond,a,b}`) counts its condition and the larger branch, as
 * tmux 3.3a expands one branch only (everything after the second comma is the other).
 */
function tallyExpansions(reader: Reader, text: string, from: number, to: number): Tally {
  const tally: Tally = { path: [], names: new Map() };
  let start = text.indexOf("#{", from);
  while (start !== -1 && start < to) {
    const block = reader.block(start);
    const end = Math.min(block.end, to);
    const first = text[start + 2] === "?" ? reader.skip(start + 3, ",", end) : -1;
    if (first !== -1) {
      const second = reader.skip(first + 1, ",", end);
      const split = second === -1 ? end : second;
      addTally(tally, tallyExpansions(reader, text, start + 3, first));
      addTally(
        tally,
        largerTally(
          tallyExpansions(reader, text, first + 1, split),
          tallyExpansions(reader, text, Math.min(split + 1, end), end),
        ),
      );
    } else {
      if (block.modifiers.some(({ modifier }) => modifier === "E" || modifier === "T")) {
        const name = expandedName(block.copy ?? "");
        tally.path.push(start);
        tally.names.set(name, [...(tally.names.get(name) ?? []), start]);
      }
      addTally(tally, tallyExpansions(reader, text, start + 2, end));
    }
    start = text.indexOf("#{", end + 1);
  }
  return tally;
}

/**
 * Why a value tmux may expand again expands other values too often, or undefined: a stored
 * value once at most on any path through it, a status line's part each name once at most.
 */
function expansionCountProblem(reader: Reader, text: string, use: FormatUse): string | undefined {
  const tally = tallyExpansions(reader, text, 0, text.length);
  if (tally.path.length > EXPANSION_MAXIMUM) {
    return `${shown(text, tally.path[EXPANSION_MAXIMUM])} is expansion ` +
      `${EXPANSION_MAXIMUM + 1} of a value (E: or T:) in one format: each may expand a value ` +
      `of ${PAD_TOTAL_MAXIMUM} cells, and tmux builds all of them at each expansion (1500 ` +
      "expansions of one such value held tmux 1.4 s at each draw of a status line); keep to " +
      `${EXPANSION_MAXIMUM} (the two branches of a #{?...} count as the larger), and name ` +
      "other options plainly (#{@name}), which shows their values as text";
  }
  if (use !== "stored" && use !== "drawn part") return undefined;
  if (use === "stored" && tally.path.length > 1) {
    return `${shown(text, tally.path[1])} is a second expansion of a value (E: or T:) in one ` +
      "value: options that each expand the next twice double at every link (ten of them, " +
      "each a few characters, make 2^10 and thirty 2^30), and tmux expands a stored value " +
      "whenever it draws or renames; keep to one E: or T: in a value (the two branches of a " +
      "#{?...} count as the larger; status-left, status-right, window-status-format and " +
      "window-status-current-format may expand several options, each once) and name the " +
      "other options plainly (#{@name}), which shows their values as text";
  }
  for (const [name, starts] of tally.names) {
    if (starts.length > 1) {
      return `${shown(text, starts[1])} expands ${shownNumber(name)} twice (E: or T:) in one ` +
        "value: a status line's part may expand several options, each once, so that a " +
        "chain of options cannot double at any link; expand it once";
    }
  }
  return undefined;
}

/**
 * Why `text`, read by tmux as a format, may not reach tmux 3.3a, or undefined when it may.
 * First, a pad width or precision that is neither a plain number within
 * ±{@link FORMAT_NUMBER_MAXIMUM} nor one of the {@link BOUNDED_SIZES}. Then what makes tmux
 * build more than it survives in time, each part small: a loop (`S:`, `W:`, `P:`) inside a
 * loop of the same or a wider kind; loops, substitutions and quotes nested to multiply a part
 * by more than {@link GROWTH_MAXIMUM}; pad widths and precisions of more than
 * {@link PAD_TOTAL_MAXIMUM} cells in all, each counted as often as what encloses it may repeat
 * it; a substitution whose replacement a format makes (`#{s/x/#{@big}/:@big}`, the subject's
 * length times the replacement's), or one written out longer than
 * {@link REPLACEMENT_MAXIMUM}; quotes nested deeper than {@link QUOTE_NESTING_MAXIMUM}. A
 * regular expression's pattern (`m/r:`, `C/r:`, `s/`) may hold no back-reference, nor be made
 * by a format (matching one grows as a power of the subject's length), nor be longer than
 * {@link PATTERN_MAXIMUM} or repeat a part more than {@link REPEAT_PRODUCT_MAXIMUM} times
 * through nested counts ({@link patternCopies}). Any text holds {@link EXPANSION_MAXIMUM}
 * expansions of values again at most on any path. `E:` and `T:` may name only an option (tmux's own,
 * {@link TMUX_OPTIONS}, or `@name`), never a format variable a pane's program sets (its
 * title). A stored value (`use` `"stored"`) may also expand another value again once at most
 * on any path through it (a conditional's larger branch counted), outside any loop,
 * substitution or quote, and none that tmux draws (a status line's part or format); a status
 * line's part (`"drawn part"`) each other value once at most: so a chain of options, each
 * naming the next, grows with its length, never as a power of it. `use` says how often tmux
 * may expand the text, which decides whether `##{` is text ({@link FormatUse}); by default,
 * any number of times.
 */
export function formatNumberProblem(
  text: string,
  use: FormatUse = "stored",
): string | undefined {
  if (!text.includes("#{")) return undefined;
  const reader = new Reader(text);
  // Up to where every "#{" counts, escaped or not: the inside of what tmux expands again.
  let everyBraceUntil = use === "expanded once" ? 0 : text.length;
  // The blocks around the one being read, outermost first.
  const enclosing: Frame[] = [TOP];
  let cells = 0;
  // The first growth problem: reported when no number is refused (that reason says more).
  let costProblem: string | undefined;
  try {
    for (let start = text.indexOf("#"); start !== -1; start = text.indexOf("#", start + 1)) {
      const opens = text[start + 1];
      if (opens !== "{" && opens !== "(") continue;
      const escaped = hashesBefore(text, start) % 2 === 0;
      // After an even run of "#", each expansion so far turned "##" into "#": text to tmux.
      if (escaped && start >= everyBraceUntil) continue;
      if (opens === "(") {
        // A command's text may call tmux, which expands what it is given once more. One
        // inside such a part ends within it, as tmux reads that part alone.
        if (start >= everyBraceUntil) everyBraceUntil = reader.jobEnd(start);
        continue;
      }
      const block = reader.block(start);
      if (block.everyBrace) everyBraceUntil = Math.max(everyBraceUntil, block.end);
      while (enclosing[enclosing.length - 1].end < start) enclosing.pop();
      const growth = growthOf(
        shown(text, start),
        block,
        enclosing[enclosing.length - 1],
        use,
      );
      costProblem ??= growth.problem;
      enclosing.push({
        end: block.end,
        repeats: growth.repeats,
        loop: growth.loop,
        quotes: growth.quotes,
      });
      for (const { modifier, args } of block.modifiers) {
        const number = NUMBERS[modifier];
        const arg = number === undefined ? undefined : args[number.index];
        if (number === undefined || arg === undefined || arg === "") continue;
        const problem = numberProblem(shown(text, start), number.what, arg);
        if (problem !== undefined) return escaped ? `${problem}${escapedNote(use)}` : problem;
        // A size tmux bounds is counted at the most a window has.
        const size = PLAIN.test(arg) ? Math.abs(Number(arg.trim())) : FORMAT_NUMBER_MAXIMUM;
        cells = Math.min(cells + size * growth.repeats, HUGE);
      }
    }
    if (costProblem === undefined) costProblem = expansionCountProblem(reader, text, use);
  } catch (error) {
    if (!(error instanceof TooIntricate)) throw error;
    return "its #{...} nest too deeply to check the pad widths and precisions in them";
  }
  if (costProblem !== undefined) return costProblem;
  if (cells > PAD_TOTAL_MAXIMUM) {
    return `it asks for ${cells} cells of padding and precision in all (each width counted ` +
      `as often as the loops and substitutions around it repeat it, a loop as ${LOOP_ITEMS} ` +
      "items); tmux builds them all at each expansion, and a stored value is expanded " +
      `whenever tmux draws or renames, so keep the total within ${PAD_TOTAL_MAXIMUM}`;
  }
  return undefined;
}
