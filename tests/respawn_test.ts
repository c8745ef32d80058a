/**
 * respawn_pane where its new process may end at once and take the pane with it (remain-on-exit
 * not on): a person's zoom on another pane of its window is kept, as kill_pane keeps it, and the
 * reply names what went with the pane, as kill_pane's does. Real tmux on private sockets.
 */

import assert from "node:assert/strict";
import { ToolFailure } from "../src/mcp/errors.ts";
import { respawnRefusal } from "../src/mcp/lone_links.ts";
import { placeResets, withPlaceResets } from "../src/tmux/control.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { judgeResult, TmuxError } from "../src/tmux/tmux_error.ts";
import { scrollOnClear } from "../src/tools/screen_clear.ts";
import {
  connect,
  type StartedTmux,
  type TestClient,
  testContext,
  withTmux,
} from "./helpers/mcp.ts";
import { linkedTwice, TestTmux, waitFor, withRunner } from "./helpers/tmux.ts";

/** The pane a creating command (`args`) makes, running `command` if given. */
const newPane = async (t: TestTmux, args: string[], command?: string): Promise<string> =>
  (await t.tmux(...args, "-P", "-F", "#{pane_id}", ...command ? [command] : [])).trim();

const fmt = async (t: TestTmux, target: string, format: string): Promise<string> =>
  (await t.tmux("display-message", "-p", "-t", target, format)).replace(/\n$/, "");

const panes = async (t: TestTmux): Promise<string[]> =>
  (await t.tmux("list-panes", "-a", "-F", "#{pane_id}")).trim().split("\n");

/**
 * A hook of the person's after every `list-panes` that holds the step until the shell test
 * `done` passes (at most ten seconds): reads made after it see what `done` waits for. Returns
 * the folder of its script, to remove.
 */
async function holdListingUntil(t: TestTmux, done: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-respawn-" });
  await Deno.writeTextFile(
    `${dir}/hold.sh`,
    `i=0\nwhile [ $i -lt 500 ]; do\n  ${done} && exit 0\n  sleep 0.02; i=$((i+1))\ndone\n`,
  );
  await t.tmux("set-hook", "-g", "after-list-panes", `run-shell 'sh ${dir}/hold.sh'`);
  return dir;
}

Deno.test("respawn_pane of a pane a person's zoom hides is refused where its new process could take the pane (it would unzoom)", async () => {
  await withTmux(async (t, c) => {
    const shown = await newPane(t, ["new-session", "-d", "-s", "zoomed"]);
    const hidden = await newPane(t, ["split-window", "-d", "-t", shown], "sleep 1000");
    // Until sleep runs, tmux names the shell that starts it: the checks below read it as sleep.
    await t.foreground(hidden, "sleep");
    await t.tmux("resize-pane", "-Z", "-t", shown);
    const zoomed = () => fmt(t, shown, "#{window_zoomed_flag}");
    const tty = await t.attach("zoomed");
    assert.equal(await zoomed(), "1");
    assert.match(await c.fail("kill_pane", { paneId: hidden }), /would unzoom/);

    // A command that ends at once, remain-on-exit off: the pane would go, and the zoom with it.
    const text = await c.fail("respawn_pane", { paneId: hidden, kill: true, command: "true" });
    assert.match(text, /would unzoom window @\d+, which client .* shows zoomed on %\d+/);
    assert.ok(text.includes(tty), text);
    assert.match(text, /remain-on-exit is off/);
    assert.equal(await zoomed(), "1", "the person's zoom stays");
    assert.equal(await fmt(t, hidden, "#{pane_current_command}"), "sleep");

    // remain-on-exit on keeps the pane whatever its process does: the zoom is safe.
    await t.tmux("set-option", "-p", "-t", hidden, "remain-on-exit", "on");
    await c.ok("respawn_pane", { paneId: hidden, kill: true, command: "exit 3" });
    // The new process ends after the call has answered; tmux marks the pane dead once it has
    // collected it.
    await waitFor(async () => await fmt(t, hidden, "#{pane_dead}") === "1", `${hidden} dead`);
    assert.equal(await zoomed(), "1");

    // A dead pane, respawned without kill: remain-on-exit failed lets a success take the pane.
    await t.tmux("set-option", "-p", "-t", hidden, "remain-on-exit", "failed");
    assert.match(await c.fail("respawn_pane", { paneId: hidden, command: "true" }), /unzoom/);
    assert.equal(await zoomed(), "1");
    assert.ok((await panes(t)).includes(hidden));
    await t.tmux("set-option", "-p", "-t", hidden, "remain-on-exit", "on");
    await c.ok("respawn_pane", { paneId: hidden, command: "sleep 1000" });
    assert.equal(await zoomed(), "1");
  });
});

Deno.test("respawn_pane: a person's zoom that comes right after the check is kept (tmux checks at the act)", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("new-session", "-d", "-s", "home", "sh");
    const tty = await t.attach("home");
    const shown = await newPane(t, ["new-session", "-d", "-s", "zoomed"]);
    const hidden = await newPane(t, ["split-window", "-d", "-t", shown], "sleep 1000");
    await t.foreground(hidden, "sleep");
    // Nobody looks at the read: the window unzoomed, the person elsewhere. Then they come to
    // it and zoom onto the other pane, before the respawn.
    await t.onceAfterGuardRead(`resize-pane -Z -t ${shown} ; switch-client -c ${tty} -t zoomed`);
    try {
      const text = await c.fail("respawn_pane", { paneId: hidden, kill: true, command: "true" });
      assert.match(text, /would unzoom window @\d+, which client .* shows zoomed on %\d+/);
      assert.equal(await fmt(t, shown, "#{window_zoomed_flag}"), "1", "the zoom stays");
      assert.equal(await fmt(t, hidden, "#{pane_current_command}"), "sleep");
    } finally {
      await t.tmux("set-hook", "-gu", "after-list-clients");
    }
  });
});

for (const last of [false, true]) {
  Deno.test(
    `respawn_pane whose new process ends at once names the window and session that went with the pane${
      last ? ", and the server" : ""
    }`,
    async () => {
      await withTmux(async (t, c) => {
        const pane = await newPane(t, ["new-session", "-d", "-s", "solo"], "sleep 1000");
        if (last) await t.tmux("kill-session", "-t", "=main");
        const [windowId, sessionId] = (await fmt(t, pane, "#{window_id} #{session_id}")).split(" ");
        await t.foreground(pane, "sleep");
        // Listings once the pane runs sleep no more (respawned) wait until its session is gone:
        // the reply is built after the new process ended and took the pane with it.
        const dir = await holdListingUntil(
          t,
          `{ [ "$(tmux -L ${t.socket} display-message -p -t ${pane} '#{pane_current_command}')" = sleep ] || ! tmux -L ${t.socket} has-session -t =solo 2>/dev/null; }`,
        );
        try {
          const r = await c.ok<{ gone: boolean; notes: string[] }>("respawn_pane", {
            paneId: pane,
            kill: true,
            command: "true",
          });
          const sessions = await t.tmux("list-sessions", "-F", "#{session_name}").catch(() => "");
          assert.ok(!sessions.includes("solo"));
          assert.equal(r.gone, true);
          const said = r.notes.join(" ");
          assert.ok(said.includes(windowId), `the window that went is not named: ${said}`);
          assert.ok(
            said.includes(`${sessionId} "solo"`),
            `the session that ended is not named: ${said}`,
          );
          assert.equal(/server exited/.test(said), last, said);
        } finally {
          await t.tmux("set-hook", "-gu", "after-list-panes").catch(() => {});
          await Deno.remove(dir, { recursive: true });
        }
      });
    },
  );
}

Deno.test("respawn_pane into the last pane of a window linked twice into its only session is refused: its end would crash tmux", async () => {
  await withTmux(async (t, c) => {
    const { windowId, paneId } = await linkedTwice(t);
    const pid = await fmt(t, "keep", "#{pid}");
    await c.ok("list_panes", {});
    // A command that ends at once: the pane, the window and the session end in one step.
    assert.match(
      await c.fail("respawn_pane", { paneId, kill: true, command: "true" }),
      new RegExp(`Respawning ${paneId} was not done: .*last pane of window ${windowId}`),
    );
    assert.equal(await fmt(t, "keep", "#{pid}"), pid, "respawn_pane took the tmux server down");
    assert.ok((await panes(t)).includes(paneId), "nothing was respawned");

    // remain-on-exit keeps the pane (and with it the window): nothing ends.
    await t.tmux("set-option", "-w", "-t", windowId, "remain-on-exit", "on");
    const r = await c.ok<{ gone: boolean }>("respawn_pane", {
      paneId,
      kill: true,
      command: "true",
    });
    assert.equal(r.gone, false);
    assert.equal(await fmt(t, "keep", "#{pid}"), pid);
    // remain-on-exit stays on for this window to the end: tmux 3.3a can miss the SIGCHLD of
    // `true` and collect its status only when another child of the server exits (seen: not
    // within 20 s), and a status collected with remain-on-exit off would take the pane, the
    // window, and tmux with it. The next window has its own option.

    // Linked twice between the read and the respawn: tmux refuses it at the act.
    const [w2, p2] = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "solo",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "sleep 1000",
    )).trim().split(" ");
    await t.onceAfterGuardRead(`link-window -d -s ${w2} -t solo:1`);
    assert.match(
      await c.fail("respawn_pane", { paneId: p2, kill: true, command: "true" }),
      new RegExp(`Respawning ${p2} was not done: .*last pane of window ${w2}`),
    );
    assert.equal(await fmt(t, "keep", "#{pid}"), pid, "respawn_pane took the tmux server down");
  });
});

Deno.test("a pane gone before its checks read it: tmux's display-message answers for no pane, and the checks say so, never an internal error", async () => {
  const t = await TestTmux.start();
  const runner = new TmuxRunner();
  try {
    const ctx = testContext(runner, t.socket);
    const gone = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", t.ids.paneId))
      .trim();
    await t.tmux("kill-pane", "-t", gone);
    // `display-message -p -t <missing pane>` exits 0 with every value empty (TMUX-NOTES).
    assert.equal(await respawnRefusal(ctx, gone, t.ids.windowId), null, "the respawn reports it");
    await assert.rejects(scrollOnClear(ctx, gone), (error) => {
      assert.ok(error instanceof ToolFailure);
      assert.match(error.message, new RegExp(`No pane ${gone} `));
      return true;
    });
  } finally {
    await runner.close();
    await t.kill();
  }
});

/**
 * Respawns `pane` (killing its shell) through `c`, makes the new shell print, and checks that
 * the tmux server answering is still the one of pid `pid`: the new shell's first output is what
 * tmux 3.3a crashed on (tmux/tmux#5499).
 */
async function respawnAndPrint(t: TestTmux, c: TestClient, pane: string, pid: string) {
  const r = await c.ok<{ pid: number | null }>("respawn_pane", { paneId: pane, kill: true });
  assert.ok(r.pid !== null, "the pane was respawned, and the server answered");
  await t.tmux("send-keys", "-t", pane, "echo after", "Enter");
  await waitFor(
    async () => (await t.tmuxRaw("capture-pane", "-p", "-t", pane)).stdout.includes("after"),
    "the respawned shell's output",
  );
  assert.equal(await fmt(t, pane, "#{pid}"), pid, "the same tmux server");
}

/**
 * A wait by `waiter` (this server, or another tmux-mcp process's) leaves its client for watches
 * behind on `t`'s first pane for good (the pane's window moves out of that client's session and
 * prints on); then `c` respawns the pane, whose next output crashed tmux 3.3a (tmux/tmux#5499).
 */
async function respawnPastALaggingClient(t: StartedTmux, c: TestClient, waiter: TestClient) {
  const pane = t.ids.paneId;
  const pid = await fmt(t, pane, "#{pid}");
  const watchClient = async () => (await t.outputClients()).length > 0;
  // A wait by `waiter` for `word`, carried by a client for watches, sees the pane print it. The
  // client is looked for in the pane's session now: one left in another (leaving after a move)
  // is not the wait's, which may not have read the pane yet.
  const waitSees = async (word: string, client: string) => {
    const waited = waiter.ok<{ outcome: string }>("wait_for_text", {
      paneId: pane,
      patterns: [word],
      timeoutMs: 10_000,
    });
    const session = await fmt(t, pane, "#{session_id}");
    await waitFor(async () => (await t.outputClients(session)).length > 0, client);
    await t.tmux("send-keys", "-t", pane, `echo ${word}`, "Enter");
    assert.equal((await waited).outcome, "matched");
  };
  await t.tmux("new-window", "-d", "-t", "main:");
  await t.tmux("new-session", "-d", "-s", "other");
  // A wait on the pane: a client for watches attaches to "main" and takes its output.
  await waitSees("first", "a client for watches");
  // The pane's window leaves that client's session (it lingers a few seconds after its last
  // watch): tmux never moves the client's place in the pane's output again, and the pane
  // prints on past it.
  await t.tmux("move-window", "-s", pane, "-t", "other:");
  await t.tmux("send-keys", "-t", pane, "echo more", "Enter");
  await waitFor(async () => Number(await fmt(t, pane, "#{cursor_y}")) >= 3, "more output");
  assert.ok(await watchClient(), "the client for watches is still attached");

  await respawnAndPrint(t, c, pane, pid);
  // The waiter's watches attach again.
  await waitSees("again", "a client for watches again");
}

Deno.test("respawn_pane while a watch client of ours is left behind on the pane's output: the tmux server lives on (tmux/tmux#5499)", async () => {
  await withTmux((t, c) => respawnPastALaggingClient(t, c, c), {
    toolsets: ["inspect", "execute"],
  });
});

Deno.test("respawn_pane while another tmux-mcp process's watch client is left behind on the pane: the server lives on", async () => {
  await withTmux(async (t, c) => {
    const other = await connect({ socketName: t.socket, toolsets: ["inspect"] });
    try {
      await respawnPastALaggingClient(t, c, other);
    } finally {
      await other.close();
    }
  }, { toolsets: ["inspect", "execute"] });
});

Deno.test("a wait on another pane goes on through a respawn, on the same client for watches", async () => {
  await withTmux(async (t, c) => {
    const other = await newPane(t, ["split-window", "-d", "-t", t.ids.paneId], "sh");
    await t.prompt(other);
    const waited = c.ok<{ outcome: string; matched: string | null }>("wait_for_text", {
      paneId: other,
      patterns: ["through"],
      timeoutMs: 15_000,
    });
    await waitFor(async () => (await t.outputClients()).length > 0, "the wait's client");
    const clients = await t.outputClients();
    await c.ok("respawn_pane", { paneId: t.ids.paneId, kill: true });
    await t.tmux("send-keys", "-t", other, "echo through", "Enter");
    const r = await waited;
    assert.equal(r.outcome, "matched", JSON.stringify(r));
    // The client for watches stayed through the respawn (its place in the pane's output moved
    // up on the respawn's line), not let go and opened again.
    assert.deepEqual(await t.outputClients(), clients);
  }, { toolsets: ["inspect", "execute"] });
});

Deno.test("a wait on the pane respawned into a program that prints nothing ends paneDied: the client for watches stays, told to look again", async () => {
  await withTmux(async (t, c) => {
    const pane = t.ids.paneId;
    const waited = c.ok<{ outcome: string }>("wait_for_text", {
      paneId: pane,
      patterns: ["never printed"],
      timeoutMs: 15_000,
    });
    await waitFor(async () => (await t.outputClients()).length > 0, "the wait's client");
    const clients = await t.outputClients();
    const r = await c.ok<{ pid: number }>("respawn_pane", {
      paneId: pane,
      kill: true,
      command: "sleep 1000",
    });
    assert.equal((await waited).outcome, "paneDied", "the process it watched is gone");
    assert.deepEqual(await t.outputClients(), clients);
    assert.equal(await fmt(t, pane, "#{pane_pid}"), String(r.pid));
  }, { toolsets: ["inspect", "execute"] });
});

/**
 * A person's control-mode clients, as iTerm2's tmux integration attaches (`tmux -CC` in a
 * terminal) and as a program attaches (`tmux -C`, no terminal), each left behind on the pane's
 * output the way upstream's report met it: the pane printed while its window was in their
 * session, then the window was parked in another session and printed on. A respawn then
 * crashed tmux 3.3a at the new shell's first output, every session with it. The clients are
 * the person's: they stay attached.
 */
Deno.test("respawn_pane while a person's control-mode clients are left behind on the pane: they stay attached, the server lives on (tmux/tmux#5499)", async () => {
  await withTmux(async (t, c) => {
    const pane = t.ids.paneId;
    const pid = await fmt(t, pane, "#{pid}");
    await t.tmux("new-window", "-d", "-t", "main:");
    await t.tmux("new-session", "-d", "-s", "parked");
    const tty = await t.attach("main", { control: true });
    const program = t.controlClient("main");
    const controlClients = async () =>
      (await t.tmux("list-clients", "-F", "#{client_name} #{client_flags}")).split("\n")
        .filter((l) => l.includes("control-mode")).map((l) => l.split(" ")[0]);
    await waitFor(async () => (await controlClients()).length === 2, "both control clients");
    const before = await controlClients();
    // Printed while they show the pane's window: each takes a place in its output.
    await t.tmux("send-keys", "-t", pane, "echo shown", "Enter");
    await waitFor(async () => Number(await fmt(t, pane, "#{cursor_y}")) >= 1, "output shown");
    await t.tmux("move-window", "-s", pane, "-t", "parked:");
    await t.tmux("send-keys", "-t", pane, "echo parked", "Enter");
    await waitFor(async () => Number(await fmt(t, pane, "#{cursor_y}")) >= 3, "output parked");
    try {
      await respawnAndPrint(t, c, pane, pid);
      const now = await controlClients();
      assert.ok(before.every((n) => now.includes(n)), "the person's clients stay attached");
      assert.ok((await t.clientTtys()).includes(tty));
    } finally {
      program.stdin.close();
      await program.status;
    }
  }, { toolsets: ["inspect", "execute"] });
});

Deno.test("a person's control client that leaves between the read of the clients and the respawn fails the line before the respawn: the clients are read again and it runs once", async () => {
  await withRunner(async (t, runner) => {
    const address = { socketName: t.socket };
    const program = t.controlClient("main");
    await waitFor(async () => (await t.outputClients()).length === 1, "the program's client");
    const [name] = await t.outputClients();
    // Its session shows the pane: what tmux has queued for it there is dropped as its place
    // moves up, and it is told (as tmux's own pause-after tells it).
    assert.deepEqual(await placeResets(runner, address, t.ids.paneId), [
      ["refresh-client", "-t", name, "-A", `${t.ids.paneId}:pause`],
      ["refresh-client", "-t", name, "-A", `${t.ids.paneId}:continue`],
    ]);
    const parked = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "parked",
      "-P",
      "-F",
      "#{pane_id}",
      "sleep 1000",
    )).trim();
    assert.deepEqual(await placeResets(runner, address, parked), [
      ["refresh-client", "-t", name, "-A", `${parked}:off`],
      ["refresh-client", "-t", name, "-A", `${parked}:on`],
    ]);
    const tries: string[][][] = [];
    await withPlaceResets(runner, address, parked, async (resets) => {
      tries.push(resets);
      if (tries.length === 1) {
        program.stdin.close();
        await program.status;
        await waitFor(async () => (await t.outputClients()).length === 0, "the client gone");
      }
      // The respawn's stand-in, after the resets on the same line.
      const line = [...resets.flatMap((r) => [...r, ";"]), "set-option", "-ga", "@acts", "x"];
      return judgeResult(await runner.exec(address, line));
    });
    assert.deepEqual(tries.map((r) => r.length), [2, 0]);
    // The line whose client had left did nothing past it: the act ran once.
    assert.equal((await t.tmux("show-options", "-gv", "@acts")).trim(), "x");
  });
});

Deno.test("a respawn whose clients cannot be read is refused, not run without the resets: a stalled server times out, one gone says so", async () => {
  await withRunner(async (t, runner) => {
    const address = { socketName: t.socket };
    const pid = Number((await t.tmux("display-message", "-p", "#{pid}")).trim());
    let acts = 0;
    const act = () => {
      acts++;
      return Promise.resolve();
    };
    // A program's client carries output: a respawn without its place moved up may crash tmux.
    const program = t.controlClient("main");
    await waitFor(async () => (await t.outputClients()).length === 1, "the program's client");
    Deno.kill(pid, "SIGSTOP");
    try {
      await assert.rejects(
        withPlaceResets(runner, address, t.ids.paneId, act),
        (error: Error) =>
          error instanceof TmuxError && error.kind === "timeout" &&
          error.message.includes(`${t.ids.paneId} was not respawned`),
      );
    } finally {
      Deno.kill(pid, "SIGCONT");
    }
    assert.equal(acts, 0);
    program.stdin.close();
    await program.status;
    await t.kill();
    await assert.rejects(
      withPlaceResets(runner, address, t.ids.paneId, act),
      (error: Error) => error instanceof TmuxError && error.kind === "no-server",
    );
    assert.equal(acts, 0);
  });
});

Deno.test("respawn_pane of a busy pane a program's control client is shown: the server lives on, the client stays", async () => {
  await withTmux(async (t, c) => {
    const pid = await fmt(t, "main", "#{pid}");
    const busy = "while :; do seq 1 2000; done";
    const pane = await newPane(t, ["split-window", "-d", "-t", t.ids.paneId], `sh -c '${busy}'`);
    // A program, not a person (no terminal): the guards let the respawn through. tmux has the
    // busy pane's output queued for it at almost any instant: a plain respawn crashed tmux 3.3a
    // within two or three, and so did turning the pane off and on for it.
    const program = t.controlClient("main");
    try {
      await waitFor(async () => (await t.outputClients()).length === 1, "the program's client");
      for (let i = 0; i < 5; i++) {
        const r = await c.ok<{ pid: number | null }>("respawn_pane", {
          paneId: pane,
          kill: true,
          command: `sh -c 'echo respawned; ${busy}'`,
        });
        assert.ok(r.pid !== null);
        const history = async () => Number(await fmt(t, pane, "#{history_size}"));
        await waitFor(async () => await history() > 0, "its output");
      }
      assert.equal(await fmt(t, "main", "#{pid}"), pid, "the same tmux server");
      assert.equal((await t.outputClients()).length, 1, "the program's client stays");
    } finally {
      program.stdin.close();
      await program.status;
    }
  }, { toolsets: ["inspect", "execute"] });
});
