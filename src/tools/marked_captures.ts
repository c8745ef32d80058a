/**
 * One tmux call, several captures: a pane watch (watch_rows.ts, watch_reread.ts) reads rows it
 * must see at one instant in one call, each capture after the last printed behind a mark of its
 * own, and splits the output at the marks. Here: that split, the captures a read from the
 * anchor makes, and what marked captures say: where the anchor's row falls among the lines
 * (mark "N"), whether a read began inside a wrapped line (marks "P" and "R") and the fixed rows
 * outside a scroll region (marks "H" and "F", see watch_span.ts).
 *
 * @module
 */

import { lineAt, rowsFrom, screenLines } from "./captured_rows.ts";
import { fixedCaptures, fixedMarks, type Span, spanCapture } from "./watch_span.ts";

/**
 * The outputs of a tmux call's captures, told apart by `guard` and each one's mark printed
 * before it (the first, unmarked, is ""); null when a mark is missing.
 */
export function splitMarked(
  text: string,
  guard: string,
  marks: readonly string[],
): Map<string, string> | null {
  const out = new Map<string, string>();
  let name = "";
  let at = 0;
  for (const mark of marks) {
    const line = `${guard}${mark}\n`;
    const i = text.indexOf(line, at);
    if (i === -1) return null;
    out.set(name, text.slice(at, i));
    name = mark;
    at = i + line.length;
  }
  out.set(name, text.slice(at));
  return out;
}

/**
 * The rows of a read's first line when the read began inside it (a wrapped line begun above
 * its first row), so that the line's end is not told as a line: 0 when the first row begins
 * a line, null when the rows cannot tell. `joined` is the read (-J), `pair` the row above its
 * first and that row joined (-J: one line when the row above wraps into it), `raw` the read
 * row by row (-N). A line that runs to the read's end is kept (0): only its end can be read.
 */
export function partialRows(
  joined: readonly string[],
  pair: string,
  raw: readonly string[],
): number | null {
  if (screenLines(pair).length !== 1) return 0;
  const line = joined[0];
  if (line === undefined || raw.length === 0) return null;
  let r = 0;
  let made = raw[r++];
  while (made.length < line.length && r < raw.length) made += raw[r++];
  if (made !== line) return null;
  return r < raw.length ? r : 0;
}

/**
 * The captures {@link partialRows} reads, after a capture from row `rel` of the span `s`
 * (marks "P" and "R").
 */
export function partialCaptures(paneId: string, guard: string, rel: number, s: Span): string[] {
  return [
    ...[";", "display-message", "-p", guard + "P"],
    ...[";", ...spanCapture(paneId, ["-J"], rel - 1, rel, s)],
    ...[";", "display-message", "-p", guard + "R"],
    ...[";", ...spanCapture(paneId, ["-N"], rel, null, s)],
  ];
}

/** The fixed rows a read printed (see {@link fixedCaptures}), those above the span first. */
export function fixedLines(out: Map<string, string>): string[] {
  return [...screenLines(out.get("H") ?? ""), ...screenLines(out.get("F") ?? "")];
}

/** What a read from the anchor (watch_rows.ts) captures besides its rows (see {@link readCaptures}). */
export interface ReadPlan {
  /** Where the read begins, counted from the span's first row (negative: the history). */
  readonly rel: number;
  /**
   * The read begins above the anchor: its rows row by row (mark "N"), to this row (null: to
   * the end). Absent: it begins at the anchor.
   */
  readonly rowsTo?: number | null;
  /** The anchor may move on: whether the screen's top row begins a line ("W"), and the screen ("S"). */
  readonly advance: boolean;
  /** The read is cut short at the rows a read takes: whether it begins inside a line ("P", "R"). */
  readonly skip: boolean;
}

/**
 * The commands of one read from the anchor (`;` between them): its rows joined (-J) from
 * `plan.rel` to the span's end, the captures `plan` asks for and the fixed rows, and the marks
 * they print, in order.
 */
export function readCaptures(
  paneId: string,
  guard: string,
  s: Span,
  plan: ReadPlan,
): { after: string[]; marks: string[] } {
  const marks: string[] = [];
  const after = spanCapture(paneId, ["-J"], plan.rel, null, s);
  const then = (mark: string, flags: string, from: number, to: number | null) => {
    marks.push(mark);
    after.push(";", "display-message", "-p", guard + mark);
    after.push(";", ...spanCapture(paneId, [flags], from, to, s));
  };
  if (plan.rowsTo !== undefined) then("N", "-N", plan.rel, plan.rowsTo);
  if (plan.advance) {
    // Whether the history's last row wraps (into the screen's first: joined, one line).
    marks.push("W");
    after.push(";", "display-message", "-p", guard + "W");
    after.push(";", "capture-pane", "-p", "-J", "-t", paneId, "-S", "-1", "-E", "0");
    then("S", "-J", 0, null);
  }
  if (plan.skip) {
    // The read may begin inside a wrapped line: whether it does, and its rows.
    marks.push("P", "R");
    after.push(...partialCaptures(paneId, guard, plan.rel, s));
  }
  after.push(...fixedCaptures(paneId, guard, s));
  marks.push(...fixedMarks(s));
  return { after, marks };
}

/**
 * A read's lines (`joined`, -J) from the anchor's row on, `y` rows into it, and the index `j`
 * of the line that row is on: found from the rows above it read row by row (`n`, mark "N"), or
 * from every row the read holds (`rows` of them) when not null. "whole" when the rows above
 * cannot tell (read them all next time), null when the rows do not add up (read again).
 */
export function fromAnchor(
  joined: readonly string[],
  n: string | undefined,
  y: number,
  rows: number | null,
): { lines: string[]; j: number } | "whole" | null {
  if (y === 0) return { lines: [...joined], j: 0 };
  const raw = screenLines(n ?? "");
  if (rows !== null) {
    if (raw.length !== rows) return null;
    const found = rowsFrom(joined, raw, y);
    return found === null ? null : { lines: found, j: joined.length - found.length };
  }
  const at = raw.length > y ? lineAt(joined, raw.slice(0, y)) : null;
  // A blank row where a line ends may still belong to it (a wrapped line whose next row was
  // erased), and the rows above alone cannot tell: read them all.
  if (at === null || (at.offset === 0 && at.index > 0 && raw[y] === "")) return "whole";
  const j = at.index;
  return { lines: [joined[j].slice(at.offset), ...joined.slice(j + 1)], j };
}
