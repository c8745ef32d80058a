/**
 * SSH hosts as the person's own ssh configuration makes them: settings meant for the person's
 * interactive `ssh box` (a RemoteCommand that lands in tmux, port forwardings) neither stop
 * tmux-mcp reaching the host nor are taken by tmux-mcp's connection. A real OpenSSH server on
 * 127.0.0.1 (see helpers/sshd.ts); skipped, saying why, only where sshd cannot be started.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fixtureTest } from "./helpers/skippable.ts";
import { hostEntry, type Sshd, startSshd } from "./helpers/sshd.ts";
import { connect } from "./helpers/mcp.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { sh, TestTmux, waitFor } from "./helpers/tmux.ts";

const started = await startSshd(["h1"]);
const skip = typeof started === "string" ? started : null;
// deno-lint-ignore no-console
if (skip) console.error(`ssh_config_test: skipped: ${skip}`);
const sshTest = fixtureTest(skip, { sanitize: false });
const stopTest = fixtureTest(skip);

// Many people's ssh config gives their tmux box a RemoteCommand, so that `ssh box` lands in
// tmux. ssh refuses a command line on top of a configured RemoteCommand ("Cannot execute
// command-line and remote command."): tmux-mcp's ssh says RemoteCommand=none.
sshTest("ssh config: a host whose ssh config has a RemoteCommand is still reached", async () => {
  const sshd = started as Sshd;
  const config = `${sshd.dir}/rc_config`;
  await Deno.writeTextFile(
    config,
    hostEntry(sshd, "box", { RequestTTY: "yes", RemoteCommand: "tmux new -A -s main" }),
  );
  const t = await TestTmux.start();
  const runner = new TmuxRunner({
    ssh: { destinations: ["box"], configFile: config, connectTimeoutS: 2 },
  });
  const c = await connect({ runner });
  try {
    const r = await c.call("list_panes", { host: "box", socket_name: t.socket });
    const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
    assert.notEqual(r.isError, true, text);
  } finally {
    await c.close();
    await t.kill();
  }
});

/** Whether something listens on 127.0.0.1:`port` (ss; tests run without --allow-net). */
async function listening(port: number): Promise<string> {
  const { stdout } = await sh("ss", ["-Hltnp", `sport = :${port}`], { allowFail: true });
  return stdout.trim();
}

/**
 * An ssh config reaching sshd as `box` with a LocalForward on a free port (with
 * ExitOnForwardFailure, the usual companion of a forward), and the port.
 */
async function forwardConfig(sshd: Sshd): Promise<{ config: string; port: number }> {
  const port = 20_000 + Math.floor(Math.random() * 40_000);
  const config = `${sshd.dir}/fw_config_${port}`;
  await Deno.writeTextFile(
    config,
    hostEntry(sshd, "box", {
      LocalForward: `127.0.0.1:${port} 127.0.0.1:${sshd.port}`,
      ExitOnForwardFailure: "yes",
    }),
  );
  return { config, port };
}

// The person's forwardings are theirs: tmux-mcp's connection holding the port for the MCP
// server's life would keep the person's own `ssh box` from binding it.
sshTest(
  "ssh config: a LocalForward in the person's ssh config is not opened by tmux-mcp's connection",
  async () => {
    const sshd = started as Sshd;
    const { config, port } = await forwardConfig(sshd);
    const t = await TestTmux.start();
    const runner = new TmuxRunner({
      ssh: { destinations: ["box"], configFile: config, connectTimeoutS: 2 },
    });
    const c = await connect({ runner });
    try {
      await c.ok("list_panes", { host: "box", socket_name: t.socket });
      const held = await listening(port);
      assert.equal(held, "", `tmux-mcp's ssh listens on the person's port ${port}: ${held}`);
    } finally {
      await c.close();
      await t.kill();
    }
  },
);

// With ExitOnForwardFailure, a forward the person's own session already holds would end
// tmux-mcp's connection as it starts.
sshTest(
  "ssh config: a host whose LocalForward the person's own ssh session holds is still reached",
  async () => {
    const sshd = started as Sshd;
    const { config, port } = await forwardConfig(sshd);
    const t = await TestTmux.start();
    const own = new Deno.Command("ssh", {
      args: ["-F", config, "-N", "-o", "BatchMode=yes", "box"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const runner = new TmuxRunner({
      ssh: { destinations: ["box"], configFile: config, connectTimeoutS: 2 },
    });
    const c = await connect({ runner });
    try {
      await waitFor(async () => (await listening(port)) !== "", "the person's forward");
      const r = await c.call("list_panes", { host: "box", socket_name: t.socket });
      const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
      assert.notEqual(r.isError, true, text);
    } finally {
      await c.close();
      own.kill("SIGTERM");
      await own.status;
      await t.kill();
    }
  },
);

stopTest("ssh config: sshd stops", async () => {
  await (started as Sshd).stop();
});
