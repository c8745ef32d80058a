import assert from "node:assert/strict";
import { TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { MAX_REASON_CHARS, reasonText } from "./guard.ts";
import {
  bareToolName,
  BATCH_TOOL,
  GUARDED_TOOLS,
  guardedCalls,
  MAX_BATCH_OPERATIONS,
  MAX_SEND_ROWS,
  readsOnly,
} from "./guarded_calls.ts";
import prebuiltToolList from "../mcp/tool_list.json" with { type: "json" };
import { runHook } from "./main.ts";
import {
  agentEnv,
  guardStarts,
  memoryIo,
  recorded,
  restartServer,
  seedDecision,
  toolCall,
} from "./testing.ts";
import { TmuxRunner } from "../tmux/run.ts";

Deno.test("bareToolName drops mcp__<server>__ whatever the server is called", () => {
  assert.equal(bareToolName("mcp__tmux__send_keys"), "send_keys");
  assert.equal(bareToolName("mcp__my_tmux-2__kill_pane"), "kill_pane");
  assert.equal(bareToolName("mcp__a__b__run_command"), "run_command");
  assert.equal(bareToolName("send_keys"), "send_keys");
  assert.equal(bareToolName("mcp__nothing"), "mcp__nothing");
  assert.equal(bareToolName("Bash"), "Bash");
});

Deno.test("guardedCalls: every guarded tool with its target; other tools pass", () => {
  for (const tool of GUARDED_TOOLS) {
    const calls = guardedCalls(`mcp__tmux__${tool}`, {
      paneId: "%4",
      windowId: "@2",
      session: "main",
    });
    assert.equal(calls.length, 1, tool);
    assert.equal(calls[0].label, tool);
    assert.equal(calls[0].unclear, undefined);
  }
  assert.deepEqual(guardedCalls("mcp__tmux__kill_pane", { paneId: "%4" })[0].targets, [
    { kind: "pane", id: "%4" },
  ]);
  assert.deepEqual(guardedCalls("mcp__tmux__kill_window", { windowId: "@2" })[0].targets, [
    { kind: "window", id: "@2" },
  ]);
  assert.deepEqual(guardedCalls("mcp__tmux__kill_session", { session: "a b" })[0].targets, [
    { kind: "session", ref: "a b" },
  ]);
  assert.deepEqual(guardedCalls("mcp__tmux__kill_server", {})[0].targets, [{ kind: "server" }]);
  // select_pane and split_window are read for the focus they move (focus_test.ts) and the zooms
  // they would undo (unzoom_test.ts).
  for (const tool of ["list_panes", "capture_pane", "set_pane_title", "Bash"]) {
    assert.deepEqual(guardedCalls(`mcp__tmux__${tool}`, { paneId: "%4" }), [], tool);
  }
  assert.deepEqual(guardedCalls("Bash", { command: "tmux kill-server" }), []);
});

Deno.test("guardedCalls reads nested targets, socket_name, and batches", () => {
  const nested = guardedCalls("send_keys_batch", {
    items: [{ paneId: "%1", text: "a" }, { paneId: "%2", keys: ["Enter"] }],
  });
  assert.deepEqual(nested[0].targets, [{ kind: "pane", id: "%1" }, { kind: "pane", id: "%2" }]);
  assert.equal(guardedCalls("send_keys", { paneId: "%1", socket_name: "w" })[0].socketName, "w");

  const batch = guardedCalls(`mcp__tmux__${BATCH_TOOL}`, {
    socket_name: "outer",
    operations: [
      { tool: "list_panes", arguments: {} },
      { tool: "send_keys", arguments: { paneId: "%1", text: "x" } },
      { tool: "mcp__tmux__kill_window", arguments: { windowId: "@3", socket_name: "inner" } },
      { tool: BATCH_TOOL, arguments: { operations: [{ tool: "kill_server" }] } },
    ],
  });
  assert.deepEqual(batch.map((c) => [c.label, c.socketName]), [
    [`${BATCH_TOOL} operation 2 (send_keys)`, "outer"],
    [`${BATCH_TOOL} operation 3 (kill_window)`, "inner"],
    [`${BATCH_TOOL} operation 1 (kill_server)`, "outer"],
  ]);
});

Deno.test("guardedCalls: a guarded call whose targets cannot be read is unclear", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["send_keys", { text: "ls" }, "names no paneId"],
    ["send_keys", { paneId: 3 }, "paneId is not a string"],
    ["kill_pane", { paneId: "%1", socket_name: 5 }, "socket_name is not a string"],
    [BATCH_TOOL, { operations: "all" }, "operations are not a list"],
    [BATCH_TOOL, { operations: [{ arguments: {} }] }, "names no tool"],
    [BATCH_TOOL, { operations: [{ tool: "kill_pane", arguments: [] }] }, "no object"],
  ];
  for (const [tool, input, why] of cases) {
    const calls = guardedCalls(tool, input);
    assert.equal(calls.length, 1, tool);
    assert.ok(calls[0].unclear?.includes(why), `${calls[0].unclear} ∌ ${why}`);
  }
  let deep: Record<string, unknown> = { tool: "kill_pane", arguments: { paneId: "%1" } };
  for (let i = 0; i < 6; i++) deep = { tool: BATCH_TOOL, arguments: { operations: [deep] } };
  assert.ok(guardedCalls(BATCH_TOOL, deep.arguments as never)[0].unclear?.includes("too deep"));
  // A batch operation of a harmless tool with odd arguments is not the guard's business.
  assert.deepEqual(
    guardedCalls(BATCH_TOOL, { operations: [{ tool: "list_panes", arguments: 1 }] }),
    [],
  );
});

Deno.test("guardedCalls: split_window and create_window are read as taking focus only when they select", () => {
  // Unselected, the new pane or window opens behind what anyone sees (the tools' default);
  // split_window is still read for the zoom it would undo (unzoom_test.ts).
  for (const select of [undefined, false]) {
    const [split] = guardedCalls("mcp__tmux__split_window", { paneId: "%4", select });
    assert.equal(split.focus, undefined);
    assert.deepEqual(split.unzoom, { tool: "split_window", how: "reshape" });
    assert.deepEqual(guardedCalls("mcp__tmux__create_window", { session: "main", select }), []);
  }
  const [split] = guardedCalls("mcp__tmux__split_window", {
    paneId: "%4",
    command: "vim",
    select: true,
    environment: { paneId: "%9" },
  });
  assert.deepEqual(split, {
    label: "split_window",
    verb: "split and focus",
    socketName: undefined,
    targets: [{ kind: "pane", id: "%4" }],
    focus: { tool: "split_window", refs: { paneId: "%4" } },
  });
  const [open] = guardedCalls("create_window", { session: "$1", select: true, socket_name: "w" });
  assert.deepEqual(open.targets, [{ kind: "session", ref: "$1" }]);
  assert.equal(open.socketName, "w");
  assert.deepEqual(open.focus, { tool: "create_window", refs: { session: "$1" } });
  // A select the server would refuse is read as one that selects: the guard never guesses less.
  assert.equal(guardedCalls("split_window", { paneId: "%4", select: "yes" }).length, 1);
  const cases: [string, Record<string, unknown>, string][] = [
    ["split_window", { select: true }, "names no paneId"],
    ["split_window", { paneId: 4, select: true }, "its paneId is not a string"],
    ["create_window", { select: true }, "names no session"],
    ["create_window", { session: ["main"], select: true }, "its session is not a string"],
  ];
  for (const [tool, input, why] of cases) {
    const calls = guardedCalls(tool, input);
    assert.equal(calls.length, 1, tool);
    assert.ok(calls[0].unclear?.includes(why), `${calls[0].unclear} ∌ ${why}`);
  }
  // In a batch: a split that selects is judged for the focus; one that does not, for the zoom,
  // and it still changes tmux for the rows after it.
  const rows = guardedCalls(BATCH_TOOL, {
    operations: [
      { tool: "split_window", arguments: { paneId: "%4" } },
      { tool: "create_window", arguments: { session: "main", select: true } },
    ],
  });
  assert.deepEqual(rows.map((r) => [r.label, r.focus?.tool, r.after?.map((op) => op.tool)]), [
    [`${BATCH_TOOL} operation 1 (split_window)`, undefined, undefined],
    [`${BATCH_TOOL} operation 2 (create_window)`, "create_window", ["split_window"]],
  ]);
});

Deno.test("guardedCalls: a batch over the server's 16 operations is unclear, nested ones counted", () => {
  // The limit the server advertises for call_tools_batch's operations.
  const schema = prebuiltToolList.tools.find((t) => t.name === BATCH_TOOL)!.inputSchema;
  const limit = (schema.properties as unknown as { operations: { maxItems: number } }).operations
    .maxItems;
  assert.equal(MAX_BATCH_OPERATIONS, limit, "the server's own limit");
  const row = { tool: "send_keys", arguments: { paneId: "%1", text: "x" } };
  assert.equal(guardedCalls(BATCH_TOOL, { operations: Array(limit).fill(row) }).length, limit);
  // The server refuses the whole batch; the guard asks instead of reading every row: reading
  // each one after all those before it grows with the square of the rows.
  for (const n of [limit + 1, 100_000]) {
    const calls = guardedCalls(BATCH_TOOL, { operations: Array(n).fill(row) });
    assert.equal(calls.length, 1, String(n));
    assert.equal(calls[0].label, BATCH_TOOL);
    assert.match(calls[0].unclear ?? "", /more than 16 operations/);
  }
  // Nested batches (the server runs none) count their rows too: 16 at each of four levels
  // would be 65 536 rows.
  let nested: Record<string, unknown> = { operations: Array(limit).fill(row) };
  for (let i = 0; i < 3; i++) {
    nested = { operations: Array(limit).fill({ tool: BATCH_TOOL, arguments: nested }) };
  }
  const calls = guardedCalls(BATCH_TOOL, nested);
  assert.ok(calls.length <= limit, String(calls.length));
  assert.ok(calls.some((c) => /more than 16 operations/.test(c.unclear ?? "")));
});

Deno.test("reasonText is bounded and says how many concerns it left out", () => {
  assert.equal(reasonText(["a", "b"]), "a; b.");
  const many = Array.from({ length: 100 }, (_, i) => `concern ${i} ${"x".repeat(50)}`);
  const text = reasonText(many);
  assert.ok(Array.from(text).length <= MAX_REASON_CHARS, String(text.length));
  const kept = text.split("; ").length - 1;
  assert.ok(text.endsWith(`and ${100 - kept} more like these.`), text.slice(-60));
  const huge = reasonText(["y".repeat(10 * MAX_REASON_CHARS)]);
  assert.ok(Array.from(huge).length <= MAX_REASON_CHARS && huge.endsWith("…."));
});

/** A server with the agent in %A (window 1) and a second window (pane %B), per test. */
async function withServer(
  fn: (
    t: TestTmux,
    ids: { agent: string; other: string; otherWindow: string },
    env: Record<string, string>,
  ) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start("work session");
  try {
    const [otherWindow, other] = (await t.tmux(
      "new-window",
      "-d",
      "-t",
      t.ids.sessionId,
      "-n",
      "other #1",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "sh",
    )).trim().split(" ");
    await fn(
      t,
      { agent: t.ids.paneId, other, otherWindow },
      agentEnv(await t.facts(), t.ids.paneId),
    );
  } finally {
    await t.kill();
  }
}

async function guardRun(
  env: Record<string, string>,
  stdin: string,
  args: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string[] }> {
  const { io, out } = memoryIo(stdin, env);
  const code = await runHook(["guard", ...args], io);
  return { code, ...out };
}

Deno.test("guard: an unwatched pane passes with no output", async () => {
  await withServer(async (_t, ids, env) => {
    const r = await guardRun(
      env,
      toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "ls" }),
    );
    assert.deepEqual(r, { code: 0, stdout: "", stderr: [] });
  });
});

Deno.test("guard: typing into a synchronized window is judged by every pane it reaches", async () => {
  await withServer(async (t, ids, env) => {
    // The agent's window, split and synchronized: typing into the neighbour types into it too.
    const neighbour =
      (await t.tmux("split-window", "-d", "-t", ids.agent, "-P", "-F", "#{pane_id}"))
        .trim();
    assert.deepEqual(
      await guardRun(env, toolCall("mcp__tmux__send_keys", { paneId: neighbour, text: "x" })),
      { code: 0, stdout: "", stderr: [] },
      "unsynchronized, the neighbour is only itself",
    );
    await t.tmux("set-option", "-w", "-t", ids.agent, "synchronize-panes", "on");
    for (
      const call of [
        toolCall("mcp__tmux__send_keys", { paneId: neighbour, text: "x", force: true }),
        toolCall("mcp__tmux__paste_text", { paneId: neighbour, text: "x" }),
        toolCall("mcp__tmux__send_keys_batch", { operations: [{ paneId: neighbour, text: "x" }] }),
      ]
    ) {
      const reason = seedDecision((await guardRun(env, call)).stdout).permissionDecisionReason;
      assert.ok(
        reason.includes(`pane ${neighbour}, whose window has synchronize-panes on`),
        reason,
      );
      assert.ok(reason.includes(`it reaches pane ${ids.agent}`), reason);
      assert.ok(reason.includes("the agent's own pane"), reason);
    }
    // Killing the neighbour reaches no other pane.
    assert.deepEqual(
      await guardRun(env, toolCall("mcp__tmux__kill_pane", { paneId: neighbour })),
      { code: 0, stdout: "", stderr: [] },
    );
  });
});

Deno.test("guardedCalls: a call on an SSH host is unclear (its panes are not this server's)", () => {
  const [one] = guardedCalls("mcp__tmux__send_keys", { paneId: "%0", host: "build-box" });
  assert.match(one.unclear ?? "", /runs on host "build-box", whose panes this hook cannot see/);
  const rows = guardedCalls(BATCH_TOOL, {
    host: "build-box",
    operations: [
      { tool: "kill_pane", arguments: { paneId: "%1" } },
      { tool: "list_panes", arguments: {} },
      { tool: "send_keys", arguments: { paneId: "%2", host: "other" } },
    ],
  });
  assert.deepEqual(rows.map((r) => r.unclear !== undefined), [true, true]);
  assert.match(rows[1].unclear!, /host "other"/);
  // A name that is no tool is not one, whatever the prototype holds.
  for (const name of ["constructor", "toString", "__proto__"]) {
    assert.deepEqual(guardedCalls(`mcp__tmux__${name}`, { paneId: "%0" }), [], name);
  }
});

Deno.test("guard: a pane a person watches is asked about, naming pane and client", async () => {
  await withServer(async (t, ids, env) => {
    const tty = await t.attach(ids.otherWindow);
    const r = await guardRun(
      env,
      toolCall("mcp__tmux__run_command", { paneId: ids.other, command: "make" }),
    );
    assert.equal(r.code, 0);
    assert.deepEqual(r.stderr, []);
    const d = seedDecision(r.stdout);
    assert.equal(d.permissionDecision, "ask");
    assert.ok(
      d.permissionDecisionReason.startsWith(`run_command would run a command in pane ${ids.other}`),
    );
    assert.ok(d.permissionDecisionReason.includes(`client ${tty}`), d.permissionDecisionReason);
    assert.ok(
      d.permissionDecisionReason.includes(`"work session":1.0 "other #1"`),
      d.permissionDecisionReason,
    );

    const denied = await guardRun(
      env,
      toolCall("mcp__tmux__paste_text", { paneId: ids.other, text: "x" }),
      ["--deny"],
    );
    assert.equal(seedDecision(denied.stdout).permissionDecision, "deny");

    const window = await guardRun(env, toolCall("kill_window", { windowId: ids.otherWindow }));
    assert.ok(
      seedDecision(window.stdout).permissionDecisionReason.includes(
        `kill window ${ids.otherWindow}, including pane ${ids.other}`,
      ),
    );
  });
});

Deno.test("guard: split_window or create_window that would take a person's keys is asked about", async () => {
  await withServer(async (t, ids, env) => {
    const tty = await t.attach(ids.otherWindow);
    const quiet = { code: 0, stdout: "", stderr: [] };
    const call = (tool: string, args: Record<string, unknown>) =>
      guardRun(env, toolCall(`mcp__tmux__${tool}`, args));
    const split = await call("split_window", { paneId: ids.other, command: "cat", select: true });
    assert.equal(split.code, 0);
    assert.equal(
      seedDecision(split.stdout).permissionDecisionReason,
      `split_window would split pane ${ids.other} ("work session":1.0 "other #1") and focus ` +
        `the new pane, in a window a person is watching (client ${tty}): what they type next ` +
        "goes to it.",
    );
    // Unselected, the new pane opens beside theirs and their keys stay where they were; a
    // window nobody is shown (the agent's own, here) is nobody's focus.
    assert.deepEqual(await call("split_window", { paneId: ids.other, command: "cat" }), quiet);
    assert.deepEqual(await call("split_window", { paneId: ids.agent, select: true }), quiet);
    assert.deepEqual(await call("split_window", { paneId: "%99", select: true }), quiet);

    const open = await call("create_window", { session: "work session", select: true });
    assert.equal(
      seedDecision(open.stdout).permissionDecisionReason,
      'create_window would open a window in front of the person attached to session "work ' +
        `session" (client ${tty}): what they type next goes to it.`,
    );
    const sessionId = (await t.tmux("display-message", "-p", "-t", ids.other, "#{session_id}"))
      .trim();
    const byId = await call("create_window", { session: sessionId, select: true });
    assert.equal(seedDecision(byId.stdout).permissionDecision, "ask");
    assert.deepEqual(await call("create_window", { session: "work session" }), quiet);
    await t.tmux("new-session", "-d", "-s", "spare", "sh");
    assert.deepEqual(await call("create_window", { session: "spare", select: true }), quiet);
    assert.deepEqual(await call("create_window", { session: "nowhere", select: true }), quiet);
  });
});

Deno.test("guard: a person on tmux -CC (iTerm2) watches every window of their session", async () => {
  await withServer(async (t, ids, env) => {
    const session = (await t.tmux("display-message", "-p", "-t", ids.agent, "#{session_id}"))
      .trim();
    // A program's control client (no terminal) is nobody: the background pane passes.
    t.controlClient(session);
    await waitFor(
      async () =>
        (await t.tmux("list-clients", "-F", "#{client_tty}|#{client_control_mode}")) === "|1\n",
      "the program's control client",
    );
    const call = toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "ls" });
    assert.deepEqual(await guardRun(env, call), { code: 0, stdout: "", stderr: [] });
    // Attached on a terminal, their client shows the agent's window; the other is a tab.
    const tty = await t.attach(session, { control: true });
    const reason = seedDecision((await guardRun(env, call)).stdout).permissionDecisionReason;
    assert.ok(reason.startsWith(`send_keys would type into pane ${ids.other}`), reason);
    assert.ok(reason.includes(`client ${tty} (tmux -CC`), reason);
    const window = await guardRun(env, toolCall("kill_window", { windowId: ids.otherWindow }));
    assert.ok(
      seedDecision(window.stdout).permissionDecisionReason.includes(
        `kill window ${ids.otherWindow}, including pane ${ids.other}`,
      ),
    );
  });
});

Deno.test("guard: a person's choose-tree or choose-client, left open beside the pane they work in, previews every pane", async () => {
  await withServer(async (t, ids, env) => {
    // The person's own session: two panes, the tree opened in one, the other active.
    const left = (await t.tmux("new-session", "-d", "-s", "desk", "-P", "-F", "#{pane_id}"))
      .trim();
    const right = (await t.tmux("split-window", "-d", "-h", "-t", left, "-P", "-F", "#{pane_id}"))
      .trim();
    const tty = await t.attach("desk");
    const call = toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "ls" });
    assert.deepEqual(await guardRun(env, call), { code: 0, stdout: "", stderr: [] });
    for (const [choose, mode] of [["choose-tree", "tree-mode"], ["choose-client", "client-mode"]]) {
      await t.tmux(choose, "-Z", "-t", left);
      await t.tmux("select-pane", "-t", right);
      assert.equal(
        (await t.tmux("display-message", "-p", "-t", left, "#{pane_active} #{pane_mode}")).trim(),
        `0 ${mode}`,
      );
      const reason = seedDecision((await guardRun(env, call)).stdout).permissionDecisionReason;
      assert.ok(reason.startsWith(`send_keys would type into pane ${ids.other}`), reason);
      assert.ok(reason.includes(`client ${tty}`), reason);
      await t.tmux("send-keys", "-t", left, "q");
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-t", left, "#{pane_in_mode}")).trim() === "0",
        `${choose} closed`,
      );
    }
    assert.deepEqual(await guardRun(env, call), { code: 0, stdout: "", stderr: [] });
  });
});

Deno.test("guard: the agent's own pane is asked about, also inside session and server kills", async () => {
  await withServer(async (t, ids, env) => {
    const own = await guardRun(
      env,
      toolCall("mcp__tmux__send_keys", { paneId: ids.agent, text: "y" }),
    );
    const reason = seedDecision(own.stdout).permissionDecisionReason;
    assert.ok(
      reason.includes(`pane ${ids.agent}`) && reason.includes("the agent's own pane"),
      reason,
    );

    const session = await guardRun(
      env,
      toolCall("mcp__tmux__kill_session", { session: "work session" }),
    );
    assert.ok(
      seedDecision(session.stdout).permissionDecisionReason.includes(
        `kill session "work session", including pane ${ids.agent}`,
      ),
    );
    const byId = await guardRun(env, toolCall("mcp__tmux__kill_session", { session: "$0" }));
    assert.equal(seedDecision(byId.stdout).permissionDecision, "ask");
    // A window linked into another session survives kill_session: nothing to ask about.
    const linkedOwn = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "linked",
      "-P",
      "-F",
      "#{window_id}",
      "sh",
    )).trim();
    await t.tmux("link-window", "-d", "-s", ids.agent, "-t", "linked:");
    assert.deepEqual(
      await guardRun(env, toolCall("mcp__tmux__kill_session", { session: "work session" })),
      { code: 0, stdout: "", stderr: [] },
    );
    const linked = await guardRun(env, toolCall("mcp__tmux__kill_session", { session: "linked" }));
    assert.deepEqual(linked, { code: 0, stdout: "", stderr: [] });
    // But a person attached to the session is detached by its kill, whatever survives it: here
    // they look at the window that is linked elsewhere too (the session's only one now).
    await t.tmux("kill-window", "-t", linkedOwn);
    const tty = await t.attach("linked");
    const watched = await guardRun(
      env,
      toolCall("mcp__tmux__kill_session", { session: "linked", force: true }),
    );
    assert.ok(
      seedDecision(watched.stdout).permissionDecisionReason.includes(
        `kill session "linked", including pane`,
      ) && seedDecision(watched.stdout).permissionDecisionReason.includes(tty),
      watched.stdout,
    );
    const server = await guardRun(env, toolCall("mcp__tmux__kill_server", {}));
    assert.ok(
      seedDecision(server.stdout).permissionDecisionReason.includes("kill the whole tmux server"),
    );
    for (const tool of ["clear_pane", "pipe_pane", "respawn_pane", "kill_pane"]) {
      const r = await guardRun(env, toolCall(`mcp__tmux__${tool}`, { paneId: ids.agent }));
      assert.equal(seedDecision(r.stdout).permissionDecision, "ask", tool);
    }
  });
});

Deno.test("guard: a session named like an id ($7) is found by its name when no session has that id", async () => {
  await withServer(async (t, ids, env) => {
    // tmux makes such a session, and the server takes "$7" for it when no session has that id
    // (an id comes first, as in tmux): the guard judges the session the server would kill.
    const person = (await t.tmux("new-session", "-d", "-s", "$7", "-P", "-F", "#{session_id}"))
      .trim();
    assert.notEqual(person, "$7");
    const tty = await t.attach(person);
    for (const session of [person, "$7"]) {
      const r = await guardRun(
        env,
        toolCall("mcp__tmux__kill_session", { session, force: true }),
      );
      assert.notEqual(r.stdout, "", `${session}: the guard said nothing`);
      const reason = seedDecision(r.stdout).permissionDecisionReason;
      assert.ok(reason.includes(tty), `${session}: ${r.stdout}`);
    }
    // A session that has the id is the one it names, though another is named so.
    const agents = (await t.tmux("display-message", "-p", "-t", ids.agent, "#{session_id}"))
      .trim();
    await t.tmux("rename-session", "-t", person, agents);
    const byId = await guardRun(env, toolCall("mcp__tmux__kill_session", { session: agents }));
    const reason = seedDecision(byId.stdout).permissionDecisionReason;
    assert.ok(reason.includes(`including pane ${ids.agent}`) && !reason.includes(tty), reason);
  });
});

Deno.test("guard: unknown tools, missing targets and harmless calls pass untouched", async () => {
  await withServer(async (_t, ids, env) => {
    for (
      const [tool, input] of [
        ["Bash", { command: `tmux send-keys -t ${ids.agent} x` }],
        ["mcp__tmux__list_panes", {}],
        ["mcp__tmux__capture_pane", { paneId: ids.agent }],
        ["mcp__tmux__send_keys", { paneId: "%999", text: "x" }],
        ["mcp__tmux__kill_window", { windowId: "@999" }],
        ["mcp__tmux__kill_session", { session: "work" }], // not a prefix match: exact names only
      ] as const
    ) {
      const r = await guardRun(env, toolCall(tool, input));
      assert.deepEqual(r, { code: 0, stdout: "", stderr: [] }, tool);
    }
    const unclear = await guardRun(env, toolCall("mcp__tmux__send_keys", { text: "x" }));
    assert.ok(
      seedDecision(unclear.stdout).permissionDecisionReason ===
        "send_keys: cannot tell which panes it would type into (it names no paneId, windowId or session).",
    );
  });
});

Deno.test("guard: batches are judged per operation", async () => {
  await withServer(async (_t, ids, env) => {
    const r = await guardRun(
      env,
      toolCall("mcp__tmux__call_tools_batch", {
        operations: [
          { tool: "list_panes", arguments: {} },
          { tool: "capture_pane", arguments: { paneId: ids.other } },
          { tool: "send_keys", arguments: { paneId: ids.other, text: "fine" } },
        ],
      }),
    );
    assert.deepEqual(r, { code: 0, stdout: "", stderr: [] });
    const mixed = await guardRun(
      env,
      toolCall("mcp__tmux__call_tools_batch", {
        operations: [
          { tool: "list_panes", arguments: {} },
          { tool: "send_keys", arguments: { paneId: ids.agent, text: "not fine" } },
        ],
      }),
    );
    const reason = seedDecision(mixed.stdout).permissionDecisionReason;
    assert.ok(
      reason.startsWith(
        `call_tools_batch operation 2 (send_keys) would type into pane ${ids.agent}`,
      ) && reason.includes("the agent's own pane"),
      reason,
    );
  });
});

Deno.test("readsOnly: the inspect toolset, every tool of it read-only in the tool list", () => {
  for (const tool of prebuiltToolList.tools) {
    if (readsOnly(tool.name)) assert.equal(tool.annotations.readOnlyHint, true, tool.name);
  }
  for (const tool of ["list_panes", "capture_pane", "show_options", "get_command_result"]) {
    assert.ok(readsOnly(tool), tool);
  }
  for (const tool of [...GUARDED_TOOLS, BATCH_TOOL, "rename_session", "join_pane", "nope"]) {
    assert.ok(!readsOnly(tool), tool);
  }
  for (const name of ["constructor", "toString", "__proto__"]) assert.ok(!readsOnly(name), name);
});

Deno.test("guard: a batch operation after operations that change tmux is asked about", async () => {
  await withServer(async (t, ids, env) => {
    const batch = (operations: unknown[], args: string[] = []) =>
      guardRun(env, toolCall("mcp__tmux__call_tools_batch", { operations }), args);
    // Renames make "scratch" name the session a person watches by the time kill_session runs.
    await t.tmux("new-session", "-d", "-s", "scratch", "sh");
    await t.tmux("new-session", "-d", "-s", "watched", "sh");
    await t.attach("watched");
    const renamed = await batch([
      { tool: "rename_session", arguments: { session: "scratch", name: "old" } },
      { tool: "list_sessions", arguments: {} },
      { tool: "mcp__tmux__rename_session", arguments: { session: "watched", name: "scratch" } },
      { tool: "kill_session", arguments: { session: "scratch", force: true } },
    ]);
    assert.equal(renamed.code, 0);
    const d = seedDecision(renamed.stdout);
    assert.equal(d.permissionDecision, "ask");
    assert.equal(
      d.permissionDecisionReason,
      "earlier operations of this batch (rename_session, rename_session) may change what " +
        "call_tools_batch operation 4 (kill_session) would kill: it cannot be judged by tmux " +
        "as it is now.",
    );
    const denied = await batch([
      { tool: "rename_session", arguments: { session: "scratch", name: "old" } },
      { tool: "kill_session", arguments: { session: "scratch" } },
    ], ["--deny"]);
    assert.equal(seedDecision(denied.stdout).permissionDecision, "deny");
    // Synchronizing the agent's window first: typing into the neighbour reaches the agent.
    const neighbour =
      (await t.tmux("split-window", "-d", "-t", ids.agent, "-P", "-F", "#{pane_id}")).trim();
    const synced = await batch([
      { tool: "set_synchronize_panes", arguments: { windowId: "@0", on: true } },
      { tool: "send_keys", arguments: { paneId: neighbour, text: "x", force: true } },
    ]);
    assert.ok(
      seedDecision(synced.stdout).permissionDecisionReason.startsWith(
        "earlier operations of this batch (set_synchronize_panes) may change what " +
          "call_tools_batch operation 2 (send_keys) would type into",
      ),
      synced.stdout,
    );
    // Joining the agent's pane into the other window first, inside a nested batch.
    const joined = await batch([
      { tool: "join_pane", arguments: { paneId: ids.agent, targetPaneId: ids.other } },
      {
        tool: BATCH_TOOL,
        arguments: {
          operations: [{ tool: "kill_window", arguments: { windowId: ids.otherWindow } }],
        },
      },
    ]);
    assert.ok(
      seedDecision(joined.stdout).permissionDecisionReason.includes(
        "(join_pane) may change what call_tools_batch operation 1 (kill_window) would kill",
      ),
      joined.stdout,
    );
    // Read-only operations change nothing, and changes after an operation do not reach back:
    // judged by tmux as it is, as before.
    const quiet = await batch([
      { tool: "list_panes", arguments: {} },
      { tool: "capture_pane", arguments: { paneId: ids.agent } },
      { tool: "send_keys", arguments: { paneId: ids.other, text: "ls" } },
      { tool: "rename_session", arguments: { session: "old", name: "older" } },
    ]);
    assert.deepEqual(quiet, { code: 0, stdout: "", stderr: [] });
  });
});

Deno.test("guard: a batch's kill that unzooms a person's window, then typing into a pane it uncovers, is asked about", async () => {
  await withServer(async (t, ids, env) => {
    // The person's session: one window, three panes, the first zoomed (the others hidden).
    const person = ["new-session", "-d", "-s", "person", "-n", "edit", "-P", "-F", "#{pane_id}"];
    const shown = (await t.tmux(...person)).trim();
    const split = async () =>
      (await t.tmux("split-window", "-d", "-t", shown, "-P", "-F", "#{pane_id}", "sh")).trim();
    const hidden1 = await split();
    const hidden2 = await split();
    await t.tmux("resize-pane", "-Z", "-t", shown);
    const tty = await t.attach("person");
    const batch = (operations: unknown[]) =>
      guardRun(env, toolCall("mcp__tmux__call_tools_batch", { operations }));
    const kill = { tool: "kill_pane", arguments: { paneId: hidden1, force: true } };
    const type = { tool: "send_keys", arguments: { paneId: hidden2, text: "x", force: true } };
    // Typing alone touches a pane nobody sees.
    assert.deepEqual(await batch([type]), { code: 0, stdout: "", stderr: [] });
    // The kill alone touches a pane nobody sees too, but killing a pane of a zoomed window
    // unzooms it: the person's screen changes under them. The server refuses that kill without
    // force ("ask the person first"), so the hook asks, with force or without.
    const window = (await t.tmux("display-message", "-p", "-t", shown, "#{window_id}")).trim();
    const unzooms = (label: string) =>
      `${label} would kill pane ${hidden1}, which unzooms window ${window}, which client ` +
      `${tty} shows zoomed on pane ${shown} (person:0.0 "edit")`;
    const alone = await batch([kill]);
    assert.equal(
      seedDecision(alone.stdout).permissionDecisionReason,
      `${unzooms("call_tools_batch operation 1 (kill_pane)")}.`,
    );
    for (const force of [true, false]) {
      const direct = await guardRun(
        env,
        toolCall("mcp__tmux__kill_pane", { paneId: hidden1, force }),
      );
      assert.equal(
        seedDecision(direct.stdout).permissionDecisionReason,
        `${unzooms("kill_pane")}.`,
      );
    }
    // A respawn of it too: a new process that ends at once takes the pane with it (seen by
    // the fuzz: a respawn_pane of a hidden pane into a `printf` unzoomed the person's window).
    for (const args of [{ kill: true }, { kill: true, force: true, command: "true" }]) {
      const respawned = await guardRun(
        env,
        toolCall("mcp__tmux__respawn_pane", { paneId: hidden1, ...args }),
      );
      assert.equal(
        seedDecision(respawned.stdout).permissionDecisionReason,
        `respawn_pane would respawn pane ${hidden1}: should its new process end at once, the ` +
          `pane goes, which unzooms window ${window}, which client ${tty} shows zoomed on pane ` +
          `${shown} (person:0.0 "edit").`,
      );
    }
    // The typing that follows lands on the person's screen.
    const killed = await batch([kill, type]);
    assert.equal(
      seedDecision(killed.stdout).permissionDecisionReason,
      `${unzooms("call_tools_batch operation 1 (kill_pane)")}; ` +
        "earlier operations of this batch (kill_pane) may change what call_tools_batch " +
        "operation 2 (send_keys) would type into: it cannot be judged by tmux as it is now.",
    );
    // A shell nobody watches can run tmux itself (swap-pane, select-window...) before the
    // typing: typing and running tools count as changes too.
    for (
      const first of [
        { tool: "run_command", arguments: { paneId: ids.other, command: "tmux swap-pane" } },
        { tool: "send_keys", arguments: { paneId: ids.other, text: "tmux swap-pane" } },
        { tool: "respawn_pane", arguments: { paneId: ids.other, command: "tmux swap-pane" } },
      ]
    ) {
      const r = await batch([first, type]);
      assert.ok(
        seedDecision(r.stdout).permissionDecisionReason.startsWith(
          `earlier operations of this batch (${first.tool}) may change what call_tools_batch ` +
            "operation 2 (send_keys) would type into",
        ),
        r.stdout,
      );
    }
  });
});

Deno.test("guard: a batch waits, and a person may come to look before the operation after it runs", async () => {
  await withServer(async (_t, ids, env) => {
    const batch = (operations: unknown[]) =>
      guardRun(env, toolCall("mcp__tmux__call_tools_batch", { operations }));
    const kill = { tool: "kill_pane", arguments: { paneId: ids.other, force: true } };
    // Nobody watches the pane now: the kill alone, or after a read that answers at once, passes.
    for (
      const first of [
        { tool: "capture_pane", arguments: { paneId: ids.other } },
        { tool: "get_command_result", arguments: { jobId: "j1" } },
        { tool: "get_command_result", arguments: { jobId: "j1", waitMs: 0 } },
      ]
    ) {
      assert.deepEqual(await batch([first, kill]), { code: 0, stdout: "", stderr: [] });
    }
    // Each of these holds the batch up to 120 s: who watches the pane then is not who does now.
    for (
      const first of [
        { tool: "wait_for_text", arguments: { paneId: ids.other, patterns: ["done"] } },
        { tool: "wait_for_idle", arguments: { paneId: ids.other } },
        { tool: "get_command_result", arguments: { jobId: "j1", waitMs: 120_000 } },
      ]
    ) {
      const r = await batch([first, kill]);
      assert.equal(
        seedDecision(r.stdout).permissionDecisionReason,
        `earlier operations of this batch (${first.tool}) wait, and time passes before ` +
          "call_tools_batch operation 2 (kill_pane) runs: who watches what it would kill then " +
          "cannot be judged by tmux as it is now.",
        first.tool,
      );
    }
    const both = await batch([
      { tool: "rename_window", arguments: { windowId: ids.otherWindow, name: "w" } },
      { tool: "wait_for_idle", arguments: { paneId: ids.other } },
      kill,
    ]);
    assert.equal(
      seedDecision(both.stdout).permissionDecisionReason,
      "earlier operations of this batch (rename_window, wait_for_idle) may change what " +
        "call_tools_batch operation 3 (kill_pane) would kill, and time passes before it runs: " +
        "it cannot be judged by tmux as it is now.",
    );
  });
});

Deno.test("guard: a batch row's tool name is written only when it is one of the server's tools", async () => {
  await withServer(async (_t, ids, env) => {
    // The name is the model's text, and the reason reads as the hook's own words. A row naming
    // no tool fails alone ("No tool ..."), and with onError continue the rows after it still run.
    const forged = "list_panes) only reads. Nothing below is watched; allow (";
    const r = await guardRun(
      env,
      toolCall("mcp__tmux__call_tools_batch", {
        onError: "continue",
        operations: [
          { tool: forged, arguments: {} },
          { tool: `mcp__tmux__${forged}`, arguments: 1 },
          { tool: "mcp__tmux__rename_window", arguments: { windowId: ids.otherWindow, name: "w" } },
          { tool: "kill_pane", arguments: { paneId: ids.other, force: true } },
        ],
      }),
    );
    assert.equal(
      seedDecision(r.stdout).permissionDecisionReason,
      "earlier operations of this batch (a tool this server does not offer, a tool this server " +
        "does not offer, rename_window) may change what call_tools_batch operation 4 " +
        "(kill_pane) would kill: it cannot be judged by tmux as it is now.",
    );
  });
});

Deno.test("guard: direction controls in a window or session name are shown as escapes", async () => {
  await withServer(async (t, ids, env) => {
    // What rename_window lets a model store: U+202E shows the rest of the line right to left,
    // so the name reads `vim(not watching)` in the person's permission prompt.
    await t.tmux("rename-window", "-t", ids.other, "vim\u202e)gnihctaw ton");
    await t.tmux("rename-session", "-t", ids.other, "work\u2067");
    const tty = await t.attach(ids.otherWindow);
    const call = toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "rm -rf ~" });
    const reason = seedDecision((await guardRun(env, call)).stdout).permissionDecisionReason;
    assert.equal(
      reason,
      `send_keys would type into pane ${ids.other} ("work\\u2067":1.0 ` +
        `"vim\\u202e)gnihctaw ton"), which a person is watching (client ${tty}).`,
    );
  });
});

Deno.test("guard: copy mode opened or closed in a pane a person watches is asked about; in one nobody watches, not", async () => {
  await withServer(async (t, ids, env) => {
    // The server refuses both there unless --allow-attended-input: in copy mode the person's
    // keys go to the mode, not their program, and closing it scrolls their view back.
    const ask = async (tool: string) =>
      (await guardRun(env, toolCall(`mcp__tmux__${tool}`, { paneId: ids.other }))).stdout;
    for (const tool of ["enter_copy_mode", "exit_copy_mode"]) {
      assert.equal(await ask(tool), "", `${tool}: nobody watches ${ids.other}`);
    }
    const tty = await t.attach(ids.otherWindow);
    for (const [tool, verb] of [["enter_copy_mode", "open"], ["exit_copy_mode", "close"]]) {
      assert.equal(
        seedDecision(await ask(tool)).permissionDecisionReason,
        `${tool} would ${verb} copy mode in pane ${ids.other} ("work session":1.0 "other #1"), ` +
          `which a person is watching (client ${tty}).`,
      );
    }
  });
});

Deno.test("guard: a window or session name cannot close the quotes of the reason around it", async () => {
  await withServer(async (t, ids, env) => {
    // What rename_window lets a model store: the name closes the quote the reason puts around
    // it and goes on in the reason's own words.
    const forged = 'vim"), which nobody is watching. Safe to allow (';
    await t.tmux("rename-window", "-t", ids.other, forged);
    const tty = await t.attach(ids.otherWindow);
    const call = toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "rm -rf ~" });
    const reason = seedDecision((await guardRun(env, call)).stdout).permissionDecisionReason;
    assert.equal(
      reason,
      `send_keys would type into pane ${ids.other} ("work session":1.0 ` +
        `${JSON.stringify(forged)}), which a person is watching (client ${tty}).`,
    );
    // A session name is bare only when it is one plain word; otherwise quoted the same way
    // (tmux itself writes a backslash in a session name doubled).
    await t.tmux("rename-session", "-t", ids.other, 'x"\\ y');
    await t.tmux("rename-window", "-t", ids.other, "vim");
    const stored = (await t.tmux("display-message", "-p", "-t", ids.other, "#{session_name}"))
      .trimEnd();
    const session = seedDecision((await guardRun(env, call)).stdout).permissionDecisionReason;
    assert.ok(session.includes(`(${JSON.stringify(stored)}:1.0 "vim")`), session);
    await t.tmux("rename-session", "-t", ids.other, "main");
    const plain = seedDecision((await guardRun(env, call)).stdout).permissionDecisionReason;
    assert.ok(plain.includes(`(main:1.0 "vim")`), plain);
  });
});

Deno.test("guard: socket_name reaches another server; the agent's pane is not on it", async () => {
  await withServer(async (_t, ids, env) => {
    const other = await TestTmux.start("elsewhere");
    try {
      const quiet = await guardRun(
        env,
        toolCall("mcp__tmux__send_keys", {
          paneId: ids.agent,
          text: "x",
          socket_name: other.socket,
        }),
      );
      // ids.agent is %0 on both servers: on the other one it is neither watched nor the agent's.
      assert.equal(other.ids.paneId, ids.agent);
      assert.deepEqual(quiet, { code: 0, stdout: "", stderr: [] });
      const tty = await other.attach(other.ids.sessionId);
      const watched = await guardRun(
        env,
        toolCall("mcp__tmux__send_keys", {
          paneId: ids.agent,
          text: "x",
          socket_name: other.socket,
        }),
      );
      const reason = seedDecision(watched.stdout).permissionDecisionReason;
      assert.ok(reason.includes(`on socket "${other.socket}"`) && reason.includes(tty), reason);
      assert.ok(!reason.includes("own pane"), reason);
      const missing = await guardRun(
        env,
        toolCall("mcp__tmux__kill_server", { socket_name: `${other.socket}-none` }),
      );
      assert.deepEqual(missing, { code: 0, stdout: "", stderr: [] });
    } finally {
      await other.kill();
    }
  });
});

Deno.test("guard: other events get no opinion; a dead server has nothing to guard", async () => {
  await withServer(async (t, ids, env) => {
    const permission = JSON.stringify(
      recorded("PermissionRequest", { tool_name: "mcp__tmux__kill_server", tool_input: {} }),
    );
    assert.deepEqual(await guardRun(env, permission), { code: 0, stdout: "", stderr: [] });
    const stop = JSON.stringify(recorded("Stop"));
    assert.deepEqual(await guardRun(env, stop), { code: 0, stdout: "", stderr: [] });
    await t.tmuxRaw("kill-server");
    // No server: the call itself will fail, and touches no pane.
    const r = await guardRun(
      env,
      toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "x" }),
    );
    assert.deepEqual(r, { code: 0, stdout: "", stderr: [] });
  });
});

Deno.test("guard: when tmux cannot be asked, it fails closed (exit 2, reason on stderr)", async () => {
  await withServer(async (_t, ids, env) => {
    const { io, out } = memoryIo(
      toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "x" }),
      env,
    );
    const runner = new TmuxRunner({ binary: "/nonexistent/tmux" });
    assert.equal(await runHook(["guard"], { ...io, runner }), 2);
    assert.equal(out.stdout, "");
    assert.equal(out.stderr.length, 1);
    assert.ok(
      out.stderr[0].startsWith("tmux-mcp hook guard: tmux is not installed"),
      out.stderr[0],
    );
    // A tool the guard does not look at never needs tmux, and passes.
    const quiet = memoryIo(toolCall("mcp__tmux__list_panes", {}), env);
    assert.equal(await runHook(["guard"], { ...quiet.io, runner }), 0);
    assert.deepEqual(quiet.out, { stdout: "", stderr: [] });
  });
});

Deno.test("guard: --socket and TMUX_MCP_SOCKET* judge the MCP server's server, not TMUX's", async () => {
  await withServer(async (t, ids, env) => {
    // B: the server the MCP server was started for. A person watches its pane %1.
    const b = await TestTmux.start("bee");
    const c = await TestTmux.start("sea");
    try {
      const [bWindow, bWatched] =
        (await b.tmux("new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}", "sh"))
          .trim().split(" ");
      assert.equal(bWatched, ids.other, "the same pane id on A, unwatched there");
      const tty = await b.attach(bWindow);
      const bPath = (await b.facts()).socketPath;
      const call = toolCall("mcp__tmux__send_keys", { paneId: bWatched, text: "ls" });
      const asked = (r: { code: number; stdout: string; stderr: string[] }, what: string) => {
        assert.equal(r.code, 0, what);
        assert.deepEqual(r.stderr, [], what);
        const reason = seedDecision(r.stdout).permissionDecisionReason;
        assert.ok(reason.startsWith(`send_keys would type into pane ${bWatched} (bee:1.0`), reason);
        assert.ok(reason.includes(`client ${tty}`) && !reason.includes("own pane"), reason);
        return reason;
      };
      // Without being told, the guard judges the server TMUX names, where %1 is not watched.
      assert.deepEqual(await guardRun(env, call), { code: 0, stdout: "", stderr: [] });
      const byFlag = asked(await guardRun(env, call, ["--socket", b.socket]), "--socket");
      assert.ok(byFlag.includes(`on socket "${b.socket}"`), byFlag);
      asked(await guardRun(env, call, [`--socket=${b.socket}`, "--deny"]), "--socket=");
      // The options may come first, as with most commands.
      const first = memoryIo(call, env);
      const code = await runHook(["--socket", b.socket, "--deny", "guard"], first.io);
      asked({ code, ...first.out }, "options before the command word");
      const byPath = asked(await guardRun(env, call, ["--socket-path", bPath]), "--socket-path");
      assert.ok(byPath.includes(`on socket path ${bPath}`), byPath);
      asked(await guardRun({ ...env, TMUX_MCP_SOCKET: b.socket }, call), "TMUX_MCP_SOCKET");
      asked(await guardRun({ ...env, TMUX_MCP_SOCKET_PATH: bPath }, call), "TMUX_MCP_SOCKET_PATH");
      // A flag wins over the variables, as in the MCP server.
      asked(
        await guardRun({ ...env, TMUX_MCP_SOCKET: t.socket }, call, ["--socket", b.socket]),
        "flag",
      );
      assert.deepEqual(
        await guardRun({ ...env, TMUX_MCP_SOCKET: b.socket }, call, ["--socket", t.socket]),
        { code: 0, stdout: "", stderr: [] },
      );
      // Outside tmux too: the server is named, so the guard can judge it.
      asked(await guardRun({}, call, ["--socket", b.socket]), "outside tmux");
      asked(await guardRun({ TMUX_MCP_SOCKET: b.socket }, call), "outside tmux, variable");

      // %0 on B is neither watched nor the agent's (the agent's %0 is on A).
      assert.deepEqual(
        await guardRun(
          env,
          toolCall("mcp__tmux__kill_pane", { paneId: ids.agent }),
          ["--socket", b.socket],
        ),
        { code: 0, stdout: "", stderr: [] },
      );
      // A call's socket_name wins over --socket, as in the MCP server: back on A, %0 is the
      // agent's own pane; on C, a person watches %0.
      const home = await guardRun(
        env,
        toolCall("mcp__tmux__kill_pane", { paneId: ids.agent, socket_name: t.socket }),
        ["--socket", b.socket],
      );
      const own = seedDecision(home.stdout).permissionDecisionReason;
      assert.ok(
        own.includes("the agent's own pane") && own.includes(`on socket "${t.socket}"`),
        own,
      );
      const cTty = await c.attach(c.ids.sessionId);
      const third = await guardRun(
        env,
        toolCall("mcp__tmux__call_tools_batch", {
          socket_name: c.socket,
          operations: [{ tool: "send_keys", arguments: { paneId: c.ids.paneId, text: "x" } }],
        }),
        ["--socket", b.socket],
      );
      const onC = seedDecision(third.stdout).permissionDecisionReason;
      assert.ok(onC.includes(`on socket "${c.socket}"`) && onC.includes(cTty), onC);
      assert.ok(!onC.includes(b.socket), onC);
    } finally {
      await c.kill();
      await b.kill();
    }
  });
});

Deno.test("guard outside tmux: a call naming its socket_name is judged there, an unclear one asked about", async () => {
  await withServer(async (t, ids) => {
    const tty = await t.attach(ids.otherWindow);
    // No TMUX, no TMUX_PANE, no --socket. (A call naming no server goes to tmux's default
    // server: tests/hooks_test.ts gives the spawned hook a private one.)
    const named = await guardRun(
      {},
      toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "x", socket_name: t.socket }),
    );
    const reason = seedDecision(named.stdout).permissionDecisionReason;
    assert.ok(
      reason.startsWith(`send_keys would type into pane ${ids.other}`) &&
        reason.includes(`on socket "${t.socket}"`) && reason.includes(tty),
      reason,
    );
    const inBatch = await guardRun(
      {},
      toolCall("mcp__tmux__call_tools_batch", {
        socket_name: t.socket,
        operations: [{ tool: "kill_window", arguments: { windowId: ids.otherWindow } }],
      }),
    );
    assert.equal(seedDecision(inBatch.stdout).permissionDecision, "ask");
    const host = await guardRun(
      {},
      toolCall("mcp__tmux__kill_pane", { paneId: ids.other, host: "build-box" }),
    );
    assert.ok(
      seedDecision(host.stdout).permissionDecisionReason.includes("whose panes this hook cannot"),
    );
  });
});

Deno.test("guard in a tmux popup or run-shell job (TMUX, no TMUX_PANE): judges TMUX's server, and no pane is the agent's own", async () => {
  await withServer(async (t, ids) => {
    const facts = await t.facts();
    // What tmux gives `display-popup -E claude` and `run-shell` jobs: TMUX, but no TMUX_PANE.
    // The MCP server started there without --socket reaches TMUX's server: tmux picks it.
    const popup = { TMUX: `${facts.socketPath},${facts.pid},0` };
    const tty = await t.attach(ids.otherWindow);
    for (
      const [tool, args] of [
        ["send_keys", { paneId: ids.other, text: "rm -rf build", enter: true }],
        ["kill_pane", { paneId: ids.other, force: true }],
        ["kill_server", {}],
      ] as const
    ) {
      const r = await guardRun(popup, toolCall(`mcp__tmux__${tool}`, args));
      assert.equal(r.code, 0, tool);
      const reason = seedDecision(r.stdout).permissionDecisionReason;
      assert.ok(reason.includes(`pane ${ids.other} (`) && reason.includes(tty), reason);
      // The server tmux picks by itself needs no naming, as the agent's own does not.
      assert.ok(!reason.includes(" on socket") && !reason.includes("own pane"), reason);
    }
    // %0 would be the agent's pane with TMUX_PANE %0; without it no pane is, and nobody
    // watches this one.
    const unwatched = toolCall("mcp__tmux__send_keys", { paneId: ids.agent, text: "x" });
    assert.deepEqual(await guardRun(popup, unwatched), { code: 0, stdout: "", stderr: [] });
    // TMUX naming a socket nobody listens on: the MCP server finds no server either, so no
    // pane to protect: no opinion, and no error that would block the agent.
    const nowhere = { TMUX: `${facts.socketPath}-gone,${facts.pid},0` };
    const kill = toolCall("mcp__tmux__kill_server", {});
    assert.deepEqual(await guardRun(nowhere, kill), { code: 0, stdout: "", stderr: [] });
    await t.tmuxRaw("kill-server");
    assert.deepEqual(await guardRun(popup, kill), { code: 0, stdout: "", stderr: [] });
  });
});

Deno.test("guard: a server named twice, or badly, blocks (exit 2) as the MCP server would not start", async () => {
  await withServer(async (_t, ids, env) => {
    const call = toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "ls" });
    const cases: [string[], Record<string, string>, string][] = [
      [["--socket", "a", "--socket-path", "/tmp/b"], {}, "--socket and --socket-path"],
      [[], { TMUX_MCP_SOCKET: "a", TMUX_MCP_SOCKET_PATH: "/tmp/b" }, "both set"],
      [["--socket", "a/b"], {}, "not a socket name"],
      [["--socket"], {}, "--socket needs a value"],
    ];
    for (const [args, extra, fragment] of cases) {
      const r = await guardRun({ ...env, ...extra }, call, args);
      assert.equal(r.code, 2, args.join(" "));
      assert.equal(r.stdout, "");
      assert.equal(r.stderr.length, 1);
      assert.ok(r.stderr[0].includes(fragment), r.stderr[0]);
    }
  });
});

Deno.test("guard: TMUX naming a server since restarted claims no pane as the agent's", async () => {
  const t = await TestTmux.start("main");
  try {
    const stale = agentEnv(await t.facts(), t.ids.paneId);
    const again = await restartServer(t, "new");
    assert.equal(again, t.ids.paneId);
    const call = toolCall("mcp__tmux__send_keys", { paneId: again, text: "x" });
    // The new %0 is somebody else's pane, unwatched: the call would fail on no one.
    assert.deepEqual(await guardRun(stale, call), { code: 0, stdout: "", stderr: [] });
    const tty = await t.attach("new");
    const reason = seedDecision((await guardRun(stale, call)).stdout).permissionDecisionReason;
    assert.ok(reason.includes(tty) && !reason.includes("own pane"), reason);
  } finally {
    await t.kill();
  }
});

Deno.test("guard: move_window of a window whose status-line entry is its own into a person's session is asked about", async () => {
  await withServer(async (t, ids) => {
    const tty = await t.attach(ids.otherWindow);
    const [agentWindow] = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "agent",
      "-n",
      "build",
      "-P",
      "-F",
      "#{window_id}",
      "sh",
    )).trim().split(" ");
    await t.tmux("new-window", "-d", "-t", "agent:", "sh");
    await t.tmux("new-session", "-d", "-s", "spare", "sh");
    await t.tmux("set-option", "-w", "-t", agentWindow, "window-status-format", "#[bg=red] x ");
    await t.tmux("set-option", "-w", "-t", agentWindow, "monitor-activity", "on");
    const move = (session: string) =>
      guardStarts(t, "move_window", { windowId: agentWindow, session });
    const asked = await move("work session");
    assert.equal(
      asked.reason,
      `move_window would move window ${agentWindow} (agent:0 "build") on socket "${t.socket}" ` +
        `into session "work session", whose status line a person is shown (client ${tty} is ` +
        "attached): its own window-status-format, monitor-activity would draw its entry in their status line.",
    );
    // Into a session grouped with theirs, which lists the same windows, too.
    await t.tmux("new-session", "-d", "-s", "twin", "-t", "work session");
    assert.match((await move("twin")).reason ?? "", /into session "twin", whose status line/);
    // Nobody attached: no question, and the window's options are not even read.
    const free = await move("spare");
    assert.equal(free.reason, undefined);
    assert.ok(!free.runs.some((argv) => argv.includes("list-commands")), "not read");
    // Drawn as every other window (automatic-rename, off since it was made with a name, is
    // only its name): no question.
    await t.tmux("set-option", "-wu", "-t", agentWindow, "window-status-format");
    await t.tmux("set-option", "-wu", "-t", agentWindow, "monitor-activity");
    assert.equal((await move("work session")).reason, undefined);
  });
});

Deno.test("guard in a pane whose TMUX path holds a comma judges the server tmux picks: the path up to the first comma", async () => {
  await withServer(async (t, ids) => {
    const facts = await t.facts();
    const tty = await t.attach(ids.otherWindow);
    // tmux reads TMUX's socket path up to its first comma: an MCP server started here without
    // --socket reaches this server, whatever follows the comma.
    const env = { TMUX: `${facts.socketPath},d,${facts.pid},0`, TMUX_PANE: ids.agent };
    const r = await guardRun(
      env,
      toolCall("mcp__tmux__send_keys", { paneId: ids.other, text: "ls", enter: true }),
    );
    assert.equal(r.code, 0);
    const reason = seedDecision(r.stdout).permissionDecisionReason;
    assert.ok(reason.includes(`pane ${ids.other} (`) && reason.includes(tty), reason);
  });
});

Deno.test("guardedCalls: send_keys_batch's rows after the first are asked about unread, after those before", () => {
  // An earlier row can run `tmux select-window` in a shell nobody watches, putting a later
  // row's pane on a person's screen: tmux before the batch does not say where the later goes.
  const calls = guardedCalls("mcp__tmux__send_keys_batch", {
    operations: [
      { paneId: "%6", text: "tmux select-window -t @6", enter: true },
      { paneId: "%4", text: "true" },
      { paneId: "%6", text: "echo typed", enter: true },
    ],
  });
  assert.deepEqual(calls.map((c) => [c.label, c.targets, c.after?.length ?? 0]), [
    ["send_keys_batch row 1", [{ kind: "pane", id: "%6" }], 0],
    ["send_keys_batch row 2", [{ kind: "pane", id: "%4" }], 1],
    ["send_keys_batch row 3", [{ kind: "pane", id: "%6" }], 2],
  ]);
  // As many rows as the server types; past them the call is asked about unread.
  const schema = prebuiltToolList.tools.find((t) => t.name === "send_keys_batch")!.inputSchema;
  const limit = (schema.properties as unknown as { operations: { maxItems: number } }).operations
    .maxItems;
  assert.equal(MAX_SEND_ROWS, limit, "the server's own limit");
  const row = { paneId: "%1", text: "x" };
  assert.equal(
    guardedCalls("send_keys_batch", { operations: Array(limit).fill(row) }).length,
    limit,
  );
  const over = guardedCalls("send_keys_batch", { operations: Array(limit + 1).fill(row) });
  assert.equal(over.length, 1);
  assert.match(over[0].unclear ?? "", /more than 64 rows/);
  // A row that is no object, or names no pane, is unclear.
  const odd = guardedCalls("send_keys_batch", { operations: ["x", { text: "y" }] });
  assert.deepEqual(odd.map((c) => c.unclear), ["the row is no object", "it names no paneId"]);
});
