/**
 * How wait_for_text ends other than by a match, against real tmux on private sockets: a pane
 * that dies (or a session's last pane, its control client detached), timeouts clamped into
 * their range, the request cancelled, and the progress notifications sent while it waits.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { waitFor } from "./helpers/tmux.ts";
import { hub, structured, subscribed, type, type Wait, withServer } from "./helpers/wait_text.ts";

Deno.test("a pane that dies while waited on ends the wait as paneDied", async () => {
  await withServer(async (t, c) => {
    /** Starts a shell pane, waits on it, makes it exit with `status`; returns the result. */
    const dieWhileWaited = async (status: number): Promise<Wait & { paneId: string }> => {
      const paneId = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
      const waiting = c.ok<Wait>("wait_for_text", { paneId, patterns: ["never"] });
      await subscribed(t, c);
      await type(t, paneId, `exit ${status}`);
      return { ...(await waiting), paneId };
    };
    // remain-on-exit: the pane stays, dead, with its status.
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const kept = await dieWhileWaited(7);
    assert.equal(kept.outcome, "paneDied");
    // tmux 3.3a sometimes never learns a dead pane's exit status: null then, never wrong.
    assert.ok(kept.exitStatus === 7 || kept.exitStatus === null, `${kept.exitStatus}`);

    // Already dead at the start: said at once, and without the died-meanwhile note (below).
    const already = await c.call("wait_for_text", { paneId: kept.paneId, patterns: ["x"] });
    assert.equal(structured(already).outcome, "paneDied");
    const alreadyText = already.content?.[0]?.type === "text" ? already.content[0].text : "";
    assert.doesNotMatch(alreadyText, /may be missing/);

    // Without remain-on-exit the pane (and its window) goes away entirely.
    await t.tmux("set-option", "-g", "remain-on-exit", "off");
    const gone = await dieWhileWaited(0);
    assert.equal(gone.outcome, "paneDied");
    assert.equal(gone.exitStatus, null);
  });
});

Deno.test("a pane a signal ends while waited on: paneDied, said with the signal (tmux has no exit status then)", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const paneId = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const pid = Number((await t.tmux("display-message", "-p", "-t", paneId, "#{pane_pid}")).trim());
    const waiting = c.call("wait_for_text", { paneId, patterns: ["never"], timeoutMs: 20_000 });
    await subscribed(t, c);
    Deno.kill(pid, "SIGKILL");
    const result = await waiting;
    assert.equal(structured(result).outcome, "paneDied");
    assert.equal(structured(result).exitStatus, null);
    const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
    // Died during the wait: tmux may have dropped what the pane printed last, and it says so.
    assert.match(text, /pane died \(signal 9\); what it printed last may be missing: tmux/);
  });
});

Deno.test("the last pane of a session dying (the control client detached) is paneDied", async () => {
  await withServer(async (t, c) => {
    const [, lone] = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "lone one",
      "-P",
      "-F",
      "#{session_id} #{pane_id}",
      "sh",
    )).trim().split(" ");
    const waiting = c.ok<Wait>("wait_for_text", { paneId: lone, patterns: ["never"] });
    await subscribed(t, c);
    await type(t, lone, "exit");
    assert.equal((await waiting).outcome, "paneDied");
  });
});

Deno.test("timeouts are clamped into [100 ms, 120 s] and reported", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const low = await c.ok<Wait>("wait_for_text", { paneId: p, patterns: ["x"], timeoutMs: 1 });
    assert.equal(low.outcome, "timedOut");
    assert.equal(low.effectiveTimeoutMs, 100);
    assert.equal(low.timeoutClamped, true);
    const high = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["HIGH"],
      timeoutMs: 9_999_999,
    });
    await subscribed(t, c);
    await type(t, p, "printf 'HI%s\\n' GH");
    const result = await high;
    assert.equal(result.effectiveTimeoutMs, 120_000);
    assert.equal(result.timeoutClamped, true);
    assert.equal(result.outcome, "matched");
  });
});

Deno.test("cancelling the request stops the wait at once", async () => {
  await withServer(async (t, c) => {
    const abort = new AbortController();
    const call = c.client.callTool(
      {
        name: "wait_for_text",
        arguments: { paneId: t.ids.paneId, patterns: ["never"], timeoutMs: 60_000 },
      },
      undefined,
      { signal: abort.signal },
    );
    call.catch(() => {});
    await subscribed(t, c);
    abort.abort();
    await assert.rejects(call);
    // The watch is gone long before its 60 s timeout.
    await waitFor(() => hub(t, c).watchers === 0, "the wait to stop", 3_000);
    await c.server.registry.settle(3_000);
  });
});

Deno.test("the process's end stops a wait still running, as a cancellation does", async () => {
  await withServer(async (t, c) => {
    const call = c.client.callTool({
      name: "wait_for_text",
      arguments: { paneId: t.ids.paneId, patterns: ["never"], timeoutMs: 60_000 },
    });
    call.catch(() => {});
    await subscribed(t, c);
    c.server.registry.endCalls();
    // The watch is gone long before its 60 s timeout, and the call says it was cut short.
    await waitFor(() => hub(t, c).watchers === 0, "the wait to stop", 3_000);
    const ended = await call as CallToolResult;
    assert.equal(ended.isError, true);
    assert.match((ended.content as { text: string }[])[0].text, /cancel/i);
    // A call that starts after the end is stopped at once.
    const late = await c.client.callTool({
      name: "wait_for_text",
      arguments: { paneId: t.ids.paneId, patterns: ["never"], timeoutMs: 60_000 },
    }) as CallToolResult;
    assert.equal(late.isError, true);
    await c.server.registry.settle(3_000);
  });
});

Deno.test("progress notifications are sent while waiting", async () => {
  await withServer(async (t, c) => {
    const progress: { progress: number; total?: number }[] = [];
    const result = structured(
      await c.client.callTool(
        {
          name: "wait_for_text",
          arguments: { paneId: t.ids.paneId, patterns: ["never"], timeoutMs: 1_500 },
        },
        undefined,
        { onprogress: (p: { progress: number; total?: number }) => progress.push(p) },
      ) as CallToolResult,
    );
    assert.equal(result.outcome, "timedOut");
    assert.ok(progress.length >= 1, "at least the first progress notification");
    assert.equal(progress[0].total, 1_500);
    assert.ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress));
  });
});
