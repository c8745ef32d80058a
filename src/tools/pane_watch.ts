/**
 * Watching one pane for a wait: what it prints (control mode's `%output`, as it happens),
 * whether its process is still there, and where its output began. `wait_for_text`,
 * `wait_for_idle`, `run_command` and `get_command_result` share it.
 *
 * A watch is event-driven: a control-mode connection delivers `%output` — every byte the pane
 * writes — so a wait wakes within milliseconds of the text appearing. Where control mode is
 * unavailable (no session a control client may attach to, too many clients) it polls the
 * pane's content instead and says so (`transport: "polling"`). Either way only output written
 * after the call began counts; what was already on the screen is reported separately. What of
 * the pane's rows is read, and what of them is new, is watch_rows.ts's.
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
import { rowsFrom, screenLines, trimTrailingBlank } from "./captured_rows.ts";
import { WatchedRows } from "./watch_rows.ts";
import { ReadPace } from "./read_pace.ts";
import { Waker } from "./waker.ts";
import { stalled, type WatchEvent } from "./watch_event.ts";
import type { TmuxError } from "../tmux/tmux_error.ts";

/** How often a polling watch reads the pane. */
const POLL_MS = 100;
/**
 * The history's last rows a watch that reads rows keeps at its start as old (see
 * WatchedRows.keepScreen): a taller screen takes back as many as it grew by (a terminal
 * maximised), these at most.
 */
const HISTORY_KEPT = 200;
/** How often an event-driven watch checks the pane is still alive (tmux sends no event). */
const CHECK_MS = 500;
/** How often, at most, a quiet watch reports a tick. */
const TICK_MS = 1_000;
/** How often, at most, a watch that reads rows reads them while output keeps coming. */
const ROWS_MS = 20;
/** How seldom, at least, rows are read when output keeps coming for long (read_pace.ts). */
const ROWS_LONGEST_MS = 160;
/**
 * Reads of the rows that may follow one another after a quiet spell (read_pace.ts): the start's
 * catch-up, then the output awaited; run_command's new prompt, typed line and end marker.
 */
const ROWS_BURST = 3;
/**
 * The most `%output` bytes a watch that reports the stream keeps unreported. A pane may write
 * faster than its wait takes the output (a `cat` of a large file while the wait reads the
 * pane): past this, what waits is given up and the pane's rows are read instead, as after the
 * subscription was made, so what a watch holds does not grow with what the pane writes.
 */
export const WATCH_QUEUE_BYTES = 4 * 1024 * 1024;

/**
 * What a screen shows, to tell it changed: its rows as `capture-pane -p -J` has them, and where
 * its cursor is.
 */
function shownKey(probe: PaneProbe, screen: string): string {
  const rows = trimTrailingBlank(screenLines(screen).map(trimRow));
  return `${probe.cursorX},${probe.cursorY}\n${rows.join("\n")}`;
}

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
  #text = new TerminalText();
  #watch: Watch | null = null;
  /** Batches heard and not yet taken, each with when it came (`performance.now()`). */
  #queue: (WatchBatch & { readonly at: number })[] = [];
  /** The `%output` bytes in {@link PaneWatch.#queue}. */
  #queuedBytes = 0;
  /** The `%output` bytes heard since the watch opened. */
  #heardBytes = 0;
  /**
   * The `%output` bytes heard when the last read of the rows that found the pane began: the
   * rows it read hold the output until then (see {@link PaneWatch.tail}).
   */
  #readBytes = 0;
  /** Ends the watch's sleep when output comes, also output that came while it was awake. */
  readonly #waker = new Waker();
  #changed = false;
  #lost = false;
  /** Set once its feed was cut from outside (see {@link cut}). */
  #cut = false;
  /** Set once its feed was given up on this server's own account (see {@link unbroken}). */
  #gapped = false;
  #diedAfterLines: PaneProbe | null = null;
  /** The pane's rows from the start row on, as the watch last read them. */
  #read: WatchedRows | null = null;
  #checkAt = 0;
  /** When a polling watch that reports changes reads the screen next (see #readShown). */
  #shownAt = 0;
  /** A call tmux did not answer in time, not yet read past (see {@link PaneWatch.next}). */
  #stalled: TmuxError | null = null;
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
  /** When the rows may be read again while output keeps coming (see read_pace.ts). */
  readonly #readPace = new ReadPace(ROWS_MS, ROWS_BURST, ROWS_LONGEST_MS);
  #reportCommands = false;
  #command = "";
  /**
   * Reports a screen changed by output with no text (see {@link WatchEvent}): the stream's text
   * is not all the screen shows. Only output with no text has the screen read (paced as the
   * rows are): text is news as it is, and a title or a cursor shown leave the screen as it was.
   */
  #reportChanges = false;
  /** The screen (and the cursor) as last read for `#reportChanges`. */
  #shown = "";
  /** Output with no text came that the screen has not been read for yet (`#reportChanges`). */
  #unshown = false;
  /**
   * Output cleared cells in a background colour (`#reportChanges`; see TerminalText's
   * takePainted): a change no read of the screen's text shows, reported as it is.
   */
  #painted = false;

  private constructor(ctx: TmuxContext, pane: PaneRow) {
    this.#ctx = ctx;
    this.paneId = pane.id;
    this.#sessions = pane.placements.map((p) => p.sessionId);
  }

  /**
   * Reads where the pane's cursor is (and its screen), then subscribes to its output, then
   * reads what it wrote meanwhile at the first {@link next}. In that order because the read is
   * the call's start: subscribing may take a while (a new control client, on an SSH host a new
   * session whose remote shell reads its start-up files first, a second or more), and output
   * written in that while came after the call began: it counts as new, never as already there.
   */
  static async open(
    ctx: TmuxContext,
    pane: PaneRow,
    options: { screen?: boolean; commands?: boolean; rows?: boolean; changes?: boolean } = {},
  ): Promise<PaneWatch> {
    const watch = new PaneWatch(ctx, pane);
    watch.#reportCommands = options.commands ?? false;
    watch.#reportChanges = options.changes ?? false;
    watch.#rows = options.rows ?? false;
    try {
      // One tmux call, one instant: the probe, the screen with wrapped rows joined and row by
      // row, and a second probe that tells whether it was one instant (a hook run after the
      // probe lets the pane write in between).
      const guard = newGuard();
      const kept = [
        ...["capture-pane", "-p", "-J", "-t", pane.id],
        ...["-S", `-${HISTORY_KEPT}`, "-E", "-1", ";"],
        // On the alternate screen, the normal screen tmux saved (nothing on the normal one):
        // leaving the alternate screen puts it back, and none of it is new (see keepSaved).
        ...["display-message", "-p", `${guard}V`, ";"],
        ...["capture-pane", "-a", "-q", "-p", "-J", "-t", pane.id, ";"],
        ...["display-message", "-p", `${guard}W`, ";"],
        ...["capture-pane", "-a", "-q", "-p", "-N", "-t", pane.id, ";"],
      ];
      const { probe, text, later } = await probeWith(
        ctx,
        pane.id,
        [
          ...["capture-pane", "-p", "-J", "-t", pane.id, ";"],
          ...["display-message", "-p", `${guard}S`, ";"],
          ...["capture-pane", "-p", "-N", "-t", pane.id, ";"],
          // A watch that reads rows: the history's last rows too (see HISTORY_KEPT).
          ...watch.#rows ? [...["display-message", "-p", `${guard}P`, ";"], ...kept] : [],
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
      const end = Math.max(0, rest.indexOf(`${guard}R`));
      const history = rest.indexOf(`${guard}P\n`);
      const raw = rest.slice(0, history === -1 ? end : history);
      const savedAt = rest.indexOf(`${guard}V\n`);
      const savedRaw = rest.indexOf(`${guard}W\n`);
      const old = history === -1 ? "" : rest.slice(
        history + guard.length + 2,
        savedAt === -1 ? end : savedAt,
      );
      const saved = savedAt === -1 || savedRaw < savedAt ? null : {
        joined: rest.slice(savedAt + guard.length + 2, savedRaw),
        raw: rest.slice(savedRaw + guard.length + 2, end),
      };
      watch.start = probe;
      watch.#command = probe.command;
      watch.screen = options.screen ? trimTrailingBlank(joined.split("\n")) : [];
      watch.#shown = shownKey(probe, joined);
      const read = new WatchedRows(ctx, pane.id, probe, watch.#rows);
      watch.#read = read;
      // Control watches too: a catch-up read after a lost feed, and a watch that reads rows,
      // compare with it.
      const after = later[0];
      const still = after !== undefined && after.exists &&
        after.historySize === probe.historySize && after.width === probe.width &&
        after.cursorX === probe.cursorX && after.cursorY === probe.cursorY;
      // With the history's last rows (none when it holds none: -E -1 is then the screen's first).
      const last = history !== -1 && probe.historySize > 0 ? screenLines(old) : [];
      if (split !== -1) read.keepScreen(trimTrailingBlank(screenLines(joined)), last);
      if (saved && probe.alternateScreen) {
        read.keepSaved(screenLines(saved.joined), screenLines(saved.raw));
      }
      // Under a scroll region below a header or above a status line, the rows from the start
      // on are not the screen's from its row on: read apart (the fixed rows too, moved or not).
      const rows = still && split !== -1 && !read.regionRows
        ? rowsFrom(screenLines(joined), screenLines(raw), probe.cursorY)
        : null;
      // With the screen's rows above the start row: read again at each read (watch_above.ts).
      if (rows) {
        read.keepBaseline(trimTrailingBlank(rows), screenLines(raw).slice(0, probe.cursorY));
      } // The pane wrote in between: no baseline (the start row is cut at the cursor). Rows that
      // did not add up: read from the start's row, kept if the pane has not moved since.
      else if (still || read.regionRows) await read.readBaseline();
      await watch.#subscribe(watch.#sessions);
      // What the pane wrote while the subscription was made: read at once, as after output
      // (a polling watch reads from the start anyway). What comes after the subscription may
      // then be reported twice by a watch of the stream, never missed.
      watch.#dirty = watch.transport === "control";
      watch.#checkAt = performance.now() + (watch.transport === "control" ? CHECK_MS : POLL_MS);
      return watch;
    } catch (error) {
      watch.close();
      throw error;
    }
  }

  async #subscribe(sessions: readonly string[]): Promise<void> {
    try {
      this.#watch = await controlFor(this.#ctx.runner, this.#ctx.address).watch(
        this.paneId,
        sessions,
        (batch) => this.#hear(batch),
      );
      this.transport = "control";
    } catch (error) {
      if (!(error instanceof ControlUnavailable)) throw error;
      this.#watch = null;
      this.transport = "polling";
    }
  }

  /**
   * Takes a batch from the feed. A watch that reads rows reports none of the stream, so it is
   * fed at once to the decoder (which keeps only the last lines, for a tail once the pane is
   * gone) and only marks the rows unread; a watch that reports the stream queues it until its
   * wait takes it, up to {@link WATCH_QUEUE_BYTES}.
   */
  #hear(batch: WatchBatch): void {
    if (batch.lost) {
      if (batch.left) this.#gapped = true;
      else this.#cut = true;
    }
    let bytes = 0;
    for (const chunk of batch.output) bytes += chunk.length;
    this.#heardBytes += bytes;
    if (this.#rows) {
      const at = performance.now();
      for (const chunk of batch.output) this.#text.feed(chunk, at);
      // Never cleared here: a read that runs now may have begun before this output.
      if (batch.output.length > 0) this.#dirty = true;
      if (batch.changed || batch.lost) {
        this.#queue.push({ ...batch, output: [], at: performance.now() });
      }
    } else {
      this.#queue.push({ ...batch, at: performance.now() });
      this.#queuedBytes += bytes;
      if (this.#queuedBytes > WATCH_QUEUE_BYTES) this.#giveUpQueue();
    }
    this.#waker.wake();
  }

  /**
   * Gives up the queued output of a watch that reports the stream: what it said of the pane is
   * kept (changed, lost), and a read of the rows is owed, which reports what they show. The
   * decoder starts again, as the stream after the gap does not go on from its partial line.
   */
  #giveUpQueue(): void {
    if (this.tap) {
      // Decoded for the tap, and dropped: the decoder goes on from its partial line.
      this.tap(this.#drain());
    } else {
      this.#gapped = true;
      for (const batch of this.#queue) {
        if (batch.lost) this.#lost = true;
        if (batch.changed) this.#changed = true;
      }
      this.#queue = [];
      this.#queuedBytes = 0;
      this.#text = new TerminalText();
    }
    this.#dirty = true;
  }

  /**
   * Whether it has heard the pane's every `%output` since it opened: control mode, its feed
   * never lost, nothing given up unheard.
   */
  get unbroken(): boolean {
    return !this.#cut && !this.#gapped && this.transport === "control";
  }

  /**
   * Whether its feed was cut from outside since it opened (its tmux client detached or killed,
   * the connection lost: something a program in a pane can do), not given up on this server's
   * own account (see WatchBatch.left).
   */
  get cut(): boolean {
    return this.#cut;
  }

  /** The `%output` bytes received and not yet taken (see {@link WATCH_QUEUE_BYTES}). */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** The `%output` bytes heard since the watch opened, taken or not. */
  get heardBytes(): number {
    return this.#heardBytes;
  }

  /**
   * Whether the watch knows of all the output the pane wrote until now: it hears it on a
   * control feed that was not lost, and has received none it has not reported (or, reading
   * rows, not read). A wait whose read was dropped at its deadline can still tell a quiet.
   */
  get caughtUp(): boolean {
    return this.transport === "control" && !this.#lost && !this.#dirty && !this.#unshown &&
      this.#queue.every((batch) => !batch.lost && batch.output.length === 0);
  }

  /** Stops the subscription. */
  close(): void {
    this.#watch?.close();
    this.#watch = null;
    this.#waker.wake();
  }

  /**
   * Waits for the next event, at most until `deadline` (a `performance.now()` time). Output
   * already received is reported even at the deadline; nothing that asks tmux starts after
   * it. A read that found a change returns at once: the deadline is checked again at the next
   * call, before anything else asks tmux, so a pane that changes faster than it is read cannot
   * keep a wait past its deadline.
   *
   * A call tmux did not answer in time ({@link stalled}: a stopped or overloaded server) does
   * not end the wait: it is a quiet while (a tick, after a moment's rest, so that a call that
   * fails fast cannot spin), and the next read tmux answers catches up as after a lost feed
   * (a read that stalled keeps nothing it did not report). Reached before that read, the
   * deadline throws the stall: nothing could be read since, and a timeout would say there was
   * nothing to read.
   */
  async next(deadline: number): Promise<WatchEvent> {
    try {
      return await this.#next(deadline);
    } catch (error) {
      if (!stalled(error, this.#ctx.signal)) throw error;
      this.#stalled = error;
      this.#lost = true;
      const now = performance.now();
      if (now >= deadline) throw error;
      await this.#waker.sleep(Math.min(POLL_MS, deadline - now), this.#ctx.signal);
      return { kind: "tick" };
    }
  }

  /** The event at the deadline: a timeout, or the stall not read past (see {@link next}). */
  #timeout(): WatchEvent {
    if (this.#stalled) throw this.#stalled;
    return { kind: "timeout" };
  }

  async #next(deadline: number): Promise<WatchEvent> {
    const signal = this.#ctx.signal;
    const tickAt = performance.now() + TICK_MS;
    while (true) {
      // Whatever a wake announces is looked at below; one that comes from here on, while the
      // watch awaits tmux, ends the sleep at the end of this turn before it begins.
      this.#waker.looking();
      if (signal.aborted) return { kind: "cancelled" };
      if (this.#queue.length > 0) {
        const lines = this.#drain();
        if (lines.length > 0 && !this.#rows) return { kind: "lines", lines };
        if (this.#painted) {
          this.#painted = false;
          return { kind: "changed" };
        }
      }
      if (this.#diedAfterLines) return await this.#died(this.#diedAfterLines);
      let now = performance.now();
      if (now >= deadline) return this.#timeout();
      if (this.#lost) {
        this.#lost = false;
        const event = await this.#recover();
        if (event) return event;
        now = performance.now();
      }
      if (this.#dirty && this.transport === "control" && now >= this.#readAt) {
        this.#dirty = false;
        const event = await this.#poll();
        this.#readAt = this.#readPace.after(now, performance.now());
        if (event) return event;
        now = performance.now();
      }
      if (this.#unshown && this.transport === "control" && now >= this.#readAt) {
        const event = await this.#readShown();
        this.#unshown = false;
        this.#readAt = this.#readPace.after(now, performance.now());
        if (event) return event;
        now = performance.now();
      }
      if (this.transport === "polling" && now >= this.#checkAt) {
        // The rows read tell text written, not a screen cleared or redrawn as it was before:
        // the screen is read too (a call more each time, for a watch that asks for it).
        // (At most every CHECK_MS: a poll of a quiet pane would cost a read more each time.)
        const shownDue = this.#reportChanges && now >= this.#shownAt;
        if (shownDue) this.#shownAt = now + CHECK_MS;
        const event = await this.#poll() ?? (shownDue ? await this.#readShown() : null);
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
      if (now >= deadline) return this.#timeout();
      if (now >= tickAt) return { kind: "tick" };
      const readAt = this.#dirty || this.#unshown ? this.#readAt : Infinity;
      await this.#waker.sleep(Math.min(deadline, tickAt, this.#checkAt, readAt) - now, signal);
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

  /**
   * The death event, with the exit status once tmux knows it (see {@link learnExitStatus}).
   * The pane's end ends the wait, and its status is the outcome: read as a one-off call's
   * (the pacing of a {@link TmuxContext.paced} watch ends), never dropped at the deadline.
   */
  async #died(probe: PaneProbe): Promise<WatchEvent> {
    this.#ctx.paceOver();
    return { kind: "died", probe: await learnExitStatus(this.#ctx, this.paneId, probe) };
  }

  /**
   * Takes the output received: the lines it completed and the partial line, for a watch that
   * reports the stream. One that reads rows has none queued: it fed the decoder as the output
   * came (see #hear), and reports the rows.
   */
  #drain(): string[] {
    const lines: string[] = [];
    const heard = this.#queuedBytes > 0;
    this.#queuedBytes = 0;
    for (const batch of this.#queue.splice(0)) {
      if (batch.lost) this.#lost = true;
      if (batch.changed) this.#changed = true;
      // When it came, for a string left open (see TerminalText.push): tmux times one out from
      // when it read it, not from when a busy wait took it. (A watch that reads rows queues
      // no output: see #hear.)
      for (const chunk of batch.output) lines.push(...this.#text.push(chunk, batch.at));
    }
    if (this.#rows) return lines;
    // The partial line only when text was added to it: not for escape sequences alone.
    const partial = this.#text.takeWritten() ? this.#text.partial : "";
    const text = partial === "" ? lines : [...lines, partial];
    // Output with no text may have changed the screen all the same (see #reportChanges); cells
    // cleared in a colour did, though the screen's text reads the same.
    // (Taken with text too: the text is news of its own.)
    const painted = this.#text.takePainted();
    if (this.#reportChanges && heard && text.length === 0) {
      if (painted) this.#painted = true;
      else this.#unshown = true;
    }
    return text;
  }

  /**
   * The lines heard and not reported yet, taken now without asking tmux anything (none for a
   * watch that reads rows). What else the output said (a change, a loss) waits for
   * {@link next}.
   */
  takeLines(): string[] {
    return this.#rows || this.#queue.length === 0 ? [] : this.#drain();
  }

  /**
   * {@link takeLines}, once everything tmux had read from the pane when asked has come (see
   * Watch.sync): rows read before hold no output the lines lack. A watch that polls has none.
   */
  async heardAll(signal?: AbortSignal): Promise<string[]> {
    // The reader's signal, not the watch's call's: a watch handed on outlives its call
    // (run_command's, to the job's follower). The sync is bounded by its own timeout too.
    await this.#watch?.sync(signal);
    return this.takeLines();
  }

  /**
   * Hears the lines of the output a watch that reports the stream gives up unreported (past
   * {@link WATCH_QUEUE_BYTES}), decoded: a job's end markers count wherever they came
   * (job_state.ts, hearEnds).
   */
  tap: ((lines: readonly string[]) => void) | null = null;

  /**
   * Reads the screen (and where the cursor is) for a watch that reports changes: a `changed`
   * event when it is not as it was at the last read (or the start). A pane gone is left to the
   * check of its life that follows.
   */
  async #readShown(): Promise<WatchEvent | null> {
    const { probe, text } = await probeWith(
      this.#ctx,
      this.paneId,
      ["capture-pane", "-p", "-J", "-t", this.paneId],
      this.start,
    );
    if (paneEnded(this.start, probe)) {
      this.#changed = true;
      return null;
    }
    const shown = shownKey(probe, text);
    if (shown === this.#shown) return null;
    this.#shown = shown;
    return { kind: "changed" };
  }

  /** The control feed was lost: catch up by reading the pane, then subscribe again. */
  async #recover(): Promise<WatchEvent | null> {
    // Subscribed again, after a loss (told as cut or given up by its batch) or a stall.
    this.#gapped = true;
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
    const event = await this.#poll();
    // Read since the last call tmux did not answer in time (see next): caught up.
    this.#stalled = null;
    return event;
  }

  /**
   * Reads what the pane wrote since the last read by capturing the rows that may have changed
   * (see watch_rows.ts); reports death too.
   */
  async #poll(): Promise<WatchEvent | null> {
    const heard = this.#heardBytes;
    const { probe, lines, rows, again } = await this.#read!.read();
    if (probe.exists && !again) this.#readBytes = heard;
    // No read could be made (the pane kept scrolling under it): the output is still unread.
    // (A watch of the stream hears what comes next on the stream: its reads only catch up.)
    if (again && this.#rows && this.transport === "control") this.#dirty = true;
    if (lines.length > 0) {
      if (paneEnded(this.start, probe)) this.#diedAfterLines = probe;
      return { kind: "lines", lines, rows, fromRows: true };
    }
    if (paneEnded(this.start, probe)) return await this.#died(probe);
    if (this.#commandChanged(probe)) return { kind: "command", probe };
    return null;
  }

  /** Rows written during the watch that were never read: more than a read takes came at once. */
  get skippedRows(): number {
    return this.#read?.skippedRows ?? 0;
  }

  /** The pane's history limit when rows may have moved past the watch unread (see watch_rows.ts). */
  get movedUnseen(): number | null {
    return this.#read?.movedUnseen ?? null;
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
   * The last lines of the pane: its screen while it is there, blank too (never the stream: it
   * holds what no row shows, a DCS's data, text a clear wiped). Once the pane is gone, the rows
   * the watch read last, when no output came after that read began; else what the stream last
   * showed, and `stream` says so (the rows when the stream holds nothing). Each without its
   * trailing blanks: `-J` keeps the blanks a program wrote (a full-screen program clears its
   * rows with them), which would otherwise be most of a tail.
   */
  async tail(maxLines: number): Promise<{ lines: string[]; stream: boolean }> {
    const { probe, lines } = await probeWith(this.#ctx, this.paneId, [
      "capture-pane",
      "-p",
      "-J",
      "-t",
      this.paneId,
    ], this.start);
    const last = this.#read?.last ?? [];
    const read = last.length > 0 && this.#readBytes === this.#heardBytes;
    const text = probe.exists || read ? [] : this.#text.recent();
    const recent = probe.exists ? lines : text.length > 0 ? text : last;
    return {
      lines: trimTrailingBlank(recent.map(trimRow)).slice(-maxLines),
      stream: text.length > 0,
    };
  }
}
