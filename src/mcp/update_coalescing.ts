/**
 * Coalescing of the announcements that resources changed: a burst of changes is one
 * announcement, and announcements about the same resource (or the list) come a few per second
 * at most.
 *
 * @module
 */

/** Least time between two notifications about the same resource (a few per second at most). */
export const MIN_UPDATE_GAP_MS = 250;
/** How long a first change waits for the rest of its burst before it is announced. */
export const UPDATE_GATHER_MS = 20;

/** Coalescing state of one announcement (a URI, or the list). */
interface Pending {
  last: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** The announcements waiting to be sent, by key (a URI, or the list's key). */
export class UpdateCoalescer {
  readonly #pending = new Map<string, Pending>();

  /** Drops the announcement waiting for `key`, if any. */
  cancel(key: string): void {
    const pending = this.#pending.get(key);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.#pending.delete(key);
  }

  /**
   * Runs `send` soon for `key`: after {@link UPDATE_GATHER_MS} (a burst is one announcement),
   * and never sooner than {@link MIN_UPDATE_GAP_MS} after the last one for the same key.
   */
  coalesce(key: string, send: () => void): void {
    let pending = this.#pending.get(key);
    if (!pending) this.#pending.set(key, pending = { last: -Infinity, timer: undefined });
    if (pending.timer !== undefined) return;
    const entry = pending;
    const wait = Math.max(UPDATE_GATHER_MS, entry.last + MIN_UPDATE_GAP_MS - performance.now());
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      const sent = entry.last = performance.now();
      send();
      // Forgotten once quiet for a gap, so announcements of many URIs leave nothing behind.
      setTimeout(() => {
        if (
          entry.timer === undefined && entry.last === sent && this.#pending.get(key) === entry
        ) {
          this.#pending.delete(key);
        }
      }, MIN_UPDATE_GAP_MS);
    }, wait);
  }
}
