import assert from "node:assert/strict";
import { TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import {
  alignJoined,
  ANCHOR_ROWS,
  captureMany,
  captureRange,
  captureRows,
  chainPanes,
  clampRow,
  compareSince,
  CursorError,
  cursorFor,
  decodeCursor,
  encodeCursor,
  indexOfBytes,
  isBlankRow,
  lastWrittenIndex,
  type NormalGrid,
  paneRows,
  type PaneState,
  readPaneState,
  rowHash,
  type SinceCursor,
  stripEscapes,
  trimRow,
} from "./capture.ts";
import { TmuxError, TmuxRunner } from "./run.ts";

// ---------------------------------------------------------------------------------------------
// Pure pieces

Deno.test("trimRow trims spaces only, as tmux's default capture does", () => {
  assert.equal(trimRow("abc   "), "abc");
  assert.equal(trimRow("abc\t"), "abc\t");
  assert.equal(trimRow("  "), "");
  assert.equal(trimRow("\x1b[31mred\x1b[39m  "), "\x1b[31mred\x1b[39m");
});

Deno.test("stripEscapes and isBlankRow see through colour sequences", () => {
  assert.equal(
    stripEscapes("\x1b[31mred\x1b[0m \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
    "red link",
  );
  assert.equal(isBlankRow("\x1b[41m   \x1b[49m"), true);
  assert.equal(isBlankRow(" x "), false);
  assert.equal(isBlankRow(""), true);
});

Deno.test("lastWrittenIndex: history rows always count, blank screen rows below the end do not", () => {
  assert.equal(lastWrittenIndex(["a", "", "b", "", ""], 0), 2);
  assert.equal(lastWrittenIndex(["", "", ""], 0), -1);
  // Rows -2 and -1 are history: blank or not, they were written.
  assert.equal(lastWrittenIndex(["x", "", "", ""], -2), 1);
});

Deno.test("alignJoined finds where each joined line starts, or admits it cannot", () => {
  const rows = ["aaaa", "aa", "b", "", "cccc", "c"];
  assert.deepEqual(alignJoined(rows, ["aaaaaa", "b", "", "ccccc"]), [0, 2, 3, 4]);
  assert.deepEqual(alignJoined(rows, rows), [0, 1, 2, 3, 4, 5]);
  assert.equal(alignJoined(rows, ["aaaaaa", "x"]), null);
  assert.equal(alignJoined(rows, ["aaaaaa"]), null, "rows left over");
});

Deno.test("clampRow and captureRange follow cmd-capture-pane.c", () => {
  // 10 history rows, 5 screen rows: rows -10..4.
  assert.equal(clampRow(-3, 10, 5), -3);
  assert.equal(clampRow(-11, 10, 5), -10);
  assert.equal(clampRow(-1e12, 10, 5), -10);
  assert.equal(clampRow(9, 10, 5), 4);
  assert.equal(clampRow(1e12, 10, 5), 4);
  assert.deepEqual(captureRange({}, { historySize: 10, height: 5 }), { top: 0, bottom: 4 });
  assert.deepEqual(captureRange({ start: "history" }, { historySize: 10, height: 5 }), {
    top: -10,
    bottom: 4,
  });
  assert.deepEqual(captureRange({ start: 3, end: -2 }, { historySize: 10, height: 5 }), {
    top: -2,
    bottom: 3,
  });
});

Deno.test("cursors round-trip, and anything else is refused as malformed", () => {
  const cursor: SinceCursor = {
    serverPid: 123,
    paneId: "%7",
    panePid: 456,
    width: 80,
    historyLimit: 2000,
    historySize: 30,
    base: 22,
    cursorRow: 40,
    rows: rowHash("a") + rowHash("b"),
    altHash: null,
  };
  const text = encodeCursor(cursor);
  assert.deepEqual(decodeCursor(text), cursor);
  assert.deepEqual(
    decodeCursor(encodeCursor({ ...cursor, altHash: rowHash("x") })).altHash,
    rowHash("x"),
  );
  const [prefix, payload, check] = text.split(".");
  for (
    const bad of [
      "",
      "garbage",
      `${prefix}.${payload}`,
      `${prefix}.${payload}.${check}.x`,
      `${prefix}.${payload.slice(1)}.${check}`,
      `${prefix}.${payload}.${check.replace(/^./, (c) => c === "A" ? "B" : "A")}`,
      `tmc9.${payload}.${check}`,
    ]
  ) {
    assert.throws(() => decodeCursor(bad), CursorError, bad);
  }
  // A well-formed payload with the wrong shape is refused too.
  const body = JSON.stringify([1, "not a pane", 2, 3, 4, 5, 6, 7, "", null]);
  const b64 = btoa(body).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  assert.throws(() => decodeCursor(`tmc1.${b64}.${rowHash(body)}`), CursorError);
});

const STATE: PaneState = {
  paneId: "%1",
  panePid: 10,
  serverPid: 20,
  width: 80,
  height: 4,
  historySize: 0,
  historyLimit: 100,
  cursorX: 0,
  cursorY: 0,
  alternateScreen: false,
  inMode: false,
  mode: "",
  scrollPosition: null,
  dead: false,
};

/** A grid holding `all` rows from the top of history, the last `height` on screen. */
function grid(
  all: string[],
  options: { height?: number; cursorRow?: number; limit?: number; width?: number } = {},
): NormalGrid {
  const height = options.height ?? 4;
  const historySize = Math.max(0, all.length - height);
  const rows = [...all, ...Array(Math.max(0, height - all.length)).fill("")];
  return {
    historySize,
    historyLimit: options.limit ?? 100,
    width: options.width ?? 80,
    first: 0,
    rows,
    cursorRow: options.cursorRow ?? historySize + Math.min(all.length, height) - 1,
  };
}

function numbered(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
}

Deno.test("compareSince: nothing written, appended lines, a row rewritten in place", () => {
  const before = grid([...numbered(1, 20), "$ "].map(trimRow));
  const cursor = cursorFor(before, STATE, null);
  assert.equal(cursor.base, before.historySize - ANCHOR_ROWS);
  const same = compareSince(cursor, before);
  assert.deepEqual([same.rows, same.firstRow, same.missed], [[], null, false]);

  const after = grid([...numbered(1, 20), "$ echo hi", "hi", "$"]);
  const added = compareSince(cursor, after);
  assert.deepEqual(added.rows, ["$ echo hi", "hi", "$"]);
  assert.equal(added.firstRow, after.rows.length - after.historySize - 3);
  assert.deepEqual([added.missed, added.trimmedRows], [false, 0]);

  const bar = grid([...numbered(1, 20), "50%"]);
  const barCursor = cursorFor(bar, STATE, null);
  const rewritten = compareSince(barCursor, grid([...numbered(1, 20), "100%"]));
  assert.deepEqual(rewritten.rows, ["100%"]);
});

Deno.test("compareSince: rows moved up by whole trims are found, a loss is reported", () => {
  // limit 100: tmux trims 10 rows at a time; history is 96 of 100 (trims possible).
  const all = numbered(1, 100);
  const cursor = cursorFor(grid(all), STATE, null);
  const trimmed = [...numbered(11, 100), ...numbered(101, 105)];
  const found = compareSince(cursor, grid(trimmed));
  assert.equal(found.missed, false);
  assert.equal(found.trimmedRows, 10);
  assert.deepEqual(found.rows, numbered(101, 105));

  const gone = compareSince(cursor, grid(numbered(500, 599)));
  assert.deepEqual([gone.missed, gone.missedReason], [true, "history-trimmed"]);
  assert.equal(gone.rows.length, 100, "everything the pane still holds");

  // Far below the limit, trims are impossible: a missing anchor means a clear.
  const small = cursorFor(grid(numbered(1, 30)), STATE, null);
  const cleared = compareSince(small, grid(["fresh"]));
  assert.deepEqual([cleared.missed, cleared.missedReason, cleared.rows], [
    true,
    "history-cleared",
    ["fresh"],
  ]);
});

Deno.test("compareSince: a width change is reported as resized, found again or missed", () => {
  const cursor = cursorFor(grid([...numbered(1, 20), "$"]), STATE, null);
  const reflowed = compareSince(cursor, grid([...numbered(1, 20), "$ ls", "out"], { width: 60 }));
  assert.deepEqual([reflowed.resized, reflowed.missed], [true, false]);
  assert.deepEqual(reflowed.rows.slice(-2), ["$ ls", "out"]);
  const lost = compareSince(cursor, grid(["other"], { width: 60 }));
  assert.deepEqual([lost.resized, lost.missed, lost.missedReason], [true, true, "resized"]);
});

// ---------------------------------------------------------------------------------------------
// Against tmux: the facts the module relies on

async function withPane(
  fn: (t: TestTmux, runner: TmuxRunner, paneId: string) => Promise<void>,
  command = "sh",
): Promise<void> {
  const t = await TestTmux.start("cap", { width: 40, height: 6, command });
  const runner = new TmuxRunner();
  try {
    await fn(t, runner, t.ids.paneId);
  } finally {
    await runner.close();
    await t.kill();
  }
}

async function typeAndWait(t: TestTmux, paneId: string, command: string, until: string) {
  await t.tmux("send-keys", "-t", paneId, "-l", command);
  await t.tmux("send-keys", "-t", paneId, "Enter");
  await waitFor(
    async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).includes(until),
    until,
  );
}

Deno.test("tmux: display-message for a missing pane exits 0 with empty values, so the id is checked", async () => {
  await withPane(async (t, runner) => {
    const raw = await t.tmuxRaw("display-message", "-p", "-t", "%99", "[#{pane_id}]");
    assert.deepEqual([raw.code, raw.stdout], [0, "[]\n"]);
    assert.equal(await readPaneState(runner, { socketName: t.socket }, "%99"), null);
    await assert.rejects(
      captureRows(runner, { socketName: t.socket }, "%99", {}),
      (e: unknown) => e instanceof TmuxError && e.kind === "no-target",
    );
  });
});

Deno.test("tmux: -S beyond SHRT_MAX is silently ignored, so captureRows clamps it", async () => {
  await withPane(async (t, runner, id) => {
    await typeAndWait(t, id, "seq 1 30", "\n30\n");
    const ignored = await t.tmux("capture-pane", "-p", "-t", id, "-S", "40000");
    assert.equal(ignored.split("\n").length - 1, 6, "tmux fell back to the visible screen");
    const address = { socketName: t.socket };
    const c = await captureRows(runner, address, id, { start: 40000 });
    assert.deepEqual([c.top, c.bottom, c.rows.length], [5, 5, 1], "the last row, as asked");
    const all = await captureRows(runner, address, id, { start: -1e15, end: 1e15 });
    assert.equal(all.top, -all.state.historySize);
    assert.equal(all.rows.length, all.state.historySize + 6);
  });
});

Deno.test("tmux: history is trimmed a tenth of the limit at once, and clear-history resets it", async () => {
  await withPane(async (t, runner) => {
    await t.tmux("set-option", "-g", "history-limit", "50");
    // history-limit applies to panes created after it is set.
    const pane = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "sh")).trim();
    const address = { socketName: t.socket };
    const size = async () => (await readPaneState(runner, address, pane))!.historySize;
    await typeAndWait(t, pane, "seq 1 60", "\n60\n");
    const sizes = [await size()];
    // Each echo scrolls exactly two rows (the command line and its output) into history.
    for (let i = 0; i < 8; i++) {
      await typeAndWait(t, pane, `echo row-${i}`, `\nrow-${i}\n`);
      sizes.push(await size());
    }
    assert.ok(sizes.every((s) => s >= 45 && s <= 50), `never below limit - limit/10: ${sizes}`);
    const trims = sizes.slice(1).map((s, i) => sizes[i] + 2 - s);
    assert.ok(trims.every((n) => n % 5 === 0), `whole tenths: ${trims}`);
    assert.ok(trims.some((n) => n > 0), `some trim happened: ${sizes}`);
    const top = await captureRows(runner, address, pane, { start: "history" });
    assert.ok(!top.rows.some((r) => trimRow(r) === "1"), "the oldest rows went");
    assert.ok(top.rows.some((r) => trimRow(r) === "60"));
    await t.tmux("clear-history", "-t", pane);
    assert.equal(await size(), 0);
  });
});

Deno.test("captureRows: state and rows from one instant; joined lines; the saved main screen", async () => {
  await withPane(async (t, runner, id) => {
    const address = { socketName: t.socket };
    await typeAndWait(t, id, `printf '%050d\\nend\\n'`, "\nend\n");
    const c = await captureRows(runner, address, id, {
      start: -2,
      untrimmed: true,
      joined: true,
      saved: true,
    });
    assert.equal(c.rows.length, c.bottom - c.top + 1);
    assert.equal(c.saved.length, 0, "no alternate screen, nothing saved");
    const starts = alignJoined(c.rows, c.joined!);
    assert.ok(starts, "rows line up with joined lines");
    const zeros = c.joined!.findIndex((l) => l === "0".repeat(50));
    assert.ok(zeros >= 0, c.joined!.join("|"));
    assert.equal(c.rows[starts![zeros]], "0".repeat(40), "a 50-column line wraps at 40");

    await typeAndWait(t, id, `printf '\\033[?1049h\\033[Hfull screen\\n'; sleep 30`, "full screen");
    const alt = await captureRows(runner, address, id, { saved: true });
    assert.equal(alt.state.alternateScreen, true);
    assert.equal(trimRow(alt.rows[0]), "full screen");
    assert.ok(alt.saved.some((r) => r === "end"), "the main screen as it was");
  });
});

Deno.test("tmux: a command line over 16 KB is refused, so chains of captures are split", async () => {
  await withPane(async (t, runner) => {
    const long = await t.tmuxRaw("display-message", "-p", "x".repeat(20_000));
    assert.equal(long.code, 1);
    assert.match(long.stderr, /command too long/);
    const create = Array.from({ length: 150 }, () => ["new-window", "-d", "sleep 100000"]);
    await t.tmux(...create.flatMap((cmd, i) => i === 0 ? cmd : [";", ...cmd]));
    const ids = (await t.tmux("list-panes", "-a", "-F", "#{pane_id}")).trim().split("\n");
    assert.equal(ids.length, 151);
    for (const history of [0, 2000]) {
      const chains = chainPanes(ids, history);
      assert.ok(chains.length > 1 && chains.length < 20, `${chains.length} chains`);
      assert.deepEqual(chains.flat(), ids);
      // The longest chain is accepted by tmux, and every pane comes back in order.
      const longest = chains.reduce((a, b) => b.length > a.length ? b : a);
      const got = await captureMany(runner, { socketName: t.socket }, longest, history);
      assert.deepEqual(got.map((r) => r instanceof TmuxError ? r : r.paneId), longest);
      for (const r of got) {
        assert.ok(!(r instanceof TmuxError));
        assert.equal(r.rowCount, 6 - r.top, "history (none) plus the 6-row screen");
        assert.equal(paneRows(r).length, r.rowCount);
      }
    }
  });
});

Deno.test("captureMany reads on after a pane that closed, and reports that one", async () => {
  await withPane(async (t, runner, first) => {
    const make = async (text: string) =>
      (await t.tmux(
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        `echo ${text}; exec sleep 100000`,
      ))
        .trim();
    const gone = await make("gone");
    const a = await make("after-1");
    const b = await make("after-2");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", b)).includes("after-2"),
      "output",
    );
    await t.tmux("kill-pane", "-t", gone);
    const got = await captureMany(runner, { socketName: t.socket }, [first, gone, a, b], 0);
    assert.equal(got.length, 4);
    assert.ok(got[1] instanceof TmuxError && got[1].kind === "no-target", String(got[1]));
    assert.deepEqual(
      [got[2], got[3]].map((r) => r instanceof TmuxError ? r.message : trimRow(paneRows(r)[0])),
      ["after-1", "after-2"],
    );
    await assert.rejects(
      captureMany(runner, { socketName: `tmux-mcp-test-none-${crypto.randomUUID()}` }, [a], 0),
      (e: unknown) => e instanceof TmuxError && e.kind === "no-server",
    );
  });
});

Deno.test("indexOfBytes finds a byte sequence as String.indexOf finds text", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const cases: [string, string, number][] = [
    ["abcabc", "bc", 0],
    ["abcabc", "bc", 2],
    ["abcabc", "cab", 0],
    ["abcabc", "abcd", 0],
    ["aaab", "aab", 0],
    ["\u0001x\u0001xR", "\u0001xR", 0],
    ["", "a", 0],
    ["abc", "c", 3],
  ];
  for (const [hay, needle, from] of cases) {
    assert.equal(indexOfBytes(enc(hay), enc(needle), from), hay.indexOf(needle, from), hay);
  }
});
