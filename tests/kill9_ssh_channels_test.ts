/**
 * A wait on a channel of a tmux server on an SSH host, its tmux-mcp process killed outright:
 * the remote `tmux wait-for` must not wait on for it. A real OpenSSH server on 127.0.0.1 (see
 * helpers/sshd.ts); skipped, saying why, only where sshd cannot be started.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fixtureTest } from "./helpers/skippable.ts";
import { type Sshd, startSshd } from "./helpers/sshd.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, processesNaming, TestTmux, waitFor, waitsOnChannel } from "./helpers/tmux.ts";

const started = await startSshd(["h1"]);
const skip = typeof started === "string" ? started : null;
// deno-lint-ignore no-console
if (skip) console.error(`kill9_ssh_channels_test: skipped: ${skip}`);
const sshTest = fixtureTest(skip, { sanitize: false });
const stopTest = fixtureTest(skip);

/** A real tmux-mcp process that may reach `t` over SSH as host h1, initialized. */
async function agent(sshd: Sshd): Promise<StdioServer> {
  const { cmd, args } = startCommand();
  const s = new StdioServer(
    cmd,
    [...args, "--ssh", "h1", "--ssh-config", sshd.config],
    cleanEnv(),
  );
  await s.initialize();
  return s;
}

/** The remote tmux clients that wait on `channel` (their ssh is no tmux: not counted). */
async function remoteWaiters(t: TestTmux, channel: string): Promise<number[]> {
  return (await processesNaming(t.socket)).filter((p) =>
    /^\S*tmux /.test(p.args) && waitsOnChannel(p.args, channel)
  ).map((p) => p.pid);
}

sshTest(
  "kill9 ssh: a remote wait on a channel ends with its process, SIGKILLed, and a signal still wakes one alive",
  async () => {
    const sshd = started as Sshd;
    const t = await TestTmux.start();
    const a = await agent(sshd);
    let b: StdioServer | undefined;
    try {
      const on = { host: "h1", socket_name: t.socket };
      a.callTool("wait_for_channel", { ...on, channel: "deploy", timeoutMs: 60_000 })
        .catch(() => {});
      const ours = await waitFor(async () => {
        const pids = await remoteWaiters(t, "deploy");
        return pids.length > 0 && pids;
      }, "the remote waiter");
      a.child.kill("SIGKILL");
      await a.child.status;
      await waitFor(
        async () => {
          const running = new Set((await processesNaming(t.socket)).map((p) => p.pid));
          return ours.every((pid) => !running.has(pid));
        },
        "the remote waiting tmux client to end with its process",
      );
      // A wait whose process lives is woken by a signal, as before.
      b = await agent(sshd);
      const waiting = b.callTool("wait_for_channel", { ...on, channel: "go", timeoutMs: 30_000 });
      await waitFor(async () => (await remoteWaiters(t, "go")).length > 0, "the live waiter");
      await t.tmux("wait-for", "-S", "go");
      const r = await waiting;
      assert.equal((r.structuredContent as { outcome: string }).outcome, "signalled");
    } finally {
      await a.kill();
      await b?.kill();
      await t.kill();
    }
  },
);

stopTest("kill9 ssh: sshd stops", async () => {
  await (started as Sshd).stop();
});
