/**
 * How a control client of ours leaves tmux once attached: as a detach, its input's end of file
 * only after.
 *
 * tmux 3.3a keeps a control client that ended by its end of file (or a signal) pointing at the
 * session it was in for as long as a command started for it waits on a job: a person's
 * `client-attached`, `client-session-changed` or `after-<command>` hook running `run-shell`
 * (not `-b`). Should that session go meanwhile (the person kills it, or its last window), the
 * job's end makes the server read the session's current window, gone, and the whole server
 * crashes, taking every session with it (control_leave_test.ts pins it). A detach takes the
 * client out of its session before it goes, and the job's end then finds none.
 *
 * The detach names the client: `detach-client` with no target detaches the client tmux judges
 * current, which is a person's when the sender has no session (a control client whose session
 * went), and a format guard would not help, since formats too read that client. A client just
 * attached, in the same command line, is the one exception: nothing can happen between the
 * attach and the next command of its line, so it is the current client then
 * ({@link LEAVE_AT_ONCE}).
 *
 * A client whose commands are held up (a hook's job after one of them) runs its detach only
 * once they are done: it is given {@link LEAVE_WAIT_MS} to go, then its end of file is sent
 * anyway (the job, should it still run then, may still meet a session gone, as before).
 *
 * @module
 */

import { controlLine } from "./command_line.ts";

/**
 * The command that makes the control client named `clientName` leave as a detach, as a line
 * for that client to send (without its newline); null for a name tmux gives no client of ours
 * (`client-<pid>`: a client whose input is a pipe), which is then left to its end of file.
 */
export function leaveLine(clientName: string): string | null {
  return /^client-[1-9]\d*$/.test(clientName)
    ? controlLine(["detach-client", "-t", clientName])
    : null;
}

/**
 * What ends a momentary client's command line (`attach-session ...` then this): it leaves as a
 * detach the moment it attached. Only when the attach succeeded: tmux runs no command of a line
 * after one that failed.
 */
export const LEAVE_AT_ONCE: readonly string[] = [";", "detach-client"];

/** Longest a client is given to leave as a detach before its end of file is sent. */
export const LEAVE_WAIT_MS = 1_000;

/**
 * Asks an attached control client to leave (`send` writes its {@link leaveLine}), then
 * waits until it has `exited`, {@link LEAVE_WAIT_MS} at most. Returns whether it left; its
 * input is the caller's to close either way.
 */
export async function leaveAsDetach(
  send: () => Promise<unknown>,
  exited: Promise<unknown>,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), LEAVE_WAIT_MS);
  });
  try {
    // Within the bound too: a write to a client that stopped reading its input may wait.
    send().catch(() => {});
    return await Promise.race([exited.then(() => true, () => true), bound]);
  } finally {
    clearTimeout(timer);
  }
}
