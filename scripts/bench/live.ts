/**
 * The live resources' section: {@link LIVE_PANES} panes all subscribed at once, how soon an
 * update reaches the client after a pane prints or a hook marks a window, and the server's
 * notifications and RSS while every pane prints.
 *
 * @module
 */

import { StdioServer } from "../../tests/helpers/stdio.ts";
import { AGENTS_CHANNEL } from "../../src/hooks/marks.ts";
import { RUNS, WARMUP } from "./options.ts";
import { dispose, started, tmux } from "./fixture.ts";
import { cmd, env, peakRss, readyIdleRss, rss, startArgs } from "./server.ts";
import { out, record } from "./table.ts";
import { stats } from "./timing.ts";

/** Panes subscribed at once in the live resources' section. */
export const LIVE_PANES = 200;
/** How long every subscribed pane prints before memory is read. */
export const LIVE_PRINT_MS = 15_000;
/** What the live section found, for the reports (one entry when it ran). */
export const live: {
  latency: { median: number; p90: number };
  marks: { median: number; p90: number };
  idleRssMb: number;
  rssMb: number;
  peakRssMb: number;
  perSecond: number;
}[] = [];

/**
 * Live resources: a server with {@link LIVE_PANES} shell panes in one session, every pane
 * subscribed (`resources/subscribe`, 2025-11-25). Latency: from a line written straight to a
 * pane's terminal to its `notifications/resources/updated` (panes taken in turn, spaced past
 * the coalescing gap). Memory: the server's RSS after every pane printed five lines a second
 * for {@link LIVE_PRINT_MS}, and the notifications it sent per second meanwhile.
 */
export async function benchLive(): Promise<void> {
  const socket = `tmux-mcp-bench-${crypto.randomUUID().slice(0, 8)}`;
  await tmux(
    socket,
    "-f",
    "/dev/null",
    "new-session",
    "-d",
    "-s",
    "live",
    "-x",
    "80",
    "-y",
    "24",
    "sh",
  );
  const [pid, socketPath] = (await tmux(socket, "display-message", "-p", "#{pid}\t#{socket_path}"))
    .trim().split("\t");
  started.set(socket, { pid: Number(pid) || 0, socketPath: socketPath ?? "" });
  try {
    for (let i = 1; i < LIVE_PANES; i += 50) {
      const batch = Array.from({ length: Math.min(50, LIVE_PANES - i) }, (_, k) => k);
      await tmux(
        socket,
        ...batch.flatMap((k) => [...(k ? [";"] : []), "new-window", "-d", "-t", "live:", "sh"]),
      );
    }
    const panes =
      (await tmux(socket, "list-panes", "-s", "-t", "live", "-F", "#{pane_id} #{pane_tty}"))
        .trim().split("\n").map((l) => l.split(" ") as [string, string]);
    const server = new StdioServer(cmd, [...startArgs, "--socket", socket], env);
    try {
      await server.initialize();
      const idleRssMb = await readyIdleRss(server);
      for (const [paneId] of panes) {
        await server.request("resources/subscribe", { uri: `tmux://pane/${paneId.slice(1)}` });
      }
      await new Promise((r) => setTimeout(r, 2_000)); // the watches attach
      const updated = (uri: string, from: number) =>
        server.notifications.slice(from).some((n) =>
          n.method === "notifications/resources/updated" && n.params?.uri === uri
        );
      /** Milliseconds from `change(i)` starting to the update of `uriOf(i)`, over the runs. */
      const updateLatency = async (
        uriOf: (i: number) => string,
        change: (i: number) => Promise<unknown>,
      ) => {
        const samples: number[] = [];
        for (let i = -WARMUP; i < RUNS; i++) {
          const uri = uriOf(i);
          await new Promise((r) => setTimeout(r, 300)); // past the coalescing gap
          const from = server.notifications.length;
          const t0 = performance.now();
          await change(i);
          const until = t0 + 5_000;
          while (!updated(uri, from) && performance.now() < until) {
            await new Promise((r) => setTimeout(r, 1));
          }
          if (!updated(uri, from)) throw new Error(`no update of ${uri} within 5 s`);
          if (i >= 0) samples.push(performance.now() - t0);
        }
        return samples;
      };
      const paneOf = (i: number) => panes[(i + WARMUP) % panes.length];
      const latency = await updateLatency(
        (i) => `tmux://pane/${paneOf(i)[0].slice(1)}`,
        (i) => Deno.writeTextFile(paneOf(i)[1], `live ${i}\r\n`),
      );
      record(LIVE_PANES, "resource update after a pane prints (all subscribed)", latency, null);
      // The agent marks: what `tmux-mcp hook` runs (a window option, then the signal), from
      // the tmux command's start to the update of tmux://agents.
      await server.request("resources/subscribe", { uri: "tmux://agents" });
      const marks = await updateLatency(() => "tmux://agents", (i) =>
        tmux(
          socket,
          ...["set-option", "-w", "-t", panes[0][0], "@agent-state"],
          i % 2 ? "working" : "needs-input",
          ...[";", "wait-for", "-S", AGENTS_CHANNEL],
        ));
      record(LIVE_PANES, "tmux://agents update after a hook's mark", marks, null);
      await server.request("resources/unsubscribe", { uri: "tmux://agents" });
      for (let at = 0; at < panes.length; at += 50) {
        await tmux(
          socket,
          ...panes.slice(at, at + 50).flatMap(([paneId], k) => [
            ...(k ? [";"] : []),
            "send-keys",
            "-t",
            paneId,
            "while :; do echo tick; sleep 0.2; done",
            "Enter",
          ]),
        );
      }
      await new Promise((r) => setTimeout(r, 2_000));
      const from = server.notifications.length;
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, LIVE_PRINT_MS));
      const perSecond = (server.notifications.length - from) / ((performance.now() - t0) / 1000);
      const rssMb = rss(server.child.pid);
      const peakRssMb = peakRss(server.child.pid);
      live.push({
        latency: stats(latency),
        marks: stats(marks),
        idleRssMb,
        rssMb,
        peakRssMb,
        perSecond,
      });
      out(
        `live: ${LIVE_PANES} subscribed panes printing: RSS ${rssMb.toFixed(1)} MB (idle ` +
          `${idleRssMb.toFixed(1)}, peak ${peakRssMb.toFixed(1)}), ${perSecond.toFixed(0)} ` +
          `notifications/s; update latency median ${stats(latency).median.toFixed(1)} ms`,
      );
      await server.closeStdin();
    } finally {
      await server.kill();
    }
  } finally {
    await dispose(socket);
  }
}
