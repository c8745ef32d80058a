/**
 * The dialect of a client's regular expression (see pattern.ts): the JavaScript spellings a
 * model is likely to write, rewritten into RE2 syntax with the meaning they had when patterns
 * were JavaScript regular expressions in Unicode mode (`\s`, `.`, `\uXXXX` and `\u{X}`, `\cX`,
 * `[\b]`, `[]` and `[^]`); lookaround and backreferences, which need backtracking, refused
 * with a reason; and, in the same pass, the estimates compiling a pattern is judged by (its
 * program's size, the longest a match can be).
 *
 * @module
 */

import { ToolFailure } from "./errors.ts";

/** JavaScript's `\s` (WhiteSpace and LineTerminator) as class ranges; RE2's is ASCII only. */
const SPACE_RANGES: readonly [number, number][] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];

const hex = (cp: number) => `\\x{${cp.toString(16)}}`;
const rangeText = (ranges: readonly [number, number][]) =>
  ranges.map(([lo, hi]) => lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`).join("");

function complement(ranges: readonly [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

const SPACE = rangeText(SPACE_RANGES);
const NOT_SPACE = rangeText(complement(SPACE_RANGES));
/** JavaScript's `.` without the `s` flag: anything but a line terminator. */
const DOT = `[^${hex(0x0a)}${hex(0x0d)}${hex(0x2028)}${hex(0x2029)}]`;
const NOTHING = `[^${hex(0)}-${hex(0x10ffff)}]`;
/** Any code point at all (JavaScript's `[^]`): what a pattern is wrapped in (pattern.ts). */
export const ANYTHING = `[${hex(0)}-${hex(0x10ffff)}]`;

/** A client's pattern in RE2 syntax, with what compiling it is judged by. */
export interface Translated {
  /** The pattern in RE2 syntax. */
  readonly text: string;
  /** About how many instructions it compiles to (counted repeats multiply). */
  readonly size: number;
  /**
   * The longest a match can be, in UTF-16 units (Infinity after `*`, `+` and `{n,}`), or more:
   * two for anything that matches a character (it may be a pair, case folded or not), and as
   * much for anything else read as an atom (an anchor, a flag), so never less than the truth.
   */
  readonly width: number;
  /** Whether a flag group turns on `s`: then `.` is RE2's own. */
  readonly dotAll: boolean;
}

interface Piece {
  readonly text: string;
  readonly end: number;
}

/** A part of the pattern in parentheses, for the size and width estimates. */
interface Frame {
  total: number;
  last: number;
  /** Width of the alternative being read, of its last atom, and of the widest one read. */
  width: number;
  lastWidth: number;
  widest: number;
}

const frame = (): Frame => ({ total: 0, last: 0, width: 0, lastWidth: 0, widest: 0 });

/**
 * Rewrites the JavaScript spellings RE2 reads differently (see the module), refuses what RE2
 * cannot do, and estimates the program's size, in one pass that knows escapes, classes and
 * `\Q...\E`. Everything else is RE2's to judge.
 */
export function translate(source: string, what: string, keepDots: boolean): Translated {
  let text = "";
  let dotAll = false;
  const frames: Frame[] = [frame()];
  let top = frames[0];
  const atom = (size: number, width = 2) => {
    top.total += size;
    top.last = size;
    top.width += width;
    top.lastWidth = width;
  };
  const widthOf = (f: Frame) => Math.max(f.widest, f.width);
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === "\\") {
      if (source[i + 1] === "Q") {
        const close = source.indexOf("\\E", i + 2);
        const end = close === -1 ? source.length : close + 2;
        // Closed when it runs to the end, so that the pattern can be wrapped (lastEnd).
        text += source.slice(i, end) + (close === -1 ? "\\E" : "");
        atom(end - i, 2 * (end - i));
        i = end;
        continue;
      }
      const piece = escape(source, i, false, what);
      text += piece.text;
      atom(1);
      i = piece.end;
    } else if (c === "[") {
      const piece = charClass(source, i, what);
      text += piece.text;
      atom(1);
      i = piece.end;
    } else if (c === ".") {
      text += keepDots ? "." : DOT;
      atom(1);
      i++;
    } else if (c === "(") {
      if (source.startsWith("(?=", i) || source.startsWith("(?!", i)) {
        throw unsupported(what, "a lookahead, (?=...) or (?!...)", "foo(?=bar) → foobar");
      }
      if (source.startsWith("(?<=", i) || source.startsWith("(?<!", i)) {
        throw unsupported(what, "a lookbehind, (?<=...) or (?<!...)", "(?<=foo)bar → foobar");
      }
      const flags = /^\(\?([a-zA-Z]*)(?:-[a-zA-Z]*)?[:)]/.exec(source.slice(i, i + 16));
      if (flags?.[1].includes("s")) dotAll = true;
      top = frame();
      frames.push(top);
      text += c;
      i++;
    } else if (c === ")") {
      if (frames.length > 1) {
        const inner = frames.pop() as Frame;
        top = frames[frames.length - 1];
        atom(inner.total + 1, widthOf(inner));
      }
      text += c;
      i++;
    } else if (c === "|") {
      top.total += 1;
      top.last = 0;
      top.widest = widthOf(top);
      top.width = 0;
      top.lastWidth = 0;
      text += c;
      i++;
    } else if (c === "*" || c === "+" || c === "?") {
      top.total += 1;
      top.last += 1;
      // `?` makes nothing longer (alone, or after another repeat, where it makes it lazy).
      if (c !== "?" && top.lastWidth > 0) {
        top.width = Infinity;
        top.lastWidth = Infinity;
      }
      text += c;
      i++;
    } else if (c === "{" && /^\{\d+(?:,\d*)?\}/.test(source.slice(i, i + 24))) {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i, i + 24)) as RegExpExecArray;
      const low = Number(m[1]);
      const high = m[2] === undefined ? low : m[2] === "" ? low + 1 : Number(m[2]);
      const times = Math.max(low, high, 1);
      // Past 1000 RE2 refuses the count itself, with its own message.
      if (times <= 1000) {
        top.total += top.last * (times - 1) + times;
        top.last *= times;
      }
      // At most `most` times (`{0}` is left as once: never less than the truth).
      const most = m[2] === "" ? Infinity : Math.max(low, high);
      if (top.lastWidth > 0 && most > 1) {
        top.width += top.lastWidth * (most - 1);
        top.lastWidth *= most;
      }
      text += m[0];
      i += m[0].length;
    } else {
      const ch = String.fromCodePoint(source.codePointAt(i) as number);
      text += ch;
      atom(1);
      i += ch.length;
    }
  }
  while (frames.length > 1) {
    const inner = frames.pop() as Frame;
    frames[frames.length - 1].total += inner.total;
    frames[frames.length - 1].width += widthOf(inner);
  }
  return { text, size: frames[0].total, width: widthOf(frames[0]), dotAll };
}

/** One escape at `i` (a backslash), inside a class or not. */
function escape(source: string, i: number, inClass: boolean, what: string): Piece {
  const c = source[i + 1];
  if (c === undefined) return { text: "\\", end: i + 1 };
  switch (c) {
    case "s":
      return { text: inClass ? SPACE : `[${SPACE}]`, end: i + 2 };
    case "S":
      return { text: inClass ? NOT_SPACE : `[^${SPACE}]`, end: i + 2 };
    case "b":
      return { text: inClass ? hex(8) : "\\b", end: i + 2 };
    case "c":
      if (/^[A-Za-z]$/.test(source[i + 2] ?? "")) {
        return { text: hex(source.charCodeAt(i + 2) % 32), end: i + 3 };
      }
      break;
    case "u": {
      const braced = /^\{([0-9A-Fa-f]+)\}/.exec(source.slice(i + 2, i + 12));
      if (braced) return { text: `\\x{${braced[1]}}`, end: i + 2 + braced[0].length };
      const unit = /^[0-9A-Fa-f]{4}/.exec(source.slice(i + 2, i + 6));
      if (unit) {
        const high = parseInt(unit[0], 16);
        const low = /^\\u([0-9A-Fa-f]{4})/.exec(source.slice(i + 6, i + 12));
        const lowUnit = low ? parseInt(low[1], 16) : -1;
        if (high >= 0xd800 && high <= 0xdbff && lowUnit >= 0xdc00 && lowUnit <= 0xdfff) {
          return { text: hex((high - 0xd800) * 0x400 + lowUnit - 0xdc00 + 0x10000), end: i + 12 };
        }
        return { text: hex(high), end: i + 6 };
      }
      break;
    }
    case "k":
      if (!inClass && source[i + 2] === "<") {
        throw unsupported(what, "a backreference, \\k<name>", "(?<q>ab)\\k<q> → abab");
      }
      break;
    case "p":
    case "P":
    case "x":
      if (source[i + 2] === "{") {
        const close = source.indexOf("}", i + 3);
        const end = close === -1 ? source.length : close + 1;
        return { text: source.slice(i, end), end };
      }
      break;
    default:
      if (!inClass && c >= "1" && c <= "9") {
        throw unsupported(what, `a backreference, \\${c}`, "(ab)\\1 → abab");
      }
  }
  const ch = String.fromCodePoint(source.codePointAt(i + 1) as number);
  return { text: `\\${ch}`, end: i + 1 + ch.length };
}

/** A class at `i` (a `[`), up to and with its `]`. */
function charClass(source: string, i: number, what: string): Piece {
  let j = i + 1;
  let text = "[";
  const negated = source[j] === "^";
  if (negated) {
    text += "^";
    j++;
  }
  // In JavaScript `]` right away ends the class: `[]` matches nothing, `[^]` anything.
  if (source[j] === "]") return { text: negated ? ANYTHING : NOTHING, end: j + 1 };
  while (j < source.length && source[j] !== "]") {
    if (source[j] === "\\") {
      const piece = escape(source, j, true, what);
      text += piece.text;
      j = piece.end;
      continue;
    }
    if (source.startsWith("[:", j)) {
      const close = source.indexOf(":]", j + 2);
      if (close !== -1 && /^\^?[a-z]+$/.test(source.slice(j + 2, close))) {
        text += source.slice(j, close + 2);
        j = close + 2;
        continue;
      }
    }
    const ch = String.fromCodePoint(source.codePointAt(j) as number);
    text += ch;
    j += ch.length;
  }
  if (j < source.length) {
    text += "]";
    j++;
  }
  return { text, end: j };
}

function unsupported(what: string, feature: string, example: string): ToolFailure {
  return new ToolFailure(
    `${what} uses ${feature}, which RE2 syntax does not have (it matches in linear time, and ` +
      "these need backtracking).",
    `Match the text itself instead (${example}), or pass regex: false to match it literally.`,
  );
}
