/**
 * A window's alert marks (bell `!`, activity `#`, silence `~`) are kept per session, but tmux
 * 3.3a clears them in every session holding the window the moment one of those sessions makes
 * it current. select_window in a session nobody watches so wipes the mark from the status line
 * of a person attached to another session that holds the window (a linked or grouped one):
 * the server refuses it unless --allow-attended-input (src/tools/placement.ts), so the hook's
 * guard asks about it ({@link marksConcerns}, which guard.ts calls beside entryConcerns).
 */

import assert from "node:assert/strict";
import { marksConcerns } from "../src/hooks/focus.ts";
import { serverView } from "../src/hooks/guard.ts";
import { BATCH_TOOL, guardedCalls } from "../src/hooks/guarded_calls.ts";
import { agentEnv, guardCall, seedDecision } from "../src/hooks/testing.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { takeSnapshot } from "../src/tmux/snapshot.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

/** Window `windowId`'s bell, activity and silence flags in each session: `main=100 la=000`. */
async function marks(t: TestTmux, windowId: string): Promise<string> {
  const rows = await t.tmux(
    "list-windows",
    "-a",
    "-F",
    "#{session_name}=#{window_bell_flag}#{window_activity_flag}#{window_silence_flag}",
    "-f",
    `#{==:#{window_id},${windowId}}`,
  );
  return rows.trim().split("\n").sort().join(" ");
}

/** Rings the bell in `paneId` and waits until session main marks its window `windowId`. */
async function ring(t: TestTmux, paneId: string, windowId: string): Promise<void> {
  await t.tmux("send-keys", "-t", paneId, "printf '\\a'", "Enter");
  await waitFor(async () => (await marks(t, windowId)).includes("main=100"), "the bell mark");
}

/**
 * Session `main` (window `front` current, window `rung` behind it), a person attached to it;
 * session `la` (its own window current) nobody is attached to, holding `rung` at index 5 and
 * `quiet` (main's third window, never marked) at index 6. The bell rang in `rung`.
 */
async function linkedAndRung(t: TestTmux) {
  const ids = async (...args: string[]) =>
    (await t.tmux(...args, "-P", "-F", "#{window_id} #{pane_id}", "sh")).trim().split(" ");
  const [front] = await ids("new-session", "-d", "-s", "main", "-n", "front");
  const [rung, rungPane] = await ids("new-window", "-d", "-t", "main:", "-n", "rung");
  const [quiet] = await ids("new-window", "-d", "-t", "main:", "-n", "quiet");
  await ids("new-session", "-d", "-s", "la", "-n", "own");
  await t.tmux("link-window", "-d", "-s", rung, "-t", "la:5");
  await t.tmux("link-window", "-d", "-s", quiet, "-t", "la:6");
  const tty = await t.attach("main");
  await ring(t, rungPane, rung);
  return { front, rung, rungPane, quiet, tty };
}

/**
 * What {@link marksConcerns} says about a call on `t`, read as guard.ts reads it (one snapshot
 * without windows), and the tmux commands its own reads ran.
 */
async function concerns(
  t: TestTmux,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ said: string[]; reads: string[][] }> {
  const runner = new TmuxRunner();
  try {
    const address = { socketName: t.socket };
    const snapshot = await takeSnapshot(runner, address, {}, { windows: false });
    const view = serverView(snapshot, null);
    const reads: string[][] = [];
    const said = await marksConcerns(guardedCalls(tool, args), () => view, (_, argv) => {
      reads.push(argv);
      return runner.run(address, argv);
    });
    return { said, reads };
  } finally {
    await runner.close();
  }
}

Deno.test("marksConcerns: selecting a window where nobody looks, which would clear its bell mark in a person's status line, is asked about", async () => {
  const t = await TestTmux.start("agent");
  try {
    const { rung, rungPane, quiet, tty } = await linkedAndRung(t);
    const reason = (label: string) =>
      `${label} would make window ${rung} the current window of session "la", which clears ` +
      `its bell mark in the status line of session "main", which a person is shown (client ` +
      `${tty} is attached): tmux clears a window's marks in every session holding it once ` +
      "one of them selects it";
    const asked = await concerns(t, "select_window", { windowId: rung, session: "la" });
    assert.deepEqual(asked.said, [reason("select_window")]);
    assert.equal(asked.reads.length, 1, "one read of the marks");
    // A batch row is judged the same way; one after a change is asked about unread by
    // judgeCalls already, and left alone here.
    const batch = await concerns(t, BATCH_TOOL, {
      operations: [
        { tool: "list_windows", arguments: {} },
        { tool: "select_window", arguments: { windowId: rung, session: "la" } },
        { tool: "rename_window", arguments: { windowId: quiet, name: "q" } },
        { tool: "select_window", arguments: { windowId: rung, session: "la" } },
      ],
    });
    assert.deepEqual(batch.said, [reason(`${BATCH_TOOL} operation 2 (select_window)`)]);
    // What clears no mark a person is shown, or fails: no opinion, and no read where no
    // person's session holds the window beside the one it is selected in.
    const passes: Record<string, unknown>[] = [
      { windowId: quiet, session: "la" }, // no mark
      { windowId: rung, session: "main" }, // the person's own session: focusConcerns asks
      { windowId: rung }, // linked into two sessions, none named: the server refuses it
      { windowId: rung, session: "nowhere" },
      { windowId: "@999", session: "la" },
    ];
    for (const args of passes) {
      assert.deepEqual((await concerns(t, "select_window", args)).said, [], JSON.stringify(args));
    }
    const none = await concerns(t, "select_window", { windowId: rung, session: "main" });
    assert.deepEqual(none.reads, [], "the person's own session: nothing to read");
    // Already current in la: tmux 3.3a selects nothing and clears nothing (measured).
    await t.tmux("select-window", "-t", `la:${rung}`);
    await ring(t, rungPane, rung);
    assert.deepEqual(
      (await concerns(t, "select_window", { windowId: rung, session: "la" })).said,
      [],
    );
    await t.tmux("select-window", "-t", "la:0");
    // Nobody attached: nothing read, nothing said.
    await t.detach(tty);
    const alone = await concerns(t, "select_window", { windowId: rung, session: "la" });
    assert.deepEqual(alone, { said: [], reads: [] });
  } finally {
    await t.kill();
  }
});

Deno.test("marksConcerns: an activity mark in the status line of a session grouped with the one selected in counts too", async () => {
  const t = await TestTmux.start("agent");
  try {
    const ids = async (...args: string[]) =>
      (await t.tmux(...args, "-P", "-F", "#{window_id} #{pane_id}", "sh")).trim().split(" ");
    await ids("new-session", "-d", "-s", "main");
    const [busy, busyPane] = await ids("new-window", "-d", "-t", "main:", "-n", "busy");
    await t.tmux("set-option", "-w", "-t", busy, "monitor-activity", "on");
    // A session of main's group nobody is attached to: it holds the same windows.
    await t.tmux("new-session", "-d", "-s", "mirror", "-t", "main");
    const tty = await t.attach("main");
    await t.tmux("send-keys", "-t", busyPane, "echo busy", "Enter");
    await waitFor(async () => (await marks(t, busy)).includes("main=010"), "the activity mark");
    const { said } = await concerns(t, "select_window", { windowId: busy, session: "mirror" });
    assert.deepEqual(said, [
      `select_window would make window ${busy} the current window of session "mirror", which ` +
      `clears its activity mark in the status line of session "main", which a person is shown ` +
      `(client ${tty} is attached): tmux clears a window's marks in every session holding it ` +
      "once one of them selects it",
    ]);
  } finally {
    await t.kill();
  }
});

/** The whole hook: guard.ts asks about marks beside the status-line entries. */
Deno.test({
  name: "guard: select_window that would clear a person's bell mark is asked about",
  async fn() {
    const t = await TestTmux.start("agent");
    try {
      const env = agentEnv(await t.facts(), t.ids.paneId);
      const { rung, tty } = await linkedAndRung(t);
      const r = await guardCall(env, "select_window", { windowId: rung, session: "la" });
      assert.equal(r.code, 0, r.stderr.join("\n"));
      const d = seedDecision(r.stdout);
      assert.equal(d.permissionDecision, "ask");
      assert.match(d.permissionDecisionReason, /clears its bell mark in the status line of/);
      assert.ok(d.permissionDecisionReason.includes(tty));
      assert.equal((await marks(t, rung)).includes("main=100"), true, "nothing selected");
    } finally {
      await t.kill();
    }
  },
});
