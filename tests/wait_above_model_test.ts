/**
 * A watch's rows checked against reading every row, the rows above the start row too: random
 * writing that never scrolls (words put anywhere, rows erased, rows above the cursor drawn
 * again), with the reference of wait_bounded_test.ts's model for the rows from the start on,
 * and before them the screen's rows above the start drawn again in place (a multi-line
 * progress display), told as a read of every row would tell them. One row changes at a time:
 * nothing moves, and nothing may be taken for moved.
 */

import assert from "node:assert/strict";
import { changedRows } from "../src/tools/captured_rows.ts";
import { prng } from "./helpers/prng.ts";
import { withWatched } from "./helpers/watched.ts";

/**
 * Something a program writes that never scrolls the screen (30 x 8): a word at a place, a row
 * erased, a row above the cursor drawn again and the cursor back (docker's layers), a `\r`
 * redraw. The history stays as it was: every row above the start is followed.
 */
function writing(rand: ReturnType<typeof prng>, n: number): string {
  const word = () => rand.pick(["build", "ok", "日本語", "é", "🛠", "FAILED", "x".repeat(8)]);
  const row = () => 1 + rand.int(7);
  switch (rand.int(5)) {
    case 0:
      return `\x1b[${row()};${1 + rand.int(20)}H${word()}`;
    case 1:
      return `\x1b[${row()};1H${word()} ${n}`;
    case 2:
      return `\x1b[${row()};1H\x1b[2K`;
    case 3:
      return `\x1b[7;1H\x1b[${1 + rand.int(6)}A\rEDIT ${n}\x1b[7;1H`;
    default:
      return `\rprogress ${n} ${word()}`;
  }
}

Deno.test("rows above the start drawn again in place are told first, as a read of every row tells them", async () => {
  for (const seed of [1, 2, 3]) {
    // The start row is the screen's fourth (row 3): three rows above it.
    await withWatched("before\r\nold 1\r\nold 2 BELOW\r\nstart\r\nbelow\x1b[4;3H", async (t, w) => {
      const p = (await t.tmux("display-message", "-p", "-t", "main:1", "#{pane_id}")).trim();
      const number = async (format: string) =>
        Number(await t.tmux("display-message", "-p", "-t", p, format));
      const top = await number("#{history_size}");
      const start = top + 3;
      const aboveNow = async (history: number) => {
        if (start - 1 < history) return [];
        const rows = await t.tmux(
          ...["capture-pane", "-p", "-t", p, "-S", String(top - history)],
          ...["-E", String(start - 1 - history)],
        );
        return rows.split("\n").slice(0, start - Math.max(top, history)).map((r) => r.trimEnd());
      };
      const base = await aboveNow(top);
      let last = base;
      const rand = prng(seed);
      /** Steps that drew a row above the start again. */
      let drawn = 0;
      for (let n = 0; n < 80; n++) {
        const what = writing(rand, n);
        await w.write(what);
        const read = await w.watched.read();
        const history = await number("#{history_size}");
        const now = await aboveNow(history);
        assert.equal(history, top, "nothing scrolled");
        const told = changedRows(["", ...base], now, last, 0, 1);
        if (told.length > 0) drawn++;
        last = now;
        const step = `seed ${seed}, step ${n}: ${JSON.stringify(what)}`;
        const rows = read.rows ?? [];
        assert.deepEqual(rows.slice(0, told.length), told, step);
        // The whole read, as the model of wait_bounded_test.ts has it (the rows above the
        // start first).
        await w.check(read, step);
      }
      assert.ok(drawn > 5, `seed ${seed}: ${drawn} rows above drawn again`);
    });
  }
});
