/**
 * A person's slow hook between the commands of one act: tmux runs an `after-<command>` hook right
 * after each command of a line, and one that waits on a `run-shell` (a plugin's script) holds
 * the rest of tmux-mcp's line there while the person's own client carries on. Whatever the
 * person does meanwhile (switch to the window the act is in, attach to its session), the rest of
 * the act is checked again by tmux before each command that could reach them, and the reply
 * says exactly how far the act went.
 *
 * Each test holds the act at a chosen command with a {@link HookGate} (the hook picks the
 * command by its arguments), lets the person come to watch, then opens the gate.
 */

import assert from "node:assert/strict";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { holdAfter, textOf, withHeldAct } from "./helpers/held_acts.ts";
import { HookGate, TestTmux, waitFor } from "./helpers/tmux.ts";

/** Rows of `paneId`'s screen that are exactly `line` (a command's output, not its echo). */
async function rowsEqual(t: TestTmux, paneId: string, line: string): Promise<number> {
  const shown = await t.tmux("capture-pane", "-p", "-t", paneId);
  return shown.split("\n").filter((row) => row.trim() === line).length;
}

/** The person's client comes to show `windowId` while the act is held. */
async function personSwitches(t: TestTmux, gate: HookGate, windowId: string): Promise<void> {
  await waitFor(() => gate.began(), "the act to be held by the hook");
  await t.tmux("select-window", "-t", windowId);
  const shown = (await t.tmux("list-clients", "-F", "#{client_tty} #{window_id}")).trim();
  assert.match(shown, new RegExp(`${windowId}$`, "m"), "the person shows the act's window");
  await gate.open();
}

Deno.test("send_keys held after its text: the keys after it are not pressed into the pane a person came to watch, and the reply says so", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId }) => {
    await holdAfter(t, gate, "after-send-keys", "*HELD-KEYS*");
    const call = c.call("send_keys", { paneId, text: "echo HELD-KEYS", keys: ["Enter"] });
    await personSwitches(t, gate, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /typed/i, text);
    assert.match(text, /Enter.*not pressed|not pressed.*Enter/s, text);
    await t.tmux("set-hook", "-gu", "after-send-keys");
    assert.equal(await rowsEqual(t, paneId, "HELD-KEYS"), 0, "the line was not run");
  });
});

Deno.test("paste_text held after its paste: Enter is not pressed into the pane a person came to watch, and the reply says so", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId }) => {
    await holdAfter(t, gate, "after-paste-buffer", "*");
    const call = c.call("paste_text", { paneId, text: "echo PASTED-HELD", enter: true });
    await personSwitches(t, gate, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /pasted/i, text);
    assert.match(text, /Enter was not pressed/, text);
    await t.tmux("set-hook", "-gu", "after-paste-buffer");
    assert.equal(await rowsEqual(t, paneId, "PASTED-HELD"), 0, "the line was not run");
  });
});

Deno.test("run_command held after its paste: Enter is not pressed, and the call does not say the command ran", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId }) => {
    await holdAfter(t, gate, "after-paste-buffer", "*");
    const call = c.call("run_command", { paneId, command: "echo RAN-HELD", timeoutMs: 10_000 });
    await personSwitches(t, gate, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /Enter was not pressed/, text);
    assert.doesNotMatch(text, /exited with status/, text);
    await t.tmux("set-hook", "-gu", "after-paste-buffer");
    assert.equal(await rowsEqual(t, paneId, "RAN-HELD"), 0, "the command did not run");
  });
});

Deno.test("run_command held after its typing step takes the pane: nothing of the command is typed into the pane a person came to watch", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId }) => {
    // The typing step's mark (a job id and a deadline), not the C-c step's claim (`.c...`).
    await t.tmux(
      "set-hook",
      "-g",
      "after-set-option",
      "if-shell -F '#{&&:#{m:*@tmux-mcp-run *,#{hook_arguments}}," +
        `#{!=:#{m:*.c*,#{hook_arguments}},1}}' { ${gate.command} }`,
    );
    const call = c.call("run_command", { paneId, command: "echo TYPED-NOT", timeoutMs: 10_000 });
    await personSwitches(t, gate, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /C-c/, `the refusal says the C-c was pressed: ${text}`);
    assert.match(text, /nothing of the command was typed/i, text);
    await t.tmux("set-hook", "-gu", "after-set-option");
    const shown = await t.tmux("capture-pane", "-p", "-t", paneId);
    assert.doesNotMatch(shown, /TYPED-NOT/, "nothing of the command was typed");
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", paneId, "#{@tmux-mcp-run}")).trim(),
      "",
      "the pane's run mark is given back: nothing runs there",
    );
  });
});

Deno.test("run_command held after its C-c step takes the pane: no C-c reaches the pane a person came to watch", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId }) => {
    await holdAfter(t, gate, "after-set-option", "*@tmux-mcp-run *.c*");
    const call = c.call("run_command", { paneId, command: "echo NO-CC", timeoutMs: 10_000 });
    await personSwitches(t, gate, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /Nothing was (sent|typed)/, text);
    await t.tmux("set-hook", "-gu", "after-set-option");
    const shown = await t.tmux("capture-pane", "-p", "-t", paneId);
    assert.doesNotMatch(shown, /\^C/, "no C-c was pressed");
    assert.doesNotMatch(shown, /NO-CC/, "nothing was typed");
  });
});

Deno.test("clear_pane (screen only) held after it turns scroll-on-clear off: the screen a person came to watch is not cleared, and the value is given back", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId }) => {
    await t.tmux("send-keys", "-t", paneId, "echo SCREEN-KEPT", "Enter");
    await waitFor(async () => await rowsEqual(t, paneId, "SCREEN-KEPT") === 1, "the output");
    await holdAfter(t, gate, "after-set-option", "*scroll-on-clear off*");
    const call = c.call("clear_pane", { paneId, screen: true, history: false });
    await personSwitches(t, gate, windowId);
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /not cleared|nothing was cleared/i, text);
    await t.tmux("set-hook", "-gu", "after-set-option");
    assert.equal(await rowsEqual(t, paneId, "SCREEN-KEPT"), 1, "the screen was not cleared");
    assert.equal(
      (await t.tmux("show-options", "-pqv", "-t", paneId, "scroll-on-clear")).trim(),
      "",
      "the pane's scroll-on-clear is its own again (none)",
    );
  });
});

Deno.test("create_window select:true under window-size manual, held after the lend: the person who came to the session is not switched, and manual is given back", async () => {
  const t = await TestTmux.start("main");
  const gate = await HookGate.make();
  let c: TestClient | undefined;
  try {
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    await t.tmux("set-option", "-gw", "window-size", "manual");
    const tty = await t.attach("other");
    c = await connect({ socketName: t.socket });
    const windows = async () =>
      (await t.tmux("list-windows", "-t", "main", "-F", "#{window_id}"))
        .trim();
    const before = await windows();
    await holdAfter(t, gate, "after-set-option", "*window-size latest*");
    const call = c.call("create_window", { session: "main", select: true });
    await waitFor(() => gate.began(), "the creation to be held by the hook");
    await t.tmux("switch-client", "-c", tty, "-t", "main");
    const shown = async () =>
      (await t.tmux("list-clients", "-F", "#{client_tty} #{session_name}:#{window_id}")).trim();
    const seen = await shown();
    assert.match(seen, /main:/, "the person shows session main");
    await gate.open();
    const r = await call;
    const text = textOf(r);
    assert.equal(r.isError, true, text);
    assert.match(text, /would change what a person sees|not made/, text);
    await t.tmux("set-hook", "-gu", "after-set-option");
    assert.equal(await shown(), seen, "the person's client shows what it showed");
    assert.equal(await windows(), before, "no window was made");
    assert.equal(
      (await t.tmux("show-options", "-gwv", "window-size")).trim(),
      "manual",
      "the person's window-size is given back",
    );
  } finally {
    await gate.open();
    await c?.close();
    await t.kill();
    await gate.remove();
  }
});

Deno.test("send_keys held after its text while synchronize-panes is turned on: the keys are not copied to panes the reply would not list", async () => {
  await withHeldAct(async (t, c, gate, { windowId, paneId }) => {
    const sibling =
      (await t.tmux("split-window", "-d", "-t", paneId, "-P", "-F", "#{pane_id}", "sh"))
        .trim();
    await t.prompt(sibling);
    await holdAfter(t, gate, "after-send-keys", "*SYNC-HELD*");
    const call = c.call("send_keys", { paneId, text: "echo SYNC-HELD", keys: ["Enter"] });
    await waitFor(() => gate.began(), "the act to be held by the hook");
    await t.tmux("set-option", "-w", "-t", windowId, "synchronize-panes", "on");
    await gate.open();
    const r = await call;
    const text = textOf(r);
    await t.tmux("set-hook", "-gu", "after-send-keys");
    if (r.isError) {
      assert.match(text, /not pressed/, text);
    } else {
      const reached = (r.structuredContent as { reachedPanes: string[] }).reachedPanes;
      assert.deepEqual([...reached].sort(), [paneId, sibling].sort(), text);
    }
    // The sibling got no Enter: its screen shows the one prompt it had.
    const rows = (await t.tmux("capture-pane", "-p", "-t", sibling)).split("\n")
      .filter((row) => row.trim() !== "");
    assert.equal(rows.length, 1, `the sibling's screen: ${rows.join(" | ")}`);
  });
});

Deno.test("send_keys held between its text and Enter while the pane's program reads the text and ends: the reply says the text may have gone in", async () => {
  const t = await TestTmux.start("main");
  const gate = await HookGate.make();
  let c: TestClient | undefined;
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-ended-" });
  try {
    // A program that takes three bytes and ends (a one-key confirm).
    const paneId = (await t.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      `stty raw -echo; head -c3 > ${dir}/got; sleep 0.2`,
    )).trim();
    // The shell opens the file for head once stty has made the terminal raw.
    await waitFor(() => Deno.stat(`${dir}/got`).then(() => true, () => false), "the program");
    c = await connect({ socketName: t.socket });
    await holdAfter(t, gate, "after-send-keys", "*YES*");
    const call = c.call("send_keys", { paneId, text: "YES", keys: ["Enter"] });
    await waitFor(() => gate.began(), "the step held after the text");
    await waitFor(
      async () => (await Deno.readTextFile(`${dir}/got`)) === "YES",
      "the program to read the text",
    );
    await waitFor(
      async () => !(await t.tmux("list-panes", "-a", "-F", "#{pane_id}")).includes(paneId),
      "the pane to end",
    );
    await gate.open();
    const r = await call;
    const text = (r.content as { text?: string }[]).map((x) => x.text ?? "").join("\n");
    assert.equal(r.isError, true, text);
    assert.match(text, /ended during the step/, text);
    assert.match(text, /typed the text may have reached it/, text);
    assert.match(text, /Enter/, text);
    assert.doesNotMatch(text, /could not find the target/, text);
    assert.equal(await Deno.readTextFile(`${dir}/got`), "YES");
  } finally {
    await gate.open();
    await c?.close();
    await t.kill();
    await gate.remove();
    await Deno.remove(dir, { recursive: true });
  }
});
