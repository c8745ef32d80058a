import assert from "node:assert/strict";
import { Waker } from "./waker.ts";

/** Whether `p` has settled once everything already queued has run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(() => done = true);
  // A timer of 0 runs after every promise job already queued.
  await new Promise((r) => setTimeout(r, 0));
  return done;
}

const FOREVER = 3_600_000;

Deno.test("a wake ends the sleep under way", async () => {
  const waker = new Waker();
  const signal = new AbortController().signal;
  const sleep = waker.sleep(FOREVER, signal);
  assert.equal(await settled(sleep), false);
  waker.wake();
  assert.equal(await settled(sleep), true);
  // Answered: the next sleep sleeps.
  const next = waker.sleep(FOREVER, signal);
  assert.equal(await settled(next), false);
  waker.wake();
  await next;
});

Deno.test("a wake while nobody sleeps ends the next sleep at once: it is never lost", async () => {
  const waker = new Waker();
  const signal = new AbortController().signal;
  // Output arrives while the sleeper awaits something else (a check of the pane).
  waker.wake();
  assert.equal(await settled(waker.sleep(FOREVER, signal)), true);
  // Once, not for ever.
  const after = waker.sleep(FOREVER, signal);
  assert.equal(await settled(after), false);
  waker.wake();
  await after;
});

Deno.test("a wake from before the sleeper's last look is forgotten", async () => {
  const waker = new Waker();
  const signal = new AbortController().signal;
  waker.wake();
  waker.looking();
  const sleep = waker.sleep(FOREVER, signal);
  assert.equal(await settled(sleep), false);
  // A wake after the look counts.
  waker.wake();
  assert.equal(await settled(sleep), true);
  waker.looking();
  waker.wake();
  assert.equal(await settled(waker.sleep(FOREVER, signal)), true);
});

Deno.test("an abort ends a sleep, and a sleep begun aborted does not begin", async () => {
  const waker = new Waker();
  const abort = new AbortController();
  const sleep = waker.sleep(FOREVER, abort.signal);
  abort.abort();
  assert.equal(await settled(sleep), true);
  assert.equal(await settled(waker.sleep(FOREVER, abort.signal)), true);
  // The timer ends a sleep too (0 ms: at once).
  await waker.sleep(0, new AbortController().signal);
});
