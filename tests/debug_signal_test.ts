/**
 * SIGUSR1 would have Deno open an inspector on 127.0.0.1:9229 (2.9.2 on): a port with no
 * password, through which any local user runs code inside the server with its permission to
 * run tmux. The server ends at once instead, before the inspector is announced.
 *
 * @module
 */

import assert from "node:assert/strict";
import { callOver, startOn } from "./helpers/stdio.ts";
import { TestTmux } from "./helpers/tmux.ts";

Deno.test("SIGUSR1 ends the server at once, opening no debugger port", async () => {
  const t = await TestTmux.start("main");
  const s = await startOn(t.socket);
  try {
    // Served a call: the runtime's own signal handler is in place by now (it waits 500 ms
    // from start), as it is for the whole life of a real server.
    assert.equal((await callOver(s, "list_sessions")).isError, false);
    await new Promise((resolve) => setTimeout(resolve, 600));
    s.child.kill("SIGUSR1");
    // Still running after ten seconds: the runtime took the signal and opened its inspector.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const status = await Promise.race([
      s.child.status,
      new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 10_000)),
    ]).finally(() => clearTimeout(timer));
    assert.ok(status !== null, `the server still runs after SIGUSR1: ${s.stderr}`);
    await s.stderrEnded;
    assert.equal(status.code, 1, s.stderr);
    assert.match(s.stderr, /received SIGUSR1, which would open a debugger port/);
    assert.doesNotMatch(s.stderr, /Debugger listening/);
  } finally {
    await s.kill().catch(() => {});
    await t.kill();
  }
});
