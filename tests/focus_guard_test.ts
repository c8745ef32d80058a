/**
 * A person's focus: select_pane and select_window (and the moves that take the pane under their
 * keys away) are refused by default where they would move a person's keys to a pane they had not
 * chosen; where the server was started with `--allow-attended-input` the hook guard is the one
 * that asks, and what it asks about does happen.
 */

import assert from "node:assert/strict";
import { runHook } from "../src/hooks/main.ts";
import { agentEnv, memoryIo, seedDecision, toolCall } from "../src/hooks/testing.ts";
import { connect } from "./helpers/mcp.ts";
import { TestTmux } from "./helpers/tmux.ts";

/** The person's session: window `edit` (two shells, the first active) and `logs` behind it. */
async function personSession(t: TestTmux) {
  const ids = async (...args: string[]) =>
    (await t.tmux(...args, "-P", "-F", "#{window_id} #{pane_id}", "sh")).trim().split(" ");
  const [edit, shown] = await ids("new-session", "-d", "-s", "person", "-n", "edit");
  const [, beside] = await ids("split-window", "-d", "-t", shown);
  const [logs, logsPane] = await ids("new-window", "-d", "-t", "person:", "-n", "logs");
  const tty = await t.attach("person");
  /** The window and pane the person's client shows, which take what they type. */
  const focus = async () =>
    (await t.tmux("list-clients", "-t", "person", "-F", "#{window_id} #{pane_id}")).trim();
  assert.equal(await focus(), `${edit} ${shown}`);
  return { edit, shown, beside, logs, logsPane, tty, focus };
}

async function hookReason(
  t: Awaited<ReturnType<typeof TestTmux.start>>,
  tool: string,
  args: Record<string, unknown>,
) {
  const { io, out } = memoryIo(
    toolCall(`mcp__tmux__${tool}`, args),
    agentEnv(await t.facts(), t.ids.paneId),
  );
  assert.equal(await runHook(["guard"], io), 0, out.stderr.join("\n"));
  const d = seedDecision(out.stdout);
  assert.equal(d.permissionDecision, "ask");
  return d.permissionDecisionReason;
}

Deno.test("select_pane and select_window are refused where they would move a person's keys; the focus stays", async () => {
  const t = await TestTmux.start("agent");
  const c = await connect({ socketName: t.socket });
  try {
    const { edit, shown, beside, logs, tty, focus } = await personSession(t);
    for (
      const [tool, args] of [
        ["select_pane", { paneId: beside }],
        ["select_window", { windowId: logs }],
      ] as const
    ) {
      const text = await c.fail(tool, args);
      assert.match(text, /would change what a person sees/, `${tool}: ${text}`);
      assert.ok(text.includes(tty), `${tool}: ${text}`);
      assert.equal(await focus(), `${edit} ${shown}`, `${tool} kept the person's focus`);
    }
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("the hook guard asks before select_pane or select_window moves a person's keys, which a server with --allow-attended-input does", async () => {
  const t = await TestTmux.start("agent");
  // With --allow-attended-input the server leaves asking the person to the hook.
  const c = await connect({ socketName: t.socket, allowAttendedInput: true });
  try {
    const { edit, shown, beside, logs, logsPane, tty, focus } = await personSession(t);
    assert.equal(
      await hookReason(t, "select_pane", { paneId: beside }),
      `select_pane would make pane ${beside} (person:0.1 "edit") the active pane of a window a ` +
        `person is watching (client ${tty}), in place of pane ${shown}: what they type next ` +
        "goes to it.",
    );
    // What it asks about: the person's keys now go to the pane the agent chose.
    await c.ok("select_pane", { paneId: beside });
    assert.equal(await focus(), `${edit} ${beside}`);

    assert.equal(
      await hookReason(t, "select_window", { windowId: logs }),
      `select_window would bring window ${logs} in front of the person attached to session ` +
        `"person" (client ${tty}), in place of window ${edit}: what they type next goes to ` +
        `pane ${logsPane} (person:1.0 "logs").`,
    );
    await c.ok("select_window", { windowId: logs });
    assert.equal(await focus(), `${logs} ${logsPane}`);
  } finally {
    await c.close();
    await t.kill();
  }
});
