/**
 * Waiting on panes: `wait_for_text` (toolset inspect), and the pane watch `run_command` uses
 * to learn when its command ended.
 *
 * A watch is event-driven: a control-mode connection delivers `%output` — every byte the pane
 * writes — so a wait wakes within milliseconds of the text appearing. Where control mode is
 * unavailable (no session a control client may attach to, too many clients) it polls the
 * pane's content instead and says so (`transport: "polling"`). Either way only output written
 * after the call began counts; what was already on the screen is reported separately.
 *
 * @module
 */

import { z } from "zod";
import { byteLength, cutString } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { compileRegex, loadRegexEngine, MatchPacer } from "../mcp/pattern.ts";
import { defineTool, READ_ONLY, type ToolRegistry } from "../mcp/registry.ts";
import { checkedString, count, int, paneIdSchema } from "../mcp/schemas.ts";
import {
  controlFor,
  ControlUnavailable,
  execFast,
  TerminalText,
  type Watch,
  type WatchBatch,
} from "../tmux/control.ts";
import { decodeBytes, flag, newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { classifyStderr, TmuxError } from "../tmux/run.ts";
import { paneAtPrompt } from "../tmux/prompt.ts";
import type { PaneRow } from "../tmux/snapshot.ts";

// ---------------------------------------------------------------------------------------------
// Timeouts

/** Timeout of a wait or a command when none is asked for. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The ceiling: a tool call must not block its client for longer. */
export const MAX_TIMEOUT_MS = 120_000;
/** The floor: shorter would be a race, not a wait. */
export const MIN_TIMEOUT_MS = 100;

/** A requested timeout clamped into [{@link MIN_TIMEOUT_MS}, {@link MAX_TIMEOUT_MS}]. */
export function clampTimeout(
  requested: number | undefined,
): { effective: number; clamped: boolean } {
  if (requested === undefined) return { effective: DEFAULT_TIMEOUT_MS, clamped: false };
  const effective = Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, Math.round(requested)));
  return { effective, clamped: effective !== requested };
}

/** The `timeoutMs` argument both waiting tools take. */
export const timeoutField = int().optional().describe(
  `ms; default ${DEFAULT_TIMEOUT_MS}, clamped to ${MIN_TIMEOUT_MS}-${MAX_TIMEOUT_MS}`,
);

// ---------------------------------------------------------------------------------------------
// Probing a pane

/** What one look at a pane tells. */
export interface PaneProbe {
  /** False when the pane no longer exists. */
  readonly exists: boolean;
  readonly dead: boolean;
  readonly deadStatus: number | null;
  readonly pid: number;
  readonly historySize: number;
  readonly cursorX: number;
  readonly cursorY: number;
  /** `pane_current_command`: the foreground process of the pane's terminal. */
  readonly command: string;
}

const PROBE_FIELDS = [
  "#{pane_id}",
  "#{pane_dead}",
  "#{pane_dead_status}",
  "#{pane_pid}",
  "#{history_size}",
  "#{cursor_x}",
  "#{cursor_y}",
  "#{pane_current_command}",
];

const GONE: PaneProbe = {
  exists: false,
  dead: true,
  deadStatus: null,
  pid: 0,
  historySize: 0,
  cursorX: 0,
  cursorY: 0,
  command: "",
};

/**
 * Probes a pane and, in the same tmux invocation, runs `after` (a capture): one instant for
 * both. Goes over the control channel when it can.
 */
async function probeWith(
  ctx: TmuxContext,
  paneId: string,
  after: readonly string[],
): Promise<{ probe: PaneProbe; lines: string[] }> {
  const guard = newGuard();
  const args = ["display-message", "-p", "-t", paneId, recordFormat(guard, PROBE_FIELDS)];
  if (after.length > 0) args.push(";", ...after);
  const result = await execFast(ctx.runner, ctx.address, args, { signal: ctx.signal });
  const records = parseRecords(result.stdout, guard, PROBE_FIELDS.length);
  const stderr = result.stderr.trim();
  if (result.code !== 0 && records.length === 0) {
    const kind = classifyStderr(stderr);
    if (kind === "no-target") return { probe: GONE, lines: [] };
    if (kind === "no-server") {
      // The whole server went, not just this pane: no outcome can be read from it.
      throw new ToolFailure(
        `The tmux server on ${ctx.socketLabel} went away while ${paneId} was watched (it was ` +
          "killed, crashed, or its last pane exited).",
        "create_session starts a new one; list_servers shows the servers that are running.",
      );
    }
    throw new TmuxError(kind, stderr.split("\n")[0] || "tmux failed", stderr);
  }
  const r = records[0] ?? [];
  if (!r[0]) return { probe: GONE, lines: [] };
  const dead = flag(r[1]);
  const probe: PaneProbe = {
    exists: true,
    dead,
    deadStatus: dead && r[2] !== "" ? Number(r[2]) : null,
    pid: Number(r[3]) || 0,
    historySize: Number(r[4]) || 0,
    cursorX: Number(r[5]) || 0,
    cursorY: Number(r[6]) || 0,
    command: r[7],
  };
  if (result.code !== 0) return { probe, lines: [] };
  const text = decodeBytes(afterRecord(result.stdout, guard));
  return { probe, lines: trimTrailingBlank(text.split("\n")) };
}

/** The pane's state now, as {@link PaneWatch} sees it: its process, command and cursor. */
export async function probePane(ctx: TmuxContext, paneId: string): Promise<PaneProbe> {
  return (await probeWith(ctx, paneId, [])).probe;
}

/**
 * Waits (bounded) until a pane that has written nothing yet writes something: a shell that
 * has not drawn its first prompt may not have set up its line editor, and bash drops what is
 * typed before then. Returns at once for a pane that has output already.
 */
export async function awaitFirstOutput(
  ctx: TmuxContext,
  paneId: string,
  start: PaneProbe,
  maxMs: number,
): Promise<void> {
  const blank = (p: PaneProbe) =>
    p.exists && p.historySize === 0 && p.cursorX === 0 && p.cursorY === 0;
  if (!blank(start)) return;
  const until = performance.now() + maxMs;
  while (performance.now() < until && !ctx.signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (!blank((await probeWith(ctx, paneId, [])).probe)) return;
  }
}

/** The bytes after the framed record (and its newline): the chained command's output. */
function afterRecord(stdout: Uint8Array, guard: string): Uint8Array {
  const end = new TextEncoder().encode(`${guard}E\n`);
  outer: for (let i = 0; i + end.length <= stdout.length; i++) {
    for (let j = 0; j < end.length; j++) if (stdout[i + j] !== end[j]) continue outer;
    return stdout.subarray(i + end.length);
  }
  return new Uint8Array();
}

function trimTrailingBlank(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1].trim() === "") end--;
  return lines.slice(0, end);
}

/** Whether a probe shows the process that was watched is gone (exited, pane gone, respawned). */
export function paneEnded(start: PaneProbe, now: PaneProbe): boolean {
  return !now.exists || now.dead || now.pid !== start.pid;
}

// ---------------------------------------------------------------------------------------------
// Watching a pane

/** What a watch reports when asked for the next thing that happened. */
export type WatchEvent =
  /** New output: lines written since the last event (the unfinished last line included). */
  | { readonly kind: "lines"; readonly lines: string[] }
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
  #checkAt = 0;
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
    options: { screen?: boolean; commands?: boolean } = {},
  ): Promise<PaneWatch> {
    const watch = new PaneWatch(ctx, pane);
    watch.#reportCommands = options.commands ?? false;
    try {
      await watch.#subscribe(watch.#sessions);
      const { probe, lines } = await probeWith(
        ctx,
        pane.id,
        options.screen ? ["capture-pane", "-p", "-J", "-t", pane.id] : [],
      );
      if (!probe.exists) {
        throw new ToolFailure(
          `Pane ${pane.id} disappeared.`,
          "list_panes lists the panes that exist.",
        );
      }
      watch.start = probe;
      watch.#command = probe.command;
      watch.screen = lines;
      watch.#startAbs = probe.historySize + probe.cursorY;
      watch.#startX = probe.cursorX;
      watch.#lastHistory = probe.historySize;
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

  /** Waits for the next event, at most until `deadline` (a `performance.now()` time). */
  async next(deadline: number): Promise<WatchEvent> {
    const signal = this.#ctx.signal;
    const tickAt = performance.now() + TICK_MS;
    while (true) {
      if (signal.aborted) return { kind: "cancelled" };
      if (this.#queue.length > 0) {
        const lines = this.#drain();
        if (lines.length > 0) return { kind: "lines", lines };
      }
      if (this.#diedAfterLines) return await this.#died(this.#diedAfterLines);
      if (this.#lost) {
        this.#lost = false;
        const event = await this.#recover();
        if (event) return event;
      }
      let now = performance.now();
      if (this.transport === "polling" && now >= this.#checkAt) {
        this.#checkAt = now + POLL_MS;
        const event = await this.#poll();
        if (event) return event;
      } else if (this.transport === "control" && (this.#changed || now >= this.#checkAt)) {
        this.#changed = false;
        this.#checkAt = now + CHECK_MS;
        const { probe } = await probeWith(this.#ctx, this.paneId, []);
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
      await this.#sleep(Math.min(deadline, tickAt, this.#checkAt) - now, signal);
    }
  }

  /**
   * The death event. tmux marks a pane dead when its terminal closes and learns the exit
   * status from SIGCHLD, which may come a moment later: wait briefly for the status.
   */
  async #died(probe: PaneProbe): Promise<WatchEvent> {
    let now = probe;
    for (let i = 0; i < 25 && now.exists && now.dead && now.deadStatus === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      now = (await probeWith(this.#ctx, this.paneId, [])).probe;
    }
    return { kind: "died", probe: now };
  }

  #drain(): string[] {
    const lines: string[] = [];
    for (const batch of this.#queue.splice(0)) {
      if (batch.lost) this.#lost = true;
      if (batch.changed) this.#changed = true;
      for (const chunk of batch.output) lines.push(...this.#text.push(chunk));
    }
    const partial = this.#text.partial;
    if (lines.length === 0 && partial === "") return [];
    return partial === "" ? lines : [...lines, partial];
  }

  /** The control feed was lost: catch up by reading the pane, then subscribe again. */
  async #recover(): Promise<WatchEvent | null> {
    this.#watch?.close();
    this.#watch = null;
    const placements = await execFast(
      this.#ctx.runner,
      this.#ctx.address,
      ["list-panes", "-a", "-F", "#{pane_id} #{session_id}"],
      { signal: this.#ctx.signal },
    );
    const sessions = new TextDecoder().decode(placements.stdout).split("\n")
      .map((l) => l.split(" ")).filter(([p]) => p === this.paneId).map(([, s]) => s);
    if (sessions.length > 0) await this.#subscribe(sessions);
    else this.transport = "polling";
    return await this.#poll();
  }

  /** Reads everything written since the start by capturing the pane; reports death too. */
  async #poll(): Promise<WatchEvent | null> {
    const { probe, lines } = await this.region();
    if (lines.length > 0 && lines.join("\n") !== this.#lastRegion.join("\n")) {
      this.#lastRegion = lines;
      if (paneEnded(this.start, probe)) this.#diedAfterLines = probe;
      return { kind: "lines", lines };
    }
    if (paneEnded(this.start, probe)) return await this.#died(probe);
    if (this.#commandChanged(probe)) return { kind: "command", probe };
    return null;
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
   * The pane's content from where its cursor was at the start to its end, wrapped lines
   * joined; the first line from the cursor's column on. `margin` rows before the start are
   * included (and the first line is then whole), for callers that look for their own marker;
   * `margin: "all"` reads the whole history (where the start is no longer known exactly).
   * `ctx` is the call reading it (a later call may read what an earlier one watched).
   */
  async region(
    margin: number | "all" = 0,
    ctx: TmuxContext = this.#ctx,
  ): Promise<{ probe: PaneProbe; lines: string[] }> {
    const { probe: now } = await probeWith(ctx, this.paneId, []);
    if (!now.exists) return { probe: now, lines: [] };
    if (now.historySize < this.#lastHistory) {
      // History was trimmed (tmux drops 10% at the limit) or cleared: rows moved up by at
      // least that much.
      this.#startAbs = Math.max(0, this.#startAbs - (this.#lastHistory - now.historySize));
    }
    this.#lastHistory = now.historySize;
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
    ]);
    if (margin === 0 && lines.length > 0) lines[0] = lines[0].slice(this.#startX);
    return { probe, lines };
  }

  /** The last lines of the pane's screen; what the stream last showed when the pane is gone. */
  async tail(maxLines: number): Promise<string[]> {
    const { probe, lines } = await probeWith(this.#ctx, this.paneId, [
      "capture-pane",
      "-p",
      "-J",
      "-t",
      this.paneId,
    ]);
    if (probe.exists && lines.length > 0) return lines.slice(-maxLines);
    const recent = this.#text.recent();
    return (recent.length > 0 ? recent : this.#lastRegion).slice(-maxLines);
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

// ---------------------------------------------------------------------------------------------
// Patterns

/** A compiled pattern and where it came from. */
interface Pattern {
  readonly text: string;
  readonly index: number;
  readonly test: (line: string) => boolean;
  /** What a character of text costs it, for pacing (see MatchPacer). */
  readonly cost: number;
}

const MAX_PATTERNS = 16;
const MAX_PATTERN_LENGTH = 1_000;

/**
 * Compiles the patterns: a literal is an escaped JavaScript RegExp (linear, and as fast as
 * before); a regex is RE2 (see ../mcp/pattern.ts), refused up front when it is invalid, too
 * large, or uses lookaround or backreferences.
 */
async function compile(
  patterns: readonly string[],
  regex: boolean,
  matchCase: boolean,
  what: string,
): Promise<Pattern[]> {
  if (regex && patterns.length > 0) await loadRegexEngine();
  return patterns.map((text, index): Pattern => {
    if (regex) {
      const re = compileRegex(text, matchCase, `${what}[${index}]`);
      return { text, index, test: (line) => re.test(line), cost: re.cost };
    }
    const re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), matchCase ? "u" : "iu");
    return { text, index, test: (line) => re.test(line), cost: 1 };
  });
}

/** The patterns `lines` show, in order of the patterns. */
async function patternsIn(
  patterns: readonly Pattern[],
  lines: readonly string[],
  pacer: MatchPacer,
): Promise<Pattern[]> {
  const seen: Pattern[] = [];
  for (const p of patterns) {
    for (const line of lines) {
      const hit = p.test(line);
      const pause = pacer.step(line.length, p.cost);
      if (pause) await pause;
      if (!hit) continue;
      seen.push(p);
      break;
    }
  }
  return seen;
}

/** The first line (in order) any pattern matches, with the pattern, and every matching line. */
async function scan(patterns: readonly Pattern[], lines: readonly string[], pacer: MatchPacer) {
  const cost = patterns.reduce((sum, p) => sum + p.cost, 0);
  let first: { pattern: Pattern; line: string } | null = null;
  const matching: string[] = [];
  for (const line of lines) {
    const pattern = patterns.find((p) => p.test(line));
    const pause = pacer.step(line.length, cost);
    if (pause) await pause;
    if (!pattern) continue;
    first ??= { pattern, line };
    matching.push(line);
  }
  return first ? { ...first, matching } : null;
}

/** Keeps the end of a text within `maxBytes` UTF-8 bytes; reports what was cut. */
export function keepTail(text: string, maxBytes: number): { text: string; omittedBytes: number } {
  const total = byteLength(text);
  if (total <= maxBytes) return { text, omittedBytes: 0 };
  const bytes = new TextEncoder().encode(text);
  let start = bytes.length - maxBytes;
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
  return { text: new TextDecoder().decode(bytes.subarray(start)), omittedBytes: start };
}

/** At most `max` lines, each cut to `maxBytes`. */
function boundLines(lines: readonly string[], max: number, maxBytes: number) {
  return {
    lines: lines.slice(0, max).map((l) => cutString(l, maxBytes).text),
    omittedLines: Math.max(0, lines.length - max),
  };
}

// ---------------------------------------------------------------------------------------------
// wait_for_text

const patternList = () => z.array(checkedString(MAX_PATTERN_LENGTH)).max(MAX_PATTERNS);

const patternHit = z.strictObject({
  pattern: z.string(),
  index: count().describe("Its position in the list given."),
}).nullable();

const waitForText = defineTool({
  name: "wait_for_text",
  title: "Wait for text in a pane",
  toolset: "inspect",
  description:
    "Block until a pane prints one of patterns in NEW output, a stop pattern, exits, or " +
    "times out. Literal, case-insensitive, per line, unless regex (RE2)/matchCase. No " +
    "patterns: any new text. Start it, then send_keys.",
  input: {
    paneId: paneIdSchema,
    patterns: patternList().min(1).optional(),
    regex: z.boolean().optional(),
    matchCase: z.boolean().optional(),
    stop: patternList().optional(),
    timeoutMs: timeoutField,
  },
  output: {
    paneId: paneIdSchema,
    outcome: z.enum(["matched", "output", "stopped", "timedOut", "paneDied"]),
    matched: patternHit.describe("The pattern that matched (outcome matched), else null."),
    stoppedBy: patternHit.describe("The stop pattern seen (outcome stopped), else null."),
    lines: z.array(z.string()).describe(
      "The new lines that matched (the winning kind); for output, the new lines.",
    ),
    omittedLines: count(),
    tail: z.string().describe("The last lines of the pane (its screen) when the wait ended."),
    tailOmittedBytes: count(),
    alreadyOnScreen: z.boolean().describe(
      "A pattern was visible on the screen before the wait began.",
    ),
    patternsOnScreen: z.array(z.string()).describe("Which patterns were already visible."),
    exitStatus: int().nullable().describe("The dead pane's exit status, when known (paneDied)."),
    effectiveTimeoutMs: int(),
    timeoutClamped: z.boolean().describe("Whether timeoutMs was moved into the allowed range."),
    waitedMs: count(),
    transport: z.enum(["control", "polling"]).describe(
      "control: woken by tmux control-mode output events; polling: read the pane every 100 ms.",
    ),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const { effective, clamped } = clampTimeout(args.timeoutMs);
    const matchCase = args.matchCase ?? false;
    const anyOutput = args.patterns === undefined;
    const patterns = await compile(args.patterns ?? [], args.regex ?? false, matchCase, "patterns");
    const stops = await compile(args.stop ?? [], args.regex ?? false, matchCase, "stop");
    const pacer = new MatchPacer(ctx.signal);
    const snapshot = await ctx.snapshot();
    const pane = ctx.pane(snapshot, args.paneId);
    const began = performance.now();
    const deadline = began + effective;
    const watch = await PaneWatch.open(ctx, pane, { screen: true });
    type Outcome = "matched" | "output" | "stopped" | "timedOut" | "paneDied";
    let outcome: Outcome = "timedOut";
    let matched: { pattern: string; index: number } | null = null;
    let stoppedBy: { pattern: string; index: number } | null = null;
    let hitLines: string[] = [];
    let exitStatus: number | null = null;
    let onScreen: Pattern[] = [];
    try {
      onScreen = await patternsIn(patterns, watch.screen, pacer);
      if (watch.start.dead) {
        outcome = "paneDied";
        exitStatus = watch.start.deadStatus;
      } else {
        await ctx.progress(0, effective, `Waiting on ${pane.id}`);
        loop: while (true) {
          const event = await watch.next(deadline);
          switch (event.kind) {
            case "lines": {
              const stop = await scan(stops, event.lines, pacer);
              if (stop) {
                outcome = "stopped";
                stoppedBy = { pattern: stop.pattern.text, index: stop.pattern.index };
                hitLines = stop.matching;
                break loop;
              }
              const hit = await scan(patterns, event.lines, pacer);
              if (hit) {
                outcome = "matched";
                matched = { pattern: hit.pattern.text, index: hit.pattern.index };
                hitLines = hit.matching;
                break loop;
              }
              if (anyOutput) {
                outcome = "output";
                hitLines = event.lines;
                break loop;
              }
              break;
            }
            case "tick": {
              const waited = Math.round(performance.now() - began);
              await ctx.progress(
                waited,
                effective,
                `Waiting on ${pane.id}: ${Math.round(waited / 1000)} s of ${effective / 1000} s`,
              );
              break;
            }
            case "died":
              outcome = "paneDied";
              exitStatus = event.probe.deadStatus;
              break loop;
            case "timeout":
              outcome = "timedOut";
              break loop;
            case "cancelled":
              throw new TmuxError("cancelled", "The wait was cancelled.");
          }
        }
      }
    } finally {
      watch.close();
    }
    const waitedMs = Math.round(performance.now() - began);
    const budget = Math.max(1_000, Math.floor(ctx.config.maxResultBytes / 4));
    const tail = keepTail((await watch.tail(40)).join("\n"), budget);
    const bounded = boundLines(hitLines, 20, Math.max(200, Math.floor(budget / 20)));
    const data = {
      paneId: pane.id,
      outcome,
      matched,
      stoppedBy,
      lines: bounded.lines,
      omittedLines: bounded.omittedLines,
      tail: tail.text,
      tailOmittedBytes: tail.omittedBytes,
      alreadyOnScreen: onScreen.length > 0,
      patternsOnScreen: onScreen.map((p) => p.text),
      exitStatus,
      effectiveTimeoutMs: effective,
      timeoutClamped: clamped,
      waitedMs,
      transport: watch.transport,
    };
    const what = {
      matched: `matched ${JSON.stringify(matched?.pattern)}`,
      output: `new output (${hitLines.length} ${hitLines.length === 1 ? "line" : "lines"})`,
      stopped: `stopped by ${JSON.stringify(stoppedBy?.pattern)}`,
      timedOut: `timed out after ${effective} ms`,
      paneDied: `pane died${exitStatus !== null ? ` (status ${exitStatus})` : ""}`,
    }[outcome];
    return {
      data,
      summary: `${pane.id}: ${what}${clamped ? ` (timeout clamped to ${effective} ms)` : ""}${
        onScreen.length > 0 ? "; a pattern was already on screen before the wait" : ""
      }.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// wait_for_idle

/** Quiet a wait for idle asks for when none is given. */
export const DEFAULT_QUIET_MS = 1_000;
/** Shortest quiet: less tells a pause between two writes from the end of the output. */
export const MIN_QUIET_MS = 100;
/** Longest quiet (a quiet longer than the timeout can never be reached: timedOut). */
export const MAX_QUIET_MS = 60_000;

/** A requested quiet clamped into [{@link MIN_QUIET_MS}, {@link MAX_QUIET_MS}]. */
export function clampQuiet(requested: number | undefined): { effective: number; clamped: boolean } {
  if (requested === undefined) return { effective: DEFAULT_QUIET_MS, clamped: false };
  const effective = Math.min(MAX_QUIET_MS, Math.max(MIN_QUIET_MS, Math.round(requested)));
  return { effective, clamped: effective !== requested };
}

/** Whether the pane is at its shell's prompt now: read its state, then ask the kernel. */
async function atPromptNow(ctx: TmuxContext, paneId: string): Promise<boolean> {
  const probe = await probePane(ctx, paneId);
  if (!probe.exists) return false;
  return await paneAtPrompt(ctx.runner, ctx.address, paneId, probe, ctx.signal);
}

/** How often, at most, a wait for idle sends progress while output keeps coming. */
const PROGRESS_MS = 1_000;

const waitForIdle = defineTool({
  name: "wait_for_idle",
  title: "Wait for a pane to go quiet",
  toolset: "inspect",
  description:
    "Block until a pane prints nothing for quietMs (atPrompt: and its shell is back at its " +
    "prompt), exits, or times out. For work no text marks the end of.",
  input: {
    paneId: paneIdSchema,
    quietMs: int().optional().describe(
      `default ${DEFAULT_QUIET_MS}, clamped to ${MIN_QUIET_MS}-${MAX_QUIET_MS}`,
    ),
    atPrompt: z.boolean().optional(),
    timeoutMs: timeoutField,
  },
  output: {
    paneId: paneIdSchema,
    outcome: z.enum(["idle", "timedOut", "paneDied"]),
    atPrompt: z.boolean().describe(
      "When the wait ended, the pane's shell held the terminal (nothing in the foreground).",
    ),
    quietForMs: count().describe("How long no output had come when the wait ended."),
    tail: z.string().describe("The last lines of the pane (its screen) when the wait ended."),
    tailOmittedBytes: count(),
    exitStatus: int().nullable().describe("The dead pane's exit status, when known (paneDied)."),
    effectiveQuietMs: int(),
    quietClamped: z.boolean(),
    effectiveTimeoutMs: int(),
    timeoutClamped: z.boolean(),
    waitedMs: count(),
    transport: z.enum(["control", "polling"]),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const { effective, clamped } = clampTimeout(args.timeoutMs);
    const quiet = clampQuiet(args.quietMs);
    const quietMs = quiet.effective;
    const wantPrompt = args.atPrompt ?? false;
    const snapshot = await ctx.snapshot({ sessions: false, windows: false, paneId: args.paneId });
    const pane = snapshot.panes[0] ??
      ctx.pane(await ctx.snapshot({ sessions: false, windows: false }), args.paneId);
    const began = performance.now();
    const deadline = began + effective;
    // Told when the foreground program changes, from the checks the watch makes anyway: a
    // program that ends without printing still brings the shell back.
    const watch = await PaneWatch.open(ctx, pane, { commands: wantPrompt });
    let outcome: "idle" | "timedOut" | "paneDied" = "timedOut";
    let exitStatus: number | null = null;
    let atPrompt = false;
    let lastOutput = began;
    let ended = began;
    try {
      if (watch.start.dead) {
        outcome = "paneDied";
        exitStatus = watch.start.deadStatus;
      } else {
        await ctx.progress(0, effective, `Waiting on ${pane.id} to go quiet`);
        let progressAt = began + PROGRESS_MS;
        // Whether the prompt is worth asking about again: something happened since it was not.
        let recheck = true;
        loop: while (true) {
          const now = performance.now();
          if (now - lastOutput >= quietMs) {
            if (!wantPrompt) {
              outcome = "idle";
              break;
            }
            if (recheck) {
              recheck = false;
              if (await atPromptNow(ctx, pane.id)) {
                outcome = "idle";
                atPrompt = true;
                break;
              }
            }
          }
          if (now >= deadline) {
            outcome = "timedOut";
            break;
          }
          if (now >= progressAt) {
            progressAt = now + PROGRESS_MS;
            const waited = Math.round(now - began);
            await ctx.progress(
              waited,
              effective,
              `Waiting on ${pane.id}: ${Math.round(waited / 1000)} s of ${effective / 1000} s`,
            );
          }
          const quietAt = lastOutput + quietMs;
          const event = await watch.next(now < quietAt ? Math.min(deadline, quietAt) : deadline);
          switch (event.kind) {
            case "lines":
              lastOutput = performance.now();
              recheck = true;
              break;
            case "command":
              recheck = true;
              break;
            case "died":
              outcome = "paneDied";
              exitStatus = event.probe.deadStatus;
              break loop;
            case "cancelled":
              throw new TmuxError("cancelled", "The wait was cancelled.");
            case "tick":
            case "timeout":
              break;
          }
        }
      }
      ended = performance.now();
      if (outcome === "timedOut" || (outcome === "idle" && !wantPrompt)) {
        atPrompt = await atPromptNow(ctx, pane.id);
      }
    } finally {
      watch.close();
    }
    const budget = Math.max(1_000, Math.floor(ctx.config.maxResultBytes / 4));
    const tail = keepTail((await watch.tail(40)).join("\n"), budget);
    const data = {
      paneId: pane.id,
      outcome,
      atPrompt,
      quietForMs: Math.max(0, Math.round(ended - lastOutput)),
      tail: tail.text,
      tailOmittedBytes: tail.omittedBytes,
      exitStatus,
      effectiveQuietMs: quietMs,
      quietClamped: quiet.clamped,
      effectiveTimeoutMs: effective,
      timeoutClamped: clamped,
      waitedMs: Math.round(ended - began),
      transport: watch.transport,
    };
    const what = {
      idle: `quiet for ${data.quietForMs} ms${atPrompt ? ", at its prompt" : ""}`,
      timedOut: `timed out after ${effective} ms (quiet for ${data.quietForMs} ms${
        wantPrompt && !atPrompt ? ", not at its prompt" : ""
      })`,
      paneDied: `pane died${exitStatus !== null ? ` (status ${exitStatus})` : ""}`,
    }[outcome];
    const notes = [
      quiet.clamped ? `quietMs clamped to ${quietMs}` : "",
      clamped ? `timeout clamped to ${effective} ms` : "",
    ].filter((n) => n !== "");
    return {
      data,
      summary: `${pane.id}: ${what}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}.`,
    };
  },
});

/** Registers the waiting tools. */
export function registerWaitTools(registry: ToolRegistry): void {
  registry.add(waitForText);
  registry.add(waitForIdle);
}
