/**
 * Creating and arranging, end to end on private tmux servers: create_session, create_window,
 * split_window, respawn_pane, the arranging tools, wait-for channels and buffers. Every name
 * and title that could be mistaken for a format, a separator or a flag is read back from tmux
 * exactly, and no `#(...)` may ever run.
 */

import assert from "node:assert/strict";
import { connect, type StartedTmux, summaryOf, withTmux } from "./helpers/mcp.ts";
import {
  HookGate,
  linkedTwice,
  processesNaming,
  TestTmux,
  waitFor,
  waitsOnChannel,
} from "./helpers/tmux.ts";
import { layoutStringProblem } from "../src/tmux/layout_string.ts";
import { markOption, parseChannelMark } from "../src/tools/channel_marks.ts";
import { type RunOptions, TmuxRunner } from "../src/tmux/run.ts";
import type { ServerAddress } from "../src/tmux/server_address.ts";

/** A marker file a `#(touch ...)` would create if tmux ever ran it. */
async function marker(): Promise<{ path: string; never: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-marker-" });
  const path = `${dir}/ran`;
  return {
    path,
    async never() {
      // #() jobs run asynchronously: give one every chance to show up before looking.
      await new Promise((r) => setTimeout(r, 600));
      const exists = await Deno.stat(path).then(() => true, () => false);
      await Deno.remove(dir, { recursive: true });
      assert.equal(exists, false, "a #(...) job ran");
    },
  };
}

const fmt = async (t: TestTmux, target: string, format: string): Promise<string> =>
  (await t.tmux("display-message", "-p", "-t", target, format)).replace(/\n$/, "");

const sessionNames = async (t: TestTmux): Promise<string[]> =>
  (await t.tmux("list-sessions", "-F", "#{session_name}")).split("\n").filter((l) => l !== "");

// ---------------------------------------------------------------------------------------------
// create_session / create_window / split_window / respawn_pane

Deno.test("create_session stores names, size, environment and directory exactly", async () => {
  await withTmux(async (t, c) => {
    const m = await marker();
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tmux mcp #dir " }));
    try {
      const name = `we#{pid} "q" 'é🙂' #(touch ${m.path}) ;`;
      const windowName = `-w#(touch ${m.path});`;
      const r = await c.ok<Record<string, unknown>>("create_session", {
        name,
        windowName,
        startDirectory: dir,
        width: 100,
        height: 30,
        environment: { A: "1;", B: "#{pid}", C: "-x", D: "line1\nline2" },
      });
      assert.match(String(r.sessionId), /^\$\d+$/);
      assert.match(String(r.windowId), /^@\d+$/);
      assert.match(String(r.paneId), /^%\d+$/);
      assert.equal(r.name, name);
      assert.equal(r.cwd, dir);
      assert.deepEqual(r.notes, []);
      // Read back through tmux by id, not through the tool.
      assert.equal(await fmt(t, String(r.sessionId), "#{session_name}"), name);
      assert.equal(await fmt(t, String(r.windowId), "#{window_name}"), windowName);
      assert.equal(await fmt(t, String(r.windowId), "#{window_width}x#{window_height}"), "100x30");
      assert.equal(await fmt(t, String(r.paneId), "#{pane_current_path}"), dir);
      const env = await t.tmux("show-environment", "-t", String(r.sessionId));
      for (const line of ["A=1;", "B=#{pid}", "C=-x", "D=line1\nline2"]) {
        assert.ok(env.includes(`${line}\n`), `${line} in ${env}`);
      }
      await m.never();
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("create_session refuses names tmux would rewrite, and duplicates", async () => {
  await withTmux(async (t, c) => {
    const before = await sessionNames(t);
    for (
      const [name, why] of [
        ["a.b", /'\.' or ':'/],
        ["a:b", /'\.' or ':'/],
        ["tab\there", /control character/],
        ["new\nline", /control character/],
        ["back\\slash", /backslash/],
        ["", /empty/],
        ["main", /already exists/],
        // Every tool reads `$1` as the session with that id: it would name another session.
        ["$1", /looks like a session id/],
        ["a$b", /'\$' before a letter/],
        ["${x}", /'\$' before a letter/],
        ["#[fg=red]x", /'#\['/],
      ] as const
    ) {
      assert.match(await c.fail("create_session", { name }), why);
    }
    assert.match(await c.fail("create_session", { windowName: "#[bold]w" }), /'#\['/);
    assert.match(await c.fail("create_window", { session: "main", name: "$HOME" }), /'\$'/);
    assert.match(await c.fail("rename_window", { windowId: t.ids.windowId, name: "a$b" }), /'\$'/);
    assert.match(await c.fail("set_pane_title", { paneId: t.ids.paneId, title: "#[x]" }), /'#\['/);
    // What stays allowed: '$' before anything else, '#' before anything else.
    const ok = await c.ok<{ name: string }>("rename_window", {
      windowId: t.ids.windowId,
      name: "$1x $- a#b",
    });
    assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), "$1x $- a#b", JSON.stringify(ok));
    assert.match(await c.fail("create_session", { windowName: "a\\b" }), /backslash/);
    assert.match(await c.fail("create_session", { startDirectory: "relative/dir" }), /absolute/);
    assert.match(
      await c.fail("create_session", { environment: { "BAD-NAME": "x" } }),
      /environment\."?BAD-NAME"?/,
    );
    assert.deepEqual(await sessionNames(t), before, "nothing was created");
  });
});

Deno.test("create_session reports where tmux really started, and a process gone at once", async () => {
  await withTmux(async (_t, c) => {
    const r = await c.ok<{ cwd: string; notes: string[] }>("create_session", {
      startDirectory: "/nonexistent-tmux-mcp-dir",
    });
    assert.notEqual(r.cwd, "/nonexistent-tmux-mcp-dir");
    assert.match(r.notes.join(" "), /not "\/nonexistent-tmux-mcp-dir"/);
    // Whether `true` has exited by the time the server looks is a race: the note must come
    // when it has, and never while the pane is still there.
    let noted = 0;
    for (let i = 0; i < 10 && noted === 0; i++) {
      const gone = await c.ok<{ notes: string[]; sessionId: string }>("create_session", {
        command: "true",
      });
      if (/already gone/.test(gone.notes.join(" "))) {
        noted++;
        // Which shell ran it: the person's default-shell, not necessarily /bin/sh.
        assert.match(gone.notes[1], /^tmux ran the command as "\/.+" -c \(its default-shell/);
      } else assert.deepEqual(gone.notes, []);
    }
    assert.ok(noted > 0, "a process that exits at once is reported gone");
  });
});

Deno.test("create_window judges the folder of a started program, not of tmux's child before it", async () => {
  // Until tmux's child for a new pane execs the pane's program it is tmux itself, named so and
  // (before its chdir) in the server's folder: on a loaded machine for as long as it likes. A
  // program named tmux in "/" that makes the asked folder a second later, enters it and only
  // then execs plays that child, slowed down; a note read from it would be a false one. Before
  // the rename, the shell tmux runs the command with (bash) is a program started, in the folder
  // tmux fell back to: a read that early (a loaded machine) is right to judge it, and is made
  // again (that folder is neither "/" nor the asked one).
  await withTmux(async (t, c) => {
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "tmux-mcp-late-cd-" }));
    const later = `${base}/later`;
    await t.tmux("set-option", "-g", "default-shell", "/bin/bash");
    const create = async (startDirectory: string, command: string, settled: string[]) => {
      for (let tries = 1;; tries++) {
        const r = await c.ok<{ cwd: string; notes: string[] }>("create_window", {
          session: "main",
          startDirectory,
          command,
        });
        if (settled.includes(r.cwd) || tries === 5) return r;
      }
    };
    try {
      const r = await create(
        later,
        `exec -a tmux bash -c 'cd / && sleep 1 && mkdir "$0" && cd "$0" && exec sleep 100' ${later}`,
        ["/", later],
      );
      assert.deepEqual([r.cwd, r.notes], [later, []]);
      // One that stays named tmux in another folder is judged after the wait's bound: told. (Of
      // a folder tmux cannot enter: a first read of the child in the asked one would be right.)
      const stays = await create(
        `${base}/never`,
        "exec -a tmux bash -c 'cd / && exec -a tmux sleep 100'",
        ["/"],
      );
      assert.equal(stays.cwd, "/");
      assert.match(stays.notes.join(" "), /process is in "\/", not ".*\/never"/);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  });
});

Deno.test("a creation whose pane ends at once names what went with it, and its summary says so", async () => {
  await withTmux(async (t, c) => {
    const list = async (what: "sessions" | "windows") =>
      what === "sessions"
        ? (await t.tmux("list-sessions", "-F", "#{session_id}")).split("\n")
        : (await t.tmux("list-windows", "-a", "-F", "#{window_id}")).split("\n");
    // The new pane ends before the reply is made (as a command that exits at once does,
    // without the race): a person's hook kills it. tmux ends its window and session with it.
    await t.tmux("set-hook", "-g", "after-new-session", "kill-pane");
    const s = await summaryOf(c, "create_session", { name: "gone", command: "sh" });
    const session = s.data as { sessionId: string; windowId: string; notes: string[] };
    assert.ok(!(await list("sessions")).includes(session.sessionId), "the session is gone");
    assert.match(
      session.notes.join(" "),
      new RegExp(
        `already gone.* With it went window ${session.windowId}, session \\${session.sessionId} "gone"\\.$`,
      ),
    );
    assert.match(
      s.summary,
      /^Created session \$\d+ "gone" with window @\d+ and pane %\d+, but pane %\d+ is already gone: .* With it went window @\d+, session/,
    );

    await t.tmux("set-hook", "-gu", "after-new-session");
    await t.tmux("set-hook", "-g", "after-new-window", "kill-pane");
    const w = await summaryOf(c, "create_window", { session: "main", command: "sh" });
    const window = w.data as { windowId: string; notes: string[] };
    assert.ok(!(await list("windows")).includes(window.windowId), "the window is gone");
    assert.match(window.notes.join(" "), new RegExp(`With it went window ${window.windowId}\\.$`));
    assert.match(w.summary, /^Created window @\d+ \(index \d+ of \$\d+\) with pane %\d+, but pane/);

    // A split's window keeps its other pane: only the pane went, and that is what is said.
    await t.tmux("set-hook", "-gu", "after-new-window");
    await t.tmux("set-hook", "-g", "after-split-window", "kill-pane");
    const p = await summaryOf(c, "split_window", { paneId: t.ids.paneId, command: "sh" });
    const split = p.data as { paneId: string; notes: string[] };
    assert.match(split.notes.join(" "), /already gone/);
    assert.doesNotMatch(split.notes.join(" "), /With it went/);
    assert.match(p.summary, /, but pane %\d+ is already gone/);

    // The last session's pane: the server exits with it.
    await t.tmux("set-hook", "-gu", "after-split-window");
    await t.tmux("set-hook", "-g", "after-new-session", "kill-session -t main ; kill-pane");
    const last = await summaryOf(c, "create_session", { command: "sh" });
    assert.match(last.summary, /; the tmux server exited \(no session left\)\.$/);
    assert.notEqual((await t.tmuxRaw("list-sessions")).code, 0, "no server answers");
  });
});

Deno.test("create_session starts a server where none runs", async () => {
  const t = new TestTmux();
  const c = await connect({ socketName: t.socket });
  try {
    assert.match(await c.fail("create_window", { session: "x" }), /No tmux server is running/);
    const r = await c.ok<{ sessionId: string; name: string }>("create_session", { name: "fresh" });
    assert.equal(r.name, "fresh");
    assert.deepEqual(await sessionNames(t), ["fresh"]);
  } finally {
    await c.close();
    await t.kill();
  }
});

// A creation is checked by tmux in its own step (the server the call read, window-size manual):
// each check wraps it in one more `if-shell`, which quotes it once more. A single quote grows to
// four bytes a layer, a newline to six: past a tmux process's 16 KB the line goes on its stdin.

/** A shell command of `words` single-quoted words that prints how many it was given. */
function quotedCommand(words: number): string {
  return `set -- ${Array(words).fill("'x'").join(" ")}; echo "got $# words"; sleep 100`;
}

/** Waits until pane `paneId` shows `text`. */
async function shows(t: TestTmux, paneId: string, text: string): Promise<void> {
  await waitFor(
    async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).includes(text),
    JSON.stringify(text),
  );
}

Deno.test("create_window takes a command with many single quotes", async () => {
  await withTmux(async (t, c) => {
    // 2 000 words: 8 000 bytes, 4 000 single quotes; well inside commandSchema's 16 384.
    const made = await c.ok<{ windowId: string; paneId: string }>("create_window", {
      session: "main",
      command: quotedCommand(2_000),
    });
    assert.match(made.windowId, /^@\d+$/);
    assert.match(await t.tmux("list-windows", "-F", "#{window_id}"), new RegExp(made.windowId));
    await shows(t, made.paneId, "got 2000 words");
  });
});

Deno.test("create_session takes a command with many single quotes", async () => {
  await withTmux(async (t, c) => {
    const made = await c.ok<{ sessionId: string; paneId: string }>("create_session", {
      name: "quoted",
      command: quotedCommand(2_000),
    });
    assert.match(made.sessionId, /^\$\d+$/);
    assert.deepEqual(await sessionNames(t), ["main", "quoted"]);
    await shows(t, made.paneId, "got 2000 words");
  });
});

Deno.test("create_session starts a server for a command with many single quotes", async () => {
  // No server read: tmux reads window-size in the step itself, quoting the creation twice.
  const t = new TestTmux();
  const c = await connect({ socketName: t.socket });
  try {
    const made = await c.ok<{ paneId: string }>("create_session", {
      name: "fresh",
      command: quotedCommand(4_000),
    });
    assert.deepEqual(await sessionNames(t), ["fresh"]);
    await shows(t, made.paneId, "got 4000 words");
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("create_window under window-size manual takes a multi-line command", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-gw", "window-size", "manual");
    // 500 lines of `: 'xxxxxx'`: about 5 500 bytes.
    const command = Array(500).fill(": 'xxxxxx'").join("\n") + "\necho all lines ran; sleep 100";
    const made = await c.ok<{ windowId: string; paneId: string }>("create_window", {
      session: "main",
      command,
    });
    assert.match(made.windowId, /^@\d+$/);
    assert.equal((await t.tmux("show-options", "-gwv", "window-size")).trim(), "manual");
    await shows(t, made.paneId, "all lines ran");
  });
});

// create_session is what starts a server: its failure must not send the model to itself.
/** `command` as a hook's, run after any show-options but the read of command-alias. */
const NOT_ALIASES = (command: string) =>
  `if-shell -F '#{m:*command-alias*,#{hook_arguments}}' '' '${command}'`;

Deno.test("create_session whose server ends between its read and its act says so", async () => {
  await withTmux(async (t, c) => {
    // Right after create_session has read the server's options.
    // (Not after the read of command-alias every call makes first: command_aliases.ts.)
    await t.tmux("set-hook", "-g", "after-show-options", NOT_ALIASES("kill-server"));
    const refusal = await c.fail("create_session", { name: "late" });
    assert.match(refusal, /\(pid \d+\), which this call read, ended during the call/);
    assert.doesNotMatch(refusal, /create_session starts one/);
    assert.equal((await t.tmuxRaw("list-sessions")).code, 1, "no server was started");
    // Called again, it starts one.
    await c.ok("create_session", { name: "late" });
    assert.deepEqual(await sessionNames(t), ["late"]);
  });
});

Deno.test("a tool whose server ends after its act says it went away during the call, not that none runs", async () => {
  await withTmux(async (t, c) => {
    // A person's hook that ends the server right after the rename: the rename was done, then
    // the read-back met no server. "No tmux server is running" would read as nothing done.
    await t.tmux("set-hook", "-g", "after-rename-session", "kill-server");
    const refusal = await c.fail("rename_session", { session: t.ids.sessionId, name: "renamed" });
    assert.match(
      refusal,
      /went away during the call \(pid \d+ answered earlier in it: killed, crashed, its last pane exited, or a hook's command ended it\); what the call had done in tmux, if anything, went with it\./,
    );
    assert.doesNotMatch(refusal, /No tmux server is running/);
    // Once the server has ended, the next call meets no server at all, and says so plainly.
    await waitFor(
      async () => (await t.tmuxRaw("list-sessions")).code !== 0,
      "the server gone",
    );
    const next = await c.fail("rename_session", { session: t.ids.sessionId, name: "again" });
    assert.match(next, /^No tmux server is running on socket/);
  });
});

/** A runner whose tmux starts a server with the configuration file `path` (a person's). */
class ConfigRunner extends TmuxRunner {
  readonly #path: string;
  constructor(path: string) {
    // Every command a tmux process of its own, so the one that starts the server has the file.
    super({ control: false });
    this.#path = path;
  }
  override exec(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    return super.exec(address, ["-f", this.#path, ...args], options);
  }
}

/** A fresh server's socket and a client whose tmux starts it with `config` as its tmux.conf. */
async function withConfig(
  config: string,
  fn: (t: TestTmux, c: Awaited<ReturnType<typeof connect>>) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-conf-" });
  const path = `${dir}/tmux.conf`;
  await Deno.writeTextFile(path, config);
  const t = new TestTmux();
  const c = await connect({ socketName: t.socket, runner: new ConfigRunner(path) });
  try {
    await fn(t, c);
  } finally {
    await c.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
}

const windowSizes = async (t: TestTmux): Promise<string> =>
  await t.tmux("list-windows", "-a", "-F", "#{window_id} #{window_width}x#{window_height}");

// tmux 3.3 to 3.6 crash, taking every session along, when a window or session is made while
// the global window-size is manual (tmux/tmux#4849).
Deno.test("create_window and create_session under a global window-size manual keep the server", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("new-session", "-d", "-s", "precious", "-x", "120", "-y", "40");
    await t.tmux("new-session", "-d", "-s", "victim");
    // Set after the sessions are made: tmux itself crashes making one from here on.
    await t.tmux("set-option", "-gw", "window-size", "manual");
    await t.tmux("resize-window", "-t", t.ids.windowId, "-x", "90", "-y", "20");
    const before = await windowSizes(t);
    const made: string[] = [];
    for (const select of [false, true]) {
      const w = await c.ok<{ windowId: string }>("create_window", { session: "main", select });
      made.push(w.windowId);
    }
    const s = await c.ok<{ windowId: string }>("create_session", {
      name: "agent",
      width: 100,
      height: 30,
    });
    made.push(s.windowId);
    assert.deepEqual(await sessionNames(t), ["agent", "main", "precious", "victim"]);
    assert.equal(await fmt(t, s.windowId, "#{window_width}x#{window_height}"), "100x30");
    // The option as the person set it: global, manual; nothing set on the new windows.
    assert.equal((await t.tmux("show-options", "-gwv", "window-size")).trim(), "manual");
    for (const id of made) {
      assert.equal(await t.tmux("show-options", "-wqv", "-t", id, "window-size"), "", id);
    }
    // The windows there were kept their sizes.
    const after = (await windowSizes(t)).split("\n").filter((l) => !made.includes(l.split(" ")[0]));
    assert.deepEqual(after.join("\n"), before);

    // A creation tmux refuses half way still sets the option back (here the session goes
    // right after the options were read).
    await t.tmux("set-hook", "-g", "after-show-options", NOT_ALIASES("kill-session -t victim"));
    assert.match(await c.fail("create_window", { session: "victim" }), /can.t find session/);
    await t.tmux("set-hook", "-gu", "after-show-options");
    assert.deepEqual(await sessionNames(t), ["agent", "main", "precious"]);
    assert.equal((await t.tmux("show-options", "-gwv", "window-size")).trim(), "manual");
  });
});

Deno.test("create_session starts a server whose configuration sets window-size manual", async () => {
  await withConfig("set -g window-size manual\n", async (t, c) => {
    const s = await c.ok<{ sessionId: string }>("create_session", { name: "fresh" });
    assert.deepEqual(await sessionNames(t), ["fresh"]);
    assert.equal((await t.tmux("show-options", "-gwv", "window-size")).trim(), "manual");
    await c.ok("create_window", { session: s.sessionId });
    assert.equal((await t.tmux("show-options", "-gwv", "window-size")).trim(), "manual");
    assert.deepEqual(await sessionNames(t), ["fresh"]);
  });
  // And one that does not: the value the configuration leaves stays.
  await withConfig("set -g window-size largest\n", async (t, c) => {
    await c.ok("create_session", { name: "fresh" });
    assert.equal((await t.tmux("show-options", "-gwv", "window-size")).trim(), "largest");
  });
  // Either way the arguments reach tmux exactly, though tmux parses them once more.
  for (const size of ["manual", "latest"]) {
    await withConfig(`set -g window-size ${size}\n`, async (t, c) => {
      const m = await marker();
      const name = `we#{pid} "q" 'é' #(touch ${m.path}) ;`;
      const windowName = `-w'"#(touch ${m.path});`;
      const r = await c.ok<{ sessionId: string; windowId: string; paneId: string }>(
        "create_session",
        {
          name,
          windowName,
          // F: tmux's parser drops blanks after a quoted newline, and a line starting with #.
          environment: { A: "1;", B: "#{pid}", D: "line1\nline2", E: "'\"", F: "a\n  #x\n b" },
          command: "printf '%s|' \"$B\" \"$E\"; echo 'x;y'; sleep 60",
        },
      );
      assert.equal(await fmt(t, r.sessionId, "#{session_name}"), name, size);
      assert.equal(await fmt(t, r.windowId, "#{window_name}"), windowName, size);
      const env = await t.tmux("show-environment", "-t", r.sessionId);
      for (const line of ["A=1;", "B=#{pid}", "D=line1\nline2", `E='"`, "F=a\n  #x\n b"]) {
        assert.ok(env.includes(`${line}\n`), `${line} in ${env}`);
      }
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", r.paneId)).includes(`#{pid}|'"|x;y`),
        "the command's output",
      );
      await m.never();
    });
  }
});

/** The global window-size, as the person set it. */
const globalWindowSize = async (t: TestTmux): Promise<string> =>
  (await t.tmux("show-options", "-gwv", "window-size")).trim();

/** The person's window-size manual, and a hook of theirs held at `gate` after `event`. */
async function manualWithSlowHook(t: TestTmux, event: string, gate: HookGate): Promise<void> {
  await t.tmux("set-option", "-gw", "window-size", "manual");
  await t.tmux("set-hook", "-g", event, gate.command);
}

// tmux runs the rest of a command line only while its client lives: a creation's step cut short
// after it lent `latest` out would leave it for good.
Deno.test("create_window cancelled while the person's hook holds its step still gives window-size back", async () => {
  const gate = await HookGate.make();
  try {
    await withTmux(async (t, c) => {
      await manualWithSlowHook(t, "after-new-window", gate);
      const abort = new AbortController();
      const call = c.client.callTool(
        { name: "create_window", arguments: { session: "main" } },
        undefined,
        { signal: abort.signal },
      );
      await waitFor(() => gate.began(), "the hook to hold the step");
      abort.abort();
      await assert.rejects(call);
      assert.equal(await globalWindowSize(t), "latest", "still lent out while the hook runs");
      await gate.open();
      // The step was left to run: its line ends with the value given back.
      await waitFor(async () => await globalWindowSize(t) === "manual", "window-size manual");
      assert.equal((await t.tmux("list-windows", "-t", "main")).trim().split("\n").length, 2);
    });
  } finally {
    await gate.remove();
  }
});

Deno.test("create_window whose step outlasts its timeout gives window-size back, the global value only", async () => {
  const gate = await HookGate.make();
  const t = await TestTmux.start();
  // Every tmux process gets a short timeout: the person's hook outlasts it.
  const c = await connect({ socketName: t.socket, runner: new TmuxRunner({ timeoutMs: 1_500 }) });
  try {
    await manualWithSlowHook(t, "after-new-window", gate);
    // The session's current window has a value of its own: the global one is what is checked.
    await t.tmux("set-option", "-w", "-t", t.ids.windowId, "window-size", "smallest");
    await c.fail("create_window", { session: "main" });
    // Given back while the hook still holds the dead step's line (whose rest tmux drops). The
    // hook's job is a process tmux started: it may come to the gate a moment after the reply.
    await waitFor(() => gate.began(), "the hook to hold the step");
    assert.equal(await globalWindowSize(t), "manual");
    assert.equal(
      await t.tmux("show-options", "-wv", "-t", t.ids.windowId, "window-size"),
      "smallest\n",
    );
  } finally {
    await gate.open();
    await c.close();
    await t.kill();
    await gate.remove();
  }
});

Deno.test("a create_window that reads the latest another one lent out still makes its window safely", async () => {
  const gate = await HookGate.make();
  try {
    await withTmux(async (t, c) => {
      await manualWithSlowHook(t, "after-new-window", gate);
      const first = c.ok<{ windowId: string }>("create_window", { session: "main" });
      await waitFor(() => gate.began(), "the hook to hold the first step");
      // Told when the second call has read the options (window-size and destroy-unattached).
      await t.tmux(
        "set-hook",
        "-g",
        "after-show-options",
        "if-shell -F '#{m:*destroy-unattached*,#{hook_arguments}}' 'set-option -g @second-read 1'",
      );
      const second = c.ok<{ windowId: string }>("create_window", { session: "main" });
      await waitFor(
        async () => (await t.tmux("show-options", "-gqv", "@second-read")).trim() === "1",
        "the second call to read latest",
      );
      await gate.open();
      // Made plainly (it read latest), the second window would have crashed tmux once the
      // first step had given manual back.
      const made = await Promise.all([first, second]);
      assert.deepEqual(await sessionNames(t), ["main"]);
      assert.equal(await globalWindowSize(t), "manual");
      for (const w of made) assert.match(await fmt(t, w.windowId, "#{window_id}"), /^@\d+$/);
    });
  } finally {
    await gate.remove();
  }
});

/** Every pane of the server. */
const allPanes = async (t: TestTmux): Promise<string[]> =>
  (await t.tmux("list-panes", "-a", "-F", "#{pane_id}")).split("\n").filter((l) => l !== "");

/** The creations, each with the after-hook of the person's that holds its step. */
const CREATIONS = [
  ["create_window", { session: "main", command: "sleep 1000" }, "after-new-window"],
  // Guarded as a view change: the step is checked and made on one command line.
  ["create_window", { session: "main", select: true }, "after-new-window"],
  ["split_window", { command: "sleep 1000" }, "after-split-window"],
  ["create_session", { name: "agent" }, "after-new-session"],
] as const;

// tmux made the pane and started its process before the person's hook ran; the owner mark,
// set after the step, must be set all the same, or under --own-panes-only its maker could
// never touch it again.
for (const [tool, input, event] of CREATIONS) {
  Deno.test(`${tool}${JSON.stringify(input)} cancelled while a person's hook holds its step still marks what it made as its own`, async () => {
    const gate = await HookGate.make();
    const t = await TestTmux.start();
    const c = await connect({ socketName: t.socket, owner: "agent1", ownPanesOnly: true });
    try {
      const before = await allPanes(t);
      await t.tmux("set-hook", "-g", event, gate.command);
      const abort = new AbortController();
      const args = tool === "split_window" ? { ...input, paneId: t.ids.paneId } : input;
      const call = c.client.callTool({ name: tool, arguments: args }, undefined, {
        signal: abort.signal,
      });
      await waitFor(() => gate.began(), "the person's hook to hold the step");
      abort.abort();
      await assert.rejects(call);
      const [made] = (await allPanes(t)).filter((p) => !before.includes(p));
      assert.ok(made, "tmux made the pane before the hook ran");
      await gate.open();
      await waitFor(
        async () => (await fmt(t, made, "#{@tmux-mcp-owner}")) === "agent1",
        `the owner mark on ${made}`,
      );
      await c.ok("kill_pane", { paneId: made });
    } finally {
      await gate.open();
      await c.close();
      await t.kill();
      await gate.remove();
    }
  });
}

// The same step outliving its timeout: the reply must say what was made (a retry would start
// the command a second time), and it is marked as this server's all the same.
Deno.test("a creation whose step outlasts its timeout says what tmux made, marked as its own", async () => {
  for (const [tool, input, event] of CREATIONS) {
    const gate = await HookGate.make();
    const t = await TestTmux.start();
    const c = await connect({
      socketName: t.socket,
      owner: "agent1",
      // Long enough for the step's process to start and print the ids on a loaded machine (at
      // 1.5 s one run in a suite three times slower than usual met none printed, which the
      // reply then says as it should: "may have made").
      runner: new TmuxRunner({ timeoutMs: 3_000 }),
    });
    try {
      const before = await allPanes(t);
      await t.tmux("set-hook", "-g", event, gate.command);
      const args = tool === "split_window" ? { ...input, paneId: t.ids.paneId } : input;
      const text = await c.fail(tool, args);
      const [made] = (await allPanes(t)).filter((p) => !before.includes(p));
      assert.ok(made, `${tool}: tmux made the pane`);
      assert.match(text, new RegExp(`tmux made .*${made}`), `${tool}: ${text}`);
      assert.match(text, /marked as this server's/, `${tool}: ${text}`);
      assert.doesNotMatch(text, /try again/i, `${tool}: ${text}`);
      assert.equal(await fmt(t, made, "#{@tmux-mcp-owner}"), "agent1", tool);
    } finally {
      await gate.open();
      await c.close();
      await t.kill();
      await gate.remove();
    }
  }
});

/**
 * A hook of the person's on `event` that holds the creating step until some pane of the server
 * is dead: the reply is then built on a pane whose process has exited (a command that fails at
 * once, made deterministic).
 */
async function holdUntilAPaneIsDead(t: TestTmux, event: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-dead-" });
  await Deno.writeTextFile(
    `${dir}/hold.sh`,
    // Silent (tmux shows a hook job's output over the pane) and gentle on a loaded machine.
    `exec >/dev/null 2>&1\nwhile ! tmux -L ${t.socket} list-panes -a -F '#{pane_dead}' | grep -q 1; do\n` +
      `  test -d ${dir} || exit 0\n  sleep 0.05\ndone\n`,
  );
  await t.tmux("set-hook", "-g", event, `run-shell 'sh ${dir}/hold.sh'`);
  return dir;
}

// A pane kept dead by remain-on-exit has no current path: no note may blame the folder.
Deno.test("a creation whose command exits at once under remain-on-exit says so, with its status", async () => {
  for (const [tool, input, event] of CREATIONS) {
    if (!("command" in input)) continue;
    await withTmux(async (t, c) => {
      await t.tmux("set-option", "-g", "remain-on-exit", "on");
      const dir = await holdUntilAPaneIsDead(t, event);
      try {
        const args = { ...input, command: "exit 3", startDirectory: "/" };
        const r = await c.ok<{ paneId: string; cwd: string; notes: string[] }>(
          tool,
          tool === "split_window" ? { ...args, paneId: t.ids.paneId } : args,
        );
        assert.equal(await fmt(t, r.paneId, "#{pane_dead} #{pane_dead_status}"), "1 3");
        const said = r.notes.join(" ");
        assert.doesNotMatch(said, /cannot enter the directory/, `${tool}: ${said}`);
        assert.match(said, /already exited \(status 3\)/, `${tool}: ${said}`);
        assert.match(said, /tmux ran the command as "\/.+" -c/, `${tool}: ${said}`);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });
  }
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    // A shell whose $$ is its own pid.
    await t.tmux("set-option", "-g", "default-shell", "/bin/sh");
    const dir = await holdUntilAPaneIsDead(t, "after-new-session");
    try {
      const r = await c.ok<{ notes: string[] }>("create_session", { command: "kill -9 $$" });
      assert.match(r.notes.join(" "), /already exited \(signal 9\)/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("a pane whose process is dead to tmux before tmux has its status is said dead with the status", async () => {
  // tmux 3.3a marks a pane dead when its terminal closes, and has the status only once it reaps
  // the process: about one in five processes that exit at once it leaves unreaped until another
  // child of the server exits. Made certain here: the command closes the terminal and exits a
  // second later, and the person's hook holds the split until tmux calls the pane dead.
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const dir = await holdUntilAPaneIsDead(t, "after-split-window");
    try {
      const r = await c.ok<{ paneId: string; notes: string[] }>("split_window", {
        paneId: t.ids.paneId,
        command: "trap '' HUP; exec </dev/null >/dev/null 2>&1; sleep 1; exit 3",
      });
      assert.match(r.notes.join(" "), /already exited \(status 3\)/);
      assert.equal(await fmt(t, r.paneId, "#{pane_dead} #{pane_dead_status}"), "1 3");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("create_window, split_window and create_session report what tmux holds after the person's hooks", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-hook", "-g", "after-new-window", "rename-window renamed");
    const w = await c.ok<{ windowId: string; paneId: string; name: string; notes: string[] }>(
      "create_window",
      {
        session: "main",
        name: "mine",
      },
    );
    assert.equal(w.name, "renamed");
    assert.equal(await fmt(t, w.windowId, "#{window_name}"), "renamed");
    assert.match(w.notes.join(" "), /"renamed" now, not "mine"/);
    await t.tmux("set-hook", "-g", "after-split-window", "select-layout even-horizontal");
    const p = await c.ok<{ paneId: string; width: number; height: number }>("split_window", {
      paneId: w.paneId,
      direction: "below",
    });
    assert.equal(`${p.width}x${p.height}`, await fmt(t, p.paneId, "#{pane_width}x#{pane_height}"));
    await t.tmux("set-hook", "-g", "after-new-session", "rename-session renamed");
    const s = await c.ok<{ sessionId: string; name: string; notes: string[] }>("create_session", {
      name: "ours",
    });
    assert.equal(s.name, "renamed");
    assert.equal(await fmt(t, s.sessionId, "#{session_name}"), "renamed");
    assert.match(s.notes.join(" "), /"renamed" now, not "ours"/);
  });
});

Deno.test("create_session is refused where destroy-unattached would end it at once", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    await t.tmux("set-option", "-g", "destroy-unattached", "on");
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-du-" });
    try {
      const error = await c.fail("create_session", {
        name: "work",
        command: `touch ${dir}/ran; sleep 60`,
      });
      assert.match(error, /destroy-unattached is on.*Nothing was started/s);
      assert.match(error, /create_window/);
      assert.deepEqual(await sessionNames(t), ["main"]);
      assert.equal(await Deno.stat(`${dir}/ran`).then(() => true, () => false), false);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
  // A server this call starts reads the option from its configuration, after the fact.
  await withConfig("set -g destroy-unattached on\n", async (_t, c) => {
    assert.match(
      await c.fail("create_session", { name: "work" }),
      /destroy-unattached is on: tmux ended the new session \$\d+ at once/,
    );
  });
});

Deno.test("create_window adds a window without taking the focus unless select", async () => {
  await withTmux(async (t, c) => {
    const m = await marker();
    await t.tmux("rename-session", "-t", t.ids.sessionId, "my session");
    const name = `-dash #{window_id} #(touch ${m.path}) "x";`;
    const r = await c.ok<Record<string, unknown>>("create_window", { session: "my session", name });
    assert.equal(r.sessionId, t.ids.sessionId);
    assert.equal(r.name, name);
    assert.equal(await fmt(t, String(r.windowId), "#{window_name}"), name);
    assert.equal(await fmt(t, t.ids.sessionId, "#{window_id}"), t.ids.windowId, "focus stayed");
    const s = await c.ok<Record<string, unknown>>("create_window", {
      session: t.ids.sessionId,
      select: true,
    });
    assert.equal(await fmt(t, t.ids.sessionId, "#{window_id}"), s.windowId, "focus moved");
    assert.match(
      await c.fail("create_window", { session: "nope" }),
      /No session "nope".*main|my session/,
    );
    assert.match(
      await c.fail("create_window", { session: "my" }),
      /No session "my"/,
      "no prefix match",
    );
    await m.never();
  });
});

Deno.test("create_window starts in its session's directory, selected or not", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "session dir #{x} " }));
    try {
      // tmux expands -c as a format: ## keeps the # of the name.
      await t.tmux("new-session", "-d", "-s", "placed", "-c", dir.replaceAll("#", "##"));
      for (const select of [false, true]) {
        const w = await c.ok<{ cwd: string; notes: string[] }>("create_window", {
          session: "placed",
          select,
        });
        assert.deepEqual([w.cwd, w.notes], [dir, []], `select: ${select}`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("split_window places the new pane, sizes it, and starts in the source's directory", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "split #{x} " }));
    try {
      const w = await c.ok<{ paneId: string; cwd: string }>("create_window", {
        session: "main",
        startDirectory: dir,
      });
      assert.equal(w.cwd, dir);
      const right = await c.ok<Record<string, unknown>>("split_window", {
        paneId: w.paneId,
        direction: "right",
        size: "30%",
      });
      assert.equal(right.cwd, dir, "defaults to the source pane's directory");
      const [srcLeft, newLeft] = await Promise.all([
        fmt(t, w.paneId, "#{pane_left}"),
        fmt(t, String(right.paneId), "#{pane_left}"),
      ]);
      assert.ok(Number(newLeft) > Number(srcLeft));
      assert.equal(await fmt(t, w.paneId, "#{pane_active}"), "1", "focus stayed");
      const above = await c.ok<Record<string, unknown>>("split_window", {
        paneId: w.paneId,
        direction: "above",
        size: 5,
        startDirectory: "/",
      });
      assert.equal(above.height, 5);
      assert.equal(above.cwd, "/");
      assert.ok(
        Number(await fmt(t, String(above.paneId), "#{pane_top}")) <
          Number(await fmt(t, w.paneId, "#{pane_top}")),
      );
      assert.match(await c.fail("split_window", { paneId: "%999" }), /No pane %999/);
      assert.match(await c.fail("split_window", { paneId: "5" }), /pane id/);
      assert.match(await c.fail("split_window", { paneId: w.paneId, size: "0%" }), /percentage/);
      assert.match(await c.fail("split_window", { paneId: w.paneId, size: 0 }), /size/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

/** The bytes of a pane's current path, as tmux has them (no decoding). */
async function pathBytes(t: TestTmux, paneId: string): Promise<number[]> {
  const out = await new Deno.Command("tmux", {
    args: [
      "-L",
      t.socket,
      "-f",
      "/dev/null",
      "display-message",
      "-p",
      "-t",
      paneId,
      "#{pane_current_path}",
    ],
    stdout: "piped",
  }).output();
  return [...out.stdout.subarray(0, out.stdout.length - 1)];
}

Deno.test("a folder whose name is not UTF-8: new panes start in it, never in a look-alike, and it cannot be named", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "tmux-mcp-bytes-" }));
  // The folder named with the byte 0xFF, and look-alikes named with what it reads as (U+FFFD)
  // and with what it once read as (the text \xFF).
  const sh = async (script: string, ...args: string[]) => {
    const out = await new Deno.Command("sh", { args: ["-c", script, "sh", base, ...args] })
      .output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout).trim();
  };
  const BYTE = `"$1/p$(printf '\\377')"`;
  const FFFD = `"$1/p$(printf '\\357\\277\\275')"`;
  await sh(`mkdir ${BYTE} "$1/p\\xFF" ${FFFD}`);
  try {
    await withTmux(async (t, c) => {
      // A window of the first session there (the session's own folder is elsewhere), and a
      // session whose folder it is.
      const pane = await sh(
        `tmux -L "$2" -f /dev/null new-window -d -P -F '#{pane_id}' -t main: -c ${BYTE} sh`,
        t.socket,
      );
      await sh(`tmux -L "$2" -f /dev/null new-session -d -s bytes -c ${BYTE} sh`, t.socket);
      const folder = [...new TextEncoder().encode(`${base}/p`), 0xff];
      await waitFor(async () => (await pathBytes(t, pane)).join() === folder.join(), "the shell");
      const info = await c.ok<{ cwd: string }>("get_pane_info", { paneId: pane });
      assert.equal(info.cwd, `${base}/p\uFFFD`);
      const split = await c.ok<{ paneId: string; notes: string[] }>("split_window", {
        paneId: pane,
      });
      await waitFor(
        async () => (await pathBytes(t, split.paneId)).join() === folder.join(),
        "split",
      );
      assert.deepEqual(split.notes, []);
      const win = await c.ok<{ paneId: string; notes: string[] }>("create_window", {
        session: "bytes",
      });
      await waitFor(async () => (await pathBytes(t, win.paneId)).join() === folder.join(), "win");
      assert.deepEqual(win.notes, []);
      // What the folder reads as names it only approximately: never taken as a directory.
      for (
        const [tool, args] of [
          ["create_session", {}],
          ["create_window", { session: "bytes" }],
          ["split_window", { paneId: pane }],
          ["respawn_pane", { paneId: pane, kill: true }],
        ] as const
      ) {
        const text = await c.fail(tool, { ...args, startDirectory: info.cwd });
        assert.match(text, /U\+FFFD/, `${tool}: ${text}`);
      }
    });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("respawn_pane restarts dead panes, needs kill for live ones, and keeps the guards", async () => {
  await withTmux(async (t, c) => {
    const { paneId } = t.ids;
    assert.match(await c.fail("respawn_pane", { paneId }), /still running.*kill: true/);
    const oldPid = await fmt(t, paneId, "#{pane_pid}");
    const r = await c.ok<{ pid: number; dead: boolean }>("respawn_pane", {
      paneId,
      kill: true,
      command: "sleep 100;",
    });
    assert.notEqual(String(r.pid), oldPid);
    assert.equal(r.dead, false);
    assert.equal(await fmt(t, paneId, "#{pane_start_command}"), '"sleep 100;"');

    // A dead pane kept by remain-on-exit restarts without kill.
    await t.tmux("set-option", "-w", "-t", t.ids.windowId, "remain-on-exit", "on");
    await c.ok("respawn_pane", { paneId, kill: true, command: "exit 3" });
    await waitFor(async () => (await fmt(t, paneId, "#{pane_dead}")) === "1", "a dead pane");
    const again = await c.ok<{ dead: boolean; pid: number }>("respawn_pane", {
      paneId,
      command: "sleep 50",
    });
    assert.equal(again.dead, false);

    // The guards: a pane in copy mode, this server's own pane, a watched pane.
    await t.tmux("copy-mode", "-t", paneId);
    assert.match(await c.fail("respawn_pane", { paneId, kill: true }), /copy-mode/);
    await t.tmux("copy-mode", "-q", "-t", paneId);
    const facts = await t.facts();
    const own = await connect({
      socketName: t.socket,
      callerEnv: { tmux: `${facts.socketPath},${facts.pid},0`, tmuxPane: paneId },
    });
    try {
      assert.match(await own.fail("respawn_pane", { paneId, kill: true }), /runs in/);
      await own.ok("respawn_pane", { paneId, kill: true, force: true });
    } finally {
      await own.close();
    }
    await t.attach("main");
    assert.match(await c.fail("respawn_pane", { paneId, kill: true }), /watched by a person/);
    assert.match(await c.fail("respawn_pane", { paneId: "%77" }), /No pane %77/);
  });
});

// ---------------------------------------------------------------------------------------------
// rename_session / rename_window / set_pane_title

Deno.test("rename_session and rename_window store tricky names exactly; no #() runs", async () => {
  await withTmux(async (t, c) => {
    const m = await marker();
    const name = `-x "q" 'é' 🙂 #{pid} ##(touch ${m.path}) #(touch ${m.path});`;
    const s = await c.ok<Record<string, unknown>>("rename_session", { session: "main", name });
    assert.deepEqual(s, { sessionId: t.ids.sessionId, name, previousName: "main" });
    assert.equal(await fmt(t, t.ids.sessionId, "#{session_name}"), name);
    await c.ok("rename_session", { session: name, name: "again" });
    assert.deepEqual(await sessionNames(t), ["again"]);
    const w = await c.ok<Record<string, unknown>>("rename_window", {
      windowId: t.ids.windowId,
      name,
    });
    assert.equal(w.name, name);
    assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), name);
    assert.equal(await fmt(t, t.ids.windowId, "#{automatic-rename}"), "0");
    // The reply says so: the name no longer follows the window's program.
    const said = await c.call("rename_window", { windowId: t.ids.windowId, name: "said" });
    assert.match(
      said.content?.[0]?.type === "text" ? said.content[0].text : "",
      /automatic-rename is off now/,
    );
    await c.ok("rename_window", { windowId: t.ids.windowId, name });

    await t.tmux("new-session", "-d", "-s", "other");
    assert.match(
      await c.fail("rename_session", { session: "again", name: "other" }),
      /already named/,
    );
    assert.match(await c.fail("rename_session", { session: "again", name: "a.b" }), /'\.'/);
    assert.match(
      await c.fail("rename_window", { windowId: t.ids.windowId, name: "a\tb" }),
      /control/,
    );
    assert.match(await c.fail("rename_window", { windowId: "@99", name: "x" }), /No window @99/);
    assert.match(await c.fail("rename_session", { session: "$99", name: "x" }), /No session/);
    assert.deepEqual(await sessionNames(t), ["again", "other"]);
    await m.never();
  });
});

Deno.test("set_pane_title stores the title exactly and refuses what tmux would drop", async () => {
  await withTmux(async (t, c) => {
    const m = await marker();
    const title = `-t #{pane_id} back\\slash "q" 🙂 #(touch ${m.path});`;
    const r = await c.ok("set_pane_title", { paneId: t.ids.paneId, title });
    assert.deepEqual(r, { paneId: t.ids.paneId, title });
    assert.equal(await fmt(t, t.ids.paneId, "#{pane_title}"), title);
    assert.match(
      await c.fail("set_pane_title", { paneId: t.ids.paneId, title: "a\tb" }),
      /ignores/,
    );
    assert.match(
      await c.fail("set_pane_title", { paneId: t.ids.paneId, title: "a\nb" }),
      /control/,
    );
    assert.equal(await fmt(t, t.ids.paneId, "#{pane_title}"), title, "unchanged");
    await m.never();
  });
});

// ---------------------------------------------------------------------------------------------
// Names with characters tmux cannot print

/**
 * Characters tmux 3.3a cannot print, whatever the C library's Unicode version: line and
 * paragraph separators, noncharacters, code points unassigned for good. tmux octal-escapes
 * them in session and window names and ignores a title holding them.
 */
const UNPRINTABLE = [
  "x\u2028y",
  "x\u2029y",
  "x\u0378y",
  "x\uFFFEy",
  "x\u{1FFFF}y",
  "x\u{10FFFF}y",
  "x\u{E0080}y",
];

/** What a naming tool could change: every session, window and title, and where panes are. */
const namingState = async (t: TestTmux): Promise<string> =>
  await t.tmux(
    "list-panes",
    "-a",
    "-F",
    "#{session_id}=#{session_name} #{window_id}=#{window_name} #{pane_id}=#{pane_title}",
  );

Deno.test("names with characters tmux cannot print are refused before anything changes", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("split-window", "-d", "-t", t.ids.paneId, "sh");
    const second = (await t.tmux("list-panes", "-t", t.ids.windowId, "-F", "#{pane_id}"))
      .split("\n")[1];
    await t.tmux("select-pane", "-t", t.ids.paneId, "-T", "before");
    // Named, so automatic-rename does not change it meanwhile.
    await t.tmux("rename-window", "-t", t.ids.windowId, "orig");
    const before = await namingState(t);
    for (const name of UNPRINTABLE) {
      const calls: [string, Record<string, unknown>][] = [
        ["rename_session", { session: "main", name }],
        ["rename_window", { windowId: t.ids.windowId, name }],
        ["create_session", { name }],
        ["create_session", { windowName: name }],
        ["create_window", { session: "main", name }],
        ["break_pane", { paneId: second, name }],
        ["set_pane_title", { paneId: t.ids.paneId, title: name }],
      ];
      for (const [tool, args] of calls) {
        const why = await c.fail(tool, args);
        assert.match(why, /cannot print/, `${tool} ${JSON.stringify(args)}: ${why}`);
        const code = name.codePointAt(1)!.toString(16).toUpperCase().padStart(4, "0");
        assert.ok(why.includes(`U+${code}`), why);
        assert.match(why, /nothing was changed/, why);
      }
      assert.equal(await namingState(t), before, `nothing changed for ${JSON.stringify(name)}`);
    }
    // Said with the form tmux would store.
    assert.ok(
      (await c.fail("rename_window", { windowId: t.ids.windowId, name: "x\u2028y" }))
        .includes("\\342\\200\\250"),
    );
  });
});

Deno.test("create_session with no server running refuses such a name without starting one", async () => {
  const t = new TestTmux();
  const c = await connect({ socketName: t.socket });
  try {
    assert.match(await c.fail("create_session", { name: "x\u2028y" }), /cannot print/);
    assert.match(await c.fail("create_session", { windowName: "x\uFFFEy" }), /cannot print/);
    assert.equal((await t.tmuxRaw("list-sessions")).code, 1, "no server was started");
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("names tmux prints keep working: emoji, CJK, marks, joiners, private use", async () => {
  await withTmux(async (t, c) => {
    const second = (await t.tmux(
      "split-window",
      "-d",
      "-t",
      t.ids.paneId,
      "-P",
      "-F",
      "#{pane_id}",
      "sh",
    )).trim();
    const names = [
      // A family (ZWJ sequence), emoji and text presentation, CJK, a combining accent.
      "\u{1F468}\u200D\u{1F469}\u200D\u{1F467} \u2764\uFE0F \u2764\uFE0E 中文名 e\u0301",
      // Zero-width and format characters, bidi marks and isolates, soft hyphen, BOM.
      "a\u200Bb\u200Dc \uFEFF \u00AD \u200E\u200F \u061C \u2066x\u2069 \u202Ey\u202C",
      // A lone combining mark first; private use (BMP and plane 15).
      "\u0301\uE000\u{F0000}\u{10FFFD}",
    ];
    for (const name of names) {
      const s = await c.ok<{ name: string }>("rename_session", { session: t.ids.sessionId, name });
      assert.equal(s.name, name);
      assert.equal(await fmt(t, t.ids.sessionId, "#{session_name}"), name);
      const w = await c.ok<{ name: string }>("rename_window", { windowId: t.ids.windowId, name });
      assert.equal(w.name, name);
      assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), name);
      const p = await c.ok<{ title: string }>("set_pane_title", {
        paneId: t.ids.paneId,
        title: name,
      });
      assert.equal(p.title, name);
      assert.equal(await fmt(t, t.ids.paneId, "#{pane_title}"), name);
      const n = await c.ok<{ windowId: string; name: string }>("create_window", {
        session: t.ids.sessionId,
        name,
      });
      assert.equal(await fmt(t, n.windowId, "#{window_name}"), name);
      await t.tmux("kill-window", "-t", n.windowId);
    }
    // The longest name, every character a different wide one: one question, answered whole.
    const long = Array.from({ length: 1024 }, (_, i) => String.fromCodePoint(0x4E00 + i)).join("");
    await c.ok("rename_window", { windowId: t.ids.windowId, name: long });
    assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), long);
    assert.match(
      await c.fail("rename_window", {
        windowId: t.ids.windowId,
        name: long.slice(0, -1) + "\u0378",
      }),
      /U\+0378/,
    );
    const b = await c.ok<{ windowId: string; name: string; notes: string[] }>("break_pane", {
      paneId: second,
      name: names[0],
    });
    assert.deepEqual(b.notes, []);
    assert.equal(await fmt(t, b.windowId, "#{window_name}"), names[0]);
    const s = await c.ok<{ sessionId: string; notes: string[] }>("create_session", {
      name: names[1],
      windowName: names[2],
    });
    assert.deepEqual(s.notes, []);
    assert.equal(await fmt(t, s.sessionId, "#{session_name}"), names[1]);
    assert.equal(await fmt(t, s.sessionId, "#{window_name}"), names[2]);
  });
});

Deno.test("whether a newer character prints is this tmux's to say, and the tools agree", async () => {
  await withTmux(async (t, c) => {
    // Assigned in Unicode 15 or 16: printable or not depending on the C library's tables.
    const candidates = ["\u{1FAE8}", "\u{1FA89}", "\u{31350}", "\u2FFC", "\u{1CC00}", "\u{1F6DC}"];
    for (const ch of candidates) {
      const name = `n${ch}n`;
      await t.tmux("rename-window", "-t", t.ids.windowId, "--", name);
      const escaped = (await fmt(t, t.ids.windowId, "#{window_name}")) !== name;
      await t.tmux("rename-window", "-t", t.ids.windowId, "--", "orig");
      const r = await c.call("rename_window", { windowId: t.ids.windowId, name });
      assert.equal(r.isError === true, escaped, `${JSON.stringify(name)}: ${JSON.stringify(r)}`);
      assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), escaped ? "orig" : name);
      await t.tmux("rename-window", "-t", t.ids.windowId, "--", "orig");
    }
  });
});

/**
 * A runner whose probe for unprintable characters sees nothing: what a tmux that prints
 * differently from what it stores would look like, so a rename goes through and is stored
 * otherwise.
 */
class BlindProbeRunner extends TmuxRunner {
  constructor() {
    super({ control: false });
  }
  override exec(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    // The probe is display-message's format (more commands may follow it, after a `;`).
    const at = args[0] === "display-message" ? args.indexOf("--") + 1 : 0;
    const probe = at > 0 ? /^#\{=\d+:(#\{l:.*\})\}$/s.exec(args[at] ?? "") : null;
    if (probe) {
      return super.exec(address, args.with(at, probe[1]), options);
    }
    return super.exec(address, args, options);
  }
}

Deno.test("a rename tmux stored otherwise is renamed back, and says so", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("rename-window", "-t", t.ids.windowId, "orig");
    const s = await c.fail("rename_session", { session: "main", name: "x\u2028y" });
    assert.match(s, /stored the session name as "x\\\\342\\\\200\\\\250y"/, s);
    assert.match(s, /renamed back to "main"/, s);
    assert.equal(await fmt(t, t.ids.sessionId, "#{session_name}"), "main");
    const w = await c.fail("rename_window", { windowId: t.ids.windowId, name: "x\u0378y" });
    assert.match(w, /stored the window name as "x\\\\315\\\\270y"/, w);
    assert.match(w, /renamed back to "orig"/, w);
    assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), "orig");
    // A previous name no rename can give (new-window -n stores it as it is): said as it is.
    const odd = (await t.tmux(
      "new-window",
      "-d",
      "-t",
      "main:",
      "-n",
      "a\u2028b",
      "-P",
      "-F",
      "#{window_id}",
      "sh",
    )).trim();
    const o = await c.fail("rename_window", { windowId: odd, name: "x\u0378y" });
    // The error shows the line separator escaped (error texts never carry one raw).
    assert.match(o, /Renaming it back to "a\\u2028b" stored "a\\\\342\\\\200\\\\250b"/, o);
  }, { runner: new BlindProbeRunner() });
});

// ---------------------------------------------------------------------------------------------
// select_window / select_pane / select_layout

Deno.test("select_window and select_pane change what is current; linked windows need a session", async () => {
  await withTmux(async (t, c) => {
    const w2 = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id}")).trim();
    const r = await c.ok("select_window", { windowId: w2 });
    assert.deepEqual(r, { windowId: w2, sessionId: t.ids.sessionId, index: 1, active: true });
    assert.equal(await fmt(t, t.ids.sessionId, "#{window_id}"), w2);

    await t.tmux("new-session", "-d", "-s", "two");
    await t.tmux("link-window", "-d", "-s", t.ids.windowId, "-t", "two:");
    assert.match(await c.fail("select_window", { windowId: t.ids.windowId }), /linked into 2/);
    const two = await c.ok<{ sessionId: string; active: boolean }>("select_window", {
      windowId: t.ids.windowId,
      session: "two",
    });
    assert.equal(two.active, true);
    assert.equal(await fmt(t, "two", "#{window_id}"), t.ids.windowId);
    assert.equal(await fmt(t, t.ids.sessionId, "#{window_id}"), w2, "main untouched");
    assert.match(
      await c.fail("select_window", { windowId: w2, session: "two" }),
      /not in session/,
    );

    const p2 = (await t.tmux("split-window", "-d", "-t", t.ids.paneId, "-P", "-F", "#{pane_id}"))
      .trim();
    const sp = await c.ok("select_pane", { paneId: p2 });
    assert.deepEqual(sp, {
      paneId: p2,
      windowId: t.ids.windowId,
      active: true,
      windowZoomed: false,
    });
    assert.equal(await fmt(t, t.ids.paneId, "#{pane_active}"), "0");
    assert.match(await c.fail("select_pane", { paneId: "%404" }), /No pane %404/);
  });
});

Deno.test("select_layout applies presets and restores a layout string", async () => {
  await withTmux(async (t, c) => {
    for (let i = 0; i < 2; i++) await t.tmux("split-window", "-d", "-t", t.ids.paneId);
    const original = await fmt(t, t.ids.windowId, "#{window_layout}");
    const tiled = await c.ok<{ layout: string }>("select_layout", {
      windowId: t.ids.windowId,
      layout: "even-horizontal",
    });
    assert.notEqual(tiled.layout, original);
    assert.equal(tiled.layout, await fmt(t, t.ids.windowId, "#{window_layout}"));
    const back = await c.ok<{ layout: string }>("select_layout", {
      windowId: t.ids.windowId,
      layout: original,
    });
    assert.equal(back.layout, original);
    assert.match(
      await c.fail("select_layout", { windowId: t.ids.windowId, layout: "sideways; kill-server" }),
      /neither a preset/,
    );
    assert.match(
      await c.fail("select_layout", { windowId: t.ids.windowId, layout: "abcd,10x10,0,0" }),
      /tmux refused/,
    );
    assert.equal(await fmt(t, t.ids.windowId, "#{window_layout}"), original);
  });
});

/** tmux's layout checksum (layout-custom.c), so a made-up layout string passes tmux's own check. */
function withChecksum(body: string): string {
  let csum = 0;
  for (const byte of new TextEncoder().encode(body)) {
    csum = ((csum >> 1) + ((csum & 1) << 15)) & 0xffff;
    csum = (csum + byte) & 0xffff;
  }
  return `${csum.toString(16).padStart(4, "0")},${body}`;
}

Deno.test("select_layout refuses layout strings that would take down or bloat the tmux server", async () => {
  await withTmux(async (t, c) => {
    // A person works in "main" (its first window); the agent arranges a window nobody looks at.
    const tty = await t.attach("main");
    const [windowId, paneId] = (await t.tmux(
      "new-window",
      "-d",
      "-t",
      "main:",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
    )).trim().split(" ");
    await t.tmux("split-window", "-h", "-d", "-t", paneId);
    const before = await fmt(t, windowId, "#{window_layout}");
    const bodies = [
      // 4294967295 + 1 + 80 wraps to 80 in tmux's u_int sum: its own check passes, the server dies.
      "80x24,0,0{4294967295x24,0,0,1,80x24,40,0,2}",
      // Wraps too, and is applied: a 4294967000-column pane, gigabytes once someone looks.
      "80x24,0,0{4294967000x24,0,0,1,375x24,40,0,2}",
      // Three cells for two panes: tmux drops the last, the only child of its split, and dies.
      "80x24,0,0{40x24,0,0,1,19x24,41,0,2,19x24,61,0[19x24,61,0,3]}",
      // Within bounds, but the two cells do not fill the window.
      "80x24,0,0{40x24,0,0,1,30x24,41,0,2}",
      "80x24,0,0{40x24,0,0,1,0x24,41,0,2,38x24,42,0,3}",
      "80x24,0,0{40x24,0,0,1,39x24,40,0,2}",
      "10001x24,0,0,1",
    ];
    for (const body of bodies) {
      const layout = withChecksum(body);
      const r = await c.call("select_layout", { windowId, layout });
      const alive = (await t.tmuxRaw("display-message", "-p", "#{pid}")).code === 0;
      assert.ok(alive, `select_layout ${layout} ended the tmux server: ${JSON.stringify(r)}`);
      assert.equal(r.isError, true, `select_layout accepted ${layout}: ${JSON.stringify(r)}`);
      assert.match(JSON.stringify(r.content), /list_windows/, "the refusal says what passes");
      assert.equal(await fmt(t, windowId, "#{window_layout}"), before);
    }
    assert.ok((await t.clientTtys()).includes(tty), "the person is still attached");
  });
});

Deno.test("select_layout takes back every layout tmux prints, whatever its shape", async () => {
  await withTmux(async (t, c) => {
    const newWindow = async (): Promise<[string, string]> =>
      (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id} #{pane_id}"))
        .trim().split(" ") as [string, string];
    const split = async (pane: string, ...flags: string[]): Promise<string> =>
      (await t.tmux("split-window", "-d", ...flags, "-t", pane, "-P", "-F", "#{pane_id}")).trim();
    const shapes: string[] = [];
    // One pane.
    shapes.push((await newWindow())[0]);
    // Tiled, five panes; main-vertical, four.
    for (const [preset, panes] of [["tiled", 5], ["main-vertical", 4]] as const) {
      const [w, p] = await newWindow();
      for (let i = 1; i < panes; i++) await split(p);
      await t.tmux("select-layout", "-t", w, preset);
      shapes.push(w);
    }
    // Nested both ways, three deep, with a full-width split and an uneven resize.
    {
      const [w, p] = await newWindow();
      const right = await split(p, "-h");
      const below = await split(right, "-v");
      await split(below, "-h");
      await split(p, "-v", "-f");
      await t.tmux("resize-pane", "-t", right, "-L", "7");
      shapes.push(w);
    }
    // Zoomed: window_layout is the layout beneath the zoom.
    {
      const [w, p] = await newWindow();
      await split(await split(p, "-h"), "-v");
      await t.tmux("resize-pane", "-Z", "-t", p);
      shapes.push(w);
    }
    // As large as tmux lets a window be, and as small.
    for (const [x, y] of [["10000", "30"], ["2", "3"]]) {
      const [w, p] = await newWindow();
      await split(p, "-h");
      await t.tmux("resize-window", "-t", w, "-x", x, "-y", y);
      shapes.push(w);
    }
    for (const w of shapes) {
      const layout = await fmt(t, w, "#{window_layout}");
      const visible = await fmt(t, w, "#{window_visible_layout}");
      assert.equal(layoutStringProblem(visible), undefined, `${visible} (visible layout of ${w})`);
      const r = await c.ok<{ layout: string }>("select_layout", { windowId: w, layout });
      assert.equal(r.layout, layout);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// resize_pane / resize_window

Deno.test("resize_pane sets sizes and zoom as a state, never a toggle", async () => {
  await withTmux(async (t, c) => {
    const { paneId, windowId } = t.ids;
    const p2 = (await t.tmux("split-window", "-d", "-h", "-t", paneId, "-P", "-F", "#{pane_id}"))
      .trim();
    const w = await c.ok<Record<string, unknown>>("resize_pane", { paneId, width: 30 });
    assert.equal(w.width, 30);
    assert.equal(await fmt(t, paneId, "#{pane_width}"), "30");
    const d = await c.ok<Record<string, unknown>>("resize_pane", {
      paneId,
      direction: "right",
      amount: 5,
    });
    assert.equal(d.width, 35);

    const z1 = await c.ok<Record<string, unknown>>("resize_pane", { paneId, zoom: true });
    assert.equal(z1.zoomed, true);
    const z2 = await c.ok<Record<string, unknown>>("resize_pane", { paneId, zoom: true });
    assert.equal(z2.zoomed, true, "still zoomed: a state, not a toggle");
    assert.equal(await fmt(t, windowId, "#{window_zoomed_flag}"), "1");
    const other = await c.ok<Record<string, unknown>>("resize_pane", { paneId: p2, zoom: true });
    assert.equal(other.zoomed, true);
    assert.equal(await fmt(t, windowId, "#{window_zoomed_flag} #{pane_id}"), `1 ${p2}`);
    const off = await c.ok<Record<string, unknown>>("resize_pane", { paneId: p2, zoom: false });
    assert.equal(off.zoomed, false);
    const off2 = await c.ok<Record<string, unknown>>("resize_pane", { paneId: p2, zoom: false });
    assert.equal(off2.zoomed, false);
    assert.equal(await fmt(t, windowId, "#{window_zoomed_flag}"), "0");

    // A one-pane window cannot zoom: reported, not an error.
    const solo = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{pane_id}")).trim();
    const s = await c.ok<{ zoomed: boolean; notes: string[] }>("resize_pane", {
      paneId: solo,
      zoom: true,
    });
    assert.equal(s.zoomed, false);
    assert.match(s.notes.join(" "), /single pane/);

    assert.match(await c.fail("resize_pane", { paneId }), /Nothing to do/);
    assert.match(await c.fail("resize_pane", { paneId, direction: "up" }), /go together/);
    assert.match(await c.fail("resize_pane", { paneId, amount: 3 }), /go together/);
    assert.match(await c.fail("resize_pane", { paneId: "%500", width: 10 }), /No pane %500/);
  });
});

Deno.test("resize_window sets the size and reports zoom of a one-pane window as left", async () => {
  await withTmux(async (t, c) => {
    const r = await c.ok<Record<string, unknown>>("resize_window", {
      windowId: t.ids.windowId,
      width: 120,
      height: 40,
    });
    assert.equal(r.width, 120);
    assert.equal(r.height, 40);
    assert.equal(await fmt(t, t.ids.windowId, "#{window_width}x#{window_height}"), "120x40");
    // What tmux does besides, said: the window keeps that size.
    assert.equal(
      (await t.tmux("show-options", "-wv", "-t", t.ids.windowId, "window-size")).trim(),
      "manual",
    );
    assert.match((r.notes as string[]).join(" "), /window-size option to manual/);
    const z = await c.ok<{ zoomed: boolean; notes: string[] }>("resize_window", {
      windowId: t.ids.windowId,
      zoom: true,
    });
    assert.equal(z.zoomed, false);
    assert.match(z.notes.join(" "), /single pane/);
    await t.tmux("split-window", "-d", "-t", t.ids.paneId);
    const z2 = await c.ok<{ zoomed: boolean; activePaneId: string }>("resize_window", {
      windowId: t.ids.windowId,
      zoom: true,
    });
    assert.equal(z2.zoomed, true);
    assert.equal(z2.activePaneId, t.ids.paneId);
    assert.match(await c.fail("resize_window", { windowId: t.ids.windowId }), /Nothing to do/);
    assert.match(await c.fail("resize_window", { windowId: "@42", zoom: false }), /No window @42/);
  });
});

Deno.test("windows stay within a million cells: resize_window, create_session, select_layout", async () => {
  await withTmux(async (t, c) => {
    const { windowId, paneId } = t.ids;
    // tmux 3.3a redraws every cell of a pane in copy mode at each resize: at 10000x10000 that
    // held every session for seconds, per call. Each tool refuses such a size before tmux sees it.
    const cells = /10000x10000 window is 100000000 cells.*at most 1000000/;
    assert.match(
      await c.fail("resize_window", { windowId, width: 10_000, height: 10_000 }),
      cells,
    );
    assert.equal(await fmt(t, windowId, "#{window_width}x#{window_height}"), "80x24");
    const wide = await c.ok<{ width: number; height: number }>("resize_window", {
      windowId,
      width: 10_000,
      height: 100,
    });
    assert.deepEqual([wide.width, wide.height], [10_000, 100]);
    // One side given: the other is the window's own.
    assert.match(
      await c.fail("resize_window", { windowId, height: 101 }),
      /10000x101 window is 1010000 cells/,
    );
    assert.equal(await fmt(t, windowId, "#{window_width}x#{window_height}"), "10000x100");
    await c.ok("resize_window", { windowId, width: 1_000, height: 1_000 });
    await c.ok("enter_copy_mode", { paneId });
    assert.match(
      await c.fail("resize_window", { windowId, width: 9_999, height: 9_999 }),
      /9999x9999 window/,
    );
    assert.match(
      await c.fail("create_session", { name: "huge", width: 10_000, height: 10_000 }),
      cells,
    );
    // The missing side is what tmux would take: the default-size (80x24 here).
    await c.ok("create_session", { name: "wide", width: 10_000 });
    assert.equal(await fmt(t, "wide", "#{window_width}x#{window_height}"), "10000x24");
    assert.deepEqual(await sessionNames(t), ["main", "wide"]);
    // A layout string sets its window's size: a huge one is refused like any other.
    const body = "10000x10000,0,0,1";
    let sum = 0;
    for (const ch of body) sum = (((sum >> 1) + ((sum & 1) << 15)) + ch.charCodeAt(0)) & 0xffff;
    const layout = `${sum.toString(16).padStart(4, "0")},${body}`;
    assert.match(
      await c.fail("select_layout", { windowId, layout }),
      /100000000 cells/,
    );
    assert.equal(await fmt(t, windowId, "#{window_width}x#{window_height}"), "1000x1000");
  });
});

Deno.test("a window a person made larger than the cap may still be made smaller", async () => {
  await withTmux(async (t, c) => {
    const { windowId, paneId } = t.ids;
    // A person's window, made large by hand (tmux takes up to 10000 a side).
    await t.tmux("set-option", "-w", "-t", windowId, "window-size", "manual");
    await t.tmux("resize-window", "-t", windowId, "-x", "2000", "-y", "1000");
    // Narrower: fewer cells than before, so less for tmux to redraw.
    const narrower = await c.ok<{ width: number; height: number }>("resize_window", {
      windowId,
      width: 1_200,
    });
    assert.deepEqual([narrower.width, narrower.height], [1_200, 1_000]);
    assert.equal(await fmt(t, windowId, "#{window_width}x#{window_height}"), "1200x1000");
    // As large as it is passes; larger than it is, and over the cap, does not.
    await c.ok("resize_window", { windowId, width: 1_200, height: 1_000 });
    assert.match(
      await c.fail("resize_window", { windowId, height: 1_001 }),
      /1200x1001 window is 1201200 cells, more than the 1200000 it has now \(1200x1000\)/,
    );
    assert.equal(await fmt(t, windowId, "#{window_width}x#{window_height}"), "1200x1000");
    // tmux resizes the window to a layout string's outer cell (then back to the size it keeps
    // for the window): the same rule holds.
    const cell = (w: number, h: number) => withChecksum(`${w}x${h},0,0,${paneId.slice(1)}`);
    await c.ok("select_layout", { windowId, layout: cell(1_100, 1_000) });
    assert.match(
      await c.fail("select_layout", { windowId, layout: cell(1_300, 1_000) }),
      /1300x1000 window is 1300000 cells, more than the 1200000 it has now/,
    );
    assert.equal(await fmt(t, windowId, "#{window_width}x#{window_height}"), "1200x1000");
    // Once within the cap, it is held to the cap again.
    await c.ok("resize_window", { windowId, width: 1_000, height: 1_000 });
    assert.match(
      await c.fail("resize_window", { windowId, width: 1_001 }),
      /1001x1000 window is 1001000 cells; .*at most 1000000 cells \(1000x1000, 10000x100\)\./,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// swap_pane / move_window

Deno.test("swap_pane trades places; move_window moves placements and reports ended sessions", async () => {
  await withTmux(async (t, c) => {
    const p2 = (await t.tmux("split-window", "-d", "-t", t.ids.paneId, "-P", "-F", "#{pane_id}"))
      .trim();
    const s = await c.ok<{ panes: { paneId: string; index: number }[] }>("swap_pane", {
      paneId: t.ids.paneId,
      targetPaneId: p2,
    });
    assert.deepEqual(s.panes.map((p) => [p.paneId, p.index]), [[t.ids.paneId, 1], [p2, 0]]);
    assert.equal(await fmt(t, t.ids.paneId, "#{pane_index}"), "1");
    assert.match(await c.fail("swap_pane", { paneId: p2, targetPaneId: p2 }), /itself/);

    // A window linked into two sessions: the source placement must be named.
    await t.tmux("new-session", "-d", "-s", "dest");
    const w2 = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id}")).trim();
    await t.tmux("link-window", "-d", "-s", w2, "-t", "dest:5");
    assert.match(await c.fail("move_window", { windowId: w2, session: "dest" }), /linked into 2/);
    // Into a session that holds it already, tmux would link it there twice: refused.
    assert.match(
      await c.fail("move_window", { windowId: w2, session: "dest", index: 7, fromSession: "main" }),
      /would link it into session \$\d+ "dest" a second time: the window is there already \(index 5\)/,
    );
    const moved = await c.ok<{ placements: { sessionName: string; index: number }[] }>(
      "move_window",
      { windowId: w2, session: "dest", index: 7, fromSession: "dest" },
    );
    assert.deepEqual(
      moved.placements.map((p) => `${p.sessionName}:${p.index}`).sort(),
      ["dest:7", "main:1"],
    );
    await t.tmux("new-session", "-d", "-s", "third");
    const away = await c.ok<{ placements: { sessionName: string; index: number }[] }>(
      "move_window",
      { windowId: w2, session: "third", fromSession: "main" },
    );
    assert.deepEqual(
      away.placements.map((p) => `${p.sessionName}:${p.index}`).sort(),
      ["dest:7", "third:1"],
    );
    assert.match(
      await c.fail("move_window", { windowId: t.ids.windowId, session: "dest", index: 7 }),
      /tmux refused.*in use|index/i,
    );

    // Moving a session's last window away ends that session.
    const last = await c.ok<{ removedSessions: string[] }>("move_window", {
      windowId: t.ids.windowId,
      session: "dest",
    });
    assert.deepEqual(last.removedSessions, [t.ids.sessionId]);
    assert.deepEqual(await sessionNames(t), ["dest", "third"]);
  });
});

Deno.test("join_pane of the last pane of a window linked twice into its only session keeps tmux alive", async () => {
  await withTmux(async (t, c) => {
    const { paneId, sessionId } = await linkedTwice(t);
    const pid = await fmt(t, "keep", "#{pid}");
    await c.ok("list_panes", {});
    const r = await c.ok<{ windowId: string; removedWindow: boolean; removedSessions: string[] }>(
      "join_pane",
      { paneId, targetPaneId: t.ids.paneId },
    );
    assert.equal(await fmt(t, "keep", "#{pid}"), pid, "join_pane took the tmux server down");
    assert.equal(r.windowId, t.ids.windowId);
    assert.equal(r.removedWindow, true);
    assert.deepEqual(r.removedSessions, [sessionId]);
    assert.deepEqual(await sessionNames(t), ["keep", "main"]);

    // A second link made between the read and the move stops it.
    const [w2, p2] = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "solo",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "sleep 1000",
    )).trim().split(" ");
    await t.onceAfterGuardRead(`link-window -d -s ${w2} -t solo:1`);
    assert.match(
      await c.fail("join_pane", { paneId: p2, targetPaneId: t.ids.paneId }),
      new RegExp(`was not done: window ${w2}'s links or panes changed`),
    );
    assert.equal(await fmt(t, "keep", "#{pid}"), pid, "join_pane took the tmux server down");
    assert.equal(await fmt(t, p2, "#{window_id}"), w2, "the pane did not move");
  });
});

Deno.test("move_window never links a window into a session twice, also one linked there after the read", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("new-session", "-d", "-s", "keep", "sleep 1000");
    const pid = await fmt(t, "keep", "#{pid}");
    // A window in "a" and "b", the only window of "b": moved from "a" into "b", tmux would
    // leave "b" holding it twice and nothing else, and its end would crash tmux 3.3a.
    const windowId = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "a",
      "-P",
      "-F",
      "#{window_id}",
      "sleep 1000",
    )).trim();
    await t.tmux("new-session", "-d", "-s", "b");
    await t.tmux("link-window", "-d", "-s", windowId, "-t", "b:1");
    await t.tmux("kill-window", "-t", "b:0");
    assert.match(
      await c.fail("move_window", { windowId, session: "b", fromSession: "a" }),
      /a second time/,
    );
    const links = () => t.tmux("list-windows", "-a", "-F", "#{session_name}:#{window_index}");
    assert.equal(await links(), "a:0\nb:1\nkeep:0\nmain:0\n", "nothing moved");

    // Linked into the destination between the read and the move: tmux refuses it there.
    const other = (await t.tmux("new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id}"))
      .trim();
    await t.onceAfterGuardRead(`link-window -d -s ${other} -t b:5`);
    assert.match(
      await c.fail("move_window", { windowId: other, session: "b" }),
      new RegExp(`Moving window ${other} would link it into session \\$\\d+ "b" a second time`),
    );
    assert.equal(await links(), "a:0\nb:1\nb:5\nkeep:0\nmain:0\nmain:1\n", "nothing moved");
    assert.equal(await fmt(t, "keep", "#{pid}"), pid);
  });
});

// ---------------------------------------------------------------------------------------------
// set_synchronize_panes / copy mode

Deno.test("set_synchronize_panes, enter_copy_mode and exit_copy_mode report the state tmux is in", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("split-window", "-d", "-t", t.ids.paneId);
    const on = await c.ok("set_synchronize_panes", { windowId: t.ids.windowId, enabled: true });
    assert.deepEqual(on, { windowId: t.ids.windowId, synchronized: true });
    assert.equal(
      (await t.tmux("show-options", "-wv", "-t", t.ids.windowId, "synchronize-panes")).trim(),
      "on",
    );
    const off = await c.ok("set_synchronize_panes", { windowId: t.ids.windowId, enabled: false });
    assert.deepEqual(off, { windowId: t.ids.windowId, synchronized: false });

    const { paneId } = t.ids;
    const enter = await c.ok("enter_copy_mode", { paneId });
    assert.deepEqual(enter, { paneId, inMode: true, mode: "copy-mode" });
    assert.deepEqual(await c.ok("enter_copy_mode", { paneId }), enter, "idempotent");
    const exit = await c.ok("exit_copy_mode", { paneId });
    assert.deepEqual(exit, { paneId, inMode: false, mode: "", left: "copy-mode" });
    assert.equal(await fmt(t, paneId, "#{pane_in_mode}"), "0");
    const none = await c.ok("exit_copy_mode", { paneId });
    assert.deepEqual(none, { paneId, inMode: false, mode: "", left: null });
    // Any mode, not only copy mode.
    await t.tmux("choose-tree", "-t", paneId);
    const tree = await c.ok<{ left: string; inMode: boolean }>("exit_copy_mode", { paneId });
    assert.equal(tree.left, "tree-mode");
    assert.equal(tree.inMode, false);
    assert.match(await c.fail("enter_copy_mode", { paneId: "%31" }), /No pane %31/);
  });
});

Deno.test("set_synchronize_panes holds for every pane, also one with a value of its own", async () => {
  await withTmux(async (t, c) => {
    const w = t.ids.windowId;
    const b = (await t.tmux("split-window", "-d", "-t", t.ids.paneId, "-P", "-F", "#{pane_id}"))
      .trim();
    const d = (await t.tmux("split-window", "-d", "-t", t.ids.paneId, "-P", "-F", "#{pane_id}"))
      .trim();
    const synced = async () =>
      (await t.tmux("list-panes", "-t", w, "-F", "#{pane_synchronized}")).split("\n")
        .filter((l) => l !== "");
    // Panes that copy keys whatever the window says, and one that never would.
    await t.tmux("set-option", "-p", "-t", t.ids.paneId, "synchronize-panes", "on");
    await t.tmux("set-option", "-p", "-t", b, "synchronize-panes", "on");
    await t.tmux("set-option", "-p", "-t", d, "synchronize-panes", "off");
    const off = await c.ok("set_synchronize_panes", { windowId: w, enabled: false });
    assert.deepEqual(off, { windowId: w, synchronized: false });
    assert.deepEqual(await synced(), ["0", "0", "0"]);
    await t.tmux("set-option", "-p", "-t", d, "synchronize-panes", "off");
    const on = await c.ok("set_synchronize_panes", { windowId: w, enabled: true });
    assert.deepEqual(on, { windowId: w, synchronized: true });
    assert.deepEqual(await synced(), ["1", "1", "1"]);
    // Only what differed was unset: the window's value decides for all of them now.
    assert.equal(await t.tmux("show-options", "-pqv", "-t", b, "synchronize-panes"), "");
    assert.equal(await t.tmux("show-options", "-pqv", "-t", d, "synchronize-panes"), "");
  });
});

// ---------------------------------------------------------------------------------------------
// wait_for_channel / signal_channel

/**
 * Resolves once tmux has a client waiting on `channel` (a wait_for_channel's), in its list of
 * waiters: the process runs, and the channel is marked `waiting` (in the step that begins the
 * wait, which tmux runs in one go; the process alone may not have reached the server yet).
 */
async function waiterOn(t: TestTmux, channel: string): Promise<void> {
  await waitFor(
    async () =>
      (await t.tmuxRaw("show-options", "-sqv", markOption(channel))).stdout.startsWith(
        "waiting",
      ) &&
      (await processesNaming(t.socket)).some((p) => waitsOnChannel(p.args, channel)),
    `a waiter on ${channel}`,
  );
}

Deno.test("wait_for_channel woken by its server's exit says so: tmux wakes every wait as it exits, and that is no signal", async () => {
  // Killed, or its last session gone (the last pane's program ended): tmux 3.3a ends a
  // `wait-for` as a signal would, status 0 and all.
  const ends: [string, (t: StartedTmux) => Promise<unknown>][] = [
    ["killed", (t) => t.tmux("kill-server").catch(() => "")],
    ["its last session gone", (t) => t.tmux("kill-pane", "-t", t.ids.paneId).catch(() => "")],
  ];
  for (const [how, end] of ends) {
    await withTmux(async (t, c) => {
      const waiting = c.fail("wait_for_channel", { channel: "build.done", timeoutMs: 20_000 });
      await waiterOn(t, "build.done");
      await end(t);
      const refusal = await waiting;
      assert.match(
        refusal,
        /went away while the wait on channel build\.done ran \(killed, or its last session ended\): tmux wakes every wait as it exits, so this was no signal/,
        how,
      );
      assert.doesNotMatch(refusal, /signalled/, how);
    });
  }
  // A server kept without sessions (exit-empty off): a true signal finds none, and is one.
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-s", "exit-empty", "off");
    await t.tmux("kill-session", "-t", t.ids.sessionId);
    const waiting = c.ok<Record<string, unknown>>("wait_for_channel", {
      channel: "bare",
      timeoutMs: 20_000,
    });
    await waiterOn(t, "bare");
    await t.tmux("wait-for", "-S", "bare");
    assert.equal((await waiting).outcome, "signalled");
  });
});

Deno.test("wait_for_channel ends on a signal, remembers an early one, and clamps its timeout", async () => {
  await withTmux(async (t, c) => {
    await c.ok("signal_channel", { channel: "early" });
    const early = await c.ok<Record<string, unknown>>("wait_for_channel", {
      channel: "early",
      timeoutMs: 5_000,
    });
    assert.equal(early.outcome, "signalled");

    const waiting = c.ok<Record<string, unknown>>("wait_for_channel", {
      channel: "build.done",
      timeoutMs: 10_000,
    });
    // Signal from outside, as a script would, once tmux has the waiter (its tmux client).
    await waiterOn(t, "build.done");
    await t.tmux("wait-for", "-S", "build.done");
    assert.equal((await waiting).outcome, "signalled");

    const short = await c.ok<Record<string, unknown>>("wait_for_channel", {
      channel: "never",
      timeoutMs: 1,
    });
    assert.equal(short.outcome, "timedOut");
    assert.equal(short.effectiveTimeoutMs, 100);

    assert.match(await c.fail("wait_for_channel", { channel: "-S" }), /channel name/);
    assert.match(await c.fail("signal_channel", { channel: "a;b" }), /channel name/);
    assert.match(await c.fail("wait_for_channel", { channel: "x", timeoutMs: 1.5 }), /int/);
  });
});

Deno.test("tmux fact: a wait-for that was abandoned swallows the next lone signal", async () => {
  await withTmux(async (t, c) => {
    // The wait's step marks the channel as its own and waits, in one go (prepareWait): a hook
    // tells when tmux ran it. A tmux client the timeout killed before that never waited, and
    // the signal below would be kept for the next wait: such a wait is made again.
    await t.tmux(
      "set-hook",
      "-g",
      "after-set-option",
      "if-shell -F '#{m:*waiting.*.*.*,#{hook_arguments}}' 'set-option -g @wait-ran 1'",
    );
    await waitFor(async () => {
      const r = await c.ok<Record<string, unknown>>("wait_for_channel", {
        channel: "ghost",
        timeoutMs: 150,
      });
      assert.equal(r.outcome, "timedOut");
      return (await t.tmux("show-options", "-gqv", "@wait-ran")).trim() === "1";
    }, "a timed-out wait that tmux ran");
    await t.tmux("set-hook", "-gu", "after-set-option");
    await t.tmux("wait-for", "-S", "ghost");
    const after = await c.ok<Record<string, unknown>>("wait_for_channel", {
      channel: "ghost",
      timeoutMs: 300,
    });
    // If tmux ever drops abandoned waiters, this fails and the description must change.
    assert.equal(after.outcome, "timedOut");
  });
});

// tmux cannot withdraw a wait: a cancelled one stays, dead, and takes the next lone signal.
Deno.test("after a cancelled wait_for_channel, signal_channel and the next wait that times out say a dead wait may have taken the signal", async () => {
  await withTmux(async (t, c) => {
    const waiter = async () =>
      (await processesNaming(t.socket)).some((p) => waitsOnChannel(p.args, "ghost"));
    const abort = new AbortController();
    const call = c.client.callTool(
      { name: "wait_for_channel", arguments: { channel: "ghost", timeoutMs: 60_000 } },
      undefined,
      { signal: abort.signal },
    );
    // In tmux's list of waiters, not only started: the wait marks its channel in the step that
    // begins it, and tmux runs a step's commands in one go. A client killed before tmux ran its
    // wait-for never waited, and the signal would be kept.
    const markValue = async () =>
      (await t.tmuxRaw("show-options", "-sv", markOption("ghost"))).stdout.trim();
    const mark = async () => (await markValue()).startsWith("waiting");
    await waitFor(async () => await waiter() && await mark(), "the waiter, in tmux's list");
    abort.abort();
    await assert.rejects(call);
    await waitFor(async () => !(await waiter()), "the waiter's tmux process gone");

    const signalled = await summaryOf(c, "signal_channel", { channel: "ghost" });
    assert.deepEqual(signalled.data, { channel: "ghost", signalled: true });
    assert.match(
      signalled.summary,
      /abandoned \(timed out or cancelled\) may have taken this signal/,
    );
    assert.match(signalled.summary, /tmux cannot withdraw a wait/);
    const next = await summaryOf(c, "wait_for_channel", { channel: "ghost", timeoutMs: 300 });
    assert.equal(next.data.outcome, "timedOut", "tmux gave the signal to the dead wait");
    assert.match(
      next.summary,
      /An earlier wait on it that a tmux-mcp server abandoned may have taken/,
    );

    // A wait that is signalled is woken with every dead one: nothing more is said after it.
    await waitFor(async () => !(await waiter()), "the timed-out waiter's tmux process gone");
    // In tmux's list too, as above: a signal sent before its step ran would wake only the dead
    // wait. That step marks the channel anew, as this process's wait.
    const dead = await markValue();
    const waiting = summaryOf(c, "wait_for_channel", { channel: "ghost", timeoutMs: 20_000 });
    await waitFor(async () => {
      const now = await markValue();
      return now !== dead && parseChannelMark(now)?.owner === Deno.pid && await waiter();
    }, "the live waiter, in tmux's list");
    await t.tmux("wait-for", "-S", "ghost");
    assert.equal((await waiting).data.outcome, "signalled");
    assert.equal(
      (await summaryOf(c, "signal_channel", { channel: "ghost" })).summary,
      "Signalled channel ghost.",
    );
    const kept = await summaryOf(c, "wait_for_channel", { channel: "ghost", timeoutMs: 5_000 });
    assert.equal(kept.data.outcome, "signalled");
  });
});

// ---------------------------------------------------------------------------------------------
// load_buffer / delete_buffer

Deno.test("load_buffer stores text exactly; delete_buffer removes only this server's buffers", async () => {
  await withTmux(async (t, c) => {
    // One line (load_buffer refuses line breaks: tools17_buffers_test.ts), tab included.
    const text = "-first part; #{pid} #(touch /nonexistent/x) 'q' \"d\" 🙂\tend;";
    const r = await c.ok<{ bufferName: string; bytes: number; replaced: boolean }>(
      "load_buffer",
      { text, name: "notes" },
    );
    assert.equal(r.bufferName, "tmux-mcp-notes");
    assert.equal(r.bytes, new TextEncoder().encode(text).length);
    assert.equal(r.replaced, false);
    assert.equal(await t.tmux("show-buffer", "-b", "tmux-mcp-notes"), text);
    const again = await c.ok<{ replaced: boolean }>("load_buffer", { text: "x", name: "notes" });
    assert.equal(again.replaced, true);
    assert.match(await c.fail("load_buffer", { text: "" }), /text/);
    const anon = await c.ok<{ bufferName: string }>("load_buffer", { text: " " });
    assert.match(anon.bufferName, /^tmux-mcp-[0-9a-f]{12}$/);

    await t.tmux("set-buffer", "-b", "persons", "their clipboard");
    assert.match(
      await c.fail("delete_buffer", { bufferName: "persons" }),
      /not made by tmux-mcp/,
    );
    assert.match(await c.fail("delete_buffer", { bufferName: "tmux-mcp-none" }), /No buffer/);
    assert.deepEqual(await c.ok("delete_buffer", { bufferName: "tmux-mcp-notes" }), {
      bufferName: "tmux-mcp-notes",
      deleted: true,
    });
    const left = (await t.tmux("list-buffers", "-F", "#{buffer_name}")).trim().split("\n").sort();
    assert.deepEqual(left, [anon.bufferName, "persons"].sort());
    // A name ending in ';' (made by another program) is that buffer, not the one before the ';'.
    await t.tmux("set-buffer", "-b", "tmux-mcp-x\\;", "semicolon");
    await t.tmux("set-buffer", "-b", "tmux-mcp-x", "KEEP-ME");
    await c.ok("delete_buffer", { bufferName: "tmux-mcp-x;" });
    assert.equal(await t.tmux("show-buffer", "-b", "tmux-mcp-x"), "KEEP-ME");
    assert.match(await c.fail("load_buffer", { text: "x", name: "bad name" }), /letters, digits/);
  });
});

Deno.test("tmux facts behind checkName: what tmux rewrites, drops and keeps", async () => {
  await withTmux(async (t) => {
    const made = async (name: string) =>
      (await t.tmux("new-session", "-d", "-s", name, "-P", "-F", "#{session_name}")).replace(
        /\n$/,
        "",
      );
    assert.equal(await made("a.b:c"), "a_b_c");
    assert.equal(await made("back\\slash"), "back\\\\slash");
    assert.equal(await made("tab\there"), "tab\\there");
    await t.tmux("rename-window", "-t", t.ids.windowId, "--", "w\\x\ty");
    assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), "w\\\\x\\ty");
    await t.tmux("select-pane", "-t", t.ids.paneId, "-T", "kept\\title");
    await t.tmux("select-pane", "-t", t.ids.paneId, "-T", "dropped\ttitle");
    assert.equal(await fmt(t, t.ids.paneId, "#{pane_title}"), "kept\\title");
    // rename-* escape '$' before a name's first letter (new-window -n does not); tmux keeps
    // '##[' (the escaped '#[') as it is.
    await t.tmux("rename-window", "-t", t.ids.windowId, "--", "a$b ${c} $1 $-");
    assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), "a\\$b \\${c} $1 $-");
    await t.tmux("rename-window", "-t", t.ids.windowId, "--", "##[fg=red]");
    assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), "##[fg=red]");
    // load-buffer with nothing on stdin stores no buffer at all, and says nothing.
    const empty = await t.tmuxRaw("load-buffer", "-b", "empty", "-");
    assert.equal(empty.code, 0);
    assert.equal((await t.tmux("list-buffers", "-F", "#{buffer_name}")).trim(), "");
  });
});

Deno.test("tmux facts behind checkNames: characters tmux cannot print", async () => {
  await withTmux(async (t) => {
    const sep = "x\u2028y";
    const octal = "x\\342\\200\\250y";
    // rename-session, rename-window, new-session -s and break-pane -n store it octal-escaped.
    await t.tmux("rename-session", "-t", t.ids.sessionId, "--", sep);
    assert.equal(await fmt(t, t.ids.sessionId, "#{session_name}"), octal);
    await t.tmux("rename-session", "-t", t.ids.sessionId, "main");
    await t.tmux("rename-window", "-t", t.ids.windowId, "--", sep);
    assert.equal(await fmt(t, t.ids.windowId, "#{window_name}"), octal);
    const made =
      (await t.tmux("new-session", "-d", "-s", sep, "-n", sep, "-P", "-F", "#{session_id}"))
        .trim();
    assert.equal(await fmt(t, made, "#{session_name}"), octal);
    // new-session -n and new-window -n store it as it is.
    assert.equal(await fmt(t, made, "#{window_name}"), sep);
    const pane = (await t.tmux("split-window", "-d", "-t", made, "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    const broken =
      (await t.tmux("break-pane", "-d", "-s", pane, "-n", sep, "-P", "-F", "#{window_id}"))
        .trim();
    assert.equal(await fmt(t, broken, "#{window_name}"), octal);
    // A title holding it is dropped.
    await t.tmux("select-pane", "-t", t.ids.paneId, "-T", "kept");
    await t.tmux("select-pane", "-t", t.ids.paneId, "-T", sep);
    assert.equal(await fmt(t, t.ids.paneId, "#{pane_title}"), "kept");
    // How the tools ask without changing anything: #{=N:} drops exactly what tmux cannot
    // print, and #{l:} keeps text that is not ASCII from being read as a format.
    const probe = "[\u2028\u00e9\u0378\u{1F642}\u0301\uE000\uFFFE\u4E2D]";
    assert.equal(
      (await t.tmux("display-message", "-p", "--", `#{=65536:#{l:${probe}}}`)).replace(/\n$/, ""),
      "[\u00e9\u{1F642}\u0301\uE000\u4E2D]",
    );
  });
});
