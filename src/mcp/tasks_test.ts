import assert from "node:assert/strict";
import { callBoundMs, grantedTtlMs, TASK_LIMITS } from "./tasks.ts";
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from "./wait_timeouts.ts";

Deno.test("a task call's own bound: its timeout as the tool clamps it, whatever the arguments hold", () => {
  assert.equal(callBoundMs("wait_for_text", { timeoutMs: 2_000 }), 2_000);
  assert.equal(callBoundMs("wait_for_idle", {}), DEFAULT_TIMEOUT_MS);
  assert.equal(callBoundMs("run_command", { timeoutMs: 10 }), MIN_TIMEOUT_MS);
  assert.equal(callBoundMs("run_command", { timeoutMs: 1e12 }), MAX_TIMEOUT_MS);
  assert.equal(callBoundMs("get_command_result", {}), 0, "waitMs defaults to no wait");
  assert.equal(callBoundMs("get_command_result", { waitMs: 5_000 }), 5_000);
  assert.equal(callBoundMs("get_command_result", { waitMs: 1e12 }), MAX_TIMEOUT_MS);
  assert.equal(callBoundMs("get_command_result", { waitMs: -5 }), 0);
  // Arguments not checked yet: anything but a finite number counts as absent.
  for (const odd of ["60000", NaN, Infinity, -Infinity, null, [1], { valueOf: () => 1 }]) {
    assert.equal(callBoundMs("wait_for_text", { timeoutMs: odd }), DEFAULT_TIMEOUT_MS, String(odd));
    assert.equal(callBoundMs("get_command_result", { waitMs: odd }), 0, String(odd));
  }
  for (const args of [undefined, null, "x", 7, []]) {
    assert.equal(callBoundMs("wait_for_text", args), DEFAULT_TIMEOUT_MS);
  }
  assert.equal(
    callBoundMs("wait_for_text", JSON.parse('{"__proto__": {"timeoutMs": 1}}')),
    DEFAULT_TIMEOUT_MS,
  );
});

Deno.test("a task's ttl: what was asked, bounded, and never shorter than its call may run", () => {
  const kept = TASK_LIMITS.keptPastBoundMs;
  assert.equal(grantedTtlMs(undefined, 30_000), TASK_LIMITS.defaultTtlMs);
  assert.equal(grantedTtlMs(1, 0), Math.max(TASK_LIMITS.minTtlMs, kept));
  assert.equal(grantedTtlMs(1, 60_000), 60_000 + kept);
  assert.equal(grantedTtlMs(200_000, 60_000), 200_000);
  assert.equal(grantedTtlMs(2 ** 40, 0), TASK_LIMITS.maxTtlMs);
  assert.equal(grantedTtlMs(1.5, 0), Math.max(TASK_LIMITS.minTtlMs, kept));
  assert.ok(grantedTtlMs(0, MAX_TIMEOUT_MS) <= TASK_LIMITS.maxTtlMs);
});
