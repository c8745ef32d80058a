/**
 * The agents feed behind `tmux://agents` waits on the agents' channel with a tmux client
 * (`wait-for`). tmux 3.3a keeps about 4 KB for good (until it exits) of every such client that
 * leaves unwoken: a feed that stops (its last subscriber gone) wakes its wait by a signal, so a
 * client that subscribes and unsubscribes over and over does not grow the person's tmux server.
 */

import assert from "node:assert/strict";
import { AGENTS_CHANNEL } from "../src/hooks/marks.ts";
import { connect } from "./helpers/mcp.ts";
import { processesNaming, TestTmux, waitFor, waitsOnChannel } from "./helpers/tmux.ts";

async function waiters(t: TestTmux): Promise<number[]> {
  return (await processesNaming(t.socket)).filter((p) => waitsOnChannel(p.args, AGENTS_CHANNEL))
    .map((p) => p.pid);
}

/** The tmux server's resident memory, in kB. */
async function serverRss(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]);
}

Deno.test("a feed that stops wakes its wait on the agents' channel: subscribing over and over leaves tmux no bigger", async () => {
  const t = await TestTmux.start();
  const c = await connect({ socketName: t.socket });
  try {
    const { pid } = await t.facts();
    const cycle = async () => {
      await c.client.subscribeResource({ uri: "tmux://agents" });
      await waitFor(async () => (await waiters(t)).length === 1, "the feed's waiter");
      await c.client.unsubscribeResource({ uri: "tmux://agents" });
      await waitFor(async () => (await waiters(t)).length === 0, "the waiter gone");
    };
    // tmux's first allocations for a channel and a client, then the cycles measured.
    for (let i = 0; i < 10; i++) await cycle();
    const before = await serverRss(pid);
    for (let i = 0; i < 120; i++) await cycle();
    const grown = await serverRss(pid) - before;
    // Killed unwoken, 120 waits kept about 600 kB; woken, what tmux keeps levels off (its
    // allocator: about 150 kB after 120, 200 after 360).
    assert.ok(grown < 350, `tmux grew by ${grown} kB over 120 subscriptions`);
  } finally {
    await c.close();
    await t.kill();
  }
});
