/**
 * Starting tmux and ssh where the environment holds a variable Deno guards. Deno refuses to
 * start any program while a variable named `LD_*` or `DYLD_*` (any case) is set and not empty,
 * unless `--allow-run` is given without a list: such a variable could load code into the
 * program allowed. The flags a release binary bakes in list `tmux,ssh`, and `LD_LIBRARY_PATH`
 * is common in the shells MCP clients are started from (CUDA, HPC `module load`, conda), so
 * without this nothing at all could run there, and the refusal read as a missing flag.
 *
 * Deno names such variables in its refusal and lets the program start with it blank (this
 * process may not read its value: `--allow-env` lists only `TMUX*`). A start it refuses is
 * tried again with each variable it named set to "" for the child, and those stay blank for
 * every later start. A blank `LD_LIBRARY_PATH` is no extra folder for the loader; tmux and ssh
 * from the system need none. A tmux server this process starts passes the blanks on to its
 * panes, which the warning says.
 *
 * @module
 */

import { warn } from "../diagnostics.ts";

/** Most variables blanked: a refusal that names more is thrown as it is. */
const MAX_GUARDED = 32;

/**
 * The variables a Deno refusal to start a program names (`LD_LIBRARY_PATH`; all of them, comma
 * separated, when there are several), or none when the error is another one.
 */
export function guardedVariables(error: unknown): string[] {
  if (!(error instanceof Deno.errors.NotCapable)) return [];
  const match = /subprocess with (.+?) environment variables?\./.exec(error.message);
  return match ? match[1].split(", ").filter((name) => /^\S+$/.test(name)) : [];
}

/** The variables Deno refused to pass on, blank for every program this process starts. */
const blanked = new Set<string>();

/** The variables blanked so far for the programs this process starts (for messages). */
export function blankedVariables(): readonly string[] {
  return [...blanked];
}

/**
 * Starts `program` as `new Deno.Command(program, options).spawn()` does, with every variable
 * Deno refused so far set to "" (under what `options.env` sets); a new refusal of that kind
 * adds its variable (said once on stderr) and tries again. Other errors are thrown as they are.
 */
export function spawnChild(program: string, options: Deno.CommandOptions): Deno.ChildProcess {
  while (true) {
    const env = blanked.size === 0
      ? options.env
      : { ...Object.fromEntries([...blanked].map((name) => [name, ""])), ...options.env };
    try {
      return new Deno.Command(program, env === undefined ? options : { ...options, env })
        .spawn();
    } catch (error) {
      const names = guardedVariables(error).filter((name) => !blanked.has(name));
      if (names.length === 0 || blanked.size + names.length > MAX_GUARDED) throw error;
      for (const name of names) blanked.add(name);
      const list = names.join(", ");
      warn(
        `tmux-mcp: warning: ${list} ${names.length > 1 ? "are" : "is"} set, and Deno starts no ` +
          `program with ${names.length > 1 ? "them" : "it"} (it could load code into tmux or ` +
          `ssh): they run with ${list} blank. A tmux server tmux-mcp starts gives its panes ` +
          `${list} blank too: start tmux yourself to keep ${names.length > 1 ? "them" : "it"}, ` +
          "or set it in tmux (set_environment).",
      );
    }
  }
}
