/**
 * What an operator is told of a tmux server's control channel ({@link ControlEvent}, handed on
 * by control.ts's observeControl): the connection lost or regained, the server gone or back,
 * each in one sentence. Whether a lost connection means the server is gone is asked of tmux
 * first. control_opening.ts reports them as a server's clients come and go.
 *
 * @module
 */

import type { TmuxRunner } from "./run.ts";
import { TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";

/** What an operator may want to know about a tmux server's control channel. */
export interface ControlEvent {
  /** `lost`/`regained`: the control connection; `gone`/`back`: the tmux server itself. */
  readonly kind: "lost" | "regained" | "gone" | "back";
  readonly address: ServerAddress;
  /** One sentence, without anything a pane wrote. */
  readonly message: string;
  /**
   * A connection that ended as tmux ends every client whose session goes (killed, or its last
   * window closed: a kill of tmux-mcp's own may do it): nothing is wrong, said as information.
   */
  readonly routine?: boolean;
}

/**
 * What a connection that ended without our closing it is reported as: the server gone (it
 * answered that nothing runs on its socket) or the connection lost. A check that got no answer
 * at all (an SSH connection frozen or dropped, a server that does not answer in time) proves
 * nothing gone: that is the connection lost, said as such. The server it was attached to
 * (`seat`: that server's pid, and the session it sat in) running on without that session ended
 * it as tmux ends every client of a session that goes: said so, as routine.
 */
export async function lostEvent(
  runner: TmuxRunner,
  address: ServerAddress,
  seat?: { readonly sessionId: string; readonly serverPid: number | null },
): Promise<ControlEvent> {
  const host = address.host;
  // The server's pid on a line of its own: a server left with no session at all (exit-empty
  // off) lists none, and is the same server all the same.
  let [pid, ...sessions]: string[] = [];
  const state = await runner.exec(address, [
    "display-message",
    "-p",
    "#{pid}",
    ";",
    "list-sessions",
    "-F",
    "#{session_id}",
  ], {
    timeoutMs: 5_000,
    aliasUnchecked: true, // a lost connection's read: a read of the aliases may wait on it
  })
    .then(
      (r): "running" | "gone" | "silent" => {
        if (r.code !== 0) return "gone";
        [pid, ...sessions] = new TextDecoder().decode(r.stdout).split("\n");
        return "running";
      },
      (error: unknown) =>
        error instanceof TmuxError && (error.kind === "unreachable" || error.kind === "timeout")
          ? "silent"
          : "gone",
    );
  const sat = seat && /^\$\d+$/.test(seat.sessionId) && seat.serverPid !== null ? seat : null;
  // The same server (a new one on the socket numbers its sessions anew), without that session.
  if (
    state === "running" && sat && pid === String(sat.serverPid) &&
    !sessions.includes(sat.sessionId)
  ) {
    return {
      kind: "lost",
      address,
      message: `control connection ended with its session ${sat.sessionId} (killed, or its ` +
        "last window closed); the next use connects again",
      routine: true,
    };
  }
  const message = state === "running"
    ? "control connection lost; the next use connects again"
    : state === "silent"
    ? (host === undefined
      ? "control connection lost; the tmux server does not answer (it may be stopped)"
      : `control connection lost; host ${JSON.stringify(host)} does not answer over SSH ` +
        "(the connection is down or frozen), so whether its tmux server runs is unknown")
    : "the tmux server is gone";
  return state === "gone" ? { kind: "gone", address, message } : { kind: "lost", address, message };
}

/**
 * A client connected again after `was` was reported ({@link lostEvent}): reported as the
 * server back, or the connection regained.
 */
export function backEvent(was: "lost" | "gone", address: ServerAddress): ControlEvent {
  return was === "gone"
    ? { kind: "back", address, message: "the tmux server is back" }
    : { kind: "regained", address, message: "control connection regained" };
}
