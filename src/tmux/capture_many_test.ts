import assert from "node:assert/strict";
import { RecordingRunner, TestTmux, waitFor, withRunner } from "../../tests/helpers/tmux.ts";
import { trimRow } from "./capture.ts";
import { chainPanes, readPanes } from "./capture_many.ts";
import { batchRows, type RowBatch } from "./capture_many_batch.ts";
import { TmuxRunner } from "./run.ts";
import { TmuxError } from "./tmux_error.ts";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

function withServer(fn: (t: Started, runner: TmuxRunner) => Promise<void>): Promise<void> {
  return withRunner(fn, "many", { width: 40, height: 6 });
}

/** Every batch `readPanes` hands over, and its answer. */
async function readAll(
  runner: TmuxRunner,
  socket: string,
  ids: readonly string[],
  history: number,
): Promise<{ batches: RowBatch[]; results: (TmuxError | null)[] }> {
  const batches: RowBatch[] = [];
  const results = await readPanes(
    runner,
    { socketName: socket },
    ids,
    history,
    (b) => void batches.push(b),
  );
  return { batches, results };
}

Deno.test("tmux: a command line over 16 KB is refused, so chains of captures are split", async () => {
  await withServer(async (t, runner) => {
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
      // The longest chain is accepted by tmux, and every pane comes back in order, its last
      // batch holding its screen.
      const longest = chains.reduce((a, b) => b.length > a.length ? b : a);
      const { batches, results } = await readAll(runner, t.socket, longest, history);
      assert.deepEqual(results, longest.map(() => null));
      assert.deepEqual(batches.map((b) => b.paneId), longest);
      for (const b of batches) {
        assert.equal(b.last, true);
        assert.deepEqual([b.first, b.count, batchRows(b).length], [0, 6, 6], "no history");
      }
    }
  });
});

Deno.test("readPanes hands deep history over in batches, in order, the screen in the last", async () => {
  await withServer(async (t, runner) => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `row ${i} ${"x".repeat(20)}`);
    const check = async (pane: string) => {
      // Asking for more rows than one answer over the connection may hold: streamed.
      const { batches, results } = await readAll(runner, t.socket, [pane], 1_000_000);
      assert.deepEqual(results, [null]);
      assert.ok(batches.length > 2, `${batches.length} batches`);
      assert.ok(batches.slice(0, -1).every((b) => !b.last && b.first + b.count <= 0));
      assert.equal(batches.at(-1)!.last, true);
      const all = batches.flatMap(batchRows).map(trimRow);
      assert.equal(batches[0].first, -(all.length - 6));
      batches.forEach((b, i) => {
        if (i > 0) assert.equal(b.first, batches[i - 1].first + batches[i - 1].count);
      });
      assert.deepEqual(all.slice(0, lines.length + 1), [...lines, "END"]);
    };
    await t.tmux("set-option", "-g", "history-limit", "50000");
    const file = await Deno.makeTempFile({ prefix: "tmux-mcp-test-" });
    try {
      await Deno.writeTextFile(file, `${lines.join("\n")}\nEND`);
      const pane = (await t.tmux(
        "new-window",
        "-P",
        "-F",
        "#{pane_id}",
        `cat '${file}'; exec sleep 100000`,
      )).trim();
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", pane)).includes("END"),
        "the rows",
        20_000,
      );
      await check(pane);
    } finally {
      await Deno.remove(file);
    }
  });
});

/** The pane of a new session `name` of `width` × `height` whose shell prints `printf`'s `text`. */
async function sessionPrinting(
  t: Started,
  name: string,
  width: number,
  height: number,
  text: string,
): Promise<string> {
  const size = ["-x", String(width), "-y", String(height)];
  const command = `sh -c "printf '${text}'; exec cat"`;
  return (await t.tmux("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", name, ...size, command))
    .trim();
}

Deno.test("readPanes: lines of wide characters in a pane one column wide, each padded by an empty row", async () => {
  await withServer(async (t, runner) => {
    // Narrowed to one column, tmux 3.3a puts each wide character alone in a row and leaves the
    // next row as padding: rows with no bytes, which a joined line spans but does not spell.
    // (Printed at that width, it loses every other character: the lines are printed first.)
    const pane = await sessionPrinting(t, "narrow", 10, 12, "ｗｉ\\nｗｉ\\n\\nx\\n");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", pane)).includes("x"),
      "the pane to print its lines",
    );
    await t.tmux("resize-window", "-t", "narrow", "-x", "1");
    assert.equal((await t.tmux("capture-pane", "-p", "-N", "-t", pane)).split("\n")[1], "");
    const batches: RowBatch[] = [];
    const results = await readPanes(
      runner,
      { socketName: t.socket },
      [pane],
      100,
      (b) => void batches.push(b),
      {},
      undefined,
      undefined,
      true,
    );
    assert.deepEqual(results, [null]);
    const lines = batches.flatMap((b) => b.text.split("\n"));
    const rows = batches.flatMap((b) => b.lineRows ?? []);
    assert.deepEqual(lines.slice(0, 4), ["ｗｉ", "ｗｉ", "", "x"]);
    // Narrowing moved the first six rows into history (rows -6 to -1).
    assert.deepEqual(rows.slice(0, 4), [-6, -2, 2, 3], "each line at the row it starts at");
  });
});

Deno.test("tmux: the row of a wrapped line a program clears is a line of its own to capture-pane -J", async () => {
  await withServer(async (t) => {
    // Only padding prints nothing and still belongs to the line before (the test above).
    const text = "abcdefghijKLM\\nnext\\n\\033[2A\\033[2K\\033[2B";
    const pane = await sessionPrinting(t, "cleared", 10, 6, text);
    const read = (flag: string) =>
      t.tmux("capture-pane", "-p", flag, "-t", pane).then((s) => s.split("\n").slice(0, 3));
    // Printed, and then the row cleared (an empty screen has an empty row 1 too).
    await waitFor(
      async () => JSON.stringify(await read("-N")) === JSON.stringify(["abcdefghij", "", "next"]),
      "the text printed and its second row cleared",
    );
    assert.deepEqual(await read("-J"), ["abcdefghij", "", "next"]);
  });
});

Deno.test("readPanes reads on after a pane that closed, and reports that one", async () => {
  await withServer(async (t, runner) => {
    const first = t.ids.paneId;
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
    // Each pane prints at its own pace: the last one made printing says nothing of the others.
    for (const [pane, text] of [[a, "after-1"], [b, "after-2"]]) {
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", pane)).includes(text),
        `${pane}'s output`,
      );
    }
    await t.tmux("kill-pane", "-t", gone);
    for (const history of [0, 1000]) {
      const { batches, results } = await readAll(runner, t.socket, [first, gone, a, b], history);
      assert.equal(results.length, 4);
      assert.equal(results[0], null);
      assert.ok(results[1] instanceof TmuxError && results[1].kind === "no-target");
      assert.deepEqual([results[2], results[3]], [null, null]);
      const firstRow = (id: string) => trimRow(batchRows(batches.find((x) => x.paneId === id)!)[0]);
      assert.deepEqual([firstRow(a), firstRow(b)], ["after-1", "after-2"]);
      assert.ok(!batches.some((x) => x.paneId === gone));
    }
    await assert.rejects(
      readPanes(
        runner,
        { socketName: `tmux-mcp-test-none-${crypto.randomUUID()}` },
        [a],
        0,
        () => {},
      ),
      (e: unknown) => e instanceof TmuxError && e.kind === "no-server",
    );
  });
});

Deno.test("readPanes: screens come back exactly as tmux prints them, over the control connection or not", async () => {
  await withServer(async (t) => {
    // Screens a pane chose: control-mode framing, a format, bytes that are no UTF-8, wide
    // characters, a tab, blank rows between and below, and a full last row with no blank.
    const shows: [string, string][] = [
      [`printf '%%end 1 1 1\\n%%begin 1 1 1\\n%%error 0 0 0\\n'`, "%error"],
      [`printf '#{pane_id} #(id)\\n\\377\\376 bytes\\n\\n\\t🙂 wide 字\\n'`, "wide"],
      [`printf 'a\\nb\\nc\\nd\\ne\\nfull-last-row'`, "full-last-row"],
    ];
    const ids = [t.ids.paneId];
    for (const [show, until] of shows) {
      ids.push(await t.showing(`${show}; exec sleep 100000`, until));
    }
    const control = new RecordingRunner();
    const spawning = new TmuxRunner({ control: false });
    try {
      const over = await readAll(control, t.socket, ids, 0);
      const started = await readAll(spawning, t.socket, ids, 0);
      assert.deepEqual(over, started);
      assert.deepEqual(over.results, ids.map(() => null));
      assert.deepEqual(
        over.batches.map((b) => [b.paneId, b.first, b.count, b.last]),
        ids.map((id) => [id, 0, 6, true]),
      );
      const rows = over.batches.map((b) => batchRows(b).map(trimRow));
      assert.deepEqual(rows[1].slice(0, 3), ["%end 1 1 1", "%begin 1 1 1", "%error 0 0 0"]);
      // tmux keeps no byte that is no UTF-8 on a screen: only what it kept comes back.
      assert.deepEqual(rows[2].slice(0, 4).filter((_, k) => k !== 1), [
        "#{pane_id} #(id)",
        "",
        "        🙂 wide 字",
      ]);
      assert.ok(rows[2][1].endsWith(" bytes"));
      assert.equal(rows[3][5], "full-last-row");
      const captures = () => control.started.filter((a) => a.includes("capture-pane"));
      assert.deepEqual(captures(), [], "no tmux process was started for the screens");
      // With history: the same rows, numbered the same, over the connection (one batch a
      // pane) as framed by a tmux process (history and screen apart). One pane has no
      // history at all, one less than asked, one more.
      await t.tmux("clear-history", "-t", ids[1]);
      const long = await t.showing("seq 1 300; exec sleep 100000", "300");
      const rowsOf = (read: Awaited<ReturnType<typeof readAll>>) =>
        [...new Set(read.batches.map((b) => b.paneId))].map((id) => {
          const mine = read.batches.filter((b) => b.paneId === id);
          return [id, mine[0].first, mine.flatMap(batchRows).map(trimRow)];
        });
      for (const history of [50, 1000]) {
        const viaControl = await readAll(control, t.socket, [...ids, long], history);
        const framed = await readAll(spawning, t.socket, [...ids, long], history);
        assert.deepEqual(viaControl.results, framed.results);
        assert.deepEqual(rowsOf(viaControl), rowsOf(framed), `history ${history}`);
        assert.equal(rowsOf(viaControl).length, ids.length + 1);
        assert.ok(viaControl.batches.every((b) => b.last), "one batch a pane");
      }
      const deep = rowsOf(await readAll(control, t.socket, [ids[1], long], 50));
      assert.deepEqual([deep[0][1], deep[1][1]], [0, -50], "no history; fifty rows of it");
      assert.equal((deep[1][2] as string[])[0], "246", "295 rows of history, 296-300 on screen");
      assert.deepEqual(captures(), [], "no tmux process was started for them either");
      // Framing of another server (a `tmux -C` there: numbers ahead of this one's) is rows
      // like any other: the connection carries on.
      const other = await t.showing(
        `printf '%%begin 1 999999 1\\n%%end 1 999999 1\\n'; exec sleep 100000`,
        "%end",
      );
      const all = [...ids, other];
      const again = await readAll(control, t.socket, all, 0);
      assert.deepEqual(again, await readAll(spawning, t.socket, all, 0));
      assert.deepEqual(batchRows(again.batches[4]).slice(0, 2), [
        "%begin 1 999999 1",
        "%end 1 999999 1",
      ]);
      assert.deepEqual(captures(), [], "still over the same connection");
    } finally {
      await control.close();
      await spawning.close();
    }
  });
});

Deno.test("readPanes: a person's hooks printing after each capture never shift whose rows are whose", async () => {
  await withServer(async (t, runner) => {
    const a = await t.showing("echo first-pane; exec sleep 100000", "first-pane");
    const b = await t.showing("echo second-pane; exec sleep 100000", "second-pane");
    // Hooks run with the client that ran the command, this server's control client too.
    await t.tmux("set-hook", "-g", "after-capture-pane", "display-message -p HOOKED");
    await t.tmux("set-hook", "-g", "after-display-message", "display-message -p HOOKED");
    for (const history of [0, 50]) {
      const { batches, results } = await readAll(runner, t.socket, [a, b], history);
      assert.deepEqual(results, [null, null]);
      const rows = batches.map((x) => [x.paneId, batchRows(x).map(trimRow).filter(Boolean)]);
      assert.deepEqual(rows, [[a, ["first-pane"]], [b, ["second-pane"]]], `history ${history}`);
    }
  });
});

Deno.test("readPanes: streamed history of many-byte characters arrives whole, wherever a chunk ends", async () => {
  await withServer(async (t, runner) => {
    await t.tmux("set-option", "-g", "history-limit", "30000");
    // Rows of 1- to 4-byte characters in changing order, so chunk ends fall inside characters.
    const chars = ["a", "é", "日", "🙂"];
    const lines = Array.from(
      { length: 20_000 },
      (_, i) => `${i} ${Array.from({ length: i % 9 }, (_, k) => chars[(i + k) % 4]).join("")}`,
    );
    const file = await Deno.makeTempFile({ prefix: "tmux-mcp-test-" });
    try {
      await Deno.writeTextFile(file, `${lines.join("\n")}\nEND`);
      const pane = await t.showing(`cat '${file}'; exec sleep 100000`, "END", 20_000);
      // More than one answer over the connection may hold: streamed in batches.
      const { batches, results } = await readAll(runner, t.socket, [pane], 1_000_000);
      assert.deepEqual(results, [null]);
      assert.ok(batches.length > 1, `${batches.length} batches`);
      const all = batches.flatMap(batchRows).map(trimRow);
      const whole = (await t.tmux("capture-pane", "-p", "-S", "-", "-t", pane)).split("\n");
      assert.deepEqual(all, whole.slice(0, -1).map(trimRow));
      assert.deepEqual(all.slice(0, lines.length + 1), [...lines.map((l) => l.trimEnd()), "END"]);
    } finally {
      await Deno.remove(file);
    }
  });
});

/** A runner that counts the reads it streams from a tmux process of its own. */
class StreamCounting extends RecordingRunner {
  streams = 0;

  override stream(...args: Parameters<TmuxRunner["stream"]>): ReturnType<TmuxRunner["stream"]> {
    this.streams++;
    return super.stream(...args);
  }
}

Deno.test("readPanes: panes printing many times the bytes their size promises are read streamed, the connection's answer dropped", async () => {
  await withServer(async (t) => {
    await t.tmux("set-option", "-g", "history-limit", "6000");
    // A cell holds up to 21 bytes (a letter and ten combining marks): five panes of 40 columns
    // and 5 000 rows print about 18 MB, where their size promises a megabyte.
    const cell = `e${"\u0301".repeat(10)}`;
    const rows = Array.from({ length: 5_000 }, (_, i) => `${i} ${cell.repeat(33)}`);
    const file = await Deno.makeTempFile({ prefix: "tmux-mcp-test-" });
    const control = new StreamCounting();
    const spawning = new TmuxRunner({ control: false });
    try {
      await Deno.writeTextFile(file, `${rows.join("\n")}\nEND`);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(await t.showing(`cat '${file}'; exec sleep 100000`, "END", 30_000));
      }
      const captures = () => control.started.filter((a) => a.includes("capture-pane")).length;
      assert.equal(captures(), 0);
      const over = await readAll(control, t.socket, ids, 5_100);
      assert.equal(control.streams, 1, "read again by a tmux process of its own, streamed");
      assert.ok(over.batches.length > ids.length, `${over.batches.length} batches, as streamed`);
      assert.deepEqual(over.results, ids.map(() => null));
      const framed = await readAll(spawning, t.socket, ids, 5_100);
      const rowsOf = (read: Awaited<ReturnType<typeof readAll>>) =>
        ids.map((id) => read.batches.filter((b) => b.paneId === id).flatMap(batchRows));
      assert.deepEqual(rowsOf(over), rowsOf(framed));
      assert.deepEqual(rowsOf(over)[3].slice(0, 2).map(trimRow), rows.slice(0, 2));
      // The connection carried on: a read within its bound goes over it.
      const small = await readAll(control, t.socket, [t.ids.paneId, ...ids], 0);
      assert.deepEqual(small.results, [null, ...ids.map(() => null)]);
      assert.deepEqual([control.streams, captures()], [1, 0], "no process more");
    } finally {
      await control.close();
      await spawning.close();
      await Deno.remove(file);
    }
  });
});
