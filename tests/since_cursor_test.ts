/**
 * capture_since's cursors end to end: what one costs a model (it comes back in every reply and
 * is copied into the next call), and which ones are refused.
 */

import assert from "node:assert/strict";
import { CURSORS, MAX_CURSORS, rowHash } from "../src/tmux/since_cursor.ts";
import { withTmux } from "./helpers/mcp.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, waitFor } from "./helpers/tmux.ts";

/** The tools that take a cursor, its argument, and what their refusal says to do. */
const TOOLS = [
  ["capture_since", "cursor", /without a cursor/, {}],
  ["wait_for_text", "since", /Take a cursor with capture_since/, { timeoutMs: 100 }],
] as const;

interface Since {
  cursor: string;
  text: string;
}

Deno.test("capture_since: a cursor's length does not depend on the pane's height", async () => {
  await withTmux(
    async (t, c) => {
      const p = t.ids.paneId;
      await t.tmux("send-keys", "-t", p, "seq 1 300", "Enter");
      // seq's last line and the prompt after it: nothing more is written.
      await waitFor(
        async () => /\n300\n\S/.test(await t.tmux("capture-pane", "-p", "-t", p)),
        "seq",
      );
      const lengths = new Set<number>();
      for (const height of [10, 24, 200]) {
        await t.tmux("resize-window", "-t", p, "-y", String(height));
        const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
        const again = await c.ok<{ cursor: string; text: string }>("capture_since", {
          paneId: p,
          cursor,
        });
        assert.equal(again.text, "", "nothing new");
        lengths.add(cursor.length).add(again.cursor.length);
      }
      assert.equal(lengths.size, 1, `cursor lengths at 10, 24 and 200 rows: ${[...lengths]}`);
    },
    {},
    { width: 120, height: 24 },
  );
});

Deno.test("capture_since: a cursor left unused stays usable while an agent polls other panes in turn", async () => {
  await withTmux(async (t, c) => {
    const first = t.ids.paneId;
    // A line of output, and the prompt after it: the shell is done writing.
    const shows = (p: string, line: string) =>
      waitFor(
        async () =>
          new RegExp(`\\n${line}\\n\\S`).test(await t.tmux("capture-pane", "-p", "-t", p)),
        line,
      );
    const { cursor: kept } = await c.ok<Since>("capture_since", { paneId: first });
    await t.tmux("send-keys", "-t", first, "echo kept-cursor-line", "Enter");
    const panes: string[] = [];
    for (let i = 0; i < 4; i++) {
      panes.push((await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim());
      await t.tmux("select-layout", "-t", first, "tiled");
    }
    const cursors = new Map<string, string>();
    for (const p of panes) {
      // Typed before the prompt, the line is echoed ahead of it and its output lands after it
      // ("$ ready"), never on a row of its own.
      await t.prompt(p);
      await t.tmux("send-keys", "-t", p, "echo ready", "Enter");
      await shows(p, "ready");
      cursors.set(p, (await c.ok<Since>("capture_since", { paneId: p })).cursor);
    }
    // Each pane prints between polls: every poll hands out a new cursor.
    for (let round = 0; round < 10; round++) {
      for (const p of panes) {
        await t.tmux("send-keys", "-t", p, `echo round-${round}`, "Enter");
        await shows(p, `round-${round}`);
        const polled = await c.ok<Since>("capture_since", { paneId: p, cursor: cursors.get(p) });
        assert.match(polled.text, new RegExp(`round-${round}`));
        cursors.set(p, polled.cursor);
      }
    }
    // Polls that find nothing pass their cursor back and get it back: nothing more is kept.
    const before = CURSORS.size;
    for (let round = 0; round < 10; round++) {
      for (const p of panes) {
        const polled = await c.ok<Since>("capture_since", { paneId: p, cursor: cursors.get(p) });
        assert.deepEqual([polled.cursor, polled.text], [cursors.get(p), ""]);
      }
    }
    assert.equal(CURSORS.size, before);
    const since = await c.ok<Since>("capture_since", { paneId: first, cursor: kept });
    assert.match(since.text, /kept-cursor-line/);
  });
});

Deno.test("capture_since and wait_for_text: an expired cursor, another process's, or another pane's is refused saying what to do", async () => {
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    const other = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const { cursor } = await c.ok<Since>("capture_since", { paneId: p });
    const { cursor: otherCursor } = await c.ok<Since>("capture_since", { paneId: other });
    assert.match(
      await c.fail("capture_since", { paneId: p, cursor: otherCursor }),
      new RegExp(`taken on pane ${other}, not ${p}`),
    );

    // Another server process on the same tmux server hands out cursors this one never kept.
    const { cmd, args } = startCommand();
    const elsewhere = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
    let foreign: string;
    try {
      await elsewhere.initialize();
      const r = await elsewhere.callTool("capture_since", { paneId: p });
      foreign = String((r.structuredContent as Record<string, unknown>).cursor);
    } finally {
      await elsewhere.kill();
    }
    assert.match(foreign, /^tmc3\./);
    for (const [tool, key, hint, extra] of TOOLS) {
      const text = await c.fail(tool, { paneId: p, [key]: foreign, ...extra });
      assert.match(text, /not sealed by this server process/);
      assert.match(text, hint);
    }

    // Other cursors handed out since (any client of this process, any pane): the oldest go.
    const filler = { ...await CURSORS.open(otherCursor), rows: rowHash("x") };
    for (let i = 0; i < MAX_CURSORS; i++) await CURSORS.issue(filler);
    for (const [tool, key, hint, extra] of TOOLS) {
      const text = await c.fail(tool, { paneId: p, [key]: cursor, ...extra });
      assert.match(
        text,
        new RegExp(`cursor expired: this server process keeps the ${MAX_CURSORS}`),
      );
      assert.match(text, hint);
    }
    // Starting again works.
    const again = await c.ok<Since>("capture_since", { paneId: p });
    await c.ok<Since>("capture_since", { paneId: p, cursor: again.cursor });
  });
});
