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
import { ToolFailure } from "../mcp/errors.ts";
import { decodeBytes, newGuard } from "../tmux/format.ts";
import {
  type OptionLine,
  parseOptionLines,
  readOptionListing,
  unquoteOptionValue,
} from "./option_lines.ts";
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
  const entries = lines.filter((l) => l.raw !== null).map((l) =>
    entryOf(l, l.inherited, maxValueBytes)
  );
  return { entries, unvouched };
}

/** One listed option as an entry, its value read exactly and cut to `maxValueBytes`. */
function entryOf(line: OptionLine, inherited: boolean, maxValueBytes: number): OptionEntry {
  // Cut by its size in JSON: a value of quotes or control characters takes two to six
  // times its bytes there, and the reply's bound is on JSON.
  const value = cutJsonString(unquoteOptionValue(line.raw!), maxValueBytes);
  return withOmittedMetadata(
    boundMetadata(
      { name: line.name, index: line.index, value: value.text, inherited },
      ["value"],
      maxValueBytes,
    ),
    value.omittedBytes,
  );
}

/**
 * The scopes whose options `where` inherits, nearest first, as show-options flags: a pane's
 * window (named by the pane, so it is the window the pane is in when tmux reads it), then the
 * global window options; a session's global session options; none above a global scope or
 * the server.
 */
function parentScopes(where: ScopeFlags): string[][] {
  const [kind, t, id] = where.flags;
  if (kind === "-p" && t === "-t") return [["-w", "-t", id], ["-g", "-w"]];
  if (kind === "-w" && t === "-t") return [["-g", "-w"]];
  if (kind === "-t") return [["-g"]];
  return [];
}

/**
 * Every option at `where` with what it inherits, as tmux resolves each (`#{@name}`,
 * `show-options -A SCOPE NAME`). tmux's own `show-options -A` without a name lists the
 * built-in options a scope inherits but only the scope's own user options (`@name`): the user
 * options of its parent scopes ({@link parentScopes}) are listed too, in the same tmux step
 * (a change made meanwhile shows in every listing or in none, so an option moved from a pane
 * to its window is never missed nor listed twice), each one the scope does not have its own
 * of, from the nearest scope that has it, marked inherited. A parent's user option is taken only while the listings
 * nearer than it were read whole: an option left unread there might be the one that overrides
 * it. What is left out is counted in `unvouched`, as lines of tmux's listings.
 */
export async function readInheritedOptions(
  ctx: TmuxContext,
  where: ScopeFlags,
  maxValueBytes: number,
): Promise<{ entries: OptionEntry[]; unvouched: number }> {
  const parents = parentScopes(where);
  if (parents.length === 0) return await readOptions(ctx, where, undefined, true, maxValueBytes);
  const listings = [
    ["show-options", ...where.flags, "-A"],
    ...parents.map((p) => ["show-options", ...p]),
  ];
  const guard = newGuard();
  const out = await ctx.read(
    listings.flatMap((argv, i) =>
      i === 0 ? argv : [";", "display-message", "-p", "--", guard, ";", ...argv]
    ),
  );
  const parts = splitAtGuard(out, guard);
  if (parts.length !== listings.length) {
    throw new ToolFailure(
      `tmux's listings of ${where.label} and the scopes it inherits from could not be told ` +
        "apart; nothing is reported rather than guessed.",
      "Call show_options again, or show_option to read one option by name.",
    );
  }
  const read = await Promise.all(
    listings.map((argv, i) =>
      readOptionListing((more) => ctx.read(more), argv, decodeBytes(parts[i]))
    ),
  );
  const own = read[0];
  const ownEntries = own.lines.filter((l) => l.raw !== null).map((l) =>
    entryOf(l, l.inherited, maxValueBytes)
  );
  const named = new Set(ownEntries.filter((e) => e.name.startsWith("@")).map((e) => e.name));
  const inherited: OptionEntry[] = [];
  let unvouched = own.unvouched;
  for (const parent of read.slice(1)) {
    for (const line of parent.lines) {
      if (!line.name.startsWith("@") || line.raw === null || named.has(line.name)) continue;
      if (unvouched > 0) {
        // A nearer listing was not read whole: this one may be overridden there.
        unvouched += line.name.split("\n").length;
        continue;
      }
      named.add(line.name);
      inherited.push(entryOf(line, true, maxValueBytes));
    }
    unvouched += parent.unvouched;
  }
  // tmux lists the user options first, by name: the inherited ones go among them.
  const user = [...ownEntries.filter((e) => e.name.startsWith("@")), ...inherited]
    .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return { entries: [...user, ...ownEntries.filter((e) => !e.name.startsWith("@"))], unvouched };
}

/**
 * `out` cut at each line that is exactly `guard` (display-message's line between two
 * commands' output). A guard is random for each read, and tmux quotes every control character
 * of a value, so only a name that held this read's guard could forge one: the caller refuses
 * any count but the one it asked for.
 */
function splitAtGuard(out: Uint8Array, guard: string): Uint8Array[] {
  const mark = new TextEncoder().encode(`${guard}\n`);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (let k = 0; k + mark.length <= out.length; k++) {
    if ((k === 0 || out[k - 1] === 0x0a) && mark.every((b, e) => out[k + e] === b)) {
      parts.push(out.subarray(from, k));
      from = k + mark.length;
      k = from - 1;
    }
  }
  parts.push(out.subarray(from));
  return parts;
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
