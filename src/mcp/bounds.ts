/**
 * Bounds on everything a tool returns, and honest reports of what was left out.
 *
 * A list keeps its leading entries that fit the byte budget and says how many it omitted; an
 * overlong string is cut on a character boundary and the bytes cut are counted. Nothing is
 * ever cut silently.
 *
 * @module
 */

/** Default bound on a result's structured JSON, about what Claude Code accepts from a tool. */
export const MAX_RESULT_BYTES = 100_000;

/** Longest name, title, path or command kept in a metadata field, in UTF-8 bytes. */
export const MAX_METADATA_BYTES = 2_048;

const encoder = new TextEncoder();

/** UTF-8 length of a string. */
export function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** Size of a value as compact JSON, in UTF-8 bytes. */
export function jsonBytes(value: unknown): number {
  return byteLength(JSON.stringify(value));
}

/** A string cut to at most `maxBytes` UTF-8 bytes on a character boundary, and what was cut. */
export function cutString(text: string, maxBytes: number): { text: string; omittedBytes: number } {
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return { text, omittedBytes: 0 };
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return {
    text: new TextDecoder().decode(bytes.subarray(0, end)),
    omittedBytes: bytes.length - end,
  };
}

/**
 * Cuts every listed string field of an object to {@link MAX_METADATA_BYTES} and reports the
 * total: `metadataComplete` and `omittedMetadataBytes`, as the seed contracts name them.
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
    const cut = cutString(field, maxBytes);
    out[key] = cut.text;
    omitted += cut.omittedBytes;
  }
  return { ...(out as T), metadataComplete: omitted === 0, omittedMetadataBytes: omitted };
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
