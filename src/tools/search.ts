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
import { isBlankRow } from "../tmux/capture.ts";
import { chainPanes, readPanes } from "../tmux/capture_many.ts";
import { batchRows, type RowBatch } from "../tmux/capture_many_batch.ts";
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

/** What one pane's batches matched so far. */
interface Found {
  found: number;
  readonly matches: { lineNumber: number; text: string }[];
}

/**
 * Matches one batch of a pane's rows into what the pane found so far, keeping the last `max`
 * matches (nearest the bottom).
 */
async function matchBatch(
  batch: RowBatch,
  into: Found,
  matcher: TextMatcher,
  max: number,
  pacer: MatchPacer,
): Promise<void> {
  // The pane is read again from its start: what it gave before is void.
  if (batch.restart) {
    into.found = 0;
    into.matches.length = 0;
  }
  const rowOf = (line: number) => batch.lineRows ? batch.lineRows[line] : batch.first + line;
  // Blank lines below the last written one are tmux's padding: only a matcher that can match a
  // blank line needs them cut off (which takes the lines one by one), and only the last batch
  // holds screen rows. Every history line (a negative row) counts as written.
  let last = batch.count - 1;
  if (batch.last && matcher.matchesBlank) {
    const lines = batchRows(batch);
    while (last >= 0 && rowOf(last) >= 0 && isBlankRow(lines[last])) last--;
  }
  const { found, kept } = await matcher.match(batch.text, last, max, pacer);
  into.found += found;
  into.matches.push(...kept.map((m) => ({ lineNumber: rowOf(m.row), text: m.text })));
  if (into.matches.length > max) into.matches.splice(0, into.matches.length - max);
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
 * Captures and matches each pane: many panes per tmux invocation (see `chainPanes`), at most
 * {@link SEARCH_CONCURRENCY} invocations at once, each pane's rows matched batch by batch as
 * they arrive (so what is held at once is a few batches, however deep the history). A pane
 * that closed after it was listed, or whose capture failed, is reported as skipped with the
 * reason; a cancelled call stops, in the middle of matching too.
 *
 * What is matched is the rows as a person sees them (text printed hidden or in its
 * background's colour is no match: see shown_cells.ts), which costs tmux about five times a
 * plain read: so every pane is read as printed first, and only the panes where that found a
 * match are read again, as shown, for what they hold (a pane's text as printed holds every
 * match its text as shown does, but where a blank or a glyph is matched itself).
 */
export async function searchInPanes(
  ctx: TmuxContext,
  panes: readonly PanePlace[],
  options: SearchOptions,
): Promise<PaneSearch[]> {
  // A pattern that may match what only the rows as shown hold reads them so from the start.
  const pacer = options.pacer ?? new MatchPacer(ctx.signal);
  const first = { ...options, pacer };
  if (options.matcher.seesMore) return await searchAs(ctx, panes, first, true, true);
  const printed = await searchAs(ctx, panes, first, false, true);
  const again = printed.filter((p) => p.found > 0);
  if (again.length === 0) return printed;
  // A long line matched in pieces again is the same line: counted once, by the first read.
  const second = { ...options, pacer: pacer.again() };
  const panesAgain = again.map((p) => p.pane);
  const shown = new Map(
    (await searchAs(ctx, panesAgain, second, true, false)).map((p) => [p.pane.id, p]),
  );
  return printed.map((p) => shown.get(p.pane.id) ?? p);
}

/**
 * {@link searchInPanes}, reading the rows as printed or (`shown`) as a person sees them;
 * `progress`: this read is the one of every pane, told as progress (reading some again is a
 * short tail of it).
 */
async function searchAs(
  ctx: TmuxContext,
  panes: readonly PanePlace[],
  options: SearchOptions,
  shown: boolean,
  progress: boolean,
): Promise<PaneSearch[]> {
  const byId = new Map(panes.map((p) => [p.id, p]));
  const chains = chainPanes(panes.map((p) => p.id), options.scrollbackLines);
  const pacer = options.pacer ?? new MatchPacer(ctx.signal);
  let done = 0;
  const searched = await mapPool(chains, SEARCH_CONCURRENCY, async (chain) => {
    const found = new Map(chain.map((id): [string, Found] => [id, { found: 0, matches: [] }]));
    const take = (batch: RowBatch) =>
      matchBatch(
        batch,
        found.get(batch.paneId) as Found,
        options.matcher,
        options.maxMatchesPerPane,
        pacer,
      );
    // Progress counts panes as their rows start coming (a deep one is matched as it comes).
    let begun = 0;
    const step = async (n: number) => {
      begun += n;
      done += n;
      if (progress) {
        await ctx.progress(done, panes.length, `searching ${done} of ${panes.length} panes`);
      }
    };
    let read: (TmuxError | null)[];
    try {
      read = await readPanes(
        ctx.runner,
        ctx.address,
        chain,
        options.scrollbackLines,
        take,
        { signal: ctx.signal },
        () => step(1),
        byId,
        true,
        shown,
      );
    } catch (error) {
      if (!(error instanceof TmuxError) || error.kind === "cancelled") throw error;
      read = chain.map(() => error);
    }
    if (begun < chain.length) await step(chain.length - begun);
    return chain.map((id, i): PaneSearch => {
      const pane = byId.get(id) as PanePlace;
      const failed = read[i];
      if (!failed) return { pane, ...(found.get(id) as Found), skipped: null };
      const skipped = failed.kind === "no-target"
        ? "closed after the pane list was read"
        : `capture failed: ${failed.message}`;
      return { pane, matches: [], found: 0, skipped };
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
      "Panes that could not be searched (closed after listing, capture failed).",
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
    const results = await searchInPanes(ctx, panes, {
      matcher,
      scrollbackLines: args.scrollbackLines ?? 0,
      maxMatchesPerPane: maxPerPane,
      pacer,
    });

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
