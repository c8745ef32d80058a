import assert from "node:assert/strict";
import { TestTmux } from "../../tests/helpers/tmux.ts";
import { BATCH_TOOL, guardedCalls } from "./guarded_calls.ts";
import { agentEnv, guardCall, seedDecision } from "./testing.ts";
import { VIEW_TOOLS } from "./view.ts";

Deno.test("guardedCalls: set_option and set_synchronize_panes are read by what they reach", () => {
  assert.deepEqual([...VIEW_TOOLS].sort(), ["set_option", "set_synchronize_panes"]);
  const reach = (tool: string, args: Record<string, unknown>) =>
    guardedCalls(`mcp__tmux__${tool}`, args).map((c) => c.unclear ?? c.view?.reach);
  const window = (id: string, listed = false) => ({
    kind: "window",
    target: { kind: "window", id },
    listed,
  });
  // Turned on, what a person types in the window after switching to it reaches every pane.
  assert.deepEqual(reach("set_synchronize_panes", { windowId: "@2", enabled: true }), [
    window("@2", true),
  ]);
  assert.deepEqual(reach("set_synchronize_panes", { windowId: "@2", enabled: false }), [
    window("@2"),
  ]);
  for (const value of ["on", "off"]) {
    assert.deepEqual(
      reach("set_option", { name: "synchronize-panes", value, scope: "window", target: "@2" }),
      [window("@2", true)],
    );
  }
  assert.deepEqual(
    reach("set_option", { name: "synchronize-panes", value: "on", scope: "pane", target: "%4" }),
    [{ kind: "window", target: { kind: "pane", id: "%4" }, listed: true }],
  );
  assert.deepEqual(
    reach("set_option", { name: "status", value: "off", scope: "session", target: "a b" }),
    [
      { kind: "session", ref: "a b" },
    ],
  );
  assert.deepEqual(
    reach("set_option", { name: "mode-keys", value: "vi", scope: "window", target: "@2" }),
    [
      window("@2"),
    ],
  );
  // A status line shows every window's entry, not only the current one's.
  assert.deepEqual(
    reach("set_option", {
      name: "window-status-format",
      value: "x",
      scope: "window",
      target: "@2",
    }),
    [window("@2", true)],
  );
  assert.deepEqual(
    reach("set_option", { name: "remain-on-exit", value: "on", scope: "pane", target: "%4" }),
    [
      { kind: "window", target: { kind: "pane", id: "%4" }, listed: false },
    ],
  );
  const kind = (args: Record<string, unknown>) => {
    const [r] = reach("set_option", args);
    return typeof r === "string" ? r : r?.kind;
  };
  for (
    const args of [
      { name: "status", value: "off", scope: "session", global: true },
      { name: "mouse", unset: true, scope: "window", global: "yes" }, // refused, read as global
      { name: "escape-time", value: "0", scope: "server" },
      { name: "status-format[1]", value: "x", scope: "session", global: true },
      // Written over at the server's exit: the file it names loses its content.
      { name: "history-file", value: "/tmp/h", scope: "server" },
    ]
  ) {
    assert.equal(kind(args), "everything", JSON.stringify(args));
  }
  // Nobody is shown a user option unless a format draws it, nor these server options; a
  // session, window or pane option without a target is refused before tmux is read.
  for (
    const args of [
      { name: "@mine", value: "1", scope: "session", global: true },
      { name: "@list[3]", value: "1", scope: "server" },
      { name: "exit-empty", value: "off", scope: "server" },
      { name: "status", value: "off", scope: "session" },
      { name: "status", value: "off", scope: "window", target: null },
    ]
  ) {
    assert.deepEqual(reach("set_option", args), [], JSON.stringify(args));
  }
  // A start of a name tmux would take for the whole (buffer-limi) is refused by the server;
  // here it is judged like any option of what a person sees.
  assert.equal(
    kind({ name: "buffer-limi", value: "5", scope: "server" }),
    "everything",
  );
  const unclear: [string, Record<string, unknown>, string][] = [
    ["set_option", { name: 7, value: "x", scope: "server" }, "its option name is not a string"],
    ["set_option", { name: "status", value: "x" }, "its scope is not server"],
    ["set_option", { name: "status", scope: "client", target: "$1" }, "its scope is not server"],
    ["set_option", { name: "status", scope: "session", target: 1 }, "its target is not a string"],
    ["set_synchronize_panes", { enabled: true }, "it names no windowId"],
    ["set_synchronize_panes", { windowId: ["@2"], enabled: true }, "its windowId is not a string"],
    ["set_option", { name: "status", scope: "server", host: "box" }, 'runs on host "box"'],
  ];
  for (const [tool, args, why] of unclear) {
    const [call] = guardedCalls(tool, args);
    assert.ok(call.unclear?.includes(why), `${tool} ${JSON.stringify(args)}: ${call.unclear}`);
  }
  assert.match(
    guardedCalls("set_option", { name: "status", scope: "pane", target: 3 })[0].unclear ?? "",
    /^its target/,
  );
  assert.equal(
    guardedCalls("set_synchronize_panes", {})[0].label,
    "set_synchronize_panes",
  );
  // In a batch: a session is named by name, which an earlier row may have given it, and a
  // window or pane, named by id, an earlier row may have put in front of a person (a `tmux
  // select-window` typed into a shell): after a change, each is asked about unread. Before any,
  // judged by tmux as it is.
  const rows = guardedCalls(BATCH_TOOL, {
    operations: [
      { tool: "set_option", arguments: { name: "status", scope: "session", target: "a" } },
      { tool: "rename_session", arguments: { session: "b", name: "a" } },
      { tool: "set_option", arguments: { name: "status", scope: "session", target: "a" } },
      { tool: "set_synchronize_panes", arguments: { windowId: "@2", enabled: true } },
      { tool: "wait_for_idle", arguments: { paneId: "%4" } },
      { tool: "set_option", arguments: { name: "status", scope: "pane", target: "%4" } },
    ],
  });
  assert.deepEqual(
    rows.map((r) => [r.after?.map((op) => op.tool), r.madeBefore?.map((op) => op.tool)]),
    [
      [undefined, undefined],
      [["set_option", "rename_session"], undefined],
      [["set_option", "rename_session", "set_option"], undefined],
      [[
        "set_option",
        "rename_session",
        "set_option",
        "set_synchronize_panes",
        "wait_for_idle",
      ], undefined],
    ],
  );
});

async function guardRun(
  env: Record<string, string>,
  tool: string,
  args: Record<string, unknown>,
): Promise<string> {
  const { code, stdout, stderr } = await guardCall(env, tool, args);
  assert.equal(code, 0, stderr.join("\n"));
  return stdout === "" ? "" : seedDecision(stdout).permissionDecisionReason;
}

Deno.test("guard: synchronize-panes or an option of what a person is shown is asked about; elsewhere, not", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const made = async (...args: string[]) =>
      (await t.tmux(...args, "-P", "-F", "#{session_id} #{window_id} #{pane_id}", "sh")).trim()
        .split(" ");
    // The person's session "my work": two windows, the first shown, with two panes.
    const [session, shown, pane] = await made("new-session", "-d", "-s", "my work", "-n", "edit");
    const [, , beside] = await made("split-window", "-d", "-t", pane);
    const [, listed] = await made("new-window", "-d", "-t", session, "-n", "logs");
    // Nobody's session.
    const [, bgWindow, bgPane] = await made("new-session", "-d", "-s", "bg");
    const ask = (tool: string, args: Record<string, unknown>) => guardRun(env, tool, args);
    const set = (scope: string, target: string | undefined, name = "status", more = {}) =>
      ask("set_option", { name, value: "off", scope, ...target ? { target } : {}, ...more });

    // Before anyone attaches: nothing to ask about, globally or anywhere.
    assert.equal(await set("session", undefined, "status", { global: true }), "");
    assert.equal(await set("server", undefined, "escape-time"), "");
    assert.equal(await ask("set_synchronize_panes", { windowId: shown, enabled: true }), "");

    const tty = await t.attach(session);
    const client = `client ${tty}`;
    assert.equal(
      await set("session", "my work"),
      `set_option would set option "status" for session "my work", which a person is shown ` +
        `(${client}).`,
    );
    assert.equal(
      await set("window", shown, "mode-keys"),
      `set_option would set option "mode-keys" for window ${shown} ("my work":0 "edit"), which a ` +
        `person is watching (${client}).`,
    );
    assert.equal(
      await ask("set_option", {
        name: "remain-on-exit",
        unset: true,
        scope: "pane",
        target: beside,
      }),
      `set_option would unset option "remain-on-exit" for pane ${beside} ("my work":0.1 "edit"), in ` +
        `window ${shown}, which a person is watching (${client}).`,
    );
    assert.equal(
      await set("window", undefined, "mouse", { global: true, append: true }),
      `set_option would append to option "mouse" globally, which reaches every session and ` +
        `window: ${client} is attached.`,
    );
    assert.equal(
      await set("server", undefined, "escape-time"),
      `set_option would set option "escape-time" for the whole server, which reaches every ` +
        `session and window: ${client} is attached.`,
    );
    // A window of their session they are not shown: its own options are nobody's sight, its
    // entry in their status line is.
    assert.equal(await set("window", listed, "mode-keys"), "");
    assert.equal(
      await set("window", listed, "window-status-style"),
      `set_option would set option "window-status-style" for window ${listed} ("my work":1 "logs"), ` +
        `whose entry the status line of a person's session shows (${client} is attached).`,
    );
    assert.equal(
      await ask("set_synchronize_panes", { windowId: shown, enabled: true }),
      `set_synchronize_panes would turn synchronize-panes on for window ${shown} ("my work":0 ` +
        `"edit"), which a person is watching (${client}): what they type there would reach ` +
        `every pane of it.`,
    );
    // A window of their session they are not shown: one key away.
    assert.equal(
      await ask("set_synchronize_panes", { windowId: listed, enabled: true }),
      `set_synchronize_panes would turn synchronize-panes on for window ${listed} ("my work":1 ` +
        `"logs"), whose entry the status line of a person's session shows (${client} is ` +
        `attached): what they type there would reach every pane of it.`,
    );
    assert.match(
      await set("window", listed, "synchronize-panes"),
      /would set option "synchronize-panes" for window @\d+ .*whose entry the status line/,
    );
    // Off already, by the global value: asked too, as the server refuses it: the call sets the
    // window's own value, which a global one set later no longer reaches.
    assert.match(
      await ask("set_synchronize_panes", { windowId: shown, enabled: false }),
      /would turn synchronize-panes off .*: what they type there would reach only the pane they are in\.$/,
    );
    await t.tmux("set-option", "-w", "-t", shown, "synchronize-panes", "on");
    assert.match(
      await ask("set_synchronize_panes", { windowId: shown, enabled: true }),
      /would turn synchronize-panes on for window/,
    );

    // What nobody is shown, what reaches nobody, and what does not exist (the call fails).
    const quiet: [string, Record<string, unknown>][] = [
      ["set_option", { name: "status", value: "off", scope: "session", target: "bg" }],
      ["set_option", { name: "mode-keys", value: "vi", scope: "window", target: bgWindow }],
      ["set_option", { name: "remain-on-exit", value: "on", scope: "pane", target: bgPane }],
      ["set_option", { name: "@mark", value: "1", scope: "session", target: "my work" }],
      ["set_option", { name: "@mark", value: "1", scope: "session", global: true }],
      ["set_option", { name: "exit-empty", value: "off", scope: "server" }],
      ["set_option", { name: "status", value: "off", scope: "session", target: "gone" }],
      ["set_option", { name: "mode-keys", value: "vi", scope: "window", target: "@999" }],
      ["set_option", { name: "mode-keys", value: "vi", scope: "window", target: "edit" }],
      ["set_synchronize_panes", { windowId: bgWindow, enabled: true }],
      ["set_synchronize_panes", { windowId: "@999", enabled: true }],
      // Off where they are not shown: their keys reach only the pane they see.
      ["set_synchronize_panes", { windowId: listed, enabled: false }],
    ];
    for (const [tool, args] of quiet) {
      assert.equal(await ask(tool, args), "", `${tool} ${JSON.stringify(args)}`);
    }
    // In a batch: a window made by an earlier row is not there yet, and asked about.
    assert.match(
      await ask(BATCH_TOOL, {
        operations: [
          { tool: "create_window", arguments: { session: "bg" } },
          { tool: "set_synchronize_panes", arguments: { windowId: "@999", enabled: true } },
        ],
      }),
      /^earlier operations of this batch \(create_window\) may change what call_tools_batch operation 2 \(set_synchronize_panes\) would synchronize/,
    );
    // A session renamed to the name a later row sets an option for: asked unread.
    assert.match(
      await ask(BATCH_TOOL, {
        operations: [
          { tool: "rename_session", arguments: { session: "my work", name: "quiet" } },
          { tool: "set_option", arguments: { name: "status", scope: "session", target: "quiet" } },
        ],
      }),
      /^earlier operations of this batch \(rename_session\) may change what call_tools_batch operation 2 \(set_option\) would set an option for/,
    );
    // A pane or window nobody is shown, moved by an earlier row (the guard does not ask about a
    // move nobody sees) into the person's window or session: its options are theirs by then.
    const moved: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ["join_pane", { paneId: bgPane, targetPaneId: pane }, {
        name: "remain-on-exit",
        value: "on",
        scope: "pane",
        target: bgPane,
      }],
      ["move_window", { windowId: bgWindow, session: "my work" }, {
        name: "window-status-style",
        value: "bg=red",
        scope: "window",
        target: bgWindow,
      }],
    ];
    for (const [tool, args, option] of moved) {
      assert.equal(await ask("set_option", option), "", `${option.target} is nobody's sight`);
      assert.match(
        await ask(BATCH_TOOL, {
          operations: [{ tool, arguments: args }, { tool: "set_option", arguments: option }],
        }),
        // (After the join's own concern: the person's window has synchronize-panes on.)
        new RegExp(
          `earlier operations of this batch \\(${tool}\\) may change what ` +
            "call_tools_batch operation 2 \\(set_option\\) would set an option for",
        ),
        tool,
      );
    }
    // A person previewing every pane (choose-tree) is shown every session.
    await t.tmux("switch-client", "-c", tty, "-t", "bg");
    assert.equal(await set("session", "my work"), "");
    await t.tmux("choose-tree", "-t", bgPane);
    assert.match(await set("session", "my work"), /for session "my work", which a person is shown/);
  } finally {
    await t.kill();
  }
});

Deno.test("guardedCalls: turning on an option that ends sessions, or opens a terminal, is read as such", () => {
  const reach = (args: Record<string, unknown>) =>
    guardedCalls("set_option", args).map((c) => c.unclear ?? c.view?.reach);
  for (const value of ["on", "1", "", "Yes", "true", 1]) {
    assert.deepEqual(
      reach({ name: "destroy-unattached", value, scope: "session", target: "work" }),
      [{ kind: "ending", where: 'for session "work"', server: false }],
      JSON.stringify(value),
    );
    assert.deepEqual(
      reach({ name: "exit-unattached", value, scope: "server" }),
      [{ kind: "ending", where: "for the whole server", server: true }],
    );
    assert.deepEqual(
      reach({ name: "allow-passthrough", value, scope: "pane", target: "%4" }),
      [{ kind: "terminal", where: 'for pane "%4"' }],
    );
  }
  assert.deepEqual(
    reach({ name: "destroy-unattached", value: "on", scope: "session", global: true }),
    [{ kind: "ending", where: "globally", server: false }],
  );
  // Unset for one session or window, it takes the value above, which may be on.
  assert.deepEqual(
    reach({ name: "destroy-unattached", unset: true, scope: "session", target: "work" }),
    [{ kind: "ending", where: 'for session "work"', server: false }],
  );
  assert.deepEqual(
    reach({ name: "allow-passthrough", unset: true, scope: "window", target: "@2" }),
    [{ kind: "terminal", where: 'for window "@2"' }],
  );
  // Off, in any spelling tmux reads as off, or unset globally (tmux's default, off): judged as
  // any other option.
  for (const value of ["off", "OFF", "no", "0"]) {
    assert.deepEqual(
      reach({ name: "destroy-unattached", value, scope: "session", target: "work" }),
      [{ kind: "session", ref: "work" }],
    );
    assert.deepEqual(reach({ name: "exit-unattached", value, scope: "server" }), [
      { kind: "everything", how: "for the whole server" },
    ]);
    assert.deepEqual(
      reach({ name: "allow-passthrough", value, scope: "window", target: "@2" }),
      [{ kind: "window", target: { kind: "window", id: "@2" }, listed: false }],
    );
  }
  assert.deepEqual(
    reach({ name: "destroy-unattached", unset: true, scope: "session", global: true }),
    [{ kind: "everything", how: "globally" }],
  );
  // A global flag the server refuses does not count as the reset an unset of it would be.
  assert.deepEqual(
    reach({ name: "destroy-unattached", unset: true, scope: "session", global: "yes" }),
    [{ kind: "ending", where: "globally", server: false }],
  );
});

Deno.test("guard: an option that ends sessions is asked about whoever is attached; one that opens a terminal, while anyone is", async () => {
  const t = await TestTmux.start("agent");
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const ask = (args: Record<string, unknown>) => guardRun(env, "set_option", args);
    await t.tmux("new-session", "-d", "-s", "work", "sh");
    const unwatched = (await t.tmux("new-window", "-d", "-t", "work:", "-P", "-F", "#{window_id}"))
      .trim();
    // Nobody is attached: a detached session ends at once.
    assert.equal(
      await ask({ name: "destroy-unattached", value: "on", scope: "session", target: "work" }),
      'set_option would set option "destroy-unattached" for session "work": tmux would then ' +
        "end each session it reaches, and every program in it, the moment no client is " +
        "attached to it (a detached one at once); the MCP server refuses it (kill_session and " +
        "kill_server end them under their guards).",
    );
    assert.match(
      await ask({ name: "exit-unattached", value: "1", scope: "server" }),
      /^set_option would set option "exit-unattached" for the whole server: tmux would then end the whole server, every session and program in it, the moment no client is attached to it \(at once if none is\); the MCP server refuses it/,
    );
    assert.match(
      await ask({ name: "destroy-unattached", value: "", scope: "session", global: true }),
      /^set_option would set option "destroy-unattached" globally: tmux would then end each session/,
    );
    // In a batch too.
    assert.match(
      await guardRun(env, BATCH_TOOL, {
        operations: [{
          tool: "set_option",
          arguments: { name: "destroy-unattached", value: "on", scope: "session", target: "work" },
        }],
      }),
      /^call_tools_batch operation 1 \(set_option\) would set option "destroy-unattached"/,
    );
    for (
      const args of [
        { name: "destroy-unattached", value: "off", scope: "session", target: "work" },
        { name: "exit-unattached", value: "no", scope: "server" },
        { name: "destroy-unattached", unset: true, scope: "session", global: true },
        // Nobody attached: no terminal to reach.
        { name: "allow-passthrough", value: "on", scope: "window", target: unwatched },
      ]
    ) {
      assert.equal(await ask(args), "", JSON.stringify(args));
    }
    // A person attached to work, shown its first window.
    const tty = await t.attach("work");
    assert.equal(
      await ask({ name: "allow-passthrough", value: "on", scope: "window", target: unwatched }),
      `set_option would set option "allow-passthrough" for window "${unwatched}": its programs ` +
        "could then write to the terminal of a person who looks at it (their clipboard, " +
        `anywhere on their screen), and any window is a key away: client ${tty} is attached.`,
    );
    assert.equal(
      await ask({ name: "allow-passthrough", value: "off", scope: "window", target: unwatched }),
      "",
    );
  } finally {
    await t.kill();
  }
});
