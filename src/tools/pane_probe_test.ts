import assert from "node:assert/strict";
import type { TmuxContext } from "../mcp/context.ts";
import { GONE, learnExitStatus, type PaneProbe } from "./pane_probe.ts";

/** A context that fails the test at any use: nothing may be asked of tmux. */
const untouchable = new Proxy({}, {
  get: (_, key) => {
    throw new Error(`asked the context for ${String(key)}`);
  },
}) as TmuxContext;

Deno.test("learnExitStatus: a pane a signal ended is as known as it gets: nothing is waited for", async () => {
  // tmux has no exit status for it, only the signal: waiting for one took two seconds.
  const probe: PaneProbe = { ...GONE, exists: true, dead: true, deadSignal: 9, pid: 5 };
  assert.equal(await learnExitStatus(untouchable, "%1", probe), probe);
  const exited: PaneProbe = { ...GONE, exists: true, dead: true, deadStatus: 3, pid: 5 };
  assert.equal(await learnExitStatus(untouchable, "%1", exited), exited);
  const alive: PaneProbe = { ...GONE, exists: true, dead: false, pid: 5 };
  assert.equal(await learnExitStatus(untouchable, "%1", alive), alive);
});
