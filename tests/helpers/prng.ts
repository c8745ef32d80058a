/**
 * A small seeded generator, so a failing run can be replayed from its seed.
 *
 * @module
 */

/** Numbers below `n`, chances, and picks, all from one seed. */
export interface Rand {
  int(n: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function prng(seed: number): Rand {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { int, chance: (p) => next() < p, pick: (items) => items[int(items.length)] };
}
