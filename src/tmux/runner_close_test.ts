/**
 * The runner's close hooks under a deadline: hooks that never settle (a tmux that does not
 * answer) hold the close until the deadline, not each until its own bound.
 */

import assert from "node:assert/strict";
import { BEGUN_CLOSE_MS, CloseHooks } from "./runner_close.ts";

const never = () => new Promise<void>(() => {});

Deno.test("close hooks: early and closing hooks that never settle are waited for until the one deadline", async () => {
  const hooks = new CloseHooks();
  let early = 0;
  let atClose = 0;
  hooks.onBegin(() => (early++, never()));
  hooks.onClose(() => (atClose++, never()));
  hooks.begin();
  const began = performance.now();
  await hooks.run({ hooksBy: began + 50, by: began + 60 });
  const took = performance.now() - began;
  assert.deepEqual([early, atClose], [1, 1], "each hook ran once");
  // Timers never fire early; the early hooks' own bound (from their beginning) is far longer.
  assert.ok(took >= 49, `returned after ${took} ms, before the deadline`);
  assert.ok(took < BEGUN_CLOSE_MS, `held ${Math.round(took)} ms: the early hooks' own bound`);
});

Deno.test("close hooks: settled hooks end the wait; none at all means no wait", async () => {
  const hooks = new CloseHooks();
  let done = false;
  hooks.onClose(() => Promise.resolve().then(() => void (done = true)));
  await hooks.run({ hooksBy: performance.now() + 60_000, by: performance.now() + 60_000 });
  assert.ok(done);
  // Already begun and no hook left: nothing to wait for, even with a long bound.
  await hooks.run(60_000);
});
