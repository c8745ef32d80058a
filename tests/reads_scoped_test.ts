/**
 * A tool acting on one pane or window reads that pane or window, not the whole server: tmux
 * formats every field of every pane it lists (and looks up each one's process), so at a few
 * hundred panes a whole read is most of a call. And the commands a tool sends travel over the
 * control connection, not in a tmux process started for each (a few milliseconds apiece), except
 * what must not: a blocking wait, a kill, a creation (see `created` in creating.ts).
 */

import assert from "node:assert/strict";
import { TmuxContext } from "../src/mcp/context.ts";
import { MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { SESSIONS_ONLY, WINDOWS_ONLY } from "../src/tmux/snapshot.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { RecordingRunner, TestTmux } from "./helpers/tmux.ts";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

/** A server with three windows besides the first, two panes each, and a client on it. */
async function withBusyServer(
  control: boolean,
  fn: (t: Started, c: TestClient, runner: RecordingRunner, others: string[]) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start("scoped");
  const runner = new RecordingRunner({ control });
  let c: TestClient | undefined;
  try {
    const others: string[] = [];
    for (let i = 0; i < 3; i++) {
      const pane = (await t.tmux("new-window", "-d", "-t", "scoped:", "-P", "-F", "#{pane_id}"))
        .trim();
      others.push(
        pane,
        (await t.tmux("split-window", "-d", "-t", pane, "-P", "-F", "#{pane_id}")).trim(),
      );
    }
    c = await connect({ socketName: t.socket, runner });
    await fn(t, c, runner, others);
  } finally {
    await c?.close();
    await t.kill();
  }
}

/** Every listing among `argvs` that makes tmux go through every pane or window of the server. */
function wholeReads(argvs: readonly string[][]): string[] {
  return argvs.flatMap((argv) =>
    argv.flatMap((arg, i) =>
      (arg === "list-panes" && argv[i + 1] === "-a") ||
        (arg === "list-windows" && argv[i + 1] === "-a" && argv[i + 2] !== "-f")
        ? [argv.slice(i, i + 3).join(" ")]
        : []
    )
  );
}

Deno.test("tools acting on one pane or window read only it, and answer as before", async () => {
  await withBusyServer(false, async (t, c, runner, others) => {
    const pane = t.ids.paneId;
    const window = t.ids.windowId;
    const calls: [string, Record<string, unknown>, (r: Record<string, unknown>) => void][] = [
      ["select_pane", { paneId: pane }, (r) => assert.equal(r.active, true)],
      ["resize_pane", { paneId: pane, zoom: false }, (r) => assert.equal(r.zoomed, false)],
      [
        "set_pane_title",
        { paneId: pane, title: "scoped; #t 🙂" },
        (r) => assert.equal(r.title, "scoped; #t 🙂"),
      ],
      ["enter_copy_mode", { paneId: pane }, (r) => assert.equal(r.mode, "copy-mode")],
      ["exit_copy_mode", { paneId: pane }, (r) => assert.equal(r.left, "copy-mode")],
      ["get_pane_info", { paneId: pane }, (r) => assert.equal(r.command, "sh")],
      ["snapshot_pane", { paneId: pane }, (r) => assert.equal(r.command, "sh")],
      [
        "get_window_info",
        { windowId: window },
        (r) => assert.deepEqual((r.panes as { id: string }[]).map((p) => p.id), [pane]),
      ],
      [
        "find_pane_by_position",
        { windowId: window, position: "top-left" },
        (r) => assert.equal(r.id, pane),
      ],
      [
        "select_layout",
        { windowId: window, layout: "tiled" },
        (r) => assert.equal(r.windowId, window),
      ],
      [
        "set_synchronize_panes",
        { windowId: window, enabled: false },
        (r) => assert.equal(r.synchronized, false),
      ],
      [
        "rename_window",
        { windowId: window, name: "scoped win" },
        (r) => assert.equal(r.name, "scoped win"),
      ],
      [
        "show_option",
        { scope: "pane", target: pane, name: "remain-on-exit" },
        (r) => assert.equal(r.targetId, pane),
      ],
      ["clear_pane", { paneId: pane }, (r) => assert.equal(r.clearedHistory, true)],
      [
        "wait_for_text",
        { paneId: pane, patterns: ["never printed"], timeoutMs: 100 },
        (r) => assert.equal(r.outcome, "timedOut"),
      ],
      ["select_window", { windowId: window }, (r) => assert.equal(r.active, true)],
      ["resize_window", { windowId: window, zoom: false }, (r) => assert.equal(r.zoomed, false)],
      [
        "display_message",
        { target: window, format: "#{window_id}" },
        (r) => assert.equal(r.text, window),
      ],
    ];
    for (const [name, args, check] of calls) {
      runner.started.length = 0;
      check(await c.ok(name, args));
      assert.deepEqual(wholeReads(runner.started), [], `${name} read the whole server`);
    }
    // A pane that does not exist is still refused naming those that do.
    const missing = await c.fail("select_pane", { paneId: "%999" });
    assert.match(missing, /No pane %999/);
    assert.ok(others.every((p) => missing.includes(p)), missing);
    // And a window that does not exist, whether its panes are read or not.
    for (
      const [name, args] of [
        ["get_window_info", { windowId: "@999" }],
        ["rename_window", { windowId: "@999", name: "x" }],
      ] as const
    ) {
      assert.match(await c.fail(name, args), /No window @999 .*list_windows/, name);
    }
  });
});

Deno.test("commands travel over the control connection; waits and creations start tmux", async () => {
  await withBusyServer(true, async (t, c, runner) => {
    const pane = t.ids.paneId;
    const window = t.ids.windowId;
    await c.ok("list_panes");
    runner.started.length = 0;
    await c.ok("rename_window", { windowId: window, name: "over control" });
    await c.ok("set_pane_title", { paneId: pane, title: "over control" });
    await c.ok("select_pane", { paneId: pane });
    await c.ok("set_option", { scope: "window", target: window, name: "@scoped", value: "x" });
    await c.ok("show_options", { scope: "window", target: window });
    await c.ok("set_environment", { name: "SCOPED", value: "1" });
    await c.ok("clear_pane", { paneId: pane });
    await c.ok("signal_channel", { channel: "scoped" });
    assert.equal(runner.started.length, 0, `tmux processes started: ${runner.started}`);
    // A channel wait blocks its client: it has a process of its own.
    await c.ok("wait_for_channel", { channel: "scoped", timeoutMs: 5_000 });
    // (Inside an if-shell that checks tmux is the server the call read.)
    assert.equal(runner.started.length, 1, `tmux processes started: ${runner.started}`);
    assert.ok(
      runner.started[0].some((a) => a.includes("'wait-for' '--' 'scoped'")),
      `the wait in its own process: ${runner.started[0].join(" ")}`,
    );
    // Without -c tmux starts a window in the asking client's directory; a control client's is
    // its session's, not this server's. (In an if-shell that checks it is the server read.)
    runner.started.length = 0;
    await c.ok("create_window", { session: t.ids.sessionId });
    assert.deepEqual(runner.started.map((a) => a.some((w) => /\bnew-window\b/.test(w))), [true]);
  });
});

Deno.test("a lookup in a list the snapshot did not read is a programming error, not a refusal", async () => {
  const t = await TestTmux.start("unread");
  const runner = new TmuxRunner();
  try {
    const ctx = new TmuxContext(
      runner,
      { address: { socketName: t.socket }, callerEnv: {}, maxResultBytes: MAX_RESULT_BYTES },
      undefined,
      new AbortController().signal,
      () => Promise.resolve(),
    );
    const sessionsOnly = await ctx.snapshot(SESSIONS_ONLY);
    assert.throws(() => ctx.window(sessionsOnly, t.ids.windowId), /^Error: internal: /);
    assert.throws(() => ctx.pane(sessionsOnly, t.ids.paneId), /^Error: internal: /);
    assert.equal(ctx.session(sessionsOnly, "unread").id, t.ids.sessionId);
    const windowsOnly = await ctx.snapshot(WINDOWS_ONLY);
    assert.throws(() => ctx.session(windowsOnly, "unread"), /internal/);
    // One pane read: that pane is found, any other is not known to be missing.
    const { snapshot, pane } = await ctx.paneSnapshot(t.ids.paneId);
    assert.equal(pane.id, t.ids.paneId);
    assert.equal(ctx.pane(snapshot, t.ids.paneId), pane);
    assert.throws(() => ctx.pane(snapshot, "%999"), /internal/);
    // A whole read refuses a missing pane as the tool's answer.
    await assert.rejects(ctx.paneSnapshot("%999"), {
      name: "ToolFailure",
      message: /No pane %999/,
    });
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("a pane or window in several sessions is read with every placement", async () => {
  const t = await TestTmux.start("first");
  const runner = new RecordingRunner({ control: false });
  let c: TestClient | undefined;
  try {
    // A session group shares its windows: tmux says window_linked 0 for them, yet each is
    // listed once per session of the group.
    await t.tmux("new-session", "-d", "-t", "first", "-s", "grouped");
    const [windowId, paneId] = (await t.tmux(
      "new-window",
      "-d",
      "-t",
      "first:",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
    )).trim().split(" ");
    await t.tmux("new-session", "-d", "-s", "other");
    await t.tmux("link-window", "-d", "-s", windowId, "-t", "other:");
    c = await connect({ socketName: t.socket, runner });
    type Placed = { placements: { sessionName: string }[] };
    const names = (r: Placed) => r.placements.map((p) => p.sessionName).sort();
    assert.deepEqual(names(await c.ok<Placed>("get_pane_info", { paneId: t.ids.paneId })), [
      "first",
      "grouped",
    ]);
    runner.started.length = 0;
    assert.deepEqual(names(await c.ok<Placed>("get_pane_info", { paneId })), [
      "first",
      "grouped",
      "other",
    ]);
    // Read targeted first, then again across the server for the placements.
    const panes = runner.started.flatMap((a) => a.filter((_, i) => a[i - 1] === "list-panes"));
    assert.deepEqual(panes, ["-t", "-a"]);
    assert.deepEqual(names(await c.ok<Placed>("get_window_info", { windowId })), [
      "first",
      "grouped",
      "other",
    ]);
  } finally {
    await c?.close();
    await t.kill();
  }
});

Deno.test("list_panes of one session reads that session's panes, every placement kept", async () => {
  await withBusyServer(false, async (t, c, runner, others) => {
    const other = await t.tmux("new-session", "-d", "-s", "other s", "-P", "-F", "#{pane_id}");
    const listed = async (session: string) => {
      runner.started.length = 0;
      const r = await c.ok<{ panes: { id: string; placements: { sessionName: string }[] }[] }>(
        "list_panes",
        { session },
      );
      return r.panes;
    };
    const mine = await listed("scoped");
    assert.deepEqual(mine.map((p) => p.id).sort(), [t.ids.paneId, ...others].sort());
    assert.deepEqual(wholeReads(runner.started), [], "read every pane of the server");
    // By id, the same panes; a session id that names none is refused as a name is.
    assert.deepEqual(
      (await listed(t.ids.sessionId)).map((p) => p.id).sort(),
      mine.map((p) => p.id).sort(),
    );
    assert.match(await c.fail("list_panes", { session: "$99" }), /No session "\$99"/);
    assert.deepEqual((await listed("other s")).map((p) => p.id), [other.trim()]);
    // A window of "scoped" linked into "other s" too: its panes are listed for both, with both
    // placements (the read goes across the server to find them).
    const linked = (await t.tmux("display-message", "-p", "-t", others[0], "#{window_id}")).trim();
    await t.tmux("link-window", "-d", "-s", linked, "-t", "other s:");
    const again = await listed("other s");
    assert.deepEqual(again.map((p) => p.id).sort(), [other.trim(), others[0], others[1]].sort());
    const shared = again.find((p) => p.id === others[0])!;
    assert.deepEqual(shared.placements.map((p) => p.sessionName).sort(), ["other s", "scoped"]);
    assert.match(await c.fail("list_panes", { session: "nope" }), /No session "nope"/);
  });
});
