/**
 * The fuzz as a test: a small run on a fixed seed that fails with each broken invariant and the
 * command that replays it (tests/fuzz_test.ts, tests/fuzz_judges_test.ts).
 *
 * @module
 */

import assert from "node:assert/strict";
import { warn } from "../../src/diagnostics.ts";
import { fuzz, type FuzzOptions, type FuzzResult, replayCommand } from "./fuzz_run.ts";

/** Waits are given at most a second, so a run's length does not hang on a tool's default. */
const MAX_WAIT_MS = 1_000;

/**
 * Runs the fuzz on `options`, one call at a time, and fails with each broken invariant;
 * returns its figures.
 */
export async function fuzzHolds(
  options: Omit<FuzzOptions, "dir" | "concurrency" | "maxWaitMs">,
): Promise<FuzzResult> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-fuzz-" });
  try {
    const result = await fuzz({ ...options, concurrency: 1, dir, maxWaitMs: MAX_WAIT_MS });
    warn(
      `[fuzz] seed ${options.seed}: ${result.calls} calls, ${result.held} held, ` +
        `${result.broken.length} broken, ${result.notes} noted, ` +
        (options.hookGuard ? `${result.asked} asked by the hook guard, ` : "") +
        `${result.tasks} run as tasks, ${result.moves} other requests, ${result.worlds} worlds`,
    );
    assert.equal(result.calls, options.calls);
    const report = result.broken.map((b) =>
      `${b.invariant} (call ${b.at}): ${b.detail}\n  ${replayCommand(b, MAX_WAIT_MS)}`
    );
    assert.deepEqual(report, [], report.join("\n"));
    return result;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
