/**
 * The person first, tried as an attacker would: no sequence of calls may move a person's view
 * away, type into the pane they were looking at, and move the view back; no manage tool
 * changes what a person's client shows (current window, active pane, zoom, layout, which pane
 * sits where, their session's existence); and the check and the act are one step in tmux's
 * command queue, so a view that changes right after the check still stops the act.
 */

import assert from "node:assert/strict";
import { TOOLSETS } from "../src/mcp/toolsets.ts";
import { withTmux } from "./helpers/mcp.ts";
import { type TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

/** A detached window with a shell at its prompt; returns its window and pane ids. */
async function hiddenWindow(
  t: Server,
  target = "main",
): Promise<{ windowId: string; paneId: string }> {
  const [windowId, paneId] = (await t.tmux(
    "new-window",
    "-d",
    "-t",
    `${target}:`,
    "-P",
    "-F",
    "#{window_id} #{pane_id}",
    "sh",
  )).trim().split(" ");
  await shellReady(t, paneId);
  return { windowId, paneId };
}

async function shellReady(t: Server, paneId: string): Promise<void> {
  await waitFor(
    async () =>
      (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_current_command}")).trim() ===
        "sh",
    "the shell",
  );
}

async function screen(t: Server, paneId: string): Promise<string> {
  return await t.tmux("capture-pane", "-p", "-J", "-t", paneId, "-S", "-");
}

async function clientWindow(t: Server, tty: string): Promise<string> {
  const rows = (await t.tmux("list-clients", "-F", "#{client_tty} #{window_id}")).trim().split(
    "\n",
  );
  return rows.find((r) => r.startsWith(`${tty} `))?.split(" ")[1] ?? "";
}

Deno.test("view changes on a person's screen are refused, naming the client and the lift", async () => {
  await withTmux(async (t, c) => {
    await shellReady(t, t.ids.paneId);
    const watched = t.ids.paneId;
    const hidden = await hiddenWindow(t);
    // A neighbour of the watched pane (made behind the tools' back: split_window refuses it).
    const neighbour = (await t.tmux(
      "split-window",
      "-d",
      "-t",
      watched,
      "-P",
      "-F",
      "#{pane_id}",
      "sh",
    )).trim();
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    const tty = await t.attach("main");
    const layoutBefore = await t.tmux("display-message", "-p", "-t", watched, "#{window_layout}");

    const refusals: [string, Record<string, unknown>][] = [
      ["select_window", { windowId: hidden.windowId }],
      ["select_pane", { paneId: neighbour }],
      ["resize_pane", { paneId: neighbour, zoom: true }],
      ["resize_pane", { paneId: watched, width: 20 }],
      ["resize_window", { windowId: t.ids.windowId, zoom: true }],
      ["resize_window", { windowId: t.ids.windowId, width: 50 }],
      ["select_layout", { windowId: t.ids.windowId, layout: "even-vertical" }],
      ["swap_pane", { paneId: watched, targetPaneId: hidden.paneId }],
      ["swap_pane", { paneId: hidden.paneId, targetPaneId: neighbour }],
      ["move_window", { windowId: t.ids.windowId, session: "other" }],
      ["enter_copy_mode", { paneId: neighbour }],
      ["split_window", { paneId: watched }],
      ["create_window", { session: "main", select: true }],
      // Their keystrokes would reach every pane of the window (or stop reaching them).
      ["set_synchronize_panes", { windowId: t.ids.windowId, enabled: true }],
    ];
    for (const [tool, args] of refusals) {
      const text = await c.fail(tool, args);
      assert.match(text, /would change what a person sees|came to show it/, `${tool}: ${text}`);
      assert.ok(text.includes(tty), `${tool} names the client: ${text}`);
      assert.match(text, /--allow-attended-input/, `${tool} says what lifts it`);
    }
    // Nothing moved: same window on their screen, same layout, no copy mode, no zoom.
    assert.equal(await clientWindow(t, tty), t.ids.windowId);
    assert.equal(
      await t.tmux("display-message", "-p", "-t", watched, "#{window_layout}"),
      layoutBefore,
    );
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", neighbour, "#{pane_in_mode}")).trim(),
      "0",
    );
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", watched, "#{pane_synchronized}")).trim(),
      "0",
    );
    // And typing into the watched pane is still refused: the three-call route is closed.
    assert.match(
      await c.fail("send_keys", { paneId: watched, text: "echo GUARDED" }),
      /being watched by a person/,
    );
    assert.ok(!(await screen(t, watched)).includes("GUARDED"));

    // What nobody sees is free: the hidden window can be zoomed, rearranged, swapped, moved.
    const extra =
      (await t.tmux("split-window", "-d", "-t", hidden.paneId, "-P", "-F", "#{pane_id}"))
        .trim();
    await c.ok("resize_pane", { paneId: extra, zoom: true });
    await c.ok("select_pane", { paneId: hidden.paneId });
    await c.ok("swap_pane", { paneId: hidden.paneId, targetPaneId: extra });
    await c.ok("move_window", { windowId: hidden.windowId, session: "other" });
    await c.ok("split_window", { paneId: hidden.paneId });
    assert.equal(
      (await c.ok<{ synchronized: boolean }>("set_synchronize_panes", {
        windowId: hidden.windowId,
        enabled: true,
      })).synchronized,
      true,
    );
  });
});

Deno.test("set_option on what a person sees is refused like the manage tools", async () => {
  await withTmux(async (t, c) => {
    const watched = t.ids.paneId;
    await t.tmux("split-window", "-d", "-t", watched, "sh");
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    // Not in main: a window of the person's session is one key away, and synchronize-panes
    // there is refused too (tests/sync_listed_test.ts).
    const hidden = await hiddenWindow(t, "other");
    const tty = await t.attach("main");
    const look = () =>
      t.tmux(
        "display-message",
        "-p",
        "-t",
        watched,
        "#{synchronize-panes} #{window_layout} #{status} #{pane-border-status}",
      );
    const before = await look();
    const global = await t.tmux("show-options", "-g");
    const globalWindow = await t.tmux("show-options", "-gw");
    const server = await t.tmux("show-options", "-s");
    const refusals: Record<string, unknown>[] = [
      { name: "synchronize-panes", value: "on", scope: "window", target: t.ids.windowId },
      { name: "synchronize-panes", value: "on", scope: "pane", target: watched },
      { name: "pane-border-status", value: "top", scope: "window", target: t.ids.windowId },
      { name: "status", value: "off", scope: "session", target: "main" },
      { name: "status", unset: true, scope: "session", target: "main" },
      // Global options reach every session and window, the person's among them.
      { name: "status", value: "off", scope: "session", global: true },
      { name: "pane-border-status", value: "top", scope: "window", global: true },
      // So do most server options: escape-time decides what the person's Escape key sends.
      { name: "escape-time", value: "10", scope: "server" },
    ];
    for (const args of refusals) {
      const text = await c.fail("set_option", args);
      assert.match(text, /would change what a person sees/, `${JSON.stringify(args)}: ${text}`);
      assert.ok(text.includes(tty), `names the client: ${text}`);
      assert.match(text, /--allow-attended-input/, `says what lifts it: ${text}`);
    }
    assert.equal(await look(), before);
    assert.equal(await t.tmux("show-options", "-g"), global);
    assert.equal(await t.tmux("show-options", "-gw"), globalWindow);
    assert.equal(await t.tmux("show-options", "-s"), server);

    // What nobody sees is free; user options (but the agent marks) and the server options
    // that reach no client change no view.
    await c.ok("set_option", {
      name: "synchronize-panes",
      value: "on",
      scope: "window",
      target: hidden.windowId,
    });
    await c.ok("set_option", { name: "status", value: "off", scope: "session", target: "other" });
    await c.ok("set_option", { name: "@mark", value: "1", scope: "pane", target: watched });
    await c.ok("set_option", { name: "@mark", value: "1", scope: "session", global: true });
    await c.ok("set_option", { name: "exit-empty", value: "off", scope: "server" });
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", hidden.paneId, "#{synchronize-panes}")).trim(),
      "1",
    );
  });
});

Deno.test("set_option on a background window's entry in a person's status line is refused", async () => {
  await withTmux(async (t, c) => {
    const hidden = await hiddenWindow(t);
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    const [alone, linked] = (await t.tmux(
      "list-windows",
      "-t",
      "other",
      "-F",
      "#{window_id}",
    )).trim().split("\n");
    // A window of `other` also linked into main: listed in main's status line too.
    const shared = (await t.tmux(
      "new-window",
      "-d",
      "-t",
      "other:",
      "-P",
      "-F",
      "#{window_id}",
      "sh",
    )).trim();
    await t.tmux("link-window", "-d", "-s", shared, "-t", "main:");
    assert.equal(linked, undefined);
    const tty = await t.attach("main");
    assert.equal(await clientWindow(t, tty), t.ids.windowId, "the person looks at @0");
    // What main's status line draws each window with (options, not their expansion: no
    // clock, no name that automatic-rename changes meanwhile).
    const entry = "#{window_id}=#{window-status-style}/#{window-status-format}/" +
      "#{window-status-current-format}/#{automatic-rename-format}|";
    const statusLine = () => t.tmux("display-message", "-p", "-t", "main:", `#{W:${entry}}`);
    const before = await statusLine();
    assert.equal(before.split("|").length, 4, before);
    for (
      const [name, value] of [
        ["window-status-format", " AGENT WAS HERE "],
        ["window-status-style", "bg=red,blink"],
        ["window-status-current-format", "x"],
        ["automatic-rename-format", "renamed"],
      ]
    ) {
      for (const target of [hidden.windowId, shared]) {
        const text = await c.fail("set_option", { name, value, scope: "window", target });
        assert.match(text, /would change what a person sees: window @\d+ is listed in the status/);
        assert.ok(text.includes(tty), `names the client: ${text}`);
        assert.equal(await t.tmux("show-options", "-w", "-t", target), "", `${name} on ${target}`);
      }
    }
    assert.equal(await statusLine(), before);
    // The same on a window of a session nobody has attached is free.
    await c.ok("set_option", {
      name: "window-status-format",
      value: " AGENT WAS HERE ",
      scope: "window",
      target: alone,
    });
    assert.equal(
      await t.tmux("show-options", "-wv", "-t", alone, "window-status-format"),
      " AGENT WAS HERE \n",
    );
  });
});

Deno.test("a status line entry is guarded by tmux at the act: a person who switched in meanwhile", async () => {
  await withTmux(async (t, c) => {
    const hidden = await hiddenWindow(t);
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    const tty = await t.attach("other");
    // A hook brings the person to main the moment anyone lists clients: right after the
    // guard's read, before the option is set.
    await t.tmux("set-hook", "-g", "after-list-clients", `switch-client -c ${tty} -t main`);
    const text = await c.fail("set_option", {
      name: "window-status-format",
      value: "x",
      scope: "window",
      target: hidden.windowId,
    });
    assert.ok(text.includes(tty), text);
    assert.equal(await t.tmux("show-options", "-w", "-t", hidden.windowId), "");
  });
});

Deno.test("set_option on a person's view goes ahead with --allow-attended-input", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    await c.ok("set_option", { name: "status", value: "off", scope: "session", target: "main" });
    await c.ok("set_option", {
      name: "pane-border-status",
      value: "top",
      scope: "window",
      global: true,
    });
    assert.equal(await t.tmux("show-options", "-v", "-t", "main", "status"), "off\n");
    assert.equal(await t.tmux("show-options", "-gwv", "pane-border-status"), "top\n");
  }, { allowAttendedInput: true });
});

Deno.test("set_option on a window a person switched to right after the check is refused", async () => {
  await withTmux(async (t, c) => {
    const away = await hiddenWindow(t);
    await t.tmux("select-window", "-t", away.windowId);
    const tty = await t.attach("main");
    assert.equal(await clientWindow(t, tty), away.windowId);
    // A hook switches the person to the target window the moment anyone lists clients:
    // right after the guard's read, before the option is set.
    await t.tmux("set-hook", "-g", "after-list-clients", `select-window -t ${t.ids.windowId}`);
    const text = await c.fail("set_option", {
      name: "synchronize-panes",
      value: "on",
      scope: "window",
      target: t.ids.windowId,
    });
    assert.ok(text.includes(tty), text);
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{synchronize-panes}")).trim(),
      "0",
    );
  });
});

Deno.test("moving the last window out of a person's session is refused (it would end it)", async () => {
  await withTmux(async (t, c) => {
    // The person looks at another session; main keeps one window, not on anyone's screen...
    await t.tmux("new-session", "-d", "-s", "theirs", "sh");
    const tty = await t.attach("theirs");
    const lonely = (await t.tmux("new-session", "-d", "-s", "lonely", "-P", "-F", "#{window_id}"))
      .trim();
    // ...but a second client attached to "lonely" and looking at it: refused either way.
    await t.tmux("new-window", "-d", "-t", "theirs:", "sh");
    const other = await t.attach("lonely");
    const text = await c.fail("move_window", { windowId: lonely, session: "main" });
    assert.ok(text.includes(other), text);
    assert.ok(await t.tmux("has-session", "-t", "=lonely").then(() => true));
    // A window of theirs that is not on screen moves, and their session lives on.
    const spare = (await t.tmux("new-window", "-d", "-t", "theirs:", "-P", "-F", "#{window_id}"))
      .trim();
    await c.ok("move_window", { windowId: spare, session: "main" });
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", "=theirs:", "#{session_name}")).trim(),
      "theirs",
    );
    void tty;
  });
});

Deno.test("a view switched right after the check still stops the keystroke (one step in tmux)", async () => {
  await withTmux(async (t, c) => {
    await shellReady(t, t.ids.paneId);
    const target = t.ids.paneId;
    const away = await hiddenWindow(t);
    // The person looks at another window of the same session...
    await t.tmux("select-window", "-t", away.windowId);
    const tty = await t.attach("main");
    assert.equal(await clientWindow(t, tty), away.windowId);
    // ...and a hook switches them to the target's window the moment anyone lists clients:
    // exactly after every guard's read, before any keystroke.
    await t.tmux("set-hook", "-g", "after-list-clients", `select-window -t ${t.ids.windowId}`);
    for (
      const [tool, args] of [
        ["send_keys", { paneId: target, text: "echo SNEAKED" }],
        ["paste_text", { paneId: target, text: "echo SNEAKED", enter: true }],
        ["run_command", { paneId: target, command: "echo SNEAKED", timeoutMs: 3_000 }],
        ["send_keys_batch", { operations: [{ paneId: target, text: "echo SNEAKED" }] }],
      ] as const
    ) {
      await t.tmux("set-hook", "-gu", "after-list-clients");
      await t.tmux("select-window", "-t", away.windowId);
      await t.tmux("set-hook", "-g", "after-list-clients", `select-window -t ${t.ids.windowId}`);
      const result = await c.call(tool, args);
      const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
      const refused = result.isError ||
        (tool === "send_keys_batch" &&
          (result.structuredContent as { failed: number }).failed === 1);
      assert.ok(refused, `${tool} must not type once the view switched: ${text}`);
      assert.ok(text.includes(tty), `${tool} names the person's client: ${text}`);
    }
    assert.ok(!(await screen(t, target)).includes("SNEAKED"), "no keystroke landed");
    // The same for a view change.
    const neighbour = (await t.tmux("split-window", "-d", "-t", target, "-P", "-F", "#{pane_id}"))
      .trim();
    await t.tmux("set-hook", "-gu", "after-list-clients");
    await t.tmux("select-window", "-t", away.windowId);
    await t.tmux("set-hook", "-g", "after-list-clients", `select-window -t ${t.ids.windowId}`);
    assert.ok((await c.fail("select_pane", { paneId: neighbour })).includes(tty));
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", neighbour, "#{pane_active}")).trim(),
      "0",
    );
  });
});

Deno.test("a person's choose-tree previews every pane: input and view changes wait", async () => {
  await withTmux(async (t, c) => {
    const far = await hiddenWindow(t);
    const tty = await t.attach("main");
    await t.tmux("choose-tree", "-t", t.ids.paneId);
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_mode}")).trim() ===
          "tree-mode",
      "choose-tree",
    );
    const text = await c.fail("send_keys", { paneId: far.paneId, text: "echo PREVIEWED" });
    assert.ok(text.includes(tty), text);
    assert.match(await c.fail("select_pane", { paneId: far.paneId }), /choose-tree/);
    assert.ok(!(await screen(t, far.paneId)).includes("PREVIEWED"));
    // Once they leave it, the hidden pane is free again.
    await t.tmux("send-keys", "-t", t.ids.paneId, "q");
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_in_mode}")).trim() ===
          "0",
      "choose-tree closed",
    );
    await c.ok("send_keys", { paneId: far.paneId, text: "echo FREE" });
  });
});

/** Waits until `paneId` shows the mode `mode` (`tree-mode`, `client-mode`), or none (""). */
async function modeIs(t: Server, paneId: string, mode: string): Promise<void> {
  await waitFor(
    async () =>
      (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_mode}")).trim() === mode,
    mode || "no mode",
  );
}

/**
 * The person's window with two panes, the one they work in (`beside`) active; and a pane of
 * another session, which nobody has on screen.
 */
async function deskAndFar(t: Server): Promise<{ beside: string; far: string }> {
  const beside =
    (await t.tmux("split-window", "-d", "-h", "-t", t.ids.paneId, "-P", "-F", "#{pane_id}", "sh"))
      .trim();
  const far = (await t.tmux("new-session", "-d", "-s", "far", "-P", "-F", "#{pane_id}", "sh"))
    .trim();
  await shellReady(t, beside);
  await shellReady(t, far);
  return { beside, far };
}

Deno.test("a person's choose-tree left open beside the pane they work in still previews every pane", async () => {
  await withTmux(async (t, c) => {
    const { beside, far } = await deskAndFar(t);
    const tty = await t.attach("main");
    // prefix s (choose-tree, zoomed) in the pane they are in, then prefix o: over to the
    // other pane to type, the tree still open beside it (and the window unzoomed).
    await t.tmux("choose-tree", "-Zs", "-t", t.ids.paneId);
    await modeIs(t, t.ids.paneId, "tree-mode");
    await t.tmux("select-pane", "-t", beside);
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_active} #{pane_mode}"))
        .trim(),
      "0 tree-mode",
    );
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", beside, "#{window_zoomed_flag}")).trim(),
      "0",
    );
    const listed = await c.ok<{ panes: { id: string; isAttended: boolean }[] }>("list_panes", {
      session: "far",
    });
    assert.equal(listed.panes.find((p) => p.id === far)?.isAttended, true);
    const text = await c.fail("send_keys", { paneId: far, text: "echo PREVIEWED" });
    assert.match(text, /being watched by a person/);
    assert.ok(text.includes(tty), text);
    assert.match(await c.fail("select_pane", { paneId: far }), /choose-tree/);
    assert.match(await c.fail("kill_pane", { paneId: far }), /a person is watching/);
    assert.ok(!(await screen(t, far)).includes("PREVIEWED"));
    // Once they leave it, the far pane is free again.
    await t.tmux("send-keys", "-t", t.ids.paneId, "q");
    await modeIs(t, t.ids.paneId, "");
    await c.ok("send_keys", { paneId: far, text: "echo FREE" });
  }, { toolsets: TOOLSETS });
});

Deno.test("a person's choose-client previews another client's screen, a program's too: every pane counts", async () => {
  await withTmux(async (t, c) => {
    // A program (a monitor, or this server's own connection) attached to "work".
    const work = (await t.tmux("new-session", "-d", "-s", "work", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    await shellReady(t, work);
    const program = t.controlClient("work", ["-f", "ignore-size,no-output"]);
    try {
      await waitFor(
        async () => (await t.tmux("list-clients", "-F", "#{client_control_mode}")).includes("1"),
        "the program's client",
      );
      const tty = await t.attach("main");
      // prefix D: the person's own terminal sorts first; one step down is a program's client,
      // whose screen (its session's window) the preview then shows.
      await t.tmux("choose-client", "-Z", "-t", t.ids.paneId);
      await modeIs(t, t.ids.paneId, "client-mode");
      await t.tmux("send-keys", "-t", t.ids.paneId, "j");
      const listed = await c.ok<{ panes: { id: string; isAttended: boolean }[] }>("list_panes", {
        session: "work",
      });
      assert.equal(listed.panes.find((p) => p.id === work)?.isAttended, true);
      const text = await c.fail("send_keys", { paneId: work, text: "echo PREVIEWED" });
      assert.ok(text.includes(tty), text);
      assert.match(await c.fail("select_pane", { paneId: work }), /choose-client/);
      assert.ok(!(await screen(t, work)).includes("PREVIEWED"));
    } finally {
      await program.stdin.close().catch(() => {});
      await program.status;
    }
  });
});

Deno.test("a choose-tree or choose-client opened beside the active pane right after the check stops the act", async () => {
  await withTmux(async (t, c) => {
    const { beside, far } = await deskAndFar(t);
    const farWindow = (await t.tmux("display-message", "-p", "-t", far, "#{window_id}")).trim();
    await t.tmux("select-pane", "-t", beside);
    await t.attach("main");
    for (const [choose, mode] of [["choose-tree", "tree-mode"], ["choose-client", "client-mode"]]) {
      for (
        const [tool, args] of [
          ["send_keys", { paneId: far, text: "echo SNEAKED" }],
          ["select_layout", { windowId: farWindow, layout: "even-vertical" }],
          ["kill_pane", { paneId: far }],
        ] as const
      ) {
        // Another client opens it in the pane beside the one the person works in, the moment
        // the guard has read: the snapshot saw no preview, tmux at the act does.
        await t.onceAfterGuardRead(`${choose} -t ${t.ids.paneId}`);
        const text = await c.fail(tool, args);
        assert.match(
          text,
          /watched by a person|what a person sees|came to show it/,
          `${choose}, ${tool}: ${text}`,
        );
        await modeIs(t, t.ids.paneId, mode);
        await t.tmux("send-keys", "-t", t.ids.paneId, "q");
        await modeIs(t, t.ids.paneId, "");
      }
    }
    assert.ok(!(await screen(t, far)).includes("SNEAKED"), "no keystroke landed");
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", far, "#{pane_id}")).trim(),
      far,
      "the pane lives",
    );
  }, { toolsets: TOOLSETS });
});

Deno.test("a pane moved into a person's window right after the check is not acted on there", async () => {
  await withTmux(async (t, c) => {
    // The person watches the first window (two panes); another window nobody sees holds %3.
    const split = async (pane: string) =>
      (await t.tmux("split-window", "-d", "-t", pane, "-P", "-F", "#{pane_id}", "sh")).trim();
    const watchedNeighbour = await split(t.ids.paneId);
    const hidden = await hiddenWindow(t);
    const moving = await split(hidden.paneId);
    await t.attach("main");
    // What the person sees of their window: zoom, how many panes, which is active.
    const view = async () =>
      (await t.tmux(
        "display-message",
        "-p",
        "-t",
        t.ids.windowId,
        "#{window_zoomed_flag} #{window_panes} #{pane_id}",
      )).trim();
    // Another client swaps the pane into the person's window the moment the guard has read
    // (every guard's read ends listing the clients), once.
    const arm = async () => {
      const where = (await t.tmux("display-message", "-p", "-t", moving, "#{window_id}")).trim();
      if (where !== hidden.windowId) {
        await t.tmux("swap-pane", "-d", "-s", moving, "-t", watchedNeighbour);
      }
      await t.onceAfterGuardRead(`swap-pane -d -s ${moving} -t ${watchedNeighbour}`);
    };
    for (
      const [tool, args] of [
        ["select_pane", { paneId: moving }],
        ["resize_pane", { paneId: moving, zoom: true }],
        ["split_window", { paneId: moving }],
        ["swap_pane", { paneId: moving, targetPaneId: hidden.paneId }],
        ["break_pane", { paneId: moving }],
      ] as const
    ) {
      await arm();
      const before = await view();
      const text = await c.fail(tool, args);
      assert.match(text, /would change what a person sees|came to show it/, `${tool}: ${text}`);
      // The swap happened (the person sees the pane now); the act itself did not.
      assert.equal(
        (await t.tmux("display-message", "-p", "-t", moving, "#{window_id}")).trim(),
        t.ids.windowId,
        tool,
      );
      assert.equal(await view(), before, `${tool} left the person's window as it was`);
    }
  });
});

Deno.test("a person on tmux -CC (iTerm2) sees every window of their session: no view change or kill there", async () => {
  await withTmux(async (t, c) => {
    // iTerm2 shows each window of the session it attached as a tab: the background one too.
    const hidden = await hiddenWindow(t);
    const neighbour =
      (await t.tmux("split-window", "-d", "-t", hidden.paneId, "-P", "-F", "#{pane_id}", "sh"))
        .trim();
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    const elsewhere = (await t.tmux("display-message", "-p", "-t", "other", "#{window_id}")).trim();
    const tty = await t.attach("main", { control: true });
    const layout = await t.tmux("display-message", "-p", "-t", hidden.paneId, "#{window_layout}");
    const refusals: [string, Record<string, unknown>][] = [
      ["select_window", { windowId: hidden.windowId }],
      ["select_pane", { paneId: neighbour }],
      ["resize_pane", { paneId: neighbour, zoom: true }],
      ["select_layout", { windowId: hidden.windowId, layout: "even-vertical" }],
      ["enter_copy_mode", { paneId: neighbour }],
      ["split_window", { paneId: hidden.paneId }],
      ["kill_pane", { paneId: neighbour }],
      ["kill_window", { windowId: hidden.windowId }],
      ["kill_session", { session: "main" }],
    ];
    for (const [tool, args] of refusals) {
      const text = await c.fail(tool, args);
      assert.ok(text.includes(tty), `${tool} names the client: ${text}`);
    }
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", "main", "#{window_id}")).trim(),
      t.ids.windowId,
    );
    assert.equal(
      await t.tmux("display-message", "-p", "-t", hidden.paneId, "#{window_layout}"),
      layout,
    );
    assert.equal(
      (await t.tmux("list-panes", "-t", hidden.windowId, "-F", "#{pane_id}")).trim().split("\n")
        .length,
      2,
    );
    // Another session's windows are nobody's: this server's own control clients see nothing.
    await c.ok("select_layout", { windowId: elsewhere, layout: "tiled" });
    await c.ok("kill_window", { windowId: elsewhere });
  }, { toolsets: TOOLSETS });
});

Deno.test("a person on tmux -CC who switches into the session right after the check stops the act (one step in tmux)", async () => {
  await withTmux(async (t, c) => {
    const hidden = await hiddenWindow(t);
    await t.tmux("new-session", "-d", "-s", "home", "sh");
    const tty = await t.attach("home", { control: true });
    // A hook takes their client to main the moment the guard has read: main's background
    // window becomes one of their tabs.
    const arm = async () => {
      await t.tmux("switch-client", "-c", tty, "-t", "home");
      await t.onceAfterGuardRead(`switch-client -c ${tty} -t main`);
    };
    for (
      const [tool, args] of [
        ["send_keys", { paneId: hidden.paneId, text: "echo SNEAKED" }],
        ["select_layout", { windowId: hidden.windowId, layout: "even-vertical" }],
        ["kill_window", { windowId: hidden.windowId }],
        ["kill_pane", { paneId: hidden.paneId }],
        ["clear_pane", { paneId: hidden.paneId }],
      ] as const
    ) {
      await arm();
      const text = await c.fail(tool, args);
      assert.match(
        text,
        /watched by a person|what a person sees|came to show it/,
        `${tool}: ${text}`,
      );
    }
    assert.ok(!(await screen(t, hidden.paneId)).includes("SNEAKED"), "no keystroke landed");
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", hidden.paneId, "#{window_id}")).trim(),
      hidden.windowId,
      "the window is still there",
    );
    await t.tmux("set-hook", "-gu", "after-list-clients");
    // Back on their own session, main's background window is free again.
    await t.tmux("switch-client", "-c", tty, "-t", "home");
    await c.ok("send_keys", { paneId: hidden.paneId, text: "echo FREE" });
  }, { toolsets: TOOLSETS });
});

Deno.test("a person on tmux -CC with choose-tree open in any window of their session: every pane counts", async () => {
  await withTmux(async (t, c) => {
    // iTerm2 shows main's background window as a tab; a tree is open there (another client's
    // doing, or the person's from a terminal), and a pane of another session nobody shows.
    const tab = await hiddenWindow(t);
    const far = (await t.tmux("new-session", "-d", "-s", "far", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    await shellReady(t, far);
    const tty = await t.attach("main", { control: true });
    // Without a tree, the far pane is nobody's.
    await c.ok("send_keys", { paneId: far, text: "true" });
    for (const [choose, mode] of [["choose-tree", "tree-mode"], ["choose-client", "client-mode"]]) {
      await t.tmux(choose, "-t", tab.paneId);
      await modeIs(t, tab.paneId, mode);
      const listed = await c.ok<{ panes: { id: string; isAttended: boolean }[] }>("list_panes", {
        session: "far",
      });
      assert.equal(listed.panes.find((p) => p.id === far)?.isAttended, true, choose);
      const text = await c.fail("send_keys", { paneId: far, text: "echo PREVIEWED" });
      assert.ok(text.includes(tty), `${choose}: ${text}`);
      assert.match(await c.fail("select_pane", { paneId: far }), new RegExp(choose));
      await t.tmux("send-keys", "-t", tab.paneId, "q");
      await modeIs(t, tab.paneId, "");
    }
    assert.ok(!(await screen(t, far)).includes("PREVIEWED"));
    // Opened there right after the check: tmux finds it at the act.
    await t.onceAfterGuardRead(`choose-tree -t ${tab.paneId}`);
    assert.match(
      await c.fail("send_keys", { paneId: far, text: "echo SNEAKED" }),
      /watched by a person|came to show it/,
    );
    assert.ok(!(await screen(t, far)).includes("SNEAKED"), "no keystroke landed");
  }, { toolsets: TOOLSETS });
});

Deno.test("a choose-tree left open in a background window of a person's session previews nothing", async () => {
  await withTmux(async (t, c) => {
    const tab = await hiddenWindow(t);
    const far = (await t.tmux("new-session", "-d", "-s", "far", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    await shellReady(t, far);
    // The person sees one window at a time: main's current one, not the tree's.
    await t.attach("main");
    await t.tmux("choose-tree", "-t", tab.paneId);
    await modeIs(t, tab.paneId, "tree-mode");
    const listed = await c.ok<{ panes: { id: string; isAttended: boolean }[] }>("list_panes", {
      session: "far",
    });
    assert.equal(listed.panes.find((p) => p.id === far)?.isAttended, false);
    await c.ok("send_keys", { paneId: far, text: "echo FREE" });
    await c.ok("select_layout", { windowId: tab.windowId, layout: "tiled" });
  });
});
