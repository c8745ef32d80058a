/**
 * A clock for promises of wall time ("ends within a second") on a machine busier than it has
 * cores (a CI runner with four test files at once, each with its tmux servers and MCP
 * processes): there the process under test waits its turn for a CPU, and that wait is the
 * machine's, not the code's. Linux counts it per thread (`/proc/PID/schedstat`: time on a CPU,
 * time waiting for one); elsewhere, or for the test's own process, nothing is taken off.
 *
 * @module
 */

/** How often the waited time of the process under test is read. */
const SAMPLE_MS = 5;

/** What {@link timed} measured. */
export interface Measured {
  /** Milliseconds from start to end. */
  readonly wall: number;
  /** The wall time less what the process under test spent waiting for a CPU meanwhile. */
  readonly own: number;
}

/**
 * Runs `fn` and says how long it took; with `pid`, a process under test (another than this
 * one), also how much of that its main thread (a Deno process's JavaScript) spent waiting for
 * a CPU, read every few milliseconds until it has ended (the last few milliseconds before
 * it ended are not counted: what is taken off is never too much).
 */
export async function timed<T>(
  fn: () => Promise<T>,
  pid?: number,
): Promise<{ value: T; took: Measured }> {
  const began = performance.now();
  const first = pid === undefined ? null : waited(pid);
  let last = first;
  const timer = first === null ? undefined : setInterval(() => {
    last = waited(pid!) ?? last;
  }, SAMPLE_MS);
  try {
    const value = await fn();
    const wall = performance.now() - began;
    const machine = first === null || last === null ? 0 : last - first;
    return { value, took: { wall, own: wall - machine } };
  } finally {
    clearInterval(timer);
  }
}

/** Milliseconds `pid`'s main thread has waited for a CPU since it started; null if unknown. */
function waited(pid: number): number | null {
  try {
    const fields = Deno.readTextFileSync(`/proc/${pid}/schedstat`).trim().split(" ");
    const ns = Number(fields[1]);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

/** For an assertion message: the wall time, and how much of it was the machine's. */
export function tookText({ wall, own }: Measured): string {
  const machine = Math.round(wall - own);
  return `${Math.round(wall)} ms${machine > 0 ? ` (${machine} ms of it waiting for a CPU)` : ""}`;
}
