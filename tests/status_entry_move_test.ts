/**
 * A window's own status-line entry options (`window-status-*`, `automatic-rename-format`,
 * `monitor-*`: src/tmux/option_reach.ts) travel with it: set where nobody is attached, then
 * moved into a session a person is attached to, they would draw into that person's status line
 * what set_option refuses to set there. move_window refuses such a move, checked again by tmux
 * at the move; a window drawn as every other moves freely, and anywhere nobody is attached.
 */

import assert from "node:assert/strict";
import { guardCall, seedDecision } from "../src/hooks/testing.ts";
import { type StartedTmux, type TestClient, withTmux } from "./helpers/mcp.ts";

/** A session `name` nobody is attached to, with two windows; returns the first one's id. */
async function agentWindow(t: StartedTmux, name = "agent"): Promise<string> {
  const id = (await t.tmux("new-session", "-d", "-s", name, "-P", "-F", "#{window_id}", "sh"))
    .trim();
  // A second window, so that the session outlives the first one's move.
  await t.tmux("new-window", "-d", "-t", `${name}:`, "sh");
  return id;
}

/** The name of the session window `id` is in (one placement). */
async function sessionOf(t: StartedTmux, id: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", id, "#{session_name}")).trim();
}

/** What session `name`'s status line lists: its windows' ids. */
async function listed(t: StartedTmux, name: string): Promise<string[]> {
  return (await t.tmux("list-windows", "-t", name, "-F", "#{window_id}")).trim().split("\n");
}

async function setOwn(c: TestClient, target: string, name: string, value: string): Promise<void> {
  await c.ok("set_option", { name, value, scope: "window", target });
}

Deno.test("a window given its own status-line entry where nobody looks is not moved into a person's session", async () => {
  await withTmux(async (t, c) => {
    const tty = await t.attach("main");
    const before = await listed(t, "main");
    const w = await agentWindow(t);
    // Step one is allowed: nobody is attached to `agent`.
    await setOwn(c, w, "window-status-format", "#[bg=red] SYSTEM: retype your password ");
    await setOwn(c, w, "window-status-style", "bg=red,blink");
    // Step two would carry both into the person's status line.
    const text = await c.fail("move_window", { windowId: w, session: "main" });
    assert.match(text, /would change what a person sees/, text);
    assert.match(text, /window-status-format, window-status-style/, "names the options");
    assert.ok(text.includes(tty), `names the client: ${text}`);
    assert.match(text, /unset: true/, "says how to proceed");
    assert.match(text, /--allow-attended-input/, "says what lifts it");
    assert.equal(await sessionOf(t, w), "agent", "nothing moved");
    assert.deepEqual(await listed(t, "main"), before);
    // The same by id, and into a session grouped with the person's (it lists the same windows).
    assert.match(await c.fail("move_window", { windowId: w, session: "$0" }), /window-status/);
    await t.tmux("new-session", "-d", "-s", "twin", "-t", "main");
    assert.match(await c.fail("move_window", { windowId: w, session: "twin" }), /window-status/);
    assert.equal(await sessionOf(t, w), "agent");
    // Unset, the window is drawn as every other, and moves.
    for (const name of ["window-status-format", "window-status-style"]) {
      await c.ok("set_option", { name, unset: true, scope: "window", target: w });
    }
    await c.ok("move_window", { windowId: w, session: "main" });
    assert.ok((await listed(t, "main")).includes(w));
  });
});

Deno.test("the other options of a window's entry are refused a move into a person's session too", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    for (
      const [name, value] of [
        ["window-status-current-format", "#(touch /tmp/x)"],
        ["window-status-separator", " | "],
        ["automatic-rename-format", "admin-shell"],
        // Alerts: a flag and a style in their status line, and their terminal's bell.
        ["monitor-activity", "on"],
        ["monitor-silence", "5"],
      ]
    ) {
      const w = await agentWindow(t, `agent-${name}`);
      await setOwn(c, w, name, value);
      const text = await c.fail("move_window", { windowId: w, session: "main" });
      assert.ok(text.includes(name), `${name}: ${text}`);
      assert.equal(await sessionOf(t, w), `agent-${name}`);
    }
  });
});

Deno.test("one batch cannot style a window where nobody looks and then move it into a person's session", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    const before = await listed(t, "main");
    const w = await agentWindow(t);
    const out = await c.ok<{
      results: { success: boolean; error: string | null }[];
      stoppedAt: number | null;
    }>("call_tools_batch", {
      operations: [
        {
          tool: "set_option",
          arguments: {
            name: "window-status-format",
            value: "#[fill=red] session locked ",
            scope: "window",
            target: w,
          },
        },
        {
          tool: "set_option",
          arguments: {
            name: "automatic-rename-format",
            value: "admin-shell",
            scope: "window",
            target: w,
          },
        },
        { tool: "move_window", arguments: { windowId: w, session: "main" } },
      ],
    });
    assert.equal(out.stoppedAt, 2);
    assert.deepEqual(out.results.map((r) => r.success), [true, true, false]);
    assert.match(out.results[2].error ?? "", /window-status-format, automatic-rename-format/);
    assert.equal(await sessionOf(t, w), "agent");
    assert.deepEqual(await listed(t, "main"), before);
  });
});

Deno.test("a window drawn as every other moves into a person's session", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    // The person's own formats hold what a format's argument must escape: tmux compares them
    // with the window's at the move, as text.
    await t.tmux(
      "set-option",
      "-gw",
      "window-status-format",
      "#[fg=red]#I:#W#{?window_flags,#{window_flags}#,x, }}, {a,b} #{} #(true) \\ ' \" ; ##",
    );
    await t.tmux("set-option", "-gw", "window-status-separator", ",");
    await t.tmux("set-option", "-gw", "automatic-rename-format", "#{pane_current_command}}\n\t#");
    await t.tmux("set-option", "-gw", "monitor-activity", "on");
    const w = await agentWindow(t);
    // Made with a name, tmux turns the window's own automatic-rename off: a name is text, which
    // rename_window may give a window of a person's session anyway.
    await c.ok("rename_window", { windowId: w, name: "build" });
    assert.match(await t.tmux("show-options", "-w", "-t", w), /automatic-rename off/);
    // Its own value, the same as the global one, draws nothing new.
    const global = (await t.tmux("show-options", "-gwv", "window-status-format")).slice(0, -1);
    await setOwn(c, w, "window-status-format", global);
    await c.ok("move_window", { windowId: w, session: "main" });
    assert.equal(await sessionOf(t, w), "main");
  });
});

Deno.test("a window with its own status-line entry moves freely where nobody is attached", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    const w = await agentWindow(t);
    await t.tmux("new-session", "-d", "-s", "spare", "sh");
    await setOwn(c, w, "window-status-format", " mine ");
    await setOwn(c, w, "monitor-activity", "on");
    await c.ok("move_window", { windowId: w, session: "spare" });
    assert.equal(await sessionOf(t, w), "spare");
    assert.equal(await t.tmux("show-options", "-wv", "-t", w, "window-status-format"), " mine \n");
  });
});

Deno.test("a window's entry given its own format right after the read is refused by tmux at the move", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    const w = await agentWindow(t);
    // Right after move_window has read the window's entry (that read names every option of it),
    // something sets the window's own format: tmux finds it at the move.
    await t.tmux(
      "set-hook",
      "-g",
      "after-display-message",
      "if-shell -F '#{m:*window-status-separator*,#{hook_arguments}}' " +
        `'set-option -w -t ${w} window-status-format EVIL' ''`,
    );
    const text = await c.fail("move_window", { windowId: w, session: "main" });
    assert.match(text, /at the move/, text);
    assert.match(text, /unset: true/);
    assert.equal(await sessionOf(t, w), "agent");
    assert.equal(await t.tmux("show-options", "-wv", "-t", w, "window-status-format"), "EVIL\n");
  });
});

Deno.test("a person who attaches to the session right after the read stops the move of a styled window", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("new-session", "-d", "-s", "spare", "sh");
    const tty = await t.attach("main");
    const w = await agentWindow(t);
    await setOwn(c, w, "window-status-format", " mine ");
    // Right after the read, the person switches to `spare`, where the window was going.
    await t.tmux(
      "set-hook",
      "-g",
      "after-display-message",
      "if-shell -F '#{m:*window-status-separator*,#{hook_arguments}}' " +
        `'switch-client -c ${tty} -t spare' ''`,
    );
    const text = await c.fail("move_window", { windowId: w, session: "spare" });
    assert.match(text, /at the move/, text);
    assert.equal(await sessionOf(t, w), "agent");
  });
});

Deno.test("move_window of a styled window into a person's session goes ahead with --allow-attended-input", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    const w = await agentWindow(t);
    await setOwn(c, w, "window-status-format", " mine ");
    await c.ok("move_window", { windowId: w, session: "main" });
    assert.equal(await sessionOf(t, w), "main");
  }, { allowAttendedInput: true });
});

Deno.test("set_option of a window's alerts (monitor-*) in a person's session is refused, as its entry's format is", async () => {
  await withTmux(async (t, c) => {
    const background = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id}"))
      .trim();
    const tty = await t.attach("main");
    const w = await agentWindow(t);
    for (
      const [name, value] of [
        ["monitor-activity", "on"],
        ["monitor-bell", "off"],
        ["monitor-silence", "3"],
      ]
    ) {
      const text = await c.fail("set_option", { name, value, scope: "window", target: background });
      assert.match(text, /is listed in the status line of session \$0/, `${name}: ${text}`);
      assert.ok(text.includes(tty), text);
      // Where nobody is attached it is the window's own business.
      await setOwn(c, w, name, value);
    }
    assert.equal(await t.tmux("show-options", "-w", "-t", background), "");
  });
});

Deno.test("a window with synchronize-panes of its own, window-wide or in one pane, is not moved into a person's session", async () => {
  await withTmux(async (t, c) => {
    const tty = await t.attach("main");
    // Window-wide, set where nobody is attached.
    const whole = await agentWindow(t, "agent-whole");
    await t.tmux("split-window", "-d", "-t", whole, "sh");
    await c.ok("set_synchronize_panes", { windowId: whole, enabled: true });
    const text = await c.fail("move_window", { windowId: whole, session: "main" });
    assert.match(text, /its own synchronize-panes/, text);
    assert.match(text, /send what they type in it to every pane of it/, text);
    assert.ok(text.includes(tty), `names the client: ${text}`);
    assert.equal(await sessionOf(t, whole), "agent-whole", "nothing moved");
    // The hook asks the same.
    const asked = await guardCall({}, "move_window", {
      windowId: whole,
      session: "main",
      socket_name: t.socket,
    });
    const reason = seedDecision(asked.stdout).permissionDecisionReason;
    assert.match(reason, /synchronize-panes would send what they type in it/, reason);
    // In one pane only, not the active one: a pane's own value is the one its keys follow.
    const one = await agentWindow(t, "agent-pane");
    const other = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", one, "sh"))
      .trim();
    await c.ok("set_option", {
      name: "synchronize-panes",
      value: "on",
      scope: "pane",
      target: other,
    });
    const paneText = await c.fail("move_window", { windowId: one, session: "main" });
    assert.match(paneText, /synchronize-panes/, paneText);
    assert.equal(await sessionOf(t, one), "agent-pane", "nothing moved");
    // Turned off again, the window moves.
    await c.ok("set_option", {
      name: "synchronize-panes",
      unset: true,
      scope: "pane",
      target: other,
    });
    await c.ok("move_window", { windowId: one, session: "main" });
    // A person's own global synchronize-panes: every window follows it, a moved one too.
    await t.tmux("set-option", "-g", "synchronize-panes", "on");
    const plain = await agentWindow(t, "agent-plain");
    await c.ok("move_window", { windowId: plain, session: "main" });
  });
});
