/**
 * Forged control-mode framing on real tmux: a pane whose program learns the server's next
 * command numbers from a control client of its own (as any process in a pane can) and prints
 * `%end <time> <number> 1` lines with them, each followed by `%output` for another pane. Read
 * over the control connection, none of it may cut a capture short, reach a watcher of the other
 * pane, or leave the connection unusable. A command that hangs retires its connection too.
 */

import assert from "node:assert/strict";
import { captureRows } from "../src/tmux/capture.ts";
import { controlFor, ControlUnavailable, execFast } from "../src/tmux/control.ts";
import type { WatchBatch } from "../src/tmux/control_connection.ts";
import { TerminalText } from "../src/tmux/terminal_text.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { TmuxError } from "../src/tmux/tmux_error.ts";
import { connect } from "./helpers/mcp.ts";
import { startForger } from "./helpers/forge.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** A private server whose pane `t.ids.paneId` is the victim, plus a forger pane (not started). */
async function withForger(
  fn: (t: Started, forger: string, dir: string) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start("main");
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-framing-" });
  try {
    await t.tmux("set-option", "-g", "history-limit", "10000");
    const forger = await startForger(t, dir, t.ids.paneId);
    await fn(t, forger, dir);
  } finally {
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Starts the forger's next round and resolves once it is done, as seen through the control
 * connection; returns a function that ends that watch.
 */
async function forgeRound(
  runner: TmuxRunner,
  t: Started,
  forger: string,
  round: number,
): Promise<() => void> {
  const lines = new TerminalText();
  let done = false;
  const watch = await controlFor(runner, { socketName: t.socket }).watch(
    forger,
    [t.ids.sessionId],
    (b) => {
      for (const chunk of b.output) {
        if (lines.push(chunk).includes(`DONE ${round}`)) done = true;
      }
    },
  );
  await t.tmux("send-keys", "-t", forger, "Enter");
  // Bounded: a feed that stopped (lost) fails the test instead of hanging it.
  await waitFor(() => done, `DONE ${round} from the forger, through the watch`);
  return () => watch.close();
}

/** Watches the victim pane; returns what it was told. */
async function watchVictim(runner: TmuxRunner, t: Started): Promise<WatchBatch[]> {
  const batches: WatchBatch[] = [];
  await controlFor(runner, { socketName: t.socket }).watch(
    t.ids.paneId,
    [t.ids.sessionId],
    (b) => batches.push(b),
  );
  return batches;
}

function forgedSeen(batches: WatchBatch[]): string[] {
  return batches.flatMap((b) => b.output.map(text)).filter((s) => s.includes("FORGED"));
}

Deno.test("a pane forging the next %end cannot cut a capture short nor feed another pane's watcher", async () => {
  await withForger(async (t, forger) => {
    const runner = new TmuxRunner();
    try {
      const address = { socketName: t.socket };
      const control = controlFor(runner, address);
      const history = ["capture-pane", "-p", "-t", forger, "-S", "-"];
      await control.exec(["display-message", "-p", "x"]);

      // One command read over control: the forged end has its exact words.
      let victim = await watchVictim(runner, t);
      let unwatch = await forgeRound(runner, t, forger, 1);
      const answer = await control.exec(history).catch((e: Error) => e);
      unwatch();
      assert.deepEqual(forgedSeen(victim), [], "the victim's watcher saw nothing forged");
      assert.ok(
        answer instanceof ControlUnavailable && answer.sent,
        `never a short answer: ${answer instanceof Error ? answer : text(answer.stdout)}`,
      );
      // The watch is carried by a client of its own (the command client gets no output), whose
      // stream the forged answer never touched: it goes on.
      assert.ok(!victim.some((b) => b.lost), "the watcher's own feed was not lost");
      const spawned = await runner.exec(address, history);
      assert.ok(text(spawned.stdout).includes("\n%end "), "the forger printed");

      // A capture the way the tools read one (several commands, then retried by spawning).
      victim = await watchVictim(runner, t);
      unwatch = await forgeRound(runner, t, forger, 2);
      const carried = await captureRows(runner, address, forger, { start: "history" });
      const rows = text((await runner.exec(address, history)).stdout).split("\n").slice(0, -1);
      assert.deepEqual(carried.rows, rows, "the real rows, whole");
      unwatch();
      assert.deepEqual(forgedSeen(victim), []);

      // The server keeps answering over a fresh connection, quickly.
      const again = await control.exec(
        ["display-message", "-p", "-t", t.ids.paneId, "#{pane_id}"],
        { timeoutMs: 3_000 },
      );
      assert.equal(text(again.stdout), `${t.ids.paneId}\n`);
      assert.equal(control.connections, 2, "a fresh client for commands, and the watches' own");
    } finally {
      await runner.close();
    }
    assert.equal(runner.running, 0, "no tmux child left behind");
  });
});

Deno.test("wait_for_text on another pane never matches what a pane forged while it is read", async () => {
  await withForger(async (t, forger) => {
    const c = await connect({ socketName: t.socket });
    try {
      const hub = controlFor(c.server.runner, { socketName: t.socket });
      const waiting = c.ok<{ outcome: string; lines: string[] }>("wait_for_text", {
        paneId: t.ids.paneId,
        patterns: ["FORGED"],
        timeoutMs: 3_000,
      });
      waiting.catch(() => {}); // awaited below; a failure before then is reported instead
      await waitFor(() => hub.watchers >= 1, "the wait to subscribe");
      const unwatch = await forgeRound(c.server.runner, t, forger, 1);
      const read = await c.call("capture_pane", { paneId: forger, start: -2000, maxLines: 2000 });
      unwatch();
      const result = await waiting;
      assert.equal(result.outcome, "timedOut", JSON.stringify(result.lines));
      assert.notEqual(read.isError, true, JSON.stringify(read.content));
      const { text: captured } = read.structuredContent as { text: string };
      assert.match(captured, /^%end \d+ \d+ 1$/m);
      assert.match(captured, /^DONE 1$/m);
      // And the next call answers.
      const panes = await c.ok<{ panes: { id: string }[] }>("list_panes", {});
      assert.ok(panes.panes.some((p) => p.id === forger));
    } finally {
      await c.close();
    }
  });
});

Deno.test("a command that does not answer in time retires its connection; the next call answers", async () => {
  const t = await TestTmux.start("main");
  const runner = new TmuxRunner();
  try {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    await control.exec(["display-message", "-p", "x"]);
    const batches: WatchBatch[] = [];
    await control.watch(t.ids.paneId, [t.ids.sessionId], (b) => batches.push(b));
    // wait-for holds the client's command queue until the channel is signalled: never here.
    const hung = control.exec(["wait-for", "tmux-mcp-test-never"], { timeoutMs: 300 });
    const behind = control.exec(["display-message", "-p", "behind"]);
    const behindFast = execFast(runner, address, ["display-message", "-p", "fast"]);
    // Awaited below; a failure before then is reported instead.
    for (const p of [hung, behind, behindFast]) p.catch(() => {});
    await assert.rejects(hung, (e) => e instanceof TmuxError && e.kind === "timeout");
    await assert.rejects(behind, (e) => e instanceof ControlUnavailable && e.sent);
    assert.equal(text((await behindFast).stdout), "fast\n", "retried by spawning");
    // Watches have a client of their own: the retired command client was not theirs.
    assert.ok(!batches.some((b) => b.lost), "the watch's feed goes on");

    const started = performance.now();
    const again = await control.exec(["display-message", "-p", "again"], { timeoutMs: 3_000 });
    assert.equal(text(again.stdout), "again\n");
    assert.ok(performance.now() - started < 3_000);
    assert.equal(control.connections, 2, "one fresh connection for commands, and the watch's");

    // A new watch is carried by the watches' client, and delivers.
    const seen = new TerminalText();
    let got = false;
    const watch = await control.watch(t.ids.paneId, [t.ids.sessionId], (b) => {
      for (const chunk of b.output) {
        if (seen.push(chunk).some((l) => l.includes("HE"))) got = true;
      }
    });
    assert.equal(control.connections, 2);
    await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "printf 'H%sE\\n' ''");
    await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
    // Bounded: a watch that never delivers fails the test instead of hanging it.
    await waitFor(() => got, "the new watch to deliver the printed line");
    watch.close();
  } finally {
    await runner.close();
    await t.kill();
  }
  assert.equal(runner.running, 0, "no tmux child left behind");
});
