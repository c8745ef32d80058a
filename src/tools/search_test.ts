import assert from "node:assert/strict";
import { CALL_WORK, compileRegex, loadRegexEngine, MAX_REGEX_PROGRAM } from "../mcp/pattern.ts";
import { MatchDeadline, MatchPacer, testPieces } from "../mcp/pattern_pacer.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { lineMatcher, printedFilter } from "./search.ts";

await loadRegexEngine();

/**
 * The plain definition: each row on its own, case folded unless case matters, as
 * wait_for_text folds a literal (an escaped RegExp with `iu`).
 */
function naive(text: string, pattern: string, matchCase: boolean, last: number, max: number) {
  const rows = text.split("\n");
  const kept: { row: number; text: string }[] = [];
  let found = 0;
  for (let i = 0; i <= last && i < rows.length; i++) {
    const hit = matchCase
      ? rows[i].includes(pattern)
      : new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "iu").test(rows[i]);
    if (!hit) continue;
    found++;
    kept.push({ row: i, text: rows[i] });
    if (kept.length > max) kept.shift();
  }
  return { found, kept };
}

Deno.test("a literal is found over the whole text exactly as row by row", async () => {
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
    "Σ",
    "σ",
    "ς",
    "ΟΣ",
    "#{",
    ";",
    "\t",
  ];
  let seed = 42;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const patterns = [
    ...["ab", "AB", "b", "İ", "i", "É", "🙂", "a\nb", " ", "ab ab", "x\t"],
    ...["Σ", "ς", "ΟΣ", "ος", "(", "#{", ""],
  ];
  for (let round = 0; round < 400; round++) {
    const text = Array.from({ length: next(40) }, () => pieces[next(pieces.length)]).join("");
    const rowCount = text.split("\n").length;
    for (const pattern of patterns) {
      for (const matchCase of [false, true]) {
        const last = next(3) === 0 ? next(rowCount) : rowCount - 1;
        const max = 1 + next(4);
        assert.deepEqual(
          await lineMatcher(pattern, false, matchCase).match(text, last, max),
          naive(text, pattern, matchCase, last, max),
          JSON.stringify({ text, pattern, matchCase, last, max }),
        );
      }
    }
  }
});

Deno.test("a literal counts a row once, numbers rows from 0, keeps the last matches", async () => {
  const m = lineMatcher("needle", false, false);
  const text = "needle needle\nnothing\n\nNEEDLE at the end";
  assert.deepEqual(await m.match(text, 3, 5), {
    found: 2,
    kept: [{ row: 0, text: "needle needle" }, { row: 3, text: "NEEDLE at the end" }],
  });
  assert.deepEqual(await m.match(text, 3, 1), {
    found: 2,
    kept: [{ row: 3, text: "NEEDLE at the end" }],
  });
  assert.deepEqual(await m.match(text, 2, 5), {
    found: 1,
    kept: [{ row: 0, text: "needle needle" }],
  });
  assert.equal(m.matchesBlank, false);
  assert.deepEqual(await lineMatcher("a\nb", false, true).match("a\nb", 1, 5), {
    found: 0,
    kept: [],
  });
});

Deno.test("a literal folds case as wait_for_text does: Σ, σ and ς are one letter, İ only itself", async () => {
  const rows = async (pattern: string, text: string, matchCase = false) =>
    (await lineMatcher(pattern, false, matchCase).match(text, 100, 100)).kept.map((k) => k.row);
  // Lowercasing makes a capital sigma that ends the pattern final (ς), the one in a word σ.
  assert.deepEqual(await rows("ΠΡΟΣ", "ΠΡΟΣΟΧΗ: ο δίσκος\nπρος\nπροσ"), [0, 1, 2]);
  assert.deepEqual(await rows("ΔΊΣΚΟΣ", "ο δίσκος γέμισε"), [0]);
  assert.deepEqual(await rows("ΠΡΟΣ", "ΠΡΟΣΟΧΗ\nπρος", true), [0]);
  assert.deepEqual(await rows("İ", "İ\ni\nI\ni̇"), [0]);
  assert.deepEqual(await rows("i", "İ x\ni\nI\nı"), [1, 2]);
  // Text after a character whose lowercase is longer (İ) is still told by its own row.
  assert.deepEqual(
    (await lineMatcher("needle", false, false).match("İİİ\nİ NEEDLE", 1, 5)).kept,
    [{ row: 1, text: "İ NEEDLE" }],
  );
});

Deno.test("a regex is about one row: ^, $ and \\s never reach across rows", async () => {
  const text = "alpha\n\nbeta gamma\n";
  assert.deepEqual(
    (await lineMatcher("^$", true, false).match(text, 3, 10)).kept.map((k) => k.row),
    [1, 3],
  );
  assert.equal(lineMatcher("^$", true, false).matchesBlank, true);
  assert.equal((await lineMatcher("a\\sb", true, false).match("alpha\nbeta", 1, 10)).found, 0);
  assert.equal(
    (await lineMatcher("A\\w+A$", true, false).match(text, 3, 10)).kept[0].text,
    "alpha",
  );
  assert.equal((await lineMatcher("A\\w+A$", true, true).match(text, 3, 10)).found, 0);
  assert.equal(lineMatcher("gamma", true, false).matchesBlank, false);
});

/** The matcher before RE2: a JavaScript RegExp in Unicode mode, tested row by row. */
function jsRegex(text: string, pattern: string, matchCase: boolean, last: number, max: number) {
  const re = new RegExp(pattern, matchCase ? "u" : "iu");
  const rows = text.split("\n");
  const kept: { row: number; text: string }[] = [];
  let found = 0;
  for (let i = 0; i <= last && i < rows.length; i++) {
    if (!re.test(rows[i])) continue;
    found++;
    kept.push({ row: i, text: rows[i] });
    if (kept.length > max) kept.shift();
  }
  return { found, kept };
}

/** Characters where engines part ways: case folding, whitespace, line ends, astral planes. */
const ODD_TEXT = [
  "a",
  "A",
  "b",
  "x",
  "X",
  "1",
  "_",
  " ",
  "\t",
  "\u000b",
  "\u00a0",
  "\u3000",
  "\ufeff",
  "\u2028",
  "\r",
  "\n",
  "İ",
  "i",
  "I",
  "ı",
  "ß",
  "ẞ",
  "s",
  "S",
  "k",
  "é",
  "É",
  "σ",
  "ς",
  "Σ",
  "🙂",
  "-",
  ".",
  "$",
];

/** Pieces of ordinary patterns: anchors, classes, escapes, Unicode, groups. */
const ATOMS = [
  "a",
  "b",
  "x",
  "X",
  "İ",
  "i",
  "ß",
  "ẞ",
  "s",
  "é",
  "σ",
  "🙂",
  " ",
  "\\.",
  "\\$",
  "-",
  ".",
  "\\s",
  "\\S",
  "\\w",
  "\\W",
  "\\d",
  "\\D",
  "[a-c]",
  "[^ ]",
  "[\\s\\d]",
  "[^\\S]",
  "[İi]",
  "[A-Z]",
  "[^a-z]",
  "[.$]",
  "\\t",
  "\\u00e9",
  "\\u{1F642}",
  "\\x41",
];
const QUANTIFIERS = ["", "", "", "*", "+", "?", "{1,3}", "{2}", "+?", "*?"];

/** Stand-ins for one character of text in a derived pattern. */
const CLASSES = [
  ".",
  ".",
  "\\s",
  "\\s",
  "\\S",
  "\\w",
  "\\W",
  "\\d",
  "\\D",
  "[^a]",
  "[\\s\\S]",
  "[^\\s]",
];

Deno.test("a regex matches exactly as the JavaScript regex it replaced, on ordinary patterns", async () => {
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return Math.floor((seed / 0x80000000) * n); // the high bits: the low ones cycle quickly
  };
  const piece = (): string => {
    const roll = next(12);
    if (roll === 0) return `(${piece()}|${piece()})`;
    if (roll === 1) return `(?:${piece()}${piece()})`;
    return ATOMS[next(ATOMS.length)] + QUANTIFIERS[next(QUANTIFIERS.length)];
  };
  /** A pattern made from a piece of `text`: most of its characters become a class or a case. */
  const derived = (text: string): string => {
    const chars = [...text.split("\n")[0]];
    const from = next(chars.length + 1);
    return chars.slice(from, from + 1 + next(6)).map((ch) => {
      const roll = next(4);
      const stand = CLASSES[next(CLASSES.length)];
      if (roll === 0 || roll === 1 && new RegExp(stand, "u").test(ch)) return stand;
      if (roll === 2) return ch.toUpperCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      return ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    }).join("");
  };
  let compared = 0;
  let matched = 0;
  for (let round = 0; round < 2000; round++) {
    const text = Array.from({ length: next(30) }, () => ODD_TEXT[next(ODD_TEXT.length)]).join("");
    const body = round % 3 === 0
      ? Array.from({ length: 1 + next(4) }, piece).join("")
      : derived(text);
    const pattern = (next(4) === 0 ? "^" : "") + body + (next(4) === 0 ? "$" : "");
    const rowCount = text.split("\n").length;
    for (const matchCase of [false, true]) {
      const last = next(3) === 0 ? next(rowCount) : rowCount - 1;
      const max = 1 + next(4);
      const where = JSON.stringify({ pattern, text, matchCase, last, max });
      const matcher = lineMatcher(pattern, true, matchCase);
      const expected = jsRegex(text, pattern, matchCase, last, max);
      assert.deepEqual(await matcher.match(text, last, max), expected, where);
      assert.equal(matcher.matchesBlank, new RegExp(pattern, matchCase ? "u" : "iu").test(""));
      compared++;
      if (expected.found > 0) matched++;
    }
  }
  assert.equal(compared, 4000);
  assert.ok(matched > 1000, `only ${matched} comparisons had a match`);
});

Deno.test("a regex keeps JavaScript's ^, $, \\s, . and Unicode case folding", async () => {
  const rows = (pattern: string, text: string, matchCase = false) =>
    lineMatcher(pattern, true, matchCase).match(text, 99, 99).then((r) => r.kept.map((k) => k.row));
  // ^ and $ are the row's ends.
  assert.deepEqual(await rows("^ab$", "ab\nxab\nabx\nab"), [0, 3]);
  // \s is JavaScript's whitespace: no-break and ideographic spaces, BOM, vertical tab.
  assert.deepEqual(await rows("a\\sb", "a b\na\u00a0b\na\u3000b\na\ufeffb\na\u000bb\nab"), [
    0,
    1,
    2,
    3,
    4,
  ]);
  assert.deepEqual(await rows("^\\S+$", "a\u00a0b\nab"), [1]);
  // . stops at a carriage return and the Unicode line separators, not at other characters.
  assert.deepEqual(await rows("^a.b$", "a\rb\na\u2028b\na\u2029b\na🙂b\naxb"), [3, 4]);
  // Case folding is Unicode's simple folding, as JavaScript's `iu`: İ folds to nothing else.
  assert.deepEqual(await rows("İ", "İ\ni\nI\ni̇"), [0]);
  assert.deepEqual(await rows("i", "İ\ni\nI\nı"), [1, 2]);
  assert.deepEqual(await rows("ß", "ß\nẞ\nss"), [0, 1]);
  assert.deepEqual(await rows("k", "k\nK\n\u212a"), [0, 1, 2]);
  assert.deepEqual(await rows("σ", "σ\nς\nΣ"), [0, 1, 2]);
  assert.deepEqual(await rows("ÉTÉ", "été\nÉTÉ\nete"), [0, 1]);
  assert.deepEqual(await rows("ÉTÉ", "été\nÉTÉ", true), [1]);
  // JavaScript escapes keep their meaning.
  assert.deepEqual(await rows("\\u00e9\\u{1F642}", "é🙂\ne"), [0]);
  assert.deepEqual(await rows("\\ud83d\\ude42", "🙂\nx"), [0]);
  assert.deepEqual(await rows("\\cI", "a\tb\nab"), [0]);
  assert.deepEqual(await rows("[\\b]", "a\bb\nab"), [0]);
  assert.deepEqual(await rows("a[]", "a\nab"), []);
  assert.deepEqual(await rows("a[^]b", "a\rb\nab"), [0]);
  // RE2's own syntax works too.
  assert.deepEqual(await rows("\\Qa.b\\E", "a.b\naxb"), [0]);
  assert.deepEqual(await rows("(?s)a.b", "a\rb\nab"), [0]);
  assert.deepEqual(await rows("\\p{Greek}+", "αβ\nab"), [0]);
  assert.deepEqual(await rows("(?P<word>\\w+)=(?<n>\\d)", "a=1\na=b"), [0]);
});

/** The refusal `pattern` gets, as a model reads it. */
function refusal(pattern: string): string {
  try {
    lineMatcher(pattern, true, false);
  } catch (error) {
    assert.ok(error instanceof ToolFailure, String(error));
    return `${error.message} ${error.hint}`;
  }
  assert.fail(`${pattern} was accepted`);
}

Deno.test("lookaround and backreferences are refused up front, saying which and what instead", () => {
  assert.match(refusal("foo(?=bar)"), /uses a lookahead.*RE2 syntax.*foobar/);
  assert.match(refusal("foo(?!bar)"), /uses a lookahead/);
  assert.match(refusal("(?<=foo)bar"), /uses a lookbehind.*foobar/);
  assert.match(refusal("(?<!foo)bar"), /uses a lookbehind/);
  assert.match(refusal("(ab)\\1"), /uses a backreference, \\1.*abab/);
  assert.match(refusal("(?<q>ab)\\k<q>"), /uses a backreference, \\k<name>/);
  assert.match(refusal("(unclosed"), /^The pattern is not a valid regular expression \(RE2/);
  assert.match(refusal("a{1001}"), /not a valid regular expression.*repeat count/);
  assert.match(refusal(".{0,999}a".repeat(8)), /is too large: about \d+ steps.*limit of 10000/);
  // Inside a class these are plain characters, and a named group is not a lookbehind.
  assert.doesNotThrow(() => lineMatcher("[(?=]\\d(?<name>x)", true, false));
});

Deno.test("catastrophic patterns take linear time", async () => {
  const cases: [string, string, number][] = [
    ["(x+)+y", "x".repeat(40), 0],
    ["(x+)+y", "x".repeat(5_000), 0],
    ["(a|aa)+$", `${"a".repeat(5_000)}!`, 0],
    ["(a|aa)+$", "a".repeat(5_000), 1],
    ["(.*a){20}", "a".repeat(19) + "b".repeat(5_000), 0],
    ["^(\\w+\\s?)*$", `${"word ".repeat(1_000)}!`, 0],
  ];
  for (const [pattern, row, each] of cases) {
    const text = Array.from({ length: 200 }, () => row).join("\n");
    const began = performance.now();
    const { found } = await lineMatcher(pattern, true, false).match(text, 199, 5);
    const took = performance.now() - began;
    assert.equal(found, 200 * each, pattern);
    // A backtracking engine takes longer than the age of the universe on the first row.
    assert.ok(took < 5_000, `${pattern} over 200 rows of ${row.length}: ${took} ms`);
  }
});

Deno.test("a long match gives the event loop turns, and stops there when cancelled", async () => {
  const controller = new AbortController();
  const pacer = new MatchPacer(controller.signal);
  let ticks = 0;
  const timer = setTimeout(() => ticks++, 0);
  let pause: Promise<void> | null = null;
  // Busy work until a turn is due (it comes after a slice of work, however fast the machine).
  while (pause === null) pause = pacer.step(10_000, 1_000);
  assert.equal(ticks, 0, "no turn before the slice is used");
  await pause;
  assert.equal(ticks, 1, "the timer ran during the turn");
  clearTimeout(timer);
  pause = null;
  while (pause === null) pause = pacer.step(10_000, 1_000);
  controller.abort();
  await assert.rejects(pause, (e) => e instanceof TmuxError && e.kind === "cancelled");
});

Deno.test("a pacer stops the matching at its deadline, at its next turn", async () => {
  const pacer = new MatchPacer(undefined, performance.now());
  let pause: Promise<void> | null = null;
  while (pause === null) pause = pacer.step(10_000, 1_000);
  await assert.rejects(pause, MatchDeadline);
});

Deno.test("a long row is matched in pieces, each one bounded call, finding what the whole row has", async () => {
  // Pieces of 8 characters overlapping by 4 (the least call work), around pairs and folded case:
  // a pattern whose matches fit the overlap is found exactly as in the whole row.
  const fitting = [
    "\u{1F642}a",
    "A\u{1F642}",
    "\\ba",
    "a$",
    "^\u{1F642}",
    "[^a]",
    "\\s\\S",
    ".\u{1F642}",
  ];
  const units = ["a", "A", "\u{1F642}", " ", "b"];
  let seed = 5;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (const matchCase of [false, true]) {
    const patterns = fitting.map((p) => compileRegex(p, matchCase, "p", 1));
    for (let round = 0; round < 300; round++) {
      const row = Array.from({ length: next(30) }, () => units[next(units.length)]).join("");
      for (const re of patterns) {
        assert.ok(re.fits && re.piece === 8, `${re.piece}`);
        const pacer = new MatchPacer();
        assert.equal(await testPieces(re, row, pacer), re.test(row), JSON.stringify(row));
        assert.equal(pacer.piecedLines, 0);
      }
    }
  }
  // A match longer than the overlap may lie across two pieces: then that is counted.
  const long = compileRegex("a.*b", true, "p", 1);
  assert.equal(long.fits, false);
  const pacer = new MatchPacer();
  assert.equal(await testPieces(long, `a${"x".repeat(40)}b`, pacer), false);
  assert.equal(pacer.piecedLines, 1);
  assert.match(pacer.piecedNote(true), /^1 long line was matched in pieces overlapping by 4/);
  // At the real call work the largest program still gets a couple of hundred characters a call.
  const largest = compileRegex("[ab]{1,1000}[ab]{1,1000}[ab]{1,1000}x", true, "p");
  assert.ok(largest.cost <= MAX_REGEX_PROGRAM && largest.piece >= 200, `${largest.piece}`);
  assert.ok(largest.piece * (largest.cost + 32) <= CALL_WORK);
  assert.equal(largest.fits, false);
  // Bounded patterns of ordinary cost fit their overlap: no piece misses them.
  for (const bounded of ["fail(ed|ure)", "\\d{3}-\\d{4}", "\\bpanic\\b", "\\w{1,500}\\d"]) {
    assert.ok(compileRegex(bounded, false, "p").fits, bounded);
  }
  for (const unbounded of ["error\\d+", "a.*b", "x{2,}", "(ab)*"]) {
    assert.equal(compileRegex(unbounded, false, "p").fits, false, unbounded);
  }
});

Deno.test("a search over a row longer than one call says what its pieces could have missed", async () => {
  const row = `a${"x".repeat(200_000)}b`;
  const pacer = new MatchPacer();
  const found = await lineMatcher("a.*b", true, false).match(`short\n${row}\nab`, 2, 5, pacer);
  // The short row "ab" matches; the long one's match is longer than any overlap.
  assert.deepEqual(found.kept.map((k) => k.row), [2]);
  assert.equal(pacer.piecedLines, 1);
  // A match within a piece of the long row is found there.
  const near = await lineMatcher("x{3}b", true, false).match(row, 0, 5, pacer);
  assert.equal(near.found, 1);
  assert.equal(pacer.piecedLines, 1);
});

Deno.test("printedFilter: the lines as printed a match as shown needs, read as shown only there", async () => {
  const filter = (pattern: string, regex = false, matchCase = false) =>
    printedFilter(pattern, regex, matchCase, lineMatcher(pattern, regex, matchCase));
  // A pattern that matches as shown only what matches as printed: itself.
  const plain = lineMatcher("needle", false, false);
  assert.equal(printedFilter("needle", false, false, plain), plain);
  // A blank or a glyph may be a hidden character or a drawn letter as printed: the longest run
  // of the rest must be printed as it is.
  const rows = (pattern: string, text: string) =>
    filter(pattern)!.match(text, 99, 99).then((r) => r.kept.map((k) => k.row));
  // Printed: "ab" with a hidden "X" between, "xq─qx" drawn from "xqqqx", a row with neither.
  const text = "aXb cd\nxqqqx\nnothing here";
  assert.deepEqual(await rows("aX b", text), [0]);
  assert.deepEqual(await rows("a b cd", text), [0]);
  assert.deepEqual(await rows("xq─qx", text), [1]);
  assert.deepEqual(await rows("NOTHING  HERE", text), [2]);
  // Only blanks and glyphs, or a regex that may match a blank: every line may.
  assert.equal(filter("  "), null);
  assert.equal(filter("──"), null);
  assert.equal(filter("a\\sb", true), null);
});
