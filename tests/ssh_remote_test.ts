/**
 * SSH hosts as the operator's ssh setup and the remote host can make them: a ProxyJump whose
 * ssh would ask on the person's terminal, a host whose start-up file floods the master's stderr,
 * a changed host key, a master killed outright. A real OpenSSH server on 127.0.0.1 (see
 * helpers/sshd.ts); skipped, saying why, only where sshd cannot be started.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fixtureTest } from "./helpers/skippable.ts";
import { hostEntry, type Sshd, startSshd } from "./helpers/sshd.ts";
import { connect } from "./helpers/mcp.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { cleanEnv, sh, TestTmux, waitFor } from "./helpers/tmux.ts";

const started = await startSshd(["h1", "h2"]);
const skip = typeof started === "string" ? started : null;
// deno-lint-ignore no-console
if (skip) console.error(`ssh_remote_test: skipped: ${skip}`);
const sshTest = fixtureTest(skip, { sanitize: false });
const stopTest = fixtureTest(skip);

/**
 * The real server process (the start task's flags) with a controlling terminal, as it has when
 * an MCP client in a terminal (Claude Code, Codex, Gemini CLI) starts it: its stdin and stdout
 * stay pipes (JSON-RPC), its terminal is a pty whose output `script` records in `ttyLog`.
 */
function serverOnTerminal(extra: string[], ttyLog: string): StdioServer {
  const { cmd, args } = startCommand();
  const q = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
  const inner = `exec ${[cmd, ...args, ...extra].map(q).join(" ")} <&3 >&4 2>&5`;
  return new StdioServer(
    "sh",
    ["-c", `exec 3<&0 4>&1 5>&2; exec script -qfec ${q(inner)} ${q(ttyLog)} </dev/null >/dev/null`],
    cleanEnv(),
  );
}

sshTest(
  "ssh remote: a ProxyJump prompt (passphrase, host key) never reaches the person's terminal",
  async () => {
    // The operator reaches the host through a bastion (ProxyJump) whose key has a passphrase
    // and is not in an agent. BatchMode=yes is on tmux-mcp's ssh, but OpenSSH does not pass it
    // to the jump's own ssh, which asks on /dev/tty: the terminal the person types into.
    const sshd = started as Sshd;
    const dir = sshd.dir;
    await sh("ssh-keygen", ["-q", "-t", "ed25519", "-N", "secret-pass", "-f", `${dir}/enc_key`]);
    await Deno.writeTextFile(
      `${dir}/authorized_keys`,
      await Deno.readTextFile(`${dir}/enc_key.pub`),
      { append: true },
    );
    await Deno.writeTextFile(
      sshd.config,
      [
        hostEntry(sshd, "bastion", { IdentityFile: `${dir}/enc_key` }),
        hostEntry(sshd, "behind", { ProxyJump: "bastion" }),
        // A bastion not yet in known_hosts (StrictHostKeyChecking at its default, ask).
        hostEntry(sshd, "bastion2", {
          UserKnownHostsFile: `${dir}/known_hosts_bastion2`,
          StrictHostKeyChecking: null,
        }),
        hostEntry(sshd, "behind2", { ProxyJump: "bastion2" }),
      ].join(""),
      { append: true },
    );
    const t = await TestTmux.start();
    const ttyLog = `${dir}/tty.log`;
    const server = serverOnTerminal(
      ["--ssh", "behind", "--ssh", "behind2", "--ssh-config", sshd.config],
      ttyLog,
    );
    try {
      await server.initialize();
      const said: Record<string, string> = {};
      for (const host of ["behind", "behind2"]) {
        const r = await server.callTool("list_panes", { host, socket_name: t.socket }) as {
          isError?: boolean;
          content?: { text: string }[];
        };
        assert.equal(r.isError, true, `${host} cannot be reached without a prompt`);
        said[host] = r.content?.[0]?.text ?? "";
      }
      // Each says ssh's own reason, not that no one could be asked.
      assert.match(said.behind, /Permission denied/, said.behind);
      assert.match(said.behind2, /Host key verification failed/, said.behind2);
      assert.doesNotMatch(said.behind + said.behind2, /ssh_askpass/);
      const terminal = await Deno.readTextFile(ttyLog).catch(() => "");
      assert.doesNotMatch(
        terminal,
        /passphrase|password|continue connecting/i,
        `an ssh started by tmux-mcp asked on the person's terminal:\n${terminal}`,
      );
    } finally {
      await server.kill();
      await t.kill();
    }
  },
);

/** Replaces the remote start-up file (BASH_ENV of every remote command) for the test's length. */
async function withRemoteRc(sshd: Sshd, rc: string, fn: () => Promise<void>): Promise<void> {
  const file = `${sshd.dir}/noisy_rc`;
  const before = await Deno.readTextFile(file);
  await Deno.writeTextFile(file, rc);
  try {
    await fn();
  } finally {
    await Deno.writeTextFile(file, before);
  }
}

sshTest("ssh remote: a host's start-up file flooding the master's stderr is not kept", async () => {
  // A hostile (or broken) host: for the master's own session only (the one that holds the
  // connection), its start-up file leaves a process writing to stderr. One-shot answers are
  // capped (256 MiB, a sixteenth for stderr), control lines too (64 MiB); the master's stderr
  // lasts as long as the connection, and only its start is worth keeping.
  const sshd = started as Sshd;
  const done = `${sshd.dir}/flood_done`;
  const t = await TestTmux.start();
  const runner = new TmuxRunner({
    ssh: { destinations: ["h1"], configFile: sshd.config, connectTimeoutS: 5 },
  });
  await withRemoteRc(
    sshd,
    'case "$BASH_EXECUTION_STRING" in *"exec cat >/dev/null"*)\n' +
      `  ( head -c 1500000000 /dev/zero >&2; touch ${done} ) & ;;\n` +
      "esac\n",
    async () => {
      try {
        const before = Deno.memoryUsage().rss;
        await runner.run({ host: "h1", socketName: t.socket }, ["list-sessions"]);
        // The remote writer ends once what it wrote has left the host: all of it but what
        // the channel's window and the pipes hold (a few MB) has reached this process.
        await waitFor(
          async () => await Deno.stat(done).then(() => true, () => false),
          "the remote writer to finish",
          60_000,
        );
        // And is still connected: a call goes over the same master.
        await runner.run({ host: "h1", socketName: t.socket }, ["list-sessions"]);
        const grown = Deno.memoryUsage().rss - before;
        assert.ok(
          grown < 400 * 1024 * 1024,
          `this process grew by ${Math.round(grown / 1024 / 1024)} MB holding a host's stderr`,
        );
      } finally {
        await runner.close();
        await t.kill();
      }
    },
  );
});

sshTest("ssh remote: a changed host key is said as such, not as a row of @", async () => {
  // The host's key is not the one known_hosts holds (a reinstalled host, or a machine in the
  // middle): ssh refuses, and its first line of complaint is a banner of `@`.
  const sshd = started as Sshd;
  const dir = sshd.dir;
  await sh("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", `${dir}/impostor_key`]);
  const impostor = (await Deno.readTextFile(`${dir}/impostor_key.pub`)).split(" ");
  await Deno.writeTextFile(
    `${dir}/known_hosts_changed`,
    `[127.0.0.1]:${sshd.port} ${impostor[0]} ${impostor[1]}\n`,
  );
  await Deno.writeTextFile(
    sshd.config,
    hostEntry(sshd, "rekeyed", {
      UserKnownHostsFile: `${dir}/known_hosts_changed`,
      StrictHostKeyChecking: null,
    }),
    { append: true },
  );
  const t = await TestTmux.start();
  const runner = new TmuxRunner({
    ssh: { destinations: ["rekeyed"], configFile: sshd.config, connectTimeoutS: 5 },
  });
  const c = await connect({ runner });
  try {
    const said = await c.fail("list_panes", { host: "rekeyed", socket_name: t.socket });
    assert.match(said, /HOST IDENTIFICATION HAS CHANGED/, said);
    assert.doesNotMatch(said, /@@|\r|\\x0D/, said);
    // Connecting again cannot help; what can is said.
    assert.doesNotMatch(said, /connects again/, said);
    assert.match(said, /Retrying will not help: check the host's key/, said);
    assert.match(said, /ssh-keygen -R '\[127\.0\.0\.1\]:\d+'/, said);
  } finally {
    await c.close();
    await t.kill();
  }
});

sshTest(
  "ssh remote: a host that forges ssh's host-key refusal cannot name another host's key to remove",
  async () => {
    // The master's stderr carries the remote start-up file's too: a hostile host can print
    // ssh's banner naming another host, then end the session before the marker. Suggesting
    // `ssh-keygen -R` for that other host would open it to a machine in the middle.
    const sshd = started as Sshd;
    const t = await TestTmux.start();
    const runner = new TmuxRunner({
      ssh: { destinations: ["h2"], configFile: sshd.config, connectTimeoutS: 5 },
    });
    const c = await connect({ runner });
    try {
      await withRemoteRc(
        sshd,
        "echo '@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@' >&2\n" +
          "echo '@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @' >&2\n" +
          "echo 'Host key for bank.example.com has changed and you have requested strict " +
          "checking.' >&2\n" +
          "echo 'Host key verification failed.' >&2\n" +
          "exit 255\n",
        async () => {
          const said = await c.fail("list_panes", { host: "h2", socket_name: t.socket });
          assert.doesNotMatch(said, /bank\.example\.com/, said);
        },
      );
    } finally {
      await c.close();
      await t.kill();
    }
  },
);

/**
 * The master ssh processes this process started with `config` (from their argv): pid and
 * ControlPath. Test files run side by side in one process, each with an sshd and a config of
 * its own: the config tells this file's masters from the others'.
 */
async function masters(config: string): Promise<{ pid: number; controlPath: string }[]> {
  const { stdout } = await sh("ps", ["-o", "pid=,args=", "--ppid", String(Deno.pid)]);
  return stdout.split("\n").filter((l) =>
    /\bssh\b.*ControlMaster=(yes|auto)/.test(l) && l.includes(`-F ${config} `)
  ).map((l) => ({
    pid: Number(l.trim().split(/\s+/)[0]),
    controlPath: /ControlPath=(\S+)/.exec(l)![1],
  }));
}

sshTest(
  "ssh remote: a master killed outright is replaced by one that multiplexes again",
  async () => {
    // The master ssh is SIGKILLed (the OOM killer, a person's `kill -9`): its socket file
    // stays. A next master that took the name as taken would run without multiplexing
    // ("already exists, disabling multiplexing", unseen under LogLevel=ERROR), and every later
    // call and control client to the host would make a connection of its own (a handshake, an
    // authentication each) for the life of the process.
    const sshd = started as Sshd;
    const t = await TestTmux.start();
    const runner = new TmuxRunner({
      control: false,
      ssh: { destinations: ["h1"], configFile: sshd.config, connectTimeoutS: 5 },
    });
    const on = { host: "h1", socketName: t.socket };
    try {
      await runner.run(on, ["list-sessions"]);
      const [first] = await masters(sshd.config);
      assert.ok(first, "a master ssh");
      Deno.kill(first.pid, "SIGKILL");
      // The next calls start a new master, once the old one is known dead.
      await waitFor(async () => {
        try {
          await runner.run(on, ["list-sessions"]);
          return (await masters(sshd.config)).some((m) => m.pid !== first.pid);
        } catch {
          return false;
        }
      }, "a new master");
      const check = await sh("ssh", [
        "-F",
        sshd.config,
        "-o",
        `ControlPath=${first.controlPath}`,
        "-O",
        "check",
        "h1",
      ], { allowFail: true });
      assert.match(
        check.stdout + check.stderr,
        /Master running/,
        `the new master does not serve the host's socket: ${check.stderr}`,
      );
    } finally {
      await runner.close();
      await t.kill();
    }
  },
);

stopTest("ssh remote: sshd stops", async () => {
  await (started as Sshd).stop();
});
