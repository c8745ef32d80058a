/**
 * search_panes: find text across panes. Toolset inspect.
 *
 * The pattern never reaches tmux: panes are listed from one snapshot, captured (many panes per
 * tmux invocation, at most {@link SEARCH_CONCURRENCY} invocations at once) and matched here
 * (a regex on RE2, in linear time, see ../mcp/pattern.ts). So a `#(...)` or `#{...}` in a
 * pattern is only text to find, never a format tmux could expand or run. Line numbers are
 * tmux's (0 = top of the screen, negative = history), so a match can be read around with
 * capture_pane.
 *
 * @module
 */

import { z } from "zod";
import { capList, cutString, fitEntries, fitPlacements, jsonBytes } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { compileRegex, loadRegexEngine } from "../mcp/pattern.ts";
import { MatchPacer, testPieces } from "../mcp/pattern_pacer.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import {
  count,
  int,
  metadataBound,
  paneIdSchema,
  panePlacementSchema,
  sessionRefSchema,
} from "../mcp/schemas.ts";
import { isBlankRow, trimRow } from "../tmux/capture.ts";
import { chainPanes, readPanes } from "../tmux/capture_many.ts";
import { batchRows, type RowBatch } from "../tmux/capture_many_batch.ts";
import type { PlacedBatch } from "../tmux/capture_many_control.ts";
import { RowsMoved, type ShownReads, shownRows, shownRunRows } from "../tmux/capture_tail.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { findSession, SESSIONS_ONLY } from "../tmux/snapshot.ts";
import type { PanePlace } from "../tmux/pane_reads.ts";
import { LINE_DRAWING_GLYPHS } from "../tmux/shown_cells.ts";

/** tmux invocations running at once for one search (the runner also bounds all of them). */
export const SEARCH_CONCURRENCY = 8;

/** Longest history reach a search may ask for. */
export const MAX_SCROLLBACK_LINES = 100_000;

/** Longest matched line returned, in UTF-8 bytes. */
const MAX_LINE_BYTES = 2_048;

/** Placements kept per match. */
const MAX_PLACEMENTS = 8;

/**
 * What one match's placements take at most, as JSON: two session names of the longest kept
 * (2 048 bytes each). Every match carries its pane's placements again, so this is paid once per
 * match: a few matches with long names must not fill the result alone.
 */
const PLACEMENTS_BYTES = 4_608;

/**
 * Reads of a pane that moved while it was searched, first one included: the pane is searched
 * whole again, from its read as printed, until its rows hold still between the two reads; then
 * it is reported as printing ({@link searchInPanes}).
 */
export const MOVING_TRIES = 3;

/** Entries kept in the lists of capped and skipped panes. */
const MAX_PANE_NOTES = 50;

/** What a matcher found in one pane's text. */
export interface TextMatches {
  /** Rows that match (each row counts once, however often it matches). */
  readonly found: number;
  /** The last `max` matching rows (nearest the bottom), in order: index in the text, text. */
  readonly kept: { row: number; text: string }[];
}

/** Finds the matching rows of a pane's text (rows joined by newlines). */
export interface TextMatcher {
  /**
   * Matches rows 0..`last` of `text`, keeping the last `max`. A long match gives the event
   * loop turns through `pacer` (and stops, throwing, when its call is cancelled), which also
   * counts the long rows matched in pieces where a match longer than their overlap could
   * have been missed.
   */
  match(text: string, last: number, max: number, pacer?: MatchPacer): Promise<TextMatches>;
  /** Whether a blank row can match (then rows below the last written one must be cut off). */
  readonly matchesBlank: boolean;
  /**
   * Whether a row as a person sees it may match where the row as printed does not: a pattern
   * that may match a blank a hidden character leaves, or a glyph of the line-drawing set
   * (see {@link searchInPanes}).
   */
  readonly seesMore: boolean;
}

/**
 * A blank, or a glyph of the line-drawing set (with what folds to one when case does not
 * matter: `Π` is `π`): what a row as shown may hold where the row as printed holds another
 * character (a hidden one, a letter drawn as a line).
 */
const SHOWN_ONLY = new RegExp(`[\\s${LINE_DRAWING_GLYPHS}]`, "u");
const SHOWN_ONLY_FOLDED = new RegExp(SHOWN_ONLY.source, "iu");

/**
 * Whether `pattern` may match a row as shown where it does not match the row as printed. A
 * literal: when it holds a blank or a glyph. A regex: unless it is made only of characters
 * that stand for themselves (none of those), escaped ASCII punctuation, `\w` and `\d` (never a
 * blank or a glyph), groups, alternatives and quantifiers; anything else may (`^`, `$` and
 * `\b` meet a blank or a row's trimmed end, a class or `.` a blank or a glyph, a look-ahead
 * the absence of a hidden character).
 */
function mayMatchShown(pattern: string, regex: boolean, matchCase: boolean): boolean {
  const shownOnly = matchCase ? SHOWN_ONLY : SHOWN_ONLY_FOLDED;
  if (!regex) return shownOnly.test(pattern);
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[++i] ?? "";
      if (next === "w" || next === "d" || /^[!-/:-@[-`{-~]$/.test(next)) continue;
      return true;
    }
    if (".^$[]".includes(c) || (c === "(" && pattern[i + 1] === "?")) return true;
    if (shownOnly.test(c)) return true;
  }
  return false;
}

/**
 * Builds the matcher: a literal substring by default, a regular expression in RE2 syntax with
 * `regex` (see ../mcp/pattern.ts: linear time, JavaScript's `\s` and `.`); case-insensitive
 * unless `matchCase`. A bad regex is a refusal that says what is wrong, before any pane is
 * read. Synchronous, so a literal search never waits for the regex engine: with `regex`, call
 * {@link loadRegexEngine} first ({@link buildMatcher} does both).
 *
 * A literal is found over the pane's whole text at once (with `indexOf`, or an escaped RegExp
 * that folds case when case does not matter), so a search through 200 000 rows of history does
 * not make a string per row; a regex is tested row by row, since `^`, `$` and classes like `\s`
 * are about one row.
 */
export function lineMatcher(pattern: string, regex: boolean, matchCase: boolean): TextMatcher {
  if (!regex) return literalMatcher(pattern, matchCase);
  const re = compileRegex(pattern, matchCase, "The pattern");
  const matchesBlank = re.test("");
  return {
    matchesBlank,
    seesMore: matchesBlank || mayMatchShown(pattern, true, matchCase),
    async match(text, last, max, pacer = new MatchPacer()) {
      const rows = text.split("\n");
      const kept: { row: number; text: string }[] = [];
      let found = 0;
      for (let i = 0; i <= last && i < rows.length; i++) {
        const row = rows[i];
        // A row one call can match is matched at once (the usual case: no await); a longer
        // one, a wrapped line joined from its rows, in pieces with turns between them.
        let hit: boolean;
        if (row.length <= re.piece) {
          hit = re.test(row);
          const pause = pacer.step(row.length, re.cost);
          if (pause) await pause;
        } else hit = await testPieces(re, row, pacer);
        if (hit) {
          found++;
          kept.push({ row: i, text: row });
          if (kept.length > max) kept.shift();
        }
      }
      return { found, kept };
    },
  };
}

/** {@link lineMatcher}, loading the regex engine first when `regex` asks for it. */
export async function buildMatcher(
  pattern: string,
  regex: boolean,
  matchCase: boolean,
): Promise<TextMatcher> {
  if (regex) await loadRegexEngine();
  return lineMatcher(pattern, regex, matchCase);
}

function literalMatcher(pattern: string, matchCase: boolean): TextMatcher {
  // Case-insensitive, a literal is found as wait_for_text finds one: an escaped RegExp with
  // `iu`, which folds case (Σ, σ and ς are one letter; lowercasing keeps the final ς apart)
  // and keeps every index of the text (lowercasing changes the length of a few characters,
  // İ). It is also faster than lowercasing a long history to search it with indexOf.
  const folded = matchCase
    ? null
    : new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "giu");
  const find = (text: string, from: number): number => {
    if (folded === null) return text.indexOf(pattern, from);
    folded.lastIndex = from;
    // A place in the match (its last character), enough to tell its row: no match array.
    return folded.test(text) ? Math.max(from, folded.lastIndex - 1) : -1;
  };
  return {
    matchesBlank: false,
    seesMore: mayMatchShown(pattern, false, matchCase),
    // deno-lint-ignore require-await
    async match(text, last, max) {
      // A row holds no newline, so a pattern with one matches no row.
      if (pattern.includes("\n")) return { found: 0, kept: [] };
      const spans: [number, number, number][] = [];
      let found = 0;
      let row = 0;
      let rowStart = 0;
      let from = 0;
      for (let at = find(text, from); at !== -1; at = find(text, from)) {
        let newline = text.indexOf("\n", rowStart);
        while (newline !== -1 && newline < at) {
          row++;
          rowStart = newline + 1;
          newline = text.indexOf("\n", rowStart);
        }
        if (row > last) break;
        found++;
        spans.push([row, rowStart, newline === -1 ? text.length : newline]);
        if (spans.length > max) spans.shift();
        if (newline === -1) break;
        row++;
        rowStart = from = newline + 1;
      }
      return {
        found,
        kept: spans.map(([r, start, end]) => ({ row: r, text: text.slice(start, end) })),
      };
    },
  };
}

/** What one pane's search found. */
export interface PaneSearch {
  readonly pane: PanePlace;
  /** The matches kept (the last `maxMatchesPerPane`, nearest the bottom), in line order. */
  readonly matches: { lineNumber: number; text: string }[];
  /** Matches found in the pane, kept or not. */
  readonly found: number;
  /** Why the pane could not be searched, or null. */
  readonly skipped: string | null;
}

/** Runs `work` over `items` with at most `limit` running at once, keeping the order. */
async function mapPool<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * One pane's lines found as printed that may match as a person sees them: each line's first
 * and last row, numbered as the pane stood at the read (`historySize`); a last row of null is
 * the screen's bottom.
 */
interface Candidates {
  historySize: number;
  readonly spans: [number, number | null][];
  /**
   * Each span's line as printed, as a sum ({@link lineSum}): its rows read again must print
   * it, or the pane moved between the reads (a pane at its history limit moves with its history
   * size flat, which no number tells).
   */
  readonly sums: number[];
  /** The last span, when its last row is told by the next batch (a wrapped line's). */
  open: boolean;
}

/**
 * Takes one batch of a pane read as printed: the lines `filter` finds (every line without one)
 * as candidates, with the rows each spans.
 */
async function collectBatch(
  batch: RowBatch,
  into: Candidates,
  filter: TextMatcher | null,
  pacer: MatchPacer,
): Promise<void> {
  // The pane is read again from its start: what it gave before is void.
  if (batch.restart) {
    into.spans.length = 0;
    into.sums.length = 0;
    into.open = false;
  }
  into.historySize = (batch as PlacedBatch).historySize ?? into.historySize;
  const rowOf = (line: number) => batch.lineRows ? batch.lineRows[line] : batch.first + line;
  if (into.open && batch.count > 0) {
    into.spans[into.spans.length - 1][1] = rowOf(0) - 1;
    into.open = false;
  }
  const lines = filter === null
    ? batchRows(batch).map((text, row) => ({ row, text }))
    : (await filter.match(batch.text, batch.count - 1, Infinity, pacer)).kept;
  for (const { row: i, text } of lines) {
    into.sums.push(lineSum(trimRow(text)));
    const start = rowOf(i);
    if (!batch.lineRows) into.spans.push([start, start]);
    else if (i + 1 < batch.count) into.spans.push([start, batch.lineRows[i + 1] - 1]);
    else {
      into.spans.push([start, null]);
      into.open = !batch.last;
    }
  }
}

/**
 * A 32-bit sum of a line's text (FNV-1a over its UTF-16 units, seeded with its length): what a
 * candidate keeps of its line, to tell it is the same line when read again, without holding
 * a deep history's text.
 */
function lineSum(text: string): number {
  let h = 0x811c9dc5 ^ text.length;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** How {@link searchInPanes} searches. */
export interface SearchOptions {
  readonly matcher: TextMatcher;
  readonly scrollbackLines: number;
  readonly maxMatchesPerPane: number;
  /** The call's pacer (on the call's signal), for what it noted of long rows. */
  readonly pacer?: MatchPacer;
}

/**
 * What lines as printed a line as shown that `pattern` matches must hold, as a literal matcher;
 * null when no line can be left out. A row as shown is the row as printed with some cells
 * blank (hidden text) and line-drawing letters drawn as glyphs, column for column: a literal's
 * run of characters that are neither blanks nor glyphs is, where it matches as shown, printed
 * there as it is. The longest such run is looked for.
 */
export function printedFilter(
  pattern: string,
  regex: boolean,
  matchCase: boolean,
  matcher: TextMatcher,
): TextMatcher | null {
  if (!matcher.seesMore) return matcher;
  if (regex) return null;
  const split = new RegExp(`${SHOWN_ONLY.source}+`, matchCase ? "u" : "iu");
  const runs = pattern.split(split).filter((r) => r !== "");
  if (runs.length === 0) return null;
  const longest = runs.reduce((a, b) => b.length > a.length ? b : a);
  return literalMatcher(longest, matchCase);
}

/**
 * Captures and matches each pane: many panes per tmux invocation (see `chainPanes`), at most
 * {@link SEARCH_CONCURRENCY} invocations at once, each pane's rows matched batch by batch as
 * they arrive (so what is held at once is a few batches, however deep the history). A pane
 * that closed after it was listed, or whose capture failed, is reported as skipped with the
 * reason; a cancelled call stops, in the middle of matching too.
 *
 * What is matched is the rows as a person sees them (text printed hidden or in its
 * background's colour is no match: see shown_cells.ts), which costs tmux up to ~45 times a
 * plain read (a program that gives every cell colours of its own) and is built whole before
 * tmux answers anyone: so every pane is read as printed, the lines that may match found there
 * (`filter`: a pane's text as printed holds every match its text as shown does, but where a
 * blank or a glyph is matched itself, see {@link printedFilter}), and only those lines' rows
 * read again as shown, a few rows per tmux call ({@link shownRows}).
 *
 * Those rows are read again by number, and a pane that prints meanwhile moves them: a history
 * that grew says by how much, but one at its limit moves with its size flat (tmux drops its
 * oldest row for each new one) or falling (a tenth trimmed at once). So the lines read again
 * must print what the first read found there: where one does not, or the rows left the pane,
 * the pane is searched whole again, up to {@link MOVING_TRIES} reads, and then reported as
 * skipped, printing (never searched in part, never a clear that did not happen). A pane that
 * holds still costs nothing more: the rows as printed come with the rows as shown, from the
 * same capture.
 */
export async function searchInPanes(
  ctx: TmuxContext,
  panes: readonly PanePlace[],
  options: SearchOptions,
  filter: TextMatcher | null = options.matcher.seesMore ? null : options.matcher,
): Promise<PaneSearch[]> {
  const pacer = options.pacer ?? new MatchPacer(ctx.signal);
  const printed = await collectCandidates(ctx, panes, options.scrollbackLines, filter, pacer);
  // A long line matched in pieces again is the same line: counted once, by the first read.
  const again = { ...options, pacer: filter === null ? pacer : pacer.again() };
  return await mapPool(printed, SEARCH_CONCURRENCY, async (first): Promise<PaneSearch> => {
    let p = first;
    for (let tries = 1;; tries++) {
      if (p.skipped !== null || p.candidates.spans.length === 0) {
        return { pane: p.pane, matches: [], found: 0, skipped: p.skipped };
      }
      try {
        return await matchShown(ctx, p.pane, p.candidates, again);
      } catch (error) {
        if (!(error instanceof TmuxError) || error.kind === "cancelled") throw error;
        if (error instanceof RowsMoved) {
          if (tries >= MOVING_TRIES) {
            return { pane: p.pane, matches: [], found: 0, skipped: printingNote(tries) };
          }
          // Read whole again: the lines that may match, as the pane stands now (a long line
          // matched in pieces again is the same line: counted once, by the first read).
          [p] = await collectCandidates(
            ctx,
            [p.pane],
            options.scrollbackLines,
            filter,
            pacer.again(),
            false,
          );
          continue;
        }
        const skipped = error.kind === "no-target"
          ? "closed while it was read"
          : `capture failed: ${error.message}`;
        return { pane: p.pane, matches: [], found: 0, skipped };
      }
    }
  });
}

/** Why a pane that moved under each of `tries` searches was not searched. */
function printingNote(tries: number): string {
  return `kept printing while it was read: its rows moved between the read of its text and ` +
    `the read of the lines that may match, ${tries} times, so no search of it is whole. ` +
    "Search again once it settles (wait_for_idle), or read it with capture_pane.";
}

/**
 * Reads a pane's candidate lines again as a person sees them, in runs of rows of at most
 * SHOWN_CELLS cells, and matches them: the pane's search. Line numbers follow the pane as it
 * stands at each read.
 */
async function matchShown(
  ctx: TmuxContext,
  pane: PanePlace,
  candidates: Candidates,
  options: SearchOptions,
): Promise<PaneSearch> {
  const { matcher, maxMatchesPerPane: max } = options;
  const pacer = options.pacer ?? new MatchPacer(ctx.signal);
  const run = shownRunRows(pane.width);
  // A last line ends at the screen's bottom (a pane the layout left no row keeps one).
  const bottom = Math.max(0, pane.height - 1);
  const spans = candidates.spans.map(([a, b]): [number, number] => [a, Math.max(a, b ?? bottom)]);
  const base = { historySize: candidates.historySize };
  let historyFound = 0;
  const history: { lineNumber: number; text: string }[] = [];
  // Screen lines: blank ones below the last written one are padding, cut off at the end when
  // a blank line can match.
  const screen: { lineNumber: number; text: string; matched: boolean }[] = [];
  let lastWritten = -Infinity;
  const how: ShownReads = { spawn: false };
  for (let k = 0; k < spans.length;) {
    let end = k + 1;
    while (end < spans.length && spans[end][1] - spans[k][0] + 1 <= run) end++;
    const lo = spans[k][0];
    const hi = spans[end - 1][1];
    const got = await shownRows(
      ctx.runner,
      ctx.address,
      pane.id,
      base,
      lo,
      hi,
      {
        signal: ctx.signal,
      },
      "views",
      how,
    );
    const rowsOf = (rows: string[], [a, b]: [number, number]) =>
      trimRow(rows.slice(a - lo, b - lo + 1).join(""));
    // Rows that print another line than the first read found there: the pane moved under the
    // reads (at its history limit, with its size flat), and these rows are other lines.
    for (let i = k; i < end; i++) {
      if (lineSum(rowsOf(got.printed, spans[i])) !== candidates.sums[i]) {
        throw new RowsMoved(pane.id);
      }
    }
    const lines = spans.slice(k, end).map((span) => rowsOf(got.shown, span));
    const { kept } = await matcher.match(lines.join("\n"), lines.length - 1, Infinity, pacer);
    const matched = new Set(kept.map((m) => m.row));
    lines.forEach((text, i) => {
      const row = spans[k + i][0];
      const entry = { lineNumber: row - got.moved, text, matched: matched.has(i) };
      if (row >= 0) {
        screen.push(entry);
        if (!isBlankRow(text)) lastWritten = row;
      } else if (entry.matched) {
        historyFound++;
        history.push(entry);
        if (history.length > max) history.shift();
      }
    });
    k = end;
  }
  const shown = screen.filter((e, i) =>
    e.matched &&
    (!matcher.matchesBlank || spans[spans.length - screen.length + i][0] <= lastWritten)
  );
  const matches = [...history, ...shown].slice(-max).map(({ lineNumber, text }) => ({
    lineNumber,
    text,
  }));
  return { pane, matches, found: historyFound + shown.length, skipped: null };
}

/**
 * Reads every pane as printed and finds its candidate lines (see {@link searchInPanes}); told
 * as progress unless `told` is false (a pane read again).
 */
async function collectCandidates(
  ctx: TmuxContext,
  panes: readonly PanePlace[],
  scrollbackLines: number,
  filter: TextMatcher | null,
  pacer: MatchPacer,
  told = true,
): Promise<{ pane: PanePlace; candidates: Candidates; skipped: string | null }[]> {
  const byId = new Map(panes.map((p) => [p.id, p]));
  const chains = chainPanes(panes.map((p) => p.id), scrollbackLines);
  let done = 0;
  const searched = await mapPool(chains, SEARCH_CONCURRENCY, async (chain) => {
    const found = new Map(
      chain.map((
        id,
      ): [string, Candidates] => [id, { historySize: 0, spans: [], sums: [], open: false }]),
    );
    const take = (batch: RowBatch) =>
      collectBatch(batch, found.get(batch.paneId) as Candidates, filter, pacer);
    // Progress counts panes as their rows start coming (a deep one is matched as it comes).
    let begun = 0;
    const step = async (n: number) => {
      begun += n;
      done += n;
      if (told) {
        await ctx.progress(done, panes.length, `searching ${done} of ${panes.length} panes`);
      }
    };
    let read: (TmuxError | null)[];
    try {
      read = await readPanes(
        ctx.runner,
        ctx.address,
        chain,
        scrollbackLines,
        take,
        { signal: ctx.signal },
        () => step(1),
        byId,
        true,
        false,
      );
    } catch (error) {
      if (!(error instanceof TmuxError) || error.kind === "cancelled") throw error;
      read = chain.map(() => error);
    }
    if (begun < chain.length) await step(chain.length - begun);
    return chain.map((id, i) => {
      const pane = byId.get(id) as PanePlace;
      const failed = read[i];
      const candidates = found.get(id) as Candidates;
      if (!failed) return { pane, candidates, skipped: null };
      const skipped = failed.kind === "no-target"
        ? "closed after the pane list was read"
        : `capture failed: ${failed.message}`;
      return { pane, candidates: { historySize: 0, spans: [], sums: [], open: false }, skipped };
    });
  });
  return searched.flat();
}

const matchEntry = z.strictObject({
  paneId: paneIdSchema,
  windowId: z.string(),
  placements: z.array(panePlacementSchema).describe("Sessions and window indexes showing it."),
  omittedPlacements: count(),
  omittedMetadataBytes: metadataBound.omittedMetadataBytes,
  lineNumber: int().describe(
    "tmux's line number: 0 = top of the screen, negative = history; pass it to capture_pane as start.",
  ),
  text: z.string().describe("The whole line, trailing spaces trimmed."),
  omittedBytes: count().describe("Bytes cut off the end of a very long line."),
});

const searchPanes = defineTool({
  name: "search_panes",
  title: "Search panes",
  toolset: "inspect",
  description: "Find text in panes (all, or session's): screen and scrollbackLines. Literal, " +
    "case-insensitive, unless regex (RE2)/matchCase. Gives paneId, lineNumber.",
  input: {
    pattern: z.string().min(1).max(4096),
    regex: z.boolean().optional(),
    matchCase: z.boolean().optional(),
    session: sessionRefSchema.optional(),
    scrollbackLines: count().max(MAX_SCROLLBACK_LINES).optional(),
    maxMatchesPerPane: z.number().int().min(1).max(100).optional(),
    maxMatches: z.number().int().min(1).max(1000).optional(),
  },
  output: {
    matches: z.array(matchEntry),
    complete: z.boolean().describe("Whether every match found is in matches."),
    panesSearched: count(),
    panesMatched: count().describe("Panes with at least one match."),
    totalMatches: count().describe("Matches found, kept or not."),
    omittedMatches: count().describe(
      "Matches found but left out (per-pane cap, overall cap, bytes).",
    ),
    cappedPanes: z.array(z.strictObject({
      paneId: paneIdSchema,
      found: count(),
      returned: count(),
    })).describe("Panes with more matches than returned."),
    skippedPanes: z.array(z.strictObject({ paneId: paneIdSchema, reason: z.string() })).describe(
      "Panes that could not be searched (closed after listing, capture failed, kept printing).",
    ),
    omittedPaneNotes: count().describe("Entries left out of cappedPanes and skippedPanes."),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const matcher = await buildMatcher(args.pattern, args.regex ?? false, args.matchCase ?? false);
    // Which panes there are and where they sit, and nothing else of them: their rows are what
    // is read next. Every session shows a window, so the places name every session there is.
    const listed = await ctx.panePlaces();
    ctx.requireRunning(listed);
    let panes = listed.panes;
    if (args.session !== undefined) {
      const ref = args.session;
      const sessions = panes.flatMap((p) => p.placements)
        .map((pl) => ({ id: pl.sessionId, name: pl.sessionName }));
      // Not among them: refused in the words of every tool (or, created since, searched).
      const sessionId = findSession(sessions, ref)?.id ??
        ctx.session(await ctx.snapshot(SESSIONS_ONLY), ref).id;
      panes = panes.filter((p) => p.placements.some((pl) => pl.sessionId === sessionId));
    }
    const maxPerPane = args.maxMatchesPerPane ?? 5;
    const pacer = new MatchPacer(ctx.signal);
    const results = await searchInPanes(
      ctx,
      panes,
      { matcher, scrollbackLines: args.scrollbackLines ?? 0, maxMatchesPerPane: maxPerPane, pacer },
      printedFilter(args.pattern, args.regex ?? false, args.matchCase ?? false, matcher),
    );

    const maxMatches = args.maxMatches ?? 100;
    const entries: z.infer<typeof matchEntry>[] = [];
    const returnedByPane = new Map<string, number>();
    for (const r of results) {
      for (const m of r.matches) {
        if (entries.length >= maxMatches) break;
        // Names cut as every tool cuts them: whole, a long one took the room of many matches.
        const placed = fitPlacements(
          r.pane.placements.map(({ index, sessionId, sessionName }) => ({
            index,
            sessionId,
            sessionName,
          })),
          PLACEMENTS_BYTES,
          MAX_PLACEMENTS,
        );
        const line = cutString(m.text, MAX_LINE_BYTES);
        entries.push({
          paneId: r.pane.id,
          windowId: r.pane.windowId,
          placements: placed.placements,
          omittedPlacements: placed.omittedPlacements,
          omittedMetadataBytes: placed.omittedMetadataBytes,
          lineNumber: m.lineNumber,
          text: line.text,
          omittedBytes: line.omittedBytes,
        });
      }
    }
    const totalMatches = results.reduce((n, r) => n + r.found, 0);
    const skipped = capList(
      results.filter((r) => r.skipped !== null).map((r) => ({
        paneId: r.pane.id,
        reason: r.skipped as string,
      })),
      MAX_PANE_NOTES,
    );
    const base = {
      complete: true,
      panesSearched: results.filter((r) => r.skipped === null).length,
      panesMatched: results.filter((r) => r.found > 0).length,
      totalMatches,
      omittedMatches: 0,
      skippedPanes: skipped.kept,
    };
    // The byte bound may drop matches, which changes cappedPanes: reserve its worst size.
    const cappedAll = results.filter((r) => r.found > 0).map((r) => ({
      paneId: r.pane.id,
      found: r.found,
      returned: r.found,
    }));
    const reserve = jsonBytes(capList(cappedAll, MAX_PANE_NOTES).kept) + 64;
    const budget = ctx.config.maxResultBytes - jsonBytes({ ...base, matches: [] }) - reserve - 256;
    const { kept } = fitEntries(entries, budget);
    for (const m of kept) returnedByPane.set(m.paneId, (returnedByPane.get(m.paneId) ?? 0) + 1);
    const capped = capList(
      results.filter((r) => r.found > (returnedByPane.get(r.pane.id) ?? 0)).map((r) => ({
        paneId: r.pane.id,
        found: r.found,
        returned: returnedByPane.get(r.pane.id) ?? 0,
      })),
      MAX_PANE_NOTES,
    );
    const omittedMatches = totalMatches - kept.length;
    // Rows too long for one call, matched in pieces, where a longer match could lie unseen.
    const pieced = pacer.piecedNote(true);
    const data = {
      ...base,
      matches: kept,
      complete: omittedMatches === 0 && skipped.kept.length === 0,
      omittedMatches,
      cappedPanes: capped.kept,
      omittedPaneNotes: capped.omitted + skipped.omitted,
    };
    return {
      data,
      summary: `${kept.length} match${kept.length === 1 ? "" : "es"} in ${data.panesMatched} of ` +
        `${data.panesSearched} panes searched.` +
        (omittedMatches > 0 ? ` ${omittedMatches} more left out (see cappedPanes).` : "") +
        (results.length > data.panesSearched
          ? ` ${results.length - data.panesSearched} panes skipped (see skippedPanes).`
          : "") +
        (pieced ? ` ${pieced}.` : ""),
    };
  },
});

/** Registers search_panes (toolset inspect). */
export function registerSearchTools(registry: ToolRegistry): void {
  registry.add(searchPanes);
}
