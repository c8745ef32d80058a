/**
 * `default-size` as tmux 3.3a takes it: which values set-option accepts, and the size of the
 * window it makes from one. Neither is the plain `WIDTHxHEIGHT` it looks like: set-option checks
 * the value only against the pattern `[0-9]*x[0-9]*` (fnmatch, where `*` is any text), and
 * new-session and a new window read it with `sscanf("%ux%u")`, which takes leading zeros, a
 * sign, and ignores whatever follows; tmux then holds each side to 1..10000. So
 * `010000x010000` and `10000x10000 ` are both a 10000x10000 window, and a check that reads only
 * `^\d+x\d+$` lets them past the cell cap (window_cells.ts).
 *
 * @module
 */

import { WINDOW_MAXIMUM_SIDE, type WindowSize } from "../tmux/window_cells.ts";

/**
 * Whether tmux 3.3a's set-option takes `value` for default-size: fnmatch of the options
 * table's pattern `[0-9]*x[0-9]*` (flags 0), that is a digit first, then anywhere after it an
 * `x` followed by a digit, then anything.
 */
export function defaultSizeTaken(value: string): boolean {
  return /^[0-9][\s\S]*x[0-9]/.test(value);
}

/** The size tmux takes when default-size reads as no size (sscanf found fewer than two). */
const FALLBACK: WindowSize = { width: 80, height: 24 };

/** C's isspace in the C locale: what a `%u` conversion skips first. */
const C_SPACE = /^[ \t\n\v\f\r]*/;

const ULONG_MAX = (1n << 64n) - 1n;

/**
 * One `%u` conversion of glibc's sscanf at the start of `text`: whitespace skipped, an
 * optional sign, then decimal digits, converted as strtoul does (past ULONG_MAX it gives
 * ULONG_MAX; a minus negates modulo 2^64) and stored in an unsigned int (the low 32 bits).
 * Null when no digit follows (a matching failure); else the number and the text after it.
 */
function scanUnsigned(text: string): { value: number; rest: string } | null {
  const start = C_SPACE.exec(text)![0].length;
  const m = /^([+-]?)([0-9]+)/.exec(text.slice(start));
  if (m === null) return null;
  let n = BigInt(m[2]);
  if (n > ULONG_MAX) n = ULONG_MAX;
  else if (m[1] === "-") n = (-n) & ULONG_MAX;
  return { value: Number(n & 0xffffffffn), rest: text.slice(start + m[0].length) };
}

/** tmux's hold on a window's side (WINDOW_MINIMUM, WINDOW_MAXIMUM in default_window_size). */
function clampSide(side: number): number {
  return Math.min(Math.max(side, 1), WINDOW_MAXIMUM_SIDE);
}

/**
 * The size of the window tmux 3.3a makes from default-size `value` (new-session's sides not
 * given, a new window no client sizes): `sscanf(value, "%ux%u")` as glibc reads it, 80x24 when
 * that finds fewer than two numbers, each side then held to 1..10000 as tmux holds it. Checked
 * against tmux itself value by value (tests/session_size_test.ts).
 */
export function readDefaultSize(value: string): WindowSize {
  const width = scanUnsigned(value);
  if (width === null || !width.rest.startsWith("x")) return FALLBACK;
  const height = scanUnsigned(width.rest.slice(1));
  if (height === null) return FALLBACK;
  return { width: clampSide(width.value), height: clampSide(height.value) };
}

/**
 * What a new session's window is made from, in words, for a refusal or note: `value` as
 * written, and how tmux reads it where that differs ("010000x010000" (tmux reads 10000x10000)).
 */
export function defaultSizeWords(value: string): string {
  const read = readDefaultSize(value);
  const size = `${read.width}x${read.height}`;
  return value === size ? value : `${JSON.stringify(value)} (tmux reads ${size})`;
}
