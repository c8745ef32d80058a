/**
 * One tmux call, several captures: a pane watch (watch_rows.ts, watch_reread.ts) reads rows it
 * must see at one instant in one call, each capture after the last printed behind a mark of its
 * own, and splits the output at the marks. Here: that split, and what two kinds of marked
 * captures say, whether a read began inside a wrapped line (marks "P" and "R") and the fixed
 * rows outside a scroll region (marks "H" and "F", see watch_span.ts).
 *
 * @module
 */

import { screenLines } from "./captured_rows.ts";
import { type Span, spanCapture } from "./watch_span.ts";

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
