/**
 * A sleep that news can end early, and that news which came while nobody slept ends at once.
 *
 * A watch sleeps between its looks at the pane and is woken when output arrives; but it also
 * awaits tmux (a check that the pane lives, a read of its rows), and output that arrives then
 * finds nobody asleep. Dropped, that wake left the output unreported until the watch's next
 * timer (its check, half a second later): a wait_for_idle counted its quiet from then and
 * answered up to half a second late. Kept, it ends the next sleep before it begins.
 *
 * @module
 */

/** See the module. */
export class Waker {
  #wake: (() => void) | null = null;
  #missed = false;

  /** Ends the sleep under way, or the next one when none is. */
  wake(): void {
    if (this.#wake) this.#wake();
    else this.#missed = true;
  }

  /**
   * Forgets a wake that came while nobody slept: the sleeper is about to look at everything a
   * wake can announce, so a wake from before this look has been answered.
   */
  looking(): void {
    this.#missed = false;
  }

  /**
   * Sleeps `ms` (at least 0), until {@link wake}, or until `signal` aborts; at once when a wake
   * came since the last {@link looking} with nobody asleep.
   */
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#missed || signal.aborted) {
      this.#missed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done, { once: true });
      this.#wake = done;
    });
  }
}
