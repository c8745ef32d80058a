/**
 * Options by which tmux ends what the teardown tools end under their guards, and options that
 * open a person's terminal to a pane's programs:
 *
 * - `destroy-unattached` (a session ends the moment no client is attached to it, a detached one
 *   at once: tmux-mcp's control client never stays in one) and `exit-unattached` (the server
 *   ends the moment no client is attached): set_option sets them to nothing but off, at any
 *   scope, whoever is attached (src/tools/option_change.ts `refuseEnding`);
 * - `allow-passthrough` turned on for a window or pane nobody is shown yet: a person attached
 *   anywhere on the server is a key away from it, and its programs' wrapped escape sequences
 *   would reach their terminal raw: refused while any person is attached, as a change to every
 *   session and window (src/tools/option_change.ts `optionView`).
 */

import assert from "node:assert/strict";
import { connect } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

/** A refusal's first sentence: its reason (what to do follows). */
function reason(text: string): string {
  return text.slice(0, text.indexOf(". ") + 1);
}

Deno.test("set_option never turns on destroy-unattached or exit-unattached; off goes through, and every session stays", async () => {
  const t = await TestTmux.start("main"); // the agent's own pane runs in main
  const facts = await t.facts();
  // A person's detached work, nobody attached to it.
  await t.tmux("new-session", "-d", "-s", "work", "sleep 100000");
  const c = await connect({
    socketName: t.socket,
    callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: t.ids.paneId },
  });
  let closed = false;
  try {
    const refused: Record<string, unknown>[] = [];
    for (const value of ["on", "1", "", "Yes"]) {
      refused.push(
        { name: "destroy-unattached", value, scope: "session", target: "work" },
        { name: "destroy-unattached", value, scope: "session", target: "main" },
        { name: "destroy-unattached", value, scope: "session", global: true },
        { name: "exit-unattached", value, scope: "server" },
      );
    }
    refused.push(
      // Appended, a flag is set all the same.
      { name: "destroy-unattached", value: "on", append: true, scope: "session", target: "work" },
      // Unset for one session, it takes the global value, which may be on.
      { name: "destroy-unattached", unset: true, scope: "session", target: "work" },
    );
    for (const args of refused) {
      const text = await c.fail("set_option", args);
      const first = reason(text);
      assert.match(
        first,
        new RegExp(`^${args.name} is set by no tool but to off \\(off, no or 0\\): on, tmux ends `),
        `${JSON.stringify(args)}: ${text}`,
      );
      assert.match(first, /the moment no client is attached/, first);
      assert.match(
        text.slice(first.length),
        /^ kill_session and kill_server \(toolset teardown\) end a session or the server/,
        `one sentence, then what ends them instead: ${text}`,
      );
    }
    // A start of the name tmux would take for the whole is refused too.
    await c.fail("set_option", {
      name: "destroy-unattache",
      value: "on",
      scope: "session",
      target: "work",
    });
    // Nothing was set anywhere.
    const own = (target: string) =>
      t.tmux("show-options", "-qv", "-t", target, "destroy-unattached");
    assert.equal((await own("work")).trim(), "");
    assert.equal((await own("main")).trim(), "");
    assert.equal((await t.tmux("show-options", "-gv", "destroy-unattached")).trim(), "off");
    assert.equal((await t.tmux("show-options", "-sv", "exit-unattached")).trim(), "off");

    // Another call (the control client may move) and every session is still there.
    await c.ok("list_sessions", {});
    assert.equal(
      (await t.tmux("list-sessions", "-F", "#{session_name}")).trim().split("\n").sort().join(","),
      "main,work",
    );

    // Off, in any spelling tmux reads as off, goes through: nobody is attached to work.
    for (const value of ["off", "no", "0"]) {
      await c.ok("set_option", {
        name: "destroy-unattached",
        value,
        scope: "session",
        target: "work",
      });
      assert.equal((await own("work")).trim(), "off");
    }
    await c.ok("set_option", {
      name: "destroy-unattached",
      value: "OFF",
      scope: "session",
      global: true,
    });
    await c.ok("set_option", {
      name: "destroy-unattached",
      unset: true,
      scope: "session",
      global: true,
    });
    await c.ok("set_option", { name: "exit-unattached", value: "off", scope: "server" });
    await c.ok("set_option", { name: "exit-unattached", unset: true, scope: "server" });

    // The MCP server exits: its clients leave, and both sessions stay.
    await c.close();
    closed = true;
    await waitFor(
      async () => (await t.tmux("list-clients", "-F", "#{client_name}")).trim() === "",
      "tmux-mcp's clients gone",
    );
    assert.equal(
      (await t.tmux("list-sessions", "-F", "#{session_name}")).trim().split("\n").sort().join(","),
      "main,work",
    );
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_id}")).trim(),
      t.ids.paneId,
      "the agent's own pane is still there",
    );
  } finally {
    if (!closed) await c.close();
    await t.kill();
  }
});

Deno.test("set_option allow-passthrough on is refused for a window nobody is shown while a person is attached; off, or --allow-attended-input, goes through", async () => {
  const t = await TestTmux.start("main");
  const c = await connect({ socketName: t.socket });
  try {
    const unwatched = await t.shellWindow("main"); // @1, beside the @0 the person sees
    const tty = await t.attach("main");
    assert.equal(
      (await t.tmux("list-clients", "-F", "#{window_id}")).trim(),
      t.ids.windowId,
      "the person is shown @0",
    );
    const refused: Record<string, unknown>[] = [
      { value: "on", scope: "window", target: unwatched.windowId },
      { value: "1", scope: "window", target: unwatched.windowId },
      { value: "", scope: "window", target: unwatched.windowId },
      { value: "on", append: true, scope: "window", target: unwatched.windowId },
      { value: "on", scope: "pane", target: unwatched.paneId },
      // Unset for a window, it takes the global value, which may be on.
      { unset: true, scope: "window", target: unwatched.windowId },
    ];
    for (const args of refused) {
      const text = await c.fail("set_option", { name: "allow-passthrough", ...args });
      assert.match(
        reason(text),
        /^(Turning allow-passthrough on|Unsetting allow-passthrough) in (window|pane) [@%]\d+.* would let its programs write to a person's terminal/,
        `${JSON.stringify(args)}: ${text}`,
      );
      assert.ok(text.includes(tty), `names the client: ${text}`);
      assert.match(text, /--allow-attended-input/, `says what lifts it: ${text}`);
    }
    const own = () => t.tmux("show-options", "-wqv", "-t", unwatched.windowId, "allow-passthrough");
    const pane = () => t.tmux("show-options", "-pqv", "-t", unwatched.paneId, "allow-passthrough");
    assert.equal((await own()).trim(), "");
    assert.equal((await pane()).trim(), "");
    assert.equal((await t.tmux("show-options", "-gwv", "allow-passthrough")).trim(), "off");

    // Off stays a change of that window only: nobody is shown it.
    await c.ok("set_option", {
      name: "allow-passthrough",
      value: "off",
      scope: "window",
      target: unwatched.windowId,
    });
    assert.equal((await own()).trim(), "off");
    await c.ok("set_option", {
      name: "allow-passthrough",
      value: "no",
      scope: "pane",
      target: unwatched.paneId,
    });
    assert.equal((await pane()).trim(), "off");

    // tmux-mcp started with --allow-attended-input sets it.
    const allowed = await connect({ socketName: t.socket, allowAttendedInput: true });
    try {
      await allowed.ok("set_option", {
        name: "allow-passthrough",
        value: "on",
        scope: "pane",
        target: unwatched.paneId,
      });
      assert.equal((await pane()).trim(), "on");
    } finally {
      await allowed.close();
    }

    // With nobody attached, it is free again.
    await t.detach(tty);
    await c.ok("set_option", {
      name: "allow-passthrough",
      value: "on",
      scope: "window",
      target: unwatched.windowId,
    });
    assert.equal((await own()).trim(), "on");
  } finally {
    await c.close();
    await t.kill();
  }
});
