/**
 * The handshake crash (tmux/tmux#4980, src/tmux/handshake_crash_test.ts) through the tools: a
 * `wait_for_channel` starts a control-mode client of its own, and a `create_session`,
 * `select_window` or `kill_session` called while that client is half way through its handshake
 * would tell it of the change before it can hear it, and tmux 3.3a would die with every
 * session in it. The calls wait for the handshake instead, and all of them do what they say.
 */
import assert from "node:assert/strict";
import { withSlowHandshakes } from "./helpers/slow_handshake.ts";
import { connect } from "./helpers/mcp.ts";

Deno.test("tools called while a channel wait's client shakes hands wait for it: tmux stays up", async () => {
  await withSlowHandshakes(async ({ t, runner, halfWay }) => {
    await t.tmux("new-session", "-d", "-s", "doomed");
    await t.tmux("new-window", "-d", "-t", "main:");
    const c = await connect({ socketName: t.socket, runner });
    try {
      await c.ok("list_sessions");
      const window = (await t.tmux("display-message", "-p", "-t", "main:1", "#{window_id}")).trim();
      // Each while a wait's client is half way: a session made, a window selected, one ended.
      const acts: [string, Record<string, unknown>][] = [
        ["create_session", { name: "made during a handshake" }],
        ["select_window", { windowId: window }],
        ["kill_session", { session: "doomed" }],
      ];
      for (const [i, [tool, args]] of acts.entries()) {
        const channel = `hold-${i}`;
        const wait = c.ok<{ outcome: string }>("wait_for_channel", { channel, timeoutMs: 30_000 });
        wait.catch(() => {}); // awaited below, unless the test fails first
        await halfWay();
        await c.ok(tool, args);
        await t.tmux("wait-for", "-S", channel);
        assert.equal((await wait).outcome, "signalled", channel);
      }
      const sessions = await t.tmux("list-sessions", "-F", "#{session_name}");
      assert.match(sessions, /made during a handshake/);
      assert.doesNotMatch(sessions, /doomed/);
    } finally {
      await c.close();
    }
  });
});
