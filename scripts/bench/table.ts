/**
 * The table the bench prints as it goes, one row per figure, and the rows it keeps for the
 * JSON and Markdown reports.
 *
 * @module
 */

import { stats } from "./timing.ts";

/** Prints a line at once (synchronously), so a long run shows its progress as it goes. */
export function out(line = ""): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

/** One figure: ours beside the plain tmux command line's, when there is one. */
export interface Row {
  size: number;
  operation: string;
  median: number;
  p90: number;
  floorMedian: number | null;
  floorP90: number | null;
  ratio: number | null;
}

/** Every figure recorded so far, in order, for the reports. */
export const rows: Row[] = [];

/**
 * Keeps a figure and prints its row: median and p90 of `samples`, and beside them those of
 * `floor` (the same work with tmux itself) and the ratio, or dashes when there is no floor.
 */
export function record(
  size: number,
  operation: string,
  samples: number[],
  floor: number[] | null,
): void {
  const s = stats(samples);
  const f = floor ? stats(floor) : null;
  rows.push({
    size,
    operation,
    median: s.median,
    p90: s.p90,
    floorMedian: f?.median ?? null,
    floorP90: f?.p90 ?? null,
    ratio: f ? s.median / f.median : null,
  });
  const fmt = (n: number) => n.toFixed(2).padStart(8);
  out(
    `${String(size).padStart(5)}  ${operation.padEnd(34)} ${fmt(s.median)} ${fmt(s.p90)}   ${
      f
        ? `${fmt(f.median)} ${fmt(f.p90)}   ${(s.median / f.median).toFixed(2).padStart(5)}x`
        : "       —        —       —"
    }`,
  );
}
