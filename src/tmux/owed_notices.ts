/**
 * The `%session-window-changed` notices tmux still owes this process's control clients, and
 * the session-ending commands that wait for them.
 *
 * tmux 3.3a queues the notice of a change of a session's current window in its global command
 * queue, and writes it, reading the session's current window then, once the queue reaches it.
 * A person's hook runs in that queue too: while a hook's shell command runs (a status-line
 * plugin's `run-shell` on `session-window-changed`), every notice queued behind it waits,
 * although the command that made the change was answered long ago. A session ended meanwhile
 * has no current window when its notice is written, and the whole tmux server dies, every
 * person's session with it (tmux/tmux#5243; structure.ts). Only a control client is written
 * to, and ours is attached.
 *
 * So around each structural command the current window of every session is read before and
 * after it, over a control connection of ours: a session whose current window changed is owed
 * one more notice than that connection had been written for it when the command was sent,
 * and tmux writes one to every control client for each change. A command that may end a
 * session waits, a bounded time, until no such notice is owed, and is refused once if one
 * still is (then forgotten: tmux also changes a window without any notice). A change the
 * person makes, or one a command undoes within itself, is not counted.
 *
 * @module
 */

import type { Connection } from "./control_connection.ts";
import { mayEndSession } from "./structure.ts";
import { cancelledCall, TmuxError } from "./tmux_error.ts";

/**
 * How long a command that may end a session waits for owed notices before it is refused: a
 * status-line plugin's command takes well under a second; one that takes longer is refused
 * rather than have a tool call hang on it.
 */
export const OWED_WAIT_MS = 3_000;

/** The format read around a structural command: each session and its current window. */
const CURRENT_WINDOWS = ["list-sessions", "-F", "#{session_id} #{window_id}"];

/** How a refusal for owed notices begins (errors.ts shows it as it is, not as tmux's). */
export const OWED_NOTICE_REFUSAL = "tmux has not yet told its control clients that";

/** A session's notice owed to a connection: written once it has counted `target` of them. */
interface Owed {
  readonly connection: Connection;
  readonly target: number;
}

/** The notices one tmux server still owes this process's control clients. */
export class OwedNotices {
  readonly #owed = new Map<string, Owed>();

  /**
   * Runs `send`, a structural command (`args`), counting the notices it makes owed to
   * `witness`, a live control connection of ours to that server. A command that may end a
   * session first waits for those already owed (see {@link OWED_WAIT_MS}). Without a witness
   * no control client of ours is attached, and nothing is owed to it.
   */
  async around<T>(
    witness: Connection | null,
    args: readonly string[],
    send: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    if (mayEndSession(args)) await this.#settled(signal);
    if (witness === null || !witness.attached) return await send();
    const counted = new Map(witness.windowNotices);
    const before = await currentWindows(witness);
    try {
      return await send();
    } finally {
      const after = before && await currentWindows(witness);
      for (const [sessionId, windowId] of after ?? []) {
        const was = before!.get(sessionId);
        if (was === undefined || was === windowId) continue;
        const owed = this.#owed.get(sessionId);
        const base = owed?.connection === witness ? owed.target : 0;
        this.#owed.set(sessionId, {
          connection: witness,
          target: Math.max(base, counted.get(sessionId) ?? 0) + 1,
        });
      }
    }
  }

  /** Sessions whose notice tmux may still owe; forgets the ones written, and lost clients'. */
  #pending(): string[] {
    for (const [sessionId, { connection, target }] of this.#owed) {
      if (connection.closed || (connection.windowNotices.get(sessionId) ?? 0) >= target) {
        this.#owed.delete(sessionId);
      }
    }
    return [...this.#owed.keys()];
  }

  /**
   * Waits until no notice is owed; throws (forgetting those still owed) once
   * {@link OWED_WAIT_MS} passed, or on `signal`.
   */
  async #settled(signal?: AbortSignal): Promise<void> {
    const until = performance.now() + OWED_WAIT_MS;
    for (let owed = this.#pending(); owed.length > 0; owed = this.#pending()) {
      if (signal?.aborted) throw cancelledCall();
      const left = until - performance.now();
      if (left <= 0) {
        // Refused once, then forgotten: tmux 3.3a also changes a current window without any
        // notice (swap-window, new-window -k run by a hook inside our command), and a debt
        // nothing pays would refuse every later kill on the server for good.
        for (const sessionId of owed) this.#owed.delete(sessionId);
        throw new TmuxError(
          "failed",
          `${OWED_NOTICE_REFUSAL} the current window of ${owed.join(", ")} changed: a ` +
            "hook's command (a status-line plugin's, say) may be holding its command queue, " +
            "and ending a session before it has would crash tmux 3.3a and every session on it " +
            "(tmux/tmux#5243); nothing was done. Calling again goes ahead: wait until no hook " +
            "command of the person's is running (or none was: tmux changes a window without " +
            "telling when a window is swapped).",
        );
      }
      await this.#change(left, signal);
    }
  }

  /** Resolves when an owing connection counts a notice or is lost, after `ms`, or on `signal`. */
  async #change(ms: number, signal?: AbortSignal): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    const connections = new Set([...this.#owed.values()].map((o) => o.connection));
    const wake = () => resolve();
    const timer = setTimeout(wake, ms);
    for (const c of connections) c.noticeListeners.add(wake);
    signal?.addEventListener("abort", wake, { once: true });
    try {
      await promise;
    } finally {
      clearTimeout(timer);
      for (const c of connections) c.noticeListeners.delete(wake);
      signal?.removeEventListener("abort", wake);
    }
  }
}

/** Each session's current window, read over `connection`; null when it could not be read. */
async function currentWindows(connection: Connection): Promise<Map<string, string> | null> {
  try {
    const result = await connection.exec(CURRENT_WINDOWS, { timeoutMs: 5_000 });
    if (result.code !== 0) return null;
    const windows = new Map<string, string>();
    for (const line of new TextDecoder().decode(result.stdout).split("\n")) {
      const [sessionId, windowId] = line.split(" ");
      if (sessionId && windowId) windows.set(sessionId, windowId);
    }
    return windows;
  } catch {
    return null;
  }
}
