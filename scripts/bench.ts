/**
 * `deno task bench`: what a tool call costs, against the floor of tmux itself.
 *
 * For each size (default 10, 100 and 1 000 panes, spread over sessions and windows, each pane
 * holding 2 000 lines of scrollback and a few known marker lines) it builds a private tmux
 * server, starts the real server process with exactly the `start` task's flags, drives it
 * through MCP over stdio, and reports median and p90 over at least 30 calls after warm-up,
 * beside the same work done with the plain tmux command line (one tmux process per call: the
 * floor for a design that spawns tmux per call) and the ratio of the two. The two are timed in
 * turn, call by call, so a change in the machine's load weighs on both alike.
 *
 * Runs with --allow-all: it writes straight to a pane's terminal device to time wake-ups exactly.
 *
 * Usage: deno task bench [--sizes 10,100,1000] [--runs 30] [--json FILE] [--markdown FILE]
 *        [--live-only | --ssh-only] [--help] (the options: `--help`, from bench/options.ts)
 *
 * Each section lives in its own file under scripts/bench/: sizes.ts (the per-size figures, and
 * hook.ts for the hook's), deep.ts, heavy.ts, live.ts and ssh.ts; fixture.ts builds the tmux servers,
 * server.ts starts the server under test, timing.ts and table.ts take and print the figures, and
 * report.ts writes the JSON and BENCHMARKS.md.
 *
 * @module
 */

import { RUNS, SIZES, values, WARMUP } from "./bench/options.ts";
import { dispose, started, tmux } from "./bench/fixture.ts";
import { out } from "./bench/table.ts";
import { benchSize } from "./bench/sizes.ts";
import { benchDeep } from "./bench/deep.ts";
import { benchHeavy } from "./bench/heavy.ts";
import { benchLive } from "./bench/live.ts";
import { benchSsh } from "./bench/ssh.ts";
import { writeJson, writeMarkdown, writeSshSection } from "./bench/report.ts";

out(
  `tmux-mcp bench: sizes ${
    SIZES.join(", ")
  }; ${RUNS} calls per figure after ${WARMUP} warm-up; times in ms`,
);
out(
  `${"panes".padStart(5)}  ${"operation".padEnd(34)} ${"median".padStart(8)} ${
    "p90".padStart(8)
  }   ${"tmux med".padStart(8)} ${"tmux p90".padStart(8)}   ratio`,
);

// Stopped part way (Ctrl-C, a CI step's SIGTERM): the tmux servers it built go with it, as at
// the end of each section, instead of running on with thousands of panes.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    out(`bench: ${signal}: ending the ${started.size} tmux server(s) it started`);
    await Promise.all([...started.keys()].map((socket) => dispose(socket)));
    Deno.exit(signal === "SIGINT" ? 130 : 143);
  });
}

const benchStart = performance.now();
for (const size of values["live-only"] || values["ssh-only"] ? [] : SIZES) await benchSize(size);
if (!values["live-only"] && !values["ssh-only"]) {
  await benchDeep();
  await benchHeavy();
}
if (!values["ssh-only"]) await benchLive();
if (!values["live-only"]) await benchSsh();
const totalSeconds = (performance.now() - benchStart) / 1000;
out(`bench: ${totalSeconds.toFixed(1)} s in all`);

const machine =
  `${Deno.build.os} ${Deno.build.arch}, ${navigator.hardwareConcurrency} cores, deno ${Deno.version.deno}, ${
    (await tmux("tmux-mcp-bench-none", "-V").catch(() => "")).trim() || "tmux"
  }`;
if (values.json) await writeJson(values.json, machine);
if (values.markdown && values["ssh-only"]) {
  await writeSshSection(values.markdown);
} else if (values.markdown) {
  await writeMarkdown(values.markdown, machine, totalSeconds);
}
