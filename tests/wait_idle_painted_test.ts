/**
 * wait_for_idle on a pane whose screen changes by colour alone, against real tmux on a private
 * socket: cells erased with a background colour set (a progress bar drawn as coloured blanks)
 * change what a person sees, though no capture of the text shows it. The same erases with the
 * default background change nothing, and the pane goes quiet.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";

type Idle = { outcome: string; quietForMs: number };

/** A bar of green blanks that grows by one cell every 0.2 s for 6 s, by erases alone. */
const BAR = "printf 'progress: '; i=1; while [ $i -le 30 ]; do " +
  "printf '\\033[42m\\033[%dX\\033[0m' $i; i=$((i+1)); sleep 0.2; done; exec sleep 100";

/** The same erases, the background the default: nothing on screen changes. */
const PLAIN = "printf 'progress: '; i=1; while [ $i -le 30 ]; do " +
  "printf '\\033[K'; i=$((i+1)); sleep 0.2; done; exec sleep 100";

Deno.test("wait_for_idle: erases in a background colour are a change, in the default one none", async () => {
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    await t.tmux("respawn-pane", "-k", "-t", p, BAR);
    const bar = await c.ok<Idle>("wait_for_idle", { paneId: p, quietMs: 1_500, timeoutMs: 4_000 });
    assert.equal(bar.outcome, "timedOut");
    await t.tmux("respawn-pane", "-k", "-t", p, PLAIN);
    const plain = await c.ok<Idle>("wait_for_idle", {
      paneId: p,
      quietMs: 1_500,
      timeoutMs: 4_000,
    });
    assert.equal(plain.outcome, "idle");
  });
});
