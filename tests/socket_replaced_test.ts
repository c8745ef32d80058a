/**
 * A socket replaced under a running server: tmux-mcp holds a control connection to server A;
 * A's socket file goes (a tmp cleaner, an `rm`) while A runs on, and the person starts tmux
 * again, getting server B on the same path, with a session whose first pane is `%0` too.
 * From then on the control connection reaches A and every tmux process started reaches B.
 * Nothing read from one may be acted on in the other, nothing said about "the server" may
 * describe the one nobody can reach by name any more, and the next call works with B.
 */

import assert from "node:assert/strict";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { TestTmux } from "./helpers/tmux.ts";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

/** What the tests know of both servers. */
interface Servers {
  /** Server A: the one our control connection reaches, no longer on the socket. */
  readonly old: { readonly pid: number; readonly socketPath: string };
  /** Server B: the one on the socket now, with its session `work` and its pane. */
  readonly now: { readonly pid: number; readonly paneId: string };
}

/** Runs tmux on server A through the path its socket was moved to. */
async function onOld(servers: Servers, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("tmux", {
    args: ["-S", servers.old.socketPath, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

async function withReplacedSocket(
  fn: (t: Started, c: TestClient, servers: Servers) => Promise<void>,
  /** What the person did on server A before it lost its socket (tmux commands). */
  configure: string[][] = [],
): Promise<void> {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  let moved = "";
  try {
    for (const args of configure) await t.tmux(...args);
    c = await connect({ socketName: t.socket });
    await c.ok("list_panes"); // the control connection to A is open
    const { socketPath, pid } = await t.facts();
    moved = `${socketPath}.old`;
    await Deno.rename(socketPath, moved);
    const paneId = (await t.tmux("new-session", "-d", "-s", "work", "-P", "-F", "#{pane_id}", "sh"))
      .trim();
    const now = await t.facts();
    assert.notEqual(now.pid, pid);
    await fn(t, c, { old: { pid, socketPath: moved }, now: { pid: now.pid, paneId } });
  } finally {
    await c?.close();
    await t.kill();
    if (moved) await Deno.remove(moved).catch(() => {});
  }
}

/** The panes a server holds, as `session:pane` lines. */
const PANES = ["list-panes", "-a", "-F", "#{session_name}:#{pane_id}"];

/** The sessions list_panes reports. */
async function sessionsListed(c: TestClient): Promise<string[]> {
  const { panes } = await c.ok<{ panes: { placements: { sessionName: string }[] }[] }>(
    "list_panes",
  );
  return [...new Set(panes.flatMap((p) => p.placements.map((at) => at.sessionName)))].sort();
}

const CHANGED = /tmux server on .* changed since this call read it \(pid (\d+) then, (\d+) now\)/;

Deno.test("socket replaced: kill_pane kills nothing of the new server, says why, and the next call sees it", async () => {
  await withReplacedSocket(async (t, c, servers) => {
    assert.equal(servers.now.paneId, "%0", "both servers have a pane %0");
    const text = await c.fail("kill_pane", { paneId: "%0" });
    const [, then, now] = CHANGED.exec(text) ?? [];
    assert.ok(then, text);
    assert.deepEqual([Number(then), Number(now)], [servers.old.pid, servers.now.pid], text);
    assert.match(text, /nothing was done/i);
    assert.equal((await t.tmux(...PANES)).trim(), "work:%0", "the person's new pane lives");
    assert.equal((await onOld(servers, ...PANES)).trim(), "main:%0", "and so does the old one");
    // The connection to the old server was let go: what is read now is the server on the socket.
    assert.deepEqual(await sessionsListed(c), ["work"]);
  });
});

Deno.test("socket replaced: create_window creates nothing where it did not look", async () => {
  await withReplacedSocket(async (t, c, servers) => {
    const windows = ["list-windows", "-a", "-F", "#{session_name}:#{window_id}"];
    const before = [await t.tmux(...windows), await onOld(servers, ...windows)];
    // The listing (over the old connection) shows session `main`: a window is asked for there.
    const text = await c.fail("create_window", { session: "main" });
    assert.match(text, CHANGED);
    assert.deepEqual([await t.tmux(...windows), await onOld(servers, ...windows)], before);
    // Called again, it looks at the server on the socket, which has no session `main`.
    assert.match(await c.fail("create_window", { session: "main" }), /No session "main"/);
  });
});

Deno.test("socket replaced: a refused create_window leaves the new server's window-size as it is", async () => {
  // Under window-size manual a creation lends `latest` out for its step, and gives `manual`
  // back should the step not answer: never to a server it did not lend it from.
  await withReplacedSocket(async (t, c, servers) => {
    assert.match(await c.fail("create_window", { session: "main" }), CHANGED);
    assert.equal((await t.tmux("show-options", "-gwv", "window-size")).trim(), "latest");
    assert.equal((await onOld(servers, "show-options", "-gwv", "window-size")).trim(), "manual");
  }, [["set-option", "-gw", "window-size", "manual"]]);
});

Deno.test("socket replaced: buffers are loaded only where the call looked", async () => {
  const buffers = ["list-buffers", "-F", "#{buffer_name}"];
  const calls: [string, Record<string, unknown>][] = [
    ["load_buffer", { text: "for the old server" }],
    // A paste too long to travel inline is loaded into a buffer ahead of its guarded step.
    ["paste_text", { paneId: "%0", text: "x".repeat(20_000) }],
  ];
  for (const [tool, args] of calls) {
    await withReplacedSocket(async (t, c, servers) => {
      assert.match(await c.fail(tool, args), CHANGED);
      assert.equal((await t.tmux(...buffers)).trim(), "", `${tool}: none on the socket's server`);
      assert.equal((await onOld(servers, ...buffers)).trim(), "", `${tool}: none on the old one`);
    });
  }
});

Deno.test("socket replaced: a command that cannot travel over the control connection runs only where the call looked", async () => {
  // A value holding a newline cannot be a control-mode line: the command starts tmux instead.
  await withReplacedSocket(async (t, c, servers) => {
    const args = { scope: "window", target: "@0", name: "@note", value: "two\nlines" };
    assert.match(await c.fail("set_option", args), CHANGED);
    const note = ["show-options", "-wqv", "-t", "@0", "@note"];
    assert.equal((await t.tmux(...note)).trim(), "", "not set on the server on the socket");
    assert.equal((await onOld(servers, ...note)).trim(), "", "nor on the old one");
    // Called again, it reads and sets the server on the socket.
    await c.ok("set_option", args);
    assert.equal(await t.tmux(...note), "two\nlines\n");
  });
});

/** Asserts a refusal names the server the call read, then the one on the socket. */
function assertChanged(text: string, servers: Servers): void {
  const [, then, now] = CHANGED.exec(text) ?? [];
  assert.ok(then, text);
  assert.deepEqual([Number(then), Number(now)], [servers.old.pid, servers.now.pid], text);
}

Deno.test("socket replaced: display_message expands a format only on the server the call read", async () => {
  // A line break cannot travel over the control connection: the expansion starts tmux, which
  // reaches the new server (where a `#(...)` would run too), though %0 was looked up on the old.
  await withReplacedSocket(async (_t, c, servers) => {
    const args = { target: "%0", format: "#{pid}\n#{session_name}" };
    assertChanged(await c.fail("display_message", args), servers);
    // Called again, it looks %0 up on the server on the socket and expands it there.
    const { text } = await c.ok<{ text: string }>("display_message", args);
    assert.equal(text, `${servers.now.pid}\nwork`);
  });
});

Deno.test("socket replaced: show_buffer shows the buffer it listed, not the new server's namesake", async () => {
  await withReplacedSocket(async (t, c, servers) => {
    // The person copies something on the new server: tmux names it buffer0 there too.
    await t.tmux("set-buffer", "new server text");
    const text = await c.fail("show_buffer", { name: "buffer0" });
    assertChanged(text, servers);
    assert.doesNotMatch(text, /new server text/);
    // Called again, it lists and reads the buffers of the server on the socket.
    const shown = await c.ok<{ text: string; size: number }>("show_buffer", { name: "buffer0" });
    assert.deepEqual([shown.text, shown.size], ["new server text", 15]);
  }, [["set-buffer", "old server's text"]]);
});

Deno.test("socket replaced: show_buffer reading a large buffer as it streams shows the one it listed, not the new server's namesake", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-test-" });
  try {
    // 50 000 lines of 100 bytes: more than show_buffer reads whole, on each server.
    const file = async (who: string) => {
      const path = `${dir}/${who}`;
      const line = `${who} `.padEnd(99, "x");
      await Deno.writeTextFile(path, `${Array(50_000).fill(line).join("\n")}\n${who} end`);
      return path;
    };
    const old = await file("old");
    const now = await file("new");
    await withReplacedSocket(async (t, c, servers) => {
      await t.tmux("load-buffer", "-b", "buffer0", now);
      const text = await c.fail("show_buffer", { name: "buffer0" });
      assertChanged(text, servers);
      assert.doesNotMatch(text, /new /);
      // Called again, it reads the server on the socket: the end of its buffer.
      const shown = await c.ok<{ text: string; totalLines: number; droppedLines: number }>(
        "show_buffer",
        { name: "buffer0" },
      );
      assert.ok(shown.text.endsWith("x\nnew end"), shown.text.slice(-50));
      assert.equal(shown.totalLines, 50_001);
      assert.ok(shown.droppedLines > 49_000, String(shown.droppedLines));
    }, [["load-buffer", "-b", "buffer0", old]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("socket replaced: paste_buffer pastes no buffer of a server it did not list", async () => {
  await withReplacedSocket(async (t, c, servers) => {
    await t.tmux("set-buffer", "echo new-server-text");
    const text = await c.fail("paste_buffer", { bufferName: "buffer0", paneId: "%0" });
    assertChanged(text, servers);
    // Refused before anything was pasted: neither server's %0 shows a buffer.
    const screens = [
      await onOld(servers, "capture-pane", "-p", "-t", "%0"),
      await t.tmux("capture-pane", "-p", "-t", servers.now.paneId),
    ];
    for (const screen of screens) assert.doesNotMatch(screen, /server-text/, screen);
  }, [["set-buffer", "echo old-server-text"]]);
});

Deno.test("socket replaced: get_server_info describes the server on the socket", async () => {
  await withReplacedSocket(async (_t, c, servers) => {
    const info = await c.ok<{ pid: number; sessions: number }>("get_server_info");
    assert.equal(info.pid, servers.now.pid);
    assert.equal(info.sessions, 1);
    assert.deepEqual(await sessionsListed(c), ["work"]);
  });
});

Deno.test("socket replaced: list_servers lets the connection to the old server go", async () => {
  await withReplacedSocket(async (_t, c, servers) => {
    const { servers: found } = await c.ok<{ servers: { pid: number; roles: string[] }[] }>(
      "list_servers",
    );
    assert.equal(found.find((s) => s.roles.includes("configured"))?.pid, servers.now.pid);
    assert.deepEqual(await sessionsListed(c), ["work"]);
  });
});

Deno.test("socket replaced, no server started again: get_server_info says none runs there", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  let moved = "";
  try {
    c = await connect({ socketName: t.socket });
    await c.ok("list_panes");
    const { socketPath } = await t.facts();
    moved = `${socketPath}.old`;
    await Deno.rename(socketPath, moved);
    const info = await c.ok<{ running: boolean }>("get_server_info");
    assert.equal(info.running, false);
  } finally {
    await c?.close();
    await t.kill();
    if (moved) await Deno.remove(moved).catch(() => {});
  }
});
