/**
 * Teardown on private tmux servers: every kill reports exactly what went — cascades included —
 * and refuses this server's own pane and watched panes unless forced. Existence is checked by
 * listing ids, never by asking tmux about a missing one.
 */

import assert from "node:assert/strict";
import { connect, summaryOf, withTmux } from "./helpers/mcp.ts";
import { cleanEnv, HookGate, linkedTwice, TestTmux, waitFor } from "./helpers/tmux.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { DEFAULT_TOOLSETS } from "../src/mcp/toolsets.ts";

interface Removed {
  removed: { panes: string[]; windows: string[]; sessions: { id: string; name: string }[] };
  serverStopped: boolean;
  complete: boolean;
}

/** Ids of a kind on the server, by listing (an empty list when no server runs). */
async function ids(t: TestTmux, kind: "panes" | "windows" | "sessions"): Promise<string[]> {
  const [cmd, fmt] = kind === "panes"
    ? ["list-panes", "#{pane_id}"]
    : kind === "windows"
    ? ["list-windows", "#{window_id}"]
    : ["list-sessions", "#{session_id}"];
  const r = await t.tmuxRaw(cmd, ...(kind === "sessions" ? [] : ["-a"]), "-F", fmt);
  return r.code === 0 ? [...new Set(r.stdout.split("\n").filter((l) => l !== ""))] : [];
}

const newPane = async (t: TestTmux, ...args: string[]): Promise<string> =>
  (await t.tmux(...args, "-P", "-F", "#{pane_id}")).trim();

Deno.test("teardown tools exist only when teardown is selected", async () => {
  const c = await connect({ toolsets: DEFAULT_TOOLSETS });
  try {
    const names = (await c.client.listTools()).tools.map((x: { name: string }) => x.name);
    for (const name of ["kill_pane", "kill_window", "kill_session", "kill_server", "clear_pane"]) {
      assert.ok(!names.includes(name), `${name} should not be offered`);
    }
    // Not callable either: the SDK answers an unknown tool with an error.
    const text = await c.call("kill_server", {}).then(
      (r) => r.isError === true && r.content?.[0]?.type === "text" ? r.content[0].text : "",
      (e) => String(e),
    );
    assert.match(text, /kill_server not found/);
  } finally {
    await c.close();
  }
});

Deno.test("kill_pane removes the pane, then its window, then its session, then the server", async () => {
  await withTmux(async (t, c) => {
    const p2 = await newPane(t, "split-window", "-d", "-t", t.ids.paneId);
    const w2 =
      (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id} #{pane_id}"))
        .trim().split(" ");
    const annotations = ((await c.client.listTools()).tools as {
      name: string;
      annotations?: Record<string, unknown>;
    }[]).find((x) => x.name === "kill_pane")?.annotations;
    assert.equal(annotations?.destructiveHint, true);

    const one = await c.ok<Removed>("kill_pane", { paneId: p2 });
    assert.deepEqual(one.removed, { panes: [p2], windows: [], sessions: [] });
    assert.equal(one.serverStopped, false);
    assert.ok(!(await ids(t, "panes")).includes(p2));

    const win = await c.ok<Removed>("kill_pane", { paneId: w2[1] });
    assert.deepEqual(win.removed, { panes: [w2[1]], windows: [w2[0]], sessions: [] });

    await t.tmux("new-session", "-d", "-s", "keep");
    const session = await c.ok<Removed>("kill_pane", { paneId: t.ids.paneId });
    assert.deepEqual(session.removed, {
      panes: [t.ids.paneId],
      windows: [t.ids.windowId],
      sessions: [{ id: t.ids.sessionId, name: "main" }],
    });
    assert.deepEqual(await ids(t, "sessions"), [
      (await t.tmux("display-message", "-p", "-t", "keep", "#{session_id}")).trim(),
    ]);

    const lastPane = (await ids(t, "panes"))[0];
    const last = await c.ok<Removed>("kill_pane", { paneId: lastPane });
    assert.equal(last.serverStopped, true);
    assert.equal(last.removed.sessions.length, 1);
    assert.deepEqual(await ids(t, "sessions"), []);
    assert.match(await c.fail("kill_pane", { paneId: lastPane }), /No tmux server is running/);
  });
});

Deno.test("kill_pane of the last pane: serverStopped says whether tmux stays (exit-empty off)", async () => {
  await withTmux(async (t, c) => {
    // tmux exits a moment after its last session goes, unless exit-empty is off: then it
    // stays, and the answer must say so (the wait for an exit ends).
    await t.tmux("set-option", "-s", "exit-empty", "off");
    const last = await c.ok<Removed>("kill_pane", { paneId: t.ids.paneId });
    assert.equal(last.serverStopped, false);
    assert.equal(last.removed.sessions.length, 1);
    assert.notEqual((await t.tmux("display-message", "-p", "#{pid}")).trim(), "");
  });
});

Deno.test("kill_window removes a linked window from every session; kill_session spares linked windows", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("new-session", "-d", "-s", "solo");
    const soloId = (await t.tmux("display-message", "-p", "-t", "solo", "#{session_id}")).trim();
    const [w2, p2] =
      (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id} #{pane_id}"))
        .trim().split(" ");
    // w2 is linked into "solo" too; solo's own first window goes first, so w2 is all it has.
    await t.tmux("link-window", "-d", "-s", w2, "-t", "solo:5");
    await t.tmux("kill-window", "-t", "solo:0");
    const r = await c.ok<Removed>("kill_window", { windowId: w2 });
    assert.deepEqual(r.removed, {
      panes: [p2],
      windows: [w2],
      sessions: [{ id: soloId, name: "solo" }],
    });
    assert.deepEqual(await ids(t, "windows"), [t.ids.windowId]);

    // kill_session: a window also linked elsewhere survives there.
    await t.tmux("new-session", "-d", "-s", "doomed");
    const doomedId = (await t.tmux("display-message", "-p", "-t", "doomed", "#{session_id}"))
      .trim();
    const [doomedWindow, doomedPane] = (await t.tmux(
      "display-message",
      "-p",
      "-t",
      "doomed",
      "#{window_id} #{pane_id}",
    )).trim().split(" ");
    await t.tmux("link-window", "-d", "-s", t.ids.windowId, "-t", "doomed:7");
    const s = await c.ok<Removed>("kill_session", { session: "doomed" });
    assert.deepEqual(s.removed, {
      panes: [doomedPane],
      windows: [doomedWindow],
      sessions: [{ id: doomedId, name: "doomed" }],
    });
    assert.deepEqual(await ids(t, "windows"), [t.ids.windowId], "the linked window lives on");
    assert.match(await c.fail("kill_session", { session: "doomed" }), /No session "doomed"/);
    assert.match(await c.fail("kill_window", { windowId: w2 }), new RegExp(`No window ${w2}`));
    assert.match(
      await c.fail("kill_session", { session: "mai" }),
      /No session "mai"/,
      "exact names",
    );
  });
});

Deno.test("kill_session under detach-on-destroy off leaves no client of ours in the person's session", async () => {
  await withTmux(async (t, c) => {
    const seats = async () =>
      (await t.tmux("list-clients", "-F", "#{client_control_mode} #{session_name}")).trim()
        .split("\n");
    await t.tmux("set-option", "-g", "detach-on-destroy", "off");
    await t.tmux("new-session", "-d", "-s", "spare");
    const person = await t.attach("main");
    // Our client for calls joins "spare", where nobody is; the wait follows the pane from a
    // client in "agent". Killing "agent", tmux moves that one into the person's session.
    const agent = await c.ok<{ paneId: string }>("create_session", { name: "agent" });
    await c.ok("wait_for_text", { paneId: agent.paneId, patterns: ["unseen"], timeoutMs: 200 });
    assert.deepEqual((await seats()).sort(), ["0 main", "1 agent", "1 spare"]);
    await c.ok("kill_session", { session: "agent" });
    await waitFor(
      async () => !(await seats()).includes("1 main"),
      "our clients to leave the person's session",
    );
    // A script in the person's pane switches "the current client": the person's own moves.
    await t.tmux("send-keys", "-t", t.ids.paneId, "tmux switch-client -t spare", "Enter");
    await waitFor(
      async () =>
        (await t.tmux("list-clients", "-F", "#{client_tty} #{session_name}"))
          .includes(`${person} spare`),
      "the person's client to switch",
    );
  });
});

Deno.test("kill_server removes everything and says the server stopped", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("new-session", "-d", "-s", "b");
    await t.tmux("split-window", "-d", "-t", "b:");
    const before = { panes: await ids(t, "panes"), windows: await ids(t, "windows") };
    const r = await c.ok<Removed>("kill_server", {});
    assert.deepEqual(r.removed.panes.sort(), before.panes.sort());
    assert.deepEqual(r.removed.windows.sort(), before.windows.sort());
    assert.deepEqual(r.removed.sessions.map((s) => s.name).sort(), ["b", "main"]);
    assert.equal(r.serverStopped, true);
    assert.equal(r.complete, true);
    assert.deepEqual(await ids(t, "sessions"), []);
    assert.match(await c.fail("kill_server", {}), /No tmux server is running/);
  });
});

Deno.test("teardown refuses this server's own pane and watched panes unless forced", async () => {
  await withTmux(async (t, c) => {
    const facts = await t.facts();
    const own = await connect({
      socketName: t.socket,
      callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: t.ids.paneId },
    });
    try {
      for (
        const [tool, args] of [
          ["kill_pane", { paneId: t.ids.paneId }],
          ["kill_window", { windowId: t.ids.windowId }],
          ["kill_session", { session: "main" }],
          ["kill_server", {}],
          ["clear_pane", { paneId: t.ids.paneId }],
        ] as const
      ) {
        assert.match(await own.fail(tool, args), /the pane this MCP server runs in/, tool);
      }
      assert.deepEqual(await ids(t, "panes"), [t.ids.paneId], "nothing went");
      await own.ok("clear_pane", { paneId: t.ids.paneId, force: true });
    } finally {
      await own.close();
    }

    const watchedSession = await newPane(t, "new-session", "-d", "-s", "watched");
    await t.attach("watched");
    assert.match(await c.fail("kill_pane", { paneId: watchedSession }), /a person is watching/);
    assert.match(await c.fail("kill_session", { session: "watched" }), /a person is watching/);
    assert.match(await c.fail("clear_pane", { paneId: watchedSession }), /a person is watching/);
    assert.ok((await ids(t, "panes")).includes(watchedSession));
    const forced = await c.ok<Removed>("kill_pane", { paneId: watchedSession, force: true });
    assert.deepEqual(forced.removed.panes, [watchedSession]);
    assert.equal(forced.removed.sessions[0]?.name, "watched");
  });
});

Deno.test("kill_pane of a pane a person's zoom hides is refused unless forced: it would unzoom", async () => {
  await withTmux(async (t, c) => {
    const shown = await newPane(t, "new-session", "-d", "-s", "zoomed");
    const hidden = await newPane(t, "split-window", "-d", "-t", shown);
    await t.tmux("resize-pane", "-Z", "-t", shown);
    const zoomed = async () =>
      (await t.tmux("display-message", "-p", "-t", shown, "#{window_zoomed_flag}")).trim();
    assert.equal(await zoomed(), "1");
    // Nobody looks: the hidden pane goes (and tmux unzooms), no question asked.
    const alone = await newPane(t, "split-window", "-d", "-t", shown);
    await t.tmux("resize-pane", "-Z", "-t", shown);
    assert.equal(await zoomed(), "1");
    await c.ok("kill_pane", { paneId: alone });
    await t.tmux("resize-pane", "-Z", "-t", shown);
    assert.equal(await zoomed(), "1");

    const tty = await t.attach("zoomed");
    const text = await c.fail("kill_pane", { paneId: hidden });
    assert.match(text, /would unzoom window @\d+, which client .* shows zoomed on %\d+/);
    assert.ok(text.includes(tty), text);
    assert.equal(await zoomed(), "1", "the person's zoom stays");
    assert.ok((await ids(t, "panes")).includes(hidden));
    const forced = await c.ok<Removed>("kill_pane", { paneId: hidden, force: true });
    assert.deepEqual(forced.removed.panes, [hidden]);
  });
});

Deno.test("clear_pane clears the screen and the history, each on request", async () => {
  await withTmux(async (t, c) => {
    const { paneId } = t.ids;
    await t.tmux("send-keys", "-t", paneId, "-l", "seq 1 200; echo mark-$((1+1))");
    await t.tmux("send-keys", "-t", paneId, "Enter");
    const screen = async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).trim();
    const history = async () =>
      Number((await t.tmux("display-message", "-p", "-t", paneId, "#{history_size}")).trim());
    // The output and the prompt after it: a prompt drawn after the clear below would be on
    // the screen it asserts empty.
    await waitFor(async () => /mark-2\n[$#]$/.test(await screen()), "the output and the prompt");
    assert.ok(await history() > 0);

    const h = await c.ok<Record<string, unknown>>("clear_pane", { paneId, screen: false });
    assert.deepEqual(h, { paneId, clearedScreen: false, clearedHistory: true, historySize: 0 });
    assert.match(await screen(), /mark-2/, "the screen was left alone");
    const s = await c.ok<Record<string, unknown>>("clear_pane", { paneId, history: false });
    assert.equal(s.clearedScreen, true);
    assert.equal(await screen(), "");
    assert.match(
      await c.fail("clear_pane", { paneId, screen: false, history: false }),
      /Nothing to clear/,
    );
    assert.match(await c.fail("clear_pane", { paneId: "%404" }), /No pane %404/);
  });
});

Deno.test("clear_pane while a full-screen program runs says the screen saved under it is not cleared", async () => {
  await withTmux(async (t, c) => {
    // tmux clears the alternate screen the program draws on; the shell's screen saved under it
    // comes back when the program leaves, and capture-pane -a still reads it.
    const p = await t.showing(
      "sh -c 'echo SAVED-UNDER; printf \"\\033[?1049h\"; echo ON-ALT; exec sleep 100000'",
      "ON-ALT",
    );
    const cleared = await summaryOf(c, "clear_pane", { paneId: p });
    assert.equal(cleared.data.clearedScreen, true);
    assert.match(cleared.summary, /full-screen program/);
    assert.match(cleared.summary, /saved under it is not cleared/);
    // What the summary says is what tmux did.
    assert.match(await t.tmux("capture-pane", "-p", "-a", "-t", p), /SAVED-UNDER/);
    const plain = await summaryOf(c, "clear_pane", { paneId: t.ids.paneId });
    assert.doesNotMatch(plain.summary, /full-screen/);
  }, { toolsets: ["inspect", "manage", "execute", "teardown"] });
});

Deno.test("clear_pane of the screen alone clears it for good: its lines do not move into the scrollback", async () => {
  await withTmux(async (t, c) => {
    // tmux 3.3 scrolls a cleared screen into the history (scroll-on-clear, on by default):
    // capture_pane, search_panes and a person scrolling up would still read it.
    const p = await t.showing("sh -c 'echo SECRET-ON-SCREEN; exec sh'", "SECRET-ON-SCREEN");
    const own = (pane: string) => t.tmux("show-options", "-pqv", "-t", pane, "scroll-on-clear");
    // A person looks at another session, scrolled back in copy mode: clearing touches none of it.
    await t.tmux("new-session", "-d", "-s", "home", "sh -c 'seq 1 100; exec sh'");
    const tty = await t.attach("home");
    // Scrolled back only once there is history to scroll into (the lines printed).
    await waitFor(
      async () =>
        Number(await t.tmux("display-message", "-p", "-t", "home:", "#{history_size}")) >= 5,
      "the other session's lines in its history",
    );
    await t.tmux("copy-mode", "-t", "home:");
    await t.tmux("send-keys", "-X", "-t", "home:", "-N", "5", "scroll-up");
    const view = async () =>
      (await t.tmux(
        "list-clients",
        "-F",
        "#{client_tty} #{session_name} #{window_id} #{pane_id} #{pane_in_mode} " +
          "#{scroll_position} #{client_width}x#{client_height}",
      )).split("\n").find((l) => l.startsWith(`${tty} `));
    const seen = await view();
    assert.match(seen ?? "", / home @\d+ %\d+ 1 5 /);

    const cleared = await c.ok<{ clearedScreen: boolean; historySize: number }>("clear_pane", {
      paneId: p,
      screen: true,
      history: false,
    });
    assert.equal(cleared.clearedScreen, true);
    assert.equal(cleared.historySize, 0, "nothing moved into the history");
    const all = await c.ok<{ text: string }>("capture_pane", { paneId: p, start: -2000, end: 23 });
    assert.doesNotMatch(all.text, /SECRET-ON-SCREEN/, "the cleared screen's text is gone");
    assert.equal(await own(p), "", "the pane is left without a value of its own, as it was");
    assert.equal((await t.tmux("show-options", "-gwv", "scroll-on-clear")).trim(), "on");
    assert.equal(await view(), seen, "the person's view is as it was");

    // A pane's own value, on, is put back as it was; the history it already had stays.
    await t.tmux("set-option", "-p", "-t", p, "scroll-on-clear", "on");
    await t.tmux("send-keys", "-t", p, "-l", "seq 1 60; echo AGAIN-$((1+1))");
    await t.tmux("send-keys", "-t", p, "Enter");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("AGAIN-2"),
      "the second screen",
    );
    const history = Number(
      (await t.tmux("display-message", "-p", "-t", p, "#{history_size}")).trim(),
    );
    assert.ok(history > 0);
    const again = await c.ok<{ historySize: number }>("clear_pane", { paneId: p, history: false });
    assert.equal(again.historySize, history, "the history is as long as before the clear");
    assert.doesNotMatch(
      await t.tmux("capture-pane", "-p", "-S", "-", "-E", "-", "-t", p),
      /AGAIN-2/,
    );
    assert.equal((await own(p)).trim(), "on");
    assert.equal(await view(), seen, "the person's view is as it was");
  }, { toolsets: ["inspect", "manage", "execute", "teardown"] });
});

Deno.test("clear_pane of the screen alone keeps a pane's scroll-on-clear set between its read and its act", async () => {
  await withTmux(async (t, c) => {
    const p = await t.showing("sh -c 'echo SECRET-ON-SCREEN; exec sh'", "SECRET-ON-SCREEN");
    // Someone gives the pane a value of its own right after clear_pane read it (none then).
    await t.tmux(
      "set-hook",
      "-g",
      "after-show-options",
      // (Not after the read of command-alias every call makes first: command_aliases.ts.)
      "if-shell -F '#{m:*command-alias*,#{hook_arguments}}' '' " +
        `'set-option -p -t ${p} scroll-on-clear on ; set-hook -gu after-show-options'`,
    );
    await c.ok("clear_pane", { paneId: p, history: false });
    assert.equal(
      (await t.tmux("show-options", "-pqv", "-t", p, "scroll-on-clear")).trim(),
      "on",
      "the value it held at the clear stays",
    );
    assert.doesNotMatch(
      await t.tmux("capture-pane", "-p", "-S", "-", "-E", "-", "-t", p),
      /SECRET-ON-SCREEN/,
    );
  }, { toolsets: ["inspect", "manage", "execute", "teardown"] });
});

// The clear of the screen alone turns the pane's scroll-on-clear off on its step's own line
// and puts the pane's own value back on it (screen_clear.ts): a person's slow after-set-option
// hook holds that line after the turn-off, and the call may end there. (The hook runs after
// every set-option of the line; it waits once the pane's value is off, after the mark that
// goes before the turn-off.)
for (
  const [how, before] of [["SIGTERM", ""], ["stdin EOF", "on"], ["cancelled", ""]] as const
) {
  Deno.test(`clear_pane of the screen alone, held after scroll-on-clear off by a person's hook, the call ended (${how}): the pane's own value is put back`, async () => {
    const t = await TestTmux.start();
    const gate = await HookGate.make();
    const { cmd, args } = startCommand();
    const s = new StdioServer(cmd, [
      ...args,
      "--socket",
      t.socket,
      "--toolsets",
      "inspect,manage,execute,teardown",
    ], cleanEnv());
    try {
      const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
      const own = async () =>
        (await t.tmux("show-options", "-pqv", "-t", p, "scroll-on-clear")).trim();
      if (before !== "") await t.tmux("set-option", "-p", "-t", p, "scroll-on-clear", before);
      await s.initialize(); // request 1
      // Warm the control connection so that the step goes over it, as it usually does.
      await s.callTool("list_panes"); // request 2
      await t.tmux(
        "set-hook",
        "-g",
        "after-set-option",
        `if-shell -F -t ${p} '#{==:#{scroll-on-clear},0}' "${gate.command}"`,
      );
      s.callTool("clear_pane", { paneId: p, screen: true, history: false }).catch(() => {}); // 3
      await waitFor(() => gate.began(), "the clear's step to be held");
      assert.equal(await own(), "off", "held after the turn-off");
      if (how === "SIGTERM") s.child.kill("SIGTERM");
      else if (how === "stdin EOF") await s.closeStdin();
      else {
        await s.notify("notifications/cancelled", { requestId: 3, reason: "test" });
        // Put back by the call itself, while the person's hook still holds the line.
        await waitFor(async () => await own() === before, "the cancelled call's undo");
        // The next call waits behind that line until its deadline gives the control client
        // up, and then is answered (a read is run again), not refused with a timeout.
        const listed = await s.callTool("list_panes"); // 4
        assert.notEqual(listed.isError, true, JSON.stringify(listed));
        await s.closeStdin();
      }
      await s.child.status;
      assert.equal(await own(), before, "the pane's own scroll-on-clear, the process gone");
      await gate.open();
      await t.tmux("set-hook", "-gu", "after-set-option");
      assert.equal(await own(), before, "the pane's own scroll-on-clear, the hook let go");
      assert.equal(
        (await t.tmux("show-options", "-pqv", "-t", p, "@tmux-mcp-scroll-on-clear")).trim(),
        "",
        "the step's mark, taken away with it",
      );
    } finally {
      await gate.open();
      await s.kill();
      await t.kill();
      await gate.remove();
    }
  });
}

Deno.test("a person who comes to a pane right after the check stops its kill or clear (one step in tmux)", async () => {
  await withTmux(async (t, c) => {
    // The person starts on another session; a hook takes them to the target the moment the
    // guard has read, once.
    await t.tmux("new-session", "-d", "-s", "home", "sh");
    const tty = await t.attach("home");
    const arm = async (target: string) => {
      await t.tmux("switch-client", "-c", tty, "-t", "home");
      await t.onceAfterGuardRead(`switch-client -c ${tty} -t ${target}`);
    };
    const work = await newPane(t, "new-session", "-d", "-s", "work");
    await t.tmux("send-keys", "-t", work, "echo KEEP-THIS-SCREEN", "Enter");
    // On the screen before the calls: the check after them tells a clear from a late echo.
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", work)).includes("KEEP-THIS-SCREEN"),
      "the text to keep on the screen",
    );
    const cases: [string, Record<string, unknown>][] = [
      ["kill_pane", { paneId: work }],
      ["kill_window", {
        windowId: (await t.tmux("display-message", "-p", "-t", work, "#{window_id}")).trim(),
      }],
      ["kill_session", { session: "work" }],
      ["clear_pane", { paneId: work }],
    ];
    for (const [tool, args] of cases) {
      await arm(work);
      const text = await c.fail(tool, args);
      assert.match(text, /was not done: a person's client came to show it at that moment/, tool);
      assert.ok((await ids(t, "panes")).includes(work), `${tool}: the pane is still there`);
    }
    assert.match(await t.tmux("capture-pane", "-p", "-t", work), /KEEP-THIS-SCREEN/);
    await t.tmux("set-hook", "-gu", "after-list-clients");
    // force still does it.
    await t.tmux("switch-client", "-c", tty, "-t", "home");
    await c.ok("kill_pane", { paneId: work, force: true });
    assert.ok(!(await ids(t, "panes")).includes(work));
  });
});

Deno.test("a pane moved in after the check: the caller's own stops the kill, another is reported", async () => {
  await withTmux(async (t, c) => {
    // Once, right after the guard's read.
    const once = (command: string) => t.onceAfterGuardRead(command);
    // The MCP server's own pane, in a window of two (so its window outlives the move).
    const facts = await t.facts();
    const own = (await t.tmux("new-session", "-d", "-s", "agent", "-P", "-F", "#{pane_id}"))
      .trim();
    await t.tmux("split-window", "-d", "-t", own);
    const caller = await connect({
      socketName: t.socket,
      callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: own },
    });
    try {
      const [window, pane] = (await t.tmux(
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{window_id} #{pane_id}",
        "sleep 1000",
      )).trim().split(" ");
      await once(`join-pane -d -s ${own} -t ${pane}`);
      assert.match(
        await caller.fail("kill_window", { windowId: window }),
        new RegExp(`contains ${own}, the pane this MCP server runs in`),
      );
      const panes = await ids(t, "panes");
      assert.ok(panes.includes(own) && panes.includes(pane), "nothing was killed");
    } finally {
      await t.tmux("set-hook", "-gu", "after-list-clients").catch(() => {});
      await caller.close();
    }

    // Anyone else's pane moved in goes with the window: the reply names it.
    const [window, pane] = (await t.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "sleep 1000",
    )).trim().split(" ");
    const [other, otherWindow] = (await t.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id} #{window_id}",
      "sleep 1000",
    )).trim().split(" ");
    await once(`join-pane -d -s ${other} -t ${pane}`);
    const r = await c.ok<Removed>("kill_window", { windowId: window });
    assert.deepEqual(r.removed.panes.toSorted(), [pane, other].toSorted());
    // The move itself closed the other's window; the kill took the one it named.
    assert.deepEqual(r.removed.windows, [window]);
    assert.ok(!(await ids(t, "windows")).includes(otherWindow));
    assert.ok(!(await ids(t, "panes")).includes(other));
  });
});

// ---------------------------------------------------------------------------------------------
// A window linked twice into a session that holds nothing else (tmux/tmux#5243)

/** The pid of the server on the test socket, or null when nothing answers there. */
async function serverPid(t: TestTmux): Promise<number | null> {
  const r = await t.tmuxRaw("display-message", "-p", "-t", "keep", "#{pid}");
  return r.code === 0 ? Number(r.stdout.trim()) : null;
}

/** {@link linkedTwice}, and the server's pid. */
async function linkedTwiceAt(
  t: TestTmux,
): Promise<{ windowId: string; paneId: string; sessionId: string; pid: number }> {
  return { ...await linkedTwice(t), pid: (await serverPid(t))! };
}

for (const tool of ["kill_window", "kill_pane"] as const) {
  Deno.test(`${tool} of a window linked twice into its only session keeps tmux alive and reports what went`, async () => {
    await withTmux(async (t, c) => {
      const { windowId, paneId, sessionId, pid } = await linkedTwiceAt(t);
      // Any read: this server's control client is attached from here on (the crash needs one).
      await c.ok("list_panes", {});
      const r = await c.ok<Removed>(
        tool,
        tool === "kill_window" ? { windowId } : { paneId },
      );
      assert.equal(await serverPid(t), pid, `${tool} took the tmux server down`);
      assert.deepEqual(r.removed, {
        panes: [paneId],
        windows: [windowId],
        sessions: [{ id: sessionId, name: "scratch" }],
      });
      assert.equal(r.serverStopped, false);
      assert.ok((await ids(t, "sessions")).length === 2, "main and keep are still there");
    }, { toolsets: ["inspect", "manage", "teardown"] });
  });
}

Deno.test("kill_window of a window linked twice into a session and once elsewhere takes it from both", async () => {
  await withTmux(async (t, c) => {
    const { windowId, paneId, sessionId, pid } = await linkedTwiceAt(t);
    // Also in main, beside main's own window: main lives on.
    await t.tmux("link-window", "-d", "-s", windowId, "-t", "main:4");
    // The person went to the second link and back: tmux's last-window stack holds it, and
    // tmux, ending the first link (the current one), would make it current.
    await t.tmux("select-window", "-t", "scratch:1");
    await t.tmux("select-window", "-t", "scratch:0");
    await c.ok("list_panes", {});
    const r = await c.ok<Removed>("kill_window", { windowId });
    assert.equal(await serverPid(t), pid);
    assert.deepEqual(r.removed, {
      panes: [paneId],
      windows: [windowId],
      sessions: [{ id: sessionId, name: "scratch" }],
    });
    const keepWindow = (await t.tmux("display-message", "-p", "-t", "keep", "#{window_id}"))
      .trim();
    assert.deepEqual(
      (await ids(t, "windows")).toSorted(),
      [t.ids.windowId, keepWindow].toSorted(),
    );
  }, { toolsets: ["inspect", "manage", "teardown"] });
});

Deno.test("kill_window in a session group linked twice: done when its sessions show one link, refused when they differ", async () => {
  await withTmux(async (t, c) => {
    const { windowId, paneId, pid } = await linkedTwiceAt(t);
    await t.tmux("new-session", "-d", "-t", "scratch", "-s", "twin");
    await t.tmux("select-window", "-t", "twin:1");
    await c.ok("list_panes", {});
    // Any one step that ends the window changes one of the two sessions' current window.
    assert.match(
      await c.fail("kill_window", { windowId }),
      /was not done: tmux 3\.3a crashes.*show different links of it/,
    );
    assert.ok((await ids(t, "panes")).includes(paneId), "nothing was killed");
    assert.equal(
      await t.tmux("list-windows", "-t", "scratch", "-F", "#{window_index}"),
      "0\n1\n",
      "nothing was unlinked",
    );
    await t.tmux("select-window", "-t", "twin:0");
    const r = await c.ok<Removed>("kill_pane", { paneId });
    assert.equal(await serverPid(t), pid);
    assert.deepEqual(r.removed.windows, [windowId]);
    assert.deepEqual(r.removed.sessions.map((s) => s.name).toSorted(), ["scratch", "twin"]);
  }, { toolsets: ["inspect", "manage", "teardown"] });
});

Deno.test("a second link made between the read and the kill stops it (tmux checks at the act)", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("new-session", "-d", "-s", "keep", "sleep 1000");
    const pid = (await serverPid(t))!;
    const [windowId, paneId] = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "solo",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "sleep 1000",
    )).trim().split(" ");
    await c.ok("list_panes", {});
    for (
      const [tool, args] of [["kill_window", { windowId }], ["kill_pane", { paneId }]] as const
    ) {
      await t.onceAfterGuardRead(`link-window -d -s ${windowId} -t solo:1`);
      assert.match(
        await c.fail(tool, args),
        new RegExp(`was not done: window ${windowId}'s links or panes changed`),
        tool,
      );
      assert.equal(await serverPid(t), pid, `${tool} took the tmux server down`);
      assert.ok((await ids(t, "panes")).includes(paneId), `${tool}: nothing was killed`);
      await t.tmux("unlink-window", "-t", "solo:1");
    }
    // Called again, it reads the links as they are and goes ahead.
    await t.tmux("link-window", "-d", "-s", windowId, "-t", "solo:1");
    const r = await c.ok<Removed>("kill_pane", { paneId });
    assert.deepEqual(r.removed.windows, [windowId]);
    assert.equal(await serverPid(t), pid);
  }, { toolsets: ["inspect", "manage", "teardown"] });
});

Deno.test("kill_pane of a pane that is not its window's last leaves a window linked twice as it is", async () => {
  await withTmux(async (t, c) => {
    const { windowId, pid } = await linkedTwiceAt(t);
    const other = await newPane(t, "split-window", "-d", "-t", windowId);
    const r = await c.ok<Removed>("kill_pane", { paneId: other });
    assert.deepEqual(r.removed, { panes: [other], windows: [], sessions: [] });
    assert.equal(await serverPid(t), pid);
    assert.equal(
      await t.tmux("list-windows", "-t", "scratch", "-F", "#{window_index} #{window_id}"),
      `0 ${windowId}\n1 ${windowId}\n`,
      "both links are still there",
    );
  }, { toolsets: ["inspect", "manage", "teardown"] });
});

// ---------------------------------------------------------------------------------------------
// A notice tmux still owes this server's control client (tmux/tmux#5243)

// A person's (or a status-line plugin's) hook on session-window-changed that runs a shell
// command holds tmux's global command queue, where tmux also keeps the notices it owes control
// clients. select_window is answered, but its %session-window-changed is still owed; had
// kill_session ended that session meanwhile, tmux 3.3a would write it for a session with no
// current window and die, with every session of the person. Only a control client is written
// to, and this server's is attached: the kill waits for the notice, and is refused while the
// hook goes on.
Deno.test("select_window then kill_session while a person's session-window-changed hook runs keep tmux alive", async () => {
  const gate = await HookGate.make();
  try {
    await withTmux(async (t, c) => {
      await t.tmux("new-session", "-d", "-s", "v");
      const second = (await t.tmux("new-window", "-d", "-t", "=v:", "-P", "-F", "#{window_id}"))
        .trim();
      const first = (await t.tmux("display-message", "-p", "-t", "=v:0", "#{window_id}")).trim();
      const pid = (await serverPid(t))!;
      // The person's hook: a shell command, then a count of its runs.
      await t.tmux(
        "set-hook",
        "-g",
        "session-window-changed",
        `${gate.command} ; set-option -ga @changes x`,
      );
      await c.ok("list_panes", {});
      await c.ok("select_window", { windowId: second });
      await waitFor(() => gate.began(), "the person's hook to run");
      await c.ok("select_window", { windowId: first });
      // The notice of the second change is still owed while the hook runs: refused.
      assert.match(await c.fail("kill_session", { session: "v" }), /tmux\/tmux#5243/);
      await gate.open();
      // Both changes told (the hook ran twice), or the server gone.
      await waitFor(async () => {
        const r = await t.tmuxRaw("show-options", "-gqv", "@changes");
        return r.code !== 0 || r.stdout.trim() === "xx";
      }, "the person's hook to run for both changes");
      assert.equal(await serverPid(t), pid, "the tmux server died");
      // Told: the kill goes through.
      await c.ok<Removed>("kill_session", { session: "v" });
      assert.equal(await serverPid(t), pid, "the tmux server died");
    });
  } finally {
    await gate.remove();
  }
});

// tmux 3.3a also changes a session's current window without telling its control clients
// (swap-window, new-window -k): here a person's hook that keeps new windows first, run inside
// create_window. The notice counted as owed never comes; the kill is refused once (the hook
// cannot be told from a slow one), saying the next call goes ahead, and it does.
Deno.test("a current-window change tmux never tells of refuses one kill, not every later one", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("new-session", "-d", "-s", "v", "sleep 1000");
    await t.tmux("new-window", "-d", "-t", "=v:", "sleep 1000");
    await t.tmux("set-hook", "-g", "after-new-window", "swap-window -s :0 -t :1");
    await c.ok("list_panes", {});
    const before = (await t.tmux("display-message", "-p", "-t", "=v:", "#{window_id}")).trim();
    const made = await c.ok<{ windowId: string }>("create_window", { session: "v" });
    const after = (await t.tmux("display-message", "-p", "-t", "=v:", "#{window_id}")).trim();
    assert.notEqual(after, before, "the hook changed v's current window");
    await t.tmux("set-hook", "-gu", "after-new-window");
    const refused = await c.call("kill_window", { windowId: made.windowId });
    if (refused.isError) {
      const text = refused.content?.[0]?.type === "text" ? refused.content[0].text : "";
      assert.match(text, /Calling again goes ahead/, text);
      assert.doesNotMatch(text, /^tmux refused/, text);
      await c.ok("kill_window", { windowId: made.windowId });
    }
    assert.ok(!(await t.tmux("list-windows", "-a", "-F", "#{window_id}")).includes(made.windowId));
  }, { toolsets: ["inspect", "manage", "execute", "teardown"] });
});

Deno.test("a person's after-kill-pane hook that names no target runs on the window tmux calls current, theirs (README)", async () => {
  await withTmux(async (t, c) => {
    // The agent works in a session of its own; the person, who attached last (their session is
    // the one tmux last saw used), looks at a zoomed pane of two in "main".
    const keep = await newPane(t, "new-session", "-d", "-s", "agent");
    const doomed = await newPane(t, "split-window", "-d", "-t", keep);
    await t.tmux("split-window", "-d", "-t", t.ids.paneId, "sh");
    await t.tmux("resize-pane", "-Z", "-t", t.ids.paneId);
    await c.ok("list_panes", {}); // the server's control client attaches: an attach is a use
    await t.attach("main");
    const zoomed = async () =>
      (await t.tmux("display-message", "-p", "-t", t.ids.windowId, "#{window_zoomed_flag}"))
        .trim();
    assert.equal(await zoomed(), "1");

    // Without the hook the kill leaves the person's zoom alone.
    await c.ok("kill_pane", { paneId: doomed });
    assert.equal(await zoomed(), "1");

    // With it, tmux finds no pane left of the kill's target and runs the hook on the current
    // window of the session it last saw used: the one the person looks at, which it unzooms.
    await t.tmux("set-hook", "-g", "after-kill-pane", "select-layout -E");
    const again = await newPane(t, "split-window", "-d", "-t", keep);
    const r = await summaryOf(c, "kill_pane", { paneId: again });
    assert.match(r.summary, /^Removed 1 pane, 0 windows, 0 sessions\.$/);
    assert.equal(await zoomed(), "0", "the person's hook acted on their window");
  }, { toolsets: ["teardown", "inspect"] });
});
