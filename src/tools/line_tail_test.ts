/**
 * LineTail against the whole text: tailLines of the lines it keeps, given the ones before as
 * counted, is tailLines of the whole text split, however the bytes come, whatever they hold.
 */
import assert from "node:assert/strict";
import { prng } from "../../tests/helpers/prng.ts";
import { tailLines } from "../mcp/bounds.ts";
import { decodeBytes } from "../tmux/format.ts";
import { LineTail } from "./line_tail.ts";

const PIECES = [
  "a",
  "word ",
  "\n",
  "\n\n",
  "\r\n",
  "é",
  "🙂",
  "e\u0301\u0301",
  '"\\',
  "\t",
  "\x1b[31m",
  "x".repeat(300),
];
/** Bytes no UTF-8 text holds: a lone continuation, a cut sequence, an overlong form. */
const RAW = [[0x80], [0xe2, 0x82], [0xc0, 0xaf], [0xf0, 0x9f, 0x99]];

Deno.test("LineTail keeps what tailLines keeps of the whole text, however the bytes come", () => {
  const rand = prng(20261206);
  const encoder = new TextEncoder();
  for (let n = 0; n < 3_000; n++) {
    const parts: number[] = [];
    const count = rand.int(80);
    for (let i = 0; i < count; i++) {
      if (rand.chance(0.05)) parts.push(...rand.pick(RAW));
      else parts.push(...encoder.encode(rand.pick(PIECES)));
    }
    const bytes = new Uint8Array(parts);
    const keep = rand.pick([0, 1, 5, 40, 400, 100_000]);
    const budget = rand.int(keep + 1);
    const maxLines = rand.chance(0.2) ? rand.int(5) : Number.MAX_SAFE_INTEGER;
    const tail = new LineTail(keep);
    for (let at = 0; at < bytes.length;) {
      const next = Math.min(bytes.length, at + 1 + rand.int(30));
      tail.push(bytes.slice(at, next));
      at = next;
    }
    const { lines, before } = tail.finish();
    const all = decodeBytes(bytes).split("\n");
    const label = `case ${n} (keep ${keep}, budget ${budget}, ${bytes.length} bytes)`;
    assert.equal(before.lines + lines.length, all.length, `${label}: lines`);
    assert.deepEqual(
      tailLines(lines, maxLines, budget, before),
      tailLines(all, maxLines, budget),
      label,
    );
  }
});

Deno.test("LineTail holds a reply's worth of one endless line, and of endless short ones", () => {
  for (const piece of ["x".repeat(1_000), "short\n", "🙂"]) {
    const tail = new LineTail(2_000);
    const chunk = new TextEncoder().encode(piece.repeat(50));
    for (let i = 0; i < 2_000; i++) tail.push(chunk);
    const { lines, before } = tail.finish();
    const held = lines.reduce((n, line) => n + line.length, 0);
    assert.ok(held <= 4_000 + piece.length * 50, `${JSON.stringify(piece.slice(0, 5))}: ${held}`);
    const whole = new TextEncoder().encode(piece.repeat(100_000));
    const total = before.bytes + lines.reduce((n, l) => n + new TextEncoder().encode(l).length, 0) +
      lines.length - 1;
    assert.equal(total, whole.length, "every byte counted");
  }
});
