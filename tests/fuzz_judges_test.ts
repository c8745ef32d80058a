/**
 * The fuzz's other judges, run small on fixed seeds beside tests/fuzz_test.ts: the agent hook's
 * guard (`deno task fuzz --hook-guard`) over the tools it judges, and `--own-panes-only`
 * (`deno task fuzz --own-panes-only`) over every tool.
 *
 * @module
 */

import assert from "node:assert/strict";
import { FOCUS_TOOLS } from "../src/hooks/focus.ts";
import { BATCH_TOOL, GUARDED_TOOLS } from "../src/hooks/guarded_calls.ts";
import { UNZOOM_TOOLS } from "../src/hooks/unzoom.ts";
import { VIEW_TOOLS } from "../src/hooks/view.ts";
import { reachesTmux } from "./helpers/fuzz_checks.ts";
import { fuzzHolds } from "./helpers/fuzz_holds.ts";

/** The hook guard's run: the tools it judges, and the batch that nests them. */
const HOOK_SEED = 20261204;
const HOOK_CALLS = 50;
const HOOK_TOOLS = [
  ...new Set([...GUARDED_TOOLS, ...FOCUS_TOOLS, ...UNZOOM_TOOLS, ...VIEW_TOOLS, BATCH_TOOL]),
];
const FENCE_SEED = 20261205;
const FENCE_CALLS = 50;

Deno.test(`fuzz: ${HOOK_CALLS} random calls the hook guard judges (seed ${HOOK_SEED}), under a keeper's tmux.conf, break none of its promises`, async () => {
  await fuzzHolds({
    seed: HOOK_SEED,
    calls: HOOK_CALLS,
    tools: HOOK_TOOLS,
    hookGuard: true,
    config: 2,
  });
});

Deno.test(`fuzz: ${FENCE_CALLS} random calls under --own-panes-only (seed ${FENCE_SEED}) act on no pane the server did not create`, async () => {
  await fuzzHolds({ seed: FENCE_SEED, calls: FENCE_CALLS, ownPanesOnly: true, config: 0 });
});

Deno.test("fuzz checks: the calls --own-panes-only does not fence by design, as README lists them", () => {
  const call = (tool: string, args: Record<string, unknown> = {}) => ({ tool, arguments: args });
  for (const tool of ["set_hook", "set_option", "set_environment", "display_message"]) {
    assert.ok(reachesTmux(call(tool)), tool);
  }
  assert.ok(
    reachesTmux(call("call_tools_batch", { operations: [{ tool: "set_hook", arguments: {} }] })),
  );
  for (const tool of ["send_keys", "kill_pane", "pipe_pane", "respawn_pane", "join_pane"]) {
    assert.ok(!reachesTmux(call(tool)), tool);
  }
});
