import assert from "node:assert/strict";
import { failureText, KEEPS_RUNNING, ToolFailure } from "../mcp/errors.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { afterTyped, cancelledWhileRunning } from "./run_failure.ts";

const JOB = "3-0123456789abcdef0123-a-b-c-d-e";

/** The failure's text as the model reads it. */
function shown(error: unknown): string {
  return failureText(error, { socketName: "s" });
}

Deno.test("afterTyped: a refusal of the call's own is thrown as it is", () => {
  const refusal = new ToolFailure("Pane %3 disappeared.", "list_panes lists the panes.");
  assert.equal(afterTyped(refusal, "%3", JOB, false), refusal);
});

Deno.test("afterTyped: tmux that stopped answering: the command keeps running as a job, not 'try again'", () => {
  const stall = new TmuxError("timeout", "tmux did not answer within 10000 ms.");
  const text = shown(afterTyped(stall, "%3", JOB, false));
  assert.doesNotMatch(text, /try again/i);
  assert.ok(text.includes(KEEPS_RUNNING), text);
  assert.match(text, new RegExp(`typed into %3 and keeps running as job ${JOB}`));
  assert.match(text, /Do not run it again/);
  assert.match(text, new RegExp(`get_command_result with jobId ${JOB}`));
});

Deno.test("afterTyped: a cancellation inside a tmux call reads as the wait's own cancellation", () => {
  const cancelled = new TmuxError("cancelled", "The call was cancelled.");
  assert.equal(
    shown(afterTyped(cancelled, "%3", JOB, false)),
    shown(cancelledWhileRunning(JOB)),
  );
});

Deno.test("afterTyped: another failure says the command was typed, without saying it runs", () => {
  const gone = new TmuxError("no-server", "no server running on /tmp/tmux-1/s");
  const text = shown(afterTyped(gone, "%3", JOB, false));
  assert.match(text, new RegExp(`typed into %3 as job ${JOB}, but reading it failed`));
  assert.ok(!text.includes(KEEPS_RUNNING), text);
  const internal = shown(afterTyped(new Error("boom\nat x"), "%3", JOB, false));
  assert.match(internal, /reading it failed: Internal error: boom\. /);
});

Deno.test("afterTyped: a command seen to end is not said to run, nor to be run again", () => {
  const stall = new TmuxError("timeout", "tmux did not answer within 10000 ms.");
  const text = shown(afterTyped(stall, "%3", JOB, true));
  assert.match(text, new RegExp(`typed into %3 \\(job ${JOB}\\) no longer runs`));
  assert.match(text, /do not run it again before that/);
  assert.ok(!text.includes(KEEPS_RUNNING), text);
  assert.doesNotMatch(text, /try again/i);
});
