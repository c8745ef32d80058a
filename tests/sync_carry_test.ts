/**
 * A pane put into a window with synchronize-panes on (join_pane, swap_pane, split_window)
 * receives what a person types there: tmux 3.3a copies a synchronized pane's keys to every pane
 * of its window, one that arrives included; and so does a program respawned in a pane of it
 * (respawn_pane). So such a move or respawn is refused where a person is shown the window, or
 * attached to a session that lists it (a key away), as turning synchronize-panes on there is,
 * unless --allow-attended-input; tmux checks it again at the move. Into a window without it, or
 * with the permission, the move or respawn goes ahead.
 */

import assert from "node:assert/strict";
import { type StartedTmux, type TestClient, withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

/** The agent's pane: alone in a session nobody is attached to. */
async function agentPane(t: StartedTmux): Promise<string> {
  return (await t.tmux("new-session", "-d", "-s", "agent", "-P", "-F", "#{pane_id}", "sh")).trim();
}

/** Every pane's window, as `%1 @1` lines, sorted: what a refused move must leave as it was. */
async function layout(t: StartedTmux): Promise<string> {
  return (await t.tmux("list-panes", "-a", "-F", "#{pane_id} #{window_id}")).trim().split("\n")
    .sort().join("\n");
}

/** The refusal: one sentence naming the window, the client and the lift. */
function assertRefused(text: string, windowId: string, tty: string, how: RegExp, what: string) {
  assert.match(text, how, `${what}: ${text}`);
  assert.ok(text.includes(windowId), `${what} names the window: ${text}`);
  assert.ok(text.includes(tty), `${what} names the client: ${text}`);
  assert.match(text, /synchronized/, `${what} says why: ${text}`);
  assert.match(text, /--allow-attended-input/, `${what} says what lifts it: ${text}`);
}

const LISTED = /is listed in the status line of session \$\d+, which client/;

/** A pane's process and whether it is dead (`1234 0`): what a refused respawn leaves as it was. */
async function processOf(t: StartedTmux, pane: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", pane, "#{pane_pid} #{pane_dead}")).trim();
}

/** A pane beside `beside` whose process has ended, kept by remain-on-exit. */
async function deadPane(t: StartedTmux, beside: string): Promise<string> {
  const pane = (await t.tmux("split-window", "-d", "-t", beside, "-P", "-F", "#{pane_id}", "cat"))
    .trim();
  await t.tmux("set-option", "-p", "-t", pane, "remain-on-exit", "on");
  await t.tmux("respawn-pane", "-k", "-t", pane, "true");
  await waitFor(async () => (await processOf(t, pane)).endsWith(" 1"), `${pane} dead`);
  return pane;
}

/**
 * respawn_pane of the live pane `live` (with kill) and of the dead pane `dead` (without), each
 * with a command and with tmux's default one, and a batch's: each refused, nothing respawned.
 */
async function refusedRespawns(
  t: StartedTmux,
  c: TestClient,
  windowId: string,
  live: string,
  dead: string,
  tty: string,
  how: RegExp,
) {
  const calls: Record<string, unknown>[] = [
    { paneId: live, kill: true, command: "cat" },
    { paneId: live, kill: true },
    { paneId: dead, command: "cat" },
    { paneId: dead },
  ];
  for (const args of calls) {
    const before = await processOf(t, args.paneId as string);
    for (const batched of [false, true]) {
      const what = `respawn_pane${batched ? " in a batch" : ""} ${JSON.stringify(args)}`;
      const text = batched
        ? String(
          (await c.ok<{ results: { success: boolean; error?: string }[] }>("call_tools_batch", {
            operations: [{ tool: "respawn_pane", arguments: args }],
          })).results[0].error,
        )
        : await c.fail("respawn_pane", args);
      assertRefused(text, windowId, tty, how, what);
      // One sentence, then the lift.
      const said = text.slice(0, text.indexOf(" Ask the person"));
      assert.equal(said.match(/\. /g), null, `${what}: one sentence: ${text}`);
      assert.equal(await processOf(t, args.paneId as string), before, `${what}: not respawned`);
    }
  }
}
const SHOWN = /is on the screen of client/;

/** join_pane, swap_pane, split_window and a batch's join_pane into pane `into`'s window. */
async function refusedAll(
  t: StartedTmux,
  c: TestClient,
  agent: string,
  into: { windowId: string; panes: string[] },
  tty: string,
  how: RegExp,
) {
  const before = await layout(t);
  const [first, second] = into.panes;
  const calls: [string, Record<string, unknown>][] = [
    ["join_pane", { paneId: agent, targetPaneId: second }],
    ["swap_pane", { paneId: agent, targetPaneId: second }],
    ["split_window", { paneId: second, command: "cat" }],
    ["split_window", { paneId: first }],
    ["call_tools_batch", {
      operations: [{ tool: "join_pane", arguments: { paneId: agent, targetPaneId: second } }],
    }],
  ];
  for (const [tool, args] of calls) {
    const text = tool === "call_tools_batch"
      ? String(
        (await c.ok<{ results: { success: boolean; error?: string }[] }>(tool, args)).results[0]
          .error,
      )
      : await c.fail(tool, args);
    assertRefused(text, into.windowId, tty, how, tool);
    assert.equal(await layout(t), before, `${tool}: nothing moved or made`);
  }
}

Deno.test("no pane is joined, swapped or split into a synchronized window of a person's session", async () => {
  await withTmux(async (t, c) => {
    const agent = await agentPane(t);
    const hidden = await t.twoPaneWindow();
    await t.tmux("set-option", "-w", "-t", hidden.windowId, "synchronize-panes", "on");
    const tty = await t.attach("main");
    // A window of their session they are not shown: listed in their status line.
    await refusedAll(t, c, agent, hidden, tty, LISTED);
    // Their own current window, synchronized.
    const shown = { windowId: t.ids.windowId, panes: [t.ids.paneId, ""] };
    shown.panes[1] = (await t.tmux(
      "split-window",
      "-d",
      "-t",
      t.ids.paneId,
      "-P",
      "-F",
      "#{pane_id}",
      "sh",
    )).trim();
    await t.tmux("set-option", "-w", "-t", shown.windowId, "synchronize-panes", "on");
    await refusedAll(t, c, agent, shown, tty, SHOWN);
  });
});

Deno.test("a split beside a pane not synchronized, in a window where another is, is refused by tmux's check at the split", async () => {
  await withTmux(async (t, c) => {
    const hidden = await t.twoPaneWindow();
    // One pane's own synchronize-panes on (a pane option since tmux 3.2), the window's off: a
    // window with any synchronized pane counts as synchronized (the safe side: a new pane
    // takes the window's value, off here, and would get no copies).
    await t.tmux("set-option", "-p", "-t", hidden.panes[0], "synchronize-panes", "on");
    const tty = await t.attach("main");
    const before = await layout(t);
    // Split beside the other pane: the read of that pane alone shows nothing synchronized, so
    // tmux's check at the split refuses it, naming the client from the read.
    const text = await c.fail("split_window", { paneId: hidden.panes[1] });
    assertRefused(text, hidden.windowId, tty, LISTED, "split_window");
    assert.equal(await layout(t), before);
  });
});

Deno.test("synchronize-panes turned on between the read and the move is caught by tmux at the move", async () => {
  await withTmux(async (t, c) => {
    const agent = await agentPane(t);
    const hidden = await t.twoPaneWindow();
    const tty = await t.attach("main");
    // The person turns it on the moment anyone lists clients: right after the guard's read.
    await t.tmux(
      "set-hook",
      "-g",
      "after-list-clients",
      `set-option -w -t ${hidden.windowId} synchronize-panes on`,
    );
    const before = await layout(t);
    for (
      const [tool, args] of [
        ["join_pane", { paneId: agent, targetPaneId: hidden.panes[1] }],
        ["swap_pane", { paneId: agent, targetPaneId: hidden.panes[1] }],
        ["split_window", { paneId: hidden.panes[1] }],
      ] as const
    ) {
      await t.tmux("set-option", "-w", "-t", hidden.windowId, "synchronize-panes", "off");
      const text = await c.fail(tool, args);
      assert.match(text, /synchronized/, `${tool}: ${text}`);
      assert.ok(text.includes(tty), `${tool} names the client: ${text}`);
      assert.equal(await layout(t), before, `${tool}: nothing moved or made`);
    }
  });
});

/** respawn_pane of `live` with kill and of `dead` without goes ahead: each runs a new process. */
async function respawned(t: StartedTmux, c: TestClient, live: string, dead: string) {
  for (const args of [{ paneId: live, kill: true, command: "cat" }, { paneId: dead }]) {
    const before = await processOf(t, args.paneId);
    await c.ok("respawn_pane", args);
    const now = await processOf(t, args.paneId);
    assert.notEqual(now.split(" ")[0], before.split(" ")[0], `${JSON.stringify(args)}: new pid`);
  }
}

Deno.test("no program is respawned in a synchronized window of a person's session", async () => {
  await withTmux(async (t, c) => {
    const hidden = await t.twoPaneWindow();
    const dead = await deadPane(t, hidden.panes[0]);
    await t.tmux("set-option", "-w", "-t", hidden.windowId, "synchronize-panes", "on");
    const tty = await t.attach("main");
    // A window of their session they are not shown: listed in their status line.
    await refusedRespawns(t, c, hidden.windowId, hidden.panes[1], dead, tty, LISTED);
  });
});

Deno.test("synchronize-panes turned on between the read and the respawn is caught by tmux at the respawn", async () => {
  await withTmux(async (t, c) => {
    const hidden = await t.twoPaneWindow();
    const tty = await t.attach("main");
    // The person turns it on right after the guard's read: only tmux's check at the respawn
    // sees it.
    await t.onceAfterGuardRead(`set-option -w -t ${hidden.windowId} synchronize-panes on`);
    const live = hidden.panes[1];
    const before = await processOf(t, live);
    const text = await c.fail("respawn_pane", { paneId: live, kill: true, command: "cat" });
    assert.match(text, /synchronized/, text);
    assert.ok(text.includes(tty), `names the client: ${text}`);
    assert.equal(await processOf(t, live), before, "not respawned");
  });
});

Deno.test("into a window of a person's session without synchronize-panes, the moves go ahead", async () => {
  await withTmux(async (t, c) => {
    const agent = await agentPane(t);
    const hidden = await t.twoPaneWindow();
    await t.attach("main");
    await c.ok("swap_pane", { paneId: agent, targetPaneId: hidden.panes[1] });
    await c.ok("swap_pane", { paneId: agent, targetPaneId: hidden.panes[1] });
    await c.ok("split_window", { paneId: hidden.panes[1] });
    await respawned(t, c, hidden.panes[1], await deadPane(t, hidden.panes[0]));
    await c.ok("join_pane", { paneId: agent, targetPaneId: hidden.panes[1] });
    const window = (await t.tmux("display-message", "-p", "-t", agent, "#{window_id}")).trim();
    assert.equal(window, hidden.windowId);
  });
});

Deno.test("with --allow-attended-input a pane goes into a person's synchronized window", async () => {
  await withTmux(async (t, c) => {
    const agent = await agentPane(t);
    const hidden = await t.twoPaneWindow();
    const dead = await deadPane(t, hidden.panes[0]);
    await t.tmux("set-option", "-w", "-t", hidden.windowId, "synchronize-panes", "on");
    await t.attach("main");
    await respawned(t, c, hidden.panes[1], dead);
    await c.ok("swap_pane", { paneId: agent, targetPaneId: hidden.panes[1] });
    await c.ok("swap_pane", { paneId: agent, targetPaneId: hidden.panes[1] });
    await c.ok("split_window", { paneId: hidden.panes[1] });
    await c.ok("call_tools_batch", {
      operations: [
        { tool: "join_pane", arguments: { paneId: agent, targetPaneId: hidden.panes[1] } },
      ],
    });
    const synced = (await t.tmux("display-message", "-p", "-t", agent, "#{pane_synchronized}"))
      .trim();
    assert.equal(synced, "1", "the joined pane is synchronized, as asked");
  }, { allowAttendedInput: true });
});
