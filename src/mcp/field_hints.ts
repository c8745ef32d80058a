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
import { meantName, meantPhrase } from "../near_miss.ts";

/** The most fields listed for a place (a tool has at most a dozen or so). */
const MAX_LISTED = 20;

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
  const parts: string[] = [];
  const guesses = meantPhrase(keys, (key) => meantName(key, known), show);
  if (guesses) parts.push(guesses);
  if (keys.some((key) => meantName(key, known) === null)) {
    const listed = known.slice(0, MAX_LISTED).join(", ");
    parts.push(`fields: ${listed}${known.length > MAX_LISTED ? ", …" : ""}`);
  }
  return ` (${parts.join("; ")})`;
}
