/**
 * What a tmux-mcp process killed outright (SIGKILL: no handler runs) leaves in the person's
 * tmux server in the middle of a call, and the next tmux-mcp process on that server taking it
 * away (src/tmux/left_behind.ts): a paste's transient buffer, which a person's `prefix ]` would
 * paste, and clear_pane's scroll-on-clear turned off. What a live process has in hand stays
 * its own, also once its control client was detached: a transient buffer is taken away only
 * once it is old enough (GRACE_S) as well as its owner gone, and the process that met it
 * younger looks again by then.
 *
 * Every moment is reached deterministically: a person's hook holds the call's tmux line at a
 * chosen command (HookGate), or the test waits until tmux shows the call's state.
 */

import assert from "node:assert/strict";
import { GRACE_S, looksAgainSet } from "../src/tmux/left_behind.ts";
import { DEFAULT_TIMEOUT_MS } from "../src/tmux/run.ts";
import { connect, type TestClient, withTmux } from "./helpers/mcp.ts";
import { callOver, clientsOf, kill9, startOn, StdioServer } from "./helpers/stdio.ts";
import { HookGate, processesNaming, TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = Awaited<ReturnType<typeof TestTmux.start>>;

const TEARDOWN = ["--toolsets", "inspect,manage,execute,teardown"];

async function ourBuffers(t: TestTmux): Promise<string[]> {
  return (await t.tmux("list-buffers", "-F", "#{buffer_name}")).split("\n")
    .filter((n) => n.startsWith("tmux-mcp-"));
}

/** Long enough for a buffer whose owner is gone to pass the grace (GRACE_S), and a margin. */
const PAST_GRACE_MS = (GRACE_S + 25) * 1_000;

/**
 * Waits until tmux holds no buffer of tmux-mcp's any more, asking `s` to list the buffers each
 * time (a listing never shows a transient buffer); without `s`, asking tmux only.
 */
async function buffersGone(t: TestTmux, s?: StdioServer): Promise<void> {
  await waitFor(
    async () => {
      if (s) {
        const listed = await callOver(s, "list_buffers");
        assert.deepEqual(listed.data.buffers, [], listed.text);
      }
      return (await ourBuffers(t)).length === 0;
    },
    "the killed process's buffer to be taken away once old enough",
    PAST_GRACE_MS,
  );
}

// ---------------------------------------------------------------------------------------------
// A paste's transient buffer

/** About 20 KB of commands: loaded by a tmux process of its own, not filled on the step's line. */
const LONG = "echo agent-text\n".repeat(1_300);

/** Holds `s`'s long paste right after its load (a person's hook); the call's answer to come. */
async function heldLongPaste(
  t: Server,
  gate: HookGate,
  s: StdioServer,
): Promise<{ pasted: Promise<Record<string, unknown>> }> {
  await t.tmux("set-hook", "-g", "after-load-buffer", gate.command);
  const pasted = s.callTool("paste_text", { paneId: t.ids.paneId, text: LONG });
  pasted.catch(() => {});
  await waitFor(() => gate.began(), "the load to be held");
  assert.equal((await ourBuffers(t)).length, 1, "the paste's buffer, loaded");
  // In an object: an async function's promise would wait for the call's.
  return { pasted };
}

/**
 * A private tmux server, a closed {@link HookGate}, and two real processes on it: `a` (the one
 * whose call the gate holds) and `b` (another, started first with `bFirst`: the one already
 * running). Everything is ended after `fn`, the gate opened first.
 */
async function withTwoProcesses(
  options: { flags?: readonly string[]; bFirst?: boolean },
  fn: (t: Server, gate: HookGate, a: StdioServer, b: StdioServer) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start();
  const gate = await HookGate.make();
  const first = await startOn(t.socket, options.flags);
  const second = await startOn(t.socket, options.flags);
  const [a, b] = options.bFirst ? [second, first] : [first, second];
  try {
    await fn(t, gate, a, b);
  } finally {
    await gate.open();
    await a.kill();
    await b.kill();
    await t.kill();
    await gate.remove();
  }
}

/**
 * Whether a held paste failed only because the person's hook held its load longer than a tmux
 * step may take (DEFAULT_TIMEOUT_MS, counted from the load's start, which comes after `began`):
 * on a loaded machine the test's own calls during the hold can take that long. The call must
 * then say that tmux did not answer in time, nothing else.
 */
function heldPastItsBound(failed: boolean, text: string, began: number): boolean {
  if (!failed || performance.now() - began < DEFAULT_TIMEOUT_MS) return false;
  assert.match(text, new RegExp(`^tmux did not answer within ${DEFAULT_TIMEOUT_MS} ms`), text);
  return true;
}

Deno.test("left behind: a long paste_text SIGKILLed between its load and its paste leaves no buffer once the next process has made its first call and the grace has passed", async () => {
  const t = await TestTmux.start();
  const gate = await HookGate.make();
  const a = await startOn(t.socket);
  let b: StdioServer | undefined;
  try {
    await heldLongPaste(t, gate, a);
    await kill9(t, a);
    await gate.open();
    await t.tmux("set-hook", "-gu", "after-load-buffer");
    await waitFor(
      async () => !(await processesNaming(t.socket)).some((p) => p.args.includes("load-buffer")),
      "the orphaned load to end",
    );
    b = await startOn(t.socket);
    const listed = await callOver(b, "list_panes");
    assert.equal(listed.isError, false, listed.text);
    // No other call: the process that met it looks again by itself once the grace is over.
    // (Otherwise the agent's 20 KB of commands stay the newest buffer: the person's prefix ]
    // pastes it.)
    await buffersGone(t);
  } finally {
    await gate.open();
    await a.kill();
    await b?.kill();
    await t.kill();
    await gate.remove();
  }
});

Deno.test("left behind: a process already running deletes a killed one's transient buffer at a buffer call once the grace has passed, and lists it never", async () => {
  await withTwoProcesses({ bFirst: true }, async (t, gate, a, b) => {
    assert.equal((await callOver(b, "list_panes")).isError, false);
    await heldLongPaste(t, gate, a);
    // Its maker alive, the buffer is its maker's: not listed, not deleted.
    const whileAlive = await callOver(b, "list_buffers");
    assert.deepEqual(whileAlive.data.buffers, [], whileAlive.text);
    assert.equal((await ourBuffers(t)).length, 1, "a live paste's buffer stays");
    await kill9(t, a);
    await gate.open();
    await t.tmux("set-hook", "-gu", "after-load-buffer");
    await waitFor(
      async () => !(await processesNaming(t.socket)).some((p) => p.args.includes("load-buffer")),
      "the orphaned load to end",
    );
    await buffersGone(t, b);
  });
});

Deno.test("left behind: a long paste held after its load, its process alive, ends as a paste while another process calls", async () => {
  await withTwoProcesses({}, async (t, gate, a, b) => {
    const began = performance.now();
    const { pasted } = await heldLongPaste(t, gate, a);
    // The other process's first call (which looks for what processes gone left) and a buffer
    // call: the live paste's buffer is left alone.
    assert.equal((await callOver(b, "list_panes")).isError, false);
    assert.equal((await callOver(b, "list_buffers")).isError, false);
    await gate.open();
    const result = await pasted;
    const text = (result.content as { text: string }[] | undefined)?.[0]?.text ?? "";
    if (heldPastItsBound(result.isError === true, text, began)) return;
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(await ourBuffers(t), [], "the paste deleted its buffer");
  });
});

// A live process's long paste: its buffer is loaded by a tmux process of its own, named after
// the process's control client at that moment. A person's `tmux attach -d` (or `detach-client
// -a`) detaches that client while the load is on its way; the process lives and connects again.
// Another process's buffer call meanwhile finds the owner gone, but the buffer too young to be
// a killed process's: it stays for the live process's paste.
Deno.test("left behind: a long paste whose control client a person detached while its load was held still pastes while another process calls", async () => {
  await withTwoProcesses({}, async (t, gate, a, b) => {
    await t.tmux("new-window", "-d", "-t", t.ids.sessionId);
    const p = t.ids.paneId;
    await callOver(a, "list_panes");
    await callOver(b, "list_panes");
    await t.tmux("set-hook", "-g", "after-load-buffer", gate.command);
    const text = `: ${"x".repeat(20_000)} LONG-PASTE-END`;
    const began = performance.now();
    const paste = callOver(a, "paste_text", { paneId: p, text });
    await waitFor(() => gate.began(), "A's load to be held");
    const listed = await t.tmux("list-buffers", "-F", "#{buffer_name}");
    const owner = /tmux-mcp-transient-(client-\d+)-/.exec(listed)?.[1];
    assert.ok(owner, `A's transient buffer names its client: ${listed}`);
    // The person takes the session over: every other client is detached.
    await t.tmux("detach-client", "-t", owner);
    await waitFor(
      async () => !(await t.tmux("list-clients", "-F", "#{client_name}")).includes(owner),
      "A's old control client to go",
    );
    await callOver(b, "list_buffers");
    await gate.open();
    await t.tmux("set-hook", "-gu", "after-load-buffer");
    const pasted = await paste;
    if (heldPastItsBound(pasted.isError, pasted.text, began)) return;
    assert.equal(pasted.isError, false, `A's paste failed: ${pasted.text}`);
    assert.deepEqual(await ourBuffers(t), [], "the paste deleted its buffer");
  });
});

Deno.test("left behind: a short paste_text SIGKILLed while a person's hook holds its line after the fill leaves no buffer for the person's prefix ]", async () => {
  const t = await TestTmux.start();
  const gate = await HookGate.make();
  const a = await startOn(t.socket);
  let b: StdioServer | undefined;
  try {
    await callOver(a, "list_panes"); // the control connection warm: the step goes over it
    await t.tmux("set-hook", "-g", "after-set-buffer", gate.command);
    a.callTool("paste_text", { paneId: t.ids.paneId, text: "echo agent-one\necho agent-two" })
      .catch(() => {});
    await waitFor(() => gate.began(), "the fill to be held");
    await kill9(t, a);
    await gate.open();
    await t.tmux("set-hook", "-gu", "after-set-buffer");
    await t.tmux("display-message", "-p", "");
    b = await startOn(t.socket);
    // Else the agent's lines stay for the person's prefix ].
    await buffersGone(t, b);
  } finally {
    await gate.open();
    await a.kill();
    await b?.kill();
    await t.kill();
    await gate.remove();
  }
});

Deno.test("left behind: a transient buffer is neither listed, nor shown as the newest, nor counted against load_buffer's 16, and load_buffer makes none", async () => {
  const t = await TestTmux.start();
  const b = await startOn(t.socket);
  try {
    await t.tmux("set-buffer", "-b", "mine", "PERSON");
    // Another process's paste, in the middle of its step (no owner named: judged by its age).
    await t.tmux("set-buffer", "-b", "tmux-mcp-transient-0123456789ab", "echo other-agent");
    const listed = await callOver(b, "list_buffers");
    assert.deepEqual(
      (listed.data.buffers as { name: string }[]).map((x) => x.name),
      ["mine"],
      listed.text,
    );
    const shown = await callOver(b, "show_buffer");
    assert.equal(shown.data.name, "mine", shown.text);
    for (let i = 0; i < 16; i++) {
      const loaded = await callOver(b, "load_buffer", { text: `b${i}` });
      assert.equal(loaded.isError, false, `load ${i}: ${loaded.text}`);
    }
    const refused = await callOver(b, "load_buffer", { text: "x", name: "transient-0123456789ab" });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /transient-/);
    assert.equal(
      await t.tmux("show-buffer", "-b", "tmux-mcp-transient-0123456789ab"),
      "echo other-agent",
      "not replaced",
    );
  } finally {
    await b.kill();
    await t.kill();
  }
});

// A buffer named after a client that tmux does not list, as a killed process's paste leaves it.
const ORPHAN = "tmux-mcp-transient-client-999999-0123456789ab";

/** Whether tmux's clock says `name` (a buffer there) is still younger than the grace. */
async function stillYoung(t: TestTmux, name: string): Promise<boolean> {
  const listed = await t.tmux("list-buffers", "-F", "#{buffer_name} #{buffer_created}");
  const created = Number(listed.split("\n").find((l) => l.startsWith(`${name} `))?.split(" ")[1]);
  const now = Number((await t.tmux("display-message", "-p", "%s")).trim());
  return now - created < GRACE_S;
}

Deno.test("left behind: a transient buffer whose owner is gone, met younger than the grace, stays until then, and the process that met it takes it away by itself after", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-buffer", "-b", ORPHAN, "echo agent-text");
    const listed = await c.ok<{ buffers: unknown[] }>("list_buffers");
    assert.deepEqual(listed.buffers, []);
    // Met young, it stays (unless this machine took the whole grace to get here).
    const kept = (await ourBuffers(t)).includes(ORPHAN);
    assert.ok(kept || !await stillYoung(t, ORPHAN), "a young buffer of an owner gone was taken");
    // No call more: the process looks again once the grace is over.
    await waitFor(
      async () => !(await ourBuffers(t)).includes(ORPHAN),
      "the buffer to be taken away once old enough",
      PAST_GRACE_MS,
    );
  });
});

Deno.test("left behind: a process that met a young transient buffer of an owner gone and closes before the grace leaves no look again set", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket });
    await t.tmux("set-buffer", "-b", ORPHAN, "echo agent-text");
    await c.ok("list_buffers");
    // Set while the buffer is young (unless this machine took the whole grace to get here).
    const set = looksAgainSet(c.server.runner);
    assert.ok(set === 1 || !await stillYoung(t, ORPHAN), "no look again set");
    await c.close();
    assert.equal(looksAgainSet(c.server.runner), 0, "a look again outlives its process");
  } finally {
    await c?.close();
    await t.kill();
  }
});

// ---------------------------------------------------------------------------------------------
// clear_pane's scroll-on-clear turned off, held by a person's after-set-option hook

const MARK = "@tmux-mcp-scroll-on-clear";

/**
 * A pane running `sh` whose own scroll-on-clear is `before` ("" for none), and readers of its
 * own value and mark.
 */
async function clearedPane(t: Server, before: string) {
  const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
  if (before !== "") await t.tmux("set-option", "-p", "-t", p, "scroll-on-clear", before);
  return {
    p,
    own: async () => (await t.tmux("show-options", "-pqv", "-t", p, "scroll-on-clear")).trim(),
    mark: async () => (await t.tmux("show-options", "-pqv", "-t", p, MARK)).trim(),
  };
}

/**
 * Holds `s`'s clear of the screen of `p` alone after the turn-off: a person's hook on every
 * set-option, which waits (once) when it finds the pane's value off.
 */
async function heldClear(
  t: Server,
  gate: HookGate,
  s: StdioServer,
  p: string,
): Promise<{ cleared: Promise<Record<string, unknown>> }> {
  await callOver(s, "list_panes"); // the control connection warm, as usual
  await t.tmux(
    "set-hook",
    "-g",
    "after-set-option",
    `if-shell -F -t ${p} '#{==:#{scroll-on-clear},0}' "${gate.command}"`,
  );
  const cleared = s.callTool("clear_pane", { paneId: p, screen: true, history: false });
  cleared.catch(() => {});
  await waitFor(() => gate.began(), "the clear's step to be held");
  return { cleared };
}

for (const before of ["", "on"]) {
  Deno.test(`left behind: clear_pane SIGKILLed while a person's hook holds its step after scroll-on-clear off: the pane's own value (${before || "none"}) comes back at the next process's first call`, async () => {
    const t = await TestTmux.start();
    const gate = await HookGate.make();
    const a = await startOn(t.socket, TEARDOWN);
    let b: StdioServer | undefined;
    try {
      const { p, own, mark } = await clearedPane(t, before);
      await heldClear(t, gate, a, p);
      assert.equal(await own(), "off", "held after the turn-off");
      await kill9(t, a);
      await gate.open();
      await t.tmux("set-hook", "-gu", "after-set-option");
      // Whatever tmux does with the rest of the line, it is done once a later command answers.
      await t.tmux("display-message", "-p", "");
      b = await startOn(t.socket, ["--toolsets", "inspect"]);
      const listed = await callOver(b, "list_panes");
      assert.equal(listed.isError, false, listed.text);
      assert.equal(await own(), before, "the pane kept scroll-on-clear off, which nobody set");
      assert.equal(await mark(), "", "the mark is gone");
    } finally {
      await gate.open();
      await a.kill();
      await b?.kill();
      await t.kill();
      await gate.remove();
    }
  });
}

Deno.test("left behind: after a clear_pane SIGKILLed with scroll-on-clear off, a running process's clear_pane there keeps the pane's own value", async () => {
  await withTwoProcesses({ flags: TEARDOWN, bFirst: true }, async (t, gate, a, b) => {
    const { p, own, mark } = await clearedPane(t, "");
    assert.equal((await callOver(b, "list_panes")).isError, false);
    await heldClear(t, gate, a, p);
    await kill9(t, a);
    await gate.open();
    await t.tmux("set-hook", "-gu", "after-set-option");
    await t.tmux("display-message", "-p", "");
    assert.equal(await own(), "off", "left off by the killed process's line");
    await t.tmux("send-keys", "-t", p, "-l", "echo SCREEN-$((6*7))");
    await t.tmux("send-keys", "-t", p, "Enter");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("SCREEN-42"),
      "the screen",
    );
    const cleared = await callOver(b, "clear_pane", { paneId: p, screen: true, history: false });
    assert.equal(cleared.isError, false, cleared.text);
    assert.equal(await own(), "", "the pane's own value is none, as before the killed clear");
    assert.equal(await mark(), "");
    assert.equal(cleared.data.historySize, 0, "nothing moved into the history");
    // A screen cleared now goes into the history, as the person's own setting says.
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", p, "#{scroll-on-clear}")).trim(),
      "1",
    );
  });
});

Deno.test("left behind: a SIGKILLed process's control client stays listed while tmux still holds output for it, and a scroll-on-clear mark it made is given back once a minute old", async () => {
  const t = await TestTmux.start();
  const a = await startOn(t.socket, TEARDOWN);
  let b: StdioServer | undefined;
  let client: string | undefined;
  try {
    const { p, own, mark } = await clearedPane(t, "");
    await callOver(a, "list_panes");
    [client] = await clientsOf(t, a);
    const name = (await t.tmux("list-clients", "-F", "#{client_pid} #{client_name}"))
      .split("\n").find((l) => l.startsWith(`${client} `))?.split(" ")[1];
    assert.ok(name, "the process's control client is named");
    // The process reads nothing while tmux writes it more than a pipe holds, then is killed:
    // tmux keeps that output, and the client, for a reader that will never come.
    Deno.kill(a.child.pid, "SIGSTOP");
    for (let batch = 0; batch < 20; batch++) {
      const renames: string[] = [];
      for (let i = 0; i < 20; i++) {
        renames.push("rename-window", "-t", p, `w${batch}-${i}-${"x".repeat(250)}`, ";");
      }
      await t.tmux(...renames.slice(0, -1));
    }
    await a.kill();
    // Dated by tmux's clock: a mark of that client's made just now, and one a minute old.
    const now = Number((await t.tmux("display-message", "-p", "%s")).trim());
    const q = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    for (const [pane, at] of [[p, now - 61], [q, now]] as const) {
      await t.tmux("set-option", "-p", "-t", pane, MARK, `unset.${name}.${at}`);
      await t.tmux("set-option", "-p", "-t", pane, "scroll-on-clear", "off");
    }
    b = await startOn(t.socket, ["--toolsets", "inspect"]);
    assert.equal((await callOver(b, "list_panes")).isError, false);
    assert.ok(
      (await t.tmux("list-clients", "-F", "#{client_name}")).split("\n").includes(name),
      "tmux still lists the killed process's client",
    );
    assert.equal(await own(), "", "the minute-old mark's pane has its own value (none) back");
    assert.equal(await mark(), "");
    const ownQ = (await t.tmux("show-options", "-pqv", "-t", q, "scroll-on-clear")).trim();
    assert.equal(ownQ, "off", "a mark just made by a client still listed is its owner's");
    assert.equal(
      (await t.tmux("show-options", "-pqv", "-t", q, MARK)).trim(),
      `unset.${name}.${now}`,
    );
  } finally {
    await a.kill();
    await b?.kill();
    // The kept client's own `tmux -C` process: tmux lets that client go once it is gone (and
    // until then, would not end its server at kill-server).
    try {
      if (client) Deno.kill(Number(client), "SIGKILL");
    } catch {
      // gone already
    }
    await t.kill();
  }
});

Deno.test("left behind: a clear_pane held after scroll-on-clear off, its process alive, keeps its step while another process calls", async () => {
  await withTwoProcesses({ flags: TEARDOWN }, async (t, gate, a, b) => {
    const { p, own, mark } = await clearedPane(t, "on");
    const { cleared } = await heldClear(t, gate, a, p);
    assert.notEqual(await mark(), "", "marked while off");
    assert.equal((await callOver(b, "list_panes")).isError, false);
    assert.equal(await own(), "off", "a live clear's turn-off is its own to put back");
    assert.notEqual(await mark(), "");
    await gate.open();
    const result = await cleared;
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal(await own(), "on");
    assert.equal(await mark(), "", "unmarked by its own line");
  });
});

// The mark names the control client whose line turns the value off. A person's `tmux attach -d`
// detaches that client while a hook holds the line: tmux runs no more of that line (the clear
// and the give-back on it never come), the process lives, and both it (its call fails, and it
// undoes what it owed) and another process (the mark's owner gone) put back the same value on
// the same conditions.
Deno.test("left behind: a clear_pane whose control client a person detached while its step was held: the rest of its line never runs, and the pane's own value comes back whoever gives it back", async () => {
  const t = await TestTmux.start();
  const gate = await HookGate.make();
  const a = await startOn(t.socket, TEARDOWN);
  let b: StdioServer | undefined;
  try {
    const { p, own, mark } = await clearedPane(t, "on");
    await t.tmux("send-keys", "-t", p, "-l", "echo SCREEN-$((6*7))");
    await t.tmux("send-keys", "-t", p, "Enter");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("SCREEN-42"),
      "the screen",
    );
    const { cleared } = await heldClear(t, gate, a, p);
    const owner = /^on\.(client-\d+)\.\d+$/.exec(await mark())?.[1];
    assert.ok(owner, "marked with its client's name");
    await t.tmux("detach-client", "-t", owner);
    await waitFor(
      async () => !(await t.tmux("list-clients", "-F", "#{client_name}")).includes(owner),
      "A's control client to go",
    );
    b = await startOn(t.socket, ["--toolsets", "inspect"]);
    assert.equal((await callOver(b, "list_panes")).isError, false);
    await gate.open();
    await t.tmux("set-hook", "-gu", "after-set-option");
    const result = await cleared;
    await t.tmux("display-message", "-p", "");
    assert.equal(await own(), "on", `the pane's own value: ${JSON.stringify(result)}`);
    assert.equal(await mark(), "", "the mark is gone");
    // The rest of the detached client's line never ran: the screen was not cleared.
    assert.match(await t.tmux("capture-pane", "-p", "-t", p), /SCREEN-42/);
    // A's call says it may not have cleared, and the next clear is the person's setting's.
    assert.equal(result.isError, true, JSON.stringify(result));
    const again = await callOver(a, "clear_pane", { paneId: p, screen: true, history: false });
    assert.equal(again.isError, false, again.text);
    assert.equal(await own(), "on");
  } finally {
    await gate.open();
    await a.kill();
    await b?.kill();
    await t.kill();
    await gate.remove();
  }
});
