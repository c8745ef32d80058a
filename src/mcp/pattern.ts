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
 * milliseconds (pattern_pacer.ts's {@link MatchPacer}), between pieces too, where a cancelled
 * call stops.
 *
 * The dialect is RE2's; the JavaScript spellings a model is likely to write keep the meaning
 * they had when patterns were JavaScript regular expressions in Unicode mode: `\s` is
 * JavaScript's whitespace (RE2's is ASCII), `.` stops at `\r` and U+2028/2029 as well, `\uXXXX`
 * and `\u{X}` are code points, `\cX` a control character, `[\b]` a backspace, `[]` and `[^]`
 * nothing and anything. Lookaround and backreferences, which need backtracking, are refused
 * with a reason (pattern_dialect.ts translates them). The engine is loaded on first use, so
 * starting the server does not pay for it.
 *
 * @module
 */

import type { Matcher, RE2JS } from "re2js";
import { ToolFailure } from "./errors.ts";
import { ANYTHING, translate } from "./pattern_dialect.ts";

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
