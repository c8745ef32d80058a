/**
 * A pane that runs a tmux client passes what is typed there on to the pane that client shows:
 * a pane a person watches, or the agent's own pane (the usual nesting: the agent's tmux
 * attached inside a pane of an outer one). The typing tools refuse such a pane unless told
 * (`force`), and even then not when the pane the client shows is watched; respawning it, which
 * types nothing, is not refused for it.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { NO_RELAY } from "../src/mcp/input_guard.ts";
import { guardCall, seedDecision } from "../src/hooks/testing.ts";
import { connect } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

function text(result: CallToolResult): string {
  return result.content?.[0]?.type === "text" ? result.content[0].text : "";
}

/**
 * Every typing tool's call that would put `word` into `paneId` and run it: `extra` goes with
 * each typing, `server` (socket_name) with each call.
 */
function typings(
  paneId: string,
  word: string,
  extra: Record<string, unknown> = {},
  server: Record<string, unknown> = {},
) {
  const line = `echo ${word}_$((6*7))`;
  return [
    ["send_keys", { paneId, text: line, ...extra, ...server }],
    ["paste_text", { paneId, text: line, enter: true, ...extra, ...server }],
    ["send_keys_batch", { operations: [{ paneId, text: line, ...extra }], ...server }],
    ["call_tools_batch", {
      operations: [{ tool: "send_keys", arguments: { paneId, text: line, ...extra, ...server } }],
    }],
  ] as const;
}

/** The refusal of a call (a batch row's error too), or null when it went through. */
function refusal(result: CallToolResult): string | null {
  if (result.isError) return text(result);
  // A batch's row: send_keys_batch says its status, call_tools_batch whether it succeeded.
  const rows = (result.structuredContent as {
    results?: { status?: string; success?: boolean; error?: string | null }[];
  }).results;
  const row = rows?.[0];
  if (row === undefined || row.status === "sent" || row.success === true) return null;
  return row.error ?? JSON.stringify(row);
}

/** Starts, in a new window of `host`, a tmux client of `server` attached to `target`. */
async function nestedClient(host: TestTmux, server: TestTmux, target: string): Promise<string> {
  const pane = (await host.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
  await host.prompt(pane);
  const before = (await server.clientTtys()).length;
  await host.tmux(
    "send-keys",
    "-t",
    pane,
    "-l",
    `env -u TMUX TERM=xterm tmux -u -L ${server.socket} -f /dev/null attach -t '${target}'`,
  );
  await host.tmux("send-keys", "-t", pane, "Enter");
  await waitFor(
    async () => (await server.clientTtys()).length > before,
    "the nested client attached",
  );
  // Drawn: the client has painted the session it shows into the pane.
  await waitFor(
    async () => (await host.tmux("capture-pane", "-p", "-t", pane)).includes("["),
    "the nested client's status line",
  );
  return pane;
}

async function screen(t: TestTmux, paneId: string): Promise<string> {
  return await t.tmux("capture-pane", "-p", "-J", "-t", paneId, "-S", "-");
}

Deno.test("a pane running a client of this server that shows a watched pane is never typed into", async () => {
  const t: Server = await TestTmux.start("work");
  try {
    const watched = t.ids.paneId;
    await t.attach("work");
    const relay = await nestedClient(t, t, "work");
    const client = await connect({ socketName: t.socket });
    try {
      for (const force of [undefined, true]) {
        for (const [tool, args] of typings(relay, "RELAYED", force ? { force } : {})) {
          const why = refusal(await client.call(tool, args));
          assert.ok(why !== null, `${tool} (force ${force}) went through`);
          assert.match(why, /tmux client/, `${tool}: ${why}`);
          assert.ok(why.includes(watched), `${tool} names the pane it would reach: ${why}`);
          if (force) assert.match(why, /watched by a person/, why);
        }
      }
      // The text never reached the pane the person watches, nor the client's own pane.
      assert.doesNotMatch(await screen(t, watched), /RELAYED/);
    } finally {
      await client.close();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("a pane running a client of this server is typed into only with force, and the keys reach the pane it shows", async () => {
  const t: Server = await TestTmux.start("work");
  try {
    const shown = t.ids.paneId;
    const relay = await nestedClient(t, t, "work");
    const client = await connect({ socketName: t.socket });
    try {
      const why = refusal(
        await client.call("send_keys", { paneId: relay, text: "echo NO_$((6*7))" }),
      );
      assert.ok(why !== null);
      assert.match(why, new RegExp(`goes on to ${shown}`), why);
      assert.match(why, /force: true/, why);
      const sent = await client.call("send_keys", {
        paneId: relay,
        text: "echo FORCED_$((6*7))",
        force: true,
      });
      assert.equal(refusal(sent), null, text(sent));
      await waitFor(async () => (await screen(t, shown)).includes("FORCED_42"), "the keys ran");
      assert.doesNotMatch(await screen(t, shown), /NO_42/);
    } finally {
      await client.close();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("a pane running a client of another tmux server (the agent's own, nested) is refused without force", async () => {
  const inner: Server = await TestTmux.start("agent");
  const outer: Server = await TestTmux.start("outer");
  try {
    const own = inner.ids.paneId;
    const relay = await nestedClient(outer, inner, "agent");
    const facts = await inner.facts();
    const client = await connect({
      socketName: inner.socket,
      callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: own },
    });
    try {
      for (const [tool, args] of typings(relay, "NESTED", {}, { socket_name: outer.socket })) {
        const why = refusal(await client.call(tool, args));
        assert.ok(why !== null, `${tool} went through`);
        assert.match(why, /runs tmux/, `${tool}: ${why}`);
      }
      assert.doesNotMatch(await screen(inner, own), /NESTED/);
      // Respawning it types nothing: not refused for the client it runs.
      const respawned = await client.call("respawn_pane", {
        paneId: relay,
        socket_name: outer.socket,
        kill: true,
        command: "sh",
      });
      assert.equal(respawned.isError, undefined, text(respawned));
    } finally {
      await client.close();
    }
  } finally {
    await outer.kill();
    await inner.kill();
  }
});

Deno.test("tmux's own check at the instant of the input tells a pane running a client from a shell", async () => {
  const inner: Server = await TestTmux.start("agent");
  const outer: Server = await TestTmux.start("outer");
  try {
    const relay = await nestedClient(outer, inner, "agent");
    const holds = async (t: TestTmux, paneId: string) =>
      (await t.tmux("display-message", "-p", "-t", paneId, NO_RELAY)).trim();
    assert.equal(await holds(outer, relay), "0", "a pane running a client of another server");
    const ownClient = await nestedClient(inner, inner, "agent");
    assert.equal(await holds(inner, ownClient), "0", "a pane running a client of its own server");
    assert.equal(await holds(outer, outer.ids.paneId), "1", "a shell");
    // A pane whose child has yet to exec its program is named tmux too, but is blank: as is
    // one running a tmux command that draws nothing (here one that waits on a channel).
    const blank = (await outer.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      `tmux -L ${inner.socket} wait-for never-signalled`,
    )).trim();
    await outer.foreground(blank, "tmux");
    assert.equal(await holds(outer, blank), "1", "a blank pane");
  } finally {
    await outer.kill();
    await inner.kill();
  }
});

Deno.test("a new pane whose program tmux has yet to start is no tmux client", async () => {
  // tmux names a new pane's command "tmux" until its child has exec'd: typing into a pane
  // made a moment ago must not be refused as a relay.
  const t: Server = await TestTmux.start("work");
  try {
    const client = await connect({ socketName: t.socket });
    try {
      for (let i = 0; i < 5; i++) {
        const made = await client.call("create_window", { session: t.ids.sessionId });
        assert.equal(made.isError, undefined, text(made));
        const paneId = (made.structuredContent as { paneId: string }).paneId;
        const sent = await client.call("send_keys", { paneId, text: `echo NEW${i}`, enter: true });
        assert.equal(sent.isError, undefined, text(sent));
      }
    } finally {
      await client.close();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("the hook guard asks before typing into a pane whose tmux client shows a watched pane, and not where only that client shows it", async () => {
  const t: Server = await TestTmux.start("work");
  try {
    const watched = t.ids.paneId;
    const relay = await nestedClient(t, t, "work");
    const calls = [
      ["send_keys", { paneId: relay, text: "echo RELAYED", enter: true, force: true }],
      ["paste_text", { paneId: relay, text: "echo RELAYED", force: true }],
      ["run_command", { paneId: relay, command: "echo RELAYED", force: true }],
      ["call_tools_batch", {
        operations: [
          { tool: "list_panes", arguments: {} },
          { tool: "send_keys", arguments: { paneId: relay, text: "x", force: true } },
        ],
      }],
    ] as const;
    // Only the nested client shows it: nobody to ask, as the server lets it through forced.
    for (const [tool, args] of calls) {
      const r = await guardCall({}, tool, { ...args, socket_name: t.socket });
      assert.deepEqual(r, { code: 0, stdout: "", stderr: [] }, tool);
    }
    const tty = await t.attach("work");
    for (const [tool, args] of calls) {
      const r = await guardCall({}, tool, { ...args, socket_name: t.socket });
      assert.equal(r.code, 0, tool);
      const reason = seedDecision(r.stdout).permissionDecisionReason;
      assert.match(reason, new RegExp(`pane ${relay} .*runs a tmux client`), reason);
      assert.ok(reason.includes(`showing pane ${watched}`) && reason.includes(tty), reason);
    }
  } finally {
    await t.kill();
  }
});
