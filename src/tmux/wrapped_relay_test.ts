import assert from "node:assert/strict";
import { TestTmux } from "../../tests/helpers/tmux.ts";
import { wrappedNestedClient } from "../../tests/helpers/nested.ts";
import { TmuxRunner } from "./run.ts";
import { takeSnapshot } from "./snapshot.ts";
import { wrappedClients } from "./wrapped_relay.ts";

Deno.test("wrappedClients: a client under script is found by its process; a question tmux does not answer fails the read", async () => {
  const t = await TestTmux.start("work");
  const runner = new TmuxRunner();
  try {
    const relay = await wrappedNestedClient(t, t, "work");
    const address = { socketName: t.socket };
    const snapshot = await takeSnapshot(runner, address);
    const pane = snapshot.panes.find((p) => p.id === relay)!;
    const read = (argv: string[]) => runner.run(address, argv);
    const found = await wrappedClients(read, snapshot, [pane]);
    assert.deepEqual([...found.keys()], [relay]);
    assert.ok(snapshot.clients.some((c) => c.name === found.get(relay)!.name));
    // Not answered (a loaded or dying tmux): never taken for "no client", which would let the
    // keys through unjudged. (Answers are kept per process, so a fresh client is asked about.)
    const wrappedAgain = await wrappedNestedClient(t, t, "work");
    const again = await takeSnapshot(runner, address);
    const unanswered = () => Promise.reject(new Error("tmux did not answer"));
    await assert.rejects(
      wrappedClients(unanswered, again, again.panes.filter((p) => p.id === wrappedAgain)),
      /did not answer/,
    );
    // Many panes and clients: a question past a tmux process's 16 KB goes as a file, answered.
    for (let i = 0; i < 4; i++) await t.attach("work");
    const window = (await t.tmux("new-window", "-d", "-P", "-F", "#{window_id}", "sh")).trim();
    for (let i = 0; i < 7; i++) {
      await t.tmux("split-window", "-d", "-t", window, "sh");
      await t.tmux("select-layout", "-t", window, "tiled");
    }
    const many = await takeSnapshot(runner, address);
    const panes = many.panes.filter((p) => p.windowId === window);
    let bytes = 0;
    const counting = (argv: string[]) => {
      bytes = argv.reduce((n, a) => n + new TextEncoder().encode(a).length + 1, 0);
      return read(argv);
    };
    assert.equal((await wrappedClients(counting, many, panes)).size, 0);
    assert.ok(bytes > 16_384, `${bytes} bytes`);
  } finally {
    await t.kill();
  }
});
