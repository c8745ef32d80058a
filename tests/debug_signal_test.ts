/**
 * SIGUSR1 would have Deno open an inspector on 127.0.0.1:9229 (2.9.2 on): a port with no
 * password, through which any local user runs code inside the server with its permission to
 * run tmux. The server ends at once instead, before the inspector is announced.
 *
 * @module
 */

import assert from "node:assert/strict";
import { callOver, startCommand, startOn } from "./helpers/stdio.ts";
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

Deno.test("SIGUSR1 ends a hook at once too, the guard blocking: no debugger port", async () => {
  const t = await TestTmux.start("main");
  const { cmd, args } = startCommand();
  // The guard, its input not yet ended: it waits for it (up to seconds) as an agent's may.
  const child = new Deno.Command(cmd, {
    args: [...args, "hook", "guard", "--socket", t.socket],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  try {
    await writer.write(new TextEncoder().encode('{"hook_event_name":'));
    // Past the half second after which the runtime's own handler would open its inspector.
    await new Promise((resolve) => setTimeout(resolve, 800));
    child.kill("SIGUSR1");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const out = await Promise.race([
      child.output(),
      new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 10_000)),
    ]).finally(() => clearTimeout(timer));
    assert.ok(out !== null, "the hook still runs after SIGUSR1");
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(stderr, /received SIGUSR1, which would open a debugger port into this hook/);
    assert.doesNotMatch(stderr, /Debugger listening/);
  } finally {
    await writer.close().catch(() => {});
    try {
      child.kill("SIGKILL");
    } catch {
      // Already ended.
    }
    await child.status;
    await t.kill();
  }
});
