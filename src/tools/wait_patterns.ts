/**
 * Patterns a wait watches for (`wait_for_text`'s patterns and stop patterns): compiling a
 * literal or an RE2 regex, and matching it against lines or against only the written part of
 * captured rows, so that old text on a row (a spinner's, a prompt's) never counts as new;
 * paced, so a costly pattern on long rows yields to the event loop: a regex matches a line
 * longer than one call to the engine may take in pieces, with turns between them (see
 * ../mcp/pattern.ts).
 *
 * @module
 */

import { compileRegex, type LinePiece, type LineRegex, loadRegexEngine } from "../mcp/pattern.ts";
import { MatchPacer, testPieces } from "../mcp/pattern_pacer.ts";
import { insidePair, type WrittenRow } from "./captured_rows.ts";

/** A compiled pattern and where it came from. */
export interface Pattern {
  readonly text: string;
  readonly index: number;
  /** Whether the pattern matches somewhere in `line`. Paced through `pacer`. */
  readonly test: (line: string, pacer: MatchPacer) => Promise<boolean>;
  /**
   * Whether a match in `line` takes in some of its written part [from, to) (UTF-16 indices):
   * starts before `to` and ends after `from`. Text before `from` or from `to` on alone, old
   * text, never matches. A part that begins at the line's start, or runs to its end, is open
   * there: an empty match counts anywhere after `from` and before `to`, the line's ends
   * included when the part reaches them. Paced through `pacer`, call by call.
   */
  readonly reaches: (line: string, from: number, to: number, pacer: MatchPacer) => Promise<boolean>;
  /** What a character of text costs it, for pacing (see MatchPacer). */
  readonly cost: number;
}

/**
 * Compiles the patterns: a literal is an escaped JavaScript RegExp (linear, and as fast as
 * before); a regex is RE2 (see ../mcp/pattern.ts), refused up front when it is invalid, too
 * large, or uses lookaround or backreferences.
 */
export async function compilePatterns(
  patterns: readonly string[],
  regex: boolean,
  matchCase: boolean,
  what: string,
  callWork?: number,
): Promise<Pattern[]> {
  if (regex && patterns.length > 0) await loadRegexEngine();
  return patterns.map((text, index): Pattern => {
    if (regex) {
      const re = compileRegex(text, matchCase, `${what}[${index}]`, callWork);
      return {
        text,
        index,
        test: async (line, pacer) => {
          if (line.length > re.piece) return await testPieces(re, line, pacer);
          const hit = re.test(line);
          const pause = pacer.step(line.length, re.cost);
          if (pause) await pause;
          return hit;
        },
        reaches: (line, from, to, pacer) => regexReaches(re, line, from, to, pacer),
        cost: re.cost,
      };
    }
    // A literal is found by the JavaScript engine, in linear time and fast, whatever the
    // line's length: one call, paced after it.
    const source = text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const re = new RegExp(source, matchCase ? "u" : "iu");
    const all = new RegExp(source, matchCase ? "gu" : "giu");
    const paced = async (hit: boolean, line: string, pacer: MatchPacer) => {
      const pause = pacer.step(line.length, 1);
      if (pause) await pause;
      return hit;
    };
    return {
      text,
      index,
      test: (line, pacer) => paced(re.test(line), line, pacer),
      reaches: (line, from, to, pacer) =>
        paced(
          from <= 0 && to >= line.length
            ? re.test(line)
            : literalReaches(all, text, line, from, to),
          line,
          pacer,
        ),
      cost: 1,
    };
  });
}

/**
 * Whether the literal `all` (global) matches in `line` starting before `to` and ending after
 * `from`: only a match that starts within the literal's length before `from` can, so few are
 * tried, and matches come in order of their start, so the first from `to` on ends the search.
 */
function literalReaches(
  all: RegExp,
  text: string,
  line: string,
  from: number,
  to: number,
): boolean {
  all.lastIndex = Math.max(0, from - text.length);
  while (true) {
    const m = all.exec(line);
    if (m === null || m.index >= to) return false;
    if (m.index + m[0].length > from) return true;
    all.lastIndex = nextCodePoint(line, m.index);
  }
}

/** The index of the code point after the one at `i` (never inside a pair). */
function nextCodePoint(line: string, i: number): number {
  return i + ((line.codePointAt(i) ?? 0) > 0xffff ? 2 : 1);
}

/**
 * Passes over a line (charged by where each search starts) that deciding whether a regex
 * takes in a written part with an unchanged end may cost, with {@link EXACT_WORK} at least.
 */
const EXACT_PASSES = 8;
/** Work (characters times the program's cost) always allowed for that, on short lines. */
const EXACT_WORK = 1 << 22;

/**
 * {@link Pattern.reaches} for a regex, piece by piece (see LineRegex.pieces: a line one call
 * can match is one piece): the pieces that can hold a match taking in the part, until one
 * does. On a line in more than one piece, a match longer than their overlap could lie across
 * two unseen: the pacer counts the line when none was found.
 */
async function regexReaches(
  re: LineRegex,
  line: string,
  from: number,
  to: number,
  pacer: MatchPacer,
): Promise<boolean> {
  if (to < line.length) {
    // On code point boundaries: a search never starts inside a pair.
    if (insidePair(line, from)) from--;
    if (insidePair(line, to)) to++;
  }
  const pieces = re.pieces(line);
  for (const piece of pieces) {
    // A match that ends after `from` ends in a piece that does; one that starts before `to`
    // starts in a piece that does.
    if (from > 0 && piece.end <= from) continue;
    if (to < line.length && piece.start >= to) break;
    if (await pieceReaches(re, piece, line, from, to, pacer)) return true;
  }
  if (pieces.length > 1 && !re.fits) pacer.pieced(re.overlap);
  return false;
}

/**
 * Whether a match in `piece` takes in the written part [from, to) of `line` (see
 * {@link Pattern.reaches}). When the part runs to the line's end (output appended, a row
 * written whole: the usual case) one pass decides: the match that ends last ends after
 * `from`. Otherwise the matches that start first, and are longest there, are looked at: one
 * that starts in the part counts; one that starts before it counts when it ends after `from`,
 * tried start by start (a later start can reach further). Those searches are charged the rest
 * of the piece each; past {@link EXACT_PASSES} passes' worth (a pathological pattern on a long
 * row, a match at nearly every character before the part) the one-pass answer stands, which
 * takes a match ending after `from` for one that reaches into the part. Each search is one
 * bounded call, paced.
 */
async function pieceReaches(
  re: LineRegex,
  piece: LinePiece,
  line: string,
  from: number,
  to: number,
  pacer: MatchPacer,
): Promise<boolean> {
  const n = line.length;
  const size = piece.end - piece.start;
  const paced = async <T>(chars: number, result: T): Promise<T> => {
    const pause = pacer.step(chars, re.cost);
    if (pause) await pause;
    return result;
  };
  if (to >= n) {
    return from <= 0 ? paced(size, piece.test()) : paced(size, piece.lastEnd() > from);
  }
  let spent = 0;
  const first = (start: number) => {
    const chars = Math.max(0, piece.end - Math.max(start, piece.start));
    spent += chars + 32;
    return paced(chars, piece.firstFrom(start));
  };
  // The part begins the line: the first match starts in it, or none does.
  if (from === 0) return ((await first(piece.start))?.[0] ?? n) < to;
  spent += size + 32;
  if (await paced(size, piece.lastEnd()) <= from) return false;
  // A match that starts in the part; none from `from` on at all: the one that ends after it
  // starts before it.
  let hit = await first(from);
  if (hit === null) return true;
  if (hit[0] === from && hit[1] === from) {
    // Empty at `from` (before the part's first character): whatever starts after it.
    hit = await first(nextCodePoint(line, from));
    if (hit === null) return true;
  }
  if (hit[0] < to) return true;
  // A match that starts before the part and runs into it.
  const budget = Math.max(EXACT_PASSES * (size + 32), EXACT_WORK / re.cost);
  for (let start = piece.start; spent <= budget;) {
    const m = await first(start);
    if (m === null || m[0] >= from) return false;
    if (m[1] > from) return true;
    start = nextCodePoint(line, m[0]);
  }
  return true;
}

/** The patterns `lines` show, in order of the patterns. */
export async function patternsIn(
  patterns: readonly Pattern[],
  lines: readonly string[],
  pacer: MatchPacer,
): Promise<Pattern[]> {
  const seen: Pattern[] = [];
  for (const p of patterns) {
    for (const line of lines) {
      if (!await p.test(line, pacer)) continue;
      seen.push(p);
      break;
    }
  }
  return seen;
}

/** What a scan found: the first line a pattern matched, with the pattern, and every such line. */
export interface PatternScan {
  readonly pattern: Pattern;
  readonly line: string;
  readonly matching: string[];
}

/** The first line (in order) any pattern matches, with the pattern, and every matching line. */
export async function scan(
  patterns: readonly Pattern[],
  lines: readonly string[],
  pacer: MatchPacer,
): Promise<PatternScan | null> {
  let first: { pattern: Pattern; line: string } | null = null;
  const matching: string[] = [];
  for (const line of lines) {
    let pattern: Pattern | null = null;
    for (const p of patterns) {
      if (!await p.test(line, pacer)) continue;
      pattern = p;
      break;
    }
    if (!pattern) continue;
    first ??= { pattern, line };
    matching.push(line);
  }
  return first ? { ...first, matching } : null;
}

/**
 * The first row (in order) any pattern reaches into the written part of (see
 * {@link WrittenRow}), with the pattern, and every such row: what it shows as written, or the
 * whole row when the match lies outside that (a pattern spanning the prompt).
 */
export async function scanRows(
  patterns: readonly Pattern[],
  rows: readonly WrittenRow[],
  pacer: MatchPacer,
): Promise<PatternScan | null> {
  let first: { pattern: Pattern; line: string } | null = null;
  const matching: string[] = [];
  for (const row of rows) {
    const hit = await rowHit(patterns, row, pacer);
    if (!hit) continue;
    first ??= hit;
    matching.push(hit.line);
  }
  return first ? { ...first, matching } : null;
}

/** The first pattern that reaches into `row`'s written part, and what to report of the row. */
async function rowHit(
  patterns: readonly Pattern[],
  row: WrittenRow,
  pacer: MatchPacer,
): Promise<{ pattern: Pattern; line: string } | null> {
  const cut = row.shown !== row.text;
  const skip = row.text.length - row.shown.length;
  // Matched as the screen reads (`DONE$` on a padded row) and, where the program wrote blanks
  // at the row's end, with them too (a prompt's "$ "): those blanks belong to the written
  // part when it runs to the row's end, else they were there (after the unchanged end).
  const forms = row.line === undefined || row.line === row.text ? [row.text] : [row.text, row.line];
  // Each piece of the written part (one, unless old text lies inside it: see WrittenRow).
  const parts = row.parts ?? [{ from: row.from, to: row.to ?? row.text.length }];
  for (const pattern of patterns) {
    for (const whole of forms) {
      for (const part of parts) {
        const to = part.to >= row.text.length ? whole.length : part.to;
        const shownFrom = Math.max(0, part.from - skip);
        if (cut && await pattern.reaches(whole.slice(skip), shownFrom, to - skip, pacer)) {
          return { pattern, line: row.shown };
        }
        if (await pattern.reaches(whole, part.from, to, pacer)) {
          return { pattern, line: cut ? row.text : row.shown };
        }
      }
    }
  }
  return null;
}
