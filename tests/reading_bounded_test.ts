/**
 * Reading is bounded by the request: capture_pane, capture_since and search_panes read the rows
 * their answer needs, and the counts of everything else (totalLines, droppedLines,
 * omittedBytes...) stay exactly what a read of the whole range would give.
 *
 * The reference for "exactly" is the straightforward way: one capture of the whole range,
 * every line held, the bound applied to all of them.
 */

import assert from "node:assert/strict";
import { MAX_RESULT_BYTES, tailLines } from "../src/mcp/bounds.ts";
import type { TmuxContext } from "../src/mcp/context.ts";
import { EMPTY_TAIL, textBudget } from "../src/tools/reading_bounds.ts";
import { decodeBytes } from "../src/tmux/format.ts";
import {
  alignJoined,
  captureRows,
  isBlankRow,
  lastWrittenIndex,
  trimRow,
  utf8Length,
} from "../src/tmux/capture.ts";
import { type RunOptions, TmuxRunner } from "../src/tmux/run.ts";
import type { ServerAddress } from "../src/tmux/server_address.ts";
import { CURSORS } from "../src/tmux/since_cursor.ts";
import { compareSince } from "../src/tmux/since_compare.ts";
import { normalGrid } from "../src/tmux/since_grid.ts";
import { connect, summaryOf, type TestClient } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";
import { JOINED_ANSWER_BYTES, TAIL_ANSWER_BYTES } from "../src/tmux/capture_tail.ts";
import { STRETCHES_ANSWER_BYTES } from "../src/tmux/since.ts";
import { WRITTEN_KEEP_BYTES } from "../src/tmux/since_written.ts";
import { JOB_ANSWER_BYTES } from "../src/tools/job_state.ts";
import { WATCH_ANSWER_BYTES } from "../src/tools/watch_span.ts";
import { AnswerPastBound } from "../src/tmux/tmux_error.ts";

/** A runner that counts the bytes tmux sent it; never over control, so nothing hides there. */
class MeteredRunner extends TmuxRunner {
  bytes = 0;
  /** Reads streamed from a tmux process. */
  streams = 0;
  /** Reads whose answer passed the bound they carried. */
  pastBound = 0;
  /** Reads that captured rows, answered. */
  captures = 0;
  /** While set, every read waits for it first. */
  hold: Promise<void> | null = null;

  constructor() {
    super({ control: false });
  }

  override async exec(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    await this.hold;
    try {
      const result = await super.exec(address, args, options);
      this.bytes += result.stdout.length;
      if (args.includes("capture-pane")) this.captures++;
      return result;
    } catch (error) {
      if (error instanceof AnswerPastBound) this.pastBound++;
      throw error;
    }
  }

  override stream(
    address: ServerAddress,
    args: readonly string[],
    sink: (chunk: Uint8Array) => void | Promise<void>,
    options: RunOptions = {},
  ): Promise<{ code: number; stderr: string }> {
    this.streams++;
    return super.stream(address, args, (chunk) => {
      this.bytes += chunk.length;
      return sink(chunk);
    }, options);
  }
}

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

async function withServer(
  fn: (t: Started, c: TestClient, runner: MeteredRunner) => Promise<void>,
  size = { width: 20, height: 5 },
): Promise<void> {
  const t = await TestTmux.start("bounded", size);
  const runner = new MeteredRunner();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket, runner });
    await fn(t, c, runner);
  } finally {
    await c?.close();
    await t.kill();
  }
}

/** A file holding `content`, removed at the end of the scope it is made in (`await using`). */
async function tempFile(content: string | Uint8Array): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempFile({ prefix: "tmux-mcp-test-" });
  await Deno.writeFile(
    path,
    typeof content === "string" ? new TextEncoder().encode(content) : content,
  );
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path).catch(() => {}) };
}

/** A pane that printed `text` (through a file and `cat`), then sleeps; waits for `until`. */
function paneShowing(t: Started, text: string, until: string): Promise<string> {
  return t.printing(text, until, "exec sleep 100000", 20_000);
}

interface Content {
  text: string;
  totalLines: number;
  droppedLines: number;
  returnedLines: number;
  returnedBytes: number;
  omittedBytes: number;
  firstLineNumber: number | null;
}

interface Range {
  start?: number;
  end?: number;
  joinWrapped?: boolean;
  escapes?: boolean;
}

/** Every line of a range, held, and the row each begins on (null where tmux says none). */
interface Whole {
  lines: string[];
  rowOf: ((i: number) => number) | null;
}

/** capture_pane the straightforward way: the whole range read, every line held. */
async function reference(t: Started, paneId: string, args: Range & { maxLines: number }) {
  return cut(await wholeRange(t, paneId, args), args.maxLines);
}

/** The straightforward read of a whole range, before any bound. */
async function wholeRange(t: Started, paneId: string, args: Range): Promise<Whole> {
  const runner = new TmuxRunner({ control: false });
  try {
    const c = await captureRows(runner, { socketName: t.socket }, paneId, {
      start: args.start,
      end: args.end,
      escapes: args.escapes,
      untrimmed: true,
      joined: args.joinWrapped,
    });
    let lines: string[];
    let rowOf: ((i: number) => number) | null;
    if (!c.joined) {
      lines = c.rows.slice(0, lastWrittenIndex(c.rows, c.top) + 1).map(trimRow);
      rowOf = (i) => c.top + i;
    } else {
      const starts = alignJoined(c.rows, c.joined);
      lines = c.joined.map(trimRow);
      let keep = lines.length;
      while (
        keep > 0 && (starts ? c.top + starts[keep - 1] >= 0 : c.bottom >= 0) &&
        isBlankRow(lines[keep - 1])
      ) keep--;
      lines = lines.slice(0, keep);
      rowOf = starts ? (i) => c.top + starts[i] : null;
    }
    return { lines, rowOf };
  } finally {
    await runner.close();
  }
}

/**
 * What capture_pane's bound of `maxLines` leaves of a whole range; `printed`: the range as
 * printed, line for line (for a range read with its escapes), whose lines count what is left
 * out (as without escapes).
 */
function cut({ lines, rowOf }: Whole, maxLines: number, printed?: Whole): Content {
  const tail = tailLines(lines, maxLines, 1_000_000);
  const omittedBytes = printed
    ? printed.lines.slice(0, tail.droppedLines).reduce((n, l) => n + utf8Length(l) + 1, 0)
    : tail.omittedBytes;
  return {
    text: tail.text,
    totalLines: lines.length,
    droppedLines: tail.droppedLines,
    returnedLines: tail.returnedLines,
    returnedBytes: tail.returnedBytes,
    omittedBytes,
    firstLineNumber: tail.returnedLines > 0 && rowOf ? rowOf(tail.droppedLines) : null,
  };
}

function pick(r: Content): Content {
  const {
    text,
    totalLines,
    droppedLines,
    returnedLines,
    returnedBytes,
    omittedBytes,
    firstLineNumber,
  } = r;
  return {
    text,
    totalLines,
    droppedLines,
    returnedLines,
    returnedBytes,
    omittedBytes,
    firstLineNumber,
  };
}

/**
 * Rows of every kind on a 20-column pane: short, wrapped over two or three rows (so wrapped
 * lines straddle wherever a read may start), trailing spaces, wide characters and emoji at the
 * wrap column, tabs, blank lines, colours that end with their line.
 */
function mixedText(lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    switch (i % 9) {
      case 0:
        out.push(`short ${i}`);
        break;
      case 1:
        out.push(`wrapped ${i} ${"w".repeat(20 + (i % 23))}`);
        break;
      case 2:
        out.push(`spaces ${i}   `);
        break;
      case 3:
        out.push(`${"日本".repeat(5)}🙂 wide ${i}`);
        break;
      case 4:
        out.push("");
        break;
      case 5:
        out.push(`tab\t${i}\tend`);
        break;
      case 6:
        out.push(`\x1b[31mred ${i}\x1b[0m plain ${"c".repeat(i % 30)}`);
        break;
      case 7:
        out.push(`${"l".repeat(59)}${i}`);
        break;
      default:
        out.push(`ÿþ ${i} then a wrap ${"z".repeat(15)}   `);
    }
  }
  return `${out.join("\n")}\nEND`;
}

Deno.test("capture_pane reading only the tail gives exactly what reading the whole range gives", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "history-limit", "5000");
    const id = await paneShowing(t, mixedText(140), "END");
    const history = Number((await t.tmux("display-message", "-p", "-t", id, "#{history_size}"))
      .trim());
    assert.ok(history > 200, `history ${history}`);
    let compared = 0;
    for (const start of [undefined, -1_000_000, -history + 3, -97, -6, -1, 0, 2]) {
      for (const end of [undefined, -150, -4, -1, 0, 3]) {
        if (start !== undefined && end !== undefined && start > end) continue;
        for (const joinWrapped of [false, true]) {
          for (const escapes of joinWrapped ? [false] : [false, true]) {
            const range = { start, end, joinWrapped, escapes };
            // The pane holds still, so one read of the whole range is every bound's reference.
            const whole = await wholeRange(t, id, range);
            // The rows hold no hidden text: as printed, they read as shown.
            const printed = escapes
              ? await wholeRange(t, id, { ...range, escapes: false })
              : undefined;
            if (printed) assert.equal(printed.lines.length, whole.lines.length);
            for (const maxLines of [1, 4, 30]) {
              const args = { ...range, maxLines };
              const got = await c.ok<Content>("capture_pane", { paneId: id, ...args });
              assert.deepEqual(pick(got), cut(whole, maxLines, printed), JSON.stringify(args));
              compared++;
            }
          }
        }
      }
    }
    assert.ok(compared > 200, `${compared} comparisons`);
  });
});

/** A cell of the most bytes tmux keeps in one: a letter and ten combining marks (21 bytes). */
const HEAVY_CELL = `e${"\u0301".repeat(10)}`;

/**
 * capture_pane's reply to `args` against the whole range read: its text bound decides how many
 * lines it holds (none of them cut); given that many, it says exactly what the whole range says.
 */
async function saysAsWhole(
  t: Started,
  client: TestClient,
  paneId: string,
  args: Parameters<typeof reference>[2],
): Promise<void> {
  const got = await client.ok<Content & { firstLineCut: boolean }>("capture_pane", {
    paneId,
    ...args,
  });
  assert.equal(got.firstLineCut, false);
  const want = await reference(t, paneId, {
    ...args,
    maxLines: Math.min(args.maxLines, got.returnedLines),
  });
  assert.deepEqual(pick(got), want, JSON.stringify(args));
}

Deno.test("capture_pane of rows printing more than a read holds whole (21 bytes a cell) streams them, and says exactly what reading the whole range says", async () => {
  await withServer(async (t, c, runner) => {
    await t.tmux("set-option", "-g", "history-limit", "1000");
    // 600 rows of 390 cells, each a letter and ten combining marks: about 4.9 MB, more than a
    // tail read holds whole (TAIL_ANSWER_BYTES); the screen below holds short rows and blanks.
    const rows = Array.from({ length: 600 }, (_, i) => `${i} ${HEAVY_CELL.repeat(390)}`);
    const id = await paneShowing(t, `${rows.join("\n")}\nshort\n\nEND`, "END");
    assert.ok(TAIL_ANSWER_BYTES < 600 * 390 * 21);
    const control = await connect({ socketName: t.socket, runner: new TmuxRunner() });
    try {
      for (
        const args of [
          { start: -100_000, maxLines: 10_000 },
          { start: -100_000, maxLines: 10_000, escapes: true },
          { start: -550, end: -2, maxLines: 700 },
        ]
      ) {
        const before = runner.streams;
        // Over a tmux process of its own, and over the control connection (the answer read into
        // nothing there), then streamed.
        for (const client of [c, control]) await saysAsWhole(t, client, id, args);
        assert.equal(runner.streams, before + 1, JSON.stringify(args));
      }
    } finally {
      await control.close();
    }
  }, { width: 400, height: 10 });
});

Deno.test("capture_pane joinWrapped over lines printing more than a read holds whole reads a smaller window, and says exactly what reading the whole range says", async () => {
  await withServer(async (t, c, runner) => {
    await t.tmux("set-option", "-g", "history-limit", "2000");
    // 700 lines of 390 cells of a letter and ten combining marks, each wrapped over two rows
    // of 200 columns: the window's lines and rows print about 11 MB, more than a joined read
    // holds whole (JOINED_ANSWER_BYTES).
    const lines = Array.from({ length: 700 }, (_, i) => `${i} ${HEAVY_CELL.repeat(390)}`);
    const id = await paneShowing(t, `${lines.join("\n")}\nshort\nEND`, "END");
    assert.ok(JOINED_ANSWER_BYTES < 2 * 700 * 390 * 21);
    for (
      const args of [
        { start: -100_000, maxLines: 10_000, joinWrapped: true },
        { start: -100_000, end: -300, maxLines: 10_000, joinWrapped: true },
        { maxLines: 2, joinWrapped: true },
      ]
    ) {
      await saysAsWhole(t, c, id, args);
    }
    assert.ok(runner.streams > 0, "the lines above a window counted as they streamed");
  }, { width: 200, height: 10 });
});

Deno.test("capture_pane joinWrapped of a screen printing more than a read holds whole is refused with the way that reads it", async () => {
  await withServer(async (t, c) => {
    // A screen of 110 rows of 2 000 cells of a letter and ten combining marks: 4.6 MB a read
    // of its lines, as much again of its rows, past JOINED_ANSWER_BYTES together.
    assert.ok(JOINED_ANSWER_BYTES < 2 * 109 * 1_990 * 21);
    const rows = Array.from({ length: 109 }, (_, i) => `${i} ${HEAVY_CELL.repeat(1_990)}`);
    const id = await paneShowing(t, `${rows.join("\n")}\nEND`, "END");
    const refused = await c.fail("capture_pane", { paneId: id, start: 0, joinWrapped: true });
    assert.match(refused, /print more than \d+ bytes as joined lines/);
    assert.match(refused, /capture them without joinWrapped/);
    const got = await c.ok<Content>("capture_pane", { paneId: id, start: 0, maxLines: 500 });
    assert.ok(got.returnedLines > 0 && got.text.endsWith("END"), `${got.returnedLines} lines`);
    assert.equal(got.totalLines, 110);
  }, { width: 2_000, height: 110 });
});

Deno.test("capture_pane of 10 lines over 60 000 rows of history reads a few rows, counts the rest exactly", async () => {
  await withServer(async (t, c, runner) => {
    await t.tmux("set-option", "-g", "history-limit", "70000");
    const rows = Array.from({ length: 60_000 }, (_, i) => `history row ${i} ${"-".repeat(40)}`);
    const id = await paneShowing(t, `${rows.join("\n")}\nEND`, "END");
    const args = { start: -1_000_000, maxLines: 10 };
    runner.bytes = 0;
    const got = await c.ok<Content>("capture_pane", { paneId: id, ...args });
    const read = runner.bytes;
    assert.deepEqual(pick(got), await reference(t, id, args));
    assert.equal(got.totalLines, 60_001);
    assert.equal(got.returnedLines, 10);
    // The whole range is 3.5 MB; the answer needs 10 rows and a screen: a few KB with the
    // pane's state (and the counts tmux measured).
    assert.ok(read < 20_000, `read ${read} bytes`);
    // Joined lines are counted as they stream by: exact too, though every row passes through.
    const joined = { ...args, joinWrapped: true };
    assert.deepEqual(
      pick(await c.ok<Content>("capture_pane", { paneId: id, ...joined })),
      await reference(t, id, joined),
    );
  }, { width: 80, height: 24 });
});

interface Since {
  cursor: string;
  text: string;
  droppedLines: number;
  omittedBytes: number;
  returnedLines: number;
  firstLineNumber: number | null;
  unchangedLines: number;
  trimmedLines: number;
  missed: boolean;
  missedReason: string | null;
  resized: boolean;
}

/** capture_since the straightforward way: all history read, compared, the bound applied. */
async function sinceReference(t: Started, paneId: string, cursor: string, maxLines: number) {
  const runner = new TmuxRunner({ control: false });
  try {
    const capture = await captureRows(runner, { socketName: t.socket }, paneId, {
      start: "history",
      saved: true,
    });
    const r = compareSince(await CURSORS.open(cursor), normalGrid(capture));
    assert.equal(r.skippedRows, 0);
    const cut = tailLines(r.rows, maxLines, 1_000_000);
    return {
      text: cut.text,
      droppedLines: cut.droppedLines,
      omittedBytes: cut.omittedBytes,
      returnedLines: cut.returnedLines,
      firstLineNumber: r.firstRow === null || cut.returnedLines === 0
        ? null
        : r.firstRow + cut.droppedLines,
      unchangedLines: r.unchangedRows.filter((i) => i >= cut.droppedLines).length,
      trimmedLines: r.trimmedRows,
      missed: r.missed,
      missedReason: r.missedReason,
      resized: r.resized,
    };
  } finally {
    await runner.close();
  }
}

function pickSince(s: Since): Omit<Since, "cursor"> {
  return {
    text: s.text,
    droppedLines: s.droppedLines,
    omittedBytes: s.omittedBytes,
    returnedLines: s.returnedLines,
    firstLineNumber: s.firstLineNumber,
    unchangedLines: s.unchangedLines,
    trimmedLines: s.trimmedLines,
    missed: s.missed,
    missedReason: s.missedReason,
    resized: s.resized,
  };
}

Deno.test("capture_since on a pane at its history limit reads what proves the position, not the history", async () => {
  await withServer(async (t, c, runner) => {
    // 20 000 rows of limit: tmux trims 2 000 at a time, so the remembered rows may have moved
    // up by any whole multiple of 2 000.
    await t.tmux("set-option", "-g", "history-limit", "20000");
    const pane = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.prompt(pane);
    const file = await Deno.makeTempFile({ prefix: "tmux-mcp-test-" });
    try {
      const write = async (from: number, to: number, mark: string) => {
        const rows = Array.from(
          { length: to - from },
          (_, i) => `row ${from + i} ${"=".repeat(30)}`,
        );
        await Deno.writeTextFile(file, `${rows.join("\n")}\n${mark}\n`);
        await t.tmux("send-keys", "-t", pane, "-l", `cat '${file}'`);
        await t.tmux("send-keys", "-t", pane, "Enter");
        // The mark and the prompt after it: the shell is done writing, so a read by the tool
        // and the reference's later one see the same pane.
        await waitFor(
          async () =>
            new RegExp(`\\n${mark}\\n\\S`).test(await t.tmux("capture-pane", "-p", "-t", pane)),
          mark,
          20_000,
        );
      };
      await write(0, 30_000, "FIRST-DONE");
      const first = await c.ok<Since>("capture_since", { paneId: pane });
      await write(30_000, 33_000, "SECOND-DONE");
      runner.bytes = 0;
      const args = { paneId: pane, cursor: first.cursor, maxLines: 10 };
      const got = await c.ok<Since>("capture_since", args);
      const read = runner.bytes;
      assert.deepEqual(pickSince(got), await sinceReference(t, pane, first.cursor, 10));
      assert.equal(got.missed, false);
      assert.ok(got.trimmedLines > 0, "tmux trimmed meanwhile");
      assert.ok(got.text.includes("SECOND-DONE"), got.text);
      // The history is 20 000 rows of 40 bytes (800 KB); what proves the position is a few
      // rows at each of the 11 places a trim may have moved them to.
      assert.ok(read < 200_000, `read ${read} bytes`);

      // A width change makes tmux reflow every row: one streaming pass, the same answer.
      const before = await c.ok<Since>("capture_since", { paneId: pane });
      await t.tmux("resize-window", "-t", pane, "-x", "60");
      await write(33_000, 33_050, "THIRD-DONE");
      const resized = await c.ok<Since>("capture_since", {
        paneId: pane,
        cursor: before.cursor,
        maxLines: 10,
      });
      assert.equal(resized.resized, true);
      assert.deepEqual(pickSince(resized), await sinceReference(t, pane, before.cursor, 10));
    } finally {
      await Deno.remove(file);
    }
  });
});

/**
 * A new shell pane (history-limit `history`), capture_since's cursor on it, then `rows` printed
 * there (a file `cat` shows), once the shell is back at its prompt.
 */
async function printedAfterCursor(
  t: Started,
  c: TestClient,
  rows: readonly string[],
  history: number,
): Promise<{ pane: string; cursor: string }> {
  await t.tmux("set-option", "-g", "history-limit", String(history));
  const pane = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
  await t.prompt(pane);
  const first = await c.ok<Since>("capture_since", { paneId: pane });
  const file = await Deno.makeTempFile({ prefix: "tmux-mcp-test-" });
  try {
    await Deno.writeTextFile(file, `${rows.join("\n")}\nALL-DONE\n`);
    await t.tmux("send-keys", "-t", pane, "-l", `cat '${file}'`);
    await t.tmux("send-keys", "-t", pane, "Enter");
    // The mark and the prompt after it: the shell is done writing.
    await waitFor(
      async () => /\nALL-DONE\n\S/.test(await t.tmux("capture-pane", "-p", "-t", pane)),
      "output",
      20_000,
    );
  } finally {
    await Deno.remove(file);
  }
  return { pane, cursor: first.cursor };
}

Deno.test("capture_since with much new output reads the last lines and counts the rest exactly", async () => {
  await withServer(async (t, c, runner) => {
    const rows = Array.from({ length: 40_000 }, (_, i) => `new row ${i} ${"+".repeat(30)}`);
    const { pane, cursor } = await printedAfterCursor(t, c, rows, 100_000);
    runner.bytes = 0;
    const got = await c.ok<Since>("capture_since", { paneId: pane, cursor, maxLines: 5 });
    const read = runner.bytes;
    assert.deepEqual(pickSince(got), await sinceReference(t, pane, cursor, 5));
    assert.ok(got.droppedLines > 40_000, String(got.droppedLines));
    assert.ok(read < 100_000, `read ${read} bytes of about 1.8 MB`);
  });
});

Deno.test("capture_since after output printing more than a read holds whole (21 bytes a cell) streams it, and says exactly what reading the whole pane says", async () => {
  await withServer(async (t, c, runner) => {
    // 1 100 rows of 390 cells of a letter and ten combining marks: about 9 MB, more than a
    // planned read holds whole (STRETCHES_ANSWER_BYTES).
    assert.ok(STRETCHES_ANSWER_BYTES < 1_100 * 390 * 21);
    const rows = Array.from({ length: 1_100 }, (_, i) => `${i} ${HEAVY_CELL.repeat(390)}`);
    const { pane, cursor } = await printedAfterCursor(t, c, rows, 3_000);
    const streams = runner.streams;
    const got = await c.ok<Since & { firstLineCut: boolean }>("capture_since", {
      paneId: pane,
      cursor,
      maxLines: 10_000,
    });
    assert.equal(runner.streams, streams + 1, "read in one streaming pass");
    assert.equal(got.firstLineCut, false);
    // The reply's text bound decides how many lines it holds; given that many, it says exactly
    // what the whole pane says.
    assert.deepEqual(pickSince(got), await sinceReference(t, pane, cursor, got.returnedLines));
    assert.ok(got.droppedLines > 1_000, String(got.droppedLines));
  }, { width: 400, height: 10 });
});

Deno.test("run_command and get_command_result over output printing more than a read holds whole (21 bytes a cell) stream it, and keep its tail exactly", async () => {
  await withServer(async (t, c, runner) => {
    // 1 050 rows of 400 cells of a letter and ten combining marks: about 8.8 MB, more than a
    // job's read holds whole (JOB_ANSWER_BYTES); the pane keeps all of it (history 2 000).
    assert.ok(JOB_ANSWER_BYTES < 1_050 * 400 * 21);
    const rows = Array.from({ length: 1_050 }, (_, i) => `${i} ${HEAVY_CELL.repeat(400)}`);
    const whole = rows.join("\n");
    await using file = await tempFile(`${whole}\n`);
    type Tail = { output: string; omittedBytes: number; outputComplete: boolean };
    const keptTail = (got: Tail, label: string) => {
      assert.ok(got.output.length > 0 && whole.endsWith(got.output), label);
      assert.equal(got.omittedBytes + utf8Length(got.output), utf8Length(whole), label);
      assert.equal(got.outputComplete, false, label);
    };
    const paneId = t.ids.paneId;
    const streams = runner.streams;
    const command = `cat '${file.path}'`;
    const run = await c.ok<Tail & { exitStatus: number }>("run_command", {
      paneId,
      command,
      timeoutMs: 60_000,
    });
    assert.equal(run.exitStatus, 0);
    keptTail(run, "run_command");
    // The job's rows, and its end read again once the shell held its terminal: both streamed.
    assert.ok(runner.streams >= streams + 2, `read as it streamed (${runner.streams - streams})`);
    const started = await c.ok<{ jobId: string }>("run_command", {
      paneId,
      command,
      background: true,
    });
    const job = await c.ok<Tail & { state: string; exitStatus: number }>(
      "get_command_result",
      { jobId: started.jobId, waitMs: 60_000 },
    );
    assert.equal(job.state, "exited");
    assert.equal(job.exitStatus, 0);
    keptTail(job, "get_command_result");
  }, { width: 420, height: 10 });
});

Deno.test("wait_for_text whose pane printed more than a read holds whole (21 bytes a cell) between two reads reads fewer rows, matches the last, and says how many it did not", async () => {
  await withServer(async (t, c, runner) => {
    // 1 050 rows of 400 cells of a letter and ten combining marks: about 8.8 MB, more than a
    // watch's read holds whole, written while the watch's reads are held.
    assert.ok(WATCH_ANSWER_BYTES < 1_050 * 400 * 21);
    const rows = Array.from({ length: 1_050 }, (_, i) => `${i} ${HEAVY_CELL.repeat(400)}`);
    await using file = await tempFile(`${rows.join("\n")}\nEND-OF-IT\n`);
    let release = () => {};
    try {
      const paneId = t.ids.paneId;
      runner.captures = 0;
      const waiting = summaryOf(c, "wait_for_text", {
        paneId,
        patterns: ["END-OF-IT"],
        timeoutMs: 60_000,
      });
      // Its start read: what the pane prints from now on is new.
      await waitFor(() => runner.captures > 0, "the wait's first read");
      runner.hold = new Promise((resolve) => release = resolve);
      await t.tmux("send-keys", "-t", paneId, `cat '${file.path}'`, "Enter");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).includes("END-OF-IT"),
        "the output shown",
        60_000,
      );
      release();
      const { summary, data } = await waiting;
      assert.equal(data.outcome, "matched", summary);
      assert.ok(runner.pastBound > 0, "a read past the bound, read again with fewer rows");
      assert.match(summary, /\d+ rows written during the wait not matched/);
    } finally {
      release();
    }
  }, { width: 420, height: 10 });
});

Deno.test("wait_for_text since a cursor, after output printing more than a read holds whole (21 bytes a cell), matches its last lines and says how many it did not", async () => {
  await withServer(async (t, c, runner) => {
    // 1 100 rows of 390 cells of a letter and ten combining marks: about 9 MB, more than the
    // text a wait keeps of rows written since its cursor (WRITTEN_KEEP_BYTES).
    assert.ok(WRITTEN_KEEP_BYTES < 1_100 * 390 * 21);
    const rows = Array.from({ length: 1_100 }, (_, i) => `${i} ${HEAVY_CELL.repeat(390)}`);
    const { pane, cursor } = await printedAfterCursor(t, c, rows, 3_000);
    const streams = runner.streams;
    const { summary, data } = await summaryOf(c, "wait_for_text", {
      paneId: pane,
      patterns: ["ALL-DONE"],
      since: cursor,
      timeoutMs: 5_000,
    });
    assert.equal(data.outcome, "matched", summary);
    assert.ok(runner.streams > streams, "read as it streamed");
    const skipped = /the first (\d+) lines written since the cursor not matched/.exec(summary);
    assert.ok(skipped, summary);
    // The rows kept hold the bound's text and a row: the rest is counted.
    const kept = 1_100 - Number(skipped[1]);
    const heavy = utf8Length(rows[0]) + 1;
    assert.ok(kept * heavy >= WRITTEN_KEEP_BYTES - 2 * heavy, `${kept} rows kept`);
    assert.ok((kept - 3) * heavy <= WRITTEN_KEEP_BYTES, `${kept} rows kept`);
  }, { width: 400, height: 10 });
});

Deno.test("show_buffer of a buffer larger than it reads whole streams it, and says exactly what reading it whole says", async () => {
  await withServer(async (t, c, runner) => {
    // About 6 MB: lines of every length (one of 2 MB), CR LF, emoji, bytes that are not UTF-8.
    const parts: Uint8Array[] = [];
    const encoder = new TextEncoder();
    // E2 82 cut short by the newline, and a lone 80: three bytes that are not UTF-8 each time.
    let undecodableBytes = 0;
    for (let i = 0; i < 40_000; i++) {
      parts.push(encoder.encode(`${i} ${"é🙂 x".repeat(i % 37)}${i % 5 === 0 ? "\r" : ""}\n`));
      if (i % 997 === 0) {
        parts.push(new Uint8Array([0xe2, 0x82, 0x0a, 0x80]));
        undecodableBytes += 3;
      }
      if (i === 20_000) parts.push(encoder.encode("y".repeat(2_000_000)));
    }
    parts.push(encoder.encode("the last line, unended"));
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (bytes.set(p, at), at + p.length), 0);
    assert.ok(bytes.length > 5_000_000);
    {
      await using file = await tempFile(bytes);
      await t.tmux("load-buffer", "-b", "large", file.path);
    }
    const streams = runner.streams;
    const got = await c.ok<Record<string, unknown> & { totalLines: number }>("show_buffer", {
      name: "large",
    });
    assert.equal(runner.streams, streams + 1, "read as it streamed");
    const lines = decodeBytes(bytes).split("\n");
    const shell = {
      name: got.name,
      size: got.size,
      created: got.created,
      ...EMPTY_TAIL,
      totalLines: lines.length,
      complete: true,
      undecodableBytes,
    };
    const ctx = { config: { maxResultBytes: MAX_RESULT_BYTES } } as TmuxContext;
    const cut = tailLines(lines, Number.MAX_SAFE_INTEGER, textBudget(ctx, shell));
    assert.deepEqual(got, { ...shell, ...cut, complete: false });
  });
});
