/**
 * What a model could make reach a person's own terminal (the client attached on a
 * pseudo-terminal) through the tools, beyond the pane it drives: the server options that decide
 * what the person's keys send and what their terminal is told, the agent marks drawn in their
 * status line, and a name that tmux writes raw into an 8-bit terminal's title.
 */

import assert from "node:assert/strict";
import { tmuxLines } from "../src/hooks/config.ts";
import { withTmux } from "./helpers/mcp.ts";
import { attachRecorded, type TestTmux, waitFor } from "./helpers/tmux.ts";

/** Sources the tmux lines `tmux-mcp hook config --tmux` tells a person to add. */
async function recommendedConfig(t: TestTmux): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "person-terminal-" });
  try {
    const file = `${dir}/tmux.conf`;
    await Deno.writeTextFile(file, tmuxLines().join("\n") + "\n");
    await t.tmux("source-file", file);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A detached window running sh in session main; its window id. */
async function background(t: TestTmux): Promise<string> {
  return (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id}", "sh"))
    .trim();
}

/** What the person's status line shows for window `windowId` (its entry, expanded). */
async function entry(t: TestTmux, windowId: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", windowId, "#{E:window-status-format}"))
    .trim();
}

/** A terminal in a legacy 8-bit locale: tmux takes it for one without UTF-8. */
const EIGHT_BIT = { LANG: "C", LC_ALL: "C" };

// ---------------------------------------------------------------------------------------------
// Server options

Deno.test("set_option cannot turn a person's Backspace into Enter in the pane they watch", async () => {
  await withTmux(async (t, c) => {
    const person = await attachRecorded(t, "main", { LANG: "C.UTF-8" });
    try {
      // The person is typing a command in the pane they look at, not done yet.
      await person.type("echo typed-by-$((6*7)) ; : rm -rf ./build-typo");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", t.ids.paneId)).includes("typo"),
        "the half-typed line",
      );
      const r = await c.call("set_option", { name: "backspace", value: "Enter", scope: "server" });
      const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
      assert.equal(r.isError, true, `set_option backspace=Enter went through: ${text}`);
      assert.match(text, /would change what a person sees/, text);
      assert.ok(text.includes(person.tty), `names the client: ${text}`);
      assert.equal((await t.tmux("show-options", "-sv", "backspace")).trim(), "C-?");
      // Their Backspace still deletes a character, and the half-typed line has not run.
      await person.type("\x7f");
      await waitFor(
        async () => /typ\s*$/m.test(await t.tmux("capture-pane", "-p", "-t", t.ids.paneId)),
        "the shell's answer to Backspace",
      );
      assert.doesNotMatch(await t.tmux("capture-pane", "-p", "-t", t.ids.paneId), /typed-by-42/);
    } finally {
      await person.done();
    }
  });
});

Deno.test("server options that reach a person's keys or terminal are refused while a person is attached", async () => {
  await withTmux(async (t, c) => {
    const tty = await t.attach("main");
    const server = () => t.tmux("show-options", "-s");
    const before = await server();
    const refusals: Record<string, unknown>[] = [
      // What the person's keys send to the pane they type in.
      { name: "backspace", value: "Enter" },
      { name: "user-keys[0]", value: "\\e[5;30012~" },
      { name: "extended-keys", value: "always" },
      { name: "escape-time", value: "10" },
      { name: "escape-time", unset: true },
      { name: "focus-events", value: "on" },
      // What their terminal is told (arbitrary bytes, the clipboard), from now on or at the
      // next attach.
      { name: "terminal-overrides", value: "xterm*:Ms=\\E]52;c;%p2%s\\7", append: true },
      { name: "terminal-features", value: "xterm*:clipboard" },
      { name: "set-clipboard", value: "on" },
      // What runs when they copy or edit, and whether their sessions outlive a detach.
      { name: "copy-command", value: "sh -c 'echo copied > /tmp/x'" },
      { name: "editor", value: "sh" },
      // (Turned off here: on is refused whoever is attached, see option_ending_test.ts.)
      { name: "exit-unattached", value: "off" },
      { name: "default-terminal", value: "dumb" },
      // Where what they typed at the command prompt goes: tmux writes the file over (empty
      // first) when the server exits.
      { name: "history-file", value: "/dev/null" },
      // How much of their history is kept: lowered, their copies, their message log and
      // their command-prompt lines beyond it go at the next one added.
      { name: "buffer-limit", value: "1" },
      { name: "message-limit", value: "0" },
      { name: "prompt-history-limit", value: "1" },
    ];
    for (const args of refusals) {
      const text = await c.fail("set_option", { ...args, scope: "server" });
      assert.match(text, /would change what a person sees/, `${JSON.stringify(args)}: ${text}`);
      assert.ok(text.includes(tty), `names the client: ${text}`);
      assert.match(text, /--allow-attended-input/, `says what lifts it: ${text}`);
    }
    assert.equal(await server(), before);
    // The server option that reaches no person goes through.
    for (const [name, value] of [["exit-empty", "off"]]) {
      await c.ok("set_option", { name, value, scope: "server" });
      assert.equal((await t.tmux("show-options", "-sv", "--", name)).trim(), value);
    }
    // With nobody attached, the person's options are free again.
    await t.tmux("detach-client", "-t", tty);
    await waitFor(async () => (await t.clientTtys()).length === 0, "the person gone");
    await c.ok("set_option", { name: "escape-time", value: "10", scope: "server" });
    assert.equal((await t.tmux("show-options", "-sv", "escape-time")).trim(), "10");
  });
});

Deno.test("set_option on a person's keys goes ahead with --allow-attended-input", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    await c.ok("set_option", { name: "escape-time", value: "10", scope: "server" });
    assert.equal((await t.tmux("show-options", "-sv", "escape-time")).trim(), "10");
  }, { allowAttendedInput: true });
});

// ---------------------------------------------------------------------------------------------
// The agent marks

Deno.test("set_option cannot erase another agent's 'needs you' from a person's status line", async () => {
  await withTmux(async (t, c) => {
    await recommendedConfig(t);
    const other = await background(t);
    // Another agent's hook (`tmux-mcp hook attention`) marked its window: the person's status
    // line shows "needs you" beside it.
    await t.tmux("set-option", "-w", "-t", other, "@agent-state", "needs-input");
    const tty = await t.attach("main");
    await waitFor(async () => (await t.clientTtys()).includes(tty), "the person");
    assert.match(await entry(t, other), /needs you/);
    const text = await c.fail("set_option", {
      name: "@agent-state",
      unset: true,
      scope: "window",
      target: other,
    });
    assert.match(text, /@agent-state/, text);
    assert.match(await entry(t, other), /needs you/, "the person still sees that it needs them");
  });
});

Deno.test("set_option cannot forge 'needs you' on every window a person sees", async () => {
  await withTmux(async (t, c) => {
    await recommendedConfig(t);
    const other = await background(t);
    await t.attach("main");
    assert.doesNotMatch(await entry(t, other), /needs you/);
    const text = await c.fail("set_option", {
      name: "@agent-state",
      value: "needs-input",
      scope: "window",
      global: true,
    });
    assert.match(text, /tmux-mcp hook/, text);
    assert.doesNotMatch(await entry(t, t.ids.windowId), /needs you/);
    assert.equal(await t.tmux("show-options", "-gqw", "--", "@agent-state"), "");
  });
});

Deno.test("the agent marks are the hook's at every scope, watched or not; other user options stay free", async () => {
  await withTmux(async (t, c) => {
    const other = await background(t);
    const pane = (await t.tmux("display-message", "-p", "-t", other, "#{pane_id}")).trim();
    const places: Record<string, unknown>[] = [
      { scope: "window", target: other },
      { scope: "pane", target: pane },
      { scope: "session", target: "main" },
      { scope: "window", global: true },
      { scope: "server" },
    ];
    for (const name of ["@agent-state", "@agent-message", "@agent-pane", "@agent-state[1]"]) {
      for (const where of places) {
        for (const change of [{ value: "needs-input" }, { unset: true }]) {
          const text = await c.fail("set_option", { name, ...where, ...change });
          assert.match(text, /marks? .*tmux-mcp hook/, `${name} ${JSON.stringify(where)}: ${text}`);
        }
      }
    }
    assert.equal(await t.tmux("show-options", "-w", "-t", other), "");
    await c.ok("set_option", { name: "@agent-states", value: "1", scope: "window", target: other });
    await c.ok("set_option", { name: "@my-agent-state", value: "1", scope: "server" });
  });
});

// ---------------------------------------------------------------------------------------------
// Names in an 8-bit terminal's title

Deno.test("rename_window puts no C1 control byte (CSI, OSC, ST) on a person's 8-bit terminal", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "set-titles", "on");
    // A terminal in a legacy 8-bit locale (xterm under ISO-8859-1): tmux writes it no UTF-8
    // in the status line (`_` instead), but the terminal title goes out as the bytes stored.
    const person = await attachRecorded(t, "main", EIGHT_BIT);
    try {
      // U+011C is C4 9C (9C: ST, ends the title), U+00DB is C3 9B (9B: CSI): to an 8-bit
      // terminal this name closes the title and sends CSI 2 J (erase the screen) and
      // CSI ?1000h (mouse reporting on).
      const name = "\u011c\u00db2J\u00db?1000h\u011c";
      const text = await c.fail("rename_window", { windowId: t.ids.windowId, name });
      assert.ok(text.includes(person.tty), `names the client: ${text}`);
      assert.match(text, /UTF-8/, text);
      assert.notEqual(
        (await t.tmux("display-message", "-p", "-t", t.ids.windowId, "#{window_name}")).trim(),
        name,
      );
      // What the terminal got so far (its first screen, its title) holds no C1 byte.
      const got = await person.received();
      assert.equal(got.filter((b) => b >= 0x80 && b <= 0x9f).length, 0);
    } finally {
      await person.done();
    }
  });
});

Deno.test("names beyond ASCII wait while a person's terminal without UTF-8 shows titles; ASCII and UTF-8 terminals do not", async () => {
  await withTmux(async (t, c) => {
    const person = await attachRecorded(t, "main", EIGHT_BIT);
    try {
      const name = "caf\u00e9";
      // set-titles off (tmux's default): no title goes out, the name is free.
      await c.ok("rename_window", { windowId: t.ids.windowId, name });
      await t.tmux("set-option", "-t", "main", "set-titles", "on");
      const calls: [string, Record<string, unknown>][] = [
        ["rename_window", { windowId: t.ids.windowId, name: "cr\u00e8me" }],
        ["rename_session", { session: "main", name: "cr\u00e8me" }],
        ["set_pane_title", { paneId: t.ids.paneId, title: "cr\u00e8me" }],
        ["create_window", { session: "main", name: "cr\u00e8me" }],
        ["create_session", { name: "cr\u00e8me" }],
      ];
      for (const [tool, args] of calls) {
        const text = await c.fail(tool, args);
        assert.match(text, /beyond ASCII.*UTF-8/, `${tool}: ${text}`);
        assert.ok(text.includes(person.tty), `${tool} names the client: ${text}`);
      }
      assert.equal(
        (await t.tmux("list-windows", "-a", "-F", "#{window_name}")).includes("cr\u00e8me"),
        false,
      );
      // ASCII names are as free as ever.
      await c.ok("rename_window", { windowId: t.ids.windowId, name: "plain" });
      await c.ok("set_pane_title", { paneId: t.ids.paneId, title: "plain" });
    } finally {
      await person.done();
    }
    // A person whose terminal takes UTF-8 gets the title in UTF-8: nothing to refuse.
    const utf8 = await attachRecorded(t, "main", { LANG: "C.UTF-8" });
    try {
      await c.ok("rename_window", { windowId: t.ids.windowId, name: "cr\u00e8me" });
    } finally {
      await utf8.done();
    }
  });
});

Deno.test("set_option puts no escape sequence into a person's terminal title through a user option", async () => {
  await withTmux(async (t, c) => {
    // The person's title shows a user option of theirs, as a theme's may.
    await t.tmux("set-option", "-g", "set-titles", "on");
    await t.tmux("set-option", "-g", "set-titles-string", "#{@note}");
    const person = await attachRecorded(t, "main", { LANG: "C.UTF-8" });
    try {
      // OSC 52 writes the terminal's clipboard; ESC c resets it; a BEL ends the title early.
      for (const value of ["\x1b]52;c;cm0gLXJmIH4K\x07", "x\x1bcy", "a\x07b", "\x9b2J", "a\rb"]) {
        const text = await c.fail("set_option", {
          name: "@note",
          value,
          scope: "session",
          global: true,
        });
        assert.match(text, /control character/, text);
        assert.equal((await t.tmux("show-options", "-gqv", "@note")).trim(), "");
      }
      // Plain text, tabs, newlines and text beyond ASCII are as free as ever (a UTF-8 terminal).
      await c.ok("set_option", {
        name: "@note",
        value: "build\tgreen \u2713\nnext",
        scope: "session",
        global: true,
      });
      const shown = await waitFor(async () => {
        const got = new TextDecoder().decode(await person.received());
        return got.includes("green") ? got : undefined;
      }, "the title with the note");
      assert.ok(!shown.includes("\x1b]52") && !shown.includes("\x1bc"), "no escape from the note");
    } finally {
      await person.done();
    }
  });
});
