/**
 * A tmux-mcp process killed outright (SIGKILL, the OOM killer, an MCP client killing it hard)
 * while it waits on a wait-for channel runs no handler: its tmux client must not wait on for
 * it, and the next tmux-mcp process on the server must still learn that a dead wait may take a
 * signal.
 */

import assert from "node:assert/strict";
import { callOver, startOn, StdioServer } from "./helpers/stdio.ts";
import { processesNaming, TestTmux, waitFor, waitsOnChannel } from "./helpers/tmux.ts";
import { markOption, parseChannelMark } from "../src/tools/channel_marks.ts";
import { AGENTS_CHANNEL } from "../src/hooks/marks.ts";

/** The tmux clients that wait on `channel` (bare, or in the if-shell that checks the server). */
async function waitersOn(t: TestTmux, channel: string): Promise<number[]> {
  return (await processesNaming(t.socket)).filter((p) => waitsOnChannel(p.args, channel))
    .map((p) => p.pid);
}

/**
 * Runs `body` with two tmux-mcp processes on one private server, `a`'s wait on channel deploy
 * (`waiting`, its answer) begun and its tmux client waiting; ends them all after.
 */
async function withWaitOfA(
  body: (
    s: { t: TestTmux; a: StdioServer; b: StdioServer; waiting: ReturnType<typeof callOver> },
  ) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start();
  const a = await startOn(t.socket);
  const b = await startOn(t.socket);
  try {
    const waiting = callOver(a, "wait_for_channel", { channel: "deploy", timeoutMs: 60_000 });
    await waitFor(async () => (await waitersOn(t, "deploy")).length > 0, "the waiter");
    // Its tmux client running is not enough: until it has reached the server there is no wait
    // in tmux, and a signal sent meanwhile is kept for whichever wait comes next. The mark that
    // names a as its owner is set in the tmux step that begins the wait.
    await waitFor(async () => {
      const mark = await t.tmuxRaw("show-options", "-sv", markOption("deploy"));
      return parseChannelMark(mark.stdout.trim())?.owner === a.child.pid;
    }, "a's wait in tmux");
    await body({ t, a, b, waiting });
  } finally {
    await a.kill();
    await b.kill();
    await t.kill();
  }
}

Deno.test("kill9: the tmux client of a wait on a channel ends with its process, SIGKILLed, without a signal", async () => {
  const t = await TestTmux.start();
  const a = await startOn(t.socket);
  try {
    a.callTool("wait_for_channel", { channel: "deploy", timeoutMs: 60_000 }).catch(() => {});
    const ours = await waitFor(async () => {
      const pids = await waitersOn(t, "deploy");
      return pids.length > 0 && pids;
    }, "the waiter");
    await a.kill();
    // Nothing signals the channel: tmux itself ends the client once its process is gone. Only
    // the waiters this process started are looked at, and nothing here kills them.
    await waitFor(
      async () => {
        const running = new Set((await processesNaming(t.socket)).map((p) => p.pid));
        return ours.every((pid) => !running.has(pid));
      },
      "the waiting tmux client to end with its process",
    );
  } finally {
    await a.kill();
    await t.kill();
  }
});

Deno.test("kill9: after a process was SIGKILLed waiting on a channel, the next one's signal_channel says the dead wait may have taken the signal, and its wait why it timed out", async () => {
  const t = await TestTmux.start();
  const a = await startOn(t.socket);
  let b: StdioServer | undefined;
  try {
    a.callTool("wait_for_channel", { channel: "deploy", timeoutMs: 60_000 }).catch(() => {});
    await waitFor(async () => (await waitersOn(t, "deploy")).length > 0, "the waiter");
    await a.kill();
    await waitFor(async () => (await waitersOn(t, "deploy")).length === 0, "the waiter gone");
    b = await startOn(t.socket);
    const signalled = await callOver(b, "signal_channel", { channel: "deploy" });
    assert.equal(signalled.isError, false, signalled.text);
    assert.match(signalled.summary, /abandoned .* may have taken this signal/);
    // The dead process's wait took the signal: this wait does not see it, and says why.
    const waited = await callOver(b, "wait_for_channel", { channel: "deploy", timeoutMs: 100 });
    assert.equal(waited.data.outcome, "timedOut", "the signal went to the dead wait");
    assert.match(waited.summary, /An earlier wait on it that a tmux-mcp server abandoned may have/);
  } finally {
    await a.kill();
    await b?.kill();
    await t.kill();
  }
});

Deno.test("kill9: a wait whose process still runs takes a signal plainly, and a wait beside it that times out blames nothing on it", () =>
  withWaitOfA(async ({ t, b, waiting }) => {
    // b's wait begins while a's is alive, and times out: a's took nothing it should not.
    const beside = await callOver(b, "wait_for_channel", { channel: "deploy", timeoutMs: 100 });
    assert.equal(beside.data.outcome, "timedOut");
    assert.doesNotMatch(beside.summary, /An earlier wait/);
    const c = await startOn(t.socket);
    try {
      // b's wait, timed out, stays dead in tmux: c's signal says so. a's own, alive, takes it.
      const signalled = await callOver(c, "signal_channel", { channel: "deploy" });
      assert.match(signalled.summary, /may have taken this signal/);
      assert.equal((await waiting).data.outcome, "signalled");
      // Woken, the dead wait with them: the next signal is kept and said plainly.
      assert.equal(
        (await callOver(c, "signal_channel", { channel: "deploy" })).summary,
        "Signalled channel deploy.",
      );
      const kept = await callOver(b, "wait_for_channel", { channel: "deploy", timeoutMs: 5_000 });
      assert.equal(kept.data.outcome, "signalled");
    } finally {
      await c.kill();
    }
  }));

Deno.test("kill9: a live wait of another process takes a signal without a word of dead waits", () =>
  withWaitOfA(async ({ t, b, waiting }) => {
    assert.equal(
      (await callOver(b, "signal_channel", { channel: "deploy" })).summary,
      "Signalled channel deploy.",
    );
    assert.equal((await waiting).data.outcome, "signalled");
    const marks = (await t.tmux("show-options", "-s")).split("\n")
      .filter((l) => l.startsWith("@tmux-mcp-channel-"));
    assert.deepEqual(marks, [], "the woken wait leaves no mark");
  }));

Deno.test("kill9: the tmux client the agents feed waits with ends with its process, SIGKILLed, without a signal", async () => {
  const t = await TestTmux.start();
  const a = await startOn(t.socket);
  try {
    const subscribed = await a.request("resources/subscribe", { uri: "tmux://agents" });
    assert.equal(subscribed.error, undefined, JSON.stringify(subscribed));
    const ours = await waitFor(async () => {
      const pids = await waitersOn(t, AGENTS_CHANNEL);
      return pids.length > 0 && pids;
    }, "the agents feed's waiter");
    await a.kill();
    // Nobody signals the agents' channel (no agent hook runs here): tmux ends the client once
    // its process is gone.
    await waitFor(
      async () => {
        const running = new Set((await processesNaming(t.socket)).map((p) => p.pid));
        return ours.every((pid) => !running.has(pid));
      },
      "the feed's waiting tmux client to end with its process",
    );
  } finally {
    await a.kill();
    await t.kill();
  }
});
