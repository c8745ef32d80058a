import assert from "node:assert/strict";
import { compileRegex, loadRegexEngine } from "../mcp/pattern.ts";
import { MatchPacer } from "../mcp/pattern_pacer.ts";
import { compilePatterns } from "./wait_patterns.ts";

Deno.test("a regex's lastEnd is the end of the match that ends last, whatever the pattern", async () => {
  await loadRegexEngine();
  const end = (pattern: string, line: string, matchCase = false) =>
    compileRegex(pattern, matchCase, "p").lastEnd(line);
  assert.equal(end("o", "hello wOrld"), 8);
  assert.equal(end("o", "hello wOrld", true), 5);
  assert.equal(end("\\d+%", "a 5% b 70%"), 10);
  assert.equal(end("^progress", "progress 50%"), 8);
  assert.equal(end("x|y", "none"), -1);
  assert.equal(end("o", "🙂o🙂o🙂"), 6);
  // Alternatives and a group of its own, an unclosed \Q: wrapped as one pattern.
  assert.equal(end("a|b", "ab--"), 2);
  assert.equal(end("(?i)A", "xa"), 2);
  assert.equal(end("\\Qa)b", "a)b."), 3);
  assert.equal(end("\\Qa\\", "a\\z"), 2);
});

/** Whether some match of `source` (JavaScript) in `line` starts before `hi` and ends after `lo`. */
function bruteReaches(source: string, line: string, from: number, to: number): boolean {
  const n = line.length;
  const lo = from <= 0 ? -1 : from;
  const hi = to >= n ? n + 1 : to;
  for (let s = 0; s <= n; s++) {
    for (let e = s; e <= n; e++) {
      if (e <= lo || s >= hi) continue;
      // The match [s, e) exactly, with the whole line around it (for ^, $ and \b).
      if (new RegExp(`^[\\s\\S]{${s}}(?:${source})(?=[\\s\\S]{${n - e}}$)`).test(line)) return true;
    }
  }
  return false;
}

Deno.test("reaches: a match counts when it takes in some of [from, to), regex or literal", async () => {
  const sources = [
    "a",
    "ab",
    "ba",
    "a b",
    "a+",
    "b*",
    "a?",
    "a|ab|aba",
    "(ab)+",
    "a.b",
    "[ab]{2}",
    ".*b",
    "b.*",
    "^a",
    "b$",
    "^",
    "$",
    "\\ba",
    "a\\b",
    "\\B",
    "(a|ab)( |b a)?",
  ];
  const regexes = await compilePatterns(sources, true, true, "p");
  const literals = await compilePatterns(["a", "ab", "a b", "aa", "bab"], false, true, "p");
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let round = 0; round < 400; round++) {
    const line = Array.from({ length: next(13) }, () => "ab "[next(3)]).join("");
    const from = next(line.length + 1);
    const to = from + next(line.length - from + 1);
    for (const p of [...regexes, ...literals]) {
      const source = regexes.includes(p) ? p.text : p.text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      assert.equal(
        await p.reaches(line, from, to, new MatchPacer()),
        bruteReaches(source, line, from, to),
        `${JSON.stringify(p.text)} in ${JSON.stringify(line)} [${from}, ${to})`,
      );
    }
  }
});

Deno.test("reaches in pieces: a match no longer than their overlap is found as on the whole line", async () => {
  // Pieces of 8 characters overlapping by 4 (the least call work); the patterns that match 2
  // characters at most fit the overlap, the others may lie across two pieces.
  const sources = ["a", "ab", "ba", "a?", "[ab]{2}", "^a", "b$", "^", "$", "\\ba", "a\\b", "\\B"];
  const longer = ["a b", "a+", "b*", ".*b", "b.*", "(ab)+", "a|ab|aba", "(a|ab)( |b a)?"];
  const fitting = await compilePatterns(sources, true, true, "p", 1);
  const others = await compilePatterns(longer, true, true, "p", 1);
  assert.ok(fitting.every((p) => p.cost > 0));
  let seed = 11;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let round = 0; round < 300; round++) {
    const line = Array.from({ length: next(40) }, () => "ab "[next(3)]).join("");
    const from = next(line.length + 1);
    const to = from + next(line.length - from + 1);
    for (const p of [...fitting, ...others]) {
      const pacer = new MatchPacer();
      const found = await p.reaches(line, from, to, pacer);
      const truth = bruteReaches(p.text, line, from, to);
      const what = `${JSON.stringify(p.text)} in ${JSON.stringify(line)} [${from}, ${to})`;
      if (fitting.includes(p)) assert.equal(found, truth, what);
      else if (found) assert.ok(truth, `${what}: found, and none there`);
      else if (truth) assert.ok(pacer.piecedLines > 0, `${what}: missed, and not said`);
      // Whatever a pattern finds, any match at all in the line is found as well.
      const pacer2 = new MatchPacer();
      const any = await p.test(line, pacer2);
      const anyTruth = bruteReaches(p.text, line, 0, line.length);
      if (fitting.includes(p)) assert.equal(any, anyTruth, `${what}: test`);
      else if (any) assert.ok(anyTruth, `${what}: test found none there`);
      else if (anyTruth) assert.ok(pacer2.piecedLines > 0, `${what}: test missed, and not said`);
    }
  }
});

Deno.test("reaches: old text on either side of a spinner or a counter never counts", async () => {
  const [literal] = await compilePatterns(["building foo"], false, false, "p");
  const regexes = await compilePatterns(
    ["b\\w+ foo$", "^\\W b", "\\d+% d", "done"],
    true,
    false,
    "p",
  );
  const work = new MatchPacer();
  assert.equal(await literal.reaches("- building foo", 0, 1, work), false);
  assert.equal(await literal.reaches("- building foo", 0, 14, work), true);
  assert.equal(await literal.reaches("x building foo", 0, 3, work), true);
  const [tail, head, across, done] = regexes;
  assert.equal(await tail.reaches("- building foo", 0, 1, work), false);
  assert.equal(await head.reaches("- building foo", 0, 1, work), true);
  assert.equal(await across.reaches("51% done", 1, 2, work), true);
  assert.equal(await done.reaches("51% done", 1, 2, work), false);
  // A match before the part, and another after it, with none across: not taken in.
  assert.equal(await done.reaches("done 51% done", 6, 7, work), false);
  assert.equal(await across.reaches("9% done 51% done", 9, 10, work), true);
  // Pairs: indices inside one are taken as the whole character.
  const [o, smileO, oSmile] = await compilePatterns(
    ["o", "\u{1F642}o", "o\u{1F642}"],
    true,
    true,
    "p",
  );
  const pairs = "\u{1F642}o\u{1F642}o\u{1F642}";
  for (const [from, to] of [[3, 5], [4, 4], [4, 5], [3, 4]]) {
    assert.equal(await o.reaches(pairs, from, to, work), false, `o [${from}, ${to})`);
    assert.equal(await smileO.reaches(pairs, from, to, work), true, `🙂o [${from}, ${to})`);
    assert.equal(await oSmile.reaches(pairs, from, to, work), true, `o🙂 [${from}, ${to})`);
  }
});

Deno.test("reaches: a regex decides within a bounded number of passes over the row", async () => {
  // Hundreds of old matches before the part, one after it: decided exactly.
  const [ab] = await compilePatterns(["ab"], true, true, "p");
  const row = "ab ".repeat(500) + "X ab";
  let work = new CountingPacer();
  assert.equal(await ab.reaches(row, 1500, 1501, work), false);
  assert.ok(work.units > 0, "the searches are charged");
  // A pattern whose every search runs to the row's end, at every start before the part: past
  // a few passes' worth, the one-pass answer (a match ends after the part's start) stands.
  const [slow] = await compilePatterns(["a[^z]*z|a"], true, true, "p");
  const long = "a".repeat(3_000) + "Xa";
  work = new CountingPacer();
  assert.equal(await slow.reaches(long, 3_000, 3_001, work), true);
  const pass = (long.length + 32) * slow.cost;
  assert.ok(work.units <= Math.max(8 * pass, 1 << 22) + 2 * pass, `${work.units}`);
});

/** A pacer that sums the work it was told of (characters and 32 more, times the cost). */
class CountingPacer extends MatchPacer {
  units = 0;
  override step(chars: number, cost: number): Promise<void> | null {
    this.units += (chars + 32) * cost;
    return super.step(chars, cost);
  }
}
