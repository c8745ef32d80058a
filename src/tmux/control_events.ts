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
}

/**
 * What a connection that ended without our closing it is reported as: the server gone (it
 * answered that nothing runs on its socket) or the connection lost. A check that got no answer
 * at all (an SSH connection frozen or dropped, a server that does not answer in time) proves
 * nothing gone: that is the connection lost, said as such.
 */
export async function lostEvent(runner: TmuxRunner, address: ServerAddress): Promise<ControlEvent> {
  const host = address.host;
  const state = await runner.exec(address, ["display-message", "-p", "#{pid}"], {
    timeoutMs: 5_000,
    aliasUnchecked: true, // a lost connection's read: a read of the aliases may wait on it
  })
    .then(
      (r): "running" | "gone" | "silent" => r.code === 0 ? "running" : "gone",
      (error: unknown) =>
        error instanceof TmuxError && (error.kind === "unreachable" || error.kind === "timeout")
          ? "silent"
          : "gone",
    );
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
