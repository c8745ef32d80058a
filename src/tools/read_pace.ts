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
 * Output that keeps coming for long is read less and less often, down to one read per
 * `longest`: the interval doubles with each second of steady reads, and a quiet spell (no read
 * for two intervals) brings it back. Every read is a tmux command, which tmux also writes into
 * its message log (a person's `show-messages`, 1 000 entries): a wait on a build printing for a
 * minute made 3 000 of them at one per 20 ms, and tmux and this server spent their CPU on them;
 * a wait still wakes within `longest` of its text.
 *
 * @module
 */

/** Steady reads for this long double the interval (up to the longest). */
const STEADY_DOUBLING_MS = 1_000;

/** See the module. */
export class ReadPace {
  readonly #interval: number;
  readonly #burst: number;
  readonly #longest: number;
  /** The interval now: `#interval`, doubled with each second of steady reads. */
  #current: number;
  /** When the steady reads began (a read after a quiet spell). */
  #steadySince = 0;
  /** Reads the bucket holds (a fraction while it refills). */
  #tokens: number;
  /** When the last read began (a `performance.now()` time). */
  #at = -Infinity;

  constructor(interval: number, burst: number, longest = interval) {
    this.#interval = interval;
    this.#burst = burst;
    this.#longest = Math.max(interval, longest);
    this.#current = interval;
    this.#tokens = burst;
  }

  /**
   * A read ran from `began` to `ended` (`performance.now()` times): when the next read may
   * start.
   */
  after(began: number, ended: number): number {
    const gap = began - this.#at;
    if (gap > 2 * this.#current) this.#steadySince = began;
    const doublings = Math.floor((began - this.#steadySince) / STEADY_DOUBLING_MS);
    this.#current = Math.min(this.#longest, this.#interval * 2 ** Math.min(doublings, 30));
    this.#tokens = Math.min(this.#burst, this.#tokens + gap / this.#current) - 1;
    this.#at = began;
    const whole = this.#tokens >= 1 ? began : began + (1 - this.#tokens) * this.#current;
    return Math.max(ended + (ended - began), whole);
  }
}
