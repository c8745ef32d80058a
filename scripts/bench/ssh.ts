/**
 * The SSH section: a tool call on a pane reached through a real sshd on localhost, against the
 * same call on the local server and against one `ssh DEST tmux ...` process per call.
 *
 * @module
 */

import { StdioServer } from "../../tests/helpers/stdio.ts";
import { startSshd } from "../../tests/helpers/sshd.ts";
import { dispose, started, tmux } from "./fixture.ts";
import { call, cmd, env, startArgs } from "./server.ts";
import { out, record } from "./table.ts";
import { stats, time } from "./timing.ts";

/** What the SSH section found: medians in ms. */
export const sshFigures: {
  operation: string;
  local: number;
  remote: number;
  perCall: number;
}[] = [];

/**
 * `capture_pane` and `send_keys` on a pane reached through SSH to localhost (a real sshd of its
 * own, as the tests start it), against the same call on the local server, and against the peers'
 * route: one `ssh DEST tmux ...` process per call (a handshake each).
 */
export async function benchSsh(): Promise<void> {
  const sshd = await startSshd(["bench"]);
  if (typeof sshd === "string") {
    out(`ssh: skipped: ${sshd}`);
    return;
  }
  const socket = `tmux-mcp-bench-${crypto.randomUUID().slice(0, 8)}`;
  try {
    await tmux(socket, "-f", "/dev/null", "new-session", "-d", "-s", "ssh", "-x", "80", "-y", "24");
    await tmux(socket, "set-option", "-g", "history-limit", "5000");
    const [pid, socketPath, paneId] = (await tmux(
      socket,
      "display-message",
      "-p",
      "-t",
      "ssh:",
      "#{pid}\t#{socket_path}\t#{pane_id}",
    )).trim().split("\t");
    started.set(socket, { pid: Number(pid) || 0, socketPath: socketPath ?? "" });
    await tmux(socket, "send-keys", "-t", paneId, "seq 1 200", "Enter");
    const server = new StdioServer(cmd, [
      ...startArgs,
      "--socket",
      socket,
      "--ssh",
      "bench",
      "--ssh-config",
      sshd.config,
    ], env);
    try {
      await server.initialize();
      await server.request("tools/list");
      const perCall = async (...tmuxArgs: string[]) => {
        const r = await new Deno.Command("ssh", {
          args: ["-F", sshd.config, "-T", "-o", "BatchMode=yes", "bench", "tmux", ...tmuxArgs],
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).output();
        if (!r.success) throw new Error(new TextDecoder().decode(r.stderr));
      };
      const cases: [string, Record<string, unknown>, string[]][] = [
        ["capture_pane", { paneId }, ["-L", socket, "capture-pane", "-p", "-t", paneId]],
        ["send_keys", { paneId, text: "true", enter: true }, [
          "-L",
          socket,
          "send-keys",
          "-t",
          paneId,
          "true",
          "Enter",
        ]],
      ];
      for (const [tool, args, tmuxArgs] of cases) {
        const local = await time(() => call(server, tool, args));
        const remote = await time(() =>
          call(server, tool, { ...args, host: "bench", socket_name: socket })
        );
        const ssh = await time(() => perCall(...tmuxArgs));
        record(1, `${tool} over ssh (vs local)`, remote, local);
        record(1, `${tool} over ssh (vs ssh per call)`, remote, ssh);
        sshFigures.push({
          operation: tool,
          local: stats(local).median,
          remote: stats(remote).median,
          perCall: stats(ssh).median,
        });
      }
      await server.closeStdin();
    } finally {
      await server.kill();
    }
  } finally {
    await dispose(socket);
    await sshd.stop();
  }
}
