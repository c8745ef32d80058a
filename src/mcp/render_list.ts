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

/** The shape of a placement; null for anything else. */
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
 * Of `fields`, those of a list that hold placements of one shape (every value of the field a list of
 * them, and at least one not empty), and that shape; none when the list holds both shapes.
 */
function placementFields(
  rows: readonly Record<string, unknown>[],
  fields: readonly string[],
): { keys: string[]; shape: Shape } | null {
  let shape: Shape | null = null;
  const keys: string[] = [];
  for (const key of fields) {
    let own: Shape | null = null;
    let ok = true;
    for (const row of rows) {
      if (!Object.hasOwn(row, key)) continue;
      const value = row[key];
      if (!Array.isArray(value)) ok = false;
      else {
        for (const p of value) {
          const s = placementShape(p);
          if (s === null || (own !== null && s !== own)) {
            ok = false;
            break;
          }
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

/**
 * A list's entries as written, field by field (long texts aside: they are blocks): each entry's
 * value as text, and a number for it that is the same where the text is, so that comparing
 * entries compares numbers, and each distinct `field=value` is measured once.
 */
class Table {
  /** Every field of any entry, in the order they first come. */
  readonly keys: string[];
  /** The fields as written (`"odd key"` quoted). */
  readonly keyTexts: string[];
  /** By field, then entry: the value as written, undefined where the entry has none. */
  readonly text: (string | undefined)[][];
  /** By field, then entry: the value's number, -1 where the entry has none. */
  readonly ids: Int32Array[] = [];
  /** By field: what `field=value` and its space cost on the wire, by the value's number. */
  readonly #costs: number[][] = [];

  constructor(rows: readonly Record<string, unknown>[]) {
    const index = new Map<string, number>();
    this.keys = [];
    this.text = [];
    rows.forEach((row, i) => {
      for (const [k, v] of Object.entries(row)) {
        if (isBlock(v)) continue;
        let j = index.get(k);
        if (j === undefined) {
          index.set(k, j = this.keys.length);
          this.keys.push(k);
          this.text.push(new Array(rows.length));
        }
        this.text[j][i] = fieldValue(v);
      }
    });
    this.keyTexts = this.keys.map(keyText);
  }

  /** Numbers the values: call once the texts are final. */
  number(): void {
    for (const column of this.text) {
      const seen = new Map<string, number>();
      const ids = new Int32Array(column.length).fill(-1);
      column.forEach((text, i) => {
        if (text === undefined) return;
        let id = seen.get(text);
        if (id === undefined) seen.set(text, id = seen.size);
        ids[i] = id;
      });
      this.ids.push(ids);
      this.#costs.push([]);
    }
  }

  /** Entry `i`'s field `j` as written: `field=value`. */
  pair(j: number, i: number): string {
    return `${this.keyTexts[j]}=${this.text[j][i]}`;
  }

  /** What entry `i`'s field `j` costs on the wire, with its space. */
  cost(j: number, i: number): number {
    const id = this.ids[j][i];
    return this.#costs[j][id] ??= cost(this.pair(j, i));
  }
}

/** A run of entries in a row that share the fields `keys`, written once on its `+ ` line. */
interface Group {
  readonly start: number;
  readonly end: number;
  readonly keys: readonly number[];
}

/**
 * Entries in a row grouped by the field that saves the most: the runs of entries holding the
 * same value of it, each under a `+ ` line with the fields every entry of the run holds alike (a
 * run of one entry: only the fields alike within every run, which the field itself is among).
 * Null when no field's runs save more than the legend costs.
 */
function groupsOf(table: Table, candidates: readonly number[], n: number): Group[] | null {
  // By field: how many times its value changed from one entry to the next, up to each entry.
  // A field is alike within entries start..end-1 when it did not change after start.
  const changes = new Map<number, Int32Array>();
  for (const k of candidates) {
    const ids = table.ids[k];
    const count = new Int32Array(n);
    for (let i = 1; i < n; i++) count[i] = count[i - 1] + (ids[i] === ids[i - 1] ? 0 : 1);
    changes.set(k, count);
  }
  const alikeIn = (k: number, start: number, end: number) => {
    const count = changes.get(k)!;
    return count[end - 1] === count[start];
  };
  let best: Group[] | null = null;
  let bestSaving = cost(GROUP_LEGEND) + 1;
  let bestLength = Infinity;
  for (const by of candidates) {
    if (changes.get(by)![n - 1] === n - 1) continue; // no two entries in a row alike
    const runs: [number, number][] = [];
    const ids = table.ids[by];
    for (let i = 0; i < n; i++) {
      if (i > 0 && ids[i] === ids[i - 1]) runs[runs.length - 1][1] = i + 1;
      else runs.push([i, i + 1]);
    }
    // The field grouped by first, then the others alike in every run (a window's name and
    // placements), then those alike in this one (its panes' folder, if they share it).
    const always = [
      by,
      ...candidates.filter((k) => k !== by && runs.every(([start, end]) => alikeIn(k, start, end))),
    ];
    const rest = candidates.filter((k) => !always.includes(k));
    const groups = runs.map(([start, end]) => ({
      start,
      end,
      keys: end - start === 1 ? always : [...always, ...rest.filter((k) => alikeIn(k, start, end))],
    }));
    let saving = 0;
    let length = 0;
    for (const g of groups) {
      let line = 0;
      for (const k of g.keys) line += table.cost(k, g.start);
      saving += (g.end - g.start - 1) * line - GROUP_LINE_BYTES;
      length += table.cost(by, g.start);
    }
    // Fields that make the same runs save alike: the one with the shortest values is grouped
    // by (a window's id rather than its folder).
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
  const n = rows.length;
  const table = new Table(rows);
  const fields = table.keys.map((_, j) => j);
  const head: string[] = [];
  const isShared = fields.map((j) => {
    const column = table.text[j];
    const first = column[0];
    if (first === undefined) return false;
    for (let i = 1; i < n; i++) if (column[i] !== first) return false;
    return true;
  });

  const placed = placementFields(rows, table.keys);
  if (placed !== null) {
    const legend = placementLegend(placed.keys, placed.shape);
    let saving = -cost(legend);
    const compact: [number, number, string][] = [];
    for (const k of placed.keys) {
      const j = table.keys.indexOf(k);
      for (let i = 0; i < n; i++) {
        const list = rows[i][k];
        if (!Array.isArray(list) || list.length === 0) continue;
        const text = placementsText(list);
        if (i === 0 || !isShared[j]) saving += cost(table.text[j][i]!) - cost(text);
        compact.push([j, i, text]);
      }
    }
    if (saving > 0) {
      head.push(legend);
      for (const [j, i, text] of compact) table.text[j][i] = text;
    }
  }
  table.number();

  const shared = fields.filter((j) => isShared[j]);
  if (shared.length) head.push(EVERY_ENTRY + shared.map((j) => table.pair(j, 0)).join(" "));

  // Flags at their usual value (the more common one; false on a tie), where that saves.
  const usual = new Map<number, boolean>();
  let flagSaving = 0;
  for (const j of fields) {
    const k = table.keys[j];
    if (isShared[j] || !rows.every((r) => typeof r[k] === "boolean")) continue;
    const trues = rows.filter((r) => r[k] === true).length;
    const value = trues * 2 > n;
    const times = value ? trues : n - trues;
    if (times < 2) continue;
    usual.set(j, value);
    flagSaving += times * cost(`${table.keyTexts[j]}=${value}`);
  }
  const unless = UNLESS_SAID +
    [...usual].map(([j, v]) => `${table.keyTexts[j]}=${v}`).join(" ");
  if (usual.size && flagSaving > cost(unless) + 1) head.push(unless);
  else usual.clear();

  const candidates = fields.filter((j) =>
    !isShared[j] && !usual.has(j) && table.ids[j].every((id) => id >= 0)
  );
  const groups = groupsOf(table, candidates, n) ?? [{ start: 0, end: n, keys: [] }];
  if (groups.length > 1) head.push(GROUP_LEGEND);

  const lines = head.map((line) => indent + line);
  for (const g of groups) {
    if (g.keys.length) {
      lines.push(`${indent}+ ${g.keys.map((j) => table.pair(j, g.start)).join(" ")}`);
    }
    const own = fields.filter((j) => !isShared[j] && !g.keys.includes(j));
    for (let i = g.start; i < g.end; i++) {
      const pairs: string[] = [];
      for (const j of own) {
        if (table.ids[j][i] < 0) continue;
        if (usual.has(j) && rows[i][table.keys[j]] === usual.get(j)) continue;
        pairs.push(table.pair(j, i));
      }
      lines.push(`${indent}${entryLine(pairs.join(" "))}`, ...blockLines(rows[i], indent));
    }
  }
  return lines;
}
