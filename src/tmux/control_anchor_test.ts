/**
 * Format subscriptions and tmux 3.3a: a session-wide one (`NAME::FORMAT`) crashes the server
 * when its client's session is destroyed and the client outlives tmux's next one-second
 * check with a changed value (control.c dereferences the client's session, by then none).
 * Ours are anchored on a window of the client's session, and moved when that window goes.
 */
import assert from "node:assert/strict";
import { TestTmux, trackChild, waitFor, withRunner } from "../../tests/helpers/tmux.ts";
import { controlFor } from "./control.ts";

/** How long a subscription check may take to be told (tmux checks once a second). */
const SUBSCRIPTION_WAIT_MS = 20_000;

/** Our control clients: pid and session name of each. */
async function ourClients(t: TestTmux): Promise<{ pid: number; session: string }[]> {
  const lines = await t.tmux(
    "list-clients",
    "-F",
    "#{client_control_mode} #{client_pid} #{session_name}",
  );
  return lines.trim().split("\n").filter((l) => l.startsWith("1 ")).map((l) => {
    const [, pid, session] = l.split(" ");
    return { pid: Number(pid), session };
  });
}

/**
 * Returns once tmux has checked format subscriptions `checks` times on a client of its own
 * attached to `session`: every client's subscriptions are checked once a second, so at least
 * `checks - 1` seconds of checks have passed on every other client too. Rejects if the server
 * goes away meanwhile.
 */
async function subscriptionChecks(t: TestTmux, session: string, checks: number): Promise<void> {
  const windowId = (await t.tmux("display-message", "-p", "-t", session, "#{window_id}")).trim();
  const child = new Deno.Command("tmux", {
    args: [
      "-u",
      "-L",
      t.socket,
      "-C",
      "attach-session",
      "-f",
      "ignore-size,no-output",
      "-t",
      session,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  trackChild(child, "a control client counting subscription checks");
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  /**
   * Reads until a line `wanted` accepts, and drops what came before it. Bounded: a line that
   * never comes fails the test with what did come, instead of holding the suite.
   */
  const until = async (wanted: (line: string) => boolean, what: string) => {
    const deadline = Date.now() + SUBSCRIPTION_WAIT_MS;
    while (true) {
      const at = buffered.split("\n").findIndex(wanted);
      if (at !== -1) {
        buffered = buffered.split("\n").slice(at + 1).join("\n");
        return;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), Math.max(0, deadline - Date.now()));
      });
      const read = await Promise.race([lines.read(), late]).finally(() => clearTimeout(timer));
      if (read === "late") {
        throw new Error(`no ${what} within ${SUBSCRIPTION_WAIT_MS} ms; read: ${buffered}`);
      }
      if (read.done) throw new Error(`the tmux server went away before ${what}`);
      buffered += read.value;
    }
  };
  const seen = (value: string) =>
    until(
      (l) => /^%subscription-changed tick /.test(l) && l.endsWith(` : ${value}`),
      `check ${value}`,
    );
  try {
    // The client is attached once tmux has answered its attach-session: a command it is given
    // before then is not one to count on.
    await until((l) => l.startsWith("%end "), "the attach's answer");
    await t.tmux("set-option", "-g", "@tmux-mcp-test-tick", "0");
    await writer.write(
      new TextEncoder().encode(`refresh-client -B 'tick:${windowId}:#{@tmux-mcp-test-tick}'\n`),
    );
    await seen("0");
    for (let i = 1; i <= checks; i++) {
      await t.tmux("set-option", "-g", "@tmux-mcp-test-tick", String(i));
      await seen(String(i));
    }
  } finally {
    await writer.close().catch(() => {});
    await lines.cancel().catch(() => {});
    await child.status;
  }
}

Deno.test("a person kills the session our stalled client sits in: its subscriptions leave tmux running", async () => {
  await withRunner(async (t, runner) => {
    const { pid } = await t.facts();
    await t.tmux("new-session", "-d", "-s", "other");
    const control = controlFor(runner, { socketName: t.socket });
    const values: string[] = [];
    // A value that changes as the session goes: what tmux 3.3a crashed on.
    const listening = await control.listen(
      { subscription: (_key, value) => values.push(value) },
      { sessions: "#{S:#{session_id} }" },
    );
    await waitFor(() => values.length > 0, "the subscription's first value");
    const [ours, ...more] = await ourClients(t);
    assert.equal(more.length, 0, "one control client of ours");
    const spare = ours.session === "main" ? "other" : "main";
    // Its process stopped (a machine too busy to run it, a job stopped with ^Z): tmux keeps
    // the client, subscriptions and all, until the process has read tmux's farewell.
    Deno.kill(ours.pid, "SIGSTOP");
    try {
      await t.tmux("kill-session", "-t", ours.session);
      await subscriptionChecks(t, spare, 3);
      await t.tmux("has-session", "-t", spare);
      assert.equal((await t.facts()).pid, pid, "the same tmux server");
    } finally {
      Deno.kill(ours.pid, "SIGCONT");
    }
    listening.close();
    await waitFor(async () => (await ourClients(t)).every((c) => c.pid !== ours.pid), "it to go");
    // Gone from tmux's list before this process has read the end of its output: a command
    // sent meanwhile meets the closing connection (the runner then spawns tmux instead).
    await waitFor(() => control.connections === 0, "its connection to be seen closed here");
    assert.equal(
      new TextDecoder().decode((await control.exec(["display-message", "-p", "x"])).stdout),
      "x\n",
    );
  });
});

Deno.test("the window a client's subscriptions hang on closes: they move, and keep reporting", async () => {
  await withRunner(async (t, runner) => {
    const { pid } = await t.facts();
    const control = controlFor(runner, { socketName: t.socket });
    const values: string[] = [];
    const listening = await control.listen(
      { subscription: (_key, value) => values.push(value) },
      { mark: "#{@tmux-mcp-test-mark}" },
    );
    await waitFor(() => values.length > 0, "the subscription's first value");
    // The session's current window is where the client's subscriptions hang; a second one
    // is made beside it, then the first one is killed, then the one made after it: each
    // time the value changes after, and is heard.
    for (const mark of ["one", "two"]) {
      const current = (await t.tmux("display-message", "-p", "-t", "main", "#{window_id}")).trim();
      await t.tmux("new-window", "-d", "-t", "main");
      await t.tmux("kill-window", "-t", current);
      await t.tmux("set-option", "-g", "@tmux-mcp-test-mark", mark);
      await waitFor(() => values.at(-1) === mark, `the value ${mark} heard`);
    }
    listening.close();
    // The subscription every client carries moved too: exit-unattached turned on while only
    // ours are attached makes them leave, and the server exits.
    await t.tmux("set-option", "-g", "exit-unattached", "on");
    await waitFor(() => {
      try {
        Deno.kill(pid, "SIGCONT");
        return false;
      } catch {
        return true;
      }
    }, "the server to exit");
    assert.equal(control.connections, 0);
  });
});
