import assert from "node:assert/strict";
import { prng, type Rand } from "../../tests/helpers/prng.ts";
import { inert, pastEscape } from "./resources.ts";

/** Reads inert's text back: the rule its doc states, written out independently. */
function readBack(shown: string): string {
  return shown.replace(
    /(\\+)(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4})?/g,
    (_all, run: string, escape: string | undefined) => {
      if (escape === undefined) return run;
      const half = "\\".repeat(Math.floor(run.length / 2));
      if (run.length % 2 === 0) return half + escape;
      return half + String.fromCharCode(parseInt(escape.slice(1), 16));
    },
  );
}

const ALPHABET = [
  "\\",
  "\\",
  "x",
  "u",
  "2",
  "0",
  "e",
  "7",
  "A",
  "E",
  "a",
  "1",
  "\u202e",
  "\x07",
  "\u2028",
  "\t",
  "\x9b",
];

function sample(rand: Rand, length: number): string {
  let s = "";
  for (let i = 0; i < length; i++) s += ALPHABET[rand.int(ALPHABET.length)];
  return s;
}

Deno.test("inert: a pane's own escape-like text never reads as a control it did not hold", () => {
  assert.equal(inert("a\u202eb"), "a\\u202eb");
  assert.equal(inert("a\\u202eb"), "a\\\\u202eb");
  assert.equal(inert("\\x07 and \x07"), "\\\\x07 and \\x07");
  assert.equal(inert("\\\u202e"), "\\\\\\u202e");
  // In hex of either case, as a reader takes both.
  assert.equal(inert("\\u202E \\x1b \\x7f"), "\\\\u202E \\\\x1b \\\\x7f");
  // Backslashes before nothing that reads as an escape stay as they are.
  assert.equal(inert("C:\\path \\u20 \\xg1 \\n"), "C:\\path \\u20 \\xg1 \\n");
  assert.equal(inert("a\x1b[2Jb\x9b31mc\td\ne\x7f"), "a\\x1B[2Jb\\x9B31mc\td\ne\\x7F");
  const rand = prng(20261207);
  for (let i = 0; i < 3000; i++) {
    const text = sample(rand, 1 + rand.int(12));
    const shown = inert(text);
    assert.equal(readBack(shown), text, JSON.stringify({ text, shown }));
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(shown, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u202e]/);
  }
});

Deno.test("inert: a long run of backslashes costs one pass", () => {
  const text = `${"\\".repeat(200_000)}u202e`;
  assert.equal(inert(text).length, 400_005);
});

Deno.test("pastEscape: a kept end never starts inside an escape or a doubled run", () => {
  const rand = prng(7);
  for (let i = 0; i < 2000; i++) {
    const text = sample(rand, 1 + rand.int(14));
    const shown = inert(text);
    for (let start = 0; start <= shown.length; start++) {
      const kept = shown.slice(pastEscape(shown, start));
      assert.ok(
        text.endsWith(readBack(kept)),
        JSON.stringify({ text, shown, start, kept }),
      );
    }
  }
});
