/**
 * Every deno.json task that runs a script of scripts/ answers `--help` (and `-h`) with its usage
 * on stdout and exit 0, before any work, and refuses a command line it cannot take in one line
 * on stderr that points at `--help`, with exit 2 and no stack trace. Each is run as a developer
 * runs it, `deno task NAME ...`, so the task's own permissions are the ones in force.
 *
 * @module
 */

import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };

const ROOT = new URL("../", import.meta.url).pathname;

type Task = string | { command?: string };

/** The tasks whose command runs a script of scripts/, from deno.json. */
const SCRIPT_TASKS = Object.entries(denoJson.tasks as Record<string, Task>)
  .filter(([, task]) =>
    /\sscripts\/\S+\.ts\b/.test(typeof task === "string" ? task : task.command ?? "")
  )
  .map(([name]) => name);

/** Command lines each task must refuse besides an unknown option: bad and missing values. */
const BAD: Record<string, string[][]> = {
  bench: [
    ["--sizes", "abc"],
    ["--runs=-3"],
    ["--runs", "-3"],
    ["--runs"],
    ["--live-only", "--ssh-only"],
  ],
  "bench:cold": [
    ["--runs", "x"],
    ["--source", "--bundle", "dist/bundle"],
    ["--bundle", "/no/such/dir"],
  ],
  smoke: [
    ["/no/such/binary"],
    ["--bundle", "/no/such/binary"],
  ],
  compile: [
    ["no-such-target"],
  ],
  fuzz: [
    ["--calls", "0"],
    ["--seed"],
    ["--protocol", "2024-11-05"],
    ["--tools", "resources/write"],
  ],
};

/**
 * How long one answer may take. Each is immediate; the bound only keeps a script that starts
 * working after all (a bench, the fuzz) from running for minutes: deno task passes the
 * SIGTERM on, and the scripts end what they started.
 */
const DEADLINE_MS = 60_000;

/** `deno task NAME ...args` in the checkout (quiet: without deno's own "Task" line). */
async function task(name: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", name, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(DEADLINE_MS),
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** Modification times of the files a --help must not write (tool-list's output). */
async function stamps(): Promise<(number | null)[]> {
  return await Promise.all(
    ["src/mcp/tool_list.json", "src/mcp/front_desk.json"].map((file) =>
      Deno.stat(`${ROOT}${file}`).then((s) => s.mtime?.getTime() ?? null, () => null)
    ),
  );
}

Deno.test("scripts --help: every script task of deno.json is found", () => {
  for (
    const name of [
      "bench",
      "bench:cold",
      "smoke",
      "context-cost",
      "compile",
      "compile:check",
      "inspect:strict",
      "lint:workflows",
      "tool-list",
      "fuzz",
    ]
  ) {
    assert.ok(SCRIPT_TASKS.includes(name), `${name} is not among ${SCRIPT_TASKS.join(", ")}`);
  }
});

for (const name of SCRIPT_TASKS) {
  Deno.test(`scripts --help: deno task ${name} answers --help and refuses a bad command line`, async () => {
    const bad = [["--no-such-option"], ...(BAD[name] ?? [])];
    const before = await stamps();
    const [help, short, ...refused] = await Promise.all([
      task(name, "--help"),
      task(name, "-h"),
      ...bad.map((args) => task(name, ...args)),
    ]);
    assert.equal(help.code, 0, `--help: exit ${help.code}\n${help.stderr}`);
    assert.match(help.stdout, new RegExp(`^Usage: deno task ${name} `, "m"));
    assert.match(help.stdout, /--help/);
    assert.equal(help.stderr, "", `--help wrote to stderr:\n${help.stderr}`);
    assert.deepEqual(short, help, "-h answers as --help does");
    assert.deepEqual(await stamps(), before, "--help wrote tool-list's files");

    for (const [i, out] of refused.entries()) {
      const line = `deno task ${name} ${bad[i].join(" ")}`;
      assert.equal(out.code, 2, `${line}: exit ${out.code}\n${out.stdout}${out.stderr}`);
      assert.equal(out.stdout, "", `${line} wrote to stdout:\n${out.stdout}`);
      assert.doesNotMatch(out.stderr, /Uncaught|\n\s+at /, `${line}: a stack trace`);
      assert.match(
        out.stderr,
        new RegExp(`^${name}: [^\\n]+ \\(deno task ${name} --help\\)\\n$`),
        `${line}: not one line pointing at --help:\n${out.stderr}`,
      );
    }
    assert.match(refused[0].stderr, /--no-such-option/);
  });
}
