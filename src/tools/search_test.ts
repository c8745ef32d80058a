import assert from "node:assert/strict";
import { lineMatcher } from "./search.ts";

/** The plain definition: each row on its own, lowercased unless case matters. */
function naive(text: string, pattern: string, matchCase: boolean, last: number, max: number) {
  const rows = text.split("\n");
  const kept: { row: number; text: string }[] = [];
  let found = 0;
  for (let i = 0; i <= last && i < rows.length; i++) {
    const hit = matchCase
      ? rows[i].includes(pattern)
      : rows[i].toLowerCase().includes(pattern.toLowerCase());
    if (!hit) continue;
    found++;
    kept.push({ row: i, text: rows[i] });
    if (kept.length > max) kept.shift();
  }
  return { found, kept };
}

Deno.test("a literal is found over the whole text exactly as row by row", () => {
  const pieces = [
    "ab",
    "AB",
    "aB",
    "x",
    " ",
    "",
    "\n",
    "\n",
    "İ",
    "i̇",
    "é",
    "É",
    "🙂",
    "#{",
    ";",
    "\t",
  ];
  let seed = 42;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const patterns = ["ab", "AB", "b", "İ", "i", "É", "🙂", "a\nb", " ", "ab ab", "x\t"];
  for (let round = 0; round < 400; round++) {
    const text = Array.from({ length: next(40) }, () => pieces[next(pieces.length)]).join("");
    const rowCount = text.split("\n").length;
    for (const pattern of patterns) {
      for (const matchCase of [false, true]) {
        const last = next(3) === 0 ? next(rowCount) : rowCount - 1;
        const max = 1 + next(4);
        assert.deepEqual(
          lineMatcher(pattern, false, matchCase).match(text, last, max),
          naive(text, pattern, matchCase, last, max),
          JSON.stringify({ text, pattern, matchCase, last, max }),
        );
      }
    }
  }
});

Deno.test("a literal counts a row once, numbers rows from 0, keeps the last matches", () => {
  const m = lineMatcher("needle", false, false);
  const text = "needle needle\nnothing\n\nNEEDLE at the end";
  assert.deepEqual(m.match(text, 3, 5), {
    found: 2,
    kept: [{ row: 0, text: "needle needle" }, { row: 3, text: "NEEDLE at the end" }],
  });
  assert.deepEqual(m.match(text, 3, 1), {
    found: 2,
    kept: [{ row: 3, text: "NEEDLE at the end" }],
  });
  assert.deepEqual(m.match(text, 2, 5), { found: 1, kept: [{ row: 0, text: "needle needle" }] });
  assert.equal(m.matchesBlank, false);
  assert.deepEqual(lineMatcher("a\nb", false, true).match("a\nb", 1, 5), { found: 0, kept: [] });
});

Deno.test("a regex is about one row: ^, $ and \\s never reach across rows", () => {
  const text = "alpha\n\nbeta gamma\n";
  assert.deepEqual(lineMatcher("^$", true, false).match(text, 3, 10).kept.map((k) => k.row), [
    1,
    3,
  ]);
  assert.equal(lineMatcher("^$", true, false).matchesBlank, true);
  assert.equal(lineMatcher("a\\sb", true, false).match("alpha\nbeta", 1, 10).found, 0);
  assert.equal(lineMatcher("A\\w+A$", true, false).match(text, 3, 10).kept[0].text, "alpha");
  assert.equal(lineMatcher("A\\w+A$", true, true).match(text, 3, 10).found, 0);
  assert.equal(lineMatcher("gamma", true, false).matchesBlank, false);
});
