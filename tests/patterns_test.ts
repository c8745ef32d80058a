/**
 * Client-supplied patterns cannot hold the server. Patterns that take a backtracking engine
 * exponential (or high polynomial) time — `(x+)+y` against a row of x's — go to the real
 * server process over stdio, started with the `start` task's flags, against panes that show
 * long runs of matching text: the search answers at once, a request sent meanwhile is
 * answered, and SIGTERM or end of input during a long wait_for_text end the process within a
 * second. Cancelling a wait stops it. Nor can one long line: a line of hundreds of thousands
 * of characters, joined from its rows, with a pattern of the largest cost allowed, is matched
 * in pieces the server answers between, and a wait on it keeps its timeout.
 */

import assert from "node:assert/strict";
import { connect } from "./helpers/mcp.ts";
import { type Measured, timed, tookText } from "./helpers/load_clock.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";

/** What "within a second" allows: the process must be gone by then. */
const EXIT_WITHIN_MS = 1_000;

/** How long an answer may take before the server counts as held. */
const ANSWER_WITHIN_MS = 10_000;

/**
 * How long a test's setup may take before it counts as stuck: setup, not a promise. A wait's
 * first progress comes after the process's first call has loaded its tools, attached its
 * control clients and matched the screen, which took a loaded machine over 10 s (CI).
 */
const SETUP_WITHIN_MS = 60_000;

/** Rows each worth hours to a backtracking engine (a few seconds for ten of them, at best). */
const ROWS = [
  ...Array(10).fill("x".repeat(40)),
  `${"x".repeat(40)}y`,
  ...Array(10).fill(`${"a".repeat(60)}!`),
  ...Array(10).fill("a".repeat(19) + "b".repeat(200)),
  "a".repeat(20),
];

/** Each pattern, and the rows of {@link ROWS} it matches. */
const CATASTROPHIC: readonly [string, number][] = [
  ["(x+)+y", 1],
  ["(a|aa)+$", 1],
  ["(.*a){20}", 11],
];

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

/** A pane showing {@link ROWS} (and then waiting), the real server on its socket. */
async function withServer(
  fn: (t: Started, s: StdioServer) => Promise<void>,
  command = `printf '%s\\n' ${ROWS.join(" ")}; exec cat`,
): Promise<void> {
  const t = await TestTmux.start("main", { width: 250, height: 60, command });
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", t.ids.paneId)).includes("x".repeat(40)),
      "the rows on screen",
    );
    await s.initialize();
    await fn(t, s);
  } finally {
    await s.kill();
    await t.kill();
  }
}

Deno.test("a catastrophic regex search answers at once, and a request sent meanwhile is answered", async () => {
  await withServer(async (t, s) => {
    for (const [pattern, rows] of CATASTROPHIC) {
      for (const matchCase of [false, true]) {
        const began = performance.now();
        const search = s.request("tools/call", {
          name: "search_panes",
          arguments: { pattern, regex: true, matchCase },
        });
        const other = s.request("tools/call", { name: "list_panes", arguments: {} });
        const listed = await s.answerWithin(other, ANSWER_WITHIN_MS);
        assert.ok(typeof listed === "object", `list_panes beside ${pattern}: ${listed}`);
        const panes = (listed.result?.structuredContent as { panes: { id: string }[] }).panes;
        assert.deepEqual(panes.map((p) => p.id), [t.ids.paneId]);
        const found = await s.answerWithin(search, ANSWER_WITHIN_MS);
        assert.ok(typeof found === "object", `search_panes ${pattern}: ${found}`);
        const data = found.result?.structuredContent as { totalMatches: number } | undefined;
        assert.equal(data?.totalMatches, rows, `${pattern}: ${JSON.stringify(found.result)}`);
        const took = performance.now() - began;
        assert.ok(took < ANSWER_WITHIN_MS, `${pattern}: ${Math.round(took)} ms`);
      }
    }
  });
});

Deno.test("a pattern RE2 cannot match in linear time is refused, saying why", async () => {
  await withServer(async (t, s) => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["search_panes", { pattern: "x+(?=y)", regex: true }, /lookahead/],
      ["search_panes", { pattern: "(x)\\1", regex: true }, /backreference/],
      [
        "wait_for_text",
        { paneId: t.ids.paneId, patterns: ["ok"], stop: ["(?<!no )error"], regex: true },
        /^stop\[0\] uses a lookbehind/,
      ],
    ];
    for (const [name, args, why] of cases) {
      const result = await s.callTool(name, args);
      assert.equal(result.isError, true, JSON.stringify(result));
      const text = (result.content as { text: string }[])[0].text;
      assert.match(text, why);
      assert.match(text, /RE2 syntax/);
    }
  });
});

/** Starts a wait on the flooding pane with a catastrophic pattern; resolves once it runs. */
async function startWait(t: Started, s: StdioServer, token: string): Promise<void> {
  await s.writeLine(JSON.stringify({
    jsonrpc: "2.0",
    id: token,
    method: "tools/call",
    params: {
      name: "wait_for_text",
      arguments: {
        paneId: t.ids.paneId,
        patterns: CATASTROPHIC.map(([p]) => p),
        stop: ["^(x|xx)+y$"],
        regex: true,
        timeoutMs: 60_000,
      },
      _meta: { progressToken: token },
    },
  }));
  // Progress comes once the screen was matched and the wait has begun.
  await waitFor(
    () =>
      s.notifications.some((m) =>
        m.method === "notifications/progress" && m.params?.progressToken === token
      ),
    "the wait to report progress",
    SETUP_WITHIN_MS,
  );
}

/** Prints a row of 40 x's ten times a second: every line is hours of work to backtracking. */
const FLOOD = `while :; do echo ${"x".repeat(40)}; sleep 0.1; done`;

for (const how of ["SIGTERM", "end of input"] as const) {
  Deno.test(`${how} during a long wait_for_text ends the process within a second`, async () => {
    await withServer(async (t, s) => {
      await startWait(t, s, "held");
      assert.equal(s.notifications.some((m) => m.id === "held"), false, "the wait still runs");
      const { value: status, took } = await timed(() => {
        if (how === "SIGTERM") s.child.kill("SIGTERM");
        return how === "SIGTERM" ? s.child.status : s.closeStdin();
      }, s.child.pid);
      assert.ok(took.own < EXIT_WITHIN_MS, `${how}: the process ended after ${tookText(took)}`);
      assert.equal(status.code, 0, `${how}: a clean exit`);
    }, FLOOD);
  });
}

Deno.test("a wait on a catastrophic pattern can be cancelled, and the server answers meanwhile", async () => {
  await withServer(async (t, s) => {
    await startWait(t, s, "cancel-me");
    await s.notify("notifications/cancelled", { requestId: "cancel-me", reason: "gave up" });
    const listed = await s.answerWithin(
      s.request("tools/call", { name: "list_panes", arguments: {} }),
      ANSWER_WITHIN_MS,
    );
    assert.ok(typeof listed === "object", `list_panes after the cancellation: ${listed}`);
    const { value: status, took } = await timed(() => s.closeStdin(), s.child.pid);
    assert.ok(took.own < EXIT_WITHIN_MS, `end of input after a cancel: ${tookText(took)}`);
    assert.equal(status.code, 0);
    assert.equal(
      s.notifications.some((m) => m.id === "cancel-me"),
      false,
      "no answer once cancelled",
    );
  }, FLOOD);
});

/**
 * Calls `name` in-process, cancels it once it reported progress, and says how long the server
 * went on with it: registry.settle() returns as soon as no call runs.
 */
async function runAfterCancel(
  socketName: string,
  name: string,
  args: Record<string, unknown>,
): Promise<Measured> {
  const c = await connect({ socketName });
  try {
    const controller = new AbortController();
    let progressed = false;
    const call = c.client.callTool({ name, arguments: args }, undefined, {
      signal: controller.signal,
      onprogress: () => progressed = true,
    });
    call.catch(() => {});
    await waitFor(() => progressed, `${name} to report progress`, SETUP_WITHIN_MS);
    const { took } = await timed(async () => {
      controller.abort("the test gave up");
      await assert.rejects(call);
      await c.server.registry.settle(5_000);
    });
    return took;
  } finally {
    await c.close();
  }
}

Deno.test("cancelling a regex wait ends the call on the server within a second", async () => {
  const t = await TestTmux.start("main", { width: 120, height: 30, command: FLOOD });
  try {
    const took = await runAfterCancel(t.socket, "wait_for_text", {
      paneId: t.ids.paneId,
      patterns: ["^NEVER-(PRINTED|SEEN)$"],
      regex: true,
      timeoutMs: 60_000,
    });
    assert.ok(took.own < EXIT_WITHIN_MS, `the wait still ran ${tookText(took)} after cancel`);
  } finally {
    await t.kill();
  }
});

/** A window whose pane holds 50 000 rows of history, for a search that takes a while. */
async function deepHistory(t: Started): Promise<string> {
  await t.tmux("set-option", "-g", "history-limit", "60000");
  const paneId = (await t.tmux(
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id}",
    // Random letters: rows alike would let RE2 reuse its automaton's states from row to row.
    'awk \'BEGIN { srand(1); for (i = 0; i < 50000; i++) { s = ""; ' +
      'for (j = 0; j < 60; j++) s = s sprintf("%c", 97 + int(rand() * 26)); print s } }\'; ' +
      "exec cat",
  )).trim();
  await waitFor(
    async () =>
      Number(await t.tmux("display-message", "-p", "-t", paneId, "#{history_size}")) >= 49_000,
    "the history to fill",
  );
  return paneId;
}

/**
 * Starts a regex search of `scrollbackLines` rows per pane; resolves once it is matching (the
 * progress of a pane comes after its capture, before its rows are matched).
 */
async function startSearch(
  s: StdioServer,
  token: string,
  pattern: string,
  scrollbackLines: number,
): Promise<void> {
  await s.writeLine(JSON.stringify({
    jsonrpc: "2.0",
    id: token,
    method: "tools/call",
    params: {
      name: "search_panes",
      arguments: { pattern, regex: true, scrollbackLines },
      _meta: { progressToken: token },
    },
  }));
  await waitFor(
    () =>
      s.notifications.some((m) =>
        m.method === "notifications/progress" && m.params?.progressToken === token &&
        m.params?.progress === m.params?.total
      ),
    "the search to read its panes",
    // Setup, not a promise: capturing 3 MB of rows takes a loaded machine tens of seconds.
    60_000,
  );
}

/** Starts a regex search through {@link deepHistory}; resolves once it is matching. */
function startBigSearch(s: StdioServer, token: string): Promise<void> {
  // About 1 800 steps a character: tens of seconds over 3 MB of rows, in linear time.
  return startSearch(s, token, "(.{0,100}a){9}", 60_000);
}

for (const how of ["cancellation", "SIGTERM", "end of input"] as const) {
  Deno.test(`a big regex search: a request beside it is answered, and ${how} ends it within a second`, async () => {
    await withServer(async (t, s) => {
      await deepHistory(t);
      await startBigSearch(s, "big");
      const listed = await s.answerWithin(
        s.request("tools/call", { name: "list_panes", arguments: {} }),
        ANSWER_WITHIN_MS,
      );
      assert.ok(typeof listed === "object", `list_panes beside the search: ${listed}`);
      assert.equal(s.notifications.some((m) => m.id === "big"), false, "the search still runs");
      const { value: status, took } = await timed(async () => {
        if (how === "cancellation") {
          await s.notify("notifications/cancelled", { requestId: "big", reason: "gave up" });
        }
        if (how === "SIGTERM") s.child.kill("SIGTERM");
        return how === "SIGTERM" ? await s.child.status : await s.closeStdin();
      }, s.child.pid);
      assert.ok(took.own < EXIT_WITHIN_MS, `${how}: the process ended after ${tookText(took)}`);
      assert.equal(status.code, 0);
    });
  });
}

Deno.test("cancelling a big regex search ends it on the server within a second", async () => {
  const t = await TestTmux.start("main", { width: 120, height: 30 });
  try {
    await deepHistory(t);
    const took = await runAfterCancel(t.socket, "search_panes", {
      pattern: "(.{0,100}a){9}",
      regex: true,
      scrollbackLines: 60_000,
    });
    assert.ok(took.own < EXIT_WITHIN_MS, `the search still ran ${tookText(took)} after cancel`);
  } finally {
    await t.kill();
  }
});

/**
 * A shell command that prints one line of `length` characters, with no newline: `abab...`, or
 * (`varied`) random letters a to c with a rare d, whose runs between two d's RE2's automaton
 * cannot keep states enough for (it falls back to its slowest way of matching).
 */
const longLineCommand = (length: number, varied = false) =>
  varied
    ? `awk 'BEGIN { srand(1); for (i = 0; i < ${length}; i++) ` +
      `printf "%c", rand() < 0.001 ? 100 : 97 + int(rand() * 3) }'`
    : `head -c ${length} /dev/zero | tr '\\0' a | sed 's/aa/ab/g'`;

/**
 * A pane (in a window of its own) whose history holds one line of `length` characters
 * ({@link longLineCommand}), which the server joins from its rows into one line.
 */
async function longLine(t: Started, length: number, varied = false): Promise<string> {
  await t.tmux("set-option", "-g", "history-limit", "60000");
  const paneId = (await t.tmux(
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id}",
    `${longLineCommand(length, varied)}; exec cat`,
  )).trim();
  const width = Number(await t.tmux("display-message", "-p", "-t", paneId, "#{pane_width}"));
  await waitFor(
    async () =>
      Number(await t.tmux("display-message", "-p", "-t", paneId, "#{history_size}")) >=
        Math.floor(length / width) - 60,
    "the long line in the history",
  );
  return paneId;
}

/**
 * Within the allowed program (about 2 700 steps a character), and linear: but 8 s over one line
 * of 100 000 characters `abab...`, which used to go to the engine in one piece.
 */
const HEAVY = "(?:[a-c][a-d]){1,900}[0-9]";

/** Sends `list_sessions` one after another while `going()` holds, each answered within bounds. */
async function answersBeside(
  s: StdioServer,
  what: string,
  going: (answered: number) => boolean,
): Promise<void> {
  for (let answered = 0; going(answered); answered++) {
    const listed = await s.answerWithin(
      s.request("tools/call", { name: "list_sessions", arguments: {} }),
      ANSWER_WITHIN_MS,
    );
    assert.ok(typeof listed === "object", `list_sessions beside ${what} (${answered}): ${listed}`);
  }
}

Deno.test("a regex search over one long wrapped line leaves the server answering", async () => {
  await withServer(async (t, s) => {
    await longLine(t, 300_000);
    await startSearch(s, "long", HEAVY, 5_000);
    // Requests sent one after another for as long as the search runs: each is answered.
    const answer = () => s.notifications.find((m) => m.id === "long");
    await answersBeside(s, "the search", () => answer() === undefined);
    // Matched in pieces, each a bounded call to the engine; the reply says what that means.
    const result = answer()?.result;
    const data = result?.structuredContent as { totalMatches: number } | undefined;
    assert.equal(data?.totalMatches, 0, JSON.stringify(result).slice(0, 1_000));
    const text = (result?.content as { text: string }[])[0].text;
    assert.match(text, /1 long line was matched in pieces overlapping by \d+ characters/);
  });
});

Deno.test("a regex search inside one long line ends within a second when cancelled", async () => {
  await withServer(async (t, s) => {
    await longLine(t, 1_000_000, true);
    await startSearch(s, "varied", HEAVY, 5_000);
    await answersBeside(s, "the search", (answered) => answered < 3);
    assert.equal(s.notifications.some((m) => m.id === "varied"), false, "the search still runs");
    await s.notify("notifications/cancelled", { requestId: "varied", reason: "gave up" });
    await answersBeside(s, "the cancelled search", (answered) => answered < 1);
    const { value: status, took } = await timed(() => s.closeStdin(), s.child.pid);
    assert.ok(took.own < EXIT_WITHIN_MS, `end of input after a cancel: ${tookText(took)}`);
    assert.equal(status.code, 0);
    assert.equal(s.notifications.some((m) => m.id === "varied"), false, "no answer once cancelled");
  });
});

for (const varied of [false, true]) {
  const line = varied ? "a varied long line" : "one long line";
  Deno.test(`a regex wait over ${line} keeps its timeout, and the server answers meanwhile`, async () => {
    await withServer(async (t, s) => {
      // The line comes while the wait watches, once a key is pressed.
      const paneId = (await t.tmux(
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        `read go; ${longLineCommand(varied ? 1_000_000 : 300_000, varied)}; exec cat`,
      )).trim();
      const token = `wait-${varied}`;
      // The varied line is matched for well over 10 s: its wait's timeout leaves tmux the time
      // to take the megabyte in on a loaded machine (2 s once met the read still waiting on
      // tmux at the deadline, an honest "tmux was slow to answer", not the cut this pins).
      const timeoutMs = varied ? 10_000 : 2_000;
      await s.writeLine(JSON.stringify({
        jsonrpc: "2.0",
        id: token,
        method: "tools/call",
        params: {
          name: "wait_for_text",
          arguments: { paneId, patterns: [HEAVY], regex: true, timeoutMs },
          _meta: { progressToken: token },
        },
      }));
      await waitFor(
        () =>
          s.notifications.some((m) =>
            m.method === "notifications/progress" && m.params?.progressToken === token
          ),
        "the wait to begin",
        SETUP_WITHIN_MS,
      );
      await t.tmux("send-keys", "-t", paneId, "Enter");
      const answer = () => s.notifications.find((m) => m.id === token);
      await answersBeside(s, "the wait", (answered) => answered < 3 || answer() === undefined);
      const result = answer()?.result;
      const data = result?.structuredContent as { outcome: string } | undefined;
      assert.equal(data?.outcome, "timedOut", JSON.stringify(result).slice(0, 1_000));
      // The varied line takes the engine its slowest way: the timeout cut the matching short.
      const text = (result?.content as { text: string }[])[0].text;
      if (varied) assert.match(text, /still being matched when the time ran out/);
    });
  });
}
