/**
 * A person's hooks that run when tmux-mcp's control client attaches (`client-attached`,
 * `client-session-changed`, `pane-focus-in`): what they print must neither break the
 * connection (tmux 3.3a writes a hook's `display-message -p` bare, outside any answer) nor
 * leave a pane in view-mode (where tmux shows a hook's `run-shell` output), and a person's own
 * view-mode is never taken from them.
 */

import assert from "node:assert/strict";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { TestTmux } from "./helpers/tmux.ts";

/** How many control clients are attached to `t` now. */
async function controlClients(t: TestTmux): Promise<number> {
  return (await t.tmux("list-clients", "-F", "#{client_control_mode}")).split("\n")
    .filter((l) => l === "1").length;
}

Deno.test("a person's client-attached hook that prints does not make every call attach a new control client", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    // An ordinary configuration line: greet whoever attaches (and count the attaches).
    await t.tmux("set-option", "-g", "@attaches", "0");
    await t.tmux(
      "set-hook",
      "-g",
      "client-attached",
      "display-message -p hello ; set-option -gF @attaches '#{e|+:#{@attaches},1}'",
    );
    c = await connect({ socketName: t.socket });
    for (let i = 0; i < 4; i++) await c.ok("list_panes");
    const attaches = Number((await t.tmux("show-options", "-gv", "@attaches")).trim());
    assert.equal(attaches, 1, `4 calls attached ${attaches} control clients`);
    assert.equal(await controlClients(t), 1, "the one client is still attached");
  } finally {
    await c?.close();
    await t.kill();
  }
});
