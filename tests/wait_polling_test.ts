/**
 * wait_for_text without a control client, against real tmux on private sockets: a session a
 * control client must not join (destroy-unattached) is waited on by polling, and polling tells
 * the same as control mode — what was on screen at the start is not new, a row redrawn in place
 * is matched and told whole, a width change does not make old rows new; and a control feed
 * lost in the middle of a wait does not either.
 *
 * Ordering without subscriptions: the pane prints on the wait's first progress notification,
 * sent once the wait has read its starting point.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { waitFor } from "./helpers/tmux.ts";
import {
  quietPane,
  structured,
  subscribed,
  type,
  type Wait,
  withServer,
} from "./helpers/wait_text.ts";

Deno.test("a session a control client must not join is waited on by polling", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // destroy-unattached: a control client would keep the session alive after the person
    // left, so it is never attached to (a person is attached so the session stays).
    await t.attach("main");
    await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    // No subscription to wait for: the first progress notification is sent once the wait has
    // read its starting point, and that is when the pane prints.
    let printed: Promise<void> | null = null;
    const waiting = c.client.callTool(
      { name: "wait_for_text", arguments: { paneId: p, patterns: ["POLLED"], stop: ["X"] } },
      undefined,
      { onprogress: () => void (printed ??= type(t, p, "printf 'POL%sED\\n' L")) },
    );
    const result = structured(await waiting as CallToolResult);
    await printed;
    assert.equal(
      (await t.tmux("list-clients", "-F", "#{client_control_mode}")).trim(),
      "0",
      "no control client joined",
    );
    assert.equal(result.transport, "polling");
    assert.equal(result.outcome, "matched");
    assert.deepEqual(result.lines, ["POLLED"]);
  });
});

Deno.test("polling: what was on screen at the start is not new, and new text is cut by characters", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // Two rows, then the cursor home and three e + combining accents written over "old": the
    // start row holds more characters than columns, and "READY before" sits below the cursor.
    await t.tmux(
      "respawn-pane",
      "-k",
      "-t",
      p,
      "printf 'old line\\nREADY before\\n\\033[He\\314\\201e\\314\\201e\\314\\201'; exec cat",
    );
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("READY before"),
      "the program's screen",
    );
    await t.attach("main");
    await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    const before = structured(
      await c.call("wait_for_text", { paneId: p, patterns: ["READY"], timeoutMs: 1_000 }),
    );
    assert.equal(before.transport, "polling");
    assert.deepEqual([before.outcome, before.alreadyOnScreen], ["timedOut", true]);
    // Typed now: echoed at the cursor, over " l". The start row from where it changed.
    let typed: Promise<void> | null = null;
    const waiting = c.client.callTool(
      { name: "wait_for_text", arguments: { paneId: p, patterns: ["^GO"], regex: true } },
      undefined,
      {
        onprogress: () => void (typed ??= t.tmux("send-keys", "-t", p, "-l", "GO").then(() => {})),
      },
    );
    const result = structured(await waiting as CallToolResult);
    await typed;
    assert.equal(result.transport, "polling");
    assert.equal(result.outcome, "matched");
    assert.deepEqual(result.lines, ["GOine"]);
  });
});

Deno.test("polling: a spinner drawn again before old text does not make it new", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    await tty.write("| building foo");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("| building foo"),
      "the spinner",
    );
    await t.attach("main");
    await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    let drawn: Promise<void> | null = null;
    const waiting = c.client.callTool(
      {
        name: "wait_for_text",
        arguments: { paneId: p, patterns: ["building foo", "MARK"], timeoutMs: 10_000 },
      },
      undefined,
      {
        onprogress: () =>
          void (drawn ??= tty.write("\r- building foo").then(() => tty.write("\r\nMARK\r\n"))),
      },
    );
    const result = structured(await waiting as CallToolResult);
    await drawn;
    assert.deepEqual([result.transport, result.outcome, result.matched?.pattern], [
      "polling",
      "matched",
      "MARK",
    ]);
  });
});

Deno.test("polling: a row redrawn in place (\\r) is matched and told whole", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    await tty.write("Downloading... 12%");
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("12%"),
      "the progress line",
    );
    await t.attach("main");
    await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    let drawn: Promise<void> | null = null;
    const waiting = c.client.callTool(
      {
        name: "wait_for_text",
        arguments: { paneId: p, patterns: ["Download complete"], timeoutMs: 10_000 },
      },
      undefined,
      { onprogress: () => void (drawn ??= tty.write("\rDownload complete  ")) },
    );
    const result = structured(await waiting as CallToolResult);
    await drawn;
    assert.deepEqual([result.transport, result.outcome, result.lines], [
      "polling",
      "matched",
      ["Download complete"],
    ]);
  });
});

Deno.test("control feed lost mid-wait: text on screen below the cursor before the wait is not new", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    {
      await tty.write("header\r\n\r\nBUILD OK\r\n\x1b[1;1H");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("BUILD OK"),
        "BUILD OK on screen",
      );
      const waiting = c.ok<Wait>("wait_for_text", {
        paneId: p,
        patterns: ["BUILD OK"],
        timeoutMs: 1_500,
      });
      await subscribed(t, c);
      await t.tmux("detach-client", "-s", "main");
      const result = await waiting;
      assert.deepEqual([result.outcome, result.alreadyOnScreen], ["timedOut", true]);
    }
  });
});

Deno.test("polling: a width change does not make old rows new output", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const tty = await quietPane(t, p);
    {
      await t.attach("main");
      await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
      await t.tmux("resize-window", "-t", p, "-x", "80", "-y", "10");
      let out = "";
      for (let i = 0; i < 6; i++) out += `step ${i} ${"-".repeat(60)} BUILD OK\r\n`;
      await tty.write(out + "$ ");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("$"),
        "the prompt",
      );
      let resized: Promise<string> | null = null;
      const waiting = c.client.callTool(
        {
          name: "wait_for_text",
          arguments: { paneId: p, patterns: ["BUILD OK"], timeoutMs: 1_500 },
        },
        undefined,
        { onprogress: () => void (resized ??= t.tmux("resize-window", "-t", p, "-x", "40")) },
      );
      const result = structured(await waiting as CallToolResult);
      await resized;
      assert.equal(result.transport, "polling");
      assert.deepEqual([result.outcome, result.lines], ["timedOut", []]);
    }
  });
});
