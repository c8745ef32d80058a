/**
 * Steps taken one at a time, in the order they asked: the control clients of one tmux server
 * starting and ending (control_turns.ts), the commands that change a session's structure
 * (structure.ts).
 *
 * @module
 */

/** A queue of steps, each started once every earlier one has settled. */
export class Turns {
  #last: Promise<void> = Promise.resolve();
  #pending = 0;

  /** Whether no step is running or waiting. */
  get idle(): boolean {
    return this.#pending === 0;
  }

  /**
   * Runs `step` once every earlier step has settled, and holds the later ones until it has.
   * When `signal` aborts while it waits, the step never runs: `cancelled()` is thrown, and the
   * steps after it keep their order.
   */
  async take<T>(
    step: () => Promise<T>,
    signal?: AbortSignal,
    cancelled: () => Error = () => new Error("cancelled"),
  ): Promise<T> {
    const earlier = this.#last;
    const { promise: over, resolve } = Promise.withResolvers<void>();
    this.#last = earlier.then(() => over);
    this.#pending++;
    try {
      await (signal ? untilAborted(earlier, signal, cancelled) : earlier);
      return await step();
    } finally {
      this.#pending--;
      resolve();
    }
  }
}

/** `waited`, or `cancelled()` thrown as soon as `signal` aborts. */
async function untilAborted(
  waited: Promise<void>,
  signal: AbortSignal,
  cancelled: () => Error,
): Promise<void> {
  const aborted = Promise.withResolvers<never>();
  const onAbort = () => aborted.reject(cancelled());
  if (signal.aborted) onAbort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.race([waited, aborted.promise]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
