/**
 * `capture_pane` with `escapes: true` reads its rows in runs (tmux builds an `-e` capture whole,
 * at up to ~45 bytes a cell: a window of them read at once stalled the person's tmux). Where
 * one run meets the run above it, tmux starts the lower run from default attributes and so
 * gives no code for a colour the row above left set: the text must still draw every character
 * as a whole read of the same rows draws it. And the lines left out count as printed, as they
 * do without escapes.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import type { StartedTmux } from "./helpers/mcp.ts";

/**
 * Each character of `text` (lines of `capture-pane -e`) with the SGR state it is drawn in, a
 * line per row: the state as a terminal keeps it, carried from line to line.
 */
function drawn(text: string): string[][] {
  const state = new Map<string, string>();
  let shifted = false;
  const set = (params: number[]) => {
    for (let i = 0; i < params.length; i++) {
      const p = params[i];
      if (p === 0) state.clear();
      else if (p === 38 || p === 48) {
        const key = p === 38 ? "fg" : "bg";
        const n = params[i + 1] === 5 ? 2 : 4;
        state.set(key, params.slice(i + 1, i + 1 + n).join(":"));
        i += n;
      } else if (p === 39) state.delete("fg");
      else if (p === 49) state.delete("bg");
      else if ((p >= 30 && p <= 37) || (p >= 90 && p <= 97)) state.set("fg", String(p));
      else if ((p >= 40 && p <= 47) || (p >= 100 && p <= 107)) state.set("bg", String(p));
      else if (p >= 22 && p <= 29) state.delete(`a${p === 22 ? 1 : p - 20}`);
      else state.set(`a${p}`, "");
    }
  };
  return text.split("\n").map((line) => {
    const cells: string[] = [];
    // deno-lint-ignore no-control-regex
    for (const m of line.matchAll(/\x1b\[([0-9;:]*)m|([\x0e\x0f])|([^\x1b\x0e\x0f])/g)) {
      if (m[2] !== undefined) shifted = m[2] === "\x0e";
      else if (m[3] === undefined) set((m[1] || "0").split(/[;:]/).map(Number));
      else {
        const attrs = [...state].sort().map(([k, v]) => `${k}=${v}`).join(",");
        cells.push(`${attrs}${shifted ? ",acs" : ""}|${m[3]}`);
      }
    }
    // Trailing spaces are trimmed either way: compare what shows.
    while (cells.length > 0 && cells[cells.length - 1].endsWith("| ")) cells.pop();
    return cells;
  });
}

/** Rows whose colours start on one row and go on through the next ones. */
function carriedColours(rows: number): string {
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const text = `row ${r} ${"x".repeat(r % 7)}`;
    switch (r % 5) {
      case 0:
        out.push(`\x1b[31;44m${text}`);
        break;
      case 2:
        out.push(`\x1b[0m${text} \x1b[1;38;5;${r % 256}m!`);
        break;
      case 3:
        out.push(`\x1b[0m${text}`);
        break;
      default:
        out.push(text);
    }
  }
  return out.join("\r\n") + "\x1b[0m\r\nEND\r\n";
}

type Capture = {
  text: string;
  firstLineNumber: number;
  returnedLines: number;
  droppedLines: number;
  omittedBytes: number;
};

/** Every character of `got` is drawn as in one whole read (`-e`) of the rows it gives. */
async function drawnAsWhole(t: StartedTmux, id: string, got: Capture): Promise<void> {
  const whole = await t.tmux(
    "capture-pane",
    "-p",
    "-e",
    "-t",
    id,
    "-S",
    String(got.firstLineNumber),
    "-E",
    String(got.firstLineNumber + got.returnedLines - 1),
  );
  const want = drawn(whole.replace(/\n$/, ""));
  const have = drawn(got.text);
  assert.equal(have.length, want.length);
  for (let i = 0; i < want.length; i++) {
    assert.deepEqual(have[i], want[i], `line ${got.firstLineNumber + i}`);
  }
}

Deno.test("escapes read in runs draw every character as a whole read of the same rows does", async () => {
  await withTmux(
    async (t, c) => {
      await t.tmux("set-option", "-g", "history-limit", "5000");
      const id = await t.printing(carriedColours(3_000), "END");
      for (const joinWrapped of [false, true]) {
        // 2 000 short rows: two runs or more (a run holds about 16 KiB as printed).
        const got = await c.ok<Capture>("capture_pane", {
          paneId: id,
          start: -2_500,
          maxLines: 2_000,
          escapes: true,
          joinWrapped,
        });
        assert.ok(got.returnedLines > 1_000, `joinWrapped ${joinWrapped}: ${got.returnedLines}`);
        await drawnAsWhole(t, id, got);
        // The lines above, left out, count as printed: `row N xx…` and a newline each.
        const above = await t.tmux(
          "capture-pane",
          "-p",
          "-t",
          id,
          "-S",
          "-2500",
          "-E",
          String(got.firstLineNumber - 1),
        );
        assert.equal(got.droppedLines, above.split("\n").length - 1);
        assert.equal(got.omittedBytes, new TextEncoder().encode(above).length);
      }
      // A reply of a few lines starts with what the lines above it left set: each line is drawn
      // as in a whole read from well above (the rows' colours hold for five rows at most).
      // The read starts above the lines kept (at the screen, or its rows a reply can keep).
      const whole = await t.tmux("capture-pane", "-p", "-e", "-t", id, "-S", "-60");
      const want = drawn(whole.replace(/\n+$/, ""));
      for (let n = 1; n <= 5; n++) {
        const got = await c.ok<Capture>("capture_pane", {
          paneId: id,
          start: -60,
          maxLines: n,
          escapes: true,
        });
        assert.deepEqual(drawn(got.text), want.slice(-n), `the last ${n}`);
      }
    },
    {},
    { width: 200, height: 20 },
  );
});

Deno.test("escapes read in runs: a run below one that ended in the line-drawing set starts in the normal set", async () => {
  await withTmux(
    async (t, c) => {
      await t.tmux("set-option", "-g", "history-limit", "5000");
      const rows = Array.from(
        { length: 1_200 },
        (_, i) => `L${String(i).padStart(4, "0")} ${"a".repeat(70)}\x1b(0qqqq\x1b(B`,
      );
      const id = await t.printing(rows.join("\r\n") + "\r\nEND\r\n", "END");
      const got = await c.ok<Capture>("capture_pane", {
        paneId: id,
        start: -1_000,
        maxLines: 1_000,
        escapes: true,
      });
      assert.ok(got.returnedLines > 300, `${got.returnedLines} lines`);
      await drawnAsWhole(t, id, got);
    },
    {},
    { width: 80, height: 20 },
  );
});

Deno.test("escapes: a line-drawing row left out counts a byte a letter, as printed", async () => {
  await withTmux(async (t, c) => {
    const rows = Array.from({ length: 60 }, () => `\x1b(0${"q".repeat(50)}\x1b(B`);
    const id = await t.printing(rows.join("\r\n") + "\r\n", "q".repeat(50));
    for (
      const args of [
        { maxLines: 1 },
        { start: -40, maxLines: 3 },
        { start: -40, maxLines: 3, joinWrapped: true },
      ]
    ) {
      const got = await c.ok<Capture>("capture_pane", { paneId: id, escapes: true, ...args });
      assert.ok(got.droppedLines > 0, JSON.stringify(args));
      assert.ok(got.text.endsWith(`${"q".repeat(50)}`), JSON.stringify(got.text));
      // tmux marks the line-drawing set with SO where it gives the escapes: a line cut out of
      // the rows starts so too.
      assert.ok(got.text.startsWith("\x0e"), JSON.stringify(got.text));
      assert.equal(got.omittedBytes, got.droppedLines * 51, JSON.stringify(args));
    }
  });
});
