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
 *        [--live-only | --ssh-only]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { startCommand, StdioServer } from "../tests/helpers/stdio.ts";
import { sh } from "../tests/helpers/tmux.ts";
import { startSshd } from "../tests/helpers/sshd.ts";
import { AGENTS_CHANNEL } from "../src/hooks/marks.ts";
import { execOverControl } from "../src/tmux/control.ts";
import { TmuxRunner } from "../src/tmux/run.ts";

const { values } = parseArgs({
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
const SIZES = values.sizes!.split(",").map(Number);
const RUNS = Math.max(30, Number(values.runs));
const WARMUP = 1;
const SCROLLBACK = 2_000;
/** Runs of wait_for_idle (each lasts quietMs and more: a handful). */
const IDLE_RUNS = 7;

function out(line = ""): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

async function tmux(socket: string, ...args: string[]): Promise<string> {
  const r = await new Deno.Command("tmux", {
    args: ["-u", "-L", socket, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (r.code !== 0) {
    throw new Error(`tmux ${args.join(" ")}: ${new TextDecoder().decode(r.stderr)}`);
  }
  return new TextDecoder().decode(r.stdout);
}

/** What pane `i` shows: its scrollback, a marker in a few panes, then its own marker. */
function paneText(i: number): string {
  const lines = Array.from({ length: SCROLLBACK }, (_, k) => `scrollback line ${k + 1}`);
  if (i % 25 === 0) lines.push(`NEEDLE-PRESENT-${i}`);
  lines.push(`BENCH-MARK-${i}`);
  return `${lines.join("\r\n")}\r\n`;
}

interface Fixture {
  socket: string;
  panes: string[];
  workPane: string;
  workTty: string;
}

/** The pid and socket file of each server the bench started, for {@link dispose}. */
const started = new Map<string, { pid: number; socketPath: string }>();

/**
 * Ends a server the bench started and removes its socket file (tmux 3.3 leaves it behind):
 * kill-server, then by pid if it still runs (a server its socket no longer reaches).
 */
async function dispose(socket: string): Promise<void> {
  const known = started.get(socket);
  await tmux(socket, "kill-server").catch(() => {});
  if (known && known.pid > 0) {
    const ps = await new Deno.Command("ps", {
      args: ["-ww", "-o", "args=", "-p", String(known.pid)],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (new TextDecoder().decode(ps.stdout).includes(socket)) Deno.kill(known.pid, "SIGKILL");
  }
  if (known?.socketPath.endsWith(`/${socket}`)) await Deno.remove(known.socketPath).catch(() => {});
  started.delete(socket);
}

/** Builds a server with `size` panes: 4 per window, 10 windows per session. */
async function buildServer(size: number): Promise<Fixture> {
  const socket = `tmux-mcp-bench-${crypto.randomUUID().slice(0, 8)}`;
  const conf = await Deno.makeTempFile({ prefix: "tmux-mcp-bench-", suffix: ".conf" });
  try {
    await Deno.writeTextFile(conf, `set -g history-limit 5000\nset -g exit-empty off\n`);
    await tmux(socket, "-f", conf, "start-server", ";", "source-file", conf);
  } finally {
    await Deno.remove(conf);
  }
  const [pid, socketPath] = (await tmux(socket, "display-message", "-p", "#{pid}\t#{socket_path}"))
    .trim().split("\t");
  started.set(socket, { pid: Number(pid) || 0, socketPath: socketPath ?? "" });
  try {
    return await fill(socket, size);
  } catch (error) {
    await dispose(socket);
    throw error;
  }
}

/** Fills the new server on `socket` with `size` panes of scrollback and a shell pane. */
async function fill(socket: string, size: number): Promise<Fixture> {
  // One extra shell pane for typing, waiting and running.
  const work = (await tmux(
    socket,
    "new-session",
    "-d",
    "-s",
    "work",
    "-x",
    "200",
    "-y",
    "50",
    "-P",
    "-F",
    "#{pane_id} #{pane_tty}",
    "sh",
  ))
    .trim().split(" ");
  let made = 0;
  let chain: string[] = [];
  const flush = async () => {
    if (chain.length) await tmux(socket, ...chain.slice(0, -1));
    chain = [];
  };
  for (let s = 0; made < size; s++) {
    chain.push(
      "new-session",
      "-d",
      "-s",
      `bench${s}`,
      "-x",
      "200",
      "-y",
      "50",
      "exec cat",
      ";",
    );
    made++;
    for (let w = 0; w < 10 && made < size; w++) {
      if (w > 0) {
        chain.push("new-window", "-d", "-t", `=bench${s}`, "exec cat", ";");
        made++;
      }
      for (let p = 1; p < 4 && made < size; p++, made++) {
        chain.push("split-window", "-d", "-t", `=bench${s}:${w}`, "exec cat", ";");
        chain.push("select-layout", "-t", `=bench${s}:${w}`, "tiled", ";");
      }
      if (chain.length > 400) await flush();
    }
  }
  await flush();
  // Every pane runs a bare `cat`; its scrollback is written straight to its terminal, which is
  // far quicker than a process per pane printing it (and tmux forks slower as it grows).
  const ttys = (await tmux(socket, "list-panes", "-a", "-F", "#{pane_id} #{pane_tty}"))
    .trim().split("\n").map((l) => l.split(" ")).filter(([id]) => id !== work[0]);
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < ttys.length) {
      const i = next++;
      await Deno.writeTextFile(ttys[i][1], paneText(i));
    }
  }));
  // Wait until every pane shows its scrollback.
  const until = Date.now() + 120_000;
  while (true) {
    const lines = (await tmux(
      socket,
      "list-panes",
      "-a",
      "-F",
      "#{pane_id} #{history_size} #{pane_current_command}",
    )).trim().split("\n");
    const ready = lines.filter((l) =>
      Number(l.split(" ")[1]) >= SCROLLBACK - 60 || l.endsWith(" sh")
    ).length;
    if (ready >= size + 1) {
      return {
        socket,
        panes: lines.map((l) => l.split(" ")[0]).filter((id) => id !== work[0]),
        workPane: work[0],
        workTty: work[1],
      };
    }
    if (Date.now() > until) throw new Error(`only ${ready} of ${size} panes ready`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function stats(samples: number[]): { median: number; p90: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p90: at(0.9) };
}

async function time(fn: (i: number) => Promise<unknown>, runs = RUNS): Promise<number[]> {
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
async function sideBySide(
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

interface Row {
  size: number;
  operation: string;
  median: number;
  p90: number;
  floorMedian: number | null;
  floorP90: number | null;
  ratio: number | null;
}

type Result = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: { text: string }[];
};

async function call(
  server: StdioServer,
  name: string,
  args: Record<string, unknown>,
): Promise<Result> {
  const r = await server.callTool(name, args) as Result;
  if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`);
  return r;
}

/** A process's resident memory in MB: now (VmRSS), or its peak so far (VmHWM). */
function rss(pid: number, which: "VmRSS" | "VmHWM" = "VmRSS"): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(new RegExp(`${which}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
}

function peakRss(pid: number): number {
  return rss(pid, "VmHWM");
}

/**
 * RSS of a server once it is whole and idle: after tools/list (which the front desk answers
 * while the SDK and the tools still load) a `prompts/list` that only the SDK answers, then a
 * moment's quiet. Read right after tools/list, the figure would miss most of the server.
 */
async function readyIdleRss(server: StdioServer): Promise<number> {
  await server.request("tools/list");
  await server.request("prompts/list");
  await new Promise((resolve) => setTimeout(resolve, 300));
  return rss(server.child.pid);
}

const rows: Row[] = [];
const memory: {
  size: number;
  idleRssMb: number;
  bundleIdleRssMb: number | null;
  peakRssMb: number;
}[] = [];
/**
 * What a reply costs a model's context: its text block (what a client shows the model), its
 * structured content, and the whole result as JSON on the wire.
 */
const replies: {
  size: number;
  call: string;
  textChars: number;
  structuredBytes: number;
  wireBytes: number;
}[] = [];
/** Peak RSS a call pattern adds to a fresh server, over its RSS once idle and ready. */
const deep: { history: number; call: string; idleRssMb: number; riseMb: number }[] = [];

function record(size: number, operation: string, samples: number[], floor: number[] | null): void {
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

const { cmd, args: startArgs } = startCommand();

/** Runs a process to its end with `input` on stdin; throws unless it exits 0. */
function runProcess(
  command: string,
  args: string[],
  input: string,
  extraEnv: Record<string, string> = {},
): Promise<unknown> {
  return sh(command, args, { env: { ...env, ...extraEnv }, stdin: input });
}

/**
 * `tmux-mcp hook working` as an agent runs it on every prompt and tool call: a new process with
 * the start task's flags, inside a pane. Beside it, the runtime's own floor (an empty module
 * under the same flags) and the one tmux command the hook sends.
 */
async function benchHook(size: number, fx: Fixture): Promise<void> {
  const facts =
    (await tmux(fx.socket, "display-message", "-p", "-t", fx.workPane, "#{socket_path},#{pid}"))
      .trim();
  const agent = { TMUX: `${facts},0`, TMUX_PANE: fx.workPane };
  const input = JSON.stringify({
    session_id: "bench",
    transcript_path: "/dev/null",
    cwd: "/",
    hook_event_name: "UserPromptSubmit",
    prompt: "bench",
  });
  const flags = startArgs.slice(0, -1);
  const empty = await Deno.makeTempFile({ prefix: "tmux-mcp-bench-", suffix: ".ts" });
  try {
    record(
      size,
      "deno run, empty module (runtime)",
      await time(() => runProcess(cmd, [...flags, empty], "")),
      null,
    );
  } finally {
    await Deno.remove(empty);
  }
  const raw = () =>
    tmux(fx.socket, "set-option", "-w", "-t", fx.workPane, "@agent-state", "working");
  record(
    size,
    "hook working (source)",
    ...(await sideBySide(
      () => runProcess(cmd, [...startArgs, "hook", "working"], input, agent),
      raw,
    )),
  );
  const bundle = new URL("../dist/bundle/main.js", import.meta.url).pathname;
  const built = await Deno.stat(bundle).then(() => true, () => false);
  if (built) {
    record(
      size,
      "hook working (bundle, as the binary)",
      ...(await sideBySide(
        () => runProcess(cmd, [...flags, bundle, "hook", "working"], input, agent),
        raw,
      )),
    );
  }
}
/**
 * RSS once idle and ready of the server run from the bundle the binaries embed, without
 * the project's config, as the binary runs it (no TypeScript or npm resolution at start); null
 * when the bundle was not built (`deno task bundle`).
 */
async function bundleIdleRss(socket: string): Promise<number | null> {
  const bundle = new URL("../dist/bundle/main.js", import.meta.url).pathname;
  if (!(await Deno.stat(bundle).then(() => true, () => false))) return null;
  let idle = NaN;
  // The first start of a bundle also fills Deno's code cache: measure the second.
  for (let i = 0; i < 2; i++) {
    const server = new StdioServer(
      cmd,
      [...startArgs.slice(0, -1), "--no-config", bundle, "--socket", socket],
      env,
    );
    try {
      await server.initialize();
      idle = await readyIdleRss(server);
    } finally {
      await server.closeStdin();
    }
  }
  return idle;
}

/** Rows of history in the deep pane of {@link benchDeep}. */
const DEEP_ROWS = 190_000;
/** Calls per deep figure (each reads or counts the whole history inside tmux). */
const DEEP_RUNS = 10;

/**
 * A small answer from a deep history: one pane with {@link DEEP_ROWS} rows of history, read by
 * a fresh server (so its peak RSS is this work's alone). The tmux floor is the whole history
 * printed, which is what a reader must otherwise take in to count what it left out.
 */
async function benchDeep(): Promise<void> {
  const socket = `tmux-mcp-bench-${crypto.randomUUID().slice(0, 8)}`;
  await tmux(socket, "-f", "/dev/null", "start-server", ";", "set", "-g", "exit-empty", "off");
  const [pid, socketPath] = (await tmux(socket, "display-message", "-p", "#{pid}\t#{socket_path}"))
    .trim().split("\t");
  started.set(socket, { pid: Number(pid) || 0, socketPath: socketPath ?? "" });
  try {
    await tmux(socket, "set", "-g", "history-limit", String(DEEP_ROWS + 10_000));
    const [pane, tty] = (await tmux(
      socket,
      ...["new-session", "-d", "-x", "200", "-y", "50", "-P", "-F", "#{pane_id} #{pane_tty}"],
      "exec cat",
    )).trim().split(" ");
    const line = (k: number) => `deep history row ${k} ${"0123456789".repeat(8)}`;
    const chunk = 10_000;
    for (let k = 0; k < DEEP_ROWS + 50; k += chunk) {
      const rows = Array.from({ length: chunk }, (_, i) => line(k + i));
      await Deno.writeTextFile(tty, `${rows.join("\r\n")}\r\n`, { append: true });
    }
    const until = Date.now() + 120_000;
    while (
      Number(await tmux(socket, "display-message", "-p", "-t", pane, "#{history_size}")) < DEEP_ROWS
    ) {
      if (Date.now() > until) throw new Error("the deep pane never filled");
      await new Promise((r) => setTimeout(r, 200));
    }
    const calls: [string, Record<string, unknown>, string[]][] = [
      ["capture_pane maxLines 10 of the whole history", { start: -1_000_000, maxLines: 10 }, []],
      ["capture_pane maxLines 10, joinWrapped", {
        start: -1_000_000,
        maxLines: 10,
        joinWrapped: true,
      }, ["-J"]],
    ];
    for (const [name, args, flags] of calls) {
      const server = new StdioServer(cmd, [...startArgs, "--socket", socket], env);
      try {
        await server.initialize();
        const idleRssMb = await readyIdleRss(server);
        const samples = await time(
          () => call(server, "capture_pane", { paneId: pane, ...args }),
          DEEP_RUNS,
        );
        const riseMb = peakRss(server.child.pid) - idleRssMb;
        const floor = await time(
          () => tmux(socket, "capture-pane", "-p", "-t", pane, "-S", "-", ...flags),
          DEEP_RUNS,
        );
        record(1, `${name} (${DEEP_ROWS} rows)`, samples, floor);
        deep.push({ history: DEEP_ROWS, call: name, idleRssMb, riseMb });
        out(
          `    1  ${name}: peak RSS ${riseMb.toFixed(1)} MB over ${idleRssMb.toFixed(1)} MB idle`,
        );
      } finally {
        await server.closeStdin();
      }
    }
  } finally {
    await dispose(socket);
  }
}

const env = Deno.env.toObject();
delete env.TMUX;
delete env.TMUX_PANE;

/** Panes subscribed at once in the live resources' section. */
const LIVE_PANES = 200;
/** How long every subscribed pane prints before memory is read. */
const LIVE_PRINT_MS = 15_000;
const live: {
  latency: { median: number; p90: number };
  marks: { median: number; p90: number };
  idleRssMb: number;
  rssMb: number;
  peakRssMb: number;
  perSecond: number;
}[] = [];

/**
 * Live resources: a server with {@link LIVE_PANES} shell panes in one session, every pane
 * subscribed (`resources/subscribe`, 2025-11-25). Latency: from a line written straight to a
 * pane's terminal to its `notifications/resources/updated` (panes taken in turn, spaced past
 * the coalescing gap). Memory: the server's RSS after every pane printed five lines a second
 * for {@link LIVE_PRINT_MS}, and the notifications it sent per second meanwhile.
 */
async function benchLive(): Promise<void> {
  const socket = `tmux-mcp-bench-${crypto.randomUUID().slice(0, 8)}`;
  await tmux(
    socket,
    "-f",
    "/dev/null",
    "new-session",
    "-d",
    "-s",
    "live",
    "-x",
    "80",
    "-y",
    "24",
    "sh",
  );
  const [pid, socketPath] = (await tmux(socket, "display-message", "-p", "#{pid}\t#{socket_path}"))
    .trim().split("\t");
  started.set(socket, { pid: Number(pid) || 0, socketPath: socketPath ?? "" });
  try {
    for (let i = 1; i < LIVE_PANES; i += 50) {
      const batch = Array.from({ length: Math.min(50, LIVE_PANES - i) }, (_, k) => k);
      await tmux(
        socket,
        ...batch.flatMap((k) => [...(k ? [";"] : []), "new-window", "-d", "-t", "live:", "sh"]),
      );
    }
    const panes =
      (await tmux(socket, "list-panes", "-s", "-t", "live", "-F", "#{pane_id} #{pane_tty}"))
        .trim().split("\n").map((l) => l.split(" ") as [string, string]);
    const server = new StdioServer(cmd, [...startArgs, "--socket", socket], env);
    try {
      await server.initialize();
      const idleRssMb = await readyIdleRss(server);
      for (const [paneId] of panes) {
        await server.request("resources/subscribe", { uri: `tmux://pane/${paneId.slice(1)}` });
      }
      await new Promise((r) => setTimeout(r, 2_000)); // the watches attach
      const updated = (uri: string, from: number) =>
        server.notifications.slice(from).some((n) =>
          n.method === "notifications/resources/updated" && n.params?.uri === uri
        );
      /** Milliseconds from `change(i)` starting to the update of `uriOf(i)`, over the runs. */
      const updateLatency = async (
        uriOf: (i: number) => string,
        change: (i: number) => Promise<unknown>,
      ) => {
        const samples: number[] = [];
        for (let i = -WARMUP; i < RUNS; i++) {
          const uri = uriOf(i);
          await new Promise((r) => setTimeout(r, 300)); // past the coalescing gap
          const from = server.notifications.length;
          const t0 = performance.now();
          await change(i);
          const until = t0 + 5_000;
          while (!updated(uri, from) && performance.now() < until) {
            await new Promise((r) => setTimeout(r, 1));
          }
          if (!updated(uri, from)) throw new Error(`no update of ${uri} within 5 s`);
          if (i >= 0) samples.push(performance.now() - t0);
        }
        return samples;
      };
      const paneOf = (i: number) => panes[(i + WARMUP) % panes.length];
      const latency = await updateLatency(
        (i) => `tmux://pane/${paneOf(i)[0].slice(1)}`,
        (i) => Deno.writeTextFile(paneOf(i)[1], `live ${i}\r\n`),
      );
      record(LIVE_PANES, "resource update after a pane prints (all subscribed)", latency, null);
      // The agent marks: what `tmux-mcp hook` runs (a window option, then the signal), from
      // the tmux command's start to the update of tmux://agents.
      await server.request("resources/subscribe", { uri: "tmux://agents" });
      const marks = await updateLatency(() => "tmux://agents", (i) =>
        tmux(
          socket,
          ...["set-option", "-w", "-t", panes[0][0], "@agent-state"],
          i % 2 ? "working" : "needs-input",
          ...[";", "wait-for", "-S", AGENTS_CHANNEL],
        ));
      record(LIVE_PANES, "tmux://agents update after a hook's mark", marks, null);
      await server.request("resources/unsubscribe", { uri: "tmux://agents" });
      for (let at = 0; at < panes.length; at += 50) {
        await tmux(
          socket,
          ...panes.slice(at, at + 50).flatMap(([paneId], k) => [
            ...(k ? [";"] : []),
            "send-keys",
            "-t",
            paneId,
            "while :; do echo tick; sleep 0.2; done",
            "Enter",
          ]),
        );
      }
      await new Promise((r) => setTimeout(r, 2_000));
      const from = server.notifications.length;
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, LIVE_PRINT_MS));
      const perSecond = (server.notifications.length - from) / ((performance.now() - t0) / 1000);
      const rssMb = rss(server.child.pid);
      const peakRssMb = peakRss(server.child.pid);
      live.push({
        latency: stats(latency),
        marks: stats(marks),
        idleRssMb,
        rssMb,
        peakRssMb,
        perSecond,
      });
      out(
        `live: ${LIVE_PANES} subscribed panes printing: RSS ${rssMb.toFixed(1)} MB (idle ` +
          `${idleRssMb.toFixed(1)}, peak ${peakRssMb.toFixed(1)}), ${perSecond.toFixed(0)} ` +
          `notifications/s; update latency median ${stats(latency).median.toFixed(1)} ms`,
      );
      await server.closeStdin();
    } finally {
      await server.kill();
    }
  } finally {
    await dispose(socket);
  }
}

/** What the SSH section found: medians in ms. */
const sshFigures: {
  operation: string;
  local: number;
  remote: number;
  perCall: number;
}[] = [];

/**
 * `capture_pane` and `send_keys` on a pane reached through SSH to localhost (a real sshd of its
 * own, as the tests start it), against the same call on the local server, and against the peers'
 * route: one `ssh DEST tmux ...` process per call (a handshake each).
 */
async function benchSsh(): Promise<void> {
  const sshd = await startSshd(["bench"]);
  if (typeof sshd === "string") {
    out(`ssh: skipped: ${sshd}`);
    return;
  }
  const socket = `tmux-mcp-bench-${crypto.randomUUID().slice(0, 8)}`;
  try {
    await tmux(socket, "-f", "/dev/null", "new-session", "-d", "-s", "ssh", "-x", "80", "-y", "24");
    await tmux(socket, "set-option", "-g", "history-limit", "5000");
    const [pid, socketPath, paneId] = (await tmux(
      socket,
      "display-message",
      "-p",
      "-t",
      "ssh:",
      "#{pid}\t#{socket_path}\t#{pane_id}",
    )).trim().split("\t");
    started.set(socket, { pid: Number(pid) || 0, socketPath: socketPath ?? "" });
    await tmux(socket, "send-keys", "-t", paneId, "seq 1 200", "Enter");
    const server = new StdioServer(cmd, [
      ...startArgs,
      "--socket",
      socket,
      "--ssh",
      "bench",
      "--ssh-config",
      sshd.config,
    ], env);
    try {
      await server.initialize();
      await server.request("tools/list");
      const perCall = async (...tmuxArgs: string[]) => {
        const r = await new Deno.Command("ssh", {
          args: ["-F", sshd.config, "-T", "-o", "BatchMode=yes", "bench", "tmux", ...tmuxArgs],
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).output();
        if (!r.success) throw new Error(new TextDecoder().decode(r.stderr));
      };
      const cases: [string, Record<string, unknown>, string[]][] = [
        ["capture_pane", { paneId }, ["-L", socket, "capture-pane", "-p", "-t", paneId]],
        ["send_keys", { paneId, text: "true", enter: true }, [
          "-L",
          socket,
          "send-keys",
          "-t",
          paneId,
          "true",
          "Enter",
        ]],
      ];
      for (const [tool, args, tmuxArgs] of cases) {
        const local = await time(() => call(server, tool, args));
        const remote = await time(() =>
          call(server, tool, { ...args, host: "bench", socket_name: socket })
        );
        const ssh = await time(() => perCall(...tmuxArgs));
        record(1, `${tool} over ssh (vs local)`, remote, local);
        record(1, `${tool} over ssh (vs ssh per call)`, remote, ssh);
        sshFigures.push({
          operation: tool,
          local: stats(local).median,
          remote: stats(remote).median,
          perCall: stats(ssh).median,
        });
      }
      await server.closeStdin();
    } finally {
      await server.kill();
    }
  } finally {
    await dispose(socket);
    await sshd.stop();
  }
}

const benchStart = performance.now();
for (const size of values["live-only"] || values["ssh-only"] ? [] : SIZES) {
  const sizeStart = performance.now();
  const fx = await buildServer(size);
  out(
    `${String(size).padStart(5)}  (server with ${size} panes built in ${
      ((performance.now() - sizeStart) / 1000).toFixed(1)
    } s)`,
  );
  const floorFields =
    "#{pane_id}\t#{window_id}\t#{pane_index}\t#{pane_active}\t#{pane_current_command}\t#{pane_current_path}\t#{pane_title}\t#{pane_dead}\t#{pane_width}\t#{pane_height}\t#{session_id}\t#{session_name}\t#{window_index}\t#{window_name}";
  try {
    // Cold start: spawn to initialize answered, and to tools/list answered.
    const initTimes: number[] = [];
    const listTimes: number[] = [];
    for (let i = 0; i < (size === SIZES[0] ? RUNS : 0); i++) {
      const t0 = performance.now();
      const s = new StdioServer(cmd, [...startArgs, "--socket", fx.socket], env);
      await s.initialize();
      initTimes.push(performance.now() - t0);
      await s.request("tools/list");
      listTimes.push(performance.now() - t0);
      await s.closeStdin();
    }
    if (initTimes.length) {
      record(size, "cold start → initialize", initTimes, null);
      record(size, "cold start → tools/list", listTimes, null);
    }

    if (size === SIZES[0]) await benchHook(size, fx);

    const server = new StdioServer(cmd, [...startArgs, "--socket", fx.socket], env);
    await server.initialize();
    const idleRssMb = await readyIdleRss(server);
    const bundleIdleRssMb = await bundleIdleRss(fx.socket);
    const target = fx.panes[Math.floor(fx.panes.length / 2)];

    record(
      size,
      "list_panes (whole server)",
      ...(await sideBySide(
        () => call(server, "list_panes", {}),
        () => tmux(fx.socket, "list-panes", "-a", "-F", floorFields),
      )),
    );
    // What tmux itself takes for the same fields, asked over a connection already open (no
    // process started, the answer not even parsed): the floor under any server asking for them.
    const direct = new TmuxRunner();
    try {
      record(
        size,
        "tmux itself: the same list-panes over an open connection",
        ...(await sideBySide(
          async () => {
            const args = ["list-panes", "-a", "-F", floorFields];
            const answer = await execOverControl(direct, { socketName: fx.socket }, args);
            if (answer?.code !== 0) throw new Error("list-panes over a control connection failed");
          },
          () => tmux(fx.socket, "list-panes", "-a", "-F", floorFields),
        )),
      );
    } finally {
      await direct.close();
    }
    record(
      size,
      "list_panes (one session, up to 40 panes)",
      ...(await sideBySide(
        () => call(server, "list_panes", { session: "bench0" }),
        () => tmux(fx.socket, "list-panes", "-s", "-t", "=bench0", "-F", floorFields),
      )),
    );
    record(
      size,
      "get_pane_info",
      ...(await sideBySide(
        () => call(server, "get_pane_info", { paneId: target }),
        () => tmux(fx.socket, "display-message", "-p", "-t", target, floorFields),
      )),
    );
    // A tool acting on one pane or window reads only it: its cost should not grow with the
    // server (before, each read every pane, ~80 ms at 1 000 panes).
    const targetWindow =
      (await tmux(fx.socket, "display-message", "-p", "-t", target, "#{window_id}"))
        .trim();
    record(
      size,
      "set_pane_title (one pane, read before and after)",
      ...(await sideBySide(
        (i) => call(server, "set_pane_title", { paneId: target, title: `bench ${i}` }),
        (i) => tmux(fx.socket, "select-pane", "-t", target, "-T", `bench ${i}`),
      )),
    );
    record(
      size,
      "get_window_info",
      ...(await sideBySide(
        () => call(server, "get_window_info", { windowId: targetWindow }),
        () => tmux(fx.socket, "list-panes", "-t", targetWindow, "-F", floorFields),
      )),
    );
    record(
      size,
      "capture_pane (last 200 lines)",
      ...(await sideBySide(
        () => call(server, "capture_pane", { paneId: target, start: -200, maxLines: 200 }),
        () => tmux(fx.socket, "capture-pane", "-p", "-t", target, "-S", "-200"),
      )),
    );
    // tmux refuses a command line over about 16 KB: chain at most 200 captures per process.
    const captureChains = async (extra: string[]) => {
      for (let at = 0; at < fx.panes.length; at += 200) {
        const chunk = fx.panes.slice(at, at + 200);
        await tmux(
          fx.socket,
          ...chunk.flatMap((
            p,
            i,
          ) => [...(i ? [";"] : []), "capture-pane", "-p", "-t", p, ...extra]),
        );
      }
    };
    record(
      size,
      "search_panes (visible screen)",
      ...(await sideBySide(
        () => call(server, "search_panes", { pattern: "NEEDLE-PRESENT" }),
        () => captureChains([]),
      )),
    );
    record(
      size,
      `search_panes (+${SCROLLBACK} scrollback)`,
      ...(await sideBySide(
        () =>
          call(server, "search_panes", { pattern: "NEEDLE-PRESENT", scrollbackLines: SCROLLBACK }),
        () => captureChains(["-S", `-${SCROLLBACK}`]),
      )),
    );
    record(
      size,
      "send_keys (literal text)",
      ...(await sideBySide(
        () => call(server, "send_keys", { paneId: fx.workPane, text: "x", enter: false }),
        () => tmux(fx.socket, "send-keys", "-t", fx.workPane, "-l", "x"),
      )),
    );
    await tmux(fx.socket, "send-keys", "-t", fx.workPane, "C-u");

    // wait_for_text: the time from the text reaching the pane to the answer arriving. The
    // text is written straight to the pane's terminal, so its moment is known exactly.
    const wake: number[] = [];
    for (let i = -WARMUP; i < RUNS; i++) {
      const word = `WAKE-${size}-${i + WARMUP}-${crypto.randomUUID().slice(0, 6)}`;
      const token = `wake-${word}`;
      const pending = server.request("tools/call", {
        name: "wait_for_text",
        arguments: { paneId: fx.workPane, patterns: [word], timeoutMs: 10_000 },
        _meta: { progressToken: token },
      });
      // The first progress notification says the wait is watching: only then write.
      const until = performance.now() + 10_000;
      while (
        !server.notifications.some((n) => n.params?.progressToken === token) &&
        performance.now() < until
      ) await new Promise((r) => setTimeout(r, 1));
      const t0 = performance.now();
      await Deno.writeTextFile(fx.workTty, `${word}\r\n`);
      const answer = await pending;
      const t1 = performance.now();
      const outcome = (answer.result?.structuredContent as { outcome?: string })?.outcome;
      if (outcome !== "matched") throw new Error(`wait_for_text: ${JSON.stringify(answer.result)}`);
      if (i >= 0) wake.push(t1 - t0);
    }
    record(size, "wait_for_text wake after text", wake, null);

    // wait_for_idle: how long after quietMs of silence the answer arrives. The pane prints
    // once (written straight to its terminal, so the moment is known), then stays quiet; the
    // overshoot is the time from that write to the answer, less quietMs. Timing, not size:
    // measured once, at the first size.
    if (size === SIZES[0]) {
      const quietMs = 500;
      const overshoot: number[] = [];
      for (let i = -WARMUP; i < IDLE_RUNS; i++) {
        const token = `idle-${size}-${i + WARMUP}-${crypto.randomUUID().slice(0, 6)}`;
        const pending = server.request("tools/call", {
          name: "wait_for_idle",
          arguments: { paneId: fx.workPane, quietMs, timeoutMs: 10_000 },
          _meta: { progressToken: token },
        });
        const until = performance.now() + 10_000;
        while (
          !server.notifications.some((n) => n.params?.progressToken === token) &&
          performance.now() < until
        ) await new Promise((r) => setTimeout(r, 1));
        const t0 = performance.now();
        await Deno.writeTextFile(fx.workTty, `idle ${token}\r\n`);
        const answer = await pending;
        const t1 = performance.now();
        const outcome = (answer.result?.structuredContent as { outcome?: string })?.outcome;
        if (outcome !== "idle") throw new Error(`wait_for_idle: ${JSON.stringify(answer.result)}`);
        if (i >= 0) overshoot.push(t1 - t0 - quietMs);
      }
      record(size, "wait_for_idle overshoot beyond quietMs", overshoot, null);
    }

    record(
      size,
      "run_command `true`",
      // One block, then the other: the command line's way returns once `true` has run, while
      // its shell may still be finishing the line, which run_command would wait for.
      await time(() => call(server, "run_command", { paneId: fx.workPane, command: "true" })),
      await time(async (i) => {
        const channel = `bench-done-${i + 10}`;
        await tmux(
          fx.socket,
          "send-keys",
          "-t",
          fx.workPane,
          "-l",
          `true; tmux -L ${fx.socket} wait-for -S ${channel}`,
          ";",
          "send-keys",
          "-t",
          fx.workPane,
          "Enter",
        );
        await tmux(fx.socket, "wait-for", channel);
      }),
    );
    const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;
    for (
      const [label, name, args] of [
        ["list_panes (whole server)", "list_panes", {}],
        ["list_windows (whole server)", "list_windows", {}],
        ["search_panes (visible screen)", "search_panes", { pattern: "NEEDLE-PRESENT" }],
        ["capture_pane (last 200 lines)", "capture_pane", {
          paneId: target,
          start: -200,
          maxLines: 200,
        }],
      ] as const
    ) {
      const r = await call(server, name, args);
      replies.push({
        size,
        call: label,
        textChars: r.content?.[0]?.text.length ?? 0,
        structuredBytes: bytes(r.structuredContent),
        wireBytes: bytes(r),
      });
      out(
        `${String(size).padStart(5)}  reply of ${label}: text ${replies.at(-1)!.textChars} ` +
          `chars, structured ${replies.at(-1)!.structuredBytes} B, whole ${
            replies.at(-1)!.wireBytes
          } B`,
      );
    }
    memory.push({ size, idleRssMb, bundleIdleRssMb, peakRssMb: peakRss(server.child.pid) });
    out(
      `${String(size).padStart(5)}  server RSS idle once ready ${idleRssMb.toFixed(1)} MB, ` +
        `peak ${memory.at(-1)!.peakRssMb.toFixed(1)} MB`,
    );
    await server.closeStdin();
  } finally {
    await dispose(fx.socket);
  }
  out(
    `${String(size).padStart(5)}  (${
      ((performance.now() - sizeStart) / 1000).toFixed(1)
    } s for this size)`,
  );
}
if (!values["live-only"] && !values["ssh-only"]) await benchDeep();
if (!values["ssh-only"]) await benchLive();
if (!values["live-only"]) await benchSsh();
const totalSeconds = (performance.now() - benchStart) / 1000;
out(`bench: ${totalSeconds.toFixed(1)} s in all`);

const machine =
  `${Deno.build.os} ${Deno.build.arch}, ${navigator.hardwareConcurrency} cores, deno ${Deno.version.deno}, ${
    (await tmux("tmux-mcp-bench-none", "-V").catch(() => "")).trim() || "tmux"
  }`;
if (values.json) {
  await Deno.writeTextFile(
    values.json,
    JSON.stringify(
      { machine, runs: RUNS, rows, memory, replies, deep, live, ssh: sshFigures },
      null,
      2,
    ),
  );
}
/**
 * The `## SSH` section of BENCHMARKS.md replaced by this run's figures (kept as it was when the
 * run measured none).
 */
function withSshSection(sections: string): string {
  if (sshFigures.length === 0) return sections;
  const lines = sshFigures.map((f) =>
    `| ${f.operation} | ${f.remote.toFixed(2)} | ${f.local.toFixed(2)} | ${
      (f.remote / f.local).toFixed(2)
    }× | ${f.perCall.toFixed(2)} | ${(f.remote / f.perCall).toFixed(3)}× |`
  ).join("\n");
  const section =
    `\n## SSH\n\n\`deno task bench --ssh-only\` on ${
      new Date().toISOString().slice(0, 10)
    }: a pane reached through a real sshd on 127.0.0.1 (\`--ssh\`, the host's one connection), ` +
    `the same call on the local server, and the peers' route, one \`ssh DEST tmux ...\` ` +
    `process per call (a handshake and a remote shell each). Medians of ${RUNS} calls, ms.\n\n` +
    `| tool | over ssh | local | ratio | ssh per call | ratio |\n|---|---:|---:|---:|---:|---:|\n` +
    `${lines}\n`;
  const at = sections.indexOf("\n## SSH\n");
  if (at < 0) return `${sections}${section}`;
  const next = sections.indexOf("\n## ", at + 1);
  return `${sections.slice(0, at)}${section}${next < 0 ? "" : sections.slice(next)}`;
}

if (values.markdown && values["ssh-only"]) {
  // Only the SSH section changes; the tables of the last full run stay.
  const previous = await Deno.readTextFile(values.markdown).catch(() => "# Benchmarks\n");
  await Deno.writeTextFile(values.markdown, withSshSection(previous));
} else if (values.markdown) {
  const table = [
    "| panes | operation | median ms | p90 ms | tmux median ms | tmux p90 ms | ratio |",
    "|---:|---|---:|---:|---:|---:|---:|",
    ...rows.map((r) =>
      `| ${r.size} | ${r.operation} | ${r.median.toFixed(2)} | ${r.p90.toFixed(2)} | ${
        r.floorMedian?.toFixed(2) ?? "—"
      } | ${r.floorP90?.toFixed(2) ?? "—"} | ${r.ratio ? `${r.ratio.toFixed(2)}×` : "—"} |`
    ),
  ].join("\n");
  const mem = memory.map((m) =>
    `| ${m.size} | ${m.idleRssMb.toFixed(1)} | ${m.bundleIdleRssMb?.toFixed(1) ?? "—"} | ${
      m.peakRssMb.toFixed(1)
    } |`
  ).join("\n");
  const replyRows = replies.map((r) =>
    `| ${r.size} | ${r.call} | ${r.textChars} | ${r.structuredBytes} | ${r.wireBytes} |`
  ).join("\n");
  const rises = deep.map((d) =>
    `| ${d.history} | ${d.call} | ${d.idleRssMb.toFixed(1)} | ${d.riseMb.toFixed(1)} |`
  ).join("\n");
  const liveText = live.map((l) =>
    `Live resources: ${LIVE_PANES} panes in one session, every one subscribed ` +
    `(\`resources/subscribe\`). An update reaches the client a median ${
      l.latency.median.toFixed(1)
    } ms (p90 ${l.latency.p90.toFixed(1)}) after a line is written to the pane's terminal; ` +
    `\`tmux://agents\` is updated a median ${l.marks.median.toFixed(1)} ms (p90 ${
      l.marks.p90.toFixed(1)
    }) after the tmux command a hook runs to mark a window starts. ` +
    `With every pane printing five lines a second for ${LIVE_PRINT_MS / 1000} s, the server sent ` +
    `${l.perSecond.toFixed(0)} notifications a second (at most four per pane) and its RSS was ` +
    `${l.rssMb.toFixed(1)} MB (${l.idleRssMb.toFixed(1)} MB idle once ready, peak ${
      l.peakRssMb.toFixed(1)
    } MB).\n`
  ).join("");
  // Sections below the tables (## headings, such as the cold-start figures of bench:cold) are
  // written by hand or by other scripts: they stay.
  const previous = await Deno.readTextFile(values.markdown).catch(() => "");
  const kept = previous.includes("\n## ") ? previous.slice(previous.indexOf("\n## ")) : "";
  await Deno.writeTextFile(
    values.markdown,
    `# Benchmarks\n\nProduced by \`deno task bench --markdown BENCHMARKS.md\` on ${
      new Date().toISOString().slice(0, 10)
    }, ${machine}.\n` +
      `Each figure is over ${RUNS} calls after ${WARMUP} warm-up call${
        WARMUP === 1 ? "" : "s"
      }, through a real MCP client over stdio against the server started with the \`start\` task's flags. ` +
      `"tmux" is the same work with the plain tmux command line, one process per call, timed in turn with ours call by call (run_command: one block, then the other); ratio = ours / tmux (below 1 is faster than tmux itself). ` +
      `The hook rows start a new process per call, as an agent does; "deno run, empty module" is the runtime's own start-up under the same flags, the floor under any hook. ` +
      `The whole run took ${totalSeconds.toFixed(0)} s.\n\n${table}\n\n` +
      `| panes | server RSS idle once ready, after tools/list and prompts/list (MB) | the same, bundle as the binary runs it (MB) | server peak RSS, whole run (MB) |\n` +
      `|---:|---:|---:|---:|\n${mem}\n\n` +
      `What a reply costs a model's context, with default arguments: the text block a client ` +
      `shows the model, the structured content, and the whole result as JSON on the wire.\n\n` +
      `| panes | call | text (characters) | structured content (bytes) | whole result (bytes) |\n` +
      `|---:|---|---:|---:|---:|\n${replyRows}\n\n` +
      `Reading bounded by the request: a fresh server, ${DEEP_RUNS} calls on one pane with deep ` +
      `history; the rise is its peak RSS over its RSS once idle and ready (after tools/list and prompts/list).\n\n` +
      `| history rows | call | idle RSS (MB) | peak RSS rise (MB) |\n|---:|---|---:|---:|\n${rises}\n` +
      `${liveText ? `\n${liveText}` : ""}${withSshSection(kept)}`,
  );
}
