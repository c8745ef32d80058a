/**
 * `tmux://server` says what its description promises: a subscriber is told when a pane dies or
 * comes back, when a pane's title changes and when a person attaches or detaches (tmux sends
 * no control-mode notification for any of these: the feed's format subscription carries
 * them), and `attached` counts people, as list_sessions does, never tmux-mcp's own control
 * client.
 */

import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

type Tmux = Awaited<ReturnType<typeof TestTmux.start>>;

/** A server whose first pane runs `cat`, and a client subscribed to tmux://server. */
async function subscribed(
  fn: (t: Tmux, c: TestClient, updates: () => number) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start("main", { command: "cat" });
  const c = await connect({ socketName: t.socket });
  try {
    await t.tmux("set-option", "-g", "allow-rename", "off");
    let updates = 0;
    c.client.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n: { params: { uri: string } }) => {
        if (n.params.uri === "tmux://server") updates++;
      },
    );
    await fn(t, c, () => updates);
  } finally {
    await c.close();
    await t.kill();
  }
}

/** Subscribes, then waits until what the subscription itself set going has been told. */
async function subscribeQuietly(c: TestClient, updates: () => number): Promise<void> {
  await c.client.subscribeResource({ uri: "tmux://server" });
  // tmux checks a format subscription once a second: two seconds without an update is quiet.
  let seen = -1;
  for (let round = 0; seen !== updates(); round++) {
    assert.ok(round < 10, "tmux://server keeps being updated with nothing changing");
    seen = updates();
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

/** The resource as a client reads it. */
async function readServer(c: TestClient): Promise<{
  sessions: { id: string; attached: number }[];
  panes: { id: string; dead: boolean; title: string; height: number }[];
}> {
  const read = await c.client.readResource({ uri: "tmux://server" });
  return JSON.parse((read.contents[0] as { text: string }).text);
}

Deno.test("tmux://server: a subscriber is told when a pane dies and when it is respawned", async () => {
  await subscribed(async (t, c, updates) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const pane = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "sleep 1000"))
      .trim();
    await subscribeQuietly(c, updates);
    const before = updates();
    // The pane's process ends; remain-on-exit keeps the pane, dead.
    await t.tmux("respawn-pane", "-k", "-t", pane, "true");
    await waitFor(async () => (await readServer(c)).panes.find((p) => p.id === pane)?.dead, "dead");
    await waitFor(() => updates() > before, "an update for the pane that died");
    await subscribeQuietly(c, updates);
    const died = updates();
    await t.tmux("respawn-pane", "-t", pane, "sleep 1000");
    await waitFor(() => updates() > died, "an update for the pane respawned");
    assert.equal((await readServer(c)).panes.find((p) => p.id === pane)?.dead, false);
  });
});

Deno.test("tmux://server: a subscriber is told when a pane's title changes, at its end or its start", async () => {
  await subscribed(async (t, c, updates) => {
    const pane = t.ids.paneId;
    await t.tmux("select-pane", "-t", pane, "-T", "build: 41%");
    await subscribeQuietly(c, updates);
    for (const title of ["build: 42%", "x".repeat(100) + " 42%", "y".repeat(100) + " 42%"]) {
      const before = updates();
      // A program sets its own title (OSC 2): the same length, another digit, the first time.
      await t.tmux("select-pane", "-t", pane, "-T", title);
      await waitFor(() => updates() > before, `an update for the title ${title.slice(0, 12)}`);
      assert.equal((await readServer(c)).panes.find((p) => p.id === pane)?.title, title);
      await subscribeQuietly(c, updates);
    }
  });
});

Deno.test("tmux://server: attached counts people, not tmux-mcp's control client, and attaching is told", async () => {
  await subscribed(async (t, c, updates) => {
    // Subscribing attaches tmux-mcp's control client to the session, as any control call does.
    await subscribeQuietly(c, updates);
    const listed = await c.ok<{ sessions: { attachedClients: number }[] }>("list_sessions");
    assert.equal(listed.sessions[0].attachedClients, 0);
    assert.equal((await readServer(c)).sessions[0].attached, 0, "nobody is attached");

    const before = updates();
    const tty = await t.attach("main");
    await waitFor(() => updates() > before, "an update for a person attaching");
    assert.equal((await readServer(c)).sessions[0].attached, 1);
    await subscribeQuietly(c, updates);
    const attached = updates();
    await t.tmux("detach-client", "-t", tty);
    await waitFor(() => updates() > attached, "an update for a person detaching");
    assert.equal((await readServer(c)).sessions[0].attached, 0);
  });
});

Deno.test("tmux://server: a subscriber is told when a pane is resized or zoomed in another session", async () => {
  await subscribed(async (t, c, updates) => {
    // tmux tells a layout change only to clients whose session holds the window: none of
    // tmux-mcp's is attached to this one.
    await t.tmux("new-session", "-d", "-s", "other", "cat");
    const lower =
      (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "other", "cat"))
        .trim();
    await subscribeQuietly(c, updates);
    const sessions = (await t.tmux("list-clients", "-F", "#{session_name}")).trim().split("\n");
    assert.ok(!sessions.includes("other"), `no client on the other session: ${sessions}`);
    const heightOf = async () => (await readServer(c)).panes.find((p) => p.id === lower)?.height;
    const before = updates();
    await t.tmux("resize-pane", "-t", lower, "-y", "4");
    await waitFor(async () => await heightOf() === 4, "the pane resized");
    await waitFor(() => updates() > before, "an update for the pane resized");
    await subscribeQuietly(c, updates);
    const resized = updates();
    await t.tmux("resize-pane", "-Z", "-t", lower);
    await waitFor(() => updates() > resized, "an update for the pane zoomed");
  });
});
