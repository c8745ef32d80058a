import assert from "node:assert/strict";
import { TestTmux } from "../../tests/helpers/tmux.ts";
import { BATCH_TOOL, guardedCalls } from "./guarded_calls.ts";
import { agentEnv, guardCall, guardStarts, seedDecision } from "./testing.ts";

Deno.test("guardedCalls: select_pane, select_window and move_window are read as moving a person's focus", () => {
  const read = (tool: string, args: Record<string, unknown>) =>
    guardedCalls(`mcp__tmux__${tool}`, args).map((c) => ({
      verb: c.verb,
      targets: c.targets,
      focus: c.focus,
      unclear: c.unclear,
    }));
  assert.deepEqual(read("select_pane", { paneId: "%4" }), [{
    verb: "select",
    targets: [{ kind: "pane", id: "%4" }],
    focus: { tool: "select_pane", refs: { paneId: "%4" } },
    unclear: undefined,
  }]);
  assert.deepEqual(read("select_window", { windowId: "@2" })[0].focus, {
    tool: "select_window",
    refs: { windowId: "@2" },
  });
  assert.deepEqual(read("select_window", { windowId: "@2", session: "main" })[0].targets, [
    { kind: "window", id: "@2" },
    { kind: "session", ref: "main" },
  ]);
  assert.deepEqual(
    read("move_window", { windowId: "@2", session: "bg", fromSession: "$0", index: 4 })[0].focus,
    { tool: "move_window", refs: { windowId: "@2", session: "bg", fromSession: "$0" } },
  );
  // break_pane that selects makes its new window current; without select its pane only leaves
  // its window (read for the zoom it undoes and the keys it takes, unzoom_test.ts).
  assert.deepEqual(read("break_pane", { paneId: "%4", select: true })[0].focus, {
    tool: "break_pane",
    refs: { paneId: "%4" },
  });
  assert.equal(read("break_pane", { paneId: "%4" })[0].focus, undefined);
  const cases: [string, Record<string, unknown>, string][] = [
    ["select_pane", {}, "it names no paneId"],
    ["select_window", { session: "main" }, "it names no windowId"],
    ["select_window", { windowId: "@2", session: 3 }, "its session is not a string"],
    ["move_window", { windowId: "@2" }, "it names no session"],
    ["move_window", { windowId: "@2", session: "bg", fromSession: ["a"] }, "its fromSession"],
    ["select_window", { windowId: "@2", host: "box" }, 'runs on host "box"'],
  ];
  for (const [tool, input, why] of cases) {
    const calls = guardedCalls(tool, input);
    assert.equal(calls.length, 1, tool);
    assert.ok(calls[0].unclear?.includes(why), `${calls[0].unclear} ∌ ${why}`);
  }
  // In a batch, a row that moves the focus after rows that change tmux is asked about unread:
  // a split's new pane, selected next, does not exist yet when the hook looks.
  const rows = guardedCalls(BATCH_TOOL, {
    operations: [
      { tool: "split_window", arguments: { paneId: "%4" } },
      { tool: "select_pane", arguments: { paneId: "%9" } },
    ],
  });
  assert.deepEqual(rows.map((r) => [r.label, r.after?.map((op) => op.tool)]), [
    [`${BATCH_TOOL} operation 1 (split_window)`, undefined],
    [`${BATCH_TOOL} operation 2 (select_pane)`, ["split_window"]],
  ]);
});

/**
 * A session "person" (not attached yet) of two windows, each of two panes and synchronized by
 * the person: its current window "edit" (`shown` and `beside`) and "logs" (`logs1`, `logs2`), a
 * key away.
 */
async function syncedPerson(t: TestTmux) {
  const split = async (target: string) =>
    (await t.tmux("split-window", "-d", "-t", target, "-P", "-F", "#{pane_id}", "sh")).trim();
  const person = ["new-session", "-d", "-s", "person", "-n", "edit", "-P", "-F"];
  const [edit, shown] = (await t.tmux(...person, "#{window_id} #{pane_id}", "sh")).trim()
    .split(" ");
  const beside = await split(shown);
  const [logs, logs1] = (await t.tmux(
    ...["new-window", "-d", "-t", "person:", "-n", "logs", "-P", "-F"],
    "#{window_id} #{pane_id}",
    "sh",
  )).trim().split(" ");
  const logs2 = await split(logs1);
  for (const w of [edit, logs]) {
    await t.tmux("set-option", "-w", "-t", w, "synchronize-panes", "on");
  }
  return { edit, shown, beside, logs, logs1, logs2 };
}

/**
 * The person's session `person`: window `edit` (two shells, the first active) in front of
 * them and window `logs` behind it; session `bg` (two shells) nobody is attached to.
 */
async function personAndBackground(t: TestTmux) {
  const ids = async (...args: string[]) =>
    (await t.tmux(...args, "-P", "-F", "#{window_id} #{pane_id}", "sh")).trim().split(" ");
  const [edit, shown] = await ids("new-session", "-d", "-s", "person", "-n", "edit");
  const [, beside] = await ids("split-window", "-d", "-t", shown);
  const [logs, logsPane] = await ids("new-window", "-d", "-t", "person:", "-n", "logs");
  const [bgWindow, bg1] = await ids("new-session", "-d", "-s", "bg", "-n", "bg");
  const [, bg2] = await ids("split-window", "-d", "-t", bg1);
  const tty = await t.attach("person");
  return { edit, shown, beside, logs, logsPane, bgWindow, bg1, bg2, tty };
}

Deno.test("guard: a call that would move a person's keys to another pane or window is asked about, naming what changes and the client", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const { edit, shown, beside, logs, logsPane, bgWindow, bg1, bg2, tty } =
      await personAndBackground(t);
    const watching = `a window a person is watching (client ${tty})`;
    const attached = `the person attached to session "person" (client ${tty})`;
    const asks: [string, Record<string, unknown>, string][] = [
      [
        "select_pane",
        { paneId: beside },
        `would make pane ${beside} (person:0.1 "edit") the active pane of ${watching}, in ` +
        `place of pane ${shown}: what they type next goes to it`,
      ],
      [
        "select_window",
        { windowId: logs },
        `would bring window ${logs} in front of ${attached}, in place of window ${edit}: what ` +
        `they type next goes to pane ${logsPane} (person:1.0 "logs")`,
      ],
      [
        "select_window",
        { windowId: logs, session: "person" },
        `would bring window ${logs} in front of ${attached}, in place of window ${edit}: what ` +
        `they type next goes to pane ${logsPane} (person:1.0 "logs")`,
      ],
      [
        "move_window",
        { windowId: edit, session: "bg" },
        `would move window ${edit}, the current window of session "person", to session "bg", ` +
        `from in front of ${attached}: another window takes its place, and what they type ` +
        "next goes to it",
      ],
      [
        "move_window",
        { windowId: edit, session: "person", index: 7 },
        `would move window ${edit}, the current window of session "person", to another index ` +
        `of session "person", from in front of ${attached}: tmux may make another window ` +
        "current there (their last one), and what they type next goes to it",
      ],
      [
        "swap_pane",
        { paneId: beside, targetPaneId: shown },
        `would swap pane ${shown} (person:0.0 "edit"), the active pane of ${watching}, with ` +
        `pane ${beside} (person:0.1 "edit") of the same window, and leave the focus in its ` +
        `place: what they type next goes to pane ${beside}`,
      ],
      [
        "resize_pane",
        { paneId: beside, zoom: true },
        `would zoom pane ${beside} (person:0.1 "edit") in place of pane ${shown} ` +
        `(person:0.0 "edit"), the active pane of ${watching}: what they type next goes to it`,
      ],
      [
        "resize_pane",
        { paneId: beside, width: 20, zoom: true },
        `would zoom pane ${beside} (person:0.1 "edit") in place of pane ${shown} ` +
        `(person:0.0 "edit"), the active pane of ${watching}: what they type next goes to it`,
      ],
      [
        // The active pane already: the keys stay, but the zoom hides the other pane.
        "resize_pane",
        { paneId: shown, zoom: true },
        `would zoom window ${edit} on pane ${shown} (person:0.0 "edit") on the screen of ` +
        `client ${tty}, hiding its other pane`,
      ],
      [
        "break_pane",
        { paneId: beside, select: true },
        `would break pane ${beside} (person:0.1 "edit") out into a new window in front of ` +
        `${attached}: what they type next goes to it`,
      ],
      [
        "break_pane",
        { paneId: shown },
        `would break pane ${shown} (person:0.0 "edit"), the active pane of ${watching}, out ` +
        "into a window of its own: what they type next goes to a pane they did not choose",
      ],
      [
        "join_pane",
        { paneId: shown, targetPaneId: bg1 },
        `would move pane ${shown} (person:0.0 "edit"), the active pane of ${watching}, beside ` +
        `pane ${bg1}: what they type next goes to a pane they did not choose`,
      ],
      [
        "join_pane",
        { paneId: shown, targetPaneId: beside },
        `would move pane ${shown} (person:0.0 "edit"), the active pane of ${watching}, beside ` +
        `pane ${beside}: what they type next goes to a pane they did not choose`,
      ],
      [
        "swap_pane",
        { paneId: shown, targetPaneId: bg1 },
        `would swap pane ${shown} (person:0.0 "edit"), the active pane of ${watching}, with ` +
        `pane ${bg1} (bg:0.0 "bg"): what they type next goes to pane ${bg1}`,
      ],
      [
        "swap_pane",
        { paneId: bg2, targetPaneId: shown },
        `would swap pane ${shown} (person:0.0 "edit"), the active pane of ${watching}, with ` +
        `pane ${bg2} (bg:0.1 "bg"): what they type next goes to pane ${bg2}`,
      ],
    ];
    for (const [tool, args, reason] of asks) {
      const r = await guardCall(env, tool, args);
      assert.equal(r.code, 0, r.stderr.join("\n"));
      const d = seedDecision(r.stdout);
      assert.equal(d.permissionDecision, "ask", tool);
      assert.equal(d.permissionDecisionReason, `${tool} ${reason}.`);
    }
    // What leaves the person's keys where they are, or happens in front of nobody, or fails.
    const quiet = { code: 0, stdout: "", stderr: [] };
    const passes: [string, Record<string, unknown>][] = [
      ["select_pane", { paneId: shown }], // already the active one
      ["select_pane", { paneId: bg2 }],
      ["select_pane", { paneId: "%999" }],
      ["select_window", { windowId: edit }], // already current
      ["select_window", { windowId: bgWindow }],
      ["select_window", { windowId: logs, session: "bg" }], // not in bg: fails
      ["select_window", { windowId: logs, session: "nowhere" }],
      ["select_window", { windowId: "@999" }],
      ["move_window", { windowId: logs, session: "bg" }], // not the current one
      ["move_window", { windowId: bgWindow, session: "person" }], // arrives behind (-d)
      ["move_window", { windowId: edit, session: "nowhere" }],
      ["move_window", { windowId: "@999", session: "bg" }],
      ["break_pane", { paneId: beside }], // not the active one
      ["break_pane", { paneId: bg2, select: true }], // in front of nobody
      ["break_pane", { paneId: logsPane, select: true }], // alone in its window: fails
      ["join_pane", { paneId: beside, targetPaneId: bg1 }],
      ["join_pane", { paneId: shown, targetPaneId: "%999" }],
      ["swap_pane", { paneId: shown, targetPaneId: beside }], // the keys follow their pane
      ["resize_pane", { paneId: beside, zoom: false }], // nothing zoomed: nothing to do
      ["resize_pane", { paneId: beside, width: 20 }],
      ["resize_pane", { paneId: bg2, zoom: true }], // in front of nobody
      ["swap_pane", { paneId: beside, targetPaneId: bg1 }],
    ];
    for (const [tool, args] of passes) {
      assert.deepEqual(await guardCall(env, tool, args), quiet, `${tool} ${JSON.stringify(args)}`);
    }
    // In a batch, a pane move is judged by tmux as it is, but one naming a pane that is not
    // there yet is not "a call that fails": an earlier row may make it (a split's new pane is
    // the next id), and moved into the person's window it takes their keys.
    const made = await guardCall(env, BATCH_TOOL, {
      operations: [
        { tool: "split_window", arguments: { paneId: bg1 } },
        { tool: "swap_pane", arguments: { paneId: "%999", targetPaneId: shown } },
      ],
    });
    assert.equal(
      seedDecision(made.stdout).permissionDecisionReason,
      "earlier operations of this batch (split_window) may change what call_tools_batch " +
        "operation 2 (swap_pane) would swap: it cannot be judged by tmux as it is now.",
    );
    const zoomMade = await guardCall(env, BATCH_TOOL, {
      operations: [
        { tool: "rename_window", arguments: { windowId: bgWindow, name: "x" } },
        { tool: "join_pane", arguments: { paneId: bg1, targetPaneId: "%998" } },
      ],
    });
    assert.match(
      seedDecision(zoomMade.stdout).permissionDecisionReason,
      /^earlier operations of this batch \(rename_window\) may change what .*operation 2 \(join_pane\) would move/,
    );
    // The last window of a person's session: the session ends under them.
    const [solo] = (await t.tmux("new-session", "-d", "-s", "solo", "-P", "-F", "#{window_id}"))
      .trim().split(" ");
    const soloTty = await t.attach("solo");
    const last = await guardCall(env, "move_window", { windowId: solo, session: "bg" });
    assert.equal(
      seedDecision(last.stdout).permissionDecisionReason,
      `move_window would move window ${solo}, the current window of session "solo", to session ` +
        `"bg", from in front of the person attached to session "solo" (client ${soloTty}): it ` +
        "is that session's last window, so the session ends under them.",
    );
    // One snapshot for the whole call: the tmux processes a call on one pane starts, no more.
    const started = (tool: string, args: Record<string, unknown>) => guardStarts(t, tool, args);
    const one = await started("respawn_pane", { paneId: bg1 });
    const many = await started(BATCH_TOOL, {
      operations: [
        { tool: "swap_pane", arguments: { paneId: shown, targetPaneId: bg1 } },
        { tool: "join_pane", arguments: { paneId: shown, targetPaneId: bg2 } },
      ],
    });
    assert.deepEqual(many.runs, one.runs);
    assert.match(many.reason ?? "", /operation 1 \(swap_pane\) would swap pane/);
    // The second row comes after a move: asked about unread (guarded_calls.ts, MOVES).
    assert.match(
      many.reason ?? "",
      /may change what call_tools_batch operation 2 \(join_pane\) would move: it cannot be judged/,
    );
    const select = await started("select_window", { windowId: logs, socket_name: t.socket });
    assert.equal(select.runs.length, one.runs.length);
    assert.match(select.reason ?? "", /select_window would bring window/);
  } finally {
    await t.kill();
  }
});

Deno.test("guard: where tmux 3.3a sends a person's keys after the server's own commands is where the guard says (move-window -d in a session or its group, swap-pane -d, resize-pane -Z)", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const { edit, shown, beside, logs, tty } = await personAndBackground(t);
    const keys = async () =>
      (await t.tmux("list-clients", "-F", "#{client_tty} #{window_id} #{pane_id}"))
        .split("\n").find((l) => l.startsWith(`${tty} `))!.split(" ").slice(1).join(" ");
    /** Asks the guard, then runs what the server runs for the call: where do the keys go? */
    const step = async (tool: string, args: Record<string, unknown>, tmux: string[]) => {
      const r = await guardCall(env, tool, args);
      assert.equal(r.code, 0, r.stderr.join("\n"));
      const before = await keys();
      await t.tmux(...tmux);
      const now = await keys();
      return { asked: r.stdout !== "", moved: now !== before, now };
    };
    /** swap_pane as the server runs it. */
    const swap = (paneId: string, targetPaneId: string) =>
      step("swap_pane", { paneId, targetPaneId }, [
        "swap-pane",
        "-d",
        "-s",
        paneId,
        "-t",
        targetPaneId,
      ]);
    // Two panes of one window: the focus follows the active pane named first...
    assert.deepEqual(await swap(shown, beside), {
      asked: false,
      moved: false,
      now: `${edit} ${shown}`,
    });
    // ...and stays in its place, on the other pane, when it is named second.
    assert.deepEqual(await swap(beside, shown), {
      asked: true,
      moved: true,
      now: `${edit} ${beside}`,
    });
    // A zoom makes the pane it zooms the active one (then unzoomed again, by the active pane).
    assert.deepEqual(
      await step("resize_pane", { paneId: shown, zoom: true }, ["resize-pane", "-Z", "-t", shown]),
      { asked: true, moved: true, now: `${edit} ${shown}` },
    );
    await t.tmux("resize-pane", "-Z", "-t", shown);
    // The current window moved to another index of its own session: tmux makes the session's
    // last window current (with none, the one before, which may be the moved window itself).
    await t.tmux("select-window", "-t", logs);
    await t.tmux("select-window", "-t", edit);
    const at = (await t.tmux("display-message", "-p", "-t", edit, "#{session_id}")).trim();
    const moved = await step("move_window", { windowId: edit, session: "person", index: 7 }, [
      "move-window",
      "-d",
      "-s",
      `${at}:${edit}`,
      "-t",
      `${at}:7`,
    ]);
    assert.deepEqual([moved.asked, moved.moved], [true, true]);
    assert.equal(moved.now.split(" ")[0], logs);
    // The same through a session grouped with the person's: moved within the twin, it leaves
    // both.
    await t.tmux("select-window", "-t", edit);
    assert.equal(await keys(), `${edit} ${shown}`);
    await t.tmux("new-session", "-d", "-t", "person", "-s", "twin");
    const twin = (await t.tmux("display-message", "-p", "-t", "twin:", "#{session_id}")).trim();
    const grouped = await guardCall(env, "move_window", {
      windowId: edit,
      session: "twin",
      fromSession: "twin",
      index: 9,
    });
    assert.equal(
      seedDecision(grouped.stdout).permissionDecisionReason,
      `move_window would move window ${edit}, the current window of session "person", grouped ` +
        `with session "twin", to another index of session "twin", from in front of the person ` +
        `attached to session "person" (client ${tty}): tmux may make another window current ` +
        "there (their last one), and what they type next goes to it.",
    );
    await t.tmux("move-window", "-d", "-s", `${twin}:${edit}`, "-t", `${twin}:9`);
    assert.notEqual((await keys()).split(" ")[0], edit);
  } finally {
    await t.kill();
  }
});

Deno.test("guard: a pane put into a synchronized window a person is shown, or whose entry their status line lists, is asked about", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const agent = t.ids.paneId;
    // The person's session: its current window "edit" and a window "logs" a key away, each of
    // two panes, synchronized by the person.
    const { edit, shown, beside, logs, logs1, logs2 } = await syncedPerson(t);
    // A background session nobody is attached to, with a pane to move.
    const bg = (await t.tmux("new-session", "-d", "-s", "bg", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    const tty = await t.attach("person");
    // Named, so that no automatic rename changes what the reasons say.
    await t.tmux("rename-window", "-t", agent, "mine");
    await t.tmux("rename-window", "-t", bg, "bg");
    const agentName = "mine";
    const bgWhere = `bg:0.0 "bg"`;
    const watched = `which a person is watching (client ${tty})`;
    const listed = `whose entry the status line of a person's session shows (client ${tty} is ` +
      "attached)";
    const into = (window: string, where: string, whom: string) =>
      `into window ${window} (${where}), whose panes are synchronized, ${whom}: what the ` +
      "person types there would reach it";
    const asks: [string, Record<string, unknown>, string][] = [
      [
        "join_pane",
        { paneId: bg, targetPaneId: beside },
        `would put pane ${bg} (${bgWhere}) ${into(edit, 'person:0 "edit"', watched)}`,
      ],
      [
        "join_pane",
        { paneId: agent, targetPaneId: logs2 },
        `would put pane ${agent} (agent:0.0 ` +
        `"${agentName}") ${into(logs, 'person:1 "logs"', listed)}`,
      ],
      [
        "swap_pane",
        { paneId: bg, targetPaneId: logs2 },
        `would put pane ${bg} (${bgWhere}) ${into(logs, 'person:1 "logs"', listed)}`,
      ],
      [
        "swap_pane",
        { paneId: beside, targetPaneId: bg },
        `would put pane ${bg} (${bgWhere}) ${into(edit, 'person:0 "edit"', watched)}`,
      ],
      [
        "split_window",
        { paneId: shown, command: "cat > keys.log" },
        `would put a new pane ` +
        `split from pane ${shown} ${into(edit, 'person:0 "edit"', watched)}`,
      ],
      [
        "split_window",
        { paneId: logs1, command: "cat > keys.log" },
        `would put a new pane ` +
        `split from pane ${logs1} ${into(logs, 'person:1 "logs"', listed)}`,
      ],
      [
        "split_window",
        { paneId: logs1, select: true },
        `would put a new pane ` +
        `split from pane ${logs1} ${into(logs, 'person:1 "logs"', listed)}`,
      ],
    ];
    for (const [tool, args, reason] of asks) {
      for (
        const [how, call, label] of [
          ["alone", args, tool],
          [
            "in a batch",
            { operations: [{ tool, arguments: args }] },
            `${BATCH_TOOL} operation 1 (${tool})`,
          ],
        ] as const
      ) {
        const r = await guardCall(env, how === "alone" ? tool : BATCH_TOOL, call);
        assert.equal(r.code, 0, r.stderr.join("\n"));
        assert.notEqual(r.stdout, "", `${tool} ${how}: ${JSON.stringify(args)} passed`);
        const d = seedDecision(r.stdout);
        assert.equal(d.permissionDecision, "ask", `${tool} ${how}`);
        assert.ok(
          d.permissionDecisionReason.includes(`${label} ${reason}`),
          `${tool} ${how}: ${d.permissionDecisionReason}`,
        );
      }
    }
    // With synchronize-panes off there, the same moves into the window nobody is shown pass.
    await t.tmux("set-option", "-w", "-t", logs, "synchronize-panes", "off");
    const quiet = { code: 0, stdout: "", stderr: [] };
    for (
      const [tool, args] of [
        ["join_pane", { paneId: agent, targetPaneId: logs2 }],
        ["swap_pane", { paneId: bg, targetPaneId: logs2 }],
        ["split_window", { paneId: logs1, command: "cat" }],
      ] as const
    ) {
      assert.deepEqual(await guardCall(env, tool, args), quiet, tool);
    }
  } finally {
    await t.kill();
  }
});

Deno.test("guardedCalls: a zoom, a window's setting or layout after a row that may run tmux itself is asked about unread", () => {
  const typed = {
    tool: "run_command",
    arguments: { paneId: "%9", command: "tmux select-window -t @1" },
  };
  const later: Record<string, unknown>[] = [
    { tool: "resize_pane", arguments: { paneId: "%2", zoom: true } },
    {
      tool: "set_option",
      arguments: { name: "mode-keys", value: "vi", scope: "window", target: "@1" },
    },
    { tool: "set_synchronize_panes", arguments: { windowId: "@1", enabled: true } },
    { tool: "select_layout", arguments: { windowId: "@1", layout: "even-horizontal" } },
    { tool: "split_window", arguments: { paneId: "%2" } },
  ];
  for (const row of later) {
    for (const first of [typed, { tool: "send_keys", arguments: { paneId: "%9", text: "x" } }]) {
      const rows = guardedCalls(BATCH_TOOL, { operations: [first, row] });
      const last = rows[rows.length - 1];
      assert.deepEqual(
        last.after?.map((op) => op.tool),
        [first.tool],
        `${first.tool}, ${row.tool}`,
      );
    }
  }
  // A zoom takes a person's keys as a focus row does: unread after any change.
  const renamed = guardedCalls(BATCH_TOOL, {
    operations: [
      { tool: "rename_window", arguments: { windowId: "@1", name: "x" } },
      { tool: "resize_pane", arguments: { paneId: "%2", zoom: true } },
    ],
  });
  assert.deepEqual(renamed[0].after?.map((op) => op.tool), ["rename_window"]);
  // A layout built after a plain split (a shell of tmux's choosing) is judged by tmux as it is.
  const built = guardedCalls(BATCH_TOOL, {
    operations: [
      { tool: "split_window", arguments: { paneId: "%2" } },
      { tool: "select_layout", arguments: { windowId: "@1", layout: "tiled" } },
    ],
  });
  assert.deepEqual(built.map((r) => r.after), [undefined, undefined]);
  // One given a command runs what it says.
  const ran = guardedCalls(BATCH_TOOL, {
    operations: [
      { tool: "split_window", arguments: { paneId: "%2", command: "tmux select-window -t @1" } },
      { tool: "select_layout", arguments: { windowId: "@1", layout: "tiled" } },
    ],
  });
  assert.deepEqual(ran[1].after?.map((op) => op.tool), ["split_window"]);
});

Deno.test("guard: a batch that types `tmux select-window` and then zooms there is asked about the zoom unread", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const { windowId, paneId } = await t.shellWindow("agent");
    const person =
      (await t.tmux("new-session", "-d", "-s", "person", "-P", "-F", "#{pane_id}", "sh"))
        .trim();
    const second =
      (await t.tmux("split-window", "-d", "-t", person, "-P", "-F", "#{pane_id}", "sh"))
        .trim();
    await t.attach("person");
    const personWindow = (await t.tmux("display-message", "-p", "-t", person, "#{window_id}"))
      .trim();
    const typed = {
      tool: "run_command",
      arguments: { paneId, command: `tmux select-window -t ${windowId}` },
    };
    for (
      const row of [
        { tool: "resize_pane", arguments: { paneId: second, zoom: true } },
        {
          tool: "set_option",
          arguments: { name: "mode-keys", value: "vi", scope: "window", target: personWindow },
        },
        { tool: "select_layout", arguments: { windowId: personWindow, layout: "even-horizontal" } },
      ]
    ) {
      const r = await guardCall(env, BATCH_TOOL, { operations: [typed, row] });
      assert.equal(r.code, 0, r.stderr.join("\n"));
      assert.notEqual(r.stdout, "", `${row.tool} after run_command passed`);
      assert.match(
        seedDecision(r.stdout).permissionDecisionReason,
        new RegExp(
          `earlier operations of this batch \\(run_command\\) may change what call_tools_batch ` +
            `operation 2 \\(${row.tool}\\)`,
        ),
      );
    }
  } finally {
    await t.kill();
  }
});

Deno.test("guard: respawn_pane in a synchronized window a person is shown, or whose entry their status line lists, is asked about", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    // The person's session, as above.
    const { edit, beside, logs, logs2 } = await syncedPerson(t);
    const tty = await t.attach("person");
    // Named again, so that no automatic rename changes what the reasons say.
    await t.tmux("rename-window", "-t", edit, "edit");
    await t.tmux("rename-window", "-t", logs, "logs");
    const watched = `which a person is watching (client ${tty})`;
    const listed = `whose entry the status line of a person's session shows (client ${tty} is ` +
      "attached)";
    const startIn =
      (pane: string, paneWhere: string, window: string, where: string) => (whom: string) =>
        `would start a new program in pane ${pane} (${paneWhere}), in window ${window} ` +
        `(${where}), whose panes are synchronized, ${whom}: what the person types there would ` +
        "reach it";
    const inEdit = startIn(beside, 'person:0.1 "edit"', edit, 'person:0 "edit"');
    const inLogs = startIn(logs2, 'person:1.1 "logs"', logs, 'person:1 "logs"');
    const asks: [Record<string, unknown>, string][] = [
      [{ paneId: beside, kill: true, command: "cat > keys.log" }, inEdit(watched)],
      [{ paneId: logs2, kill: true, command: "cat > keys.log" }, inLogs(listed)],
      // tmux's default command, the pane's first one: a new program all the same.
      [{ paneId: logs2, kill: true }, inLogs(listed)],
      [{ paneId: logs2 }, inLogs(listed)],
    ];
    const tool = "respawn_pane";
    for (const [args, reason] of asks) {
      for (
        const [how, call, label] of [
          ["alone", args, tool],
          [
            "in a batch",
            { operations: [{ tool, arguments: args }] },
            `${BATCH_TOOL} operation 1 (${tool})`,
          ],
        ] as const
      ) {
        const r = await guardCall(env, how === "alone" ? tool : BATCH_TOOL, call);
        assert.equal(r.code, 0, r.stderr.join("\n"));
        assert.notEqual(r.stdout, "", `${how}: ${JSON.stringify(args)} passed`);
        const d = seedDecision(r.stdout);
        assert.equal(d.permissionDecision, "ask", `${how}: ${JSON.stringify(args)}`);
        assert.ok(
          d.permissionDecisionReason.includes(`${label} ${reason}`),
          `${how}: ${d.permissionDecisionReason}`,
        );
      }
    }
    // With synchronize-panes off there, a respawn in the window nobody is shown passes.
    await t.tmux("set-option", "-w", "-t", logs, "synchronize-panes", "off");
    assert.deepEqual(
      await guardCall(env, tool, { paneId: logs2, kill: true, command: "cat" }),
      { code: 0, stdout: "", stderr: [] },
    );
  } finally {
    await t.kill();
  }
});
