/**
 * A person's slow hook between the commands of one act, for the acts act_hooks_test.ts leaves:
 * set_synchronize_panes (the window's value, then each pane's own), clear_pane with its history
 * (the screen, then the history), a kill (its listing, then the kill) and resize_pane's zoom on
 * another pane of a zoomed window (the unzoom, then the zoom). tmux runs an `after-<command>`
 * hook right after each command of a line, and one that waits on a `run-shell` holds the rest
 * of tmux-mcp's line while the person's own client carries on; the rest of the act is checked
 * again by tmux before each command that could reach them, and what went before is undone in
 * the same step where it can be, or the reply says exactly what went.
 *
 * join_pane's commands (unlink-window, then join-pane) have no after-hook in tmux 3.3a, nor have
 * the unlinks before a kill: nothing of a person's can run between them, which the last test
 * pins.
 */

import assert from "node:assert/strict";
import { holdAfter, textOf, withHeldAct } from "./helpers/held_acts.ts";
import { HookGate, TestTmux, waitFor } from "./helpers/tmux.ts";

/** The person's client `tty` comes to show `windowId` while the act is held. */
async function personSwitches(
  t: TestTmux,
  gate: HookGate,
  tty: string,
  windowId: string,
): Promise<void> {
  await waitFor(() => gate.began(), "the act to be held by the hook");
  await t.tmux("switch-client", "-c", tty, "-t", windowId);
  const shown = (await t.tmux("list-clients", "-F", "#{client_tty} #{window_id}")).trim();
  assert.match(shown, new RegExp(`${windowId}$`, "m"), "the person shows the act's window");
  await gate.open();
}

Deno.test("set_synchronize_panes held after it sets the window's value: the panes' own values are not unset under a person who came, and the window's is given back", async () => {
  // The person is attached elsewhere: a window of their own session would be refused at once.
  await withHeldAct(async (t, c, gate, { windowId, paneId, tty }) => {
    const sibling =
      (await t.tmux("split-window", "-d", "-t", paneId, "-P", "-F", "#{pane_id}", "sh")).trim();
    for (const p of [paneId, sibling]) {
      await t.tmux("set-option", "-p", "-t", p, "synchronize-panes", "off");
    }
    await holdAfter(t, gate, "after-set-option", "*-w*synchronize-panes on*");
    const call = c.call("set_synchronize_panes", { windowId, enabled: true });
    await personSwitches(t, gate, tty, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /would change what a person sees|not made/, text);
    await t.tmux("set-hook", "-gu", "after-set-option");
    assert.equal(
      (await t.tmux("show-options", "-wqv", "-t", windowId, "synchronize-panes")).trim(),
      "",
      "the window's own value is given back (none)",
    );
    for (const p of [paneId, sibling]) {
      assert.equal(
        (await t.tmux("show-options", "-pqv", "-t", p, "synchronize-panes")).trim(),
        "off",
        `pane ${p} keeps its own value`,
      );
      assert.equal(
        (await t.tmux("display-message", "-p", "-t", p, "#{synchronize-panes}")).trim(),
        "0",
        `pane ${p} copies no keys`,
      );
    }
  }, "other");
});

Deno.test("clear_pane (screen and history) held after the screen's clear: the history of the pane a person came to watch is not cleared, and the reply says what went", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId, tty }) => {
    await t.tmux("send-keys", "-t", paneId, "seq 1 60; echo SEQ-DONE", "Enter");
    const shown = async () => await t.tmux("capture-pane", "-p", "-t", paneId);
    await waitFor(async () => /^SEQ-DONE$/m.test(await shown()), "the output");
    const history = async () =>
      Number((await t.tmux("display-message", "-p", "-t", paneId, "#{history_size}")).trim());
    assert.ok(await history() > 0, "the pane has a history");
    await holdAfter(t, gate, "after-send-keys", "*-R*");
    const call = c.call("clear_pane", { paneId, screen: true, history: true });
    await personSwitches(t, gate, tty, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /screen of .* was cleared/, text);
    assert.match(text, /history was not cleared/, text);
    await t.tmux("set-hook", "-gu", "after-send-keys");
    assert.ok(await history() > 0, "the history is still there");
  });
});

Deno.test("kill_pane held after its listing: the pane a person came to watch is not killed", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId, tty }) => {
    const sibling =
      (await t.tmux("split-window", "-d", "-t", paneId, "-P", "-F", "#{pane_id}", "sh")).trim();
    // Only the kill's own listing (`-f "#{==:#{pane_id},%N}"`; the reads list every pane).
    await holdAfter(t, gate, "after-list-panes", `*==*pane_id*${sibling}*`);
    const call = c.call("kill_pane", { paneId: sibling });
    await personSwitches(t, gate, tty, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /nothing was killed|not done/, text);
    await t.tmux("set-hook", "-gu", "after-list-panes");
    const panes = (await t.tmux("list-panes", "-t", windowId, "-F", "#{pane_id}")).trim();
    assert.match(panes, new RegExp(`^${sibling}$`, "m"), "the pane lives");
  });
});

Deno.test("resize_pane zoom on a hidden pane, held between the unzoom and the zoom: the window a person came to is zoomed back as it was", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId, tty }) => {
    const hidden =
      (await t.tmux("split-window", "-d", "-t", paneId, "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.tmux("resize-pane", "-Z", "-t", paneId);
    await holdAfter(t, gate, "after-resize-pane", `*-Z*${hidden}*`);
    const call = c.call("resize_pane", { paneId: hidden, zoom: true });
    await personSwitches(t, gate, tty, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    await t.tmux("set-hook", "-gu", "after-resize-pane");
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", windowId, "#{window_zoomed_flag} #{pane_id}"))
        .trim(),
      `1 ${paneId}`,
      "zoomed on the pane it was zoomed on",
    );
  });
});

Deno.test("tmux 3.3a runs no after-hook on unlink-window: nothing of a person's runs between the unlinks and the join or kill after them", async () => {
  const t = await TestTmux.start("main");
  try {
    // join_pane's and the kills' unlinks are checked by tmux before the first of them only
    // (the step's check, or the kill's check again after its listing); were such a hook
    // added, each would need tmux's check again, and the links as they are then.
    await assert.rejects(
      t.tmux("set-hook", "-g", "after-unlink-window", "display-message x"),
      /invalid option/,
    );
    // As a hook tmux has is set.
    await t.tmux("set-hook", "-g", "after-list-panes", "display-message x");
  } finally {
    await t.kill();
  }
});

Deno.test("send_keys stopped part-way in a synchronized window names every pane the text reached", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId }) => {
    const sibling =
      (await t.tmux("split-window", "-d", "-t", paneId, "-P", "-F", "#{pane_id}", "sh"))
        .trim();
    await t.prompt(sibling);
    await t.tmux("set-option", "-w", "-t", windowId, "synchronize-panes", "on");
    await holdAfter(t, gate, "after-send-keys", "*SYNC-TEXT*");
    const call = c.call("send_keys", { paneId, text: "echo SYNC-TEXT", keys: ["Enter"] });
    await waitFor(() => gate.began(), "the step held after the text");
    // The target's input turned off meanwhile: tmux's check before the keys fails.
    await t.tmux("select-pane", "-d", "-t", paneId);
    await gate.open();
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.ok(text.includes(paneId) && text.includes(sibling), text);
    assert.match(text, /synchronize-panes/, text);
    // The sibling does hold the text: the reply said so.
    assert.match(await t.tmux("capture-pane", "-p", "-t", sibling), /echo SYNC-TEXT/);
  });
});
