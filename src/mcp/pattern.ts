/**
 * Regular expressions a client supplies (search_panes and wait_for_text with `regex: true`).
 *
 * They run on RE2 (the `re2js` port), whose matching time grows linearly with the text: a
 * backtracking engine takes exponential time on `(x+)+y` against a line of x's, and while it
 * runs the only thread answers nothing — not the next request, not a cancellation, not end of
 * input or SIGTERM. Linear is not yet short, so two more bounds hold: a pattern whose
 * program would be too large is refused before it is compiled (a character costs about one
 * step per instruction), and long matching loops give the event loop a turn every few
 * milliseconds ({@link MatchPacer}), where a cancelled call stops.
 *
 * The dialect is RE2's; the JavaScript spellings a model is likely to write keep the meaning
 * they had when patterns were JavaScript regular expressions in Unicode mode: `\s` is
 * JavaScript's whitespace (RE2's is ASCII), `.` stops at `\r` and U+2028/2029 as well, `\uXXXX`
 * and `\u{X}` are code points, `\cX` a control character, `[\b]` a backspace, `[]` and `[^]`
 * nothing and anything. Lookaround and backreferences, which need backtracking, are refused
 * with a reason. The engine is loaded on first use, so starting the server does not pay for it.
 *
 * @module
 */

import type { Matcher, RE2JS } from "re2js";
import { TmuxError } from "../tmux/tmux_error.ts";
import { ToolFailure } from "./errors.ts";

/**
 * The largest compiled program a pattern may have. A character of text costs about one step
 * per instruction, and one line is matched without a pause: 10 000 keeps a 10 000-column
 * row under a few hundred milliseconds, and lets through any pattern of plain text or
 * alternatives up to the 4096 characters a search takes, and `\w{1,1000}`.
 */
export const MAX_REGEX_PROGRAM = 10_000;

/** A client's regular expression, compiled. */
export interface LineRegex {
  /** Whether the pattern matches somewhere in `line` (one row of text, no newline). */
  test(line: string): boolean;
  /**
   * Where the match of the pattern in `line` that ends last ends (a UTF-16 index); -1 when it
   * matches nowhere. One pass, as linear as {@link LineRegex.test}.
   */
  lastEnd(line: string): number;
  /**
   * The match that starts first at or after `start` (a UTF-16 index at a code point's start),
   * the longest of those that start there, as [start, end); null when none does. `^`, `\b` and
   * the like still see the text before `start`. One pass from `start` at most.
   */
  firstFrom(line: string, start: number): readonly [number, number] | null;
  /** Instructions of its program: about what one character of text costs to match. */
  readonly cost: number;
}

type Engine = typeof import("re2js");

let engine: Engine | null = null;
let loading: Promise<Engine> | null = null;

/**
 * Loads the RE2 engine, once. A separate step (and not a static import) so that starting the
 * server, and every literal search, never parses it; {@link compileRegex} needs it done.
 */
export async function loadRegexEngine(): Promise<void> {
  loading ??= import("re2js");
  engine ??= await loading;
}

/**
 * Compiles a client's pattern; case-insensitive (Unicode simple case folding, as JavaScript's
 * `iu`) unless `matchCase`. Refuses, as a {@link ToolFailure} naming `what` ("The pattern",
 * "patterns[2]"), a pattern that is invalid, uses lookaround or backreferences, or is too
 * large. Call {@link loadRegexEngine} first.
 */
export function compileRegex(source: string, matchCase: boolean, what: string): LineRegex {
  if (engine === null) throw new Error("compileRegex before loadRegexEngine");
  const { RE2JS } = engine;
  let translated = translate(source, what, false);
  if (translated.dotAll) translated = translate(source, what, true);
  if (translated.size > MAX_REGEX_PROGRAM) throw tooLarge(what, translated.size);
  let re: RE2JS;
  try {
    re = RE2JS.compile(translated.text, matchCase ? 0 : RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    const why = (error instanceof Error ? error.message : String(error))
      .replace(/^error parsing regexp: /, "");
    throw new ToolFailure(
      `${what} is not a valid regular expression (RE2 syntax): ${why}.`,
      "Fix it (RE2 syntax: github.com/google/re2/wiki/Syntax), or pass regex: false to match " +
        "the text literally.",
    );
  }
  const cost = re.programSize();
  if (cost > MAX_REGEX_PROGRAM) throw tooLarge(what, cost);
  // Anything, then the pattern, anchored at the start and longest: its end is the last end of
  // any match (compiled when first asked for).
  let last: RE2JS | null = null;
  const lastEnd = (line: string): number => {
    last ??= RE2JS.compile(
      `^${ANYTHING}*(?:${translated.text})`,
      RE2JS.LONGEST_MATCH | (matchCase ? 0 : RE2JS.CASE_INSENSITIVE),
    );
    const m = last.matcher(line);
    return m.find() ? m.end() : -1;
  };
  // Leftmost, then longest (compiled when first asked for); one matcher per line, for the
  // successive starts a caller tries on it.
  let longest: RE2JS | null = null;
  let on: { line: string; matcher: Matcher } | null = null;
  const firstFrom = (line: string, start: number): readonly [number, number] | null => {
    longest ??= RE2JS.compile(
      translated.text,
      RE2JS.LONGEST_MATCH | (matchCase ? 0 : RE2JS.CASE_INSENSITIVE),
    );
    if (on?.line !== line) on = { line, matcher: longest.matcher(line) };
    return on.matcher.find(start) ? [on.matcher.start(), on.matcher.end()] : null;
  };
  return { test: (line) => re.test(line), lastEnd, firstFrom, cost };
}

function tooLarge(what: string, size: number): ToolFailure {
  return new ToolFailure(
    `${what} is too large: about ${size} steps per character of text, over the limit of ` +
      `${MAX_REGEX_PROGRAM} (counted repeats such as .{0,999} cost the most).`,
    "Use smaller repeat counts or fewer alternatives, or pass regex: false to match the text " +
      "literally.",
  );
}

// ---------------------------------------------------------------------------------------------
// JavaScript spellings in RE2

/** JavaScript's `\s` (WhiteSpace and LineTerminator) as class ranges; RE2's is ASCII only. */
const SPACE_RANGES: readonly [number, number][] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];

const hex = (cp: number) => `\\x{${cp.toString(16)}}`;
const rangeText = (ranges: readonly [number, number][]) =>
  ranges.map(([lo, hi]) => lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`).join("");

function complement(ranges: readonly [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

const SPACE = rangeText(SPACE_RANGES);
const NOT_SPACE = rangeText(complement(SPACE_RANGES));
/** JavaScript's `.` without the `s` flag: anything but a line terminator. */
const DOT = `[^${hex(0x0a)}${hex(0x0d)}${hex(0x2028)}${hex(0x2029)}]`;
const NOTHING = `[^${hex(0)}-${hex(0x10ffff)}]`;
const ANYTHING = `[${hex(0)}-${hex(0x10ffff)}]`;

interface Translated {
  /** The pattern in RE2 syntax. */
  readonly text: string;
  /** About how many instructions it compiles to (counted repeats multiply). */
  readonly size: number;
  /** Whether a flag group turns on `s`: then `.` is RE2's own. */
  readonly dotAll: boolean;
}

interface Piece {
  readonly text: string;
  readonly end: number;
}

/** A part of the pattern in parentheses, for the size estimate. */
interface Frame {
  total: number;
  last: number;
}

/**
 * Rewrites the JavaScript spellings RE2 reads differently (see the module), refuses what RE2
 * cannot do, and estimates the program's size, in one pass that knows escapes, classes and
 * `\Q...\E`. Everything else is RE2's to judge.
 */
function translate(source: string, what: string, keepDots: boolean): Translated {
  let text = "";
  let dotAll = false;
  const frames: Frame[] = [{ total: 0, last: 0 }];
  let top = frames[0];
  const atom = (size: number) => {
    top.total += size;
    top.last = size;
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === "\\") {
      if (source[i + 1] === "Q") {
        const close = source.indexOf("\\E", i + 2);
        const end = close === -1 ? source.length : close + 2;
        // Closed when it runs to the end, so that the pattern can be wrapped (lastEnd).
        text += source.slice(i, end) + (close === -1 ? "\\E" : "");
        atom(end - i);
        i = end;
        continue;
      }
      const piece = escape(source, i, false, what);
      text += piece.text;
      atom(1);
      i = piece.end;
    } else if (c === "[") {
      const piece = charClass(source, i, what);
      text += piece.text;
      atom(1);
      i = piece.end;
    } else if (c === ".") {
      text += keepDots ? "." : DOT;
      atom(1);
      i++;
    } else if (c === "(") {
      if (source.startsWith("(?=", i) || source.startsWith("(?!", i)) {
        throw unsupported(what, "a lookahead, (?=...) or (?!...)", "foo(?=bar) → foobar");
      }
      if (source.startsWith("(?<=", i) || source.startsWith("(?<!", i)) {
        throw unsupported(what, "a lookbehind, (?<=...) or (?<!...)", "(?<=foo)bar → foobar");
      }
      const flags = /^\(\?([a-zA-Z]*)(?:-[a-zA-Z]*)?[:)]/.exec(source.slice(i, i + 16));
      if (flags?.[1].includes("s")) dotAll = true;
      top = { total: 0, last: 0 };
      frames.push(top);
      text += c;
      i++;
    } else if (c === ")") {
      if (frames.length > 1) {
        const inner = frames.pop() as Frame;
        top = frames[frames.length - 1];
        atom(inner.total + 1);
      }
      text += c;
      i++;
    } else if (c === "|") {
      top.total += 1;
      top.last = 0;
      text += c;
      i++;
    } else if (c === "*" || c === "+" || c === "?") {
      top.total += 1;
      top.last += 1;
      text += c;
      i++;
    } else if (c === "{" && /^\{\d+(?:,\d*)?\}/.test(source.slice(i, i + 24))) {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i, i + 24)) as RegExpExecArray;
      const low = Number(m[1]);
      const high = m[2] === undefined ? low : m[2] === "" ? low + 1 : Number(m[2]);
      const times = Math.max(low, high, 1);
      // Past 1000 RE2 refuses the count itself, with its own message.
      if (times <= 1000) {
        top.total += top.last * (times - 1) + times;
        top.last *= times;
      }
      text += m[0];
      i += m[0].length;
    } else {
      const ch = String.fromCodePoint(source.codePointAt(i) as number);
      text += ch;
      atom(1);
      i += ch.length;
    }
  }
  while (frames.length > 1) {
    const inner = frames.pop() as Frame;
    frames[frames.length - 1].total += inner.total;
  }
  return { text, size: frames[0].total, dotAll };
}

/** One escape at `i` (a backslash), inside a class or not. */
function escape(source: string, i: number, inClass: boolean, what: string): Piece {
  const c = source[i + 1];
  if (c === undefined) return { text: "\\", end: i + 1 };
  switch (c) {
    case "s":
      return { text: inClass ? SPACE : `[${SPACE}]`, end: i + 2 };
    case "S":
      return { text: inClass ? NOT_SPACE : `[^${SPACE}]`, end: i + 2 };
    case "b":
      return { text: inClass ? hex(8) : "\\b", end: i + 2 };
    case "c":
      if (/^[A-Za-z]$/.test(source[i + 2] ?? "")) {
        return { text: hex(source.charCodeAt(i + 2) % 32), end: i + 3 };
      }
      break;
    case "u": {
      const braced = /^\{([0-9A-Fa-f]+)\}/.exec(source.slice(i + 2, i + 12));
      if (braced) return { text: `\\x{${braced[1]}}`, end: i + 2 + braced[0].length };
      const unit = /^[0-9A-Fa-f]{4}/.exec(source.slice(i + 2, i + 6));
      if (unit) {
        const high = parseInt(unit[0], 16);
        const low = /^\\u([0-9A-Fa-f]{4})/.exec(source.slice(i + 6, i + 12));
        const lowUnit = low ? parseInt(low[1], 16) : -1;
        if (high >= 0xd800 && high <= 0xdbff && lowUnit >= 0xdc00 && lowUnit <= 0xdfff) {
          return { text: hex((high - 0xd800) * 0x400 + lowUnit - 0xdc00 + 0x10000), end: i + 12 };
        }
        return { text: hex(high), end: i + 6 };
      }
      break;
    }
    case "k":
      if (!inClass && source[i + 2] === "<") {
        throw unsupported(what, "a backreference, \\k<name>", "(?<q>ab)\\k<q> → abab");
      }
      break;
    case "p":
    case "P":
    case "x":
      if (source[i + 2] === "{") {
        const close = source.indexOf("}", i + 3);
        const end = close === -1 ? source.length : close + 1;
        return { text: source.slice(i, end), end };
      }
      break;
    default:
      if (!inClass && c >= "1" && c <= "9") {
        throw unsupported(what, `a backreference, \\${c}`, "(ab)\\1 → abab");
      }
  }
  const ch = String.fromCodePoint(source.codePointAt(i + 1) as number);
  return { text: `\\${ch}`, end: i + 1 + ch.length };
}

/** A class at `i` (a `[`), up to and with its `]`. */
function charClass(source: string, i: number, what: string): Piece {
  let j = i + 1;
  let text = "[";
  const negated = source[j] === "^";
  if (negated) {
    text += "^";
    j++;
  }
  // In JavaScript `]` right away ends the class: `[]` matches nothing, `[^]` anything.
  if (source[j] === "]") return { text: negated ? ANYTHING : NOTHING, end: j + 1 };
  while (j < source.length && source[j] !== "]") {
    if (source[j] === "\\") {
      const piece = escape(source, j, true, what);
      text += piece.text;
      j = piece.end;
      continue;
    }
    if (source.startsWith("[:", j)) {
      const close = source.indexOf(":]", j + 2);
      if (close !== -1 && /^\^?[a-z]+$/.test(source.slice(j + 2, close))) {
        text += source.slice(j, close + 2);
        j = close + 2;
        continue;
      }
    }
    const ch = String.fromCodePoint(source.codePointAt(j) as number);
    text += ch;
    j += ch.length;
  }
  if (j < source.length) {
    text += "]";
    j++;
  }
  return { text, end: j };
}

function unsupported(what: string, feature: string, example: string): ToolFailure {
  return new ToolFailure(
    `${what} uses ${feature}, which RE2 syntax does not have (it matches in linear time, and ` +
      "these need backtracking).",
    `Match the text itself instead (${example}), or pass regex: false to match it literally.`,
  );
}

// ---------------------------------------------------------------------------------------------
// Pacing

/** Matching time between two turns of the event loop. */
const SLICE_MS = 20;
/** Work (characters times program size) between two looks at the clock: a few ms at worst. */
const CHECK_WORK = 1 << 20;

/**
 * Keeps a long matching loop from holding the server: after about {@link SLICE_MS} of work
 * it gives the event loop a turn (other requests, cancellation, end of input, signals are
 * handled then) and throws a `cancelled` TmuxError once `signal` has fired. Time is read only
 * every {@link CHECK_WORK} units of work, so a loop over short rows stays cheap.
 */
export class MatchPacer {
  readonly #signal: AbortSignal | undefined;
  #work = 0;
  #turnAt = performance.now() + SLICE_MS;

  /** A pacer for one call; `signal` is the call's. */
  constructor(signal?: AbortSignal) {
    this.#signal = signal;
  }

  /**
   * Counts matching `chars` characters with a program of `cost`; returns a promise to await
   * when a turn is due, else null (so a hot loop awaits only then).
   */
  step(chars: number, cost: number): Promise<void> | null {
    this.#work += (chars + 32) * cost;
    if (this.#work < CHECK_WORK) return null;
    this.#work = 0;
    if (performance.now() < this.#turnAt) return null;
    return this.#turn();
  }

  async #turn(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (this.#signal?.aborted) throw new TmuxError("cancelled", "The call was cancelled.");
    this.#turnAt = performance.now() + SLICE_MS;
  }
}
