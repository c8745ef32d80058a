import assert from "node:assert/strict";
import {
  decodeBytes,
  escapeFormat,
  escapeTrailingSemicolon,
  newGuard,
  parseRecords,
  randomHex,
  recordFormat,
  UndecodableCount,
} from "./format.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("decodeBytes keeps valid UTF-8 exactly and shows invalid bytes as U+FFFD", () => {
  assert.equal(decodeBytes(enc("日本🙂 e\u0301")), "日本🙂 e\u0301");
  assert.equal(decodeBytes(new Uint8Array([0x61, 0xff, 0x62])), "a\uFFFDb");
  // The byte and the text `\xFF` (which the byte once read as) read apart.
  assert.notEqual(decodeBytes(new Uint8Array([0x70, 0xff])), decodeBytes(enc("p\\xFF")));
  assert.equal(decodeBytes(enc("p\\xFF")), "p\\xFF");
  // A truncated sequence: one U+FFFD, as every UTF-8 decoder shows it; the valid text kept.
  assert.equal(decodeBytes(new Uint8Array([0xe6, 0x97, 0x41])), "\uFFFDA");
  // Overlong encoding and surrogates are invalid UTF-8: each byte replaced.
  assert.equal(decodeBytes(new Uint8Array([0xc0, 0xaf])), "\uFFFD\uFFFD");
  assert.equal(decodeBytes(new Uint8Array([0xed, 0xa0, 0x80])), "\uFFFD\uFFFD\uFFFD");
  assert.equal(decodeBytes(new Uint8Array([0xf0, 0x9f, 0x99, 0x82, 0x80])), "🙂\uFFFD");
  // A byte order mark is text, kept.
  assert.equal(decodeBytes(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])), "\uFEFFA");
});

Deno.test("parseRecords splits on the guard only, so tabs and newlines in values survive", () => {
  const g = newGuard();
  const raw = `${g}R${g}Fa\tb${g}Fline1\nline2${g}E\n${g}R${g}F;#{x}${g}F${g}E\n`;
  assert.deepEqual(parseRecords(enc(raw), g, 2), [["a\tb", "line1\nline2"], [";#{x}", ""]]);
  assert.throws(() => parseRecords(enc(raw), g, 3), /fields/);
  // A value holding a different guard is just text.
  const other = newGuard();
  assert.notEqual(other, g);
  assert.deepEqual(parseRecords(enc(`${g}R${g}F${other}F${g}E`), g), [[`${other}F`]]);
});

Deno.test("parseRecords decodes each field exactly whether or not the output is valid UTF-8", () => {
  const g = newGuard();
  const valid = enc(`${g}R${g}F日本🙂${g}Fa${g}E\n`);
  assert.deepEqual(parseRecords(valid, g, 2), [["日本🙂", "a"]]);
  const head = enc(`${g}R${g}F日本🙂${g}Fx`);
  const tail = enc(`y${g}E\n`);
  const invalid = new Uint8Array([...head, 0xff, ...tail]);
  assert.deepEqual(parseRecords(invalid, g, 2), [["日本🙂", "x\uFFFDy"]]);
});

Deno.test("recordFormat has no # of its own, so it is inert in a tmux format", () => {
  const g = newGuard();
  assert.ok(!g.includes("#"));
  assert.equal(recordFormat(g, ["#{a}", "#{b}"]), `${g}R${g}F#{a}${g}F#{b}${g}E`);
});

Deno.test("escapeFormat doubles # so #{...} and #(...) stay text", () => {
  assert.equal(escapeFormat("#(touch x) #{pane_id} ##"), "##(touch x) ##{pane_id} ####");
});

Deno.test("escapeTrailingSemicolon keeps a final ; from ending the command", () => {
  assert.equal(escapeTrailingSemicolon("echo a;"), "echo a\\;");
  assert.equal(escapeTrailingSemicolon("a;b"), "a;b");
  assert.equal(escapeTrailingSemicolon("x\\;"), "x\\\\;");
});

Deno.test("randomHex: fresh hex of the asked length on every call, across refills of its pool", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2_000; i++) {
    const bytes = 1 + (i % 17);
    const hex = randomHex(bytes);
    assert.match(hex, new RegExp(`^[0-9a-f]{${2 * bytes}}$`));
    if (bytes >= 8) {
      assert.ok(!seen.has(hex), "no value comes twice");
      seen.add(hex);
    }
  }
  // Every byte value shows up in the first position over many draws (no stuck bytes).
  const firsts = new Set(Array.from({ length: 20_000 }, () => randomHex(1)));
  assert.equal(firsts.size, 256);
  assert.throws(() => randomHex(5_000), RangeError);
});

Deno.test("UndecodableCount: the bytes no well-formed UTF-8 sequence holds, split anywhere", () => {
  const cases: [number[], number][] = [
    [[0x61, 0x62], 0],
    [[0xe2, 0x82, 0xac], 0],
    [[0xff, 0xfe], 2],
    [[0xe2, 0x82], 2],
    [[0xe2, 0x82, 0x61], 2],
    [[0xed, 0xa0, 0x80], 3],
    [[0xf0, 0x9f, 0x99, 0x82, 0xc0], 1],
  ];
  for (const [bytes, want] of cases) {
    for (let cut = 0; cut <= bytes.length; cut++) {
      const count = new UndecodableCount();
      count.push(new Uint8Array(bytes.slice(0, cut)));
      count.push(new Uint8Array(bytes.slice(cut)));
      assert.equal(count.finish(), want, `${bytes} cut at ${cut}`);
    }
    // decodeBytes gives them as U+FFFD, and only them.
    const text = decodeBytes(new Uint8Array(bytes));
    assert.equal(text.includes("\uFFFD"), want > 0);
  }
});
