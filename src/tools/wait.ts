/**
 * Waiting on panes (toolset inspect): `wait_for_text` for text in new output, `wait_for_idle`
 * for a pane gone quiet (and back at its shell's prompt). Both watch the pane through
 * pane_watch.ts, event-driven where control mode is available.
 *
 * @module
 */

import { z } from "zod";
import { byteLength, cutString, jsonStringBytes } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { compileRegex, type LineRegex, loadRegexEngine, MatchPacer } from "../mcp/pattern.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { checkedString, count, int, paneIdSchema } from "../mcp/schemas.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { CursorError, openSinceCursor, writtenSince } from "../tmux/since.ts";
import { paneAtPrompt } from "../tmux/prompt.ts";
import { clampTimeout, timeoutField } from "./wait_timeouts.ts";
import { PaneWatch } from "./pane_watch.ts";
import { probePane } from "./pane_probe.ts";
import { insidePair, type WrittenRow } from "./captured_rows.ts";

// ---------------------------------------------------------------------------------------------
// Patterns

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

const MAX_PATTERNS = 16;
const MAX_PATTERN_LENGTH = 1_000;

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
async function patternsIn(
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

/** The first line (in order) any pattern matches, with the pattern, and every matching line. */
async function scan(patterns: readonly Pattern[], lines: readonly string[], pacer: MatchPacer) {
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
async function scanRows(
  patterns: readonly Pattern[],
  rows: readonly WrittenRow[],
  pacer: MatchPacer,
) {
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

/**
 * Keeps the end of a text within `maxBytes` as a JSON string on the wire (escapes counted: a
 * quote or backslash takes two bytes there, a control character up to six); reports the UTF-8
 * bytes of the text it cut. `twice`: the text goes inside JSON that itself travels as a JSON
 * string (a resource's text), so its escapes are escaped again (a quote takes four bytes).
 */
export function keepTail(
  text: string,
  maxBytes: number,
  twice = false,
): { text: string; omittedBytes: number } {
  if (text.length * 7 <= maxBytes || (!twice && jsonStringBytes(text) <= maxBytes)) {
    return { text, omittedBytes: 0 };
  }
  let used = 0;
  let start = text.length;
  while (start > 0) {
    const c = text.charCodeAt(start - 1);
    const pair = c >= 0xdc00 && c <= 0xdfff && start > 1 &&
      text.charCodeAt(start - 2) >= 0xd800 && text.charCodeAt(start - 2) <= 0xdbff;
    const cost = pair ? 4 : jsonCharBytes(c, twice);
    if (used + cost > maxBytes) break;
    used += cost;
    start -= pair ? 2 : 1;
  }
  return { text: text.slice(start), omittedBytes: byteLength(text.slice(0, start)) };
}

/** Bytes one UTF-16 code unit (not half of a pair) takes inside a JSON string (or two). */
function jsonCharBytes(c: number, twice: boolean): number {
  // `"` and `\` escape to two characters, both escaped again the second time.
  if (c === 0x22 || c === 0x5c) return twice ? 4 : 2;
  if (c < 0x20) {
    const short = c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
    return short ? (twice ? 3 : 2) : (twice ? 7 : 6);
  }
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdfff) return twice ? 7 : 6; // a lone surrogate, escaped
  return 3;
}

/** At most `max` lines, each cut to `maxBytes`. */
function boundLines(lines: readonly string[], max: number, maxBytes: number) {
  return {
    lines: lines.slice(0, max).map((l) => cutString(l, maxBytes).text),
    omittedLines: Math.max(0, lines.length - max),
  };
}

// ---------------------------------------------------------------------------------------------
// wait_for_text

const patternList = () => z.array(checkedString(MAX_PATTERN_LENGTH)).max(MAX_PATTERNS);

const patternHit = z.strictObject({
  pattern: z.string(),
  index: count().describe("Its position in the list given."),
}).nullable();

const waitForText = defineTool({
  name: "wait_for_text",
  title: "Wait for text in a pane",
  toolset: "inspect",
  description: "Block until a pane prints one of patterns, a stop pattern, exits, or times out. " +
    "Literal, case-insensitive, per line, unless regex (RE2)/matchCase. No patterns: any " +
    "text. Only NEW output: since the call, or since: a capture_since cursor taken before " +
    "send_keys.",
  input: {
    paneId: paneIdSchema,
    patterns: patternList().min(1).optional(),
    regex: z.boolean().optional(),
    matchCase: z.boolean().optional(),
    stop: patternList().optional(),
    // A sealed cursor is at most about 110 000 characters (10 008 remembered rows).
    since: z.string().max(200_000).optional(),
    timeoutMs: timeoutField,
  },
  output: {
    paneId: paneIdSchema,
    outcome: z.enum(["matched", "output", "stopped", "timedOut", "paneDied"]),
    matched: patternHit.describe("The pattern that matched (outcome matched), else null."),
    stoppedBy: patternHit.describe("The stop pattern seen (outcome stopped), else null."),
    lines: z.array(z.string()).describe(
      "The new lines that matched (the winning kind); for output, the new lines.",
    ),
    omittedLines: count(),
    tail: z.string().describe("The last lines of the pane (its screen) when the wait ended."),
    tailOmittedBytes: count(),
    alreadyOnScreen: z.boolean().describe(
      "A pattern was visible on the screen before the wait began.",
    ),
    patternsOnScreen: z.array(z.string()).describe("Which patterns were already visible."),
    exitStatus: int().nullable().describe("The dead pane's exit status, when known (paneDied)."),
    effectiveTimeoutMs: int(),
    timeoutClamped: z.boolean().describe("Whether timeoutMs was moved into the allowed range."),
    waitedMs: count(),
    transport: z.enum(["control", "polling"]).describe(
      "control: woken by tmux control-mode output events; polling: read the pane every 100 ms.",
    ),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const { effective, clamped } = clampTimeout(args.timeoutMs);
    const matchCase = args.matchCase ?? false;
    const anyOutput = args.patterns === undefined;
    const patterns = await compilePatterns(
      args.patterns ?? [],
      args.regex ?? false,
      matchCase,
      "patterns",
    );
    const stops = await compilePatterns(args.stop ?? [], args.regex ?? false, matchCase, "stop");
    const pacer = new MatchPacer(ctx.signal);
    const { pane } = await ctx.paneSnapshot(args.paneId);
    const began = performance.now();
    const deadline = began + effective;
    // A cursor that cannot be used is refused before anything is watched.
    if (args.since !== undefined) await sinceCursor(args.since, pane.id);
    const watch = await PaneWatch.open(ctx, pane, { screen: true, rows: true });
    type Outcome = "matched" | "output" | "stopped" | "timedOut" | "paneDied";
    let outcome: Outcome = "timedOut";
    type Hit = { pattern: string; index: number } | null;
    // Set by `ends` (a closure: typed so that the checker does not take them for null).
    let matched = null as Hit;
    let stoppedBy = null as Hit;
    let hitLines: string[] = [];
    let exitStatus: number | null = null;
    let onScreen: Pattern[] = [];
    const notes: string[] = [];
    /** Whether new output ends the wait: a stop pattern, a pattern, or any (no patterns). */
    const ends = async (lines: string[], rows?: readonly WrittenRow[]): Promise<boolean> => {
      const look = (list: readonly Pattern[]) =>
        rows ? scanRows(list, rows, pacer) : scan(list, lines, pacer);
      const stop = await look(stops);
      if (stop) {
        outcome = "stopped";
        stoppedBy = { pattern: stop.pattern.text, index: stop.pattern.index };
        hitLines = stop.matching;
        return true;
      }
      const hit = await look(patterns);
      if (hit) {
        outcome = "matched";
        matched = { pattern: hit.pattern.text, index: hit.pattern.index };
        hitLines = hit.matching;
        return true;
      }
      if (anyOutput && lines.length > 0) {
        outcome = "output";
        hitLines = lines;
        return true;
      }
      return false;
    };
    try {
      onScreen = await patternsIn(patterns, watch.screen, pacer);
      // What the pane wrote between the cursor and the watch's start, read once the watch is
      // open (what comes meanwhile is seen twice, never missed).
      const before = args.since === undefined
        ? null
        : await writtenBefore(ctx, pane.id, args.since);
      if (before?.lost) notes.push(`since ignored: ${before.lost}`);
      if (before && before.skippedRows > 0) {
        notes.push(`the first ${before.skippedRows} lines written since the cursor not matched`);
      }
      if (before && await ends(before.rows.map((r) => r.shown), before.rows)) {
        notes.push("written before the call, after the cursor");
      } else if (watch.start.dead) {
        outcome = "paneDied";
        exitStatus = watch.start.deadStatus;
      } else {
        await ctx.progress(0, effective, `Waiting on ${pane.id}`);
        loop: while (true) {
          const event = await watch.next(deadline);
          switch (event.kind) {
            case "lines": {
              if (await ends(event.lines, event.rows)) break loop;
              break;
            }
            case "tick": {
              const waited = Math.round(performance.now() - began);
              await ctx.progress(
                waited,
                effective,
                `Waiting on ${pane.id}: ${Math.round(waited / 1000)} s of ${effective / 1000} s`,
              );
              break;
            }
            case "died":
              outcome = "paneDied";
              exitStatus = event.probe.deadStatus;
              break loop;
            case "timeout":
              outcome = "timedOut";
              break loop;
            case "cancelled":
              throw new TmuxError("cancelled", "The wait was cancelled.");
          }
        }
      }
    } finally {
      watch.close();
    }
    if (watch.skippedRows > 0) {
      notes.push(
        `${watch.skippedRows} rows written during the wait not matched (more than a read takes ` +
          "came at once; the last ones were)",
      );
    }
    const waitedMs = Math.round(performance.now() - began);
    const budget = Math.max(1_000, Math.floor(ctx.config.maxResultBytes / 4));
    const tail = keepTail((await watch.tail(40)).join("\n"), budget);
    const bounded = boundLines(hitLines, 20, Math.max(200, Math.floor(budget / 20)));
    const data = {
      paneId: pane.id,
      outcome,
      matched,
      stoppedBy,
      lines: bounded.lines,
      omittedLines: bounded.omittedLines,
      tail: tail.text,
      tailOmittedBytes: tail.omittedBytes,
      alreadyOnScreen: onScreen.length > 0,
      patternsOnScreen: onScreen.map((p) => p.text),
      exitStatus,
      effectiveTimeoutMs: effective,
      timeoutClamped: clamped,
      waitedMs,
      transport: watch.transport,
    };
    const what = {
      matched: `matched ${JSON.stringify(matched?.pattern)}`,
      output: `new output (${hitLines.length} ${hitLines.length === 1 ? "line" : "lines"})`,
      stopped: `stopped by ${JSON.stringify(stoppedBy?.pattern)}`,
      timedOut: `timed out after ${effective} ms`,
      paneDied: `pane died${exitStatus !== null ? ` (status ${exitStatus})` : ""}`,
    }[outcome];
    if (clamped) notes.unshift(`timeout clamped to ${effective} ms`);
    return {
      data,
      summary: `${pane.id}: ${what}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}${
        onScreen.length > 0 ? "; a pattern was already on screen before the wait" : ""
      }.`,
    };
  },
});

/** Rows of output written since a `since` cursor that the wait reads at most (the last ones). */
const SINCE_ROWS = 10_000;

/** What to do about a `since` cursor that cannot be used. */
const SINCE_HINT = "Take a cursor with capture_since on this pane (before typing) and pass it as " +
  "since, or wait without since.";

/** Checks a `since` cursor: this process sealed it, on this pane. */
async function sinceCursor(text: string, paneId: string): Promise<void> {
  try {
    await openSinceCursor(text, paneId);
  } catch (error) {
    if (error instanceof CursorError) throw new ToolFailure(error.message, SINCE_HINT);
    throw error;
  }
}

/** The rows the pane wrote since a `since` cursor (see {@link writtenSince}). */
async function writtenBefore(ctx: TmuxContext, paneId: string, text: string) {
  try {
    return await writtenSince(ctx.runner, ctx.address, paneId, text, SINCE_ROWS, {
      signal: ctx.signal,
    });
  } catch (error) {
    if (error instanceof CursorError) throw new ToolFailure(error.message, SINCE_HINT);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// wait_for_idle

/** Quiet a wait for idle asks for when none is given. */
export const DEFAULT_QUIET_MS = 1_000;
/** Shortest quiet: less tells a pause between two writes from the end of the output. */
export const MIN_QUIET_MS = 100;
/** Longest quiet (a quiet longer than the timeout can never be reached: timedOut). */
export const MAX_QUIET_MS = 60_000;

/** A requested quiet clamped into [{@link MIN_QUIET_MS}, {@link MAX_QUIET_MS}]. */
export function clampQuiet(requested: number | undefined): { effective: number; clamped: boolean } {
  if (requested === undefined) return { effective: DEFAULT_QUIET_MS, clamped: false };
  const effective = Math.min(MAX_QUIET_MS, Math.max(MIN_QUIET_MS, Math.round(requested)));
  return { effective, clamped: effective !== requested };
}

/**
 * Whether the pane is at its shell's prompt now: read its state, then ask the kernel. Also
 * whether its input is turned off: a prompt nothing typed reaches is worth saying so.
 */
async function atPromptNow(
  ctx: TmuxContext,
  paneId: string,
): Promise<{ atPrompt: boolean; inputOff: boolean }> {
  const probe = await probePane(ctx, paneId);
  if (!probe.exists) return { atPrompt: false, inputOff: false };
  const atPrompt = await paneAtPrompt(ctx.runner, ctx.address, paneId, probe, ctx.signal);
  return { atPrompt, inputOff: probe.inputOff };
}

/** How often, at most, a wait for idle sends progress while output keeps coming. */
const PROGRESS_MS = 1_000;

const waitForIdle = defineTool({
  name: "wait_for_idle",
  title: "Wait for a pane to go quiet",
  toolset: "inspect",
  description:
    "Block until a pane is quiet for quietMs (atPrompt: and back at its shell prompt), " +
    "exits, or times out. For work no text marks the end of.",
  input: {
    paneId: paneIdSchema,
    quietMs: int().optional().describe(
      `default ${DEFAULT_QUIET_MS}, clamped to ${MIN_QUIET_MS}-${MAX_QUIET_MS}`,
    ),
    atPrompt: z.boolean().optional(),
    timeoutMs: timeoutField,
  },
  output: {
    paneId: paneIdSchema,
    outcome: z.enum(["idle", "timedOut", "paneDied"]),
    atPrompt: z.boolean().describe(
      "When the wait ended, the pane's shell held the terminal (nothing in the foreground).",
    ),
    quietForMs: count().describe("How long no output had come when the wait ended."),
    tail: z.string().describe("The last lines of the pane (its screen) when the wait ended."),
    tailOmittedBytes: count(),
    exitStatus: int().nullable().describe("The dead pane's exit status, when known (paneDied)."),
    effectiveQuietMs: int(),
    quietClamped: z.boolean(),
    effectiveTimeoutMs: int(),
    timeoutClamped: z.boolean(),
    waitedMs: count(),
    transport: z.enum(["control", "polling"]),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const { effective, clamped } = clampTimeout(args.timeoutMs);
    const quiet = clampQuiet(args.quietMs);
    const quietMs = quiet.effective;
    const wantPrompt = args.atPrompt ?? false;
    const { pane } = await ctx.paneSnapshot(args.paneId);
    const began = performance.now();
    const deadline = began + effective;
    // Told when the foreground program changes, from the checks the watch makes anyway: a
    // program that ends without printing still brings the shell back.
    const watch = await PaneWatch.open(ctx, pane, { commands: wantPrompt });
    let outcome: "idle" | "timedOut" | "paneDied" = "timedOut";
    let exitStatus: number | null = null;
    let atPrompt = false;
    let inputOff = false;
    let lastOutput = began;
    let ended = began;
    try {
      if (watch.start.dead) {
        outcome = "paneDied";
        exitStatus = watch.start.deadStatus;
      } else {
        await ctx.progress(0, effective, `Waiting on ${pane.id} to go quiet`);
        let progressAt = began + PROGRESS_MS;
        // Whether the prompt is worth asking about again: something happened since it was not.
        let recheck = true;
        loop: while (true) {
          const now = performance.now();
          if (now - lastOutput >= quietMs) {
            if (!wantPrompt) {
              outcome = "idle";
              break;
            }
            if (recheck) {
              recheck = false;
              ({ atPrompt, inputOff } = await atPromptNow(ctx, pane.id));
              if (atPrompt) {
                outcome = "idle";
                break;
              }
            }
          }
          if (now >= deadline) {
            outcome = "timedOut";
            break;
          }
          if (now >= progressAt) {
            progressAt = now + PROGRESS_MS;
            const waited = Math.round(now - began);
            await ctx.progress(
              waited,
              effective,
              `Waiting on ${pane.id}: ${Math.round(waited / 1000)} s of ${effective / 1000} s`,
            );
          }
          const quietAt = lastOutput + quietMs;
          const event = await watch.next(now < quietAt ? Math.min(deadline, quietAt) : deadline);
          switch (event.kind) {
            case "lines":
              lastOutput = performance.now();
              recheck = true;
              break;
            case "command":
              recheck = true;
              break;
            case "died":
              outcome = "paneDied";
              exitStatus = event.probe.deadStatus;
              break loop;
            case "cancelled":
              throw new TmuxError("cancelled", "The wait was cancelled.");
            case "tick":
            case "timeout":
              break;
          }
        }
      }
      ended = performance.now();
      if (outcome === "timedOut" || (outcome === "idle" && !wantPrompt)) {
        ({ atPrompt, inputOff } = await atPromptNow(ctx, pane.id));
      }
    } finally {
      watch.close();
    }
    const budget = Math.max(1_000, Math.floor(ctx.config.maxResultBytes / 4));
    const tail = keepTail((await watch.tail(40)).join("\n"), budget);
    const data = {
      paneId: pane.id,
      outcome,
      atPrompt,
      quietForMs: Math.max(0, Math.round(ended - lastOutput)),
      tail: tail.text,
      tailOmittedBytes: tail.omittedBytes,
      exitStatus,
      effectiveQuietMs: quietMs,
      quietClamped: quiet.clamped,
      effectiveTimeoutMs: effective,
      timeoutClamped: clamped,
      waitedMs: Math.round(ended - began),
      transport: watch.transport,
    };
    const what = {
      idle: `quiet for ${data.quietForMs} ms${atPrompt ? ", at its prompt" : ""}${
        atPrompt && inputOff
          ? " (its input is turned off, select-pane -d: nothing typed arrives)"
          : ""
      }`,
      timedOut: `timed out after ${effective} ms (quiet for ${data.quietForMs} ms${
        wantPrompt && !atPrompt ? ", not at its prompt" : ""
      })`,
      paneDied: `pane died${exitStatus !== null ? ` (status ${exitStatus})` : ""}`,
    }[outcome];
    const notes = [
      quiet.clamped ? `quietMs clamped to ${quietMs}` : "",
      clamped ? `timeout clamped to ${effective} ms` : "",
    ].filter((n) => n !== "");
    return {
      data,
      summary: `${pane.id}: ${what}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}.`,
    };
  },
});

/** Registers the waiting tools. */
export function registerWaitTools(registry: ToolRegistry): void {
  registry.add(waitForText);
  registry.add(waitForIdle);
}
