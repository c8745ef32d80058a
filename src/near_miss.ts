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

/**
 * The one name of `known` that `key` most likely meant, or null: the same name but for case,
 * `_` and `-` (`pane_id`, `paneID`); then one letter of plural (`pattern`); then a known name
 * that starts or ends with it, or that it starts or ends with (`timeout` → `timeoutMs`, `pane` →
 * `paneId`, `lines` → `maxLines`, `windowId` → `window`, `tmux_capture_pane` →
 * `capture_pane`); then one or two slips of the keyboard (`paneld`, `pnaeId`). Only a single
 * best candidate is named: where two are as near, none is.
 */
export function meantName(key: string, known: readonly string[]): string | null {
  if (known.includes(key) || key.length > MAX_KEY_CHARS) return null;
  const k = folded(key);
  if (k === "") return null;
  const tiers: ((name: string) => boolean)[] = [
    (n) => folded(n) === k,
    (n) => folded(n) === `${k}s` || `${folded(n)}s` === k,
    (n) => {
      const f = folded(n);
      return (k.length >= 4 && (f.startsWith(k) || f.endsWith(k))) ||
        (f.length >= 4 && (k.startsWith(f) || k.endsWith(f)));
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
