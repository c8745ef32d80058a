import assert from "node:assert/strict";
import { TestTmux } from "../../tests/helpers/tmux.ts";
import {
  markFree,
  markFreeFormat,
  markHeldFormat,
  markLeftover,
  markValue,
  parseMark,
  RUN_OPTION,
  typedMark,
  waitedOn,
} from "./run_mark.ts";

const JOB = "3-0123456789abcdef0123-2ls-mx6cvhh1-0-2lq";

Deno.test("a run mark is its job id, and until when a call waits on it", () => {
  assert.deepEqual(parseMark(markValue(JOB)), { jobId: JOB, waitedOnUntil: null });
  const until = 1_750_000_000_123;
  assert.deepEqual(parseMark(markValue(JOB, until)), { jobId: JOB, waitedOnUntil: until });
  for (const other of ["", "x y", "#{pane_id}", `${JOB}.`, `${JOB}.1.2`, "A-1", "a".repeat(200)]) {
    assert.equal(parseMark(other), null, other);
  }
  const now = 1_000_000;
  const mark = (until: number | null) => ({ jobId: JOB, waitedOnUntil: until });
  assert.equal(waitedOn(mark(null), 120_000, now), false);
  assert.equal(waitedOn(mark(now + 5_000), 120_000, now), true);
  assert.equal(waitedOn(mark(now - 1), 120_000, now), false, "the call stopped waiting");
  // Further ahead than any call waits: not believed, or a forged mark would hold the pane.
  assert.equal(waitedOn(mark(now + 10 * 60_000), 120_000, now), false);
});

Deno.test("tmux judges a run mark free exactly as markFree says, whatever the pane holds", async () => {
  const t = await TestTmux.start();
  try {
    const p = t.ids.paneId;
    const values = [
      "",
      JOB,
      markValue(JOB, 1_750_000_000_123),
      "12-nothing",
      "hello world",
      "#{pane_id}",
      "a,b}c",
      "two\nlines",
      "UPPER",
      // Plain characters, but longer than any mark: never one of this module's.
      "a".repeat(201),
    ];
    for (const value of values) {
      if (value === "") await t.tmux("set-option", "-p", "-u", "-t", p, RUN_OPTION);
      else await t.tmux("set-option", "-p", "-t", p, RUN_OPTION, value);
      for (const seen of ["", JOB, "12-nothing"]) {
        const format = markFreeFormat(seen);
        const got = (await t.tmux("display-message", "-p", "-t", p, format)).trim();
        assert.equal(got === "1", markFree(seen, value), `${JSON.stringify(value)} seen ${seen}`);
      }
      if (value.length > 200) assert.equal(markFree("", value), true, "a long value is stale");
      const held = (await t.tmux("display-message", "-p", "-t", p, markHeldFormat(JOB))).trim();
      assert.equal(held === "1", value === JOB, JSON.stringify(value));
    }
  } finally {
    await t.kill();
  }
});

Deno.test("a typed mark is the claimed one's job, waited on a millisecond longer, and never the same", () => {
  const claimed = markValue(JOB, 1_750_000_000_123);
  assert.deepEqual(parseMark(typedMark(claimed)), { jobId: JOB, waitedOnUntil: 1_750_000_000_124 });
  assert.notEqual(typedMark(claimed), claimed);
  assert.throws(() => typedMark(JOB), RangeError);
});

Deno.test("a run mark's undo: the claim goes, a typed mark names its job with no call waiting, any other stays", async () => {
  const t = await TestTmux.start();
  try {
    const p = t.ids.paneId;
    const claimed = markValue(JOB, 1_750_000_000_123);
    const typed = typedMark(claimed);
    const spec = markLeftover(p, JOB, claimed, typed);
    const undo = () =>
      spec.undo(async (args) => {
        const r = await t.tmuxRaw(...args);
        return { code: r.code, stdout: new TextEncoder().encode(r.stdout), stderr: r.stderr };
      });
    const other = markValue("3-0123456789abcdef0123-2ls-mx6cvhh1-0-999", 1_750_000_000_123);
    for (
      const [value, after] of [
        [claimed, ""],
        [typed, JOB],
        [JOB, JOB],
        [other, other],
        ["", ""],
      ]
    ) {
      if (value === "") await t.tmux("set-option", "-p", "-u", "-t", p, RUN_OPTION);
      else await t.tmux("set-option", "-p", "-t", p, RUN_OPTION, value);
      await undo();
      const now = (await t.tmux("display-message", "-p", "-t", p, `#{${RUN_OPTION}}`)).trim();
      assert.equal(now, after, `after ${JSON.stringify(value)}`);
    }
    // A pane gone: nothing to give back, and no failure.
    await t.tmux("set-option", "-p", "-t", p, RUN_OPTION, claimed);
    await t.tmux("split-window", "-d", "-t", p);
    await t.tmux("kill-pane", "-t", p);
    await undo();
  } finally {
    await t.kill();
  }
});
