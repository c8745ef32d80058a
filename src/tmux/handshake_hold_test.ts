/**
 * The per-server hold a control client's handshake puts on our other acts (handshake_hold.ts):
 * its rules alone here; against a real tmux whose clients shake hands slowly in
 * tests/handshake_hold_test.ts.
 */
import assert from "node:assert/strict";
import { HandshakeHolds, type HoldTimes, onlyReads } from "./handshake_hold.ts";

const cancelled = () => new Error("cancelled");
const LONG: HoldTimes = { holdMs: 60_000, drainMs: 60_000, farMs: 60_000 };

/** Whether `promise` has settled once every pending job of this turn has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(() => done = true, () => done = true);
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise((r) => setTimeout(r, 0));
  return done;
}

Deno.test("handshake hold: acts pass at once while no client of ours shakes hands", async () => {
  const holds = new HandshakeHolds(cancelled, LONG);
  const a = await holds.act("s");
  const b = await holds.act("s");
  a();
  a(); // twice: counted once
  b();
  assert.equal(holds.servers, 0);
});

Deno.test("handshake hold: a start waits for the acts already sent, and new acts wait for it", async () => {
  const holds = new HandshakeHolds(cancelled, LONG);
  const sent = await holds.act("s");
  const start = holds.start("s");
  assert.equal(await settled(start), false, "began with an act in flight");
  // An act that comes now waits for the start, not only for the act before it.
  const later = holds.act("s");
  sent();
  const release = await start;
  assert.equal(await settled(later), false, "an act went during the handshake");
  // Another server is not held.
  (await holds.act("other"))();
  release();
  (await later)();
  assert.equal(holds.servers, 0);
});

Deno.test("handshake hold: starts go one at a time, and the acts that waited go before the next", async () => {
  const holds = new HandshakeHolds(cancelled, LONG);
  const order: string[] = [];
  const first = await holds.start("s");
  const second = holds.start("s").then((r) => (order.push("second start"), r));
  const waited = holds.act("s").then((r) => (order.push("act"), r));
  assert.equal(await settled(second), false);
  first();
  const act = await waited;
  assert.equal(await settled(second), false, "the next start began before the act was over");
  act();
  (await second)();
  assert.deepEqual(order, ["act", "second start"]);
  assert.equal(holds.servers, 0);
});

Deno.test("handshake hold: waits stop when their call is cancelled, and leave nothing held", async () => {
  const holds = new HandshakeHolds(cancelled, LONG);
  const release = await holds.start("s");
  const stop = new AbortController();
  const act = holds.act("s", stop.signal);
  const start = holds.start("s", stop.signal);
  stop.abort();
  await assert.rejects(act, /cancelled/);
  await assert.rejects(start, /cancelled/);
  release();
  assert.equal(holds.servers, 0);
  // Already cancelled: not even queued.
  await assert.rejects(holds.act("s", AbortSignal.abort()), /cancelled/);
  (await holds.start("s"))();
  assert.equal(holds.servers, 0);
  // Cancelled while it waits for an act in flight: the start never holds.
  const sent = await holds.act("s");
  const draining = new AbortController();
  const blocked = holds.start("s", draining.signal);
  draining.abort();
  await assert.rejects(blocked, /cancelled/);
  (await holds.act("s"))();
  sent();
  assert.equal(holds.servers, 0);
});

Deno.test("handshake hold: a stuck handshake or act holds the others only for its bound", async () => {
  const holds = new HandshakeHolds(cancelled, { holdMs: 30, drainMs: 30, farMs: 30 });
  // Never answered: new acts go once the hold's bound has passed.
  const stuck = await holds.start("s");
  (await holds.act("s"))();
  stuck();
  // An act never over: a start begins once the drain's bound has passed.
  const never = await holds.act("s");
  const release = await holds.start("s");
  release();
  never();
  assert.equal(holds.servers, 0);
});

Deno.test("handshake hold: a start waits past the drain's bound for an act not yet at tmux", async () => {
  const holds = new HandshakeHolds(cancelled, { holdMs: 60_000, drainMs: 20, farMs: 60_000 });
  // On its way (an SSH host's start-up files): the drain's bound passes, the start still waits.
  const far = await holds.farAct("s");
  const start = holds.start("s");
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(await settled(start), false, "began while an act was on its way to tmux");
  // At tmux now: an act in flight like any other, waited for within the drain's bound (passed).
  far.arrived();
  const release = await start;
  release();
  far.over();
  assert.equal(holds.servers, 0);
  // One that ends on its way (cancelled, failed) lets the start go as well.
  const dropped = await holds.farAct("s");
  const next = holds.start("s");
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(await settled(next), false);
  dropped.over();
  (await next)();
  assert.equal(holds.servers, 0);
});

Deno.test("handshake hold: an act on its way is waited for only for its own bound", async () => {
  const holds = new HandshakeHolds(cancelled, { holdMs: 60_000, drainMs: 20, farMs: 40 });
  const lost = await holds.farAct("s");
  (await holds.start("s"))();
  lost.over();
  assert.equal(holds.servers, 0);
});

Deno.test("handshake hold: only a line of reads goes without a turn", () => {
  assert.equal(onlyReads(["capture-pane", "-p", "-t", "%1"]), true);
  assert.equal(onlyReads(["display-message", "-p", "#{pane_id}", ";", "list-panes", "-a"]), true);
  assert.equal(onlyReads(["show-options", "-s;", "lsw", "-a"]), true);
  assert.equal(onlyReads(["display-message", "-p", "x", ";", "select-pane", "-t", "%1"]), false);
  assert.equal(onlyReads(["if-shell", "true", "list-panes"]), false);
  assert.equal(onlyReads(["new-session", "-d"]), false);
  assert.equal(onlyReads(["refresh-client", "-B", "x:@1:#{pane_id}"]), false);
  assert.equal(onlyReads([]), false);
});
