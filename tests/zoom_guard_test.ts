/**
 * A person's zoom: every tool whose tmux command unzooms a window (tmux 3.3a: a split, a
 * layout, a pane's resize, a pane moved in or out or swapped, a hidden pane selected or
 * zoomed, a hidden pane killed) is refused by default where a person's client shows that
 * window zoomed, and the zoom stays; where the server was started with
 * `--allow-attended-input` the hook guard is the one that asks, and what it asks about does
 * happen.
 */

import assert from "node:assert/strict";
import { runHook } from "../src/hooks/main.ts";
import { agentEnv, memoryIo, seedDecision, toolCall } from "../src/hooks/testing.ts";
import { connect } from "./helpers/mcp.ts";
import { TestTmux } from "./helpers/tmux.ts";

/** The person's window `edit`: three shells, the first zoomed; and a window nobody watches. */
async function zoomedWindow(t: TestTmux) {
  const person = ["new-session", "-d", "-s", "person", "-n", "edit", "-P", "-F"];
  const [window, shown] = (await t.tmux(...person, "#{window_id} #{pane_id}", "sh")).trim()
    .split(" ");
  const split = async (target: string) =>
    (await t.tmux("split-window", "-d", "-t", target, "-P", "-F", "#{pane_id}", "sh")).trim();
  const hidden1 = await split(shown);
  const hidden2 = await split(shown);
  await t.tmux("resize-pane", "-Z", "-t", shown);
  const bg = (await t.tmux("new-session", "-d", "-s", "bg", "-P", "-F", "#{pane_id}", "sh")).trim();
  const tty = await t.attach("person");
  const zoom = async () =>
    (await t.tmux("display-message", "-p", "-t", window, "#{window_zoomed_flag}")).trim();
  assert.equal(await zoom(), "1");
  return { window, shown, hidden1, hidden2, bg, tty, zoom };
}

Deno.test("every tool that unzooms a window is refused where a person shows it zoomed; the zoom stays", async () => {
  const t = await TestTmux.start("agent");
  const c = await connect({ socketName: t.socket });
  try {
    const { window, shown, hidden1, hidden2, bg, tty, zoom } = await zoomedWindow(t);
    const calls: [string, Record<string, unknown>][] = [
      ["split_window", { paneId: hidden1 }],
      ["split_window", { paneId: shown }],
      ["join_pane", { paneId: bg, targetPaneId: hidden1 }],
      ["join_pane", { paneId: hidden1, targetPaneId: bg }],
      ["swap_pane", { paneId: hidden1, targetPaneId: hidden2 }],
      ["swap_pane", { paneId: hidden1, targetPaneId: bg }],
      ["break_pane", { paneId: hidden2 }],
      ["select_layout", { windowId: window, layout: "tiled" }],
      ["resize_pane", { paneId: hidden1, height: 5 }],
      ["resize_pane", { paneId: hidden1, zoom: true }],
      ["resize_pane", { paneId: shown, zoom: false }],
      ["resize_window", { windowId: window, zoom: false }],
      ["select_pane", { paneId: hidden2 }],
      ["kill_pane", { paneId: hidden2 }],
    ];
    for (const [tool, args] of calls) {
      const text = await c.fail(tool, args);
      assert.match(text, /would (change what a person sees|unzoom)/, `${tool}: ${text}`);
      assert.ok(text.includes(tty), `${tool}: ${text}`);
      assert.equal(await zoom(), "1", `${tool} ${JSON.stringify(args)} kept the zoom`);
    }
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("the hook guard asks before split_window (no select) unzooms a person's window, which a server with --allow-attended-input does", async () => {
  const t = await TestTmux.start("agent");
  // With --allow-attended-input the server leaves asking the person to the hook.
  const c = await connect({ socketName: t.socket, allowAttendedInput: true });
  try {
    const { window, shown, hidden1, tty, zoom } = await zoomedWindow(t);
    const args = { paneId: hidden1, command: "cat > /dev/null" };
    const { io, out } = memoryIo(
      toolCall("mcp__tmux__split_window", args),
      agentEnv(await t.facts(), t.ids.paneId),
    );
    assert.equal(await runHook(["guard"], io), 0, out.stderr.join("\n"));
    assert.equal(
      seedDecision(out.stdout).permissionDecisionReason,
      `split_window would split pane ${hidden1}, which unzooms window ${window}, which client ` +
        `${tty} shows zoomed on pane ${shown} (person:0.0 "edit").`,
    );
    // What it asks about: the person's zoom goes, and the hidden panes are on their screen.
    await c.ok("split_window", args);
    assert.equal(await zoom(), "0");
  } finally {
    await c.close();
    await t.kill();
  }
});
