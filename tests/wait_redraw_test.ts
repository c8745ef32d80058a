/**
 * wait_for_text over rows a program redraws in place (progress bars, spinners, counters),
 * against real tmux on private sockets: a match is what the rows show, not the byte stream;
 * a redrawn row counts from where it changed and is told whole; text it held before, on either
 * side of the change, is not new; a row drawn back to what it showed at the start counts; and
 * a history trim does not make old rows new output.
 */

import assert from "node:assert/strict";
import { waitFor } from "./helpers/tmux.ts";
import { quietPane, subscribed, type Wait, withServer } from "./helpers/wait_text.ts";

Deno.test("control: wait_for_text matches what the rows show, not the byte stream", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    const write = (s: string) => tty.write(s);
    {
      // The stream says ERROR and ERROX; the rows show "ERR   OR" and "ERRX".
      const lie = c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["ERROR", "ERROX", "END"] });
      await subscribed(t, c);
      await write("ERR\x1b[3COR\r\nERRO\bX\r\nEND\r\n");
      const told = await lie;
      assert.deepEqual([told.outcome, told.matched?.pattern, told.transport], [
        "matched",
        "END",
        "control",
      ]);
      // A line longer than the stream decoder's 16 KiB, and a counter redrawn by one character.
      const long = c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["NEEDLE"] });
      await subscribed(t, c);
      await write("x".repeat(16_380) + "NEEDLE\r\n");
      assert.equal((await long).outcome, "matched");
      const redraw = c.ok<Wait>("wait_for_text", {
        paneId: p,
        patterns: ["tests: 2 pass"],
        timeoutMs: 5_000,
      });
      await subscribed(t, c);
      await write("tests: 1 pass\r\x1b[7C2");
      const redrawn = await redraw;
      assert.deepEqual([redrawn.outcome, redrawn.lines], ["matched", ["tests: 2 pass"]]);
    }
  });
});

Deno.test("a row redrawn in place (\\r) counts from where it changed, matched and told whole", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    const shows = (text: string) =>
      waitFor(async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes(text), text);
    await tty.write("progress 5%");
    await shows("progress 5%");
    // The row the cursor is on redrawn from its start: the pattern spans old and new cells.
    const bar = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["progress 50%"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await tty.write("\rprogress 10%");
    await tty.write("\rprogress 50%");
    const matched = await bar;
    assert.deepEqual([matched.outcome, matched.lines, matched.alreadyOnScreen], [
      "matched",
      ["progress 50%"],
      false,
    ]);

    // Without patterns the redrawn row comes back whole, not cut at the start's cursor.
    const any = c.ok<Wait>("wait_for_text", { paneId: p, timeoutMs: 10_000 });
    await subscribed(t, c);
    await tty.write("\rprogress 60%");
    assert.deepEqual(await any.then((r) => [r.outcome, r.lines]), ["output", ["progress 60%"]]);
    await shows("progress 60%");

    // Old text alone never matches: "progress" was on the row before, only "70%" is new. A
    // regular expression reaching from the old cells into the new ones does match.
    const old = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["progress", "70%"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await tty.write("\rprogress 70%");
    assert.deepEqual((await old).matched, { pattern: "70%", index: 1 });
    await shows("progress 70%");
    const regex = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["^progress", "o.r"],
      stop: ["progress \\d+%$"],
      regex: true,
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await tty.write("\rprogress 80%");
    const reached = await regex;
    assert.deepEqual([reached.outcome, reached.stoppedBy?.index, reached.lines], [
      "stopped",
      0,
      ["progress 80%"],
    ]);
  });
});

Deno.test("a row changed at both ends in one write: the unchanged text between is not new", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    const shows = (text: string) =>
      waitFor(async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes(text), text);
    // A step counter at the start and a percentage at the end, redrawn together: "compiling
    // main.c" between them was there. The wait ends on MARK only if the row does not match.
    await tty.write("[1/9] compiling main.c 10%");
    await shows("[1/9] compiling main.c 10%");
    const both = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["compiling main.c", "MARK"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await tty.write("\r[2/9] compiling main.c 20%");
    await tty.write("\r\nMARK\r\n");
    const marked = await both;
    assert.deepEqual([marked.outcome, marked.matched?.pattern, marked.lines], [
      "matched",
      "MARK",
      ["MARK"],
    ]);

    // A pattern that takes in either changed end matches, a regular expression too.
    await tty.write("[3/9] compiling util.c 30%");
    await shows("[3/9] compiling util.c 30%");
    for (
      const [patterns, regex, index] of [
        [["util.c", "c 40%"], false, 1],
        [["^\\S+ compiling", "util"], true, 0],
      ] as const
    ) {
      const waiting = c.ok<Wait>("wait_for_text", {
        paneId: p,
        patterns: [...patterns],
        regex,
        timeoutMs: 10_000,
      });
      await subscribed(t, c);
      const step = index === 1 ? "[4/9] compiling util.c 40%" : "[5/9] compiling util.c 50%";
      await tty.write(`\r${step}`);
      const r = await waiting;
      assert.deepEqual([r.outcome, r.matched?.index, r.lines], ["matched", index, [step]]);
      await shows(step);
    }
  });
});

Deno.test("a row redrawn in place: text it held before, on either side of the change, is not new", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    const shows = (text: string) =>
      waitFor(async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes(text), text);
    // A spinner in the first column: only that column is drawn again, "building foo" stays.
    // Whether the wait reads the redrawn row alone or with the next one, the row comes first:
    // the wait ends on MARK only if the row does not match.
    await tty.write("| building foo");
    await shows("| building foo");
    const spinner = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["building foo", "MARK"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await tty.write("\r- building foo");
    await tty.write("\r\nMARK\r\n");
    const marked = await spinner;
    assert.deepEqual([marked.outcome, marked.matched?.pattern, marked.lines], [
      "matched",
      "MARK",
      ["MARK"],
    ]);

    // A counter in the middle of a row: "done" was there, "build 52%" takes in the new digit.
    await tty.write("build 50% done");
    await shows("build 50% done");
    const counter = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["done", "build", "build 52%"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await tty.write("\rbuild 52% done");
    const counted = await counter;
    assert.deepEqual([counted.outcome, counted.matched, counted.lines], [
      "matched",
      { pattern: "build 52%", index: 2 },
      ["build 52% done"],
    ]);
    await shows("build 52% done");

    // The same for regular expressions: before the change, after it, and across it.
    const regex = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["^bu\\w+", "d.ne$", "\\bdone", "\\d+% d"],
      regex: true,
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await tty.write("\rbuild 53% done");
    const reached = await regex;
    assert.deepEqual([reached.outcome, reached.matched, reached.lines], [
      "matched",
      { pattern: "\\d+% d", index: 3 },
      ["build 53% done"],
    ]);
    await shows("build 53% done");

    // The cursor back at the row's start when the wait begins: the row is written over from
    // there, and only the digit differs.
    await tty.write("\r\nbuild 60% done\r");
    await shows("build 60% done");
    const over = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["done", "61%"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await tty.write("build 61% done");
    const overwritten = await over;
    assert.deepEqual([overwritten.outcome, overwritten.matched?.index, overwritten.lines], [
      "matched",
      1,
      ["build 61% done"],
    ]);

    // A spinner drawn again: a regular expression over the old text after it does not match,
    // one that takes in the spinner does.
    await tty.write("\r\n/ linking bar");
    await shows("/ linking bar");
    const again = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["link\\w+ bar$", "^\\W \\w+"],
      regex: true,
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await tty.write("\r\\ linking bar");
    const spun = await again;
    assert.deepEqual([spun.outcome, spun.matched?.index, spun.lines], ["matched", 1, [
      "\\ linking bar",
    ]]);
  });
});

Deno.test("a row redrawn back to what it showed at the start counts: it was drawn again", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // "progress 50%" at the start; on "go", 5% and 50% in turn, five times a second.
    await t.tmux(
      "respawn-pane",
      "-k",
      "-t",
      p,
      "printf '\\rprogress 50%%'; tmux wait-for go; while :; do printf '\\rprogress 5%% '; " +
        "sleep 0.2; printf '\\rprogress 50%%'; sleep 0.2; done",
    );
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("progress 50%"),
      "the bar at 50%",
    );
    const waiting = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["progress 50%"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await t.tmux("wait-for", "-S", "go");
    const result = await waiting;
    assert.deepEqual([result.outcome, result.lines, result.alreadyOnScreen], [
      "matched",
      ["progress 50%"],
      true,
    ]);
  });
});

Deno.test("a history trim (tmux drops 10% at its limit) does not make old rows new output", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "history-limit", "50");
    const p = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "-t", "main")).trim();
    await t.tmux("resize-window", "-t", p, "-x", "80", "-y", "10");
    const tty = await quietPane(t, p);
    // History full; "BUILD OK" on screen below the cursor, at the top row.
    let fill = "";
    for (let i = 0; i < 60; i++) fill += `fill ${i}\r\n`;
    await tty.write(fill + "\x1b[9;1HBUILD OK\x1b[1;1H");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("BUILD OK"),
      "BUILD OK on screen",
    );
    const waiting = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["BUILD OK", "END"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    // From the bottom row: lines scroll the screen, tmux trims the history.
    let more = "\x1b[10;1H";
    for (let i = 0; i < 5; i++) more += `more ${i}\r\n`;
    await tty.write(more + "END\r\n");
    const result = await waiting;
    assert.deepEqual([result.outcome, result.matched?.pattern], ["matched", "END"]);
  });
});

Deno.test("output that crosses a history trim is read from where it begins", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "history-limit", "50");
    const p = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "-t", "main")).trim();
    const tty = await quietPane(t, p);
    let fill = "";
    for (let i = 0; i < 120; i++) fill += `filler ${i}\r\n`;
    await tty.write(fill + "$ make\r\nerror: BUILD FAILED\r\n$ ");
    // The history at its limit, or one row short of it: the next rows trim it.
    await waitFor(async () => {
      const size = Number(await t.tmux("display-message", "-p", "-t", p, "#{history_size}"));
      return size >= 49;
    }, "the history at its limit");
    const waiting = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["FAILED 2"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    // tmux drops five rows (a tenth) and the size falls by fewer: the rows moved up five.
    await tty.write("make\r\nerror: BUILD FAILED 2\r\n$ ");
    const result = await waiting;
    assert.deepEqual([result.outcome, result.matched?.pattern], ["matched", "FAILED 2"]);
    assert.deepEqual(result.lines, ["error: BUILD FAILED 2"]);
  });
});
