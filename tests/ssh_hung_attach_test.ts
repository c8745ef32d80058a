/**
 * An SSH host whose control-mode client never answers and never ends: a `tmux` first on the
 * remote PATH (put there by a start-up file) that stops the tmux server as a control client
 * starts. The attach is given up at its bound, and its ssh killed; but the host's master holds
 * the session's pipes open until the remote command ends, which a client of a stopped server
 * never does, and the wait for those pipes to end held every later call on that host for
 * ever. A real OpenSSH server on 127.0.0.1 (see helpers/sshd.ts); skipped, saying why, only
 * where sshd cannot be started.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fixtureTest } from "./helpers/skippable.ts";
import { type Sshd, startSshd } from "./helpers/sshd.ts";
import { connect } from "./helpers/mcp.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { sh, TestTmux, within } from "./helpers/tmux.ts";

const started = await startSshd(["h1"]);
const skip = typeof started === "string" ? started : null;
// deno-lint-ignore no-console
if (skip) console.error(`ssh_hung_attach_test: skipped: ${skip}`);
const sshTest = fixtureTest(skip, { sanitize: false });

// Found by a reviewer: list_panes on the host gave no answer after 45 s (its bound is 10 s),
// a later call on the host hung as well, and cancelling changed nothing.
sshTest(
  "ssh hung attach: a control client frozen on the host ends, and calls on the host answer",
  async () => {
    const sshd = started as Sshd;
    const real = (await sh("sh", ["-c", "command -v tmux"])).stdout.trim();
    const wrap = `${sshd.dir}/wrap`;
    const stopPid = `${sshd.dir}/stop_pid`;
    await Deno.mkdir(wrap);
    // For a control client (-C), the tmux server named in `stopPid` is stopped first: the
    // client then waits on it for ever, holding the session's output open.
    await Deno.writeTextFile(
      `${wrap}/tmux`,
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = -C ] && [ -f ${stopPid} ] && ` +
        `kill -STOP "$(cat ${stopPid})"; done\nexec ${real} "$@"\n`,
    );
    await Deno.chmod(`${wrap}/tmux`, 0o755);
    const rc = `${sshd.dir}/noisy_rc`;
    const before = await Deno.readTextFile(rc);
    await Deno.writeTextFile(rc, `${before}export PATH=${wrap}:$PATH\n`);
    const t = await TestTmux.start("main", { command: "bash --norc --noprofile" });
    const serverPid = Number((await t.tmux("display-message", "-p", "#{pid}")).trim());
    await Deno.writeTextFile(stopPid, String(serverPid));
    const runner = new TmuxRunner({
      timeoutMs: 3_000,
      ssh: { destinations: ["h1"], configFile: sshd.config, connectTimeoutS: 5 },
    });
    const c = await connect({ runner });
    try {
      const on = { host: "h1", socket_name: t.socket };
      // The attach is given up at its bound (5 s), then the call starts tmux of its own, which
      // the stopped server does not answer within the call's 3 s: a clear failure, in time.
      const first = await within(c.call("list_panes", on), 25_000, "list_panes on the host");
      const said = first.content?.[0]?.type === "text" ? first.content[0].text : "";
      assert.equal(first.isError, true, said);
      assert.match(said, /did not answer within 3000 ms/, said);
      const second = await within(c.call("list_sessions", on), 25_000, "a second call there");
      assert.equal(second.isError, true);
      // The server going again, the host serves again.
      await Deno.remove(stopPid);
      Deno.kill(serverPid, "SIGCONT");
      await within(c.ok("list_panes", on), 25_000, "list_panes once the server runs again");
    } finally {
      await Deno.remove(stopPid).catch(() => {});
      try {
        Deno.kill(serverPid, "SIGCONT");
      } catch {
        // Gone already.
      }
      await within(c.close(), 10_000, "the server's close").catch(() => {});
      await t.kill();
      await Deno.writeTextFile(rc, before);
      await (started as Sshd).stop();
    }
  },
);
