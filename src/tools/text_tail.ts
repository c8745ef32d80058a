/**
 * Keeping a tool's text within its share of a result on the wire: the end of a pane's output
 * (`keepTail`, counted as JSON escapes it, once or twice) and a list of lines (`boundLines`).
 * Shared by the waits, `run_command` and the jobs.
 *
 * @module
 */

import { byteLength, cutString, escapedOnWire, jsonStringBytes } from "../mcp/bounds.ts";

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
  // C1 controls, line separators and bidi controls go on the wire escaped (bounds.ts wireJson),
  // once: the JSON inside holds them as they are.
  if (escapedOnWire(c)) return 6;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdfff) return twice ? 7 : 6; // a lone surrogate, escaped
  return 3;
}

/** At most `max` lines, each cut to `maxBytes`. */
export function boundLines(
  lines: readonly string[],
  max: number,
  maxBytes: number,
): { lines: string[]; omittedLines: number; omittedLineBytes: number } {
  let omittedLineBytes = 0;
  const kept = lines.slice(0, max).map((l) => {
    const cut = cutString(l, maxBytes);
    omittedLineBytes += cut.omittedBytes;
    return cut.text;
  });
  return { lines: kept, omittedLines: Math.max(0, lines.length - max), omittedLineBytes };
}
