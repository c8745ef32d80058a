/**
 * The deep history's section: a small answer read from one pane of {@link DEEP_ROWS} rows by a
 * fresh server, its time beside the whole history printed by tmux, and the peak RSS it adds.
 *
 * @module
 */

import { StdioServer } from "../../tests/helpers/stdio.ts";
import { dispose, started, tmux } from "./fixture.ts";
import { call, cmd, env, peakRss, readyIdleRss, startArgs } from "./server.ts";
import { out, record } from "./table.ts";
import { time } from "./timing.ts";

/** Peak RSS a call pattern adds to a fresh server, over its RSS once idle and ready. */
export const deep: { history: number; call: string; idleRssMb: number; riseMb: number }[] = [];

/** Rows of history in the deep pane of {@link benchDeep}. */
const DEEP_ROWS = 190_000;
/** Calls per deep figure (each reads or counts the whole history inside tmux). */
export const DEEP_RUNS = 10;

/**
 * A small answer from a deep history: one pane with {@link DEEP_ROWS} rows of history, read by
 * a fresh server (so its peak RSS is this work's alone). The tmux floor is the whole history
 * printed, which is what a reader must otherwise take in to count what it left out.
 */
export async function benchDeep(): Promise<void> {
  const socket = `tmux-mcp-bench-${crypto.randomUUID().slice(0, 8)}`;
  await tmux(socket, "-f", "/dev/null", "start-server", ";", "set", "-g", "exit-empty", "off");
  const [pid, socketPath] = (await tmux(socket, "display-message", "-p", "#{pid}\t#{socket_path}"))
    .trim().split("\t");
  started.set(socket, { pid: Number(pid) || 0, socketPath: socketPath ?? "" });
  try {
    await tmux(socket, "set", "-g", "history-limit", String(DEEP_ROWS + 10_000));
    const [pane, tty] = (await tmux(
      socket,
      ...["new-session", "-d", "-x", "200", "-y", "50", "-P", "-F", "#{pane_id} #{pane_tty}"],
      "exec cat",
    )).trim().split(" ");
    const line = (k: number) => `deep history row ${k} ${"0123456789".repeat(8)}`;
    const chunk = 10_000;
    for (let k = 0; k < DEEP_ROWS + 50; k += chunk) {
      const rows = Array.from({ length: chunk }, (_, i) => line(k + i));
      await Deno.writeTextFile(tty, `${rows.join("\r\n")}\r\n`, { append: true });
    }
    const until = Date.now() + 120_000;
    while (
      Number(await tmux(socket, "display-message", "-p", "-t", pane, "#{history_size}")) < DEEP_ROWS
    ) {
      if (Date.now() > until) throw new Error("the deep pane never filled");
      await new Promise((r) => setTimeout(r, 200));
    }
    const calls: [string, Record<string, unknown>, string[]][] = [
      ["capture_pane maxLines 10 of the whole history", { start: -1_000_000, maxLines: 10 }, []],
      ["capture_pane maxLines 10, joinWrapped", {
        start: -1_000_000,
        maxLines: 10,
        joinWrapped: true,
      }, ["-J"]],
    ];
    for (const [name, args, flags] of calls) {
      const server = new StdioServer(cmd, [...startArgs, "--socket", socket], env);
      try {
        await server.initialize();
        const idleRssMb = await readyIdleRss(server);
        const samples = await time(
          () => call(server, "capture_pane", { paneId: pane, ...args }),
          DEEP_RUNS,
        );
        const riseMb = peakRss(server.child.pid) - idleRssMb;
        const floor = await time(
          () => tmux(socket, "capture-pane", "-p", "-t", pane, "-S", "-", ...flags),
          DEEP_RUNS,
        );
        record(1, `${name} (${DEEP_ROWS} rows)`, samples, floor);
        deep.push({ history: DEEP_ROWS, call: name, idleRssMb, riseMb });
        out(
          `    1  ${name}: peak RSS ${riseMb.toFixed(1)} MB over ${idleRssMb.toFixed(1)} MB idle`,
        );
      } finally {
        await server.closeStdin();
      }
    }
  } finally {
    await dispose(socket);
  }
}
