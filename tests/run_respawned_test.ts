/**
 * A pane respawned under a run_command that waits on it: the command was killed with the shell,
 * and the pane runs another process now. The reply says so, not that the shell exited.
 */

import assert from "node:assert/strict";
import type { RunReply } from "./helpers/run_replies.ts";
import { shellPane } from "./helpers/run_replies.ts";
import { connect, summaryOf, type TestClient } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

Deno.test("run_command whose pane is respawned while it waits says the pane was respawned", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket });
    const pane = await shellPane(t, "sh", "sh");
    const running = summaryOf(c, "run_command", {
      paneId: pane,
      command: "sleep 30; echo done",
      timeoutMs: 25_000,
    });
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}")).trim() ===
          "sleep",
      "the command running",
    );
    await t.tmux("respawn-pane", "-k", "-t", pane, "sh");
    const { summary, data } = await running;
    const run = data as unknown as RunReply;
    assert.match(summary, /the pane was respawned while the command ran/, summary);
    assert.doesNotMatch(summary, /shell exited/, summary);
    assert.equal(run.stillRunning, false, summary);
    assert.equal(run.exitStatus, null, `${summary} ${JSON.stringify(run)}`);
  } finally {
    await c?.close();
    await t.kill();
  }
});
