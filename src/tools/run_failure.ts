/**
 * What run_command says when its call fails once the command's line was typed: the command
 * runs (or ran) in the pane whatever went wrong in the call after that, so the failure must
 * never read as "nothing happened, try again" (a model that retries, here or in another pane,
 * runs it twice): it says the command was typed and names its job, which get_command_result
 * reads.
 *
 * @module
 */

import { KEEPS_RUNNING, ToolFailure } from "../mcp/errors.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { AFTER_GONE, GONE_BY_ITSELF, goneServer } from "./pane_probe.ts";

/** The hint of a failure whose command runs on: the job reads later, or stops. */
function jobHint(jobId: string): string {
  return `get_command_result with jobId ${jobId} reads it and waits for its end; ` +
    'send_keys keys: ["C-c"] interrupts it.';
}

/**
 * The call was cancelled while the command ran. The words {@link KEEPS_RUNNING} make a
 * cancelled task keep this failure as its status (task_store.ts).
 */
export function cancelledWhileRunning(jobId: string): ToolFailure {
  return new ToolFailure(
    `The call was cancelled; the command ${KEEPS_RUNNING} (job ${jobId}).`,
    jobHint(jobId),
  );
}

/**
 * What the call throws for `error`, raised after the command's line was typed into `paneId`
 * as job `jobId`: a refusal of its own (a ToolFailure) as it is; anything else (tmux that
 * stopped answering, a cancellation inside a tmux call, a lost server) as a failure that says
 * the command was typed. `over`: the call had already seen the command no longer run (it
 * ended, or never began). A server gone (`socketLabel` names it) took the command's pane and
 * job with it, which the failure says rather than only that the server went: the command
 * itself (`exit` in a last pane, `tmux kill-server`) may have ended it.
 */
export function afterTyped(
  error: unknown,
  paneId: string,
  jobId: string,
  over: boolean,
  socketLabel: string,
): unknown {
  const gone = goneServer(error, socketLabel, paneId);
  if (gone) {
    return new ToolFailure(
      `The command was typed into ${paneId} (job ${jobId}), and then the tmux server on ` +
        `${gone.label} went away${over ? "" : " before the command was seen to end"} ` +
        `(${GONE_BY_ITSELF}). There is no exit status to read: the pane and the job went with ` +
        `the server.${gone.restarted}`,
      `Whatever the command did before then stays done: check before running it again. ${AFTER_GONE}`,
    );
  }
  if (error instanceof ToolFailure) return error;
  const stopped = error instanceof TmuxError &&
    (error.kind === "timeout" || error.kind === "unreachable");
  const said = error instanceof TmuxError
    ? error.message
    : `Internal error: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`;
  // tmux's own complaint ends without a full stop; ours with one.
  const reason = /[.!?]$/.test(said) ? said : `${said}.`;
  if (over) {
    return new ToolFailure(
      `The command typed into ${paneId} (job ${jobId}) no longer runs, but ${
        stopped ? "tmux stopped answering" : "a read failed"
      } before the call's answer was complete: ${reason}`,
      `get_command_result with jobId ${jobId} says how it ended and reads its output` +
        `${stopped ? " once tmux answers" : ""}; do not run it again before that.`,
    );
  }
  if (error instanceof TmuxError && error.kind === "cancelled") return cancelledWhileRunning(jobId);
  if (stopped) {
    return new ToolFailure(
      `The command was typed into ${paneId} and ${KEEPS_RUNNING} as job ${jobId}, but tmux ` +
        `stopped answering while it ran: ${reason}`,
      `Do not run it again: once tmux answers, ${jobHint(jobId)}`,
    );
  }
  return new ToolFailure(
    `The command was typed into ${paneId} as job ${jobId}, but reading it failed: ${reason}`,
    `Do not run it again before get_command_result with jobId ${jobId} says whether it runs.`,
  );
}
