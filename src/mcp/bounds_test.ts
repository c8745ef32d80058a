import assert from "node:assert/strict";
import {
  boundCompletions,
  boundMetadata,
  byteLength,
  cutJsonString,
  cutString,
  escapedOnWire,
  fitPlacements,
  jsonStringBytes,
  MAX_METADATA_BYTES,
  SEPARATORS_AND_BIDI,
  wireJson,
} from "./bounds.ts";

const pieces = [
  "a",
  "é",
  "日",
  "🙂",
  "\ud83d",
  "\ude42",
  "\u0000",
  "\u07ff",
  "\u0800",
  "\uffff",
  " ",
];

function randomText(next: () => number): string {
  return Array.from({ length: next() % 30 }, () => pieces[next() % pieces.length]).join("");
}

function rng(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
}

Deno.test("byteLength counts exactly what TextEncoder writes, lone surrogates included", () => {
  const next = rng(7);
  const encoder = new TextEncoder();
  for (let i = 0; i < 2000; i++) {
    const text = randomText(next);
    assert.equal(byteLength(text), encoder.encode(text).length, JSON.stringify(text));
  }
  // All ASCII, and ASCII up to a character of each width, a pair and lone halves.
  for (const text of ["", "abc", '{"a":1}\x7f', "ab\x80", "ab日", "ab🙂c", "a\uD800", "a\uDC00b"]) {
    assert.equal(byteLength(text), encoder.encode(text).length, JSON.stringify(text));
  }
});

Deno.test("cutString keeps whole characters within the bound and counts the rest", () => {
  const next = rng(11);
  const encoder = new TextEncoder();
  for (let i = 0; i < 2000; i++) {
    const text = randomText(next);
    const max = next() % 40;
    const cut = cutString(text, max);
    const whole = encoder.encode(text).length;
    if (whole <= max) {
      assert.deepEqual(cut, { text, omittedBytes: 0 });
      continue;
    }
    const kept = encoder.encode(cut.text).length;
    assert.ok(kept <= max, JSON.stringify({ text, max }));
    assert.ok(kept > max - 4, "cut at the last character boundary");
    assert.equal(kept + cut.omittedBytes, whole);
  }
});

Deno.test("cutJsonString keeps the longest start that fits as JSON, whole characters only", () => {
  const next = rng(13);
  const pieces2 = [...pieces, '"', "\\", "\x01", "🙂🙂🙂"];
  for (let i = 0; i < 2000; i++) {
    const text = Array.from({ length: next() % 40 }, () => pieces2[next() % pieces2.length])
      .join("");
    const max = next() % 60;
    const cut = cutJsonString(text, max);
    assert.ok(text.startsWith(cut.text), JSON.stringify({ text, max }));
    assert.ok(jsonStringBytes(cut.text) <= max, JSON.stringify({ text, max }));
    assert.equal(byteLength(cut.text) + cut.omittedBytes, byteLength(text));
    if (cut.text === text) continue;
    // The next character (both halves of a pair) would not have fit.
    const rest = text.slice(cut.text.length);
    const nextChar = String.fromCodePoint(rest.codePointAt(0)!);
    const more = rest.startsWith(nextChar) ? nextChar : rest[0];
    assert.ok(jsonStringBytes(cut.text + more) > max, JSON.stringify({ text, max, cut }));
  }
});

Deno.test("boundCompletions: whole values only, at most 100, within 16 KB", () => {
  assert.deepEqual(boundCompletions(["a", "b"]), ["a", "b"]);
  const many = Array.from({ length: 500 }, (_, i) => `v${i}`);
  assert.equal(boundCompletions(many).length, 100);
  const long = Array.from({ length: 100 }, (_, i) => `${i}${"x".repeat(900)}`);
  const kept = boundCompletions(long);
  assert.ok(kept.length > 0 && kept.length < 100);
  assert.ok(JSON.stringify(kept).length <= 16_384);
  assert.deepEqual(kept, long.slice(0, kept.length), "leading values, whole");
  assert.deepEqual(boundCompletions(["x".repeat(5_000), "ok"]), ["ok"], "an overlong one left out");
});

Deno.test("boundMetadata cuts each field by what it takes as JSON, and counts the UTF-8 bytes cut", () => {
  // Each of these takes 2 048 bytes or less as UTF-8, and two to six times that as JSON.
  const fields = {
    cwd: `/${"\x01".repeat(2_000)}`,
    title: '"'.repeat(2_100),
    name: "\\".repeat(2_100),
    emoji: "🙂".repeat(600),
    plain: "x".repeat(100),
  };
  const bounded = boundMetadata({ id: 1, ...fields }, ["cwd", "title", "name", "emoji", "plain"]);
  let cut = 0;
  for (const key of ["cwd", "title", "name", "emoji", "plain"] as const) {
    const kept = bounded[key];
    assert.ok(jsonStringBytes(kept) <= MAX_METADATA_BYTES, `${key}: ${jsonStringBytes(kept)}`);
    assert.ok(fields[key].startsWith(kept), `${key} is cut at its end`);
    assert.ok(kept.isWellFormed(), `${key}: no half of a surrogate pair`);
    cut += byteLength(fields[key]) - byteLength(kept);
  }
  assert.equal(bounded.plain, fields.plain);
  assert.equal(bounded.emoji, "🙂".repeat(512), "as many whole characters as fit");
  assert.equal(bounded.id, 1);
  assert.equal(bounded.metadataComplete, false);
  assert.equal(bounded.omittedMetadataBytes, cut);
  // A session name in placements likewise.
  const placed = fitPlacements(
    ["\x01", '"', "\\"].map((c, i) => ({ sessionId: `$${i}`, sessionName: c.repeat(2_100) })),
  );
  assert.equal(placed.placements.length, 3);
  for (const p of placed.placements) {
    assert.ok(jsonStringBytes(p.sessionName) <= MAX_METADATA_BYTES, p.sessionId);
  }
});

Deno.test("SEPARATORS_AND_BIDI: every invisible character of the BMP but an emoji's joiner and presentation selectors", () => {
  // Format (Cf) and default-ignorable characters show as nothing or change how others show: a
  // name ending in one reads as the name without it. The zero-width joiner and the two
  // presentation selectors are an emoji's own spelling (👩‍💻, ❤️), left to render_value.ts.
  const invisible = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
  const emoji = new Set([0x200d, 0xfe0e, 0xfe0f]);
  const inClass = new RegExp(`[${SEPARATORS_AND_BIDI}]`);
  const wrong: string[] = [];
  for (let c = 0x80; c <= 0xffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const ch = String.fromCharCode(c);
    const want = c === 0x2028 || c === 0x2029 || (invisible.test(ch) && !emoji.has(c));
    if (inClass.test(ch) !== want) wrong.push(`U+${c.toString(16)}`);
  }
  assert.deepEqual(wrong, []);
});

Deno.test("wireJson escapes what escapedOnWire says, and the value reads back", () => {
  for (let c = 0x80; c <= 0xffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const ch = String.fromCharCode(c);
    const escaped = wireJson(ch) === `"\\u${c.toString(16).padStart(4, "0")}"`;
    assert.equal(escapedOnWire(c), escaped, `U+${c.toString(16)}`);
    assert.equal(jsonStringBytes(ch), escaped ? 6 : byteLength(ch), `U+${c.toString(16)}`);
    assert.equal(JSON.parse(wireJson(`a${ch}b`)), `a${ch}b`);
  }
  assert.equal(wireJson("a\u200bb\ufeff"), String.raw`"a\u200bb\ufeff"`);
  assert.equal(wireJson("👩‍💻 ❤️"), JSON.stringify("👩‍💻 ❤️"), "an emoji's spelling as it is");
});
