/**
 * A respawn reads the server's control clients and moves up each one's place in the pane's
 * output on its own line (control.ts's withPlaceResets): a client of ours for watches that
 * attached in between would be missed, and a busy pane's output queued for it would crash tmux
 * 3.3a at the respawn (tmux/tmux#5499). None attaches meanwhile: one asked for waits until the
 * respawn is over, one already on its way has attached first (and is read). Real tmux on a
 * private socket.
 */

import assert from "node:assert/strict";
import { controlFor, withPlaceResets } from "../src/tmux/control.ts";
import type { Watch } from "../src/tmux/control_connection.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import type { ServerAddress } from "../src/tmux/server_address.ts";
import { TestTmux, waitFor, withRunner } from "./helpers/tmux.ts";

/**
 * Whether `check` holds at some look within `ms`: for what must not happen while a step runs
 * (had it happened, it would show well within the bound).
 */
async function happensWithin(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

/** A runner whose control clients start only once {@link release} is called. */
class HeldClients extends TmuxRunner {
  readonly #gate = Promise.withResolvers<void>();
  asked = false;

  release(): void {
    this.#gate.resolve();
  }

  override async spawnPersistent(
    address: ServerAddress,
    args: readonly string[],
    env?: Readonly<Record<string, string>>,
  ): ReturnType<TmuxRunner["spawnPersistent"]> {
    this.asked = true;
    await this.#gate.promise;
    return await super.spawnPersistent(address, args, env);
  }
}

Deno.test("a client for watches asked for during a respawn attaches only after it", async () => {
  await withRunner(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    let watch: Promise<Watch> | undefined;
    await withPlaceResets(runner, address, t.ids.paneId, async (resets) => {
      assert.deepEqual(resets, []);
      watch = control.watch(t.ids.paneId, [t.ids.sessionId], () => {});
      const attached = await happensWithin(async () => (await t.outputClients()).length > 0, 1_000);
      assert.equal(attached, false, "no client of ours attached between the read and the line");
    });
    (await watch!).close();
    assert.equal((await t.outputClients()).length, 1, "the watch's client, after the respawn");
  });
});

Deno.test("a client for watches already on its way when a respawn begins has attached, and is read, before the respawn's line", async () => {
  const t = await TestTmux.start();
  const runner = new HeldClients();
  const address = { socketName: t.socket };
  const control = controlFor(runner, address);
  try {
    const watch = control.watch(t.ids.paneId, [t.ids.sessionId], () => {});
    await waitFor(() => runner.asked, "the client on its way");
    const seen: string[][][] = [];
    const respawned = withPlaceResets(runner, address, t.ids.paneId, (resets) => {
      seen.push(resets);
      return Promise.resolve();
    });
    // Read now, the clients would not include it: the respawn waits for it instead.
    assert.equal(await happensWithin(() => Promise.resolve(seen.length > 0), 500), false);
    runner.release();
    await respawned;
    const [name] = await t.outputClients();
    assert.deepEqual(seen, [[
      ["refresh-client", "-t", name, "-A", `${t.ids.paneId}:pause`],
      ["refresh-client", "-t", name, "-A", `${t.ids.paneId}:continue`],
    ]]);
    (await watch).close();
  } finally {
    runner.release();
    await runner.close();
    await t.kill();
  }
});
