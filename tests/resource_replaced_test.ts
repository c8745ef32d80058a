/**
 * A pane resource names a pane by its id on a socket. A subscription to it follows the pane it
 * found, on the tmux server it found it on: once that server is gone and another answers on the
 * same socket (with a pane of the same id: each server numbers its panes from %0), the
 * subscriber is told once, the new server's pane is never followed, and the operator is told
 * why. A read is a fresh look, as capture_pane's: the pane by that id on that socket now.
 */

import assert from "node:assert/strict";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";

Deno.test("a subscribed pane whose tmux server was replaced on its socket is told once and not followed on the new server", async () => {
  const t = await TestTmux.start("build", {
    command: "sh -c 'echo OLD-BUILD-OUTPUT; exec sleep 1000'",
  });
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", t.ids.paneId)).includes("OLD-BUILD"),
      "the old pane's output",
    );
    await server.initialize();
    const uri = `tmux://pane/${t.ids.paneId.slice(1)}`;
    assert.equal((await server.request("resources/subscribe", { uri })).error, undefined);
    const updates = () =>
      server.notifications.filter((n) =>
        n.method === "notifications/resources/updated" && n.params?.uri === uri
      ).length;
    const before = updates();

    await t.tmux("kill-server");
    // A server started while the old one still exits may reach it ("server exited
    // unexpectedly"): started again until it is the new one that answers.
    const id = await waitFor(async () => {
      const started = await t.tmuxRaw(
        "new-session",
        "-d",
        "-s",
        "other",
        "-P",
        "-F",
        "#{pane_id}",
        "sh -c 'echo SOMEONE-ELSES-PANE; exec sleep 1000'",
      );
      return started.code === 0 && started.stdout.trim();
    }, "a new server on the socket");
    assert.equal(id, t.ids.paneId, "the new server's pane has the same id (precondition)");

    await waitFor(
      () => server.stderr.includes(`${uri} follows it no more`),
      "the replacement said to the operator",
    );
    assert.match(
      server.stderr,
      new RegExp(`pane ${t.ids.paneId} on socket "${t.socket}" went with its tmux server \\(pid`),
    );
    assert.ok(updates() > before, "the subscriber was told");
    // Not followed on the new server: no control client of ours follows a pane's output there.
    const following = (await t.tmux("list-clients", "-F", "#{client_flags}")).split("\n")
      .filter((flags) => flags.trim() !== "" && !flags.includes("no-output"));
    assert.deepEqual(following, []);
    // A read is a fresh look at the pane by that id on that socket, as capture_pane's.
    const read = await server.request("resources/read", { uri });
    const text = (read.result?.contents as { text: string }[])[0].text;
    assert.ok(text.includes("SOMEONE-ELSES-PANE"), text);
    await server.endsCleanly();
  } finally {
    await server.kill();
    await t.kill();
  }
});
