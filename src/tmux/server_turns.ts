/**
 * Each tmux server's waiting lines, which a call passes before its tmux process starts: a bound
 * on how many of that server's tmux processes run at once ({@link ServerGates}), and the lane
 * its structural commands take one at a time ({@link StructureLanes}). Per server, so one that
 * stops answering holds up only its own calls; a server's entry goes once no call holds it.
 *
 * @module
 */

import { Turns } from "./turns.ts";
import { cancelledCall } from "./tmux_error.ts";
import { addressKey, type ServerAddress } from "./server_address.ts";

/** How a call asks for a turn to run a tmux process. */
export interface TurnOptions {
  /**
   * A read repeated for as long as something waits (a polling wait's): it gets a turn only
   * when no other call waits for one, and never the last free one (see {@link Gate}).
   */
  readonly background?: boolean;
  /** Gives up waiting (the turn is then never taken) when this aborts. */
  readonly signal?: AbortSignal;
}

/**
 * A counting semaphore, so a search over 400 panes does not start 400 processes at once, with
 * two lines: one-off calls, and background reads behind them. Two hundred polling waits each
 * reading its pane every 100 ms would otherwise keep every turn taken and the line long, and a
 * `list_panes` would wait behind all of them (seconds, on a loaded machine); so a background
 * read starts only while no one-off call waits, and leaves one turn free for the next one.
 */
export class Gate {
  readonly #size: number;
  /** Turns taken, of either kind. */
  #held = 0;
  readonly #calls: (() => void)[] = [];
  readonly #reads: (() => void)[] = [];

  /** A gate of `size` turns. */
  constructor(size: number) {
    this.#size = size;
  }

  /** How many turns may be taken for a background read to get one: all but the last. */
  get #backgroundSize(): number {
    return this.#size > 1 ? this.#size - 1 : this.#size;
  }

  /** Takes a turn once one is free for its kind; rejects (cancelled) when `signal` aborts first. */
  acquire(options: TurnOptions): Promise<void> {
    const { background = false, signal } = options;
    if (signal?.aborted) return Promise.reject(cancelledCall());
    const free = background
      ? this.#calls.length === 0 && this.#held < this.#backgroundSize
      : this.#held < this.#size;
    if (free) {
      this.#held++;
      return Promise.resolve();
    }
    const line = background ? this.#reads : this.#calls;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = line.indexOf(start);
        if (at !== -1) line.splice(at, 1);
        reject(cancelledCall());
      };
      const start = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      line.push(start);
    });
  }

  /** Gives a turn back, to the next call waiting, else to the next background read. */
  release(): void {
    this.#held--;
    while (this.#calls.length > 0 && this.#held < this.#size) {
      this.#held++;
      this.#calls.shift()!();
    }
    while (
      this.#calls.length === 0 && this.#reads.length > 0 && this.#held < this.#backgroundSize
    ) {
      this.#held++;
      this.#reads.shift()!();
    }
  }
}

/**
 * How many tmux processes may run at once for one tmux server: further calls to it wait their
 * turn (the runner's `maxConcurrent`), background reads behind the others.
 */
export class ServerGates {
  readonly #maxConcurrent: number;
  /** Per server (addressKey), its processes' gate and the calls holding or awaiting it. */
  readonly #gates = new Map<string, { gate: Gate; users: number }>();

  /** Gates of `maxConcurrent` processes each, one per server as it is first used. */
  constructor(maxConcurrent: number) {
    this.#maxConcurrent = maxConcurrent;
  }

  /**
   * Waits for a turn to run a process for server `key`; returns what ends the turn. Throws a
   * cancelled {@link TmuxError} when `options.signal` aborts first.
   */
  async turn(key: string, options: TurnOptions = {}): Promise<() => void> {
    let entry = this.#gates.get(key);
    if (!entry) {
      entry = { gate: new Gate(this.#maxConcurrent), users: 0 };
      this.#gates.set(key, entry);
    }
    const held = entry;
    const done = () => {
      if (--held.users === 0 && this.#gates.get(key) === held) this.#gates.delete(key);
    };
    held.users++;
    try {
      await held.gate.acquire(options);
    } catch (error) {
      done();
      throw error;
    }
    return () => {
      held.gate.release();
      done();
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
        cancelledCall,
      );
    } finally {
      if (lane.idle) this.#lanes.delete(key);
    }
  }
}
