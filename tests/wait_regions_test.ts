/**
 * A watch's rows where their numbers do not follow the output: a scroll region below a fixed
 * header (tmux moves the region's top row into the history, above the header), a history of
 * no rows (what scrolls off the top is gone, and the history size says nothing), and a history
 * cleared or trimmed back to the size it had. What the pane showed before is never told as
 * written, and what it wrote is told.
 */

import assert from "node:assert/strict";
import { controlFor } from "../src/tmux/control.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { probePane } from "../src/tools/pane_probe.ts";
import { WatchedRows } from "../src/tools/watch_rows.ts";
import { testContext, withTmux } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";
import { quietPane, type Server, type Watched, withWatched } from "./helpers/watched.ts";

/** What reads of the watch tell, in order, until one tells nothing. */
async function shown(w: Watched): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < 20; i++) {
    const read = await w.watched.read();
    if (read.again) continue;
    const rows = (read.rows ?? []).map((r) => r.shown);
    if (rows.length === 0) break;
    out.push(...rows);
  }
  return out;
}

/** `line 1` to `line n` (or another word than `line`), each ended by CR LF. */
function numbered(from: number, to: number, what = "line"): string {
  let s = "";
  for (let i = from; i <= to; i++) s += `${what} ${i}\r\n`;
  return s;
}

/** The lines `line from` to `line to`. */
function expected(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
}

// The pane is 30 x 8: a header of two rows, then a scroll region of rows 3 to 8.
const HEADER = "HEAD-ONE\r\nHEAD-TWO\r\n\x1b[3;8r";

Deno.test("under a scroll region below a header, the header is never told and every line is", async () => {
  // The cursor at the region's last row, and at its first.
  for (const at of ["\x1b[8;1H", "\x1b[3;1H"]) {
    await withWatched(HEADER + at, async (_t, w) => {
      await w.write(numbered(1, 3));
      const first = await shown(w);
      await w.write(numbered(4, 15));
      const all = [...first, ...await shown(w)];
      assert.ok(!all.some((s) => s.includes("HEAD")), JSON.stringify(all));
      assert.deepEqual(all, expected(1, 15), JSON.stringify(at));
      assert.equal(w.watched.movedUnseen, null, "rows that moved were followed");
    });
  }
});

Deno.test("under a scroll region, a burst longer than the screen between two reads is told whole", async () => {
  await withWatched(HEADER + "\x1b[8;1H", async (_t, w) => {
    await w.write(numbered(1, 30));
    assert.deepEqual(await shown(w), expected(1, 30));
  });
});

Deno.test("under a scroll region above a status line, the status line is never told", async () => {
  // Rows 1 to 6 scroll; rows 7 and 8 hold a status line.
  const setup = "\x1b[7;1HSTATUS-LINE\x1b[1;6r\x1b[6;1H";
  await withWatched(setup, async (_t, w) => {
    await w.write(numbered(1, 4));
    const first = await shown(w);
    await w.write(numbered(5, 12));
    const all = [...first, ...await shown(w)];
    assert.deepEqual(all, expected(1, 12));
  });
});

Deno.test("a header changed under a scroll region is told; the region given back, only what is written next is", async () => {
  await withWatched(HEADER + "\x1b[8;1H", async (_t, w) => {
    await w.write(numbered(1, 9));
    assert.deepEqual(await shown(w), expected(1, 9));
    // The program draws its header again, changed, and goes back to the region.
    await w.write("\x1b7\x1b[1;1HHEAD-NEW\x1b[K\x1b8");
    assert.deepEqual(await shown(w), ["HEAD-NEW"]);
    // It ends: the whole screen scrolls again, and it prints its last line.
    await w.write("\x1b[r\x1b[8;1H\r\nDONE\r\n");
    assert.deepEqual(await shown(w), ["DONE"]);
  });
});

Deno.test("wait_for_text under a scroll region: a header that moved is not matched, a line scrolled into the history is", async () => {
  await withTmux(
    async (t: Server, c) => {
      const p = t.ids.paneId;
      const tty = await quietPane(t, p);
      // A 24-row screen: the region is rows 3 to 24.
      await tty.write("HEAD-ONE\r\nHEAD-TWO\r\n\x1b[3;24r\x1b[24;1H");
      const waiting = c.ok<{ outcome: string; lines: string[] }>("wait_for_text", {
        paneId: p,
        patterns: ["HEAD", "line 2$"],
        regex: true,
      });
      const hub = controlFor(c.server.runner, { socketName: t.socket });
      await waitFor(() => hub.watchers >= 1, "the wait to subscribe");
      // Line 2 is in the history, above the header, before any read can see it.
      await tty.write(numbered(1, 40));
      const result = await waiting;
      assert.equal(result.outcome, "matched");
      assert.deepEqual(result.lines, ["line 2"]);
    },
    {},
    { noChildLeft: true },
  );
});

Deno.test("a region set, scrolled and given back between two reads: the header on screen before is not told", async () => {
  // The header is plain text before the watch; the cursor on row 3.
  await withWatched("HEAD-ONE\r\nHEAD-TWO\r\n", async (_t, w) => {
    await w.write("\x1b[3;8r\x1b[8;1H" + numbered(1, 12) + "\x1b[r\x1b[8;1H");
    const all = await shown(w);
    assert.ok(!all.some((s) => s.includes("HEAD")), JSON.stringify(all));
    assert.deepEqual(all, expected(1, 12));
  });
});

Deno.test("wait_for_text: a region set, scrolled and given back in one burst does not match what was above it before", async () => {
  await withTmux(
    async (t: Server, c) => {
      const p = t.ids.paneId;
      const tty = await quietPane(t, p);
      // Before the wait: an old verdict at the top of the screen, the cursor below it.
      await tty.write("BUILD FAILED\r\nold\r\n");
      const waiting = c.ok<{ outcome: string; lines: string[] }>("wait_for_text", {
        paneId: p,
        patterns: ["BUILD FAILED", "DONE"],
      });
      const hub = controlFor(c.server.runner, { socketName: t.socket });
      await waitFor(() => hub.watchers >= 1, "the wait to subscribe");
      // A program keeps rows 1 and 2 (a region below them), prints, and gives the screen back.
      await tty.write("\x1b[3;24r\x1b[24;1H" + numbered(1, 40) + "\x1b[r\x1b[24;1H");
      await tty.write("DONE\r\n");
      const result = await waiting;
      assert.deepEqual(result.lines, ["DONE"], JSON.stringify(result));
    },
    {},
    { noChildLeft: true },
  );
});

Deno.test("under a region with the cursor on the status line below it, a tick before the baseline's read does not make the region's old rows new", async () => {
  const t = await TestTmux.start("main", { width: 30, height: 8 });
  const runner = new TmuxRunner();
  const ctx = testContext(runner, t.socket);
  try {
    const p = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "-t", "main")).trim();
    const tty = await quietPane(t, p);
    // Old output in rows 1 to 6 (a scroll region), a status line on row 7, the cursor there.
    await tty.write("ERROR old 1\r\nold 2\r\nold 3\r\n\x1b[1;6r\x1b[7;1Htick 1");
    const start = await probePane(ctx, p);
    const w = new WatchedRows(ctx, p, start, true);
    const screen = (await t.tmux("capture-pane", "-p", "-J", "-t", p)).split("\n");
    w.keepScreen(screen.filter((l) => l.trim() !== ""));
    // The status line ticks (the cursor moves) between the start's tmux call and the baseline's.
    await tty.write("\x1b[7;1Htick 10");
    await w.readBaseline();
    const told: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await w.read();
      if (r.again) continue;
      told.push(...(r.rows ?? []).map((x) => x.shown));
    }
    assert.ok(!told.some((s) => s.includes("old")), JSON.stringify(told));
    // What the region prints next is told.
    await tty.write("\x1b[6;1H\r\nnew 1\r\nnew 2\x1b[7;1H");
    const next: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await w.read();
      if (r.again) continue;
      next.push(...(r.rows ?? []).map((x) => x.shown));
    }
    assert.deepEqual(next, ["new 1", "new 2"]);
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("ESC[3J and more output than the history held, between two reads, the start row on the screen: the output is told", async () => {
  // Three rows of history, the cursor on the last row. The rows above the start are on the
  // screen: once the history has grown they are not where their numbers put them.
  await withWatched(numbered(101, 110), async (_t, w) => {
    await w.write("line 1\r\n");
    assert.deepEqual(await shown(w), ["line 1"]);
    await w.write("\x1b[3J" + numbered(2, 7));
    assert.deepEqual(await shown(w), expected(2, 7));
  }, { skips: true });
});

// Before the watch: an old verdict scrolled into the history (3 rows of it), the cursor on
// the last row.
const TALLER = "OLD-VERDICT\r\n" + numbered(1, 9, "pad");

for (
  const [name, burst] of [
    // A program that keeps a status line at the bottom (apt's progress) sets its region.
    ["a scroll region set", "\x1b[1;15r\x1b[11;1Hline 1\r\n"],
    // One below a header: the rows taken back that it keeps at the top are no output either.
    ["a scroll region below a header set", "\x1b[3;15r\x1b[11;1Hline 1\r\n"],
    // A program redraws a row above the start (a progress bar) and goes on printing.
    ["a row above the start redrawn", "\x1b7\x1b[6;1Hpad 5 redrawn\x1b8" + numbered(1, 8)],
  ]
) {
  Deno.test(`a pane made taller, then ${name}: the rows taken back from the history are not told`, async () => {
    await withWatched(TALLER, async (t, w) => {
      const p = (await t.tmux("display-message", "-p", "-t", "main:1", "#{pane_id}")).trim();
      const history = async () =>
        Number(await t.tmux("display-message", "-p", "-t", p, "#{history_size}"));
      assert.equal(await history(), 3);
      // The pane is made taller: tmux takes its 3 history rows back onto the screen.
      await t.tmux("resize-window", "-t", p, "-y", "16");
      assert.equal(await history(), 0);
      assert.deepEqual(await shown(w), []);
      await w.write(burst);
      const all = await shown(w);
      assert.ok(!all.some((s) => s.includes("OLD-VERDICT")), JSON.stringify(all));
      assert.ok(all.includes("line 1"), JSON.stringify(all));
    });
  });
}

Deno.test("wait_for_text, the pane zoomed during the wait and a status-line program starting: an old verdict in the history is not matched", async () => {
  await withTmux(
    async (t: Server, c) => {
      const p = t.ids.paneId;
      const tty = await quietPane(t, p);
      // Before the wait: an old verdict, then more output; a split pushes it into the history.
      await tty.write("BUILD FAILED\r\n" + numbered(1, 15, "old"));
      await t.tmux("split-window", "-v", "-d", "-t", p);
      const history = Number(await t.tmux("display-message", "-p", "-t", p, "#{history_size}"));
      assert.ok(history > 0, "the verdict is in the history");
      const waiting = c.ok<{ outcome: string; lines: string[] }>("wait_for_text", {
        paneId: p,
        patterns: ["BUILD FAILED", "DONE"],
      });
      const hub = controlFor(c.server.runner, { socketName: t.socket });
      await waitFor(() => hub.watchers >= 1, "the wait to subscribe");
      // The pane is zoomed: tmux takes its history rows back onto the taller screen.
      await t.tmux("resize-pane", "-Z", "-t", p);
      // A program keeps a status line on the last row (apt's progress bar: the cursor saved and
      // put back around each move), prints, ends.
      await tty.write("\x1b7\x1b[1;23r\x1b8Setting up foo\r\n\x1b7\x1b[24;1HProgress: 50%\x1b8");
      await tty.write("\x1b7\x1b[r\x1b[24;1H\x1b[K\x1b8DONE\r\n");
      const result = await waiting;
      assert.deepEqual(result.lines, ["DONE"], JSON.stringify(result));
    },
    {},
    { noChildLeft: true },
  );
});

/**
 * Not closed yet (the two tests after the next fail): where the rows moved and the history did
 * not grow (none at all, or one full under 20 rows), the rows above the start are not read
 * again, and the rows from the start on would have to be found by their text; rows above the
 * start that were in the history then (never read) would pass for new. What a wait says
 * meanwhile is pinned by the next test.
 */
/** Set to run the tests of what is not closed yet. */
const OPEN = !Deno.env.get("TMUX_MCP_OPEN_GAPS");

Deno.test("a pane with a history of fewer than 20 rows, full: the watch says rows may have moved unread", async () => {
  await withWatched(numbered(101, 107), async (_t, w) => {
    await w.write("line 1\r\n");
    await shown(w);
    assert.equal(w.watched.movedUnseen, 0);
  }, { historyLimit: 0, skips: true });
});

Deno.test({
  name: "with history-limit 0, a line printed on the bottom row is told after it scrolled off it",
  ignore: OPEN,
  fn: async () => {
    // Seven lines: the cursor on the screen's last row.
    await withWatched(numbered(101, 107), async (_t, w) => {
      await w.write("line 1\r\n");
      assert.deepEqual(await shown(w), ["line 1"]);
      await w.write(numbered(2, 4));
      assert.deepEqual(await shown(w), expected(2, 4));
      // More than the screen at once: those still on it are told.
      await w.write(numbered(5, 20));
      assert.deepEqual(await shown(w), expected(13, 20));
    }, { historyLimit: 0, skips: true });
  },
});

Deno.test({
  name: "at a history limit under 20, a burst that brings the history back to its size is told",
  ignore: OPEN,
  fn: async () => {
    await withWatched(numbered(101, 130), async (_t, w) => {
      await w.write("line 1\r\n");
      assert.deepEqual(await shown(w), ["line 1"]);
      await w.write(numbered(2, 5));
      assert.deepEqual(await shown(w), expected(2, 5));
    }, { historyLimit: 10, skips: true });
  },
});

// Rows a taller screen took back from the history (old: an old verdict among them), then a
// program's region, or a reflow: none of them is told, and what was written is.
type Step = string | string[]; // a string is written ("read": the watch reads); an array resizes
const grown: [string, Step[]][] = [
  ["taller and wider at once, then a region", [
    ["-y", "16", "-x", "40"],
    "read",
    "\x1b[1;15r\x1b[11;1Hline 1\r\n",
  ]],
  ["taller, then a region below a header set and reset", [
    ["-y", "16"],
    "read",
    "\x1b[3;16r\x1b[16;1H" + numbered(1, 20) + "\x1b[r\x1b[16;1H",
  ]],
  ["taller, then a region below a header set and reset, unread between", [
    ["-y", "16"],
    "\x1b[3;16r\x1b[16;1H" + numbered(1, 20) + "\x1b[r\x1b[16;1H",
  ]],
  ["taller, then a short region below a header set and reset", [
    ["-y", "16"],
    "read",
    "\x1b[3;16r\x1b[16;1H" + numbered(1, 3) + "\x1b[r\x1b[16;1H",
  ]],
  ["taller then wider, then a region", [
    ["-y", "16"],
    "read",
    ["-x", "40"],
    "read",
    "\x1b[1;15r\x1b[11;1Hline 1\r\n",
  ]],
  ["taller and wider at once, then lines", [["-y", "16", "-x", "40"], "read", numbered(1, 3)]],
  ["wider, then a region", [["-x", "40"], "read", "\x1b[1;7r\x1b[7;1H" + numbered(1, 3)]],
  ["taller, shorter, taller, then a region", [
    ["-y", "16"],
    "read",
    ["-y", "6"],
    "read",
    ["-y", "16"],
    "read",
    "\x1b[1;15r\x1b[11;1Hline 1\r\n",
  ]],
  // Lines written after the width change and before the next read (above the cursor's row).
  ["taller and wider at once, then lines unread", [["-y", "16", "-x", "40"], numbered(1, 3)]],
  ["wider, then lines unread", [["-x", "40"], numbered(1, 3)]],
  ["narrower, then lines unread", [["-x", "20"], numbered(1, 3)]],
];
for (const [name, steps] of grown) {
  Deno.test(`a screen made ${name}: no row taken back from the history is told, and what was written is`, async () => {
    await withWatched(TALLER, async (t, w) => {
      const p = (await t.tmux("display-message", "-p", "-t", "main:1", "#{pane_id}")).trim();
      const all: string[] = [];
      for (const s of steps) {
        if (Array.isArray(s)) await t.tmux("resize-window", "-t", p, ...s);
        else if (s === "read") all.push(...await shown(w));
        else await w.write(s);
      }
      all.push(...await shown(w));
      assert.ok(!all.some((s) => /OLD|pad [0-9]$/.test(s)), JSON.stringify(all));
      assert.ok(all.includes("line 1"), "miss " + JSON.stringify(all));
    }, { skips: true });
  });
}

for (
  const [name, resize, burst] of [
    // A person maximises their terminal (wider and taller at once); then apt sets its region.
    [
      "made taller and wider at once, then a status-line program",
      ["-x", "100", "-y", "40"],
      "\x1b7\x1b[1;39r\x1b8Setting up foo\r\n\x1b7\x1b[40;1HProgress: 50%\x1b8\x1b7\x1b[r\x1b[40;1H\x1b[K\x1b8DONE\r\n",
    ],
    // Made taller, then a program keeps a two-row header, prints, gives the screen back.
    [
      "made taller, then a region below a header set and reset",
      ["-y", "40"],
      "\x1b[3;40r\x1b[40;1H" + numbered(1, 60) + "\x1b[r\x1b[40;1HDONE\r\n",
    ],
  ] as const
) {
  Deno.test(`wait_for_text: the window ${name}: an old verdict in the history is not matched`, async () => {
    await withTmux(
      async (t: Server, c) => {
        const p = t.ids.paneId;
        const tty = await quietPane(t, p);
        // Before the wait: an old verdict, scrolled into the history (16 rows of it).
        await tty.write("BUILD FAILED\r\n" + numbered(1, 38, "old"));
        const waiting = c.ok<{ outcome: string; lines: string[] }>("wait_for_text", {
          paneId: p,
          patterns: ["BUILD FAILED", "DONE"],
        });
        const hub = controlFor(c.server.runner, { socketName: t.socket });
        await waitFor(() => hub.watchers >= 1, "the wait to subscribe");
        await t.tmux("resize-window", "-t", p, ...resize);
        if (name.includes("wider")) await tty.write("Reading package lists\r\n");
        await tty.write(burst);
        const result = await waiting;
        assert.deepEqual(result.lines, ["DONE"], JSON.stringify(result));
      },
      {},
      { noChildLeft: true },
    );
  });
}

Deno.test("a screen made taller and wider at once, then a region: a read by content begins no higher than the reflow's, the history's rows unkept", async () => {
  await withWatched(TALLER, async (t, w) => {
    const p = (await t.tmux("display-message", "-p", "-t", "main:1", "#{pane_id}")).trim();
    await t.tmux("resize-window", "-t", p, "-y", "16", "-x", "40");
    const all = await shown(w);
    await w.write("\x1b[1;15r\x1b[11;1Hline 1\r\n");
    all.push(...await shown(w));
    assert.ok(!all.some((s) => /OLD|pad [0-9]$/.test(s)), JSON.stringify(all));
    assert.ok(all.includes("line 1"), "miss " + JSON.stringify(all));
  }, { skips: true, history: false });
});

for (
  const [name, resize] of [["wider", ["-x", "100"]], ["taller and wider at once", [
    "-x",
    "100",
    "-y",
    "40",
  ]]]
) {
  Deno.test(`wait_for_text: the window made ${name}, then a line printed: it is matched`, async () => {
    await withTmux(
      async (t: Server, c) => {
        const p = t.ids.paneId;
        const tty = await quietPane(t, p);
        await tty.write(numbered(1, 38, "old"));
        const waiting = c.ok<{ outcome: string; lines: string[] }>("wait_for_text", {
          paneId: p,
          patterns: ["DONE"],
          timeoutMs: 10_000,
        });
        const hub = controlFor(c.server.runner, { socketName: t.socket });
        await waitFor(() => hub.watchers >= 1, "the wait to subscribe");
        await t.tmux("resize-window", "-t", p, ...resize);
        await tty.write("DONE\r\n");
        const result = await waiting;
        assert.deepEqual(result.lines, ["DONE"], JSON.stringify(result));
      },
      {},
      { noChildLeft: true },
    );
  });
}

Deno.test("a screen made wider, then lines unread after a prompt: an old copy of the prompt above does not make old lines new", async () => {
  // The last line read is the prompt; an old copy of it sits above an old verdict.
  await withWatched("$\r\nOLD-VERDICT\r\n$ ", async (t, w) => {
    const p = (await t.tmux("display-message", "-p", "-t", "main:1", "#{pane_id}")).trim();
    await t.tmux("resize-window", "-t", p, "-x", "40");
    await w.write("make\r\nline 1\r\n$ ");
    const all = await shown(w);
    assert.ok(!all.some((s) => /OLD/.test(s)), JSON.stringify(all));
  }, { skips: true });
});
