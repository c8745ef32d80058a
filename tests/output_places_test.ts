/**
 * tmux 3.3a keeps a control client's place in the output of a pane whose window left the
 * client's session and never moves it again: everything the pane prints from then on stays in
 * tmux's memory while the client is attached (and a respawn of the pane would crash tmux,
 * tests/respawn_test.ts). A client of ours for watches therefore leaves when a window it was
 * told closed still exists, and its waits go on with a new one. Real tmux on a private socket.
 */

import assert from "node:assert/strict";
import { type StartedTmux, type TestClient, withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

/** A wait on `pane` for "finally", and the client for watches tmux lists for it. */
async function waitWithClient(t: StartedTmux, c: TestClient, pane: string) {
  const waited = c.ok<{ outcome: string }>("wait_for_text", {
    paneId: pane,
    patterns: ["finally"],
    timeoutMs: 20_000,
  });
  const [first] = await waitFor(async () => {
    const names = await t.outputClients();
    return names.length > 0 ? names : null;
  }, "the wait's client");
  return { waited, first };
}

/** The client `first` goes, another carries the wait, and the wait still sees "finally". */
async function goesOnWithANewClient(
  t: StartedTmux,
  pane: string,
  first: string,
  waited: Promise<{ outcome: string }>,
) {
  await waitFor(async () => {
    const names = await t.outputClients();
    return !names.includes(first) && names.length > 0;
  }, "the old client gone, the wait on a new one");
  await t.tmux("send-keys", "-t", pane, "echo finally", "Enter");
  assert.equal((await waited).outcome, "matched");
}

Deno.test("a window moved out of a watch client's session: the client leaves, and the wait goes on with a new one", async () => {
  await withTmux(async (t, c) => {
    const pane = t.ids.paneId;
    const busy = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    await t.prompt(busy);
    await t.tmux("new-session", "-d", "-s", "other");
    const { waited, first } = await waitWithClient(t, c, pane);
    // The busy pane prints while the client is there: it has a place in its output.
    await t.tmux("send-keys", "-t", busy, "echo printed", "Enter");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", busy)).includes("printed\n"),
      "the busy pane's output",
    );
    await t.tmux("move-window", "-s", busy, "-t", "other:");
    await goesOnWithANewClient(t, pane, first, waited);
  }, { toolsets: ["inspect"] });
});

Deno.test("a window moved out while a watch client is still opening: the wait is not left on that client", async () => {
  await withTmux(async (t, c) => {
    const pane = t.ids.paneId;
    const busy = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id}", "sh"))
      .trim();
    await t.tmux("new-session", "-d", "-s", "other");
    // The client for commands is attached first, before the hook below meets an attach.
    await c.ok("list_panes", {});
    // A person's hook starts a job as the next client attaches (once), and the job moves the
    // window out of that client's session: a client's opening waits for the jobs its own
    // attach started, so the client is told to leave while it still opens (the job ends soon
    // after, so the opening ends before the leaving client's short linger would close it).
    const job = `sleep 0.2; tmux -L ${t.socket} move-window -d -s ${busy} -t other:; sleep 0.2`;
    await t.tmux(
      "set-hook",
      "-g",
      "client-attached",
      `run-shell -b "${job}" ; set-hook -gu client-attached`,
    );
    const { waited, first } = await waitWithClient(t, c, pane);
    await waitFor(
      async () =>
        (await t.tmux("list-windows", "-t", "other", "-F", "#{window_id}")).includes(busy),
      "the window moved",
    );
    await goesOnWithANewClient(t, pane, first, waited);
  }, { toolsets: ["inspect"] });
});
