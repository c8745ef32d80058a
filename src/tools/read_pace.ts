/**
 * When a watch that reads a pane's rows may read them again.
 *
 * Output that keeps coming is read every `interval` at most, so what a wait asks of tmux stays
 * bounded however fast the pane writes. But a read after a quiet spell need not wait on the one
 * before it: a wait's first read (what came while it subscribed) found nothing, and the output
 * it waits for then came a few milliseconds later; with a plain interval the watch sat on it
 * until the interval was over (wait_for_text woke 23 ms after the text, where tmux had it in
 * 2), and run_command paid it at each of its steps (the new prompt, the typed line, the end
 * marker). So reads are paced as a bucket of `burst` reads refilled one per interval: after
 * quiet, `burst` reads may follow one another; under steady output, one per interval, as
 * before. Whatever the bucket holds, a read never starts sooner after the last one's end than
 * that read took: a slow tmux (a loaded server, a long capture) keeps as long again for others.
 *
 * @module
 */

/** See the module. */
export class ReadPace {
  readonly #interval: number;
  readonly #burst: number;
  /** Reads the bucket holds (a fraction while it refills). */
  #tokens: number;
  /** When the last read began (a `performance.now()` time). */
  #at = -Infinity;

  constructor(interval: number, burst: number) {
    this.#interval = interval;
    this.#burst = burst;
    this.#tokens = burst;
  }

  /**
   * A read ran from `began` to `ended` (`performance.now()` times): when the next read may
   * start.
   */
  after(began: number, ended: number): number {
    const refill = (began - this.#at) / this.#interval;
    this.#tokens = Math.min(this.#burst, this.#tokens + refill) - 1;
    this.#at = began;
    const whole = this.#tokens >= 1 ? began : began + (1 - this.#tokens) * this.#interval;
    return Math.max(ended + (ended - began), whole);
  }
}
