/**
 * How samples are taken and summed up: a call timed over the runs after warm-up, two ways of
 * doing the same work timed in turn, and a median and p90 of the times.
 *
 * @module
 */

import { RUNS, WARMUP } from "./options.ts";

/** Median and p90 of `samples` (nearest rank), the two figures every row gives. */
export function stats(samples: number[]): { median: number; p90: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p90: at(0.9) };
}

/** Times `fn` over `runs` calls after {@link WARMUP} uncounted ones; `i` is negative in warm-up. */
export async function time(fn: (i: number) => Promise<unknown>, runs = RUNS): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await fn(-1 - i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn(i);
    samples.push(performance.now() - t0);
  }
  return samples;
}

/**
 * Two ways of doing the same work, timed in turn call by call (after warming both), so each
 * sees the machine as the other does: timing one block after the other lets a change in the
 * machine's load between the blocks show up as a difference between them.
 */
export async function sideBySide(
  ours: (i: number) => Promise<unknown>,
  floor: (i: number) => Promise<unknown>,
  runs = RUNS,
): Promise<[number[], number[]]> {
  for (let i = 0; i < WARMUP; i++) {
    await ours(-1 - i);
    await floor(-1 - i);
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    await ours(i);
    a.push(performance.now() - t0);
    t0 = performance.now();
    await floor(i);
    b.push(performance.now() - t0);
  }
  return [a, b];
}
