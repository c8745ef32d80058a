/**
 * The caller's pane on an SSH host: a host whose tmux server is this machine's own (an alias of
 * it) is told by asking this machine's tmux at the server's socket path which server runs there,
 * so that the parent process names the caller's pane there as it does without `host`.
 */

import assert from "node:assert/strict";
import { callerFormatOn, callerOn, localServerIs } from "./caller_on_host.ts";
import type { PaneBrief, ServerFacts, Snapshot } from "../tmux/snapshot.ts";
import { TestTmux, waitFor } from "../../tests/helpers/tmux.ts";

/** A snapshot of `server` with one pane, `%0`, whose process is `panePid`. */
function snapshotOf(server: ServerFacts, panePid: number): Snapshot<PaneBrief> {
  return {
    running: true,
    server,
    sessions: [],
    windows: [],
    panes: [{ id: "%0", pid: panePid }],
    clients: [],
  } as unknown as Snapshot<PaneBrief>;
}

/** The facts of the test's own tmux server, as a snapshot reads them. */
async function factsOf(t: TestTmux): Promise<ServerFacts> {
  const [socketPath, pid, startTime] = (await t.tmux(
    "display-message",
    "-p",
    "#{socket_path}\t#{pid}\t#{start_time}",
  )).trim().split("\t");
  return { socketPath, pid: Number(pid), startTime: Number(startTime), version: "3.3a" };
}

Deno.test("caller on host: a host that is this machine's server names the caller by its parent process", async () => {
  const t = await TestTmux.start();
  try {
    const server = await factsOf(t);
    const snapshot = snapshotOf(server, 4242);
    const env = { ppid: 4242 };
    // While this machine's tmux is being asked, the safe side: the pane is the caller's.
    const first = callerOn(env, "h1", snapshot);
    assert.equal(first.paneId, "%0");
    assert.match(first.reason, /being checked/);
    await waitFor(() => localServerIs(server) === true, "the local tmux's answer");
    const known = callerOn(env, "h1", snapshot);
    assert.deepEqual([known.paneId, known.via], ["%0", "parent-process"]);
    assert.doesNotMatch(known.reason, /being checked/);
    assert.match(callerFormatOn(env, "h1", snapshot) ?? "", /#\{pane_pid\},4242/);
  } finally {
    await t.kill();
  }
});

Deno.test("caller on host: another server at the same path, or none, names no caller's pane", async () => {
  const t = await TestTmux.start();
  try {
    const here = await factsOf(t);
    // The same path on another machine: another server (another pid, or another start).
    for (
      const server of [
        { ...here, pid: here.pid + 1 },
        { ...here, startTime: here.startTime - 1 },
        { ...here, socketPath: `${here.socketPath}-none` },
      ]
    ) {
      const snapshot = snapshotOf(server, 4242);
      localServerIs(server);
      await waitFor(() => localServerIs(server) === false, "the local tmux's answer");
      const caller = callerOn({ ppid: 4242 }, "h1", snapshot);
      assert.equal(caller.paneId, null, JSON.stringify(server));
      assert.match(caller.reason, /local only/);
      assert.equal(callerFormatOn({ ppid: 4242 }, "h1", snapshot), null);
    }
    // Without host the parent process counts, as ever.
    const local = callerOn({ ppid: 4242 }, undefined, snapshotOf({ ...here, pid: 1 }, 4242));
    assert.equal(local.paneId, "%0");
  } finally {
    await t.kill();
  }
});

Deno.test("caller on host: a socket path the host names outside this user's tmux folder is never connected to", async () => {
  // A host says where its server's socket is; another user of this machine may listen at that
  // path here. A tmux client connecting there sends its environment and working folder.
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-probe-" });
  const path = `${dir}/tmux-0/default`;
  await Deno.mkdir(`${dir}/tmux-0`);
  const listener = Deno.listen({ transport: "unix", path });
  let connections = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      connections++;
      conn.close();
    }
  })().catch(() => {});
  try {
    const server = { socketPath: path, pid: 4242, startTime: 1, version: "3.3a" };
    localServerIs(server);
    await waitFor(() => localServerIs(server) === false, "the local answer");
    assert.equal(connections, 0, "the probe connected to the host's path");
  } finally {
    listener.close();
    await accepting;
    await Deno.remove(dir, { recursive: true });
  }
});
