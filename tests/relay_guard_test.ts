/**
 * A pane that runs a tmux client passes what is typed there on to the pane that client shows:
 * a pane a person watches, or the agent's own pane (the usual nesting: the agent's tmux
 * attached inside a pane of an outer one). The typing tools refuse such a pane unless told
 * (`force`), and even then not when the pane the client shows is watched; respawning it, which
 * types nothing, is not refused for it.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { NO_RELAY, relaysHeld } from "../src/mcp/input_guard.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { takeSnapshot } from "../src/tmux/snapshot.ts";
import { guardCall, seedDecision } from "../src/hooks/testing.ts";
import { connect } from "./helpers/mcp.ts";
import { nestedClient, nestedSession, wrappedNestedClient } from "./helpers/nested.ts";
import { sh, TestTmux, waitFor } from "./helpers/tmux.ts";

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

/**
 * The agent hook's reason for a forced send_keys of `text` and Enter into `paneId` on `server`
 * (its socket_name), run by an agent in pane `agentPane` of `home`; null: no opinion.
 */
async function hookReason(
  home: TestTmux,
  agentPane: string,
  server: TestTmux,
  paneId: string,
  text: string,
): Promise<string | null> {
  const facts = await home.facts();
  const env = { TMUX: `${facts.socketPath},${facts.pid},0`, TMUX_PANE: agentPane };
  const r = await guardCall(env, "send_keys", {
    paneId,
    text,
    enter: true,
    force: true,
    socket_name: server.socket,
  });
  assert.equal(r.code, 0, r.stderr.join("\n"));
  return r.stdout === "" ? null : seedDecision(r.stdout).permissionDecisionReason;
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

Deno.test("a client showing a pane whose cursor is at the top left (a fresh editor, a quiet program) is still a client", async () => {
  const inner: Server = await TestTmux.start("agent");
  const outer: Server = await TestTmux.start("outer");
  try {
    // The inner session runs a program that has drawn nothing: its cursor, which the client
    // shows, is at the top left, and a client keeps no history (the alternate screen).
    await inner.tmux("new-session", "-d", "-s", "quiet", "cat");
    const relay = await nestedClient(outer, inner, "quiet");
    // Where the outer tmux keeps no alternate screen, such a client leaves it blank to the eye:
    // known by its process.
    await outer.tmux("set-option", "-gw", "alternate-screen", "off");
    const before = (await inner.clientTtys()).length;
    const plain = (await outer.tmux(
      ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
      `env -u TMUX TERM=xterm tmux -u -L ${inner.socket} -f /dev/null attach -t quiet`,
    )).trim();
    await waitFor(async () => (await inner.clientTtys()).length > before, "the plain client");
    await outer.tmux("set-option", "-gwu", "alternate-screen");
    assert.equal(
      (await outer.tmux(
        ...["display-message", "-p", "-t", plain],
        "#{pane_current_command} #{history_size} #{cursor_x} #{cursor_y} #{alternate_on}",
      )).trim(),
      "tmux 0 0 0 0",
    );
    const facts = await outer.tmux(
      ...["display-message", "-p", "-t", relay],
      "#{history_size} #{cursor_x} #{cursor_y} #{alternate_on}",
    );
    assert.equal(facts.trim(), "0 0 0 1");
    assert.equal(
      (await outer.tmux("display-message", "-p", "-t", relay, NO_RELAY)).trim(),
      "0",
      "tmux's check at the instant",
    );
    const client = await connect({ socketName: outer.socket });
    try {
      for (const pane of [relay, plain]) {
        const why = refusal(await client.call("send_keys", { paneId: pane, text: "LEAK" }));
        assert.match(String(why), /runs tmux \(a client of another tmux server/);
      }
    } finally {
      await client.close();
    }
    const quiet = (await inner.tmux("display-message", "-p", "-t", "quiet:", "#{pane_id}")).trim();
    assert.doesNotMatch(await screen(inner, quiet), /LEAK/);
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

Deno.test("typing through two tmux clients in a row is judged by the pane the last one shows", async () => {
  const t: Server = await TestTmux.start("work");
  try {
    const end = t.ids.paneId;
    // `mid`'s pane runs a client showing `work`; `relay` runs a client showing `mid`.
    const mid = await nestedSession(t, t, "mid", "work");
    const relay = await nestedClient(t, t, "mid");
    const client = await connect({ socketName: t.socket });
    try {
      // Nobody watches the end: forced, the keys go through both clients to it.
      const sent = await client.call("send_keys", {
        paneId: relay,
        text: "echo CHAINED_$((6*7))",
        enter: true,
        force: true,
      });
      assert.equal(refusal(sent), null, text(sent));
      await waitFor(async () => (await screen(t, end)).includes("CHAINED_42"), "the keys ran");

      const tty = await t.attach("work");
      for (const force of [undefined, true]) {
        for (const [tool, args] of typings(relay, "RELAYED", force ? { force } : {})) {
          const why = refusal(await client.call(tool, args));
          assert.ok(why !== null, `${tool} (force ${force}) went through`);
          assert.ok(why.includes(mid) && why.includes(end), `${tool} names the chain: ${why}`);
          if (force) assert.ok(/watched by a person/.test(why) && why.includes(tty), why);
        }
      }
      assert.doesNotMatch(await screen(t, end), /RELAYED/);

      // The hook asks too, naming the pane at the end and the person.
      const r = await guardCall({}, "send_keys", {
        paneId: relay,
        text: "echo RELAYED",
        force: true,
        socket_name: t.socket,
      });
      const reason = seedDecision(r.stdout).permissionDecisionReason;
      assert.ok(reason.includes(`pane ${relay}`) && reason.includes(end), reason);
      assert.ok(reason.includes(tty), reason);
    } finally {
      await client.close();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("the hook follows a client of the agent's own server running in a pane of another", async () => {
  const inner: Server = await TestTmux.start("agent");
  const outer: Server = await TestTmux.start("outer");
  const third: Server = await TestTmux.start("third");
  try {
    const own = inner.ids.paneId;
    const ask = (paneId: string) => hookReason(inner, own, outer, paneId, "echo NESTED");
    // The usual nesting: the agent's own session shown in a pane of the outer server.
    const toOwn = await nestedClient(outer, inner, "agent");
    const reason = await ask(toOwn);
    assert.ok(reason !== null && reason.includes(`pane ${toOwn}`), String(reason));
    assert.match(reason, new RegExp(`showing pane ${own}.*the agent's own pane`), reason);

    // A session of the agent's server that a person watches.
    await inner.tmux("new-session", "-d", "-s", "main", "sh");
    const watched = (await inner.tmux("display-message", "-p", "-t", "main:", "#{pane_id}"))
      .trim();
    const tty = await inner.attach("main");
    const toWatched = await nestedClient(outer, inner, "main");
    const watchedReason = await ask(toWatched);
    assert.ok(watchedReason !== null, "asked");
    assert.ok(watchedReason.includes(watched) && watchedReason.includes(tty), watchedReason);

    // A session of it nobody watches: no opinion, as the server lets the forced call through.
    await inner.tmux("new-session", "-d", "-s", "quiet", "sh");
    assert.equal(await ask(await nestedClient(outer, inner, "quiet")), null);

    // A client of a server the hook does not read: asked, since it cannot tell.
    const elsewhere = await ask(await nestedClient(outer, third, "third"));
    assert.ok(elsewhere !== null && /does not read/.test(elsewhere), String(elsewhere));
  } finally {
    await third.kill();
    await outer.kill();
    await inner.kill();
  }
});

Deno.test("a pane running a client of this server under a wrapper (script) is known by the client's process", async () => {
  const t: Server = await TestTmux.start("work");
  try {
    const shown = t.ids.paneId;
    const relay = await wrappedNestedClient(t, t, "work");
    const facts = await t.facts();
    // The agent runs in the pane the wrapped client shows.
    const client = await connect({
      socketName: t.socket,
      callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: shown },
    });
    try {
      for (const [tool, args] of typings(relay, "WRAPPED")) {
        const why = refusal(await client.call(tool, args));
        assert.ok(why !== null, `${tool} went through`);
        assert.match(why, /runs a tmux client of this server/, `${tool}: ${why}`);
        assert.ok(why.includes(shown), why);
      }
      // With a person watching the pane it shows, force does not lift it either.
      await t.attach("work");
      const forced = refusal(
        await client.call("send_keys", { paneId: relay, text: "echo WRAPPED", force: true }),
      );
      assert.match(String(forced), /watched by a person/);
      assert.doesNotMatch(await screen(t, shown), /WRAPPED/);
      // A pane with no client under it still takes keys.
      const plain = await t.shellWindow("work");
      const sent = await client.call("send_keys", { paneId: plain.paneId, text: "echo FINE" });
      assert.equal(refusal(sent), null, text(sent));
    } finally {
      await client.close();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("the hook knows a client under a wrapper by its process, also further down a chain", async () => {
  const t: Server = await TestTmux.start("work");
  try {
    const own = t.ids.paneId;
    const ask = (paneId: string) => hookReason(t, own, t, paneId, "echo WRAPPED");
    // A wrapped client showing the agent's own pane (its script is a client with a terminal of
    // its own, so that pane counts as watched too; the pane typed into is not).
    const relay = await wrappedNestedClient(t, t, "work");
    const reason = await ask(relay);
    assert.ok(reason !== null, "asked");
    assert.match(reason, new RegExp(`pane ${relay} .*runs a tmux client`), reason);
    assert.match(reason, new RegExp(`showing pane ${own}.*the agent's own pane`), reason);

    // A chain: a client on a pane's terminal shows session "mid", whose pane runs a wrapped
    // client showing a session a person watches.
    await t.tmux("new-session", "-d", "-s", "P", "sh");
    const watched = (await t.tmux("display-message", "-p", "-t", "P:", "#{pane_id}")).trim();
    const tty = await t.attach("P");
    await nestedSession(t, t, "mid", "P", true);
    const start = await nestedClient(t, t, "mid");
    const chained = await ask(start);
    assert.ok(chained !== null, "asked");
    assert.ok(chained.includes(watched) && chained.includes(tty), chained);
  } finally {
    await t.kill();
  }
});

Deno.test("forced typing through a chain whose second client runs under a wrapper is refused where the last pane is watched", async () => {
  const t: Server = await TestTmux.start("work");
  try {
    await t.tmux("new-session", "-d", "-s", "P", "sh");
    const watched = (await t.tmux("display-message", "-p", "-t", "P:", "#{pane_id}")).trim();
    await t.attach("P");
    await nestedSession(t, t, "mid", "P", true);
    const start = await nestedClient(t, t, "mid");
    const client = await connect({ socketName: t.socket });
    try {
      for (const [tool, args] of typings(start, "CHAIN", { force: true })) {
        const why = refusal(await client.call(tool, args));
        assert.ok(why !== null, `${tool} went through`);
        assert.match(why, /watched by a person/, `${tool}: ${why}`);
        assert.ok(why.includes(watched), why);
      }
      assert.doesNotMatch(await screen(t, watched), /CHAIN/);
    } finally {
      await client.close();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("a pane running a client of another server under a wrapper (script) is refused without force, and the hook asks", async () => {
  const inner: Server = await TestTmux.start("inner");
  const outer: Server = await TestTmux.start("outer");
  try {
    const own = inner.ids.paneId;
    await inner.attach("inner");
    // In the outer server, a pane running the inner server's client under script.
    const relay = await wrappedNestedClient(outer, inner, "inner");
    const client = await connect({ socketName: outer.socket });
    try {
      for (const [tool, args] of typings(relay, "CROSS")) {
        const why = refusal(await client.call(tool, args));
        assert.ok(why !== null, `${tool} went through`);
        assert.match(why, /runs tmux .*a client of another tmux server/, `${tool}: ${why}`);
      }
      assert.doesNotMatch(await screen(inner, own), /CROSS/);
      // A client run by another name (tmux names its process after it: `tx: client`).
      const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-renamed-" });
      try {
        await Deno.symlink((await sh("sh", ["-c", "command -v tmux"])).stdout.trim(), `${dir}/tx`);
        const renamed = await wrappedNestedClient(outer, inner, "inner", `${dir}/tx`);
        const why = refusal(await client.call("send_keys", { paneId: renamed, text: "echo R" }));
        assert.match(String(why), /a client of another tmux server/);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
      // A pane running some other program (no tmux below it) still takes keys; so does one
      // whose program holds a control client through a pipe (another agent's tmux-mcp).
      const started = async (command: string, name: string) => {
        const pane = (await outer.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", command))
          .trim();
        await waitFor(
          async () =>
            (await outer.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}"))
              .trim() === name,
          `${name} started`,
        );
        return pane;
      };
      const controlled = await started(
        `awk 'BEGIN { system("sleep 600 | tmux -L ${inner.socket} -C attach -t inner >/dev/null") }'`,
        "awk",
      );
      await waitFor(async () =>
        (await inner.tmux("list-clients", "-F", "#{client_control_mode}"))
          .includes("1"), "the control client attached");
      // A program whose tmux only waits on a channel, reading the terminal, passes nothing on.
      const waiting = await started(
        `awk 'BEGIN { system("tmux -L ${inner.socket} wait-for never-signalled") }'`,
        "awk",
      );
      for (const pane of [await started("cat", "cat"), controlled, waiting]) {
        const sent = await client.call("send_keys", { paneId: pane, text: "FINE" });
        assert.equal(refusal(sent), null, text(sent));
      }
      assert.doesNotMatch(await screen(inner, own), /echo R/);
    } finally {
      await client.close();
    }
    // The hook, run by the agent in the inner server's pane, typing with the outer socket_name.
    const reason = await hookReason(inner, own, outer, relay, "echo CROSS");
    assert.ok(reason !== null && reason.includes(`pane ${relay}`), String(reason));
  } finally {
    await outer.kill();
    await inner.kill();
  }
});

/** A shell split beside `relay` in its window, with synchronize-panes on there: the sibling. */
async function syncedSibling(t: TestTmux, relay: string): Promise<string> {
  const window = (await t.tmux("display-message", "-p", "-t", relay, "#{window_id}")).trim();
  const sibling = (await t.tmux("split-window", "-d", "-t", relay, "-P", "-F", "#{pane_id}", "sh"))
    .trim();
  await t.prompt(sibling);
  await t.tmux("set-option", "-w", "-t", window, "synchronize-panes", "on");
  return sibling;
}

Deno.test("typing into a pane synchronized with one that runs a client is judged by where that client sends it", async () => {
  const t: Server = await TestTmux.start("work");
  try {
    const shown = t.ids.paneId;
    const facts = await t.facts();
    const wrapped = await syncedSibling(t, await wrappedNestedClient(t, t, "work"));
    const client = await connect({
      socketName: t.socket,
      callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: shown },
    });
    try {
      // A wrapped client in the sibling: unforced, refused (the keys would reach the agent).
      const why = refusal(await client.call("send_keys", { paneId: wrapped, text: "echo W_1" }));
      assert.match(String(why), /runs a tmux client of this server/);
      // A client on the sibling's terminal, a person watching the pane it shows: forced, still
      // refused.
      const direct = await syncedSibling(t, await nestedClient(t, t, "work"));
      await t.attach("work");
      const forced = refusal(
        await client.call("send_keys", { paneId: direct, text: "echo W_2", force: true }),
      );
      assert.match(String(forced), /watched by a person/);
      assert.doesNotMatch(await screen(t, shown), /W_[12]/);
    } finally {
      await client.close();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("forced typing through a client has tmux check at the act that the client still shows what was judged", async () => {
  const t: Server = await TestTmux.start("work");
  const runner = new TmuxRunner();
  try {
    // A person watches session P's pane; session R shows a shell, or (window 1) P's window.
    const [watchedWindow] = (await t.tmux(
      ...["new-session", "-d", "-s", "P", "-P", "-F", "#{window_id} #{pane_id}", "sh"],
    )).trim().split(" ");
    const shell = (await t.tmux("new-session", "-d", "-s", "R", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    await t.prompt(shell);
    await t.tmux("link-window", "-d", "-s", watchedWindow, "-t", "R:1");
    await t.attach("P");
    const relay = await nestedClient(t, t, "R");
    // Read while R's client shows the shell: forced typing there is let through, on condition.
    const snapshot = await takeSnapshot(runner, { socketName: t.socket });
    const pane = snapshot.panes.find((p) => p.id === relay)!;
    const held = relaysHeld(snapshot, [pane]);
    assert.equal(held.length, 1, JSON.stringify(held));
    const holds = async () => (await t.tmux("display-message", "-p", "-t", relay, held[0])).trim();
    assert.equal(await holds(), "1", "the client shows the shell judged");
    // A person switches R's client to the watched window before the act: tmux refuses.
    await t.tmux("select-window", "-t", "R:1");
    assert.equal(await holds(), "0", "the client shows another pane now");
    await t.tmux("select-window", "-t", "R:0");
    assert.equal(await holds(), "1");
  } finally {
    await runner.close();
    await t.kill();
  }
});
