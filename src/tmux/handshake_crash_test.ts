/**
 * tmux 3.3a dies when a notification reaches a control client half way through its handshake
 * (tmux/tmux#4980): a session made or ended, a pane selected, a client detached. The window is
 * a fraction of a millisecond; here every control-mode client of ours shakes hands slowly
 * (its tmux runs under strace, which delays each message after the first of its handshake), so
 * an act of ours that came in between would take the server down every time. Each test starts
 * a client of ours and, while it is half way, does one of the things that would: the server
 * must still be there, with everything asked for done.
 */
import assert from "node:assert/strict";
import { sh, TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { controlFor } from "./control.ts";
import { TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";

/** How long each later message of a control client's handshake is held up. */
const DELAY_MS = 250;

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
 * message sent (it is a control client to tmux), the next held up.
 */
async function halfWay(dir: string, seen: Set<string>): Promise<void> {
  await waitFor(async () => {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.name.startsWith("handshake.") || seen.has(entry.name)) continue;
      const log = await Deno.readTextFile(`${dir}/${entry.name}`);
      if (/^sendmsg\(.*\) = \d+/m.test(log)) {
        seen.add(entry.name);
        return true;
      }
    }
    return false;
  }, "a control client half way through its handshake");
}

/** Runs `fn` with a private server, a runner whose control clients shake hands slowly. */
async function withSlowHandshakes(
  fn: (ctx: {
    t: TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };
    runner: TmuxRunner;
    address: ServerAddress;
    halfWay: () => Promise<void>;
  }) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-handshake-" });
  const t = await TestTmux.start("main");
  const runner = new TmuxRunner({ binary: await slowHandshakeTmux(dir) });
  const pid = (await t.facts()).pid;
  const seen = new Set<string>();
  try {
    await fn({ t, runner, address: { socketName: t.socket }, halfWay: () => halfWay(dir, seen) });
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

Deno.test("a command over our control connection waits while a channel wait's client shakes hands", async () => {
  await withSlowHandshakes(async ({ t, runner, address, halfWay }) => {
    const control = controlFor(runner, address);
    await control.exec(["display-message", "-p", "x"]);
    await halfWay(); // the command client's own
    const wait = runner.run(address, ["wait-for", "hold-chan"], { tiedToProcess: true });
    wait.catch(() => {}); // awaited below, unless the test fails first
    await halfWay();
    // %sessions-changed goes to every control client, a session or not.
    await control.exec(["new-session", "-d", "-s", "made during a handshake"]);
    await t.tmux("wait-for", "-S", "hold-chan");
    await wait;
    assert.match(await t.tmux("list-sessions", "-F", "#{session_name}"), /made during/);
  });
});

Deno.test("a tmux process of ours waits while a watch's client shakes hands", async () => {
  await withSlowHandshakes(async ({ t, runner, address, halfWay }) => {
    const other =
      (await t.tmux("new-session", "-d", "-s", "watched", "-P", "-F", "#{session_id} #{pane_id}"))
        .trim().split(" ");
    await t.tmux("new-session", "-d", "-s", "doomed");
    const control = controlFor(runner, address);
    const watching = control.watch(other[1], [other[0]], () => {});
    watching.catch(() => {}); // awaited below, unless the test fails first
    await halfWay();
    await runner.run(address, ["kill-session", "-t", "doomed"]);
    (await watching).close();
    assert.doesNotMatch(await t.tmux("list-sessions", "-F", "#{session_name}"), /doomed/);
  });
});

Deno.test("our control clients leave only once a channel wait's client has shaken hands", async () => {
  await withSlowHandshakes(async ({ t, runner, address, halfWay }) => {
    const control = controlFor(runner, address);
    await control.exec(["display-message", "-p", "x"]);
    await halfWay();
    const wait = runner.run(address, ["wait-for", "hold-chan"], { tiedToProcess: true });
    wait.catch(() => {}); // awaited below, unless the test fails first
    await halfWay();
    // Their end tells every control client `%client-detached`.
    control.retire();
    await waitFor(() => control.connections === 0, "our control clients gone");
    await t.tmux("wait-for", "-S", "hold-chan");
    await wait;
  });
});
