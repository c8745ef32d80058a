import assert from "node:assert/strict";
import { failureText, KEEPS_RUNNING, ToolFailure } from "../mcp/errors.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { afterTyped, cancelledWhileRunning } from "./run_failure.ts";
import { ServerGone } from "./pane_probe.ts";

const JOB = "3-0123456789abcdef0123-a-b-c-d-e";

/** The failure's text as the model reads it. */
function shown(error: unknown): string {
  return failureText(error, { socketName: "s" });
}

Deno.test("afterTyped: a refusal of the call's own is thrown as it is", () => {
  const refusal = new ToolFailure("Pane %3 disappeared.", "list_panes lists the panes.");
  assert.equal(afterTyped(refusal, "%3", JOB, false, 'socket "s"'), refusal);
});

Deno.test("afterTyped: tmux that stopped answering: the command keeps running as a job, not 'try again'", () => {
  const stall = new TmuxError("timeout", "tmux did not answer within 10000 ms.");
  const text = shown(afterTyped(stall, "%3", JOB, false, 'socket "s"'));
  assert.doesNotMatch(text, /try again/i);
  assert.ok(text.includes(KEEPS_RUNNING), text);
  assert.match(text, new RegExp(`typed into %3 and keeps running as job ${JOB}`));
  assert.match(text, /Do not run it again/);
  assert.match(text, new RegExp(`get_command_result with jobId ${JOB}`));
});

Deno.test("afterTyped: a cancellation inside a tmux call reads as the wait's own cancellation", () => {
  const cancelled = new TmuxError("cancelled", "The call was cancelled.");
  assert.equal(
    shown(afterTyped(cancelled, "%3", JOB, false, 'socket "s"')),
    shown(cancelledWhileRunning(JOB)),
  );
});

Deno.test("afterTyped: another failure says the command was typed, without saying it runs", () => {
  const odd = new TmuxError("failed", "unknown format: #{x}");
  const text = shown(afterTyped(odd, "%3", JOB, false, 'socket "s"'));
  assert.match(text, new RegExp(`typed into %3 as job ${JOB}, but reading it failed`));
  assert.ok(!text.includes(KEEPS_RUNNING), text);
  const internal = shown(afterTyped(new Error("boom\nat x"), "%3", JOB, false, 'socket "s"'));
  assert.match(internal, /reading it failed: Internal error: boom\. /);
});

Deno.test("afterTyped: a command seen to end is not said to run, nor to be run again", () => {
  const stall = new TmuxError("timeout", "tmux did not answer within 10000 ms.");
  const text = shown(afterTyped(stall, "%3", JOB, true, 'socket "s"'));
  assert.match(text, new RegExp(`typed into %3 \\(job ${JOB}\\) no longer runs`));
  assert.match(text, /do not run it again before that/);
  assert.ok(!text.includes(KEEPS_RUNNING), text);
  assert.doesNotMatch(text, /try again/i);
});

Deno.test("afterTyped: a server gone took the pane and the job with it, and the command may have done it", () => {
  const label = 'socket "s"';
  const gone = [
    new TmuxError("no-server", "no server running on /tmp/tmux-1/s"),
    new ServerGone("The tmux server went away while %3 was watched.", "", label),
  ];
  for (const error of gone) {
    for (const over of [false, true]) {
      const text = shown(afterTyped(error, "%3", JOB, over, label));
      assert.match(text, new RegExp(`typed into %3 \\(job ${JOB}\\), and then the tmux server`));
      assert.match(text, /on socket "s" went away/);
      assert.match(text, /exit in a last pane, or tmux kill-server/);
      assert.match(text, /no exit status to read: the pane and the job went with the server/);
      assert.match(text, /check before running it again/);
      assert.ok(!text.includes(KEEPS_RUNNING), text);
      assert.doesNotMatch(text, /get_command_result/, "no job to read: it went with the server");
      assert.doesNotMatch(text, /try again/i);
      assert.equal(text.includes("before the command was seen to end"), !over, text);
    }
  }
  const restarted = new ServerGone("…", "", label, "pid 10 went, pid 11 came");
  const text = shown(afterTyped(restarted, "%3", JOB, false, label));
  assert.match(
    text,
    /Another server now answers on that socket \(it was restarted: pid 10 went, pid 11 came\); pane %3 there is another pane\./,
  );
});
