/**
 * Option and hook names tmux takes abbreviated (tmux 3.3a accepts any unambiguous start of a
 * built-in option's name, so `command-alia` is command-alias): refused, so that every check by
 * name sees the option tmux would set. Also an option's value beyond ASCII where a person's
 * 8-bit terminal would get it in its title, and the cursor store's word on an expired cursor.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { attachRecorded, waitFor } from "./helpers/tmux.ts";
import {
  CursorError,
  CursorStore,
  HASH_CHARS,
  type SinceCursor,
} from "../src/tmux/since_cursor.ts";

Deno.test("set_option refuses command-alias under an abbreviated name tmux takes for it", async () => {
  await withTmux(async (t, c) => {
    const before = await t.tmux("show-options", "-s", "command-alias");
    // Nobody is attached: the server option's view guard lets it through; only the
    // command-alias refusal stands between a model and rewriting every client's commands.
    const text = await c.call("set_option", {
      name: "command-alia[90]",
      value: "has-session=display-message -p ALIASED",
      scope: "server",
    });
    const after = await t.tmux("show-options", "-s", "command-alias");
    assert.equal(after, before, "an alias was added under an abbreviated name:\n" + after);
    assert.equal(text.isError, true);
    const said = text.content?.[0]?.type === "text" ? text.content[0].text : "";
    assert.match(said, /full option name: command-alias\b/);
    // The full name is refused for what it is.
    assert.match(
      await c.fail("set_option", {
        name: "command-alias[90]",
        value: "has-session=display-message -p ALIASED",
        scope: "server",
      }),
      /command-alias is not set/,
    );
  });
});

Deno.test("a status line entry option given abbreviated is refused, not let past the guard", async () => {
  await withTmux(async (t, c) => {
    const hidden =
      (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id}", "sh"))
        .trim();
    await t.attach("main");
    // The full name is refused (view_guard_test): main's status line lists the hidden window.
    assert.match(
      await c.fail("set_option", {
        name: "window-status-format",
        value: " AGENT WAS HERE ",
        scope: "window",
        target: hidden,
      }),
      /listed in the status/,
    );
    // The same option, abbreviated (tmux resolves the prefix to window-status-format).
    const r = await c.call("set_option", {
      name: "window-status-form",
      value: " AGENT WAS HERE ",
      scope: "window",
      target: hidden,
    });
    const shown = await t.tmux("show-options", "-w", "-t", hidden);
    assert.equal(shown, "", "the person's status line entry was changed:\n" + shown);
    assert.equal(r.isError, true);
  });
});

Deno.test("default-size given abbreviated is refused, not let past the window area", async () => {
  await withTmux(async (t, c) => {
    const r = await c.call("set_option", {
      name: "default-si",
      value: "10000x10000",
      scope: "session",
      global: true,
    });
    const value = await t.tmux("show-options", "-gv", "default-size");
    assert.equal(value, "80x24\n", `default-size is now ${value}`);
    assert.equal(r.isError, true);
    // Full, the name is held to the window area.
    assert.match(
      await c.fail("set_option", {
        name: "default-size",
        value: "10000x10000",
        scope: "session",
        global: true,
      }),
      /default-size of 10000x10000/,
    );
  });
});

Deno.test("show_option refuses an abbreviated name, naming the option; the full name reads", async () => {
  await withTmux(async (_t, c) => {
    // Asked twice: the second answer comes from what was learnt of the name the first time.
    for (let i = 0; i < 2; i++) {
      assert.match(
        await c.fail("show_option", { name: "default-si", scope: "session", global: true }),
        /"default-si" for the option default-size.*\n?.*full option name: default-size/s,
      );
    }
    const full = await c.ok<{ value: string }>("show_option", {
      name: "default-size",
      scope: "session",
      global: true,
    });
    assert.equal(full.value, "80x24");
    // A start of several names, and no name at all, are told apart.
    assert.match(
      await c.fail("show_option", { name: "status-lef", scope: "session", global: true }),
      /starts the names of several/,
    );
    assert.match(
      await c.fail("show_option", { name: "no-such-opt", scope: "session", global: true }),
      /tmux has no option "no-such-opt"\./,
    );
  });
});

Deno.test("set_hook refuses an abbreviated hook name tmux would take for a hook", async () => {
  await withTmux(async (t, c) => {
    assert.match(
      await c.fail("set_hook", { name: "pane-exite", command: "display-message gone" }),
      /start of one.*full hook name: pane-exited/s,
    );
    assert.equal(await t.tmux("show-hooks", "-gw", "pane-exited"), "pane-exited\n");
  });
});

function tall(rows: number): SinceCursor {
  return {
    serverPid: 1,
    serverStart: 1,
    paneId: "%0",
    panePid: 2,
    width: 80,
    historyLimit: 2000,
    historySize: 0,
    base: 0,
    cursorRow: 0,
    rows: "A".repeat(rows * HASH_CHARS),
    altHash: null,
  };
}

Deno.test("a cursor dropped for the rows bound is not said to be older than the last 1000", async () => {
  const store = new CursorStore();
  const first = await store.issue(tall(10_008));
  // 50 more cursors of the tallest pane: 51 x 10 008 rows passes 500 000.
  for (let i = 0; i < 50; i++) await store.issue(tall(10_008));
  assert.ok(store.size < 60, `${store.size} cursors kept`);
  const error = await store.open(first).then(() => null, (e) => e);
  assert.ok(error instanceof CursorError);
  // Only 50 cursors were handed out since; the text must not claim 1000 are kept.
  assert.doesNotMatch(
    error.message,
    /keeps the 1000 cursors handed out or passed back last, and this one is older/,
    error.message,
  );
});

Deno.test("set_option puts no text beyond ASCII in an 8-bit terminal's title either", async () => {
  await withTmux(async (t, c) => {
    // Nobody attached: a value beyond ASCII reaches no terminal, and is set.
    await c.ok("set_option", { name: "@note", value: "caf\u00e9", scope: "session", global: true });
    await t.tmux("set-option", "-g", "set-titles", "on");
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    const person = await attachRecorded(t, "main", { LANG: "C", LC_ALL: "C" });
    try {
      // rename_session refuses this name for `other` (any client on the server counts: the
      // person may go there)...
      const c1 = "\u011c\u00db2J\u00db?1000h\u011c";
      assert.match(
        await c.fail("rename_session", { session: "other", name: c1 }),
        /beyond ASCII.*UTF-8/,
      );
      // ...and set_option refuses the same bytes as the title format of that session, or as
      // any option's value (a title format may name any option).
      for (const name of ["set-titles-string", "@note"]) {
        assert.match(
          await c.fail("set_option", { name, value: c1, scope: "session", target: "other" }),
          /beyond ASCII.*UTF-8.*set-titles/s,
        );
      }
      // The person goes to `other`: tmux writes its title, raw, to their 8-bit terminal.
      await t.tmux("switch-client", "-c", person.tty, "-t", "other");
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-c", person.tty, "#{session_name}")).trim() ===
            "other",
        "the person in other",
      );
      await t.tmux("refresh-client", "-t", person.tty);
      // Let the title reach the terminal: a marker title after it (ASCII) proves the write.
      await t.tmux("set-option", "-t", "other", "set-titles-string", "DONE");
      await t.tmux("refresh-client", "-t", person.tty);
      await waitFor(
        async () => new TextDecoder("latin1").decode(await person.received()).includes("DONE"),
        "the marker title",
      );
      const got = await person.received();
      const c1Bytes = got.filter((b) => b >= 0x80 && b <= 0x9f).length;
      assert.equal(c1Bytes, 0, `${c1Bytes} C1 control bytes reached the person's terminal`);
    } finally {
      await person.done();
    }
  });
});
