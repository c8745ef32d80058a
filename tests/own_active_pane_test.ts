/**
 * A person attached with `-f active-pane` (tmux 3.3's client flag for pair work) keeps an active
 * pane of their own: their keys go there, whichever pane the window's active one is. When the
 * window is zoomed onto the window's active pane, the person's keys still go to their own pane,
 * which the zoom hides: the pane they type into is one they attend, refused to the agent as a
 * watched one, judged so at the read and by tmux at the act.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { guardCall, seedDecision } from "../src/hooks/testing.ts";
import { paneUnwatched } from "../src/mcp/unwatched.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { type Snapshot, takeSnapshot } from "../src/tmux/snapshot.ts";
import { connect } from "./helpers/mcp.ts";
import { nestedClient, nestedSession } from "./helpers/nested.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

function text(result: CallToolResult): string {
  return result.content?.[0]?.type === "text" ? result.content[0].text : "";
}

async function screen(t: TestTmux, paneId: string): Promise<string> {
  return await t.tmux("capture-pane", "-p", "-J", "-t", paneId);
}

/**
 * Session `pair` split in two; a person attached with `-f active-pane` moves their own active
 * pane to the first (prefix o) and types there, then the window is zoomed onto its active pane,
 * the second. Returns the panes and the person's terminal.
 */
async function pairWork(t: TestTmux): Promise<{ own: string; zoomed: string; tty: string }> {
  await t.tmux("new-session", "-d", "-s", "pair", "-x", "120", "-y", "30", "sh");
  const own = (await t.tmux("display-message", "-p", "-t", "pair:", "#{pane_id}")).trim();
  const zoomed = (await t.tmux("split-window", "-h", "-t", own, "-P", "-F", "#{pane_id}", "sh"))
    .trim();
  await t.prompt(own);
  await t.prompt(zoomed);
  const tty = await t.attach("pair", { flags: "active-pane" });
  await t.typeAt(tty, "\x02o");
  await t.typeAt(tty, "echo MINE");
  await waitFor(async () => (await screen(t, own)).includes("echo MINE"), "the person's keys in");
  await t.tmux("resize-pane", "-Z", "-t", zoomed);
  // Zoomed onto the other pane, their keys still go to their own.
  await t.typeAt(tty, "_TOO");
  await waitFor(async () => (await screen(t, own)).includes("echo MINE_TOO"), "still typing");
  return { own, zoomed, tty };
}

Deno.test("a person's own active pane (attach -f active-pane) hidden by a zoom counts as watched", async () => {
  const t = await TestTmux.start("agent");
  const client = await connect({ socketName: t.socket });
  try {
    const { own, tty } = await pairWork(t);
    const info = await client.call("get_pane_info", { paneId: own });
    const data = info.structuredContent as { isAttended: boolean; watchedBy: string[] };
    assert.equal(data.isAttended, true, JSON.stringify(data));
    assert.ok(JSON.stringify(data.watchedBy).includes(tty), JSON.stringify(data));
    for (
      const [tool, args] of [
        ["send_keys", { paneId: own, text: "", enter: true }],
        ["send_keys", { paneId: own, text: "", enter: true, force: true }],
        ["paste_text", { paneId: own, text: "x" }],
        ["run_command", { paneId: own, command: "echo AGENT" }],
        ["clear_pane", { paneId: own }],
      ] as const
    ) {
      const r = await client.call(tool, args);
      assert.equal(r.isError, true, `${tool}: ${text(r)}`);
      assert.match(text(r), /watched by a person|person/, `${tool}: ${text(r)}`);
    }
    // list_clients says which client keeps a pane of its own.
    const listed = await client.call("list_clients", {});
    const rows = (listed.structuredContent as {
      clients: { tty: string; controlMode: boolean; ownActivePane: boolean }[];
    }).clients.filter((c) => !c.controlMode);
    assert.deepEqual(rows.map((c) => [c.tty, c.ownActivePane]), [[tty, true]]);
    // The person's half-typed line was neither run nor cleared.
    assert.match(await screen(t, own), /echo MINE_TOO\s*$/);

    // The hook asks, naming the client.
    const r = await guardCall({}, "send_keys", {
      paneId: own,
      text: "",
      enter: true,
      socket_name: t.socket,
    });
    const reason = seedDecision(r.stdout).permissionDecisionReason;
    assert.ok(reason.includes(own) && reason.includes(tty), reason);
  } finally {
    await client.close();
    await t.kill();
  }
});

Deno.test("tmux's check at the act counts a person's own active pane under a zoom as watched", async () => {
  const t = await TestTmux.start("agent");
  const runner = new TmuxRunner();
  try {
    const address = { socketName: t.socket };
    // The read saw nobody attached; by the act a person with their own active pane types into
    // the pane the zoom hides. tmux 3.3a has no format for a client's own pane: any client the
    // read did not know as a plain one voids the zoom's hiding.
    const unread = await takeSnapshot(runner, address);
    const { own, zoomed } = await pairWork(t);
    const holds = async (snapshot: Snapshot, paneId: string) => {
      const { target, format } = paneUnwatched(snapshot, paneId);
      return (await t.tmux("display-message", "-p", "-t", target, format)).trim();
    };
    assert.equal(await holds(unread, own), "0");
    // Read with the person there (their client known to keep its own pane): watched too.
    assert.equal(await holds(await takeSnapshot(runner, address), own), "0");
    // A plain client, known at the read, showing the zoom: the hidden pane is unwatched still.
    const person = (await t.tmux("list-clients", "-F", "#{client_tty}")).trim();
    await t.detach(person);
    await t.attach("pair");
    assert.equal(await holds(await takeSnapshot(runner, address), own), "1");
    assert.equal(await holds(await takeSnapshot(runner, address), zoomed), "0");
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("typing through a nested client with its own active pane is judged by every pane of the window it shows", async () => {
  const t = await TestTmux.start("agent");
  const client = await connect({ socketName: t.socket });
  try {
    // A person watches session P. Session W's first pane runs a client showing P; its second,
    // the window's active pane, sits in copy mode (it passes no keys on).
    await t.tmux("new-session", "-d", "-s", "P", "sh");
    const watched = (await t.tmux("display-message", "-p", "-t", "P:", "#{pane_id}")).trim();
    await t.attach("P");
    const toP = await nestedSession(t, t, "W", "P");
    const idle = (await t.tmux("split-window", "-t", toP, "-P", "-F", "#{pane_id}", "sh")).trim();
    // A client with its own active pane shows W from a pane of the agent's session, and its own
    // pane is the one running the client of P (prefix o there); then W's active one goes into
    // copy mode.
    const relay = await nestedClient(t, t, "W", "active-pane");
    await t.tmux("send-keys", "-t", relay, "C-b", "o");
    await t.prompt(idle);
    await t.tmux("copy-mode", "-t", idle);
    const r = await client.call("send_keys", { paneId: relay, text: "echo VIA", force: true });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /watched by a person/, text(r));
    assert.ok(text(r).includes(watched), text(r));
    assert.doesNotMatch(await screen(t, watched), /VIA/);
  } finally {
    await client.close();
    await t.kill();
  }
});
