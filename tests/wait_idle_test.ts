/**
 * Waiting for the pane rather than for text, against real tmux on private sockets:
 * wait_for_idle (quiet, back at the prompt, timeouts, dead panes, cancellation, progress),
 * wait_for_text without patterns, and `atPrompt` as get_pane_info and snapshot_pane report it.
 *
 * Panes run `bash --norc --noprofile` with the prompt `P> ` (from the environment). Ordering
 * without sleeping: a test waits for a condition tmux shows (the watch subscribed, `sleep` in
 * the foreground) before it makes the pane do the next thing.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { controlFor } from "../src/tmux/control.ts";
import { paneAtPrompt } from "../src/tmux/prompt.ts";
import { connect, summaryOf, type TestClient } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

type Idle = {
  paneId: string;
  outcome: "idle" | "timedOut" | "paneDied";
  atPrompt: boolean;
  quietForMs: number;
  tail: string;
  tailOmittedBytes: number;
  exitStatus: number | null;
  effectiveQuietMs: number;
  quietClamped: boolean;
  effectiveTimeoutMs: number;
  timeoutClamped: boolean;
  waitedMs: number;
  transport: string;
};

const SHELL = "env PS1='P> ' bash --norc --noprofile";

async function withServer(fn: (t: Server, c: TestClient) => Promise<void>): Promise<void> {
  const t = await TestTmux.start("main", { command: SHELL });
  const c = await connect({ socketName: t.socket });
  try {
    await t.prompt(t.ids.paneId);
    await fn(t, c);
  } finally {
    await c.close();
    await t.kill();
  }
  assert.equal(c.server.runner.running, 0, "no tmux child left behind");
}

function hub(t: Server, c: TestClient) {
  return controlFor(c.server.runner, { socketName: t.socket });
}

async function subscribed(t: Server, c: TestClient): Promise<void> {
  await waitFor(() => hub(t, c).watchers >= 1, "the wait to subscribe");
}

/** Types a command into the pane with tmux directly (not through the guarded tools). */
async function type(t: Server, paneId: string, command: string): Promise<void> {
  await t.tmux("send-keys", "-t", paneId, "-l", "--", command);
  await t.tmux("send-keys", "-t", paneId, "Enter");
}

async function screen(t: Server, paneId: string): Promise<string[]> {
  const out = await t.tmux("capture-pane", "-p", "-t", paneId);
  return out.split("\n").map((l) => l.trimEnd()).filter((l) => l !== "");
}

Deno.test("wait_for_idle atPrompt: returns once the prompt is back after sleep 1; echo done, not before", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // `d''one`: the echo of the typed line never shows the word itself.
    await type(t, p, "sleep 1; echo d''one");
    // sleep runs, or has run already (a second is short on a loaded machine): either way the
    // wait below begins after the command was read, and its prompt comes back after done.
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", p, "#{pane_current_command}")).trim() ===
          "sleep" || (await screen(t, p)).includes("done"),
      "sleep to run",
    );
    const result = await c.ok<Idle>("wait_for_idle", { paneId: p, atPrompt: true, quietMs: 200 });
    assert.equal(result.outcome, "idle");
    assert.equal(result.atPrompt, true);
    assert.ok(result.quietForMs >= 200, `quiet for ${result.quietForMs} ms`);
    const lines = result.tail.split("\n").map((l) => l.trimEnd());
    const done = lines.lastIndexOf("done");
    assert.ok(done !== -1, `done on the screen: ${JSON.stringify(lines)}`);
    assert.equal(lines.at(-1), "P>", "the prompt is back, after done");
    assert.equal(done, lines.length - 2);
    assert.equal(result.transport, "control");
    assert.equal(result.effectiveQuietMs, 200);
    assert.equal(result.quietClamped, false);
    assert.equal(result.effectiveTimeoutMs, 30_000);
    assert.equal(hub(t, c).watchers, 0, "the watch ended with the call");
  });
});

Deno.test("wait_for_idle atPrompt: a prompt whose pane has its input turned off says nothing typed arrives", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    await t.tmux("select-pane", "-d", "-t", p);
    const result = await c.call("wait_for_idle", { paneId: p, atPrompt: true, quietMs: 100 });
    const idle = result.structuredContent as Idle;
    const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
    assert.equal(idle.outcome, "idle");
    // The shell holds its terminal: that stays true.
    assert.equal(idle.atPrompt, true);
    assert.match(text.split("\n")[0], /at its prompt \(its input is turned off/, text);
    await t.tmux("select-pane", "-e", "-t", p);
    const on = await c.call("wait_for_idle", { paneId: p, atPrompt: true, quietMs: 100 });
    const onText = on.content?.[0]?.type === "text" ? on.content[0].text : "";
    assert.doesNotMatch(onText, /input is turned off/, onText);
  });
});

Deno.test("wait_for_idle without atPrompt: a quiet command counts as idle, and says it is not at its prompt", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // Longer than both waits below take on a loaded machine: the second needs sleep running.
    await type(t, p, "sleep 60");
    await t.foreground(p, "sleep");
    const result = await c.ok<Idle>("wait_for_idle", { paneId: p, quietMs: 200 });
    assert.equal(result.outcome, "idle");
    assert.equal(result.atPrompt, false);
    assert.ok(result.waitedMs < 4_000, `returned while sleep ran (${result.waitedMs} ms)`);
    // With atPrompt it does not return while sleep runs: it times out.
    const strict = await c.ok<Idle>("wait_for_idle", {
      paneId: p,
      quietMs: 200,
      atPrompt: true,
      timeoutMs: 600,
    });
    assert.equal(strict.outcome, "timedOut");
    assert.equal(strict.atPrompt, false);
    assert.ok(strict.quietForMs >= 200, `quiet for ${strict.quietForMs} ms`);
  });
});

Deno.test({
  name:
    "wait_for_idle atPrompt: a shell busy itself (in wait, in a loop of builtins) is not at its prompt",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await withServer(async (t, c) => {
      const p = t.ids.paneId;
      // The shell holds its terminal while it waits for its & jobs, and prints nothing. The job
      // ends when the test ends it (a loaded machine may take seconds to make the first call).
      await type(t, p, "sleep 1000 & wait; echo w''aited");
      const job = await waitFor(
        async () => (await screen(t, p)).map((l) => /^\[1\] (\d+)$/.exec(l)).find((m) => m),
        "the job",
      );
      const during = await c.ok<Idle>("wait_for_idle", {
        paneId: p,
        atPrompt: true,
        quietMs: 200,
        timeoutMs: 800,
      });
      assert.equal(during.outcome, "timedOut", JSON.stringify(during));
      assert.equal(during.atPrompt, false);
      Deno.kill(Number(job[1]), "SIGTERM");
      const after = await c.ok<Idle>("wait_for_idle", { paneId: p, atPrompt: true, quietMs: 200 });
      assert.equal(after.outcome, "idle");
      assert.equal(after.atPrompt, true);
      assert.ok((await screen(t, p)).includes("waited"), "back only once wait returned");
      // A loop of builtins runs the shell itself.
      await type(t, p, "while :; do :; done");
      // Typed and entered: the echo shows the line before the shell has read its Enter, and
      // until it has the shell is at its prompt. Once read, the cursor is on the next row.
      await waitFor(
        async () =>
          (await screen(t, p)).at(-1) === "P> while :; do :; done" &&
          (await t.tmux("display-message", "-p", "-t", p, "#{cursor_x}")).trim() === "0",
        "the loop typed and entered",
      );
      assert.equal((await c.ok<Info>("get_pane_info", { paneId: p })).atPrompt, false);
      await t.tmux("send-keys", "-t", p, "C-c");
      await waitFor(
        async () => (await c.ok<Info>("get_pane_info", { paneId: p })).atPrompt,
        "the prompt back after C-c",
      );
    });
  },
});

Deno.test("wait_for_idle: a pane that keeps printing times out", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    await type(t, p, "while :; do echo tick; sleep 0.05; done");
    await waitFor(async () => (await screen(t, p)).includes("tick"), "the loop to print");
    const progress: number[] = [];
    const result = (await c.client.callTool(
      { name: "wait_for_idle", arguments: { paneId: p, quietMs: 500, timeoutMs: 2_500 } },
      undefined,
      { onprogress: (n: { progress: number }) => progress.push(n.progress) },
    )) as CallToolResult;
    assert.notEqual(result.isError, true);
    const data = result.structuredContent as Idle;
    assert.equal(data.outcome, "timedOut");
    assert.ok(data.quietForMs < 500, `quiet for ${data.quietForMs} ms`);
    assert.equal(data.atPrompt, false);
    assert.match(data.tail, /tick/);
    assert.ok(data.waitedMs >= 2_500, `waited ${data.waitedMs} ms`);
    // Progress goes on while output keeps the wait busy: the first one and at least one more.
    assert.ok(progress.length >= 2, `progress notifications: ${progress.length}`);
    assert.ok(progress.every((n, i) => i === 0 || n > progress[i - 1]));
    await t.tmux("send-keys", "-t", p, "C-c");
  });
});

Deno.test("the tails of wait_for_idle and wait_for_text keep no row's trailing blanks", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // Rows padded with written blanks, as a full-screen program clears them (vim's `~` rows),
    // and the prompt's own blank after "P>".
    await type(t, p, "printf '%-70s\\n%-70s\\n' pad''ded be''low");
    await waitFor(async () => (await screen(t, p)).includes("below"), "the padded rows");
    const idle = await c.ok<Idle>("wait_for_idle", { paneId: p, quietMs: 200, timeoutMs: 5_000 });
    const text = await c.ok<{ tail: string }>("wait_for_text", {
      paneId: p,
      patterns: ["never"],
      timeoutMs: 200,
    });
    for (const tail of [idle.tail, text.tail]) {
      assert.match(tail, /^padded$/m);
      assert.match(tail, /^below$/m);
      assert.match(tail, /^P>$/m);
      assert.ok(!/ $/m.test(tail), `trailing blanks kept: ${JSON.stringify(tail)}`);
    }
  });
});

Deno.test("wait_for_idle honours quietMs: it returns no earlier than quietMs after the last output", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const waiting = c.ok<Idle>("wait_for_idle", { paneId: p, quietMs: 800 });
    await subscribed(t, c);
    const typedAt = performance.now();
    // The echo of the line comes at once; its output 0.5 s later, so the quiet starts then.
    await type(t, p, "sleep 0.5; echo o''nce");
    const result = await waiting;
    const elapsed = performance.now() - typedAt;
    assert.equal(result.outcome, "idle");
    assert.ok(elapsed >= 1_300, `returned ${Math.round(elapsed)} ms after typing (want >= 1300)`);
    assert.ok(result.quietForMs >= 800, `quiet for ${result.quietForMs} ms`);
    assert.match(result.tail, /^once$/m);
    assert.equal(result.atPrompt, true, "atPrompt is reported even when not asked for");
  });
});

Deno.test("an exit status is reported even when tmux 3.3a misses the SIGCHLD that carries it", async () => {
  // tmux sometimes leaves an exited pane process a zombie (pane_dead_status and pane_dead_time
  // empty) until another child of the server exits: about a third of `exit N` in
  // remain-on-exit panes here. Eight in a row all report their status.
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    for (let status = 1; status <= 8; status++) {
      const pane = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", SHELL)).trim();
      await t.prompt(pane);
      const waiting = c.ok<Idle>("wait_for_idle", { paneId: pane, quietMs: 10_000 });
      await subscribed(t, c);
      await type(t, pane, `exit ${status}`);
      const died = await waiting;
      assert.deepEqual([died.outcome, died.exitStatus], ["paneDied", status], `exit ${status}`);
    }
  });
});

Deno.test("wait_for_idle: a pane killed mid-wait is paneDied; a pane that exits reports its status", async () => {
  await withServer(async (t, c) => {
    const other = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", SHELL)).trim();
    await t.prompt(other);
    const waiting = c.ok<Idle>("wait_for_idle", {
      paneId: other,
      quietMs: 10_000,
      timeoutMs: 20_000,
    });
    await subscribed(t, c);
    await t.tmux("kill-pane", "-t", other);
    const result = await waiting;
    assert.equal(result.outcome, "paneDied");
    assert.equal(result.atPrompt, false);
    assert.ok(result.waitedMs < 5_000, `noticed in ${result.waitedMs} ms`);

    const kept = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", SHELL)).trim();
    await t.tmux("set-option", "-p", "-t", kept, "remain-on-exit", "on");
    await t.prompt(kept);
    const exiting = summaryOf(c, "wait_for_idle", {
      paneId: kept,
      quietMs: 10_000,
      atPrompt: true,
    }) as Promise<{ summary: string; data: Idle }>;
    await subscribed(t, c);
    await type(t, kept, "exit 3");
    const { summary, data: exited } = await exiting;
    assert.equal(exited.outcome, "paneDied");
    // Died during the wait: what it printed last may not have been read by tmux.
    assert.match(summary, /pane died.*; what it printed last may be missing/);
    if (exited.exitStatus !== 3) {
      // What tmux says now, to tell a status learned late from one never learned.
      const now = await t.tmuxRaw(
        "display-message",
        "-p",
        "-t",
        kept,
        "#{pane_dead} [#{pane_dead_status}] #{pane_pid}",
      );
      assert.fail(
        `exitStatus ${exited.exitStatus}; tmux now: ${now.stdout.trim()} ${now.stderr.trim()}; ${
          JSON.stringify(exited)
        }`,
      );
    }
    assert.equal(exited.atPrompt, false);
    // A pane already dead answers at once.
    const again = await c.ok<Idle>("wait_for_idle", { paneId: kept });
    assert.equal(again.outcome, "paneDied");
    assert.ok(again.waitedMs < 1_000);
  });
});

Deno.test("wait_for_idle refuses a pane that does not exist, and clamps quietMs and timeoutMs", async () => {
  await withServer(async (t, c) => {
    assert.match(await c.fail("wait_for_idle", { paneId: "%999" }), /No pane %999/);
    assert.match(await c.fail("wait_for_idle", { paneId: "3" }), /pane id/);
    assert.match(await c.fail("wait_for_idle", { paneId: t.ids.paneId, quietMs: 1.5 }), /quietMs/);
    const result = await c.ok<Idle>("wait_for_idle", {
      paneId: t.ids.paneId,
      quietMs: 5,
      timeoutMs: 1,
    });
    assert.equal(result.effectiveQuietMs, 100);
    assert.equal(result.quietClamped, true);
    assert.equal(result.effectiveTimeoutMs, 100);
    assert.equal(result.timeoutClamped, true);
    assert.equal(result.outcome, "idle", "quiet 100 ms is reached within a 100 ms timeout");
    // A quiet longer than the timeout can never be reached.
    const never = await c.ok<Idle>("wait_for_idle", {
      paneId: t.ids.paneId,
      quietMs: 90_000,
      timeoutMs: 300,
    });
    assert.equal(never.effectiveQuietMs, 60_000);
    assert.equal(never.outcome, "timedOut");
    assert.equal(never.atPrompt, true);
  });
});

Deno.test("wait_for_idle: a pane heard quiet to the end is idle though its last check waited past the deadline", async () => {
  for (const atPrompt of [false, true]) {
    await withServer(async (t, c) => {
      const call = c.ok<Idle>("wait_for_idle", {
        paneId: t.ids.paneId,
        quietMs: 3_000,
        timeoutMs: 3_000,
        atPrompt,
      });
      await subscribed(t, c);
      // Both turns of the background lane held in tmux: the wait's next check of the pane (due
      // every half second) waits for its turn until the deadline drops it. The pane's output
      // still reaches the watch: it comes on the control feed, not as an answer.
      const held = [1, 2].map(() =>
        hub(t, c).exec(["wait-for", "tmux-mcp-test-idle-held"], { background: true })
      );
      // The wait is over (its watch closed) before anything is let go: its reads were dropped.
      await waitFor(() => hub(t, c).watchers === 0, "the wait to end", 10_000);
      await t.tmux("wait-for", "-S", "tmux-mcp-test-idle-held");
      await t.tmux("wait-for", "-S", "tmux-mcp-test-idle-held");
      await Promise.all(held);
      const result = await call;
      assert.equal(result.outcome, "idle", JSON.stringify(result));
      assert.ok(result.quietForMs >= 3_000, `quietForMs ${result.quietForMs}`);
      assert.equal(result.atPrompt, true);
    });
  }
});

Deno.test("wait_for_idle: cancelling the request stops the wait at once", async () => {
  await withServer(async (t, c) => {
    const abort = new AbortController();
    const call = c.client.callTool(
      {
        name: "wait_for_idle",
        arguments: { paneId: t.ids.paneId, quietMs: 60_000, timeoutMs: 60_000 },
      },
      undefined,
      { signal: abort.signal },
    );
    call.catch(() => {});
    await subscribed(t, c);
    abort.abort();
    await assert.rejects(call);
    await waitFor(() => hub(t, c).watchers === 0, "the wait to stop", 3_000);
    await c.server.registry.settle(3_000);
  });
});

type Wait = { outcome: string; lines: string[]; matched: unknown; alreadyOnScreen: boolean };

Deno.test("wait_for_text without patterns returns at the first new output, not on what was on screen", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    await type(t, p, "echo al''ready");
    // The prompt after it too: drawn once the wait below began, it would be new output.
    await waitFor(async () => {
      const rows = await screen(t, p);
      return rows.includes("already") && rows.at(-1) === "P>";
    }, "old output and the prompt after it");
    // Only what was on screen: nothing new comes, the wait times out.
    const quiet = await c.ok<Wait>("wait_for_text", { paneId: p, timeoutMs: 500 });
    assert.equal(quiet.outcome, "timedOut");
    assert.deepEqual(quiet.lines, []);

    const waiting = c.ok<Wait>("wait_for_text", { paneId: p, timeoutMs: 10_000 });
    await subscribed(t, c);
    await t.tmux("send-keys", "-t", p, "-l", "--", "x");
    const result = await waiting;
    assert.equal(result.outcome, "output");
    assert.equal(result.matched, null);
    assert.equal(result.alreadyOnScreen, false);
    assert.deepEqual(result.lines, ["x"], "the echo of the key, nothing from before");

    // A stop pattern in the first new output wins over plain output. The terminal does not
    // echo (stty -echo), so the first thing the pane prints after Enter is ERR.
    await t.tmux("send-keys", "-t", p, "C-u");
    await waitFor(async () => (await screen(t, p)).at(-1) === "P>", "the line cleared");
    await type(t, p, "stty -echo; head -n1 >/dev/null; stty echo; echo E''RR");
    await t.foreground(p, "head");
    const stopping = c.ok<Wait>("wait_for_text", { paneId: p, stop: ["err"] });
    await subscribed(t, c);
    await t.tmux("send-keys", "-t", p, "Enter");
    const stopped = await stopping;
    assert.equal(stopped.outcome, "stopped");
    assert.deepEqual(stopped.lines, ["ERR"]);
  });
});

type Info = { atPrompt: boolean; command: string };

Deno.test("get_pane_info and snapshot_pane report atPrompt: true at a prompt, false while sleep runs", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    assert.equal((await c.ok<Info>("get_pane_info", { paneId: p })).atPrompt, true);
    assert.equal((await c.ok<Info>("snapshot_pane", { paneId: p })).atPrompt, true);
    // Longer than the two reads below take on a loaded machine (C-c ends it).
    await type(t, p, "sleep 60");
    await t.foreground(p, "sleep");
    assert.equal((await c.ok<Info>("get_pane_info", { paneId: p })).atPrompt, false);
    assert.equal((await c.ok<Info>("snapshot_pane", { paneId: p })).atPrompt, false);
    await t.tmux("send-keys", "-t", p, "C-c");
    await t.foreground(p, "bash");
    await waitFor(
      async () => (await c.ok<Info>("get_pane_info", { paneId: p })).atPrompt,
      "the prompt back after C-c",
    );

    // A script named like the shell, blocked in read, is not the prompt.
    await type(t, p, "bash -c 'read x'");
    await waitFor(
      async () => !(await c.ok<Info>("get_pane_info", { paneId: p })).atPrompt,
      "the script to hold the terminal",
    );
    assert.equal((await c.ok<Info>("get_pane_info", { paneId: p })).command, "bash");
    assert.equal((await c.ok<Info>("snapshot_pane", { paneId: p })).atPrompt, false);
    await type(t, p, "");
    await waitFor(
      async () => (await c.ok<Info>("get_pane_info", { paneId: p })).atPrompt,
      "the prompt back after read",
    );

    // A dead pane is not at its prompt.
    await t.tmux("set-option", "-p", "-t", p, "remain-on-exit", "on");
    await type(t, p, "exit");
    await waitFor(
      async () => (await t.tmux("display-message", "-p", "-t", p, "#{pane_dead}")).trim() === "1",
      "the pane to die",
    );
    assert.equal((await c.ok<Info>("get_pane_info", { paneId: p })).atPrompt, false);
    assert.equal((await c.ok<Info>("snapshot_pane", { paneId: p })).atPrompt, false);
  });
});

Deno.test("paneAtPrompt: a shell that puts ')' and numbers in its own name cannot pass a script for its prompt", async () => {
  // /proc/PID/stat puts the command name in parentheses; a name such as "a) 1 1 1 1 1 1 "
  // forges the fields after the first ')'. tmux expands if-shell's command as a format, so
  // the test must hold after that expansion (## would become #), as tmux runs it.
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-prompt-" });
  const name = "a) 1 1 1 1 1 1 ";
  await Deno.symlink("/bin/bash", `${dir}/${name}`);
  const t = await TestTmux.start("main", {
    command: `env PS1='P> ' '${dir}/${name}' --norc --noprofile`,
  });
  const c = await connect({ socketName: t.socket });
  try {
    const p = t.ids.paneId;
    await t.prompt(p);
    const facts = async () => {
      const [dead, pid, command] = (await t.tmux(
        "display-message",
        "-p",
        "-t",
        p,
        "#{pane_dead}\t#{pane_pid}\t#{pane_current_command}",
      )).trim().split("\t");
      return { dead: dead === "1", pid: Number(pid), command };
    };
    const address = { socketName: t.socket };
    const stat = await Deno.readTextFile(`/proc/${(await facts()).pid}/stat`).catch(() => "");
    if (stat !== "") assert.ok(stat.includes(`(${name})`), "the kernel keeps the forged name");
    await type(t, p, "bash -c 'read x'");
    await waitFor(async () => (await facts()).command === "bash", "the script");
    await waitFor(
      async () => !(await paneAtPrompt(c.server.runner, address, p, await facts())),
      "the script to be seen holding the terminal",
    );
    await type(t, p, "");
    await waitFor(async () => (await facts()).command !== "bash", "the script to end");
  } finally {
    await c.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("escape sequences alone after an unfinished line are not output: the pane goes idle", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // cat on a raw terminal without echo: the pane writes exactly the bytes sent to it.
    await t.tmux("respawn-pane", "-k", "-t", p, "stty raw -echo; exec cat");
    await t.foreground(p, "cat");
    const hex = (s: string) => [...new TextEncoder().encode(s)].map((b) => b.toString(16));
    const waiting = c.ok<Idle>("wait_for_idle", { paneId: p, quietMs: 400, timeoutMs: 5_000 });
    await subscribed(t, c);
    // A prompt without a line end, then a title update and the cursor shown, over and over.
    await t.tmux("send-keys", "-t", p, "-H", ...hex("Enter value> "));
    let done = false;
    const noise = (async () => {
      while (!done) {
        await t.tmux("send-keys", "-t", p, "-H", ...hex("\x1b]0;busy\x07\x1b[?25h"));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    try {
      assert.equal((await waiting).outcome, "idle");
    } finally {
      done = true;
      await noise;
    }
  });
});
