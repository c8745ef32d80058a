/**
 * What a run leaves behind besides its printed table: every figure as JSON, and BENCHMARKS.md
 * (the tables and the live resources' paragraph rewritten, or only its SSH section), keeping the
 * sections other scripts or people wrote.
 *
 * @module
 */

import { RUNS, WARMUP } from "./options.ts";
import { deep, DEEP_RUNS } from "./deep.ts";
import { heavy, HEAVY_COLUMNS, HEAVY_ROWS, heavyBytes } from "./heavy.ts";
import { live, LIVE_PANES, LIVE_PRINT_MS } from "./live.ts";
import { memory, replies } from "./sizes.ts";
import { sshFigures } from "./ssh.ts";
import { LONG_IDLE_MS } from "./server.ts";
import { rows } from "./table.ts";

/** Writes every figure of the run, and the machine it ran on, to `file` as JSON. */
export async function writeJson(file: string, machine: string): Promise<void> {
  await Deno.writeTextFile(
    file,
    JSON.stringify(
      { machine, runs: RUNS, rows, memory, replies, deep, heavy, live, ssh: sshFigures },
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

/**
 * Rewrites only the SSH section of the Markdown `file` (`--ssh-only`): the tables of the last
 * full run stay.
 */
export async function writeSshSection(file: string): Promise<void> {
  // Only the SSH section changes; the tables of the last full run stay.
  const previous = await Deno.readTextFile(file).catch(() => "# Benchmarks\n");
  await Deno.writeTextFile(file, withSshSection(previous));
}

/**
 * Writes the Markdown `file` (BENCHMARKS.md) from this run's figures: its tables, the live
 * resources' paragraph and the SSH section; the sections below the tables written by others stay.
 */
export async function writeMarkdown(
  file: string,
  machine: string,
  totalSeconds: number,
): Promise<void> {
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
  const heavyText = heavy.length === 0 ? "" : `\nAnd when rows print the most a cell holds: ` +
    `${HEAVY_ROWS} rows of ${HEAVY_COLUMNS - 1} cells, each a letter and ten combining marks ` +
    `(${(heavyBytes() / 1e6).toFixed(1)} MB, 21 bytes a cell), in a pane ${HEAVY_COLUMNS} ` +
    `columns wide; each call once on a fresh server (replies stay within the bound).\n\n` +
    `| call | idle RSS (MB) | peak RSS rise (MB) | ms |\n|---|---:|---:|---:|\n${
      heavy.map((h) =>
        `| ${h.call} | ${h.idleRssMb.toFixed(1)} | ${h.riseMb.toFixed(1)} | ${h.ms.toFixed(0)} |`
      ).join("\n")
    }\n`;
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
  const previous = await Deno.readTextFile(file).catch(() => "");
  const kept = previous.includes("\n## ") ? previous.slice(previous.indexOf("\n## ")) : "";
  await Deno.writeTextFile(
    file,
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
      `|---:|---:|---:|---:|\n${mem}\n\n${longIdleText(memory)}` +
      `What a reply costs a model's context, with default arguments: the text block a client ` +
      `shows the model, the structured content, and the whole result as JSON on the wire.\n\n` +
      `| panes | call | text (characters) | structured content (bytes) | whole result (bytes) |\n` +
      `|---:|---|---:|---:|---:|\n${replyRows}\n\n` +
      `Reading bounded by the request: a fresh server, ${DEEP_RUNS} calls on one pane with deep ` +
      `history; the rise is its peak RSS over its RSS once idle and ready (after tools/list and prompts/list).\n\n` +
      `| history rows | call | idle RSS (MB) | peak RSS rise (MB) |\n|---:|---|---:|---:|\n${rises}\n` +
      heavyText +
      `${liveText ? `\n${liveText}` : ""}${withSshSection(kept)}`,
  );
}

/**
 * What the bundle's server held once left idle {@link LONG_IDLE_MS}, where it was measured: the
 * "idle once ready" figures are read a second after the answers, before V8's memory reducer
 * has run.
 */
function longIdleText(rows: typeof memory): string {
  const row = rows.find((m) => m.bundleLongIdleRssMb !== null);
  if (!row) return "";
  return `Left idle ${LONG_IDLE_MS / 1000} s (V8's memory reducer gives back what start-up left ` +
    `once a process has been idle 30 s), the bundle's server at ${row.size} panes held ` +
    `${row.bundleLongIdleRssMb!.toFixed(1)} MB. The idle figures above are read once the ` +
    `resident set has not grown for a second, before that.\n\n`;
}
