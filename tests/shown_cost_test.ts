/**
 * Reading a pane as a person sees it costs tmux what the reply needs, not what the pane holds.
 *
 * Rows are read as shown with `capture-pane -e`, which tmux builds whole in memory before it
 * answers anyone. A program that gives every cell colours and attributes of its own makes that
 * ~45 times a plain capture (36 MB for 2 000 rows of 400 columns, the person's tmux frozen for
 * 4 s): the reading tools read such a pane as printed and only the rows a reply keeps (or a
 * search matched) as shown, a few at a time. What tmux spends is measured as the peak memory
 * of its server (VmHWM), which grows with the largest capture it built, however fast the
 * machine is; and the replies stay what a whole read as shown says.
 *
 * Also: omittedBytes counts what it leaves out as printed, whichever way the rows were left out.
 * With `escapes` (the text as tmux prints it with `-e`) the rows are read in the same runs.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";
import type { StartedTmux, TestClient } from "./helpers/mcp.ts";
import { ShownCells } from "../src/tmux/shown_cells.ts";
import { tailLines } from "../src/mcp/bounds.ts";
import { printedCut } from "../src/tools/pane_content.ts";

const WIDTH = 200;
const ROWS = 1_000;

/**
 * `rows` rows of `width` cells of `q`, each cell with a colour and attributes of its own (as
 * gen.ts of the attack makes them): some cells' text is drawn in their background's colour.
 */
function heavyRows(rows: number, width: number): string {
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    let line = "";
    for (let c = 0; c < width; c++) {
      line += (r * width + c) % 2
        ? `\x1b[0;1;3;4;9;53;38;2;${c % 256};${r % 256};7;48;2;9;${c % 256};${r % 256}mq`
        : `\x1b[0;38;2;1;2;${c % 256};48;2;${r % 256};3;4mq`;
    }
    out.push(`${line}\x1b[0m`);
  }
  return out.join("\r\n") + "\r\nEND\r\n";
}

/** The tmux server's peak resident memory, in KiB. */
async function peakKiB(t: StartedTmux): Promise<number> {
  const pid = (await t.tmux("display-message", "-p", "#{pid}")).trim();
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
}

/** Lines of a pane's whole range as shown, read at once (the reference). */
async function shownLines(t: StartedTmux, paneId: string): Promise<string[]> {
  const out = await new Deno.Command("tmux", {
    args: ["-L", t.socket, "capture-pane", "-p", "-e", "-J", "-t", paneId, "-S", "-"],
    env: { LANG: "C.UTF-8" },
  }).output();
  const text = new TextDecoder().decode(ShownCells.of(out.stdout, false));
  return text.split("\n").slice(0, -1).map((l) => l.replace(/ +$/, ""));
}

Deno.test("a pane colouring every cell is read as shown only where a reply needs it: tmux's peak memory stays what a plain read costs", async () => {
  await withTmux(
    async (t, c) => {
      await t.tmux("set-option", "-g", "history-limit", "5000");
      const id = await t.printing(heavyRows(ROWS, WIDTH), "END");
      // The pane as tmux holds it, and a plain read of it all: what every reply's read may add.
      await t.tmux("capture-pane", "-p", "-t", id, "-S", "-");
      const before = await peakKiB(t);
      // As shown the whole range prints ~8 MB (~40 bytes a cell): tmux's peak grew by three
      // times that while it built it, and the person's tmux stood still meanwhile. Now each
      // reader reads runs of rows over the control connection until one answer comes back
      // heavy, then by tmux processes of their own (capture_tail.ts ShownReads): tmux keeps
      // what it answered a control client, a run's worth (~0.7 MB here) for each such read.
      const calls: [string, Record<string, unknown>][] = [
        ["search_panes", { pattern: "qqqq", scrollbackLines: 2_000 }],
        ["search_panes", { pattern: "q q", scrollbackLines: 2_000 }],
        ["capture_pane", { paneId: id, start: -2_000, maxLines: 10_000 }],
        ["capture_pane", { paneId: id, start: -2_000, maxLines: 10_000, joinWrapped: true }],
        ["capture_since", { paneId: id }],
      ];
      const grown = await calledWithin(t, c, calls, before);
      // New output since a cursor: the rows that prove where the pane stands and the new ones.
      const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: id });
      await t.tmux("send-keys", "-t", id, "-l", "three new rows\rof output\rhere\r");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", id)).split("here").length === 3,
        "the new rows",
      );
      const since = await c.ok<{ text: string; missed: boolean }>("capture_since", {
        paneId: id,
        cursor,
      });
      assert.match(since.text, /three new rows\n(.*\n)*here$/);
      assert.equal(since.missed, false);
      await grown("capture_since after new rows");
    },
    {},
    { width: WIDTH, height: 50 },
  );
});

/**
 * Makes `calls` in turn, each holding tmux's peak memory within 8 MiB of `before` (what the
 * pane and a plain read of it cost); returns the check, for calls made after.
 */
async function calledWithin(
  t: StartedTmux,
  c: TestClient,
  calls: [string, Record<string, unknown>][],
  before: number,
): Promise<(what: string) => Promise<void>> {
  const grown = async (what: string) => {
    const kib = (await peakKiB(t)) - before;
    assert.ok(kib < 8_192, `${what}: tmux's peak grew ${kib} KiB`);
  };
  for (const [name, args] of calls) {
    await c.ok(name, args);
    await grown(`${name} ${JSON.stringify(args)}`);
  }
  return grown;
}

Deno.test("with their escapes, such rows are read in the same runs: tmux's peak memory stays what a plain read costs", async () => {
  await withTmux(
    async (t, c) => {
      await t.tmux("set-option", "-g", "history-limit", "5000");
      const id = await t.printing(heavyRows(ROWS, WIDTH), "END");
      await t.tmux("capture-pane", "-p", "-t", id, "-S", "-");
      // Read whole with -e, these grew tmux by 8-28 MB each; the rest is counted as printed.
      await calledWithin(t, c, [
        ["capture_pane", { paneId: id, start: -5_000, maxLines: 10, escapes: true }],
        ["capture_pane", { paneId: id, start: -2_000, maxLines: 10_000, escapes: true }],
        [
          "capture_pane",
          { paneId: id, start: -2_000, maxLines: 10_000, escapes: true, joinWrapped: true },
        ],
        ["snapshot_pane", { paneId: id, maxLines: 10_000, escapes: true }],
      ], await peakKiB(t));
    },
    {},
    { width: WIDTH, height: 50 },
  );
});

Deno.test("search_panes of a pane colouring every cell finds what a whole read as shown finds", async () => {
  await withTmux(
    async (t, c) => {
      const id = await t.printing(heavyRows(300, 120), "END");
      const lines = await shownLines(t, id);
      for (const pattern of ["qqqq", "q q", "q  q"]) {
        const got = await c.ok<{ totalMatches: number; matches: { text: string }[] }>(
          "search_panes",
          { pattern, scrollbackLines: 2_000, maxMatchesPerPane: 3 },
        );
        const want = lines.filter((l) => l.includes(pattern));
        assert.equal(got.totalMatches, want.length, pattern);
        assert.deepEqual(got.matches.map((m) => m.text), want.slice(-3), pattern);
      }
    },
    {},
    { width: 120, height: 20 },
  );
});

Deno.test("omittedBytes counts the lines left out as printed, read or not: a line-drawing letter a byte", async () => {
  await withTmux(async (t, c) => {
    const rows = Array.from({ length: 60 }, () => `\x1b(0${"q".repeat(50)}\x1b(B`);
    const id = await t.printing(rows.join("\r\n") + "\r\n", "q".repeat(50));
    type Cut = { droppedLines: number; omittedBytes: number; text: string };
    for (
      const args of [
        { maxLines: 1 },
        { start: -22, end: -1, maxLines: 1 },
        { start: -40, maxLines: 3 },
        { start: -40, maxLines: 3, joinWrapped: true },
      ]
    ) {
      const got = await c.ok<Cut>("capture_pane", { paneId: id, ...args });
      assert.ok(got.droppedLines > 0, JSON.stringify(args));
      assert.ok(got.text.endsWith("─".repeat(50)), JSON.stringify(args));
      // Each line left out: 50 letters and its newline, as printed.
      assert.equal(got.omittedBytes, got.droppedLines * 51, JSON.stringify(args));
    }
  });
});

Deno.test("printedCut: lines left out count as printed, a line cut at its head its head's columns as printed", () => {
  const shown = ["┌──┐", "a  b", "────────"];
  const printed = ["lqqk", "aXYb", "qqqqqqqq"];
  // The last line kept whole, the two before left out: 5 and 5 bytes as printed, not 13 and 5.
  const whole = tailLines(shown, 1, 1_000, { lines: 3, bytes: 30 });
  assert.equal(printedCut(whole, shown, printed, 30).omittedBytes, 30 + 5 + 5);
  // Cut at its head: 3 glyphs left out are 3 letters.
  const cut = tailLines(shown.slice(2), 1, 2 + 5 * 3, { lines: 0, bytes: 0 });
  assert.equal(cut.firstLineCut, true);
  assert.equal(cut.text, "─────");
  assert.equal(printedCut(cut, shown.slice(2), printed.slice(2), 0).omittedBytes, 3);
  // Without the printed lines (escapes): as it was.
  assert.equal(printedCut(whole, shown, undefined, 30), whole);
});
