/**
 * The bench's command line (its usage is {@link HELP}, as `scripts/bench.ts` describes it) and
 * the counts every figure is taken over. Imported first, so that `--help` or a command line the
 * bench cannot take ends it before any tmux server is built.
 *
 * @module
 */

import { commandLine, refuse, wholeNumber } from "../cli.ts";

/** What `deno task bench --help` prints. */
export const HELP = `deno task bench — what a tool call costs, against the floor of tmux itself

Usage: deno task bench [--sizes 10,100,1000] [--runs 30] [--json FILE] [--markdown FILE]
       [--live-only | --ssh-only] [--help]

For each size it builds a private tmux server of that many panes (spread over sessions and
windows, each pane holding 2 000 lines of scrollback and a few known marker lines), starts the
real server process with exactly the start task's flags, drives it through MCP over stdio, and
prints median and p90 of each call beside the same work done with the plain tmux command line
(one tmux process per call) and the ratio of the two. Then the deep history, the readers over
rows that print 21 bytes a cell (what each holds), the live resources and SSH to localhost. Takes minutes; runs with --allow-all (it writes straight to a
pane's terminal device to time wake-ups).

Options:
  --sizes LIST     pane counts of the servers built, comma-separated (default 10,100,1000)
  --runs N         calls per figure after warm-up; at least 30 are made (default 30)
  --json FILE      write every figure and the machine to FILE as JSON
  --markdown FILE  rewrite FILE (BENCHMARKS.md) from this run's figures, keeping the sections
                   others wrote (with --ssh-only: only its SSH section)
  --live-only      only the live resources' section (subscription latency, RSS with panes
                   printing)
  --ssh-only       only the SSH section (a tool call through SSH to localhost against local
                   and ssh-per-call)
  --help, -h       this text

Ends the tmux servers it built after each section, and when interrupted.
`;

/** The parsed command line: which sections run, at which sizes, and where figures are written. */
export const { values } = commandLine("bench", HELP, {
  sizes: { type: "string", default: "10,100,1000" },
  runs: { type: "string", default: "30" },
  json: { type: "string" },
  markdown: { type: "string" },
  /** Only the live resources' section (subscription latency, RSS with panes printing). */
  "live-only": { type: "boolean", default: false },
  /** Only the SSH section (a tool call through SSH to localhost against local and ssh-per-call). */
  "ssh-only": { type: "boolean", default: false },
});
if (values["live-only"] && values["ssh-only"]) {
  refuse("bench", "--live-only or --ssh-only, not both");
}
/** Pane counts of the servers the per-size section builds. */
export const SIZES = values.sizes.split(",").map(Number);
if (!SIZES.every((n) => Number.isSafeInteger(n) && n >= 1)) {
  refuse("bench", `--sizes takes pane counts from 1, comma-separated, not "${values.sizes}"`);
}
/** Calls per figure: at least 30, so a median and p90 mean something. */
export const RUNS = Math.max(30, wholeNumber("bench", "runs", values.runs, 1)!);
/** Calls before each figure that are not counted (the first call pays for loading). */
export const WARMUP = 1;
