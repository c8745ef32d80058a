/**
 * Checks every compile target as far as this machine allows: `deno compile` cannot download
 * its `denort` base here, so each target is built against a stand-in base
 * (`DENORT_BIN=/bin/true`). That still resolves the whole module graph and builds the embedded
 * payload; Linux targets then write a (non-runnable) file, macOS targets stop at writing the
 * Mach-O container, after the payload was built. Prints the payload size per target and fails
 * if a graph does not build or a payload exceeds 2 MB. The release workflow builds the real
 * binaries and smoke-tests them.
 *
 * The stand-ins are written to a temporary folder, never over real binaries in dist/, and the
 * bundle it made is removed again (one that was there before is rebuilt and kept).
 *
 * Usage: deno task compile:check [--help]
 *
 * @module
 */

import denoJson from "../deno.json" with { type: "json" };
import { commandLine } from "./cli.ts";

const HELP = `deno task compile:check — every compile target checked without the network

Usage: deno task compile:check [--help]

deno compile cannot download its runtime base offline, so each compile:<target> task is run
against a stand-in base (DENORT_BIN=/bin/true): that still resolves the whole module graph and
builds the embedded payload. Prints the payload size per target; fails (exit 1) if a graph does
not build or a payload exceeds 2 MB. The stand-ins go to a temporary folder, never over real
binaries in dist/, and a bundle it made is removed again (one that was there is rebuilt and
kept). The release workflow builds the real binaries and smoke-tests them.

Options:
  --help, -h  this text
`;

commandLine("compile:check", HELP, {});

const LIMIT_BYTES = 2 * 1024 * 1024;
const UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 * 1024 };

type Task = string | { command?: string };
const tasks = denoJson.tasks as Record<string, Task>;
const targets = Object.keys(tasks).filter((name) => /^compile:.+-.+/.test(name));
const hadBundle = await Deno.stat("dist/bundle").then(() => true, () => false);
const bundled = await new Deno.Command(Deno.execPath(), {
  args: ["task", "bundle"],
  env: { NO_COLOR: "1" },
  stdin: "null",
  stdout: "null",
  stderr: "inherit",
}).output();
if (!bundled.success) Deno.exit(1);
const standIns = await Deno.makeTempDir({ prefix: "tmux-mcp-compile-check-" });
let failed = false;
const rows: string[] = [];
for (const task of targets) {
  const line = tasks[task];
  const words = (typeof line === "string" ? line : line.command ?? "").trim().split(/\s+/);
  const output = words.indexOf("--output");
  if (words[0] !== "deno" || output === -1) throw new Error(`${task}: not a deno compile line`);
  words[output + 1] = `${standIns}/${words[output + 1].split("/").pop()}`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: words.slice(1),
    env: { DENORT_BIN: "/bin/true", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const size = /Files: ([\d.]+)(B|KB|MB)/.exec(text);
  const bytes = size ? Number(size[1]) * UNITS[size[2]] : NaN;
  const macWrite = /Linkedit segment not found/.test(text);
  const ok = size !== null && (out.code === 0 || macWrite) && bytes <= LIMIT_BYTES;
  if (!ok) failed = true;
  rows.push(
    `${ok ? "ok  " : "FAIL"} ${task.padEnd(42)} payload ${
      size ? `${size[1]} ${size[2]}` : "not built"
    }` +
      (macWrite ? " (graph and payload built; the Mach-O is written by the release workflow)" : ""),
  );
  if (!ok) rows.push(text.split("\n").filter((l) => /error|Caused|^\s+\d:/.test(l)).join("\n"));
}
await Deno.stdout.write(new TextEncoder().encode(rows.join("\n") + "\n"));
await Deno.remove(standIns, { recursive: true }).catch(() => {});
if (!hadBundle) {
  await Deno.remove("dist/bundle", { recursive: true }).catch(() => {});
  await Deno.remove("dist").catch(() => {}); // only when nothing else is in it
}
Deno.exit(failed ? 1 : 0);
