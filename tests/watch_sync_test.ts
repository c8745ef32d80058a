/**
 * A watch's stream and the rows another client reads are two roads from tmux, and the rows may
 * be ahead: a job's end judged from rows read the moment a program wrote over the shell's end
 * must first hear all the stream carried until then (job_state.ts, hearEnds). A watch's sync
 * waits for what tmux had read from the pane when asked, and a watch that gives up a flood it
 * was not asked for yet lets its tap hear the lines first.
 */

import assert from "node:assert/strict";
import { execFast } from "../src/tmux/control.ts";
import { PaneWatch, WATCH_QUEUE_BYTES } from "../src/tools/pane_watch.ts";
import { testContext } from "./helpers/mcp.ts";
import { type TestTmux, waitFor, withRunner } from "./helpers/tmux.ts";
import type { TmuxRunner } from "../src/tmux/run.ts";

/** A shell pane of its own at its prompt, and an open watch of it (closed after `body`). */
async function withWatch(
  t: TestTmux,
  runner: TmuxRunner,
  body: (id: string, watch: PaneWatch) => Promise<void>,
): Promise<void> {
  const ctx = testContext(runner, t.socket);
  const id = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
  await t.prompt(id);
  const { pane } = await ctx.paneSnapshot(id);
  const watch = await PaneWatch.open(ctx, pane);
  try {
    assert.equal(watch.transport, "control");
    await body(id, watch);
  } finally {
    watch.close();
  }
}

/** Runs `body` with a private server, a runner of it, and a file holding `text`. */
async function withFile(
  text: string,
  body: (t: TestTmux, runner: TmuxRunner, file: string) => Promise<void>,
): Promise<void> {
  await withRunner(async (t, runner) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-sync-" });
    try {
      await Deno.writeTextFile(`${dir}/out.txt`, text);
      await body(t, runner, `${dir}/out.txt`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

/** Lines of 100 bytes (101 on the terminal). */
const ROW = `${"q".repeat(99)}\n`;

Deno.test("once a watch's sync is over, it has heard every line the pane's rows already show", async () => {
  // Megabytes before the line: the stream's client is behind the screen for a while.
  const text = ROW.repeat(Math.floor((WATCH_QUEUE_BYTES / 2) / 101));
  await withFile(text, async (t, runner, file) => {
    for (let round = 0; round < 5; round++) {
      await withWatch(t, runner, async (id, watch) => {
        const word = `SYNCED_${round}`;
        await t.tmux("send-keys", "-t", id, `cat ${file}; echo ${word}`, "Enter");
        // The rows show it (read over the commands' client, as a job's reads go, again and
        // again with no pause) ...
        const until = performance.now() + 20_000;
        while (true) {
          const rows = await execFast(runner, { socketName: t.socket }, [
            "capture-pane",
            "-p",
            "-t",
            id,
          ]);
          if (new TextDecoder().decode(rows.stdout).split("\n").includes(word)) break;
          assert.ok(performance.now() < until, "the rows show the line");
        }
        // ... so once synced, the stream has brought it: nothing taken before counts.
        const heard = await watch.heardAll();
        assert.ok(heard.includes(word), `round ${round}: ${heard.length} lines heard`);
      });
    }
  });
});

Deno.test("a watch that gives up a flood nobody took lets its tap hear its lines first", async () => {
  // A line early, then more than the bound: the queue holding it is given up.
  const lines = Math.ceil((WATCH_QUEUE_BYTES + 200_000) / 101);
  await withFile(`EARLY_LINE\n${ROW.repeat(lines)}`, async (t, runner, file) => {
    await withWatch(t, runner, async (id, watch) => {
      const tapped: string[] = [];
      watch.tap = (heard) => tapped.push(...heard.filter((l) => !/^q+$/.test(l)));
      await watch.next(performance.now() + 100);
      // Nothing is taken while the pane writes it all.
      await t.tmux("send-keys", "-t", id, `cat ${file}`, "Enter");
      await waitFor(() => Promise.resolve(watch.heardBytes >= 101 * lines), "the output heard");
      assert.ok(watch.queuedBytes <= WATCH_QUEUE_BYTES, `${watch.queuedBytes} queued`);
      assert.ok(tapped.includes("EARLY_LINE"), JSON.stringify(tapped));
    });
  });
});

Deno.test("a string left open is timed from when its output came, not from when a busy wait took it", async () => {
  await withRunner(async (t, runner) => {
    await withWatch(t, runner, async (id, watch) => {
      await watch.next(performance.now() + 100);
      // A DCS begun and never ended, then a line after tmux's 5 s string timer: tmux shows it.
      await t.tmux("send-keys", "-t", id, "printf '\\033Pq'; sleep 5.5; echo SHOWN_AFTER", "Enter");
      const from = watch.heardBytes;
      await waitFor(async () => {
        const rows = await t.tmux("capture-pane", "-p", "-t", id);
        return rows.split("\n").includes("SHOWN_AFTER");
      }, "tmux shows the line after the string timed out");
      await waitFor(() => watch.heardBytes > from, "the output heard");
      // Taken only now, all at once: the stream says what the screen shows.
      const heard = await watch.heardAll();
      assert.ok(heard.includes("SHOWN_AFTER"), JSON.stringify(heard));
    });
  });
});
