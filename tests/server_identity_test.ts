/**
 * Which tmux server a job, a cursor or a remembered channel belongs to, once that server has
 * ended and another answers on its socket. A server's pid alone does not tell: a tmux server in
 * a container (a pid namespace of its own) gets the same small pid each time the container
 * starts. These tests restart a server in a pid namespace of its own (`unshare -pf`, as root)
 * so that its successor has the same pid; where that cannot be done they say they were skipped.
 *
 * tmux tells when its server started to the second (`#{start_time}`): a successor with the same
 * pid that started within the same second cannot be told apart, so each test waits for the
 * clock to pass the first server's second before it starts the next one.
 */

import assert from "node:assert/strict";
import { fixtureTest } from "./helpers/skippable.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { sh, testSocketName, TestTmux, waitFor } from "./helpers/tmux.ts";

/** Why a server cannot be started in a pid namespace of its own here; null when it can. */
async function namespaceUnavailable(): Promise<string | null> {
  try {
    const probe = await new Deno.Command("unshare", {
      args: ["-pf", "--mount-proc", "true"],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (probe.code === 0) return null;
    const why = new TextDecoder().decode(probe.stderr).trim().split("\n")[0];
    return `unshare -pf --mount-proc fails here (it needs root, with CAP_SYS_ADMIN): ${why}`;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "no unshare on PATH (util-linux)";
    throw error;
  }
}

const skip = Deno.build.os === "linux"
  ? await namespaceUnavailable()
  : "pid namespaces are Linux's";
// deno-lint-ignore no-console
if (skip) console.error(`server_identity_test: same-pid restarts skipped: ${skip}`);
const samePidTest = fixtureTest(skip);

async function tmuxOn(name: string, ...args: string[]): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command("tmux", {
    args: ["-u", "-L", name, "-f", "/dev/null", ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return { code: r.code, out: new TextDecoder().decode(r.stdout) };
}

/** A server started in a pid namespace of its own, and when it started (tmux's seconds). */
interface Contained {
  readonly child: Deno.ChildProcess;
  readonly pid: number;
  readonly startTime: number;
  /** Its socket file, which tmux leaves behind when the server ends. */
  readonly socketPath: string;
}

/**
 * Starts a tmux server on socket `name` in a pid namespace of its own, as a container would
 * (its init lives until the server is gone), once the clock has passed second `after`; returns
 * when its pane %0 shows its shell's prompt.
 */
async function upInNamespace(name: string, after = 0): Promise<Contained> {
  await waitFor(() => Date.now() >= (after + 1) * 1000, "the clock to pass the last start");
  const child = new Deno.Command("unshare", {
    args: [
      "-pf",
      "--mount-proc",
      "sh",
      "-c",
      `tmux -u -L ${name} -f /dev/null new-session -d -s main -x 80 -y 24 sh || exit 1; ` +
      `while tmux -L ${name} has-session 2>/dev/null; do sleep 0.05; done`,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/" },
    clearEnv: true,
  }).spawn();
  const facts = await waitFor(async () => {
    const r = await tmuxOn(
      name,
      "display-message",
      "-p",
      "-t",
      "%0",
      "#{pid} #{start_time} #{socket_path}",
    );
    if (r.code !== 0) return null;
    const screen = await tmuxOn(name, "capture-pane", "-p", "-t", "%0");
    return screen.out.trim() !== "" ? r.out.trim().split(" ") : null;
  }, "a server in its own pid namespace").catch(async (error) => {
    // Its init ends once no server answers there.
    await tmuxOn(name, "kill-server");
    await child.status;
    throw error;
  });
  const [pid, startTime, ...path] = facts;
  return { child, pid: Number(pid), startTime: Number(startTime), socketPath: path.join(" ") };
}

async function downInNamespace(name: string, server: Contained): Promise<void> {
  await tmuxOn(name, "kill-server");
  await server.child.status;
  await Deno.remove(server.socketPath).catch(() => {});
}

/**
 * Runs `fn` with a server in a pid namespace of its own on a fresh socket, a client connected
 * to it, and `restart`: ends the server and starts its successor, with the same pid, there.
 */
async function withContainedServer(
  fn: (name: string, c: TestClient, restart: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const name = testSocketName();
  let server = await upInNamespace(name);
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: name });
    await fn(name, c, async () => {
      const first = server;
      await downInNamespace(name, first);
      server = await upInNamespace(name, first.startTime);
      assert.equal(server.pid, first.pid, "the namespace gives the new server the same pid");
    });
  } finally {
    await c?.close();
    await downInNamespace(name, server).catch(() => {});
  }
}

function textOf(result: { content?: unknown }): string {
  const content = result.content as { type: string; text?: string }[] | undefined;
  return content?.[0]?.type === "text" ? content[0].text ?? "" : "";
}

samePidTest(
  "a capture_since cursor of a server that ended is refused on its same-pid successor",
  async () => {
    await withContainedServer(async (name, c, restart) => {
      const shows = (text: string) =>
        waitFor(
          async () => (await tmuxOn(name, "capture-pane", "-p", "-t", "%0")).out.includes(text),
          JSON.stringify(text),
        );
      await tmuxOn(name, "send-keys", "-t", "%0", "echo first-server-line", "Enter");
      await shows("first-server-line\n");
      const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: "%0" });
      // The person's container restarts, and tmux in it: the new server has the same pid.
      await restart();
      await tmuxOn(name, "send-keys", "-t", "%0", "echo second-server-line", "Enter");
      await shows("second-server-line\n");
      const text = await c.fail("capture_since", { paneId: "%0", cursor });
      assert.match(text, /another tmux server \(or one since restarted\)/);
      assert.doesNotMatch(text, /second-server-line/);
    });
  },
);

samePidTest(
  "a job of a server that ended is not reported running in its same-pid successor's pane",
  async () => {
    await withContainedServer(async (name, c, restart) => {
      const sleeping = (what: string) =>
        waitFor(
          async () =>
            (await tmuxOn(name, "display-message", "-p", "-t", "%0", "#{pane_current_command}"))
              .out.trim() === "sleep",
          what,
        );
      const started = await c.ok<{ jobId: string }>("run_command", {
        paneId: "%0",
        command: "sleep 600",
        background: true,
      });
      await sleeping("the agent's job on the first server");
      // The person's container restarts, and tmux in it: the new server has the same pid, and
      // its first pane is %0 again, where the person starts a program of their own.
      await restart();
      await tmuxOn(name, "send-keys", "-t", "%0", "sleep 900 # the person's own", "Enter");
      await sleeping("the person's program on the new server");
      const text = await c.fail("get_command_result", { jobId: started.jobId });
      assert.match(text, /another tmux server/);
      // Not taken for the agent's old job: no C-c or respawn with kill is suggested for it.
      const again = await c.call("run_command", { paneId: "%0", command: "echo hi" });
      assert.doesNotMatch(textOf(again), /still running an earlier run_command/);
      assert.doesNotMatch(textOf(again), /busy with a command another run_command typed/);
    });
  },
);

Deno.test("signal_channel does not blame a wait abandoned on a server that has since ended", async () => {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket });
    const waited = await c.ok<{ outcome: string }>("wait_for_channel", {
      channel: "ready",
      timeoutMs: 100,
    });
    assert.equal(waited.outcome, "timedOut");
    // The person restarts tmux on the same socket: the abandoned wait ended with the old server.
    await t.tmux("kill-server");
    await waitFor(
      async () => /no server running/.test((await t.tmuxRaw("list-sessions")).stderr),
      "the old server gone",
    );
    await t.tmux("new-session", "-d", "-s", "main", "sh");
    const signalled = await c.call("signal_channel", { channel: "ready" });
    // Nobody waited on the new server: tmux kept the signal, and a wait returns at once. Bounded:
    // a signal that went elsewhere would leave this wait blocked for ever.
    await sh("tmux", ["-u", "-L", t.socket, "-f", "/dev/null", "wait-for", "ready"], {
      timeoutMs: 10_000,
    });
    assert.doesNotMatch(textOf(signalled), /abandoned .* may have taken this signal/);
    // A wait that times out on the new server says nothing of the old server's either.
    const later = await c.call("wait_for_channel", { channel: "ready", timeoutMs: 100 });
    assert.doesNotMatch(textOf(later), /An earlier wait on it that a tmux-mcp server abandoned/);
  } finally {
    await c?.close();
    await t.kill();
  }
});
