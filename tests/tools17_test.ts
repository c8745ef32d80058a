/**
 * The tools issue 17 adds besides the buffer ones, on real tmux: display_message (a caller's
 * format, expanded only by this execute tool), `environment` on create_window, split_window
 * and respawn_pane, and join_pane / break_pane, which move panes between windows only where
 * no person looks.
 */

import assert from "node:assert/strict";
import { connect, withTmux } from "./helpers/mcp.ts";
import { type TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

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
  return { windowId, paneId };
}

async function split(t: Server, paneId: string): Promise<string> {
  return (await t.tmux("split-window", "-d", "-t", paneId, "-P", "-F", "#{pane_id}", "sh")).trim();
}

async function where(t: Server, paneId: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", paneId, "#{window_id}")).trim();
}

async function windows(t: Server): Promise<string[]> {
  return (await t.tmux("list-windows", "-a", "-F", "#{window_id}")).trim().split("\n");
}

async function screen(t: Server, paneId: string): Promise<string> {
  return await t.tmux("capture-pane", "-p", "-J", "-t", paneId);
}

// ---------------------------------------------------------------------------------------------
// display_message

Deno.test("display_message expands a format for a pane, window or session id", async () => {
  await withTmux(async (t, c) => {
    const odd = "odd 'q' \"d\" #x ;🙂";
    await t.tmux("rename-session", "-t", t.ids.sessionId, "--", odd.replaceAll("#", "##"));
    const fmt = "#{pane_id}|#{window_id}|#{session_name}";
    const want = `${t.ids.paneId}|${t.ids.windowId}|${odd}`;
    for (const target of [t.ids.paneId, t.ids.windowId, t.ids.sessionId]) {
      const r = await c.ok<{ text: string; paneId: string; complete: boolean }>(
        "display_message",
        { format: fmt, target },
      );
      assert.deepEqual(r, {
        target,
        paneId: t.ids.paneId,
        text: want,
        complete: true,
        omittedBytes: 0,
      });
    }
    // A leading "-" is no flag, a final ";" no separator, a newline and a tab stay.
    const edges = await c.ok<{ text: string }>("display_message", {
      format: "-t x\t#{pane_id}\nnext;",
      target: t.ids.paneId,
    });
    assert.equal(edges.text, `-t x\t${t.ids.paneId}\nnext;`);
    // A pane's title is a value, never expanded again (only #{E:...} would).
    await t.tmux("select-pane", "-t", t.ids.paneId, "-T", "##{session_id}");
    const title = await c.ok<{ text: string }>("display_message", {
      format: "#{pane_title}",
      target: t.ids.paneId,
    });
    assert.equal(title.text, "#{session_id}");
  });
});

Deno.test("display_message refuses targets that do not exist, and bounds its text", async () => {
  await withTmux(async (t, c) => {
    for (const target of ["%999", "@999", "$999"]) {
      const text = await c.fail("display_message", { format: "#{pane_id}", target });
      assert.match(text, /^No (pane|window|session)/);
      assert.match(text, /list_/);
    }
    const bad = await c.call("display_message", { format: "x", target: "main" });
    assert.equal(bad.isError, true, "a session name is not an id");
    const small = await connect({ socketName: t.socket, maxResultBytes: 4_000 });
    try {
      const r = await small.ok<{ text: string; complete: boolean; omittedBytes: number }>(
        "display_message",
        { format: "y".repeat(10_000), target: t.ids.paneId },
      );
      assert.equal(r.complete, false);
      assert.equal(r.text.length + r.omittedBytes, 10_000);
      assert.ok(r.text.length < 4_000);
    } finally {
      await small.close();
    }
  });
});

Deno.test("display_message runs #(...) (execute only); inspect never lists it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-display-" });
  try {
    await withTmux(async (t, c) => {
      const marker = `${dir}/ran`;
      await c.ok("display_message", { format: `#(touch '${marker}')`, target: t.ids.paneId });
      await waitFor(async () => await Deno.stat(marker).then(() => true, () => false), "the job");
      // tmux keeps a job's output for the client that asked: a later call shows it.
      const shown = await waitFor(async () => {
        const r = await c.ok<{ text: string }>("display_message", {
          format: "#(echo job-output)",
          target: t.ids.paneId,
        });
        return r.text === "job-output" ? r : null;
      }, "the job's output");
      assert.equal(shown.text, "job-output");
      const readOnly = await connect({ socketName: t.socket, toolsets: ["inspect"] });
      try {
        const listed = (await readOnly.client.listTools()).tools.map((x: { name: string }) =>
          x.name
        );
        assert.ok(!listed.includes("display_message"));
        assert.ok(listed.includes("list_buffers"));
        assert.ok(!listed.includes("paste_buffer"));
        const r = await readOnly.call("display_message", { format: "x", target: t.ids.paneId });
        assert.equal(r.isError, true);
      } finally {
        await readOnly.close();
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("display_message refuses a width, pad or precision tmux 3.3a would crash or freeze on", async () => {
  await withTmux(async (t, c) => {
    const pid = await t.tmux("display-message", "-p", "#{pid}");
    const refused: [string, RegExp][] = [
      // tmux 3.3a negates the pad width (-2^31 stays negative), pads to 2^31 cells, and exits.
      ["#{p-2147483648:x}", /#\{p-2147483648:.*pad width of -2147483648/],
      // A precision of 2^31-1 keeps it busy for minutes, then it exits.
      ["#{e|+|f|2147483647:1,1}", /#\{e\|\+\|f\|2147483647:.*precision of 2147483647/],
      // A pad of 2^31-1 holds every session for half a minute, per call.
      ["#{p2147483647:x}", /pad width of 2147483647/],
      // Behind other modifiers, in an argument, a branch, a wrapped argument.
      ["#{b;q;p99999:pane_id}", /pad width of 99999/],
      ["#{?pane_id,#{p|-20000|:x},}", /pad width of -20000/],
      ["#{s/a/#{p999999:x}/:pane_id}", /pad width of 999999/],
      // A number tmux would only learn by expanding something: refused, it cannot be checked.
      ["#{p|#{pane_pid}|:x}", /pad width of #\{pane_pid\}.*a plain number/],
      ["#{p-#{@w}:x}", /use a literal from -10000 to 10000 or, signed or not, one of/],
      // After an odd run of "#" the last opens a block; E: expands what it makes again.
      ["###{p99999:x}", /pad width of 99999/],
      ["#{E:?pane_id,##{p99999:x#},}", /pad width of 99999.*reads this part again/],
    ];
    for (const [format, why] of refused) {
      const text = await c.fail("display_message", { format, target: t.ids.paneId });
      assert.match(text, why, format);
      assert.match(text, /tmux 3\.3a/, format);
    }
    assert.equal(await t.tmux("display-message", "-p", "#{pid}"), pid, "the server is the same");
    // What people write keeps working.
    const kept: [string, string][] = [
      ["#{=3:pane_id}", t.ids.paneId.slice(0, 3)],
      ["#{p5:window_active}|", "1    |"],
      ["#{p-5:window_active}|", "    1|"],
      ["#{=/-2/...:session_name}", "...in"],
      // A trim only ever shortens: tmux 3.3a takes any width there.
      ["#{=-2147483648:session_name}", "main"],
      ["#{e|+:1,2}", "3"],
      ["#{e|*|f|2:1.5,2}", "3.00"],
      ["p9999999:x ;p-99999999", "p9999999:x ;p-99999999"],
      // Pads to tmux's own sizes; "##" is an escaped "#", so the rest is text.
      ["#{p-#{pane_width}:x}|", `${" ".repeat(80)}|`],
      ["[##{p-2147483648:x}]", "[#{p-2147483648:x}]"],
      ["####{p99999:x}", "##{p99999:x}"],
    ];
    for (const [format, want] of kept) {
      const r = await c.ok<{ text: string }>("display_message", { format, target: t.ids.paneId });
      assert.equal(r.text, want, format);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// environment

Deno.test("environment reaches the process of create_window, split_window and respawn_pane", async () => {
  await withTmux(async (t, c) => {
    const value = "x #{pane_id} $HOME 'q' \"d\" ;🙂;";
    const environment = { TOOLS17_V: value, TOOLS17_EMPTY: "" };
    const command = `printf '[%s][%s:%s]\\n' "$TOOLS17_V" "\${TOOLS17_EMPTY+set}" ` +
      `"$TOOLS17_EMPTY"; exec sleep 60`;
    const want = `[${value}][set:]`;
    const w = await c.ok<{ paneId: string }>("create_window", {
      session: t.ids.sessionId,
      environment,
      command,
    });
    const s = await c.ok<{ paneId: string }>("split_window", {
      paneId: w.paneId,
      environment,
      command,
    });
    for (const paneId of [w.paneId, s.paneId]) {
      await waitFor(async () => (await screen(t, paneId)).includes(want), `the value in ${paneId}`);
    }
    await c.ok("respawn_pane", {
      paneId: s.paneId,
      kill: true,
      environment: { TOOLS17_V: "again" },
      command,
    });
    await waitFor(
      async () => (await screen(t, s.paneId)).includes("[again][:]"),
      "the respawned value",
    );
    const bad = await c.call("split_window", {
      paneId: w.paneId,
      environment: { "1BAD": "x" },
    });
    assert.equal(bad.isError, true, "a name shells cannot take is refused");
  });
});

// ---------------------------------------------------------------------------------------------
// join_pane / break_pane

type Joined = {
  paneId: string;
  windowId: string;
  index: number;
  fromWindowId: string;
  removedWindow: boolean;
  removedSessions: string[];
};

Deno.test("join_pane moves a pane into another window; the last pane takes its window along", async () => {
  await withTmux(async (t, c) => {
    const a = await hiddenWindow(t);
    const a2 = await split(t, a.paneId);
    const b = await hiddenWindow(t);
    const r = await c.ok<Joined>("join_pane", {
      paneId: a2,
      targetPaneId: b.paneId,
      direction: "right",
      size: "30%",
    });
    assert.deepEqual(r, {
      paneId: a2,
      windowId: b.windowId,
      index: 1,
      fromWindowId: a.windowId,
      removedWindow: false,
      removedSessions: [],
    });
    assert.equal(await where(t, a2), b.windowId);
    const [w1, w2] = (await t.tmux("list-panes", "-t", b.windowId, "-F", "#{pane_width}"))
      .trim().split("\n").map(Number);
    assert.ok(w2 < w1, `30% on the right: ${w1} ${w2}`);
    // The last pane of a window: the window ends; a session with only that window too.
    await t.tmux("new-session", "-d", "-s", "solo; #x 🙂", "sh");
    const solo = (await t.tmux(
      "display-message",
      "-p",
      "-t",
      "=solo; #x 🙂:",
      "#{session_id} #{window_id} #{pane_id}",
    ))
      .trim().split(" ");
    const gone = await c.ok<Joined>("join_pane", { paneId: solo[2], targetPaneId: b.paneId });
    assert.equal(gone.removedWindow, true);
    assert.deepEqual(gone.removedSessions, [solo[0]]);
    assert.ok(!(await windows(t)).includes(solo[1]));
    // Nothing became current: the session still shows its first window.
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", t.ids.sessionId, "#{window_id}")).trim(),
      t.ids.windowId,
    );
  });
});

Deno.test("join_pane: bad ids, the same pane, watched windows on either side", async () => {
  await withTmux(async (t, c) => {
    const a = await hiddenWindow(t);
    const a2 = await split(t, a.paneId);
    assert.match(await c.fail("join_pane", { paneId: a2, targetPaneId: a2 }), /itself/);
    assert.match(await c.fail("join_pane", { paneId: "%999", targetPaneId: a2 }), /No pane %999/);
    assert.match(await c.fail("join_pane", { paneId: a2, targetPaneId: "%999" }), /No pane %999/);
    const tty = await t.attach("main");
    // Into the window the person sees, and out of it.
    const into = await c.fail("join_pane", { paneId: a2, targetPaneId: t.ids.paneId });
    assert.match(into, new RegExp(`window ${t.ids.windowId} is on the screen of client ${tty}`));
    assert.match(into, /--allow-attended-input/);
    const out = await c.fail("join_pane", { paneId: t.ids.paneId, targetPaneId: a2 });
    assert.match(out, /is on the screen of client/);
    assert.equal(await where(t, a2), a.windowId);
    assert.equal(await where(t, t.ids.paneId), t.ids.windowId);
    // A window linked into a session a person watches counts there too.
    const other = await hiddenWindow(t);
    const other2 = await split(t, other.paneId);
    await t.tmux("new-session", "-d", "-s", "linked", "sh");
    await t.tmux("link-window", "-s", other.windowId, "-t", "linked:");
    await t.tmux("select-window", "-t", `linked:${other.windowId}`);
    await t.attach("linked");
    assert.match(
      await c.fail("join_pane", { paneId: other2, targetPaneId: a.paneId }),
      /is on the screen of client/,
    );
    assert.equal(await where(t, other2), other.windowId);
    // Where nobody looks it goes ahead.
    const hiddenB = await hiddenWindow(t);
    await c.ok("join_pane", { paneId: a2, targetPaneId: hiddenB.paneId });
  });
});

type Broken = {
  windowId: string;
  paneId: string;
  sessionId: string;
  index: number;
  name: string;
  fromWindowId: string;
  notes: string[];
};

Deno.test("break_pane moves a pane out into a new window, named exactly, current only if asked", async () => {
  await withTmux(async (t, c) => {
    const a = await hiddenWindow(t);
    const a2 = await split(t, a.paneId);
    const name = "na me 'q' \"d\" #{pane_id} #(x) ;🙂;";
    const r = await c.ok<Broken>("break_pane", { paneId: a2, name });
    assert.equal(r.paneId, a2);
    assert.equal(r.sessionId, t.ids.sessionId);
    assert.equal(r.fromWindowId, a.windowId);
    assert.equal(r.name, name);
    assert.deepEqual(r.notes, []);
    assert.equal(await where(t, a2), r.windowId);
    assert.ok((await windows(t)).includes(r.windowId));
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", r.windowId, "#{window_name}")).trim(),
      name,
    );
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", t.ids.sessionId, "#{window_id}")).trim(),
      t.ids.windowId,
      "not made current",
    );
    // select: true makes it current, where nobody is attached.
    const b2 = await split(t, a.paneId);
    const s = await c.ok<Broken>("break_pane", { paneId: b2, select: true });
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", t.ids.sessionId, "#{window_id}")).trim(),
      s.windowId,
    );
    // A pane alone in its window is refused: nothing to break out of.
    const alone = await c.fail("break_pane", { paneId: a.paneId });
    assert.match(alone, /already alone/);
    assert.match(alone, /move_window/);
    assert.match(await c.fail("break_pane", { paneId: "%999" }), /No pane %999/);
    assert.match(await c.fail("break_pane", { paneId: a.paneId, name: "a\tb" }), /control/);
  });
});

Deno.test("break_pane is refused where a person looks; select only where nobody is attached", async () => {
  await withTmux(async (t, c) => {
    const watched2 = await split(t, t.ids.paneId);
    const hidden = await hiddenWindow(t);
    const hidden2 = await split(t, hidden.paneId);
    const tty = await t.attach("main");
    const before = await windows(t);
    const out = await c.fail("break_pane", { paneId: watched2 });
    assert.match(out, new RegExp(`window ${t.ids.windowId} is on the screen of client ${tty}`));
    const sel = await c.fail("break_pane", { paneId: hidden2, select: true });
    assert.match(sel, new RegExp(`client ${tty} is attached to session \\${t.ids.sessionId}`));
    assert.deepEqual(await windows(t), before, "nothing moved");
    // In the background, out of a window nobody sees, it goes ahead.
    const r = await c.ok<Broken>("break_pane", { paneId: hidden2 });
    assert.equal(await where(t, hidden2), r.windowId);
    assert.equal(
      (await t.tmux("list-clients", "-F", "#{client_control_mode} #{window_id}")).split("\n")
        .filter((l) => l.startsWith("0 ")).join(),
      `0 ${t.ids.windowId}`,
      "the person still sees their window",
    );
  });
});
