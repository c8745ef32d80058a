/**
 * The fuzz (`deno task fuzz`, tests/helpers/fuzz_run.ts) run small, on a fixed seed, so that
 * every change meets the same 150 random calls: what a longer run found once stays found.
 * Waits are given at most a second, so the run's length does not hang on a tool's default.
 *
 * @module
 */

import assert from "node:assert/strict";
import { warn } from "../src/diagnostics.ts";
import { badErrorText } from "./helpers/fuzz_checks.ts";
import { fuzz, replayCommand } from "./helpers/fuzz_run.ts";
import { agentView } from "./helpers/fuzz_world.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

const SEED = 20261207;
const CALLS = 150;
const MAX_WAIT_MS = 1_000;

Deno.test(`fuzz: ${CALLS} random calls (seed ${SEED}) break no invariant`, async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-fuzz-" });
  try {
    const result = await fuzz({
      seed: SEED,
      calls: CALLS,
      concurrency: 1,
      dir,
      maxWaitMs: MAX_WAIT_MS,
    });
    warn(
      `[fuzz] seed ${SEED}: ${result.calls} calls, ${result.held} held, ` +
        `${result.broken.length} broken, ${result.notes} noted, ${result.worlds} worlds`,
    );
    assert.equal(result.calls, CALLS);
    const report = result.broken.map((b) =>
      `${b.invariant} (call ${b.at}): ${b.detail}\n  ${replayCommand(b, MAX_WAIT_MS)}`
    );
    assert.deepEqual(report, [], report.join("\n"));
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

// The checks themselves: a fuzz that cries wolf is read less, and one that misses proves nothing.

Deno.test("fuzz checks: a resize wraps the agent's pane anew and moves rows to history; its view stays", async () => {
  const t = await TestTmux.start("main", {
    width: 40,
    height: 6,
    command:
      "sh -c 'printf \"é[ one long line that wraps at any narrower width\\nrow 2\\nrow 3\\n\"; exec cat'",
  });
  try {
    const w = { t, agentPane: t.ids.paneId };
    await waitFor(async () => (await agentView(w)).includes("row 3"), "the pane's rows");
    const before = await agentView(w);
    await t.tmux("resize-window", "-t", t.ids.windowId, "-x", "1", "-y", "2");
    // tmux wraps the rows anew in its loop after the command: once every row on the screen is
    // one character wide.
    await waitFor(async () => {
      const rows = (await t.tmux("capture-pane", "-p", "-t", t.ids.paneId)).split("\n");
      return rows.every((row) => [...row].length <= 1);
    }, "the rows wrapped at width 1");
    assert.equal(await agentView(w), before);
    await t.tmux("resize-window", "-t", t.ids.windowId, "-x", "13", "-y", "9");
    assert.equal(await agentView(w), before);
    await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "typed");
    await waitFor(async () => (await agentView(w)) !== before, "a keystroke seen");
  } finally {
    await t.kill();
  }
});

Deno.test("fuzz checks: 'undefined' in an error is a slip unless an argument or a name holds it", () => {
  const slip = 'No session "undefined" on socket "s". Sessions: $0 "main".';
  assert.match(badErrorText(slip, { session: "$9" }) ?? "", /undefined/);
  assert.equal(badErrorText(slip, { session: "undefined" }), null);
  const named = 'No session "%7" on socket "s". Sessions: $0 "main", $2 "undefined".';
  assert.equal(badErrorText(named, { session: "%7" }, ["main", "undefined"]), null);
  assert.match(badErrorText(named, { session: "%7" }, ["main"]) ?? "", /undefined/);
  // A name that holds the word excuses it only where quoted as that name.
  const bare = 'Window undefined has no pane; Sessions: $2 "undefined".';
  assert.match(badErrorText(bare, { session: "%7" }, ["undefined"]) ?? "", /undefined/);
});
