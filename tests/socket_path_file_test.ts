/**
 * A configured socket path that no server answers on but where something is: an ordinary file,
 * a FIFO, a directory, or a socket a server left when it was killed. tmux connects there, is
 * refused (ECONNREFUSED), and to start a server deletes whatever the path names. The MCP server
 * cannot look at the path itself (it may run tmux and ssh, nothing else), so create_session
 * tells "refused" from "nothing there" by tmux's own words, and for a path the person configured
 * (--socket-path, TMUX_MCP_SOCKET_PATH, TMUX) leaves it alone and says what to do.
 */

import assert from "node:assert/strict";
import { connect } from "./helpers/mcp.ts";
import { callOver, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, SOCKET_PREFIX, TestTmux, waitFor } from "./helpers/tmux.ts";

const DATA = "precious user data\n";

/** A tmux process on the server at socket path `path` (its stdout; throws on failure). */
function tmuxAt(path: string, ...args: string[]): Promise<string> {
  return sh("tmux", ["-u", "-f", "/dev/null", "-S", path, ...args]).then((r) => r.stdout);
}

/** A private folder for a test's paths, removed after `fn`. */
async function inFolder(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: SOCKET_PREFIX });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Starts a server at `path` and kills it with SIGKILL: its socket stays behind. */
async function staleSocket(path: string): Promise<void> {
  const pid = Number((await tmuxAt(path, "new-session", "-d", "-P", "-F", "#{pid}", "sh")).trim());
  Deno.kill(pid, "SIGKILL");
  await waitFor(
    async () => (await sh("tmux", ["-S", path, "list-sessions"], { allowFail: true })).code !== 0,
    "the killed server to stop answering",
  );
}

Deno.test("an ordinary file or a FIFO as --socket-path: create_session refuses and leaves it", async () => {
  await inFolder(async (dir) => {
    const file = `${dir}/notasocket.txt`;
    await Deno.writeTextFile(file, DATA);
    const fifo = `${dir}/fifo`;
    await sh("mkfifo", [fifo]);
    for (const path of [file, fifo]) {
      const c = await connect({ socketPath: path });
      try {
        // What the listings and lookups say there promises no start create_session refuses.
        const listed = await c.call("list_sessions", {});
        const note = (listed.content?.[0] as { text: string }).text;
        assert.match(note, /create_session starts one where nothing is at that path/);
        assert.match(note, /test -S '[^']+' && rm '[^']+'/);
        const lookup = await c.fail("get_pane_info", { paneId: "%0" });
        assert.match(lookup, /where something is \(a socket a server left/);
        const refusal = await c.fail("create_session", { name: "x", command: "sleep 30" });
        assert.ok(refusal.includes(path), refusal);
        assert.match(refusal, /no tmux server answers/i);
        assert.match(refusal, /not a socket|no socket/);
        assert.match(refusal, /would delete it/);
        // The one safe removal: only a socket (test -S), never the file.
        assert.match(refusal, /test -S '[^']+' && rm '[^']+'/);
        assert.match(refusal, /--socket-path/);
      } finally {
        await c.close();
      }
      const info = await Deno.lstat(path);
      if (path === file) {
        assert.ok(info.isFile);
        assert.equal(await Deno.readTextFile(file), DATA);
      } else {
        assert.ok(info.isFifo, "still a FIFO");
      }
    }
  });
});

Deno.test("a directory as --socket-path: create_session refuses with a hint to fix the path", async () => {
  await inFolder(async (dir) => {
    const folder = `${dir}/folder`;
    await Deno.mkdir(folder);
    await Deno.writeTextFile(`${folder}/kept`, DATA);
    const c = await connect({ socketPath: folder });
    try {
      const refusal = await c.fail("create_session", { name: "x" });
      assert.ok(refusal.includes(folder), refusal);
      assert.match(refusal, /directory/);
      assert.match(refusal, /--socket-path/);
      assert.doesNotMatch(refusal, /^tmux refused/);
    } finally {
      await c.close();
    }
    assert.equal(await Deno.readTextFile(`${folder}/kept`), DATA);
  });
});

Deno.test("a socket left by a killed server at --socket-path: refused until removed, then started", async () => {
  await inFolder(async (dir) => {
    const path = `${dir}/s`;
    await staleSocket(path);
    const c = await connect({ socketPath: path });
    try {
      const refusal = await c.fail("create_session", { name: "x" });
      assert.match(refusal, /a socket a server left/);
      assert.ok((await Deno.lstat(path)).isSocket, "the stale socket is still there");
      // What the hint says to do, then the call again.
      await sh("sh", ["-c", `test -S '${path}' && rm '${path}'`]);
      await c.ok("create_session", { name: "x" });
      assert.ok((await tmuxAt(path, "list-sessions", "-F", "#{session_name}")).includes("x"));
    } finally {
      await c.close();
      await tmuxAt(path, "kill-server").catch(() => {});
    }
  });
});

Deno.test("a server create_session started at --socket-path and that ended since: it starts again", async () => {
  await inFolder(async (dir) => {
    const path = `${dir}/s`;
    const c = await connect({ socketPath: path });
    try {
      await c.ok("create_session", { name: "one" });
      await tmuxAt(path, "kill-server");
      // tmux 3.3a leaves its socket behind whenever its server ends.
      assert.ok((await Deno.lstat(path)).isSocket);
      await c.ok("create_session", { name: "two" });
    } finally {
      await c.close();
      await tmuxAt(path, "kill-server").catch(() => {});
    }
  });
});

Deno.test("a socket left by a killed server on a -L name is still replaced by create_session", async () => {
  const t = await TestTmux.start();
  try {
    Deno.kill((await t.facts()).pid, "SIGKILL");
    await waitFor(
      async () => (await t.tmuxRaw("list-sessions")).code !== 0,
      "the killed server to stop answering",
    );
    const c = await connect({ socketName: t.socket });
    try {
      await c.ok("create_session", { name: "again" });
    } finally {
      await c.close();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("TMUX naming an ordinary file: create_session refuses and leaves it", async () => {
  await inFolder(async (dir) => {
    const file = `${dir}/file`;
    await Deno.writeTextFile(file, DATA);
    const { cmd, args } = startCommand();
    const server = new StdioServer(
      cmd,
      args,
      cleanEnv({ TMUX_TMPDIR: dir, TMUX: `${file},1,0`, TMUX_PANE: "%0" }),
    );
    try {
      await server.initialize();
      const { isError, text } = await callOver(server, "create_session", { name: "x" });
      assert.ok(isError, text);
      assert.ok(text.includes(file), text);
      assert.match(text, /TMUX/);
      assert.doesNotMatch(text, /default socket/);
      await server.endsCleanly();
    } finally {
      await server.kill();
    }
    assert.equal(await Deno.readTextFile(file), DATA);
  });
});
