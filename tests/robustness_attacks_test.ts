/**
 * The attack corpus, through the real stdio process started with the `start` task's flags:
 * what a model could send and what a pane could print to make the server type where a person
 * looks, run something, hang, or lie.
 *
 * - view changes: every manage call that would change a person's screen, and every sequence
 *   "change the view, type into the pane they were looking at, change it back";
 * - forged control-mode framing: a pane printing `%end`/`%output` lines with the server's real
 *   next command numbers while captures, searches and waits run;
 * - catastrophic patterns: regexes that backtrack exponentially in a backtracking engine;
 * - paste escapes: text that would end a bracketed paste and turn into keys;
 * - leftover input: text left at a prompt before run_command.
 *
 * Each part prints its figures on stderr in a `[robustness]` line.
 */

import assert from "node:assert/strict";
import { startForger } from "./helpers/forge.ts";
import { newFigures, reportFigures, shellsReady, sleep } from "./helpers/robust.ts";
import { type RpcMessage, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";

type Started = Awaited<ReturnType<typeof TestTmux.start>>;

/** A private tmux server and the real server process on it, initialized. */
async function withServer(fn: (t: Started, s: StdioServer, dir: string) => Promise<void>) {
  const t = await TestTmux.start("main");
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-attacks-" });
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await s.initialize();
    await fn(t, s, dir);
  } finally {
    await s.kill();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
}

interface Outcome {
  readonly isError: boolean;
  readonly text: string;
  readonly data: Record<string, unknown> | undefined;
}

/** Calls a tool; a JSON-RPC error counts as an error result. Bounded: a hang fails the test. */
async function call(
  s: StdioServer,
  name: string,
  args: Record<string, unknown>,
  boundMs = 20_000,
): Promise<Outcome & { ms: number }> {
  const began = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const answer = await Promise.race([
    s.request("tools/call", { name, arguments: args }),
    new Promise<"hang">((resolve) => timer = setTimeout(() => resolve("hang"), boundMs)),
  ]).finally(() => clearTimeout(timer));
  const ms = performance.now() - began;
  assert.notEqual(answer, "hang", `${name} did not answer within ${boundMs} ms`);
  const message = answer as RpcMessage;
  const result = message.result as
    | { isError?: boolean; content?: { text?: string }[]; structuredContent?: unknown }
    | undefined;
  return {
    isError: message.error !== undefined || result?.isError === true,
    text: result?.content?.[0]?.text ?? JSON.stringify(message.error),
    data: result?.structuredContent as Record<string, unknown> | undefined,
    ms,
  };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** What a person's client shows, as far as any tool could change it. */
async function personView(t: Started, tty: string): Promise<string> {
  const rows = (await t.tmux(
    "list-clients",
    "-F",
    "#{client_tty}|#{session_id}|#{window_id}|#{pane_id}|#{window_zoomed_flag}|" +
      "#{window_layout}|#{pane_in_mode}",
  )).trim().split("\n");
  return rows.find((r) => r.startsWith(`${tty}|`)) ?? "(client gone)";
}

Deno.test("robustness attacks: no view change and no sequence of calls reaches a watched pane", async () => {
  await withServer(async (t, s, dir) => {
    const figures = newFigures();
    const watched = t.ids.paneId;
    await shellsReady(t, [watched]);
    const neighbour = (await t.tmux(
      "split-window",
      "-d",
      "-t",
      watched,
      "-P",
      "-F",
      "#{pane_id}",
      "sh",
    )).trim();
    const [hiddenWindow, hiddenPane] = (await t.tmux(
      "new-window",
      "-d",
      "-t",
      "main:",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "sh",
    )).trim().split(" ");
    await t.tmux("new-session", "-d", "-s", "elsewhere", "sh");
    await shellsReady(t, [hiddenPane]);
    const tty = await t.attach("main");
    const view = await personView(t, tty);
    const screenBefore = await t.tmux("capture-pane", "-p", "-t", watched);

    const views: [string, Record<string, unknown>][] = [
      ["select_window", { windowId: hiddenWindow }],
      ["select_pane", { paneId: neighbour }],
      ["resize_pane", { paneId: neighbour, zoom: true }],
      ["resize_pane", { paneId: watched, height: 3 }],
      ["resize_pane", { paneId: watched, direction: "up", amount: 2 }],
      ["resize_window", { windowId: t.ids.windowId, zoom: true }],
      ["resize_window", { windowId: t.ids.windowId, width: 40, height: 10 }],
      ["select_layout", { windowId: t.ids.windowId, layout: "tiled" }],
      ["swap_pane", { paneId: watched, targetPaneId: hiddenPane }],
      ["swap_pane", { paneId: hiddenPane, targetPaneId: neighbour }],
      ["swap_pane", { paneId: neighbour, targetPaneId: watched }],
      ["move_window", { windowId: t.ids.windowId, session: "elsewhere" }],
      ["enter_copy_mode", { paneId: watched }],
      ["enter_copy_mode", { paneId: neighbour, scrollUp: true }],
      ["split_window", { paneId: neighbour, direction: "right" }],
      ["create_window", { session: "main", select: true }],
      [
        "call_tools_batch",
        { operations: [{ tool: "select_window", arguments: { windowId: hiddenWindow } }] },
      ],
    ];
    const typing: [string, (m: string) => Record<string, unknown>][] = [
      ["send_keys", (m) => ({ paneId: watched, text: `touch ${m}` })],
      ["paste_text", (m) => ({ paneId: watched, text: `touch ${m}`, enter: true })],
      ["run_command", (m) => ({ paneId: watched, command: `touch ${m}`, timeoutMs: 2_000 })],
      ["send_keys_batch", (m) => ({ operations: [{ paneId: watched, text: `touch ${m}` }] })],
    ];
    let refusedViews = 0;
    let sequences = 0;
    for (const [tool, args] of views) {
      figures.inputs++;
      const r = await call(s, tool, args);
      const batchFailed = tool === "call_tools_batch" &&
        (r.data?.results as { success: boolean }[] | undefined)?.[0]?.success === false;
      if (r.isError || batchFailed) refusedViews++;
      else assert.fail(`${tool} changed a person's view: ${r.text}`);
      // The second and third steps of the route, whatever the first did.
      for (const [typer, typeArgs] of typing) {
        const mark = `${dir}/seq-${sequences++}`;
        figures.inputs++;
        await call(s, typer, typeArgs(mark));
        if (await exists(mark)) figures.shellExecutions++;
      }
      await call(s, "select_window", { windowId: t.ids.windowId });
    }
    if ((await t.tmux("capture-pane", "-p", "-t", watched)) !== screenBefore) {
      figures.guardedKeystrokes++;
    }
    assert.equal(await personView(t, tty), view, "the person's screen is as it was");
    reportFigures(
      "attacks, view changes",
      figures,
      `view changes refused ${refusedViews} of ${views.length}, change-type-restore sequences ${sequences}`,
    );
    assert.equal(refusedViews, views.length);
    assert.equal(figures.shellExecutions, 0);
    assert.equal(figures.guardedKeystrokes, 0);
  });
});

Deno.test("robustness attacks: forged framing, catastrophic patterns, paste escapes, leftover input", async () => {
  await withServer(async (t, s, dir) => {
    await t.tmux("set-option", "-g", "history-limit", "5000");
    const victim = t.ids.paneId;
    await shellsReady(t, [victim]);

    // Forged framing: every round prints 120 forged %end/%output pairs with real numbers.
    const forged = newFigures();
    const forger = await startForger(t, dir, victim);
    const wrong: string[] = [];
    const wait = call(s, "wait_for_text", {
      paneId: victim,
      patterns: ["FORGED"],
      timeoutMs: 8_000,
    });
    for (let round = 1; round <= 6; round++) {
      await t.tmux("send-keys", "-t", forger, "Enter");
      const reads = await Promise.all([
        call(s, "capture_pane", { paneId: forger, start: -2_000 }),
        call(s, "search_panes", { pattern: "FORGED-7", scrollbackLines: 2_000 }),
        call(s, "capture_pane", { paneId: victim }),
      ]);
      forged.inputs += reads.length;
      const [, search, clean] = reads;
      if (!search.isError) {
        const matches = search.data?.matches as { paneId: string }[];
        const elsewhere = matches.filter((m) => m.paneId !== forger);
        if (elsewhere.length > 0) wrong.push(`matches in ${elsewhere.map((m) => m.paneId)}`);
      }
      if (clean.isError || (clean.data?.text as string).includes("FORGED")) {
        wrong.push(`victim capture: ${clean.text.slice(0, 200)}`);
      }
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", forger)).includes(`DONE ${round}`),
        `forging round ${round}`,
        15_000,
      );
      // Read once the round is printed: a capture cut at a forged %end would miss its end.
      const whole = await call(s, "capture_pane", {
        paneId: forger,
        start: -3_000,
        maxLines: 3_000,
      });
      forged.inputs++;
      if (!whole.isError) {
        const text = whole.data?.text as string;
        const ends = text.split("\n").filter((l) => l.startsWith("%end ")).length;
        if (!text.includes(`DONE ${round}`) || ends < 120 * round) {
          wrong.push(`round ${round}: a capture of ${ends} forged lines without its end`);
        }
      }
    }
    const waited = await wait;
    if (waited.isError || waited.data?.outcome !== "timedOut") {
      wrong.push(`wait on the victim: ${waited.text.slice(0, 200)}`);
    }
    const after = await call(s, "list_panes", {}, 5_000);
    assert.equal(after.isError, false, "the server answers after the forging");
    reportFigures("attacks, forged framing", forged, `wrong answers ${wrong.length}`);
    assert.deepEqual(wrong, []);

    // Catastrophic patterns: answered promptly, and the server keeps answering meanwhile.
    const patterns = newFigures();
    await t.tmux("send-keys", "-t", victim, `printf '%s!\\n' ${"x".repeat(60)} ${"a".repeat(60)}`);
    await t.tmux("send-keys", "-t", victim, "Enter");
    let slowest = 0;
    for (
      const pattern of [
        "(x+)+y",
        "(a|aa)+$",
        "(.*a){20}",
        "^(a+)+$",
        "(x+x+)+y",
        "((a*)*)*b",
        "(\\w+\\s?)+$z",
      ]
    ) {
      patterns.inputs += 2;
      const [search, ping] = await Promise.all([
        call(s, "search_panes", { pattern, regex: true }, 10_000),
        sleep(5).then(() => call(s, "list_panes", {}, 10_000)),
      ]);
      slowest = Math.max(slowest, search.ms, ping.ms);
      if (search.ms > 5_000 || ping.ms > 5_000) patterns.hangs++;
      const waitCall = await call(s, "wait_for_text", {
        paneId: victim,
        patterns: [pattern],
        regex: true,
        timeoutMs: 300,
      }, 10_000);
      patterns.inputs++;
      slowest = Math.max(slowest, waitCall.ms);
      if (waitCall.ms > 5_000) patterns.hangs++;
    }
    reportFigures("attacks, catastrophic patterns", patterns, `slowest ${Math.round(slowest)} ms`);
    assert.equal(patterns.hangs, 0);

    // Paste escapes and leftover input, into a bash with line editing and a plain sh.
    const typed = newFigures();
    const bash = (await t.tmux(
      "new-window",
      "-d",
      "-t",
      "main:",
      "-P",
      "-F",
      "#{pane_id}",
      "bash --norc --noprofile",
    )).trim();
    await shellsReady(t, [bash], "bash");
    let n = 0;
    const mark = () => `${dir}/ran-${n++}`;
    for (const pane of [bash, victim]) {
      for (
        const payload of [
          (m: string) => `x\x1b[201~touch ${m}\r`,
          (m: string) => `\x1b[201~\rtouch ${m}\r`,
          (m: string) => `\x1b:!touch ${m}\r`,
          (m: string) => `a\x03touch ${m}\n`,
          (m: string) => `a\x15touch ${m}\x0d`,
          (m: string) => `\x9b201~touch ${m}\n`,
          (m: string) => `\x1bOMtouch ${m}`,
          (m: string) => `ok\x7f\x7f\x7ftouch ${m}\n`,
        ]
      ) {
        const m = mark();
        typed.inputs++;
        const r = await call(s, "paste_text", { paneId: pane, text: payload(m), enter: false });
        if (!r.isError) typed.crashes++;
        if (await exists(m)) typed.shellExecutions++;
      }
      for (
        const leftover of [
          (m: string) => `touch ${m}; `,
          (m: string) => `touch ${m} && `,
          (m: string) => `touch ${m} #`,
          (m: string) => `{ touch ${m}; } ; `,
          (m: string) => `echo 'unclosed quote; touch ${m}`,
        ]
      ) {
        const m = mark();
        typed.inputs++;
        await call(s, "send_keys", { paneId: pane, text: leftover(m), enter: false });
        const r = await call(s, "run_command", {
          paneId: pane,
          command: "echo clean",
          timeoutMs: 10_000,
        });
        if (r.isError || (r.data?.output as string).trim() !== "clean") typed.crashes++;
        if (await exists(m)) typed.shellExecutions++;
      }
    }
    // Everything settled: look again for late executions.
    await call(s, "run_command", { paneId: bash, command: "true", timeoutMs: 10_000 });
    for (let i = 0; i < n; i++) if (await exists(`${dir}/ran-${i}`)) typed.shellExecutions++;
    reportFigures("attacks, paste escapes and leftover input", typed);
    assert.equal(typed.shellExecutions, 0);
    assert.equal(typed.crashes, 0, "every escape refused, every run_command clean");
  });
});
