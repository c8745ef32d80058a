/**
 * The rows a pane watch reads (pane_watch.ts): the pane's content from the row its cursor was
 * on at the start to the end of the screen, wrapped lines joined, and which of it is new since
 * the last read.
 *
 * A read captures only what may have changed since the last one. Rows in the history never
 * change (until tmux trims it, it is cleared, or the width changes: then everything is read
 * again, and rows not seen before are new), so the lines that had scrolled whole into the
 * history at a read are kept, and the next read starts at the first line that had not: about
 * the screen, plus what the pane wrote meanwhile. Without that a wait on a pane that printed a
 * long log read all of it again at every read, and a read took longer than the pane took to
 * change a row. A read captures at most {@link READ_ROWS} rows: of more written between two
 * reads, the last ones are read and the others counted ({@link WatchedRows.skippedRows}).
 *
 * Here: what a watch knows of the rows, and the read that compares them by their numbers. The
 * read again by content where the numbers no longer hold is watch_reread.ts's; the check that
 * they still hold (the screen's rows above the start) is watch_above.ts's; the rows outside a
 * scroll region, compared by their place on the screen, are watch_span.ts's; the several
 * captures one tmux call makes, told apart by marks, are marked_captures.ts's.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { rowArg, trimRow } from "../tmux/capture.ts";
import { newGuard } from "../tmux/format.ts";
import { AnswerPastBound } from "../tmux/tmux_error.ts";
import {
  fixedLines,
  fromAnchor,
  partialRows,
  readCaptures,
  splitMarked,
} from "./marked_captures.ts";
import { type PaneProbe, probeWith } from "./pane_probe.ts";
import {
  changedRows,
  movedRows,
  rowsFrom,
  screenLines,
  trimTrailingBlank,
  wholeRow,
  type WrittenRow,
  writtenRows,
} from "./captured_rows.ts";
import { cellIndex } from "./cell_width.ts";
import {
  cursorAt,
  fewerRows,
  fixedCaptures,
  fixedMarks,
  FixedRows,
  hasFixedRows,
  numbersSince,
  READ_ROWS,
  readBound,
  sameSpan,
  type Span,
  spanCapture,
  spanEnd,
  spanOf,
  spanRow,
} from "./watch_span.ts";
import { type KnownRows, type ReadAgain, readAgain } from "./watch_reread.ts";
import { ABOVE_MARK, type AboveRead, NONE_ABOVE, RowsAbove, startAbove } from "./watch_above.ts";

/**
 * Reads tried before giving up for this time: a pane that scrolls between the probe a read is
 * planned on and the read itself moves the rows read (each try reads further up).
 */
const READ_TRIES = 3;

/** What one read found. */
export interface RowsRead {
  /** The pane as the read found it. */
  readonly probe: PaneProbe;
  /** The rows written since the last read (none: nothing new). */
  readonly lines: string[];
  /** For a watch that reads rows: each of `lines` as a {@link WrittenRow}. */
  readonly rows?: WrittenRow[];
  /** The read could not be made this time (the pane kept moving): read again soon. */
  readonly again?: boolean;
}

/** A read of the rows again where their numbers no longer held (see {@link ReadAgain}). */
type Rebased = Omit<ReadAgain, "read">;

/** A capture of the rows from a line on: its lines and where the next read may start. */
interface Part {
  readonly probe: PaneProbe;
  /** Index of the first line of `lines` in the region (the lines before it did not change). */
  readonly at: number;
  /** The lines from there to the end, blank ones at the end dropped. */
  readonly lines: string[];
  /** The first line (its index in `lines`, and its row) that was not yet whole in the history. */
  readonly next: { readonly index: number; readonly row: number } | null;
  /** The fixed rows (see watch_span.ts) as read; null when the span is the whole screen. */
  readonly fixed: string[] | null;
  /** The screen's rows above the start, as the last read had them and as they read now. */
  readonly above: AboveRead;
}

/**
 * What a watch knew of the normal screen's rows while the alternate screen is shown (see
 * WatchedRows.#switchScreen): the rows from the start on at the start and at the last read.
 */
interface NormalRows {
  readonly baseline: string[] | null;
  readonly last: string[];
  readonly known: boolean;
}

/**
 * The rows of one pane a watch reads, from the start row on, and what it last read of them.
 * Rows are numbered from the top of the history (see capture.ts), which holds until tmux
 * trims the history, it is cleared, or the width changes (the rows reflow). Under a scroll
 * region below a header or above a status line, the history and the region's rows are
 * numbered, and the rows outside it compared by their place on the screen (watch_span.ts).
 */
export class WatchedRows {
  /** Rows written during the watch that were never read (more than {@link READ_ROWS} at once). */
  skippedRows = 0;
  /**
   * The history limit, when rows may have moved up where no read could tell: a history of
   * fewer than 20 rows, full, with the cursor on the screen's last row. tmux then drops a row
   * at each scroll and the size stays as it was (with no history at all, the size is always
   * 0), so a line written past the start and scrolled above it before a read is not read.
   * Null when that never happened.
   */
  movedUnseen: number | null = null;

  readonly #ctx: TmuxContext;
  readonly #paneId: string;
  readonly #start: PaneProbe;
  /** Reports rows ({@link WrittenRow}, whole, with their written part), not lines. */
  readonly #rows: boolean;
  #startAbs: number;
  #startX: number;
  /** The start's screen's first row (see KnownRows.floor), lowered as `#startAbs` is. */
  #floor: KnownRows["floor"];
  /** The rows numbered after the history (the whole screen, or a scroll region's). */
  #span: Span;
  /** The rows outside the span (a header, a status line), compared by their place (watch_span.ts). */
  readonly #fixed = new FixedRows();
  /** The screen's lines at the start: a read that compares by content above the start knows them. */
  #screen: string[] = [];
  /** The history's last lines at the start (see keepScreen): old, never told by content. */
  #pulled: string[] = [];
  /**
   * The span changed (a program set a scroll region, or gave the whole screen back): the rows
   * after the history are numbered otherwise, and the next read (see #rebaseAt) reads them all
   * and compares them by content.
   */
  #wide = false;
  #lastHistory: number;
  #lastWidth: number;
  #lastHeight: number;
  /**
   * The region (lines from the start row on) as last read; a read replaces the lines from the
   * anchor on in place.
   */
  #lastRegion: string[] = [];
  /** Whether `#lastRegion` is a read of the rows (the baseline or a later one). */
  #lastKnown = false;
  /**
   * The rows from the start on as they stood at the start (read in the same tmux call as the
   * start's probe), so that what was on screen then (below the cursor, or after it on its row)
   * is not taken for new output; null when the pane wrote while that call ran (a hook ran in
   * it) or since: the start row is then cut at the cursor, its cells before it taken as they
   * were.
   */
  #baseline: string[] | null = null;
  /**
   * Rows can no longer be told apart by their number: the width changed (they reflowed) or
   * tmux may have trimmed the history. The watch then reads them again (see #rebaseAt).
   */
  #rebase = false;
  /** The rows reflowed: the start row is lost, the watch starts again at the cursor's row. */
  #reflowed = false;
  /**
   * Where the next read starts: line `#anchorIndex` of the region starts at row `#anchorRow`,
   * and every line before it was whole in the history at a read (it cannot have changed).
   */
  #anchorRow: number;
  #anchorIndex = 0;
  /** The last row of the screen at the last read: rows after it were written since. */
  #lastBottom: number;
  /** Rows read above the anchor, for a pane that scrolled between a read's probe and its read. */
  #slack = 0;
  /**
   * The rows a read captures at most: {@link READ_ROWS}, fewer once rows printed more than a
   * read holds whole (see {@link fewerRows}).
   */
  #readRows = READ_ROWS;
  /** The history's size at the last read: the number of the screen's first row then. */
  #lastTop: number;
  /** The screen's rows above the start, read again at each read (see watch_above.ts). */
  readonly #above = new RowsAbove();
  /**
   * Those rows did not move as their numbers say: the next read again by content (see
   * #rebaseAt) begins at the screen's first row at the last read, the start's screen seen.
   */
  #shifted = false;
  /** The screen the last read found: the alternate screen (true) or the normal one. */
  #alternate: boolean;
  /**
   * While the alternate screen is shown, the normal screen's rows as the watch last knew them:
   * leaving the alternate screen puts them back (tmux saved them), which writes nothing, so the
   * rows are then compared with these, not with the alternate screen's. Null when not known
   * (the watch began on the alternate screen and could not read the saved screen, or the rows
   * were read again by content meanwhile): the rows are read again by content then.
   */
  #normal: NormalRows | null = null;

  constructor(ctx: TmuxContext, paneId: string, start: PaneProbe, rows: boolean) {
    this.#ctx = ctx;
    this.#paneId = paneId;
    this.#start = start;
    this.#rows = rows;
    this.#span = spanOf(start);
    const cursor = cursorAt(start, this.#span);
    this.#startAbs = cursor.row;
    this.#startX = cursor.x;
    this.#floor = { row: start.historySize, span: this.#span };
    this.#lastHistory = start.historySize;
    this.#lastWidth = start.width;
    this.#lastHeight = start.height;
    this.#anchorRow = this.#startAbs;
    this.#lastBottom = spanEnd(start, this.#span) - 1;
    this.#lastTop = start.historySize;
    this.#alternate = start.alternateScreen;
  }

  /**
   * Whether rows lie outside the span at the start (a scroll region below a header or above a
   * status line): the screen's rows from the start's on are then not the rows from its row on,
   * and the baseline is read with {@link WatchedRows.readBaseline}.
   */
  get regionRows(): boolean {
    return hasFixedRows(this.#span);
  }

  /**
   * Keeps the screen's lines at the start (see #screen), and the history's last ones: a taller
   * screen takes those back onto its top, where a program's header can keep them while its
   * region scrolls the rows around them into the history, and their numbers put them below the
   * start (a wait matched an old verdict there).
   */
  keepScreen(lines: string[], history: readonly string[] = []): void {
    this.#screen = lines;
    this.#pulled = history.filter((l) => trimRow(l) !== "");
  }

  /**
   * For a watch that began on the alternate screen: the normal screen tmux saved, read at the
   * start's instant with `capture-pane -a` (`joined` with -J, `raw` row by row with -N).
   * Leaving the alternate screen puts it back, which writes nothing: its rows from the start
   * row on are what the rows are compared with then, its rows above the start those rows'. Its
   * lines are old where rows are read again by content too. Call after keepScreen.
   */
  keepSaved(joined: string[], raw: string[]): void {
    this.#pulled.push(...joined.filter((l) => trimRow(l) !== ""));
    const y = this.#startAbs - this.#start.historySize;
    const rows = rowsFrom(joined, raw, y);
    if (rows === null) return;
    const lines = trimTrailingBlank(rows);
    this.#normal = { baseline: lines, last: [...lines], known: true };
    if (y > 0) this.#above.keepSaved(this.#startAbs - y, raw.slice(0, y));
  }

  /** The region as last read (what a pane gone showed last). */
  get last(): readonly string[] {
    return this.#lastRegion;
  }

  /**
   * Keeps the rows from the start on as they stood at the start, and the screen's rows above
   * the start row (`above`, row by row, read at the same instant; see watch_above.ts).
   */
  keepBaseline(lines: string[], above: readonly string[] = []): void {
    if (above.length > 0) this.#above.begin(this.#startAbs - above.length, above);
    this.#baseline = lines;
    // A copy: a read replaces the last read's lines in place.
    this.#lastRegion = [...lines];
    this.#lastKnown = true;
  }

  /**
   * Reads the rows from the start on ({@link WatchedRows.#baseline}); kept only when the pane's
   * cursor is where the start's read left it, so nothing written since can pass for what was
   * there before.
   */
  async readBaseline(): Promise<void> {
    const start = this.#start;
    const s = this.#span;
    const guard = newGuard();
    // The span's rows above the start row, on the screen (see watch_above.ts).
    const above = this.#startAbs - start.historySize;
    const marks = [...fixedMarks(s), ...above > 0 ? [ABOVE_MARK] : []];
    const { probe, text } = await probeWith(this.#ctx, this.#paneId, [
      ...spanCapture(this.#paneId, ["-J"], above, null, s),
      ...fixedCaptures(this.#paneId, guard, s),
      ...startAbove(this.#paneId, guard, above, s),
    ], start);
    const out = splitMarked(text, guard, marks);
    if (!probe.exists || out === null) return;
    // The fixed rows as they read now are taken as they were (what changed between is missed).
    if (hasFixedRows(s)) this.#fixed.keep(fixedLines(out));
    const still = probe.historySize === start.historySize && probe.cursorX === start.cursorX &&
      probe.cursorY === start.cursorY && sameSpan(spanOf(probe), s);
    const rows = screenLines(out.get(ABOVE_MARK) ?? "");
    const lines = trimTrailingBlank(screenLines(out.get("")!));
    if (still) this.keepBaseline(lines, rows.length === above ? rows : []);
  }

  /** Reads the rows that may have changed since the last read; what was written since. */
  async read(): Promise<RowsRead> {
    const { probe: now } = await probeWith(this.#ctx, this.#paneId, [], this.#start);
    if (!now.exists) return { probe: now, lines: [] };
    this.#moved(now);
    const part = this.#rebase ? null : await this.#readPart(now);
    if (part === null || "fresh" in part) {
      const { probe, fresh, first } = part ?? await this.#rebaseAt(now);
      // Rows not seen before: whole (after a reflow, the cursor's line: what is past the known).
      const rows = this.#rows ? [...first ?? [], ...fresh.map(wholeRow)] : undefined;
      return { probe, lines: rows ? rows.map((r) => r.shown) : fresh, rows };
    }
    if ("again" in part) return { probe: part.probe, lines: [], again: true };
    // Kept as read only once nothing is left to ask tmux: a read tmux does not answer in time
    // (a wait outlives it: pane_watch.ts) then leaves them to be told by the next read.
    const spanRead = await this.#spanChanged(part);
    const fixed = part.fixed === null ? [] : this.#fixed.changed(part.fixed);
    if (fixed.length === 0) return spanRead;
    // The fixed rows changed (a header drawn again): told before the span's rows.
    const rows = [...fixed, ...spanRead.rows ?? spanRead.lines.map(wholeRow)];
    return {
      probe: part.probe,
      lines: rows.map((r) => r.shown),
      rows: this.#rows ? rows : undefined,
    };
  }

  /** What of the span's rows a read tells (see {@link WatchedRows.read}). */
  async #spanChanged(part: Part): Promise<RowsRead> {
    const { probe, at, lines, above } = part;
    const old = this.#lastRegion;
    // The lines before `at` are the same for good: only the rest is compared, and replaced.
    const was = old.slice(at);
    const last = this.#lastKnown ? was : null;
    // Rows that only moved (lines inserted or deleted, a scroll down) are no output: each
    // counts as it stood at the last read, found in one view of the rows above the start and
    // those from it on (the rows above are on the screen only while the start row is). A row
    // they left was blank before what is written there now, at the start too.
    const lead = at === 0 ? above.was.length : 0;
    const same = was.length === lines.length && lines.every((l, j) => l === was[j]);
    // Only rows a read tells need it: none of a watch that reads no rows, or of a read where
    // nothing changed.
    const { moved, freed } = this.#rows && (lead > 0 || !same)
      ? movedRows(
        [...lead > 0 ? above.was : [], ...last ?? []],
        [...lead > 0 ? above.now : [], ...lines],
      )
      : { moved: [], freed: [] };
    /** Row `i` of the view (`line` there now) as it stood before, `then` when it did not move. */
    const before = (i: number, line: string, then: string) =>
      moved[i] ? line : freed[i] ? "" : then;
    // Rows above the start drawn again in their place (see watch_above.ts), told first;
    // numbered from 1, as the fixed rows: the start row's rules are not theirs.
    const drawn = this.#rows && lead > 0
      ? changedRows(
        ["", ...above.base.map((b, i) => freed[i] ? "" : b ?? above.was[i])],
        above.now,
        above.was.map((w, i) => before(i, above.now[i], w)),
        0,
        1,
      )
      : [];
    const told = (rows: WrittenRow[]) => ({
      probe,
      lines: rows.map((r) => r.shown),
      rows: this.#rows ? rows : undefined,
    });
    // Nothing at all from the start on (a cleared screen): the last read is kept.
    if (at + lines.length === 0) return told(drawn);
    // The start's cursor matters only on the start row. Asked before the lines are kept as
    // read, for the same reason as the fixed rows (see read).
    const cursor = at === 0 && !same ? await this.#cursorIn(lines[0]) : 0;
    old.length = at;
    for (const line of lines) old.push(line);
    if (part.next !== null && part.next.index > 0) {
      // Lines before this one are whole in the history: read from it next time.
      this.#anchorIndex = at + part.next.index;
      this.#anchorRow = part.next.row;
      while (old.length < this.#anchorIndex) old.push("");
    }
    if (same) return told(drawn);
    this.#lastKnown = true;
    // Under a region, rows not known at the start (the pane moved before they were read) are
    // compared by text with the start's screen: they hold the region's old lines, not the
    // start row's blanks (a line that reads like one of those is missed then).
    const known = last === null && this.#baseline === null && hasFixedRows(spanOf(this.#start))
      ? new Set(this.#screen.map(trimRow))
      : null;
    const fresh = (text: string) => known === null || !known.has(trimRow(text));
    if (this.#rows) {
      const seen = last && lines.map((line, j) => before(lead + j, line, last[j] ?? ""));
      const base = this.#baseline &&
        this.#baseline.map((line, i) => freed[lead + i - at] && !moved[lead + i - at] ? "" : line);
      const rows = changedRows(base, lines, seen, cursor, at).filter((r) => fresh(r.text));
      return told([...drawn, ...rows]);
    }
    // Every row written since the start, of those read again.
    return { probe, lines: writtenRows(this.#baseline, lines, cursor, at).filter(fresh) };
  }

  /** Notes what a probe says of the rows' numbers (see {@link numbersSince}). */
  #moved(now: PaneProbe): void {
    const last = { historySize: this.#lastHistory, width: this.#lastWidth, span: this.#span };
    const seen = numbersSince({ ...last, height: this.#lastHeight }, now);
    if (seen.drop !== null) {
      // Rows moved up by at least the drop seen.
      this.#startAbs = Math.max(0, this.#startAbs - seen.drop);
      this.#floor = { ...this.#floor, row: Math.max(0, this.#floor.row - seen.floorDrop) };
      this.#lastBottom -= seen.drop;
      this.#rebase = true;
    }
    // The rows reflowed: the start's row number, and the baseline by row, no longer hold.
    if (seen.reflowed) this.#rebase = this.#reflowed = true;
    // The rows after the history are numbered otherwise from now on.
    if (seen.wide) this.#rebase = this.#wide = true;
    if (seen.unseen !== null) this.movedUnseen = seen.unseen;
    this.#lastHistory = now.historySize;
    this.#lastWidth = now.width;
    this.#lastHeight = now.height;
    this.#span = spanOf(now);
  }

  /**
   * Reads the lines from the anchor on (see {@link WatchedRows.#anchorRow}) in one tmux call,
   * at one instant with a probe that says where tmux began. Planned on `now`: a pane that
   * scrolls before the read moves its rows up, so one seen scrolling is read from a little
   * further up, with the rows above the anchor read row by row too (-N), which say where it
   * falls among the lines (see {@link lineAt}); one that scrolled further is read again.
   * Where the anchor may move on, the call also reads whether the screen's top row begins a
   * line (the row above it and it, joined, are one line or two) and the screen's lines: the
   * read's last lines from there on. Past {@link READ_ROWS} rows from the anchor, only rows
   * written since the last read are read (a whole screen of them at least, else everything is
   * read again, as after a trim). A result with `fresh` is such a read again; with `again`,
   * no read could be made.
   */
  async #readPart(
    now: PaneProbe,
  ): Promise<Part | Rebased | { probe: PaneProbe; again: true }> {
    let plan = now;
    /**
     * Read row by row to the end (see rowsFrom), not only above the anchor: those rows alone
     * could be grouped otherwise (the anchor's row is blank, see below).
     */
    let whole = false;
    for (let attempt = 0; attempt < READ_TRIES; attempt++) {
      // Planned on the span `plan` saw; a read that saw another is read again (see #moved).
      const s = this.#span;
      const end = spanEnd(plan, s);
      let top = this.#anchorRow - this.#slack;
      const skip = end - this.#anchorRow > this.#readRows;
      if (skip) {
        // Rows before the last read's screen were read; if some of them are still on the
        // screen they may have changed, and no line number says where they are: read again.
        if (end - (this.#lastBottom + 1) < plan.height) {
          this.#rebase = true;
          return await this.#rebaseAt(plan);
        }
        top = Math.max(end - this.#readRows, this.#lastBottom + 1);
      }
      const cut = !skip && top < this.#anchorRow;
      const advance = skip || this.#anchorRow < plan.historySize;
      const rel = rowArg(top - plan.historySize);
      const guard = newGuard();
      const { after, marks } = readCaptures(this.#paneId, guard, s, {
        rel,
        rowsTo: !cut ? undefined : whole ? null : rowArg(this.#anchorRow - plan.historySize),
        advance,
        skip,
      });
      const aboveReads = this.#above.captures(this.#paneId, guard, plan, s, this.#slack);
      after.push(...aboveReads);
      if (aboveReads.length > 0) marks.push(ABOVE_MARK);
      let probed;
      try {
        const bound = readBound(this.#readRows, plan.height);
        probed = await probeWith(this.#ctx, this.#paneId, after, this.#start, undefined, bound);
      } catch (error) {
        if (!(error instanceof AnswerPastBound)) throw error;
        // Rows that print more than a read holds whole: read fewer, the others counted.
        this.#readRows = fewerRows(this.#readRows, end - top, plan.height);
        this.#slack = Math.min(this.#slack, this.#readRows);
        attempt--;
        continue;
      }
      const { probe, text } = probed;
      if (!probe.exists) return { probe, again: true };
      this.#moved(probe);
      if (this.#rebase || this.#switchScreen(probe)) return await this.#rebaseAt(probe);
      const moved = probe.historySize - plan.historySize;
      plan = probe;
      this.#slack = moved > 0 ? Math.min(this.#readRows, moved + (moved >> 1) + 16) : 0;
      const out = splitMarked(text, guard, marks);
      if (out === null) continue;
      // The rows above the start did not move as their numbers say: read again by content.
      const above = this.#above.reread(out.get(ABOVE_MARK), probe, this.#span, this.#lastTop);
      if (above === null) continue;
      if (above === "moved") {
        this.#rebase = this.#shifted = true;
        return await this.#rebaseAt(probe);
      }
      let joined = screenLines(out.get("")!);
      // Where tmux began, now that the pane's state at the read is known.
      // The span the read saw: numbered as `s` (else #moved rebased), its height may differ.
      const sr = this.#span;
      let first = spanRow(rel, probe, sr);
      if (skip) {
        // A line begun above the read is not read: its end alone would be told as a line (and
        // match what the line does not begin with). Its rows are counted with the others.
        const partial = first > 0
          ? partialRows(joined, out.get("P")!, screenLines(out.get("R")!))
          : 0;
        if (partial === null) continue;
        if (partial > 0) {
          joined = joined.slice(1);
          first += partial;
        }
        // Every row read was written since the last read: the region starts again there,
        // nothing before it known.
        this.skippedRows += Math.max(0, first - (this.#lastBottom + 1));
        this.#startAbs = first;
        this.#startX = 0;
        this.#baseline = [];
        this.#lastRegion = [];
        this.#lastKnown = true;
        this.#anchorRow = first;
        this.#anchorIndex = 0;
        this.#above.clear();
      }
      // The anchor's row in the read; below 0 the pane scrolled past it before the read.
      const y = this.#anchorRow - first;
      if (y < 0) continue;
      const from = fromAnchor(joined, out.get("N"), y, whole ? spanEnd(probe, sr) - first : null);
      if (from === "whole") whole = true;
      if (from === null || from === "whole") continue;
      /** The line of `joined` the anchor's row is on. */
      const { lines, j } = from;
      // Kept only now: a read made again above would compare them with this one's.
      if (!skip) this.#above.take(above);
      let next: Part["next"] = null;
      if (advance && this.#anchorRow < probe.historySize) {
        // The screen's top row begins a line: the read's lines from it on are the screen's.
        const index = joined.length - screenLines(out.get("S") ?? "").length - j;
        if (screenLines(out.get("W") ?? "").length === 2 && index > 0) {
          next = { index, row: probe.historySize };
          // The read goes on from the screen's first row: none above it is on the screen.
          this.#above.clear();
        }
      }
      this.#lastBottom = spanEnd(probe, sr) - 1;
      this.#lastTop = probe.historySize;
      const fixed = hasFixedRows(sr) ? fixedLines(out) : null;
      return {
        probe,
        at: this.#anchorIndex,
        lines: trimTrailingBlank(lines),
        next,
        fixed,
        above: skip ? NONE_ABOVE : above,
      };
    }
    return { probe: plan, again: true };
  }

  /**
   * Follows the pane to the alternate screen and back, from the probe of a read. Entering it,
   * the normal screen's rows as the watch knows them are kept aside (tmux saves that screen,
   * and no history grows while the alternate one is shown, so the rows keep their numbers);
   * what the alternate screen shows is compared with them, as any change is. Leaving it puts
   * the saved screen back, which writes nothing: the rows are then compared with the ones kept
   * aside, not with the alternate screen's last read (old text would pass for new: a pager
   * quit over a build's verdict). True when those are not known: the rows are then read again
   * by content (see #rebaseAt), the saved screen's lines seen.
   */
  #switchScreen(probe: PaneProbe): boolean {
    const alternate = probe.alternateScreen;
    if (alternate === this.#alternate) return false;
    this.#alternate = alternate;
    this.#above.switchScreen(alternate);
    if (alternate) {
      const last = [...this.#lastRegion];
      this.#normal = { baseline: this.#baseline, last, known: this.#lastKnown };
      return false;
    }
    const normal = this.#normal;
    this.#normal = null;
    if (normal === null) {
      this.#rebase = true;
      return true;
    }
    this.#baseline = normal.baseline;
    this.#lastRegion = [...normal.last];
    this.#lastKnown = normal.known;
    return false;
  }

  /**
   * Reads the rows again where their numbers no longer hold (see {@link readAgain}): what the
   * rows show then is the new baseline, kept once the pane did not move between the probe and
   * this read (else read again next time).
   */
  async #rebaseAt(now: PaneProbe): Promise<Rebased> {
    const s = this.#span;
    let again: ReadAgain;
    while (true) {
      try {
        again = await this.#readAgain(now);
        break;
      } catch (error) {
        if (!(error instanceof AnswerPastBound)) throw error;
        this.#readRows = fewerRows(this.#readRows, this.#readRows, now.height);
      }
    }
    const { probe, fresh, first, read } = again;
    if (read === null) return { probe, fresh };
    const { lines, fixed, top, start, cursor, wide, floor } = read;
    // The normal screen's rows as last read, before the alternate screen was found by this read.
    const normal = probe.alternateScreen && !this.#alternate ? this.#lastRegion : [];
    this.#fixed.keep(fixed);
    this.#lastRegion = [...lines];
    this.#lastKnown = true;
    const still = probe.exists && probe.historySize === now.historySize &&
      probe.cursorX === now.cursorX && probe.cursorY === now.cursorY &&
      probe.width === now.width && sameSpan(spanOf(probe), s);
    if (still) {
      this.#rebase = false;
      // Read from the start or above it: the rows above it on the screen are not followed.
      this.#shifted = false;
      this.#above.clear();
      // The rows read are the screen's shown now. The normal screen's kept aside (or last read,
      // as the alternate screen came) are old where rows are read by content, as they may be
      // when the alternate screen is left: numbered before this read, no longer by row.
      for (const line of [...this.#normal?.last ?? [], ...normal]) {
        if (trimRow(line) !== "") this.#pulled.push(line);
      }
      this.#normal = null;
      this.#alternate = probe.alternateScreen;
      if (wide) {
        this.#wide = false;
        this.#startX = top === cursor.row ? cursor.x : 0;
      }
      if (this.#reflowed) {
        this.#reflowed = false;
        this.#startX = cursor.x;
      }
      if (top > start) {
        // Rows written since the last read that this read left out.
        this.skippedRows += Math.max(0, top - Math.max(start, this.#lastBottom + 1));
        this.#startX = 0;
      }
      this.#startAbs = top;
      this.#floor = { row: Math.min(floor, top), span: s };
      this.#baseline = lines;
      this.#anchorRow = top;
      this.#anchorIndex = 0;
      this.#lastBottom = spanEnd(now, s) - 1;
      this.#lastTop = now.historySize;
    }
    return { probe, fresh, first };
  }

  /** The read again by content, with what the watch knows of the rows (see {@link readAgain}). */
  #readAgain(now: PaneProbe): Promise<ReadAgain> {
    return readAgain(this.#ctx, this.#paneId, this.#start, now, {
      span: this.#span,
      wide: this.#wide,
      reflowed: this.#reflowed,
      rows: this.#rows,
      shifted: this.#shifted ? this.#lastTop : null,
      startAbs: this.#startAbs,
      floor: this.#floor,
      lastRegion: this.#lastRegion,
      baseline: this.#baseline,
      lastFixed: this.#fixed.last,
      baseFixed: this.#fixed.base,
      screen: this.#screen,
      // The normal screen's rows kept aside: leaving the alternate screen puts them back.
      pulled: [...this.#pulled, ...this.#normal?.last ?? []],
      readRows: this.#readRows,
    });
  }

  /**
   * Where the start's cursor is on the start row, as an index into the row as it stood at the
   * start (the baseline's), or as it reads now (`row`) when that is not known: its cells
   * before it are taken as they were. Columns are tmux's (see {@link cellIndex}).
   */
  async #cursorIn(row: string | undefined): Promise<number> {
    const at = this.#baseline === null ? row : this.#baseline[0];
    return await cellIndex(this.#ctx, this.#start.serverPid, at ?? "", this.#startX);
  }
}
