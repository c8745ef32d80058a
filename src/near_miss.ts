/**
 * The name a caller most likely meant, among the names a place takes: a tool's argument, a
 * tool, a flag, a hook command. Pure and import-free, so the hook's small module graph can
 * hold it too.
 *
 * @module
 */

/** Longest key compared with the known names (a caller's key may be megabytes long). */
const MAX_KEY_CHARS = 64;

/** A name folded for comparison: case, `_` and `-` do not count. */
function folded(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, "");
}

/** Edits (insert, delete, substitute, swap of neighbours) from `a` to `b`; past `max`, `max + 1`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, before[j - 2] + 1);
      }
      current.push(d);
    }
    before = previous;
    previous = current;
  }
  return Math.min(previous[b.length], max + 1);
}

/** A name's words, lower case: `timeoutMs`, `timeout_ms` and `timeout-ms` are timeout, ms. */
function words(name: string): string[] {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(/[\s_-]+/)
    .filter((w) => w !== "");
}

/** Last words too common to tell one name from another (`name` of `socket_name`). */
const GENERIC_LAST = new Set(["name", "names", "id", "ids", "ms", "value", "text", "type"]);

/**
 * Whether the words `part` are the first words of `whole` (with at most two more after them:
 * `timeout` of `timeoutMs`, `target` of `targetPaneId`), or its last words with one more
 * before them that is not a common word alone (`lines` of `maxLines`, `capture_pane` of
 * `tmux_capture_pane`; not `name` of `socket_name`, nor `pane` of `maxMatchesPerPane`).
 */
function partOf(whole: readonly string[], part: readonly string[]): boolean {
  const more = whole.length - part.length;
  if (part.length === 0 || more < 1) return false;
  if (more <= 2 && part.every((w, i) => whole[i] === w)) return true;
  return more === 1 && part.every((w, i) => whole[i + 1] === w) &&
    !(part.length === 1 && GENERIC_LAST.has(part[0]));
}

/**
 * The one name of `known` that `key` most likely meant, or null: the same name but for case,
 * `_` and `-` (`pane_id`, `paneID`); then one letter of plural (`pattern`); then a known name
 * whose words hold its words, or the other way round ({@link partOf}: `timeout` → `timeoutMs`,
 * `pane` → `paneId`, `lines` → `maxLines`, `windowId` → `window`, `tmux_capture_pane` →
 * `capture_pane`); then one or two slips of the keyboard (`paneld`, `pnaeId`). Only a single
 * best candidate is named: where two are as near, none is.
 */
export function meantName(key: string, known: readonly string[]): string | null {
  if (known.includes(key) || key.length > MAX_KEY_CHARS) return null;
  const k = folded(key);
  if (k === "") return null;
  const keyWords = words(key);
  const tiers: ((name: string) => boolean)[] = [
    (n) => folded(n) === k,
    (n) => folded(n) === `${k}s` || `${folded(n)}s` === k,
    (n) => {
      const w = words(n);
      return keyWords.length >= w.length ? partOf(keyWords, w) : partOf(w, keyWords);
    },
    (n) => k.length >= 4 && distance(k, folded(n), 1) <= 1,
    (n) => k.length >= 6 && distance(k, folded(n), 2) <= 2,
  ];
  for (const tier of tiers) {
    const found = known.filter(tier);
    if (found.length === 1) return found[0];
    if (found.length > 1) return null;
  }
  return null;
}

/**
 * `did you mean …?` naming what `meant` finds for each of `keys` (with `for <key>`, by `show`,
 * when there are several), each after `prefix` (`--` for a flag); "" when it finds nothing.
 */
export function meantPhrase(
  keys: readonly string[],
  meant: (key: string) => string | null,
  show: (key: string) => string = (key) => JSON.stringify(key),
  prefix = "",
): string {
  const guesses = keys.flatMap((key) => {
    const m = meant(key);
    return m === null ? [] : [`${prefix}${m}${keys.length > 1 ? ` for ${show(key)}` : ""}`];
  });
  return guesses.length ? `did you mean ${guesses.join(", ")}?` : "";
}

/** ` (did you mean <name>?)` for the one name of `known` that `key` likely meant, or "". */
export function meantHint(key: string, known: readonly string[], prefix = ""): string {
  const phrase = meantPhrase([key], (k) => meantName(k, known), undefined, prefix);
  return phrase ? ` (${phrase})` : "";
}
