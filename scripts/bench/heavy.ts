/**
 * The heavy rows' section: rows whose cells print the most bytes tmux keeps in one (a letter
 * and ten combining marks, 21 bytes), so that what a read holds is set by what a pane's program
 * prints rather than by its row count. Each reader runs on a fresh server, and its peak RSS over
 * its RSS once idle and ready is what it held to answer.
 *
 * @module
 */

import { StdioServer } from "../../tests/helpers/stdio.ts";
import { dispose, started, tmux } from "./fixture.ts";
import { call, cmd, env, peakRss, readyIdleRss, startArgs } from "./server.ts";
import { out } from "./table.ts";

/** What each reader held: its peak RSS over its idle RSS, and what it printed and answered. */
export const heavy: { call: string; idleRssMb: number; riseMb: number; ms: number }[] = [];

/** The pane's width, and its rows of `HEAVY_COLUMNS - 1` heavy cells (about 25 MB). */
export const HEAVY_COLUMNS = 2_000;
export const HEAVY_ROWS = 600;
/** A cell of the most bytes tmux keeps in one. */
const CELL = `e${"\u0301".repeat(10)}`;

/** The bytes the heavy output prints (its rows, then a last line `END-OF-HEAVY`). */
export function heavyBytes(): number {
  return new TextEncoder().encode(heavyText()).length;
}

function heavyText(): string {
  const row = CELL.repeat(HEAVY_COLUMNS - 1);
  return `${Array.from({ length: HEAVY_ROWS }, () => row).join("\n")}\nEND-OF-HEAVY\n`;
}

/** Each reader on a fresh server over output of heavy rows; see the module note. */
export async function benchHeavy(): Promise<void> {
  const socket = `tmux-mcp-bench-${crypto.randomUUID().slice(0, 8)}`;
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-bench-heavy-" });
  await tmux(socket, "-f", "/dev/null", "start-server", ";", "set", "-g", "exit-empty", "off");
  const [pid, socketPath] = (await tmux(socket, "display-message", "-p", "#{pid}\t#{socket_path}"))
    .trim().split("\t");
  started.set(socket, { pid: Number(pid) || 0, socketPath: socketPath ?? "" });
  try {
    const file = `${dir}/heavy.txt`;
    await Deno.writeTextFile(file, heavyText());
    await tmux(socket, "set", "-g", "history-limit", String(HEAVY_ROWS * 2));
    await tmux(socket, "set", "-g", "default-command", "/bin/sh");
    await tmux(socket, "new-session", "-d", "-x", String(HEAVY_COLUMNS), "-y", "50");
    /** A new pane running a shell, and its tty. */
    const pane = async () =>
      (await tmux(socket, "new-window", "-d", "-P", "-F", "#{pane_id}")).trim();
    /** Types `cat FILE` into `id`; resolves once its last line is on the screen. */
    const print = async (id: string) => {
      await tmux(socket, "send-keys", "-t", id, "-l", `cat '${file}'`);
      await tmux(socket, "send-keys", "-t", id, "Enter");
      const until = Date.now() + 300_000;
      while (!(await tmux(socket, "capture-pane", "-p", "-t", id)).includes("\nEND-OF-HEAVY")) {
        if (Date.now() > until) throw new Error("the heavy output never ended");
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const printed = await pane();
    await print(printed);
    await tmux(socket, "load-buffer", "-b", "heavy", file);

    /**
     * Runs `work` on a fresh server, after `prepare` (whose time is not counted); records what
     * the server held, and how long `work` took.
     */
    const measure = async <T>(
      name: string,
      work: (server: StdioServer, prepared: T) => Promise<unknown>,
      prepare: (server: StdioServer) => Promise<T> = () => Promise.resolve(undefined as T),
    ) => {
      const server = new StdioServer(cmd, [...startArgs, "--socket", socket], env);
      try {
        await server.initialize();
        const idleRssMb = await readyIdleRss(server);
        const prepared = await prepare(server);
        const t0 = performance.now();
        await work(server, prepared);
        const ms = performance.now() - t0;
        const riseMb = peakRss(server.child.pid) - idleRssMb;
        heavy.push({ call: name, idleRssMb, riseMb, ms });
        out(
          `    1  ${name}: peak RSS ${riseMb.toFixed(1)} MB over ${idleRssMb.toFixed(1)} MB idle`,
        );
      } finally {
        await server.closeStdin();
      }
    };
    const cursorOf = async (server: StdioServer, id: string) =>
      (await call(server, "capture_since", { paneId: id, maxLines: 1 })).structuredContent!
        .cursor as string;

    await measure(
      "capture_pane maxLines 10000",
      (s) => call(s, "capture_pane", { paneId: printed, start: -100_000, maxLines: 10_000 }),
    );
    await measure("capture_pane maxLines 10000, joinWrapped", (s) =>
      call(s, "capture_pane", {
        paneId: printed,
        start: -100_000,
        maxLines: 10_000,
        joinWrapped: true,
      }));
    await measure(
      "search_panes, all history",
      (s) => call(s, "search_panes", { pattern: "END-OF-HEAVY", scrollbackLines: 100_000 }),
    );
    await measure(
      "show_buffer of it as a paste buffer",
      (s) => call(s, "show_buffer", { name: "heavy" }),
    );
    /** A new pane, a cursor taken on it, then the output printed there. */
    const printedSince = async (s: StdioServer) => {
      const id = await pane();
      const cursor = await cursorOf(s, id);
      await print(id);
      return { id, cursor };
    };
    await measure(
      "capture_since a cursor taken before it",
      (s, { id, cursor }) => call(s, "capture_since", { paneId: id, cursor, maxLines: 10_000 }),
      printedSince,
    );
    await measure(
      "wait_for_text since a cursor taken before it",
      (s, { id, cursor }) =>
        call(s, "wait_for_text", {
          paneId: id,
          patterns: ["END-OF-HEAVY"],
          since: cursor,
          timeoutMs: 60_000,
        }),
      printedSince,
    );
    // These two take as long as tmux takes to print it.
    await measure("wait_for_text watching it printed", async (s) => {
      const id = await pane();
      const waiting = call(s, "wait_for_text", {
        paneId: id,
        patterns: ["END-OF-HEAVY"],
        timeoutMs: 300_000,
      });
      await new Promise((r) => setTimeout(r, 500));
      await print(id);
      return await waiting;
    });
    await measure("run_command printing it", async (s) =>
      call(s, "run_command", {
        paneId: await pane(),
        command: `cat '${file}'`,
        timeoutMs: 300_000,
      }));
  } finally {
    await dispose(socket);
    await Deno.remove(dir, { recursive: true });
  }
}
