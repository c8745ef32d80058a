/**
 * run_command's claim on a pane (its run mark as its C-c step puts it on, before anything is
 * typed: run_mark.ts) when the process that took it is killed outright before typing, or is
 * too slow to type: the next tmux-mcp process on the server tells the claim from a typed
 * command, refuses the pane only while the claim holds, reads the job as never typed once it
 * has lapsed, and takes the pane; a claimant whose claim was taken types nothing; and one that
 * types in the moment a reader ends its lapsed claim is not called never typed.
 *
 * Every moment is reached deterministically: a person's hook holds a call's tmux line at a
 * chosen command (HookGate), or the test waits until tmux shows the call's state, or until the
 * claim's own time has passed.
 */

import assert from "node:assert/strict";
import { CLAIM_MS, claimValue, markValue, parseMark, type RunMark } from "../src/tools/run_mark.ts";
import { callOver, startOn, StdioServer } from "./helpers/stdio.ts";
import { HookGate, TestTmux, waitFor } from "./helpers/tmux.ts";

/** A job id of another run_command in the pane (only its shape counts here). */
const OTHER_JOB = `0-${"a".repeat(20)}-1-1-0-1-1`;

/** A test server, with the ids of its first session, window and pane. */
type Started = Awaited<ReturnType<typeof TestTmux.start>>;

/** The pane's run mark ("" when none). */
async function runMark(t: TestTmux, paneId: string): Promise<string> {
  return (await t.tmux("show-options", "-pqv", "-t", paneId, "@tmux-mcp-run")).trim();
}

/** Waits until the claim's own time has passed: it has lapsed for every process. */
async function lapsed(claim: RunMark): Promise<void> {
  await waitFor(() => Date.now() > claim.claimedUntil!, "the claim to lapse", CLAIM_MS + 20_000);
}

/**
 * Starts a run_command of `command` in `t`'s first pane from a process of its own, holds the
 * step that claims the pane (a person's hook after set-option), kills the process outright
 * there, and lets tmux run the rest of the step's line. Returns the claim it left.
 */
async function killedAfterClaim(
  t: Started,
  gate: HookGate,
  command: string,
): Promise<{ value: string; claim: RunMark }> {
  const a = await startOn(t.socket);
  try {
    const p = t.ids.paneId;
    await callOver(a, "list_panes", {}); // the control connection warm: the step goes over it
    await t.tmux("set-hook", "-g", "after-set-option", gate.command);
    a.callTool("run_command", { paneId: p, command, timeoutMs: 120_000 }).catch(() => {});
    await waitFor(() => gate.began(), "the claim's step to be held");
    const value = await runMark(t, p);
    const claim = parseMark(value);
    assert.ok(claim !== null && claim.claimedUntil !== null, `a claim: ${JSON.stringify(value)}`);
    await a.kill();
    await gate.open();
    await t.tmux("set-hook", "-gu", "after-set-option");
    await t.tmux("display-message", "-p", "");
    return { value, claim };
  } finally {
    await a.kill();
  }
}

/**
 * Runs `body` on a private server whose first pane (`p`) holds the claim a run_command killed
 * after its claim step left ({@link killedAfterClaim} of `echo SHOULD-NOT-RUN`: `value`,
 * `claim`); `startB` starts the next tmux-mcp process on it. Ends them all after.
 */
async function withKilledClaim(
  body: (s: {
    t: Started;
    p: string;
    value: string;
    claim: RunMark;
    startB: () => Promise<StdioServer>;
  }) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start();
  const gate = await HookGate.make();
  let b: StdioServer | undefined;
  try {
    const p = t.ids.paneId;
    const { value, claim } = await killedAfterClaim(t, gate, "echo SHOULD-NOT-RUN");
    await body({ t, p, value, claim, startB: async () => b = await startOn(t.socket) });
  } finally {
    await gate.open();
    await b?.kill();
    await t.kill();
    await gate.remove();
  }
}

Deno.test("run_command SIGKILLed after its claim, before typing: refused only as a claim, its job read as never typed once the claim lapses, and the pane runs the next command", () =>
  withKilledClaim(async ({ t, p, value, claim, startB }) => {
    const { jobId } = claim;
    const b = await startB();
    const first = await callOver(b, "run_command", { paneId: p, command: "echo NEXT-RAN" });
    if (!first.isError) {
      // This process came only once the claim had lapsed (a loaded machine): the pane was free.
      assert.equal(first.data.output, "NEXT-RAN", first.text);
    } else {
      // Refused while the claim held: as a claim, not as a command typed and waited on, and
      // with advice that lifts it (a C-c would not: nothing runs).
      assert.match(
        first.summary,
        new RegExp(`being taken by another run_command \\(job ${jobId}\\)`),
      );
      assert.doesNotMatch(first.text, /busy with a command|waits on it|send_keys/, first.text);
      assert.match(first.text, new RegExp(`get_command_result with jobId ${jobId} and waitMs`));
      // The advice: wait on the job. It is over once the claim lapses: never typed.
      const result = await callOver(b, "get_command_result", { jobId, waitMs: CLAIM_MS + 20_000 });
      assert.equal(result.data.state, "lost", result.text);
      assert.match(String(result.data.lostReason), /never typed/, result.text);
      assert.ok(Date.now() >= claim.claimedUntil!, "read as over only once the claim lapsed");
      // And so it stays, for every process: the claim is ended in tmux, not only here.
      const mark = parseMark(await runMark(t, p));
      assert.equal(mark?.jobId, jobId);
      assert.equal(mark?.claimedUntil, 0, "the lapsed claim ended");
      const again = await callOver(b, "get_command_result", { jobId });
      assert.equal(again.data.state, "lost", again.text);
      const next = await callOver(b, "run_command", { paneId: p, command: "echo NEXT-RAN" });
      assert.equal(next.isError, false, `after the advised wait, refused: ${next.summary}`);
      assert.equal(next.data.output, "NEXT-RAN", next.text);
    }
    const shown = await t.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", p);
    assert.doesNotMatch(shown, /SHOULD-NOT-RUN/, `nothing was typed under ${value}`);
    assert.equal(await runMark(t, p), "", "the next command's mark given back");
  }));

Deno.test("run_command SIGKILLed after its claim, before typing: once the claim lapses the next run_command takes the pane at once", () =>
  withKilledClaim(async ({ t, p, claim, startB }) => {
    const b = await startB();
    await lapsed(claim);
    const next = await callOver(b, "run_command", { paneId: p, command: "echo NEXT-RAN" });
    assert.equal(next.isError, false, next.text);
    assert.equal(next.data.output, "NEXT-RAN", next.text);
    const job = await callOver(b, "get_command_result", { jobId: claim.jobId });
    assert.equal(job.data.state, "lost", job.text);
    const shown = await t.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", p);
    assert.doesNotMatch(shown, /SHOULD-NOT-RUN/, "nothing was typed");
  }));

Deno.test("run_command: an earlier version's mark (job, then its call's deadline) is read as it always was", () =>
  withKilledClaim(async ({ t, p, claim, startB }) => {
    // The same job, not begun, as an earlier version left it: waited on for a minute more.
    await t.tmux(
      "set-option",
      "-p",
      "-t",
      p,
      "@tmux-mcp-run",
      markValue(claim.jobId, Date.now() + 60_000),
    );
    const b = await startB();
    await lapsed(claim);
    const refused = await callOver(b, "run_command", { paneId: p, command: "echo NEXT-RAN" });
    assert.equal(refused.isError, true, refused.text);
    assert.match(refused.summary, /busy with a command another run_command typed .*waits on it/);
  }));

// The step that types checks in tmux that the pane's mark is still the call's claim: a claim
// another call judged lapsed meanwhile (and took, or a reader of the job ended) types nothing.
// Here the test changes the mark while the step is held, as that other call would.
for (
  const [taker, taken, said] of [
    [
      "another run_command took it",
      (_job: string) => claimValue(OTHER_JOB, Date.now() + CLAIM_MS),
      /taken by another run_command/,
    ],
    ["a reader of the job ended it", (job: string) => claimValue(job, 0), /claim .*lapsed/],
  ] as const
) {
  Deno.test(`run_command whose claim lapsed before its held typing step (${taker}): it types nothing`, async () => {
    const t = await TestTmux.start();
    const gate = await HookGate.make();
    const a = await startOn(t.socket);
    try {
      const p = t.ids.paneId;
      await callOver(a, "list_panes", {}); // the control connection warm: the step goes over it
      // A person's hook after set-buffer holds the typing step's line after its fill, before
      // the check that the pane is still the call's.
      await t.tmux("set-hook", "-g", "after-set-buffer", gate.command);
      const slow = callOver(a, "run_command", {
        paneId: p,
        command: "echo A-SHOULD-NOT-RUN",
        timeoutMs: 120_000,
      });
      await waitFor(() => gate.began(), "the typing step to be held");
      const claim = parseMark(await runMark(t, p));
      assert.ok(claim !== null && claim.claimedUntil !== null, "still its claim");
      const value = taken(claim.jobId);
      await t.tmux("set-option", "-p", "-t", p, "@tmux-mcp-run", value);
      await gate.open();
      const refused = await slow;
      assert.equal(refused.isError, true, refused.text);
      assert.match(refused.summary, /Nothing was typed/, refused.text);
      assert.match(refused.summary, said, refused.text);
      const shown = await t.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", p);
      assert.doesNotMatch(shown, /A-SHOULD-NOT-RUN/, "the slow call typed its command");
      assert.equal(await runMark(t, p), value, "the mark as the other call left it");
    } finally {
      await gate.open();
      await a.kill();
      await t.kill();
      await gate.remove();
    }
  });
}

// A slow but live claimant (a person's hook holds its typing step past the claim's 10 s) types
// in the instant between a reader's read of the lapsed claim and the reader's conditional end
// of it. The reader's end does nothing (the mark is the typed one by then): the reader reads
// the job again, and never tells the model it was never typed while the command runs.
Deno.test("run_command's slow claimant types in the instant after a reader read its lapsed claim: the reader does not call the job never typed", async () => {
  const t = await TestTmux.start();
  const claimGate = await HookGate.make();
  const typingGate = await HookGate.make();
  const readerGate = await HookGate.make();
  const a = await startOn(t.socket);
  const b = await startOn(t.socket);
  try {
    const p = t.ids.paneId;
    await callOver(a, "list_panes", {});
    await callOver(b, "list_panes", {});
    // Its C-c step (which puts the claim on) held by a person's hook after set-option for most
    // of the claim's 10 s (less than a step may take over control mode), then its typing step
    // held after its fill, before its check that the claim is still its, until past the claim.
    await t.tmux("set-hook", "-g", "after-set-option", claimGate.command);
    await t.tmux("set-hook", "-g", "after-set-buffer", typingGate.command);
    const slow = callOver(a, "run_command", {
      paneId: p,
      command: "echo A-RAN-$((6*7))",
      timeoutMs: 60_000,
    });
    await waitFor(() => claimGate.began(), "A's claim step to be held");
    const claimValue = await runMark(t, p);
    const claim = parseMark(claimValue);
    assert.ok(claim !== null && claim.claimedUntil !== null, "A's claim");
    await waitFor(() => Date.now() > claim.claimedUntil! - 3_500, "most of the claim to pass");
    await claimGate.open();
    await t.tmux("set-hook", "-gu", "after-set-option");
    await waitFor(() => typingGate.began(), "A's typing step to be held");
    await lapsed(claim);
    // B's read of the pane's mark (display-message of #{@tmux-mcp-run}) is held right after it
    // has read it: the moment at which A's step, released, may run.
    await t.tmux(
      "set-hook",
      "-g",
      "after-display-message",
      `if-shell -F '#{m:*@tmux-mcp-run*,#{hook_arguments}}' "${readerGate.command}"`,
    );
    const reader = callOver(b, "get_command_result", { jobId: claim.jobId });
    await waitFor(() => readerGate.began(), "B's read of the mark to be held");
    await t.tmux("set-hook", "-gu", "after-display-message");
    await typingGate.open();
    await t.tmux("set-hook", "-gu", "after-set-buffer");
    // A's step has run once the claim is no longer the pane's mark (typed, or already given
    // back once the command ended): nothing else changes it while B is held.
    await waitFor(async () => (await runMark(t, p)) !== claimValue, "A's typing step to run");
    await readerGate.open();
    const read = await reader;
    const ran = await slow;
    assert.equal(ran.isError, false, `A's run: ${ran.text}`);
    assert.equal(ran.data.output, "A-RAN-42", ran.text);
    // The reader's verdict must not contradict what happened: the command was typed and ran.
    assert.doesNotMatch(
      String(read.data.lostReason ?? ""),
      /never typed/,
      `B told the model the job was never typed and the pane free: ${read.text}`,
    );
    assert.notEqual(read.data.state, "lost", read.text);
  } finally {
    await claimGate.open();
    await typingGate.open();
    await readerGate.open();
    await a.kill();
    await b.kill();
    await t.kill();
    await claimGate.remove();
    await typingGate.remove();
    await readerGate.remove();
  }
});
