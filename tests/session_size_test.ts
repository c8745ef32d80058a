/**
 * A new session's window as tmux makes it: held to the cell cap however its default-size is
 * spelled (set_option, create_session without sizes), and made the size asked for, or told
 * otherwise, when a person's client would size it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { TestTmux } from "./helpers/tmux.ts";
import { defaultSizeTaken, readDefaultSize } from "../src/tools/default_size.ts";

/** The size of window or session `target`'s (current) window, as tmux has it. */
async function sizeOf(t: TestTmux, target: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", target, "#{window_width}x#{window_height}"))
    .trim();
}

/** The session names on `t`, sorted. */
async function sessions(t: TestTmux): Promise<string[]> {
  return (await t.tmux("list-sessions", "-F", "#{session_name}")).trim().split("\n").sort();
}

const CELLS = /is refused: a 10000x10000 window is 100000000 cells.*at most 1000000/;

Deno.test("default-size is read as tmux reads it: what set-option takes, the window it makes", async () => {
  const t = await TestTmux.start("main");
  try {
    const values = [
      "010000x010000",
      "10000x10000 ",
      "1x-1x1",
      "99999x3",
      "4294967296x5",
      "4294967297x5",
      "4294977296x5",
      "18446744073709551616x5",
      "0x0",
      "0x5x5",
      "12abcx7",
      "7x3junk",
      "5x 7x1",
      "5 x5",
      "200x50",
      "5x",
      "5xa",
      "+5x5",
      " 5x5",
      "x5",
    ];
    for (const value of values) {
      const taken = await t.tmux("set-option", "-g", "default-size", value).then(
        () => true,
        () => false,
      );
      assert.equal(defaultSizeTaken(value), taken, `set-option takes ${JSON.stringify(value)}`);
      if (!taken) continue;
      const made = (await t.tmux(
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{window_width}x#{window_height}",
      )).trim();
      const read = readDefaultSize(value);
      assert.equal(
        `${read.width}x${read.height}`,
        made,
        `the window ${JSON.stringify(value)} makes`,
      );
    }
  } finally {
    await t.kill();
  }
});

Deno.test("set_option holds default-size to the cell cap however it is spelled", async () => {
  await withTmux(async (t, c) => {
    const set = (value: string, append = false) =>
      c.call("set_option", { name: "default-size", value, scope: "session", global: true, append });
    for (const value of ["010000x010000", "10000x10000 ", "10000x10000junk", "99999x10000"]) {
      const r = await set(value);
      const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
      assert.equal(r.isError, true, `${JSON.stringify(value)} was taken`);
      assert.match(text, /default-size of .*window is .* cells/, text);
    }
    assert.match(
      await c.fail("set_option", {
        name: "default-size",
        value: "010000x010000",
        scope: "session",
        global: true,
      }),
      /default-size of "010000x010000" \(tmux reads 10000x10000\)/,
    );
    assert.equal(await t.tmux("show-options", "-gv", "default-size"), "80x24\n");
    // Spellings of a size within the cap still go through, as tmux stores them.
    await c.ok("set_option", {
      name: "default-size",
      value: "0100x050",
      scope: "session",
      global: true,
    });
    assert.equal(await t.tmux("show-options", "-gv", "default-size"), "0100x050\n");
    // Appended: the value tmux would hold then is what is read.
    await c.ok("set_option", {
      name: "default-size",
      value: "1000x100",
      scope: "session",
      global: true,
    });
    assert.match(
      await c.fail("set_option", {
        name: "default-size",
        value: "00",
        scope: "session",
        global: true,
        append: true,
      }),
      /1000x10000 window is 10000000 cells/,
    );
    assert.equal(await t.tmux("show-options", "-gv", "default-size"), "1000x100\n");
    // A session's own value too.
    assert.match(
      await c.fail("set_option", {
        name: "default-size",
        value: "10000x10000 ",
        scope: "session",
        target: t.ids.sessionId,
      }),
      /window is 100000000 cells/,
    );
  });
});

Deno.test("create_session without sizes is held to the default-size tmux would make it from", async () => {
  await withTmux(async (t, c) => {
    // Set by a person (or `tmux set` in a pane): spellings tmux takes for 10000x10000.
    for (const value of ["010000x010000", "10000x10000 "]) {
      await t.tmux("set-option", "-g", "default-size", value);
      assert.match(await c.fail("create_session", { name: "big" }), CELLS);
      assert.deepEqual(await sessions(t), ["main"]);
    }
    // One side given: the other is default-size's as tmux reads it (10000 here, not 24).
    assert.match(
      await c.fail("create_session", { name: "tall", width: 200 }),
      /200x10000 window is 2000000 cells/,
    );
    assert.deepEqual(await sessions(t), ["main"]);
    // Within the cap, made as tmux reads it.
    await t.tmux("set-option", "-g", "default-size", "0100x030 ");
    const made = await c.ok<{ windowId: string; width: number; height: number; notes: string[] }>(
      "create_session",
      { name: "small" },
    );
    assert.deepEqual([made.width, made.height], [100, 30]);
    assert.equal(await sizeOf(t, made.windowId), "100x30");
    assert.deepEqual(made.notes, []);
  });
});

Deno.test("create_session makes the size asked for while a person's client would size it", async () => {
  await withTmux(async (t, c) => {
    // A person attached to main: under tmux's default window-size latest, a new session's
    // window takes their terminal's size, whatever -x and -y said.
    await t.attach("main");
    const person = await sizeOf(t, "main");
    assert.notEqual(person, "50x10");
    const made = await c.ok<{ windowId: string; width: number; height: number; notes: string[] }>(
      "create_session",
      { name: "Y", width: 50, height: 10 },
    );
    assert.equal(await sizeOf(t, made.windowId), "50x10");
    assert.deepEqual([made.width, made.height], [50, 10]);
    assert.match(made.notes.join(" "), new RegExp(`made .*${person}.*50x10`));
    assert.match(made.notes.join(" "), /window-size option to manual/);
    // One side asked: the other is default-size's (80x24), as with nobody attached.
    const wide = await c.ok<{ windowId: string; width: number; height: number }>(
      "create_session",
      { name: "W", width: 60 },
    );
    assert.equal(await sizeOf(t, wide.windowId), "60x24");
    assert.deepEqual([wide.width, wide.height], [60, 24]);
    // Under a person's global manual (the creation lends latest for that instant): the same.
    await t.tmux("set-option", "-gw", "window-size", "manual");
    const manual = await c.ok<{ windowId: string; width: number; height: number }>(
      "create_session",
      { name: "M", width: 40, height: 12 },
    );
    assert.equal(await sizeOf(t, manual.windowId), "40x12");
    assert.deepEqual([manual.width, manual.height], [40, 12]);
    assert.equal(await t.tmux("show-options", "-gwv", "window-size"), "manual\n");
    // No size asked: the window is as tmux made it, and the reply says which.
    await t.tmux("set-option", "-gw", "window-size", "latest");
    const plain = await c.ok<{ windowId: string; width: number; height: number; notes: string[] }>(
      "create_session",
      { name: "P" },
    );
    assert.equal(`${plain.width}x${plain.height}`, await sizeOf(t, plain.windowId));
    assert.equal(await t.tmux("show-options", "-wqv", "-t", plain.windowId, "window-size"), "");
  });
});

Deno.test("create_session with nobody attached leaves the window's size to tmux", async () => {
  await withTmux(async (t, c) => {
    const made = await c.ok<{ windowId: string; width: number; height: number; notes: string[] }>(
      "create_session",
      { name: "Y", width: 50, height: 10 },
    );
    assert.deepEqual([made.width, made.height], [50, 10]);
    assert.deepEqual(made.notes, []);
    // Not made manual: nothing needed resizing.
    assert.equal(await t.tmux("show-options", "-wqv", "-t", made.windowId, "window-size"), "");
  });
});

Deno.test("create_session leaves the size to a person a hook put on the new session, and says so", async () => {
  await withTmux(async (t, c) => {
    const tty = await t.attach("main");
    // A person's configuration that shows them every session as it is made: their client
    // sizes its window now, and the guard leaves it to them.
    await t.tmux("set-hook", "-g", "after-new-session", `switch-client -c ${tty}`);
    const made = await c.ok<{ windowId: string; width: number; height: number; notes: string[] }>(
      "create_session",
      { name: "Y", width: 50, height: 10 },
    );
    const now = await sizeOf(t, made.windowId);
    assert.notEqual(now, "50x10");
    assert.equal(`${made.width}x${made.height}`, now);
    assert.match(
      made.notes.join(" "),
      new RegExp(
        `made window ${made.windowId} ${now} .*not the 50x10 asked for; left so: .*` +
          `on the screen of client ${tty}`,
      ),
    );
  });
});

/** The window ids of session `target`, sorted. */
async function windowsOf(t: TestTmux, target: string): Promise<string[]> {
  return (await t.tmux("list-windows", "-t", target, "-F", "#{window_id}")).trim().split("\n")
    .sort();
}

Deno.test("create_window is held to the session's own default-size where no client sizes the window", async () => {
  await withTmux(async (t, c) => {
    // Set on the session alone, as `tmux set default-size ...` run in one of its panes does:
    // nobody sizes a new window there, so tmux makes it 10000x10000.
    await t.tmux("new-session", "-d", "-s", "away");
    const before = await windowsOf(t, "away");
    for (const value of ["010000x010000", "10000x10000 "]) {
      await t.tmux("set-option", "-t", "away", "default-size", value);
      assert.match(
        await c.fail("create_window", { session: "away" }),
        /Creating a window at the session's default-size .* is refused: a 10000x10000 window/,
      );
      assert.deepEqual(await windowsOf(t, "away"), before, "no window was made");
    }
    // Within the cap, nobody attached: made as tmux reads it.
    await t.tmux("set-option", "-t", "main", "default-size", "0100x030");
    const small = await c.ok<{ windowId: string }>("create_window", { session: "main" });
    assert.equal(await sizeOf(t, small.windowId), "100x30");
    // A person attached there sizes it (tmux's window-size latest): made at their size.
    await t.attach("away");
    const made = await c.ok<{ windowId: string }>("create_window", { session: "away" });
    assert.equal(await sizeOf(t, made.windowId), await sizeOf(t, "away"));
    assert.notEqual(await sizeOf(t, made.windowId), "10000x10000");
  });
});
