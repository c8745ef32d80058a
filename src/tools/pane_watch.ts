/**
 * Watching one pane for a wait: what it prints (control mode's `%output`, as it happens),
 * whether its process is still there, and where its output began. `wait_for_text`,
 * `wait_for_idle`, `run_command` and `get_command_result` share it.
 *
 * A watch is event-driven: a control-mode connection delivers `%output` — every byte the pane
 * writes — so a wait wakes within milliseconds of the text appearing. Where control mode is
 * unavailable (no session a control client may attach to, too many clients) it polls the
 * pane's content instead and says so (`transport: "polling"`). Either way only output written
 * after the call began counts; what was already on the screen is reported separately.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { controlFor, ControlUnavailable, execFast } from "../tmux/control.ts";
import type { Watch, WatchBatch } from "../tmux/control_connection.ts";
import { TerminalText } from "../tmux/terminal_text.ts";
import { trimRow } from "../tmux/capture.ts";
import { newGuard, recordFormat } from "../tmux/format.ts";
import type { PaneRow } from "../tmux/snapshot.ts";
import { sameServer, SERVER_IDENTITY_FORMAT } from "../tmux/server_identity.ts";
import {
  GONE,
  learnExitStatus,
  paneEnded,
  type PaneProbe,
  PROBE_FIELDS,
  probeWith,
  serverGone,
  serverOf,
} from "./pane_probe.ts";
import {
  changedRows,
  rowsFrom,
  screenLines,
  trimTrailingBlank,
  type WrittenRow,
  writtenRows,
} from "./captured_rows.ts";
import { cellIndex } from "./cell_width.ts";

/** What a watch reports when asked for the next thing that happened. */
export type WatchEvent =
  /**
   * New output: lines written since the last event (the unfinished last line included). A
   * watch that reads rows also gives each as a {@link WrittenRow}, in the same order.
   */
  | { readonly kind: "lines"; readonly lines: string[]; readonly rows?: readonly WrittenRow[] }
  /** Nothing new for a while: a moment to send progress. */
  | { readonly kind: "tick" }
  /** The pane's process exited (or the pane is gone, or was respawned). */
  | { readonly kind: "died"; readonly probe: PaneProbe }
  /** Its foreground program changed (only for a watch opened with `commands: true`). */
  | { readonly kind: "command"; readonly probe: PaneProbe }
  | { readonly kind: "timeout" }
  | { readonly kind: "cancelled" };

/** How often a polling watch reads the pane. */
const POLL_MS = 100;
/** How often an event-driven watch checks the pane is still alive (tmux sends no event). */
const CHECK_MS = 500;
/** How often, at most, a quiet watch reports a tick. */
const TICK_MS = 1_000;
/** How often, at most, a watch that reads rows reads them while output keeps coming. */
const ROWS_MS = 20;

/**
 * A watch on one pane's new output. Open it before doing what will produce the output
 * (typing a command), so nothing written afterwards is missed.
 */
export class PaneWatch {
  /** The pane watched. */
  readonly paneId: string;
  /** `control` (event-driven) or `polling`. */
  transport: "control" | "polling" = "polling";
  /** The pane at the start. */
  start: PaneProbe = GONE;
  /** The visible screen at the start (when asked for), for "already on screen". */
  screen: string[] = [];

  readonly #ctx: TmuxContext;
  readonly #sessions: string[];
  readonly #text = new TerminalText();
  #watch: Watch | null = null;
  #queue: WatchBatch[] = [];
  #wake: (() => void) | null = null;
  #changed = false;
  #lost = false;
  #diedAfterLines: PaneProbe | null = null;
  #startAbs = 0;
  #startX = 0;
  #lastHistory = 0;
  #lastRegion: string[] = [];
  /** Whether {@link PaneWatch.#lastRegion} is a read of the rows (the baseline or a later one). */
  #lastKnown = false;
  /**
   * The rows from the start on as they stood at the start (read in the same tmux call as the
   * start's probe), so that what was on screen then (below the cursor, or after it on its row)
   * is not taken for new output; null when the pane wrote while that call ran (a hook ran in
   * it) or since: the start row is then cut at the cursor, its cells before it taken as they
   * were.
   */
  #baseline: string[] | null = null;
  #checkAt = 0;
  /**
   * Reports the pane's rows (what it shows), never the `%output` stream: output only wakes the
   * watch, which then reads the rows from the start on. The stream is not the screen: a cursor
   * move, a backspace or a one-character redraw make it say what no row shows, and a line
   * longer than the decoder's limit is cut where the screen has it whole.
   */
  #rows = false;
  /** Output came that the rows have not been read for yet (`#rows`). */
  #dirty = false;
  #readAt = 0;
  #lastWidth = 0;
  /**
   * Rows can no longer be told apart by their number: the width changed (they reflowed) or
   * tmux may have trimmed the history. The watch then reads them again (see #rebaseAt).
   */
  #rebase = false;
  /** The rows reflowed: the start row is lost, the watch starts again at the cursor's row. */
  #reflowed = false;
  #reportCommands = false;
  #command = "";

  private constructor(ctx: TmuxContext, pane: PaneRow) {
    this.#ctx = ctx;
    this.paneId = pane.id;
    this.#sessions = pane.placements.map((p) => p.sessionId);
  }

  /** Subscribes to the pane's output, then reads where its cursor is (and its screen). */
  static async open(
    ctx: TmuxContext,
    pane: PaneRow,
    options: { screen?: boolean; commands?: boolean; rows?: boolean } = {},
  ): Promise<PaneWatch> {
    const watch = new PaneWatch(ctx, pane);
    watch.#reportCommands = options.commands ?? false;
    watch.#rows = options.rows ?? false;
    try {
      await watch.#subscribe(watch.#sessions);
      // One tmux call, one instant: the probe, the screen with wrapped rows joined and row by
      // row, and a second probe that tells whether it was one instant (a hook run after the
      // probe lets the pane write in between).
      const guard = newGuard();
      const { probe, text, later } = await probeWith(
        ctx,
        pane.id,
        [
          ...["capture-pane", "-p", "-J", "-t", pane.id, ";"],
          ...["display-message", "-p", `${guard}S`, ";"],
          ...["capture-pane", "-p", "-N", "-t", pane.id, ";"],
          ...["display-message", "-p", "-t", pane.id, recordFormat(guard, PROBE_FIELDS)],
        ],
        undefined,
        guard,
      );
      if (!probe.exists) {
        throw new ToolFailure(
          `Pane ${pane.id} disappeared.`,
          "list_panes lists the panes that exist.",
        );
      }
      const split = text.indexOf(`${guard}S\n`);
      const joined = split === -1 ? "" : text.slice(0, split);
      const rest = split === -1 ? "" : text.slice(split + guard.length + 2);
      const raw = rest.slice(0, Math.max(0, rest.indexOf(`${guard}R`)));
      watch.start = probe;
      watch.#command = probe.command;
      watch.screen = options.screen ? trimTrailingBlank(joined.split("\n")) : [];
      watch.#startAbs = probe.historySize + probe.cursorY;
      watch.#startX = probe.cursorX;
      watch.#lastHistory = probe.historySize;
      watch.#lastWidth = probe.width;
      // Control watches too: a catch-up read after a lost feed, and a watch that reads rows,
      // compare with it.
      const after = later[0];
      const still = after !== undefined && after.exists &&
        after.historySize === probe.historySize && after.width === probe.width &&
        after.cursorX === probe.cursorX && after.cursorY === probe.cursorY;
      const rows = still && split !== -1
        ? rowsFrom(screenLines(joined), screenLines(raw), probe.cursorY)
        : null;
      if (rows) watch.#keepBaseline(trimTrailingBlank(rows));
      // The pane wrote in between: no baseline (the start row is cut at the cursor). Rows that
      // did not add up: read from the start's row, kept if the pane has not moved since.
      else if (still) await watch.#readBaseline(probe);
      watch.#checkAt = performance.now() + (watch.transport === "control" ? CHECK_MS : POLL_MS);
      return watch;
    } catch (error) {
      watch.close();
      throw error;
    }
  }

  /**
   * Reads the rows from the start on ({@link PaneWatch.#baseline}); kept only when the pane's
   * cursor is where the start's read left it, so nothing written since can pass for what was
   * there before.
   */
  async #readBaseline(start: PaneProbe): Promise<void> {
    const { probe, lines } = await probeWith(this.#ctx, this.paneId, [
      ...["capture-pane", "-p", "-J", "-t", this.paneId, "-S", String(start.cursorY)],
    ], start);
    const still = probe.exists && probe.historySize === start.historySize &&
      probe.cursorX === start.cursorX && probe.cursorY === start.cursorY;
    if (still) this.#keepBaseline(lines);
  }

  #keepBaseline(lines: string[]): void {
    this.#baseline = lines;
    this.#lastRegion = lines;
    this.#lastKnown = true;
  }

  async #subscribe(sessions: readonly string[]): Promise<void> {
    try {
      this.#watch = await controlFor(this.#ctx.runner, this.#ctx.address).watch(
        this.paneId,
        sessions,
        (batch) => {
          this.#queue.push(batch);
          this.#wake?.();
        },
      );
      this.transport = "control";
    } catch (error) {
      if (!(error instanceof ControlUnavailable)) throw error;
      this.#watch = null;
      this.transport = "polling";
    }
  }

  /** Stops the subscription. */
  close(): void {
    this.#watch?.close();
    this.#watch = null;
    this.#wake?.();
  }

  /**
   * Waits for the next event, at most until `deadline` (a `performance.now()` time). Output
   * already received is reported even at the deadline; nothing that asks tmux starts after
   * it. A read that found a change returns at once: the deadline is checked again at the next
   * call, before anything else asks tmux, so a pane that changes faster than it is read cannot
   * keep a wait past its deadline.
   */
  async next(deadline: number): Promise<WatchEvent> {
    const signal = this.#ctx.signal;
    const tickAt = performance.now() + TICK_MS;
    while (true) {
      if (signal.aborted) return { kind: "cancelled" };
      if (this.#queue.length > 0) {
        const lines = this.#drain();
        if (lines.length > 0 && !this.#rows) return { kind: "lines", lines };
      }
      if (this.#diedAfterLines) return await this.#died(this.#diedAfterLines);
      let now = performance.now();
      if (now >= deadline) return { kind: "timeout" };
      if (this.#lost) {
        this.#lost = false;
        const event = await this.#recover();
        if (event) return event;
        now = performance.now();
      }
      if (this.#dirty && this.transport === "control" && now >= this.#readAt) {
        this.#dirty = false;
        const event = await this.#poll();
        this.#readAt = this.#rest(now, ROWS_MS);
        if (event) return event;
        now = performance.now();
      }
      if (this.transport === "polling" && now >= this.#checkAt) {
        const event = await this.#poll();
        this.#checkAt = this.#rest(now, POLL_MS);
        if (event) return event;
      } else if (this.transport === "control" && (this.#changed || now >= this.#checkAt)) {
        this.#changed = false;
        this.#checkAt = now + CHECK_MS;
        const { probe } = await probeWith(this.#ctx, this.paneId, [], this.start);
        if (paneEnded(this.start, probe)) {
          // Output the pane wrote before it ended may still be queued: report it first.
          if (this.#queue.length > 0) {
            this.#diedAfterLines = probe;
            continue;
          }
          return await this.#died(probe);
        }
        if (this.#commandChanged(probe)) return { kind: "command", probe };
      }
      now = performance.now();
      if (now >= deadline) return { kind: "timeout" };
      if (now >= tickAt) return { kind: "tick" };
      const readAt = this.#dirty ? this.#readAt : Infinity;
      await this.#sleep(Math.min(deadline, tickAt, this.#checkAt, readAt) - now, signal);
    }
  }

  /**
   * When the next read may start, after one that started at `began`: `interval` after it,
   * and never sooner than the read took after its end. A read that takes longer than the
   * interval (a loaded tmux, a long capture) leaves tmux as long again for everything else.
   */
  #rest(began: number, interval: number): number {
    const ended = performance.now();
    return ended + Math.max(interval - (ended - began), ended - began);
  }

  /** The death event, with the exit status once tmux knows it (see {@link learnExitStatus}). */
  async #died(probe: PaneProbe): Promise<WatchEvent> {
    return { kind: "died", probe: await learnExitStatus(this.#ctx, this.paneId, probe) };
  }

  #drain(): string[] {
    const lines: string[] = [];
    for (const batch of this.#queue.splice(0)) {
      if (batch.lost) this.#lost = true;
      if (batch.changed) this.#changed = true;
      if (batch.output.length > 0) this.#dirty = this.#rows;
      for (const chunk of batch.output) lines.push(...this.#text.push(chunk));
    }
    // The partial line only when text was added to it: not for escape sequences alone.
    const partial = this.#text.takeWritten() ? this.#text.partial : "";
    return partial === "" ? lines : [...lines, partial];
  }

  /** The control feed was lost: catch up by reading the pane, then subscribe again. */
  async #recover(): Promise<WatchEvent | null> {
    this.#watch?.close();
    this.#watch = null;
    const placements = await execFast(
      this.#ctx.runner,
      this.#ctx.address,
      ["list-panes", "-a", "-F", `${SERVER_IDENTITY_FORMAT} #{pane_id} #{session_id}`],
      { signal: this.#ctx.signal },
    );
    const rows = new TextDecoder().decode(placements.stdout).split("\n")
      .map((l) => l.split(" ")).filter((r) => r.length === 4);
    // The feed is lost when the server went: one answering now may be another, restarted on
    // the same socket (with the same pid too, in a container), whose pane of this id is
    // another pane. Never subscribe to that.
    const was = serverOf(this.start);
    const other = rows.map(([pid, start]) => ({ pid: Number(pid), startTime: Number(start) }))
      .find((server) => !sameServer(server, was));
    if (other) throw serverGone(this.#ctx, this.paneId, was, other);
    const sessions = rows.filter(([, , p]) => p === this.paneId).map(([, , , s]) => s);
    if (sessions.length > 0) await this.#subscribe(sessions);
    else this.transport = "polling";
    return await this.#poll();
  }

  /** Reads everything written since the start by capturing the pane; reports death too. */
  async #poll(): Promise<WatchEvent | null> {
    const { probe, lines, fresh } = await this.region();
    if (fresh !== undefined) {
      if (fresh.length > 0) {
        if (paneEnded(this.start, probe)) this.#diedAfterLines = probe;
        // Rows not seen before: whole.
        const rows = this.#rows
          ? fresh.map((line) => ({ text: trimRow(line), line, from: 0, shown: trimRow(line) }))
          : undefined;
        return { kind: "lines", lines: rows ? rows.map((r) => r.shown) : fresh, rows };
      }
    } else if (this.#rows) {
      if (lines.length > 0 && lines.join("\n") !== this.#lastRegion.join("\n")) {
        const cursor = await this.#cursorIn(lines);
        const rows = changedRows(
          this.#baseline,
          lines,
          this.#lastKnown ? this.#lastRegion : null,
          cursor,
        );
        this.#lastRegion = lines;
        this.#lastKnown = true;
        if (rows.length > 0) {
          if (paneEnded(this.start, probe)) this.#diedAfterLines = probe;
          return { kind: "lines", lines: rows.map((r) => r.shown), rows };
        }
      }
    } else if (lines.length > 0 && lines.join("\n") !== this.#lastRegion.join("\n")) {
      // Every row written since the start.
      this.#lastRegion = lines;
      const written = writtenRows(this.#baseline, lines, await this.#cursorIn(lines));
      if (written.length > 0) {
        if (paneEnded(this.start, probe)) this.#diedAfterLines = probe;
        return { kind: "lines", lines: written };
      }
    }
    if (paneEnded(this.start, probe)) return await this.#died(probe);
    if (this.#commandChanged(probe)) return { kind: "command", probe };
    return null;
  }

  /**
   * Where the start's cursor is on the start row, as an index into the row as it stood at the
   * start (the baseline's), or as it reads now (`lines`) when that is not known: its cells
   * before the cursor are taken as they were. Columns are tmux's (see {@link cellIndex}).
   */
  async #cursorIn(lines: readonly string[]): Promise<number> {
    const row = this.#baseline === null ? lines[0] : this.#baseline[0];
    return await cellIndex(this.#ctx, this.start.serverPid, row ?? "", this.#startX);
  }

  /**
   * Whether the pane's foreground program changed since it was last reported, for a watch that
   * reports that: read from the probes the watch makes anyway (its liveness check), never an
   * extra call.
   */
  #commandChanged(probe: PaneProbe): boolean {
    if (!this.#reportCommands || !probe.exists || probe.command === this.#command) return false;
    this.#command = probe.command;
    return true;
  }

  /**
   * The pane's content from the row its cursor was on at the start to its end, wrapped lines
   * joined, rows whole. `margin` rows before the start are included, for callers that look
   * for their own marker;
   * `margin: "all"` reads the whole history (where the start is no longer known exactly).
   * `ctx` is the call reading it (a later call may read what an earlier one watched).
   */
  async region(
    margin: number | "all" = 0,
    ctx: TmuxContext = this.#ctx,
  ): Promise<{ probe: PaneProbe; lines: string[]; fresh?: string[] }> {
    const { probe: now } = await probeWith(ctx, this.paneId, [], this.start);
    if (!now.exists) return { probe: now, lines: [] };
    // At its limit tmux drops the oldest tenth of the history, then goes on adding rows: the
    // size can come back to or above what it was, and rows moved up by an unknown number.
    const trimZone = now.historyLimit - Math.max(1, Math.floor(now.historyLimit / 10));
    if (
      now.historySize < this.#lastHistory ||
      (now.historySize !== this.#lastHistory && now.historySize >= trimZone)
    ) {
      // Rows moved up by at least the drop seen.
      this.#startAbs = Math.max(
        0,
        this.#startAbs - Math.max(0, this.#lastHistory - now.historySize),
      );
      this.#rebase = true;
    }
    this.#lastHistory = now.historySize;
    if (now.width !== this.#lastWidth) {
      // The rows reflowed: the start's row number, and the baseline by row, no longer hold.
      this.#lastWidth = now.width;
      this.#rebase = true;
      this.#reflowed = true;
    }
    if (this.#rebase && margin === 0) return await this.#rebaseAt(now, ctx);
    const from = margin === "all"
      ? "-"
      : String(Math.max(0, this.#startAbs - margin) - now.historySize);
    const { probe, lines } = await probeWith(ctx, this.paneId, [
      "capture-pane",
      "-p",
      "-J",
      "-t",
      this.paneId,
      "-S",
      from,
    ], this.start);
    return { probe, lines };
  }

  /**
   * Reads the rows again where their numbers no longer hold (a width change, a history trim):
   * from the cursor's row after a width change, else from the start as estimated (never
   * before it: tmux drops at least what the size fell by). Rows not seen in the last read or
   * the baseline are new (a watch that reads rows; for the others any change is output);
   * what the rows show then is the new baseline, kept once the pane did not move between the
   * probe and this read (else read again next time).
   */
  async #rebaseAt(
    now: PaneProbe,
    ctx: TmuxContext,
  ): Promise<{ probe: PaneProbe; lines: string[]; fresh: string[] }> {
    const from = this.#reflowed ? now.cursorY : this.#startAbs - now.historySize;
    const { probe, lines } = await probeWith(ctx, this.paneId, [
      ...["capture-pane", "-p", "-J", "-t", this.paneId, "-S", String(from)],
    ], this.start);
    const seen = new Set([...this.#lastRegion, ...(this.#baseline ?? [])]);
    const changed = lines.join("\n") !== this.#lastRegion.join("\n");
    const fresh = !changed
      ? []
      : this.#rows
      ? lines.filter((line) => trimRow(line) !== "" && !seen.has(line))
      : lines;
    this.#lastRegion = lines;
    this.#lastKnown = true;
    const still = probe.exists && probe.historySize === now.historySize &&
      probe.cursorX === now.cursorX && probe.cursorY === now.cursorY && probe.width === now.width;
    if (still) {
      this.#rebase = false;
      if (this.#reflowed) {
        this.#reflowed = false;
        this.#startAbs = now.historySize + now.cursorY;
        this.#startX = now.cursorX;
      }
      this.#baseline = lines;
    }
    return { probe, lines, fresh };
  }

  /**
   * The last lines of the pane's screen; what the stream last showed when the pane is gone.
   * Each without its trailing blanks: `-J` keeps the blanks a program wrote (a full-screen
   * program clears its rows with them), which would otherwise be most of a tail.
   */
  async tail(maxLines: number): Promise<string[]> {
    const { probe, lines } = await probeWith(this.#ctx, this.paneId, [
      "capture-pane",
      "-p",
      "-J",
      "-t",
      this.paneId,
    ], this.start);
    const recent = probe.exists && lines.length > 0 ? lines : this.#text.recent();
    return trimTrailingBlank((recent.length > 0 ? recent : this.#lastRegion).map(trimRow))
      .slice(-maxLines);
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done, { once: true });
      this.#wake = done;
    });
  }
}
