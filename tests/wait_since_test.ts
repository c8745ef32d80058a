/**
 * wait_for_text with a `since` cursor from capture_since, against real tmux on private sockets:
 * what the pane wrote after the cursor counts even when written before the call, old text never
 * does (a prompt, a header above a scroll region), a cursor whose place is lost makes nothing
 * from before count, and a cursor this server process did not hand out is refused.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CursorStore, openCursor } from "../src/tmux/since_cursor.ts";
import { waitFor } from "./helpers/tmux.ts";
import {
  hub,
  quietPane,
  structured,
  subscribed,
  type,
  type Wait,
  withServer,
} from "./helpers/wait_text.ts";

/** The first line of a result's text: its summary. */
function summaryOf(result: CallToolResult): string {
  const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
  return text.split("\n")[0];
}

Deno.test("since: a capture_since cursor taken before typing counts what the pane answered before the call", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const onScreen = (text: string) =>
      waitFor(async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes(text), text);
    // The documented order: a cursor, then typing, then the wait. The program answers before
    // the wait is called (as a quick command or a REPL does).
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    await c.ok("send_keys", { paneId: p, text: "printf 'REA%sDY\\n' ''" });
    await onScreen("READY\n");
    const late = await c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["READY"],
      timeoutMs: 300,
    });
    assert.equal(late.outcome, "timedOut", "without since only output after the call counts");
    const since = await c.call("wait_for_text", {
      paneId: p,
      patterns: ["READY"],
      since: cursor,
      timeoutMs: 10_000,
    });
    const found = structured(since);
    assert.deepEqual([found.outcome, found.lines, found.alreadyOnScreen], [
      "matched",
      ["READY"],
      true,
    ]);
    assert.match(summaryOf(since), /written before the call, after the cursor/);
    // Without patterns: every line since the cursor, the prompt it was typed at left out.
    const any = await c.ok<Wait>("wait_for_text", { paneId: p, since: cursor, timeoutMs: 10_000 });
    assert.equal(any.outcome, "output");
    assert.deepEqual(any.lines.slice(0, 2), ["printf 'REA%sDY\\n' ''", "READY"]);

    // A cursor taken after the answer: nothing since it, and the wait goes on to new output.
    const after = (await c.ok<{ cursor: string }>("capture_since", { paneId: p })).cursor;
    const quiet = await c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["READY"],
      since: after,
      timeoutMs: 300,
    });
    assert.deepEqual([quiet.outcome, quiet.alreadyOnScreen], ["timedOut", true]);
    const next = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["AGAIN"],
      since: after,
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await type(t, p, "printf 'AG%sAIN\\n' ''");
    assert.deepEqual((await next).lines, ["AGAIN"]);
  });
});

Deno.test("since: old text never counts, and a cursor this process did not seal is refused", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const prompt = (await t.tmux("capture-pane", "-p", "-t", p)).trim();
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    // Typed at the prompt without Enter: the row reads "<prompt> echo hi"; the prompt was
    // there before the cursor, "echo hi" is new.
    await t.tmux("send-keys", "-t", p, "-l", "echo hi");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("echo hi"),
      "the typed text",
    );
    const typed = await c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: [prompt, "echo"],
      since: cursor,
      timeoutMs: 10_000,
    });
    assert.deepEqual([typed.matched, typed.lines], [{ pattern: "echo", index: 1 }, ["echo hi"]]);
    await t.tmux("send-keys", "-t", p, "C-u");

    // Forged: well formed but not sealed here (another process's, an altered seal, another
    // serial number with this seal); malformed; from another pane. Each refused before
    // anything is watched.
    const [head, serial, seal] = cursor.split(".");
    const foreign = await new CursorStore().issue(await openCursor(cursor, p));
    const other = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const otherCursor = (await c.ok<{ cursor: string }>("capture_since", { paneId: other })).cursor;
    const next = (parseInt(serial, 36) + 1).toString(36);
    for (
      const [forged, why] of [
        [foreign, /not sealed by this server process/],
        [`${head}.${next}.${seal}`, /not sealed by this server process/],
        [`${head}.${serial}.${"A".repeat(16)}`, /not sealed by this server process/],
        [`${cursor}x`, /malformed/],
        [otherCursor, new RegExp(`taken on pane ${other}, not`)],
      ] as const
    ) {
      const text = await c.fail("wait_for_text", {
        paneId: p,
        patterns: ["x"],
        since: forged,
      });
      assert.match(text, why);
      assert.match(text, /capture_since/);
      assert.equal(hub(t, c).watchers, 0);
    }
  });
});

Deno.test("since: under a full-screen program capture_since takes only its own cursors, and keeps one while nothing changes", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    // What another process handed out: the same rows, not this process's cursor.
    const foreign = await new CursorStore().issue(await openCursor(cursor, p));
    await type(t, p, "printf '\\033[?1049hFU%sLL' ''; read x");
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", p, "#{alternate_on}")).trim() === "1",
      "the full-screen program",
    );
    assert.match(
      await c.fail("capture_since", { paneId: p, cursor: foreign }),
      /not sealed by this server process/,
    );
    type Since = { cursor: string; text: string; alternateScreen: boolean };
    const own = await c.ok<Since>("capture_since", { paneId: p, cursor });
    assert.equal(own.alternateScreen, true);
    assert.match(own.text, /FULL/);
    assert.notEqual(own.cursor, cursor, "it remembers the full-screen program's screen");
    // Nothing changed: the same cursor comes back, and no other is kept.
    const again = await c.ok<Since>("capture_since", { paneId: p, cursor: own.cursor });
    assert.deepEqual([again.cursor, again.text], [own.cursor, ""]);
    const waited = await c.call("wait_for_text", {
      paneId: p,
      patterns: ["x"],
      since: again.cursor,
      timeoutMs: 100,
    });
    assert.equal(structured(waited).outcome, "timedOut");
  });
});

Deno.test("since: a cursor whose place is lost (history cleared) makes nothing from before count", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    await type(t, p, "seq 1 100");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("\n100\n"),
      "seq's output",
    );
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    await type(t, p, "printf 'REA%sDY\\n' ''");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("READY\n"),
      "READY",
    );
    await t.tmux("clear-history", "-t", p);
    const result = await c.call("wait_for_text", {
      paneId: p,
      patterns: ["READY"],
      since: cursor,
      timeoutMs: 300,
    });
    assert.equal(structured(result).outcome, "timedOut");
    assert.match(summaryOf(result), /since ignored: the history was cleared/);
  });
});

Deno.test("since: under a scroll region, a header read before the cursor never counts", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // A fixed header over a scroll region, as a program with a status header draws; the
    // shell's output then scrolls the region, and tmux keeps the header on the screen.
    await type(
      t,
      p,
      "printf '\\033[2J\\033[HHEADER-AL%sPHA\\r\\nBETA\\r\\nGAMMA\\033[4;24r\\033[4;1H' ''; seq 1 40",
    );
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("\n40\n"),
      "seq's output",
    );
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    await type(t, p, "printf 'NE%sW\\n' ''");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("\nNEW\n"),
      "NEW",
    );
    const header = await c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["HEADER-ALPHA", "^40$"],
      since: cursor,
      timeoutMs: 300,
    });
    assert.equal(header.outcome, "timedOut", JSON.stringify(header.lines));
    const found = await c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["NEW"],
      since: cursor,
      timeoutMs: 10_000,
    });
    assert.deepEqual([found.outcome, found.lines], ["matched", ["NEW"]]);
  });
});

Deno.test("since: a full-screen program started after the cursor drew all it shows since", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    await type(t, p, "printf '\\033[?1049hFULL%sSCREEN' ''; exec cat");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("FULLSCREEN"),
      "the full-screen program",
    );
    const result = await c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["fullscreen"],
      since: cursor,
      timeoutMs: 10_000,
    });
    assert.deepEqual([result.outcome, result.lines], ["matched", ["FULLSCREEN"]]);
  });
});

Deno.test("since: repeated lines trimmed at the history's limit prove no place, and old text never counts", async () => {
  await withServer(async (t, c) => {
    // A pane whose history holds 100 lines: tmux drops 10 at once when it is full.
    await t.tmux("set-option", "-g", "history-limit", "100");
    const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}")).trim();
    const pane = await quietPane(t, p);
    const historySize = async () =>
      Number(await t.tmux("display", "-p", "-t", p, "#{history_size}"));
    // Written up to `end`, the last bytes sent, left on the cursor's row.
    const written = (end: string) =>
      waitFor(async () => {
        const [x, y] = (await t.tmux("display", "-p", "-t", p, "#{cursor_x} #{cursor_y}"))
          .trim().split(" ").map(Number);
        const rows = (await t.tmux("capture-pane", "-p", "-t", p)).split("\n");
        return x === end.length && rows[y] === end;
      }, JSON.stringify(end));
    const lines = (n: number) => "waiting...\r\n".repeat(n);
    await pane.write(lines(200) + "DONE\r\n>");
    await written(">");
    const before = await historySize();
    assert.ok(before >= 90, `a full history (${before} lines)`);
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    // A trim: the remembered rows, all "waiting...", read the same where they were and where
    // the trim moved them.
    await pane.write("\r\n" + lines(100 - before + 2) + ">");
    await written(">");
    assert.ok(await historySize() < before, "a trim");
    const since = await c.ok<{ missed: boolean; missedReason: string | null }>("capture_since", {
      paneId: p,
      cursor,
    });
    assert.deepEqual([since.missed, since.missedReason], [true, "history-trimmed"]);
    const result = await c.call("wait_for_text", {
      paneId: p,
      patterns: ["DONE"],
      since: cursor,
      timeoutMs: 300,
    });
    assert.equal(structured(result).outcome, "timedOut", "DONE was there before the cursor");
    assert.match(summaryOf(result), /since ignored: the history was trimmed/);
  });
});

Deno.test("since: what the pane wrote before a full-screen program took the screen counts", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    await type(t, p, "printf 'DO%sNE\\n\\033[?1049hFULL%sSCREEN' '' ''; exec cat");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("FULLSCREEN"),
      "the full-screen program",
    );
    const result = await c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["DONE"],
      since: cursor,
      timeoutMs: 10_000,
    });
    assert.deepEqual([result.outcome, result.lines], ["matched", ["DONE"]]);
  });
});
