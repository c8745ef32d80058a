/**
 * wait_for_text when old text comes back or moves without being written again, against real
 * tmux on private sockets: leaving the alternate screen puts the normal screen back, an insert
 * or delete of lines or a scroll down moves the rows the screen showed, and none of that is new
 * output. Text redrawn above the row where the wait began (a multi-line progress display) is.
 */

import assert from "node:assert/strict";
import { waitFor } from "./helpers/tmux.ts";
import { quietPane, subscribed, type Wait, withServer } from "./helpers/wait_text.ts";
import type { Server } from "./helpers/watched.ts";

/** Resolves once the pane's visible screen holds `text` (with its escapes, `-e`: none here). */
async function shows(t: Server, p: string, text: string, alternate?: boolean): Promise<void> {
  await waitFor(async () => {
    const screen = await t.tmux("capture-pane", "-p", "-t", p);
    const on = (await t.tmux("display-message", "-p", "-t", p, "#{alternate_on}")).trim();
    return screen.includes(text) && (alternate === undefined || (on === "1") === alternate);
  }, text);
}

/** A pause long enough for the wait to read the pane (its reads follow output within ms). */
const settle = () => new Promise((r) => setTimeout(r, 300));

/** The pager: a build's verdict, then `less` on the alternate screen over it. */
const PAGER = "$ make\r\nerror: BUILD FAILED\r\n$ less log\r\n" +
  "\x1b[?1049h\x1b[H\x1b[2Jlog line 1\r\nlog line 2\r\n:\x1b[H";

Deno.test("leaving the alternate screen puts old text back, which is no output", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    await tty.write(PAGER);
    await shows(t, p, "log line 2", true);
    const wait = c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["FAILED"], timeoutMs: 1_500 });
    await subscribed(t, c);
    await settle();
    await tty.write("\x1b[?1049l");
    const told = await wait;
    assert.deepEqual([told.outcome, told.lines], ["timedOut", []]);
    // Nor without patterns: the restored screen is not the first new text.
    await tty.write(PAGER);
    await shows(t, p, "log line 2", true);
    const any = c.ok<Wait>("wait_for_text", { paneId: p, timeoutMs: 1_500 });
    await subscribed(t, c);
    await settle();
    await tty.write("\x1b[?1049l");
    assert.deepEqual((await any).outcome, "timedOut");
  });
});

Deno.test("new text written as the alternate screen is left is told, the restored text is not", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    await tty.write(PAGER);
    await shows(t, p, "log line 2", true);
    const wait = c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["FAILED"], timeoutMs: 5_000 });
    await subscribed(t, c);
    await settle();
    await tty.write("\x1b[?1049lnew FAILED\r\n");
    const told = await wait;
    assert.deepEqual([told.outcome, told.lines], ["matched", ["new FAILED"]]);
  });
});

Deno.test("a program that takes the alternate screen during the wait and leaves it tells nothing old", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    // The verdict above the start row, and on it (the cursor at its end).
    for (const setup of ["$ make\r\nerror: BUILD FAILED\r\n$ ", "$ make\r\nerror: BUILD FAILED"]) {
      await tty.write(`\x1b[H\x1b[2J${setup}`);
      await shows(t, p, "BUILD FAILED", false);
      const wait = c.ok<Wait>("wait_for_text", {
        paneId: p,
        patterns: ["FAILED"],
        timeoutMs: 2_000,
      });
      await subscribed(t, c);
      await settle();
      // vim opens, is read on the alternate screen, and quits.
      await tty.write("\x1b[?1049h\x1b[H\x1b[2Jfile.txt line\r\n~\r\n~\r\n");
      await shows(t, p, "file.txt line", true);
      await settle();
      await tty.write("\x1b[?1049l");
      const told = await wait;
      assert.deepEqual([told.outcome, told.lines], ["timedOut", []], JSON.stringify(setup));
    }
  });
});

Deno.test("rows moved by inserted or deleted lines or a scroll down are no output", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    const cases: [string, string][] = [
      // Two lines inserted at the top: the verdict moves down past the start row.
      ["error: BUILD FAILED\r\nnext\r\n", "\x1b[1;1H\x1b[2L\x1b[3;1H"],
      // The screen scrolled down by two: the same.
      ["error: BUILD FAILED\r\nnext\r\n", "\x1b[2T"],
      // A line deleted at the top: the verdict moves up onto the start row (row 2).
      ["\r\n\r\nerror: BUILD FAILED\r\nnext\x1b[2;1H", "\x1b[1;1H\x1b[M\x1b[3;1H"],
      // The same, the start row below the rows that move (they are above it).
      ["one\r\nerror: BUILD FAILED\r\nthree\r\n", "\x1b[1;1H\x1b[M\x1b[3;1H"],
    ];
    for (const [setup, move] of cases) {
      await tty.write(`\x1b[H\x1b[2J${setup}`);
      await shows(t, p, "BUILD FAILED");
      await settle();
      const wait = c.ok<Wait>("wait_for_text", {
        paneId: p,
        patterns: ["FAILED"],
        timeoutMs: 1_500,
      });
      await subscribed(t, c);
      await settle();
      await tty.write(move);
      const told = await wait;
      assert.deepEqual([told.outcome, told.lines], ["timedOut", []], JSON.stringify(move));
    }
    // New text scrolled in above the moved rows is told.
    await tty.write("\x1b[H\x1b[2Jerror: BUILD FAILED\r\nnext\r\n");
    await shows(t, p, "BUILD FAILED");
    const wait = c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["FAILED"], timeoutMs: 5_000 });
    await subscribed(t, c);
    await settle();
    await tty.write("\x1b[2T\x1b[1;1Hnew FAILED");
    const told = await wait;
    assert.deepEqual([told.outcome, told.lines], ["matched", ["new FAILED"]]);
  });
});

Deno.test("rows redrawn above the row the wait began on are new text (multi-line progress)", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    for (const patterns of [["complete"], undefined]) {
      await tty.write("\x1b[H\x1b[2Jlayer1: Downloading 10%\r\nlayer2: Downloading 40%\r\n");
      await shows(t, p, "layer2: Downloading 40%");
      const wait = c.ok<Wait>("wait_for_text", { paneId: p, patterns, timeoutMs: 5_000 });
      await subscribed(t, c);
      await settle();
      await tty.write("\x1b[2A\r\x1b[Klayer1: Pull complete\x1b[2B\r");
      await settle();
      await tty.write("\x1b[1A\r\x1b[Klayer2: Pull complete\x1b[1B\r");
      const told = await wait;
      assert.deepEqual(
        [told.outcome, told.lines],
        [patterns ? "matched" : "output", ["layer1: Pull complete"]],
      );
    }
  });
});
