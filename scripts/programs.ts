/**
 * What the scripts that fetch tools with npm share: a line on stdout, and a program run to its
 * end whose failure to start says what the script needs.
 *
 * @module
 */

/** Writes one line to stdout. */
export function say(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

/**
 * Runs `program` to its end with its output piped. One that cannot start is an error naming
 * it and ending in `needs` (what the script needs installed, and why).
 */
export async function output(
  program: string,
  args: string[],
  needs: string,
): Promise<Deno.CommandOutput> {
  try {
    return await new Deno.Command(program, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (error) {
    throw new Error(`cannot run ${program} (${(error as Error).message}); ${needs}`);
  }
}

/** {@link output}, failing with its stderr unless it succeeds; its stdout as text. */
export async function succeed(program: string, args: string[], needs: string): Promise<string> {
  const out = await output(program, args, needs);
  if (!out.success) {
    throw new Error(
      `${program} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
  return new TextDecoder().decode(out.stdout);
}
