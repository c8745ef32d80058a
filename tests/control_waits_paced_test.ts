/**
 * Hundreds of control-mode waits beside a one-off call, through the real process: each wait
 * checks its pane (is it alive, what runs in it) every half second over the shared command
 * connection. Unpaced, 300 of them kept tmux's queue for that client full: a `list_panes` took
 * seconds, and commands queued behind the checks timed out from their sending, so the
 * connection was given up ("a command did not answer within 2000 ms"). The checks now go as
 * background commands, at most two in flight (control_server.ts), and a command's timeout
 * counts from when tmux came to it (control_connection.ts).
 *
 * @module
 */

import assert from "node:assert/strict";
import { warn } from "../src/diagnostics.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";

const WAITS = 300;

Deno.test("control waits: a list_panes among 300 control-mode waits on one pane is answered behind a few checks, and no connection is given up", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await s.initialize();
    await s.callTool("list_panes");
    const waits = [];
    for (let i = 0; i < WAITS; i++) {
      waits.push(s.request("tools/call", {
        name: "wait_for_text",
        arguments: { paneId: t.ids.paneId, patterns: [`never-${i}`], timeoutMs: 12_000 },
      }));
    }
    // Every wait is watching (its control client attached: tmux-mcp's watch connection).
    await waitFor(
      async () =>
        (await t.tmux("list-clients", "-F", "#{client_termname}")).split("\n")
          .filter((name) => name.startsWith("tmux-mcp")).length >= 2,
      "the command and watch connections",
    );
    const took: number[] = [];
    for (let k = 0; k < 6; k++) {
      const began = performance.now();
      const listed = await s.callTool("list_panes");
      took.push(Math.round(performance.now() - began));
      assert.equal(listed.isError, undefined, JSON.stringify(listed).slice(0, 300));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const answers = await Promise.all(waits);
    const outcomes = answers.map((a) => {
      if (a.error || a.result?.isError) return JSON.stringify(a.error ?? a.result?.content);
      const out = a.result?.structuredContent as { outcome: string; transport: string };
      return `${out.outcome} ${out.transport}`;
    });
    warn(`[control waits] list_panes beside ${WAITS} control waits: ${took.join(", ")} ms`);
    assert.deepEqual(
      [...new Set(outcomes)],
      ["timedOut control"],
      "every wait watched over control mode and ended in its timeout",
    );
    assert.doesNotMatch(s.stderr, /retired a control connection/);
    // Behind at most two checks in tmux's queue: far within the command timeout (2 s) that
    // gave the connection up; it took 2-5 s unpaced.
    assert.ok(Math.max(...took) < 2_000, `list_panes took ${took.join(", ")} ms`);
  } finally {
    await s.kill();
    await t.kill();
  }
});
