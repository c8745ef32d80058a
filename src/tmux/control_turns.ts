/**
 * The control clients of one tmux server start and end one at a time, each once the last
 * has attached or ended, and a new one waits (briefly) for the clients still ending, a
 * retired predecessor's included: tmux 3.3a crashes when clients attach at once (see
 * {@link ClientTurns}). control_opening.ts takes these turns for each client it opens,
 * control_leaving.ts and control_server.ts for each they close.
 *
 * @module
 */

import type { Connection } from "./control_connection.ts";
import { ENDING_WAIT_MS } from "./control_limits.ts";
import { Turns } from "./turns.ts";

/**
 * The turns in which one server's control clients start and end. tmux 3.3a marks a client as
 * a control client at the first message of its handshake but sets up its control state only
 * at the last: a notification sent to every control client in between (another client
 * attaching, detaching, a window renamed) dereferences that missing state and the whole tmux
 * server dies with it (tmux/tmux#4980; 8 control clients attaching at once crashed it within
 * 150 rounds here). Starting ours in turn, each once the last has attached or ended, keeps
 * them from doing that to one another.
 */
export class ClientTurns {
  readonly #turns = new Turns();
  readonly #ending = new Set<Promise<void>>();

  /** `ending`: a retired predecessor's clients, still ending: none starts before they are gone. */
  constructor(ending?: Promise<void>) {
    if (ending) this.#ending.add(ending);
  }

  /** Runs `step` (a control client starting or ending) once every earlier one is over. */
  inTurn<T>(step: () => Promise<T>): Promise<T> {
    return this.#turns.take(async () => {
      if (this.#ending.size > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          Promise.allSettled(this.#ending),
          new Promise((r) => timer = setTimeout(r, ENDING_WAIT_MS)),
        ]);
        clearTimeout(timer);
      }
      return await step();
    });
  }

  /** Remembers a connection's client as ending until it has exited. */
  end(connection: Connection): void {
    const exited = connection.done.catch(() => {});
    this.#ending.add(exited);
    exited.then(() => this.#ending.delete(exited));
  }
}
