import assert from "node:assert/strict";
import { TestTmux } from "../../tests/helpers/tmux.ts";
import { BATCH_TOOL, guardedCalls } from "./guarded_calls.ts";
import { agentEnv, guardCall, guardStarts, seedDecision } from "./testing.ts";
import { UNZOOM_TOOLS } from "./unzoom.ts";

Deno.test("guardedCalls: the tools that unzoom a window are read with the panes or window they reach", () => {
  // Measured on tmux 3.3a: these unzoom the window they split, rearrange, resize, select a
  // hidden pane of, or move a pane into or out of (kill_pane is read as a kill).
  assert.deepEqual([...UNZOOM_TOOLS].sort(), [
    "break_pane",
    "join_pane",
    "resize_pane",
    "resize_window",
    "select_layout",
    "select_pane",
    "split_window",
    "swap_pane",
  ]);
  const read = (tool: string, args: Record<string, unknown>) =>
    guardedCalls(`mcp__tmux__${tool}`, args).map((c) => ({
      targets: c.targets,
      unzoom: c.unzoom?.how,
      unclear: c.unclear,
    }));
  const pane = (id: string) => ({ kind: "pane", id });
  assert.deepEqual(read("split_window", { paneId: "%4", environment: { paneId: "%9" } }), [
    { targets: [pane("%4")], unzoom: "reshape", unclear: undefined },
  ]);
  assert.deepEqual(read("join_pane", { paneId: "%4", targetPaneId: "%7" }), [
    { targets: [pane("%4"), pane("%7")], unzoom: "reshape", unclear: undefined },
  ]);
  assert.deepEqual(read("swap_pane", { paneId: "%4", targetPaneId: "%7" })[0].targets, [
    pane("%4"),
    pane("%7"),
  ]);
  assert.deepEqual(read("break_pane", { paneId: "%4", select: false })[0].unzoom, "reshape");
  assert.deepEqual(read("select_layout", { windowId: "@2", layout: "tiled" }), [
    { targets: [{ kind: "window", id: "@2" }], unzoom: "reshape", unclear: undefined },
  ]);
  // select_pane is read as moving a person's focus (focus_test.ts), and judged as unzooming
  // where its window is zoomed.
  assert.equal(read("select_pane", { paneId: "%4" })[0].unzoom, undefined);
  // resize_pane: a size always unzooms; zoom: false unzooms; zoom: true onto a hidden pane
  // moves the zoom (and the person's keys) to it.
  assert.equal(read("resize_pane", { paneId: "%4", width: 20 })[0].unzoom, "reshape");
  assert.equal(
    read("resize_pane", { paneId: "%4", direction: "up", amount: 2 })[0].unzoom,
    "reshape",
  );
  assert.equal(read("resize_pane", { paneId: "%4", zoom: false })[0].unzoom, "off");
  assert.equal(read("resize_pane", { paneId: "%4", zoom: true })[0].unzoom, "focus");
  assert.equal(read("resize_pane", { paneId: "%4", height: 5, zoom: true })[0].unzoom, "reshape");
  assert.equal(read("resize_pane", { paneId: "%4", zoom: "no" })[0].unzoom, "reshape");
  // resize_window changes no zoom by its size (tmux 3.3a keeps it), nor with zoom: true (the
  // active pane is the zoomed one), which zooms a window that is not: read as keeping any zoom
  // and zooming; zoom: false unzooms, and a value the server refuses counts as both.
  const zooms = (tool: string, args: Record<string, unknown>) =>
    guardedCalls(tool, args).map((c) => c.unzoom?.zooms ?? false);
  assert.deepEqual(read("resize_window", { windowId: "@2", width: 100, height: 30 }), []);
  assert.deepEqual(read("resize_window", { windowId: "@2", zoom: true }), [
    { targets: [{ kind: "window", id: "@2" }], unzoom: "keep", unclear: undefined },
  ]);
  assert.deepEqual(zooms("resize_window", { windowId: "@2", width: 90, zoom: true }), [true]);
  assert.equal(read("resize_window", { windowId: "@2", zoom: false })[0].unzoom, "off");
  assert.deepEqual(zooms("resize_window", { windowId: "@2", zoom: false }), [false]);
  assert.equal(read("resize_window", { windowId: "@2", zoom: 0 })[0].unzoom, "off");
  assert.deepEqual(zooms("resize_window", { windowId: "@2", zoom: 0 }), [true]);
  assert.deepEqual(zooms("resize_pane", { paneId: "%4", zoom: true }), [true]);
  // Nothing to do: the server refuses it.
  assert.deepEqual(read("resize_pane", { paneId: "%4" }), []);
  // split_window that selects is read as taking the person's keys, as before.
  assert.equal(
    guardedCalls("split_window", { paneId: "%4", select: true })[0].focus?.tool,
    "split_window",
  );
  const cases: [string, Record<string, unknown>, string][] = [
    ["split_window", {}, "it names no paneId"],
    ["join_pane", { paneId: "%4" }, "it names no targetPaneId"],
    ["swap_pane", { paneId: "%4", targetPaneId: 7 }, "its targetPaneId is not a string"],
    ["select_layout", { layout: "tiled" }, "it names no windowId"],
    ["select_pane", { paneId: "%4", host: "build-box" }, 'runs on host "build-box"'],
  ];
  for (const [tool, input, why] of cases) {
    const calls = guardedCalls(tool, input);
    assert.equal(calls.length, 1, tool);
    assert.ok(calls[0].unclear?.includes(why), `${calls[0].unclear} ∌ ${why}`);
  }
  // In a batch, an unzooming row is judged by tmux as it is unless a row before it waits: only
  // a view change (which this hook asks about in its own right, unread after other changes)
  // could bring a zoomed window in front of a person first. It counts as a change for the rows
  // after it, as before. select_pane moves a focus: after changes it is asked about unread.
  const rows = guardedCalls(BATCH_TOOL, {
    operations: [
      { tool: "split_window", arguments: { paneId: "%4" } },
      { tool: "select_layout", arguments: { windowId: "@2", layout: "tiled" } },
      { tool: "wait_for_idle", arguments: { paneId: "%4" } },
      { tool: "select_pane", arguments: { paneId: "%5" } },
      { tool: "send_keys", arguments: { paneId: "%5", text: "x" } },
    ],
  });
  assert.deepEqual(rows.map((r) => [r.label, r.after?.map((op) => op.tool)]), [
    [`${BATCH_TOOL} operation 1 (split_window)`, undefined],
    [`${BATCH_TOOL} operation 2 (select_layout)`, undefined],
    [`${BATCH_TOOL} operation 4 (select_pane)`, ["split_window", "select_layout", "wait_for_idle"]],
    [`${BATCH_TOOL} operation 5 (send_keys)`, [
      "split_window",
      "select_layout",
      "wait_for_idle",
      "select_pane",
    ]],
  ]);
  // After a row that moves a pane or window, an unzooming row is asked about unread: a pane
  // joined into a person's window and then zoomed there takes their keys, which tmux as it is
  // before the batch does not show.
  const moved = guardedCalls(BATCH_TOOL, {
    operations: [
      { tool: "join_pane", arguments: { paneId: "%4", targetPaneId: "%1" } },
      { tool: "resize_pane", arguments: { paneId: "%4", zoom: true } },
    ],
  });
  assert.deepEqual(moved.map((r) => r.after?.map((op) => op.tool)), [undefined, ["join_pane"]]);
});

Deno.test("guard: a call that would unzoom a window a person shows zoomed is asked about, naming window and client", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    // The person's window: three panes, the first zoomed (the others hidden).
    const person = ["new-session", "-d", "-s", "person", "-n", "edit", "-P", "-F"];
    const [window, shown] = (await t.tmux(...person, "#{window_id} #{pane_id}", "sh")).trim()
      .split(" ");
    const split = async (target: string) =>
      (await t.tmux("split-window", "-d", "-t", target, "-P", "-F", "#{pane_id}", "sh")).trim();
    const hidden1 = await split(shown);
    const hidden2 = await split(shown);
    await t.tmux("resize-pane", "-Z", "-t", shown);
    // A window nobody watches, not zoomed.
    const [bgWindow, bg1] =
      (await t.tmux("new-session", "-d", "-s", "bg", "-P", "-F", "#{window_id} #{pane_id}", "sh"))
        .trim().split(" ");
    const bg2 = await split(bg1);
    const tty = await t.attach("person");
    const zoomed = `window ${window}, which client ${tty} shows zoomed on pane ${shown} ` +
      `(person:0.0 "edit")`;
    const asks: [string, Record<string, unknown>, string][] = [
      ["split_window", { paneId: hidden1 }, `would split pane ${hidden1}, which unzooms ${zoomed}`],
      [
        "split_window",
        { paneId: shown, command: "cat" },
        `would split pane ${shown}, which unzooms ${zoomed}`,
      ],
      [
        "join_pane",
        { paneId: bg1, targetPaneId: hidden1 },
        `would move pane ${bg1} beside pane ${hidden1}, which unzooms ${zoomed}`,
      ],
      [
        "join_pane",
        { paneId: hidden1, targetPaneId: bg1 },
        `would move pane ${hidden1} beside pane ${bg1}, which unzooms ${zoomed}`,
      ],
      [
        "swap_pane",
        { paneId: hidden1, targetPaneId: hidden2 },
        `would swap pane ${hidden1} with pane ${hidden2}, which unzooms ${zoomed}`,
      ],
      [
        "swap_pane",
        { paneId: bg1, targetPaneId: shown },
        `would swap pane ${bg1} with pane ${shown}, which unzooms ${zoomed}`,
      ],
      [
        "break_pane",
        { paneId: hidden2 },
        `would break pane ${hidden2} out into a window of its own, which unzooms ${zoomed}`,
      ],
      [
        "select_layout",
        { windowId: window, layout: "tiled" },
        `would rearrange and unzoom ${zoomed}`,
      ],
      [
        "resize_pane",
        { paneId: hidden1, height: 5 },
        `would resize pane ${hidden1}, which unzooms ${zoomed}`,
      ],
      [
        "resize_pane",
        { paneId: shown, width: 20 },
        `would resize pane ${shown}, which unzooms ${zoomed}`,
      ],
      ["resize_pane", { paneId: hidden1, zoom: false }, `would unzoom ${zoomed}`],
      [
        "resize_pane",
        { paneId: hidden1, zoom: true },
        `would zoom pane ${hidden1}, which unzooms ${zoomed}: what they type next goes to pane ${hidden1}`,
      ],
      ["resize_window", { windowId: window, zoom: false }, `would unzoom ${zoomed}`],
      [
        "select_pane",
        { paneId: hidden2 },
        `would select pane ${hidden2}, which unzooms ${zoomed}: what they type next goes to pane ${hidden2}`,
      ],
    ];
    for (const [tool, args, reason] of asks) {
      const r = await guardCall(env, tool, args);
      assert.equal(r.code, 0, r.stderr.join("\n"));
      const d = seedDecision(r.stdout);
      assert.equal(d.permissionDecision, "ask", tool);
      assert.equal(d.permissionDecisionReason, `${tool} ${reason}.`);
    }
    // What leaves the zoom as it is, or touches no window a person shows zoomed.
    const quiet = { code: 0, stdout: "", stderr: [] };
    const passes: [string, Record<string, unknown>][] = [
      ["split_window", { paneId: bg1 }],
      ["join_pane", { paneId: bg1, targetPaneId: bg2 }],
      ["join_pane", { paneId: bg1, targetPaneId: "%999" }], // fails: no such pane
      ["swap_pane", { paneId: bg1, targetPaneId: bg2 }],
      ["break_pane", { paneId: bg2 }],
      ["select_layout", { windowId: bgWindow, layout: "tiled" }],
      ["select_layout", { windowId: "@999", layout: "tiled" }],
      ["resize_pane", { paneId: shown, zoom: true }],
      ["resize_pane", { paneId: bg1, zoom: false }],
      ["resize_window", { windowId: window, zoom: true }],
      ["resize_window", { windowId: window, width: 100, height: 30 }],
      ["select_pane", { paneId: shown }],
      ["select_pane", { paneId: bg2 }],
    ];
    for (const [tool, args] of passes) {
      assert.deepEqual(await guardCall(env, tool, args), quiet, `${tool} ${JSON.stringify(args)}`);
    }
    // A batch row is judged too; one after a row that waits is asked about unread.
    const batch = await guardCall(env, BATCH_TOOL, {
      operations: [
        { tool: "split_window", arguments: { paneId: bg1 } },
        { tool: "split_window", arguments: { paneId: hidden1 } },
      ],
    });
    assert.equal(
      seedDecision(batch.stdout).permissionDecisionReason,
      `${BATCH_TOOL} operation 2 (split_window) would split pane ${hidden1}, which unzooms ${zoomed}.`,
    );
    const waited = await guardCall(env, BATCH_TOOL, {
      operations: [
        { tool: "wait_for_idle", arguments: { paneId: bg1 } },
        { tool: "split_window", arguments: { paneId: bg1 } },
      ],
    });
    assert.match(
      seedDecision(waited.stdout).permissionDecisionReason,
      /time passes before call_tools_batch operation 2 \(split_window\) runs/,
    );
    // One snapshot for the whole call, however many rows it holds: the tmux processes a call
    // on one pane starts, no more.
    const started = (tool: string, args: Record<string, unknown>) => guardStarts(t, tool, args);
    const one = await started("respawn_pane", { paneId: bg1 });
    const many = await started(BATCH_TOOL, {
      operations: [
        { tool: "split_window", arguments: { paneId: bg1 } },
        { tool: "select_layout", arguments: { windowId: window, layout: "tiled" } },
        { tool: "resize_pane", arguments: { paneId: hidden1, zoom: true } },
      ],
    });
    assert.deepEqual(many.runs, one.runs);
    // A zoom after rows that change tmux moves a person's keys as a focus row does: asked
    // about unread.
    assert.match(
      many.reason ?? "",
      /\(split_window, select_layout\) may change what call_tools_batch operation 3 \(resize_pane\) would resize/,
    );
    // Unzoomed, the window is only reshaped in front of the person: a view change the server
    // refuses unless started with --allow-attended-input, not this hook's question.
    await t.tmux("resize-pane", "-Z", "-t", shown);
    assert.deepEqual(await guardCall(env, "split_window", { paneId: hidden1 }), quiet);
    assert.deepEqual(
      await guardCall(env, "select_layout", { windowId: window, layout: "tiled" }),
      quiet,
    );
  } finally {
    await t.kill();
  }
});

Deno.test("guard: a batch that joins a pane into a person's window and then zooms it there is asked about", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const shown =
      (await t.tmux("new-session", "-d", "-s", "person", "-P", "-F", "#{pane_id}", "sh"))
        .trim();
    const work = (await t.tmux("new-session", "-d", "-s", "work", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    const moved = (await t.tmux("split-window", "-d", "-t", work, "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    await t.attach("person");
    const r = await guardCall(env, BATCH_TOOL, {
      operations: [
        { tool: "join_pane", arguments: { paneId: moved, targetPaneId: shown } },
        { tool: "resize_pane", arguments: { paneId: moved, zoom: true } },
      ],
    });
    assert.equal(r.code, 0, r.stderr.join("\n"));
    const d = seedDecision(r.stdout);
    assert.equal(d.permissionDecision, "ask");
    assert.match(d.permissionDecisionReason ?? "", /operation 2 \(resize_pane\)/);
  } finally {
    await t.kill();
  }
});

/**
 * A person's window of three panes, not zoomed, and a one-pane window another person is shown;
 * a window of two panes nobody is shown. Zooming the person's window hides two of the panes
 * on their screen, which the server refuses unless --allow-attended-input.
 */
Deno.test("guard: zooming a window a person is shown, not zoomed yet, is asked about: it hides its other panes", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const ids = async (...args: string[]) =>
      (await t.tmux(...args, "-P", "-F", "#{window_id} #{pane_id}", "sh")).trim().split(" ");
    const [window, shown] = await ids("new-session", "-d", "-s", "person", "-n", "edit");
    const [, beside] = await ids("split-window", "-d", "-t", shown);
    await ids("split-window", "-d", "-t", shown);
    const [lone, lonePane] = await ids("new-session", "-d", "-s", "alone", "-n", "one");
    const [bgWindow, bg1] = await ids("new-session", "-d", "-s", "bg", "-n", "bg");
    await ids("split-window", "-d", "-t", bg1);
    const tty = await t.attach("person");
    await t.attach("alone");
    const hides = `would zoom window ${window} on pane ${shown} (person:0.0 "edit") on the ` +
      `screen of client ${tty}, hiding its 2 other panes`;
    const asks: [string, Record<string, unknown>][] = [
      ["resize_pane", { paneId: shown, zoom: true }],
      ["resize_pane", { paneId: shown, width: 20, zoom: true }],
      ["resize_window", { windowId: window, zoom: true }],
      ["resize_window", { windowId: window, width: 100, height: 30, zoom: true }],
    ];
    for (const [tool, args] of asks) {
      const r = await guardCall(env, tool, args);
      assert.equal(r.code, 0, r.stderr.join("\n"));
      const d = seedDecision(r.stdout);
      assert.equal(d.permissionDecision, "ask", `${tool} ${JSON.stringify(args)}`);
      assert.equal(d.permissionDecisionReason, `${tool} ${hides}.`);
    }
    // Another pane zoomed is asked about once, for the keys it takes (focus_test.ts).
    const other = await guardCall(env, "resize_pane", { paneId: beside, zoom: true });
    assert.match(
      seedDecision(other.stdout).permissionDecisionReason,
      new RegExp(
        `^resize_pane would zoom pane ${beside} \\(person:0\\.\\d "edit"\\) in place of [^;]*\\.$`,
      ),
    );
    // A batch row is judged the same way.
    const batch = await guardCall(env, BATCH_TOOL, {
      operations: [{ tool: "resize_window", arguments: { windowId: window, zoom: true } }],
    });
    assert.equal(
      seedDecision(batch.stdout).permissionDecisionReason,
      `${BATCH_TOOL} operation 1 (resize_window) ${hides}.`,
    );
    // A window of one pane hides nothing; one nobody is shown hides nothing from anyone; a
    // window that does not exist is not zoomed (the call fails).
    const quiet = { code: 0, stdout: "", stderr: [] };
    const passes: [string, Record<string, unknown>][] = [
      ["resize_window", { windowId: lone, zoom: true }],
      ["resize_pane", { paneId: lonePane, zoom: true }],
      ["resize_window", { windowId: bgWindow, zoom: true }],
      ["resize_pane", { paneId: bg1, zoom: true }],
      ["resize_window", { windowId: "@999", zoom: true }],
      ["resize_pane", { paneId: "%999", zoom: true }],
      ["resize_window", { windowId: window, zoom: false }], // not zoomed: nothing to undo
    ];
    for (const [tool, args] of passes) {
      assert.deepEqual(await guardCall(env, tool, args), quiet, `${tool} ${JSON.stringify(args)}`);
    }
    // Zoomed already on the pane the call zooms: nothing changes on the person's screen.
    await t.tmux("resize-pane", "-Z", "-t", shown);
    assert.deepEqual(
      await guardCall(env, "resize_window", { windowId: window, zoom: true }),
      quiet,
    );
    assert.deepEqual(await guardCall(env, "resize_pane", { paneId: shown, zoom: true }), quiet);
  } finally {
    await t.kill();
  }
});
