/**
 * How many columns tmux draws a character in, asked of the tmux server itself and kept per
 * server, so that a cursor's column can be turned into an index into a captured row.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { execFast } from "../tmux/control.ts";

/**
 * Widths tmux gives characters, by server (its address and pid), learnt from it: the width of a
 * character is the build's to say. A tmux built with utf8proc takes it from there, one built
 * without (tmux 3.3a on most Linux systems) from the C library's wcwidth, and they disagree on
 * tens of thousands of characters: glibc draws many emoji one column wide (🛠 U+1F6E0, East
 * Asian Width "neutral"), and the vowels and finals of decomposed Hangul (NFD, as macOS names
 * files) in no column of their own. A table kept here would put a column inside the wrong
 * character on some build.
 */
const WIDTHS = new Map<string, Map<string, number>>();
/** Servers whose widths are kept (the least recently asked is forgotten first). */
const WIDTH_SERVERS = 8;
/** Characters whose width is kept per server (beyond it the map starts again). */
const WIDTHS_KEPT = 4_096;
/** Characters asked about in one tmux call (its command line stays well under tmux's limit). */
const WIDTHS_PER_CALL = 200;

/**
 * The index in `row` (a row as tmux captured it) of the cell at `column`, with each character
 * as wide as the tmux server at `ctx` draws it (zero-width ones share the cell before them);
 * past the row's end the blanks after it are counted on. ASCII needs no call; other characters
 * are asked about once per server (see {@link WIDTHS}). Where tmux cannot say (the server went
 * meanwhile), a character counts one column.
 */
export async function cellIndex(
  ctx: TmuxContext,
  serverPid: number,
  row: string,
  column: number,
): Promise<number> {
  let known: Map<string, number> | null = null;
  let failed = false;
  let i = 0;
  let at = 0;
  while (i < row.length) {
    const cp = row.codePointAt(i) as number;
    const size = cp > 0xffff ? 2 : 1;
    let width = 1;
    if (cp >= 0x80) {
      known ??= serverWidths(ctx, serverPid);
      const ch = row.slice(i, i + size);
      if (!failed && !known.has(ch)) failed = !await learnWidths(ctx, known, row, i);
      width = known.get(ch) ?? 1;
    }
    if (at + width > column) return i;
    at += width;
    i += size;
  }
  return i + Math.max(0, column - at);
}

/** The widths known for the server at `ctx` of pid `serverPid` (a new map the first time). */
function serverWidths(ctx: TmuxContext, serverPid: number): Map<string, number> {
  const a = ctx.address;
  const key = JSON.stringify([a.host ?? "", a.socketPath ?? "", a.socketName ?? "", serverPid]);
  let known = WIDTHS.get(key);
  if (known) WIDTHS.delete(key);
  else known = new Map();
  WIDTHS.set(key, known);
  while (WIDTHS.size > WIDTH_SERVERS) WIDTHS.delete(WIDTHS.keys().next().value as string);
  return known;
}

/**
 * Asks tmux the widths of the characters of `row` from `from` on that `known` lacks (up to
 * {@link WIDTHS_PER_CALL}): `#{w:}` of each as a literal, which tmux measures with the same
 * function it draws with. Only characters outside ASCII are sent, none of them special in a
 * format. False, learning nothing, when tmux fails or answers otherwise than asked.
 */
async function learnWidths(
  ctx: TmuxContext,
  known: Map<string, number>,
  row: string,
  from: number,
): Promise<boolean> {
  const ask = new Set<string>();
  for (const ch of row.slice(from)) {
    if (ch.codePointAt(0) as number < 0x80 || known.has(ch)) continue;
    ask.add(ch);
    if (ask.size >= WIDTHS_PER_CALL) break;
  }
  const chars = [...ask];
  const format = chars.map(widthOf).join(",");
  const result = await execFast(
    ctx.runner,
    ctx.address,
    ["display-message", "-p", format],
    ctx.readOptions(),
  ).catch(() => null);
  const widths = result?.code === 0
    ? new TextDecoder().decode(result.stdout).trim().split(",")
    : [];
  if (widths.length !== chars.length || !widths.every((w) => /^(\d+|-)$/.test(w))) return false;
  if (known.size + chars.length > WIDTHS_KEPT) known.clear();
  // "-": a character tmux cannot measure, which it never puts in a cell (it drops it).
  chars.forEach((ch, k) => known.set(ch, widths[k] === "-" ? 0 : Number(widths[k])));
  return true;
}

/**
 * The format that prints the width of `ch` (one character outside ASCII), or "-" when tmux
 * cannot measure it. tmux 3.3a's `#{w:}` loops for ever on a character its C library gives no
 * width (a code point unassigned in its tables): the whole server stops. Trimming (`#{=3:}`)
 * drops such a character instead, so `x` followed by it trims to `x` alone, and only a
 * character that survives the trim is measured (tmux expands only the branch it picks).
 */
export function widthOf(ch: string): string {
  return `#{?#{==:#{=3:#{l:x${ch}}},x},-,#{w:#{l:${ch}}}}`;
}
