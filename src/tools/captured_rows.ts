/**
 * What of a pane's rows is new, worked out on the text `capture-pane` gives with no tmux call:
 * a capture's lines, the lines of `-J` rebuilt from a read row by row, blank lines at the end
 * dropped, what of a row changed between two reads (on code point boundaries), and which rows
 * a watch reports as written since it began. The pane watch reads the rows and keeps the
 * baseline; these compare them, apart so that they are tested on plain strings.
 *
 * @module
 */

import { trimRow } from "../tmux/capture.ts";

/** The lines of a capture's output (each ends in a newline; a last wrapped row may not). */
export function screenLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * The lines `capture-pane -J -S y` gives (the rows from screen row `y` on, wrapped rows
 * joined), made from two reads of the screen at one instant: `joined` with -J, `raw` row by
 * row with -N. Both keep a row's trailing blanks, so each joined line is the raw rows it was
 * made of, one after the other: each takes the fewest rows that make it. Null when that does
 * not account for every row, or a line that is not blank would begin with a blank row (a
 * wrapped line whose rows were erased after it wrapped): the rows could be grouped otherwise.
 */
export function rowsFrom(
  joined: readonly string[],
  raw: readonly string[],
  y: number,
): string[] | null {
  let r = 0;
  let found: string[] | null = null;
  for (let j = 0; j < joined.length; j++) {
    const line = joined[j];
    const first = r;
    if (r >= raw.length || (raw[r] === "" && line !== "")) return null;
    let made = raw[r++];
    while (made.length < line.length && r < raw.length) made += raw[r++];
    if (made !== line) return null;
    if (found === null && y >= first && y < r) {
      found = [raw.slice(y, r).join(""), ...joined.slice(j + 1)];
    }
  }
  return r === raw.length ? found : null;
}

/**
 * Where a row falls among the lines of a `capture-pane -J` read, from the rows before it read
 * row by row (`before`, with -N, from the same first row at the same instant): the index of
 * the line it is on, and how much of that line the rows before it hold (0 when it starts the
 * line). The lines from that row on are what `capture-pane -J` from that row gives. Null as
 * {@link rowsFrom} is: the rows do not add up to the lines, or could be grouped otherwise.
 */
export function lineAt(
  joined: readonly string[],
  before: readonly string[],
): { index: number; offset: number } | null {
  let r = 0;
  for (let j = 0; j < joined.length; j++) {
    if (r === before.length) return { index: j, offset: 0 };
    const line = joined[j];
    if (before[r] === "" && line !== "") return null;
    let made = before[r++];
    while (made.length < line.length && r < before.length) made += before[r++];
    if (made === line) continue;
    // The rows end inside this line: they hold its start.
    return r === before.length && line.startsWith(made) ? { index: j, offset: made.length } : null;
  }
  return null;
}

/** The lines without the blank ones at their end (a capture pads the screen with them). */
export function trimTrailingBlank(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1].trim() === "") end--;
  return lines.slice(0, end);
}

/** Index of the first UTF-16 unit where two texts differ (the shorter one's length if none). */
function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Whether `i` falls inside a surrogate pair of `text` (between its two halves). */
export function insidePair(text: string, i: number): boolean {
  const low = text.charCodeAt(i);
  const high = text.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
}

/**
 * What of `now` differs from `was`, as UTF-16 indices on code point boundaries: from the first
 * character that differs to just past the last one. The common start is left out first, then
 * the common end of what is left, as a diff finds it ("abc" then "abcabc" is [3, 6), not
 * nothing). Null when `now` is `was` or `was` cut short: nothing was written. A span with
 * `from` equal to `to` is text taken out there.
 */
export function changedSpan(was: string, now: string): { from: number; to: number } | null {
  let from = firstDifference(was, now);
  if (from >= now.length) return null;
  let same = 0;
  while (
    same < was.length - from && same < now.length - from &&
    was.charCodeAt(was.length - 1 - same) === now.charCodeAt(now.length - 1 - same)
  ) same++;
  let to = now.length - same;
  if (insidePair(now, from)) from--;
  if (insidePair(now, to)) to++;
  return { from, to };
}

/**
 * What of `now` differs from `was`, as spans ({@link changedSpan}'s): one, unless the two are
 * as long as each other (a row drawn again over itself: a step counter at its start and a
 * percentage at its end), where each stretch that differs is a span of its own and the text
 * between them, the same in both, is in none. Empty when nothing was written.
 */
export function changedSpans(was: string, now: string): { from: number; to: number }[] {
  if (was.length !== now.length) {
    const span = changedSpan(was, now);
    return span === null ? [] : [span];
  }
  const spans: { from: number; to: number }[] = [];
  let i = 0;
  while (i < now.length) {
    if (was.charCodeAt(i) === now.charCodeAt(i)) {
      i++;
      continue;
    }
    let from = i;
    while (i < now.length && was.charCodeAt(i) !== now.charCodeAt(i)) i++;
    let to = i;
    if (insidePair(now, from)) from--;
    if (insidePair(now, to)) to++;
    const last = spans.at(-1);
    if (last !== undefined && from <= last.to) last.to = to;
    else spans.push({ from, to });
    i = to;
  }
  return spans;
}

/**
 * Where text written past what was known of a line begins in `now`, the same line read again
 * from the cursor's row after a width change (the rows reflowed, so `now` may begin anywhere in
 * the line, before or after where `known`, the line as the last read had it, begins): a UTF-16
 * index into `now` without its trailing blanks, or null when `now` holds nothing past `known`.
 * `now` ends as `known` did: nothing was written. `now` holds `known`: what follows it was. Else
 * `now` begins with an end of `known` (the longest): what follows that was. Else none of it was
 * known: all of it (its end, written past the cursor's row).
 */
export function writtenPast(known: string, now: string): number | null {
  const k = trimRow(known);
  const t = trimRow(now);
  if (t === "" || k.endsWith(t)) return null;
  let from: number;
  const at = k === "" ? -1 : t.lastIndexOf(k);
  if (at !== -1) from = at + k.length;
  else {
    // The longest end of `k` that `t` begins with (prefix function of t + "\0" + k).
    const joined = `${t}\u0000${k}`;
    const fail = new Array<number>(joined.length).fill(0);
    for (let i = 1; i < joined.length; i++) {
      let j = fail[i - 1];
      while (j > 0 && joined[i] !== joined[j]) j = fail[j - 1];
      if (joined[i] === joined[j]) j++;
      fail[i] = j;
    }
    from = Math.min(fail[joined.length - 1], t.length);
  }
  if (insidePair(t, from)) from--;
  return from < t.length ? from : null;
}

/** Spans in order of their start, those that touch or overlap made one. */
function mergeSpans(spans: { from: number; to: number }[]): { from: number; to: number }[] {
  const out: { from: number; to: number }[] = [];
  for (const span of [...spans].sort((a, b) => a.from - b.from)) {
    const last = out.at(-1);
    if (last !== undefined && span.from <= last.to) last.to = Math.max(last.to, span.to);
    else out.push({ ...span });
  }
  return out;
}

/**
 * A row a watch that reads rows reports as written: whole, with where the part written since
 * the watch began starts.
 */
export interface WrittenRow {
  /** The row as it reads now (without its trailing blanks). */
  readonly text: string;
  /**
   * The row with the blanks a program wrote at its end (a prompt's `$ `), where known: what
   * patterns are matched against. `text` is its start.
   */
  readonly line?: string;
  /**
   * Where the written part starts (a UTF-16 index into `text`): the first character that
   * differs from the row as it stood at the start or at the watch's last read, whichever is
   * earlier (blanks before the start's cursor that were blank then do not count). Text that
   * ends at or before it was on the row already.
   */
  readonly from: number;
  /**
   * Where the written part ends (just past its last character; at least `from`): the row's
   * end, unless its end was there already, the same at the start and at the last read (a
   * spinner or a counter drawn again before the rest of the row). Text from it on was on the
   * row already. Absent: the row's end (with the blanks of `line` after it). A match counts
   * only if it takes in some of [from, to): starts before `to` and ends after `from`.
   */
  readonly to?: number;
  /**
   * The written part in pieces, where text the same at the start and at the last read lies
   * inside [from, to) (a row changed at both ends at once: see {@link changedSpans}): a match
   * counts only if it takes in some of one piece. Absent: [from, to) is one piece.
   */
  readonly parts?: readonly { readonly from: number; readonly to: number }[];
  /**
   * What to report: on the start row, what was written from the start's cursor on (a prompt
   * is not output); the whole row when the row was rewritten before that cursor, and every
   * other row whole.
   */
  readonly shown: string;
}

/** A row told whole: none of it was seen before. */
export function wholeRow(line: string): WrittenRow {
  return { text: trimRow(line), line, from: 0, shown: trimRow(line) };
}

/**
 * For a watch that reads rows: of the rows from the start on, those changed since the last
 * read (`last`; null when there was none), each whole with where its written part starts
 * (see {@link WrittenRow}). A row redrawn in place (a progress bar's `\r`) is one row, in its
 * latest form, and counts even when it is back to what it showed at the start: it changed
 * in between. `startCursor` is where the start's cursor is on the start row (the watch's
 * `#cursorIn`); `base` the rows as they stood at the start (the watch's baseline; null when
 * not known). `lines` may be the rows from the `first`-th on (a watch reads again only the
 * rows that may have changed): `base` is still from the start row on, `last` the same rows as
 * `lines`.
 */
export function changedRows(
  base: readonly string[] | null,
  lines: readonly string[],
  last: readonly string[] | null,
  startCursor: number,
  first = 0,
): WrittenRow[] {
  const out: WrittenRow[] = [];
  lines.forEach((line, j) => {
    const i = first + j;
    const text = trimRow(line);
    if (text === "") return;
    const before = last === null ? null : trimRow(last[j] ?? "");
    if (text === before) return;
    // What differs from the row at the last read and from the row at the start: written
    // since the start is what either tells.
    const sinceLast = before === null ? [] : changedSpans(before, text);
    let sinceStart: { from: number; to: number }[];
    let cursor = 0;
    let was: string | null = null;
    if (base === null) {
      // What the row held at the start is not known: the start row from the cursor's column
      // (its cells before it taken as they were), every other row whole.
      cursor = i === 0 ? startCursor : 0;
      sinceStart = cursor < text.length ? [{ from: cursor, to: text.length }] : [];
    } else {
      was = trimRow(base[i] ?? "");
      sinceStart = changedSpans(was, text);
      if (i === 0) cursor = startCursor;
    }
    // Written since the start is what either tells.
    let spans = mergeSpans([...sinceStart, ...sinceLast]);
    if (spans.length === 0) return;
    let from = spans[0].from;
    let to = spans[spans.length - 1].to;
    if (was !== null && i === 0) {
      // Blanks up to the start's cursor that were blank then were there before (typing at a
      // prompt "P> " is "x", not " x").
      while (from < cursor && text[from] === " " && (was[from] ?? " ") === " ") from++;
      to = Math.max(to, from);
      spans = spans.filter((s) => s.to > from).map((s) => ({
        from: Math.max(s.from, from),
        to: s.to,
      }));
    }
    if (from >= text.length) return;
    // The start row rewritten before the start's cursor (a `\r` redraw) is told whole; text
    // written from that cursor on is told from where it begins.
    const shown = i === 0 && from >= cursor ? text.slice(from) : text;
    out.push(
      spans.length > 1
        ? { text, line, from, to, parts: spans, shown }
        : { text, line, from, to, shown },
    );
  });
  return out;
}

/**
 * Of the rows from the start on, those written since the start: each that differs from the
 * baseline (the start row from where it first differs: characters, not columns, which wide
 * characters and combining marks tell apart). Without a baseline, every row, the start row
 * from the start's cursor on (`startCursor`, see the watch's `#cursorIn`). `base` is the
 * baseline: the rows as they stood at the start, null when not known. `lines` may be the rows
 * from the `first`-th on, as in {@link changedRows}.
 */
export function writtenRows(
  base: readonly string[] | null,
  lines: readonly string[],
  startCursor: number,
  first = 0,
): string[] {
  if (lines.length === 0) return [];
  if (base === null) {
    return first === 0 ? [lines[0].slice(startCursor), ...lines.slice(1)] : [...lines];
  }
  const out: string[] = [];
  lines.forEach((line, j) => {
    const i = first + j;
    const was = base[i];
    if (line === was) return;
    if (i > 0 || was === undefined) out.push(line);
    else {
      let same = 0;
      while (same < was.length && same < line.length && was[same] === line[same]) same++;
      // capture-pane drops a row's trailing blanks: those up to the start's cursor were
      // there before (typing at a prompt "P> " is "x", not " x").
      if (same === was.length) {
        while (same < startCursor && same < line.length && line[same] === " ") same++;
      }
      out.push(line.slice(same));
    }
  });
  return out;
}

/**
 * Which rows of `now` were moved there, not written: rows a program moved up or down (lines
 * inserted or deleted, `ESC[L`, `ESC[M`; a scroll down, `ESC[T`; a screen that keeps no history
 * scrolled up) each differ from the row that stood in their place, and tell nothing new. `was`
 * is the same rows at the last read (the same length or shorter; missing ones blank). One
 * offset moves them all: the one that makes the most rows that changed equal to the row that
 * far away at the last read, whose place then no longer holds it (text printed again below
 * itself, a test run's output run twice, leaves the first copy where it was: it moved nothing;
 * a prompt typed on with a new one below it leaves the old text there, written further). A
 * move of one row alone must have left a blank row.
 * Rows that are not blank only; a text on more than {@link MOVED_COPIES} rows of `was` tells no
 * offset. Also the rows of `was` whose text moved away (`freed`): a row written there since
 * was written on a blank row (a scroll down frees the top rows), not over the old text.
 */
export function movedRows(
  was: readonly string[],
  now: readonly string[],
): { moved: boolean[]; freed: boolean[] } {
  const a = was.map(trimRow);
  const b = now.map(trimRow);
  const moved = b.map(() => false);
  const places = new Map<string, number[]>();
  a.forEach((text, i) => {
    if (text === "") return;
    const at = places.get(text);
    if (at === undefined) places.set(text, [i]);
    else at.push(i);
  });
  const counts = new Map<number, number>();
  b.forEach((text, j) => {
    if (text === "" || text === (a[j] ?? "")) return;
    const at = places.get(text) ?? [];
    if (at.length > MOVED_COPIES) return;
    for (const i of at) {
      // Its old place must hold something else now: else it was copied, not moved. Nor may
      // it hold the old text written further (a prompt typed on, a new prompt below it).
      if ((b[i] ?? "").startsWith(a[i])) continue;
      counts.set(j - i, (counts.get(j - i) ?? 0) + 1);
    }
  });
  let offset = 0;
  let most = 0;
  for (const [k, n] of counts) {
    if (n > most || (n === most && Math.abs(k) < Math.abs(offset))) [offset, most] = [k, n];
  }
  const freed = a.map(() => false);
  const mark = () =>
    b.forEach((text, j) => {
      const i = j - offset;
      if (text !== "" && text !== (a[j] ?? "") && a[i] === text && !(b[i] ?? "").startsWith(text)) {
        moved[j] = freed[i] = true;
      }
    });
  if (most >= 2) mark();
  else if (most === 1) {
    // One row alone is a move only where it left a blank row: else it may be a line printed
    // again over an edited one.
    mark();
    const j = moved.indexOf(true);
    if (trimRow(now[j - offset] ?? "") !== "") {
      moved[j] = freed[j - offset] = false;
    }
  }
  return { moved, freed };
}

/** Rows of one text past which it tells no offset (see {@link movedRows}): a repeated line. */
const MOVED_COPIES = 8;
