/**
 * A tool's data as a model reads it best: the text block of every successful result.
 *
 * `structuredContent` is JSON for programs; the text block carries the same facts for a
 * model, at about half the tokens: `key: value` lines, one line per list entry as
 * `field=value` pairs (the fields every entry of a list shares written once, before them), and
 * long texts (a capture, a command's output) as they are, inside a
 * fence. Nothing a pane produces can pose as the reply's own structure: a value that holds a
 * line break, a control character, quotes or leading spaces is written as a JSON string, and
 * a fence is longer than any run of backticks inside it.
 *
 * @module
 */

import { jsonBytes, jsonStringBytes, MAX_METADATA_BYTES } from "./bounds.ts";

/**
 * What no text a reader gets holds as it is, beyond the C0 and C1 controls: U+2028 and U+2029,
 * which some readers take as line breaks, and the bidirectional controls, which make text read
 * in another order than it is (a name ending `\u202etxt.exe` shows as `exe.txt`). As the
 * inside of a character class.
 */
const SEPARATORS_AND_BIDI = String.raw`\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069`;

/** The C0 controls, DEL and the C1 controls, as the inside of a character class. */
const CONTROLS = String.raw`\u0000-\u001f\u007f-\u009f`;

/** Never in a bare value: a quote, a backslash, a control, a line separator, a bidi control. */
const NEVER_BARE = String.raw`"\\` + CONTROLS + SEPARATORS_AND_BIDI;

/**
 * A value written bare on a `key: value` line: no spaces at its ends, no quote, backslash,
 * control character, line separator or bidirectional control anywhere (anything else is a
 * JSON string).
 */
const BARE = new RegExp(String.raw`^[^\s${NEVER_BARE}](?:[^${NEVER_BARE}]*[^\s${NEVER_BARE}])?$`);

/** A value inside an entry line also may not hold spaces or `=` (they separate fields). */
const BARE_FIELD = new RegExp(String.raw`^[^\s=${NEVER_BARE}]+$`);

/** Words a bare string could be mistaken for: a number, true/false/null, inline JSON. */
const AMBIGUOUS = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)$|^[[{]/i;

/**
 * What JSON leaves raw but a reader may not take as it is: C1 controls, which some terminals
 * obey (U+0085 among them, a line break to some readers), and SEPARATORS_AND_BIDI.
 */
const JSON_LEAVES_RAW = new RegExp(String.raw`[\u0080-\u009f${SEPARATORS_AND_BIDI}]`, "g");

/** One of SEPARATORS_AND_BIDI. */
const SEPARATOR_OR_BIDI = new RegExp(`[${SEPARATORS_AND_BIDI}]`, "g");

/** A character as a JSON escape: `\uXXXX`. */
function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * `text` with U+2028, U+2029 and the bidirectional controls shown as JSON writes them
 * (`\u2028`), as summaries and values show them: for a text that shows the C0 and C1 controls
 * its own way (an error text, see errors.ts) but must not break a line or read out of order.
 */
export function escapeSeparatorsAndBidi(text: string): string {
  return text.replace(SEPARATOR_OR_BIDI, unicodeEscape);
}

/** JSON, with the characters JSON leaves raw but a reader may not (see JSON_LEAVES_RAW) escaped. */
function json(value: unknown): string {
  return (JSON.stringify(value) ?? "null").replace(JSON_LEAVES_RAW, unicodeEscape);
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
export function summaryLine(summary: string, max = Infinity): string {
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

function scalar(value: unknown, pattern: RegExp): string {
  if (typeof value === "string") {
    return value !== "" && pattern.test(value) && !AMBIGUOUS.test(value) ? value : json(value);
  }
  if (value === null || typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  return json(value);
}

/** A key as written: bare when it is a plain name, else a JSON string. */
function keyText(key: string): string {
  return /^[A-Za-z_][\w.-]*$/.test(key) ? key : json(key);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A one-line string longer than this is a block too: longer than any name, title or path (see
 * {@link MAX_METADATA_BYTES}), so only texts (a command's output on one line, a buffer or an
 * option value of minified JSON) are. As a block it costs half of what a JSON string does on
 * the wire (a quote is `\"` there, not `\\\"`), and a cut can keep its start (see
 * {@link fitLines}).
 */
const BLOCK_FROM_CHARS = MAX_METADATA_BYTES;

/** A string long or multi-line enough to be shown as a block rather than a value. */
function isBlock(value: unknown): value is string {
  return typeof value === "string" &&
    (value.length > BLOCK_FROM_CHARS || value.includes("\n"));
}

/** The text between fences: every line as it is; a fence longer than any backtick run in it. */
function fenced(text: string): string[] {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [fence, ...text.split("\n").map(printable), fence];
}

/** The characters a block shows as `\xNN`: controls other than tab, C1 ones too. */
// deno-lint-ignore no-control-regex
const ESCAPED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** What reads as an escape after a run of backslashes: `xNN`, or a character to escape. */
// deno-lint-ignore no-control-regex
const ESCAPE_AHEAD = /^(?:x[0-9a-f]{2}|[\u0000-\u0008\u000b-\u001f\u007f-\u009f])/;

/**
 * Control characters (other than tab; C1 ones too) shown as `\xNN`, so no line of a block can
 * drive a terminal or hide what follows it; everything else stays as the pane showed it. So
 * that a pane that printed the four characters `\x07` cannot pass for one that rang the bell,
 * a run of backslashes before `xNN` (lowercase hex, as the escapes are; or before a character
 * shown so) is doubled: 2k+1 backslashes then `xNN` read as k backslashes and the character
 * NN; 2k of them, as k backslashes and the text `xNN`. Every other backslash (`C:\path`, `\n`
 * in code, `\xFF` in capitals) stays single.
 */
function printable(line: string): string {
  // Each run matched once, then what follows it looked at: a lookahead in the pattern would
  // retry the run from each of its backslashes, quadratic in its length.
  return line.replace(
    /\\+/g,
    (run, at: number) =>
      ESCAPE_AHEAD.test(line.slice(at + run.length, at + run.length + 3)) ? run + run : run,
  ).replace(
    ESCAPED,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

/** Fields as `field=value` pairs; nested values as inline JSON. */
function fieldPairs(entry: Record<string, unknown>, skip?: ReadonlySet<string>): string {
  const fields: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (skip?.has(key)) continue;
    fields.push(
      `${keyText(key)}=${
        Array.isArray(value) || isPlainObject(value) ? json(value) : scalar(value, BARE_FIELD)
      }`,
    );
  }
  return fields.join(" ");
}

/** One list entry as `field=value` pairs, without the fields every entry shares. */
function entryLine(entry: unknown, shared?: ReadonlySet<string>): string {
  if (!isPlainObject(entry)) return `- ${scalar(entry, BARE_FIELD)}`;
  const pairs = fieldPairs(entry, shared);
  return pairs === "" ? "- {}" : `- ${pairs}`;
}

/** Lists shorter than this are written entry by entry, every field on every line. */
const SHARED_FROM = 3;

/**
 * The scalar fields every entry of a list holds with the same value (the flags that say a
 * pane's metadata is complete, `dead=false`...): written once, on a `* every entry:` line
 * before the entries, instead of on each of them. Nested values and texts stay per entry.
 */
function sharedFields(entries: readonly unknown[]): Record<string, unknown> {
  if (entries.length < SHARED_FROM || !entries.every(isPlainObject)) return {};
  const [first, ...rest] = entries as Record<string, unknown>[];
  const shared: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(first)) {
    if (value !== null && typeof value === "object" || isBlock(value)) continue;
    if (rest.every((e) => Object.hasOwn(e, key) && e[key] === value)) shared[key] = value;
  }
  return shared;
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
        lines.push(`${indent}${keyText(key)} (${value.length}):`);
        const shared = sharedFields(value);
        const sharedKeys = new Set(Object.keys(shared));
        if (sharedKeys.size) lines.push(`${indent}* every entry: ${fieldPairs(shared)}`);
        for (const entry of value) lines.push(...entryLines(entry, indent, sharedKeys));
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

/** One list entry's lines: its fields but the shared ones, then its long texts as blocks. */
function entryLines(entry: unknown, indent: string, shared?: ReadonlySet<string>): string[] {
  if (!isPlainObject(entry) || !Object.values(entry).some(isBlock)) {
    return [`${indent}${entryLine(entry, shared)}`];
  }
  // An entry with a long text (a batch row's output or error): fields, then the block.
  const { blocks, rest } = splitBlocks(entry);
  const lines = [`${indent}${entryLine(rest, shared)}`];
  for (const [k, v] of blocks) lines.push(`${indent}  ${keyText(k)}:`, ...fenced(v));
  return lines;
}

/**
 * What one entry of a top-level list takes in the text block on the wire: its lines inside the
 * text's JSON string, escapes and line breaks counted, every field written. A tool that keeps
 * the entries whose costs fit its bound knows the text holds them all, uncut. (The text writes
 * the fields every entry shares once instead, on a line of their own: a few bytes either way,
 * within the room a tool keeps for its envelope.)
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

function splitBlocks(
  entry: Record<string, unknown>,
): { blocks: [string, string][]; rest: Record<string, unknown> } {
  const blocks: [string, string][] = [];
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry)) {
    if (isBlock(v)) blocks.push([k, v]);
    else rest[k] = v;
  }
  return { blocks, rest };
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
