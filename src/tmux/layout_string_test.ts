import assert from "node:assert/strict";
import { LAYOUT_MAXIMUM, layoutStringProblem } from "./layout_string.ts";

Deno.test("layoutStringProblem passes layouts as tmux prints them", () => {
  for (
    const layout of [
      "b25e,80x24,0,0,1",
      "b25e,80x24,0,0", // a leaf without a pane id, as older tmux printed
      "8205,80x24,0,0{40x24,0,0,0,39x24,41,0,1}",
      "0cdb,80x24,0,0[80x7,0,0{39x7,0,0,2,40x7,40,0,6},80x7,0,8{39x7,0,8,5,40x7,40,8,4},80x8,0,16,3]",
      "3bb5,80x24,0,0[80x12,0,0{33x12,0,0,11,46x12,34,0[46x6,34,0,12,46x5,34,7{23x5,34,7,13," +
      "22x5,58,7,14}]},80x11,0,13,15]",
      "2070,10000x30,0,0{5000x30,0,0,19,4999x30,5001,0,20}",
      "19f7,3x3,0,0{1x3,0,0,21,1x3,2,0,22}",
      "ABCD,1x1,0,0,4294967295",
    ]
  ) {
    assert.equal(layoutStringProblem(layout), undefined, layout);
  }
});

Deno.test("layoutStringProblem refuses cells tmux would add up wrongly or drop unsafely", () => {
  const cases: [string, RegExp][] = [
    // Sizes that wrap around 2^32 in tmux's sum, and sizes past its window maximum.
    ["1989,80x24,0,0{4294967295x24,0,0,1,80x24,40,0,2}", /width of 4294967295 .* outside/],
    ["abcd,80x24,0,0{4294967000x24,0,0,1,375x24,40,0,2}", /outside 1\.\.10000/],
    [`abcd,${LAYOUT_MAXIMUM + 1}x24,0,0,1`, /width of 10001/],
    ["abcd,80x24,0,0{40x24,0,0,1,39x24,41,99999999999999999999,2}", /offset of 999999999999\.\.\./],
    ["abcd,80x0,0,0,1", /height of 0/],
    // A split of one cell: tmux crashes when that cell goes.
    ["abcd,80x24,0,0{40x24,0,0,1,39x24,41,0[39x24,41,0,2]}", /41,0 split holds a single cell/],
    // Cells that do not tile their split, or sit elsewhere than their sizes put them.
    ["abcd,80x24,0,0{40x24,0,0,1,30x24,41,0,2}", /71 wide with their borders, not 80/],
    ["abcd,80x24,0,0[80x12,0,0,1,80x12,0,13,2]", /25 high with their borders, not 24/],
    ["abcd,80x24,0,0{40x24,0,0,1,39x23,41,0,2}", /39x23,41,0 out of place/],
    ["abcd,80x24,0,0{40x24,0,0,1,39x24,40,0,2}", /39x24,40,0 out of place/],
    ["abcd,80x24,0,0[80x12,0,0,1,80x11,1,13,2]", /80x11,1,13 out of place/],
    ["abcd,80x24,1,0,3", /outermost cell is at 1,0/],
    // Not a layout string at all, or cut short, or with more after it.
    ["kill-server", /checksum/],
    ["abcd,80x24,0,0{40x24,0,0,1,39x24,41,0,2", /"}" is missing/],
    ["abcd,80x24,0,0{40x24,0,0,1,39x24,41,0,2]", /"}" is missing/],
    ["abcd,80x24,0,0,1{40x24,0,0,1,39x24,41,0,2}", /follows the outermost cell/],
    ["abcd,80x24,0,0{}", /width is missing/],
    ["abcd,80x24,0,0;kill-server", /follows the outermost cell/],
    ["abcd,80x24", /"," is missing/],
  ];
  for (const [layout, reason] of cases) {
    assert.match(layoutStringProblem(layout) ?? "(passed)", reason, layout);
  }
});

Deno.test("layoutStringProblem refuses a window of more cells than tmux redraws in time", () => {
  // select-layout gives the window the size of the outermost cell, whatever size it had.
  assert.equal(layoutStringProblem("abcd,10000x100,0,0,1"), undefined);
  assert.equal(layoutStringProblem("abcd,1000x1000,0,0,1"), undefined);
  assert.match(
    layoutStringProblem("abcd,10000x10000,0,0{5000x10000,0,0,1,4999x10000,5001,0,2}") ?? "",
    /10000x10000 window is 100000000 cells.*at most 1000000/,
  );
  assert.match(layoutStringProblem("abcd,10000x101,0,0,1") ?? "", /1010000 cells/);
});

Deno.test("layoutStringProblem lets a window already over the cap keep or lose cells", () => {
  // A person's 2000x1000 window: a layout no larger than it passes, a larger one does not.
  const current = { width: 2_000, height: 1_000 };
  assert.equal(layoutStringProblem("abcd,2000x1000,0,0,1", current), undefined);
  assert.equal(layoutStringProblem("abcd,1200x1000,0,0,1", current), undefined);
  assert.equal(layoutStringProblem("abcd,1000x2000,0,0,1", current), undefined);
  assert.match(
    layoutStringProblem("abcd,2001x1000,0,0,1", current) ?? "",
    /2001x1000 window is 2001000 cells, more than the 2000000 it has now \(2000x1000\)/,
  );
  // A window within the cap is held to the cap, whatever its size.
  assert.match(
    layoutStringProblem("abcd,1001x1000,0,0,1", { width: 80, height: 24 }) ?? "",
    /1001000 cells; .*at most 1000000 cells \(1000x1000, 10000x100\)$/,
  );
});

Deno.test("layoutStringProblem reads deep nesting, and refuses deeper still", () => {
  // A 1-wide pane beside the rest of the window, again and again: 1 000 splits in a row is
  // far more than the 8 192 characters select_layout takes can hold.
  const cell = (x: number, width: number): string =>
    width === 1
      ? `1x1,${x},0,${x}`
      : `${width}x1,${x},0{1x1,${x},0,${x},${cell(x + 2, width - 2)}}`;
  assert.equal(layoutStringProblem(`abcd,${cell(0, 2_001)}`), undefined);
  assert.match(layoutStringProblem(`abcd,${cell(0, 2_003)}`)!, /nest deeper than 1000/);
  assert.match(layoutStringProblem(`abcd,${cell(0, 9_999)}`)!, /nest deeper than 1000/);
});
