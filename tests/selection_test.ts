/**
 * Per-tool selection: `--tools` and `--deny-tools` on top of `--toolsets`. A tool left out is
 * neither listed nor callable, not even as a row of call_tools_batch; a name no tool has stops
 * the server with the valid names, before it serves anything.
 */

import assert from "node:assert/strict";
import { parseCli, UsageError } from "../src/cli.ts";
import { ToolSelectionError } from "../src/mcp/tool_selection.ts";
import { DEFAULT_TOOLSETS } from "../src/mcp/toolsets.ts";
import { buildServer } from "../src/server.ts";
import { connect, withTmux } from "./helpers/mcp.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, waitFor } from "./helpers/tmux.ts";

const envOf = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("--tools and --deny-tools: from flags or the environment, names only", () => {
  const both = parseCli(
    ["--tools", "list_panes, capture_pane,list_panes", "--deny-tools", "capture_pane"],
    () => undefined,
  );
  assert.ok(both.kind === "serve");
  assert.deepEqual(both.options.tools, ["list_panes", "capture_pane"]);
  assert.deepEqual(both.options.denyTools, ["capture_pane"]);
  const env = parseCli([], envOf({ TMUX_MCP_TOOLS: "list_panes", TMUX_MCP_DENY_TOOLS: "x_y" }));
  assert.ok(env.kind === "serve");
  assert.deepEqual(env.options.tools, ["list_panes"]);
  assert.deepEqual(env.options.denyTools, ["x_y"]);
  // A flag and its variable both naming tools are refused: either alone would drop the
  // other's list without a word.
  assert.throws(
    () => parseCli(["--tools", "send_keys"], envOf({ TMUX_MCP_TOOLS: "list_panes" })),
    /TMUX_MCP_TOOLS and --tools both name tools; give one list/,
  );
  // Neither: no selection at all (every tool of the toolsets).
  const none = parseCli([], () => undefined);
  assert.ok(none.kind === "serve" && !("tools" in none.options) && !("denyTools" in none.options));
  for (
    const [argv, env, pattern] of [
      [["--tools", ""], {}, /--tools: no tool named/],
      [["--tools", " , "], {}, /--tools: no tool named/],
      [
        ["--deny-tools", "send-keys"],
        {},
        /"send-keys" is not a tool name \(tool names are written send_keys\)/,
      ],
      [["--tools", "list_panes;rm"], {}, /is not a tool name/],
      [[], { TMUX_MCP_DENY_TOOLS: "List_Panes" }, /TMUX_MCP_DENY_TOOLS: .*Correct or remove/],
    ] as const
  ) {
    assert.throws(() => parseCli([...argv], envOf(env)), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, pattern);
      return true;
    });
  }
});

Deno.test("a name no tool has, or a tool outside the toolsets, is refused with the valid names", () => {
  const build = (tools?: string[], denyTools?: string[], toolsets = DEFAULT_TOOLSETS) =>
    buildServer({
      address: {},
      toolsets,
      version: "test",
      maxResultBytes: 46_000,
      callerEnv: {},
      tools,
      denyTools,
    });
  assert.throws(() => build(["list_panes", "list_pains"]), (e: unknown) => {
    assert.ok(e instanceof ToolSelectionError);
    assert.match(
      e.message,
      /--tools: no tool is named "list_pains" \(did you mean list_panes\?\)\. Valid names: .*list_panes/,
    );
    // Every tool is named, also those of toolsets not selected.
    assert.match(e.message, /kill_server/);
    return true;
  });
  assert.throws(() => build(undefined, ["nope"]), /--deny-tools: no tool is named "nope"\. Valid/);
  assert.throws(
    () => build(undefined, ["kill_sever", "nope", "show_hook"]),
    /no tool is named "kill_sever", "nope" \(did you mean kill_server for "kill_sever"\?\)\. /,
  );
  assert.throws(
    () => build(["list_panes", "kill_pane"]),
    /toolsets that are not selected: kill_pane \(teardown\)/,
  );
  // Denying a tool of a toolset that is not selected is no mistake: it does not exist anyway.
  build(undefined, ["kill_pane"]);
  // Unless nothing is left.
  assert.throws(
    () => build(["list_panes"], ["list_panes"]),
    /--deny-tools leaves no tool on offer/,
  );
});

Deno.test("a tool left out is neither listed nor callable, also in a batch", async () => {
  await withTmux(async (t) => {
    const c = await connect({
      socketName: t.socket,
      tools: ["list_panes", "capture_pane", "send_keys", "call_tools_batch"],
      denyTools: ["send_keys"],
    });
    try {
      const { tools } = await c.client.listTools();
      const names = tools.map((tool: { name: string }) => tool.name).sort();
      assert.deepEqual(names, ["call_tools_batch", "capture_pane", "list_panes"]);
      await c.ok("list_panes", {});
      const direct = await c.fail("send_keys", { paneId: t.ids.paneId, text: "x" });
      assert.match(direct, /send_keys not found/);
      const notChosen = await c.fail("list_sessions", {});
      assert.match(notChosen, /list_sessions not found/);
      const batch = await c.ok<{ results: { success: boolean; error: string | null }[] }>(
        "call_tools_batch",
        {
          operations: [
            { tool: "list_panes", arguments: {} },
            { tool: "send_keys", arguments: { paneId: t.ids.paneId, text: "x" } },
          ],
          onError: "continue",
        },
      );
      assert.equal(batch.results[0].success, true);
      assert.equal(batch.results[1].success, false);
      assert.match(batch.results[1].error!, /No tool "send_keys".*--deny-tools/);
      // Nothing was typed.
      const screen = await t.tmux("capture-pane", "-p", "-t", t.ids.paneId);
      assert.ok(!screen.includes("x"), screen);
    } finally {
      await c.close();
    }
  });
});

Deno.test("resources are fenced with the tools that return the same: none left out is readable", async () => {
  await withTmux(async (t) => {
    await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "echo TOKEN=s3cr3t");
    const pane = `tmux://pane/${t.ids.paneId.slice(1)}`;
    const only = await connect({ socketName: t.socket, tools: ["list_sessions"] });
    const denied = await connect({ socketName: t.socket, denyTools: ["capture_pane"] });
    try {
      // Nothing to read: no resources capability at all.
      assert.equal(only.client.getServerCapabilities()?.resources, undefined);
      await assert.rejects(only.client.readResource({ uri: pane }));
      await assert.rejects(only.client.readResource({ uri: "tmux://server" }));
      // The pane's screen is capture_pane's: denied with it; the listing stays.
      const templates = (await denied.client.listResourceTemplates()).resourceTemplates
        .map((r: { uriTemplate: string }) => r.uriTemplate);
      assert.ok(!templates.includes("tmux://pane/{pane}"), templates.join());
      const listed = (await denied.client.listResources()).resources
        .map((r: { uri: string }) => r.uri);
      assert.ok(listed.includes("tmux://server") && !listed.includes(pane), listed.join());
      await assert.rejects(denied.client.readResource({ uri: pane }), /not found/i);
      const server = await denied.client.readResource({ uri: "tmux://server" });
      assert.match(JSON.stringify(server), new RegExp(t.ids.paneId));
    } finally {
      await only.close();
      await denied.close();
    }
  });
});

Deno.test("the real process: an unknown name stops it at once, exit 2, naming the valid ones", async () => {
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, [...args, "--deny-tools", "send_keys,sned_keys"], cleanEnv());
  const status = await server.closeStdin();
  assert.equal(status.code, 2);
  assert.match(
    server.stderr,
    /cannot start: --deny-tools: no tool is named "sned_keys" \(did you mean send_keys\?\)/,
  );
  assert.match(server.stderr, /Valid names: .*send_keys/);
  // That line alone: no start-up line first, as if the server were healthy.
  assert.doesNotMatch(server.stderr, /tmux-mcp \d+\.\d+\.\d+: tmux/);
  assert.match(server.stderr, /tmux-mcp --help lists every flag\.\n?$/);
  // Given by a variable, the message names the variable and where to correct it.
  for (
    const [env, said] of [
      [{ TMUX_MCP_TOOLS: "list_pane" }, /TMUX_MCP_TOOLS: no tool is named "list_pane"/],
      [
        { TMUX_MCP_TOOLSETS: "inspect", TMUX_MCP_TOOLS: "kill_pane" },
        /TMUX_MCP_TOOLS names tools of toolsets that are not selected: kill_pane \(teardown\)\. Add their toolsets to TMUX_MCP_TOOLSETS, or leave them out of TMUX_MCP_TOOLS\./,
      ],
    ] as const
  ) {
    const fromEnv = new StdioServer(cmd, args, cleanEnv(env));
    assert.equal((await fromEnv.closeStdin()).code, 2);
    assert.match(fromEnv.stderr, said);
    assert.match(fromEnv.stderr, /Correct or remove TMUX_MCP_TOOLS in the environment/);
    assert.doesNotMatch(fromEnv.stderr, /--tools/);
  }
  const denied = new StdioServer(
    cmd,
    [...args, "--toolsets", "inspect,execute"],
    cleanEnv({ TMUX_MCP_DENY_TOOLS: "run_command" }),
  );
  try {
    await denied.initialize();
    const list = await denied.request("tools/list");
    const names = (list.result!.tools as { name: string }[]).map((t) => t.name);
    assert.ok(names.includes("send_keys"));
    assert.ok(!names.includes("run_command"));
    // The start line comes once the server's code has loaded, which may be after tools/list
    // is answered (the front desk answers it while the code loads).
    await waitFor(() => /denied tools/.test(denied.stderr), "the start line on stderr");
    assert.match(denied.stderr, /denied tools run_command/);
  } finally {
    await denied.closeStdin();
  }
});
