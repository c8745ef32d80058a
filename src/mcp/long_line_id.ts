/**
 * Finding the id of a request whose line is too long to read (line_splitter.ts keeps only its
 * head and its last bytes), so that its refusal still answers it: the message's own `id`, never
 * one inside its params, found at its head or as its last key (where the SDK's clients put it).
 *
 * @module
 */

/**
 * The message's own `id` in the head of a JSON object (a key of the outermost object, not one
 * inside its params), or null when the head does not show it.
 */
export function topLevelId(head: string): string | number | null {
  let depth = 0;
  let last = ""; // the last character outside strings, not white space
  for (let i = 0; i < head.length; i++) {
    const c = head[i];
    if (c === '"') {
      const end = stringEnd(head, i);
      if (end === -1) return null;
      if (depth === 1 && (last === "{" || last === ",") && head.slice(i, end + 1) === '"id"') {
        const m = /^\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(
          head.slice(end + 1),
        );
        return m ? JSON.parse(m[1]) as string | number : null;
      }
      last = '"';
      i = end;
    } else if (c === "{" || c === "[") {
      depth++;
      last = c;
    } else if (c === "}" || c === "]") {
      depth--;
      last = c;
    } else if (!/\s/.test(c)) last = c;
  }
  return null;
}

/** Where the string starting at `start` (a quote) ends: its closing quote, or -1. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/**
 * The `id` of a JSON object whose last key it is (`...,"id":3}` at the very end): only the
 * outermost object ends there (a nested one would be followed by its parent's `}`), and a
 * quote inside a string is escaped, so no value can pose as it.
 */
export function lastKeyId(tail: string): string | number | null {
  const m = /[,{]\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*\}\s*$/
    .exec(tail);
  return m ? JSON.parse(m[1]) as string | number : null;
}
