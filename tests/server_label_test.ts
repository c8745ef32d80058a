/**
 * How a failure names its server when the process was started inside tmux (`TMUX` set, no
 * `--socket`/`--socket-path`): tmux then reaches the server `TMUX` names, not its default
 * socket. A failure that said "the default socket" there sent the model to `socket_name`
 * "default", another server (list_servers shows it running), while the one it uses is gone.
 */

import assert from "node:assert/strict";
import { callOver, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, SOCKET_PREFIX } from "./helpers/tmux.ts";

Deno.test("with TMUX naming a server that died, failures name its socket path, not the default socket", async () => {
  const dir = await Deno.makeTempDir({ prefix: SOCKET_PREFIX });
  const env = cleanEnv({ TMUX_TMPDIR: dir });
  const tmux = (...args: string[]) =>
    sh("tmux", ["-u", "-f", "/dev/null", ...args], { env }).then((r) => r.stdout);
  // The private default server, which runs; and the one TMUX names, which has ended.
  const dead = `${dir}/mine`;
  let server: StdioServer | undefined;
  try {
    await tmux("new-session", "-d", "-s", "other", "sh");
    const pid = (await tmux("-S", dead, "new-session", "-d", "-P", "-F", "#{pid}", "sh")).trim();
    await tmux("-S", dead, "kill-server");
    const { cmd, args } = startCommand();
    server = new StdioServer(
      cmd,
      args,
      { ...env, TMUX: `${dead},${pid},0`, TMUX_PANE: "%0" },
    );
    await server.initialize();
    const calls: [string, Record<string, unknown>][] = [
      ["capture_pane", { paneId: "%0" }],
      ["send_keys", { paneId: "%0", keys: ["echo hi"] }],
      ["list_sessions", {}],
      ["list_panes", {}],
      ["get_pane_info", { paneId: "%0" }],
    ];
    for (const [name, callArgs] of calls) {
      const { isError, text } = await callOver(server, name, callArgs);
      assert.doesNotMatch(text, /default socket/, `${name}: ${text}`);
      assert.ok(text.includes(dead), `${name} names the socket TMUX names: ${text}`);
      if (name.startsWith("list_")) continue;
      assert.ok(isError, `${name}: ${text}`);
    }
    await server.endsCleanly();
  } finally {
    await server?.kill();
    await tmux("kill-server").catch(() => {});
    await tmux("-S", dead, "kill-server").catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
