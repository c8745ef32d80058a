/**
 * run_command: type a command into a pane's POSIX shell, wrapped in markers, and wait for its
 * end marker, its pane's death or the timeout; a command not done by then (or started in the
 * background) is a job get_command_result reads later (jobs.ts). Its parts are one import
 * below: which panes are busy (busy_panes.ts), the prompt programs waited out
 * (prompt_programs.ts), the fresh prompt (fresh_prompt.ts), the line typed (typed.ts), the wait
 * for its end and the verdict on a command without its end marker (run_wait.ts).
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { tellCancelledTask } from "../mcp/task_store.ts";
import { Unconfirmed } from "../mcp/act_step.ts";
import { guardInput, PartialInput } from "../mcp/input_guard.ts";
import { requireOwned } from "../mcp/ownership.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import { count, int, paneIdSchema } from "../mcp/schemas.ts";
import { execFast } from "../tmux/control.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { randomHex } from "../tmux/format.ts";
import { leave, type Leftover } from "../tmux/leftovers.ts";
import { jobIdOf, jobIdSchema, type JobRef } from "./job_id.ts";
import { hearEnds, HELD_NOTE, isOver, NOT_HEARD, readJob } from "./job_state.ts";
import { placeOf, rememberJob } from "./job_resource.ts";
import { followJob } from "./jobs.ts";
import {
  CLAIM_MS,
  claimValue,
  markFree,
  markFreeFormat,
  markHeldFormat,
  markLeftover,
  markValue,
  parseMark,
  readMark,
  setMarkCommand,
  swapMark,
} from "./run_mark.ts";
import { keepTail } from "./text_tail.ts";
import { clampTimeout, timeoutField } from "../mcp/wait_timeouts.ts";
import { PaneWatch } from "./pane_watch.ts";
import { afterTyped } from "./run_failure.ts";
import {
  awaitFirstOutput,
  DIED_OUTPUT_NOTE,
  endedBy,
  notStartedYet,
  paneEnded,
} from "./pane_probe.ts";
import {
  busyRefusal,
  forgetEndedRuns,
  lapsedRefusal,
  markRefusal,
  runsFor,
  type RunState,
  shownCommand,
  takenRefusal,
  takeRun,
} from "./busy_panes.ts";
import { freshPrompt, requirePosixShell } from "./fresh_prompt.ts";
import {
  afterPromptPrograms,
  noteMoment,
  PROMPT_PROGRAM_MS,
  serverKey,
  typedProgram,
} from "./prompt_programs.ts";
import { whileShellAway } from "./shell_guard.ts";
import { typedCommand } from "./typed.ts";
import { awaitRunEnd } from "./run_wait.ts";
import { checkDeliverable, forceField, pasteViaBuffer, TYPES } from "./typing.ts";

/** Longest command `run_command` runs. */
const MAX_COMMAND_CHARS = 65_536;

/**
 * Longest a run_command waits for its job's follower to open a watch of its own and take over
 * from the call's (jobs.ts, followJob): a few ms with a control client at hand, a second or two
 * where one must be started on an SSH host. Past it the call returns, and leaves its watch
 * open until the follower takes over.
 */
const HANDOVER_MS = 3_000;

/** Waits for `handedOver`, at most {@link HANDOVER_MS}. */
async function untilHandedOver(handedOver: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    handedOver,
    new Promise((resolve) => timer = setTimeout(resolve, HANDOVER_MS)),
  ]);
  clearTimeout(timer);
}

/**
 * Whether the pane shows text on a row below its cursor. Right after a command's end marker
 * and the prompt, the rows below are blank, unless the command moved the cursor up over its
 * own output (the rows below the cursor moved down past the marker and the prompt: see
 * `markerWords` in job_markers.ts).
 */
async function textBelowCursor(ctx: TmuxContext, paneId: string): Promise<boolean> {
  const result = await execFast(ctx.runner, ctx.address, [
    "display-message",
    "-p",
    "-t",
    paneId,
    "#{cursor_y}",
    ";",
    "capture-pane",
    "-p",
    "-t",
    paneId,
  ], { signal: ctx.signal });
  if (result.code !== 0) return false;
  const [first, ...rows] = new TextDecoder().decode(result.stdout).split("\n");
  const y = Number(first);
  if (!Number.isSafeInteger(y)) return false;
  return rows.slice(y + 1).some((row) => row.trim() !== "");
}

/**
 * The keys that empty the shell's line before the command is typed: whatever reached it between
 * the fresh prompt and now (a person's or another client's keys), handled by the line editor in
 * order with the paste, and never a line kill on an empty line (readline rings the bell for
 * that, and tmux marks the window in a person's status line). For sh, bash and ksh: A (vi
 * command mode: append at the end, entering insert mode; anywhere else a letter), End reaches
 * the end of the line (bound in emacs, vi insert and vi command keymaps; C-e inserts a character
 * in vi insert mode), C-u kills back to the start (in vi command mode the character under the
 * cursor stays), A appends at the end again, C-u kills again. A shell without line editing gets
 * the End sequence as text and its terminal's line-kill (C-u) takes it, and the A, away. zsh
 * binds no End unless a start-up file does (Debian's global one does; `zsh -f`, Arch's and
 * Fedora's do not): its escape would enter vi command mode, where `4~` turns the A into an `a`
 * left on the line, or ring the bell. Its C-u kills the whole line in emacs mode and back to
 * where insert mode began in vi insert mode, a fresh line's start: A C-u A C-u.
 */
export function emptyingKeys(shell: string): readonly string[] {
  return shell === "zsh" ? ["A", "C-u", "A", "C-u"] : ["A", "End", "C-u", "A", "C-u"];
}

/**
 * What a refusal of run_command's typing step says: the C-c before it was pressed, and how far
 * the typing went when tmux stopped it part-way ({@link PartialInput}: its keys are those that
 * empty the line, {@link emptyingKeys}, the paste, Enter). Any other failure as it is.
 */
function typingRefusal(
  error: unknown,
  paneId: string,
  jobId: string,
  emptied: readonly string[],
): unknown {
  if (!(error instanceof ToolFailure) || error instanceof Unconfirmed) return error;
  const cc = `Pane ${paneId} was given C-c for a fresh prompt first`;
  if (error instanceof PartialInput && error.ended) {
    return new ToolFailure(`${cc}. ${error.message}`, error.hint);
  }
  if (error instanceof PartialInput) {
    const why = "a person's client came to show it, or it changed otherwise (a person's tmux " +
      "hook held tmux-mcp's step between its commands, and tmux's check before the next one " +
      "no longer held)";
    if (error.went < 2) {
      return new ToolFailure(
        `${cc}, and its line emptied (${
          emptied.join(" ")
        }), but then ${why}. Nothing of the command ` +
          "was typed.",
        error.hint,
      );
    }
    return new ToolFailure(
      `The command was typed into ${paneId} (after a C-c for a fresh prompt), but then ${why}: ` +
        "Enter was not pressed, and the command has not run. Its line waits at the prompt; " +
        `should someone press Enter there, it runs as job ${jobId} (get_command_result reads it).`,
      "Look at the pane (capture_pane) and ask the person before going on.",
    );
  }
  if (error.message.includes("C-c")) return error;
  return new ToolFailure(
    `${error.message} ${cc}; nothing of the command was typed.`,
    error.hint,
  );
}

/**
 * What run_command throws for `error`, raised while its typing step was under way and not
 * confirmed (tmux did not answer it, or the call was cancelled meanwhile): tmux may run the
 * step all the same, so the failure says the command may have been typed, as job `jobId`.
 */
function mayHaveTyped(error: unknown, paneId: string, jobId: string): ToolFailure {
  const why = error instanceof ToolFailure
    ? error.message
    : error instanceof TmuxError && error.kind === "cancelled"
    ? "the call was cancelled while tmux ran the step that types it."
    : `the step that types it failed: ${
      (error instanceof Error ? error.message : String(error)).split("\n")[0]
    }`;
  return new ToolFailure(
    `The command may have been typed into ${paneId} as job ${jobId}: ${why} If it was, it ` +
      "runs (or ran) in the pane.",
    `Do not run it again before get_command_result with jobId ${jobId} says whether it ran ` +
      "(a job never typed reads lost once its claim lapses).",
  );
}

/** The run_command tool (registered with the input tools: input.ts). */
export const runCommand = defineTool({
  name: "run_command",
  title: "Run a shell command in a pane",
  toolset: "execute",
  description: "Run a command in a pane's POSIX shell; returns output (tail), exit status. " +
    "Not done at timeout, or background: a jobId for get_command_result; the pane is " +
    "busy until it ends. Interactive programs: capture_since, send_keys, wait_for_text since.",
  input: {
    paneId: paneIdSchema,
    command: z.string().min(1).max(MAX_COMMAND_CHARS),
    timeoutMs: timeoutField,
    background: z.boolean().optional().describe("Return once typed, with a jobId"),
    force: forceField,
  },
  output: {
    paneId: paneIdSchema,
    exitStatus: int().nullable().describe(
      "The command's exit status (the shell's, if the pane died); null while it runs.",
    ),
    output: z.string().describe("What it printed, between its start and end markers (tail kept)."),
    outputComplete: z.boolean().describe(
      "False when output was cut to the result bound, its start left the pane's history, or " +
        "its shell exited first (its last output may be lost).",
    ),
    omittedBytes: count().describe("Bytes of output cut from the start to fit the bound."),
    timedOut: z.boolean(),
    stillRunning: z.boolean().describe("It did not finish and the pane is still busy with it."),
    paneDied: z.boolean().describe("The pane's shell exited while the command ran."),
    jobId: jobIdSchema.optional().describe(
      "When it had not finished: get_command_result reads it later.",
    ),
    effectiveTimeoutMs: int(),
    timeoutClamped: z.boolean(),
    durationMs: count(),
    transport: z.enum(["control", "polling"]),
  },
  annotations: TYPES,
  async run(args, ctx) {
    const { effective, clamped } = clampTimeout(args.timeoutMs);
    checkDeliverable("The command", args.command, "Nothing was run.");
    const snapshot = await ctx.guardSnapshot(args.paneId);
    const pane = ctx.pane(snapshot, args.paneId);
    const cohort = guardInput(ctx, snapshot, pane, { force: args.force });
    await requireOwned(ctx, cohort, `Running a command in ${pane.id}`);
    if (cohort.length > 1) {
      throw new ToolFailure(
        `Pane ${pane.id} is in window ${pane.windowId} with synchronize-panes on: the command ` +
          `would run in ${cohort.map((p) => p.id).join(", ")} at once.`,
        "Turn synchronize-panes off for that window first, or use send_keys.",
      );
    }
    const table = runsFor(ctx.runner);
    const key = `${serverKey(ctx, snapshot)}${pane.id}`;
    const prior = table.get(key);
    /** A job of this process's found over just now: its mark, if still there, is stale. */
    let overJob: string | null = null;
    if (prior) {
      if (prior.attached || prior.ref === null) throw busyRefusal(pane.id, prior);
      const ref = prior.ref;
      prior.attached = true;
      let over: boolean;
      try {
        over = isOver(await readJob(ctx, ref));
      } finally {
        prior.attached = false;
      }
      if (!over) throw busyRefusal(pane.id, prior);
      if (table.get(key) === prior) table.delete(key);
      const next = table.get(key);
      if (next) throw busyRefusal(pane.id, next);
      overJob = jobIdOf(ref);
    }
    // Taken before anything is awaited: a second call into this pane from this process finds
    // it busy, whichever reaches this point first (the other is refused, naming this one).
    const state: RunState = {
      ref: null,
      command: shownCommand(args.command),
      attached: true,
      since: Date.now(),
    };
    takeRun(table, key, state);
    const nonce = randomHex(10);
    const began = performance.now();
    let watch: PaneWatch | null = null;
    /** Its watch as every read of the job counts it (job_state.ts, hearEnds). */
    let heard = NOT_HEARD;
    /**
     * The watch's reads: as the act's until the command is typed, then, while the call waits
     * for its end, paced as a wait's (TmuxContext.paced), so that two hundred commands waiting
     * do not hold up a list_panes. Every step that acts, and every read that decides the
     * outcome (end marker, exit status, output), goes as a one-off call's, on `ctx`.
     */
    const reads = ctx.paced({ fromReadUntil: true });
    /**
     * The run mark this call puts on the pane (see run_mark.ts), from just before its C-c step
     * until the call gives it back: taken away by the process's close should that end first.
     */
    let left: Leftover | null = null;
    /** Whether the step that types the command's line was tried, and went through. */
    let typing = false;
    let sent = false;
    /** Whether the call saw the command end (once typed). */
    let over = false;
    try {
      // Runs of panes gone since (killed, respawned, their server replaced) are forgotten.
      await forgetEndedRuns(ctx, key);
      watch = await PaneWatch.open(reads, pane);
      const ref: JobRef = {
        paneId: pane.id,
        nonce,
        panePid: watch.start.pid,
        startMs: Date.now(),
        startAbs: watch.start.historySize + watch.start.cursorY,
        serverPid: snapshot.server?.pid ?? 0,
        serverStart: snapshot.server?.startTime ?? 0,
      };
      const jobId = jobIdOf(ref);
      state.ref = ref;
      // What it hears counts for every read of the job here, its follower's too (job_state.ts).
      if (watch.transport === "control") {
        heard = hearEnds(ctx, ref, watch, { beforeTyping: true });
      }
      rememberJob(jobId, placeOf(ctx));
      // Another process's run_command in the pane (or this process's before a restart).
      const seen = await readMark(ctx, pane.id);
      const server = snapshot.server;
      const busy = await markRefusal(ctx, pane.id, server, seen, overJob);
      if (busy) throw busy;
      const deadline = began + effective;
      const byInput = typedProgram(ctx, key, pane.id);
      const settled = await afterPromptPrograms(ctx, key, pane.id, watch.start, deadline, byInput);
      // A program that is no shell is refused at once, unless the pane is one tmux has yet to
      // start a program in (a child of its own, named tmux): a split a moment ago.
      if (!notStartedYet(settled)) requirePosixShell(pane.id, settled.command);
      // A pane created a moment ago may not have drawn its first prompt yet, and until a
      // program holds its terminal tmux names the command the pane was started with (or the
      // shell that is about to exec it, or itself before that): the program is judged only
      // once it has drawn (read with the watch open; tmux checks it again at the instant of
      // typing).
      const now = await awaitFirstOutput(ctx, pane.id, settled, Math.min(effective, 2_000));
      if (paneEnded(watch.start, now)) {
        throw new ToolFailure(
          `Pane ${pane.id} ended before anything was typed.`,
          "list_panes shows what is left.",
        );
      }
      const shell = requirePosixShell(pane.id, now.command);
      const typed = typedCommand(args.command, nonce, shell);
      const drawn = () => Math.min(performance.now() + PROMPT_PROGRAM_MS, deadline);
      // The mark goes on with the C-c, on condition that it is still as judged above: of the
      // calls that judged the pane free at once, one presses C-c and types, the others are
      // refused. It is a claim, which lapses shortly (CLAIM_MS, run_mark.ts): should this
      // process die before typing, the pane is free again within seconds. The step that types
      // replaces it with the mark that says until when this call waits on the command, so
      // that tmux tells whether anything was typed.
      const claimed = claimValue(jobId, Date.now() + CLAIM_MS);
      const typedValue = markValue(
        jobId,
        Date.now() + Math.max(0, deadline - performance.now()),
      );
      left = leave(ctx.runner, ctx.address, markLeftover(pane.id, jobId, claimed, typedValue));
      // The process's end stops the step as the call's cancellation does before the mark is
      // given back: should a tmux process of its own carry the step, it is killed, and tmux
      // drops the rest of its line.
      await left.step((closing) =>
        freshPrompt(
          ctx.orClosing(closing),
          snapshot,
          pane,
          now,
          args.force,
          drawn(),
          byInput,
          {
            format: markFreeFormat(seen),
            take: setMarkCommand(pane.id, claimed),
            held: markHeldFormat(claimed),
            refusal: async () => {
              const value = await readMark(ctx, pane.id);
              if (markFree(seen, value)) return null;
              return await markRefusal(ctx, pane.id, server, value, null) ??
                takenRefusal(pane.id, value);
            },
          },
        )
      );
      // The C-c makes the shell draw its prompt again, running the programs that draw it: the
      // typing waits for them, as the C-c did.
      const waited = performance.now();
      // Judged by a read made right before each attempt, not the call's first: the typing may
      // come seconds later (the prompt's programs), and a person's client read then under the
      // name of one read before (a terminal that re-attached as tmux -CC) is judged as it is
      // now; so are the caller's pane and the owner marks. One read more per attempt.
      const type = async () => {
        const fresh = await ctx.guardSnapshot(pane.id);
        return await typeLine(fresh, ctx.pane(fresh, pane.id));
      };
      const typeLine = (fresh: typeof snapshot, row: typeof pane) =>
        pasteViaBuffer(ctx, fresh, row, typed, {
          enter: true,
          keepNewlines: true,
          force: args.force,
          // Whatever reached the line between the fresh prompt and now is emptied first.
          before: [["send-keys", "-t", pane.id, ...emptyingKeys(shell)]],
          // The shell itself, not a program it started, must be reading the keyboard: a bash
          // script blocked in `read` looks like "bash" too. And it is still the program judged.
          holds: pane.pid,
          command: now.command,
          // And the pane is still this call's: nobody judged its mark stale (or its claim
          // lapsed) meanwhile. The mark then reads typed, before any key: from there on the
          // command may be typed.
          claim: {
            format: markHeldFormat(claimed),
            take: setMarkCommand(pane.id, typedValue),
            // Stopped by tmux before the paste (a person came to watch while a hook of theirs
            // held the step): nothing of the command was typed, and the claim is as it was.
            untake: setMarkCommand(pane.id, claimed),
            held: markHeldFormat(typedValue),
            refusal: async () => {
              const value = await readMark(ctx, pane.id);
              if (value === claimed) return null;
              // Its own job's claim, ended: a reader judged it lapsed (job_state.ts).
              return parseMark(value)?.jobId === jobId
                ? lapsedRefusal(pane.id)
                : takenRefusal(pane.id, value);
            },
          },
        });
      const stillDrawing = () =>
        new ToolFailure(
          `Pane ${pane.id}'s shell (pid ${pane.pid}) was given C-c for a fresh prompt, but a ` +
            `program it started still held the terminal ${
              Math.round(performance.now() - waited)
            } ms later: a prompt command may still be running (PROMPT_COMMAND, a $(...) in ` +
            "PS1, zsh's precmd), or one it started since. Nothing was typed.",
          "Wait for the prompt (wait_for_idle with atPrompt) and try again, or make the " +
            "prompt's commands quicker.",
        );
      typing = true;
      try {
        await whileShellAway(
          ctx,
          drawn(),
          type,
          (away, last) => Promise.resolve(last ? stillDrawing() : away),
        );
      } catch (error) {
        throw typingRefusal(error, pane.id, jobId, emptyingKeys(shell));
      }
      sent = true;
      const { result, marked, died, interrupted, lost } = await awaitRunEnd(ctx, reads, watch, {
        ref,
        jobId,
        state,
        began,
        deadline,
        effective,
        background: args.background,
      });
      const unfinished = died === null && marked.status === null;
      const timedOut = unfinished && !args.background && interrupted === null;
      const stillRunning = unfinished && lost === null && !paneEnded(watch.start, result.probe);
      const transport = watch.transport;
      over = !stillRunning;
      if (stillRunning) {
        state.attached = false;
        // Its end read as the shell prints it, not first when asked (a process the command
        // left running could have written a valid end over it by then): jobs.ts, followJob.
        // Only where the pane's output comes as events: polled, a follower nobody asked for
        // would start tmux processes every tenth of a second for as long as the job runs.
        // Its watch open before this call's closes, which hands on what it heard: no gap.
        // Past the wait for it, the call returns; its watch stays open, heard by every read of
        // the job, until the follower takes over (or stops), which closes it.
        if (watch.transport === "control") {
          const handOver = heard.handOver;
          watch = null;
          heard = NOT_HEARD;
          await untilHandedOver(followJob(ctx, ref, handOver));
        }
      } else table.delete(key);
      // Still running: the mark stays, without a call waiting on it; else it is given back.
      await swapMark(ctx, pane.id, typedValue, stillRunning ? jobId : null);
      left.clear();
      if (marked.status !== null) noteMoment(ctx.runner, key, false);
      // Unfinished, and another run_command's line typed and begun after it (by hand, or once
      // this job was judged over): what follows that line is the other command's.
      const cutAtNext = marked.status === null && marked.beforeNext !== undefined;
      const budget = Math.max(1_000, ctx.config.maxResultBytes - 2_048);
      const output = keepTail(cutAtNext ? marked.beforeNext! : marked.output, budget);
      const cut = cutAtNext ? marked.beforeNextCutBytes : marked.cutBytes;
      const omittedBytes = output.omittedBytes + (cut ?? 0);
      const exitStatus = marked.status ?? died?.deadStatus ?? null;
      // The pane gone (or respawned) before any marker was read: whatever it printed is gone.
      const unread = !marked.begun && marked.status === null &&
        (!result.probe.exists || result.probe.pid !== ref.panePid);
      // Text below the cursor once the end marker is out: the command moved the cursor up, and
      // some of its output is below the marker (or went under it).
      const overwritten = marked.status !== null && await textBelowCursor(ctx, pane.id);
      const paneDied = died !== null || (unfinished && lost === null && !stillRunning);
      // Its shell gone before the end marker: what it printed last may never have reached the
      // screen (DIED_OUTPUT_NOTE).
      const diedFirst = paneDied && marked.status === null;
      const data = {
        paneId: pane.id,
        exitStatus,
        output: output.text,
        // Neither marker found in a pane still there: nothing printed yet, nothing lost.
        // A second begin or end marker: a program the command ran printed one (job_markers.ts).
        outputComplete: (marked.begun || (marked.status === null && marked.output === "")) &&
          !marked.twoBegins && !marked.twoEnds && !unread && !overwritten && !cutAtNext &&
          !diedFirst && omittedBytes === 0,
        omittedBytes,
        timedOut,
        stillRunning,
        paneDied,
        ...(stillRunning || args.background || lost !== null ? { jobId } : {}),
        effectiveTimeoutMs: effective,
        timeoutClamped: clamped,
        durationMs: Math.round(performance.now() - began),
        transport,
      };
      const summary = interrupted !== null && lost !== null
        ? `${pane.id}: over after ${data.durationMs} ms, no exit status: ${lost}. The pane is free.`
        : lost !== null
        ? `${pane.id}: not running after ${effective} ms: ${lost}. The pane is free.`
        : data.paneDied && !result.probe.exists
        ? `${pane.id}: the pane is gone: it closed while the command ran (its shell exited, or ` +
          "the pane, its window or its session was killed)."
        : data.paneDied && result.probe.pid !== ref.panePid
        ? `${pane.id}: the pane was respawned while the command ran: its shell was killed and ` +
          "it runs another process now, so the command's outcome cannot be read."
        : data.paneDied
        ? `${pane.id}: the pane's shell exited while the command ran${
          endedBy(exitStatus, died?.deadSignal ?? null)
        }.${diedFirst ? ` ${DIED_OUTPUT_NOTE[0].toUpperCase()}${DIED_OUTPUT_NOTE.slice(1)}.` : ""}`
        : args.background && stillRunning
        ? `${pane.id}: started in the background as job ${jobId}; the pane is busy until it ends.`
        : timedOut
        ? `${pane.id}: still running after ${effective} ms as job ${jobId}; the pane is busy until ` +
          `it ends.${result.marked.held ? HELD_NOTE : ""}`
        : `${pane.id}: exited with status ${marked.status}.${
          marked.startNote ? ` ${marked.startNote}` : ""
        }`;
      // Cancelled once the command was typed, the call's answer is no task's: the task says
      // what ran (task_store.ts).
      tellCancelledTask(
        ctx.signal,
        `The call was cancelled too late: the command was typed into ${pane.id} as job ` +
          `${jobId}. ${summary}`,
      );
      return { data, summary };
    } catch (error) {
      // Typed, or perhaps (tmux did not confirm the step, or the call was cancelled in it): the
      // pane counts as busy until the command is seen to end. Refused: nothing was typed.
      const maybeTyped = sent ||
        (typing && !(error instanceof ToolFailure && !(error instanceof Unconfirmed)));
      if (maybeTyped) state.attached = false;
      else if (table.get(key) === state) table.delete(key);
      // tmux tells from the mark whether the typing step began: then the mark stays, with no
      // call waiting on it; else it goes. A typing step tmux has yet to run then types nothing.
      await left?.undo();
      // Once typed, never a failure that reads as "nothing ran, try again" (run_failure.ts);
      // perhaps typed (tmux did not confirm the typing step), a failure that names the job.
      const thrown = sent && state.ref
        ? afterTyped(error, pane.id, jobIdOf(state.ref), over, ctx.socketLabel)
        : maybeTyped && state.ref
        ? mayHaveTyped(error, pane.id, jobIdOf(state.ref))
        : error;
      // Flagged, so that a task cancelled meanwhile keeps it as its status (task_store.ts):
      // the command runs (or ran) whatever the task says.
      if (maybeTyped && thrown instanceof ToolFailure) {
        thrown.typed = true;
        tellCancelledTask(ctx.signal, thrown);
      }
      throw thrown;
    } finally {
      heard.forget();
      watch?.close();
      reads.paceOver();
    }
  },
});
