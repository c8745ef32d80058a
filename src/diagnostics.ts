/**
 * Diagnostics for people: stderr only. stdout belongs to JSON-RPC, so the console (which the
 * `no-console` lint rule keeps out of the code) is never used.
 *
 * @module
 */

const encoder = new TextEncoder();

/**
 * Of `names`, the environment variables whose values are not UTF-8: Deno refuses to read them
 * (InvalidData), and a reader that took that for unset would act on another server, or not know
 * the pane it runs in (a `TMUX` whose socket path holds a Latin-1 byte: the caller's own pane
 * unguarded). Each start refuses them by name.
 */
export function notUnicode(names: readonly string[]): string[] {
  return names.filter((name) => {
    try {
      Deno.env.get(name);
      return false;
    } catch (error) {
      return error instanceof Deno.errors.InvalidData;
    }
  });
}

/** What to say of the variables {@link notUnicode} found, after "cannot start: ". */
export function notUnicodeText(names: readonly string[]): string {
  return `${names.join(", ")} ${names.length === 1 ? "holds" : "hold"} bytes that are not ` +
    "UTF-8, which Deno cannot read: read as unset, they would send tmux-mcp to another " +
    "server, or leave the pane it runs in unguarded. Set them in UTF-8 or unset them (under " +
    "tmux, a server whose socket path is UTF-8: tmux -S PATH).";
}

/** Writes one line (a newline is added) to stderr, whole. */
export function warn(line: string): void {
  const bytes = encoder.encode(`${line}\n`);
  let written = 0;
  try {
    while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
  } catch {
    // stderr closed: nobody is listening, and nothing else may take its place.
  }
}
