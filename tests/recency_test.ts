/**
 * A person's plain `tmux attach` (no target) takes them to the most recently used session no
 * client is attached to, and a tmux command run outside tmux with no target picks the most
 * recently used session. tmux counts a control client's attach as use, and a control client as
 * attached: these tests pin that our control clients leave both where they were.
 */
import assert from "node:assert/strict";
import { connect } from "./helpers/mcp.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import {
  controls,
  fromNothing,
  landing,
  nextSecond,
  threeSessions,
  use,
} from "./helpers/recency.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";

/** Runs `fn` on three sessions (see {@link threeSessions}); kills the server after. */
async function withSessions(
  fn: (t: TestTmux, panes: string[]) => Promise<void>,
): Promise<void> {
  const { t, panes } = await threeSessions();
  try {
    await fn(t, panes);
  } finally {
    await t.kill();
  }
}

Deno.test("control clients leave a person's plain `tmux attach` where it lands", async () => {
  await withSessions(async (t, panes) => {
    const c = await connect({ socketName: t.socket });
    try {
      // Reads attach the server's control client; running a command in the third session
      // attaches one there too (tmux sends a pane's output only to its own session's clients).
      await c.ok("list_panes");
      const ran = await c.ok<{ exitStatus: number }>("run_command", {
        paneId: panes[2],
        command: "true",
      });
      assert.equal(ran.exitStatus, 0);
    } finally {
      await c.close();
    }
    // Measured once: a measurement attaches a client too, which counts as use.
    assert.equal(await fromNothing(t), "$1", "once tmux-mcp is gone");
    assert.equal(await landing(t), "$1", "once tmux-mcp is gone");
  });
});

// The control client's goodbye puts the person's sessions back in the order it found them,
// also when the process is hung up (the terminal its MCP client runs in closed) rather than
// told to stop.
for (const how of ["stdin EOF", "SIGHUP"] as const) {
  Deno.test(`after the process ends (${how}), a person's plain \`tmux attach\` lands where it did`, async () => {
    await withSessions(async (t) => {
      const { cmd, args } = startCommand();
      const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
      try {
        await s.initialize();
        await nextSecond(t);
        await s.callTool("list_panes");
        await waitFor(async () => (await controls(t)).length > 0, "our control client");
        if (how === "SIGHUP") s.child.kill("SIGHUP");
        else await s.closeStdin();
        await s.child.status;
        await waitFor(async () => (await controls(t)).length === 0, "our control client gone");
        assert.equal(await landing(t), "$1");
      } finally {
        await s.kill();
      }
    });
  });
}

Deno.test("a control client that watched a pane leaves the person's sessions as it found them", async () => {
  await withSessions(async (t, panes) => {
    const c = await connect({ socketName: t.socket });
    try {
      await c.ok("list_panes");
      await c.ok("run_command", { paneId: panes[2], command: "true" });
      const clients = async () => (await controls(t)).length;
      assert.equal(await clients(), 2);
      // The watch's client leaves a few seconds after its last wait; tmux-mcp stays.
      await waitFor(async () => await clients() === 1, "the watching client to leave", 15_000);
      assert.equal(await fromNothing(t), "$1");
      assert.equal(await landing(t), "$1");
    } finally {
      await c.close();
    }
  });
});

Deno.test("the control client keeps out of a person's session, and their plain attach after they leave it", async () => {
  await withSessions(async (t) => {
    await use(t, "$2");
    await nextSecond(t);
    const person = await t.attach("$1");
    const c = await connect({ socketName: t.socket });
    try {
      await c.ok("list_panes");
      assert.deepEqual(await controls(t), ["1 $0"]);
      // The person leaves their session: a plain attach takes them back to it.
      await t.detach(person);
      assert.equal(await landing(t), "$1");
    } finally {
      await c.close();
    }
    assert.equal(await landing(t), "$1");
  });
});

Deno.test("while tmux-mcp is attached, a person's plain `tmux attach` lands where it did", async () => {
  await withSessions(async (t, panes) => {
    const c = await connect({ socketName: t.socket });
    try {
      await c.ok("list_panes");
      await c.ok("run_command", { paneId: panes[2], command: "true" });
      assert.equal(await landing(t), "$1");
    } finally {
      await c.close();
    }
  });
});

Deno.test("pinned: tmux gives a client-less command from a pane to the session's newest client, control clients too", async () => {
  const t = await TestTmux.start("work");
  let control: Deno.ChildProcess | undefined;
  try {
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    const person = await t.attach("$0");
    // A control client joins the person's session after their last key.
    control = t.controlClient("$0", ["-E", "-f", "ignore-size"]);
    const where = async () =>
      (await t.tmux("list-clients", "-F", "#{client_control_mode} #{session_id}")).trim()
        .split("\n").sort();
    await waitFor(async () => (await where()).length === 2, "the control client");
    // Typed into the person's session by a program (no key of the person's in between).
    await t.tmux("send-keys", "-t", t.ids.paneId, "tmux switch-client -t '$1'", "Enter");
    await waitFor(async () => (await where()).includes("1 $1"), "a client to switch");
    assert.deepEqual(await where(), ["0 $0", "1 $1"], `${person} stayed; the control client moved`);
  } finally {
    await control?.stdin.close().catch(() => {});
    await control?.status;
    await t.kill();
  }
});

Deno.test("a client following a pane in a person's session stays while they are there, and leaves after them", async () => {
  await withSessions(async (t) => {
    // The agent's pane: in the person's session, in a window they are not looking at.
    const pane = (await t.tmux("new-window", "-d", "-t", "$2", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    await t.prompt(pane);
    await nextSecond(t);
    const person = await t.attach("$2");
    const c = await connect({ socketName: t.socket });
    try {
      await c.ok("run_command", { paneId: pane, command: "true" });
      assert.deepEqual(await controls(t), ["1 $0", "1 $2"]);
      const [created] = (await t.tmux(
        "list-clients",
        "-F",
        "#{client_control_mode} #{session_id} #{client_created}",
      )).split("\n").filter((l) => l.startsWith("1 $2"));
      // Past its linger, it stays: the person is there, and a new client for the next
      // command would be newer than the person's last key (see the pinned test above).
      const lingered = Date.now() + 7_000;
      await waitFor(() => Date.now() > lingered, "the linger to pass", 10_000);
      await c.ok("run_command", { paneId: pane, command: "true" });
      assert.ok(
        (await t.tmux(
          "list-clients",
          "-F",
          "#{client_control_mode} #{session_id} #{client_created}",
        ))
          .split("\n").includes(created),
        "the same client",
      );
      // The person leaves: so does the client, soon, and their plain attach finds $2 again.
      await t.detach(person);
      await waitFor(async () => (await controls(t)).length === 1, "the client to leave", 15_000);
      assert.equal(await landing(t), "$2");
    } finally {
      await c.close();
    }
  });
});

Deno.test("a person who used the session tmux-mcp's client sits in finds it free when they leave", async () => {
  await withSessions(async (t) => {
    const c = await connect({ socketName: t.socket });
    try {
      await c.ok("list_panes");
      assert.deepEqual(await controls(t), ["1 $0"]);
      // The person works in that session for a while, then detaches.
      await nextSecond(t);
      const person = await t.attach("$0");
      await t.detach(person);
      await waitFor(
        async () => !(await controls(t)).includes("1 $0"),
        "the client to leave the session",
        15_000,
      );
      assert.equal(await landing(t), "$0");
      // tmux-mcp carries on, from another session.
      await c.ok("list_panes");
      assert.equal((await controls(t)).length, 1);
      assert.notDeepEqual(await controls(t), ["1 $0"]);
    } finally {
      await c.close();
    }
  });
});
