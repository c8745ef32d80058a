/**
 * SSH hosts whose remote start-up file reads its input: a `.bashrc` with `read -t 1`, or an
 * `ssh` without `-n` inside it, takes whatever is on the session's stdin before the command the
 * session was opened for runs. What a call hands tmux on its stdin (load_buffer's text, a long
 * paste's buffer, a command line too long for tmux's arguments) must reach tmux whole all the
 * same, and a start-up file that waits on its input for ever must end the call with an error
 * that says so, within the call's time. Also: a host whose connection does not come within a
 * call's time says that, not that the call was cancelled. A real OpenSSH server on 127.0.0.1
 * (see helpers/sshd.ts); skipped, saying why, only where sshd cannot be started.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fixtureTest } from "./helpers/skippable.ts";
import { type Sshd, startSshd } from "./helpers/sshd.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { paneId: string } };

const started = await startSshd(["h1"]);
const skip = typeof started === "string" ? started : null;
// deno-lint-ignore no-console
if (skip) console.error(`ssh_startup_input_test: skipped: ${skip}`);
const sshTest = fixtureTest(skip, { sanitize: false });
const stopTest = fixtureTest(skip);

/**
 * Replaces the remote start-up file (BASH_ENV of every remote command) for `fn`'s length with
 * one that, while the file `flag` exists, reads a line of its input first: `wait` is read's
 * `-t` (null: no timeout, it waits until a line or the end of the input comes).
 */
async function withReadingRc(
  sshd: Sshd,
  wait: number | null,
  fn: (flag: string) => Promise<void>,
): Promise<void> {
  const file = `${sshd.dir}/noisy_rc`;
  const flag = `${sshd.dir}/rc_reads`;
  const before = await Deno.readTextFile(file);
  const timeout = wait === null ? "" : ` -t ${wait}`;
  await Deno.writeTextFile(file, `[ -f ${flag} ] && read -r${timeout} _eaten\n`);
  try {
    await fn(flag);
  } finally {
    await Deno.remove(flag).catch(() => {});
    await Deno.writeTextFile(file, before);
  }
}

/**
 * A tmux server and a client whose runner reaches it through `h1`, both ended afterwards; the
 * host's connection and its command client are up before `fn` runs.
 */
async function onHost(
  sshd: Sshd,
  fn: (t: Server, c: TestClient, on: { host: string; socket_name: string }) => Promise<void>,
  options: { timeoutMs?: number; control?: boolean } = {},
): Promise<void> {
  const t = await TestTmux.start("main", { command: "bash --norc --noprofile" });
  const runner = new TmuxRunner({
    ...options,
    ssh: { destinations: ["h1"], configFile: sshd.config, connectTimeoutS: 5 },
  });
  const c = await connect({ runner });
  try {
    const on = { host: "h1", socket_name: t.socket };
    await c.ok("list_panes", on);
    await fn(t, c, on);
  } finally {
    await c.close();
    assert.equal(runner.running, 0, "no tmux or ssh child left behind");
    await t.kill();
  }
}

// Found by a tester: the text went to ssh's stdin right after it started, and the start-up file's
// read took it; the tmux that ran after loaded nothing, and the reply said "Loaded".
sshTest(
  "ssh startup input: load_buffer's text reaches the remote tmux past a start-up file that reads",
  async () => {
    const sshd = started as Sshd;
    await withReadingRc(sshd, 1, async (flag) => {
      await onHost(sshd, async (t, c, on) => {
        await Deno.writeTextFile(flag, "");
        const loaded = await c.ok<{ bufferName: string }>("load_buffer", {
          ...on,
          text: "hello world",
          name: "one",
        });
        const buffers = await t.tmux("list-buffers", "-F", "#{buffer_name}");
        assert.ok(buffers.split("\n").includes(loaded.bufferName), buffers);
        const shown = await c.ok<{ text: string }>("show_buffer", {
          ...on,
          name: loaded.bufferName,
        });
        assert.equal(shown.text, "hello world");
      });
    });
  },
);

// A paste past 10 KiB goes through a buffer loaded on tmux's stdin: the start-up file took its
// first line (a `cd`), and the second ran where it was not meant to.
sshTest(
  "ssh startup input: a long paste_text with enter runs its first line past a start-up file that reads",
  async () => {
    const sshd = started as Sshd;
    await withReadingRc(sshd, 1, async (flag) => {
      await onHost(sshd, async (t, c, on) => {
        const p = t.ids.paneId;
        await waitFor(
          async () => /[$#]$/.test((await t.tmux("capture-pane", "-p", "-t", p)).trimEnd()),
          "a bash prompt",
        );
        const proof = `${sshd.dir}/first_line_ran`;
        await Deno.writeTextFile(flag, "");
        await c.ok("paste_text", {
          ...on,
          paneId: p,
          text: `echo ran > ${proof}\n: ${"x".repeat(11_000)}`,
          enter: true,
        });
        await waitFor(async () => {
          try {
            return (await Deno.readTextFile(proof)).trim() === "ran";
          } catch {
            return false;
          }
        }, "the paste's first line to run");
      });
    });
  },
);

// A command line past tmux's arguments goes as a file on the stdin of a tmux process of its own
// (`source-file -`); over a control connection it needs none, so the runner here has none.
sshTest(
  "ssh startup input: a 20 KB set_option value reads back whole past a start-up file that reads",
  async () => {
    const sshd = started as Sshd;
    await withReadingRc(sshd, 1, async (flag) => {
      await onHost(sshd, async (t, c, on) => {
        await Deno.writeTextFile(flag, "");
        const value = Array.from({ length: 2_000 }, (_, i) => `v${i}`.padEnd(10, ".")).join("");
        assert.equal(value.length, 20_000);
        await c.ok("set_option", { ...on, name: "@big", value, scope: "server" });
        const stored = await t.tmux("show-options", "-sv", "@big");
        assert.equal(stored.replace(/\n$/, ""), value);
      }, { control: false });
    });
  },
);

// A start-up file that reads until a line comes never hands over to tmux while the call's input
// waits for it: the call ends at its time with an error that says so, not a hang, and not a
// claim that the text went in.
sshTest(
  "ssh startup input: a start-up file that waits on its input fails the call in its time, saying why",
  async () => {
    const sshd = started as Sshd;
    await withReadingRc(sshd, null, async (flag) => {
      await onHost(sshd, async (t, c, on) => {
        const runner = c.server.runner;
        const before = runner.running;
        await Deno.writeTextFile(flag, "");
        const t0 = performance.now();
        const failed = await c.fail("load_buffer", { ...on, text: "hello world", name: "two" });
        const took = performance.now() - t0;
        assert.ok(took < 10_000, `answered after ${Math.round(took)} ms`);
        assert.match(failed, /within 3000 ms \(the remote shell's start-up files/, failed);
        assert.match(failed, /tmux got none of it/, failed);
        assert.doesNotMatch(failed, /Loaded/, failed);
        // The call's ssh is gone with it, though the start-up file still waits there.
        await waitFor(() => runner.running <= before, "the call's ssh to end", 3_000);
        await Deno.remove(flag);
        const buffers = await t.tmux("list-buffers", "-F", "#{buffer_name}");
        assert.ok(!buffers.includes("two"), buffers);
      }, { timeoutMs: 3_000 });
    });
  },
);

// A host whose port takes the connection and then says nothing: list_servers probes it for 2 s
// and said "the call was cancelled", which no one had done.
sshTest(
  "ssh startup input: list_servers says a silent host gave no connection in the probe's time",
  async () => {
    const sshd = started as Sshd;
    const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const config = `${sshd.dir}/silent_config`;
    await Deno.writeTextFile(
      config,
      `Host silent\n  HostName 127.0.0.1\n  Port ${(silent.addr as Deno.NetAddr).port}\n`,
    );
    const runner = new TmuxRunner({
      ssh: { destinations: ["silent"], configFile: config, connectTimeoutS: 5 },
    });
    const c = await connect({ runner });
    try {
      const listed = await c.ok<{ servers: { host?: string; error: string | null }[] }>(
        "list_servers",
        {},
      );
      const entry = listed.servers.find((s) => s.host === "silent");
      assert.ok(entry?.error, JSON.stringify(listed));
      assert.doesNotMatch(entry.error, /cancel/i, entry.error);
      assert.match(entry.error, /no connection within the call's time \(2000 ms\)/, entry.error);
    } finally {
      await c.close();
      silent.close();
    }
  },
);

stopTest("ssh startup input: sshd stops", async () => {
  await (started as Sshd).stop();
});
