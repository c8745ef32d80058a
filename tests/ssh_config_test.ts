/**
 * SSH hosts as the person's own ssh configuration makes them: settings meant for the person's
 * interactive `ssh box` (a RemoteCommand that lands in tmux) do not stop tmux-mcp reaching the
 * host. A real OpenSSH server on
 * 127.0.0.1 (see helpers/sshd.ts); skipped, saying why, only where sshd cannot be started.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fixtureTest } from "./helpers/skippable.ts";
import { hostEntry, type Sshd, startSshd } from "./helpers/sshd.ts";
import { connect } from "./helpers/mcp.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { TestTmux } from "./helpers/tmux.ts";

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

stopTest("ssh config: sshd stops", async () => {
  await (started as Sshd).stop();
});
