import assert from "node:assert/strict";
import { processesNaming, TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { TmuxRunner } from "./run.ts";
import { TmuxError } from "./tmux_error.ts";

Deno.test("runner: a tmux that says `access not allowed` with status 0 is a failed call", async () => {
  // What tmux 3.3a does for a user its server does not allow (see tests/robustness_faults_test.ts
  // for the real thing, which needs root): nothing on stdout, that line on stderr, status 0.
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-access-" });
  const fake = `${dir}/tmux`;
  await Deno.writeTextFile(fake, "#!/bin/sh\necho 'access not allowed' >&2\nexit 0\n");
  await Deno.chmod(fake, 0o755);
  const runner = new TmuxRunner({ binary: fake });
  try {
    const result = await runner.exec({ socketName: "x" }, ["list-sessions"]);
    assert.notEqual(result.code, 0);
    await assert.rejects(
      runner.run({ socketName: "x" }, ["list-sessions"]),
      (e: unknown) => e instanceof TmuxError && e.kind === "failed",
    );
    const streamed = await runner.stream({ socketName: "x" }, ["capture-pane", "-p"], () => {});
    assert.notEqual(streamed.code, 0);
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: real tmux errors are typed", async () => {
  const t = await TestTmux.start();
  const runner = new TmuxRunner();
  try {
    const addr = { socketName: t.socket };
    const out = new TextDecoder().decode(await runner.run(addr, ["display-message", "-p", "ok"]));
    assert.equal(out, "ok\n");
    await assert.rejects(
      runner.run(addr, ["capture-pane", "-p", "-t", "%999"]),
      (e: unknown) => e instanceof TmuxError && e.kind === "no-target",
    );
    await assert.rejects(
      runner.run(addr, ["frobnicate"]),
      (e: unknown) =>
        e instanceof TmuxError && e.kind === "failed" && /unknown command/.test(e.message),
    );
    await assert.rejects(
      runner.run({ socketName: `${t.socket}-absent` }, ["list-sessions"]),
      (e: unknown) => e instanceof TmuxError && e.kind === "no-server",
    );
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("runner: a stale socket file (server gone) is 'no server', and fast", async () => {
  const t = await TestTmux.start();
  const { socketPath } = await t.facts();
  await t.kill(); // kill-server leaves the socket file behind
  const runner = new TmuxRunner();
  try {
    await assert.rejects(
      runner.run({ socketPath }, ["list-sessions"]),
      (e: unknown) => e instanceof TmuxError && e.kind === "no-server",
    );
  } finally {
    await runner.close();
  }
});

Deno.test("runner: timeout and cancellation kill the child", async () => {
  const t = await TestTmux.start();
  const runner = new TmuxRunner();
  try {
    const addr = { socketName: t.socket };
    // wait-for blocks until signalled: the only way out is our timeout.
    await assert.rejects(
      runner.run(addr, ["wait-for", "never-signalled"], { timeoutMs: 200 }),
      (e: unknown) => e instanceof TmuxError && e.kind === "timeout",
    );
    assert.equal(runner.running, 0);
    const controller = new AbortController();
    const pending = runner.run(addr, ["wait-for", "never-either"], { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(pending, (e: unknown) => e instanceof TmuxError && e.kind === "cancelled");
    assert.equal(runner.running, 0);
    // close() kills what is still running and refuses new work.
    const late = runner.run(addr, ["wait-for", "never-at-all"]);
    await runner.close();
    await assert.rejects(late, (e: unknown) => e instanceof TmuxError && e.kind === "cancelled");
    assert.equal(runner.running, 0);
    await assert.rejects(runner.run(addr, ["-V"]), /shutting down/);
  } finally {
    await t.kill();
  }
});

Deno.test("runner: a missing tmux binary is 'not-installed' with a clear message", async () => {
  const runner = new TmuxRunner({ binary: "tmux-not-installed-here" });
  await assert.rejects(
    runner.run({}, ["-V"]),
    (e: unknown) =>
      e instanceof TmuxError && e.kind === "not-installed" && /not on PATH/.test(e.message),
  );
});

Deno.test("runner: no more than maxConcurrent tmux processes at once", async () => {
  const t = await TestTmux.start();
  const runner = new TmuxRunner({ maxConcurrent: 2 });
  try {
    const addr = { socketName: t.socket };
    let peak = 0;
    const calls = Array.from(
      { length: 10 },
      () =>
        runner.run(addr, ["display-message", "-p", "x"]).then(() => {
          peak = Math.max(peak, runner.running);
        }),
    );
    const sampler = setInterval(() => peak = Math.max(peak, runner.running), 1);
    await Promise.all(calls);
    clearInterval(sampler);
    assert.ok(peak <= 2, `peak ${peak}`);
    assert.ok(peak >= 1);
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("runner: a stopped tmux server costs its calls their timeout, and no other server a turn", async () => {
  const stopped = await TestTmux.start();
  const healthy = await TestTmux.start();
  const runner = new TmuxRunner({ maxConcurrent: 1, control: false });
  const { pid } = await stopped.facts();
  try {
    // A tmux client hands its pipes to the server: a stopped server keeps them open after the
    // client is killed, so a reader waiting for their end would wait as long as it is stopped.
    Deno.kill(pid, "SIGSTOP");
    const stuck = runner.run({ socketName: stopped.socket }, ["list-sessions"], {
      timeoutMs: 300,
    });
    // The stuck call holds the stopped server's only turn; another server's call runs.
    const other = await runner.run({ socketName: healthy.socket }, ["display-message", "-p", "ok"]);
    assert.equal(new TextDecoder().decode(other).trim(), "ok");
    await assert.rejects(stuck, (e) => e instanceof TmuxError && e.kind === "timeout");
    // And its turn is given back: the next call to it times out too, rather than waiting.
    await assert.rejects(
      runner.run({ socketName: stopped.socket }, ["list-sessions"], { timeoutMs: 300 }),
      (e) => e instanceof TmuxError && e.kind === "timeout",
    );
  } finally {
    Deno.kill(pid, "SIGCONT");
    await runner.close();
    await stopped.kill();
    await healthy.kill();
  }
});

Deno.test("runner: a tmux that prints without end is stopped at the answer bound, not the timeout", async () => {
  // A broken (or hostile, remote) tmux: megabytes on stdout, then it holds its pipe open. A
  // collecting read must stop at its bound, kill the child and say why, long before the
  // timeout and without holding more than the bound.
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-huge-" });
  const fake = `${dir}/tmux`;
  await Deno.writeTextFile(
    fake,
    "#!/bin/sh\nhead -c 8388608 /dev/zero | tr '\\0' A\nexec sleep 30\n",
  );
  await Deno.chmod(fake, 0o755);
  const runner = new TmuxRunner({ binary: fake, maxAnswerBytes: 1024 * 1024, timeoutMs: 8_000 });
  try {
    // A timeout would reject as kind "timeout"; "too large" is the bound's.
    await assert.rejects(
      runner.run({ socketName: "x" }, ["list-panes"]),
      (e: unknown) => e instanceof TmuxError && e.kind === "failed" && /too large/.test(e.message),
    );
    await waitFor(() => runner.running === 0, "the child killed");
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: a host named to a runner without --ssh hosts is refused alike by every kind of call", async () => {
  const runner = new TmuxRunner();
  const address = { socketName: "x", host: "elsewhere" };
  const refused = (e: unknown) =>
    e instanceof TmuxError && e.kind === "failed" &&
    /not one this server was started with/.test(e.message);
  try {
    await assert.rejects(runner.exec(address, ["list-sessions"]), refused);
    await assert.rejects(runner.stream(address, ["list-sessions"], () => {}), refused);
  } finally {
    await runner.close();
  }
});

Deno.test("runner: a call tied to this process answers and fails as a plain one, and attaches nowhere", async () => {
  const t = await TestTmux.start();
  const runner = new TmuxRunner();
  try {
    const addr = { socketName: t.socket };
    const tied = { tiedToProcess: true };
    const out = await runner.run(addr, [
      "display-message",
      "-p",
      "ok",
      ";",
      "show",
      "-gv",
      "base-index",
    ], tied);
    assert.equal(new TextDecoder().decode(out), "ok\n0\n");
    await assert.rejects(
      runner.run(addr, ["capture-pane", "-p", "-t", "%999"], tied),
      (e: unknown) => e instanceof TmuxError && e.kind === "no-target",
    );
    await assert.rejects(
      runner.run(addr, ["frobnicate"], tied),
      (e: unknown) => e instanceof TmuxError && e.kind === "failed",
    );
    await assert.rejects(
      runner.run({ socketName: `${t.socket}-absent` }, ["list-sessions"], tied),
      (e: unknown) => e instanceof TmuxError && e.kind === "no-server",
    );
    // Signalled, a tied wait ends as a plain one does; it attached nowhere meanwhile.
    const waiting = runner.run(addr, ["wait-for", "--", "tied"], tied);
    await waitFor(
      async () =>
        (await processesNaming(t.socket)).some((p) => p.args.endsWith(" -C wait-for -- tied")),
      "the waiter",
    );
    assert.equal((await t.tmux("list-clients", "-F", "#{client_name}")).trim(), "");
    await t.tmux("wait-for", "-S", "tied");
    assert.equal((await waiting).length, 0);
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("runner: a call cancelled while its alias read is shared leaves the read to the calls still waiting", async () => {
  // Two calls to one server check its aliases with one read; the first to check starts it. The
  // first cancelled must not take the read down for the second, which was never cancelled.
  const runner = new TmuxRunner();
  const address = { socketName: "tmux-mcp-alias-share" };
  const { promise: answer, resolve: answerNow } = Promise.withResolvers<void>();
  let reads = 0;
  runner.aliasReader = async (_address, options) => {
    reads++;
    const stopped = Promise.withResolvers<never>();
    options.signal?.addEventListener(
      "abort",
      () => stopped.reject(new TmuxError("cancelled", "The call was cancelled.")),
      { once: true },
    );
    await Promise.race([answer, stopped.promise]);
    return {
      code: 0,
      stdout: new TextEncoder().encode("command-alias[0] a=b\ncommand-alias[0] a=b\n"),
      stderr: "",
    };
  };
  try {
    const first = new AbortController();
    const second = new AbortController();
    const one = runner.checkAliases(address, ["list-panes"], { signal: first.signal });
    const two = runner.checkAliases(address, ["list-panes"], { signal: second.signal });
    first.abort();
    await assert.rejects(one, (e: unknown) => e instanceof TmuxError && e.kind === "cancelled");
    answerNow();
    await two; // answered: the read went on for it
    assert.equal(reads, 1, "one read for both");
    // Its own cancellation still stops a call waiting on a shared read.
    runner.aliasesMayHaveChanged(address);
    const { promise: never } = Promise.withResolvers<void>();
    runner.aliasReader = async () => {
      await never;
      throw new Error("unreachable");
    };
    const third = new AbortController();
    const three = runner.checkAliases(address, ["list-panes"], { signal: third.signal });
    third.abort();
    await assert.rejects(three, (e: unknown) => e instanceof TmuxError && e.kind === "cancelled");
    // One cancelled before it checks starts no read (none left failing with nobody to hear it,
    // at the process's end).
    runner.aliasesMayHaveChanged(address);
    reads = 0;
    runner.aliasReader = () => {
      reads++;
      return Promise.reject(new TmuxError("cancelled", "The server is shutting down."));
    };
    await assert.rejects(
      runner.checkAliases(address, ["list-panes"], { signal: AbortSignal.abort() }),
      (e: unknown) => e instanceof TmuxError && e.kind === "cancelled",
    );
    assert.equal(reads, 0);
  } finally {
    await runner.close();
  }
});
