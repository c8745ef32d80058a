/**
 * The fuzz (`deno task fuzz`, tests/helpers/fuzz_run.ts) run small, on a fixed seed, so that
 * every change meets the same 80 random calls: what a longer run found once stays found.
 * Waits are given at most a second, so the run's length does not hang on a tool's default.
 *
 * @module
 */

import assert from "node:assert/strict";
import { badErrorText, saysOwnServerGone } from "./helpers/fuzz_checks.ts";
import { failureText, ToolFailure } from "../src/mcp/errors.ts";
import { TmuxError } from "../src/tmux/tmux_error.ts";
import { afterTyped } from "../src/tools/run_failure.ts";
import { ServerGone } from "../src/tools/pane_probe.ts";
import { fuzzHolds } from "./helpers/fuzz_holds.ts";
import { deadNote, keptBroken, keptView } from "./helpers/fuzz_hook.ts";
import { agentView, buildWorld } from "./helpers/fuzz_world.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

const SEED = 20261207;
const CALLS = 80;

// Each of the suite's fuzz runs has a tmux configuration of its own (fuzz_world.ts's CONFIGS):
// this one a person's tmux.conf, the hook judge's a keeper's, the fence's tmux's defaults.
Deno.test(`fuzz: ${CALLS} random calls (seed ${SEED}) under a person's tmux.conf break no invariant`, async () => {
  await fuzzHolds({ seed: SEED, calls: CALLS, config: 1 });
});

// The checks themselves: a fuzz that cries wolf is read less, and one that misses proves nothing.

Deno.test("fuzz checks: a resize wraps the agent's pane anew and moves rows to history; its view stays", async () => {
  const t = await TestTmux.start("main", {
    width: 40,
    height: 6,
    command:
      "sh -c 'printf \"é[ one long line that wraps at any narrower width\\nrow 2\\nrow 3\\n\"; exec cat'",
  });
  try {
    const w = { t, agentPane: t.ids.paneId };
    await waitFor(async () => (await agentView(w)).includes("row 3"), "the pane's rows");
    const before = await agentView(w);
    await t.tmux("resize-window", "-t", t.ids.windowId, "-x", "1", "-y", "2");
    // tmux wraps the rows anew in its loop after the command: once every row on the screen is
    // one character wide.
    await waitFor(async () => {
      const rows = (await t.tmux("capture-pane", "-p", "-t", t.ids.paneId)).split("\n");
      return rows.every((row) => [...row].length <= 1);
    }, "the rows wrapped at width 1");
    assert.equal(await agentView(w), before);
    await t.tmux("resize-window", "-t", t.ids.windowId, "-x", "13", "-y", "9");
    assert.equal(await agentView(w), before);
    await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "typed");
    await waitFor(async () => (await agentView(w)) !== before, "a keystroke seen");
  } finally {
    await t.kill();
  }
});

Deno.test("fuzz checks: 'undefined' in an error is a slip unless an argument or a name holds it", () => {
  const slip = 'No session "undefined" on socket "s". Sessions: $0 "main".';
  assert.match(badErrorText(slip, { session: "$9" }) ?? "", /undefined/);
  assert.equal(badErrorText(slip, { session: "undefined" }), null);
  const named = 'No session "%7" on socket "s". Sessions: $0 "main", $2 "undefined".';
  assert.equal(badErrorText(named, { session: "%7" }, ["main", "undefined"]), null);
  assert.match(badErrorText(named, { session: "%7" }, ["main"]) ?? "", /undefined/);
  // A name that holds the word excuses it only where quoted as that name.
  const bare = 'Window undefined has no pane; Sessions: $2 "undefined".';
  assert.match(badErrorText(bare, { session: "%7" }, ["undefined"]) ?? "", /undefined/);
});

Deno.test("fuzz checks: the hook guard's promise: a keystroke, a setting, a focus moved, a pipe, a respawn and a kill are seen; a resize is not", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-fuzz-" });
  // Flavour 2: the person sees a synchronized window of a dead pane and a `cat`.
  const w = await buildWorld(2, dir);
  try {
    const [dead, cat] = w.personPanes;
    const t = w.t;
    const broken = async (act: () => Promise<void>) => {
      const before = await keptView(w);
      await act();
      return keptBroken(before, await keptView(w, [...before.panes.keys()]), w.agentPane);
    };
    const rows = async (pane: string) =>
      (await t.tmux("capture-pane", "-p", "-t", pane)).split("\n");
    for (const [width, height] of [["20", "3"], ["6", "2"], ["1", "3"], ["80", "24"]]) {
      assert.equal(
        await broken(async () => {
          await t.tmux("resize-window", "-t", w.personWindow, "-x", width, "-y", height);
          await waitFor(
            async () => (await rows(dead)).every((row) => [...row].length <= Number(width)),
            `the dead pane's rows wrapped at width ${width}`,
          );
        }),
        null,
        `resized to ${width}`,
      );
    }
    assert.match((await rows(dead)).join("\n"), /Pane is dead/);
    assert.match(
      await broken(async () => {
        await t.tmux("send-keys", "-t", cat, "-l", "typed");
        await waitFor(async () => (await rows(cat)).join("").includes("typed"), "the keys");
      }) ?? "",
      new RegExp(`^a pane the person watches, ${cat}, changed`),
    );
    // What the person is shown is set to: their window's synchronize-panes, a global option;
    // not a user option, nor a server option that reaches nobody.
    const set = (...args: string[]) => broken(() => t.tmux("set-option", ...args).then(() => {}));
    assert.match(
      await set("-w", "-t", w.personWindow, "synchronize-panes", "off") ?? "",
      new RegExp(
        `^what the person is shown is set otherwise: .*window ${w.personWindow}: ` +
          "synchronize-panes",
      ),
    );
    assert.match(await set("-g", "status-left", "x") ?? "", /now global: status-left x$/);
    assert.equal(await set("-g", "@mine", "1"), null);
    assert.equal(await set("-s", "exit-empty", "off"), null);
    assert.match(
      await broken(() => t.tmux("select-pane", "-t", cat).then(() => {})) ?? "",
      new RegExp(`^the person's keys go elsewhere: .* ${dead} → .* ${cat}$`),
    );
    assert.match(
      await broken(() => t.tmux("pipe-pane", "-t", cat, "cat >/dev/null").then(() => {})) ?? "",
      new RegExp(`, ${cat}, is piped$`),
    );
    assert.match(
      await broken(() => t.tmux("respawn-pane", "-k", "-t", cat, "cat").then(() => {})) ?? "",
      new RegExp(`, ${cat}, runs another process`),
    );
    assert.match(
      await broken(() => t.tmux("kill-pane", "-t", cat).then(() => {})) ?? "",
      new RegExp(`, ${cat}, is gone$`),
    );
  } finally {
    await w.t.kill();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("fuzz checks: a dead pane's note, cut short by a resize at any width, is no change of the pane", () => {
  // As the fuzz met them: tmux cut the note on the cursor's row to the pane's new width.
  for (
    const line of [
      "Pane is dead (status 3, Fri Dec  4 21:48:42 2026)",
      "Pane is dead (signal 9, Fri Dec  4 21:48:42 2026)",
      "Pane is dead (status 3, Fri Dec  4 21:4",
      "Pane is dead (",
      "Pane is dead (s",
      "Pane is dead",
      "Pane is d",
      "P",
    ]
  ) assert.ok(deadNote(line), line);
  for (const line of ["", "typed", "Pane is deadly", "Pane is dead!", "Q", "PP", "hello"]) {
    assert.ok(!deadNote(line), line);
  }
});

Deno.test("fuzz checks: what the server says of its tmux server gone is told from other refusals", () => {
  const socket = { socketName: "w" };
  const call = (args = {}) => ({ tool: "rename_session", arguments: args });
  const noServer = new TmuxError("no-server", "no server running on /tmp/tmux-0/w");
  const said = [
    failureText(noServer, socket),
    failureText(noServer, socket, { answered: true, answeredPid: 7, changes: true }),
    failureText(
      new ServerGone(
        'The tmux server on socket "w" went away while %1 was watched.',
        "",
        'socket "w"',
      ),
      socket,
    ),
    failureText(
      afterTyped(noServer, "%1", "1-0123456789abcdef0123-a-b-c-d-e", false, 'socket "w"'),
      socket,
    ),
    'Job 1-0123456789abcdef0123-a-b-c-d-e ended with its tmux server: the server on socket "w" went away.',
  ];
  for (const text of said) {
    assert.ok(saysOwnServerGone(call(), text), text);
    // Said of another server (a socket or a host named): the run's own server may well run on.
    assert.ok(!saysOwnServerGone(call({ socket_name: "other" }), text), text);
    assert.ok(!saysOwnServerGone(call({ host: "h" }), text), text);
  }
  for (
    const text of [
      failureText(
        new ToolFailure("Pane %3 went away meanwhile.", "list_panes lists the panes."),
        socket,
      ),
      failureText(new ToolFailure('No session "x" on socket "w".', ""), socket),
      "Sent 4 bytes of text, then Enter to %1.",
      failureText(new TmuxError("timeout", "tmux did not answer within 10000 ms."), socket),
    ]
  ) assert.ok(!saysOwnServerGone(call(), text), text);
});
