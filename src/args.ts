/**
 * Long and short command-line options, strictly: what the server's command line needs and no
 * more. node:util's parseArgs does the same, but importing node:util brings Deno's Node layer
 * with it, about 5 MB of resident memory for the life of the server.
 *
 * @module
 */

import { meantHint } from "./near_miss.ts";

/** One option: a string (`--name value`, `--name=value`; repeatable when `multiple`) or a flag. */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  readonly multiple?: boolean;
}

/** What the options parsed to, by option name: true, a string, or (`multiple`) strings. */
export type ParsedOptions<O extends Readonly<Record<string, OptionSpec>>> = {
  -readonly [K in keyof O]?: O[K]["type"] extends "boolean" ? true
    : O[K]["multiple"] extends true ? string[]
    : string;
};

/** A command line that does not fit the options; the message names the culprit. */
export class ArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArgsError";
  }
}

/**
 * Parses `args` against `options`. Refuses an unknown option, a string option without its value
 * (or with one that looks like another option: `--name=-x` passes one that starts with a dash),
 * a value given to a flag, and any argument that is not an option. A string option given twice is
 * refused unless it is `multiple`: command lines are often put together from several places (a
 * wrapper, a client's `args`), and keeping only the last value would drop an earlier restriction
 * (`--deny-tools a --deny-tools b`) without a word.
 */
export function parseOptions<const O extends Readonly<Record<string, OptionSpec>>>(
  args: readonly string[],
  options: O,
): ParsedOptions<O> {
  const values: Record<string, string | string[] | true> = {};
  const byShort = new Map(
    Object.entries(options).flatMap(([name, spec]) => spec.short ? [[spec.short, name]] : []),
  );
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    let name: string;
    let inline: string | undefined;
    let shown: string;
    if (arg.startsWith("--") && arg.length > 2) {
      const eq = arg.indexOf("=");
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
      shown = `--${name}`;
    } else if (/^-[^-]$/.test(arg)) {
      shown = arg;
      name = byShort.get(arg.slice(1)) ?? "";
    } else {
      throw new ArgsError(
        `Unexpected argument '${arg}'. This command does not take positional arguments`,
      );
    }
    const spec = Object.hasOwn(options, name) ? options[name] : undefined;
    if (!spec) {
      const hint = shown.startsWith("--") ? meantHint(name, Object.keys(options), "--") : "";
      throw new ArgsError(`Unknown option '${shown}'${hint}`);
    }
    if (spec.type === "boolean") {
      if (inline !== undefined) throw new ArgsError(`Option '${shown}' does not take an argument`);
      values[name] = true;
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = args[i + 1];
      if (next === undefined) throw new ArgsError(`Option '${shown} <value>' argument missing`);
      if (next.startsWith("-")) {
        throw new ArgsError(
          `Option '${shown} <value>' argument is ambiguous. Did you forget to specify the ` +
            `option argument for '${shown}'? To give a value that starts with a dash, use ` +
            `'${shown}=${next}'`,
        );
      }
      value = next;
      i++;
    }
    if (spec.multiple) {
      const before = values[name];
      values[name] = [...(Array.isArray(before) ? before : []), value];
    } else {
      if (Object.hasOwn(values, name)) {
        throw new ArgsError(`Option '--${name}' is given twice; give it once`);
      }
      values[name] = value;
    }
  }
  return values as ParsedOptions<O>;
}
