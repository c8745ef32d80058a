/**
 * ifShellStream: what follows the test is handed on only when the test passed, and the answer
 * line no pane can predict is never handed on with it.
 */
import assert from "node:assert/strict";
import { withRunner } from "../../tests/helpers/tmux.ts";
import { ifShellStream, ifShellThen } from "./if_shell.ts";

Deno.test("ifShellStream hands on what follows a test that passed, and nothing after one that failed", async () => {
  await withRunner(async (t, runner) => {
    const pane = t.ids.paneId;
    // Printed by tmux as a pane's text would be: a line shaped like the answer line too.
    const then = ["display-message", "-p", "tmux-mcp-yes-0123456789abcdef; after"];
    for (const [test, passes] of [["true", true], ["false", false]] as const) {
      const chunks: Uint8Array[] = [];
      const said = await ifShellStream(
        runner,
        { socketName: t.socket },
        pane,
        test,
        then,
        (chunk) => {
          chunks.push(chunk.slice());
        },
      );
      assert.equal(said, passes, test);
      const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
      assert.equal(text, passes ? "tmux-mcp-yes-0123456789abcdef; after\n" : "", test);
      // The same as the collected answer gives.
      const whole = await ifShellThen(runner, { socketName: t.socket }, pane, test, then);
      assert.equal(whole === null ? "" : new TextDecoder().decode(whole), text, test);
    }
  });
});
