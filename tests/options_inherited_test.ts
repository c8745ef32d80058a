/**
 * show_options with includeInherited lists the user options (`@name`) a scope inherits, as
 * tmux resolves them (`#{@name}`, `show-options -A SCOPE @name`): tmux's own `show-options -A`
 * without a name leaves them out, yet the listing said it was complete (the agent marks, such
 * as `@agent-state`, set on a window or globally were missed at a pane). Each inherited one is
 * read from its parent scope exactly, the nearer scope's value winning, once.
 */

import assert from "node:assert/strict";
import { type StartedTmux, withTmux } from "./helpers/mcp.ts";
import type { TestClient } from "./helpers/mcp.ts";

interface Entry {
  name: string;
  index: number | null;
  value: string;
  inherited: boolean;
}

interface Listing {
  complete: boolean;
  omittedEntries: number;
  options: Entry[];
}

/** A value tmux would expand if it were ever read as a format, and that spans lines. */
const TRICKY = "sp ace #{pid} #(echo ran) '\"\nsecond; line";

/** The user option names show_option takes (a name holding a space or newline it refuses). */
const NAMEABLE = /^@[A-Za-z0-9_.-]+$/;

/** Options set at every level the scopes below inherit from, some of them twice. */
async function setLevels(t: StartedTmux): Promise<void> {
  const { sessionId, windowId, paneId } = t.ids;
  const sets: string[][] = [
    ["-wg", "@w1", "wg"],
    ["-wg", "@two", "global"],
    ["-w", "-t", windowId, "@two", "window"],
    ["-wg", "@three", "global"],
    ["-w", "-t", windowId, "@three", "window"],
    ["-p", "-t", paneId, "@three", "pane"],
    ["-wg", "@tricky", TRICKY],
    ["-wg", "@gw x\nstatus", "named across lines"],
    ["-w", "-t", windowId, "@win-only", "w"],
    ["-p", "-t", paneId, "@own", "p"],
    ["-g", "@s1", "gs"],
    ["-g", "@s2", "global"],
    ["-t", sessionId, "@s2", "session"],
  ];
  await t.tmux(...sets.flatMap((s, i) => [...(i > 0 ? [";"] : []), "set-option", ...s]));
}

/** The entries named `name` in a listing, as [value, inherited]. */
function named(listing: Listing, name: string): [string, boolean][] {
  return listing.options.filter((o) => o.name === name).map((o) => [o.value, o.inherited]);
}

async function list(
  c: TestClient,
  args: Record<string, unknown>,
): Promise<Listing> {
  return await c.ok<Listing>("show_options", args);
}

/** What show_option says of one name at the same scope: the listing must agree with it. */
async function one(
  c: TestClient,
  args: Record<string, unknown>,
  name: string,
): Promise<[string, boolean][]> {
  const r = await c.ok<{ entries: Entry[] }>("show_option", {
    ...args,
    name,
    includeInherited: true,
  });
  return r.entries.map((e) => [e.value, e.inherited]);
}

Deno.test("show_options includeInherited lists a pane's inherited user options, nearest first", async () => {
  await withTmux(async (t, c) => {
    await setLevels(t);
    const { paneId } = t.ids;
    // tmux itself resolves them so.
    assert.equal(await t.tmux("show-options", "-A", "-p", "-t", paneId, "@w1"), "@w1* wg\n");
    const at = { scope: "pane", target: paneId };
    const listing = await list(c, { ...at, includeInherited: true });
    assert.equal(listing.complete, true);
    assert.equal(listing.omittedEntries, 0);
    assert.deepEqual(named(listing, "@w1"), [["wg", true]], "the global window's @w1 is missed");
    assert.deepEqual(named(listing, "@two"), [["window", true]]);
    assert.deepEqual(named(listing, "@three"), [["pane", false]]);
    assert.deepEqual(named(listing, "@tricky"), [[TRICKY, true]]);
    assert.deepEqual(named(listing, "@gw x\nstatus"), [["named across lines", true]]);
    assert.deepEqual(named(listing, "@win-only"), [["w", true]]);
    assert.deepEqual(named(listing, "@own"), [["p", false]]);
    // Session options are no parent of a pane's.
    assert.deepEqual(named(listing, "@s1"), []);
    assert.deepEqual(named(listing, "@s2"), []);
    // No name twice, and each user option as show_option reads it by name.
    const names = listing.options.map((o) => `${o.name}[${o.index}]`);
    assert.equal(new Set(names).size, names.length);
    for (const o of listing.options.filter((o) => NAMEABLE.test(o.name))) {
      assert.deepEqual(await one(c, at, o.name), [[o.value, o.inherited]], o.name);
    }
    // The built-in options tmux resolves are still there.
    assert.ok(listing.options.some((o) => o.name === "remain-on-exit" && o.inherited));

    const own = await list(c, at);
    assert.equal(own.complete, true);
    assert.deepEqual(
      own.options.filter((o) => o.name.startsWith("@")).map((o) => [o.name, o.value]),
      [["@own", "p"], ["@three", "pane"]],
    );
    assert.ok(own.options.every((o) => !o.inherited), "nothing inherited without includeInherited");
  });
});

Deno.test("show_options includeInherited lists a window's and a session's inherited user options", async () => {
  await withTmux(async (t, c) => {
    await setLevels(t);
    const { windowId, sessionId } = t.ids;
    const win = { scope: "window", target: windowId };
    const window = await list(c, { ...win, includeInherited: true });
    assert.equal(window.complete, true);
    assert.deepEqual(named(window, "@w1"), [["wg", true]]);
    assert.deepEqual(named(window, "@two"), [["window", false]]);
    assert.deepEqual(named(window, "@three"), [["window", false]]);
    assert.deepEqual(named(window, "@tricky"), [[TRICKY, true]]);
    assert.deepEqual(named(window, "@own"), [], "a pane's option is no window's");
    assert.deepEqual(named(window, "@s1"), []);
    for (const o of window.options.filter((o) => NAMEABLE.test(o.name))) {
      assert.deepEqual(await one(c, win, o.name), [[o.value, o.inherited]], o.name);
    }
    const windowOwn = await list(c, win);
    assert.deepEqual(
      windowOwn.options.filter((o) => o.name.startsWith("@")).map((o) => [o.name, o.value]),
      [["@three", "window"], ["@two", "window"], ["@win-only", "w"]],
    );
    assert.ok(windowOwn.options.every((o) => !o.inherited));

    const ses = { scope: "session", target: sessionId };
    const session = await list(c, { ...ses, includeInherited: true });
    assert.equal(session.complete, true);
    assert.deepEqual(named(session, "@s1"), [["gs", true]], "the global session's @s1 is missed");
    assert.deepEqual(named(session, "@s2"), [["session", false]]);
    assert.deepEqual(named(session, "@w1"), [], "window options are no session's");
    for (const o of session.options.filter((o) => NAMEABLE.test(o.name))) {
      assert.deepEqual(await one(c, ses, o.name), [[o.value, o.inherited]], o.name);
    }
    const sessionOwn = await list(c, ses);
    assert.deepEqual(
      sessionOwn.options.filter((o) => o.name.startsWith("@")).map((o) => [o.name, o.value]),
      [["@s2", "session"]],
    );
    assert.ok(sessionOwn.options.every((o) => !o.inherited));

    // The global scopes have no parent: their own user options, none inherited.
    const globalWindow = await list(c, { scope: "window", global: true, includeInherited: true });
    assert.equal(globalWindow.complete, true);
    assert.deepEqual(named(globalWindow, "@two"), [["global", false]]);
    assert.ok(globalWindow.options.every((o) => !o.inherited));
    const server = await list(c, { scope: "server", includeInherited: true });
    assert.ok(server.options.every((o) => !o.inherited && !o.name.startsWith("@s")));
  });
});

Deno.test("show_options includeInherited says what of the inherited user options it could not read", async () => {
  await withTmux(async (t, c) => {
    const { windowId, paneId } = t.ids;
    // A name tmux would take too many questions to confirm (see settings_test.ts): the listing
    // it is in is read only up to it. tmux lists user options by name, so `@a...` come before
    // it and `@z...` after.
    const unconfirmable = `@q${"\nx x x x x x x x".repeat(10)}\nstatus`;
    await t.tmux(
      ...["set-option", "-w", "-t", windowId, "@a-near", "near", ";"],
      ...["set-option", "-wg", "@a-far", "far", ";"],
      ...["set-option", "-wg", unconfirmable, "off", ";"],
      ...["set-option", "-wg", "@z-after", "unread"],
    );
    const pane = await c.call("show_options", {
      scope: "pane",
      target: paneId,
      includeInherited: true,
    });
    const text = pane.content?.[0]?.type === "text" ? pane.content[0].text : "";
    const listing = pane.structuredContent as unknown as Listing;
    assert.equal(listing.complete, false, "a global window option left unread, yet complete");
    assert.match(text, /more lines of tmux's listing left out/);
    // The pane's and its window's listings were read whole: what they and the global
    // options read before the unconfirmable name hold is known, and listed.
    assert.deepEqual(named(listing, "@a-near"), [["near", true]]);
    assert.deepEqual(named(listing, "@a-far"), [["far", true]]);
    assert.deepEqual(named(listing, "@z-after"), []);
    assert.deepEqual(named(listing, "status"), []);
    assert.ok(listing.options.some((o) => o.name === "remain-on-exit"));

    // The window itself holds one: an option of the window's left unread may be the one that
    // overrides a global one, so none of the global ones is listed as inherited.
    await t.tmux(
      ...["set-option", "-w", "-t", windowId, unconfirmable, "off", ";"],
      ...["set-option", "-w", "-t", windowId, "@z-after", "the window's own"],
    );
    const window = await c.ok<Listing>("show_options", {
      scope: "window",
      target: windowId,
      includeInherited: true,
    });
    assert.equal(window.complete, false);
    assert.deepEqual(named(window, "@a-near"), [["near", false]]);
    assert.deepEqual(named(window, "@z-after"), [], "the global value, under the window's own");
    assert.deepEqual(named(window, "@a-far"), []);
    assert.ok(window.options.every((o) => !o.inherited || !o.name.startsWith("@")));
  });
});

Deno.test("show_options includeInherited keeps its reply bound and says what it left out", async () => {
  await withTmux(async (t, c) => {
    // 40 global window user options of 2 KiB each: more than one reply holds.
    // Four to a tmux command: a command's message holds at most about 16 KiB.
    for (let i = 0; i < 40; i += 4) {
      await t.tmux(
        ...[0, 1, 2, 3].flatMap((k) => [";", "set-option", "-wg", `@big${i + k}`, "v".repeat(2000)])
          .slice(1),
      );
    }
    const r = await c.call("show_options", {
      scope: "pane",
      target: t.ids.paneId,
      includeInherited: true,
    });
    assert.notEqual(r.isError, true);
    const listing = r.structuredContent as unknown as Listing;
    assert.ok(JSON.stringify(r).length < 50_000, "the reply stays within its bound");
    assert.equal(listing.complete, false);
    assert.ok(listing.omittedEntries > 0);
    const big = listing.options.filter((o) => o.name.startsWith("@big"));
    assert.ok(big.length > 0 && big.every((o) => o.inherited && o.value === "v".repeat(2000)));
    assert.equal(
      big.length + listing.options.filter((o) => !o.name.startsWith("@")).length +
        listing.omittedEntries,
      // tmux's own listing of the pane: its options with a value (an empty array has none).
      40 + (await t.tmux("show-options", "-A", "-p", "-t", t.ids.paneId)).trim().split("\n")
        .filter((line) => line.includes(" ")).length,
    );
  });
});
