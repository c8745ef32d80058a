import assert from "node:assert/strict";
import { TestTmux } from "../../tests/helpers/tmux.ts";
import { PROMPT_PROGRAM_MS } from "./prompt_programs.ts";
import {
  CLAIM_MS,
  claimHolds,
  claimValue,
  markFree,
  markFreeFormat,
  markHeldFormat,
  markLeftover,
  markValue,
  parseMark,
  RUN_OPTION,
  waitedOn,
} from "./run_mark.ts";

const JOB = "3-0123456789abcdef0123-2ls-mx6cvhh1-0-2lq";

Deno.test("a run mark is its job id, and until when a call waits on it", () => {
  const typed = (waitedOnUntil: number | null) => ({
    jobId: JOB,
    waitedOnUntil,
    claimedUntil: null,
  });
  assert.deepEqual(parseMark(markValue(JOB)), typed(null));
  const until = 1_750_000_000_123;
  // Also an earlier version's mark, claim and typed alike: read as it always was.
  assert.deepEqual(parseMark(markValue(JOB, until)), typed(until));
  assert.deepEqual(parseMark(`${JOB}.${until.toString(36)}`), typed(until));
  for (
    const other of [
      "",
      "x y",
      "#{pane_id}",
      `${JOB}.`,
      `${JOB}.1.2`,
      `${JOB}.C1`,
      "A-1",
      "a".repeat(200),
    ]
  ) {
    assert.equal(parseMark(other), null, other);
  }
  const now = 1_000_000;
  const mark = (until: number | null) => typed(until);
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
      claimValue(JOB, 1_750_000_000_123),
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

Deno.test("a claim is its job id and until when its call may type, and never reads as a typed mark", () => {
  const until = 1_750_000_000_123;
  const claimed = claimValue(JOB, until);
  assert.deepEqual(parseMark(claimed), { jobId: JOB, waitedOnUntil: null, claimedUntil: until });
  assert.notEqual(claimed, markValue(JOB, until));
  // The time of any deadline from 2003 to 2059 starts with a letter past c in base 36.
  for (const year of [2003, 2026, 2059]) {
    const deadline = Date.UTC(year, 0, 1);
    assert.equal(parseMark(markValue(JOB, deadline))?.claimedUntil, null, String(year));
  }
  const now = 1_750_000_000_000;
  const claim = (at: number) => parseMark(claimValue(JOB, at))!;
  assert.equal(claimHolds(claim(now + 5_000), now), true);
  assert.equal(claimHolds(claim(now), now), false, "lapsed");
  assert.equal(claimHolds(claim(0), now), false, "ended");
  // Further ahead than any claim lasts: not believed, or a forged claim would hold the pane.
  assert.equal(claimHolds(claim(now + 10 * 60_000), now), false);
  // A claim never says a call waits on a typed command, nor a typed mark that it is a claim.
  assert.equal(waitedOn(claim(now + 5_000), 120_000, now), false);
  assert.equal(claimHolds(parseMark(markValue(JOB, now + 5_000))!, now), false);
});

Deno.test("a claim lasts longer than run_command takes from its C-c to its typing", () => {
  // The C-c step and the typing step, each tried again while the prompt is drawn, and the
  // wait for the fresh prompt between them (1 s), with as much again to spare.
  assert.ok(CLAIM_MS >= 2 * (2 * PROMPT_PROGRAM_MS + 1_000), String(CLAIM_MS));
});

Deno.test("a run mark's undo: the claim goes, a typed mark names its job with no call waiting, any other stays", async () => {
  const t = await TestTmux.start();
  try {
    const p = t.ids.paneId;
    const claimed = claimValue(JOB, 1_750_000_000_123);
    const typed = markValue(JOB, 1_750_000_030_000);
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
