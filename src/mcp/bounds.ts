/**
 * Bounds on everything a tool returns, and honest reports of what was left out.
 *
 * A list keeps its leading entries that fit the byte budget and says how many it omitted; an
 * overlong string is cut on a character boundary and the bytes cut are counted. Nothing is
 * ever cut silently.
 *
 * @module
 */

/**
 * Default bound on a result's structured JSON. The text block carries the same facts (see
 * render.ts), so a whole reply on the wire stays within {@link replyBound} (about 96 000 bytes)
 * and its text within {@link textBound} (49 001 bytes as a JSON string on the wire, escapes
 * counted, so as many characters at most): under the 50 000 characters
 * Claude Code shows a model inline (it saves larger results to a file) and its 25 000-token
 * limit, whatever the arguments.
 */
export const MAX_RESULT_BYTES = 46_000;

/** Room the text block may take beyond its data: the summary line and the rendering's frames. */
export const TEXT_OVERHEAD_CHARS = 3_001;

/** The most characters a result's text holds when its data fills `maxResultBytes`. */
export function textBound(maxResultBytes: number = MAX_RESULT_BYTES): number {
  return maxResultBytes + TEXT_OVERHEAD_CHARS;
}

/** The most bytes a whole reply (text block plus structured content as JSON) takes. */
export function replyBound(maxResultBytes: number = MAX_RESULT_BYTES): number {
  return 2 * maxResultBytes + TEXT_OVERHEAD_CHARS + 1_000;
}

/**
 * Longest name, title, path or command kept in a metadata field, in bytes of JSON (escapes
 * counted: a quote or backslash takes two bytes there, a control character six), as the bound on
 * a reply counts it.
 */
export const MAX_METADATA_BYTES = 2_048;

const encoder = new TextEncoder();
// deno-lint-ignore no-control-regex
const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * UTF-8 length of a string, as TextEncoder would encode it (a lone surrogate becomes U+FFFD,
 * 3 bytes), counted without building the bytes.
 */
export function byteLength(text: string): number {
  // ASCII up to the first other character (all of it, mostly: JSON of ids and numbers) is
  // one byte each, found by the regex engine rather than a loop over every character.
  const first = text.search(NOT_ASCII);
  if (first === -1) return text.length;
  let n = first;
  for (let i = first; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/**
 * The format and default-ignorable characters of the BMP that {@link SEPARATORS_AND_BIDI} does
 * not name already: each shows as nothing or as a blank (a zero-width space or non-joiner, a
 * soft hyphen, a BOM, an invisible operator, a Hangul filler, a variation selector), so a name
 * ending in one reads as the name without it, and `vm\u3164isAttended` as two words. All but
 * the zero-width joiner (U+200D) and the presentation selectors (U+FE0E, U+FE0F), which spell
 * emoji (👩‍💻, ❤️) and hide nothing there: render_value.ts escapes them in a value where they
 * join or select nothing, and the characters past U+FFFF (tag characters, which spell text a
 * reader does not see) everywhere, as a character class without the `u` flag cannot.
 */
const INVISIBLE_BMP = String
  .raw`\u00ad\u034f\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f` +
  String.raw`\u200b\u200c\u2060-\u2065\u206a-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb`;

/**
 * What no text a reader gets holds as it is, beyond the C0 and C1 controls: U+2028 and U+2029,
 * which some readers take as line breaks, the bidirectional controls, which make text read
 * in another order than it is (a name ending `\u202etxt.exe` shows as `exe.txt`), and the
 * characters that show as nothing ({@link INVISIBLE_BMP}). As the inside of a character class
 * (one UTF-16 unit each: no `u` flag needed).
 */
export const SEPARATORS_AND_BIDI = String
  .raw`\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069` + INVISIBLE_BMP;

/**
 * What JSON leaves raw but a reader may not take as it is: C1 controls, which some terminals
 * obey (U+0085 among them, a line break to some readers: Python's `splitlines` splits a line
 * of JSON at it, and at U+2028), and SEPARATORS_AND_BIDI. Characters of one UTF-16 unit only,
 * so that what a text takes on the wire can be counted unit by unit ({@link escapedOnWire}).
 */
const JSON_LEAVES_RAW = new RegExp(String.raw`[\u0080-\u009f${SEPARATORS_AND_BIDI}]`, "g");
const LEFT_RAW = new RegExp(JSON_LEAVES_RAW.source);

/** Whether the UTF-16 unit `c` is one {@link wireJson} escapes though JSON leaves it raw. */
export function escapedOnWire(c: number): boolean {
  return c >= 0x80 && LEFT_RAW.test(String.fromCharCode(c));
}

/** A character as a JSON escape: `\uXXXX`. */
export function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * JSON, with the characters JSON leaves raw but a reader may not (see JSON_LEAVES_RAW) escaped:
 * every message goes on the wire so (stdio.ts), and the same value parses from it.
 */
export function wireJson(value: unknown): string {
  return (JSON.stringify(value) ?? "null").replace(JSON_LEAVES_RAW, unicodeEscape);
}

/** Size of a value as compact JSON on the wire ({@link wireJson}), in UTF-8 bytes. */
export function jsonBytes(value: unknown): number {
  return byteLength(wireJson(value));
}

/** A string cut to at most `maxBytes` UTF-8 bytes on a character boundary, and what was cut. */
export function cutString(text: string, maxBytes: number): { text: string; omittedBytes: number } {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most strings need no encoding to know.
  if (text.length * 3 <= maxBytes) return { text, omittedBytes: 0 };
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return { text, omittedBytes: 0 };
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return {
    text: new TextDecoder().decode(bytes.subarray(0, end)),
    omittedBytes: bytes.length - end,
  };
}

/** The first `units` UTF-16 code units of `text`, one fewer where that would split a surrogate pair. */
export function startUnits(text: string, units: number): string {
  if (units >= text.length) return text;
  if (units <= 0) return "";
  const last = text.charCodeAt(units - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? units - 1 : units);
}

/**
 * The largest `n` from `least` to `most` for which `fits(n)` holds, `least` when none above it
 * does: for a cut whose cost grows with what it keeps (`fits` true up to some `n`, then false),
 * found in a logarithmic number of measurements.
 */
export function mostThatFits(least: number, most: number, fits: (n: number) => boolean): number {
  let lo = least;
  let hi = most;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * `text` cut so that it takes at most `maxJsonBytes` inside a JSON string (escapes counted: a
 * quote takes two bytes there, a control character up to six), on a code point boundary;
 * `omittedBytes` counts the UTF-8 bytes cut, as {@link cutString} does.
 */
export function cutJsonString(
  text: string,
  maxJsonBytes: number,
): { text: string; omittedBytes: number } {
  if (text.length * 6 <= maxJsonBytes || jsonStringBytes(text) <= maxJsonBytes) {
    return { text, omittedBytes: 0 };
  }
  // Measured at code point boundaries: half a pair alone is escaped (six bytes), more than the
  // whole pair (four), and a search over a measure that shrinks as it grows misses the end.
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (jsonStringBytes(text.slice(0, codePointEnd(text, mid))) <= maxJsonBytes) lo = mid;
    else hi = mid - 1;
  }
  const kept = text.slice(0, codePointEnd(text, lo));
  return { text: kept, omittedBytes: byteLength(text) - byteLength(kept) };
}

/**
 * `end`, or one before it when a surrogate pair begins there: where a start of `text` of about
 * `end` UTF-16 units can end without splitting a character.
 */
export function codePointEnd(text: string, end: number): number {
  const unit = text.charCodeAt(end - 1);
  const after = text.charCodeAt(end);
  return end > 0 && unit >= 0xd800 && unit <= 0xdbff && after >= 0xdc00 && after <= 0xdfff
    ? end - 1
    : end;
}

/**
 * Cuts every listed string field of an object to `maxBytes` ({@link MAX_METADATA_BYTES}) of
 * JSON, escapes counted ({@link cutJsonString}: a field of control characters cut to as many
 * UTF-8 bytes would take six times that in the reply), and reports the total:
 * `metadataComplete` and `omittedMetadataBytes` (UTF-8 bytes cut), as the seed contracts name
 * them.
 */
export function boundMetadata<T extends Record<string, unknown>, K extends keyof T & string>(
  value: T,
  keys: readonly K[],
  maxBytes = MAX_METADATA_BYTES,
): T & { metadataComplete: boolean; omittedMetadataBytes: number } {
  const out: Record<string, unknown> = { ...value };
  let omitted = 0;
  for (const key of keys) {
    const field = value[key];
    if (typeof field !== "string") continue;
    const cut = cutJsonString(field, maxBytes);
    out[key] = cut.text;
    omitted += cut.omittedBytes;
  }
  return { ...(out as T), metadataComplete: omitted === 0, omittedMetadataBytes: omitted };
}

/** The same value with `omitted` more metadata bytes counted (cut from a nested field). */
export function withOmittedMetadata<T extends { omittedMetadataBytes: number }>(
  value: T,
  omitted: number,
): T & { metadataComplete: boolean } {
  const total = value.omittedMetadataBytes + omitted;
  return { ...value, metadataComplete: total === 0, omittedMetadataBytes: total };
}

/** Placements (sessions a window or pane is in) kept at most, in count and in bytes. */
export const MAX_PLACEMENTS = 32;
export const MAX_PLACEMENTS_BYTES = 8_192;

/**
 * A window's or pane's placements, each session name cut to {@link MAX_METADATA_BYTES} of JSON,
 * the leading ones that fit `maxCount` ({@link MAX_PLACEMENTS}) and `maxBytes` kept: how many
 * went (`omittedPlacements`) and the bytes cut from the kept names (`omittedMetadataBytes`, to
 * add to the entry's own).
 */
export function fitPlacements<T extends { sessionName: string }>(
  placements: readonly T[],
  maxBytes: number = MAX_PLACEMENTS_BYTES,
  maxCount: number = MAX_PLACEMENTS,
): { placements: T[]; omittedPlacements: number; omittedMetadataBytes: number } {
  const cut = capList(placements, maxCount).kept.map((p) => {
    const name = cutJsonString(p.sessionName, MAX_METADATA_BYTES);
    return { placement: { ...p, sessionName: name.text }, omitted: name.omittedBytes };
  });
  const { kept } = fitEntries(cut.map((c) => c.placement), maxBytes);
  return {
    placements: kept,
    omittedPlacements: placements.length - kept.length,
    omittedMetadataBytes: cut.slice(0, kept.length).reduce((n, c) => n + c.omitted, 0),
  };
}

/** What was left out of a window's or pane's placements, for its summary. */
export function placementsNote(omitted: number): string {
  return omitted > 0
    ? ` ${omitted} placement${omitted === 1 ? "" : "s"} left out to stay within the result bound.`
    : "";
}

/**
 * Keeps the leading entries whose JSON fits in `maxBytes` (the rest of the result needs some
 * room too: pass what is left for the list). Returns the kept entries and how many went.
 */
export function fitEntries<T>(entries: readonly T[], maxBytes: number): {
  kept: T[];
  omitted: number;
} {
  let used = 2; // the brackets
  let count = 0;
  for (const entry of entries) {
    const size = jsonBytes(entry) + (count > 0 ? 1 : 0);
    if (used + size > maxBytes) break;
    used += size;
    count++;
  }
  return { kept: entries.slice(0, count), omitted: entries.length - count };
}

/** Keeps the first `max` items and counts the rest. */
export function capList<T>(items: readonly T[], max: number): { kept: T[]; omitted: number } {
  return { kept: items.slice(0, max), omitted: Math.max(0, items.length - max) };
}

/** UTF-8 bytes a string takes inside a JSON string literal (escapes counted, quotes not). */
export function jsonStringBytes(text: string): number {
  return byteLength(wireJson(text)) - 2;
}

/** What {@link tailLines} kept of a list of lines. */
export interface TailCut {
  /** The kept lines joined with `\n` (no final newline). */
  readonly text: string;
  /** How many lines `text` holds (a line cut at its head counts). */
  readonly returnedLines: number;
  /** Leading lines left out entirely. */
  readonly droppedLines: number;
  /** Whether the first returned line lost its head to the byte bound. */
  readonly firstLineCut: boolean;
  /** UTF-8 bytes of `text`. */
  readonly returnedBytes: number;
  /** UTF-8 bytes of the full text (lines joined with `\n`) not in `text`. */
  readonly omittedBytes: number;
}

/** Lines of a text before the ones given, counted but never read (see {@link tailLines}). */
export interface LinesBefore {
  /** How many. */
  readonly lines: number;
  /** Their UTF-8 bytes, each with the newline after it. */
  readonly bytes: number;
}

/**
 * Keeps the last lines of a text — a command's verdict is at the end — within `maxLines`
 * lines and `maxJsonBytes` bytes of JSON string (escapes counted), and says exactly what it
 * left out: `returnedBytes + omittedBytes` is always the size of the whole text. When not even
 * the last line fits, its tail is kept, cut on a code point boundary. `before` are lines of the
 * text ahead of `lines` that the caller only counted (a reader that fetched just the last
 * lines): they are left out, and counted in what was left out.
 */
export function tailLines(
  lines: readonly string[],
  maxLines: number,
  maxJsonBytes: number,
  before: LinesBefore = { lines: 0, bytes: 0 },
): TailCut {
  const budget = Math.max(0, maxJsonBytes - 2); // the quotes
  let used = 0;
  let first = lines.length;
  while (first > 0 && lines.length - first < maxLines) {
    const cost = jsonStringBytes(lines[first - 1]) + (first < lines.length ? 2 : 0);
    if (used + cost > budget) break;
    used += cost;
    first--;
  }
  let kept = lines.slice(first);
  let firstLineCut = false;
  if (kept.length === 0 && lines.length > 0 && maxLines > 0) {
    kept = [tailWithin(lines[lines.length - 1], budget)];
    first = lines.length - 1;
    firstLineCut = true;
  }
  const text = kept.join("\n");
  const returnedBytes = byteLength(text);
  const totalBytes = lines.reduce((n, line) => n + byteLength(line), 0) +
    Math.max(0, lines.length - 1);
  // Each counted line brought its newline; with no line after them, the last one's is no part
  // of the text.
  const beforeBytes = lines.length > 0 ? before.bytes : Math.max(0, before.bytes - 1);
  return {
    text,
    returnedLines: kept.length,
    droppedLines: before.lines + first,
    firstLineCut,
    returnedBytes,
    omittedBytes: beforeBytes + totalBytes - returnedBytes,
  };
}

/** The longest tail of `text` whose JSON string form fits in `budget` bytes. */
function tailWithin(text: string, budget: number): string {
  let used = 0;
  let start = text.length;
  while (start > 0) {
    let from = start - 1;
    const unit = text.charCodeAt(from);
    if (unit >= 0xdc00 && unit <= 0xdfff && from > 0) {
      const high = text.charCodeAt(from - 1);
      if (high >= 0xd800 && high <= 0xdbff) from--;
    }
    const cost = jsonStringBytes(text.slice(from, start));
    if (used + cost > budget) break;
    used += cost;
    start = from;
  }
  return text.slice(start);
}

/** Longest completion value offered: a longer name is left to the listing tools. */
const MAX_COMPLETION_BYTES = 1_024;
/** What the completion values of one answer take at most, as JSON. */
const COMPLETIONS_BYTES = 16_384;

/**
 * Completion values as a client is offered them: whole (a value cut short would complete to
 * something that does not exist, so an overlong one is left out), at most 100 (the protocol's
 * bound), within {@link COMPLETIONS_BYTES}.
 */
export function boundCompletions(values: readonly string[]): string[] {
  const whole = values.filter((v) => byteLength(v) <= MAX_COMPLETION_BYTES).slice(0, 100);
  return fitEntries(whole, COMPLETIONS_BYTES).kept;
}
