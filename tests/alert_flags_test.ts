/**
 * A window's alert marks (bell, activity, silence: `!`, `#`, `~` in a status line) are kept per
 * session, but tmux clears them in every session holding the window the moment any one of those
 * sessions makes it its current window. select_window in a session nobody watches would so wipe
 * the mark from the status line of a person attached to another session that lists the window
 * (a grouped one, or one the window is linked into): refused unless --allow-attended-input,
 * checked again by tmux at the act; a window without a mark there is selected freely.
 */

import assert from "node:assert/strict";
import { current, marks, ring } from "./helpers/alert_marks.ts";
import { withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

Deno.test("selecting a window where nobody looks does not clear its bell mark in a person's status line", async () => {
  await withTmux(async (t, c) => {
    const rung = await t.shellWindow();
    const quiet = await t.shellWindow();
    // A session of main's group nobody is attached to: it holds the same windows.
    await t.tmux("new-session", "-d", "-s", "mirror", "-t", "main");
    const tty = await t.attach("main");
    await ring(t, rung.paneId, rung.windowId);
    const text = await c.fail("select_window", { windowId: rung.windowId, session: "mirror" });
    assert.match(text, /would clear the bell mark of window @\d+/, text);
    assert.ok(text.includes(tty), `names the client: ${text}`);
    assert.match(text, /--allow-attended-input/, `says what lifts it: ${text}`);
    assert.equal(await marks(t, "main", rung.windowId), "100", "the mark is still there");
    assert.equal(await current(t, "mirror"), t.ids.windowId, "mirror selected nothing");
    // A window with no mark is selected there freely.
    await c.ok("select_window", { windowId: quiet.windowId, session: "mirror" });
    assert.equal(await current(t, "mirror"), quiet.windowId);
  });
});

Deno.test("selecting a window does not clear its activity mark in a person's status line either", async () => {
  await withTmux(async (t, c) => {
    const busy = await t.shellWindow();
    await t.tmux("set-option", "-w", "-t", busy.windowId, "monitor-activity", "on");
    // Linked into a session nobody is attached to.
    await t.tmux("new-session", "-d", "-s", "agent", "sh");
    await t.tmux("link-window", "-d", "-s", busy.windowId, "-t", "agent:");
    const tty = await t.attach("main");
    await t.tmux("send-keys", "-t", busy.paneId, "echo busy", "Enter");
    await waitFor(async () => (await marks(t, "main", busy.windowId)) === "010", "the mark");
    const text = await c.fail("select_window", { windowId: busy.windowId, session: "agent" });
    assert.match(text, /would clear the activity mark of window/, text);
    assert.ok(text.includes(tty), text);
    assert.equal(await marks(t, "main", busy.windowId), "010");
  });
});

Deno.test("a marked window is selected where no person's status line lists it, or with --allow-attended-input", async () => {
  await withTmux(async (t, c) => {
    const rung = await t.shellWindow();
    await t.tmux("new-session", "-d", "-s", "mirror", "-t", "main");
    // Nobody attached.
    await ring(t, rung.paneId, rung.windowId);
    await c.ok("select_window", { windowId: rung.windowId, session: "mirror" });
    await t.tmux("select-window", "-t", `mirror:${t.ids.windowId}`);
    // A program's control client on main is no person.
    await ring(t, rung.paneId, rung.windowId);
    const program = t.controlClient("main");
    await waitFor(
      async () => (await t.tmux("list-clients", "-F", "#{client_control_mode}")).includes("1"),
      "the program's client",
    );
    await c.ok("select_window", { windowId: rung.windowId, session: "mirror" });
    await program.stdin.close();
    await program.status;
  });
  await withTmux(async (t, c) => {
    const rung = await t.shellWindow();
    await t.tmux("new-session", "-d", "-s", "mirror", "-t", "main");
    await t.attach("main");
    await ring(t, rung.paneId, rung.windowId);
    await c.ok("select_window", { windowId: rung.windowId, session: "mirror" });
    assert.equal(await current(t, "mirror"), rung.windowId);
  }, { allowAttendedInput: true });
});

Deno.test("a bell mark is checked by tmux at the select: a person who attached to the session meanwhile", async () => {
  await withTmux(async (t, c) => {
    const rung = await t.shellWindow();
    await t.tmux("new-session", "-d", "-s", "mirror", "-t", "main");
    await t.tmux("new-session", "-d", "-s", "theirs", "sh");
    const tty = await t.attach("theirs");
    await ring(t, rung.paneId, rung.windowId);
    // The person switches to main right after the marks are read (the one read that names
    // window_bell_flag), before the window is selected.
    await t.tmux(
      "set-hook",
      "-g",
      "after-display-message",
      "if-shell -F '#{m:*window_bell_flag*,#{hook_arguments}}'" +
        ` { switch-client -c ${tty} -t main ; set-hook -gu after-display-message }`,
    );
    const text = await c.fail("select_window", { windowId: rung.windowId, session: "mirror" });
    assert.match(text, /refused by tmux at the act: .* bell, activity or silence mark/, text);
    assert.match(text, /--allow-attended-input/, text);
    assert.equal(await current(t, "main"), t.ids.windowId, "the person is on main");
    assert.equal(await marks(t, "main", rung.windowId), "100");
    assert.equal(await current(t, "mirror"), t.ids.windowId);
  });
});
