/**
 * Each tmux server's waiting lines, which a call passes before its tmux process starts: a bound
 * on how many of that server's tmux processes run at once ({@link ServerGates}), and the lane
 * its structural commands take one at a time ({@link StructureLanes}). Per server, so one that
 * stops answering holds up only its own calls; a server's entry goes once no call holds it.
 *
 * @module
 */

import { Turns } from "./turns.ts";
import { TmuxError } from "./tmux_error.ts";
import { addressKey, type ServerAddress } from "./server_address.ts";

/** A counting semaphore, so a search over 400 panes does not start 400 processes at once. */
class Gate {
  #free: number;
  #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  async acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}

/**
 * How many tmux processes may run at once for one tmux server: further calls to it wait their
 * turn (the runner's `maxConcurrent`).
 */
export class ServerGates {
  readonly #maxConcurrent: number;
  /** Per server (addressKey), its processes' gate and the calls holding or awaiting it. */
  readonly #gates = new Map<string, { gate: Gate; users: number }>();

  /** Gates of `maxConcurrent` processes each, one per server as it is first used. */
  constructor(maxConcurrent: number) {
    this.#maxConcurrent = maxConcurrent;
  }

  /** Waits for a turn to run a process for server `key`; returns what ends the turn. */
  async turn(key: string): Promise<() => void> {
    let entry = this.#gates.get(key);
    if (!entry) {
      entry = { gate: new Gate(this.#maxConcurrent), users: 0 };
      this.#gates.set(key, entry);
    }
    const held = entry;
    held.users++;
    await held.gate.acquire();
    return () => {
      held.gate.release();
      if (--held.users === 0 && this.#gates.get(key) === held) this.#gates.delete(key);
    };
  }
}

/**
 * Per server, the structural commands' turns: why they go one at a time is structure.ts's
 * story ({@link TmuxRunner.inStructureLane}).
 */
export class StructureLanes {
  readonly #lanes = new Map<string, Turns>();

  /**
   * Runs `fn` once every step taken before it for the server at `address` has settled, and
   * holds the next until `fn` settles. Cancelled while waiting, it throws without running `fn`.
   */
  async take<T>(
    address: ServerAddress,
    fn: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const key = addressKey(address);
    let lane = this.#lanes.get(key);
    if (!lane) this.#lanes.set(key, lane = new Turns());
    try {
      return await lane.take(
        fn,
        signal,
        () => new TmuxError("cancelled", "The call was cancelled."),
      );
    } finally {
      if (lane.idle) this.#lanes.delete(key);
    }
  }
}
