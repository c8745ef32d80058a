/**
 * How the runner's close waits for what its owners give back before their children are killed:
 * the early hooks, begun as soon as the process knows it is to stop (an undo on an SSH host,
 * whose tmux starts after the remote shell's start-up files), and the hooks run at the close
 * itself (a control connection's goodbye, a local undo). What they give back is a person's
 * setting, worth the wait; but the process still ends within a second of being told to stop
 * (DESIGN), so every wait here is bounded, by a wait in milliseconds or by a deadline shared
 * with the rest of the exit (serve.ts).
 *
 * @module
 */

/**
 * How long after the close begins ({@link CloseHooks.begin}) its early hooks are waited for at
 * most, when the close is given a wait rather than a {@link CloseDeadline}.
 */
export const BEGUN_CLOSE_MS = 600;

/**
 * When each step of a close must be over, as `performance.now()` times: the exit's one deadline
 * cut into the runner's share of it (serve.ts).
 */
export interface CloseDeadline {
  /** The hooks, early ones and those of the close itself, are waited for until then. */
  readonly hooksBy: number;
  /** The children, once killed, are waited for until then. */
  readonly by: number;
}

/** Resolves once `promise` settles, or after `ms` (at least 0), whichever comes first. */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    promise.catch(() => {}),
    new Promise((resolve) => timer = setTimeout(resolve, Math.max(0, ms))),
  ]);
  clearTimeout(timer);
}

/** The hooks a runner runs as it closes, and the bounded wait for them. */
export class CloseHooks {
  readonly #atClose = new Set<() => Promise<void>>();
  readonly #early = new Set<() => Promise<void>>();
  /** The early hooks {@link begin} started, settled, and when it started them. */
  #begun: { settled: Promise<unknown> | null; at: number } | null = null;

  /** Registers `hook` to run at the close; returns an unregister function. */
  onClose(hook: () => Promise<void>): () => void {
    this.#atClose.add(hook);
    return () => this.#atClose.delete(hook);
  }

  /** Registers `hook` to run when the close begins; returns an unregister function. */
  onBegin(hook: () => Promise<void>): () => void {
    this.#early.add(hook);
    return () => this.#early.delete(hook);
  }

  /** Starts the early hooks, once; returns them settled, and when they began. */
  begin(): { settled: Promise<unknown> | null; at: number } {
    if (!this.#begun) {
      const hooks = [...this.#early];
      this.#early.clear();
      this.#begun = {
        settled: hooks.length > 0 ? Promise.allSettled(hooks.map((hook) => hook())) : null,
        at: performance.now(),
      };
    }
    return this.#begun;
  }

  /**
   * Begins the close if it has not begun, runs the close's own hooks, and resolves once they
   * and the early ones have settled or their time is up: with a wait, `within` ms for the
   * close's hooks and {@link BEGUN_CLOSE_MS} from their beginning for the early ones; with a
   * deadline, both until its `hooksBy`. With no hook at all it resolves without waiting (a call
   * racing the close is aborted at once, as before the hooks existed).
   */
  async run(within: number | CloseDeadline): Promise<void> {
    const begun = this.begin();
    const hooks = [...this.#atClose];
    this.#atClose.clear();
    const now = performance.now();
    const hooksBy = typeof within === "number" ? now + within : within.hooksBy;
    const earlyBy = typeof within === "number" ? begun.at + BEGUN_CLOSE_MS : within.hooksBy;
    const waits: Promise<void>[] = [];
    if (hooks.length > 0) {
      waits.push(settledWithin(Promise.allSettled(hooks.map((hook) => hook())), hooksBy - now));
    }
    if (begun.settled) waits.push(settledWithin(begun.settled, earlyBy - now));
    if (waits.length > 0) await Promise.all(waits);
  }
}
