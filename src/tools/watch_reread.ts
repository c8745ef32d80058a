/**
 * A pane watch's read of its rows by content, made where their numbers no longer hold (the
 * width changed and they reflowed, tmux trimmed or cleared the history, a scroll region was set
 * or given back): the rows are read again from the start (from the cursor's row after a
 * reflow), and those not seen before are new. What the read finds becomes what the watch knows
 * (watch_rows.ts keeps it); apart because it compares text, where the incremental read compares
 * rows by their numbers.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { rowArg, trimRow } from "../tmux/capture.ts";
import { newGuard } from "../tmux/format.ts";
import {
  lineAt,
  screenLines,
  trimTrailingBlank,
  writtenPast,
  type WrittenRow,
} from "./captured_rows.ts";
import { fixedLines, partialCaptures, partialRows, splitMarked } from "./marked_captures.ts";
import { type PaneProbe, probeWith } from "./pane_probe.ts";
import {
  cursorAt,
  fixedCaptures,
  fixedMarks,
  hasFixedRows,
  readBound,
  renumber,
  type Span,
  spanCapture,
  spanEnd,
} from "./watch_span.ts";

/**
 * Rows above the cursor's a read after a reflow looks through for where the cursor's line
 * begins: a line longer than that (at the new width) is compared from there.
 */
const LINE_ROWS = 200;

/**
 * The line the cursor's row is on, whole, from a read of `above` rows above it on (`joined`,
 * -J) and of those rows alone row by row (`raw`, -N): null when the rows do not tell (see
 * {@link lineAt}), or the line began above the read.
 */
function cursorLine(
  joined: readonly string[],
  raw: readonly string[],
  above: number,
): string | null {
  if (raw.length !== above) return null;
  const at = lineAt(joined, raw);
  if (at === null) return null;
  // A line the read begins inside of is not whole.
  if (at.index === 0 && at.offset > 0 && above === LINE_ROWS) return null;
  return joined[at.index] ?? null;
}

/**
 * The lines between the last one a watch read (`known`) and the cursor's, from the same reads
 * as {@link cursorLine}: written after the width change and before the read that follows it.
 * `known` is looked for from the cursor's line up; none when it is not found (the read begins
 * at the cursor's row, as ever), or is the cursor's line itself.
 */
function linesAfter(
  joined: readonly string[],
  raw: readonly string[],
  above: number,
  known: string,
): string[] {
  if (raw.length !== above || trimRow(known) === "") return [];
  const at = lineAt(joined, raw);
  if (at === null) return [];
  for (let k = at.index - 1; k >= 0; k--) {
    if (trimRow(joined[k]) === trimRow(known)) return joined.slice(k + 1, at.index);
  }
  return [];
}

/** What a watch knew of its rows before it reads them again (its fields, see WatchedRows). */
export interface KnownRows {
  /** The rows numbered after the history. */
  readonly span: Span;
  /** The rows a read captures at most (`#readRows` in watch_rows.ts). */
  readonly readRows: number;
  /** The span changed since the rows were last numbered. */
  readonly wide: boolean;
  /** The rows reflowed: the start row is lost. */
  readonly reflowed: boolean;
  /** The watch reports rows ({@link WrittenRow}), not lines. */
  readonly rows: boolean;
  /**
   * The screen's rows above the start did not move as their numbers say (see watch_above.ts):
   * the screen's first row at the last read, where the rows that may have moved begin (those
   * in the history then stayed). Null when they moved as said.
   */
  readonly shifted: number | null;
  /** The start row's number. */
  readonly startAbs: number;
  /**
   * The first row of the screen at the start (the history's size then, lowered as the start
   * row's is when rows move up), and the span that numbers it: the rows above it were in the
   * history then, and never read. A taller screen takes them back onto its top (their numbers
   * hold, see numbersSince), where a read from the screen's top would find them: none is read
   * again.
   */
  readonly floor: { readonly row: number; readonly span: Span };
  /** The region (lines from the start row on) as last read. */
  readonly lastRegion: string[];
  /** The rows from the start on as they stood at the start (null: not known). */
  readonly baseline: readonly string[] | null;
  /** The fixed rows as last read, and as first read (null: none, or not read). */
  readonly lastFixed: readonly string[] | null;
  readonly baseFixed: readonly string[] | null;
  /** The screen's lines at the start. */
  readonly screen: readonly string[];
  /** Lines a taller screen took back from the history (old, never told). */
  readonly pulled: readonly string[];
}

/** What a read again found, for the watch to know from now on (if the pane kept still). */
export interface ReadAgain {
  readonly probe: PaneProbe;
  /** The lines not seen before. */
  readonly fresh: string[];
  /**
   * After a reflow, the lines written between the last read's last one and the cursor's, whole,
   * then the cursor's line with what it holds past what was known of it.
   */
  readonly first?: WrittenRow[];
  /**
   * What the read found, and where it was planned: null when it could not tell where its
   * first line begins (or a mark is missing), and nothing it read is to be kept.
   */
  readonly read: {
    /** The region's lines from `top` on, blank ones at the end dropped. */
    readonly lines: string[];
    /** The fixed rows as read; null when the span is the whole screen. */
    readonly fixed: string[] | null;
    /** The row the lines begin at (the start, or later when the read was cut short). */
    readonly top: number;
    /** The row the read was to begin at. */
    readonly start: number;
    /** The cursor's row and column when planned (see {@link cursorAt}). */
    readonly cursor: { row: number; x: number };
    /** The read follows a change of the span (and no reflow). */
    readonly wide: boolean;
    /**
     * The floor's row (see {@link KnownRows.floor}) as the span numbers rows now: the watch's
     * from now on (after a reflow, where rows are numbered otherwise, the start row's at most).
     */
    readonly floor: number;
  } | null;
}

/**
 * Reads the rows again where their numbers no longer hold (a width change, a history trim):
 * from the cursor's row after a width change, from the screen's first row at the last read
 * when the rows above the start moved unseen, else from the start as estimated (never before
 * it: tmux drops at least what the size fell by), at most the rows a read takes
 * ({@link KnownRows.readRows}); never from
 * above the start's screen (rows taken back from the history onto a taller screen, see
 * {@link KnownRows.floor}), its fixed rows among them not told either. Rows not
 * seen in the last read or the baseline are new (a watch that reads rows; for the others any
 * change is output). `begun` is the probe the watch started on.
 */
export async function readAgain(
  ctx: TmuxContext,
  paneId: string,
  begun: PaneProbe,
  now: PaneProbe,
  watch: KnownRows,
): Promise<ReadAgain> {
  const s = watch.span;
  const cursor = cursorAt(now, s);
  // After the span changed, from its first row at least: its rows are numbered otherwise.
  const wide = watch.wide && !watch.reflowed;
  const floor = renumber(watch.floor.row, watch.floor.span, s, now.historySize);
  // The screen's top rows a taller screen took back from the history (counted on the whole
  // screen: a region the start's screen was under kept its header, see lastFixed).
  const back = watch.floor.span.upper > 0 ? 0 : Math.max(0, watch.floor.row - now.historySize);
  const start = watch.reflowed ? cursor.row : Math.max(
    floor,
    watch.shifted !== null
      ? Math.min(watch.startAbs, watch.shifted)
      : wide
      ? Math.min(watch.startAbs, now.historySize)
      : watch.startAbs,
  );
  let top = Math.max(start, spanEnd(now, s) - watch.readRows);
  const rel = rowArg(top - now.historySize);
  // Cut short at the rows a read takes, the read may begin inside a wrapped line.
  const cut = top > start && top > 0;
  const guard = newGuard();
  // After a reflow, the rows above the cursor's too (joined, and row by row up to it): the
  // cursor's line whole, wherever it begins (see cursorLine).
  const above = watch.reflowed && watch.rows && !cut ? Math.min(start, LINE_ROWS) : 0;
  const lineCaptures = above === 0 ? [] : [
    ...[";", "display-message", "-p", guard + "L"],
    ...[";", ...spanCapture(paneId, ["-J"], rel - above, null, s)],
    ...[";", "display-message", "-p", guard + "M"],
    ...[";", ...spanCapture(paneId, ["-N"], rel - above, rel - 1, s)],
  ];
  const { probe, text } = await probeWith(
    ctx,
    paneId,
    [
      ...spanCapture(paneId, ["-J"], rel, null, s),
      ...(cut ? partialCaptures(paneId, guard, rel, s) : []),
      ...lineCaptures,
      ...fixedCaptures(paneId, guard, s),
    ],
    begun,
    undefined,
    readBound(watch.readRows, now.height),
  );
  const out = splitMarked(
    text,
    guard,
    [...cut ? ["P", "R"] : [], ...above > 0 ? ["L", "M"] : [], ...fixedMarks(s)],
  );
  let lines = trimTrailingBlank(screenLines(out?.get("") ?? ""));
  // A line begun above the read is left out (see partialRows), its rows counted as skipped.
  const partial = out === null
    ? null
    : cut
    ? partialRows(lines, out.get("P")!, screenLines(out.get("R")!))
    : 0;
  if (partial === null) return { probe, fresh: [], read: null };
  if (partial > 0) {
    lines = lines.slice(1);
    top += partial;
  }
  const fixed = out !== null && hasFixedRows(s) ? fixedLines(out) : null;
  // Read from above the start, or rows moved unseen: what the screen showed then was there.
  const seen = new Set([
    ...watch.lastRegion,
    ...(watch.baseline ?? []),
    ...(watch.lastFixed ?? []),
    ...(watch.baseFixed ?? []),
    ...watch.pulled,
    ...top < watch.startAbs || watch.shifted !== null ? watch.screen : [],
  ]);
  const changed = lines.join("\n") !== watch.lastRegion.join("\n");
  // After a reflow the first line is read from the cursor's row: the end of a line that may
  // have begun above it, cut elsewhere than any read before. Only what it holds past the
  // line the cursor was on at the last read (the last one read) is output: a prompt written
  // since, not the line's old end.
  const from = watch.reflowed ? 1 : 0;
  let first: WrittenRow | null = null;
  // Written after the width change and before this read, above the cursor's row: told only when
  // none of them was seen or on the start's screen (else the last read's last line may have been
  // found at an old copy of it, above old lines: none is told).
  const between = above > 0 && out !== null
    ? linesAfter(
      screenLines(out.get("L") ?? ""),
      screenLines(out.get("M") ?? ""),
      above,
      // Nothing from the start on yet: the start's screen ends above the start row.
      trimTrailingBlank(watch.lastRegion).at(-1) ?? watch.screen.at(-1) ?? "",
    ).filter((line) => trimRow(line) !== "")
    : [];
  const earlier = between.every((line) => !seen.has(line) && !watch.screen.includes(line))
    ? between
    : [];
  if (changed && watch.rows && watch.reflowed && lines.length > 0 && !seen.has(lines[0])) {
    const known = trimTrailingBlank(watch.lastRegion).at(-1) ?? "";
    const whole = above > 0 && out !== null
      ? cursorLine(screenLines(out.get("L") ?? ""), screenLines(out.get("M") ?? ""), above)
      : null;
    const line = whole ?? lines[0];
    let at = writtenPast(known, line);
    const text = trimRow(line);
    // Blanks the written part begins with were there (the prompt's "$ " read as "$").
    while (at !== null && text[at] === " ") at++;
    if (at !== null && at < text.length) {
      first = { text, line, from: at, shown: text.slice(at) };
    }
  }
  const unseen = (line: string) => trimRow(line) !== "" && !seen.has(line);
  const fresh = [
    // Fixed rows not seen before: a header drawn since, or rows left outside a region set;
    // not a header's rows taken back from the history.
    ...(fixed ?? []).filter((line, i) =>
      line !== watch.lastFixed?.[i] && unseen(line) && (i >= s.upper || i >= back)
    ),
    // Rows that moved unseen may be old rows anywhere: told only when not seen, whatever the watch.
    ...!changed
      ? []
      : watch.rows || watch.shifted !== null
      ? lines.slice(from).filter(unseen)
      : lines,
  ];
  const firsts = [
    ...earlier.map((line) => ({ text: trimRow(line), line, from: 0, shown: trimRow(line) })),
    ...first ? [first] : [],
  ];
  return { probe, fresh, first: firsts, read: { lines, fixed, top, start, cursor, wide, floor } };
}
