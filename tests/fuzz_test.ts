/**
 * The fuzz (`deno task fuzz`, tests/helpers/fuzz_run.ts) run small, on a fixed seed, so that
 * every change meets the same 150 random calls: what a longer run found once stays found.
 * Waits are given at most a second, so the run's length does not hang on a tool's default.
 *
 * @module
 */

import assert from "node:assert/strict";
import { warn } from "../src/diagnostics.ts";
import { fuzz, replayCommand } from "./helpers/fuzz_run.ts";

const SEED = 20261207;
const CALLS = 150;
const MAX_WAIT_MS = 1_000;

Deno.test(`fuzz: ${CALLS} random calls (seed ${SEED}) break no invariant`, async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-fuzz-" });
  try {
    const result = await fuzz({
      seed: SEED,
      calls: CALLS,
      concurrency: 1,
      dir,
      maxWaitMs: MAX_WAIT_MS,
    });
    warn(
      `[fuzz] seed ${SEED}: ${result.calls} calls, ${result.held} held, ` +
        `${result.broken.length} broken, ${result.notes} noted, ${result.worlds} worlds`,
    );
    assert.equal(result.calls, CALLS);
    const report = result.broken.map((b) =>
      `${b.invariant} (call ${b.at}): ${b.detail}\n  ${replayCommand(b, MAX_WAIT_MS)}`
    );
    assert.deepEqual(report, [], report.join("\n"));
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
