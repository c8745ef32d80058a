/**
 * A NUL character in a value a tool hands tmux: tmux ends an argument at a NUL, so the command
 * it would run is cut there (a control line drops what follows, a respawn's command and its
 * guard's refusal branch with it), and a tmux process cannot even be started with one. Each
 * tool refuses such a value up front, naming the argument, and tmux is left as it was; a NUL
 * that reaches the runner anyway is refused there, readably, and nothing is run.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { controlLine } from "../src/tmux/command_line.ts";
import { ControlUnavailable } from "../src/tmux/control_protocol.ts";
import { TmuxError } from "../src/tmux/tmux_error.ts";

/** A failure that names the NUL character (and no missing tmux). */
function namesNul(text: string, argument: string): void {
  assert.match(text, /NUL/, text);
  assert.ok(text.includes(argument), `names ${argument}: ${text}`);
  assert.doesNotMatch(text, /Install tmux|not installed|Internal error/, text);
}

Deno.test("respawn_pane with a NUL in an environment value is refused; the pane runs on", async () => {
  await withTmux(async (t, c) => {
    const w = await c.ok<{ paneId: string }>("create_window", {
      session: "main",
      command: "sleep 1000",
    });
    await t.foreground(w.paneId, "sleep");
    const state = () =>
      t.tmux("display-message", "-p", "-t", w.paneId, "#{pane_pid} [#{pane_start_command}]");
    const before = await state();
    const text = await c.fail("respawn_pane", {
      paneId: w.paneId,
      kill: true,
      environment: { MODE: "fast\u0000" },
      command: "sleep 2000",
    });
    namesNul(text, "environment.MODE");
    assert.equal(await state(), before, "same process, same start command");
    const lone = await c.fail("respawn_pane", {
      paneId: w.paneId,
      kill: true,
      command: "sleep 2000 \ud800",
    });
    assert.match(lone, /command/);
    assert.match(lone, /surrogate/);
    assert.equal(await state(), before);
  });
});

Deno.test("create_window, split_window, create_session with a NUL are refused, naming it", async () => {
  await withTmux(async (t, c) => {
    const windows = () => t.tmux("list-windows", "-a", "-F", "#{window_id}");
    const panes = () => t.tmux("list-panes", "-a", "-F", "#{pane_id}");
    const before = [await windows(), await panes()];
    namesNul(
      await c.fail("create_window", { session: "main", command: "echo a\u0000b; sleep 50" }),
      "command",
    );
    namesNul(
      await c.fail("create_window", { session: "main", environment: { V: "a\u0000b" } }),
      "environment.V",
    );
    namesNul(
      await c.fail("create_window", { session: "main", startDirectory: "/tmp\u0000/x" }),
      "startDirectory",
    );
    namesNul(
      await c.fail("split_window", { paneId: t.ids.paneId, command: "sleep 5\u0000x" }),
      "command",
    );
    namesNul(await c.fail("create_session", { name: "s2", command: "sleep 5\u0000x" }), "command");
    assert.deepEqual([await windows(), await panes()], before, "nothing was made");
  });
});

Deno.test("pipe_pane, set_hook, set_environment with a NUL are refused; nothing is stored", async () => {
  await withTmux(async (t, c) => {
    const pane = t.ids.paneId;
    const piped = async () =>
      (await t.tmux("display-message", "-p", "-t", pane, "#{pane_pipe}")).trim();
    namesNul(
      await c.fail("pipe_pane", { paneId: pane, command: "cat > /dev/null\u0000; touch /x" }),
      "command",
    );
    namesNul(await c.fail("pipe_pane", { paneId: pane, path: "/tmp/a\u0000b" }), "path");
    assert.equal(await piped(), "0", "no pipe opened");
    namesNul(
      await c.fail("set_hook", {
        name: "after-new-window",
        command: "display-message hi\u0000; run-shell 'touch /x'",
      }),
      "command",
    );
    assert.equal(await t.tmux("show-hooks", "-g", "after-new-window"), "after-new-window\n");
    namesNul(await c.fail("set_environment", { name: "ZZ", value: "a\u0000b" }), "value");
    assert.equal((await t.tmuxRaw("show-environment", "-g", "ZZ")).code, 1, "ZZ not set");
  });
});

Deno.test("a NUL reaching the runner is refused readably, and nothing runs", async () => {
  assert.throws(
    () => controlLine(["display-message", "-p", "a\u0000b"]),
    (e: unknown) =>
      e instanceof TmuxError && !(e instanceof ControlUnavailable) && /NUL/.test(e.message),
  );
  await withTmux(async (t, c) => {
    const runner = new TmuxRunner();
    try {
      await assert.rejects(
        runner.run({ socketName: t.socket }, ["set-option", "-g", "@nul", "a\u0000b"]),
        (e: unknown) =>
          e instanceof TmuxError && e.kind === "failed" &&
          /NUL character; nothing was run/.test(e.message),
      );
    } finally {
      await runner.close();
    }
    assert.equal((await t.tmux("show-options", "-gqv", "@nul")).trim(), "");
    // A tool that takes its text as it is (display_message) meets the runner's refusal.
    const text = await c.fail("display_message", { format: "a\u0000b", target: t.ids.paneId });
    assert.match(text, /NUL character; nothing was run/);
    assert.doesNotMatch(text, /Install tmux/);
  });
});
