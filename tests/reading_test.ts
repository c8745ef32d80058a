/**
 * Reading panes end to end: capture_pane, snapshot_pane, capture_since, search_panes and
 * show_buffer through an MCP client, against private tmux servers whose panes show known bytes.
 */

import assert from "node:assert/strict";
import { byteLength, tailLines } from "../src/mcp/bounds.ts";
import { ToolFailure } from "../src/mcp/errors.ts";
import { snapshotPaneFrom } from "../src/tools/snapshot_pane.ts";
import {
  lineMatcher,
  MAX_SCROLLBACK_LINES,
  SEARCH_CONCURRENCY,
  searchInPanes,
} from "../src/tools/search.ts";
import { BULK_HISTORY_ROWS, chainBytes, CONTROL_CHAIN_BYTES } from "../src/tmux/capture_many.ts";
import { type RunOptions, TmuxRunner } from "../src/tmux/run.ts";
import type { ServerAddress } from "../src/tmux/server_address.ts";
import { takeSnapshot } from "../src/tmux/snapshot.ts";
import { CURSORS, CursorStore, MAX_REMEMBERED_ROWS, rowHash } from "../src/tmux/since_cursor.ts";
import { connect, type ConnectOptions, type TestClient, testContext } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

/** Runs `fn` with a private server, an MCP client on it and a scratch folder; cleans all up. */
async function withTmux(
  fn: (t: Started, c: TestClient, dir: string) => Promise<void>,
  options: Omit<ConnectOptions, "socketName"> = {},
): Promise<void> {
  const t = await TestTmux.start();
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-reading-" });
  let c: TestClient | undefined;
  try {
    c = await connect({ ...options, socketName: t.socket });
    await fn(t, c, dir);
  } finally {
    await c?.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
}

/** What tmux itself shows in a pane (the visible screen). */
function screen(t: TestTmux, paneId: string): Promise<string> {
  return t.tmux("capture-pane", "-p", "-t", paneId);
}

/** A new window whose pane shows exactly `bytes` (cat of a file) and then sleeps. */
async function paneShowing(
  t: TestTmux,
  dir: string,
  bytes: string,
  until: string,
  window: string[] = [],
): Promise<string> {
  const file = `${dir}/${crypto.randomUUID()}`;
  await Deno.writeTextFile(file, bytes);
  const id = (await t.tmux(
    "new-window",
    "-d",
    ...window,
    "-P",
    "-F",
    "#{pane_id}",
    `cat '${file}'; exec sleep 100000`,
  )).trim();
  await waitFor(async () => (await screen(t, id)).includes(until), `pane showing ${until}`);
  // The text shows before the shell has exec'd sleep: until then tmux names sh (or cat).
  await t.foreground(id, "sleep");
  return id;
}

/**
 * A new background window whose pane shows what `write` feeds it, through a FIFO: `write`
 * returns once tmux has parsed the bytes (a title set after them has arrived).
 */
async function fedPane(
  t: TestTmux,
  dir: string,
): Promise<{ id: string; write: (bytes: string) => Promise<void> }> {
  const fifo = `${dir}/${crypto.randomUUID()}`;
  const id = (await t.tmux(
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id}",
    `mkfifo '${fifo}'; while :; do cat '${fifo}'; done`,
  )).trim();
  await waitFor(() => Deno.stat(fifo).then(() => true, () => false), "the fifo");
  let k = 0;
  const write = async (bytes: string) => {
    const mark = `fed-${k++}`;
    await Deno.writeTextFile(fifo, `${bytes}\x1b]2;${mark}\x07`);
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", id, "#{pane_title}")).trim() === mark,
      `tmux parsed ${mark}`,
    );
  };
  return { id, write };
}

/**
 * Types `command` and Enter at the shell's prompt, then waits until the screen shows `until`,
 * and, unless the command `keepsRunning`, the prompt after it. An `until` that ends a line
 * ("second-output\n") must also start one: the echo of the typed line holds the same text after
 * the prompt, and that must not count as the output.
 */
async function type(
  t: TestTmux,
  paneId: string,
  command: string,
  until: string,
  options: { keepsRunning?: boolean } = {},
): Promise<void> {
  await t.atPrompt(paneId);
  await t.tmux("send-keys", "-t", paneId, "-l", command);
  await t.tmux("send-keys", "-t", paneId, "Enter");
  const needle = until.endsWith("\n") && !until.startsWith("\n") ? `\n${until}` : until;
  await waitFor(
    async () => `\n${await screen(t, paneId)}`.includes(needle),
    `screen showing ${until}`,
  );
  if (!options.keepsRunning) await t.atPrompt(paneId);
}

function lines(from: number, to: number, prefix = "L"): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${from + i}`);
}

interface Content {
  text: string;
  totalLines: number;
  returnedLines: number;
  droppedLines: number;
  returnedBytes: number;
  omittedBytes: number;
  complete: boolean;
  firstLineNumber: number | null;
  firstLineCut: boolean;
}
interface Capture extends Content {
  start: number;
  end: number;
  rangeClamped: boolean;
  historySize: number;
}
interface Since {
  text: string;
  cursor: string;
  fresh: boolean;
  missed: boolean;
  missedReason: string | null;
  firstLineNumber: number | null;
  unchangedLines: number;
  alternateScreen: boolean;
  trimmedLines: number;
  droppedLines: number;
  resized: boolean;
  dead: boolean;
  notes: string[];
}
interface Match {
  paneId: string;
  lineNumber: number;
  text: string;
  placements: { sessionId: string; sessionName: string; index: number }[];
}
interface Search {
  matches: Match[];
  complete: boolean;
  totalMatches: number;
  omittedMatches: number;
  panesSearched: number;
  cappedPanes: { paneId: string; found: number; returned: number }[];
  skippedPanes: { paneId: string; reason: string }[];
}

// ---------------------------------------------------------------------------------------------
// capture_pane

Deno.test("capture_pane returns CJK, emoji and combining marks exactly, trailing spaces trimmed as tmux trims", async () => {
  await withTmux(async (t, c, dir) => {
    const shown = "日本語のテキスト\n🙂 emoji 🎉 end\ne\u0301 combining a\u0308\ntrailing   \n" +
      "  leading kept\nEND";
    const id = await paneShowing(t, dir, shown, "END");
    const r = await c.ok<Capture>("capture_pane", { paneId: id });
    const expected = "日本語のテキスト\n🙂 emoji 🎉 end\ne\u0301 combining a\u0308\ntrailing\n" +
      "  leading kept\nEND";
    assert.equal(r.text, expected);
    // Exactly tmux's own capture, without the blank rows below the last written line.
    assert.equal(r.text, (await screen(t, id)).replace(/\n+$/, ""));
    assert.equal(r.totalLines, 6, "blank rows below the last line do not count");
    assert.equal(r.returnedLines, 6);
    assert.equal(r.droppedLines, 0);
    assert.equal(r.returnedBytes, byteLength(expected));
    assert.equal(r.omittedBytes, 0);
    assert.equal(r.complete, true);
    assert.equal(r.rangeClamped, false);
    assert.equal(r.firstLineNumber, 0);
    assert.deepEqual([r.start, r.end], [0, 23]);
  });
});

Deno.test("capture_pane joinWrapped returns a wrapped line whole, counting joined lines", async () => {
  await withTmux(async (t, c, dir) => {
    const long = "a".repeat(100);
    // A space exactly at the wrap point must survive the join.
    const spaced = `${"b".repeat(79)} tail`;
    const id = await paneShowing(t, dir, `${long}\n${spaced}\nnext`, "next");
    const rows = await c.ok<Capture>("capture_pane", { paneId: id });
    assert.equal(rows.text, `${"a".repeat(80)}\n${"a".repeat(20)}\n${"b".repeat(79)}\ntail\nnext`);
    assert.equal(rows.totalLines, 5);
    const joined = await c.ok<Capture>("capture_pane", { paneId: id, joinWrapped: true });
    assert.equal(joined.text, `${long}\n${spaced}\nnext`);
    assert.equal(joined.totalLines, 3);
    const last = await c.ok<Capture>("capture_pane", {
      paneId: id,
      joinWrapped: true,
      maxLines: 1,
    });
    assert.equal(last.text, "next");
    assert.equal(last.droppedLines, 2);
    assert.equal(last.firstLineNumber, 4, "the row where the last joined line starts");
  });
});

Deno.test("capture_pane reads line ranges into scrollback and reports clamping", async () => {
  await withTmux(async (t, c, dir) => {
    // 100 lines in a 24-row pane: L77..L100 on screen, L1..L76 in history (L76 is row -1).
    const id = await paneShowing(t, dir, lines(1, 100).join("\n"), "L100");
    const mid = await c.ok<Capture>("capture_pane", { paneId: id, start: -3, end: 1 });
    assert.equal(mid.text, "L74\nL75\nL76\nL77\nL78");
    assert.deepEqual([mid.start, mid.end, mid.firstLineNumber, mid.historySize], [-3, 1, -3, 76]);
    assert.equal(mid.rangeClamped, false);

    const all = await c.ok<Capture>("capture_pane", { paneId: id, start: -1000, end: 500 });
    assert.equal(all.rangeClamped, true);
    assert.deepEqual([all.start, all.end], [-76, 23]);
    assert.equal(all.text, lines(1, 100).join("\n"));
    assert.equal(all.totalLines, 100);

    const tail = await c.ok<Capture>("capture_pane", { paneId: id, start: -76, maxLines: 10 });
    assert.equal(tail.text, lines(91, 100).join("\n"), "the tail is kept");
    assert.equal(tail.droppedLines, 90);
    assert.equal(tail.totalLines, 100);
    assert.equal(tail.firstLineNumber, 14);
    assert.equal(tail.complete, false);
    assert.equal(tail.returnedBytes + tail.omittedBytes, byteLength(lines(1, 100).join("\n")));
    // firstLineNumber leads straight to the lines before.
    const before = await c.ok<Capture>("capture_pane", {
      paneId: id,
      start: tail.firstLineNumber! - 2,
      end: tail.firstLineNumber! - 1,
    });
    assert.equal(before.text, "L89\nL90");

    const err = await c.fail("capture_pane", { paneId: id, start: 5, end: 1 });
    assert.match(err, /start \(5\) is after end \(1\)/);
  });
});

Deno.test("capture_pane of rows wholly above the oldest line or below the screen returns none, and says why", async () => {
  await withTmux(async (t, c, dir) => {
    type Summed = Capture & { height: number };
    const read = async (paneId: string, args: Record<string, number>) => {
      const data = await c.ok<Summed>("capture_pane", { paneId, ...args });
      const result = await c.call("capture_pane", { paneId, ...args });
      const summary = (result.content as { text: string }[])[0].text.split("\n")[0];
      return { data, summary };
    };
    const none = (data: Summed, start: number, end: number) => {
      assert.deepEqual(
        [data.text, data.returnedLines, data.totalLines, data.firstLineNumber, data.complete],
        ["", 0, 0, null, true],
      );
      assert.deepEqual([data.start, data.end, data.rangeClamped], [start, end, false]);
    };
    // No history: the 50 rows above the screen do not exist; the screen's top row is not them.
    const fresh = await paneShowing(t, dir, "TOP-OF-SCREEN\nEND", "END");
    await t.tmux("clear-history", "-t", fresh);
    const above = await read(fresh, { start: -50, end: -1 });
    none(above.data, -50, -1);
    assert.equal(above.data.historySize, 0);
    assert.match(above.summary, /no lines.*above.*0 history lines/, above.summary);
    // Below the screen: nothing either, with or without an end.
    none((await read(fresh, { start: 30, end: 40 })).data, 30, 40);
    const below = await read(fresh, { start: 24 });
    none(below.data, 24, 24);
    assert.match(below.summary, /no lines.*below.*24 rows/, below.summary);
    // With history: a range above it is empty; one reaching into it is clamped as before.
    const full = await paneShowing(t, dir, lines(1, 100).join("\n"), "L100");
    const older = await read(full, { start: -200, end: -77 });
    none(older.data, -200, -77);
    assert.match(older.summary, /76 history lines/);
    const reaching = await read(full, { start: -200, end: -76 });
    assert.deepEqual([reaching.data.text, reaching.data.start, reaching.data.rangeClamped], [
      "L1",
      -76,
      true,
    ]);
    // A full-screen program's screen has no history of its own.
    const alt = await paneShowing(t, dir, "\x1b[?1049hALT-SCREEN\n", "ALT-SCREEN");
    none((await read(alt, { start: -50, end: -1 })).data, -50, -1);
  });
});

Deno.test("capture_pane keeps colour escapes only when asked", async () => {
  await withTmux(async (t, c, dir) => {
    const id = await paneShowing(t, dir, "\x1b[31mred\x1b[0m plain \x1b[1mbold\x1b[0m\nEND", "END");
    const plain = await c.ok<Capture>("capture_pane", { paneId: id });
    assert.equal(plain.text, "red plain bold\nEND");
    const escaped = await c.ok<Capture>("capture_pane", { paneId: id, escapes: true });
    assert.ok(escaped.text.startsWith("\x1b[31mred\x1b[39m plain \x1b[1mbold"), escaped.text);
    assert.equal(escaped.totalLines, 2);
  });
});

Deno.test("capture_pane of 2 000 lines stays under the result bound, keeping the tail", async () => {
  await withTmux(async (t, c, dir) => {
    await t.tmux("set-option", "-g", "history-limit", "5000");
    const all = lines(1, 2000, "line-with-some-width-");
    const id = await paneShowing(t, dir, all.join("\n"), "line-with-some-width-2000");
    const r = await c.ok<Capture>("capture_pane", { paneId: id, start: -5000, maxLines: 10000 });
    const json = byteLength(JSON.stringify(r));
    assert.ok(json <= 4000, `result is ${json} bytes`);
    assert.ok(r.droppedLines > 0 && r.droppedLines < 2000);
    assert.equal(r.totalLines, 2000);
    assert.ok(r.text.endsWith("line-with-some-width-2000"));
    assert.equal(r.text, all.slice(r.droppedLines).join("\n"));
    assert.equal(r.returnedBytes + r.omittedBytes, byteLength(all.join("\n")));
  }, { maxResultBytes: 4000 });
});

Deno.test("capture_pane, snapshot_pane, capture_since: a missing pane is an error with a hint", async () => {
  await withTmux(async (_t, c) => {
    for (const tool of ["capture_pane", "snapshot_pane", "capture_since"]) {
      const err = await c.fail(tool, { paneId: "%999" });
      assert.match(err, /No pane %999/, `${tool}: ${err}`);
      assert.match(err, /Panes: %0 — list_panes/, `${tool}: ${err}`);
      // tmux would read %00 as %0; no pane is written so, as every other tool says.
      const zeros = await c.fail(tool, { paneId: "%00" });
      assert.match(zeros, /^No pane %00 .*Panes: %0 — list_panes/, `${tool}: ${zeros}`);
    }
    const bad = await c.fail("capture_pane", { paneId: "0" });
    assert.match(bad, /a pane id such as %3/);
  });
});

Deno.test("capture_pane with no server running is an error naming the socket", async () => {
  const c = await connect({ socketName: `tmux-mcp-test-none-${crypto.randomUUID()}` });
  try {
    assert.match(await c.fail("capture_pane", { paneId: "%0" }), /No tmux server is running/);
    assert.match(await c.fail("search_panes", { pattern: "x" }), /No tmux server is running/);
  } finally {
    await c.close();
  }
});

// ---------------------------------------------------------------------------------------------
// snapshot_pane

Deno.test("snapshot_pane gives content with cursor, size, mode, title, command and who watches", async () => {
  await withTmux(async (t, c, dir) => {
    const id = await paneShowing(t, dir, `${lines(1, 40).join("\n")}\nprompt> `, "prompt>");
    await t.tmux("select-pane", "-t", id, "-T", "my title");
    let s = await c.ok<Record<string, unknown> & Content>("snapshot_pane", { paneId: id });
    assert.equal(s.text, `${lines(18, 40).join("\n")}\nprompt>`);
    assert.deepEqual(
      [s.cursorX, s.cursorY, s.width, s.height, s.historySize],
      [8, 23, 80, 24, 17],
    );
    assert.deepEqual([s.inMode, s.mode, s.scrollPosition, s.alternateScreen], [
      false,
      "",
      null,
      false,
    ]);
    assert.equal(s.title, "my title");
    assert.equal(s.command, "sleep");
    assert.equal(s.dead, false);
    assert.equal(s.isCallerPane, false);
    assert.equal(s.isAttended, false);

    await t.tmux("select-window", "-t", id);
    await t.attach("main");
    await t.tmux("copy-mode", "-t", id);
    await t.tmux("send-keys", "-t", id, "-X", "scroll-up");
    s = await c.ok("snapshot_pane", { paneId: id, maxLines: 2 });
    assert.deepEqual([s.inMode, s.mode, s.scrollPosition], [true, "copy-mode", 1]);
    assert.equal(s.isAttended, true);
    assert.equal(s.text, "L40\nprompt>", "copy mode does not change what is captured");
    // The attached client's size (and status line) decides the window's height now.
    assert.equal(s.droppedLines, s.totalLines - 2);

    // The pane this MCP server runs in, as TMUX/TMUX_PANE name it.
    const facts = await t.facts();
    const own = await connect({
      socketName: t.socket,
      callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: id },
    });
    try {
      const mine = await own.ok<{ isCallerPane: boolean }>("snapshot_pane", { paneId: id });
      assert.equal(mine.isCallerPane, true);
    } finally {
      await own.close();
    }
  });
});

Deno.test("snapshot_pane: a command name with a line break and escapes stays inside the summary", async () => {
  await withTmux(async (t, c) => {
    const id = (await t.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      `bash -c 'exec -a "$(printf "q\\ndead:\\ttrue\\033[2J\\342\\200\\250x")" sleep 100000'`,
    )).trim();
    await waitFor(
      async () =>
        (await t.tmux("display", "-p", "-t", id, "#{pane_current_command}")).includes("dead"),
      "the renamed command",
    );
    const s = await c.ok<{ command: string }>("snapshot_pane", { paneId: id });
    assert.equal(s.command, "q\ndead:\ttrue\x1b[2J\u2028x");
    const result = await c.call("snapshot_pane", { paneId: id });
    const text = (result.content as { type: string; text: string }[])[0].text;
    const [summary, second] = text.split("\n");
    // One line: the result's first field follows it (the command's lines are in its block).
    assert.equal(second, `paneId: ${id}`, text);
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(summary, /[\x00-\x1f\x7f-\x9f\u2028]/);
    assert.ok(summary.startsWith(`Pane ${id} ("q\\ndead:\\ttrue\\u001b[2J\\u2028x", `), summary);
  });
});

Deno.test("snapshot_pane reports a full-screen program on the alternate screen", async () => {
  await withTmux(async (t, c, dir) => {
    const id = await paneShowing(
      t,
      dir,
      "shell text\n\x1b[?1049h\x1b[HFULL SCREEN APP",
      "FULL SCREEN",
    );
    const s = await c.ok<{ alternateScreen: boolean; text: string }>("snapshot_pane", {
      paneId: id,
    });
    assert.equal(s.alternateScreen, true);
    assert.equal(s.text, "FULL SCREEN APP");
  });
});

Deno.test("snapshot_pane: a pane that closes between listing and capture is an error with a hint", async () => {
  await withTmux(async (t, _c, dir) => {
    const id = await paneShowing(t, dir, "going away", "going away");
    const runner = new TmuxRunner();
    const ctx = testContext(runner, t.socket);
    try {
      const snapshot = await takeSnapshot(runner, { socketName: t.socket });
      await t.tmux("kill-pane", "-t", id);
      await assert.rejects(
        snapshotPaneFrom(ctx, snapshot, { paneId: id }),
        (error: unknown) =>
          error instanceof ToolFailure && /closed after it was listed/.test(error.message) &&
          /Panes: %0 — list_panes/.test(error.hint),
      );
    } finally {
      await runner.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// capture_since

Deno.test("capture_since: the current screen first, then nothing when nothing was written", async () => {
  await withTmux(async (t, c) => {
    const id = t.ids.paneId;
    await type(t, id, "echo first-output", "first-output\n");
    const first = await c.ok<Since>("capture_since", { paneId: id });
    assert.equal(first.fresh, true);
    assert.equal(first.text, (await screen(t, id)).replace(/\n+$/, ""));
    assert.equal(first.firstLineNumber, 0);
    const second = await c.ok<Since>("capture_since", { paneId: id, cursor: first.cursor });
    assert.equal(second.fresh, false);
    assert.equal(second.text, "");
    assert.equal(second.firstLineNumber, null);
    assert.equal(second.missed, false);
    const third = await c.ok<Since>("capture_since", { paneId: id, cursor: second.cursor });
    assert.equal(third.text, "");

    await type(t, id, "echo second-output", "second-output\n");
    const fourth = await c.ok<Since>("capture_since", { paneId: id, cursor: third.cursor });
    const got = fourth.text.split("\n");
    assert.ok(got[0].endsWith("echo second-output"), fourth.text);
    assert.equal(got[1], "second-output");
    assert.ok(!fourth.text.includes("first-output"), "what was read before does not come back");
    // firstLineNumber points at the same line through capture_pane.
    const same = await c.ok<Capture>("capture_pane", {
      paneId: id,
      start: fourth.firstLineNumber!,
      end: fourth.firstLineNumber!,
    });
    assert.equal(same.text, got[0]);
  });
});

Deno.test("capture_since: much output between calls comes back bounded, saying where the rest is", async () => {
  await withTmux(async (t, c) => {
    const id = t.ids.paneId;
    const start = await c.ok<Since>("capture_since", { paneId: id });
    await type(t, id, "seq 1 800", "\n800\n");
    const r = await c.ok<Since>("capture_since", { paneId: id, cursor: start.cursor });
    assert.equal(r.missed, false);
    const got = r.text.split("\n");
    assert.equal(got.length, 200, "maxLines defaults to 200");
    assert.deepEqual(got.slice(-3, -1), ["799", "800"]);
    // The command line and 1..600 did not fit: they are counted, and the notes say where.
    assert.equal(r.droppedLines, 1 + 800 + 1 - 200);
    const first = r.firstLineNumber! - r.droppedLines;
    assert.match(r.notes.join(" "), new RegExp(`capture_pane with start ${first}`));
    const rest = await c.ok<Capture>("capture_pane", { paneId: id, start: first, end: first + 1 });
    assert.ok(rest.text.endsWith("seq 1 800\n1"), rest.text);
  });
});

Deno.test("capture_since: a progress bar rewritten in place comes back once, in its latest form", async () => {
  await withTmux(async (t, c, dir) => {
    const script = `${dir}/progress.sh`;
    await Deno.writeTextFile(
      script,
      `printf 'progress 1/3\\r'\n` +
        `while [ ! -e ${dir}/go2 ]; do sleep 0.05; done\nprintf 'progress 2/3\\r'\n` +
        `while [ ! -e ${dir}/go3 ]; do sleep 0.05; done\nprintf 'progress 3/3\\ndone\\n'\n` +
        `i=1; while [ $i -le 20 ]; do printf 'step %s/20\\r' $i; i=$((i+1)); done; echo; echo finished\n`,
    );
    const id = t.ids.paneId;
    const start = await c.ok<Since>("capture_since", { paneId: id });
    await type(t, id, `sh ${script}`, "progress 1/3", { keepsRunning: true });
    const one = await c.ok<Since>("capture_since", { paneId: id, cursor: start.cursor });
    assert.match(one.text, /sh .*progress\.sh\nprogress 1\/3$/);

    await Deno.writeTextFile(`${dir}/go2`, "");
    await waitFor(async () => (await screen(t, id)).includes("progress 2/3"), "2/3");
    const two = await c.ok<Since>("capture_since", { paneId: id, cursor: one.cursor });
    assert.equal(two.text, "progress 2/3", "only the rewritten line");

    await Deno.writeTextFile(`${dir}/go3`, "");
    await waitFor(async () => (await screen(t, id)).includes("finished"), "finished");
    const three = await c.ok<Since>("capture_since", { paneId: id, cursor: two.cursor });
    const got = three.text.split("\n");
    assert.deepEqual(got.slice(0, 4), ["progress 3/3", "done", "step 20/20", "finished"]);
    assert.equal(got.filter((l) => l.startsWith("step")).length, 1, "twenty rewrites, one line");
  });
});

Deno.test("capture_since: history cleared since the cursor gives missed: true", async () => {
  await withTmux(async (t, c) => {
    const id = t.ids.paneId;
    await type(t, id, "seq 1 100", "\n100\n");
    const before = await c.ok<Since>("capture_since", { paneId: id });
    await type(t, id, "seq 1001 1100", "\n1100\n");
    await t.tmux("clear-history", "-t", id);
    const after = await c.ok<Since>("capture_since", { paneId: id, cursor: before.cursor });
    assert.equal(after.missed, true);
    assert.equal(after.missedReason, "history-cleared");
    assert.match(after.notes.join(" "), /cleared/);
    assert.ok(after.text.includes("\n1100\n"), "what the pane holds now is returned");
    // The next call starts from here: nothing new, nothing missed.
    const next = await c.ok<Since>("capture_since", { paneId: id, cursor: after.cursor });
    assert.deepEqual([next.text, next.missed], ["", false]);
  });
});

Deno.test("capture_since: after a clear, screen lines the cursor had seen are not returned again", async () => {
  await withTmux(async (t, c) => {
    const id = t.ids.paneId;
    await type(t, id, "seq 1 40", "\n40\n");
    const before = await c.ok<Since>("capture_since", { paneId: id });
    // clear-history drops the history and leaves the screen where it was.
    await t.tmux("clear-history", "-t", id);
    await type(t, id, "echo after-clear", "\nafter-clear\n");
    const after = await c.ok<Since>("capture_since", { paneId: id, cursor: before.cursor });
    // History was lost: still said, though nothing the cursor had not seen went with it.
    assert.deepEqual([after.missed, after.missedReason], [true, "history-cleared"]);
    const got = after.text.split("\n");
    assert.ok(!/^\d+$/m.test(after.text), `old rows repeated: ${JSON.stringify(after.text)}`);
    assert.match(got[0], /echo after-clear$/);
    assert.equal(got[1], "after-clear");
    const notes = after.notes.join(" ");
    assert.doesNotMatch(notes, /may begin with lines/);
    // What was left out is said, with how to read it: never hidden silently.
    assert.match(notes, /23 lines at the top of the pane still read as at the cursor/);
    assert.match(notes, /capture_pane with start -2 and end 20 reads them/);
    const next = await c.ok<Since>("capture_since", { paneId: id, cursor: after.cursor });
    assert.deepEqual([next.text, next.missed], ["", false]);

    // A cursor deep in history, much output after the clear: the cursor's lines are still
    // found at the top, and the new lines after them are counted, not read.
    await type(t, id, "seq 1 1000", "\n1000\n");
    const again = await c.ok<Since>("capture_since", { paneId: id });
    await t.tmux("clear-history", "-t", id);
    await type(t, id, "seq 1001 2500", "\n2500\n");
    const much = await c.ok<Since>("capture_since", {
      paneId: id,
      cursor: again.cursor,
      maxLines: 5,
    });
    assert.deepEqual([much.missed, much.missedReason], [true, "history-cleared"]);
    assert.deepEqual(much.text.split("\n").slice(0, 4), lines(2497, 2500, ""));
    assert.equal(much.droppedLines, 1 + 1500 + 1 - 5, "the command line and 1001..2496");
    assert.match(much.notes.join(" "), /still read as at the cursor/);
  });
});

Deno.test("capture_since: after a clear, lines that cannot be placed come back, said to maybe repeat", async () => {
  await withTmux(async (t, c) => {
    const id = t.ids.paneId;
    await type(t, id, "seq 1 40", "\n40\n");
    const before = await c.ok<Since>("capture_since", { paneId: id });
    // Output scrolled the screen before the clear: the cursor's lines no longer sit where a
    // clear alone would leave them, so where they end cannot be told.
    await type(t, id, "seq 101 103", "\n103\n");
    await t.tmux("clear-history", "-t", id);
    const after = await c.ok<Since>("capture_since", { paneId: id, cursor: before.cursor });
    assert.deepEqual([after.missed, after.missedReason], [true, "history-cleared"]);
    assert.ok(after.text.includes("\n40\n"), "everything the pane holds");
    assert.ok(after.text.includes("\n103\n"));
    assert.match(after.notes.join(" "), /may begin with lines an earlier capture_since returned/);

    // Lines reading like the cursor's, printed after the clear but not at the top where the
    // clear left the screen, prove nothing: all comes back, said to maybe repeat.
    const id2 = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.prompt(id2);
    await type(t, id2, "seq 1 40", "\n40\n");
    const start = await c.ok<Since>("capture_since", { paneId: id2 });
    await type(t, id2, "printf '\\033[H\\033[2J\\033[3Jx\\n'; seq 18 39", "\nx\n18\n");
    await t.tmux("clear-history", "-t", id2);
    const forged = await c.ok<Since>("capture_since", { paneId: id2, cursor: start.cursor });
    assert.deepEqual(forged.text.split("\n").slice(0, 3), ["x", "18", "19"]);
    assert.match(forged.notes.join(" "), /may begin with lines/);
  });
});

Deno.test("capture_since: output cleared away after a cursor taken on an empty history is missed", async () => {
  await withTmux(async (t, c) => {
    const historySize = async (id: string) =>
      Number(await t.tmux("display-message", "-p", "-t", id, "#{history_size}"));
    // A new pane, little on it: the cursor remembers no history row, only the screen's.
    for (const clear of ["clear-history", "E3"]) {
      const id = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "sh")).trim();
      await t.prompt(id);
      await type(t, id, "echo first", "\nfirst\n");
      const before = await c.ok<Since>("capture_since", { paneId: id });
      assert.equal(await historySize(id), 0);

      // More output is read normally: on the screen, then scrolled into history.
      await type(t, id, "echo second", "\nsecond\n");
      const more = await c.ok<Since>("capture_since", { paneId: id, cursor: before.cursor });
      assert.equal(more.missed, false, clear);
      assert.deepEqual(more.text.split("\n").slice(0, 2).map((l) => l.replace(/^.*echo /, "")), [
        "second",
        "second",
      ]);
      await type(t, id, "seq 1 60", "\n60\n");
      assert.ok(await historySize(id) > 0);
      const scrolled = await c.ok<Since>("capture_since", { paneId: id, cursor: before.cursor });
      assert.equal(scrolled.missed, false, clear);
      assert.ok(scrolled.text.includes("\nsecond\n"), scrolled.text);
      assert.ok(scrolled.text.includes("\n1\n"), scrolled.text);
      assert.ok(!scrolled.text.includes("first"), scrolled.text);

      // Cleared away: the lines from "second" to "1" are gone, and the answer says so.
      if (clear === "clear-history") await t.tmux("clear-history", "-t", id);
      else await type(t, id, "printf '\\033[3J'; echo cleared", "\ncleared\n");
      assert.ok(await historySize(id) < 5, "history cleared (the echo may scroll a row or two)");
      const after = await c.ok<Since>("capture_since", { paneId: id, cursor: before.cursor });
      assert.deepEqual([after.missed, after.missedReason], [true, "history-cleared"], clear);
      assert.ok(after.text.includes("\n60\n"), "what the pane holds now is returned");
    }
  });
});

Deno.test("capture_since: lines a scroll region moved under a fixed header or above a status line come back once", async () => {
  await withTmux(async (t, c, dir) => {
    const history = async (id: string) =>
      Number(await t.tmux("display-message", "-p", "-t", id, "#{history_size}"));
    const numbered = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => `${prefix}${i}\r\n`).join("");
    // Three header rows and a scroll region below them (tmux moves the region's top row into
    // history and keeps the header on the screen), then a status line below a region at the
    // top, then no region at all: in each, only the eight new lines are new.
    const cases = [
      {
        draw: "\x1b[2J\x1b[HHEADER-ALPHA\r\nHEADER-BETA\r\nHEADER-GAMMA\x1b[4;24r\x1b[4;1H",
        text: lines(0, 7, "NEW-"),
        unchanged: 0,
      },
      {
        draw: "\x1b[2J\x1b[24;1HSTATUS-LINE\x1b[1;23r\x1b[1;1H",
        // The status line sits below the new lines (and the cursor's row), unchanged.
        text: [...lines(0, 7, "NEW-"), "", "STATUS-LINE"],
        unchanged: 1,
      },
      { draw: "\x1b[2J\x1b[H", text: [...lines(0, 7, "NEW-")], unchanged: 0 },
    ];
    for (const { draw, text, unchanged } of cases) {
      const { id, write } = await fedPane(t, dir);
      await write(draw + numbered("r", 40));
      const start = await c.ok<Since>("capture_since", { paneId: id });
      const before = await history(id);
      assert.ok(before > 0, "the region's rows went into history");
      await write(numbered("NEW-", 8));
      assert.equal(await history(id), before + 8);
      const after = await c.ok<Since>("capture_since", { paneId: id, cursor: start.cursor });
      assert.deepEqual(
        [after.text.split("\n"), after.unchangedLines, after.missed, after.notes],
        [
          text,
          unchanged,
          false,
          unchanged ? ["1 line in text were already there, unchanged."] : [],
        ],
        draw,
      );
      // The lines read before the cursor are where capture_pane says.
      const first = await c.ok<Capture>("capture_pane", {
        paneId: id,
        start: after.firstLineNumber!,
        end: after.firstLineNumber!,
      });
      assert.equal(first.text, "NEW-0");
      const next = await c.ok<Since>("capture_since", { paneId: id, cursor: after.cursor });
      assert.deepEqual([next.text, next.missed], ["", false]);
    }

    // A header that changed while the region scrolled (a clock) cannot be told from a program
    // redrawing: the lines come back, said to maybe repeat.
    const { id, write } = await fedPane(t, dir);
    await write("\x1b[2J\x1b[Hclock 1\r\nHEADER\x1b[3;24r\x1b[3;1H" + numbered("r", 40));
    const start = await c.ok<Since>("capture_since", { paneId: id });
    await write("\x1b7\x1b[1;1Hclock 2\x1b8" + numbered("NEW-", 8));
    const after = await c.ok<Since>("capture_since", { paneId: id, cursor: start.cursor });
    assert.equal(after.missed, false);
    assert.match(after.text, /^clock 2$/m);
    assert.match(after.notes.join(" "), /may begin with lines an earlier capture_since returned/);
  });
});

Deno.test("capture_since: rows a program erased and rewrote on a pane with no history come back rewritten, not as a clear", async () => {
  await withTmux(async (t, c, dir) => {
    const { id, write } = await fedPane(t, dir);
    await write(lines(0, 4, "keep").map((l) => `${l}\r\n`).join(""));
    const start = await c.ok<Since>("capture_since", { paneId: id });
    // Up three rows, erase to the end of the screen, write: what a line editor or a progress
    // display does. No history existed, none was cleared.
    await write("\x1b[3A\x1b[Jnew\r\n");
    assert.equal(await t.tmux("display-message", "-p", "-t", id, "#{history_size}"), "0\n");
    const after = await c.ok<Since>("capture_since", { paneId: id, cursor: start.cursor });
    assert.deepEqual([after.text, after.missed, after.missedReason, after.notes], [
      "new",
      false,
      null,
      [],
    ]);
    assert.equal(after.firstLineNumber, 2);

    // Rewritten from the top row: that is what a clear leaves too, and which it was cannot be
    // told. Said so, not asserted.
    const top = await fedPane(t, dir);
    await top.write(lines(0, 4, "keep").map((l) => `${l}\r\n`).join(""));
    const before = await c.ok<Since>("capture_since", { paneId: top.id });
    await top.write("\x1b[Hother\x1b[K");
    const redrawn = await c.ok<Since>("capture_since", { paneId: top.id, cursor: before.cursor });
    assert.deepEqual([redrawn.missed, redrawn.missedReason], [true, "history-cleared"]);
    assert.match(
      redrawn.notes[0],
      /history held none then: the history was cleared .* or a program rewrote the screen from its top/,
    );
  });
});

Deno.test("capture_since: tmux trimming history is followed, and a trim past the cursor is reported", async () => {
  await withTmux(async (t, c) => {
    // history-limit applies to panes created after it is set (TMUX-NOTES).
    await t.tmux("set-option", "-g", "history-limit", "50");
    const id = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "sh")).trim();
    await type(t, id, "seq 1 80", "\n80\n");
    const full = await c.ok<Since>("capture_since", { paneId: id });
    // A little more output: tmux drops the oldest 5 history lines at a time; the cursor's
    // rows are found again, moved up, and only the new lines come back.
    await type(t, id, "seq 81 90", "\n90\n");
    const few = await c.ok<Since>("capture_since", { paneId: id, cursor: full.cursor });
    assert.equal(few.missed, false);
    assert.ok(few.trimmedLines > 0 && few.trimmedLines % 5 === 0, `${few.trimmedLines}`);
    const got = few.text.split("\n");
    assert.ok(got[0].endsWith("seq 81 90"), few.text);
    assert.deepEqual(got.slice(1, 11), lines(81, 90, ""));
    // Much more output than history holds: the cursor's rows are gone.
    await type(t, id, "seq 100 400", "\n400\n");
    const lost = await c.ok<Since>("capture_since", { paneId: id, cursor: few.cursor });
    assert.equal(lost.missed, true);
    assert.equal(lost.missedReason, "history-trimmed");
    assert.match(lost.notes.join(" "), /limit \(50 lines/);
    assert.ok(lost.text.includes("\n400\n"));
  });
});

Deno.test("capture_since: a full-screen program gives alternateScreen and its screen, once", async () => {
  await withTmux(async (t, c, dir) => {
    const script = `${dir}/full.sh`;
    await Deno.writeTextFile(
      script,
      `printf '\\033[?1049h\\033[HFULL SCREEN PROGRAM\\n'\n` +
        `while [ ! -e ${dir}/quit ]; do sleep 0.05; done\n` +
        `printf '\\033[?1049l'\necho back-on-main\n`,
    );
    const id = t.ids.paneId;
    const start = await c.ok<Since>("capture_since", { paneId: id });
    await type(t, id, `sh ${script}`, "FULL SCREEN PROGRAM", { keepsRunning: true });
    const alt = await c.ok<Since>("capture_since", { paneId: id, cursor: start.cursor });
    assert.equal(alt.alternateScreen, true);
    assert.equal(alt.text, "FULL SCREEN PROGRAM");
    assert.match(alt.notes.join(" "), /full-screen program/);
    const again = await c.ok<Since>("capture_since", { paneId: id, cursor: alt.cursor });
    assert.deepEqual([again.alternateScreen, again.text], [true, ""]);

    await Deno.writeTextFile(`${dir}/quit`, "");
    await waitFor(async () => (await screen(t, id)).includes("back-on-main"), "main screen");
    const back = await c.ok<Since>("capture_since", { paneId: id, cursor: again.cursor });
    assert.equal(back.alternateScreen, false);
    const got = back.text.split("\n");
    assert.ok(got[0].endsWith(`sh ${script}`), "the command typed before it came back");
    assert.equal(got[1], "back-on-main");
    assert.ok(!back.text.includes("FULL SCREEN"));

    // A fresh call while the program runs shows its screen too.
    await Deno.remove(`${dir}/quit`);
    await type(t, id, `sh ${script}`, "FULL SCREEN PROGRAM", { keepsRunning: true });
    const fresh = await c.ok<Since>("capture_since", { paneId: id });
    assert.deepEqual([fresh.alternateScreen, fresh.fresh, fresh.text], [
      true,
      true,
      "FULL SCREEN PROGRAM",
    ]);
    await Deno.writeTextFile(`${dir}/quit`, "");
  });
});

Deno.test("capture_since: respawned or killed pane, and foreign or malformed cursors, are errors", async () => {
  await withTmux(async (t, c) => {
    const id = t.ids.paneId;
    const other = (await t.tmux("split-window", "-P", "-F", "#{pane_id}", "sh")).trim();
    const start = await c.ok<Since>("capture_since", { paneId: id });

    assert.match(await c.fail("capture_since", { paneId: id, cursor: "garbage" }), /malformed/);
    const [head, serial, seal] = start.cursor.split(".");
    const flipped = seal.slice(0, 10) + (seal[10] === "A" ? "B" : "A") + seal.slice(11);
    const tampered = await c.fail("capture_since", {
      paneId: id,
      cursor: `${head}.${serial}.${flipped}`,
    });
    assert.match(tampered, /not sealed by this server process.*without a cursor/);
    // Another process's cursor (or this server's before a restart): the same rows, sealed with
    // another key.
    const foreign = await new CursorStore().issue(await CURSORS.open(start.cursor));
    assert.match(
      await c.fail("capture_since", { paneId: id, cursor: foreign }),
      /not sealed by this server process.*without a cursor/,
    );

    // What no pane leaves a cursor remembering (a history limit of 0 and a base of 10⁹, which
    // once had the reader plan a billion places and the server run out of memory) cannot come
    // from a client any more; kept here as the reader's own bound. It answers.
    const odd = await CURSORS.issue({
      ...await CURSORS.open(start.cursor),
      historyLimit: 0,
      historySize: 1_000_000_000,
      base: 1_000_000_000,
    });
    await c.ok<Since>("capture_since", { paneId: id, cursor: odd });
    await c.ok("list_panes");

    const wrongPane = await c.fail("capture_since", { paneId: other, cursor: start.cursor });
    assert.match(wrongPane, new RegExp(`taken on pane ${id}, not ${other}`));

    const elsewhere = await TestTmux.start();
    try {
      const foreign = await c.fail("capture_since", {
        paneId: id,
        cursor: start.cursor,
        socket_name: elsewhere.socket,
      });
      assert.match(foreign, /another tmux server/);
    } finally {
      await elsewhere.kill();
    }
    // A server of the same pid that ran before (a container's tmux, restarted) is another.
    const cursor = await CURSORS.open(start.cursor);
    const earlier = await CURSORS.issue({ ...cursor, serverStart: cursor.serverStart - 60 });
    assert.match(
      await c.fail("capture_since", { paneId: id, cursor: earlier }),
      /another tmux server \(or one since restarted\): pid \d+ then and now, started .* then and .* now/,
    );

    await t.tmux("respawn-pane", "-k", "-t", id, "sh");
    const respawned = await c.fail("capture_since", { paneId: id, cursor: start.cursor });
    assert.match(respawned, new RegExp(`Pane ${id} was respawned`));
    assert.match(respawned, /without a cursor/);

    const otherStart = await c.ok<Since>("capture_since", { paneId: other });
    await t.tmux("kill-pane", "-t", other);
    const killed = await c.fail("capture_since", { paneId: other, cursor: otherStart.cursor });
    assert.match(killed, new RegExp(`Pane ${other} no longer exists`));
    assert.match(killed, /list_panes/);
  });
});

Deno.test("capture_since: a cursor of the most rows, all one repeated row, after a width change answers at once", async () => {
  await withTmux(async (t, c) => {
    // Once forged (its checksum was no secret, and the cursor travelled whole): a cursor naming
    // the pane's real server and process, another width (the reflow search) and tens of
    // thousands of rows equal to one the pane repeats had every row of the pane compared with
    // every remembered row, the server deaf meanwhile. No client can make one now; the
    // comparison's bound is kept for the tallest pane's cursor.
    const id = (await t.tmux(
      "new-window",
      "-P",
      "-F",
      "#{pane_id}",
      "yes | head -n 3000; exec sleep 100000",
    )).trim();
    await waitFor(
      async () =>
        Number(await t.tmux("display-message", "-p", "-t", id, "#{history_size}")) >= 1900,
      "history full of y",
    );
    const real = await CURSORS.open((await c.ok<Since>("capture_since", { paneId: id })).cursor);
    const most = await c.ok<Since>("capture_since", {
      paneId: id,
      cursor: await CURSORS.issue({
        ...real,
        width: real.width + 1,
        base: 0,
        historySize: MAX_REMEMBERED_ROWS,
        cursorRow: MAX_REMEMBERED_ROWS,
        rows: rowHash("y").repeat(MAX_REMEMBERED_ROWS),
      }),
    });
    assert.equal(most.resized, true);
    await c.ok("list_panes");
  });
});

Deno.test("capture_since: a height change keeps positions, a width change is reported", async () => {
  await withTmux(async (t, c) => {
    const id = t.ids.paneId;
    await type(t, id, "seq 1 60", "\n60\n");
    const start = await c.ok<Since>("capture_since", { paneId: id });
    // Growing pulls rows back from history, shrinking pushes them there: absolute positions
    // (history size + row) stay, so nothing is new and nothing is missed.
    await t.tmux("resize-window", "-t", id, "-y", "30");
    const taller = await c.ok<Since>("capture_since", { paneId: id, cursor: start.cursor });
    assert.deepEqual([taller.text, taller.missed, taller.resized], ["", false, false]);
    await t.tmux("resize-window", "-t", id, "-y", "10");
    const shorter = await c.ok<Since>("capture_since", { paneId: id, cursor: taller.cursor });
    assert.deepEqual([shorter.text, shorter.missed, shorter.resized], ["", false, false]);

    await t.tmux("resize-window", "-t", id, "-x", "60");
    await type(t, id, "echo after-resize", "after-resize\n");
    const wider = await c.ok<Since>("capture_since", { paneId: id, cursor: shorter.cursor });
    assert.deepEqual([wider.resized, wider.missed], [true, false]);
    assert.match(wider.text, /\nafter-resize\n/);
    // The lines above the cursor were returned before: they do not come back.
    assert.match(wider.text.split("\n")[0], /echo after-resize$/, wider.text);
    assert.match(wider.notes.join(" "), /width changed/);
  });
});

Deno.test("capture_since: a pane whose process died still answers, marked dead", async () => {
  await withTmux(async (t, c, dir) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const id = (await t.tmux(
      "new-window",
      "-P",
      "-F",
      "#{pane_id}",
      // It ends only once its last words are on screen: tmux drops what it has not read from a
      // pane's terminal when the process exits (a loaded machine lost such a last line).
      `printf 'first words\\n'; while [ ! -e ${dir}/go ]; do sleep 0.05; done; echo last words; ` +
        `while [ ! -e ${dir}/end ]; do sleep 0.05; done`,
    )).trim();
    await waitFor(async () => (await screen(t, id)).includes("first words"), "output");
    const alive = await c.ok<Since>("capture_since", { paneId: id });
    assert.equal(alive.text, "first words");
    assert.equal(alive.dead, false);
    await Deno.writeTextFile(`${dir}/go`, "");
    await waitFor(async () => (await screen(t, id)).includes("last words"), "its last words");
    await Deno.writeTextFile(`${dir}/end`, "");
    await waitFor(
      async () => (await t.tmux("display-message", "-p", "-t", id, "#{pane_dead}")).trim() === "1",
      "dead pane",
    );
    const dead = await c.ok<Since>("capture_since", { paneId: id, cursor: alive.cursor });
    assert.equal(dead.dead, true);
    assert.equal(dead.missed, false);
    // tmux may also write its "Pane is dead" notice below, depending on timing.
    assert.equal(dead.text.split("\n")[0], "last words");
    assert.ok(!dead.text.includes("first words"));
  });
});

// ---------------------------------------------------------------------------------------------
// search_panes

Deno.test("search_panes: literal by default, regex on request, case rules, lineNumber for capture_pane", async () => {
  await withTmux(async (t, c, dir) => {
    const id = await paneShowing(t, dir, "Hello World\nerror 42 happened\na.c literal\nEND", "END");
    const find = (args: Record<string, unknown>) => c.ok<Search>("search_panes", args);

    const hello = await find({ pattern: "hello world" });
    assert.equal(hello.matches.length, 1);
    assert.deepEqual(
      [hello.matches[0].paneId, hello.matches[0].lineNumber, hello.matches[0].text],
      [id, 0, "Hello World"],
    );
    assert.deepEqual(hello.matches[0].placements.map((p) => p.sessionName), ["main"]);
    assert.equal((await find({ pattern: "hello world", matchCase: true })).matches.length, 0);
    assert.equal((await find({ pattern: "Hello", matchCase: true })).matches.length, 1);

    assert.equal((await find({ pattern: "a.c" })).matches[0].text, "a.c literal");
    assert.equal((await find({ pattern: "W.rld" })).totalMatches, 0, "literal: . is a dot");
    assert.equal((await find({ pattern: "W.rld$", regex: true })).totalMatches, 1);
    assert.equal((await find({ pattern: "^hello", regex: true })).totalMatches, 1);
    assert.equal((await find({ pattern: "^hello", regex: true, matchCase: true })).totalMatches, 0);

    const err = await find({ pattern: String.raw`error \d+`, regex: true });
    assert.equal(err.matches[0].lineNumber, 1);
    const line = await c.ok<Capture>("capture_pane", {
      paneId: id,
      start: err.matches[0].lineNumber,
      end: err.matches[0].lineNumber,
    });
    assert.equal(line.text, "error 42 happened");

    const bad = await c.fail("search_panes", { pattern: "(unclosed", regex: true });
    assert.match(bad, /not a valid regular expression/);
    assert.match(bad, /regex: false/);
  });
});

// Lowercasing is not case folding: a capital sigma ending a pattern lowercases to the final
// form (ς), the same letter inside a word to σ. A literal search folds case as a regex (and
// wait_for_text) does.
Deno.test("search_panes: a literal ending in a capital sigma finds it inside a longer word", async () => {
  await withTmux(async (t, c, dir) => {
    const id = await paneShowing(t, dir, "ΠΡΟΣΟΧΗ: ο δίσκος γέμισε\nΣΣ final ς\nEND", "END");
    const find = (args: Record<string, unknown>) => c.ok<Search>("search_panes", args);
    const regex = await find({ pattern: "ΠΡΟΣ", regex: true });
    assert.equal(regex.totalMatches, 1, "the regex search finds it");
    const literal = await find({ pattern: "ΠΡΟΣ" });
    assert.deepEqual(literal.matches.map((m) => [m.paneId, m.text]), [[
      id,
      "ΠΡΟΣΟΧΗ: ο δίσκος γέμισε",
    ]]);
    assert.equal((await find({ pattern: "προσοχη" })).totalMatches, 1, "σ and Σ are one letter");
    assert.equal((await find({ pattern: "ΔΊΣΚΟΣ" })).totalMatches, 1, "ς and Σ are one letter");
    assert.equal((await find({ pattern: "ΠΡΟΣ", matchCase: true })).totalMatches, 1);
    assert.equal((await find({ pattern: "προς", matchCase: true })).totalMatches, 0);
  });
});

Deno.test("search_panes: a #(...) pattern finds that text and never runs", async () => {
  await withTmux(async (t, c, dir) => {
    const marker = `${dir}/marker`;
    const text = `#(touch ${marker}) and #{pane_id} and ;semi`;
    const id = await paneShowing(t, dir, `${text}\nEND`, "END");
    const r = await c.ok<Search>("search_panes", { pattern: `#(touch ${marker})` });
    assert.deepEqual(r.matches.map((m) => [m.paneId, m.text]), [[id, text]]);
    const fmt = await c.ok<Search>("search_panes", { pattern: "#{pane_id}" });
    assert.equal(fmt.matches.length, 1);
    assert.equal(fmt.matches[0].text, text);
    const re = await c.ok<Search>("search_panes", {
      pattern: String.raw`#\(touch [^)]*\)`,
      regex: true,
    });
    assert.equal(re.matches.length, 1);
    // A later tmux round trip: any #() job would have been started by now.
    await c.ok("capture_pane", { paneId: id });
    await assert.rejects(Deno.stat(marker), Deno.errors.NotFound);
  });
});

Deno.test("search_panes: session scope, and a missing session is an error with a hint", async () => {
  await withTmux(async (t, c, dir) => {
    await paneShowing(t, dir, "scoped-needle in main\nEND", "END");
    const name = "other; #session 🙂";
    await t.tmux("new-session", "-d", "-s", name, "sh");
    const otherPane = (await t.tmux("list-panes", "-t", `=${name}`, "-F", "#{pane_id}")).trim();
    // Typed before the prompt, the output would follow the prompt on its row ("# scoped-...").
    await t.prompt(otherPane);
    await t.tmux("send-keys", "-t", otherPane, "-l", "echo scoped-needle in other");
    await t.tmux("send-keys", "-t", otherPane, "Enter");
    await waitFor(async () => (await screen(t, otherPane)).includes("\nscoped-needle"), "other");

    const all = await c.ok<Search>("search_panes", { pattern: "scoped-needle in" });
    assert.equal(all.matches.filter((m) => m.text.startsWith("scoped-needle")).length, 2);
    const scoped = await c.ok<Search>("search_panes", {
      pattern: "scoped-needle in",
      session: name,
    });
    assert.ok(scoped.matches.length > 0);
    assert.ok(scoped.matches.every((m) => m.paneId === otherPane));
    assert.ok(scoped.matches.every((m) => m.placements[0].sessionName === name));
    assert.equal(scoped.panesSearched, 1);
    // By id, the same; by an id no session has, refused like a name.
    const sessionId = (await t.tmux("display-message", "-p", "-t", otherPane, "#{session_id}"))
      .trim();
    const byId = await c.ok<Search>("search_panes", {
      pattern: "scoped-needle in",
      session: sessionId,
    });
    assert.deepEqual(byId.matches, scoped.matches);
    assert.match(await c.fail("search_panes", { pattern: "x", session: "$999" }), /No session/);

    const missing = await c.fail("search_panes", { pattern: "x", session: "no such; #session" });
    assert.match(missing, /No session "no such; #session"/);
    assert.match(missing, /list_sessions/);
  });
});

Deno.test("search_panes matches whole lines: a word the terminal wrapped is found", async () => {
  await withTmux(async (t, c, dir) => {
    // 80 columns: "FATAL" starts at column 77, so tmux shows FAT on one row and AL on the next.
    const wrapped = (word: string) => `${"x".repeat(77)}${word} error: disk full, job 42 aborted`;
    const id = await paneShowing(
      t,
      dir,
      [wrapped("FATAL"), ...lines(1, 60, "filler-"), wrapped("PANIC"), "END"].join("\n"),
      "END",
    );
    const find = (args: Record<string, unknown>) => c.ok<Search>("search_panes", args);
    const rowOf = async (lineNumber: number) =>
      (await c.ok<Capture>("capture_pane", { paneId: id, start: lineNumber, end: lineNumber }))
        .text;

    const onScreen = await find({ pattern: "PANIC" });
    assert.deepEqual([onScreen.totalMatches, onScreen.complete], [1, true]);
    assert.equal(onScreen.matches[0].text, wrapped("PANIC"), "the whole line");
    assert.ok((await rowOf(onScreen.matches[0].lineNumber)).startsWith("xxx"), "its first row");
    const byRegex = await find({ pattern: "P.NIC error", regex: true });
    assert.equal(byRegex.totalMatches, 1);
    assert.equal(byRegex.matches[0].lineNumber, onScreen.matches[0].lineNumber);
    // A row of the wrapped line alone no longer counts as a line of its own.
    assert.equal((await find({ pattern: "^AL error", regex: true })).totalMatches, 0);

    // In history, over the control connection and streamed by a tmux process of its own.
    for (const scrollbackLines of [100, 1000]) {
      const deep = await find({ pattern: "FATAL", scrollbackLines });
      assert.equal(deep.totalMatches, 1, `${scrollbackLines}`);
      const [m] = deep.matches;
      assert.equal(m.text, wrapped("FATAL"));
      assert.ok(m.lineNumber < 0);
      assert.ok((await rowOf(m.lineNumber)).startsWith("xxx"), `${scrollbackLines}`);
      // Lines below it keep their own row numbers.
      const filler = await find({ pattern: "filler-60", scrollbackLines, matchCase: true });
      assert.equal(await rowOf(filler.matches[0].lineNumber), "filler-60");
    }
  });
});

Deno.test("search_panes: scrollbackLines reaches into history with negative line numbers", async () => {
  await withTmux(async (t, c, dir) => {
    const id = await paneShowing(
      t,
      dir,
      ["needle-in-history", ...lines(1, 60, "filler-"), "END"].join("\n"),
      "END",
    );
    // 62 lines on 24 rows: 38 in history, the needle first of them.
    assert.equal((await c.ok<Search>("search_panes", { pattern: "needle" })).totalMatches, 0);
    assert.equal(
      (await c.ok<Search>("search_panes", { pattern: "needle", scrollbackLines: 10 })).totalMatches,
      0,
    );
    const deep = await c.ok<Search>("search_panes", { pattern: "needle", scrollbackLines: 1000 });
    assert.deepEqual(deep.matches.map((m) => [m.paneId, m.lineNumber]), [[id, -38]]);
    const back = await c.ok<Capture>("capture_pane", { paneId: id, start: -38, end: -38 });
    assert.equal(back.text, "needle-in-history");
  });
});

Deno.test("search_panes: per-pane and total bounds are reported", async () => {
  await withTmux(async (t, c, dir) => {
    const a = await paneShowing(t, dir, `${lines(1, 12, "hit ").join("\n")}\nEND`, "END");
    const b = await paneShowing(t, dir, `${lines(1, 12, "hit ").join("\n")}\nEND`, "END");
    const r = await c.ok<Search>("search_panes", { pattern: "hit" });
    assert.equal(r.totalMatches, 24);
    assert.deepEqual(
      r.matches.filter((m) => m.paneId === a).map((m) => m.text),
      lines(8, 12, "hit "),
      "the 5 nearest the bottom, in order",
    );
    assert.equal(r.omittedMatches, 14);
    assert.equal(r.complete, false);
    assert.deepEqual(r.cappedPanes, [
      { paneId: a, found: 12, returned: 5 },
      { paneId: b, found: 12, returned: 5 },
    ]);

    const total = await c.ok<Search>("search_panes", {
      pattern: "hit",
      maxMatchesPerPane: 20,
      maxMatches: 15,
    });
    assert.equal(total.matches.length, 15);
    assert.equal(total.omittedMatches, 9);
    assert.deepEqual(total.cappedPanes, [{ paneId: b, found: 12, returned: 3 }]);

    const every = await c.ok<Search>("search_panes", { pattern: "hit", maxMatchesPerPane: 12 });
    assert.deepEqual([every.matches.length, every.complete, every.omittedMatches], [24, true, 0]);
  });
});

Deno.test("search_panes: the byte bound drops matches and says so", async () => {
  await withTmux(async (t, c, dir) => {
    await paneShowing(t, dir, `${lines(1, 20, "wide match ".repeat(6)).join("\n")}\nEND`, "END");
    const r = await c.ok<Search>("search_panes", { pattern: "wide", maxMatchesPerPane: 100 });
    assert.ok(byteLength(JSON.stringify(r)) <= 2500);
    assert.ok(r.matches.length > 0 && r.matches.length < 20, `${r.matches.length}`);
    assert.equal(r.omittedMatches, 20 - r.matches.length);
    assert.equal(r.complete, false);
    assert.equal(r.cappedPanes[0].returned, r.matches.length);
  }, { maxResultBytes: 2500 });
});

Deno.test("search_panes: long session names are cut, and every match still fits", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "echo need''le");
    await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
    // Four sessions whose names sort before the first one (12 000 characters each, as any
    // program in a pane can name its session), each with a pane showing the word as well: each
    // match carries its pane's placements, and the names whole left room for three matches.
    const shown: string[] = [t.ids.paneId];
    for (let i = 0; i < 4; i++) {
      const name = `!${i}${"n".repeat(12_000)}`;
      shown.push(
        (await t.tmux(
          "new-session",
          "-d",
          "-P",
          "-F",
          "#{pane_id}",
          "-s",
          name,
          "echo needle; exec cat",
        )).trim(),
      );
    }
    for (const paneId of shown) {
      await waitFor(
        async () => /^needle$/m.test(await t.tmux("capture-pane", "-p", "-t", paneId)),
        `needle in ${paneId}`,
      );
    }
    type Placed = Match & { omittedPlacements: number; omittedMetadataBytes: number };
    const found = await c.ok<Search & { matches: Placed[] }>("search_panes", {
      pattern: "needle",
      matchCase: true,
    });
    assert.equal(found.totalMatches, 5);
    assert.deepEqual(found.matches.map((m) => m.paneId).sort(), [...shown].sort());
    assert.equal(found.complete, true);
    for (const m of found.matches) {
      assert.equal(m.placements.length, 1);
      assert.equal(m.omittedPlacements, 0);
      const name = m.placements[0].sessionName;
      if (m.paneId === t.ids.paneId) assert.equal(m.omittedMetadataBytes, 0);
      else {
        // Cut to 2 048 bytes of JSON as every name is, and the bytes cut counted.
        assert.equal(name.length, 2_048);
        assert.equal(m.omittedMetadataBytes, 12_002 - 2_048);
      }
    }
  });
});

Deno.test("search_panes: a pane that closes between listing and capture is reported as skipped", async () => {
  await withTmux(async (t, _c, dir) => {
    const gone = await paneShowing(t, dir, "needle here\nEND", "END");
    const kept = await paneShowing(t, dir, "needle there\nEND", "END");
    const runner = new TmuxRunner();
    try {
      const snapshot = await takeSnapshot(runner, { socketName: t.socket });
      await t.tmux("kill-pane", "-t", gone);
      const results = await searchInPanes(testContext(runner, t.socket), snapshot.panes, {
        matcher: lineMatcher("needle", false, false),
        scrollbackLines: 0,
        maxMatchesPerPane: 5,
      });
      // All three panes went to tmux in one chain, which tmux stops at the missing pane: the
      // pane after it was read again.
      assert.deepEqual(snapshot.panes.map((p) => p.id), [t.ids.paneId, gone, kept]);
      const byId = new Map(results.map((r) => [r.pane.id, r]));
      assert.equal(byId.get(gone)?.skipped, "closed after the pane list was read");
      assert.deepEqual(byId.get(kept)?.matches, [{ lineNumber: 0, text: "needle there" }]);
      assert.equal(byId.get(t.ids.paneId)?.skipped, null);
    } finally {
      await runner.close();
    }
  });
});

/** A runner that counts the tmux processes it starts, and how many run at once. */
class CountingRunner extends TmuxRunner {
  calls = 0;
  inFlight = 0;
  maxInFlight = 0;
  override async exec(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    this.calls++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await super.exec(address, args, options);
    } finally {
      this.inFlight--;
    }
  }
  override async stream(
    address: ServerAddress,
    args: readonly string[],
    sink: (chunk: Uint8Array) => void | Promise<void>,
    options: RunOptions = {},
  ): Promise<{ code: number; stderr: string }> {
    this.calls++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await super.stream(address, args, sink, options);
    } finally {
      this.inFlight--;
    }
  }
}

Deno.test("search_panes: many panes per tmux process, and a bounded number of processes at once", async () => {
  await withTmux(async (t) => {
    const create = Array.from({ length: 40 }, () => ["new-window", "-d", "sleep 100000"]);
    await t.tmux(...create.flatMap((cmd, i) => i === 0 ? cmd : [";", ...cmd]));
    // A runner that would allow far more, so the bound proven is the search's own.
    // Spawning only: the bound matters where each capture chain starts a tmux process.
    const runner = new CountingRunner({ maxConcurrent: 1000, control: false });
    try {
      const snapshot = await takeSnapshot(runner, { socketName: t.socket });
      assert.equal(snapshot.panes.length, 41);
      const search = async (scrollbackLines: number) => {
        runner.calls = 0;
        runner.maxInFlight = 0;
        const results = await searchInPanes(testContext(runner, t.socket), snapshot.panes, {
          matcher: lineMatcher("x", false, false),
          scrollbackLines,
          maxMatchesPerPane: 5,
        });
        assert.equal(results.length, 41);
        assert.ok(results.every((r) => r.skipped === null));
      };
      // Screens only: all 41 panes in one tmux invocation.
      await search(0);
      assert.deepEqual([runner.calls, runner.maxInFlight], [1, 1]);
      // Deep history reach: one pane per invocation, never more than the bound at once.
      await search(MAX_SCROLLBACK_LINES);
      assert.equal(runner.calls, 41);
      assert.equal(runner.maxInFlight, SEARCH_CONCURRENCY);
    } finally {
      await runner.close();
    }
  });
});

Deno.test("search_panes: screens and some history travel over the control connection, more by process", async () => {
  await withTmux(async (t) => {
    await t.tmux("new-window", "-d", "sleep 100000");
    // Control allowed: only what the control connection cannot carry well spawns a process.
    const runner = new CountingRunner({ control: true });
    try {
      const snapshot = await takeSnapshot(runner, { socketName: t.socket });
      const search = async (scrollbackLines: number) => {
        runner.calls = 0;
        const results = await searchInPanes(testContext(runner, t.socket), snapshot.panes, {
          matcher: lineMatcher("x", false, false),
          scrollbackLines,
          maxMatchesPerPane: 5,
        });
        assert.ok(results.every((r) => r.skipped === null));
        return runner.calls;
      };
      assert.equal(await search(0), 0, "screens: no tmux process");
      assert.equal(await search(BULK_HISTORY_ROWS + 1), 0, "some history: no tmux process");
      // More than one answer over the connection may hold: one process for both panes.
      const ids = snapshot.panes.map((p) => p.id);
      const sizes = new Map(snapshot.panes.map((p) => [p.id, p]));
      let deep = BULK_HISTORY_ROWS;
      while (chainBytes(ids, deep + 1, sizes) <= CONTROL_CHAIN_BYTES) deep += 1_000;
      while (chainBytes(ids, deep, sizes) > CONTROL_CHAIN_BYTES) deep--;
      assert.equal(await search(deep), 0, "as much as the connection carries");
      assert.equal(await search(deep + 1), 1, "more: one process for both panes");
    } finally {
      await runner.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// show_buffer

Deno.test("show_buffer returns a buffer's bytes exactly, by name or the newest", async () => {
  await withTmux(async (t, c) => {
    const name = "my buf; #x 🙂";
    await t.tmux("set-buffer", "-b", "older", "older text");
    // A final ; must travel as \; (TMUX-NOTES); load-buffer stores the name without it.
    const file = await Deno.makeTempFile();
    try {
      await Deno.writeFile(
        file,
        new Uint8Array([...new TextEncoder().encode("tab\there\nline 2 日本\n"), 0xff, 0x41]),
      );
      await t.tmux("load-buffer", "-b", "semi;x\\;", file);
      await t.tmux("load-buffer", "-b", name, file);
    } finally {
      await Deno.remove(file);
    }
    const r = await c.ok<Content & { name: string; size: number }>("show_buffer", { name });
    assert.equal(r.text, "tab\there\nline 2 日本\n\uFFFDA");
    assert.equal(r.size, byteLength("tab\there\nline 2 日本\n") + 2);
    assert.equal(r.name, name);
    const semi = await c.ok<Content & { name: string }>("show_buffer", { name: "semi;x;" });
    assert.equal(semi.text, r.text);
    const newest = await c.ok<{ name: string }>("show_buffer", {});
    assert.equal(newest.name, name);
    assert.equal(
      (await c.ok<Content>("show_buffer", { name: "older" })).text,
      "older text",
    );
    // A NUL byte stays itself, apart from the two characters \0 (to a control client tmux
    // would write both alike, escape the tab above, and add a final newline).
    const nulFile = await Deno.makeTempFile();
    try {
      await Deno.writeTextFile(nulFile, "a\u0000b\\0");
      await t.tmux("load-buffer", "-b", "nul", nulFile);
    } finally {
      await Deno.remove(nulFile);
    }
    const nul = await c.ok<Content & { size: number }>("show_buffer", { name: "nul" });
    assert.deepEqual([nul.size, JSON.stringify(nul.text)], [5, JSON.stringify("a\u0000b\\0")]);
    const missing = await c.fail("show_buffer", { name: "nope #" });
    assert.match(missing, /No paste buffer "nope #"/);
    assert.match(missing, /Buffers: .*"older"/);
  });
});

Deno.test("show_buffer bounds a large buffer keeping its end, and refuses when there is none", async () => {
  await withTmux(async (t, c) => {
    assert.match(await c.fail("show_buffer", {}), /no paste buffers.*load_buffer/);
    const big = lines(1, 5000, "buffer line ").join("\n");
    const file = await Deno.makeTempFile();
    try {
      await Deno.writeTextFile(file, big);
      await t.tmux("load-buffer", "-b", "big", file);
    } finally {
      await Deno.remove(file);
    }
    const r = await c.ok<Content>("show_buffer", { name: "big" });
    assert.ok(byteLength(JSON.stringify(r)) <= 3000);
    assert.ok(r.text.endsWith("buffer line 5000"));
    assert.equal(r.complete, false);
    assert.equal(r.returnedBytes + r.omittedBytes, byteLength(big));
  }, { maxResultBytes: 3000 });
});

// ---------------------------------------------------------------------------------------------
// tailLines (src/mcp/bounds.ts), the bound every reading tool shares

Deno.test("tailLines keeps the last lines within lines and JSON bytes, and counts what it left", () => {
  const text = ["one", "two", "three", "four"];
  const all = tailLines(text, 10, 1000);
  assert.deepEqual([all.text, all.droppedLines, all.omittedBytes], ["one\ntwo\nthree\nfour", 0, 0]);
  const two = tailLines(text, 2, 1000);
  assert.deepEqual([two.text, two.droppedLines, two.returnedLines], ["three\nfour", 2, 2]);
  assert.equal(two.returnedBytes + two.omittedBytes, byteLength(text.join("\n")));
  // JSON escapes count: a tab costs two bytes, an escape character six.
  const escaped = tailLines(["\t\t", "\x1b"], 10, 2 + 6);
  assert.deepEqual([escaped.text, escaped.droppedLines], ["\x1b", 1]);
  assert.ok(byteLength(JSON.stringify(escaped.text)) <= 8);
  // One line longer than the bound: its tail, cut on a code point, never half an emoji.
  const cut = tailLines(["head🙂🙂🙂"], 10, 2 + 9);
  assert.deepEqual([cut.text, cut.firstLineCut, cut.droppedLines], ["🙂🙂", true, 0]);
  assert.equal(cut.omittedBytes, 4 + 4);
  assert.deepEqual(tailLines([], 10, 100), {
    text: "",
    returnedLines: 0,
    droppedLines: 0,
    firstLineCut: false,
    returnedBytes: 0,
    omittedBytes: 0,
  });
});

Deno.test("a pane the layout left no row (a border line above a one-row cell) is read: tmux keeps it one", async () => {
  await withTmux(async (t, c) => {
    const top = t.ids.paneId;
    await t.tmux("send-keys", "-t", top, "-l", "echo zero; echo");
    await t.tmux("send-keys", "-t", top, "Enter");
    await waitFor(
      async () =>
        (await t.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", top)).includes("zero\n"),
      "the printed line",
    );
    await t.tmux("split-window", "-d", "-t", top, "sh");
    await t.tmux("split-window", "-d", "-t", top, "sh");
    await t.tmux("resize-pane", "-t", top, "-y", "1");
    await t.tmux("set-option", "-w", "-t", t.ids.windowId, "pane-border-status", "top");
    // As tmux 3.3a says it: no row for the pane, and one row in its screen.
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", top, "#{pane_height}")).trim(),
      "0",
    );
    assert.equal((await t.tmux("capture-pane", "-p", "-t", top)).split("\n").length - 1, 1);

    const found = await c.ok<{ matches: { paneId: string }[] }>("search_panes", {
      pattern: "zero",
      scrollbackLines: 100,
    });
    assert.ok(found.matches.some((m) => m.paneId === top), JSON.stringify(found));
    const shallow = await c.ok<{ matches: unknown[] }>("search_panes", {
      pattern: "zero",
      scrollbackLines: 0,
    });
    assert.ok(Array.isArray(shallow.matches));
    const captured = await c.ok<{ text: string }>("capture_pane", { paneId: top, start: -50 });
    assert.match(captured.text, /zero/);
    await c.ok("capture_pane", { paneId: top });
    await c.ok("snapshot_pane", { paneId: top });
    const since = await c.ok<{ cursor: string }>("capture_since", { paneId: top });
    await t.tmux("send-keys", "-t", top, "-l", "echo later");
    await t.tmux("send-keys", "-t", top, "Enter");
    const seen = await c.ok<{ outcome: string }>("wait_for_text", {
      paneId: top,
      patterns: ["later"],
      since: since.cursor,
      timeoutMs: 5_000,
    });
    assert.equal(seen.outcome, "matched");
    await c.ok("capture_since", { paneId: top, cursor: since.cursor });
  });
});
