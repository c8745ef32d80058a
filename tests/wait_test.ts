/**
 * wait_for_text against real tmux on private sockets: matching only new output, stop
 * patterns, panes that die, timeouts, cancellation, progress, and the polling fallback.
 *
 * Ordering without sleeping: a test starts the wait, then waits until the server's control
 * hub shows a watcher on the pane (the subscription exists), and only then makes the pane
 * print. Text is printed with printf from split pieces (`DO%sNE`), so the echo of the typed
 * command never holds the pattern itself.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { cellIndex, widthOf } from "../src/tools/cell_width.ts";
import { rowsFrom } from "../src/tools/captured_rows.ts";
import { controlFor } from "../src/tmux/control.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { decodeCursor, encodeCursor, rowHash } from "../src/tmux/since_cursor.ts";
import { type TestClient, testContext, withTmux } from "./helpers/mcp.ts";
import { HookGate, TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

type Wait = {
  outcome: string;
  matched: { pattern: string; index: number } | null;
  stoppedBy: { pattern: string; index: number } | null;
  lines: string[];
  tail: string;
  alreadyOnScreen: boolean;
  patternsOnScreen: string[];
  exitStatus: number | null;
  effectiveTimeoutMs: number;
  timeoutClamped: boolean;
  transport: string;
};

function withServer(fn: (t: Server, c: TestClient) => Promise<void>): Promise<void> {
  return withTmux(fn, {}, { noChildLeft: true });
}

function hub(t: Server, c: TestClient) {
  return controlFor(c.server.runner, { socketName: t.socket });
}

/** Resolves once the wait's subscription exists. */
async function subscribed(t: Server, c: TestClient, count = 1): Promise<void> {
  await waitFor(() => hub(t, c).watchers >= count, "the wait to subscribe");
}

/** Types a command into the pane with tmux directly (not through the guarded tools). */
async function type(t: Server, paneId: string, command: string): Promise<void> {
  await t.tmux("send-keys", "-t", paneId, "-l", "--", command);
  await t.tmux("send-keys", "-t", paneId, "Enter");
}

function structured(result: CallToolResult): Wait {
  const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
  assert.notEqual(result.isError, true, text);
  return result.structuredContent as Wait;
}

Deno.test("wait_for_text wakes on new output and returns the matching lines", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const waiting = c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["nothing", "done"] });
    await subscribed(t, c);
    await type(t, p, "printf 'build: DO%sNE in 3s\\n' ''");
    const result = await waiting;
    assert.equal(result.outcome, "matched");
    assert.deepEqual(result.matched, { pattern: "done", index: 1 });
    assert.deepEqual(result.lines, ["build: DONE in 3s"]);
    assert.match(result.tail, /build: DONE in 3s/);
    assert.equal(result.alreadyOnScreen, false);
    assert.equal(result.transport, "control");
    assert.equal(result.effectiveTimeoutMs, 30_000);
    assert.equal(hub(t, c).watchers, 0, "the watch ended with the call");
  });
});

Deno.test("wait_for_text: regex, matchCase and Unicode", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const regex = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["^ready: \\d+ 日本🙂$"],
      regex: true,
    });
    await subscribed(t, c);
    await type(t, p, "printf 'READY: %s 日本🙂\\n' 42");
    assert.deepEqual((await regex).lines, ["READY: 42 日本🙂"]);

    const exact = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["lower"],
      matchCase: true,
      timeoutMs: 800,
    });
    await subscribed(t, c);
    await type(t, p, "printf 'LOW%s\\n' ER");
    assert.equal((await exact).outcome, "timedOut");

    assert.match(
      await c.fail("wait_for_text", { paneId: p, patterns: ["(unclosed"], regex: true }),
      /not a valid regular expression/,
    );
    // Literal by default: regex metacharacters are text.
    const literal = c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["a.b(c)"] });
    await subscribed(t, c);
    await type(t, p, "printf 'axb(c) a.b%s\\n' '(c)'");
    assert.deepEqual((await literal).lines, ["axb(c) a.b(c)"]);
  });
});

Deno.test("a stop pattern wins over a match seen at the same moment", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const waiting = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["DONE"],
      stop: ["ERROR", "FAILED"],
    });
    await subscribed(t, c);
    // One write holding both: the match comes first in the text, the stop still wins.
    await type(t, p, "printf 'DO%sNE\\nER%sROR: disk full\\n' '' ''");
    const result = await waiting;
    assert.equal(result.outcome, "stopped");
    assert.deepEqual(result.stoppedBy, { pattern: "ERROR", index: 0 });
    assert.equal(result.matched, null);
    assert.deepEqual(result.lines, ["ERROR: disk full"]);
  });
});

Deno.test("text already on screen does not end the wait, and is reported", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    await type(t, p, "printf 'REA%sDY\\n' ''");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("READY\n"),
      "READY on screen",
    );
    const result = await c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["READY", "absent"],
      timeoutMs: 300,
    });
    assert.equal(result.outcome, "timedOut");
    assert.equal(result.alreadyOnScreen, true);
    assert.deepEqual(result.patternsOnScreen, ["READY"]);
  });
});

Deno.test("the echo of typed input is output too", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const waiting = c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["echoed-word"] });
    await subscribed(t, c);
    await t.tmux("send-keys", "-t", p, "-l", "echoed-word");
    const result = await waiting;
    assert.equal(result.outcome, "matched");
  });
});

Deno.test("a pane that dies while waited on ends the wait as paneDied", async () => {
  await withServer(async (t, c) => {
    /** Starts a shell pane, waits on it, makes it exit with `status`; returns the result. */
    const dieWhileWaited = async (status: number): Promise<Wait & { paneId: string }> => {
      const paneId = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
      const waiting = c.ok<Wait>("wait_for_text", { paneId, patterns: ["never"] });
      await subscribed(t, c);
      await type(t, paneId, `exit ${status}`);
      return { ...(await waiting), paneId };
    };
    // remain-on-exit: the pane stays, dead, with its status.
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const kept = await dieWhileWaited(7);
    assert.equal(kept.outcome, "paneDied");
    // tmux 3.3a sometimes never learns a dead pane's exit status: null then, never wrong.
    assert.ok(kept.exitStatus === 7 || kept.exitStatus === null, `${kept.exitStatus}`);

    // Already dead at the start: said at once.
    assert.equal(
      (await c.ok<Wait>("wait_for_text", { paneId: kept.paneId, patterns: ["x"] })).outcome,
      "paneDied",
    );

    // Without remain-on-exit the pane (and its window) goes away entirely.
    await t.tmux("set-option", "-g", "remain-on-exit", "off");
    const gone = await dieWhileWaited(0);
    assert.equal(gone.outcome, "paneDied");
    assert.equal(gone.exitStatus, null);
  });
});

Deno.test("the last pane of a session dying (the control client detached) is paneDied", async () => {
  await withServer(async (t, c) => {
    const [, lone] = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "lone one",
      "-P",
      "-F",
      "#{session_id} #{pane_id}",
      "sh",
    )).trim().split(" ");
    const waiting = c.ok<Wait>("wait_for_text", { paneId: lone, patterns: ["never"] });
    await subscribed(t, c);
    await type(t, lone, "exit");
    assert.equal((await waiting).outcome, "paneDied");
  });
});

Deno.test("timeouts are clamped into [100 ms, 120 s] and reported", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const low = await c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["x"], timeoutMs: 1 });
    assert.equal(low.outcome, "timedOut");
    assert.equal(low.effectiveTimeoutMs, 100);
    assert.equal(low.timeoutClamped, true);
    const high = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["HIGH"],
      timeoutMs: 9_999_999,
    });
    await subscribed(t, c);
    await type(t, p, "printf 'HI%s\\n' GH");
    const result = await high;
    assert.equal(result.effectiveTimeoutMs, 120_000);
    assert.equal(result.timeoutClamped, true);
    assert.equal(result.outcome, "matched");
  });
});

Deno.test("cancelling the request stops the wait at once", async () => {
  await withServer(async (t, c) => {
    const abort = new AbortController();
    const call = c.client.callTool(
      {
        name: "wait_for_text",
        arguments: { paneId: t.ids.paneId, patterns: ["never"], timeoutMs: 60_000 },
      },
      undefined,
      { signal: abort.signal },
    );
    call.catch(() => {});
    await subscribed(t, c);
    abort.abort();
    await assert.rejects(call);
    // The watch is gone long before its 60 s timeout.
    await waitFor(() => hub(t, c).watchers === 0, "the wait to stop", 3_000);
    await c.server.registry.settle(3_000);
  });
});

Deno.test("progress notifications are sent while waiting", async () => {
  await withServer(async (t, c) => {
    const progress: { progress: number; total?: number }[] = [];
    const result = structured(
      await c.client.callTool(
        {
          name: "wait_for_text",
          arguments: { paneId: t.ids.paneId, patterns: ["never"], timeoutMs: 1_500 },
        },
        undefined,
        { onprogress: (p: { progress: number; total?: number }) => progress.push(p) },
      ) as CallToolResult,
    );
    assert.equal(result.outcome, "timedOut");
    assert.ok(progress.length >= 1, "at least the first progress notification");
    assert.equal(progress[0].total, 1_500);
    assert.ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress));
  });
});

Deno.test("a session a control client must not join is waited on by polling", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // destroy-unattached: a control client would keep the session alive after the person
    // left, so it is never attached to (a person is attached so the session stays).
    await t.attach("main");
    await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    // No subscription to wait for: the first progress notification is sent once the wait has
    // read its starting point, and that is when the pane prints.
    let printed: Promise<void> | null = null;
    const waiting = c.client.callTool(
      { name: "wait_for_text", arguments: { paneId: p, patterns: ["POLLED"], stop: ["X"] } },
      undefined,
      { onprogress: () => void (printed ??= type(t, p, "printf 'POL%sED\\n' L")) },
    );
    const result = structured(await waiting as CallToolResult);
    await printed;
    assert.equal(
      (await t.tmux("list-clients", "-F", "#{client_control_mode}")).trim(),
      "0",
      "no control client joined",
    );
    assert.equal(result.transport, "polling");
    assert.equal(result.outcome, "matched");
    assert.deepEqual(result.lines, ["POLLED"]);
  });
});

Deno.test("polling: what was on screen at the start is not new, and new text is cut by characters", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // Two rows, then the cursor home and three e + combining accents written over "old": the
    // start row holds more characters than columns, and "READY before" sits below the cursor.
    await t.tmux(
      "respawn-pane",
      "-k",
      "-t",
      p,
      "printf 'old line\\nREADY before\\n\\033[He\\314\\201e\\314\\201e\\314\\201'; exec cat",
    );
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("READY before"),
      "the program's screen",
    );
    await t.attach("main");
    await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    const before = structured(
      await c.call("wait_for_text", { paneId: p, patterns: ["READY"], timeoutMs: 1_000 }),
    );
    assert.equal(before.transport, "polling");
    assert.deepEqual([before.outcome, before.alreadyOnScreen], ["timedOut", true]);
    // Typed now: echoed at the cursor, over " l". The start row from where it changed.
    let typed: Promise<void> | null = null;
    const waiting = c.client.callTool(
      { name: "wait_for_text", arguments: { paneId: p, patterns: ["^GO"], regex: true } },
      undefined,
      {
        onprogress: () => void (typed ??= t.tmux("send-keys", "-t", p, "-l", "GO").then(() => {})),
      },
    );
    const result = structured(await waiting as CallToolResult);
    await typed;
    assert.equal(result.transport, "polling");
    assert.equal(result.outcome, "matched");
    assert.deepEqual(result.lines, ["GOine"]);
  });
});

Deno.test("wait_for_text refuses what it cannot wait on", async () => {
  await withServer(async (t, c) => {
    assert.match(
      await c.fail("wait_for_text", { paneId: "%999", patterns: ["x"] }),
      /No pane %999/,
    );
    assert.match(await c.fail("wait_for_text", { paneId: t.ids.paneId, patterns: [] }), /patterns/);
    assert.match(
      await c.fail("wait_for_text", { paneId: t.ids.paneId, patterns: [""] }),
      /patterns/,
    );
  });
});

/**
 * Makes the pane a program that writes what it is sent and nothing else (cat on a raw terminal
 * without echo); returns what sends it bytes.
 */
async function quietPane(t: Server, p: string): Promise<{ write(s: string): Promise<void> }> {
  await t.tmux("respawn-pane", "-k", "-t", p, "stty raw -echo; exec cat");
  await t.foreground(p, "cat");
  return {
    async write(s: string) {
      const hex = [...new TextEncoder().encode(s)].map((b) => b.toString(16).padStart(2, "0"));
      for (let i = 0; i < hex.length; i += 4_000) {
        await t.tmux("send-keys", "-t", p, "-H", ...hex.slice(i, i + 4_000));
      }
    },
  };
}

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

Deno.test("polling: a spinner drawn again before old text does not make it new", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    await tty.write("| building foo");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("| building foo"),
      "the spinner",
    );
    await t.attach("main");
    await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    let drawn: Promise<void> | null = null;
    const waiting = c.client.callTool(
      {
        name: "wait_for_text",
        arguments: { paneId: p, patterns: ["building foo", "MARK"], timeoutMs: 10_000 },
      },
      undefined,
      {
        onprogress: () =>
          void (drawn ??= tty.write("\r- building foo").then(() => tty.write("\r\nMARK\r\n"))),
      },
    );
    const result = structured(await waiting as CallToolResult);
    await drawn;
    assert.deepEqual([result.transport, result.outcome, result.matched?.pattern], [
      "polling",
      "matched",
      "MARK",
    ]);
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

Deno.test("polling: a row redrawn in place (\\r) is matched and told whole", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    await tty.write("Downloading... 12%");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("12%"),
      "the progress line",
    );
    await t.attach("main");
    await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    let drawn: Promise<void> | null = null;
    const waiting = c.client.callTool(
      {
        name: "wait_for_text",
        arguments: { paneId: p, patterns: ["Download complete"], timeoutMs: 10_000 },
      },
      undefined,
      { onprogress: () => void (drawn ??= tty.write("\rDownload complete  ")) },
    );
    const result = structured(await waiting as CallToolResult);
    await drawn;
    assert.deepEqual([result.transport, result.outcome, result.lines], [
      "polling",
      "matched",
      ["Download complete"],
    ]);
  });
});

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

    // Forged: well formed (the checksum is no secret) but not sealed here, or sealed for
    // another body; from another pane. Each refused before anything is watched.
    const [head, payload, check, seal] = cursor.split(".");
    const rows = decodeCursor(cursor);
    const unsealed = encodeCursor({ ...rows, rows: rowHash("nothing like it") });
    const other = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const otherCursor = (await c.ok<{ cursor: string }>("capture_since", { paneId: other })).cursor;
    const resealed = `${unsealed}.${seal}`;
    for (
      const [forged, why] of [
        [unsealed, /not sealed by this server process/],
        [resealed, /not sealed by this server process/],
        [`${head}.${payload}.${check}.${"A".repeat(22)}`, /not sealed by this server process/],
        [`${head}.${payload}.${check}.${seal}x`, /malformed/],
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

Deno.test("since: capture_since under a full-screen program never seals a cursor it did not seal", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    const forged = encodeCursor({ ...decodeCursor(cursor), rows: rowHash("nothing like it") });
    await type(t, p, "printf '\\033[?1049hFU%sLL' ''; read x");
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", p, "#{alternate_on}")).trim() === "1",
      "the full-screen program",
    );
    // The cursor it hands back keeps the given one's main-screen part: sealed only for its own.
    const own = await c.ok<{ cursor: string }>("capture_since", { paneId: p, cursor });
    assert.equal(own.cursor.split(".").length, 4, "its own cursor comes back sealed");
    const back = await c.ok<{ cursor: string }>("capture_since", { paneId: p, cursor: forged });
    assert.equal(back.cursor.split(".").length, 3, "a forged one comes back unsealed");
    assert.match(
      await c.fail("wait_for_text", { paneId: p, patterns: ["x"], since: back.cursor }),
      /not sealed by this server process/,
    );
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

Deno.test("control feed lost mid-wait: text on screen below the cursor before the wait is not new", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    {
      await tty.write("header\r\n\r\nBUILD OK\r\n\x1b[1;1H");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("BUILD OK"),
        "BUILD OK on screen",
      );
      const waiting = c.ok<Wait>("wait_for_text", {
        paneId: p,
        patterns: ["BUILD OK"],
        timeoutMs: 1_500,
      });
      await subscribed(t, c);
      await t.tmux("detach-client", "-s", "main");
      const result = await waiting;
      assert.deepEqual([result.outcome, result.alreadyOnScreen], ["timedOut", true]);
    }
  });
});

Deno.test("polling: a width change does not make old rows new output", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    {
      await t.attach("main");
      await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
      await t.tmux("resize-window", "-t", p, "-x", "80", "-y", "10");
      let out = "";
      for (let i = 0; i < 6; i++) out += `step ${i} ${"-".repeat(60)} BUILD OK\r\n`;
      await tty.write(out + "$ ");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("$"),
        "the prompt",
      );
      let resized: Promise<string> | null = null;
      const waiting = c.client.callTool(
        {
          name: "wait_for_text",
          arguments: { paneId: p, patterns: ["BUILD OK"], timeoutMs: 1_500 },
        },
        undefined,
        { onprogress: () => void (resized ??= t.tmux("resize-window", "-t", p, "-x", "40")) },
      );
      const result = structured(await waiting as CallToolResult);
      await resized;
      assert.equal(result.transport, "polling");
      assert.deepEqual([result.outcome, result.lines], ["timedOut", []]);
    }
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

Deno.test("a prompt's trailing blank is matched: a pattern may end in the blank the shell wrote", async () => {
  for (const [patterns, regex] of [[["myprompt\\$ $"], true], [["myprompt$ "], false]] as const) {
    await withServer(async (t, c) => {
      const p = await t.showing("env PS1='myprompt$ ' sh", "myprompt$");
      const waiting = c.ok<Wait>("wait_for_text", { paneId: p, patterns: [...patterns], regex });
      await subscribed(t, c);
      await type(t, p, "true");
      const result = await waiting;
      assert.equal(result.outcome, "matched", `${patterns[0]} (regex ${regex})`);
      assert.deepEqual(result.lines, ["myprompt$"], "shown without its trailing blank");
    });
  }
  // And a pattern anchored at the end still matches a row the program padded with blanks.
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const waiting = c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["^DONE$"], regex: true });
    await subscribed(t, c);
    await type(t, p, "printf 'DO%sNE   \\n' ''");
    const result = await waiting;
    assert.equal(result.outcome, "matched");
    assert.deepEqual(result.lines, ["DONE"]);
  });
});

// Where the start row's cursor falls among its characters is tmux's to say: tmux 3.3a (without
// utf8proc) takes widths from the C library's wcwidth, which gives many emoji one column (🛠
// U+1F6E0, East Asian Width "neutral"), and the vowels and finals of decomposed Hangul (NFD, as
// macOS names files) none. A table of the watch's own put the cursor inside the old text.
for (
  const [what, prompt, columns] of [
    ["emoji tmux draws one column wide (🛠)", "🛠🛠🛠🛠 ready> ", 12],
    ["Hangul in decomposed form (NFD)", "\u1112\u1161\u11ab\u1100\u1173\u11af ready> ", 12],
  ] as const
) {
  Deno.test(`wait_for_text does not take old text before the cursor for new when the row has ${what}`, async () => {
    const gate = await HookGate.make();
    try {
      await withServer(async (t, c) => {
        const id = await t.showing(
          `sh -c "printf '${prompt}'; read x; printf 'DO%sNE\\n' ''; sleep 100"`,
          "ready>",
        );
        assert.equal(
          (await t.tmux("display-message", "-p", "-t", id, "#{cursor_x}")).trim(),
          String(columns),
          "tmux's own columns",
        );
        // The watch's first look at the pane is held until the pane has written more (a busy
        // pane writing while the watch begins).
        await t.tmux(
          "set-hook",
          "-g",
          "after-display-message",
          `if-shell -F '#{m:*pane_width*history_limit*alternate_on*,#{hook_arguments}}' { ${gate.command} }`,
        );
        const waiting = c.ok<Wait>("wait_for_text", {
          paneId: id,
          patterns: ["ready", "DONE"],
          timeoutMs: 20_000,
        });
        await waitFor(() => gate.began(), "the watch's first look to be held");
        await t.tmux("send-keys", "-t", id, "-l", "a");
        await waitFor(
          async () => (await t.tmux("capture-pane", "-p", "-t", id)).includes("ready> a"),
          "the typed a",
        );
        await gate.open();
        await t.tmux("send-keys", "-t", id, "Enter");
        const r = await waiting;
        assert.equal(
          r.matched?.pattern,
          "DONE",
          `"ready" was on screen before: ${JSON.stringify(r)}`,
        );
      });
    } finally {
      await gate.remove();
    }
  });
}

Deno.test("text typed at a prompt with emoji tmux draws one column wide is told without the prompt", async () => {
  await withServer(async (t, c) => {
    const id = await t.showing(`sh -c "printf '🛠🛠 P> '; read x; sleep 100"`, "P>");
    const waiting = c.ok<Wait>("wait_for_text", { paneId: id, patterns: ["GO"] });
    await subscribed(t, c);
    await t.tmux("send-keys", "-t", id, "-l", "GO");
    const r = await waiting;
    assert.equal(r.outcome, "matched");
    assert.deepEqual(r.lines, ["GO"]);
  });
});

Deno.test("cellIndex puts a column where tmux's cursor is, whatever the characters", async () => {
  await withServer(async (t) => {
    const runner = new TmuxRunner();
    const ctx = testContext(runner, t.socket);
    const pid = Number((await t.tmux("display-message", "-p", "#{pid}")).trim());
    try {
      for (
        const text of [
          "plain > ",
          "🛠🛠🛠🛠 ready> ",
          "\u1112\u1161\u11ab\u1100\u1173\u11af> ",
          "日本語 ｱｲ> ",
          "e\u0301e\u0301 🙂 ❯ ",
          "x\u202aab\u202c \ufeffx\u2066y\u2069> ",
          "#{pane_id} }{,:# ünï ",
        ]
      ) {
        const id = await t.showing(`printf '%s' '${text}'; sleep 100`, text.slice(0, 1));
        const [x, row] = (await t.tmux(
          "display-message",
          "-p",
          "-t",
          id,
          "#{cursor_x}",
          ";",
          "capture-pane",
          "-p",
          "-N",
          "-t",
          id,
          "-S",
          "0",
          "-E",
          "0",
        )).split("\n");
        const column = Number(x);
        assert.equal(await cellIndex(ctx, pid, row, column), text.length, JSON.stringify(text));
        // And blanks past the row's end count one column each.
        assert.equal(await cellIndex(ctx, pid, row, column + 3), text.length + 3);
        await t.tmux("kill-pane", "-t", id);
      }
    } finally {
      await runner.close();
    }
  });
});

Deno.test("a character tmux cannot measure is never given to #{w:} (tmux 3.3a loops for ever there)", async () => {
  await withServer(async (t) => {
    // U+0378 is reserved for good; U+1FAE8 is unassigned in older C libraries. tmux drops both
    // from a pane, and its #{w:} of either never returns: the whole server stops.
    const cases: [string, RegExp][] = [
      ["\u0378", /^(-|\d)$/],
      ["\u{1FAE8}", /^(-|\d)$/],
      ["漢", /^2$/],
      ["é", /^1$/],
    ];
    for (const [ch, expected] of cases) {
      const answer = await new Deno.Command("tmux", {
        args: ["-L", t.socket, "display-message", "-p", widthOf(ch)],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(10_000),
      }).output();
      assert.equal(answer.success, true, `tmux answered for U+${ch.codePointAt(0)!.toString(16)}`);
      assert.match(new TextDecoder().decode(answer.stdout).trim(), expected);
    }
    assert.equal((await t.tmux("display-message", "-p", "ok")).trim(), "ok");
  });
});

Deno.test("rowsFrom gives what capture-pane -J -S y gives, or nothing, from two reads at one instant", async () => {
  await withServer(async (t) => {
    const lines = (s: string) => s.split("\n").slice(0, -1);
    // A pane ten columns wide (before it prints: a resize would reflow the rows).
    const narrow = async (print: string) => {
      const id = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
        "sh",
        "-c",
        `while [ "$(stty size | cut -d' ' -f2)" != 10 ]; do sleep 0.02; done; ${print}; sleep 100`,
      )).trim();
      await t.tmux("resize-window", "-t", id, "-x", "10");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", id)).includes("end>"),
        "end>",
      );
      const joined = lines(await t.tmux("capture-pane", "-p", "-J", "-t", id));
      const raw = lines(await t.tmux("capture-pane", "-p", "-N", "-t", id));
      const made: (string[] | null)[] = [];
      const told: string[][] = [];
      for (let y = 0; y < raw.length; y++) {
        made.push(rowsFrom(joined, raw, y));
        told.push(lines(await t.tmux("capture-pane", "-p", "-J", "-t", id, "-S", `${y}`)));
      }
      return { made, told };
    };
    // Wrapped lines, of wide characters too: every row as tmux tells it.
    const wrapped = await narrow(
      String
        .raw`printf '$ one\n%s\nshort\n日本語日本語日本語\nend> ' abcdefghijklmnopqrstuvwxyz0123456789`,
    );
    assert.deepEqual(wrapped.made, wrapped.told);
    // A wrapped line whose last row was erased after it wrapped (a progress line cleared with
    // \r and ESC [K): what is told is what tmux tells.
    const erased = await narrow(
      String.raw`printf '$ one\n%s\r\033[K\nlast\nend> ' ABCDEFGHIJKLMNOPQRSTUVWXYZ`,
    );
    erased.made.forEach((rows, y) => rows === null || assert.deepEqual(rows, erased.told[y]));
  });
});
