/**
 * How one value is written in a result's text block (see render.ts): bare when nothing in it
 * could be misread, else as a JSON string, so that nothing a pane produces can pose as the
 * reply's own structure; and which values are long texts, shown as blocks instead.
 *
 * @module
 */

import { MAX_METADATA_BYTES, SEPARATORS_AND_BIDI, unicodeEscape, wireJson } from "./bounds.ts";

export { SEPARATORS_AND_BIDI, unicodeEscape };

/** The C0 controls, DEL and the C1 controls, as the inside of a character class. */
export const CONTROLS = String.raw`\u0000-\u001f\u007f-\u009f`;

/**
 * What shows as nothing, or changes how what is beside it shows: the format characters (Cf) and
 * the default-ignorable ones, past U+FFFF too — zero-width spaces and joiners, soft hyphens,
 * Hangul fillers, variation selectors, tag characters (which spell text a reader does not see).
 * A name holding one reads as the name without it. As the inside of a `u` character class.
 */
const INVISIBLE = String.raw`\p{Cf}\p{Default_Ignorable_Code_Point}`;

/**
 * Never in a bare value: a quote, a backslash, a control, a line separator, a bidi control, a
 * character that shows as nothing (an emoji's joiner or presentation selector too: such a
 * value is a JSON string that keeps them, see {@link json}).
 */
const NEVER_BARE = String.raw`"\\` + CONTROLS + SEPARATORS_AND_BIDI + INVISIBLE;

/**
 * What reads as `=` or as the blank between an entry's fields but is neither: Unicode's
 * lookalikes of `=` (꞊ ＝ ⹀ ゠ ﹦ ⁼ ₌ ᐀ ꓿ 🟰) and the Braille blank.
 */
const FIELD_LOOKALIKES = String
  .raw`\u1400\u207c\u208c\u2e40\u30a0\ua4ff\ua78a\ufe66\uff1d\u{1f7f0}\u2800`;

/**
 * What reads as one of a placement's `(),:*$`: their fullwidth and small forms, and the
 * common lookalikes of `:`, `,` and `*` (∶ ꞉ ︓ 、 ‚ ∗ ⁎).
 */
const PLACEMENT_LOOKALIKES = String
  .raw`\uff04\uff08\uff09\uff0a\uff0c\uff1a\ufe50\ufe51\ufe55\ufe59\ufe5a\ufe61\ufe69` +
  String.raw`\u2236\ua789\ufe13\u3001\u201a\u2217\u204e`;

/**
 * A value written bare on a `key: value` line: no spaces at its ends, no quote, backslash,
 * control character, line separator, bidirectional control or character that shows as nothing
 * anywhere (anything else is a JSON string).
 */
export const BARE = new RegExp(
  String.raw`^[^\s${NEVER_BARE}](?:[^${NEVER_BARE}]*[^\s${NEVER_BARE}])?$`,
  "u",
);

/**
 * What a value inside an entry line may be made of, bare: printable ASCII, and beyond it only
 * letters (not modifier letters: `ː` U+02D0 reads as `:`), digits and marks of any script.
 * Unicode's punctuation and symbols hold lookalikes of every separator a line uses (`ꓹ` and `،`
 * of `,`, `։` and `꞉` of `:`, `❨❩` of `()`, `═` of `=`), more than a list keeps up with: a value
 * holding one is a JSON string, an emoji's too.
 */
const PLAIN_LETTERS = String.raw`\x21-\x7e\p{Lu}\p{Ll}\p{Lt}\p{Lo}\p{Nd}\p{Mn}\p{Mc}`;

/**
 * A value inside an entry line also may not hold spaces or `=` (they separate fields), nor what
 * reads as one ({@link FIELD_LOOKALIKES}), nor anything but {@link PLAIN_LETTERS}.
 */
export const BARE_FIELD = new RegExp(
  String.raw`^(?=[${PLAIN_LETTERS}]+$)[^\s=${NEVER_BARE}${FIELD_LOOKALIKES}]+$`,
  "u",
);

/**
 * A session name written bare in a placement (`work($0):2`, see render_list.ts): as in an entry
 * line, and with none of the characters that frame a placement, `(),:*$`, nor what reads as one.
 */
export const BARE_NAME = new RegExp(
  String
    .raw`^(?=[${PLAIN_LETTERS}]+$)[^\s=(),:*$${NEVER_BARE}${FIELD_LOOKALIKES}${PLACEMENT_LOOKALIKES}]+$`,
  "u",
);

/** Words a bare string could be mistaken for: a number, true/false/null, inline JSON. */
const AMBIGUOUS = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)$|^[[{]/i;

/**
 * An emoji as Unicode's recommended set spells one (RGI: a keycap, a flag, a ZWJ sequence, one
 * with its presentation selector): the joiners, selectors and tags inside draw one picture
 * (👩‍💻, ❤️, 1️⃣) and hide no text, and the set is closed, so they carry no data of their own.
 */
const RGI_EMOJI = /\p{RGI_Emoji}/gv;

/** One character that shows as nothing ({@link INVISIBLE}). */
const INVISIBLE_CHAR = new RegExp(`[${INVISIBLE}]`, "gu");

/**
 * `text` with every character that shows as nothing written as JSON escapes it (`\u200d`, each
 * half of a pair past U+FFFF), but inside an emoji of {@link RGI_EMOJI}: anywhere else a joiner
 * joins nothing and a selector selects nothing (`build1` and `build1\ufe0f`, `🚀🚀` and
 * `🚀\u200d🚀` would read alike), and a run of selectors or tag characters carries data a
 * reader does not see. Text that was a JSON string stays one that parses to the same value.
 */
export function escapeHidden(text: string): string {
  if (ALL_ASCII.test(text)) return text;
  let out = "";
  let at = 0;
  for (const m of text.matchAll(RGI_EMOJI)) {
    out += text.slice(at, m.index).replace(INVISIBLE_CHAR, jsonEscape) + m[0];
    at = m.index + m[0].length;
  }
  return out + text.slice(at).replace(INVISIBLE_CHAR, jsonEscape);
}

/** A character as JSON writes one it escapes: `\uXXXX`, each half of a pair past U+FFFF. */
function jsonEscape(c: string): string {
  return c.length === 1 ? unicodeEscape(c) : unicodeEscape(c[0]) + unicodeEscape(c[1]);
}

// deno-lint-ignore no-control-regex
const ALL_ASCII = /^[\x00-\x7f]*$/;

/**
 * JSON as it goes on the wire (bounds.ts, {@link wireJson}), and in the text no character that
 * shows as nothing as it is ({@link escapeHidden}): the same value parses from it.
 */
export function json(value: unknown): string {
  return escapeHidden(wireJson(value));
}

/**
 * A string bare when it matches `pattern` and reads as nothing else (a number, `true`, inline
 * JSON), else a JSON string; a number, boolean or null as JSON writes it.
 */
export function scalar(value: unknown, pattern: RegExp): string {
  if (typeof value === "string") {
    return value !== "" && pattern.test(value) && !AMBIGUOUS.test(value) ? value : json(value);
  }
  if (value === null || typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  return json(value);
}

/** A key as written: bare when it is a plain name, else a JSON string. */
export function keyText(key: string): string {
  return /^[A-Za-z_][\w.-]*$/.test(key) ? key : json(key);
}

/** An object of named fields (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A one-line string longer than this is a block too: longer than any name, title or path (see
 * {@link MAX_METADATA_BYTES}), so only texts (a command's output on one line, a buffer or an
 * option value of minified JSON) are. As a block it costs half of what a JSON string does on
 * the wire (a quote is `\"` there, not `\\\"`), and a cut can keep its start (see fitLines in
 * render.ts).
 */
const BLOCK_FROM_CHARS = MAX_METADATA_BYTES;

/** A string long or multi-line enough to be shown as a block rather than a value. */
export function isBlock(value: unknown): value is string {
  return typeof value === "string" &&
    (value.length > BLOCK_FROM_CHARS || value.includes("\n"));
}

/** The text between fences: every line as it is; a fence longer than any backtick run in it. */
export function fenced(text: string): string[] {
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
