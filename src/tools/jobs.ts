/**
 * Jobs: a command `run_command` typed that may outlive the call, read back by
 * `get_command_result` (toolset inspect) — from this process or from the next one.
 *
 * Nothing about a job is kept only in memory. Its id carries what is needed to find it again
 * in its pane: the pane, the command's markers (a random nonce), the pid of the pane's process
 * when it was typed (a respawned pane has another), where the pane's cursor was (so reading
 * starts near the beginning, not at the top of a long history), when it started, and the tmux
 * server's pid and start time (a server restarted in a container has the same pid again, and
 * panes of the same ids and pids). The outcome lives in the pane itself: the command is wrapped
 * so that the shell prints a begin marker before it and an end marker with its exit status (and
 * the time) after it; the markers are printed from separate `printf` words, so the echo of the
 * typed line never contains them. The end marker also carries a check the shell computes as the
 * command ends (see `endCheck` in job_markers.ts): cursor moves and edits of what is on screen
 * cannot make it. A program that reads the screen (`tmux capture-pane`) can print it, so an
 * end marker counts only once the pane's shell holds its terminal again (see `endThatCounts` in
 * job_state.ts). A job read as ended is also kept in memory as first read, so that it reads the
 * same every time in this process, whatever later changes the pane.
 *
 * A job is:
 * - `exited` once its end marker is in the pane and the shell holds its terminal again, or the
 *   pane died after it (with the exit status and duration);
 * - `running` while the shell does not hold its terminal (a program it started is in the
 *   foreground), with no end marker or one that does not count yet, or it was typed a moment
 *   ago;
 * - `lost` when the outcome can never be read: the pane was killed or respawned, its process
 *   exited, or the shell is back at its prompt without an end marker (interrupted, or the
 *   marker left the history).
 *
 * Here are what reports a job: `get_command_result` and the job resource's reading and
 * watching. The id is job_id.ts's, the markers job_markers.ts's, reading a job's state
 * job_state.ts's and waiting for it job_wait.ts's.
 *
 * @module
 */

import { z } from "zod";
import { TmuxContext } from "../mcp/context.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import { clip, ToolFailure } from "../mcp/errors.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { count, int, paneIdSchema } from "../mcp/schemas.ts";
import { keepTail } from "./text_tail.ts";
import { MAX_TIMEOUT_MS } from "../mcp/wait_timeouts.ts";
import {
  type JobServing,
  parseJobUri,
  placeOf,
  refuseFutureJob,
  rememberJob,
} from "./job_resource.ts";
import { releaseMark } from "./run_mark.ts";
import { forgetOverRun } from "./busy_panes.ts";
import { Backoff, MAX_RETRY_MS, pause } from "./live.ts";
import { jobIdOf, jobIdSchema, type JobRef, parseJobId } from "./job_id.ts";
import { endSeen, HELD_NOTE, isOver, type JobView, readJob } from "./job_state.ts";
import { waitForJob } from "./job_wait.ts";
import { AFTER_GONE, GONE_BY_ITSELF, goneServer } from "./pane_probe.ts";
import { SERVER_ONLY } from "../tmux/snapshot.ts";
import { sameServer, type ServerIdentity, serversText } from "../tmux/server_identity.ts";

// ---------------------------------------------------------------------------------------------
// get_command_result

/** The fields a job reports (in `get_command_result`, and the job resource). */
export const jobFields = {
  jobId: jobIdSchema,
  paneId: paneIdSchema,
  state: z.enum(["running", "exited", "lost"]),
  exitStatus: int().nullable().describe("Set once exited."),
  lostReason: z.string().nullable().describe("Why it is lost (state lost), else null."),
  output: z.string().describe("What it printed since it started (tail kept)."),
  outputComplete: z.boolean().describe(
    "False when output was cut to the bound, its start left the pane's history, or its " +
      "shell exited first (its last output may be lost).",
  ),
  omittedBytes: count().describe("Bytes of output cut from the start."),
  durationMs: count().describe("Run time so far, or until it ended."),
};

/** What a job reports, as {@link jobFields} declares it. */
export type JobReport = z.infer<z.ZodObject<typeof jobFields>>;

/**
 * A job's report, its output bounded to `maxBytes` as JSON on the wire (the tail kept;
 * `twice`: for a report that travels as JSON text inside JSON, see keepTail).
 */
export function jobReport(
  jobId: string,
  ref: JobRef,
  view: JobView,
  maxBytes: number,
  twice = false,
): JobReport {
  const output = keepTail(view.output, Math.max(1_000, maxBytes), twice);
  return {
    jobId,
    paneId: ref.paneId,
    state: view.state,
    exitStatus: view.exitStatus,
    lostReason: view.lostReason,
    output: output.text,
    // A marker a program printed (a second begin or end): the output may not be whole.
    outputComplete: view.complete && !view.forged && output.omittedBytes === 0 && !view.cutBytes,
    omittedBytes: output.omittedBytes + (view.cutBytes ?? 0),
    durationMs: Math.round(view.durationMs),
  };
}

/** A one-line account of a job. */
export function jobSummary(ref: JobRef, view: JobView): string {
  switch (view.state) {
    case "exited":
      return `${ref.paneId}: the job exited with status ${view.exitStatus} after ${
        Math.round(view.durationMs / 100) / 10
      } s.${view.startNote ? ` ${view.startNote}` : ""}`;
    case "lost":
      return `${ref.paneId}: the job is lost: ${view.lostReason}.`;
    default:
      if (view.claimedUntil !== undefined) {
        return `${ref.paneId}: the job is not typed yet: the run_command that runs it took the ` +
          `pane and types it within ${
            Math.max(1, Math.ceil((view.claimedUntil - Date.now()) / 1000))
          } s, or never.`;
      }
      return `${ref.paneId}: the job is still running (${
        Math.round(view.durationMs / 1000)
      } s so far).${view.held ? HELD_NOTE : ""}`;
  }
}

/** The tmux server on the context's socket; undefined when none runs there. */
async function serverOf(ctx: TmuxContext): Promise<ServerIdentity | undefined> {
  // Which server it is, is all it needs: no session, window or pane is read.
  const snapshot = await ctx.snapshot(SERVER_ONLY);
  return snapshot.server ?? undefined;
}

/** The server job `ref` was started on. */
function serverOfJob(ref: JobRef): ServerIdentity {
  return { pid: ref.serverPid, startTime: ref.serverStart };
}

/** The job an id names on this call's tmux server, or a failure saying why not. */
export async function jobOf(ctx: TmuxContext, jobId: string): Promise<JobRef> {
  const ref = parseJobId(jobId);
  if (!ref) {
    throw new ToolFailure(
      `${JSON.stringify(clip(jobId))} is not a job id.`,
      "Use the jobId run_command returned.",
    );
  }
  refuseFutureJob(jobId);
  const server = await serverOf(ctx);
  const own = serverOfJob(ref);
  if (server !== undefined && !sameServer(server, own)) {
    throw new ToolFailure(
      server.pid === own.pid
        ? `Job ${jobId} was started on another tmux server, since ended: the server on ` +
          `${ctx.socketLabel} was restarted with the same pid (${serversText(own, server)}).`
        : `Job ${jobId} was started on another tmux server (pid ${ref.serverPid}; ` +
          `${ctx.socketLabel} is pid ${server.pid}).`,
      "Pass the socket_name the job was started with; if that server has ended, so has the job.",
    );
  }
  if (server === undefined) {
    throw new ToolFailure(
      `No tmux server is running on ${ctx.socketLabel}: job ${jobId} ended with its server.`,
      "If the job was started on another socket, pass that socket_name; list_servers shows the " +
        "servers that are running.",
    );
  }
  return ref;
}

const getCommandResult = defineTool({
  name: "get_command_result",
  title: "Read a run_command job",
  toolset: "inspect",
  description:
    "State, exit status and output of a run_command job (its jobId), also after a restart " +
    "of this server. waitMs: wait for it to end (0 answers now).",
  input: {
    jobId: jobIdSchema,
    waitMs: int().min(0).optional().describe(`ms; default 0, at most ${MAX_TIMEOUT_MS}`),
  },
  output: {
    ...jobFields,
    waitedMs: count(),
    waitClamped: z.boolean(),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const ref = await jobOf(ctx, args.jobId);
    rememberJob(args.jobId, placeOf(ctx));
    const wanted = args.waitMs ?? 0;
    const waitMs = Math.min(MAX_TIMEOUT_MS, wanted);
    const began = performance.now();
    const view =
      await (waitMs > 0 ? waitForJob(ctx, ref, began + waitMs, { began }) : readJob(ctx, ref))
        .catch((error) => {
          // The server went while the job was read: the job (and its pane) went with it.
          const gone = goneServer(error, ctx.socketLabel, ref.paneId);
          if (!gone) throw error;
          throw new ToolFailure(
            `Job ${args.jobId} ended with its tmux server: the server on ${gone.label} went ` +
              `away while the call read the job (${GONE_BY_ITSELF}). There is no exit status ` +
              `to read.${gone.restarted}`,
            `Whatever the command did before then stays done. ${AFTER_GONE}`,
          );
        });
    const budget = Math.max(1_000, ctx.config.maxResultBytes - 2_048);
    const data = {
      ...jobReport(args.jobId, ref, view, budget),
      waitedMs: Math.round(performance.now() - began),
      waitClamped: waitMs !== wanted,
    };
    if (view.state === "lost") ctx.log("warning", `job in ${ref.paneId} lost: ${view.lostReason}`);
    if (isOver(view)) {
      await releaseMark(ctx, ref.paneId, jobIdOf(ref), endSeen(ref, view));
      forgetOverRun(ctx, ref);
    }
    return { data, summary: jobSummary(ref, view) };
  },
});

// ---------------------------------------------------------------------------------------------
// The job resource

/** The context of the socket (and host) a job URI names. */
function jobContext(
  ctx: TmuxContext,
  place: { socketName?: string; host?: string },
  signal: AbortSignal,
) {
  return new TmuxContext(
    ctx.runner,
    ctx.config,
    place.socketName ?? (place.host === undefined ? ctx.address.socketName : undefined),
    signal,
    () => Promise.resolve(),
    ctx.log,
    place.host,
  );
}

/**
 * How long one wait of a job watch lasts before it starts the next (the next opens its watch
 * before the last one's closes: waitForJob's `handOn`). A field, for tests.
 */
export const followSpan = { ms: 10 * 60_000 };

/** How a job is read and watched as a resource (declared in job_resource.ts). */
export const JOB_SERVING: JobServing = {
  read: async (uri, _variables, ctx) => {
    const job = parseJobUri(uri, ctx);
    const { jobId } = job;
    const on = job.socketName || job.host ? jobContext(ctx, job, ctx.signal) : ctx;
    const ref = await jobOf(on, jobId);
    const view = await readJob(on, ref);
    rememberJob(jobId, placeOf(on));
    if (isOver(view)) forgetOverRun(on, ref);
    const budget = Math.max(1_000, ctx.config.maxResultBytes - 2_048);
    // The text is JSON, and travels as a JSON string: the output's escapes are escaped twice.
    return JSON.stringify(jobReport(jobId, ref, view, budget, true));
  },
  watch: (uri, ctx, changed) => {
    const stop = new AbortController();
    const follow = async () => {
      const job = parseJobUri(uri, ctx);
      await followUntilOver(jobContext(ctx, job, stop.signal), job.ref, changed);
    };
    follow().catch(() => {
      // The URI names no job (a reader says why): nothing to watch.
      if (!stop.signal.aborted) changed();
    });
    // Ready at once: the first look reads the job as it is, and tells if it is already over.
    return { ready: Promise.resolve(), stop: () => stop.abort() };
  },
};

/**
 * Waits until job `ref` is over, or its server is gone or replaced, or `on`'s signal stops it,
 * calling `changed` then (and once when reads start failing: something may have changed
 * unseen). A failed read is tried again, after a pause that grows. Returns the view that
 * showed it over, else null.
 */
async function followUntilOver(
  on: TmuxContext,
  ref: JobRef,
  changed: () => void,
  handover?: () => Promise<void>,
): Promise<JobView | null> {
  /** The watch of the wait before, open until the next one's is (see waitForJob). */
  let next = handover;
  try {
    return await followSpans(on, ref, changed, () => {
      const from = next;
      next = undefined;
      return from;
    }, (h) => next = h);
  } finally {
    await next?.().catch(() => {});
  }
}

/** {@link followUntilOver}'s waits, one span after another, each taking over from the last. */
async function followSpans(
  on: TmuxContext,
  ref: JobRef,
  changed: () => void,
  takeHandover: () => (() => Promise<void>) | undefined,
  handOn: (handover: () => Promise<void>) => void,
): Promise<JobView | null> {
  const backoff = new Backoff();
  /** Whether the last try failed: the subscriber is told once when they start failing. */
  let failing = false;
  while (!on.signal.aborted) {
    const began = performance.now();
    // Each wait takes over from the watch before it (see waitForJob).
    const from = takeHandover();
    try {
      // Read on another server (its successor on the socket, perhaps with the same pid and
      // pane ids), the job's pane would be another pane: the job ended with its server.
      const server = await serverOf(on);
      if (!server || !sameServer(server, serverOfJob(ref))) {
        changed();
        return null;
      }
      const view = await waitForJob(on, ref, performance.now() + followSpan.ms, {
        progress: false,
        handover: from,
        handOn,
      });
      failing = false;
      backoff.reset();
      if (isOver(view)) {
        forgetOverRun(on, ref);
        if (view.state === "lost") {
          on.log("warning", `job in ${ref.paneId} lost: ${view.lostReason}`);
        }
        changed();
        return view;
      }
    } catch {
      // Failed, perhaps before its watch was open: what the watch before it heard is taken in
      // now (again, if it was: nothing is counted twice), and the call waiting on it goes on.
      await from?.().catch(() => {});
      // Cancelled, or tmux did not answer in time (a person's slow hook, a loaded machine),
      // or its server went: a watch that gave up here would never tell the job's end.
      if (on.signal.aborted) return null;
      // A try that ran a good while before it failed starts a new run of failures.
      if (performance.now() - began >= MAX_RETRY_MS) {
        failing = false;
        backoff.reset();
      }
      // Something may have changed unseen: a reader says what (or why it cannot).
      const told = !failing;
      if (!failing) changed();
      failing = true;
      // A job whose server is gone or was replaced ended with it: nothing more to watch.
      const server = await serverOf(on).catch(() => null);
      if (server !== null && !(server && sameServer(server, serverOfJob(ref)))) {
        if (!told) changed();
        return null;
      }
      await pause(backoff.next(), on.signal);
    }
  }
  return null;
}

/** Jobs followed after their run_command returned ({@link followJob}), by runner. */
const followed = new WeakMap<TmuxRunner, Map<string, AbortController>>();
/**
 * At most this many are followed at once: a newer one stops the oldest. (Each is a watch of its
 * pane's output: 16 busy ones cost about 3% of a core.)
 */
export const MAX_FOLLOWED = 16;

/**
 * Follows job `ref`, which run_command typed and returned before it ended (in the background,
 * or at its timeout), until it is over: its end is read as the shell prints it, and kept as
 * first read (job_state.ts), so that get_command_result here reports the status the shell
 * printed even when a process the command left running later writes a valid end marker over
 * it (it can read the check's terms on screen). The process that typed it keeps it; another
 * process reads what the pane shows then. Its end seen, the pane's run mark is given back. At
 * most {@link MAX_FOLLOWED} at once; stopped when the runner closes.
 *
 * `handover` takes in what run_command's watch of the pane heard and closes it (see `hearEnds`
 * in job_state.ts): called once the follower's own watch is open, before it reads the job, so
 * that the output stream is watched without a gap (a process the command left running can
 * write over the shell's end the moment the shell prints it, and the stream is then all that
 * shows the shell's); called too, once, when the follower stops without getting that far.
 * Resolves once it was called.
 */
export function followJob(
  ctx: TmuxContext,
  ref: JobRef,
  handover: () => Promise<void>,
): Promise<void> {
  const runner = ctx.runner;
  let jobs = followed.get(runner);
  if (jobs === undefined) {
    const mine = new Map<string, AbortController>();
    followed.set(runner, mine);
    runner.onClose(() => {
      for (const stop of mine.values()) stop.abort();
      mine.clear();
      return Promise.resolve();
    });
    jobs = mine;
  }
  const key = `${ctx.socketLabel}#${jobIdOf(ref)}`;
  jobs.get(key)?.abort();
  const stop = new AbortController();
  jobs.set(key, stop);
  if (jobs.size > MAX_FOLLOWED) {
    const [oldest, itsStop] = jobs.entries().next().value!;
    itsStop.abort();
    jobs.delete(oldest);
  }
  const on = jobContext(ctx, placeOf(ctx), stop.signal);
  let handed: () => void = () => {};
  const taken = new Promise<void>((resolve) => handed = resolve);
  /** Once: by the follower's first wait, else as it stops without getting that far. */
  let takingOver: Promise<void> | null = null;
  const takeOver = () =>
    takingOver ??= (async () => {
      try {
        await handover();
      } finally {
        handed();
      }
    })();
  const follow = async () => {
    const view = await followUntilOver(on, ref, () => {}, takeOver);
    // Its end seen: the pane is free for every process at once (as get_command_result frees it).
    if (view !== null && !stop.signal.aborted) {
      await releaseMark(on, ref.paneId, jobIdOf(ref), endSeen(ref, view));
    }
  };
  const done = async () => {
    await takeOver().catch(() => {});
    if (jobs.get(key) === stop) jobs.delete(key);
  };
  follow().then(done, done);
  return taken;
}

/**
 * Registers the job tools. The job resource is the builder's to add, before any SDK server is
 * attached: this one (`jobResource(JOB_SERVING)`) where the tools are loaded at start, the
 * lazy one (job_resource.ts) where they are loaded on first use.
 */
export function registerJobTools(registry: ToolRegistry): void {
  registry.add(getCommandResult);
}
