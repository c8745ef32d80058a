import assert from "node:assert/strict";
import { RecordingRunner, sh, TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { AGENTS_CHANNEL, STATE_OPTION } from "../hooks/marks.ts";
import { TmuxRunner } from "../tmux/run.ts";
import type { Feed } from "../mcp/resource_spec.ts";
import { watchPane, watchServer } from "./live.ts";

/** The `tmux wait-for` processes of `socket` (the feed's waiters), each as "pid args". */
async function waiters(socket: string): Promise<string[]> {
  const { stdout } = await sh("ps", ["-eo", "pid=,args="]);
  return stdout.split("\n").filter((line) =>
    line.includes(socket) && line.includes(`wait-for ${AGENTS_CHANNEL}`)
  );
}

/**
 * Waits until the feed waits on the channel with a waiter other than `before`: the signal that
 * ended that one has been taken and read. tmux 3.3a keeps one signal sent while nobody waits
 * and drops both on a second, so signals sent while the feed reads may cancel out (the format
 * subscription then tells within its second; this feed has none).
 */
async function waitingAgain(t: Tmux, before: string[]): Promise<string[]> {
  return await waitFor(async () => {
    const now = await waiters(t.socket);
    return now.length === 1 && !before.includes(now[0]) ? now : undefined;
  }, "the feed waiting again");
}

type Tmux = Awaited<ReturnType<typeof TestTmux.start>>;

/**
 * Runs `fn` with an agents feed on a fresh tmux server, once the feed's waiter is waiting;
 * `told()` counts what the feed told. `runner` may be a test's own (to fail its spawns).
 */
async function withAgentsFeed(
  fn: (t: Tmux, told: () => number, feed: Feed) => Promise<void>,
  runner = new TmuxRunner(),
): Promise<void> {
  const t = await TestTmux.start("main");
  let told = 0;
  const feed = watchServer(runner, { socketName: t.socket }, "agents", () => told++);
  try {
    await feed.ready;
    await waitFor(async () => (await waiters(t.socket)).length === 1, "the feed's waiter");
    await fn(t, () => told, feed);
  } finally {
    feed.stop();
    await runner.close();
    await t.kill();
  }
}

/**
 * Sets (or with `null` unsets) the pane's window's agent state, then signals the channel. A
 * signal still unheard (sent while the feed was between two waits: the flood's last one, say)
 * is dropped first, in the same command line (`wait-for -L` then `-U` removes a channel that
 * holds one): tmux 3.3a drops both of two unheard signals, so the mark's own would cancel it,
 * and the feed, whose last read came before the mark, would wait on without reading it (nor
 * would a new waiter come for {@link waitingAgain}).
 */
async function mark(t: Tmux, state: string | null): Promise<void> {
  await t.tmux(
    ...["wait-for", "-L", AGENTS_CHANNEL, ";", "wait-for", "-U", AGENTS_CHANNEL, ";"],
    ...(state === null
      ? ["set-option", "-wu", "-t", t.ids.paneId, STATE_OPTION]
      : ["set-option", "-w", "-t", t.ids.paneId, STATE_OPTION, state]),
    ...[";", "wait-for", "-S", AGENTS_CHANNEL],
  );
}

Deno.test("agents feed: a flood of signals without a change tells nothing; a mark and its signal tell once", async () => {
  await withAgentsFeed(async (t, told, feed) => {
    // Anyone on the server may signal the channel: each signal costs a read, and says nothing
    // unless the marks differ from the last ones seen.
    for (let i = 0; i < 30; i++) await t.tmux("wait-for", "-S", AGENTS_CHANNEL);
    let waiting = await waiters(t.socket);
    await mark(t, "working");
    await waitFor(() => told() > 0, "the mark told");
    waiting = await waitingAgain(t, waiting);
    // The same mark again: the signal finds nothing new.
    await mark(t, "working");
    await waitingAgain(t, waiting);
    await mark(t, null);
    await waitFor(() => told() > 1, "the mark's removal told");
    assert.equal(told(), 2);
    // Stopped: its waiter goes with it.
    feed.stop();
    await waitFor(async () => (await waiters(t.socket)).length === 0, "the waiter gone");
  });
});

Deno.test("agents feed: the tmux server gone is told, and its waiter ends", async () => {
  await withAgentsFeed(async (t, told) => {
    await t.kill();
    await waitFor(() => told() > 0, "the loss told");
    // The loss is told as tmux goes; its waiter process ends a moment later, never lingers.
    await waitFor(async () => (await waiters(t.socket)).length === 0, "its waiter to end");
  });
});

Deno.test("agents feed: a wait that cannot start at first (an SSH connection not up yet) is tried again", async () => {
  const runner = new TmuxRunner();
  const exec = runner.exec.bind(runner);
  let refused = 0;
  runner.exec = (address, args, options) => {
    if (args[0] === "wait-for" && refused < 2) {
      refused++;
      return Promise.reject(new Error("not yet"));
    }
    return exec(address, args, options);
  };
  await withAgentsFeed(async (t, told) => {
    assert.equal(refused, 2);
    await mark(t, "needs-input");
    await waitFor(() => told() > 0, "the mark told");
  }, runner);
});

Deno.test("pane feed: a pane that is not there is told once, not at every look", async () => {
  const t = await TestTmux.start("main");
  const runner = new RecordingRunner({ control: false });
  let told = 0;
  const feed = watchPane(runner, { socketName: t.socket }, "%4242", () => told++);
  try {
    await feed.ready;
    // It keeps looking (in case a pane by that id comes), later and later: three more looks.
    const looks = () => runner.started.filter((a) => a[0] === "display-message").length;
    const first = looks();
    await waitFor(() => looks() >= first + 3, "three more looks");
    assert.equal(told, 1);
  } finally {
    feed.stop();
    await runner.close();
    await t.kill();
  }
});
