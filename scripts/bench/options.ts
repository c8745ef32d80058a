/**
 * The bench's command line (see `scripts/bench.ts` for its usage) and the counts every figure
 * is taken over.
 *
 * @module
 */

import { parseArgs } from "node:util";

/** The parsed command line: which sections run, at which sizes, and where figures are written. */
export const { values } = parseArgs({
  args: Deno.args,
  options: {
    sizes: { type: "string", default: "10,100,1000" },
    runs: { type: "string", default: "30" },
    json: { type: "string" },
    markdown: { type: "string" },
    /** Only the live resources' section (subscription latency, RSS with panes printing). */
    "live-only": { type: "boolean", default: false },
    /** Only the SSH section (a tool call through SSH to localhost against local and ssh-per-call). */
    "ssh-only": { type: "boolean", default: false },
  },
});
/** Pane counts of the servers the per-size section builds. */
export const SIZES = values.sizes!.split(",").map(Number);
/** Calls per figure: at least 30, so a median and p90 mean something. */
export const RUNS = Math.max(30, Number(values.runs));
/** Calls before each figure that are not counted (the first call pays for loading). */
export const WARMUP = 1;
