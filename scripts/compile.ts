/**
 * `deno task compile [TARGET...]`: one binary per target in dist/, built from the bundle with
 * the flags of the `compile:<target>` tasks (the `start` task's permissions; a test keeps them
 * equal).
 *
 * `deno compile` downloads Deno's runtime base for each target (`denort-<target>.zip`, tens of
 * MB, from dl.deno.land) unless it is already in Deno's cache, so compiling needs the network.
 * This checks first and, when the download cannot happen, says so in one line and builds
 * nothing, instead of a DNS error with a stack backtrace; a build that fails anyway leaves no
 * temporary file in dist/. Without the network, `deno task compile:check` checks every
 * target's module graph and payload; the release workflow builds and smoke-tests the real
 * binaries.
 *
 * Usage: deno task compile [x86_64-unknown-linux-gnu ...] [--help]
 *
 * @module
 */

import denoJson from "../deno.json" with { type: "json" };
import { commandLine, refuse } from "./cli.ts";

const DOWNLOAD_HOST = "dl.deno.land";

type Task = string | { command?: string };
const tasks = denoJson.tasks as Record<string, Task>;
const known = Object.keys(tasks).filter((name) => /^compile:.+-.+-/.test(name))
  .map((name) => name.slice("compile:".length));

const HELP = `deno task compile — one binary per target in dist/, built from the bundle

Usage: deno task compile [TARGET ...] [--help]

Runs deno task bundle once, then each target's compile:<target> task (the start task's
permissions) into dist/tmux-mcp-<target>. deno compile downloads Deno's runtime base for each
target (denort-<target>.zip, tens of MB, from ${DOWNLOAD_HOST}) unless it is in Deno's cache, so
this needs the network: it checks first and, when the download cannot happen, says so in one
line and builds nothing. Offline, deno task compile:check checks every target's module graph
and payload.

Arguments:
  TARGET      a target to build (default: all of them):
              ${known.join("\n              ")}
  --help, -h  this text
`;

const { positionals } = commandLine("compile", HELP, {}, true);
const targets = positionals.length > 0 ? positionals : known;
const unknown = targets.filter((t) => !known.includes(t));
if (unknown.length > 0) {
  refuse("compile", `unknown target ${unknown.join(", ")}; the targets are ${known.join(", ")}`);
}

function say(line: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(`${line}\n`));
}

function fail(line: string): never {
  say(`compile: ${line}`);
  Deno.exit(1);
}

/** The runtime base's address, as deno compile fetches it. */
function baseUrl(target: string): string {
  return `https://${DOWNLOAD_HOST}/release/v${Deno.version.deno}/denort-${target}.zip`;
}

/** Deno's cache folder, where a downloaded base is kept; null when deno cannot say. */
async function denoDir(): Promise<string | null> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  try {
    return (JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir?: string }).denoDir ??
      null;
  } catch {
    return null;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether the download host answers at all (any HTTP answer will do); the error if not. */
async function reachable(url: string): Promise<string | null> {
  try {
    const response = await fetch(url, {
      method: "HEAD",
      redirect: "manual",
      signal: AbortSignal.timeout(10_000),
    });
    await response.body?.cancel();
    return null;
  } catch (error) {
    // fetch's own message is "fetch failed"; the cause says why (a DNS error, a refusal).
    const parts = [];
    for (let e: unknown = error; e !== undefined && parts.length < 3; e = (e as Error).cause) {
      parts.push((e instanceof Error ? e.message : String(e)).split("\n")[0]);
    }
    return parts.join(": ");
  }
}

/** Removes what a failed `deno compile` leaves in dist/ (`tmux-mcp-<target>.tmp-<hex>`). */
async function removeLeftovers(): Promise<string[]> {
  const removed: string[] = [];
  try {
    for await (const entry of Deno.readDir("dist")) {
      if (/^tmux-mcp-.+\.tmp-[0-9a-f]+$/.test(entry.name)) {
        await Deno.remove(`dist/${entry.name}`).catch(() => {});
        removed.push(`dist/${entry.name}`);
      }
    }
  } catch {
    // no dist/: nothing was left
  }
  return removed;
}

// 1. Every runtime base this needs: from DENORT_BIN, from the cache, or downloadable.
if (!Deno.env.get("DENORT_BIN")) {
  const dir = await denoDir();
  const missing: string[] = [];
  for (const target of targets) {
    const cached = dir !== null &&
      await exists(`${dir}/dl/release/v${Deno.version.deno}/denort-${target}.zip`);
    if (!cached) missing.push(target);
  }
  if (missing.length > 0) {
    const error = await reachable(baseUrl(missing[0]));
    if (error !== null) {
      fail(
        `compiling needs the network, and ${DOWNLOAD_HOST} cannot be reached (${error}). ` +
          `deno compile downloads Deno's runtime base for each target (${
            missing.map((t) => `denort-${t}.zip`).join(", ")
          }) unless it is in Deno's cache. Nothing was built. Offline, deno task compile:check ` +
          "checks every target's module graph and payload; the release workflow builds the " +
          "real binaries.",
      );
    }
  }
}

// 2. The bundle once, then each target from it.
const bundle = await new Deno.Command(Deno.execPath(), { args: ["task", "bundle"] }).spawn()
  .status;
if (!bundle.success) fail("deno task bundle failed; nothing was compiled.");
const failed: string[] = [];
for (const target of targets) {
  const task = tasks[`compile:${target}`];
  const line = typeof task === "string" ? task : task.command ?? "";
  const words = line.trim().split(/\s+/);
  if (words[0] !== "deno" || words[1] !== "compile") {
    fail(`the compile:${target} task is not a deno compile line: ${line}`);
  }
  say(`compile: ${target}`);
  const status = await new Deno.Command(Deno.execPath(), { args: words.slice(1) }).spawn()
    .status;
  if (!status.success) failed.push(target);
}
const leftovers = await removeLeftovers();
if (failed.length > 0) {
  fail(
    `${failed.join(", ")} failed (see above)${
      leftovers.length > 0 ? `; removed ${leftovers.join(", ")}` : ""
    }. If the error above is a download error, the network went away: deno compile fetches ` +
      `each target's runtime base from ${DOWNLOAD_HOST}.`,
  );
}
say(`compile: built ${targets.map((t) => `dist/tmux-mcp-${t}`).join(", ")}`);
