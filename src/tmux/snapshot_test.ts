import assert from "node:assert/strict";
import { TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { TmuxRunner } from "./run.ts";
import {
  findSession,
  type PaneBrief,
  type PaneRow,
  takeBriefSnapshot,
  takeSnapshot,
} from "./snapshot.ts";
import { takePanePlaces, takeProcessInfo } from "./pane_reads.ts";
import { escapeFormat, escapeTrailingSemicolon } from "./format.ts";
import { prng } from "../../tests/helpers/prng.ts";

/**
 * What tmux stores for a session name: it escapes backslashes (and control characters, which
 * these tests avoid) itself, the way it does for window names.
 */
function sessionSafe(name: string): string {
  return name.replaceAll("\t", " ").replaceAll("\\", "\\\\");
}

/**
 * Waits until every pane runs its own program in its own directory. Just made, a pane shows
 * for a moment no directory (tmux does not see its process group yet, and names the command it
 * was given instead), then tmux's own name and directory (the process before its exec): two
 * reads a moment apart could disagree on both.
 */
/**
 * Every pane runs what it will keep running, in its directory. This file's panes run sh (the
 * default-command) or sleep; on the way, a pane shows tmux (before its exec) and then the
 * default-shell that runs the command (`bash -c /bin/sh` before bash execs sh): two reads a
 * moment apart may both see one of those on a loaded machine, so "settled" is the final name.
 */
async function panesSettled(t: TestTmux): Promise<void> {
  await waitFor(
    async () =>
      (await t.tmux("list-panes", "-a", "-F", "#{pane_current_command}\t#{?pane_current_path,in,}"))
        .trim().split("\n").every((l) => l === "sh\tin" || l === "sleep\tin"),
    "every pane's program and directory",
  );
}

const NASTY = [
  "has spaces",
  "tab\there",
  "semi;colon;",
  "hash #{pane_id} #(touch /tmp/tmux-mcp-snapshot-marker)",
  `quotes ' " \` and \\ backslash`,
  "emoji 🙂 日本語 e\u0301",
];

Deno.test("snapshot: one invocation reads everything; odd values come back exactly", async () => {
  await Deno.remove("/tmp/tmux-mcp-snapshot-marker").catch(() => {});
  const t = await TestTmux.start("plain");
  const runner = new TmuxRunner();
  const dir = `${await Deno.makeTempDir({ prefix: "tmux-mcp-" })}/dir\twith\nnewline ;#{x}`;
  await Deno.mkdir(dir);
  try {
    const addr = { socketName: t.socket };
    for (const [i, name] of NASTY.entries()) {
      // Session names: tmux rewrites . and : (none here). Titles: no control characters.
      // new-session -s expands formats too: # must be doubled or #(...) would run.
      const sessionName = `s${i} ${name.replaceAll("\t", " ")}`;
      const sessionId = (await t.tmux(
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{session_id}",
        "-s",
        escapeTrailingSemicolon(escapeFormat(sessionName)),
      )).trim();
      const paneId = (await t.tmux(
        "new-window",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        sessionId,
        "-c",
        escapeFormat(dir),
      ))
        .trim();
      await t.tmux(
        "select-pane",
        "-t",
        paneId,
        "-T",
        escapeTrailingSemicolon(escapeFormat(name.replaceAll("\t", " "))),
      );
    }
    // A pane is in its directory once its shell runs (the last one made may not be yet).
    await panesSettled(t);
    const snap = await takeSnapshot(runner, addr);
    assert.equal(snap.running, true);
    assert.ok(snap.server && snap.server.pid > 0 && snap.server.socketPath.endsWith(t.socket));
    assert.equal(snap.sessions.length, NASTY.length + 1);
    for (const name of NASTY) {
      const sessionName = sessionSafe(name);
      assert.ok(
        snap.sessions.some((s) => s.name.endsWith(sessionName)),
        `session ${JSON.stringify(sessionName)} in ${
          JSON.stringify(snap.sessions.map((s) => s.name))
        }`,
      );
      assert.ok(
        snap.panes.some((p) => p.title === name.replaceAll("\t", " ")),
        `title ${JSON.stringify(name)}`,
      );
    }
    // Paths hold raw tabs and newlines: framing must survive them.
    const inDir = snap.panes.filter((p) => p.cwd === dir);
    assert.equal(inDir.length, NASTY.length);
    assert.equal(await exists("/tmp/tmux-mcp-snapshot-marker"), false);
  } finally {
    await runner.close();
    await t.kill();
    await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true });
  }
});

Deno.test("snapshot: window names keep tmux's own escaping and invalid UTF-8 is shown, not dropped", async () => {
  const t = await TestTmux.start();
  const runner = new TmuxRunner();
  try {
    // A path with an invalid UTF-8 byte: the pane's cwd carries it raw.
    const base = await Deno.makeTempDir({ prefix: "tmux-mcp-bytes-" });
    const bad = new Uint8Array([...new TextEncoder().encode(`${base}/x`), 0xff, 0x79]);
    // Deno paths must be strings; make the folder through the shell in the pane instead.
    await t.tmux(
      "send-keys",
      "-t",
      t.ids.paneId,
      "-l",
      `mkdir "${base}/x$(printf '\\377')y" && cd "${base}/x$(printf '\\377')y"`,
    );
    await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
    const expected = `${base}/x\uFFFDy`;
    let cwd = "";
    await waitFor(async () => {
      cwd = (await takeSnapshot(runner, { socketName: t.socket })).panes[0].cwd;
      return cwd === expected;
    }, "the shell in the new folder").catch(() => {});
    assert.equal(cwd, expected);
    assert.equal(bad.length > 0, true);
    await t.tmux("rename-window", "-t", t.ids.windowId, "line\nbreak\ttab");
    const snap = await takeSnapshot(runner, { socketName: t.socket });
    // tmux itself stores window names with control characters escaped (\n, \t).
    assert.equal(snap.windows[0].name, "line\\nbreak\\ttab");
    await Deno.remove(base, { recursive: true });
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("snapshot: a linked window is listed once, with every placement", async () => {
  const t = await TestTmux.start("one");
  const runner = new TmuxRunner();
  try {
    await t.tmux("new-session", "-d", "-s", "two");
    await t.tmux("link-window", "-d", "-s", t.ids.windowId, "-t", "=two:5");
    const snap = await takeSnapshot(runner, { socketName: t.socket });
    const linked = snap.windows.filter((w) => w.id === t.ids.windowId);
    assert.equal(linked.length, 1);
    assert.deepEqual(
      linked[0].placements.map((p) => [p.sessionName, p.index]).sort(),
      [["one", 0], ["two", 5]],
    );
    const pane = snap.panes.filter((p) => p.id === t.ids.paneId);
    assert.equal(pane.length, 1);
    assert.equal(pane[0].placements.length, 2);
    // One window's panes: only theirs, each with every placement; a pane of both scopes too.
    await t.tmux("split-window", "-d", "-t", t.ids.windowId);
    // The new pane past its exec (sh, not the default-shell that starts it): the reads agree.
    await panesSettled(t);
    const brief = await takeBriefSnapshot(runner, { socketName: t.socket });
    const scoped = await takeBriefSnapshot(runner, { socketName: t.socket }, {}, {
      windowId: t.ids.windowId,
    });
    assert.ok(brief.panes.some((p) => p.windowId !== t.ids.windowId), "other panes exist");
    assert.deepEqual(scoped.panes, brief.panes.filter((p) => p.windowId === t.ids.windowId));
    assert.equal(scoped.panes.length, 2);
    assert.ok(scoped.panes.every((p) => p.placements.length === 2));
    const both = await takeBriefSnapshot(runner, { socketName: t.socket }, {}, {
      windowId: t.ids.windowId,
      paneId: t.ids.paneId,
    });
    assert.deepEqual(both.panes.map((p) => p.id), [t.ids.paneId]);
    const elsewhere = brief.panes.find((p) => p.windowId !== t.ids.windowId)!;
    const none = await takeBriefSnapshot(runner, { socketName: t.socket }, {}, {
      windowId: t.ids.windowId,
      paneId: elsewhere.id,
    });
    assert.deepEqual(none.panes, []);
    await assert.rejects(
      takeBriefSnapshot(runner, { socketName: t.socket }, {}, { windowId: "@1}#{pane_id" }),
      /not a window id/,
    );
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("snapshot: no server, and a server with no sessions", async () => {
  const runner = new TmuxRunner();
  const t = await TestTmux.start();
  try {
    const none = await takeSnapshot(runner, { socketName: `${t.socket}-nothing` });
    assert.equal(none.running, false);
    assert.deepEqual([none.sessions, none.panes, none.clients], [[], [], []]);
    await t.tmux("set-option", "-g", "exit-empty", "off");
    await t.tmux("kill-session", "-t", t.ids.sessionId);
    const empty = await takeSnapshot(runner, { socketName: t.socket });
    assert.equal(empty.running, true);
    assert.ok(empty.server);
    assert.deepEqual([empty.sessions, empty.panes], [[], []]);
  } finally {
    await runner.close();
    await t.kill();
  }
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * A new window in /tmp whose pane runs sleep, once sleep holds the terminal: until it does,
 * tmux names the shell that is about to exec it, and two reads could see different commands.
 */
async function sleepingPane(t: TestTmux, ...flags: string[]): Promise<string> {
  const pane = (await t.tmux(
    ...["new-window", "-d", ...flags, "-c", "/tmp", "-P", "-F", "#{pane_id}", "sleep 100000"],
  )).trim();
  await t.foreground(pane, "sleep");
  return pane;
}

Deno.test("snapshot: without processInfo, command and cwd are empty and the rest the same", async () => {
  const t = await TestTmux.start("plain");
  const runner = new TmuxRunner();
  try {
    const addr = { socketName: t.socket };
    await sleepingPane(t);
    const full = await takeSnapshot(runner, addr);
    const light = await takeSnapshot(runner, addr, {}, { processInfo: false });
    assert.ok(full.panes.some((p) => p.command === "sleep" && p.cwd === "/tmp"));
    assert.ok(light.panes.every((p) => p.command === "" && p.cwd === ""));
    const strip = (panes: typeof full.panes) =>
      panes.map((p) => ({ ...p, command: "", cwd: "", historySize: 0, cursorX: 0, cursorY: 0 }));
    assert.deepEqual(strip(light.panes), strip(full.panes));
    assert.deepEqual(light.clients, full.clients);
  } finally {
    await runner.close();
    await t.kill();
  }
});

/**
 * A server placed every odd way: sessions named as {@link NASTY} (the first is `t`'s), the
 * first window linked into the second session at index 7 and split, a session grouped with the
 * last, a window named with a tab and an emoji, a pane titled with a newline, the linked window
 * zoomed.
 */
async function placeOddly(t: TestTmux & { ids: { windowId: string; paneId: string } }) {
  for (const [i, name] of NASTY.slice(1).entries()) {
    const id = (await t.tmux(
      ...["new-session", "-d", "-P", "-F", "#{session_id}"],
      ...["-s", escapeTrailingSemicolon(escapeFormat(name))],
    )).trim();
    if (i === 0) await t.tmux("link-window", "-d", "-s", t.ids.windowId, "-t", `${id}:7`);
    if (i === NASTY.length - 2) {
      await t.tmux("new-session", "-d", "-t", id, "-s", "grouped");
      await t.tmux("new-window", "-d", "-t", id, "-n", "tab\there 🙂");
    }
  }
  await t.tmux("split-window", "-d", "-t", t.ids.windowId);
  await t.tmux("select-pane", "-t", t.ids.paneId, "-T", "two\nlines #{x}");
  await t.tmux("resize-pane", "-Z", "-t", t.ids.paneId);
}

Deno.test("snapshot: a brief read gives exactly the brief fields of the full one", async () => {
  const t = await TestTmux.start(NASTY[0]);
  const runner = new TmuxRunner();
  try {
    const addr = { socketName: t.socket };
    // Names stay as made: tmux's rename timer would change one between two reads.
    await t.tmux("set-option", "-gw", "automatic-rename", "off");
    await placeOddly(t);
    await sleepingPane(t, "-n", "tab\there 🙂");
    // Every pane past its exec and in its directory: the reads below are a moment apart.
    await panesSettled(t);
    const full = await takeSnapshot(runner, addr);
    // A read of every pane takes where each window sits from the windows' rows; a read of one
    // pane has it on the pane's own row: both say the same (a shell may still be drawing its
    // prompt: where its cursor is may differ).
    const steady = (p: PaneRow) => ({ ...p, cursorX: 0, cursorY: 0, historySize: 0 });
    const each = await Promise.all(
      full.panes.map(async (p) => (await takeSnapshot(runner, addr, {}, { paneId: p.id })).panes),
    );
    assert.deepEqual(each.flat().map(steady), full.panes.map(steady));
    // Every pane's places come from its window's rows: from the windows read alongside, or
    // from rows of places alone; a pane's own row has the rest.
    const brief = await takeBriefSnapshot(runner, addr);
    const alone = await takeBriefSnapshot(runner, addr, {}, { sessions: false, windows: false });
    const keys = Object.keys(brief.panes[0]).sort();
    assert.deepEqual(keys, [
      "active",
      "command",
      "cwd",
      "dead",
      "height",
      "id",
      "index",
      "pid",
      "placements",
      "title",
      "width",
      "windowId",
      "windowName",
    ]);
    const pick = (p: object) =>
      Object.fromEntries(keys.map((k) => [k, (p as Record<string, unknown>)[k]]));
    assert.equal(full.panes.length, NASTY.length + 3);
    assert.deepEqual(brief.panes.map(pick), full.panes.map(pick));
    assert.deepEqual(alone.panes.map(pick), full.panes.map(pick));
    assert.deepEqual(brief.windows, full.windows);
    assert.deepEqual(alone.windows, []);
    // What makes the read hard to get right is there: placements in three sessions.
    const linked = full.panes.filter((p) => p.windowId === t.ids.windowId);
    assert.equal(linked.length, 2);
    assert.ok(linked.every((p) => p.placements.length === 2 && p.windowZoomed));
    assert.ok(full.panes.some((p) => p.placements.length === 2 && p.windowName === "tab\there 🙂"));
    assert.ok(full.panes.some((p) => p.command === "sleep" && p.windowName === "tab\there 🙂"));
    // Light, the same but for the process.
    const light = await takeBriefSnapshot(runner, addr, {}, { windows: false, processInfo: false });
    assert.deepEqual(
      light.panes.map(pick),
      full.panes.map((p) => ({ ...pick(p), command: "", cwd: "" })),
    );
    assert.deepEqual(brief.clients, full.clients);
    assert.deepEqual(brief.server, full.server);
    // One session's panes: its windows' rows say where they sit. A window also in another
    // session sends the read back to every pane (a superset, as documented).
    const shownIn = (panes: PaneBrief[], id: string) =>
      panes.filter((p) => p.placements.some((pl) => pl.sessionId === id)).map(pick);
    for (const session of full.sessions) {
      const scoped = await takeBriefSnapshot(runner, addr, {}, {
        sessions: false,
        windows: false,
        sessionId: session.id,
      });
      const shown = shownIn(full.panes, session.id);
      assert.deepEqual(shownIn(scoped.panes, session.id), shown, session.name);
      const shared = full.panes.some((p) =>
        p.placements.length > 1 && p.placements.some((pl) => pl.sessionId === session.id)
      );
      assert.equal(scoped.panes.length, shared ? full.panes.length : shown.length, session.name);
    }
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("snapshot: pane places are exactly the ids, windows and placements of a full read", async () => {
  const t = await TestTmux.start(NASTY[0]);
  const runner = new TmuxRunner();
  try {
    const addr = { socketName: t.socket };
    await placeOddly(t);
    const full = await takeSnapshot(runner, addr);
    const places = await takePanePlaces(runner, addr);
    assert.equal(places.running, true);
    assert.deepEqual(
      places.panes,
      full.panes.map((p) => ({
        id: p.id,
        windowId: p.windowId,
        width: p.width,
        height: p.height,
        placements: p.placements,
      })),
    );
    const linked = places.panes.filter((p) => p.windowId === t.ids.windowId);
    assert.equal(linked.length, 2);
    assert.ok(linked.every((p) => p.placements.length === 2));
    // Every session (each named oddly) shows a pane, under the name tmux keeps for it.
    assert.deepEqual(
      new Set(places.panes.flatMap((p) => p.placements.map((pl) => pl.sessionName))),
      new Set(full.sessions.map((session) => session.name)),
    );
    assert.equal(full.sessions.length, NASTY.length + 1);
    assert.deepEqual(await takePanePlaces(runner, { socketName: `${t.socket}-nothing` }), {
      running: false,
      panes: [],
    });
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("snapshot: process info by session is a full read's, and null once a session is gone", async () => {
  const t = await TestTmux.start("first");
  const runner = new TmuxRunner();
  try {
    const addr = { socketName: t.socket };
    const other = (await t.tmux("new-session", "-d", "-s", "other", "-P", "-F", "#{session_id}"))
      .trim();
    await sleepingPane(t, "-t", other);
    // The other session's first pane too: the two reads below are a moment apart.
    await panesSettled(t);
    const full = await takeSnapshot(runner, addr);
    const info = await takeProcessInfo(runner, addr, [t.ids.sessionId, other]);
    assert.deepEqual(
      info,
      new Map(full.panes.map((p) => [p.id, { command: p.command, cwd: p.cwd }])),
    );
    assert.ok([...info!.values()].some((p) => p.command === "sleep" && p.cwd === "/tmp"));
    assert.deepEqual(await takeProcessInfo(runner, addr, []), new Map());
    await t.tmux("kill-session", "-t", other);
    assert.equal(await takeProcessInfo(runner, addr, [t.ids.sessionId, other]), null);
    await assert.rejects(takeProcessInfo(runner, addr, ["$1}#{pane_id"]), /not a session id/);
  } finally {
    await runner.close();
    await t.kill();
  }
});

/**
 * Every way of reading panes, against each pane read alone (whose own row still says where its
 * window sits): a whole read, a brief one with and without the windows, each session's, and
 * the places. What the pane runs and where are left out (a new pane's shell execs `cat` at its
 * own pace; until it holds the terminal tmux sees no directory), and so is where a cursor is.
 */
async function readsAgree(
  runner: TmuxRunner,
  addr: { socketName: string },
  context: () => string,
): Promise<void> {
  const full = await takeSnapshot(runner, addr);
  const steady = (
    { command: _c, cwd: _d, cursorX: _x, cursorY: _y, historySize: _h, ...rest }: PaneRow,
  ) => rest;
  const core = (p: PaneBrief) => ({
    id: p.id,
    windowId: p.windowId,
    windowName: p.windowName,
    index: p.index,
    active: p.active,
    title: p.title,
    dead: p.dead,
    width: p.width,
    height: p.height,
    pid: p.pid,
    placements: p.placements,
  });
  const each: PaneRow[] = [];
  for (const pane of full.panes) {
    each.push(...(await takeSnapshot(runner, addr, {}, { paneId: pane.id })).panes);
  }
  assert.deepEqual(full.panes.map(steady), each.map(steady), context());
  const expected = full.panes.map(core);
  for (const windows of [true, false]) {
    const brief = await takeBriefSnapshot(runner, addr, {}, { windows, processInfo: false });
    assert.deepEqual(brief.panes.map(core), expected, `${context()}; windows ${windows}`);
  }
  for (const session of full.sessions) {
    const scoped = await takeBriefSnapshot(runner, addr, {}, {
      sessions: false,
      windows: false,
      sessionId: session.id,
    });
    const inSession = (p: PaneBrief) => p.placements.some((pl) => pl.sessionId === session.id);
    assert.deepEqual(
      scoped.panes.filter(inSession).map(core),
      full.panes.filter(inSession).map(core),
      `${context()}; session ${session.id}`,
    );
  }
  const places = await takePanePlaces(runner, addr);
  assert.deepEqual(
    places.panes,
    full.panes.map(({ id, windowId, width, height, placements }) => ({
      id,
      windowId,
      width,
      height,
      placements,
    })),
    context(),
  );
}

Deno.test("snapshot: reads agree with each pane read alone while windows are linked, grouped, split and killed at random", async () => {
  const seed = 20261202;
  const rand = prng(seed);
  const t = await TestTmux.start(NASTY[0]);
  const runner = new TmuxRunner();
  const addr = { socketName: t.socket };
  const done: string[] = [];
  const context = () => `seed ${seed}, after: ${done.join(" | ")}`;
  try {
    // New panes run cat, and windows keep their names (tmux renames them after what runs,
    // on a timer: between two reads).
    await t.tmux("set-option", "-g", "default-command", "exec cat");
    await t.tmux("set-option", "-gw", "automatic-rename", "off");
    for (let step = 0; step < 60; step++) {
      const sessions = (await t.tmux("list-sessions", "-F", "#{session_id}")).trim().split("\n");
      const links = (await t.tmux(
        ...[
          "list-windows",
          "-a",
          "-F",
          "#{session_id} #{window_index} #{window_id} #{window_panes}",
        ],
      )).trim().split("\n").map((l) => l.split(" "));
      const panes = (await t.tmux("list-panes", "-a", "-F", "#{pane_id} #{window_panes}"))
        .trim().split("\n").map((l) => l.split(" "));
      const session = rand.pick(sessions);
      const [linkSession, linkIndex, windowId] = rand.pick(links);
      const [paneId, panesInWindow] = rand.pick(panes);
      const name = escapeTrailingSemicolon(escapeFormat(`${rand.pick(NASTY)} ${step}`));
      const ops: (string[] | null)[] = [
        ["new-session", "-d", "-s", name],
        ["new-window", "-d", "-t", `${session}:`, "-n", name],
        ["new-window", "-d", "-t", `${session}:`, "-n", name],
        ["split-window", "-d", "-t", paneId],
        ["split-window", "-d", "-t", paneId],
        ["split-window", "-d", "-h", "-t", paneId],
        ["link-window", "-d", "-s", windowId, "-t", `${session}:`],
        ["link-window", "-d", "-s", windowId, "-t", `${session}:`],
        ["unlink-window", "-t", `${linkSession}:${linkIndex}`],
        ["new-session", "-d", "-t", session, "-s", `group ${step}`],
        ["resize-pane", "-Z", "-t", paneId],
        ["select-window", "-t", `${linkSession}:${linkIndex}`],
        ["rename-window", "-t", windowId, name],
        ["select-pane", "-t", paneId, "-T", `title ${step}`],
        // Kills only where plenty remains: a pane of a window that keeps others, a session
        // among several (the server must live on, and the walk grow).
        Number(panesInWindow) > 1 ? ["kill-pane", "-t", paneId] : null,
        sessions.length > 4 ? ["kill-session", "-t", session] : null,
      ];
      const op = rand.pick(ops);
      if (op === null) continue;
      // Some fail (no room to split, a window only in one session): the reads must agree anyway.
      const { code } = await t.tmuxRaw(...op);
      done.push(`${op.join(" ")}${code === 0 ? "" : " (refused)"}`);
      await readsAgree(runner, addr, context);
    }
    // The walk reached what makes the reads differ from a pane's own row.
    const full = await takeSnapshot(runner, addr);
    assert.ok(full.panes.some((p) => p.placements.length > 1), context());
    assert.ok(full.panes.length > 10, context());
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("snapshot: a client previews when a pane it shows is in choose-tree or choose-client, active or not", async () => {
  const t = await TestTmux.start("desk");
  const runner = new TmuxRunner();
  try {
    const addr = { socketName: t.socket };
    const left = t.ids.paneId;
    const right = (await t.tmux("split-window", "-d", "-h", "-t", left, "-P", "-F", "#{pane_id}"))
      .trim();
    const tab = (await t.tmux("new-window", "-d", "-t", "desk:", "-P", "-F", "#{pane_id}")).trim();
    const person = await t.attach("desk");
    const client = async () => {
      const snapshot = await takeSnapshot(runner, addr, {}, { panes: false });
      const row = snapshot.clients.find((c) => c.tty === person);
      assert.ok(row, "the person's client");
      return { previewing: row.previewing, paneMode: row.paneMode, paneId: row.paneId };
    };
    const mode = async (pane: string, want: string) =>
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-t", pane, "#{pane_mode}")).trim() === want,
        `${want || "no mode"} in ${pane}`,
      );
    assert.deepEqual(await client(), { previewing: false, paneMode: "", paneId: left });
    for (const [choose, name] of [["choose-tree", "tree-mode"], ["choose-client", "client-mode"]]) {
      await t.tmux(choose, "-t", left);
      await mode(left, name);
      assert.deepEqual(await client(), { previewing: true, paneMode: name, paneId: left });
      // The person moves to the pane beside it: the active pane's mode is none, the tree shows.
      await t.tmux("select-pane", "-t", right);
      assert.deepEqual(await client(), { previewing: true, paneMode: "", paneId: right });
      await t.tmux("send-keys", "-t", left, "q");
      await mode(left, "");
      await t.tmux("select-pane", "-t", left);
    }
    // In a window the person does not show: not on their screen.
    await t.tmux("choose-tree", "-t", tab);
    await mode(tab, "tree-mode");
    assert.deepEqual(await client(), { previewing: false, paneMode: "", paneId: left });
    // A person on tmux -CC shows every window of their session: the tree's among them.
    const iterm = await t.attach("desk", { control: true });
    const snapshot = await takeSnapshot(runner, addr, {}, { panes: false });
    // The runner's own control client (no terminal) is left out: a program's.
    const rows = snapshot.clients.filter((c) => c.tty !== "").map((c) => [
      c.tty,
      c.controlMode,
      c.previewing,
    ]);
    assert.deepEqual(rows.sort(), [[iterm, true, true], [person, false, false]].sort());
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("findSession: an id first, as in tmux; then an exact name, one like an id ($7) too", () => {
  const sessions = [
    { id: "$1", name: "$2" },
    { id: "$2", name: "work" },
    { id: "$3", name: "$7" },
  ];
  assert.equal(findSession(sessions, "$2")?.id, "$2");
  assert.equal(findSession(sessions, "$7")?.id, "$3");
  assert.equal(findSession(sessions, "work")?.id, "$2");
  assert.equal(findSession(sessions, "wor"), undefined);
  assert.equal(findSession(sessions, "$9"), undefined);
});
