import assert from "node:assert/strict";
import {
  changedRows,
  changedSpan,
  changedSpans,
  lineAt,
  movedRows,
  rowsFrom,
  writtenPast,
} from "./captured_rows.ts";

Deno.test("rowsFrom makes capture-pane -J -S y out of the screen read joined and row by row", () => {
  // No wrapped rows: the rows from y on.
  assert.deepEqual(rowsFrom(["a", "b", "c"], ["a", "b", "c"], 1), ["b", "c"]);
  assert.deepEqual(rowsFrom(["a", "", ""], ["a", "", ""], 2), [""]);
  // A line wrapped over three rows (four columns): from its first row whole, from a later
  // row that row and the rest of the line.
  const joined = ["$ ", "abcdefghij", "P> "];
  const raw = ["$ ", "abcd", "efgh", "ij", "P> "];
  assert.deepEqual(rowsFrom(joined, raw, 1), ["abcdefghij", "P> "]);
  assert.deepEqual(rowsFrom(joined, raw, 2), ["efghij", "P> "]);
  assert.deepEqual(rowsFrom(joined, raw, 3), ["ij", "P> "]);
  assert.deepEqual(rowsFrom(joined, raw, 4), ["P> "]);
  // Wide characters and combining marks: characters, not columns.
  assert.deepEqual(rowsFrom(["日本語x", "é"], ["日本", "語x", "é"], 1), ["語x", "é"]);
  // Rows that could be grouped otherwise (a wrapped line's next row erased after it wrapped):
  // not guessed.
  assert.equal(rowsFrom(["abcd", "x"], ["abcd", "", "x"], 2), null);
  assert.equal(rowsFrom(["abcd", ""], ["abcd", "", ""], 2), null);
  // Reads that do not add up (tmux changed how it captures): not guessed either.
  assert.equal(rowsFrom(["ab", "c"], ["a", "c"], 1), null);
  assert.equal(rowsFrom(["a"], ["a", "b"], 0), null);
});

Deno.test("lineAt finds a row among joined lines from the rows above it alone", () => {
  // A line wrapped over three rows (four columns), as in rowsFrom's case.
  const joined = ["$ ", "abcdefghij", "P> "];
  const raw = ["$ ", "abcd", "efgh", "ij", "P> "];
  for (let y = 0; y <= 4; y++) {
    const at = lineAt(joined, raw.slice(0, y));
    assert.ok(at !== null, `row ${y}`);
    // The lines from the row on are what rowsFrom (and capture-pane -J -S y) gives.
    assert.deepEqual(
      [joined[at.index].slice(at.offset), ...joined.slice(at.index + 1)],
      rowsFrom(joined, raw, y),
      `row ${y}`,
    );
  }
  assert.deepEqual(lineAt(joined, raw.slice(0, 2)), { index: 1, offset: 4 });
  assert.deepEqual(lineAt(joined, raw.slice(0, 4)), { index: 2, offset: 0 });
  // Wide characters: characters, not columns.
  assert.deepEqual(lineAt(["日本語x", "é"], ["日本"]), { index: 0, offset: 2 });
  // Rows that do not add up, or a blank row where a line that is not blank would begin.
  assert.equal(lineAt(["ab", "c"], ["a", "c"]), null);
  assert.equal(lineAt(["abcd", "x"], ["abcd", ""]), null);
  assert.equal(lineAt(["a"], ["a", "b"]), null);
});

Deno.test("changedSpan: the common start, then the common end of what is left, left out", () => {
  assert.deepEqual(changedSpan("| building foo", "- building foo"), { from: 0, to: 1 });
  assert.deepEqual(changedSpan("50% done", "51% done"), { from: 1, to: 2 });
  assert.deepEqual(changedSpan("progress 5%", "progress 50%"), { from: 10, to: 11 });
  // The end is looked for only after the start: "abc" again is written, not nothing.
  assert.deepEqual(changedSpan("abc", "abcabc"), { from: 3, to: 6 });
  assert.deepEqual(changedSpan("P>", "P> ls"), { from: 2, to: 5 });
  assert.deepEqual(changedSpan("", "new"), { from: 0, to: 3 });
  // Taken out in the middle: an empty span there. The same, or cut short: nothing written.
  assert.deepEqual(changedSpan("abXcd", "abcd"), { from: 2, to: 2 });
  assert.equal(changedSpan("same", "same"), null);
  assert.equal(changedSpan("longer", "long"), null);
  // Never between the halves of a pair: the same high half (🙂 then 🙃), the same low half.
  assert.deepEqual(changedSpan("\u{1F642} x", "\u{1F643} x"), { from: 0, to: 2 });
  assert.deepEqual(changedSpan("a\u{10242}b", "a\u{1F642}b"), { from: 1, to: 3 });
});

Deno.test("changedSpans: a row drawn over itself is changed only where it differs", () => {
  // Both ends at once: the text between, the same in both, is in no span.
  assert.deepEqual(changedSpans("[1/9] cc main.c 10%", "[2/9] cc main.c 20%"), [
    { from: 1, to: 2 },
    { from: 16, to: 17 },
  ]);
  // Stretches next to each other are one; a pair is never cut (the same high half).
  assert.deepEqual(changedSpans("ab", "xy"), [{ from: 0, to: 2 }]);
  assert.deepEqual(changedSpans("\u{1F642} x \u{1F642}", "\u{1F643} x \u{1F643}"), [
    { from: 0, to: 2 },
    { from: 5, to: 7 },
  ]);
  assert.deepEqual(changedSpans("same", "same"), []);
  // Of other lengths: one span, as changedSpan.
  assert.deepEqual(changedSpans("progress 5%", "progress 50%"), [{ from: 10, to: 11 }]);
  assert.deepEqual(changedSpans("longer", "long"), []);
});

Deno.test("changedRows: a row changed at both ends has its written part in pieces", () => {
  const [row] = changedRows(["$ ", "[1/9] cc 10%"], ["$ ", "[2/9] cc 20%"], null, 2);
  assert.deepEqual([row.from, row.to, row.parts], [1, 10, [{ from: 1, to: 2 }, {
    from: 9,
    to: 10,
  }]]);
  // Changed since the start in one place and since the last read in another: both count.
  const [again] = changedRows(["$ ", "[1/9] cc 10%"], ["$ ", "[1/9] cc 30%"], [
    "$ ",
    "[2/9] cc 10%",
  ], 2);
  assert.deepEqual(again.parts, [{ from: 1, to: 2 }, { from: 9, to: 10 }]);
  // One stretch: no pieces.
  const [one] = changedRows(["$ ", "build 50% done"], ["$ ", "build 51% done"], null, 2);
  assert.deepEqual([one.from, one.to, one.parts], [7, 8, undefined]);
});

Deno.test("writtenPast: what a line read again after a reflow holds past what was known", () => {
  // Read from the cursor's row: the line's old end (narrower), or the line whole (wider).
  assert.equal(writtenPast("aaaa OLD-TAIL", "-TAIL"), null);
  assert.equal(writtenPast("aaaa OLD-TAIL", "$ aaaaaaaa OLD-TAIL"), null);
  // Written since: what follows the known text, or the known text's end.
  assert.equal(writtenPast("$ ", "$ Continue? [y/N] "), 1);
  assert.equal(writtenPast("aaaa OLD-TAIL", "$ aaaaaaaa OLD-TAIL NEW"), 19);
  assert.equal(writtenPast("aaaa OLD-TAIL", "TAIL NEW"), 4);
  // Nothing of it known: all of it.
  assert.equal(writtenPast("$ ls", "Password: "), 0);
  assert.equal(writtenPast("", "new"), 0);
  assert.equal(writtenPast("x", "   "), null);
  // Never between the halves of a pair.
  assert.equal(writtenPast("a\u{1F642}", "\u{1F642}b"), 2);
});

/** Which rows of `now` movedRows finds moved. */
const moved = (was: string[], now: string[]) => movedRows(was, now).moved;

Deno.test("movedRows: rows moved by inserted or deleted lines or a scroll are told apart", () => {
  const F = "error: BUILD FAILED";
  // Two lines inserted at the top: both old rows two further down.
  assert.deepEqual(moved([F, "next", "", ""], ["", "", F, "next"]), [false, false, true, true]);
  // A line deleted at the top: one up, and the new row written below them is not moved.
  assert.deepEqual(moved(["", F, "x", ""], [F, "x", "new", ""]), [true, true, false, false]);
  // A scroll down with new text drawn in the row it freed.
  assert.deepEqual(moved([F, "next", "", ""], ["new FAILED", "", F, "next"]), [
    false,
    false,
    true,
    true,
  ]);
  // A one-row move, and a screen that keeps no history scrolled up (the last row written).
  assert.deepEqual(moved(["", F], [F, ""]), [true, false]);
  assert.deepEqual(moved(["a", "b", "c"], ["b", "c", "d"]), [true, true, false]);
  // The rows the moved ones left: a scroll down by two freed the top two.
  assert.deepEqual(movedRows([F, "next", "", ""], ["new", "", F, "next"]).freed, [
    true,
    true,
    false,
    false,
  ]);
});

Deno.test("movedRows: text printed again, or redrawn in place, is not moved", () => {
  // A run's output printed twice: the first copy is where it was.
  assert.deepEqual(
    moved(["PASS a", "FAILED b", "", ""], ["PASS a", "FAILED b", "PASS a", "FAILED b"]),
    [
      false,
      false,
      false,
      false,
    ],
  );
  // The same line printed again below itself.
  assert.deepEqual(moved(["retrying", ""], ["retrying", "retrying"]), [false, false]);
  // A command typed at a prompt, and the same prompt below it.
  assert.deepEqual(moved(["$", ""], ["$ true", "$"]), [false, false]);
  assert.deepEqual(moved(["$ true", "$", ""], ["$ true", "$ true", "$"]), [false, false, false]);
  // One row over a row written with other text: not told apart from a line printed again.
  assert.deepEqual(moved(["x", "", ""], ["y", "x", ""]), [false, false, false]);
  // Rows redrawn in place (multi-line progress): nothing moved.
  assert.deepEqual(moved(["l1: 10%", "l2: 40%"], ["l1: done", "l2: 40%"]), [false, false]);
  // A line that many rows hold tells no offset.
  const dots = Array(10).fill("~");
  assert.deepEqual(moved([...dots, ""], ["", ...dots]), Array(11).fill(false));
});
