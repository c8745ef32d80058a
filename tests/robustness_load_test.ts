/**
 * Load (issue 9): 100 concurrent calls from one client — reads, searches and sends, each to
 * its own pane — against 100 panes. Every reply must match its request (each pane prints its
 * own mark, each send types its own word), none may be lost or mixed, no tmux child may be
 * left behind, and memory must come back to its baseline. Run twice: in-process, where the
 * heap is measured after a full garbage collection, and through the real stdio process, whose
 * RSS is sampled. Prints the wall times and the peak RSS.
 */

import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { warn } from "../src/diagnostics.ts";
import { connect } from "./helpers/mcp.ts";
import { rssKiB, shellsReady, sleep, tmuxClientsOf } from "./helpers/robust.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";

const PANES = 100;
const CALLS = 100;

/** What pane n prints first: a mark no other pane shows. */
const mark = (n: number) => `PANE-${n}-MARK`;
/** What a send of run `tag` types into pane n. */
const word = (tag: string, n: number) => `SENT-${tag}-${n}-WORD`;

type Kind = "capture_pane" | "search_panes" | "send_keys" | "get_pane_info";
const KINDS: readonly Kind[] = ["capture_pane", "search_panes", "send_keys", "get_pane_info"];

/** One tool call, however it travels; resolves with the result or a JSON-RPC error text. */
type Call = (name: string, args: Record<string, unknown>) => Promise<CallToolResult | string>;

/** A full garbage collection (node:v8 turns the flag on at run time; no CLI flag needed). */
const gc: () => void = (() => {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc");
})();

/** The heap in use after a full collection, in bytes. */
function liveHeap(): number {
  gc();
  gc();
  return Deno.memoryUsage().heapUsed;
}

const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;

/** Builds 100 panes (one window each) in one tmux invocation; returns their ids in order. */
async function hundredPanes(t: TestTmux): Promise<string[]> {
  const command = (n: number) => `printf '%s\\n' ${mark(n)}; exec sh`;
  const more: string[] = [];
  for (let n = 1; n < PANES; n++) more.push(";", "new-window", "-d", "-t", "load", command(n));
  await t.tmux("respawn-pane", "-k", "-t", "load:0", command(0), ...more);
  const out = await t.tmux("list-panes", "-s", "-t", "load", "-F", "#{window_index} #{pane_id}");
  const ids = out.trim().split("\n").map((l) => l.split(" "))
    .sort((a, b) => Number(a[0]) - Number(b[0])).map(([, id]) => id);
  assert.equal(ids.length, PANES);
  // Every pane's mark printed and its shell's prompt drawn after it: the storm's captures and
  // searches look for the marks, and its sends type into the shells.
  await shellsReady(t, ids);
  return ids;
}

function requestFor(kind: Kind, tag: string, n: number, id: string): Record<string, unknown> {
  switch (kind) {
    case "capture_pane":
      return { paneId: id };
    case "search_panes":
      return { pattern: mark(n), matchCase: true };
    case "send_keys":
      return { paneId: id, text: `echo ${word(tag, n)}` };
    case "get_pane_info":
      return { paneId: id };
  }
}

/** Why `answer` is not the reply to call `kind` on pane n (`id`), or null when it is. */
function mismatch(
  kind: Kind,
  n: number,
  id: string,
  answer: CallToolResult | string,
): string | null {
  if (typeof answer === "string") return `JSON-RPC error: ${answer}`;
  if (answer.isError) return `tool error: ${JSON.stringify(answer.content).slice(0, 300)}`;
  const data = answer.structuredContent as Record<string, unknown>;
  switch (kind) {
    case "capture_pane": {
      const text = String(data.text);
      if (data.paneId !== id) return `capture of ${data.paneId}, not ${id}`;
      if (!text.includes(mark(n))) return `capture lacks ${mark(n)}`;
      const other = /PANE-\d+-MARK/.exec(text.replace(mark(n), ""));
      return other ? `capture shows another pane's mark ${other[0]}` : null;
    }
    case "search_panes": {
      const matches = (data.matches as { paneId: string; text: string }[]) ?? [];
      const panes = [...new Set(matches.map((m) => m.paneId))];
      if (panes.length !== 1 || panes[0] !== id) return `search found ${panes.join(",")}`;
      return matches.every((m) => m.text.includes(mark(n))) ? null : "a match without the mark";
    }
    case "send_keys":
      return data.paneId === id && (data.reachedPanes as string[]).join() === id
        ? null
        : `sent to ${data.paneId} / ${data.reachedPanes}`;
    case "get_pane_info": {
      const pane = (data.pane ?? data) as { id?: string; paneId?: string };
      const got = pane.id ?? pane.paneId;
      return got === id ? null : `info of ${got}, not ${id}`;
    }
  }
}

/** The pane a call of round `round` goes to: different panes per call and per round. */
const paneOf = (i: number, round: number) => (i + round * 37) % PANES;

/** One storm: CALLS concurrent calls; returns what went wrong and the wall time. */
async function storm(
  call: Call,
  ids: readonly string[],
  tag: string,
  round: number,
): Promise<{ problems: string[]; wallMs: number }> {
  const began = performance.now();
  const calls = Array.from({ length: CALLS }, (_, i) => {
    const kind = KINDS[i % KINDS.length];
    const n = paneOf(i, round);
    return { kind, n, answer: call(kind, requestFor(kind, tag, n, ids[n])) };
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settled = await Promise.race([
    Promise.all(calls.map((c) => c.answer)),
    new Promise<"lost">((resolve) => timer = setTimeout(() => resolve("lost"), 120_000)),
  ]);
  clearTimeout(timer);
  const wallMs = performance.now() - began;
  if (settled === "lost") return { problems: ["replies lost: not all came within 120 s"], wallMs };
  const problems = calls.flatMap((c, i) => {
    const why = mismatch(c.kind, c.n, ids[c.n], settled[i]);
    return why ? [`call ${i} ${c.kind} on pane ${c.n} (${ids[c.n]}): ${why}`] : [];
  });
  return { problems, wallMs };
}

/** What each pane shows and keeps, in one tmux invocation. */
async function screensOf(t: TestTmux, ids: readonly string[]): Promise<string[]> {
  const sep = `::${crypto.randomUUID()}::`;
  const args = ids.flatMap((id, i) => [
    ...(i > 0 ? [";"] : []),
    "display-message",
    "-p",
    sep,
    ";",
    "capture-pane",
    "-p",
    "-J",
    "-t",
    id,
    "-S",
    "-",
  ]);
  const parts = (await t.tmux(...args)).split(`${sep}\n`).slice(1);
  assert.equal(parts.length, ids.length);
  return parts;
}

/** Every word of run `tag` arrived in its own pane, and no pane shows another pane's word. */
async function sendsArrived(
  t: TestTmux,
  ids: readonly string[],
  tag: string,
  rounds: readonly number[],
): Promise<void> {
  const sent = new Set<number>();
  for (const round of rounds) {
    for (let i = 0; i < CALLS; i++) {
      if (KINDS[i % KINDS.length] === "send_keys") sent.add(paneOf(i, round));
    }
  }
  const screens = () => screensOf(t, ids);
  await waitFor(
    async () => {
      const all = await screens();
      return [...sent].every((n) => all[n].includes(`\n${word(tag, n)}`));
    },
    "every sent word echoed by its own pane",
    20_000,
  );
  for (const [n, screen] of (await screens()).entries()) {
    const words = screen.match(new RegExp(`SENT-${tag}-\\d+-WORD`, "g")) ?? [];
    assert.ok(words.every((w) => w === word(tag, n)), `pane ${n} shows ${words.join(", ")}`);
    assert.equal(words.length > 0, sent.has(n), `pane ${n} got a send exactly when one went to it`);
  }
}

/** The tmux children of the server process(es) for `socket`, once one-shot ones have ended. */
async function settledChildren(socket: string, atMost: number): Promise<string[]> {
  return await waitFor(
    async () => {
      const now = await tmuxClientsOf(socket);
      return now.length <= atMost ? now : null;
    },
    "one-shot tmux children to end",
    10_000,
  ).catch(() => tmuxClientsOf(socket));
}

Deno.test({
  name:
    "robustness load: 100 concurrent calls on 100 panes, every reply its own, nothing left behind",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const t = await TestTmux.start("load", { width: 100, height: 30 });
    try {
      const ids = await hundredPanes(t);

      // In-process: the heap after a full collection, before and after.
      const c = await connect({ socketName: t.socket });
      const inProcess: Call = async (name, args) => {
        try {
          return await c.client.callTool({ name, arguments: args }) as CallToolResult;
        } catch (error) {
          return String(error);
        }
      };
      try {
        // Warm up with a full storm: caches and compiled code belong to the baseline.
        const warm = await storm(inProcess, ids, "mem", 0);
        const children = await settledChildren(t.socket, Infinity);
        const baseline = liveHeap();
        let peakRss = Deno.memoryUsage().rss;
        const sampler = setInterval(() => peakRss = Math.max(peakRss, Deno.memoryUsage().rss), 5);
        const first = await storm(inProcess, ids, "mem", 1);
        const second = await storm(inProcess, ids, "mem", 2);
        clearInterval(sampler);
        assert.deepEqual([...warm.problems, ...first.problems, ...second.problems], []);
        await sendsArrived(t, ids, "mem", [0, 1, 2]);
        const left = await settledChildren(t.socket, children.length);
        assert.deepEqual(left.length, children.length, `left behind: ${left.join("; ")}`);
        const after = liveHeap();
        warn(
          `[robustness] load in-process: ${CALLS} concurrent calls on ${PANES} panes in ${
            Math.round(first.wallMs)
          } ms (then ${Math.round(second.wallMs)} ms); live heap ${mb(baseline)} before, ${
            mb(after)
          } after; peak RSS of the test process ${
            mb(peakRss)
          }; tmux children ${children.length} before, ${left.length} after`,
        );
        assert.ok(
          after - baseline < 8 * 1024 * 1024,
          `the live heap grew from ${mb(baseline)} to ${mb(after)}`,
        );
      } finally {
        await c.close();
      }
      assert.deepEqual(
        await settledChildren(t.socket, 0),
        [],
        "closing the client ends its control connection",
      );

      // The real process: the same storm over stdio, its RSS sampled with ps.
      const { cmd, args } = startCommand();
      const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
      try {
        await s.initialize();
        const overStdio: Call = async (name, a) => {
          const answer = await s.request("tools/call", { name, arguments: a });
          return answer.error ? answer.error.message : answer.result as CallToolResult;
        };
        const warm = await storm(overStdio, ids, "rss", 0);
        const children = await settledChildren(t.socket, Infinity);
        const baseline = await rssKiB(s.child.pid);
        let peak = baseline;
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            peak = Math.max(peak, await rssKiB(s.child.pid));
            await sleep(20);
          }
        })();
        const first = await storm(overStdio, ids, "rss", 1);
        const second = await storm(overStdio, ids, "rss", 2);
        sampling = false;
        await sampler;
        assert.deepEqual([...warm.problems, ...first.problems, ...second.problems], []);
        await sendsArrived(t, ids, "rss", [0, 1, 2]);
        const left = await settledChildren(t.socket, children.length);
        assert.equal(left.length, children.length, `left behind: ${left.join("; ")}`);
        await sleep(1_000);
        const after = await rssKiB(s.child.pid);
        warn(
          `[robustness] load over stdio: ${CALLS} concurrent calls on ${PANES} panes in ${
            Math.round(first.wallMs)
          } ms (then ${Math.round(second.wallMs)} ms); RSS ${Math.round(baseline / 1024)} MB ` +
            `after warm-up, peak ${Math.round(peak / 1024)} MB, ${
              Math.round(after / 1024)
            } MB after; tmux children ${children.length} before, ${left.length} after`,
        );
        assert.ok(baseline > 0 && peak >= baseline, "RSS was read");
      } finally {
        await s.kill();
      }
    } finally {
      await t.kill();
    }
  },
});

Deno.test("a burst of concurrent calls on a fresh client opens one control connection", async () => {
  const t = await TestTmux.start();
  const other = (await t.tmux("new-session", "-d", "-s", "other", "-P", "-F", "#{pane_id}", "sh"))
    .trim();
  const c = await connect({ socketName: t.socket });
  try {
    await Promise.all(Array.from({ length: 20 }, () => c.ok("list_panes")));
    const control = (await tmuxClientsOf(t.socket)).filter((l) => / -C attach-session /.test(l));
    // A wait on a pane of another session needs a control client of its own: with the
    // server's allowance used up by duplicates, it falls back to polling.
    const waited = await c.ok<{ transport: string }>("wait_for_text", {
      paneId: other,
      patterns: ["NEVER-PRINTED"],
      timeoutMs: 200,
    });
    assert.equal(control.length, 1, `control clients after the burst:\n${control.join("\n")}`);
    assert.equal(waited.transport, "control");
  } finally {
    await c.close();
    await t.kill();
  }
});
