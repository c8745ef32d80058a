/**
 * Every input guard, on every tool that types, pastes or runs: what each refuses, that the
 * refusal says why and what lifts it, that nothing reached the pane, and that only the named
 * lift lifts it (`force` only the caller's own pane, `--allow-attended-input` only watched
 * panes).
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import { TOOLSETS } from "../src/mcp/toolsets.ts";
import { buildServer } from "../src/server.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

const TOOLS = ["send_keys", "send_keys_batch", "paste_text", "run_command"] as const;
type Tool = typeof TOOLS[number];

/** Arguments that would put the word GUARDED into `paneId` with `tool`. */
function argsFor(tool: Tool, paneId: string, force?: boolean): Record<string, unknown> {
  const f = force === undefined ? {} : { force };
  switch (tool) {
    case "send_keys":
      return { paneId, text: "echo GUARDED", ...f };
    case "send_keys_batch":
      return { operations: [{ paneId, text: "echo GUARDED", ...f }] };
    case "paste_text":
      return { paneId, text: "echo GUARDED", enter: true, ...f };
    case "run_command":
      return { paneId, command: "echo GUARDED", timeoutMs: 5_000, ...f };
  }
}

/** Calls `tool`; returns null on success or the refusal text (a batch row's error too). */
async function attempt(
  call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>,
  tool: Tool,
  paneId: string,
  force?: boolean,
): Promise<string | null> {
  const result = await call(tool, argsFor(tool, paneId, force));
  const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
  if (result.isError) return text;
  if (tool === "send_keys_batch") {
    const row =
      (result.structuredContent as { results: { status: string; error: string | null }[] })
        .results[0];
    return row.status === "sent" ? null : row.error;
  }
  return null;
}

async function withServer(
  fn: (t: Server) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start();
  try {
    await fn(t);
  } finally {
    await t.kill();
  }
}

async function screen(t: Server, paneId: string): Promise<string> {
  return await t.tmux("capture-pane", "-p", "-J", "-t", paneId, "-S", "-");
}

async function newPane(t: Server, command = "sh"): Promise<string> {
  const id = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", command)).trim();
  await waitFor(
    async () =>
      command !== "sh" ||
      (await t.tmux("display-message", "-p", "-t", id, "#{pane_current_command}")).trim() ===
        "sh",
    "the shell",
  );
  return id;
}

async function asCaller(t: Server, paneId: string): Promise<TestClient> {
  const facts = await t.facts();
  return await connect({
    socketName: t.socket,
    callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: paneId },
  });
}

Deno.test("the caller's own pane is refused; force lifts exactly that", async () => {
  await withServer(async (t) => {
    const own = t.ids.paneId;
    const c = await asCaller(t, own);
    try {
      for (const tool of TOOLS) {
        const refusal = await attempt(c.call, tool, own);
        assert.ok(refusal, `${tool} must refuse the caller's pane`);
        assert.match(refusal, /the pane this MCP server runs in/);
        assert.match(refusal, /force: true/);
      }
      assert.ok(!(await screen(t, own)).includes("GUARDED"), "nothing reached the pane");
      for (const tool of TOOLS) {
        assert.equal(await attempt(c.call, tool, own, true), null, `${tool} with force`);
      }
      // Another pane of the same server is not the caller's.
      const other = await newPane(t);
      assert.equal(await attempt(c.call, "send_keys", other), null);
    } finally {
      await c.close();
    }
  });
});

Deno.test("TMUX naming another server (or a restarted one) marks no caller pane", async () => {
  await withServer(async (t) => {
    const facts = await t.facts();
    const c = await connect({
      socketName: t.socket,
      callerEnv: { tmux: `${facts.socketPath},${facts.pid + 100000},0`, tmuxPane: t.ids.paneId },
    });
    try {
      assert.equal(await attempt(c.call, "send_keys", t.ids.paneId), null);
    } finally {
      await c.close();
    }
  });
});

Deno.test("a pane a person is watching is refused; only --allow-attended-input lifts it", async () => {
  await withServer(async (t) => {
    const watched = t.ids.paneId;
    const tty = await t.attach("main");
    const c = await connect({ socketName: t.socket });
    try {
      for (const tool of TOOLS) {
        for (const force of [undefined, true]) {
          const refusal = await attempt(c.call, tool, watched, force);
          assert.ok(refusal, `${tool} (force ${force}) must refuse a watched pane`);
          assert.match(refusal, /being watched by a person/);
          assert.ok(refusal.includes(tty), "names the watching client");
          assert.match(refusal, /--allow-attended-input/);
        }
      }
      assert.ok(!(await screen(t, watched)).includes("GUARDED"), "nothing reached the pane");
      // A pane in a window nobody shows is free.
      assert.equal(await attempt(c.call, "send_keys", await newPane(t)), null);
    } finally {
      await c.close();
    }

    // The server-wide switch, as --allow-attended-input / TMUX_MCP_ALLOW_ATTENDED_INPUT=1 set it.
    const built = buildServer({
      address: { socketName: t.socket },
      toolsets: TOOLSETS,
      version: "test",
      maxResultBytes: MAX_RESULT_BYTES,
      callerEnv: {},
      allowAttendedInput: true,
    });
    try {
      const call = (name: string, args: Record<string, unknown>) =>
        built.registry.call(built.registry.get(name)!, args, {
          signal: new AbortController().signal,
          progress: () => Promise.resolve(),
        });
      for (const tool of TOOLS) {
        assert.equal(await attempt(call, tool, watched), null, `${tool} with the switch`);
      }
    } finally {
      await built.runner.close();
    }
  });
});

Deno.test("a person on tmux -CC (iTerm2) sees every window of their session: all refused; a program's control client is no person", async () => {
  await withServer(async (t) => {
    // Their session: the window they are on, and one in the background (an iTerm2 tab too).
    const current = t.ids.paneId;
    const background = await newPane(t);
    await t.tmux("new-session", "-d", "-s", "elsewhere", "sh");
    const free = (await t.tmux("display-message", "-p", "-t", "elsewhere", "#{pane_id}")).trim();
    // A program's control client (over pipes, no terminal) on the other session.
    t.controlClient("elsewhere");
    const tty = await t.attach("main", { control: true });
    await waitFor(
      async () =>
        (await t.tmux("list-clients", "-F", "#{client_tty}|#{client_control_mode}"))
          .split("\n").filter((l) => l.startsWith("|1")).length === 1,
      "the program's control client",
    );
    const c = await connect({ socketName: t.socket });
    try {
      const listed = await c.ok<{ panes: { id: string; isAttended: boolean }[] }>("list_panes", {});
      const attended = listed.panes.filter((p) => p.isAttended).map((p) => p.id).toSorted();
      assert.deepEqual(attended, [current, background].toSorted());
      for (const pane of [current, background]) {
        for (const tool of TOOLS) {
          const refusal = await attempt(c.call, tool, pane, true);
          assert.ok(refusal, `${tool} must refuse ${pane}, on the screen of a -CC client`);
          assert.match(refusal, /being watched by a person/);
          assert.ok(refusal.includes(tty), refusal);
        }
        assert.ok(!(await screen(t, pane)).includes("GUARDED"), "nothing reached the pane");
      }
      // The session nobody but programs attached (this server's own clients among them).
      for (const tool of TOOLS) assert.equal(await attempt(c.call, tool, free), null, tool);
    } finally {
      await c.close();
    }
  });
});

Deno.test("a dead pane is refused, and force does not lift it", async () => {
  await withServer(async (t) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const dead = await newPane(t, "exit 3");
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", dead, "#{pane_dead}")).trim() === "1",
      "the pane to die",
    );
    const c = await connect({ socketName: t.socket });
    try {
      for (const tool of TOOLS) {
        for (const force of [undefined, true]) {
          const refusal = await attempt(c.call, tool, dead, force);
          assert.ok(refusal, `${tool} must refuse a dead pane`);
          // tmux 3.3a sometimes never learns a dead pane's exit status: it is named when known.
          assert.match(refusal, /is dead: its process exited( with status 3)?\./);
          assert.match(refusal, /respawn_pane/);
        }
      }
    } finally {
      await c.close();
    }
  });
});

Deno.test("a pane in copy mode is refused, and force does not lift it", async () => {
  await withServer(async (t) => {
    const p = await newPane(t);
    await t.tmux("copy-mode", "-t", p);
    const c = await connect({ socketName: t.socket });
    try {
      for (const tool of TOOLS) {
        for (const force of [undefined, true]) {
          const refusal = await attempt(c.call, tool, p, force);
          assert.ok(refusal, `${tool} must refuse a pane in copy mode`);
          assert.match(refusal, /is in copy-mode/);
          assert.match(refusal, /exit_copy_mode/);
        }
      }
      await t.tmux("send-keys", "-t", p, "-X", "cancel");
      assert.equal(await attempt(c.call, "send_keys", p), null, "free once out of the mode");
    } finally {
      await c.close();
    }
  });
});

Deno.test("a pane in two modes at once (a command's output over copy mode) is refused too", async () => {
  await withServer(async (t) => {
    const p = await newPane(t);
    await t.prompt(p);
    const c = await connect({ socketName: t.socket });
    const modes = async () =>
      (await t.tmux("display-message", "-p", "-t", p, "#{pane_in_mode} #{pane_mode}")).trim();
    try {
      // tmux stacks view-mode (run-shell's output) on the copy mode: pane_in_mode counts 2.
      await t.tmux("copy-mode", "-t", p);
      await t.tmux("run-shell", "-t", p, "echo over copy mode");
      assert.equal(await modes(), "2 view-mode");
      for (const tool of TOOLS) {
        const refusal = await attempt(c.call, tool, p);
        assert.ok(refusal, `${tool} must refuse a pane in two modes`);
        assert.match(refusal, /is in view-mode/);
      }
      assert.equal(await modes(), "2 view-mode", "no key drove either mode");
      // The same at the instant of the act, as tmux checks it.
      await t.tmux("send-keys", "-t", p, "-X", "cancel");
      await t.tmux("send-keys", "-t", p, "-X", "cancel");
      await t.onceAfterGuardRead(`copy-mode -t ${p} ; run-shell -t ${p} 'echo again'`);
      const refusal = await attempt(c.call, "send_keys", p);
      assert.ok(refusal, "tmux refused at the instant of the act");
      assert.equal(await modes(), "2 view-mode", "no key drove either mode");
      assert.doesNotMatch(await screen(t, p), /GUARDED/);
    } finally {
      await t.tmux("set-hook", "-gu", "after-list-clients").catch(() => {});
      await c.close();
    }
  });
});

/**
 * Turns input back on in `paneId` and proves keys reach it again (a line typed by tmux itself
 * shows): whatever a refused call would have typed had arrived by then.
 */
async function inputBackOn(t: Server, paneId: string): Promise<string> {
  await t.tmux("select-pane", "-e", "-t", paneId);
  await t.tmux("send-keys", "-t", paneId, "-l", "echo BACK-ON");
  await t.tmux("send-keys", "-t", paneId, "Enter");
  await waitFor(async () => /^BACK-ON$/m.test(await screen(t, paneId)), "keys in " + paneId);
  return await screen(t, paneId);
}

Deno.test("a pane with its input turned off (select-pane -d) is refused, and force does not lift it", async () => {
  await withServer(async (t) => {
    const p = await newPane(t);
    await t.prompt(p);
    await t.tmux("select-pane", "-d", "-t", p);
    const c = await connect({ socketName: t.socket });
    try {
      for (const tool of TOOLS) {
        for (const force of [undefined, true]) {
          const refusal = await attempt(c.call, tool, p, force);
          assert.ok(refusal, `${tool} (force ${force}) must refuse a pane whose input is off`);
          assert.match(refusal, new RegExp(`Pane ${p} has input turned off \\(select-pane -d\\)`));
          assert.match(refusal, /select-pane -e/);
        }
      }
      const { bufferName } = await c.ok<{ bufferName: string }>("load_buffer", {
        text: "echo GUARDED",
      });
      assert.match(await c.fail("paste_buffer", { paneId: p, bufferName }), /input turned off/);
      const info = await c.ok<{ inputOff: boolean }>("get_pane_info", { paneId: p });
      assert.equal(info.inputOff, true);
      assert.doesNotMatch(await inputBackOn(t, p), /GUARDED/, "nothing reached the pane");
      assert.equal(await attempt(c.call, "send_keys", p), null, "free once input is on");
      assert.equal(
        (await c.ok<{ inputOff: boolean }>("get_pane_info", { paneId: p })).inputOff,
        false,
      );
      // Respawning types nothing: input off does not stop it (and stays off after it).
      await t.tmux("select-pane", "-d", "-t", p);
      const respawned = await c.ok<{ dead: boolean }>("respawn_pane", { paneId: p, kill: true });
      assert.equal(respawned.dead, false);
      assert.equal(
        (await c.ok<{ inputOff: boolean }>("get_pane_info", { paneId: p })).inputOff,
        true,
      );
    } finally {
      await c.close();
    }
  });
});

Deno.test("a pane whose input is turned off right after the guard's read: tmux refuses at that instant, saying why", async () => {
  await withServer(async (t) => {
    const p = await newPane(t);
    await t.prompt(p);
    const c = await connect({ socketName: t.socket });
    try {
      for (const tool of ["send_keys", "paste_text", "run_command"] as const) {
        await t.onceAfterGuardRead(`select-pane -d -t ${p}`);
        const refusal = await attempt(c.call, tool, p);
        assert.ok(refusal, `${tool} into a pane whose input went off was refused`);
        assert.match(refusal, /input turned off/, refusal);
        assert.equal(
          (await t.tmux("display-message", "-p", "-t", p, "#{pane_input_off}")).trim(),
          "1",
          "the input did go off",
        );
        assert.doesNotMatch(await inputBackOn(t, p), /GUARDED/, `${tool}: nothing arrived`);
      }
    } finally {
      await t.tmux("set-hook", "-gu", "after-list-clients").catch(() => {});
      await c.close();
    }
  });
});

Deno.test("synchronize-panes: a pane with its input off is refused itself, and as a sibling gets no keys", async () => {
  await withServer(async (t) => {
    const [windowId, a] = (await t.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "sh",
    )).trim().split(" ");
    const b = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", a, "sh")).trim();
    await t.prompt(a);
    await t.prompt(b);
    await t.tmux("set-option", "-w", "-t", windowId, "synchronize-panes", "on");
    await t.tmux("select-pane", "-d", "-t", a);
    const c = await connect({ socketName: t.socket });
    try {
      // tmux stops at a: it copies nothing to b either.
      const refusal = await attempt(c.call, "send_keys", a);
      assert.ok(refusal);
      assert.ok(refusal.startsWith(`Pane ${a} has input turned off`), refusal);
      // Typed into b, tmux copies no key to a.
      const sent = await c.ok<{ reachedPanes: string[] }>("send_keys", {
        paneId: b,
        text: "echo SYNCED",
      });
      assert.deepEqual(sent.reachedPanes, [b]);
      await waitFor(async () => /^SYNCED$/m.test(await screen(t, b)), "the text in b");
      // Nor a paste's Enter: a paste into b is no paste into a synchronized cohort.
      const pasted = await c.ok<{ reachedPanes: string[] }>("paste_text", {
        paneId: b,
        text: "echo PASTED",
        enter: true,
      });
      assert.deepEqual(pasted.reachedPanes, [b]);
      await waitFor(async () => /^PASTED$/m.test(await screen(t, b)), "the paste in b");
      const after = await inputBackOn(t, a);
      assert.doesNotMatch(after, /GUARDED|SYNCED|PASTED/, "a received nothing");
    } finally {
      await c.close();
    }
  });
});

Deno.test("synchronize-panes: a guarded pane anywhere in the cohort refuses the input", async () => {
  await withServer(async (t) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const own = t.ids.paneId;
    const sibling = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", own, "sh"))
      .trim();
    await t.tmux("set-option", "-w", "-t", t.ids.windowId, "synchronize-panes", "on");
    const c = await asCaller(t, own);
    try {
      // Typing into the sibling would reach the caller's own pane too.
      const refusal = await attempt(c.call, "send_keys", sibling);
      assert.ok(refusal);
      assert.match(refusal, new RegExp(`Pane ${own} \\(synchronized with ${sibling}`));
      assert.match(refusal, /force: true/);
      const sent = await c.ok<{ reachedPanes: string[] }>("send_keys", {
        paneId: sibling,
        text: "echo SYNCED",
        force: true,
      });
      assert.deepEqual(sent.reachedPanes.toSorted(), [own, sibling].toSorted());
      await waitFor(
        async () =>
          (await screen(t, own)).includes("SYNCED") &&
          (await screen(t, sibling)).includes("SYNCED"),
        "the text in both panes",
      );
    } finally {
      await c.close();
    }
  });
});

Deno.test("synchronize-panes: tmux copies no key to a dead sibling or one in a mode, so neither blocks the input", async () => {
  await withServer(async (t) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const [windowId, live] = (await t.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "sh",
    )).trim().split(" ");
    const split = async (command: string) =>
      (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", live, command)).trim();
    const dead = await split("exit 1");
    const inMode = await split("sh");
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", dead, "#{pane_dead}")).trim() === "1",
      "the pane to die",
    );
    await t.tmux("copy-mode", "-t", inMode);
    await t.tmux("set-option", "-w", "-t", windowId, "synchronize-panes", "on");
    const c = await connect({ socketName: t.socket });
    try {
      // "q" would end copy mode, were it copied there.
      const sent = await c.ok<{ reachedPanes: string[] }>("send_keys", {
        paneId: live,
        text: "echo quiet",
      });
      assert.deepEqual(sent.reachedPanes, [live]);
      const pasted = await c.ok<{ reachedPanes: string[] }>("paste_text", {
        paneId: live,
        text: "echo PASTED",
        enter: true,
      });
      assert.deepEqual(pasted.reachedPanes, [live]);
      await waitFor(async () => (await screen(t, live)).includes("PASTED"), "the paste");
      assert.equal(
        (await t.tmux("display-message", "-p", "-t", inMode, "#{pane_in_mode}")).trim(),
        "1",
        "the pane in copy mode got no key",
      );
      await t.tmux("send-keys", "-t", inMode, "-X", "cancel");
      assert.ok(!(await screen(t, inMode)).includes("quiet"));
      // The panes themselves are still refused, force or not.
      for (const [pane, why] of [[dead, /is dead/], [inMode, null]] as const) {
        if (why === null) await t.tmux("copy-mode", "-t", pane);
        const refusal = await attempt(c.call, "send_keys", pane, true);
        assert.ok(refusal);
        assert.match(refusal, why ?? /is in copy-mode/);
        assert.ok(refusal.startsWith(`Pane ${pane} is`), refusal);
      }
    } finally {
      await c.close();
    }
  });
});

Deno.test("synchronize-panes: a paste is refused (tmux copies its Enter, not the text); reachedPanes are the panes tmux copies keys to", async () => {
  await withServer(async (t) => {
    const a = t.ids.paneId;
    const b = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", a, "sh")).trim();
    await t.prompt(b);
    // Left at b's prompt: an Enter that reached b alone would run it.
    await t.tmux("send-keys", "-t", b, "-l", "echo LEFTOVER-RAN");
    await t.tmux("set-option", "-w", "-t", t.ids.windowId, "synchronize-panes", "on");
    const c = await connect({ socketName: t.socket });
    try {
      const refused = await c.fail("paste_text", { paneId: a, text: "echo PASTED", enter: true });
      assert.match(refused, new RegExp(`Pane ${a} is synchronized with ${b}.*Nothing was pasted`));
      assert.match(refused, /set_synchronize_panes/);
      const { bufferName } = await c.ok<{ bufferName: string }>("load_buffer", { text: "BUF" });
      assert.match(
        await c.fail("paste_buffer", { paneId: a, bufferName }),
        new RegExp(`Pane ${a} is synchronized with ${b}`),
      );
      // Zoomed on a, the window shows a alone: tmux copies keys to visible panes only.
      await t.tmux("resize-pane", "-Z", "-t", a);
      const zoomed = await c.ok<{ reachedPanes: string[] }>("send_keys", {
        paneId: a,
        keys: ["Space"],
        enter: false,
      });
      assert.deepEqual(zoomed.reachedPanes, [a]);
      // ...and a paste there reaches a alone too.
      const pasted = await c.ok<{ reachedPanes: string[] }>("paste_text", { paneId: a, text: "x" });
      assert.deepEqual(pasted.reachedPanes, [a]);
      await t.tmux("resize-pane", "-Z", "-t", a);
      // A pane with synchronize-panes off of its own gets no copies either.
      await t.tmux("set-option", "-p", "-t", b, "synchronize-panes", "off");
      const own = await c.ok<{ reachedPanes: string[] }>("send_keys", {
        paneId: a,
        keys: ["Space"],
        enter: false,
      });
      assert.deepEqual(own.reachedPanes, [a]);
      await t.tmux("set-option", "-p", "-u", "-t", b, "synchronize-panes");
      const both = await c.ok<{ reachedPanes: string[] }>("send_keys", {
        paneId: a,
        keys: ["Space"],
        enter: false,
      });
      assert.deepEqual(both.reachedPanes.toSorted(), [a, b].toSorted());
      assert.doesNotMatch(await screen(t, b), /^LEFTOVER-RAN$/m, "b ran nothing");
      assert.ok(!(await screen(t, a)).includes("PASTED"));

      // Synchronized after the guard's read: tmux refuses the paste at that instant.
      await t.tmux("set-option", "-w", "-t", t.ids.windowId, "synchronize-panes", "off");
      await t.onceAfterGuardRead(`set-option -w -t ${t.ids.windowId} synchronize-panes on`);
      assert.match(
        await c.fail("paste_text", { paneId: a, text: "echo LATE", enter: true }),
        new RegExp(`Pane ${a} is synchronized with ${b}`),
      );
      assert.ok(!(await screen(t, a)).includes("LATE"));
      assert.doesNotMatch(await screen(t, b), /^LEFTOVER-RAN$/m, "b ran nothing");
    } finally {
      await t.tmux("set-hook", "-gu", "after-list-clients").catch(() => {});
      await c.close();
    }
  });
});

Deno.test("synchronize-panes: the caller's pane moved into the window after the check gets no keys", async () => {
  await withServer(async (t) => {
    // The caller's pane, in a window of two (so its window outlives the move).
    const own = await newPane(t, "cat");
    await t.tmux("split-window", "-d", "-t", own, "cat");
    const a = t.ids.paneId;
    await t.tmux("split-window", "-d", "-t", a, "cat");
    await t.tmux("set-option", "-w", "-t", t.ids.windowId, "synchronize-panes", "on");
    const c = await asCaller(t, own);
    try {
      // The read of a synchronized pane's window is the second: the pane moves in after it.
      await t.onceAfterGuardRead(`join-pane -d -s ${own} -t ${a}`, 2);
      assert.match(
        await c.fail("send_keys", { paneId: a, text: "TYPED", enter: false }),
        new RegExp(`Pane ${own} \\(synchronized with ${a}.*the pane this MCP server runs in`),
      );
      assert.equal(
        (await t.tmux("display-message", "-p", "-t", own, "#{window_id}")).trim(),
        t.ids.windowId,
        "the caller's pane did move in",
      );
      assert.ok(!(await screen(t, own)).includes("TYPED"));
      assert.ok(!(await screen(t, a)).includes("TYPED"));
    } finally {
      await t.tmux("set-hook", "-gu", "after-list-clients").catch(() => {});
      await c.close();
    }
  });
});

Deno.test("synchronize-panes: a pane that leaves its synchronized window, or ends, between the guard's two reads is read again (one that keeps leaving is refused), never an internal error", async () => {
  await withServer(async (t) => {
    const caller = await newPane(t, "cat");
    const a = await newPane(t, "cat");
    const b = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", a, "cat")).trim();
    const synced = (await t.tmux("display-message", "-p", "-t", a, "#{window_id}")).trim();
    await t.tmux("set-option", "-w", "-t", synced, "synchronize-panes", "on");
    const c = await asCaller(t, caller);
    try {
      // The first read finds it synchronized; before the read of its window, it leaves it.
      await t.onceAfterGuardRead(`break-pane -d -s ${a}`);
      const sent = await c.ok<{ reachedPanes: string[] }>("send_keys", {
        paneId: a,
        text: "MOVED",
        enter: false,
      });
      assert.deepEqual(sent.reachedPanes, [a]);
      assert.notEqual(
        (await t.tmux("display-message", "-p", "-t", a, "#{window_id}")).trim(),
        synced,
        "the pane did leave",
      );
      await waitFor(async () => (await screen(t, a)).includes("MOVED"), "the keys in the pane");
      assert.ok(!(await screen(t, b)).includes("MOVED"), "its old window's panes got none");

      // Back in, and this time it ends between the two reads: a refusal naming it.
      await t.tmux("join-pane", "-d", "-s", a, "-t", b);
      await t.onceAfterGuardRead(`kill-pane -t ${a}`);
      assert.match(
        await c.fail("paste_text", { paneId: a, text: "GONE" }),
        new RegExp(`No pane ${a} `),
      );
      assert.ok(!(await screen(t, b)).includes("GONE"));

      // One that leaves after every read and comes back after the next: refused, none typed to.
      const d = await newPane(t, "cat");
      await t.tmux("join-pane", "-d", "-s", d, "-t", b);
      await t.tmux(
        "set-hook",
        "-g",
        "after-list-clients",
        "if-shell -F '#{m:*client_readonly*,#{hook_arguments}}' {" +
          ` if-shell -F -t ${d} '#{==:#{window_id},${synced}}'` +
          ` { break-pane -d -s ${d} } { join-pane -d -s ${d} -t ${b} } }`,
      );
      assert.match(
        await c.fail("send_keys", { paneId: d, text: "BOUNCED", enter: false }),
        new RegExp(`Pane ${d} moved to another window each time it was read; nothing was done`),
      );
      await t.tmux("set-hook", "-gu", "after-list-clients");
      assert.ok(!(await screen(t, d)).includes("BOUNCED"));
      assert.ok(!(await screen(t, b)).includes("BOUNCED"));
    } finally {
      await t.tmux("set-hook", "-gu", "after-list-clients").catch(() => {});
      await c.close();
    }
  });
});
