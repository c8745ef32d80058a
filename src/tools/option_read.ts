/**
 * Options read back for a reply: exactly (tmux's quoting undone), each value cut to the
 * result bound, an array's entries by index, and the summary set_option gives of what it
 * stored. Parsing tmux's listing itself is option_lines.ts.
 *
 * @module
 */

import { z } from "zod";
import { boundMetadata, cutJsonString, cutString, withOmittedMetadata } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { int, metadataBound } from "../mcp/schemas.ts";
import { decodeBytes } from "../tmux/format.ts";
import { parseOptionLines, readOptionListing, unquoteOptionValue } from "./option_lines.ts";
import { baseName } from "../tmux/option_reach.ts";
import { noSuch, type ScopeFlags, unknownName } from "./setting_scope.ts";

/** One option entry as the option tools report it. */
export const optionEntry = z.strictObject({
  name: z.string(),
  index: int().nullable().describe("Array index for array options (status-format[1]), else null."),
  value: z.string().describe("The value exactly as stored (tmux's quoting undone)."),
  inherited: z.boolean().describe("Not set here: inherited from a parent scope."),
  ...metadataBound,
});

type OptionEntry = z.infer<typeof optionEntry>;

/**
 * Longest single option value show_option and set_option return before cutting it, in bytes
 * of JSON (escapes counted): the value travels twice in a result (`value` and its entry), so
 * each copy gets under half the bound.
 */
function maxOptionValueBytes(ctx: TmuxContext): number {
  return Math.min(65_536, Math.floor((ctx.config.maxResultBytes - 4_096) / 2));
}

/** A value as a summary shows it: its start, quoted; the result holds the rest. */
export function shownValue(value: string, bytes = 200): string {
  const cut = cutString(value, bytes);
  return `${JSON.stringify(cut.text)}${cut.omittedBytes > 0 ? "…" : ""}`;
}

/** Most entries of an array a set_option summary shows; its result holds them all. */
const SHOWN_ENTRIES = 3;

/**
 * What set_option says it stored. Given no index, tmux replaces an array option
 * (terminal-features, status-format...) whole, the value split at the array's separator into
 * its entries, and `append` adds entries at its end: the summary says what the array holds.
 */
export function storedSummary(
  name: string,
  append: boolean,
  entries: readonly OptionEntry[],
  one: OptionEntry | null,
  label: string,
): string {
  if (one) return `${name} = ${shownValue(one.value)} in ${label}.`;
  if (/\[\d+\]$/.test(name)) return `${name} is not set in ${label}.`;
  const shown = append ? entries.slice(-SHOWN_ENTRIES) : entries.slice(0, SHOWN_ENTRIES);
  const listed =
    (shown.length < entries.length ? `the ${append ? "last" : "first"} ${shown.length}: ` : "") +
    shown.map((e) => `[${e.index}] ${shownValue(e.value, 80)}`).join(", ");
  return (entries.length === 0
    ? `${name} has no entries in ${label}`
    : `${name}: ${entries.length} entr${entries.length === 1 ? "y" : "ies"} (${listed}) in ` +
      label) +
    (append ? "." : "; set without an index, it replaced the whole array.");
}

/**
 * Options at `where`: the one named, or (no name) every one tmux vouches for, with the number
 * of lines of its listing it would not vouch for (see {@link readOptionListing}).
 */
export async function readOptions(
  ctx: TmuxContext,
  where: ScopeFlags,
  name: string | undefined,
  inherited: boolean,
  maxValueBytes: number,
): Promise<{ entries: OptionEntry[]; unvouched: number }> {
  const argv = ["show-options", ...where.flags];
  if (inherited) argv.push("-A");
  let out: Uint8Array;
  try {
    out = await ctx.read(name === undefined ? argv : [...argv, "--", name]);
  } catch (error) {
    // tmux says "invalid option" for an unset user option and an unknown name alike.
    if (unknownName(error) && name?.startsWith("@")) return { entries: [], unvouched: 0 };
    throw unknownName(error) ? noSuch("option", name, error) : error;
  }
  const { lines, unvouched } = name === undefined
    ? await readOptionListing((more) => ctx.read(more), argv, decodeBytes(out))
    : { lines: parseOptionLines(decodeBytes(out)), unvouched: 0 };
  const entries = lines.filter((l) => l.raw !== null).map((l) => {
    // Cut by its size in JSON: a value of quotes or control characters takes two to six
    // times its bytes there, and the reply's bound is on JSON.
    const value = cutJsonString(unquoteOptionValue(l.raw!), maxValueBytes);
    return withOmittedMetadata(
      boundMetadata(
        { name: l.name, index: l.index, value: value.text, inherited: l.inherited },
        ["value"],
        maxValueBytes,
      ),
      value.omittedBytes,
    );
  });
  return { entries, unvouched };
}

/** The one entry an indexed name (`status-format[1]`) reads back, if it is set. */
export function indexedEntry(name: string, entries: readonly OptionEntry[]): OptionEntry | null {
  const m = /\[(\d+)\]$/.exec(name);
  if (!m) return null;
  return entries.find((e) => e.index === Number(m[1])) ?? null;
}

/** One option read back: its entries, and the entry of a non-array option. */
export async function readOne(
  ctx: TmuxContext,
  where: ScopeFlags,
  name: string,
  includeInherited: boolean,
): Promise<{ entries: OptionEntry[]; scalar: OptionEntry | null }> {
  const index = /\[(\d+)\]$/.exec(name);
  // Asked for one index, tmux prints one it does not hold as set to '': the array is read
  // whole and only that index kept, if it is there.
  const read = await readOptions(
    ctx,
    where,
    index === null ? name : baseName(name),
    includeInherited,
    maxOptionValueBytes(ctx),
  );
  const entries = index === null
    ? read.entries
    : read.entries.filter((e) => e.index === Number(index[1]));
  return { entries, scalar: entries.length === 1 && entries[0].index === null ? entries[0] : null };
}
