/**
 * The command line every task script shares: `--help` (or `-h`) prints the script's usage on
 * stdout and exits 0 before any work; a command line the script cannot take is refused in one
 * line on stderr, `NAME: <problem> (deno task NAME --help)`, with exit status 2.
 *
 * @module
 */

import { parseArgs, type ParseArgsOptionsConfig } from "node:util";

/** What parseArgs is given: the script's own options, and --help. */
type Config<O extends ParseArgsOptionsConfig> = {
  args: string[];
  options: O & { help: { type: "boolean"; short: "h" } };
  allowPositionals: boolean;
  strict: true;
};

/** Refuses the command line of `deno task <task>`: one line on stderr, then exit status 2. */
export function refuse(task: string, problem: string): never {
  const line = `${task}: ${problem.trim().replace(/\s*\n\s*/g, " ")} (deno task ${task} --help)`;
  Deno.stderr.writeSync(new TextEncoder().encode(`${line}\n`));
  Deno.exit(2);
}

/**
 * `Deno.args` parsed for `deno task <task>` with its `options` and `--help`: on `--help` or
 * `-h` prints `help` on stdout and exits 0; an unknown option, an option without its value, or
 * an argument that is no option (unless `positionals` allows them) is {@link refuse}d.
 */
export function commandLine<const O extends ParseArgsOptionsConfig>(
  task: string,
  help: string,
  options: O,
  positionals = false,
): ReturnType<typeof parseArgs<Config<O>>> {
  const config: Config<O> = {
    args: Deno.args,
    options: { ...options, help: { type: "boolean", short: "h" } },
    allowPositionals: positionals,
    strict: true,
  };
  let parsed;
  try {
    parsed = parseArgs(config);
  } catch (error) {
    // Its hint on passing a positional argument that starts with "-" is no help here.
    refuse(task, (error as Error).message.replace(/\. To specify a positional argument.*/s, ""));
  }
  if ((parsed.values as { help?: boolean }).help) {
    Deno.stdout.writeSync(new TextEncoder().encode(`${help.trimEnd()}\n`));
    Deno.exit(0);
  }
  return parsed;
}

/**
 * The whole number `--<name>` was given (`value`), at least `min`; undefined when not given.
 * Anything else is {@link refuse}d.
 */
export function wholeNumber(
  task: string,
  name: string,
  value: string | undefined,
  min: number,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isSafeInteger(n) || n < min) {
    refuse(task, `--${name} takes a whole number from ${min}, not ${JSON.stringify(value)}`);
  }
  return n;
}
