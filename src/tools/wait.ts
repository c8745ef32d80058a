/**
 * Waiting on panes (toolset inspect): `wait_for_text` for text in new output, `wait_for_idle`
 * for a pane gone quiet (and back at its shell's prompt). Both watch the pane through
 * pane_watch.ts, event-driven where control mode is available; the patterns are matched by
 * wait_patterns.ts and the results kept within bounds by text_tail.ts.
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { MatchDeadline, MatchPacer } from "../mcp/pattern_pacer.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { checkedString, count, int, paneIdSchema } from "../mcp/schemas.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { CursorError, openCursor, type SinceCursor } from "../tmux/since_cursor.ts";
import { writtenSince } from "../tmux/since_written.ts";
import { paneAtPrompt } from "../tmux/prompt.ts";
import { clampTimeout, lateNote, timeoutField } from "../mcp/wait_timeouts.ts";
import { PaneWatch } from "./pane_watch.ts";
import { DIED_OUTPUT_NOTE, endedBy, type PaneProbe, probePane } from "./pane_probe.ts";
import type { WrittenRow } from "./captured_rows.ts";
import { compilePatterns, type Pattern, patternsIn, scan, scanRows } from "./wait_patterns.ts";
import { boundLines, keepTail } from "./text_tail.ts";

/**
 * A wait's summary of its pane's death: with the exit status, or the signal that ended it.
 * `during`: it died during the wait, so what it printed last may be lost (DIED_OUTPUT_NOTE).
 */
const diedText = (died: PaneProbe | null, during: boolean) =>
  `pane died${endedBy(died?.deadStatus ?? null, died?.deadSignal ?? null)}${
    during ? `; ${DIED_OUTPUT_NOTE}` : ""
  }`;

/** What a wait's `tail` is (see PaneWatch.tail). */
const TAIL_TEXT = "The last lines of the pane's screen when the wait ended; once the pane is " +
  "gone, of its last rows read, or of its output stream when the summary says so.";

/**
 * A tail read from the output stream (the pane gone, no rows read): text a screen would not
 * show (a DCS's data, a cleared screen's text) may be in it.
 */
const STREAM_TAIL_NOTE = "the pane is gone: its tail is from its output stream, not its screen";

// ---------------------------------------------------------------------------------------------
// wait_for_text

const MAX_PATTERNS = 16;
const MAX_PATTERN_LENGTH = 1_000;

const patternList = () => z.array(checkedString(MAX_PATTERN_LENGTH)).max(MAX_PATTERNS);

const patternHit = z.strictObject({
  pattern: z.string(),
  index: count().describe("Its position in the list given."),
}).nullable();

const waitForText = defineTool({
  name: "wait_for_text",
  title: "Wait for text in a pane",
  toolset: "inspect",
  description: "Block until a pane prints one of patterns, a stop pattern, exits, or times out. " +
    "Literal, case-insensitive, per line, unless regex (RE2)/matchCase. No patterns: any " +
    "text. Only NEW output, typed echo included: since the call, or since: a capture_since " +
    "cursor taken before send_keys.",
  input: {
    paneId: paneIdSchema,
    patterns: patternList().min(1).optional(),
    regex: z.boolean().optional(),
    matchCase: z.boolean().optional(),
    stop: patternList().optional(),
    // Far longer than a cursor (about 24 characters): one of an earlier version (up to 110 000)
    // is refused saying what to do, not by the schema.
    since: z.string().max(200_000).optional(),
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
    omittedLineBytes: count().describe(
      "UTF-8 bytes cut from the ends of long lines in lines; capture_pane reads them whole.",
    ),
    tail: z.string().describe(TAIL_TEXT),
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
    // The timeout counts from the call's start: one that waited its turn to read the pane (a
    // busy tmux) still ends when asked.
    const began = performance.now();
    const { effective, clamped } = clampTimeout(args.timeoutMs);
    const matchCase = args.matchCase ?? false;
    const anyOutput = args.patterns === undefined;
    const patterns = await compilePatterns(
      args.patterns ?? [],
      args.regex ?? false,
      matchCase,
      "patterns",
    );
    const stops = await compilePatterns(args.stop ?? [], args.regex ?? false, matchCase, "stop");
    // The wait's reads, its watch's repeated while it waits, go behind one-off calls (paced).
    const reads = ctx.paced();
    const { pane } = await reads.paneSnapshot(args.paneId);
    const deadline = began + effective;
    // Matching stops at the deadline too: a costly pattern on a long line takes a while.
    const pacer = new MatchPacer(ctx.signal, deadline);
    // A cursor that cannot be used is refused before anything is watched.
    const since = args.since === undefined ? null : await sinceCursor(args.since, pane.id);
    const watch = await PaneWatch.open(reads, pane, { screen: true, rows: true });
    type Outcome = "matched" | "output" | "stopped" | "timedOut" | "paneDied";
    let outcome: Outcome = "timedOut";
    type Hit = { pattern: string; index: number } | null;
    // Set by `ends` (a closure: typed so that the checker does not take them for null).
    let matched = null as Hit;
    let stoppedBy = null as Hit;
    let hitLines: string[] = [];
    /** The pane's probe once it is seen dead: its exit status, or the signal that ended it. */
    let died: PaneProbe | null = null;
    let onScreen: Pattern[] = [];
    const notes: string[] = [];
    /** Whether new output ends the wait: a stop pattern, a pattern, or any (no patterns). */
    const ends = async (lines: string[], rows?: readonly WrittenRow[]): Promise<boolean> => {
      const look = (list: readonly Pattern[]) =>
        rows ? scanRows(list, rows, pacer) : scan(list, lines, pacer);
      const stop = await look(stops);
      if (stop) {
        outcome = "stopped";
        stoppedBy = { pattern: stop.pattern.text, index: stop.pattern.index };
        hitLines = stop.matching;
        return true;
      }
      const hit = await look(patterns);
      if (hit) {
        outcome = "matched";
        matched = { pattern: hit.pattern.text, index: hit.pattern.index };
        hitLines = hit.matching;
        return true;
      }
      if (anyOutput && lines.length > 0) {
        outcome = "output";
        hitLines = lines;
        return true;
      }
      return false;
    };
    try {
      // Its own pacer: a long line on the screen before the wait, matched in pieces, is no
      // output the note about lines that could have been missed speaks of.
      onScreen = await patternsIn(patterns, watch.screen, new MatchPacer(ctx.signal, deadline));
      // What the pane wrote between the cursor and the watch's start, read once the watch is
      // open (what comes meanwhile is seen twice, never missed).
      const before = since === null ? null : await writtenBefore(ctx, pane.id, since);
      if (before?.lost) notes.push(`since ignored: ${before.lost}`);
      if (before && before.skippedRows > 0) {
        notes.push(`the first ${before.skippedRows} lines written since the cursor not matched`);
      }
      if (before && await ends(before.rows.map((r) => r.shown), before.rows)) {
        notes.push("written before the call, after the cursor");
      } else if (watch.start.dead) {
        outcome = "paneDied";
        died = watch.start;
      } else {
        await ctx.progress(0, effective, `Waiting on ${pane.id}`);
        reads.readUntil(deadline);
        loop: while (true) {
          const event = await watch.next(deadline);
          switch (event.kind) {
            case "lines": {
              if (await ends(event.lines, event.rows)) break loop;
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
              died = event.probe;
              break loop;
            case "timeout":
              outcome = "timedOut";
              break loop;
            case "cancelled":
              throw new TmuxError("cancelled", "The wait was cancelled.");
          }
        }
      }
    } catch (error) {
      // A read still waiting for its turn at the deadline is dropped: the wait has timed out.
      if (reads.droppedAtDeadline(error)) outcome = "timedOut";
      else if (error instanceof MatchDeadline) {
        outcome = "timedOut";
        notes.push("the newest output was still being matched when the time ran out");
      } else throw error;
    } finally {
      watch.close();
      reads.paceOver();
    }
    const pieced = pacer.piecedNote(false);
    if (pieced) notes.push(pieced);
    if (watch.skippedRows > 0) {
      notes.push(
        `${watch.skippedRows} rows written during the wait not matched (more than a read takes ` +
          "came at once; the last ones were)",
      );
    }
    if (watch.movedUnseen !== null) {
      notes.push(
        `the pane keeps ${watch.movedUnseen} lines of history (history-limit): a line ` +
          "scrolled past the wait's start between two reads may not have been matched",
      );
    }
    const budget = Math.max(1_000, Math.floor(ctx.config.maxResultBytes / 4));
    const last = await watch.tail(40);
    const tail = keepTail(last.lines.join("\n"), budget);
    if (last.stream) notes.push(STREAM_TAIL_NOTE);
    // Until the answer: what the caller waited, the last read's turn included.
    const waitedMs = Math.round(performance.now() - began);
    const late = lateNote(waitedMs, effective);
    if (late) notes.push(late);
    const lineBytes = Math.max(200, Math.floor(budget / 20));
    const bounded = boundLines(hitLines, 20, lineBytes);
    if (bounded.omittedLineBytes > 0) {
      notes.push(
        `lines longer than ${lineBytes} bytes are cut (omittedLineBytes ` +
          `${bounded.omittedLineBytes}; a match may be in what was cut: capture_pane reads them whole)`,
      );
    }
    const data = {
      paneId: pane.id,
      outcome,
      matched,
      stoppedBy,
      lines: bounded.lines,
      omittedLines: bounded.omittedLines,
      omittedLineBytes: bounded.omittedLineBytes,
      tail: tail.text,
      tailOmittedBytes: tail.omittedBytes,
      alreadyOnScreen: onScreen.length > 0,
      patternsOnScreen: onScreen.map((p) => p.text),
      exitStatus: died?.deadStatus ?? null,
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
      paneDied: diedText(died, died !== watch.start),
    }[outcome];
    if (clamped) notes.unshift(`timeout clamped to ${effective} ms`);
    return {
      data,
      summary: `${pane.id}: ${what}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}${
        onScreen.length > 0 ? "; a pattern was already on screen before the wait" : ""
      }.`,
    };
  },
});

/** Rows of output written since a `since` cursor that the wait reads at most (the last ones). */
const SINCE_ROWS = 10_000;

/** What to do about a `since` cursor that cannot be used. */
const SINCE_HINT = "Take a cursor with capture_since on this pane (before typing) and pass it as " +
  "since, or wait without since.";

/** What a `since` cursor remembers: this process handed it out, on this pane. */
async function sinceCursor(text: string, paneId: string): Promise<SinceCursor> {
  try {
    return await openCursor(text, paneId);
  } catch (error) {
    if (error instanceof CursorError) throw new ToolFailure(error.message, SINCE_HINT);
    throw error;
  }
}

/** The rows the pane wrote since a `since` cursor (see {@link writtenSince}). */
async function writtenBefore(ctx: TmuxContext, paneId: string, cursor: SinceCursor) {
  try {
    return await writtenSince(ctx.runner, ctx.address, paneId, cursor, SINCE_ROWS, {
      signal: ctx.signal,
    });
  } catch (error) {
    if (error instanceof CursorError) throw new ToolFailure(error.message, SINCE_HINT);
    throw error;
  }
}

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

/**
 * Whether the pane is at its shell's prompt now: read its state, then ask the kernel. Also
 * whether its input is turned off: a prompt nothing typed reaches is worth saying so.
 */
async function atPromptNow(
  ctx: TmuxContext,
  paneId: string,
): Promise<{ atPrompt: boolean; inputOff: boolean }> {
  const probe = await probePane(ctx, paneId);
  if (!probe.exists) return { atPrompt: false, inputOff: false };
  const atPrompt = await paneAtPrompt(ctx.runner, ctx.address, paneId, probe, ctx.signal);
  return { atPrompt, inputOff: probe.inputOff };
}

/** How often, at most, a wait for idle sends progress while output keeps coming. */
const PROGRESS_MS = 1_000;

const waitForIdle = defineTool({
  name: "wait_for_idle",
  title: "Wait for a pane to go quiet",
  toolset: "inspect",
  description:
    "Block until a pane is quiet for quietMs (atPrompt: and back at its shell prompt), " +
    "exits, or times out. For work no text marks the end of.",
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
    tail: z.string().describe(TAIL_TEXT),
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
    // waitedMs counts from the call's start, as wait_for_text's.
    const called = performance.now();
    const { effective, clamped } = clampTimeout(args.timeoutMs);
    const quiet = clampQuiet(args.quietMs);
    const quietMs = quiet.effective;
    const wantPrompt = args.atPrompt ?? false;
    // Its reads paced, as wait_for_text's.
    const reads = ctx.paced();
    const { pane } = await reads.paneSnapshot(args.paneId);
    // The timeout and the quiet count from here, on one clock: a quiet as long as the timeout
    // is reached, and no quiet counts that the watch did not see (the snapshot may have waited
    // its turn a while).
    const began = performance.now();
    const deadline = began + effective;
    // Told when the foreground program changes, from the checks the watch makes anyway: a
    // program that ends without printing still brings the shell back. And when the screen
    // changes by escape sequences alone (a clear, `ESC#8`): quiet is what the screen shows,
    // not what text the stream holds (a title update alone stays quiet).
    const watch = await PaneWatch.open(reads, pane, { commands: wantPrompt, changes: true });
    let outcome: "idle" | "timedOut" | "paneDied" = "timedOut";
    /** The pane's probe once it is seen dead: its exit status, or the signal that ended it. */
    let died: PaneProbe | null = null;
    let atPrompt = false;
    let inputOff = false;
    let lastOutput = began;
    let ended = began;
    /** The deadline's read was dropped with the quiet already reached (see the catch). */
    let quietToEnd = false;
    try {
      if (watch.start.dead) {
        outcome = "paneDied";
        died = watch.start;
      } else {
        await ctx.progress(0, effective, `Waiting on ${pane.id} to go quiet`);
        reads.readUntil(deadline);
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
              ({ atPrompt, inputOff } = await atPromptNow(ctx, pane.id));
              if (atPrompt) {
                outcome = "idle";
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
            case "changed":
              lastOutput = performance.now();
              recheck = true;
              break;
            case "command":
              recheck = true;
              break;
            case "died":
              outcome = "paneDied";
              died = event.probe;
              break loop;
            case "cancelled":
              throw new TmuxError("cancelled", "The wait was cancelled.");
            case "tick":
            case "timeout":
              break;
          }
        }
      }
    } catch (error) {
      // A read still waiting for its turn at the deadline is dropped: the wait has timed out,
      // unless the feed heard the pane quiet for quietMs all the same (a check that waited
      // for its turn under load must not turn a quiet reached into a timeout).
      if (!reads.droppedAtDeadline(error)) throw error;
      outcome = "timedOut";
      // Dropped because the deadline came: its timer may fire a fraction of a millisecond
      // before the clock reads the deadline, which must not cost a quiet as long as the
      // timeout (quietMs = timeoutMs) its idle.
      const at = Math.max(performance.now(), deadline);
      quietToEnd = watch.caughtUp && at - lastOutput >= quietMs;
      if (quietToEnd && !wantPrompt) outcome = "idle";
    } finally {
      watch.close();
      reads.paceOver();
    }
    ended = performance.now();
    if (outcome === "timedOut" || (outcome === "idle" && !wantPrompt)) {
      ({ atPrompt, inputOff } = await atPromptNow(ctx, pane.id));
      // Quiet to the end and at its prompt: what the dropped check would have found.
      if (quietToEnd && atPrompt) outcome = "idle";
    }
    const budget = Math.max(1_000, Math.floor(ctx.config.maxResultBytes / 4));
    const last = await watch.tail(40);
    const tail = keepTail(last.lines.join("\n"), budget);
    // Until the answer: what the caller waited, the last reads' turns included.
    const waitedMs = Math.round(performance.now() - called);
    const data = {
      paneId: pane.id,
      outcome,
      atPrompt,
      quietForMs: Math.max(0, Math.round(ended - lastOutput)),
      tail: tail.text,
      tailOmittedBytes: tail.omittedBytes,
      exitStatus: died?.deadStatus ?? null,
      effectiveQuietMs: quietMs,
      quietClamped: quiet.clamped,
      effectiveTimeoutMs: effective,
      timeoutClamped: clamped,
      waitedMs,
      transport: watch.transport,
    };
    const what = {
      idle: `quiet for ${data.quietForMs} ms${atPrompt ? ", at its prompt" : ""}${
        atPrompt && inputOff
          ? " (its input is turned off, select-pane -d: nothing typed arrives)"
          : ""
      }`,
      timedOut: `timed out after ${effective} ms (quiet for ${data.quietForMs} ms${
        wantPrompt && !atPrompt ? ", not at its prompt" : ""
      })`,
      paneDied: diedText(died, died !== watch.start),
    }[outcome];
    const notes = [
      quiet.clamped ? `quietMs clamped to ${quietMs}` : "",
      clamped ? `timeout clamped to ${effective} ms` : "",
      lateNote(waitedMs, effective),
      last.stream ? STREAM_TAIL_NOTE : "",
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
