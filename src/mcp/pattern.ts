/**
 * Regular expressions a client supplies (search_panes and wait_for_text with `regex: true`).
 *
 * They run on RE2 (the `re2js` port), whose matching time grows linearly with the text: a
 * backtracking engine takes exponential time on `(x+)+y` against a line of x's, and while it
 * runs the only thread answers nothing — not the next request, not a cancellation, not end of
 * input or SIGTERM. Linear is not yet short, so three more bounds hold: a pattern whose
 * program would be too large is refused before it is compiled (a character costs about one
 * step per instruction); one call to the engine does a bounded amount of work
 * ({@link CALL_WORK}), a longer line being matched in overlapping pieces
 * ({@link LineRegex.pieces}); and long matching loops give the event loop a turn every few
 * milliseconds ({@link MatchPacer}), between pieces too, where a cancelled call stops.
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
 * per instruction: 10 000 lets through any pattern of plain text or alternatives up to the
 * 4096 characters a search takes, and `\w{1,1000}`, and still matches 200 characters within
 * one call's {@link CALL_WORK}.
 */
export const MAX_REGEX_PROGRAM = 10_000;

/**
 * The most work one call to the engine may do: characters times (program size +
 * {@link CHAR_WORK}). The engine cannot be interrupted; a unit takes some 30 ns where it
 * matches slowest, up to 100 ns while it builds its automaton for a large program: a tenth or
 * a fifth of a second at most, after which the event loop can have its turn. A line longer
 * than this allows (a wrapped line joined from its rows can be hundreds of thousands of
 * characters) is matched in overlapping pieces of this size.
 */
export const CALL_WORK = 1 << 21;

/** What a character costs the engine beyond its program's steps, whatever the pattern. */
const CHAR_WORK = 32;

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
  /**
   * The longest text (UTF-16 units) one call matches within {@link CALL_WORK}: a longer line
   * is matched in pieces of this length.
   */
  readonly piece: number;
  /** How far successive pieces overlap: a match no longer than this lies whole in one. */
  readonly overlap: number;
  /**
   * Whether no match of the pattern is longer than {@link LineRegex.overlap}: then the pieces
   * of a line find every match there is, else one longer could lie across two unseen.
   */
  readonly fits: boolean;
  /**
   * `line` in the pieces it is matched in, each searched in one bounded call (the caller
   * gives the event loop its turns between them): the line itself when it is no longer than
   * {@link LineRegex.piece}, else pieces of that length, each starting
   * {@link LineRegex.overlap} before the previous one ends.
   */
  pieces(line: string): LinePiece[];
}

/**
 * A stretch of a line, matched in one call: what it finds are matches of the whole line
 * (`^`, `$` and `\b` see the line's characters around it), those that begin at or after
 * {@link LinePiece.start} and end before {@link LinePiece.end} (at it, when that is the line's
 * end). Indices are the line's.
 */
export interface LinePiece {
  /** Where the matches it finds begin at the earliest (a code point's start). */
  readonly start: number;
  /** Where its text ends (a code point's start, or the line's end). */
  readonly end: number;
  /** Whether such a match exists. */
  test(): boolean;
  /** Where the one that ends last ends; -1 when there is none. */
  lastEnd(): number;
  /**
   * The one that starts first at or after `from` (at least {@link LinePiece.start}), the
   * longest of those that start there, as [start, end); null when none does.
   */
  firstFrom(from: number): readonly [number, number] | null;
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
export function compileRegex(
  source: string,
  matchCase: boolean,
  what: string,
  callWork: number = CALL_WORK,
): LineRegex {
  if (engine === null) throw new Error("compileRegex before loadRegexEngine");
  const { RE2JS } = engine;
  let translated = translate(source, what, false);
  if (translated.dotAll) translated = translate(source, what, true);
  if (translated.size > MAX_REGEX_PROGRAM) throw tooLarge(what, translated.size);
  const fold = matchCase ? 0 : RE2JS.CASE_INSENSITIVE;
  let re: RE2JS;
  try {
    re = RE2JS.compile(translated.text, fold);
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
  // The other programs a caller may need, each compiled when first asked for: the pattern with
  // something before it (anything, for the last end of any match: from where it is looked
  // for, the longest match of that ends there; or one character, see CutPiece) and one
  // character after it (see CutPiece), leftmost and longest or leftmost first.
  const compiled = new Map<string, RE2JS>();
  const around: Around = (before, after, longest) => {
    const text = `${before}(?:${translated.text})${after}`;
    const key = `${longest ? "L" : "F"}${text}`;
    let program = compiled.get(key);
    if (program === undefined) {
      program = RE2JS.compile(text, (longest ? RE2JS.LONGEST_MATCH : 0) | fold);
      compiled.set(key, program);
    }
    return program;
  };
  const lastEnd = (line: string): number => {
    const m = around(`${ANYTHING}*`, "", true).matcher(line);
    return m.find() ? m.end() : -1;
  };
  // One matcher per line, for the successive starts a caller tries on it.
  let on: { line: string; matcher: Matcher } | null = null;
  const firstFrom = (line: string, start: number): readonly [number, number] | null => {
    if (on?.line !== line) on = { line, matcher: around("", "", true).matcher(line) };
    return on.matcher.find(start) ? [on.matcher.start(), on.matcher.end()] : null;
  };
  const test = (line: string) => re.test(line);
  const piece = Math.max(MIN_PIECE, Math.floor(callWork / (cost + CHAR_WORK)));
  const overlap = Math.floor(piece / 2);
  const whole = (line: string): LinePiece => ({
    start: 0,
    end: line.length,
    test: () => test(line),
    lastEnd: () => lastEnd(line),
    firstFrom: (from) => firstFrom(line, from),
  });
  const pieces = (line: string): LinePiece[] => {
    if (line.length <= piece) return [whole(line)];
    const out: LinePiece[] = [];
    for (let start = 0;;) {
      let end = Math.min(line.length, start + piece);
      if (insidePair(line, end)) end--;
      out.push(new CutPiece(around, line, start, end));
      if (end === line.length) return out;
      start = end - overlap;
      if (insidePair(line, start)) start--;
    }
  };
  return {
    test,
    lastEnd,
    firstFrom,
    cost,
    piece,
    overlap,
    fits: translated.width <= overlap,
    pieces,
  };
}

/**
 * The shortest piece a line is cut into: pieces always move on, past a pair at either end.
 * Only a test's tiny call work comes near it (the largest program still gets 209 characters).
 */
const MIN_PIECE = 8;

/**
 * The pattern with `before` and `after` around it (RE2 syntax), leftmost and `longest` or
 * leftmost first, compiled once (see compileRegex).
 */
type Around = (before: string, after: string, longest: boolean) => RE2JS;

/** Whether index `i` of `text` falls between the two halves of a surrogate pair. */
function insidePair(text: string, i: number): boolean {
  const low = text.charCodeAt(i);
  const high = text.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
}

/**
 * A piece of a line longer than one call matches (see {@link LinePiece}). Its text starts a
 * character early, so that `^` and `\b` at its start see what the line has there; a match
 * must begin after that character (a program that wants one before the pattern, or a search
 * told to begin there). Where the piece ends before the line, a match must be followed by one
 * more character, which is then taken off: it ends before the piece does, where `$` and `\b`
 * saw what the line has too. Neither character hides a match the piece holds: a match that
 * needs the line's ends, or an end the piece only seems to have, is simply none.
 */
class CutPiece implements LinePiece {
  readonly start: number;
  readonly end: number;
  readonly #around: Around;
  readonly #line: string;
  /** Where its text begins in the line: a character before `start` (none at the line's). */
  readonly #offset: number;
  /** What a match must have before it, and after it (one character each, or nothing). */
  readonly #before: string;
  readonly #after: string;
  #text: string | null = null;
  #longest: Matcher | null = null;

  constructor(around: Around, line: string, start: number, end: number) {
    this.#around = around;
    this.#line = line;
    this.start = start;
    this.end = end;
    this.#offset = start === 0 ? 0 : start - (insidePair(line, start - 1) ? 2 : 1);
    this.#before = start === 0 ? "" : ANYTHING;
    this.#after = end < line.length ? ANYTHING : "";
  }

  get #piece(): string {
    return this.#text ??= this.#line.slice(this.#offset, this.end);
  }

  /** Where a match found in its text ends, in the line. */
  #endOf(matcher: Matcher): number {
    const end = matcher.end();
    if (this.#after === "") return this.#offset + end;
    return this.#offset + end - (insidePair(this.#piece, end - 1) ? 2 : 1);
  }

  test(): boolean {
    // Without positions, so that the engine may use its automaton (much the fastest).
    return this.#around(this.#before, this.#after, false).test(this.#piece);
  }

  lastEnd(): number {
    const m = this.#around(`${ANYTHING}*`, this.#after, true).matcher(this.#piece);
    return m.find(this.start - this.#offset) ? this.#endOf(m) : -1;
  }

  firstFrom(from: number): readonly [number, number] | null {
    this.#longest ??= this.#around("", this.#after, true).matcher(this.#piece);
    const at = Math.max(from, this.start) - this.#offset;
    if (at > this.end - this.#offset) return null;
    const m = this.#longest;
    return m.find(at) ? [this.#offset + m.start(), this.#endOf(m)] : null;
  }
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
  /**
   * The longest a match can be, in UTF-16 units (Infinity after `*`, `+` and `{n,}`), or more:
   * two for anything that matches a character (it may be a pair, case folded or not), and as
   * much for anything else read as an atom (an anchor, a flag), so never less than the truth.
   */
  readonly width: number;
  /** Whether a flag group turns on `s`: then `.` is RE2's own. */
  readonly dotAll: boolean;
}

interface Piece {
  readonly text: string;
  readonly end: number;
}

/** A part of the pattern in parentheses, for the size and width estimates. */
interface Frame {
  total: number;
  last: number;
  /** Width of the alternative being read, of its last atom, and of the widest one read. */
  width: number;
  lastWidth: number;
  widest: number;
}

const frame = (): Frame => ({ total: 0, last: 0, width: 0, lastWidth: 0, widest: 0 });

/**
 * Rewrites the JavaScript spellings RE2 reads differently (see the module), refuses what RE2
 * cannot do, and estimates the program's size, in one pass that knows escapes, classes and
 * `\Q...\E`. Everything else is RE2's to judge.
 */
function translate(source: string, what: string, keepDots: boolean): Translated {
  let text = "";
  let dotAll = false;
  const frames: Frame[] = [frame()];
  let top = frames[0];
  const atom = (size: number, width = 2) => {
    top.total += size;
    top.last = size;
    top.width += width;
    top.lastWidth = width;
  };
  const widthOf = (f: Frame) => Math.max(f.widest, f.width);
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === "\\") {
      if (source[i + 1] === "Q") {
        const close = source.indexOf("\\E", i + 2);
        const end = close === -1 ? source.length : close + 2;
        // Closed when it runs to the end, so that the pattern can be wrapped (lastEnd).
        text += source.slice(i, end) + (close === -1 ? "\\E" : "");
        atom(end - i, 2 * (end - i));
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
      top = frame();
      frames.push(top);
      text += c;
      i++;
    } else if (c === ")") {
      if (frames.length > 1) {
        const inner = frames.pop() as Frame;
        top = frames[frames.length - 1];
        atom(inner.total + 1, widthOf(inner));
      }
      text += c;
      i++;
    } else if (c === "|") {
      top.total += 1;
      top.last = 0;
      top.widest = widthOf(top);
      top.width = 0;
      top.lastWidth = 0;
      text += c;
      i++;
    } else if (c === "*" || c === "+" || c === "?") {
      top.total += 1;
      top.last += 1;
      // `?` makes nothing longer (alone, or after another repeat, where it makes it lazy).
      if (c !== "?" && top.lastWidth > 0) {
        top.width = Infinity;
        top.lastWidth = Infinity;
      }
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
      // At most `most` times (`{0}` is left as once: never less than the truth).
      const most = m[2] === "" ? Infinity : Math.max(low, high);
      if (top.lastWidth > 0 && most > 1) {
        top.width += top.lastWidth * (most - 1);
        top.lastWidth *= most;
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
    frames[frames.length - 1].width += widthOf(inner);
  }
  return { text, size: frames[0].total, width: widthOf(frames[0]), dotAll };
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

/** Thrown by a {@link MatchPacer} whose deadline passed while a call was still matching. */
export class MatchDeadline extends Error {
  constructor() {
    super("The deadline passed while matching.");
    this.name = "MatchDeadline";
  }
}

/**
 * Keeps a long matching loop from holding the server: after about {@link SLICE_MS} of work
 * it gives the event loop a turn (other requests, cancellation, end of input, signals are
 * handled then) and throws a `cancelled` TmuxError once `signal` has fired, or a
 * {@link MatchDeadline} once `deadline` (a `performance.now()` time) has passed. Time is read
 * only every {@link CHECK_WORK} units of work, so a loop over short rows stays cheap. It also
 * keeps, for the call's reply, the lines it matched in pieces where a match longer than their
 * overlap could have gone unseen ({@link MatchPacer.pieced}).
 */
export class MatchPacer {
  readonly #signal: AbortSignal | undefined;
  readonly #deadline: number;
  #work = 0;
  #turnAt = performance.now() + SLICE_MS;
  #piecedLines = 0;
  #overlap = Infinity;

  /** A pacer for one call; `signal` is the call's, `deadline` when its matching must stop. */
  constructor(signal?: AbortSignal, deadline = Infinity) {
    this.#signal = signal;
    this.#deadline = deadline;
  }

  /**
   * Counts a line matched in pieces that overlap by `overlap` characters, on which nothing was
   * found but a match longer than that could lie across two of them.
   */
  pieced(overlap: number): void {
    this.#piecedLines++;
    this.#overlap = Math.min(this.#overlap, overlap);
  }

  /** How many lines {@link MatchPacer.pieced} counted. */
  get piecedLines(): number {
    return this.#piecedLines;
  }

  /**
   * What a reply says of the lines {@link MatchPacer.pieced} counted ("" when none): `lines`
   * says how many (a caller that matched each line once), else only that there were some.
   */
  piecedNote(lines: boolean): string {
    if (this.#piecedLines === 0) return "";
    const n = this.#piecedLines;
    const which = lines ? `${n} long line${n === 1 ? " was" : "s were"}` : "long lines were";
    return `${which} matched in pieces overlapping by ${this.#overlap} characters: a longer ` +
      `match on ${lines && n === 1 ? "it" : "them"} could have been missed`;
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
    const now = performance.now();
    if (now >= this.#deadline) throw new MatchDeadline();
    this.#turnAt = now + SLICE_MS;
  }
}

/**
 * Whether `re` matches somewhere in `line`, piece by piece ({@link LineRegex.pieces}: one
 * bounded call each), the event loop getting its turns between them through `pacer`, which
 * counts the line when pieces found nothing and a longer match could have been missed.
 */
export async function testPieces(
  re: LineRegex,
  line: string,
  pacer: MatchPacer,
): Promise<boolean> {
  const pieces = re.pieces(line);
  for (const piece of pieces) {
    const hit = piece.test();
    const pause = pacer.step(piece.end - piece.start, re.cost);
    if (pause) await pause;
    if (hit) return true;
  }
  if (pieces.length > 1 && !re.fits) pacer.pieced(re.overlap);
  return false;
}
