/**
 * Waits on a tmux that answers slowly (its processes wait their turn, or take long to start):
 * a wait says how long it really took, and a read of a wait still waiting for its turn at the
 * wait's deadline never starts, while a one-off call goes before it.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { TmuxRunner } from "../src/tmux/run.ts";
import { TmuxError } from "../src/tmux/tmux_error.ts";
import { probePane } from "../src/tools/pane_probe.ts";
import { testContext, withTmux } from "./helpers/mcp.ts";
import { noControlTmux, TestTmux } from "./helpers/tmux.ts";
import { structured } from "./helpers/wait_text.ts";

/** How long each tmux process of the slow tmux takes to start. */
const DELAY_MS = 500;

Deno.test("a wait whose reads are slow says how long it really took", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-slow-" });
  try {
    const runner = new TmuxRunner({ binary: await noControlTmux(dir, { delayMs: DELAY_MS }) });
    await withTmux(
      async (t, c) => {
        const result = await c.call("wait_for_text", {
          paneId: t.ids.paneId,
          patterns: ["NEVER-PRINTED"],
          timeoutMs: 100,
        }) as CallToolResult;
        const data = structured(result) as ReturnType<typeof structured> & { waitedMs: number };
        assert.equal(data.outcome, "timedOut");
        assert.equal(data.transport, "polling");
        // The pane's snapshot, the watch's start and the tail: three tmux processes one after
        // another, each at least DELAY_MS late. The caller waited all of that.
        assert.ok(data.waitedMs >= 3 * DELAY_MS, `waitedMs ${data.waitedMs}`);
        const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
        assert.match(
          text.split("\n")[0],
          /^%\d+: timed out after 100 ms \(answered after [\d.]+ s, [\d.]+ s past the timeout: tmux was slow to answer\)\.$/,
        );
      },
      { runner },
      { noChildLeft: true },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a wait's read still waiting for its turn at the deadline never starts; a one-off call goes first", async () => {
  const t = await TestTmux.start();
  // One tmux process at a time, every command one: no control client carries any.
  const runner = new TmuxRunner({ maxConcurrent: 1, control: false });
  const address = { socketName: t.socket };
  try {
    // The one turn, held until the test lets it go.
    const held = runner.exec(address, ["wait-for", "tmux-mcp-test-held"]);
    const ctx = testContext(runner, t.socket);
    const reads = ctx.paced();
    reads.readUntil(performance.now() + 100);
    const read = probePane(reads, t.ids.paneId);
    const call = probePane(ctx, t.ids.paneId);
    // The turn is still held: the read can only have been dropped while it waited.
    await assert.rejects(read, (e: unknown) => {
      assert.ok(e instanceof TmuxError && e.kind === "cancelled", String(e));
      assert.ok(reads.droppedAtDeadline(e), "told apart from the call's cancellation");
      return true;
    });
    await t.tmux("wait-for", "-S", "tmux-mcp-test-held");
    assert.equal((await held).code, 0);
    assert.equal((await call).exists, true);
    // Once the wait is over, its reads start whenever, as a one-off call's.
    reads.paceOver();
    assert.equal((await probePane(reads, t.ids.paneId)).exists, true);
  } finally {
    await runner.close();
    await t.kill();
  }
  assert.equal(runner.running, 0, "no tmux child left behind");
});
