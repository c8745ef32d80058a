/**
 * End of input and a stop signal end the real process within a second (DESIGN, Safety) when
 * everything its exit waits for holds back at once: a call still running, tmux not answering
 * (stopped: the control client's goodbye never answered), and a client that stopped reading its
 * stdout with far more answers queued than a pipe holds. Each step of the exit had its own
 * bound and they added up past the second; they now share one deadline (serve.ts), and the
 * transport does not wait for a client that does not read.
 *
 * @module
 */

import assert from "node:assert/strict";
import { timed, tookText } from "./helpers/load_clock.ts";
import { startCommand } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, trackChild, waitFor } from "./helpers/tmux.ts";

const encoder = new TextEncoder();

/** The real server on `socket`, its stdout never read (a client that stopped reading). */
function unreadServer(socket: string): {
  child: Deno.ChildProcess;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  send: (message: unknown) => Promise<void>;
} {
  const { cmd, args } = startCommand();
  const child = new Deno.Command(cmd, {
    args: [...args, "--socket", socket],
    env: cleanEnv(),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  trackChild(child, "the MCP server (its stdout never read)");
  const writer = child.stdin.getWriter();
  const send = (message: unknown) => writer.write(encoder.encode(`${JSON.stringify(message)}\n`));
  return { child, writer, send };
}

for (const how of ["stdin EOF", "SIGTERM"] as const) {
  Deno.test(`exit: ${how} ends the process within a second with a call running, tmux stopped and the client not reading`, async () => {
    const t = await TestTmux.start();
    const { child, writer, send } = unreadServer(t.socket);
    const tmuxPid = Number((await t.tmux("display-message", "-p", "#{pid}")).trim());
    let stopped = false;
    try {
      await send({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "exit", version: "1" },
        },
      });
      await send({ jsonrpc: "2.0", method: "notifications/initialized" });
      // A call still running when the client goes (the exit waits for it to be answered)...
      await send({
        jsonrpc: "2.0",
        id: "wait",
        method: "tools/call",
        params: {
          name: "wait_for_text",
          arguments: { paneId: t.ids.paneId, patterns: ["NEVER"], timeoutMs: 60_000 },
        },
      });
      // ...and far more answers than a pipe holds (each lists every tool), never read.
      for (let i = 1; i <= 100; i++) await send({ jsonrpc: "2.0", id: i, method: "tools/list" });
      // The wait has its control client: its goodbye is what a stopped tmux never answers.
      await waitFor(
        async () => (await t.tmux("list-clients", "-F", "#{client_termname}")).includes("tmux-mcp"),
        "the server's control client",
      );
      Deno.kill(tmuxPid, "SIGSTOP");
      stopped = true;
      const { value: ended, took } = await timed(async () => {
        if (how === "SIGTERM") child.kill("SIGTERM");
        else await writer.close();
        let timer: ReturnType<typeof setTimeout> | undefined;
        const ended = await Promise.race([
          child.status.then(() => true),
          new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), 10_000)),
        ]);
        clearTimeout(timer);
        return ended;
      }, child.pid);
      assert.ok(ended, "the process did not end within 10 s");
      // The exit's deadline is 850 ms from the moment it is told (serve.ts); every step stops
      // at its share of it whatever tmux and the client do.
      assert.ok(took.own < 1_000, `${how}: the process ended after ${tookText(took)}`);
    } finally {
      if (stopped) Deno.kill(tmuxPid, "SIGCONT");
      try {
        child.kill("SIGKILL");
      } catch {
        // gone
      }
      await child.status;
      await writer.close().catch(() => {});
      await child.stdout.cancel().catch(() => {});
      await t.kill();
    }
  });
}
