/**
 * A list of entries in a result's text block: one line per entry, `field=value` pairs, and
 * what would repeat line after line said once instead. Written field by field, a list of 60
 * panes in 20 windows repeated each window's id, name and placements (as JSON) on each of its
 * panes, and `isCallerPane=false` on every pane but one: 28 000 bytes, 11 000 said once. Before
 * the entries (each line only where it makes the text shorter, and each saying how to read what
 * follows, so that a model needs no rule the reply does not state):
 *
 * - `* placements: sessionName($sessionId):index, comma-separated`: placements (the sessions a
 *   window or pane is in) written `work($0):2` rather than as JSON (`work($0):2*`: the window
 *   current in that session);
 * - `* every entry: dead=false ...`: the fields every entry holds with the same value;
 * - `* unless an entry says otherwise: active=false ...`: flags (true or false on every entry)
 *   at their usual value, written on an entry only where it differs;
 * - `* each + line: ...`: entries in a row that share fields (the panes of one window: its id,
 *   name and placements, often its folder) come under a `+ ` line that holds those once.
 *
 * A `* `, `+ ` or `- ` line is never a value's: a value that holds a line break is a JSON
 * string or a block (see render_value.ts).
 *
 * @module
 */

import { jsonStringBytes } from "./bounds.ts";
import {
  BARE_FIELD,
  BARE_NAME,
  fenced,
  isBlock,
  isPlainObject,
  json,
  keyText,
  scalar,
} from "./render_value.ts";

/** Lists shorter than this are written entry by entry, every field on every line. */
const LAYOUT_FROM = 3;

/** The line of the fields every entry shares. */
const EVERY_ENTRY = "* every entry: ";

/** The line of the flags' usual values. */
const UNLESS_SAID = "* unless an entry says otherwise: ";

/** What a `+ ` line is. */
const GROUP_LEGEND = "* each + line: fields of every entry under it, up to the next + line";

/** How a placement reads, after the names of the fields that hold placements and `: `. */
const PLACEMENT_LEGEND = "sessionName($sessionId):index";

/** ... and for a window's placements, which say whether they are current in their session. */
const ACTIVE_LEGEND = ", then * if active";

/** What a `+ ` line costs beyond its fields on the wire: `+ `, and `\n` less a space. */
const GROUP_LINE_BYTES = 3;

/** A value inside an entry line: nested values as inline JSON. */
function fieldValue(value: unknown): string {
  return Array.isArray(value) || isPlainObject(value) ? json(value) : scalar(value, BARE_FIELD);
}

/** Fields as `field=value` pairs, every field written (nested values as inline JSON). */
function fieldPairs(entry: Record<string, unknown>): string {
  return Object.entries(entry).map(([key, value]) => `${keyText(key)}=${fieldValue(value)}`)
    .join(" ");
}

/** An entry's own line: `- ` and its pairs (`- {}` with none), or a value that is no object. */
function entryLine(pairs: string): string {
  return pairs === "" ? "- {}" : `- ${pairs}`;
}

/** An entry's long texts (a batch row's output or error), each as a block under its line. */
function blockLines(entry: unknown, indent: string): string[] {
  if (!isPlainObject(entry)) return [];
  const lines: string[] = [];
  for (const [k, v] of Object.entries(entry)) {
    if (isBlock(v)) lines.push(`${indent}  ${keyText(k)}:`, ...fenced(v));
  }
  return lines;
}

/**
 * One list entry's lines, every field written (no line before the list says anything of it):
 * its fields, then its long texts as blocks.
 */
export function entryLines(entry: unknown, indent: string): string[] {
  if (!isPlainObject(entry)) return [`${indent}- ${scalar(entry, BARE_FIELD)}`];
  const rest = Object.fromEntries(Object.entries(entry).filter(([, v]) => !isBlock(v)));
  return [`${indent}${entryLine(fieldPairs(rest))}`, ...blockLines(entry, indent)];
}

/** A placement's shape: a pane's (index, sessionId, sessionName), a window's (also active). */
type Shape = "pane" | "window";

function placementShape(p: unknown): Shape | null {
  if (
    !isPlainObject(p) || !Number.isSafeInteger(p.index) || (p.index as number) < 0 ||
    typeof p.sessionId !== "string" || !/^\$\d+$/.test(p.sessionId) ||
    typeof p.sessionName !== "string"
  ) return null;
  const keys = Object.keys(p).length;
  if (keys === 3) return "pane";
  return keys === 4 && typeof p.active === "boolean" ? "window" : null;
}

/**
 * Placements as `sessionName($sessionId):index` (`*` after a window's current one), joined by
 * commas: `work($0):2,ops($3):0`. A session name is bare only when it holds no space, `=`,
 * quote, control, nor any of `(),:*$`, and reads as no number or JSON; else it is a JSON string
 * (`"my project"($1):0`).
 */
function placementsText(list: readonly Record<string, unknown>[]): string {
  return list.map((p) =>
    `${scalar(p.sessionName, BARE_NAME)}(${p.sessionId}):${p.index}${p.active === true ? "*" : ""}`
  ).join(",");
}

/**
 * The fields of a list that hold placements of one shape (every value of the field a list of
 * them, and at least one not empty), and that shape; none when the list holds both shapes.
 */
function placementFields(rows: readonly Record<string, unknown>[]): {
  keys: string[];
  shape: Shape;
} | null {
  let shape: Shape | null = null;
  const keys: string[] = [];
  for (const key of new Set(rows.flatMap((r) => Object.keys(r)))) {
    let own: Shape | null = null;
    let ok = true;
    for (const row of rows) {
      if (!Object.hasOwn(row, key)) continue;
      const value = row[key];
      if (!Array.isArray(value)) ok = false;
      else {
        for (const p of value) {
          const s = placementShape(p);
          if (s === null || (own !== null && s !== own)) ok = false;
          own = s;
        }
      }
      if (!ok) break;
    }
    if (!ok || own === null) continue;
    if (shape !== null && own !== shape) return null;
    shape = own;
    keys.push(key);
  }
  return shape === null ? null : { keys, shape };
}

/** The legend line of placements held in `keys`. */
function placementLegend(keys: readonly string[], shape: Shape): string {
  return `* ${keys.map(keyText).join(", ")}: ${PLACEMENT_LEGEND}` +
    `${shape === "window" ? ACTIVE_LEGEND : ""}, comma-separated`;
}

/** What a line or a field (with the space before it) costs on the wire. */
function cost(text: string): number {
  return jsonStringBytes(text) + 1;
}

/** A run of entries in a row that share the fields `keys`, written once on its `+ ` line. */
interface Group {
  readonly start: number;
  readonly end: number;
  readonly keys: readonly string[];
}

/**
 * Entries in a row grouped by the field that saves the most: the runs of entries holding the
 * same value of it, each under a `+ ` line with the fields every entry of the run holds alike (a
 * run of one entry: only the fields alike within every run, which the field itself is among).
 * Null when no field's runs save more than the legend costs.
 */
function groupsOf(
  pairs: readonly Map<string, string>[],
  candidates: readonly string[],
): Group[] | null {
  let best: Group[] | null = null;
  let bestSaving = cost(GROUP_LEGEND) + 1;
  let bestLength = Infinity;
  for (const by of candidates) {
    const runs: [number, number][] = [];
    for (let i = 0; i < pairs.length; i++) {
      if (i > 0 && pairs[i].get(by) === pairs[i - 1].get(by)) runs[runs.length - 1][1] = i + 1;
      else runs.push([i, i + 1]);
    }
    if (runs.length === pairs.length) continue;
    const alike = runs.map(([start, end]) =>
      candidates.filter((k) => {
        const v = pairs[start].get(k);
        for (let i = start + 1; i < end; i++) if (pairs[i].get(k) !== v) return false;
        return true;
      })
    );
    const always = candidates.filter((k) => alike.every((keys) => keys.includes(k)));
    // The field grouped by first, then the others alike in every run (a window's name and
    // placements), then those alike in this one (its panes' folder, if they share it).
    const first = [by, ...always.filter((k) => k !== by)];
    const groups = runs.map(([start, end], r) => ({
      start,
      end,
      keys: end - start === 1 ? first : [...first, ...alike[r].filter((k) => !always.includes(k))],
    }));
    let saving = 0;
    for (const g of groups) {
      let line = 0;
      for (const k of g.keys) line += cost(pairs[g.start].get(k)!);
      saving += (g.end - g.start - 1) * line - GROUP_LINE_BYTES;
    }
    // Fields that make the same runs save alike: the one with the shortest values is grouped
    // by (a window's id rather than its folder).
    const length = runs.reduce((n, [start]) => n + pairs[start].get(by)!.length, 0);
    if (saving > bestSaving || (saving === bestSaving && best !== null && length < bestLength)) {
      best = groups;
      bestSaving = saving;
      bestLength = length;
    }
  }
  return best;
}

/**
 * The lines of a list's entries (after its `key (n):` line): what the entries share, said once
 * (see the module's documentation), then each entry with the fields nothing before it says.
 */
export function listLines(entries: readonly unknown[], indent: string): string[] {
  if (entries.length < LAYOUT_FROM || !entries.every(isPlainObject)) {
    return entries.flatMap((e) => entryLines(e, indent));
  }
  const rows = entries as readonly Record<string, unknown>[];
  const head: string[] = [];
  // Each entry's values as written, long texts aside (they are blocks).
  const values = rows.map((row) => {
    const out = new Map<string, string>();
    for (const [k, v] of Object.entries(row)) if (!isBlock(v)) out.set(k, fieldValue(v));
    return out;
  });
  const shared = new Set(
    [...values[0].keys()].filter((k) => values.every((v) => v.get(k) === values[0].get(k))),
  );

  const placed = placementFields(rows);
  if (placed !== null) {
    const legend = placementLegend(placed.keys, placed.shape);
    let saving = -cost(legend);
    const compact = rows.map((row, i) => {
      const out = new Map<string, string>();
      for (const k of placed.keys) {
        const list = row[k];
        if (!Array.isArray(list) || list.length === 0) continue;
        const text = placementsText(list);
        if (i === 0 || !shared.has(k)) saving += cost(values[i].get(k)!) - cost(text);
        out.set(k, text);
      }
      return out;
    });
    if (saving > 0) {
      head.push(legend);
      compact.forEach((c, i) => c.forEach((text, k) => values[i].set(k, text)));
    }
  }

  const pairs = values.map((v) => new Map([...v].map(([k, text]) => [k, `${keyText(k)}=${text}`])));
  if (shared.size) {
    head.push(EVERY_ENTRY + [...shared].map((k) => pairs[0].get(k)).join(" "));
  }

  // Flags at their usual value (the more common one; false on a tie), where that saves.
  const usual = new Map<string, boolean>();
  let flagSaving = 0;
  for (const k of values[0].keys()) {
    if (shared.has(k) || !rows.every((r) => typeof r[k] === "boolean")) continue;
    const trues = rows.filter((r) => r[k] === true).length;
    const value = trues * 2 > rows.length;
    const times = value ? trues : rows.length - trues;
    if (times < 2) continue;
    usual.set(k, value);
    flagSaving += times * cost(`${keyText(k)}=${value}`);
  }
  const unless = UNLESS_SAID + [...usual].map(([k, v]) => `${keyText(k)}=${v}`).join(" ");
  if (usual.size && flagSaving > cost(unless) + 1) head.push(unless);
  else usual.clear();

  const candidates = [...values[0].keys()].filter((k) =>
    !shared.has(k) && !usual.has(k) && values.every((v) => v.has(k))
  );
  const groups = groupsOf(pairs, candidates) ??
    [{ start: 0, end: rows.length, keys: [] as string[] }];
  if (groups.length > 1 || groups[0].keys.length) head.push(GROUP_LEGEND);

  const lines = head.map((line) => indent + line);
  for (const g of groups) {
    if (g.keys.length) {
      lines.push(`${indent}+ ${g.keys.map((k) => pairs[g.start].get(k)).join(" ")}`);
    }
    const said = new Set(g.keys);
    for (let i = g.start; i < g.end; i++) {
      const own = [...pairs[i]].filter(([k]) =>
        !shared.has(k) && !said.has(k) && !(usual.has(k) && rows[i][k] === usual.get(k))
      ).map(([, pair]) => pair);
      lines.push(`${indent}${entryLine(own.join(" "))}`, ...blockLines(rows[i], indent));
    }
  }
  return lines;
}
