/**
 * A clock for promises of wall time ("ends within a second") on a machine busier than it has
 * cores (a CI runner with four test files at once, each with its tmux servers and MCP
 * processes): there the process under test waits its turn for a CPU, and that wait is the
 * machine's, not the code's. Linux counts it per thread (`/proc/PID/task/TID/schedstat`: time
 * on a CPU, time waiting for one); elsewhere, or for the test's own process, nothing is taken
 * off.
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
 * one), also how much of that its threads spent waiting for a CPU, read every few milliseconds
 * until it has ended (what they waited after the last read is not counted).
 */
export async function timed<T>(
  fn: () => Promise<T>,
  pid?: number,
): Promise<{ value: T; took: Measured }> {
  const began = performance.now();
  const clock = pid === undefined ? null : new WaitClock(pid);
  const timer = clock === null ? undefined : setInterval(() => clock.read(), SAMPLE_MS);
  try {
    const value = await fn();
    const wall = performance.now() - began;
    return { value, took: { wall, own: wall - (clock?.waited ?? 0) } };
  } finally {
    clearInterval(timer);
  }
}

/**
 * What `pid`'s threads have waited for a CPU since the clock was made, summed over threads.
 * Every thread, not the main one only: a Deno process notices its input's end, and the end of
 * its children, on threads of its own, and its exit waits for them. Each thread counts from
 * when it was first read (a thread born meanwhile: from its first read) to its last read (a
 * thread that ended: what it waited before that), so the sum only grows.
 */
class WaitClock {
  readonly #pid: number;
  /** Per thread: nanoseconds waited at its first read and at its last. */
  readonly #threads = new Map<string, { first: number; last: number }>();

  constructor(pid: number) {
    this.#pid = pid;
    this.read();
  }

  /** Reads every thread's wait now (nothing once the process is gone). */
  read(): void {
    let tasks: Deno.DirEntry[];
    try {
      tasks = [...Deno.readDirSync(`/proc/${this.#pid}/task`)];
    } catch {
      return;
    }
    for (const task of tasks) {
      let ns: number;
      try {
        ns = Number(
          Deno.readTextFileSync(`/proc/${this.#pid}/task/${task.name}/schedstat`)
            .split(" ")[1],
        );
      } catch {
        continue; // ended meanwhile: its last read stands
      }
      if (!Number.isFinite(ns)) continue;
      const seen = this.#threads.get(task.name);
      if (seen) seen.last = ns;
      else this.#threads.set(task.name, { first: ns, last: ns });
    }
  }

  /** Milliseconds waited, all threads together, between their first and last reads. */
  get waited(): number {
    let ns = 0;
    for (const { first, last } of this.#threads.values()) ns += last - first;
    return ns / 1e6;
  }
}

/** For an assertion message: the wall time, and how much of it was the machine's. */
export function tookText({ wall, own }: Measured): string {
  const machine = Math.round(wall - own);
  return `${Math.round(wall)} ms${machine > 0 ? ` (${machine} ms of it waiting for a CPU)` : ""}`;
}
