import assert from "node:assert/strict";
import { ChainReader, indexOfBytes, LineSplitter } from "./chain.ts";
import { newGuard, recordFormat } from "./format.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("indexOfBytes finds a byte sequence as String.indexOf finds text", () => {
  const cases: [string, string, number][] = [
    ["abcabc", "bc", 0],
    ["abcabc", "bc", 2],
    ["abcabc", "cab", 0],
    ["abcabc", "abcd", 0],
    ["aaab", "aab", 0],
    ["\u0001x\u0001xR", "\u0001xR", 0],
    ["", "a", 0],
    ["abc", "c", 3],
  ];
  for (const [hay, needle, from] of cases) {
    assert.equal(indexOfBytes(enc(hay), enc(needle), from), hay.indexOf(needle, from), hay);
  }
});

/** What a chain prints: text (maybe unterminated), records framed by the guard, text... */
function sample(guard: string): { bytes: Uint8Array; text: string[]; records: string[][] } {
  const record = (fields: string[]) =>
    recordFormat(guard, fields).replace(/#\{[^}]*\}/g, "") + "\n";
  const out = `${record(["%1", "10"])}row one\n\u0001 not a guard \u0001\n${record(["0"])}` +
    `unterminated${record(["1"])}${record(["2"])}tail\n`;
  return {
    bytes: enc(out),
    text: ["row one\n\u0001 not a guard \u0001\n", "unterminated", "", "tail\n"],
    records: [["%1", "10"], ["0"], ["1"], ["2"]],
  };
}

Deno.test("ChainReader tells records from capture text, however the output is cut", () => {
  const guard = newGuard();
  const { bytes, text, records } = sample(guard);
  for (const size of [1, 2, 3, 7, 17, 64, bytes.length]) {
    const reader = new ChainReader(guard);
    const got: string[][] = [];
    const segments: string[] = [];
    let current = "";
    const take = (events: ReturnType<ChainReader["push"]>) => {
      for (const e of events) {
        if (e.record) {
          if (got.length > 0) segments.push(current);
          current = "";
          got.push(e.record);
        } else current += dec(e.data);
      }
    };
    for (let i = 0; i < bytes.length; i += size) take(reader.push(bytes.slice(i, i + size)));
    take(reader.finish());
    segments.push(current);
    assert.deepEqual(got, records, `chunks of ${size}`);
    assert.deepEqual(segments, text, `chunks of ${size}`);
  }
});

Deno.test("LineSplitter gives whole lines across chunks, and the unfinished last one at the end", () => {
  const input = enc("one\ntwo words\n\nthree");
  for (const size of [1, 2, 5, input.length]) {
    const lines: string[] = [];
    const splitter = new LineSplitter();
    for (let i = 0; i < input.length; i += size) {
      splitter.push(input.slice(i, i + size), (l) => lines.push(dec(l)));
    }
    splitter.finish((l) => lines.push(dec(l)));
    assert.deepEqual(lines, ["one", "two words", "", "three"], `chunks of ${size}`);
  }
});
