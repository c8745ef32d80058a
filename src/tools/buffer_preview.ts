/**
 * list_buffers' preview of a buffer: the start of its text from tmux's `#{buffer_sample}` (read
 * without copying the buffer), every control character spelled out as an octal escape, so a
 * buffer's hostile content never reaches the caller as anything but visible text.
 *
 * @module
 */

import { byteLength } from "../mcp/bounds.ts";
import { UNDECODABLE } from "../tmux/format.ts";

/** Longest preview, in characters of its escaped form. */
export const PREVIEW_CHARS = 80;

/** How many bytes of a buffer tmux's `#{buffer_sample}` escapes before it cuts (tmux 3.x). */
const SAMPLE_WIDTH = 200;

/**
 * One unit of tmux's escaped sample (vis(3) with VIS_CSTYLE|VIS_OCTAL|VIS_TAB|VIS_NL): a
 * backslash escape (`\\`, `\n`, `\033`) or one character. A cut never splits a unit.
 */
const SAMPLE_UNIT = /\\(?:[0-7]{1,3}|[\s\S])|[\s\S]/gu;

/** Control characters tmux's escaping lets through (it keeps valid UTF-8, C1 controls too). */
// deno-lint-ignore no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/gu;

/**
 * A buffer's preview from tmux's `#{buffer_sample}` (read without copying the buffer): the
 * start of its text with every control character as an octal escape and a backslash doubled,
 * at most {@link PREVIEW_CHARS} characters; `complete` when it shows the whole buffer.
 */
export function previewOf(sample: string): { preview: string; complete: boolean } {
  const units = sample.match(SAMPLE_UNIT) ?? [];
  // A split character's U+FFFD counts 3 bytes for its 1 to 3: only a sample tmux cut (past
  // SAMPLE_WIDTH bytes with its "...") holds one, so counted so it is still past.
  const raw = units.reduce((n, u) => n + byteLength(u), 0);
  // tmux cuts its escaped text at SAMPLE_WIDTH bytes, perhaps inside a character or an
  // escape, and appends "..." when the buffer went on: drop the dots and whatever was cut.
  const cutByTmux = raw > SAMPLE_WIDTH;
  if (cutByTmux) {
    units.splice(-3);
    // A character the cut split reads as UNDECODABLE (tmux escapes other bad bytes as octal).
    while (units.length > 0 && units[units.length - 1] === UNDECODABLE) units.pop();
    units.pop();
  }
  const escaped = units.map((u) =>
    u.replace(CONTROL_CHARACTER, (c) =>
      Array.from(
        new TextEncoder().encode(c),
        (b) => `\\${b.toString(8).padStart(3, "0")}`,
      ).join(""))
  );
  let preview = "";
  let kept = 0;
  for (const unit of escaped) {
    if (preview.length + unit.length > PREVIEW_CHARS) break;
    preview += unit;
    kept++;
  }
  return { preview, complete: !cutByTmux && kept === escaped.length };
}
