import assert from "node:assert/strict";
import {
  HookGate,
  noControlTmux,
  TestTmux,
  waitFor,
  within,
  withRunner,
} from "../../tests/helpers/tmux.ts";
import { heldJob } from "../../tests/helpers/held_job.ts";
import {
  argvCommands,
  controlFor,
  controlLine,
  ControlUnavailable,
  execFast,
  execOnce,
  noteSocketServer,
  socketServerPid,
  unescapeOutput,
} from "./control.ts";
import { startedSince } from "./control_attach.ts";
import { ATTACH_TIMEOUT_MS, MAX_CONNECTIONS, setControlLimits } from "./control_limits.ts";
import { escapeTrailingSemicolon } from "./format.ts";
import { attendedPanes } from "./identity.ts";
import { type PersistentChild, TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";
import { takeSnapshot } from "./snapshot.ts";
import { TerminalText } from "./terminal_text.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("argvCommands splits an argv exactly as tmux does", () => {
  assert.deepEqual(argvCommands(["a", "x;", "b"]), [["a", "x"], ["b"]]);
  assert.deepEqual(argvCommands(["a", ";", "b", "c"]), [["a"], ["b", "c"]]);
  assert.deepEqual(argvCommands(["a", "x\\;"]), [["a", "x;"]]);
  assert.deepEqual(argvCommands(["a", "\\;"]), [["a", ";"]]);
  assert.deepEqual(argvCommands(["a", "x\\\\;"]), [["a", "x\\;"]]);
  assert.deepEqual(argvCommands(["a", "mid;dle"]), [["a", "mid;dle"]]);
  assert.deepEqual(argvCommands(["a", ""]), [["a", ""]]);
});

Deno.test("controlLine quotes every argument and refuses what cannot travel", () => {
  assert.equal(controlLine(["display-message", "-p", "it's"]), "'display-message' '-p' 'it'\\''s'");
  assert.equal(controlLine(["a", "b;", "c"]), "'a' 'b' ; 'c'");
  assert.throws(() => controlLine(["display-message", "a\nb"]), ControlUnavailable);
  assert.throws(() => controlLine(["X=1", "display"]), ControlUnavailable);
  assert.throws(() => controlLine([";"]), ControlUnavailable);
});

Deno.test("unescapeOutput decodes tmux's octal escapes and keeps raw bytes", () => {
  assert.equal(text(unescapeOutput(bytes("a\\015\\012b\\134c"))), "a\r\nb\\c");
  assert.equal(text(unescapeOutput(bytes("日本\\033[1m"))), "日本\x1b[1m");
  assert.equal(text(unescapeOutput(bytes("end\\01"))), "end\\01");
});

/** Whether the process `pid` (a tmux server) still runs. */
function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

/** A runner plus a private server, torn down together. */
function withServer(
  fn: (
    t: TestTmux & { ids: { sessionId: string; paneId: string } },
    runner: TmuxRunner,
  ) => Promise<void>,
  options: { width?: number; height?: number } = {},
): Promise<void> {
  return withRunner(fn, "main", options);
}

Deno.test("the control client leaves the session's environment as the person set it", async () => {
  await withServer(async (t, runner) => {
    // Attaching applies update-environment: the attaching client's DISPLAY, SSH_AUTH_SOCK...
    // (or their absence) would replace what the person's session holds.
    await t.tmux("set-environment", "-t", t.ids.sessionId, "DISPLAY", ":person");
    await t.tmux("set-environment", "-t", t.ids.sessionId, "SSH_AUTH_SOCK", "/person/agent");
    const control = controlFor(runner, { socketName: t.socket });
    await control.exec(["display-message", "-p", "attached"]);
    assert.equal(control.connections, 1);
    assert.equal(
      await t.tmux("show-environment", "-t", t.ids.sessionId, "DISPLAY"),
      "DISPLAY=:person\n",
    );
    assert.equal(
      await t.tmux("show-environment", "-t", t.ids.sessionId, "SSH_AUTH_SOCK"),
      "SSH_AUTH_SOCK=/person/agent\n",
    );
  });
});

/**
 * A runner that checks, whenever a control client is to start, that every other control client
 * it started is either attached (tmux lists it) or gone: none is half way through its handshake.
 */
class HandshakeCheckingRunner extends TmuxRunner {
  readonly overlaps: string[] = [];
  #alive = 0;
  started = 0;

  override async spawnPersistent(
    address: ServerAddress,
    args: readonly string[],
    env?: Readonly<Record<string, string>>,
  ): Promise<PersistentChild> {
    if (args[0] !== "-C") return await super.spawnPersistent(address, args, env);
    const others = this.#alive++;
    this.started++;
    const listed = await this.exec(address, ["list-clients", "-F", "#{client_control_mode}"]);
    const attached = new TextDecoder().decode(listed.stdout).split("\n")
      .filter((l) => l === "1").length;
    if (attached !== others) {
      this.overlaps.push(`${others} other control clients alive, ${attached} attached`);
    }
    const child = await super.spawnPersistent(address, args, env);
    child.status.finally(() => this.#alive--);
    return child;
  }
}

Deno.test("control clients start one at a time (tmux 3.3a dies of two handshakes at once)", async () => {
  const t = await TestTmux.start("first");
  const runner = new HandshakeCheckingRunner();
  try {
    const sessions = ["first"];
    const panes = [t.ids.paneId];
    for (const name of ["second", "third", "fourth"]) {
      panes.push((await t.tmux("new-session", "-d", "-s", name, "-P", "-F", "#{pane_id}")).trim());
      sessions.push(name);
    }
    const ids = (await t.tmux("list-sessions", "-F", "#{session_id}")).trim().split("\n");
    const control = controlFor(runner, { socketName: t.socket });
    // A command and a watch in each session at once: five clients wanted together.
    const watches = await Promise.all([
      control.exec(["display-message", "-p", "x"]).then(() => null),
      ...panes.map((pane, i) => control.watch(pane, [ids[i]], () => {})),
    ]);
    assert.ok(runner.started >= 4, `${runner.started} control clients`);
    assert.deepEqual(runner.overlaps, []);
    for (const w of watches) w?.close();
  } finally {
    await runner.close();
    await t.kill();
  }
});

/** A control client whose tmux never answers: it ends only when told to. */
function silentChild(): PersistentChild {
  const { promise: status, resolve } = Promise.withResolvers<Deno.CommandStatus>();
  const end = () => resolve({ success: false, code: 143, signal: "SIGTERM" });
  const silent = () =>
    new ReadableStream({
      type: "bytes",
      start(c) {
        status.then(() => {
          c.close();
          c.byobRequest?.respond(0); // settles a read waiting with its own buffer
        });
      },
    }) as ReadableStream<Uint8Array>;
  return {
    stdin: new WritableStream<Uint8Array>({ close: end }),
    stdout: silent(),
    stderr: silent(),
    status,
    reached: Promise.resolve(),
    kill: end,
    answered: () => {},
    act: () => Promise.resolve(() => {}),
  };
}

/** A runner for a tmux that lists two sessions but never attaches a control client. */
class NeverAttachingRunner extends TmuxRunner {
  spawned: string[][] = [];

  override spawnPersistent(): Promise<PersistentChild> {
    return Promise.resolve(silentChild());
  }

  override exec(
    _address: ServerAddress,
    args: readonly string[],
  ): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    this.spawned.push([...args]);
    const out = args[0] === "list-sessions"
      ? "$0 100 0 off\n$1 90 0 off\n"
      : args[0] === "show-options" // the read of command-alias: none
      ? ""
      : "by a tmux process\n";
    return Promise.resolve({ code: 0, stdout: bytes(out), stderr: "" });
  }
}

Deno.test("a control client tmux never attaches is given up, for a while: calls start tmux", async () => {
  const runner = new NeverAttachingRunner();
  const address = { socketName: "never-attaches" };
  try {
    const began = performance.now();
    // A call, and a watch whose client queues behind the first one's.
    const [result, watch] = await Promise.allSettled([
      execFast(runner, address, ["display-message", "-p", "x"]),
      controlFor(runner, address).watch("%1", ["$1"], () => {}),
    ]);
    const took = performance.now() - began;
    assert.equal(result.status, "fulfilled");
    assert.equal(result.status === "fulfilled" && text(result.value.stdout), "by a tmux process\n");
    assert.equal(watch.status, "rejected");
    assert.ok(watch.status === "rejected" && watch.reason instanceof ControlUnavailable);
    // The watch queued behind the first client gave up with it, not one timeout later.
    assert.ok(took >= ATTACH_TIMEOUT_MS && took < 2 * ATTACH_TIMEOUT_MS, `${took} ms`);
    assert.deepEqual(runner.spawned.at(-1), ["display-message", "-p", "x"]);
    // For a while after, calls start tmux at once instead of trying again.
    const again = performance.now();
    await execFast(runner, address, ["display-message", "-p", "y"]);
    assert.ok(performance.now() - again < ATTACH_TIMEOUT_MS / 5);
    assert.deepEqual(runner.spawned.at(-1), ["display-message", "-p", "y"]);
  } finally {
    await runner.close();
  }
});

Deno.test("control exec gives byte-identical results to spawning tmux", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    const values = [
      "plain",
      'it\'s "quoted"',
      "semi;colon",
      "ends;",
      "ends\\;",
      "\\",
      "$HOME ${HOME} ~ ~root",
      "{ braces } %if %endif",
      "tab\there",
      "cr\rhere",
      "日本🙂 é",
      "-leading",
      "#{session_name} ##",
      "",
      " spaced  ",
    ];
    const rand = crypto.getRandomValues(new Uint8Array(64));
    const alphabet = "ab ;'\"\\$~{}#%-\t日🙂";
    for (let i = 0; i < 8; i++) {
      values.push(
        Array.from(rand.subarray(i * 8, i * 8 + 8), (b) => [...alphabet][b % [...alphabet].length])
          .join(""),
      );
    }
    for (const value of values) {
      for (
        const args of [
          ["display-message", "-p", "-t", t.ids.paneId, escapeTrailingSemicolon(value)],
          ["display-message", "-p", "-t", t.ids.paneId, value],
          ["list-panes", "-t", escapeTrailingSemicolon(`=${value}`), "-F", "#{pane_id}"],
        ]
      ) {
        const spawned = await runner.exec(address, args);
        const carried = await control.exec(args);
        assert.deepEqual(
          { code: carried.code, stdout: text(carried.stdout) },
          { code: spawned.code, stdout: text(spawned.stdout) },
          `argv ${JSON.stringify(args)}`,
        );
        assert.deepEqual(carried.stdout, spawned.stdout);
        assert.equal(carried.stderr.trim(), spawned.stderr.trim());
      }
    }
    // A chain whose first command fails: the rest is skipped either way.
    const chain = ["list-panes", "-t", "=nosuch", ";", "display-message", "-p", "after"];
    const spawned = await runner.exec(address, chain);
    const carried = await control.exec(chain);
    assert.equal(carried.code, spawned.code);
    assert.equal(text(carried.stdout), text(spawned.stdout));
    assert.equal(carried.stderr.trim(), spawned.stderr.trim());
    assert.equal(control.connections, 1, "one connection carried every command");
  });
});

Deno.test("large answers with protocol-looking lines arrive byte-identical over control", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    // Lines a naive reader would take for the protocol, between thousands of long lines, so
    // they fall on every position of the pipe's chunks.
    const script = [
      "i=0; while [ $i -lt 3000 ]; do",
      "printf '%0150d\\n' $i;",
      "[ $((i % 97)) -eq 0 ] && printf '%%end 1 2 1\\n%%error 1 2 1\\n%%begin 1 2 1\\n%%\\n%%output %%0 x\\n';",
      "i=$((i+1)); done; printf 'DONE\\n'; exec sleep 100000",
    ].join(" ");
    const pane = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", script)).trim();
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", pane)).includes("DONE"),
      "the pane's output",
      20_000,
    );
    const capture = ["capture-pane", "-p", "-t", pane, "-S", "-", "-E", "-"];
    const spawned = await runner.exec(address, capture);
    const carried = await control.exec(capture);
    assert.ok(spawned.stdout.length > 100_000, `${spawned.stdout.length} bytes`);
    assert.ok(text(spawned.stdout).includes("\n%end 1 2 1\n%error 1 2 1\n%begin 1 2 1\n%\n"));
    assert.equal(carried.code, 0);
    assert.ok(carried.stdout.length === spawned.stdout.length, "same length");
    assert.deepEqual(carried.stdout, spawned.stdout);
    // Output before a failing command is kept, and the failure reported, either way.
    const chain = [...capture, ";", "list-panes", "-t", "=nosuch"];
    const spawnedChain = await runner.exec(address, chain);
    const carriedChain = await control.exec(chain);
    assert.equal(carriedChain.code, spawnedChain.code);
    assert.notEqual(carriedChain.code, 0);
    assert.deepEqual(carriedChain.stdout, spawnedChain.stdout);
    assert.equal(carriedChain.stderr.trim(), spawnedChain.stderr.trim());
  });
});

Deno.test("a value holding a newline falls back to spawning, with the same result", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const args = ["display-message", "-p", "-t", t.ids.paneId, "two\nlines"];
    await assert.rejects(() => controlFor(runner, address).exec(args), ControlUnavailable);
    const fast = await execFast(runner, address, args);
    assert.equal(text(fast.stdout), "two\nlines\n");
  });
});

Deno.test("the control client resizes nothing and is never counted as a person", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const size = () =>
      t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{window_width}x#{window_height}");
    const before = await size();
    await controlFor(runner, address).exec(["display-message", "-p", "x"]);
    const clients = await t.tmux("list-clients", "-F", "#{client_control_mode} #{client_flags}");
    assert.match(clients, /^1 .*ignore-size/m, "a control-mode client with ignore-size");
    assert.equal(await size(), before);
    assert.equal(before.trim(), "123x37");
    const snapshot = await takeSnapshot(runner, address);
    assert.equal(snapshot.clients.length, 1);
    assert.equal(attendedPanes(snapshot).size, 0, "no pane counts as watched");
  }, { width: 123, height: 37 });
});

Deno.test("the control client for commands gets no pane's output: no-output, and never a watch", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    const flags = async () =>
      (await t.tmux("list-clients", "-F", "#{client_control_mode} #{client_flags}")).trim();
    await control.exec(["display-message", "-p", "x"]);
    assert.match(await flags(), /^1 .*\bno-output\b/, "the command client gets no %output");
    // A watch on a pane of its very session gets a client of its own, which gets output.
    const seen = new TerminalText();
    const got = Promise.withResolvers<void>();
    const watch = await control.watch(t.ids.paneId, [t.ids.sessionId], (b) => {
      for (const chunk of b.output) {
        if (seen.push(chunk).some((l) => l.includes("printed-while-watched"))) got.resolve();
      }
    });
    assert.equal(control.connections, 2, "a client of its own for the watch");
    const both = (await flags()).split("\n");
    assert.equal(both.length, 2);
    const watching = both.find((l) => !l.includes("no-output")) ?? "";
    const commands = both.find((l) => l.includes("no-output")) ?? "";
    assert.match(
      watching,
      /^1 .*ignore-size.*pause-after=1/,
      "the watching client gets output, paused when a second behind",
    );
    assert.match(commands, /^1 .*\bno-output\b/, "the command client still gets none");
    await t.tmux("send-keys", "-t", t.ids.paneId, "echo printed-while-watched", "Enter");
    await got.promise;
    watch.close();
    // Commands still go to the client without output, never to the one that watched.
    await control.exec(["display-message", "-p", "x"]);
    assert.equal(control.watchers, 0);
    assert.match(await flags(), /^1 .*\bno-output\b/m);
  });
});

Deno.test("a dropped connection is noticed and the next command reconnects", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    await control.exec(["display-message", "-p", "x"]);
    const lost = Promise.withResolvers<void>();
    const watch = await control.watch(t.ids.paneId, [t.ids.sessionId], (b) => {
      if (b.lost) lost.resolve();
    });
    assert.equal(watch.sessionId, t.ids.sessionId);
    // `detach-client -s` from outside disconnects control clients too (TMUX-NOTES).
    await t.tmux("detach-client", "-s", "main");
    await lost.promise;
    await waitFor(() => control.connections === 0, "the connection to be dropped");
    const again = await control.exec(["display-message", "-p", "-t", t.ids.paneId, "#{pane_id}"]);
    assert.equal(text(again.stdout), `${t.ids.paneId}\n`);
    assert.equal(control.connections, 1);
  });
});

Deno.test("a cancelled command whose line a hook holds still gives the connection up at its deadline", async () => {
  const gate = await HookGate.make();
  try {
    await withServer(async (t, runner) => {
      const address = { socketName: t.socket };
      const control = controlFor(runner, address);
      await control.exec(["display-message", "-p", "warm"]);
      // A person's slow hook holds the line; the call stops waiting, tmux keeps the line.
      await t.tmux("set-hook", "-g", "after-set-option", gate.command);
      const stop = new AbortController();
      const held = control.exec(["set-option", "-g", "@held", "1"], {
        signal: stop.signal,
        timeoutMs: 1_000,
      });
      await waitFor(() => gate.began(), "the line to be held");
      stop.abort();
      await assert.rejects(held, /cancelled/);
      // The next command queues behind that line. It is not left to time out on its own: the
      // held line's deadline gives the connection up, and the command fails as possibly run
      // (a read is then run again by a tmux process of its own: execFast).
      await assert.rejects(
        control.exec(["display-message", "-p", "next"], { timeoutMs: 5_000 }),
        ControlUnavailable,
      );
      const again = await control.exec(["display-message", "-p", "again"]);
      assert.equal(text(again.stdout), "again\n");
    });
  } finally {
    await gate.open();
    await gate.remove();
  }
});

Deno.test("a command queued behind lines tmux works through times out from when tmux came to it, not from its sending", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    await control.exec(["display-message", "-p", "warm"]);
    // Ten lines of 100 ms each ahead of it (a second in all): tmux answers one every 100 ms,
    // far within the 500 ms the command behind them may take once tmux is at it.
    const ahead = Promise.allSettled(
      Array.from({ length: 10 }, () => control.exec(["run-shell", "sleep 0.1"])),
    );
    const behind = control.exec(["display-message", "-p", "behind"], { timeoutMs: 500 });
    const [settled] = await Promise.all([ahead, behind.catch(() => null)]);
    assert.equal(text((await behind).stdout), "behind\n");
    assert.ok(settled.every((s) => s.status === "fulfilled"), "every line ahead answered");
    assert.equal(control.connections, 1, "the connection was not given up");
  });
});

Deno.test("a one-off command is behind at most two background commands in tmux's queue, however many wait", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    await control.exec(["display-message", "-p", "warm"]);
    // Twenty background commands of 50 ms each (a wait's repeated checks), then a one-off.
    let done = 0;
    const background = Array.from(
      { length: 20 },
      () => control.exec(["run-shell", "sleep 0.05"], { background: true }).finally(() => done++),
    );
    const oneOff = await control.exec(["display-message", "-p", "one-off"]);
    const ahead = done;
    await Promise.all(background);
    assert.equal(text(oneOff.stdout), "one-off\n");
    // Unpaced, it was written behind all twenty and answered after them.
    assert.ok(ahead <= 2, `${ahead} background commands were answered before it`);
  });
});

Deno.test("a socket replaced under its server: asking the socket lets the old server's clients go", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const pidOver = async () =>
      Number(text((await execFast(runner, address, ["display-message", "-p", "#{pid}"])).stdout));
    const old = await t.facts();
    assert.equal(await pidOver(), old.pid);
    assert.equal(controlFor(runner, address).connections, 1);
    // Nothing changed: asking costs the control clients nothing.
    assert.equal(await socketServerPid(runner, address), old.pid);
    assert.equal(controlFor(runner, address).connections, 1);
    const moved = `${old.socketPath}.old`;
    await Deno.rename(old.socketPath, moved);
    try {
      await t.tmux("new-session", "-d", "-s", "work", "sh");
      const now = await t.facts();
      // Over the control client, the old server still answers, as if nothing happened.
      assert.equal(await pidOver(), old.pid);
      assert.equal(await noteSocketServer(runner, address, old.pid), null);
      assert.equal(await socketServerPid(runner, address), now.pid);
      assert.equal(await pidOver(), now.pid, "the next call attaches to the server there");
    } finally {
      await Deno.remove(moved).catch(() => {});
    }
  });
});

Deno.test("a socket replaced under its server: a command for the server read goes over no client of another", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const old = await t.facts();
    const names = ["list-sessions", "-F", "#{session_name}"];
    assert.equal(text((await execFast(runner, address, names)).stdout), "main\n");
    const moved = `${old.socketPath}.old`;
    await Deno.rename(old.socketPath, moved);
    try {
      await t.tmux("new-session", "-d", "-s", "work", "sh");
      const now = await t.facts();
      // The client on the old server goes (idle, or dropped) after a call read that server: the
      // call's next command attaches a new one through the socket, to the new server.
      controlFor(runner, address).retire();
      const changed = new RegExp(
        `changed since this call read it \\(pid ${old.pid} then, ${now.pid} now\\)`,
      );
      const rename = ["rename-session", "-t", "$0", "renamed"];
      await assert.rejects(
        () => execOnce(runner, address, rename, { serverPid: old.pid }),
        changed,
      );
      await assert.rejects(() => execFast(runner, address, names, { serverPid: old.pid }), changed);
      assert.equal(await t.tmux(...names), "work\n", "nothing ran on the server on the socket");
      const onOld = await new Deno.Command("tmux", { args: ["-S", moved, ...names] }).output();
      assert.equal(text(onOld.stdout), "main\n", "nor on the one read");
      // For the server it reaches, it runs over the control client.
      await execOnce(runner, address, rename, { serverPid: now.pid });
      assert.equal(await t.tmux(...names), "renamed\n");
      assert.equal(controlFor(runner, address).connections, 1);
    } finally {
      await Deno.remove(moved).catch(() => {});
    }
  });
});

Deno.test("without a session there is nothing to attach to: commands are spawned", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    await t.tmux("set-option", "-g", "exit-empty", "off");
    await t.tmux("kill-session", "-t", "main");
    await assert.rejects(
      () => controlFor(runner, address).exec(["list-sessions"]),
      ControlUnavailable,
    );
    const fast = await execFast(runner, address, ["display-message", "-p", "#{pid}"]);
    assert.equal(fast.code, 0);
    assert.match(text(fast.stdout), /^\d+\n$/);
  });
});

Deno.test("watch delivers a pane's output, including panes of other sessions", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    await control.exec(["display-message", "-p", "x"]);
    const other = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "other session",
      "-P",
      "-F",
      "#{session_id} #{pane_id}",
      "cat",
    )).trim().split(" ");
    const seen = new TerminalText();
    const got = Promise.withResolvers<void>();
    const watch = await control.watch(other[1], [other[0]], (b) => {
      for (const chunk of b.output) {
        if (seen.push(chunk).some((l) => l.includes("hello 日本"))) got.resolve();
      }
    });
    assert.equal(watch.sessionId, other[0]);
    assert.equal(control.connections, 2, "a second client for the other session");
    await t.tmux("send-keys", "-t", other[1], "-l", "hello 日本");
    await t.tmux("send-keys", "-t", other[1], "Enter");
    await got.promise;
    watch.close();
    assert.equal(control.watchers, 0);
  });
});

Deno.test("watches never take the last control client: the one for commands can always attach", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    const panes = [t.ids.paneId];
    for (let i = 1; i < MAX_CONNECTIONS; i++) {
      panes.push(
        (await t.tmux("new-session", "-d", "-s", `s${i}`, "-P", "-F", "#{pane_id}")).trim(),
      );
    }
    const ids = (await t.tmux("list-sessions", "-F", "#{session_id}")).trim().split("\n");
    assert.equal(ids.length, MAX_CONNECTIONS);
    // A watch in every session before any command (or after the command client was lost):
    // each wants a client of its own, one more than may go to watches.
    const watches = await Promise.allSettled(
      panes.map((pane, i) => control.watch(pane, [ids[i]], () => {})),
    );
    const held = watches.filter((w) => w.status === "fulfilled");
    assert.equal(held.length, MAX_CONNECTIONS - 1, "one client kept for commands");
    const refused = watches.find((w) => w.status === "rejected");
    assert.ok(refused?.status === "rejected" && refused.reason instanceof ControlUnavailable);
    // The command client still attaches: commands go over control, not a process each.
    const answer = await control.exec(["display-message", "-p", "x"]);
    assert.equal(text(answer.stdout), "x\n");
    assert.equal(control.connections, MAX_CONNECTIONS);
    for (const w of held) if (w.status === "fulfilled") w.value.close();
  });
});

Deno.test("sessions with destroy-unattached are never attached to", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    await t.attach("main");
    await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    await assert.rejects(
      () => controlFor(runner, address).watch(t.ids.paneId, [t.ids.sessionId], () => {}),
      ControlUnavailable,
    );
    const modes = await t.tmux("list-clients", "-F", "#{client_control_mode}");
    assert.equal(modes.trim(), "0", "only the person's client");
  });
});

/**
 * This runner's two control clients on `t` (one for commands, one watching the first pane);
 * `gone()` waits until tmux's exit-unattached has ended the server and both have left.
 */
async function ourTwoClients(
  t: TestTmux & { ids: { sessionId: string; paneId: string } },
  runner: TmuxRunner,
  pid: number,
) {
  const control = controlFor(runner, { socketName: t.socket });
  await control.exec(["display-message", "-p", "x"]);
  const lost = Promise.withResolvers<void>();
  const watch = await control.watch(t.ids.paneId, [t.ids.sessionId], (b) => {
    if (b.lost) lost.resolve();
  });
  assert.equal(control.connections, 2, "a client for commands and one for the watch");
  return {
    async gone() {
      await waitFor(() => !alive(pid), "the server to exit as it would without us");
      await lost.promise;
      watch.close();
      assert.equal(control.connections, 0);
    },
  };
}

Deno.test("exit-unattached: our control clients leave with the last person, and the server exits", async () => {
  await withServer(async (t, runner) => {
    const { pid } = await t.facts();
    const tty = await t.attach("main");
    await t.tmux("set-option", "-g", "exit-unattached", "on");
    const ours = await ourTwoClients(t, runner, pid);
    await t.tmux("detach-client", "-t", tty);
    await ours.gone();
    // Nothing to attach to: commands are spawned (and find no server).
    const fast = await execFast(runner, { socketName: t.socket }, ["display-message", "-p", "x"]);
    assert.notEqual(fast.code, 0);
  });
});

Deno.test("exit-unattached turned on after ours attached: they leave with the last person", async () => {
  await withServer(async (t, runner) => {
    const { pid } = await t.facts();
    const tty = await t.attach("main");
    const ours = await ourTwoClients(t, runner, pid);
    await t.tmux("set-option", "-g", "exit-unattached", "on");
    await t.tmux("detach-client", "-t", tty);
    await ours.gone();
  });
});

Deno.test("exit-unattached turned on while only ours are attached: they leave, and the server exits", async () => {
  await withServer(async (t, runner) => {
    const { pid } = await t.facts();
    const ours = await ourTwoClients(t, runner, pid);
    // Without us tmux would exit at once: no client is attached.
    await t.tmux("set-option", "-g", "exit-unattached", "on");
    await ours.gone();
  });
});

Deno.test("exit-unattached: another program's client counts as someone; ours leave after it", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const clients = async () =>
      (await t.tmuxRaw("list-clients", "-F", "#{client_name}")).stdout.split("\n")
        .filter((l) => l !== "").length;
    const tty = await t.attach("main");
    await t.tmux("set-option", "-g", "exit-unattached", "on");
    const other = t.controlClient("main");
    await waitFor(async () => await clients() === 2, "the other program's client");
    await t.tmux("detach-client", "-t", tty);
    await waitFor(async () => await clients() === 1, "the person to leave");
    const control = controlFor(runner, address);
    await control.exec(["display-message", "-p", "x"]);
    assert.equal(control.connections, 1, "attached beside the other program's client");
    await other.stdin.close();
    await other.status;
    // Ours would now be the last: it leaves, and the server exits.
    await waitFor(async () => (await t.tmuxRaw("list-sessions")).code !== 0, "the server to exit");
    assert.equal(control.connections, 0);
  });
});

Deno.test("detach-on-destroy off: clients tmux moves into a person's session leave it", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const seats = async () =>
      (await t.tmux("list-clients", "-F", "#{client_control_mode} #{session_name}")).trim()
        .split("\n").sort();
    await t.tmux("set-option", "-g", "detach-on-destroy", "off");
    const person = await t.attach("main");
    const [agentId, agentPane] = (await t.tmux(
      "new-session",
      "-d",
      "-s",
      "agent",
      "-P",
      "-F",
      "#{session_id} #{pane_id}",
    )).trim().split(" ");
    // Both clients join "agent", the one session nobody is attached to, after the person came.
    const control = controlFor(runner, address);
    await control.exec(["display-message", "-p", "x"]);
    const lost = Promise.withResolvers<void>();
    const watch = await control.watch(agentPane, [agentId], (b) => {
      if (b.lost) lost.resolve();
    });
    assert.deepEqual(await seats(), ["0 main", "1 agent", "1 agent"]);
    // Its session killed, tmux moves every client of it into the person's session.
    await t.tmux("kill-session", "-t", "agent");
    await lost.promise;
    watch.close();
    await waitFor(
      async () => !(await seats()).includes("1 main"),
      "our clients to leave the session tmux moved them into",
    );
    assert.equal(control.connections, 0);
    // The person, from their pane, switches "the current client" (no -c): theirs moves.
    await t.tmux("new-session", "-d", "-s", "spare");
    await t.tmux("send-keys", "-t", t.ids.paneId, "tmux switch-client -t spare", "Enter");
    await waitFor(
      async () =>
        (await t.tmux("list-clients", "-F", "#{client_tty} #{session_name}"))
          .includes(`${person} spare`),
      "the person's own client to switch",
    );
    // The next call attaches again, where nobody is.
    await control.exec(["display-message", "-p", "x"]);
    assert.deepEqual(await seats(), ["0 spare", "1 main"]);
  });
});

Deno.test("servers other than the home one: clients leave when idle, and beyond the cap", async () => {
  const all = await Promise.all([0, 1, 2, 3].map(() => TestTmux.start()));
  const [home, b, c, d] = all;
  const runner = new TmuxRunner();
  runner.home = { socketName: home.socket };
  setControlLimits(runner, { idleMs: 400, maxServers: 2 });
  const ours = async (t: TestTmux) =>
    (await t.tmuxRaw("list-clients", "-F", "#{client_control_mode}")).stdout.split("\n")
      .filter((l) => l === "1").length;
  try {
    const first = controlFor(runner, { socketName: b.socket });
    for (const t of [home, b, c]) {
      await controlFor(runner, { socketName: t.socket }).exec(["display-message", "-p", "x"]);
    }
    // A watch keeps c's clients however long it lasts.
    const watch = await controlFor(runner, { socketName: c.socket })
      .watch(c.ids.paneId, [c.ids.sessionId], () => {});
    // A third server other than the home one: the least recently used (b) lets its client go.
    await controlFor(runner, { socketName: d.socket }).exec(["display-message", "-p", "x"]);
    await waitFor(async () => await ours(b) === 0, "b's client to leave (over the cap)");
    assert.notEqual(controlFor(runner, { socketName: b.socket }), first, "b's record dropped");
    // Idle: d's client leaves; c's stays while watched, then leaves; the home one stays.
    await waitFor(async () => await ours(d) === 0, "d's client to leave when idle");
    assert.equal(await ours(c), 2, "c's clients stay while a watch needs them");
    watch.close();
    await waitFor(async () => await ours(c) === 0, "c's clients to leave once idle", 10_000);
    assert.equal(await ours(home), 1, "the home server's client stays");
    // A retired server works as before: the next call opens a client again. Idle no more for
    // the rest of the test: the new client must still be there when tmux is asked, however long
    // a loaded machine takes to ask.
    setControlLimits(runner, { idleMs: 600_000 });
    const again = await controlFor(runner, { socketName: d.socket }).exec(["list-sessions"]);
    assert.equal(again.code, 0);
    assert.equal(await ours(d), 1);
  } finally {
    await runner.close();
    await Promise.all(all.map((t) => t.kill()));
  }
  assert.equal(runner.running, 0, "no tmux child left behind");
});

Deno.test("closing the runner ends every control client", async () => {
  const t = await TestTmux.start();
  const runner = new TmuxRunner();
  try {
    const control = controlFor(runner, { socketName: t.socket });
    await control.exec(["display-message", "-p", "x"]);
    assert.ok(runner.running >= 1, "the control client counts as a running child");
    await runner.close();
    assert.equal(runner.running, 0);
    await waitFor(async () => (await t.clientTtys()).length === 0, "the control client to go");
    await assert.rejects(() => control.exec(["display-message", "-p", "x"]), ControlUnavailable);
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("hooks run after every command neither hold output back nor keep sentinels coming", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    // After each display-message (every sentinel is one): a block of the hook's own on the
    // control client, and a layout change.
    await t.tmux(
      "set-hook",
      "-g",
      "after-display-message",
      "set -gF @n '#{e|+:#{@n},1}' ; select-layout -t main:0 tiled",
    );
    const control = controlFor(runner, address);
    for (let i = 0; i < 20; i++) {
      const result = await control.exec(["show-options", "-gv", "-t", t.ids.paneId, "@n"]);
      assert.equal(result.code, 0);
    }
    const count = async () => Number((await t.tmux("show-options", "-gv", "@n")).trim());
    const hooks = await count();
    // A few more: the client's handshake (the note of its attach, then its subscription,
    // which needs the window that note names) and the read of the aliases (command_aliases.ts)
    // before the first call.
    assert.ok(hooks <= 20 + 5, `${hooks} display-messages for 20 calls`);
    // Idle, the connection sends nothing: a loop would show up while tmux runs other clients.
    // Only the first value of the client's exit-unattached subscription, a second after it
    // attached, may take one sentinel (a hook's block ran since the last).
    for (let i = 0; i < 30; i++) await t.tmux("show-options", "-gv", "@n");
    assert.ok(await count() <= hooks + 1, "no sentinel answered the hook's layout change");

    // Output read after a hook's block is delivered (a sentinel of the protocol's own).
    const seen = new TerminalText();
    const got = Promise.withResolvers<void>();
    const watch = await control.watch(t.ids.paneId, [t.ids.sessionId], (b) => {
      for (const chunk of b.output) if (seen.push(chunk).some((l) => l === "HI")) got.resolve();
    });
    await control.exec(["display-message", "-p", "x"]);
    await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "printf 'H%sI\\n' ''");
    await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
    await got.promise;
    watch.close();
    // One client for commands, one for the watch (whose own attach ran the hook too).
    assert.equal(control.connections, 2, "never retired");
  });
});

Deno.test("hooks printing as a control client attaches leave it attached and answering", async () => {
  await withServer(async (t, runner) => {
    // tmux 3.3a writes what these print bare, outside any answer, around the attach.
    for (const hook of ["client-attached", "client-session-changed", "pane-focus-in"]) {
      await t.tmux("set-hook", "-g", hook, `display-message -p '${hook} says hi'`);
    }
    await t.tmux("set-option", "-g", "focus-events", "on");
    const control = controlFor(runner, { socketName: t.socket });
    for (let i = 0; i < 3; i++) {
      const result = await control.exec(["display-message", "-p", `x${i}`]);
      assert.equal(text(result.stdout), `x${i}\n`);
    }
    assert.equal(control.connections, 1);
  });
});

Deno.test("a control client whose attach breaks the framing is not tried again on every call", async () => {
  await withServer(async (t, runner) => {
    // A hook printing what reads as the end of an answer (strftime makes `%%` one `%`): the
    // stream is out of step before the handshake ends, and the client is retired.
    await t.tmux("set-option", "-g", "@attaches", "0");
    await t.tmux(
      "set-hook",
      "-g",
      "client-attached",
      "display-message -p '%%end 1 2 3' ; set-option -gF @attaches '#{e|+:#{@attaches},1}'",
    );
    const address = { socketName: t.socket };
    for (let i = 0; i < 4; i++) {
      // Each call is answered all the same, by a tmux process of its own.
      const result = await execFast(runner, address, ["display-message", "-p", `x${i}`]);
      assert.equal(text(result.stdout), `x${i}\n`);
    }
    const attaches = Number((await t.tmux("show-options", "-gv", "@attaches")).trim());
    assert.equal(attaches, 1, `4 calls tried ${attaches} control clients`);
    await assert.rejects(
      () => controlFor(runner, address).exec(["display-message", "-p", "x"]),
      ControlUnavailable,
    );
  });
});

Deno.test("a control client tmux refuses is not tried again on every call", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-no-control-" });
  const t = await TestTmux.start();
  try {
    // A tmux that refuses every control client (exits at once), and counts them.
    const binary = await noControlTmux(dir, { tries: `${dir}/tries` });
    const runner = new TmuxRunner({ binary });
    // Longer than the four calls take, however loaded the machine.
    setControlLimits(runner, { refusedBackoffMs: 600_000 });
    try {
      const address = { socketName: t.socket };
      for (let i = 0; i < 4; i++) {
        // Each call is answered all the same, by a tmux process of its own.
        const result = await execFast(runner, address, ["display-message", "-p", `x${i}`]);
        assert.equal(text(result.stdout), `x${i}\n`);
      }
      const tries = (await Deno.readTextFile(`${dir}/tries`)).split("\n").filter(Boolean);
      assert.equal(tries.length, 1, `4 calls tried ${tries.length} control clients`);
    } finally {
      await runner.close();
    }
    assert.equal(runner.running, 0, "no tmux child left behind");
  } finally {
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the view-mode a slow hook's run-shell puts on the joined session's pane is left before the first call", async () => {
  const job = await heldJob();
  try {
    await withServer(async (t, runner) => {
      // However long the job takes, within the (here generous) wait.
      setControlLimits(runner, { hookJobsWaitMs: 60_000 });
      await t.tmux("set-hook", "-g", "client-attached", job.command);
      const control = controlFor(runner, { socketName: t.socket });
      const call = control.exec(["display-message", "-p", "-t", t.ids.paneId, "#{pane_mode}."]);
      await waitFor(job.began, "the hook's job");
      await job.open();
      assert.equal(text((await call).stdout), ".\n", "the first call finds the pane in no mode");
      assert.equal(
        await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_mode}."),
        ".\n",
      );
    });
  } finally {
    await job.remove();
  }
});

Deno.test("startedSince keeps the jobs started after the client, all of them when its pid is no pid", () => {
  const jobs = new Set(["99", "100", "101", "4194303"]);
  // A job whose pid is far above the client's started before it, pids having wrapped since
  // (at pid_max 32768, as on many systems, they wrap every few tens of thousands of forks).
  assert.deepEqual([...startedSince(jobs, "100")], ["101"]);
  assert.deepEqual([...startedSince(new Set(["32700", "400", "305"]), "301")], ["400", "305"]);
  for (const pid of [undefined, "", "0", "-1", "x", "12 ", "010", "99999999999"]) {
    assert.deepEqual([...startedSince(jobs, pid)], [...jobs], String(pid));
  }
});

Deno.test("a person's job running before the attach holds up no call, and its output's view-mode stays theirs", async () => {
  const job = await heldJob();
  try {
    await withServer(async (t, runner) => {
      // Waited for, a job of theirs would hold the first call until it ended.
      setControlLimits(runner, { hookJobsWaitMs: 600_000 });
      const pane = t.ids.paneId;
      // A person's run-shell still running (a status line's `#()` sampling for a second or two
      // is listed alike): its output goes to a view-mode on their pane when it ends.
      await t.tmux("run-shell", "-b", "-t", pane, job.script);
      await waitFor(job.began, "the person's job");
      const control = controlFor(runner, { socketName: t.socket });
      const answered = await within(
        control.exec(["display-message", "-p", "answered"]),
        20_000,
        "the call, beside the person's job,",
      );
      assert.equal(text(answered.stdout), "answered\n");
      assert.equal(control.connections, 1);
      await job.open();
      const mode = () => t.tmux("display-message", "-p", "-t", pane, "#{pane_mode}.");
      await waitFor(async () => (await mode()) === "view-mode.\n", "the job's output on the pane");
      await control.exec(["display-message", "-p", "again"]);
      assert.equal(await mode(), "view-mode.\n", "the person's view-mode is left to them");
    });
  } finally {
    await job.remove();
  }
});

Deno.test("a hook's job that does not end holds up no attach", async () => {
  const job = await heldJob();
  try {
    await withServer(async (t, runner) => {
      setControlLimits(runner, { hookJobsWaitMs: 200 });
      await t.tmux("set-hook", "-g", "client-attached", job.command);
      const control = controlFor(runner, { socketName: t.socket });
      const result = await control.exec(["display-message", "-p", "answered"]);
      assert.equal(text(result.stdout), "answered\n");
      // tmux lists the job from its start, and the attach waited on that list; the script's
      // first line may come later on a loaded machine. The job never ends before its removal.
      await waitFor(job.began, "the hook's job");
      assert.equal(control.connections, 1);
      await job.remove();
    });
  } finally {
    await job.remove();
  }
});

Deno.test("watches told their client left after a window moved find room again at once", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const control = controlFor(runner, address);
    const panes = [t.ids.paneId];
    for (let i = 1; i < MAX_CONNECTIONS - 1; i++) {
      panes.push(
        (await t.tmux("new-session", "-d", "-s", `s${i}`, "-P", "-F", "#{pane_id}")).trim(),
      );
    }
    const ids = (await t.tmux("list-sessions", "-F", "#{session_id}")).trim().split("\n");
    const moving = (await t.tmux("new-window", "-d", "-t", "s1:", "-P", "-F", "#{window_id}"))
      .trim();
    await t.tmux("new-session", "-d", "-s", "elsewhere");
    // Every client but the one for commands carries a watch.
    const lost = panes.map(() => Promise.withResolvers<void>());
    const held = await Promise.all(
      panes.map((pane, i) =>
        control.watch(pane, [ids[i]], (batch) => {
          if (batch.lost) lost[i].resolve();
        })
      ),
    );
    await control.exec(["display-message", "-p", "x"]);
    // A window moved out of a session: tmux tells every control client, and the clients
    // whose session it left have to go (control_leaving.ts leaveIfWindowsMoved).
    await t.tmux("move-window", "-s", moving, "-t", "elsewhere:");
    const told = panes.flatMap((_, i) => [lost[i].promise.then(() => i)]);
    const first = await Promise.race(told);
    // Told, a watcher attaches again at once, while the client it left is still leaving.
    const again = await control.watch(panes[first], [ids[first]], () => {});
    again.close();
    for (const w of held) w.close();
  });
});
