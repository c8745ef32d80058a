/**
 * synchronize-panes on a window a person is not looking at, but could switch to: every window of
 * a session a person is attached to is one key away (its entry in their status line), and once
 * there, what they type into the pane they see would reach its other panes too. Turning it on
 * there (set_synchronize_panes, set_option at window or pane scope) is refused unless
 * --allow-attended-input, checked again by tmux at the act; where no person is attached it is
 * free. Turning it off sends their keys to fewer panes, never to one they do not see: not refused
 * for a window they are not shown.
 */

import assert from "node:assert/strict";
import { type StartedTmux, type TestClient, withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

/** Each pane's synchronize-panes as tmux applies it (1 or 0). */
async function synchronized(t: StartedTmux, panes: readonly string[]): Promise<string[]> {
  return await Promise.all(
    panes.map(async (p) =>
      (await t.tmux("display-message", "-p", "-t", p, "#{synchronize-panes}")).trim()
    ),
  );
}

/** The refusal of turning it on, naming the client and the lift. */
async function refused(c: TestClient, tool: string, args: Record<string, unknown>, tty: string) {
  const text = await c.fail(tool, args);
  assert.match(text, /is listed in the status line of session \$\d+/, `${tool}: ${text}`);
  assert.ok(text.includes(tty), `${tool} names the client: ${text}`);
  assert.match(text, /--allow-attended-input/, `${tool} says what lifts it: ${text}`);
}

Deno.test("synchronize-panes is not turned on for a background window of a person's session", async () => {
  await withTmux(async (t, c) => {
    const { windowId, panes } = await t.twoPaneWindow();
    const tty = await t.attach("main");
    await refused(c, "set_synchronize_panes", { windowId, enabled: true }, tty);
    await refused(c, "set_option", {
      name: "synchronize-panes",
      value: "on",
      scope: "window",
      target: windowId,
    }, tty);
    await refused(c, "set_option", {
      name: "synchronize-panes",
      value: "on",
      scope: "pane",
      target: panes[1],
    }, tty);
    assert.deepEqual(await synchronized(t, panes), ["0", "0"], "nothing was turned on");
    // Turning it off sends their keys to the pane they are in alone: no refusal.
    await t.tmux("set-option", "-w", "-t", windowId, "synchronize-panes", "on");
    const off = await c.ok<{ synchronized: boolean }>("set_synchronize_panes", {
      windowId,
      enabled: false,
    });
    assert.equal(off.synchronized, false);
    assert.deepEqual(await synchronized(t, panes), ["0", "0"]);
  });
});

Deno.test("synchronize-panes is not turned on for a window of a session grouped with a person's", async () => {
  await withTmux(async (t, c) => {
    const { windowId, panes } = await t.twoPaneWindow();
    // The person is attached to a session of main's group: it lists main's windows too.
    await t.tmux("new-session", "-d", "-s", "twin", "-t", "main");
    const tty = await t.attach("twin");
    await refused(c, "set_synchronize_panes", { windowId, enabled: true }, tty);
    assert.deepEqual(await synchronized(t, panes), ["0", "0"]);
  });
});

Deno.test("synchronize-panes is turned on where no person is attached: nobody, or a program's client", async () => {
  await withTmux(async (t, c) => {
    const { windowId, panes } = await t.twoPaneWindow();
    const on = await c.ok<{ synchronized: boolean }>("set_synchronize_panes", {
      windowId,
      enabled: true,
    });
    assert.equal(on.synchronized, true);
    assert.deepEqual(await synchronized(t, panes), ["1", "1"]);
    await t.tmux("set-option", "-w", "-t", windowId, "synchronize-panes", "off");
    // A program's control client attached to main is no person.
    const program = t.controlClient("main");
    await waitFor(
      async () => (await t.tmux("list-clients", "-F", "#{client_control_mode}")).includes("1"),
      "the program's client",
    );
    await c.ok("set_synchronize_panes", { windowId, enabled: true });
    await c.ok("set_option", {
      name: "synchronize-panes",
      value: "on",
      scope: "pane",
      target: panes[1],
    });
    assert.deepEqual(await synchronized(t, panes), ["1", "1"]);
    await program.stdin.close();
    await program.status;
    // A person attached to a session that does not hold the window.
    const other = await t.twoPaneWindow("main");
    await t.tmux("new-session", "-d", "-s", "theirs", "sh");
    await t.attach("theirs");
    await c.ok("set_synchronize_panes", { windowId: other.windowId, enabled: true });
    assert.deepEqual(await synchronized(t, other.panes), ["1", "1"]);
  });
});

Deno.test("synchronize-panes on a person's background window goes ahead with --allow-attended-input", async () => {
  await withTmux(async (t, c) => {
    const { windowId, panes } = await t.twoPaneWindow();
    await t.attach("main");
    await c.ok("set_synchronize_panes", { windowId, enabled: true });
    assert.deepEqual(await synchronized(t, panes), ["1", "1"]);
    await c.ok("set_option", {
      name: "synchronize-panes",
      value: "off",
      scope: "window",
      target: windowId,
    });
    assert.deepEqual(await synchronized(t, panes), ["0", "0"]);
  }, { allowAttendedInput: true });
});

Deno.test("synchronize-panes is checked by tmux at the act: a person who attached to the session meanwhile", async () => {
  await withTmux(async (t, c) => {
    const { windowId, panes } = await t.twoPaneWindow();
    await t.tmux("new-session", "-d", "-s", "theirs", "sh");
    const tty = await t.attach("theirs");
    // The person switches to main the moment anyone lists clients: right after the guard's
    // read, before the option is set.
    await t.tmux("set-hook", "-g", "after-list-clients", `switch-client -c ${tty} -t main`);
    await refused(c, "set_synchronize_panes", { windowId, enabled: true }, tty);
    assert.deepEqual(await synchronized(t, panes), ["0", "0"]);
  });
});

Deno.test("synchronize-panes for a pane is checked in the window it is in at the act", async () => {
  await withTmux(async (t, c) => {
    // Two panes of a session nobody is attached to...
    const bg = (await t.tmux("new-session", "-d", "-s", "bg", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    const moving = (await t.tmux("split-window", "-d", "-t", bg, "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    const { windowId, panes } = await t.twoPaneWindow();
    await t.attach("main");
    // ...one of which joins a background window of the person's session right after the guard's
    // read.
    await t.tmux(
      "set-hook",
      "-g",
      "after-list-clients",
      `join-pane -d -s ${moving} -t ${windowId}`,
    );
    const text = await c.fail("set_option", {
      name: "synchronize-panes",
      value: "on",
      scope: "pane",
      target: moving,
    });
    assert.match(text, /--allow-attended-input/, text);
    await t.tmux("set-hook", "-gu", "after-list-clients");
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", moving, "#{window_id}")).trim(),
      windowId,
      "the pane moved",
    );
    assert.deepEqual(await synchronized(t, [...panes, moving]), ["0", "0", "0"]);
  });
});
