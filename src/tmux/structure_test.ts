import assert from "node:assert/strict";
import { TestTmux } from "../../tests/helpers/tmux.ts";
import { FAULTS_PINNED } from "../../tests/helpers/tmux_version.ts";
import { execOnce } from "./control.ts";
import { TmuxRunner } from "./run.ts";
import { changesStructure, mayEndSession } from "./structure.ts";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

/** A private tmux server with one session `session`, and a runner of its own; both ended after. */
async function withRunner(
  session: string,
  fn: (t: Started, runner: TmuxRunner, address: { socketName: string }) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start(session);
  const runner = new TmuxRunner();
  try {
    await fn(t, runner, { socketName: t.socket });
  } finally {
    await runner.close();
    await t.kill();
  }
}

Deno.test("mayEndSession finds the commands that may end a session, not those that only switch", () => {
  for (
    const args of [
      ["kill-session", "-t", "$2"],
      ["kill-pane", "-t", "%1"],
      ["kill-server"],
      ["move-window", "-d", "-s", "$1:@2", "-t", "$3:"],
      ["break-pane", "-s", "%1", "-t", "$1:"],
      ["if-shell", "-F", "1", "{ display-message x ; killw -t @4 }"],
    ]
  ) assert.equal(mayEndSession(args), true, args.join(" "));
  for (
    const args of [
      ["select-window", "-t", "$1:@2"],
      ["new-window", "-t", "$1:", "-P"],
      ["switch-client", "-t", "$1:@2"],
      ["send-keys", "-t", "%1", "-l", "kill-sessions-now"],
      ["list-sessions", "-F", "#{session_id} #{window_id}"],
    ]
  ) assert.equal(mayEndSession(args), false, args.join(" "));
});

Deno.test("changesStructure finds window changes and ends, in chains and nested commands", () => {
  for (
    const args of [
      ["kill-window", "-t", "@3"],
      ["kill-pane", "-t", "%1"],
      ["kill-session", "-t", "$2"],
      ["kill-server"],
      ["select-window", "-t", "$1:@2"],
      ["new-window", "-t", "$1:", "-P"],
      ["send-keys", "-t", "%1", "x", ";", "next-window", "-t", "$1"],
      ["move-window", "-d", "-s", "$1:@2", "-t", "$3:"],
      ["join-pane", "-d", "-s", "%1", "-t", "%2"],
      ["break-pane", "-s", "%1", "-t", "$1:"],
      ["switch-client", "-t", "$1:@2"],
      // A guarded change: the commands travel inside if-shell's arguments.
      [
        "if-shell",
        "-F",
        "-t",
        "%1",
        "#{==:#{session_attached},0}",
        "select-window -t '$1:@2'",
        "x",
      ],
      ["if-shell", "-F", "1", "{ display-message x ; killw -t @4 }"],
    ]
  ) assert.equal(changesStructure(args), true, args.join(" "));
  for (
    const args of [
      ["list-panes", "-a", "-F", "#{pane_id} #{window_id}"],
      ["send-keys", "-t", "%1", "-l", "kill-windows-now"],
      ["display-message", "-p", "-t", "%1", "#{window_name}"],
      ["rename-window", "-t", "@1", "new name"],
      ["set-option", "-w", "-t", "@1", "automatic-rename", "off"],
      ["resize-pane", "-t", "%1", "-x", "40"],
      ["select-pane", "-t", "%1"],
      ["new-session", "-d", "-s", "x"],
    ]
  ) assert.equal(changesStructure(args), false, args.join(" "));
});

Deno.test("the structure lane runs its commands one at a time, in order, and lets others pass", async () => {
  const runner = new TmuxRunner();
  const address = { socketName: "unused-by-this-test" };
  const order: string[] = [];
  const first = Promise.withResolvers<void>();
  const a = runner.inStructureLane(address, async () => {
    order.push("a starts");
    await first.promise;
    order.push("a ends");
  });
  const b = runner.inStructureLane(address, () => {
    order.push("b runs");
    return Promise.resolve();
  });
  // Another server's lane is its own.
  await runner.inStructureLane({ socketName: "another" }, () => {
    order.push("other server");
    return Promise.resolve();
  });
  // Cancelled while waiting: it never runs, and the lane goes on.
  const cancel = new AbortController();
  const c = runner.inStructureLane(address, () => {
    order.push("c ran");
    return Promise.resolve();
  }, cancel.signal);
  cancel.abort();
  await assert.rejects(c, /cancelled/);
  assert.deepEqual(order, ["a starts", "other server"]);
  first.resolve();
  await Promise.all([a, b]);
  assert.deepEqual(order, ["a starts", "other server", "a ends", "b runs"]);
  // A failure releases the lane too.
  await assert.rejects(runner.inStructureLane(address, () => Promise.reject(new Error("x"))));
  await runner.inStructureLane(address, () => Promise.resolve());
  await runner.close();
});

Deno.test("a structural command waits for the one before it to finish in tmux, and reads do not", async () => {
  await withRunner("main", async (t, runner, address) => {
    const w = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id}")).trim();
    await execOnce(runner, address, ["display-message", "-p", "the control client is attached"]);
    // The first is held in tmux until the test lets it go, then marks its end.
    const slow = runner.exec(address, [
      "wait-for",
      "lane-test",
      ";",
      "set-option",
      "-g",
      "@lane",
      "first-done",
      ";",
      "kill-window",
      "-t",
      w,
    ]);
    // The second reads the mark first: it must not run before the first has ended.
    const second = execOnce(runner, address, [
      "display-message",
      "-p",
      "#{@lane}",
      ";",
      "select-window",
      "-t",
      `${t.ids.sessionId}:${t.ids.windowId}`,
    ]);
    // A read is not held by the lane: it is answered while the first is still held.
    const read = await runner.exec(address, ["show-option", "-gqv", "@lane"]);
    assert.equal(new TextDecoder().decode(read.stdout), "");
    await t.tmux("wait-for", "-S", "lane-test");
    const [first, then] = await Promise.all([slow, second]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(new TextDecoder().decode(then.stdout).trim(), "first-done");
  });
});

Deno.test("a window change and the end of its session sent at once never kill the tmux server", async () => {
  // tmux 3.3a dies of these two lines when one pass of its command loop reads both while a
  // control client is attached (ROBUSTNESS.md): 37 rounds of 60 did, sent together
  // over this server's control connection, before its structural commands took turns.
  await withRunner("keep", async (t, runner, address) => {
    await execOnce(runner, address, ["display-message", "-p", "attached"]);
    for (let round = 0; round < 20; round++) {
      const name = `v${round}`;
      await t.tmux("new-session", "-d", "-s", name);
      await t.tmux("new-window", "-t", `=${name}:`);
      const current = (await t.tmux("new-window", "-t", `=${name}:`, "-P", "-F", "#{window_id}"))
        .trim();
      await Promise.allSettled([
        execOnce(runner, address, ["kill-window", "-t", current]),
        execOnce(runner, address, ["kill-session", "-t", `=${name}`]),
        runner.exec(address, ["kill-session", "-t", `=${name}`]),
      ]);
      const alive = await t.tmuxRaw("has-session", "-t", "=keep");
      assert.equal(alive.code, 0, `round ${round}: the tmux server died: ${alive.stderr}`);
    }
  });
});

Deno.test({
  name: "tmux 3.3a dies of a window change and the end of its session in one command line, " +
    "only while a control client is attached",
  // The fault this lane keeps away (tmux/tmux#5243): pinned where it was found; a later tmux
  // that no longer has it is not held to it.
  ignore: !FAULTS_PINNED,
  async fn() {
    const line = ["next-window", "-t", "=v", ";", "kill-session", "-t", "=v"];
    await withRunner("keep", async (t, runner, address) => {
      await t.tmux("new-session", "-d", "-s", "v");
      await t.tmux("new-window", "-t", "=v:");
      // No control client: tmux survives the line.
      const first = await t.tmuxRaw(...line);
      assert.equal(first.code, 0, first.stderr);
      assert.equal((await t.tmuxRaw("has-session", "-t", "=keep")).code, 0);
      // With one attached it does not (the lane sends no such line: this is the person's).
      await execOnce(runner, address, ["display-message", "-p", "attached"]);
      await t.tmux("new-session", "-d", "-s", "v");
      await t.tmux("new-window", "-t", "=v:");
      await t.tmuxRaw(...line);
      const alive = await t.tmuxRaw("has-session", "-t", "=keep");
      assert.notEqual(alive.code, 0, "tmux survived: this tmux no longer has the fault");
      assert.match(alive.stderr, /no server running|server exited|error connecting/);
    });
  },
});
