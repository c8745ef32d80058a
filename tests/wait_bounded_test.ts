/**
 * A wait is bounded by its timeout and by what the pane writes: wait_for_text on a pane that
 * printed a long log and keeps redrawing a progress line (a build) ends at its timeout, and
 * reads about the rows the pane wrote, not all of them again at every read.
 *
 * Counts, never times: an `after-capture-pane` hook counts the captures tmux runs (any
 * client) and keeps the arguments of each, from which the rows tmux was asked to print follow.
 * And what a read that reads only what may have changed tells is what reading everything from
 * the start row tells, pane state by pane state.
 */

import assert from "node:assert/strict";
import { READ_ROWS } from "../src/tools/watch_span.ts";
import { controlFor } from "../src/tmux/control.ts";
import { PaneWatch, WATCH_QUEUE_BYTES } from "../src/tools/pane_watch.ts";
import { connect, summaryOf, type TestClient, testContext, withTmux } from "./helpers/mcp.ts";
import { prng } from "./helpers/prng.ts";
import { HookGate, TestTmux, waitFor, withRunner } from "./helpers/tmux.ts";
import { quietPane, type Server, withWatched } from "./helpers/watched.ts";

/** The pane's height: every test here uses it. */
const HEIGHT = 50;

function withServer(fn: (t: Server, c: TestClient) => Promise<void>): Promise<void> {
  return withTmux(fn, {}, { width: 200, height: HEIGHT, noChildLeft: true });
}

/** Counts every capture-pane tmux runs from now on, and keeps the arguments of each. */
async function countCaptures(t: Server): Promise<void> {
  await t.tmux("set-option", "-g", "@caps", "0");
  await t.tmux("set-option", "-g", "@capargs", "");
  await t.tmux(
    "set-hook",
    "-g",
    "after-capture-pane",
    "set -gF @caps '#{e|+:#{@caps},1}' ; set -gaF @capargs '#{hook_arguments}|'",
  );
}

async function captures(t: Server): Promise<number> {
  return Number((await t.tmux("show-options", "-gv", "@caps")).trim());
}

/**
 * Rows tmux was asked to print by the captures counted so far: from -S (else the screen's top)
 * to -E (else the screen's end).
 */
async function rowsAsked(t: Server): Promise<number> {
  const args = (await t.tmux("show-options", "-gv", "@capargs")).trim().split("|");
  let rows = 0;
  for (const a of args) {
    if (a.trim() === "") continue;
    const start = / -S (-?\d+)/.exec(a);
    const end = / -E (-?\d+)/.exec(a);
    const from = start ? Number(start[1]) : 0;
    const to = end ? Number(end[1]) : HEIGHT - 1;
    rows += Math.max(0, to - from + 1);
  }
  return rows;
}

/**
 * A pane (history-limit 50 000) that waits for Enter, then prints `lines` rows of a log and
 * then redraws one progress line every `spinEvery` seconds: a build.
 */
async function buildPane(t: Server, lines: number, spinEvery: string): Promise<string> {
  await t.tmux("set-option", "-g", "history-limit", "50000");
  return (await t.tmux(
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id}",
    `sh -c 'read x; seq -f %0150g 1 ${lines}; ` +
      `while :; do printf "\\r%s" $(date +%N); sleep ${spinEvery}; done'`,
  )).trim();
}

/** Resolves once the wait's subscription exists. */
async function subscribed(t: Server, c: TestClient): Promise<void> {
  await waitFor(
    () => controlFor(c.server.runner, { socketName: t.socket }).watchers >= 1,
    "the wait to subscribe",
  );
}

Deno.test("wait_for_text ends at its timeout on a pane that printed a log and keeps redrawing a progress line", async () => {
  await withServer(async (t, c) => {
    const pane = await buildPane(t, 40_000, "0.01");
    await countCaptures(t);
    const timeoutMs = 3_000;
    // Reads are at least 20 ms apart while a wait runs (one capture each while the pane does
    // not scroll, a few while it does): a wait that ends at its 3 s timeout captures the pane
    // at most about 300 times.
    const bound = 2 * (timeoutMs / 20) + 10;
    let ended = false;
    const wait = c.call("wait_for_text", {
      paneId: pane,
      patterns: ["NEVER-PRINTED"],
      timeoutMs,
    }).finally(() => ended = true);
    await subscribed(t, c);
    await t.tmux("send-keys", "-t", pane, "Enter");
    // Let it run until it ends or until it has captured the pane twice as often as it could
    // have by its deadline; then end the progress line (the pane is respawned).
    await waitFor(async () => ended || await captures(t) > 2 * bound, "the wait to end", 120_000);
    const capturedWhileRunning = await captures(t);
    if (!ended) await t.tmux("respawn-pane", "-k", "-t", pane, "sleep 1000");
    const result = await wait;
    const data = result.structuredContent as { outcome: string; waitedMs: number };
    assert.equal(
      data.outcome,
      "timedOut",
      `a wait with a ${timeoutMs} ms timeout did not end by itself: it captured the pane ` +
        `${capturedWhileRunning} times (at most ~${bound} fit in its timeout) and ran ` +
        `${data.waitedMs} ms, until the pane was respawned (outcome ${data.outcome})`,
    );
  });
});

Deno.test("wait_for_text reads about what the pane wrote, not all of it again at every read", async () => {
  await withServer(async (t, c) => {
    const lines = 20_000;
    // A slower progress line, so that the wait does end at its timeout.
    const pane = await buildPane(t, lines, "0.3");
    await countCaptures(t);
    const wait = c.call("wait_for_text", {
      paneId: pane,
      patterns: ["NEVER-PRINTED"],
      timeoutMs: 4_000,
    });
    await subscribed(t, c);
    await t.tmux("send-keys", "-t", pane, "Enter");
    const result = await wait;
    const n = await captures(t);
    const asked = await rowsAsked(t);
    // What a wait needs: the rows written (once) and a screenful per capture. A read that
    // cannot place its cut reads row by row from further up, so a loaded machine (more reads
    // while the log pours out) asks for up to about twice that; reading everything from the
    // start row at every read asked for about 13 times it.
    const needed = lines + HEIGHT * n;
    assert.ok(
      asked <= 5 * needed,
      `one wait_for_text (${
        (result.structuredContent as { outcome: string }).outcome
      }) made tmux print ${asked} rows in ${n} captures for a pane that wrote ${lines} rows ` +
        `(${needed} rows would cover every write plus a screen per capture)`,
    );
  });
});

/** Holds each pane probe of a read (its display-message) at `gate` until it opens. */
async function holdAfterProbe(t: Server, gate: HookGate): Promise<void> {
  await t.tmux(
    "set-hook",
    "-g",
    "after-display-message",
    "if-shell -F '#{m:*pane_width*history_limit*alternate_on*,#{hook_arguments}}' " +
      `{ ${gate.command} }`,
  );
}

/** Something a program writes: lines, a long wrapped one, a redraw, a cursor move, a clear... */
function writing(rand: ReturnType<typeof prng>, n: number): string {
  const word = () => rand.pick(["build", "ok", "日本語", "é", "🛠", "x".repeat(rand.int(70))]);
  switch (rand.int(9)) {
    case 0:
    case 1:
      return Array.from({ length: 1 + rand.int(25) }, (_, i) => `line ${n}.${i} ${word()}\r\n`)
        .join("");
    case 2:
      return `${"w".repeat(20 + rand.int(120))} ${n}\r\n`;
    case 3:
      return `\rprogress ${n} ${word()}`;
    case 4:
      return `\x1b[${1 + rand.int(5)}A\rEDIT ${n}\x1b[${1 + rand.int(5)}B\r\n`;
    case 5:
      return "\r\n".repeat(1 + rand.int(4));
    case 6:
      return rand.chance(0.5) ? "\x1b[2K\r" : `\x1b[H\x1b[2J top ${n}\r\n`;
    case 7:
      return `${word()} ${word()} `;
    default:
      return `\x1b[${1 + rand.int(8)};${1 + rand.int(30)}H${word()}\x1b[8;1H\r\n`;
  }
}

Deno.test("a read of only the rows that may have changed tells what a read of all of them does", async () => {
  for (const seed of [1, 2, 3]) {
    // Text on the screen below the cursor at the start: never new.
    await withWatched("before\r\nold 1\r\nold 2 BELOW\x1b[2;1H", async (_t, w) => {
      const rand = prng(seed);
      for (let n = 0; n < 60; n++) {
        const what = writing(rand, n);
        await w.write(what);
        await w.check(await w.watched.read(), `seed ${seed}, step ${n}: ${JSON.stringify(what)}`);
      }
    });
  }
});

Deno.test("a read planned before the pane scrolled reads from further up, and tells the same rows", async () => {
  // The start row continues a wrapped line: the first read cuts that line where it begins.
  await withWatched(`${"z".repeat(45)}\r\nbelow\x1b[A`, async (t, w) => {
    // Captures of the rows above the anchor row by row (-N, to the anchor: -E).
    await t.tmux("set-option", "-g", "@above", "0");
    await t.tmux(
      "set-hook",
      "-g",
      "after-capture-pane",
      "if-shell -F '#{m:*-N*-E*,#{hook_arguments}}' { set -gF @above '#{e|+:#{@above},1}' }",
    );
    const above = async () => Number((await t.tmux("show-options", "-gv", "@above")).trim());
    const steps: [string, string][] = [
      ["held", Array.from({ length: 20 }, (_, i) => `held ${i}\r\n`).join("")],
      // The next anchor on a blank line: the rows above it alone cannot place it (a wrapped
      // line's next row erased reads the same).
      ["more", "more\r\n".repeat(12) + "\r\n".repeat(10)],
      ["blank", Array.from({ length: 15 }, (_, i) => `blank ${i} ${"w".repeat(40)}\r\n`).join("")],
    ];
    for (const [name, text] of steps) {
      const before = await above();
      const gate = await HookGate.make();
      try {
        // The read is held after its probe while the pane scrolls, then reads.
        await holdAfterProbe(t, gate);
        const reading = w.watched.read();
        await waitFor(() => gate.began(), `the ${name} read to be held after its probe`);
        await w.write(text);
        await gate.open();
        await w.check(await reading, name);
        await t.tmux("set-hook", "-gu", "after-display-message");
      } finally {
        await gate.remove();
      }
      assert.ok(await above() > before, `${name}: the rows above the anchor were read`);
    }
  });
});

Deno.test("of more rows than a read takes written between two reads, the last ones are read and the others counted", async () => {
  await withWatched("", async (_t, w) => {
    const total = READ_ROWS + 2_000;
    await w.write(Array.from({ length: total }, (_, i) => `row ${i}\r\n`).join(""));
    const read = await w.watched.read();
    const shown = (read.rows ?? []).map((r) => r.shown);
    assert.ok(shown.length <= READ_ROWS, `${shown.length} rows read`);
    assert.equal(shown.at(-1), `row ${total - 1}`);
    assert.ok(!shown.includes("row 0"));
    // Every row written is read or counted (the screen's first rows, blank at the start, are
    // neither).
    const skipped = w.watched.skippedRows;
    assert.ok(skipped > 0 && skipped + shown.length >= total - 8, `${skipped} + ${shown.length}`);
    // And the next read goes on from there.
    await w.write("after\r\n");
    assert.deepEqual((await w.watched.read()).rows?.map((r) => r.shown), ["after"]);
  }, { skips: true });
});

/**
 * 50 short lines, a line two rows long at width 30 ("xxx…NOT-" fills its first row, "DONE"
 * begins the second), then 9 998 rows: with the cursor's blank row below them, the row
 * {@link READ_ROWS} from the end is the long line's second one.
 */
const CUT_BURST = "HEAD\r\n".repeat(50) + "x".repeat(26) + "NOT-DONE\r\n" +
  Array.from({ length: READ_ROWS - 2 }, (_, i) => `row ${i}\r\n`).join("");

Deno.test("a read cut at 10 000 rows inside a wrapped line tells no line's end as a line", async () => {
  await withWatched("$ ", async (t, w) => {
    await w.write(CUT_BURST);
    const shown = ((await w.watched.read()).rows ?? []).map((r) => r.shown);
    const p = (await t.tmux("display-message", "-p", "#{pane_id}")).trim();
    const whole = (await t.tmux("capture-pane", "-p", "-J", "-t", p, "-S", "-")).split("\n");
    assert.deepEqual(shown.filter((l) => !whole.includes(l)), [], "ends of lines told as lines");
    // Every row written is read or counted, the long line's two rows counted (the 8 rows of
    // the screen at the start, read then, are neither).
    const skipped = w.watched.skippedRows;
    assert.equal(shown[0], "row 0");
    assert.equal(
      skipped + shown.length,
      50 + 2 + READ_ROWS - 2 - 8,
      `${skipped} + ${shown.length}`,
    );
    await w.write("after\r\n");
    assert.deepEqual((await w.watched.read()).rows?.map((r) => r.shown), ["after"]);
  }, { skips: true });
});

Deno.test('a burst past 10 000 rows cut inside a wrapped line: ^DONE is not matched on a line "…NOT-DONE"', async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-cut-" });
  const t = await TestTmux.start("main", { width: 30, height: 8 });
  const c = await connect({ socketName: t.socket });
  try {
    await Deno.writeTextFile(`${dir}/burst`, CUT_BURST + "\x1b]2;burst drawn\x07");
    await t.tmux("set-option", "-g", "history-limit", "100000");
    const pane = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "-t", "main")).trim();
    const title = async () =>
      (await t.tmux("display-message", "-p", "-t", pane, "#{pane_title}")).trim();
    // The pane prints the burst at a key press, then shows what is written to it.
    await t.tmux(
      ...["respawn-pane", "-k", "-t", pane],
      `stty raw -echo; printf '$ \\033]2;armed\\007'; head -c 1 >/dev/null; ` +
        `cat '${dir}/burst'; exec cat`,
    );
    await waitFor(async () => await title() === "armed", "the pane to wait for a key");
    const waiting = c.ok<{ outcome: string; matched: { pattern: string } | null }>(
      "wait_for_text",
      // The longest a wait takes: on a loaded machine the burst alone, drawn and read, took
      // the 30 s this once had, and the wait ended before END was typed.
      { paneId: pane, patterns: ["^DONE", "^END"], regex: true, timeoutMs: 120_000 },
    );
    await subscribed(t, c);
    const gate = await HookGate.make();
    try {
      // The wait's next probe is held while the whole burst is drawn: its next read comes
      // after it, past 10 000 rows.
      await holdAfterProbe(t, gate);
      await t.tmux("send-keys", "-t", pane, "x");
      await waitFor(() => gate.began(), "the wait's probe to be held");
      await waitFor(async () => await title() === "burst drawn", "the burst drawn");
      await gate.open();
      await t.tmux("set-hook", "-gu", "after-display-message");
    } finally {
      await gate.remove();
    }
    await t.foreground(pane, "cat");
    await t.tmux("send-keys", "-t", pane, "-l", "END");
    const r = await waiting;
    // A pane left in a mode (a hook job's output shown over it) takes the keys typed.
    const mode = await t.tmux("display-message", "-p", "-t", pane, "#{pane_mode}");
    assert.deepEqual(
      [r.outcome, r.matched?.pattern],
      ["matched", "^END"],
      `${JSON.stringify(r)} mode: ${mode}`,
    );
  } finally {
    await c.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
  assert.equal(c.server.runner.running, 0, "no tmux child left behind");
});

Deno.test("a pane made taller: a line the watch already read, printed again, is found", async () => {
  await withWatched(
    Array.from({ length: 30 }, (_, i) => `row ${i}\r\n`).join("") + "$ ",
    async (t, w) => {
      await w.write("\r\nok\r\n");
      assert.ok((await w.watched.read()).rows?.some((r) => r.shown === "ok"));
      // Rows come back from the history onto the taller screen: none is new.
      await t.tmux("resize-window", "-t", "main:1", "-y", "14");
      await w.write("ok\r\n");
      assert.deepEqual((await w.watched.read()).rows?.map((r) => r.shown), ["ok"]);
    },
  );
});

Deno.test("closing the pane below (the pane grows taller) makes no old line above a wait's start new", async () => {
  const t = await TestTmux.start("main", { width: 30, height: 8 });
  const c = await connect({ socketName: t.socket });
  try {
    await t.tmux("set-option", "-g", "history-limit", "100000");
    const pane = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "-t", "main")).trim();
    const tty = await quietPane(t as Server, pane);
    await tty.write(Array.from({ length: 30 }, (_, i) => `OLDMATCH ${i}\r\n`).join("") + "$ ");
    const below = (await t.tmux(
      ...["split-window", "-d", "-v", "-l", "3", "-t", pane, "-P", "-F", "#{pane_id}"],
      "sleep 1000",
    )).trim();
    const waiting = c.ok<{ outcome: string; matched: { pattern: string } | null }>(
      "wait_for_text",
      { paneId: pane, patterns: ["OLDMATCH", "END"], timeoutMs: 30_000 },
    );
    await waitFor(
      () => controlFor(c.server.runner, { socketName: t.socket }).watchers >= 1,
      "the wait to subscribe",
    );
    await t.tmux("kill-pane", "-t", below);
    await tty.write("END");
    const r = await waiting;
    assert.deepEqual([r.outcome, r.matched?.pattern], ["matched", "END"], JSON.stringify(r));
  } finally {
    await c.close();
    await t.kill();
  }
  assert.equal(c.server.runner.running, 0, "no tmux child left behind");
});

Deno.test("wait_for_text does not say a match could have been missed for a long line on the screen before it", async () => {
  await withTmux(
    async (t: Server, c) => {
      const p = t.ids.paneId;
      const tty = await quietPane(t, p);
      // Before the wait: one long wrapped line on the screen (old output), matched in pieces
      // by the check of what was on the screen.
      await tty.write("x".repeat(1000) + "\r\n");
      const waiting = summaryOf(c, "wait_for_text", {
        paneId: p,
        patterns: ["(?:[a-c][a-d]){1,900}[0-9]", "DONE"],
        regex: true,
      });
      const hub = controlFor(c.server.runner, { socketName: t.socket });
      await waitFor(() => hub.watchers >= 1, "the wait to subscribe");
      await tty.write("DONE\r\n");
      const { summary, data } = await waiting;
      assert.equal(data.outcome, "matched");
      // The only new line is 4 characters: nothing written during the wait was matched in pieces.
      assert.ok(!summary.includes("could have been missed"), summary);
    },
    {},
    { noChildLeft: true },
  );
});

Deno.test("a watch keeps at most WATCH_QUEUE_BYTES of output its wait has not taken (one that reads rows none), then reads what the pane shows", async () => {
  await withRunner(async (t, runner) => {
    const ctx = testContext(runner, t.socket);
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-queue-" });
    try {
      // Lines of 100 bytes (101 on the terminal) to 2 000 bytes short of the bound, DONE, and a
      // line of 4 000 bytes: the bound is passed in that last line, after DONE, so the stream
      // that goes on after the queue is given up does not hold DONE: a read must tell it.
      const file = `${dir}/out.txt`;
      const lines = Math.floor((WATCH_QUEUE_BYTES - 2_000) / 101);
      await Deno.writeTextFile(
        file,
        `${`${"q".repeat(99)}\n`.repeat(lines)}DONE\n${"z".repeat(4_000)}\n`,
      );
      for (const rows of [false, true]) {
        // A pane of its own each: the same output again, its history full, could be taken as
        // what the pane showed before (a watch that reads rows tells new rows by content then).
        const id = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
        await t.prompt(id);
        const { pane } = await ctx.paneSnapshot(id);
        const watch = await PaneWatch.open(ctx, pane, { rows });
        try {
          assert.equal(watch.transport, "control");
          // Its read owed for what came while it was made (none), so that the reads below are
          // the output's.
          await watch.next(performance.now() + 100);
          // The wait takes nothing while the pane writes it all (its reader busy elsewhere).
          await t.tmux("send-keys", "-t", id, `cat ${file}`, "Enter");
          const size = 101 * lines + 4_007;
          await waitFor(() => Promise.resolve(watch.heardBytes >= size), "the output heard");
          assert.ok(
            watch.queuedBytes <= (rows ? 0 : WATCH_QUEUE_BYTES),
            `${watch.queuedBytes} bytes queued, reading rows: ${rows}`,
          );
          // Then it tells what the pane shows, the end of the output with it.
          let done = false;
          const told: string[] = [];
          const deadline = performance.now() + 10_000;
          while (!done && performance.now() < deadline) {
            const event = await watch.next(deadline);
            told.push(event.kind === "lines" ? `lines ${event.lines.length}` : event.kind);
            if (event.kind === "lines") done = event.lines.some((l) => l === "DONE");
          }
          assert.ok(done, `DONE told, reading rows: ${rows}; events: ${told.join(", ")}`);
        } finally {
          watch.close();
        }
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});
