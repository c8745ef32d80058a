/**
 * The streamed marker scan against findMarkers over the same rows: every judgment the same, the
 * output the same tail with the bytes before it counted, whatever the rows hold (markers of
 * this job and another, forged ends, long commands' lines, blank rows, a dead pane's line).
 */
import assert from "node:assert/strict";
import { prng, type Rand } from "../../tests/helpers/prng.ts";
import { utf8Length } from "../tmux/capture.ts";
import { endCheck, findMarkers, type Marked } from "./job_markers.ts";
import { MarkerScan } from "./job_scan.ts";
import { deadDrawn, withoutDeadLine } from "./job_state.ts";
import { typedCommand } from "./typed.ts";

const NONCE = "0123456789abcdef0123";
const OTHER = "fedcba9876543210fedc";

function scan(
  rows: readonly string[],
  start: number,
  keep: number,
  dead: boolean,
  drawn: string | null = null,
): MarkerScan {
  const s = new MarkerScan(NONCE, start, keep, dead, drawn);
  for (const row of rows) s.row(row);
  return s;
}

/** `text` is the tail of `whole` after `cut` bytes, and holds `keep` bytes whenever it was cut. */
function assertTail(whole: string, text: string, cut: number, keep: number, label: string): void {
  assert.ok(whole.endsWith(text), `${label}: a tail of what the whole read gives`);
  if (cut === 0) {
    assert.equal(text, whole, label);
    return;
  }
  assert.equal(cut + utf8Length(text), utf8Length(whole), `${label}: the bytes cut counted`);
  assert.ok(utf8Length(text) >= keep, `${label}: keeps what a reply can hold`);
  const rest = text.slice(text.indexOf("\n") + 1);
  assert.ok(
    !text.includes("\n") || utf8Length(rest) <= keep + 16,
    `${label}: keeps no row it need not (${utf8Length(rest)} bytes after the first, ${keep})`,
  );
}

function assertSame(whole: Marked, got: Marked, keep: number, label: string): void {
  const keys = [
    "begun",
    "status",
    "endedMs",
    "startGone",
    "falseEnd",
    "twoEnds",
    "twoBegins",
  ] as const;
  for (const key of keys) {
    assert.equal(got[key], whole[key], `${label}: ${key}`);
  }
  assertTail(whole.output, got.output, got.cutBytes ?? 0, keep, `${label}: output`);
  assert.equal(got.beforeNext === undefined, whole.beforeNext === undefined, `${label}: next`);
  if (whole.beforeNext !== undefined) {
    const cut = got.beforeNextCutBytes ?? 0;
    assertTail(whole.beforeNext, got.beforeNext!, cut, keep, `${label}: beforeNext`);
  }
}

/** A row of one of the kinds a job's pane shows. */
function rowMaker(rand: Rand): () => string[] {
  const pick = rand.pick;
  const end = (nonce: string, valid: boolean) => {
    const status = pick([0, 1, 2, 130]);
    const check = valid ? endCheck(nonce, status) : String(Number(endCheck(nonce, status)) + 1);
    const time = pick(["", ":1765000000", ":1765000000.123456", ":x"]);
    return `${pick(["", "", "", "out"])}__tmcp_${nonce}_E:${status}:${check}${time}`;
  };
  const long = typedCommand("x".repeat(1_200), OTHER).split("\n");
  const text = [
    "",
    "",
    "  ",
    "hello",
    "é✓🙂 wide",
    "a".repeat(40),
    "b".repeat(3),
    `__tmcp ${NONCE}`,
  ];
  const kinds: (() => string[])[] = [
    () => [pick(text)],
    () => [pick(text)],
    () => [pick(text)],
    () => [pick(text), pick(text), pick(text)],
    () => [pick(["", "$ ", "# # "]) + `__tmcp_${NONCE}_B` + pick(["", "  "])],
    () => [`$ ${typedCommand("echo hi", NONCE)}`],
    () => [end(NONCE, true)],
    () => [end(NONCE, rand.chance(0.3))],
    () => [`$ ${typedCommand("echo other", OTHER)}`],
    () => [`__tmcp_${OTHER}_B`],
    () => [`$ ${typedCommand("echo other", OTHER)}`, pick(text), `__tmcp_${OTHER}_B`],
    () => [...long.map((line) => `> ${line}`), `__tmcp_${OTHER}_B`],
    () => long.slice(0, 1 + rand.int(long.length)).map((line) => `$ ${line}`),
    () => ["Pane is dead (status 3, Sun Dec  6 04:00:00 2026)"],
    // What a remain-on-exit-format may draw, alone on its row or after output (joined by -J).
    () => [pick(["[exited 3]", "abc[exited 3]", "abc   [exited 3]", "hello"])],
    // Runs of blank rows, of spaces as `capture-pane -J` keeps them, and of other blanks.
    () => Array.from({ length: 1 + rand.int(12) }, () => pick(["", " ", "    ", "\u00a0 "])),
  ];
  return () => pick(kinds)();
}

Deno.test("MarkerScan tells what findMarkers tells, keeping only a reply's tail", () => {
  const rand = prng(20261206);
  const next = rowMaker(rand);
  for (let n = 0; n < 4_000; n++) {
    const rows: string[] = [];
    const parts = rand.int(40);
    for (let p = 0; p < parts; p++) rows.push(...next());
    const start = rand.int(rows.length + 4) - 2;
    const keep = rand.pick([0, 1, 8, 50, 200, 100_000]);
    const dead = rand.chance(0.2);
    const drawn = dead && rand.chance(0.5) ? rand.pick(["[exited 3]", "hello", "zzz"]) : null;
    const whole = findMarkers(dead ? withoutDeadLine(rows, drawn) : rows, NONCE, start);
    const got = scan(rows, start, keep, dead, drawn).finish();
    const label = `case ${n} (start ${start}, keep ${keep}, dead ${dead}, drawn ${drawn})`;
    assertSame(whole, got, keep, label);
  }
});

Deno.test("a dead pane's rows lose only the row tmux drew, as read from the pane", () => {
  const begin = `__tmcp_${NONCE}_B`;
  const cases: [string, string[], string | null, string[], string][] = [
    ["a format's line below blank rows", ["out2", "", "", "[exited 5]", ""], "[exited 5]", [
      "out2",
      "",
      "",
    ], "out2"],
    // tmux marks the row above its line as wrapped: `capture-pane -J` joins the two.
    ["joined to output on the row above", ["1", "abc[exited 5]", ""], "[exited 5]", [
      "1",
      "abc",
    ], "1\nabc"],
    ["joined, with spaces -J kept", ["1", "abc   [exited 5]", ""], "[exited 5]", [
      "1",
      "abc",
    ], "1\nabc"],
    // The pane chose the title the format shows: only the row tmux drew goes, never output.
    ["the same text as the output's last row", ["same", "same", ""], "same", ["same"], "same"],
    ["the same text joined", ["same", "samesame", ""], "same", ["same", "same"], "same\nsame"],
    [
      "a default-shaped row above the format's line stays",
      [
        "Pane is dead (status 1, Sun Dec  6 04:00:00 2026)",
        "[exited 1]",
      ],
      "[exited 1]",
      ["Pane is dead (status 1, Sun Dec  6 04:00:00 2026)"],
      "Pane is dead " +
      "(status 1, Sun Dec  6 04:00:00 2026)",
    ],
    // Not known what tmux drew (another version, a styled format): the default's shape only.
    [
      "not known: the default's shape",
      ["x", "Pane is dead (signal 9, Sun Dec  6 04:00:00 2026)"],
      null,
      [
        "x",
      ],
      "x",
    ],
    [
      "not known: another format's line stays",
      ["x", "[exited 5]"],
      null,
      ["x", "[exited 5]"],
      "x\n[exited 5]",
    ],
  ];
  for (const [label, rows, drawn, kept, output] of cases) {
    assert.deepEqual(withoutDeadLine(rows, drawn), kept, label);
    const whole = findMarkers(withoutDeadLine([begin, ...rows], drawn), NONCE, 0);
    assert.equal(whole.output, output, `${label}: output`);
    for (const keep of [0, 3, 100]) {
      assertSame(whole, scan([begin, ...rows], 0, keep, true, drawn).finish(), keep, label);
    }
  }
});

Deno.test("deadDrawn: the bottom row is tmux's only once tmux drew it, and as the format says", () => {
  const at = "1796618468";
  assert.equal(deadDrawn(["1", at, "[exited 5]"], "[exited 5]"), "[exited 5]");
  assert.equal(deadDrawn(["1", at, "[exited 5]  "], "[exited 5]"), "[exited 5]");
  // A line break (or another control character) in the format: tmux draws nothing for it.
  assert.equal(deadDrawn(["1", at, "line1\nline2 4"], "line1line2 4"), "line1line2 4");
  // Not drawn yet (tmux 3.3a may learn of the exit late): the bottom row is output.
  assert.equal(deadDrawn(["1", "", "[exited ]"], "[exited ]"), null);
  // Alive again (respawned since), an empty format, a row that is not the format's text (a
  // style, a line cut to the pane's width), a format not expanded (it runs a command).
  assert.equal(deadDrawn(["0", at, "x"], "x"), null);
  assert.equal(deadDrawn(["1", at, ""], ""), null);
  assert.equal(deadDrawn(["1", at, "#[fg=red]dead"], "dead"), null);
  assert.equal(
    deadDrawn(["1", at, "Pane is dead (status 5, Mon Dec  7 04:38:35 2026)"], "Pane is"),
    null,
  );
  assert.equal(deadDrawn(["1", at, ""], "x #(cmd) y"), null);
  assert.equal(deadDrawn([], "x"), null);
});

Deno.test("MarkerScan: the cases findMarkers names, each as the whole read tells", () => {
  const begin = `__tmcp_${NONCE}_B`;
  const end = (status: number) => `__tmcp_${NONCE}_E:${status}:${endCheck(NONCE, status)}:17`;
  const other = typedCommand("echo next", OTHER);
  const cases: [string, string[], number][] = [
    ["begun and ended", ["$ x", begin, "one", "two", end(0), "$ "], 0],
    ["ended twice: no status", [begin, "a", end(1), "b", end(2), ""], 0],
    ["begun twice: from the first", [begin, "a", begin, "b", end(2), ""], 0],
    ["begun twice after the echo", [begin, `$ ${typedCommand("x", NONCE)}`, begin, "b", begin], 0],
    ["begun twice without an end, a line after", [
      begin,
      "a",
      begin,
      `$ ${other}`,
      `__tmcp_${OTHER}_B`,
    ], 0],
    ["no begin: from the echo", [`$ ${typedCommand("echo hi", NONCE)}`, "out", end(0)], 0],
    ["nothing of its start: cleared", ["out", "more", end(0), ""], 5],
    ["its start below the end: earlier output above", ["old", end(0), begin, ""], 1],
    ["a false end only", [begin, "a", `__tmcp_${NONCE}_E:0:1`, ""], 0],
    ["a later run_command's line", [begin, "a", "b", `$ ${other}`, `__tmcp_${OTHER}_B`, "c"], 0],
    ["a later line without its begin marker is output", [begin, "a", `$ ${other}`, "c"], 0],
  ];
  for (const [label, rows, start] of cases) {
    for (const keep of [0, 2, 100]) {
      assertSame(
        findMarkers(rows, NONCE, start),
        scan(rows, start, keep, false).finish(),
        keep,
        label,
      );
    }
  }
});

Deno.test("MarkerScan holds the text of a run of blank rows only as far as a reply could show it", () => {
  const keep = 2_000;
  const end = `__tmcp_${NONCE}_E:0:${endCheck(NONCE, 0)}:1`;
  const deadLine = "Pane is dead (status 0, Sun Dec  6 04:00:00 2026)";
  // 5 000 rows of 1 000 spaces (5 MB) after output, then (or not) a written row, an end, an
  // end after text on its row; in a dead pane also tmux's line (the run held until it is told).
  for (const dead of [false, true]) {
    const ends: string[][] = [[], ["more"], ["more", end], [end], [`text${end}`]];
    if (dead) ends.push([deadLine], [deadLine, " "], ["more", deadLine], [end, deadLine]);
    for (const after of ends) {
      const label = `${dead ? "dead, " : ""}then ${JSON.stringify(after)}`;
      const rows = [`__tmcp_${NONCE}_B`, "out", ...Array(5_000).fill(" ".repeat(1_000)), ...after];
      const s = new MarkerScan(NONCE, 0, keep, dead);
      let most = 0;
      for (const row of rows) {
        s.row(row);
        most = Math.max(most, s.heldBytes);
      }
      // A reply's worth, the last rows of the run, and a byte a row for the place of each.
      const bound = 3 * keep + 2 * 1_001 + rows.length;
      assert.ok(most <= bound, `${label}: held ${most} bytes`);
      const whole = findMarkers(dead ? withoutDeadLine(rows) : rows, NONCE, 0);
      assertSame(whole, s.finish(), keep, label);
    }
  }
  // Once written rows follow, the run goes, and what is held is what they hold (counted right).
  const s = new MarkerScan(NONCE, 0, keep);
  for (const row of ["out", ...Array(5_000).fill(" ".repeat(1_000))]) s.row(row);
  for (let i = 0; i < 100; i++) s.row("x".repeat(99));
  assert.ok(s.heldBytes >= keep && s.heldBytes <= 3 * keep, `held ${s.heldBytes} after`);
});

Deno.test("MarkerScan holds a reply's worth of rows, whatever the rows forge", () => {
  const keep = 2_000;
  const end = `__tmcp_${NONCE}_E:0:${endCheck(NONCE, 0)}:1`;
  const other = `$ ${typedCommand("echo other", OTHER)}`;
  const held = `$ ${typedCommand("x".repeat(1_200), OTHER).split("\n")[1]}`;
  const floods: [string, (i: number) => string][] = [
    ["an end on every other row", (i) => i % 2 ? end : "o".repeat(i % 50)],
    ["another command's line on every row", () => other],
    ["its begin marker after each", (i) => i % 2 ? `__tmcp_${OTHER}_B` : other],
    ["a long command's lines without end", () => held],
    ["a begin marker of its own now and then", (i) => i % 7 ? held : `__tmcp_${NONCE}_B`],
  ];
  for (const [label, row] of floods) {
    const s = new MarkerScan(NONCE, 0, keep);
    s.row(`__tmcp_${NONCE}_B`);
    let most = 0;
    let widest = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = row(i);
      s.row(text);
      most = Math.max(most, s.heldBytes);
      widest = Math.max(widest, text.length + 1);
    }
    // Twice the bound before a tail is copied out, the copies, and a row or two over each (in
    // rows as long as these: a typed line is 300 bytes and more, longer as its words grow).
    assert.ok(most <= 5 * keep + 10 * widest, `${label}: held ${most} bytes`);
    s.finish();
  }
});
