/**
 * When a session's current window goes (killed, moved out, or its last pane killed or joined
 * elsewhere), tmux makes one other window of that session current (its last window, else the
 * one just before, else the highest-numbered) and so clears that window's bell, activity and silence marks in
 * every session holding it: what select_window is refused for (alert_flags_test.ts). So
 * kill_window, kill_pane, move_window and join_pane are refused too when the window tmux would
 * fall back to carries a mark a person's status line shows, unless --allow-attended-input
 * (or force, for the kills); checked again by tmux at the act. Where nothing would be cleared,
 * they go ahead.
 */

import assert from "node:assert/strict";
import { current, marks, ring } from "./helpers/alert_marks.ts";
import { type StartedTmux, withTmux } from "./helpers/mcp.ts";

/** Makes `last` the last window of `session`, then `now` its current one. */
async function pick(t: StartedTmux, session: string, last: string, now: string): Promise<void> {
  await t.tmux("select-window", "-t", `${session}:${last}`);
  await t.tmux("select-window", "-t", `${session}:${now}`);
}

Deno.test("killing the current window of a session nobody watches does not clear a person's bell mark", async () => {
  await withTmux(async (t, c) => {
    const rung = await t.shellWindow();
    const quiet = await t.shellWindow();
    const doomed = await t.shellWindow();
    // A session of main's group nobody is attached to: its current window is `doomed`, its
    // last one `rung`, where tmux falls back to once `doomed` goes.
    await t.tmux("new-session", "-d", "-s", "mirror", "-t", "main");
    await pick(t, "mirror", rung.windowId, doomed.windowId);
    const tty = await t.attach("main");
    await ring(t, rung.paneId, rung.windowId);
    for (
      const [tool, args] of [
        ["kill_window", { windowId: doomed.windowId }],
        ["kill_pane", { paneId: doomed.paneId }],
      ] as const
    ) {
      const text = await c.fail(tool, args);
      assert.match(
        text,
        new RegExp(`the bell mark of window ${rung.windowId} in the status line of session \\$`),
        text,
      );
      assert.match(text, /current window/, `says why: ${text}`);
      assert.ok(text.includes(tty), `names the client: ${text}`);
      assert.match(text, /force: true/, `says what lifts it: ${text}`);
      assert.match(text, /--allow-attended-input/, `says what lifts it: ${text}`);
      assert.equal(await marks(t, "main", rung.windowId), "100", `${tool}: the mark is there`);
      assert.equal(await current(t, "mirror"), doomed.windowId, `${tool}: nothing went`);
    }
    // With an unmarked last window there, tmux falls back to that one: nothing is cleared.
    await pick(t, "mirror", quiet.windowId, doomed.windowId);
    await c.ok("kill_window", { windowId: doomed.windowId });
    assert.equal(await current(t, "mirror"), quiet.windowId);
    assert.equal(await marks(t, "main", rung.windowId), "100", "the mark stays");
    // force: the person was asked.
    const other = await t.shellWindow();
    await pick(t, "mirror", rung.windowId, other.windowId);
    await c.ok("kill_pane", { paneId: other.paneId, force: true });
    assert.equal(await current(t, "mirror"), rung.windowId);
  });
});

Deno.test("moving out or emptying the current window of a linked session does not clear a person's mark", async () => {
  await withTmux(async (t, c) => {
    const rung = await t.shellWindow();
    // A session of its own nobody is attached to, with the rung window linked in beside its
    // own current one: the only other window there, so tmux falls back to it.
    await t.tmux("new-session", "-d", "-s", "side", "sh");
    const [own, ownPane] =
      (await t.tmux("display-message", "-p", "-t", "side:", "#{window_id} #{pane_id}"))
        .trim().split(" ");
    await t.tmux("link-window", "-d", "-s", rung.windowId, "-t", "side:");
    const tty = await t.attach("main");
    await ring(t, rung.paneId, rung.windowId);
    for (
      const [tool, args] of [
        ["kill_window", { windowId: own }],
        ["move_window", { windowId: own, session: "main" }],
        ["join_pane", { paneId: ownPane, targetPaneId: rung.paneId }],
      ] as const
    ) {
      const text = await c.fail(tool, args);
      assert.match(text, new RegExp(`bell mark of window ${rung.windowId}`), `${tool}: ${text}`);
      assert.ok(text.includes(tty), `${tool} names the client: ${text}`);
      assert.match(text, /--allow-attended-input/, text);
      assert.equal(await marks(t, "main", rung.windowId), "100", `${tool}: the mark is there`);
      assert.equal(await current(t, "side"), own, `${tool}: nothing went`);
    }
    // Within one session too: tmux moves a session's current window by linking it anew and
    // unlinking the old link, which falls back to another window.
    const text = await c.fail("move_window", { windowId: own, session: "side", index: 9 });
    assert.match(text, new RegExp(`bell mark of window ${rung.windowId}`), text);
    // Moved out of another session, where it is not the current window, it leaves side as it
    // is: nothing falls back.
    await t.tmux("new-session", "-d", "-s", "spare", "sh");
    await t.tmux("link-window", "-d", "-s", own, "-t", "spare:");
    await c.ok("move_window", { windowId: own, session: "main", fromSession: "spare" });
    assert.equal(await current(t, "side"), own);
    assert.equal(await marks(t, "main", rung.windowId), "100");
  });
  await withTmux(async (t, c) => {
    const rung = await t.shellWindow();
    await t.tmux("new-session", "-d", "-s", "side", "sh");
    const own = await current(t, "side");
    await t.tmux("link-window", "-d", "-s", rung.windowId, "-t", "side:");
    await t.attach("main");
    await ring(t, rung.paneId, rung.windowId);
    await c.ok("move_window", { windowId: own, session: "main" });
  }, { allowAttendedInput: true });
});

Deno.test("the fallback's marks are checked by tmux at the act: a person who attached meanwhile", async () => {
  await withTmux(async (t, c) => {
    const rung = await t.shellWindow();
    const doomed = await t.shellWindow();
    await t.tmux("new-session", "-d", "-s", "mirror", "-t", "main");
    await pick(t, "mirror", rung.windowId, doomed.windowId);
    await t.tmux("new-session", "-d", "-s", "theirs", "sh");
    const tty = await t.attach("theirs");
    await ring(t, rung.paneId, rung.windowId);
    for (
      const [tool, args] of [
        ["kill_window", { windowId: doomed.windowId }],
        ["kill_pane", { paneId: doomed.paneId }],
        ["join_pane", { paneId: doomed.paneId, targetPaneId: rung.paneId }],
        ["move_window", { windowId: doomed.windowId, session: "theirs", fromSession: "mirror" }],
      ] as const
    ) {
      // The person switches to main right after the marks are read, before the act.
      await t.tmux("switch-client", "-c", tty, "-t", "theirs");
      await t.tmux(
        "set-hook",
        "-g",
        "after-display-message",
        "if-shell -F '#{m:*window_bell_flag*,#{hook_arguments}}'" +
          ` { switch-client -c ${tty} -t main ; set-hook -gu after-display-message }`,
      );
      const text = await c.fail(tool, args);
      assert.match(
        text,
        /refused by tmux at the act: @\d+ is the current window of a session where tmux would then make current a window with a bell, activity or silence mark/,
        `${tool}: ${text}`,
      );
      assert.match(text, /--allow-attended-input/, text);
      assert.equal(await current(t, "main"), t.ids.windowId, `${tool}: the person is on main`);
      assert.equal(await marks(t, "main", rung.windowId), "100", `${tool}: the mark is there`);
      assert.equal(await current(t, "mirror"), doomed.windowId, `${tool}: nothing went`);
    }
  });
});

Deno.test("a pane that is not its window's last is killed or moved whatever the marks", async () => {
  await withTmux(async (t, c) => {
    const rung = await t.shellWindow();
    const busy = await t.shellWindow();
    const beside = (await t.tmux("split-window", "-d", "-t", busy.paneId, "-P", "-F", "#{pane_id}"))
      .trim();
    await t.tmux("new-session", "-d", "-s", "mirror", "-t", "main");
    await pick(t, "mirror", rung.windowId, busy.windowId);
    await t.attach("main");
    await ring(t, rung.paneId, rung.windowId);
    await c.ok("kill_pane", { paneId: beside });
    const more = (await t.tmux("split-window", "-d", "-t", busy.paneId, "-P", "-F", "#{pane_id}"))
      .trim();
    await c.ok("join_pane", { paneId: more, targetPaneId: rung.paneId });
    assert.equal(await current(t, "mirror"), busy.windowId);
    assert.equal(await marks(t, "main", rung.windowId), "100");
    // Its last pane is refused.
    const text = await c.fail("kill_pane", { paneId: busy.paneId });
    assert.match(text, new RegExp(`bell mark of window ${rung.windowId}`), text);
  });
});

/**
 * A session `side` nobody watches, holding its own window (two panes) at index 0, main's window
 * `rung` linked in at `rungAt` and, where `quietAt` is given, a window of its own there; none
 * is its last window. Returns its own window and panes.
 */
async function sideSession(
  t: StartedTmux,
  rungId: string,
  rungAt: number,
  quietAt?: number,
): Promise<{ own: string; panes: string[] }> {
  await t.tmux("new-session", "-d", "-s", "side", "sh");
  const [own, first] = (await t.tmux(
    "display-message",
    "-p",
    "-t",
    "side:",
    "#{window_id} #{pane_id}",
  )).trim().split(" ");
  const second = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", first, "sh"))
    .trim();
  await t.tmux("link-window", "-d", "-s", rungId, "-t", `side:${rungAt}`);
  if (quietAt !== undefined) await t.tmux("new-window", "-d", "-t", `side:${quietAt}`, "sh");
  return { own, panes: [first, second] };
}

Deno.test("tmux falls back to exactly one window: the last, else the one before, else the highest", async () => {
  for (
    const [rungAt, quietAt, refused] of [[1, 2, false], [2, 1, true], [1, undefined, true]] as const
  ) {
    await withTmux(async (t, c) => {
      const rung = await t.shellWindow();
      const { own } = await sideSession(t, rung.windowId, rungAt, quietAt);
      await t.attach("main");
      await ring(t, rung.paneId, rung.windowId);
      // With no last window, tmux takes the one before index 0: none, so the highest.
      if (refused) {
        const text = await c.fail("kill_window", { windowId: own });
        assert.match(text, new RegExp(`bell mark of window ${rung.windowId}`), text);
        assert.equal(await current(t, "side"), own);
      } else {
        await c.ok("kill_window", { windowId: own });
      }
      assert.equal(await marks(t, "main", rung.windowId), "100", `rung at ${rungAt}`);
    });
  }
  // Before the removed window's index: the one just before it, marked or not.
  for (const [rungAt, refused] of [[1, true], [3, false]] as const) {
    await withTmux(async (t, c) => {
      const rung = await t.shellWindow();
      await t.tmux("new-session", "-d", "-s", "side", "sh");
      await t.tmux("link-window", "-d", "-s", rung.windowId, "-t", `side:${rungAt}`);
      await t.tmux("new-window", "-t", "side:2", "sh");
      const own = await current(t, "side");
      await t.tmux("new-window", "-d", "-t", "side:4", "sh");
      // new-window without -d made index 0 the last window: drop that.
      await t.tmux("kill-window", "-t", "side:0");
      await t.attach("main");
      await ring(t, rung.paneId, rung.windowId);
      if (refused) {
        const text = await c.fail("kill_window", { windowId: own });
        assert.match(text, new RegExp(`bell mark of window ${rung.windowId}`), text);
      } else {
        await c.ok("kill_window", { windowId: own });
      }
      assert.equal(await marks(t, "main", rung.windowId), "100", `rung at ${rungAt}`);
    });
  }
});

Deno.test("tmux checks at the act which one window it falls back to, with no last window too", async () => {
  for (const [quietAt, refused] of [[undefined, true], [2, false]] as const) {
    await withTmux(async (t, c) => {
      const rung = await t.shellWindow();
      const { own, panes: [first, second] } = await sideSession(t, rung.windowId, 1, quietAt);
      await t.attach("main");
      await ring(t, rung.paneId, rung.windowId);
      // The other pane ends after the server read the panes, before the act: killing `first`
      // then takes its window, which the read did not foresee.
      await t.tmux(
        "set-hook",
        "-g",
        "after-list-panes",
        `set -gF @n '#{e|+:#{@n},1}' ; if-shell -F '#{==:#{@n},2}' { kill-pane -t ${second} }`,
      );
      if (refused) {
        const text = await c.fail("kill_pane", { paneId: first });
        assert.match(text, /refused by tmux at the act/, text);
        assert.equal(await current(t, "side"), own);
      } else {
        await c.ok("kill_pane", { paneId: first });
        assert.notEqual(await current(t, "side"), own, "the window went with its pane");
      }
      assert.equal(await marks(t, "main", rung.windowId), "100", `quiet at ${quietAt}`);
    });
  }
});
