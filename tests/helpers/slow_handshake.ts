/**
 * A tmux server whose every control-mode client of ours shakes hands slowly: its tmux runs under
 * strace, which sends the first message of the handshake (the one that makes it a control
 * client to tmux) at once and holds each later one. tmux 3.3a dies when a notification reaches
 * a control client between the two (tmux/tmux#4980); a fraction of a millisecond otherwise, the
 * window is then wide enough for a test to act in it every time.
 *
 * @module
 */
import assert from "node:assert/strict";
import { sh, TestTmux, waitFor } from "./tmux.ts";
import { type RunnerOptions, TmuxRunner } from "../../src/tmux/run.ts";
import { controlFor } from "../../src/tmux/control.ts";
import type { ServerAddress } from "../../src/tmux/server_address.ts";

/** How long each later message of a control client's handshake is held up. */
const DELAY_MS = 400;

/**
 * A tmux, written into `dir`, that runs every control-mode client (`-C`) under strace: the
 * first message of the handshake (the one that makes it a control client) goes at once, each
 * later one `DELAY_MS` late, and strace's log of them goes to `dir/handshake.PID`.
 */
async function slowHandshakeTmux(dir: string): Promise<string> {
  const real = (await sh("sh", ["-c", "command -v tmux"])).stdout.trim();
  const strace = (await sh("sh", ["-c", "command -v strace"], { allowFail: true })).stdout.trim();
  if (strace === "") throw new Error("strace is needed (apt-get install strace)");
  const path = `${dir}/tmux`;
  await Deno.writeTextFile(
    path,
    "#!/bin/sh\n" +
      `case "$1 $2 $3 $4 " in *" -C "*)\n` +
      `  exec ${strace} -o "${dir}/handshake.$$" -e trace=sendmsg ` +
      `-e inject=sendmsg:delay_enter=${DELAY_MS * 1000}:when=2+ ${real} "$@" ;;\n` +
      "esac\n" +
      `exec ${real} "$@"\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

/**
 * Returns once a control client not seen before is half way through its handshake: its first
 * message sent (it is a control client to tmux), its last (`IDENTIFY_DONE`, in the third) not
 * yet. A client already past that when first looked at is passed over.
 */
async function halfWay(dir: string, seen: Set<string>): Promise<void> {
  await waitFor(async () => {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.name.startsWith("handshake.") || seen.has(entry.name)) continue;
      const log = await Deno.readTextFile(`${dir}/${entry.name}`);
      const sent = log.match(/^sendmsg\(.*\) = \d+/gm)?.length ?? 0;
      if (sent === 0) continue;
      seen.add(entry.name);
      if (sent <= 2) return true;
    }
    return false;
  }, "a control client half way through its handshake");
}

/** What {@link withSlowHandshakes} gives its test. */
export interface SlowHandshakes {
  readonly t: TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };
  readonly runner: TmuxRunner;
  readonly address: ServerAddress;
  /** Returns once a control client not seen before is half way through its handshake. */
  readonly halfWay: () => Promise<void>;
}

/**
 * Runs `fn` with a private server, a runner whose control clients shake hands slowly. `ssh`:
 * the runner reaches the server as its SSH host `host` (this machine), with those options.
 */
export async function withSlowHandshakes(
  fn: (ctx: SlowHandshakes) => Promise<void>,
  over?: { host: string; ssh: RunnerOptions["ssh"] },
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-handshake-" });
  const t = await TestTmux.start("main");
  const runner = new TmuxRunner({ binary: await slowHandshakeTmux(dir), ssh: over?.ssh });
  const address = over ? { host: over.host, socketName: t.socket } : { socketName: t.socket };
  const pid = (await t.facts()).pid;
  const seen = new Set<string>();
  try {
    await fn({ t, runner, address, halfWay: () => halfWay(dir, seen) });
    // The server is the one the test started, alive: none of the above took it down.
    assert.equal((await t.facts()).pid, pid);
    assert.ok(seen.size > 0, "no control client of ours shook hands");
  } finally {
    await runner.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
  if (runner.running !== 0) throw new Error(`${runner.running} tmux children left behind`);
}

/**
 * With our command client attached, starts a channel wait (its client a control-mode one) and,
 * while that client is half way through its handshake, runs `act`; then lets the wait end.
 */
export async function duringChannelWait(
  { t, runner, address, halfWay }: SlowHandshakes,
  act: (control: ReturnType<typeof controlFor>) => Promise<void>,
): Promise<void> {
  const control = controlFor(runner, address);
  await control.exec(["display-message", "-p", "x"]);
  const wait = runner.run(address, ["wait-for", "hold-chan"], { tiedToProcess: true });
  wait.catch(() => {}); // awaited below, unless the test fails first
  await halfWay();
  await act(control);
  await t.tmux("wait-for", "-S", "hold-chan");
  await wait;
}

/**
 * A session made over our control connection while a channel wait's client shakes hands
 * (`%sessions-changed` goes to every control client, a session or not): it is there after.
 */
export async function newSessionDuringChannelWait(ctx: SlowHandshakes): Promise<void> {
  await duringChannelWait(ctx, async (control) => {
    await control.exec(["new-session", "-d", "-s", "made during a handshake"]);
  });
  assert.match(await ctx.t.tmux("list-sessions", "-F", "#{session_name}"), /made during/);
}

/**
 * Makes a session `watched` and a session `doomed` on `t`'s server; `watched`'s id and pane.
 */
export async function watchedAndDoomed(t: TestTmux): Promise<[string, string]> {
  const other =
    (await t.tmux("new-session", "-d", "-s", "watched", "-P", "-F", "#{session_id} #{pane_id}"))
      .trim().split(" ");
  await t.tmux("new-session", "-d", "-s", "doomed");
  return [other[0], other[1]];
}

/**
 * A session ended by a tmux process of ours while the client of a watch in another session
 * shakes hands: it is gone after.
 */
export async function killSessionDuringWatch(
  { t, runner, address, halfWay }: SlowHandshakes,
): Promise<void> {
  const other = await watchedAndDoomed(t);
  const watching = controlFor(runner, address).watch(other[1], [other[0]], () => {});
  watching.catch(() => {}); // awaited below, unless the test fails first
  await halfWay();
  await runner.run(address, ["kill-session", "-t", "doomed"]);
  (await watching).close();
  assert.doesNotMatch(await t.tmux("list-sessions", "-F", "#{session_name}"), /doomed/);
}
