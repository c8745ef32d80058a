/**
 * A server that runs for months keeps nothing for good of the panes and tmux servers it was once
 * handed: a run_command's run is forgotten once it is read over or its pane is gone, and only
 * the start of its command is kept meanwhile; the moments after typing are forgotten once over;
 * list_panes notes only the sizes of large servers. (Key-name verdicts: src/tmux/keys_test.ts.)
 */

import assert from "node:assert/strict";
import { endsFor } from "../src/tools/prompt_programs.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { connect, withTmux } from "./helpers/mcp.ts";
import { testSocketName, TestTmux, waitFor } from "./helpers/tmux.ts";

Deno.test("send_keys: the moments noted after typing into panes since gone are forgotten once over", async () => {
  const runner = new TmuxRunner();
  await withTmux(async (t, c) => {
    for (let i = 0; i < 12; i++) {
      const made = await c.ok<{ paneId: string }>("split_window", {
        paneId: t.ids.paneId,
        command: "sh",
      });
      await t.prompt(made.paneId);
      await c.ok("send_keys", { paneId: made.paneId, text: `echo ${i}` });
      await c.ok("kill_pane", { paneId: made.paneId });
    }
    const ends = endsFor(runner);
    // Typing goes on in the one pane left: the moments of the others pass, and go.
    await waitFor(async () => {
      await c.ok("send_keys", { paneId: t.ids.paneId, text: "true" });
      return ends.size === 1;
    }, `one moment kept (${ends.size} now)`);
  }, { runner });
});

Deno.test("list_panes keeps nothing of sockets with no server, nor of small servers", async () => {
  const runner = new TmuxRunner();
  // The per-server tables every module keeps for this runner, as they are made.
  const tables: Map<unknown, unknown>[] = [];
  const set = WeakMap.prototype.set;
  WeakMap.prototype.set = function (this: WeakMap<WeakKey, unknown>, key, value) {
    if (key === runner && value instanceof Map) tables.push(value);
    return set.call(this, key, value);
  };
  const t = await TestTmux.start();
  try {
    const c = await connect({ socketName: t.socket, runner });
    try {
      const names = Array.from({ length: 20 }, () => testSocketName());
      for (const name of names) {
        const listed = await c.ok<{ panes: unknown[] }>("list_panes", { socket_name: name });
        assert.deepEqual(listed.panes, []);
      }
      assert.equal((await c.ok<{ panes: unknown[] }>("list_panes")).panes.length, 1);
      const kept = tables.flatMap((table) =>
        [...table.keys()].filter((key) =>
          typeof key === "string" && [...names, t.socket].some((name) => key.includes(name)) &&
          typeof table.get(key) === "number"
        )
      );
      assert.deepEqual(kept, [], "no listing size kept");
    } finally {
      await c.close();
    }
  } finally {
    WeakMap.prototype.set = set;
    await t.kill();
  }
});
