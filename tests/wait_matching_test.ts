/**
 * Which output ends wait_for_text, against real tmux on private sockets: only output written
 * after the call counts (text already on screen is reported, not matched), literal and regular
 * expression patterns with matchCase and Unicode, a stop pattern over a match, the echo of
 * typed input, a prompt's trailing blank, and what the tool refuses.
 *
 * Ordering without sleeping: a test starts the wait, waits until the wait has subscribed, and
 * only then makes the pane print. Text is printed with printf from split pieces (`DO%sNE`), so
 * the echo of the typed command never holds the pattern itself.
 */

import assert from "node:assert/strict";
import { waitFor } from "./helpers/tmux.ts";
import { summaryOf } from "./helpers/mcp.ts";
import { hub, subscribed, type, type Wait, withServer } from "./helpers/wait_text.ts";

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

Deno.test("wait_for_text says when a matched line is cut, and how much of it", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // A line far longer than a reply keeps of one, the match at its end.
    const waiting = summaryOf(c, "wait_for_text", { paneId: p, patterns: ["RESULT=FAILED"] });
    await subscribed(t, c);
    await type(t, p, "printf '%s RESULT=%s\\n' \"$(printf '%0900d' 0)\" FAILED");
    const { data, summary } = await waiting;
    const result = data as unknown as Wait & { omittedLineBytes: number };
    assert.equal(result.outcome, "matched");
    assert.equal(result.lines.length, 1);
    const kept = new TextEncoder().encode(result.lines[0]).length;
    assert.equal(kept + result.omittedLineBytes, 900 + " RESULT=FAILED".length);
    assert.ok(result.omittedLineBytes > 0);
    assert.match(summary, /cut \(omittedLineBytes \d+; a match may be in what was cut/);
    // A short line: nothing cut, nothing said.
    const short = c.ok<Wait & { omittedLineBytes: number }>("wait_for_text", {
      paneId: p,
      patterns: ["SHORT_DONE"],
    });
    await subscribed(t, c);
    await type(t, p, "printf 'SHORT_%s\\n' DONE");
    assert.equal((await short).omittedLineBytes, 0);
  });
});
