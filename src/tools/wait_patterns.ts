/**
 * Patterns a wait watches for (`wait_for_text`'s patterns and stop patterns): compiling a
 * literal or an RE2 regex, and matching it against lines or against only the written part of
 * captured rows, so that old text on a row (a spinner's, a prompt's) never counts as new;
 * paced, so a costly pattern on long rows yields to the event loop.
 *
 * @module
 */

import { compileRegex, type LineRegex, loadRegexEngine, MatchPacer } from "../mcp/pattern.ts";
import { insidePair, type WrittenRow } from "./captured_rows.ts";

/** A compiled pattern and where it came from. */
export interface Pattern {
  readonly text: string;
  readonly index: number;
  readonly test: (line: string) => boolean;
  /**
   * Whether a match in `line` takes in some of its written part [from, to) (UTF-16 indices):
   * starts before `to` and ends after `from`. Text before `from` or from `to` on alone, old
   * text, never matches. A part that begins at the line's start, or runs to its end, is open
   * there: an empty match counts anywhere after `from` and before `to`, the line's ends
   * included when the part reaches them. Work past one pass over `line` is added to
   * `work.units` (characters times the pattern's cost), for pacing.
   */
  readonly reaches: (line: string, from: number, to: number, work: { units: number }) => boolean;
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
): Promise<Pattern[]> {
  if (regex && patterns.length > 0) await loadRegexEngine();
  return patterns.map((text, index): Pattern => {
    if (regex) {
      const re = compileRegex(text, matchCase, `${what}[${index}]`);
      return {
        text,
        index,
        test: (line) => re.test(line),
        reaches: (line, from, to, work) => regexReaches(re, line, from, to, work),
        cost: re.cost,
      };
    }
    const source = text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const re = new RegExp(source, matchCase ? "u" : "iu");
    const all = new RegExp(source, matchCase ? "gu" : "giu");
    return {
      text,
      index,
      test: (line) => re.test(line),
      reaches: (line, from, to) =>
        from <= 0 && to >= line.length ? re.test(line) : literalReaches(all, text, line, from, to),
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
 * {@link Pattern.reaches} for a regex. When the written part runs to the line's end (output
 * appended, a row written whole: the usual case) one pass decides: the match that ends last
 * ends after `from`. Otherwise the matches that start first, and are longest there, are looked
 * at: one that starts in the part counts; one that starts before it counts when it ends after
 * `from`, tried start by start (a later start can reach further). Those searches are charged
 * the rest of the line each; past {@link EXACT_PASSES} passes' worth (a pathological pattern
 * on a long row, a match at nearly every character before the part) the one-pass answer
 * stands, which takes a match ending after `from` for one that reaches into the part.
 */
function regexReaches(
  re: LineRegex,
  line: string,
  from: number,
  to: number,
  work: { units: number },
): boolean {
  if (to >= line.length) return from <= 0 ? re.test(line) : re.lastEnd(line) > from;
  const n = line.length;
  // On code point boundaries: a search never starts inside a pair.
  if (insidePair(line, from)) from--;
  if (insidePair(line, to)) to++;
  let spent = 0;
  const first = (start: number) => {
    spent += n - start + 32;
    return re.firstFrom(line, start);
  };
  try {
    // The part begins the line: the first match starts in it, or none does.
    if (from === 0) return (first(0)?.[0] ?? n) < to;
    spent += n + 32;
    if (re.lastEnd(line) <= from) return false;
    // A match that starts in the part; none from `from` on at all: the one that ends after it
    // starts before it.
    let hit = first(from);
    if (hit === null) return true;
    if (hit[0] === from && hit[1] === from) {
      // Empty at `from` (before the part's first character): whatever starts after it.
      hit = first(nextCodePoint(line, from));
      if (hit === null) return true;
    }
    if (hit[0] < to) return true;
    // A match that starts before the part and runs into it.
    const budget = Math.max(EXACT_PASSES * (n + 32), EXACT_WORK / re.cost);
    for (let start = 0; spent <= budget;) {
      const m = first(start);
      if (m === null || m[0] >= from) return false;
      if (m[1] > from) return true;
      start = nextCodePoint(line, m[0]);
    }
    return true;
  } finally {
    work.units += spent * re.cost;
  }
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
      const hit = p.test(line);
      const pause = pacer.step(line.length, p.cost);
      if (pause) await pause;
      if (!hit) continue;
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
  const cost = patterns.reduce((sum, p) => sum + p.cost, 0);
  let first: { pattern: Pattern; line: string } | null = null;
  const matching: string[] = [];
  for (const line of lines) {
    const pattern = patterns.find((p) => p.test(line));
    const pause = pacer.step(line.length, cost);
    if (pause) await pause;
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
  const cost = patterns.reduce((sum, p) => sum + p.cost, 0);
  let first: { pattern: Pattern; line: string } | null = null;
  const matching: string[] = [];
  for (const row of rows) {
    const cut = row.shown !== row.text;
    const skip = row.text.length - row.shown.length;
    let line = row.shown;
    // Matched as the screen reads (`DONE$` on a padded row) and, where the program wrote blanks
    // at the row's end, with them too (a prompt's "$ "): those blanks belong to the written
    // part when it runs to the row's end, else they were there (after the unchanged end).
    const forms = row.line === undefined || row.line === row.text
      ? [row.text]
      : [row.text, row.line];
    // Each piece of the written part (one, unless old text lies inside it: see WrittenRow).
    const parts = row.parts ?? [{ from: row.from, to: row.to ?? row.text.length }];
    const work = { units: 0 };
    const pattern = patterns.find((p) =>
      forms.some((whole) =>
        parts.some((part) => {
          const to = part.to >= row.text.length ? whole.length : part.to;
          const shownFrom = Math.max(0, part.from - skip);
          if (cut && p.reaches(whole.slice(skip), shownFrom, to - skip, work)) return true;
          if (!p.reaches(whole, part.from, to, work)) return false;
          if (cut) line = row.text;
          return true;
        })
      )
    );
    let pause = pacer.step(
      row.text.length * (cut ? 2 : 1) * forms.length * parts.length,
      cost,
    );
    if (pause) await pause;
    pause = work.units > 0 ? pacer.step(work.units, 1) : null;
    if (pause) await pause;
    if (!pattern) continue;
    first ??= { pattern, line };
    matching.push(line);
  }
  return first ? { ...first, matching } : null;
}
