import assert from "node:assert/strict";
import { ServerGates } from "./server_turns.ts";

/** A turn asked for, and the names of those that got theirs, in order. */
function asker(gates: ServerGates, order: string[]) {
  return (name: string, options: { background?: boolean; signal?: AbortSignal } = {}) =>
    gates.turn("s", options).then((leave) => {
      order.push(name);
      return leave;
    });
}

Deno.test("process turns: every one-off call before any background read, each kind in order", async () => {
  const gates = new ServerGates(1);
  const order: string[] = [];
  const ask = asker(gates, order);
  const first = await ask("first");
  const waiting = [
    ask("read 1", { background: true }),
    ask("call 1"),
    ask("read 2", { background: true }),
    ask("call 2"),
  ];
  // One at a time: each leaves as soon as it has its turn.
  for (const w of waiting) w.then((leave) => leave());
  first();
  await Promise.all(waiting);
  assert.deepEqual(order, ["first", "call 1", "call 2", "read 1", "read 2"]);
});

Deno.test("process turns: background reads never take the last free one", async () => {
  const gates = new ServerGates(3);
  const order: string[] = [];
  const ask = asker(gates, order);
  const reads = [
    await ask("read 1", { background: true }),
    await ask("read 2", { background: true }),
  ];
  const third = ask("read 3", { background: true });
  // The last turn is a one-off call's, at once, though a read asked first.
  const call = await ask("call");
  assert.deepEqual(order, ["read 1", "read 2", "call"]);
  call();
  // Free again, but the last: still not a read's.
  await Promise.resolve();
  assert.deepEqual(order, ["read 1", "read 2", "call"]);
  reads[0]();
  (await third)();
  reads[1]();
  assert.deepEqual(order, ["read 1", "read 2", "call", "read 3"]);
});

Deno.test("process turns: one cancelled while it waits leaves the line at once", async () => {
  const gates = new ServerGates(1);
  const order: string[] = [];
  const ask = asker(gates, order);
  const first = await ask("first");
  const stop = new AbortController();
  const dropped = ask("read", { background: true, signal: stop.signal });
  const call = ask("call");
  stop.abort();
  await assert.rejects(dropped);
  first();
  (await call)();
  assert.deepEqual(order, ["first", "call"]);
  // Nothing was lost or held: the one turn is free again.
  (await ask("again"))();
  assert.deepEqual(order, ["first", "call", "again"]);
});
