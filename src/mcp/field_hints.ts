/**
 * What an argument error says about the field a caller meant. A model that writes `pattern`
 * for `patterns`, `pane_id` for `paneId` or `timeout` for `timeoutMs` is told the field it
 * meant in the same answer, and one that names a field of no resemblance is told the fields
 * that place takes: either way the next call can be right without reading the definitions
 * again (under a client's tool search they may not even be loaded).
 *
 * Only names of the tool's own schema are ever suggested; the caller's keys are shown by the
 * message that names them (cut and quoted there).
 *
 * @module
 */

import type { z } from "zod";

/** The most fields listed for a place (a tool has at most a dozen or so). */
const MAX_LISTED = 20;

/** Longest key compared with the known fields (a caller's key may be megabytes long). */
const MAX_KEY_CHARS = 64;

/** The internal definition zod 4 keeps on every schema (`schema._zod.def`). */
interface ZodDef {
  readonly type?: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly innerType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly in?: z.ZodType;
}

function defOf(schema: z.ZodType): ZodDef {
  return (schema as unknown as { _zod?: { def?: ZodDef } })._zod?.def ?? {};
}

/** `schema` without the wrappers that do not change its shape (optional, default...). */
function unwrapped(schema: z.ZodType): z.ZodType {
  for (let i = 0; i < 16; i++) {
    const def = defOf(schema);
    const inner = def.innerType ?? (def.type === "pipe" ? def.in : undefined);
    if (inner === undefined) return schema;
    schema = inner;
  }
  return schema;
}

/**
 * The field names of the object `schema` holds at `path` (object keys and array indexes as
 * zod reports them), or null where no object of known fields sits there.
 */
export function fieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | null {
  let at = unwrapped(schema);
  for (const step of path) {
    const def = defOf(at);
    if (
      def.type === "object" && typeof step === "string" && def.shape &&
      Object.hasOwn(def.shape, step)
    ) {
      at = unwrapped(def.shape[step]);
    } else if (def.type === "array" && typeof step === "number" && def.element) {
      at = unwrapped(def.element);
    } else return null;
  }
  const def = defOf(at);
  return def.type === "object" && def.shape ? Object.keys(def.shape) : null;
}

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
 * The one known field `key` most likely meant, or null: the same name but for case, `_` and
 * `-` (`pane_id`, `paneID`); then one letter of plural (`pattern`); then a known name that
 * starts or ends with it, or that it starts or ends with (`timeout` → `timeoutMs`, `pane` →
 * `paneId`, `lines` → `maxLines`, `windowId` → `window`, `tmux_capture_pane` →
 * `capture_pane`); then one or two slips of the keyboard (`paneld`, `pnaeId`). Only a single best candidate is named.
 */
export function meantField(key: string, known: readonly string[]): string | null {
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

/** What follows an unknown tool's name in an error: the tool it likely meant, if one. */
export function meantToolHint(name: string, tools: Iterable<string>): string {
  const meant = meantField(name, [...tools]);
  return meant === null ? "" : ` (did you mean ${meant}?)`;
}

/**
 * What follows the unknown keys in an error: each key's likely meaning, or the fields the place
 * takes where one of them resembles none. `show` turns a caller's key into how the message
 * names it. Empty where `known` is empty.
 */
export function unknownKeysHint(
  keys: readonly string[],
  known: readonly string[],
  show: (key: string) => string,
): string {
  if (known.length === 0) return "";
  const meant = keys.map((key) => meantField(key, known));
  const guesses = keys.flatMap((key, i) => {
    const m = meant[i];
    return m === null ? [] : [keys.length === 1 ? m : `${m} for ${show(key)}`];
  });
  const parts: string[] = [];
  if (guesses.length) parts.push(`did you mean ${guesses.join(", ")}?`);
  if (meant.some((m) => m === null)) {
    const listed = known.slice(0, MAX_LISTED).join(", ");
    parts.push(`fields: ${listed}${known.length > MAX_LISTED ? ", …" : ""}`);
  }
  return ` (${parts.join("; ")})`;
}
