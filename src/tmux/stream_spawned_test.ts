/**
 * streamSpawned on the server a call read: the answer passes through whole, even one that begins
 * like the marker another server would print, and chunk by chunk.
 */
import assert from "node:assert/strict";
import { withRunner } from "../../tests/helpers/tmux.ts";
import { execSpawned, streamSpawned } from "./control.ts";

Deno.test("streamSpawned hands on an answer that begins like another server's marker, whole", async () => {
  await withRunner(async (t, runner) => {
    const address = { socketName: t.socket };
    const pid = Number((await t.tmux("display-message", "-p", "#{pid}")).trim());
    for (
      const text of [
        "t",
        "tmux-mcp-other-server-",
        "tmux-mcp-other-server-0123abcd:42",
        "tmux-mcp-other-server-\n" + "x".repeat(5_000),
        "plain text",
      ]
    ) {
      await t.tmux("set-buffer", "-b", "b", text);
      const chunks: Uint8Array[] = [];
      await streamSpawned(runner, address, ["show-buffer", "-b", "b"], (chunk) => {
        chunks.push(chunk.slice());
      }, { serverPid: pid });
      const got = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
      assert.equal(got, text, JSON.stringify(text.slice(0, 40)));
      // As the collected answer gives it.
      const whole = await execSpawned(runner, address, ["show-buffer", "-b", "b"], {
        serverPid: pid,
      });
      assert.equal(new TextDecoder().decode(whole.stdout), text);
    }
  });
});
