/**
 * SSH hosts whose remote start-up file is slow (nvm, conda, pyenv init: a second is common):
 * every new ssh session there, a new control client included, waits for it. What a call
 * promises holds all the same: output that comes after a wait began counts. A real OpenSSH
 * server on 127.0.0.1 (see helpers/sshd.ts); skipped, saying why, only where sshd cannot be
 * started.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fixtureTest } from "./helpers/skippable.ts";
import { type Sshd, startSshd } from "./helpers/sshd.ts";
import { connect } from "./helpers/mcp.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { TestTmux } from "./helpers/tmux.ts";

const started = await startSshd(["h1"]);
const skip = typeof started === "string" ? started : null;
// deno-lint-ignore no-console
if (skip) console.error(`ssh_slow_host_test: skipped: ${skip}`);
const sshTest = fixtureTest(skip, { sanitize: false });
const stopTest = fixtureTest(skip);

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

// The watch of a wait opens only once a control client following the pane's session runs on
// the host: a new ssh session, whose remote shell reads its start-up file first. Output that
// came in that while was neither matched nor new: the wait ran to its timeout and then said
// the pattern "was already on screen before the wait", which it was not when the call came.
sshTest(
  "ssh slow host: wait_for_text matches output that comes while its watch is still opening",
  async () => {
    const sshd = started as Sshd;
    await withRemoteRc(sshd, "sleep 1.5\n", async () => {
      const t = await TestTmux.start("main", { command: "bash --norc --noprofile" });
      const runner = new TmuxRunner({
        ssh: { destinations: ["h1"], configFile: sshd.config, connectTimeoutS: 5 },
      });
      const c = await connect({ runner });
      try {
        const on = { host: "h1", socket_name: t.socket };
        const p = t.ids.paneId;
        // The host's connection and its command client are up (a call made before).
        await c.ok("list_panes", on);
        await c.ok("capture_pane", { ...on, paneId: p });
        const waiting = c.call("wait_for_text", {
          ...on,
          paneId: p,
          patterns: ["ready-now"],
          timeoutMs: 8_000,
        });
        // Half a second into the call (the watch's client still starting: its start-up file
        // takes 1.5 s), the pane prints it, typed here straight into tmux. Only the output
        // has the pattern whole: the line typed has it cut by a 0 the shell takes out.
        await new Promise((r) => setTimeout(r, 500));
        await t.tmux("send-keys", "-t", p, "-l", "echo ready-$((0))now | tr -d 0");
        await t.tmux("send-keys", "-t", p, "Enter");
        const r = await waiting;
        const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
        assert.notEqual(r.isError, true, text);
        const out = r.structuredContent as { outcome: string; alreadyOnScreen: boolean };
        assert.equal(out.outcome, "matched", text.split("\n")[0]);
        assert.equal(out.alreadyOnScreen, false, "it was not on screen when the call came");
      } finally {
        await c.close();
        await t.kill();
      }
    });
  },
);

stopTest("ssh slow host: sshd stops", async () => {
  await (started as Sshd).stop();
});
