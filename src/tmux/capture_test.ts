import assert from "node:assert/strict";
import { TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import {
  alignJoined,
  captureRange,
  captureRows,
  clampRow,
  isBlankRow,
  lastWrittenIndex,
  readPaneState,
  stripEscapes,
  trimRow,
} from "./capture.ts";
import { TmuxRunner } from "./run.ts";
import { TmuxError } from "./tmux_error.ts";

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
  // A wide character in a pane one column wide leaves a row of padding after it (tmux 3.3a):
  // a row that prints nothing and ends the line before it. Empty lines take the last such rows
  // before the next line (or the end), the line before them the others.
  const narrow = ["", "", "ｗ", "", "ｉ", "", "ｗ", "", "ｉ", "", ""];
  assert.deepEqual(alignJoined(narrow, ["", "", "ｗｉ", "ｗｉ", ""]), [0, 1, 2, 6, 10]);
  assert.deepEqual(alignJoined(["ｗ", "", "ｉ", ""], ["ｗｉ"]), [0]);
  assert.equal(alignJoined(["ｗ", "", "x"], ["ｗ"]), null, "a row with bytes left over");
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

// ---------------------------------------------------------------------------------------------
// Against tmux: the facts the module relies on

async function withPane(
  fn: (t: TestTmux, runner: TmuxRunner, paneId: string) => Promise<void>,
  command = "sh",
): Promise<void> {
  const t = await TestTmux.start("cap", { width: 40, height: 6, command });
  // Typed before the shell draws its prompt, a line's echo and output land on the prompt's row.
  if (command === "sh") await t.prompt(t.ids.paneId);
  const runner = new TmuxRunner();
  try {
    await fn(t, runner, t.ids.paneId);
  } finally {
    await runner.close();
    await t.kill();
  }
}

async function typeAndWait(t: TestTmux, paneId: string, command: string, until: string) {
  // The shell's prompt first (a new pane's, or the one it draws after the line before, a moment
  // after that line's output): typed before it, the line's echo comes first and its output
  // lands after the prompt, on one row. Only a prompt leaves the cursor off the first column.
  await waitFor(
    async () => (await t.tmux("display-message", "-p", "-t", paneId, "#{cursor_x}")).trim() !== "0",
    `a prompt in ${paneId}`,
  );
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

    // The words are joined by printf, so the echo of the typed line never shows "full screen":
    // waiting for it is waiting for the program's own output (on the alternate screen).
    await typeAndWait(
      t,
      id,
      `printf '\\033[?1049h\\033[Hfull%sscreen\\n' ' '; sleep 30`,
      "full screen",
    );
    const alt = await captureRows(runner, address, id, { saved: true });
    assert.equal(alt.state.alternateScreen, true);
    assert.equal(trimRow(alt.rows[0]), "full screen");
    assert.ok(alt.saved.some((r) => r === "end"), "the main screen as it was");
  });
});
