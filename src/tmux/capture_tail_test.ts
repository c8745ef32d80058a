/**
 * RowKeeper, which holds only the last rows of a streamed capture that a reply can hold: what
 * the reply then says (tailLines over the rows held, the rest counted) is exactly what it says
 * over every row read, and what is held stays within the bound and a row.
 */

import assert from "node:assert/strict";
import { tailLines } from "../mcp/bounds.ts";
import { lastWrittenIndex, splitLines, trimRow, utf8Length } from "./capture.ts";
import { RowKeeper } from "./capture_tail.ts";
import { prng, type Rand } from "../../tests/helpers/prng.ts";

const encoder = new TextEncoder();

/** A row as `capture-pane -N` may print it: of every kind a pane can show, and some it cannot. */
function row(r: Rand): Uint8Array {
  const kinds: (() => string | Uint8Array)[] = [
    () => "",
    () => " ".repeat(1 + r.int(30)),
    () => `plain ${r.int(1000)}${" ".repeat(r.int(4))}`,
    () => `e${"\u0301".repeat(10)}`.repeat(1 + r.int(60)),
    () => "日本🙂 ".repeat(1 + r.int(20)),
    () => `\x1b[31m${"x".repeat(r.int(50))}\x1b[0m   `,
    () => "\x1b[0m   ",
    () => '\t"quoted" \\ '.repeat(1 + r.int(5)),
    // Bytes that are no UTF-8, and a character cut short: decoded, then counted.
    () => Uint8Array.from([0x61, 0xff, 0xfe, 0x20, 0xe6, 0x97, 0x20, 0x20]),
    () => "w".repeat(500 + r.int(3_000)),
  ];
  const made = r.pick(kinds)();
  return typeof made === "string" ? encoder.encode(made) : made;
}

Deno.test("RowKeeper: the reply over the rows held is the reply over every row, within its bound", () => {
  for (let seed = 1; seed <= 400; seed++) {
    const r = prng(seed);
    const rows = Array.from({ length: r.int(120) }, () => row(r));
    const all = new Uint8Array(rows.reduce((n, b) => n + b.length + 1, 0));
    let at = 0;
    for (const b of rows) {
      all.set(b, at);
      all[at + b.length] = 0x0a;
      at += b.length + 1;
    }
    // Rows from somewhere in history, or from the screen's top: screen rows (0 and below) are
    // padding when blank at the end.
    const top = r.chance(0.3) ? 0 : -r.int(150);
    const keepBytes = r.pick([0, 1, 40, 300, 2_000, 46_000]);
    const keeper = new RowKeeper(keepBytes);
    keeper.top = top;
    // Split anywhere, inside characters too.
    for (let from = 0; from < all.length;) {
      const size = r.chance(0.3) ? 1 + r.int(3) : 1 + r.int(5_000);
      keeper.push(all.subarray(from, from + size));
      from += size;
    }
    const kept = keeper.finish("%1");
    const label = `seed ${seed}`;
    assert.equal(kept.total, rows.length, label);
    assert.equal(kept.dropped.lines + kept.rows.length, rows.length, label);

    const whole = splitLines(all);
    const lines = whole.slice(0, lastWrittenIndex(whole, top) + 1).map(trimRow);
    const held = kept.rows.slice(0, lastWrittenIndex(kept.rows, top + kept.dropped.lines) + 1)
      .map(trimRow);
    for (const budget of [keepBytes, Math.floor(keepBytes / 2)]) {
      for (const maxLines of [1, 7, 10_000]) {
        assert.deepEqual(
          tailLines(held, maxLines, budget, kept.dropped),
          tailLines(lines, maxLines, budget),
          `${label}, budget ${budget}, maxLines ${maxLines}`,
        );
      }
    }
    // Held: the written rows after the first within the bound (blank screen rows at the end
    // wait for a written row to count).
    const written = held.length;
    const after = held.slice(1, written).reduce((n, line) => n + utf8Length(line) + 1, 0);
    assert.ok(after <= keepBytes, `${label}: ${after} bytes held past the first row`);
  }
});

Deno.test("RowKeeper: a read that ends inside a row is refused", () => {
  const keeper = new RowKeeper(100);
  keeper.push(encoder.encode("one\ntw"));
  assert.throws(() => keeper.finish("%3"), /tmux ended the rows of %3 inside one/);
});
