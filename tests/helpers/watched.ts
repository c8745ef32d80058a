/**
 * A watch's rows on a pane that shows only what a test writes to it, checked against reading
 * every row from the start on: the reference the wait tests hold {@link WatchedRows} to.
 *
 * @module
 */

import assert from "node:assert/strict";
import { changedRows, type WrittenRow } from "../../src/tools/captured_rows.ts";
import { cellIndex } from "../../src/tools/cell_width.ts";
import { probePane } from "../../src/tools/pane_probe.ts";
import { type RowsRead, WatchedRows } from "../../src/tools/watch_rows.ts";
import { TmuxRunner } from "../../src/tmux/run.ts";
import { testContext } from "./mcp.ts";
import { sh, TestTmux, waitFor } from "./tmux.ts";

/** A test server with the ids of its first session, window and pane. */
export type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

/** A pane that shows what is written to it and nothing else (its terminal raw, no echo). */
export async function quietPane(
  t: TestTmux,
  p: string,
): Promise<{ write(s: string): Promise<void> }> {
  await t.tmux("respawn-pane", "-k", "-t", p, "stty raw -echo; exec cat");
  await t.foreground(p, "cat");
  let step = 0;
  return {
    // Each write ends by setting the pane's title, which no row shows: once tmux has it, it
    // has drawn everything before it.
    async write(s: string) {
      const title = `step ${++step}`;
      await sendBytes(t, p, `${s}\x1b]2;${title}\x07`);
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-t", p, "#{pane_title}")).trim() === title,
        `${title} drawn`,
      );
    },
  };
}

/**
 * Sends `s` to pane `p` as its program's input, byte for byte; returns once tmux has it. Long
 * text goes through a buffer pasted as it is (-r), in one command: as keys (send-keys -H, a
 * byte an argument), ten thousand rows cost tmux seconds of parsing arguments.
 */
export async function sendBytes(t: TestTmux, p: string, s: string): Promise<void> {
  const bytes = new TextEncoder().encode(s);
  if (bytes.length > 4_000) {
    const buffer = `test-input-${crypto.randomUUID()}`;
    await sh("tmux", ["-u", "-L", t.socket, "load-buffer", "-b", buffer, "-"], { stdin: s });
    await t.tmux("paste-buffer", "-r", "-d", "-b", buffer, "-t", p);
    return;
  }
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0"));
  await t.tmux("send-keys", "-t", p, "-H", ...hex);
}

/**
 * A watch's rows on a quiet pane (30 x 8), and the reference they are checked against: every
 * row from the start row on, read whole at each step and compared with the last read, as a
 * watch read them before it read only what may have changed. With `history: false` the
 * history's last rows are not kept as old (see WatchedRows.keepScreen).
 */
export async function withWatched(
  setup: string,
  fn: (t: Server, w: Watched) => Promise<void>,
  options: { skips?: boolean; historyLimit?: number; history?: boolean } = {},
): Promise<void> {
  const t = await TestTmux.start("main", { width: 30, height: 8 });
  const runner = new TmuxRunner();
  const ctx = testContext(runner, t.socket);
  try {
    // Far from the history's limit unless a test asks for one (a pane takes it when it is
    // made): no trims.
    await t.tmux("set-option", "-g", "history-limit", String(options.historyLimit ?? 100_000));
    const p = (await t.tmux("new-window", "-P", "-F", "#{pane_id}", "-t", "main")).trim();
    const tty = await quietPane(t, p);
    await tty.write(setup);
    const start = await probePane(ctx, p);
    const watched = new WatchedRows(ctx, p, start, true);
    const screen = (await t.tmux("capture-pane", "-p", "-J", "-t", p)).split("\n");
    while (screen.length > 0 && screen[screen.length - 1].trim() === "") screen.pop();
    // As a wait keeps them: the history's last rows, old (a taller screen takes them back).
    const old = start.historySize > 0 && options.history !== false
      ? await t.tmux("capture-pane", "-p", "-J", "-t", p, "-S", "-200", "-E", "-1")
      : "";
    watched.keepScreen(screen, old.split("\n"));
    await watched.readBaseline();
    const all = async () => {
      const history = Number(await t.tmux("display-message", "-p", "-t", p, "#{history_size}"));
      const from = start.historySize + start.cursorY - history;
      const out = await t.tmux("capture-pane", "-p", "-J", "-t", p, "-S", String(from));
      const lines = out.split("\n");
      while (lines.length > 0 && lines[lines.length - 1].trim() === "") lines.pop();
      return lines;
    };
    const base = await all();
    let last = base;
    // The screen's rows above the start row, row by row: as they stood at the start (by row
    // from the history's top), and at the last check, with the history's size then.
    const startAbs = start.historySize + start.cursorY;
    const aboveRows = async (history: number) => {
      if (startAbs <= history) return [];
      const out = await t.tmux(
        ...["capture-pane", "-p", "-t", p, "-S", "0", "-E", String(startAbs - history - 1)],
      );
      return out.split("\n").slice(0, startAbs - history).map((r) => r.trimEnd());
    };
    const aboveStart = await aboveRows(start.historySize);
    let aboveLast = aboveStart;
    let lastHistory = start.historySize;
    const cursor = await cellIndex(ctx, start.serverPid, base[0] ?? "", start.cursorX);
    await fn(t, {
      watched,
      write: tty.write,
      async check(read: RowsRead, what: string) {
        // First the rows above the start drawn again in place since the last check, while
        // nothing scrolled (a multi-line progress display; see watch_above.ts).
        const history = Number(
          await t.tmux("display-message", "-p", "-t", p, "#{history_size}"),
        );
        const aboveNow = await aboveRows(history);
        let toldAbove: WrittenRow[] = [];
        if (history === lastHistory && aboveNow.length > 0) {
          const was = aboveNow.map((_, i) => aboveStart[history - start.historySize + i] ?? "");
          toldAbove = changedRows(["", ...was], aboveNow, aboveLast, 0, 1);
        }
        aboveLast = aboveNow;
        lastHistory = history;
        const lines = await all();
        let told: WrittenRow[] = [];
        if (lines.length > 0 && lines.join("\n") !== last.join("\n")) {
          told = changedRows(base, lines, last, cursor);
          last = lines;
        }
        assert.deepEqual(read.rows ?? [], [...toldAbove, ...told], what);
      },
    });
    if (!options.skips) assert.equal(watched.skippedRows, 0);
  } finally {
    await runner.close();
    await t.kill();
  }
}

export interface Watched {
  readonly watched: WatchedRows;
  write(s: string): Promise<void>;
  /** Checks what a read told against the reference, read now. */
  check(read: RowsRead, what: string): Promise<void>;
}
