/**
 * A tool's data as a model reads it best: the text block of every successful result.
 *
 * `structuredContent` is JSON for programs; the text block carries the same facts for a
 * model, at about half the tokens: `key: value` lines, one line per list entry as
 * `field=value` pairs (what entries share said once, before them: see render_list.ts), and
 * long texts (a capture, a command's output) as they are, inside a fence. Nothing a pane
 * produces can pose as the reply's own structure: a value that holds a line break, a control
 * character, quotes or leading spaces is written as a JSON string, and a fence is longer than
 * any run of backticks inside it (see render_value.ts).
 *
 * @module
 */

import { jsonBytes, jsonStringBytes } from "./bounds.ts";
import { entryLines, listLines } from "./render_list.ts";
import {
  BARE,
  CONTROLS,
  escapeHidden,
  fenced,
  isBlock,
  isPlainObject,
  json,
  keyText,
  scalar,
  SEPARATORS_AND_BIDI,
  unicodeEscape,
} from "./render_value.ts";

/** One of SEPARATORS_AND_BIDI. */
const SEPARATOR_OR_BIDI = new RegExp(`[${SEPARATORS_AND_BIDI}]`, "g");

/**
 * `text` with U+2028, U+2029, the bidirectional controls and what shows as nothing shown as
 * JSON writes them (`\u2028`, `\u200b`), as summaries and values show them: for a text that
 * shows the C0 and C1 controls its own way (an error text, see errors.ts) but must not break a
 * line, read out of order or make one name read as another.
 */
export function escapeSeparatorsAndBidi(text: string): string {
  return escapeHidden(text.replace(SEPARATOR_OR_BIDI, unicodeEscape));
}

/**
 * What a summary line never holds as it is: line breaks of every kind (`\n`, `\r`, U+0085,
 * U+2028, U+2029), every other C0 and C1 control and DEL (ESC drives a terminal; a tab can pose
 * as a field's `key:\tvalue`), and the bidirectional controls.
 */
const NOT_IN_LINE = new RegExp(`[${CONTROLS}${SEPARATORS_AND_BIDI}]`, "g");

/** A character as JSON writes it in a string: `\n`, `\r`, `\t`, else `\uXXXX`. */
function lineEscape(c: string): string {
  return c === "\n" ? "\\n" : c === "\r" ? "\\r" : c === "\t" ? "\\t" : unicodeEscape(c);
}

/** The start of `text` in at most `max` code units, not ending inside a surrogate pair. */
function startOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * A summary as one visible line, whatever a tool put in it (a pane's command, cwd or title,
 * quoted or not): every character of NOT_IN_LINE is shown as JSON writes it, so a value a tool
 * quoted with `JSON.stringify` reads back exactly and no value can start a line that poses as
 * a field of the result, drive a terminal or read in another order. Longer than `max`
 * characters, it is cut to `max` with `…`, never inside an escape or a character. Applying it
 * twice changes nothing.
 */
export function summaryLine(text: string, max = Infinity): string {
  // What shows as nothing, as values show it (a joiner or a tag character past U+FFFF: a name
  // holding one would read as another).
  const summary = escapeHidden(text);
  const line = summary.replace(NOT_IN_LINE, lineEscape);
  if (line.length <= max) return line;
  const room = max - 1;
  let out = "";
  let at = 0;
  for (const m of summary.matchAll(NOT_IN_LINE)) {
    const plain = summary.slice(at, m.index);
    if (out.length + plain.length > room) return `${out}${startOf(plain, room - out.length)}…`;
    const escaped = lineEscape(m[0]);
    if (out.length + plain.length + escaped.length > room) return `${out}${plain}…`;
    out += plain + escaped;
    at = m.index + 1;
  }
  return `${out}${startOf(summary.slice(at), room - out.length)}…`;
}

/**
 * Renders `data` into `lines`. `facts`, given at the top level only, collects the indices of the
 * top-level `key: value` lines (`complete: false`, `omittedEntries: 3`...): a text cut to its
 * bound keeps them (see {@link fitLines}).
 */
function renderInto(
  lines: string[],
  data: Record<string, unknown>,
  indent: string,
  facts?: Set<number>,
): void {
  for (const [key, value] of Object.entries(data)) {
    if (isBlock(value)) {
      lines.push(`${indent}${keyText(key)}:`, ...fenced(value));
    } else if (Array.isArray(value)) {
      if (value.length === 0) lines.push(`${indent}${keyText(key)}: []`);
      else if (value.every((v) => !isPlainObject(v) && !Array.isArray(v) && !isBlock(v))) {
        lines.push(`${indent}${keyText(key)}: ${json(value)}`);
      } else {
        lines.push(`${indent}${keyText(key)} (${value.length}):`, ...listLines(value, indent));
      }
    } else if (isPlainObject(value)) {
      if (indent.length >= 4) lines.push(`${indent}${keyText(key)}: ${json(value)}`);
      else {
        lines.push(`${indent}${keyText(key)}:`);
        renderInto(lines, value, `${indent}  `);
      }
    } else {
      facts?.add(lines.length);
      lines.push(`${indent}${keyText(key)}: ${scalar(value, BARE)}`);
    }
  }
}

/**
 * What one entry of a top-level list takes in the text block on the wire: its lines inside the
 * text's JSON string, escapes and line breaks counted, every field written. A tool that keeps
 * the entries whose costs fit its bound knows the text holds them all, uncut. (The text says
 * what entries share once instead, on lines of their own before them, each only where it makes
 * the text shorter; the fields every entry shares, always: a few bytes either way, within the
 * room a tool keeps for its envelope. See render_list.ts.)
 */
export function entryWireBytes(entry: unknown): number {
  return entryLines(entry, "").reduce((n, line) => n + lineCost(line), 0);
}

/**
 * What one entry of a top-level list takes in a reply: as compact JSON in the structured
 * content (with its comma) and in the text block ({@link entryWireBytes}), whichever is more.
 * Entries whose costs fit one budget fit in both forms, and the text is never cut short of one.
 */
export function entryReplyBytes(entry: unknown): number {
  return Math.max(jsonBytes(entry) + 1, entryWireBytes(entry));
}

/**
 * The text block of a successful result: the summary, as one visible line (see
 * {@link summaryLine}), then the data. Every fact of
 * `data` is in it; a value is bare only when nothing could be misread (no spaces at its ends,
 * no quotes, no control characters, not a number or `true` that is really a string). The text
 * takes at most `maxWireBytes` as a JSON string on the wire (escapes counted: a `\xNN` in a
 * block costs five bytes there, where the structured content's `\b` costs two), so text and
 * structured content together stay within the reply's bound; see {@link fitLines} for a cut.
 */
export function renderReply(summary: string, data: unknown, maxWireBytes = Infinity): string {
  const first = summaryLine(summary);
  if (!isPlainObject(data)) return fitLines([first, json(data)], new Set(), maxWireBytes);
  const lines = [first];
  const facts = new Set<number>();
  renderInto(lines, data, "", facts);
  return fitLines(lines, facts, maxWireBytes);
}

/** Room kept for the cut's note. */
const NOTE_ROOM = 200;

/**
 * A top-level `key: value` line longer than this on the wire is data, not a fact about the
 * result (`complete: false`, `omittedEntries: 3`): a cut does not put it back (see
 * {@link fitLines}), so that it cannot carry the text past its bound.
 */
const MAX_FACT_BYTES = 200;

/** What a line costs on the wire inside the text's JSON string, with the `\n` after it. */
function lineCost(line: string): number {
  return jsonStringBytes(line) + 2;
}

/**
 * The longest start of a block's line that takes at most `budget` bytes in a JSON string: not
 * ending inside a surrogate pair, nor inside a `\xNN` escape or the run of backslashes before
 * one (see {@link printable}), so the kept part reads as the line's own start.
 */
function startWithin(line: string, budget: number): string {
  if (budget <= 0) return "";
  let lo = 0;
  let hi = line.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (jsonStringBytes(line.slice(0, mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  let end = lo;
  const unit = line.charCodeAt(end - 1);
  if (end > 0 && end < line.length && unit >= 0xd800 && unit <= 0xdbff) end--;
  const kept = line.slice(0, end);
  const run = /\\+(?:x[0-9a-f]?)?$/.exec(kept);
  return run && /^\\+x[0-9a-f]{2}/.test(line.slice(run.index)) ? kept.slice(0, run.index) : kept;
}

/**
 * `lines` joined, or, when that passes `max` bytes on the wire, cut: at a line, or, inside a
 * block, within the line that does not fit whole (a command's output on one line keeps its
 * start). A block open at the cut is closed with its own fence (so the note that follows cannot
 * be read as the block's text, and nothing a pane printed can pose as the note), then the note
 * says what was left out, then come the result's short top-level facts that fell after the cut
 * (whether it is complete, what it omitted), which a reader needs most. The structured content
 * holds everything.
 */
function fitLines(lines: readonly string[], allFacts: ReadonlySet<number>, max: number): string {
  const text = lines.join("\n");
  // A UTF-16 code unit takes at most six bytes inside a JSON string (`\u001f`).
  if (text.length * 6 + 2 <= max || jsonStringBytes(text) + 2 <= max) return text;
  const facts = new Set([...allFacts].filter((i) => lineCost(lines[i]) <= MAX_FACT_BYTES));
  let factsAfter = 0;
  for (const i of facts) factsAfter += lineCost(lines[i]);
  let used = 2; // the quotes
  let fence: string | null = null;
  let kept = 0;
  let partial = "";
  for (; kept < lines.length; kept++) {
    const line = lines[kept];
    let next: string | null = fence;
    if (fence === null && kept > 0 && /^`{3,}$/.test(line)) next = line;
    else if (fence !== null && line === fence) next = null;
    const cost = lineCost(line);
    const after = factsAfter - (facts.has(kept) ? cost : 0);
    const closing = next === null ? 0 : next.length + 2;
    const room = max - used - closing - NOTE_ROOM - after;
    if (cost > room) {
      // A line of a block (not its closing fence): its start, if any of it fits.
      if (fence !== null && next !== null) partial = startWithin(line, room - 2);
      break;
    }
    used += cost;
    fence = next;
    factsAfter = after;
  }
  const out = lines.slice(0, kept);
  if (partial !== "") out.push(partial);
  if (fence !== null) out.push(fence);
  const later = [...facts].filter((i) => i >= kept).sort((a, b) => a - b);
  // Neither the line kept in part nor the block's own closing fence (put back) is left out.
  const omitted = lines.length - kept - later.length - (partial === "" ? 0 : 1) -
    (fence === null ? 0 : 1);
  const shown = lines.slice(0, kept).join("\n").length +
    (partial === "" ? 0 : partial.length + 1) + (fence === null ? 0 : fence.length + 1);
  const chars = text.length - shown;
  out.push(
    `[text cut here: ${partial === "" ? "" : "the rest of that line and "}${omitted} more ` +
      `line${omitted === 1 ? "" : "s"} (${chars} characters) left out` +
      `${later.length ? "; the result's own facts follow" : ""}; structuredContent ` +
      "holds every field]",
  );
  for (const i of later) out.push(lines[i]);
  return out.join("\n");
}
