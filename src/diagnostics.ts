/**
 * Diagnostics for people: stderr only. stdout belongs to JSON-RPC, so the console (which the
 * `no-console` lint rule keeps out of the code) is never used.
 *
 * @module
 */

const encoder = new TextEncoder();

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
