/**
 * `deno task bench:cold`: what a client waits for before it can show the tools, and what the
 * server then holds while idle. A client that negotiates the protocol version automatically
 * starts the server once more for its probe, so this cost is paid twice at every client start.
 *
 * Each run spawns the server (the bundle `deno task bundle` writes, as the binary embeds it,
 * under the `start` task's flags and, as the binary, without the project's config; or the
 * source with `--source`) and measures spawn → tools/list
 * answered: after the `initialize` handshake (protocol 2025-11-25), and, where the server speaks
 * it, as the first request of protocol 2026-07-28 (no handshake). Beside it, the runtime's own
 * start-up: `deno run` of an empty module under the same flags. The server's front desk answers
 * the opening while the SDK loads (src/mcp/front_desk.ts), so each run then also times a request
 * only the SDK answers (`prompts/list`): when the whole server is ready. Idle RSS is the resident
 * set once that is answered and the runtime has settled (the median over the runs).
 *
 * Usage: deno task bench:cold [--runs 20] [--source | --bundle DIR] [--against DIR] [--markdown]
 * [--help] (`--bundle DIR`: another build's bundle folder; `--against DIR`: a second build's
 * bundle, measured run for run alternately with the first, so that both see the same machine
 * load)
 *
 * @module
 */

import { startCommand, StdioServer } from "../tests/helpers/stdio.ts";
import { commandLine, refuse, wholeNumber } from "./cli.ts";
import { settledRss } from "./bench/server.ts";

const HELP = `deno task bench:cold — cold start and idle RSS of the server, under both protocols

Usage: deno task bench:cold [--runs 20] [--source | --bundle DIR] [--against DIR] [--markdown]
       [--help]

Each run spawns the server (the bundle deno task bundle writes, under the start task's flags
and without the project's config, as the binary runs it; or the source with --source) and
measures spawn → tools/list answered: after the initialize handshake (protocol 2025-11-25),
and, where the server speaks it, as the first request of protocol 2026-07-28. Then a request
only the SDK answers (prompts/list): when the whole server is ready. Beside it, deno run of an
empty module under the same flags. Prints median and p90 in ms and the idle RSS in MB (the
median over the runs) as a Markdown table; needs no tmux server.

Options:
  --runs N         runs per figure after one warm-up; at least 5 are made (default 20)
  --source         start main.ts from source instead of the bundle
  --bundle DIR     another build's bundle folder (default dist/bundle)
  --against DIR    a second build's bundle folder, measured run for run alternately with the
                   first, so that both see the same machine load
  --markdown       also print the machine (os, arch, cores, deno) under the table
  --help, -h       this text
`;

const { values } = commandLine("bench:cold", HELP, {
  runs: { type: "string", default: "20" },
  source: { type: "boolean", default: false },
  bundle: { type: "string" },
  against: { type: "string" },
  markdown: { type: "boolean", default: false },
});
if (values.source && values.bundle !== undefined) {
  refuse("bench:cold", "--source or --bundle, not both");
}
const RUNS = Math.max(5, wholeNumber("bench:cold", "runs", values.runs, 1)!);

function out(line = ""): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

const { cmd, args: startArgs } = startCommand();
// The binary reads no deno.json and no lock file: neither does a bundle run here, nor the empty
// module it is compared with. Finding and reading the project's config (when the bench runs in
// the project) would add ~1.5 MB of RSS and a few ms that no user's server pays.
const flags = [...startArgs.slice(0, -1), "--no-config"];
const bundle = values.bundle
  ? `${values.bundle.replace(/\/$/, "")}/main.js`
  : new URL("../dist/bundle/main.js", import.meta.url).pathname;
const target = values.source ? startArgs : [...flags, bundle];
if (!values.source && !(await Deno.stat(bundle).then(() => true, () => false))) {
  if (values.bundle !== undefined) refuse("bench:cold", `--bundle ${values.bundle}: no ${bundle}`);
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      `bench:cold: no ${bundle}: run \`deno task bundle\` first (or pass --source)\n`,
    ),
  );
  Deno.exit(1);
}
// No tmux server is needed: the server only runs `tmux -V` before it answers.
const socketArgs = ["--socket", `tmux-mcp-cold-${crypto.randomUUID().slice(0, 8)}`];
const against = values.against ? `${values.against.replace(/\/$/, "")}/main.js` : undefined;
if (against && !(await Deno.stat(against).then(() => true, () => false))) {
  refuse("bench:cold", `--against ${values.against}: no ${against}`);
}
/** The builds measured, alternately run for run. */
const builds = [
  { label: values.source ? "source" : bundle, args: [...target, ...socketArgs] },
  ...(against ? [{ label: against, args: [...flags, against, ...socketArgs] }] : []),
];
const env: Record<string, string> = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function p90(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)];
}

/** The 2026-07-28 `_meta` every request of that protocol carries. */
const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "tmux-mcp-bench", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Sample {
  /** Spawn until tools/list is answered. */
  readonly ms: number;
  /** Spawn until a request only the SDK answers (prompts/list, sent after tools/list) is. */
  readonly readyMs: number;
  readonly rss: number;
}

/** One cold start; returns null when the server does not speak the protocol asked for. */
async function once(
  serverArgs: string[],
  protocol: "2025-11-25" | "2026-07-28",
): Promise<Sample | null> {
  const t0 = performance.now();
  const s = new StdioServer(cmd, serverArgs, env);
  try {
    if (protocol === "2025-11-25") {
      const init = await s.request("initialize", {
        protocolVersion: protocol,
        capabilities: {},
        clientInfo: { name: "tmux-mcp-bench", version: "1" },
      });
      if (init.error) return null;
      await s.notify("notifications/initialized");
      const list = await s.request("tools/list");
      if (list.error) return null;
    } else {
      const list = await s.request("tools/list", { _meta: MODERN_META });
      if (list.error || list.result?.resultType !== "complete") return null;
    }
    const ms = performance.now() - t0;
    // The front desk answers the above while the SDK loads; this one waits for the SDK.
    const prompts = await s.request(
      "prompts/list",
      protocol === "2025-11-25" ? {} : { _meta: MODERN_META },
    );
    if (prompts.error) return null;
    const readyMs = performance.now() - t0;
    return { ms, readyMs, rss: await settledRss(s.child.pid) };
  } finally {
    await s.closeStdin();
  }
}

async function emptyModule(): Promise<number[]> {
  const empty = await Deno.makeTempFile({ prefix: "tmux-mcp-cold-", suffix: ".js" });
  try {
    const times: number[] = [];
    for (let i = 0; i < RUNS + 1; i++) {
      const t0 = performance.now();
      await new Deno.Command(cmd, { args: [...flags, empty], env, clearEnv: true }).output();
      if (i > 0) times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await Deno.remove(empty);
  }
}

const rows: string[] = [];
const row = (what: string, times: number[], rss?: number[]) => {
  const line = `| ${what} | ${median(times).toFixed(1)} | ${p90(times).toFixed(1)} | ${
    rss ? median(rss).toFixed(1) : "—"
  } |`;
  rows.push(line);
  out(line);
};

out(`cold start, ${RUNS} runs each; times in ms`);
for (const [i, build] of builds.entries()) out(`build ${i + 1}: ${build.label}`);
out("| start | median ms | p90 ms | idle RSS MB |");
out("|---|---:|---:|---:|");
row("deno run, empty module (runtime)", await emptyModule());
const PROTOCOLS = ["2025-11-25", "2026-07-28"] as const;
// Every build and protocol in turn within each run, so that all rows see the same load.
const samples: (Sample[] | null)[][] = builds.map(() => PROTOCOLS.map(() => []));
for (let i = 0; i < RUNS + 1; i++) {
  for (const [b, build] of builds.entries()) {
    for (const [p, protocol] of PROTOCOLS.entries()) {
      if (samples[b][p] === null) continue;
      const sample = await once(build.args, protocol);
      if (sample === null) samples[b][p] = null;
      else if (i > 0) samples[b][p]!.push(sample);
    }
  }
}
for (const [p, protocol] of PROTOCOLS.entries()) {
  for (const [b, perProtocol] of samples.entries()) {
    const taken = perProtocol[p];
    const what = (protocol === "2025-11-25"
      ? "spawn → initialize → tools/list answered (2025-11-25)"
      : "spawn → tools/list answered, no handshake (2026-07-28)") +
      (builds.length > 1 ? `, build ${b + 1}` : "");
    if (taken === null || taken.length === 0) {
      rows.push(`| ${what} | not spoken | — | — |`);
      out(rows.at(-1));
      continue;
    }
    row(
      what,
      taken.map((s) =>
        s.ms
      ),
      taken.map((s) => s.rss),
    );
    row(
      `… then prompts/list answered (the SDK loaded), ${protocol}` +
        (builds.length > 1 ? `, build ${b + 1}` : ""),
      taken.map((s) => s.readyMs),
    );
  }
}
if (values.markdown) {
  out();
  out(
    `${Deno.build.os} ${Deno.build.arch}, ${navigator.hardwareConcurrency} cores, deno ${Deno.version.deno}`,
  );
}
