/**
 * tmux's wait-for channels as several tmux-mcp processes share them (each MCP client starts one
 * of its own, all on one tmux server), and what tmux 3.3a does with a channel that neither a
 * signal_channel reply nor a wait_for_channel answer may hide: a wait whose client went away
 * takes the next signal, and a second signal with nobody waiting drops the first.
 */

import assert from "node:assert/strict";
import { connect, summaryOf, type TestClient } from "./helpers/mcp.ts";
import { startOn, StdioServer } from "./helpers/stdio.ts";
import { processesNaming, sh, TestTmux, waitFor, waitsOnChannel } from "./helpers/tmux.ts";
import { markOption, MAX_CHANNEL_MARKS, parseChannelMark } from "../src/tools/channel_marks.ts";

/** A tool call's first line of text, over stdio; it must succeed. */
async function summaryOver(
  s: StdioServer,
  name: string,
  args: Record<string, unknown>,
): Promise<{ summary: string; data: Record<string, unknown> }> {
  const r = await s.callTool(name, args);
  const text = (r.content as { text: string }[])[0].text;
  assert.notEqual(r.isError, true, `${name}: ${text}`);
  return { summary: text.split("\n")[0], data: r.structuredContent as Record<string, unknown> };
}

/**
 * Whether a tmux client waits on `channel` (bare, or in the if-shell that checks the server), in
 * tmux's list of waiters: its process runs, and its channel is marked `waiting` (a wait marks
 * it in the step that begins it, which tmux runs in one go; the process alone may not have
 * reached the server yet).
 */
async function waitsOn(t: TestTmux, channel: string): Promise<boolean> {
  const mark = await t.tmuxRaw("show-options", "-sqv", markOption(channel));
  return mark.stdout.startsWith("waiting") &&
    (await processesNaming(t.socket)).some((p) => waitsOnChannel(p.args, channel));
}

/** Two clients, each with a runner of its own (as two processes are), on one tmux server. */
async function withTwo(fn: (t: TestTmux, a: TestClient, b: TestClient) => Promise<void>) {
  const t = await TestTmux.start();
  let a: TestClient | undefined;
  let b: TestClient | undefined;
  try {
    a = await connect({ socketName: t.socket });
    b = await connect({ socketName: t.socket });
    await fn(t, a, b);
  } finally {
    await a?.close();
    await b?.close();
    await t.kill();
  }
}

const TAKEN = /abandoned \(timed out or cancelled\) may have taken this signal/;

Deno.test("twoproc: signal_channel after another process abandoned a wait on the channel says the signal may be lost", async () => {
  const t = await TestTmux.start();
  const a = await startOn(t.socket);
  const b = await startOn(t.socket);
  try {
    // A's wait is abandoned (cancelled) only once it is in tmux's list of waiters: its mark,
    // naming A as its owner, is set in the tmux step that begins the wait. A wait given a short
    // timeout may time out before its tmux client reaches the server (a loaded machine), and
    // then leaves no dead wait to take B's signal.
    const mark = markOption("build-done");
    const markNow = async () =>
      parseChannelMark((await t.tmuxRaw("show-options", "-sv", mark)).stdout.trim());
    const { id } = a.send("tools/call", {
      name: "wait_for_channel",
      arguments: { channel: "build-done", timeoutMs: 60_000 },
    });
    await waitFor(async () => (await markNow())?.owner === a.child.pid, "A's wait in tmux");
    await a.notify("notifications/cancelled", { requestId: id, reason: "the test gave up" });
    // Marked again, ownerless (dead whoever runs), once its tmux client is gone.
    await waitFor(async () => {
      const now = await markNow();
      return now?.state === "waiting" && now.owner === null;
    }, "A's wait marked abandoned");
    const signalled = await summaryOver(b, "signal_channel", { channel: "build-done" });
    assert.match(signalled.summary, TAKEN);
    // tmux gave B's signal to A's dead wait: B's own wait does not see it, and says why.
    const after = await summaryOver(b, "wait_for_channel", {
      channel: "build-done",
      timeoutMs: 1,
    });
    assert.equal(after.data.outcome, "timedOut", "the signal went to the abandoned wait");
    assert.match(after.summary, /An earlier wait on it that a tmux-mcp server abandoned may have/);
  } finally {
    await a.closeStdin();
    await b.closeStdin();
    await t.kill();
  }
});

// However the process ends, it ends its tmux children (the waits' and its control clients)
// on its way out, and leaves word of the waits it abandons. SIGHUP is what it gets when the
// terminal its MCP client runs in is closed; SIGQUIT, a person's C-\.
for (const how of ["stdin EOF", "SIGTERM", "SIGHUP", "SIGQUIT"] as const) {
  Deno.test(`twoproc: a process that ends (${how}) while it waits on a channel leaves no tmux child and word of the wait it abandons`, async () => {
    const t = await TestTmux.start();
    const a = await startOn(t.socket);
    let b: TestClient | undefined;
    try {
      await a.callTool("list_panes");
      // Never answered: the process ends first.
      a.callTool("wait_for_channel", { channel: "deploy", timeoutMs: 60_000 }).catch(() => {});
      await waitFor(() => waitsOn(t, "deploy"), "the waiter");
      if (how === "stdin EOF") await a.closeStdin();
      else a.child.kill(how);
      await a.child.status;
      const left = (await processesNaming(t.socket)).filter((p) =>
        p.args.includes("wait-for") || / -C/.test(p.args)
      );
      assert.deepEqual(left.map((p) => p.args), [], "tmux children left after the process");
      b = await connect({ socketName: t.socket });
      assert.match((await summaryOf(b, "signal_channel", { channel: "deploy" })).summary, TAKEN);
    } finally {
      await a.kill();
      await b?.close();
      await t.kill();
    }
  });
}

Deno.test("twoproc: a channel name of any allowed characters is marked under a name of its own", async () => {
  await withTwo(async (t, a, b) => {
    const odd = "_a:b@c+d=e-f.g";
    assert.equal(
      (await a.ok("wait_for_channel", { channel: odd, timeoutMs: 1 })).outcome,
      "timedOut",
    );
    // A neighbour's name is not taken for it.
    const near = await summaryOf(b, "signal_channel", { channel: "_a:b@c+d=e-f" });
    assert.equal(near.summary, "Signalled channel _a:b@c+d=e-f.");
    assert.match((await summaryOf(b, "signal_channel", { channel: odd })).summary, TAKEN);
    const marks = (await t.tmux("show-options", "-s")).split("\n")
      .filter((l) => l.startsWith("@tmux-mcp-channel-"));
    for (const line of marks) assert.match(line, /^@tmux-mcp-channel-[0-9a-f]+ [0-9a-z.]+$/);
  });
});

Deno.test("twoproc: a signal another process's wait took is not counted again", async () => {
  await withTwo(async (t, a, b) => {
    const waiting = summaryOf(a, "wait_for_channel", { channel: "go", timeoutMs: 20_000 });
    await waitFor(() => waitsOn(t, "go"), "the waiter");
    assert.equal(
      (await summaryOf(b, "signal_channel", { channel: "go" })).summary,
      "Signalled channel go.",
    );
    assert.equal((await waiting).data.outcome, "signalled");
    // Nobody waits now: this one is kept, and nothing was there to cancel it.
    assert.equal(
      (await summaryOf(b, "signal_channel", { channel: "go" })).summary,
      "Signalled channel go.",
    );
    assert.equal(
      (await summaryOf(a, "wait_for_channel", { channel: "go", timeoutMs: 5_000 })).data.outcome,
      "signalled",
    );
    // Taken by a wait: the next signal is kept again.
    assert.equal(
      (await summaryOf(a, "signal_channel", { channel: "go" })).summary,
      "Signalled channel go.",
    );
    assert.equal(
      (await summaryOf(b, "wait_for_channel", { channel: "go", timeoutMs: 5_000 })).data.outcome,
      "signalled",
    );
  });
});

// If tmux ever keeps a count, or stops dropping the first signal, this fails and the tools'
// descriptions must change.
Deno.test("tmux fact: a second signal with nobody waiting drops the first; a third is kept", async () => {
  await withTwo(async (t, a) => {
    await t.tmux("wait-for", "-S", "pair");
    await t.tmux("wait-for", "-S", "pair");
    assert.equal(
      (await a.ok("wait_for_channel", { channel: "pair", timeoutMs: 100 })).outcome,
      "timedOut",
    );
    for (let i = 0; i < 3; i++) await t.tmux("wait-for", "-S", "three");
    assert.equal(
      (await a.ok("wait_for_channel", { channel: "three", timeoutMs: 5_000 })).outcome,
      "signalled",
    );
  });
});

Deno.test("twoproc: a second signal_channel with nobody waiting says the two may cancel out, and so does a wait that then times out", async () => {
  await withTwo(async (_t, a, b) => {
    assert.equal(
      (await summaryOf(a, "signal_channel", { channel: "twice" })).summary,
      "Signalled channel twice.",
    );
    const second = await summaryOf(b, "signal_channel", { channel: "twice" });
    assert.match(second.summary, /signalled it \d+ s ago too/);
    assert.match(second.summary, /two signals with nobody waiting cancel out/);
    const waited = await summaryOf(a, "wait_for_channel", { channel: "twice", timeoutMs: 100 });
    assert.equal(waited.data.outcome, "timedOut");
    assert.match(waited.summary, /may have cancelled each other out/);

    // A third signal is kept: it says nothing, and a wait returns at once.
    await summaryOf(a, "signal_channel", { channel: "thrice" });
    await summaryOf(b, "signal_channel", { channel: "thrice" });
    assert.equal(
      (await summaryOf(a, "signal_channel", { channel: "thrice" })).summary,
      "Signalled channel thrice.",
    );
    assert.equal(
      (await summaryOf(b, "wait_for_channel", { channel: "thrice", timeoutMs: 5_000 })).data
        .outcome,
      "signalled",
    );
  });
});

Deno.test("twoproc: the marks in tmux stay bounded, and a dead wait's mark outlasts those of signals", async () => {
  await withTwo(async (t, a, b) => {
    assert.equal(
      (await a.ok("wait_for_channel", { channel: "held", timeoutMs: 1 })).outcome,
      "timedOut",
    );
    for (let i = 0; i < MAX_CHANNEL_MARKS + 10; i++) {
      await (i % 2 ? a : b).ok("signal_channel", { channel: `c${i}` });
    }
    const marks = (await t.tmux("show-options", "-s")).split("\n")
      .filter((l) => l.startsWith("@tmux-mcp-channel-"));
    assert.ok(marks.length <= MAX_CHANNEL_MARKS, `${marks.length} marks`);
    assert.match((await summaryOf(b, "signal_channel", { channel: "held" })).summary, TAKEN);
  });
});

Deno.test("tmux fact: a wait-for is woken as its server exits, status 0, as a signal would wake it", async () => {
  const t = await TestTmux.start();
  try {
    // A plain client, as a script's `tmux wait-for` is. Its process is there before it has
    // reached the server (a kill then finds no wait to wake: the client fails to connect), so
    // it sets an option first: tmux runs a client's commands one after another without serving
    // another client between them, so once the option reads set, the wait has begun.
    const waiting = sh("tmux", [
      ...["-u", "-L", t.socket, "-f", "/dev/null"],
      ...["set-option", "-g", "@waiting", "yes", ";", "wait-for", "exiting"],
    ], { allowFail: true, timeoutMs: 20_000 });
    await waitFor(
      async () => (await t.tmux("show-options", "-gqv", "@waiting")).trim() === "yes",
      "the waiter",
    );
    await t.tmux("kill-server").catch(() => "");
    const woke = await waiting;
    assert.equal(woke.code, 0, "woken as if signalled: wait_for_channel must tell the two apart");
  } finally {
    await t.kill();
  }
});

Deno.test("signal_channel is execute: a server that may not run commands cannot release a script waiting on a channel", async () => {
  const t = await TestTmux.start();
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-test-" });
  let c: TestClient | undefined;
  try {
    // A person's script: it deploys once the channel is signalled.
    const marker = `${dir}/deployed`;
    await t.tmux(
      "new-window",
      "-t",
      "main:",
      `tmux -L ${t.socket} wait-for deploy-ok && touch '${marker}'; exec sleep 600`,
    );
    await waitFor(
      async () =>
        (await processesNaming(t.socket)).some((p) => waitsOnChannel(p.args, "deploy-ok")),
      "the script waiting on deploy-ok",
    );
    c = await connect({ socketName: t.socket, toolsets: ["inspect", "manage"] });
    const names = (await c.client.listTools()).tools.map((x: { name: string }) => x.name);
    assert.ok(names.includes("wait_for_channel"));
    assert.ok(!names.includes("signal_channel"), names.join(" "));
    await c.fail("signal_channel", { channel: "deploy-ok" });
    const batch = await c.call("call_tools_batch", {
      operations: [{ tool: "signal_channel", arguments: { channel: "deploy-ok" } }],
    });
    assert.match(JSON.stringify(batch), /signal_channel/);
    // Nothing released it: the script still waits (a signal would end the wait at once).
    assert.ok(
      (await processesNaming(t.socket)).some((p) => waitsOnChannel(p.args, "deploy-ok")),
    );
    await assert.rejects(Deno.stat(marker));
  } finally {
    await c?.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});
