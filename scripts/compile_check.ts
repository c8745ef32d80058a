/**
 * Checks every compile target as far as this machine allows: `deno compile` cannot download
 * its `denort` base here, so each target is built against a stand-in base
 * (`DENORT_BIN=/bin/true`). That still resolves the whole module graph and builds the embedded
 * payload; Linux targets then write a (non-runnable) file, macOS targets stop at writing the
 * Mach-O container, after the payload was built. Prints the payload size per target and fails
 * if a graph does not build or a payload exceeds 2 MB. The release workflow builds the real
 * binaries and smoke-tests them.
 *
 * Usage: deno task compile:check
 *
 * @module
 */

import denoJson from "../deno.json" with { type: "json" };

const LIMIT_BYTES = 2 * 1024 * 1024;
const UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 * 1024 };

const targets = Object.keys(denoJson.tasks).filter((name) => /^compile:.+-.+/.test(name));
let failed = false;
const rows: string[] = [];
for (const task of targets) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", task],
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
await Deno.remove("dist", { recursive: true }).catch(() => {});
Deno.exit(failed ? 1 : 0);
