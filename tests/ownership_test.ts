/**
 * Agent-owned panes: what this server creates carries its owner mark in tmux; with
 * `--own-panes-only` it types, runs, pastes, respawns, kills, clears and pipes only there,
 * refusing any other pane with the reason — also after a restart with the same `--owner`, and
 * never by taking a pane over (moving it, breaking it out) that it did not create.
 */

import assert from "node:assert/strict";
import { parseCli, UsageError } from "../src/cli.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux } from "./helpers/tmux.ts";

type Pane = { owner: string | null; ownedByThisServer: boolean };

Deno.test("--own-panes-only and --owner: flags, variables, and what an owner id may be", () => {
  const on = parseCli(["--own-panes-only", "--owner", "agent.A-1"], () => undefined);
  assert.ok(on.kind === "serve" && on.options.ownPanesOnly && on.options.owner === "agent.A-1");
  const env = parseCli(
    [],
    (n) => ({ TMUX_MCP_OWN_PANES_ONLY: "1", TMUX_MCP_OWNER: "x" } as Record<string, string>)[n],
  );
  assert.ok(env.kind === "serve" && env.options.ownPanesOnly && env.options.owner === "x");
  const off = parseCli([], () => undefined);
  assert.ok(off.kind === "serve" && !("ownPanesOnly" in off.options) && !("owner" in off.options));
  for (const bad of ["a b", "#{pane_id}", "x".repeat(65), "a,b", "é"]) {
    assert.throws(() => parseCli(["--owner", bad], () => undefined), UsageError, bad);
  }
  assert.throws(
    () => parseCli([], (n) => n === "TMUX_MCP_OWN_PANES_ONLY" ? "yes" : undefined),
    /TMUX_MCP_OWN_PANES_ONLY: "yes" is not 1 or 0 \(nor true or false\)/,
  );
});

Deno.test("own panes only: every act on a pane it did not create is refused, its own are not", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  let other: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket, owner: "agent-a", ownPanesOnly: true });
    const theirs = t.ids.paneId;
    const info = await c.ok<Pane>("get_pane_info", { paneId: theirs });
    assert.deepEqual([info.owner, info.ownedByThisServer], [null, false]);
    const refusals: [string, Record<string, unknown>][] = [
      ["send_keys", { paneId: theirs, text: "echo no", enter: true }],
      ["send_keys_batch", { operations: [{ paneId: theirs, text: "x" }] }],
      ["paste_text", { paneId: theirs, text: "no" }],
      ["run_command", { paneId: theirs, command: "echo no" }],
      ["respawn_pane", { paneId: theirs, kill: true }],
      ["clear_pane", { paneId: theirs }],
      ["pipe_pane", { paneId: theirs, path: "/dev/null" }],
      ["kill_pane", { paneId: theirs, force: true }],
      ["kill_window", { windowId: t.ids.windowId, force: true }],
      ["kill_session", { session: t.ids.sessionId, force: true }],
    ];
    for (const [tool, args] of refusals) {
      const result = await c.call(tool, args);
      const text = JSON.stringify(result);
      assert.match(text, /not created by this server.*own-panes-only/, `${tool}: ${text}`);
    }
    // Nothing happened to it.
    assert.ok(!(await t.tmux("capture-pane", "-p", "-t", theirs)).includes("no"));

    // A window it creates is its own: marked in tmux, where a person can see it.
    const made = await c.ok<{ windowId: string; paneId: string }>("create_window", {
      session: t.ids.sessionId,
      command: "sh",
    });
    const mark = await t.tmux("show-options", "-p", "-t", made.paneId, "@tmux-mcp-owner");
    assert.equal(mark.trim(), "@tmux-mcp-owner agent-a");
    const mine = await c.ok<Pane>("get_pane_info", { paneId: made.paneId });
    assert.deepEqual([mine.owner, mine.ownedByThisServer], ["agent-a", true]);
    await t.prompt(made.paneId);
    const run = await c.ok<{ exitStatus: number; output: string }>("run_command", {
      paneId: made.paneId,
      command: "echo mine",
    });
    assert.deepEqual([run.exitStatus, run.output], [0, "mine"]);
    const split = await c.ok<{ paneId: string }>("split_window", {
      paneId: made.paneId,
      command: "sh",
    });
    await c.ok("send_keys", { paneId: split.paneId, text: "echo split", enter: true });

    // Breaking a pane it does not own out into a window of its own does not make it its own.
    await t.tmux("split-window", "-d", "-t", theirs, "sh");
    const broken = await c.ok<{ windowId: string }>("break_pane", { paneId: theirs });
    assert.ok(broken.windowId);
    assert.match(
      await c.fail("send_keys", { paneId: theirs, text: "x" }),
      /not created by this server/,
    );

    // Nor does writing the mark: set_option refuses it at every scope, so no pane, or every
    // pane below a window, session or the global options, can pass for this server's.
    for (
      const [scope, where] of [
        ["pane", { target: theirs }],
        ["window", { target: t.ids.windowId }],
        ["window", { global: true }],
        ["session", { target: t.ids.sessionId }],
        ["session", { global: true }],
      ] as const
    ) {
      for (const change of [{ value: "agent-a" }, { unset: true }]) {
        assert.match(
          await c.fail("set_option", { name: "@tmux-mcp-owner", scope, ...where, ...change }),
          /the mark a tmux-mcp server puts on the panes it creates; no tool sets or unsets it/,
        );
      }
    }
    await c.fail("set_option", {
      name: "@tmux-mcp-owner[0]",
      value: "agent-a",
      scope: "pane",
      target: theirs,
    });
    assert.equal(await t.tmux("show-options", "-gw", "@tmux-mcp-owner").catch(() => ""), "");
    assert.match(
      await c.fail("send_keys", { paneId: theirs, text: "x" }),
      /not created by this server/,
    );
    // A mark on its own pane stays as it was.
    assert.match(
      await c.fail("set_option", {
        name: "@tmux-mcp-owner",
        value: "agent-b",
        scope: "pane",
        target: made.paneId,
      }),
      /no tool sets or unsets it/,
    );
    assert.equal(
      (await t.tmux("show-options", "-p", "-t", made.paneId, "@tmux-mcp-owner")).trim(),
      "@tmux-mcp-owner agent-a",
    );

    // Another server with another owner id: the panes are not its own.
    other = await connect({ socketName: t.socket, owner: "agent-b", ownPanesOnly: true });
    assert.match(
      await other.fail("send_keys", { paneId: made.paneId, text: "x" }),
      /its owner is "agent-a"; this server is "agent-b"/,
    );
    // Without --own-panes-only the mark is only information.
    const free = await connect({ socketName: t.socket, owner: "agent-b" });
    try {
      await free.ok("send_keys", { paneId: theirs, text: "", keys: ["Escape"] });
    } finally {
      await free.close();
    }
    // Its own pane, killed.
    await c.ok("kill_pane", { paneId: split.paneId });
  } finally {
    await c?.close();
    await other?.close();
    await t.kill();
  }
});

Deno.test("the real process: the owner id is printed at start and owns its panes after a restart", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  const start = (...extra: string[]) =>
    new StdioServer(cmd, [...args, "--socket", t.socket, ...extra], cleanEnv());
  try {
    const first = start("--own-panes-only", "--owner", "builder-7");
    await first.initialize();
    const made = (await first.callTool("create_window", {
      session: t.ids.sessionId,
      command: "sh",
    })).structuredContent as { paneId: string };
    await first.closeStdin();
    assert.match(first.stderr, /owner builder-7 \(own panes only\)/);

    assert.doesNotMatch(first.stderr, /input into watched panes allowed/);

    const second = start("--own-panes-only", "--owner", "builder-7", "--allow-attended-input");
    await second.initialize();
    await t.prompt(made.paneId);
    const ok = await second.callTool("send_keys", { paneId: made.paneId, text: "echo again" });
    assert.notEqual(ok.isError, true, JSON.stringify(ok));
    await second.closeStdin();
    // The guard for the person is off: the start line says so.
    assert.match(second.stderr, /input into watched panes allowed/);

    const anonymous = start();
    await anonymous.initialize();
    await anonymous.closeStdin();
    assert.match(anonymous.stderr, /owner tmux-mcp-[0-9a-f]{8}\b/);
  } finally {
    await t.kill();
  }
});

Deno.test("own panes only: a pane moved in after the check stops the kill (tmux checks at the instant)", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket, owner: "agent-a", ownPanesOnly: true });
    const alive = async (paneId: string) =>
      (await t.tmux("list-panes", "-a", "-F", "#{pane_id}")).split("\n").includes(paneId);
    // A person's pane, in a window of its own nobody watches.
    const theirs = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sleep 1000"))
      .trim();

    // kill_window: joined into the server's own window between its read and the kill.
    const made = await c.ok<{ windowId: string; paneId: string }>("create_window", {
      session: t.ids.sessionId,
      command: "sleep 1000",
    });
    await t.onceAfterGuardRead(`join-pane -d -s ${theirs} -t ${made.paneId}`);
    assert.match(
      await c.fail("kill_window", { windowId: made.windowId }),
      new RegExp(`pane ${theirs} was not created by this server`),
    );
    assert.ok(await alive(theirs), "the person's pane lives");
    assert.ok(await alive(made.paneId), "nothing of the window was killed");

    // kill_session: the person's window moved into the server's own session meanwhile.
    await t.tmux("break-pane", "-d", "-s", theirs);
    const window = (await t.tmux("display-message", "-p", "-t", theirs, "#{window_id}")).trim();
    const session = await c.ok<{ sessionId: string }>("create_session", {
      name: "agent",
      command: "sleep 1000",
    });
    await t.onceAfterGuardRead(`move-window -d -s ${window} -t ${session.sessionId}:`);
    assert.match(
      await c.fail("kill_session", { session: session.sessionId }),
      new RegExp(`pane ${theirs} was not created by this server`),
    );
    assert.ok(await alive(theirs), "the person's pane lives");
  } finally {
    await t.tmux("set-hook", "-gu", "after-list-clients").catch(() => {});
    await c?.close();
    await t.kill();
  }
});

Deno.test("own panes only: a pane moved into a synchronized window after the check gets no keys", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket, owner: "agent-a", ownPanesOnly: true });
    const theirs = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "cat")).trim();
    const made = await c.ok<{ windowId: string; paneId: string }>("create_window", {
      session: t.ids.sessionId,
      command: "cat",
    });
    await c.ok("set_synchronize_panes", { windowId: made.windowId, enabled: true });
    // The read of a synchronized pane's window is the second: the pane moves in after it.
    await t.onceAfterGuardRead(`join-pane -d -s ${theirs} -t ${made.paneId}`, 2);
    assert.match(
      await c.fail("send_keys", { paneId: made.paneId, text: "TYPED", enter: false }),
      new RegExp(`pane ${theirs} was not created by this server`),
    );
    const panes = (await t.tmux("list-panes", "-t", made.windowId, "-F", "#{pane_id}")).trim();
    assert.equal(panes.split("\n").length, 2, "the person's pane did move in");
    assert.ok(!(await t.tmux("capture-pane", "-p", "-t", theirs)).includes("TYPED"));
    assert.ok(!(await t.tmux("capture-pane", "-p", "-t", made.paneId)).includes("TYPED"));
  } finally {
    await t.tmux("set-hook", "-gu", "after-list-clients").catch(() => {});
    await c?.close();
    await t.kill();
  }
});
