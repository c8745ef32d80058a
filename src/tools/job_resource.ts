/**
 * The job resource (`tmux://job/{jobId}`) as far as it can be declared without the job tools:
 * its name, template, listing and completion (the job ids this process handed out or read).
 * Reading and watching a job are jobs.ts's; {@link LAZY_JOB_RESOURCE} loads it on first use,
 * so a server that never runs a job never loads the job tools.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { clip, ToolFailure } from "../mcp/errors.ts";
import { socketNameField } from "../mcp/tool_spec.ts";
import type { Feed, ResourceSpec } from "../mcp/resource_spec.ts";
import { type JobRef, parseJobId } from "./job_id.ts";
import { refuseUnknownHost } from "./resources.ts";

/**
 * How far in the future a job id's start time may be (this machine's clock stepped back since
 * run_command), beyond which the id was not handed out by run_command: such a job would read
 * as running for ever, and its watch poll for ever.
 */
export const MAX_START_SKEW_MS = 5 * 60_000;

/**
 * Throws a ToolFailure when `jobId`'s start time (its fourth part, base 36 ms since the epoch)
 * is more than {@link MAX_START_SKEW_MS} in the future; an id of another shape is left to the
 * job tools to refuse.
 */
export function refuseFutureJob(jobId: string, now = Date.now()): void {
  const start = parseInt(jobId.split("-")[3] ?? "", 36);
  if (!Number.isSafeInteger(start) || start <= now + MAX_START_SKEW_MS) return;
  throw new ToolFailure(
    `${JSON.stringify(clip(jobId))} is not a job id run_command returned: its start time is ` +
      `${Math.round((start - now) / 60_000)} min in the future.`,
    "Use the jobId run_command returned.",
  );
}

/** Where a job runs: the tmux server by socket name (absent: the default), on an SSH host. */
export interface JobPlace {
  readonly socketName?: string;
  readonly host?: string;
}

/** What a `tmux://job/...` URI names: a job, and where it runs. */
export interface JobTarget extends JobPlace {
  readonly jobId: string;
  readonly ref: JobRef;
}

/**
 * The job, socket and host a `tmux://job/...` URI names, or a ToolFailure saying why it names
 * none here: not a job id, one no run_command handed out (see {@link refuseFutureJob}), a
 * socket query that is no socket name (or two), a host not given to `--ssh`. A read and a
 * subscription both ask this, so what a read refuses is never subscribed to.
 */
export function parseJobUri(uri: string, ctx: TmuxContext): JobTarget {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ToolFailure(`${clip(uri)} is not a URI.`);
  }
  const m = /^\/([^/]+)$/.exec(url.pathname);
  const params = [...url.searchParams.keys()];
  if (url.protocol !== "tmux:" || url.host !== "job" || !m || url.hash !== "") {
    throw new ToolFailure(
      `No resource ${clip(uri)}.`,
      "tmux://job/{jobId} takes a run_command jobId.",
    );
  }
  if (
    params.some((p) => p !== "socket" && p !== "host") || new Set(params).size < params.length
  ) {
    throw new ToolFailure(
      `${clip(uri)}: the only query a job resource takes is ?socket=NAME, and host=HOST (--ssh).`,
    );
  }
  const socket = url.searchParams.get("socket") ?? undefined;
  if (socket !== undefined && (socket === "" || !socketNameField.safeParse(socket).success)) {
    throw new ToolFailure(`${clip(uri)}: socket must be a tmux socket name.`);
  }
  const jobId = m[1];
  const ref = parseJobId(jobId);
  if (!ref) {
    throw new ToolFailure(
      `${JSON.stringify(clip(jobId))} is not a job id.`,
      "Use the jobId run_command returned.",
    );
  }
  refuseFutureJob(jobId);
  const host = url.searchParams.get("host") ?? undefined;
  refuseUnknownHost(host, ctx);
  return {
    jobId,
    ref,
    ...(socket !== undefined && { socketName: socket }),
    ...(host !== undefined && { host }),
  };
}

/**
 * Job ids this process started or read, newest last, with where each runs: for completion and
 * resources/list.
 */
const known = new Map<string, JobPlace>();
const MAX_KNOWN = 100;

/**
 * Where a call's jobs run, as a job URI says it: nothing for the server's own tmux server (the
 * URI is bare), its socket name for another, and the SSH host.
 */
export function placeOf(ctx: TmuxContext): JobPlace {
  const own = ctx.host === undefined && ctx.address === ctx.config.address;
  return {
    ...(!own && ctx.address.socketName !== undefined &&
      { socketName: ctx.address.socketName }),
    ...(ctx.host !== undefined && { host: ctx.host }),
  };
}

/** Remembers a job id, and where it runs, for completion and the resource list. */
export function rememberJob(jobId: string, place: JobPlace = {}): void {
  known.delete(jobId);
  known.set(jobId, place);
  if (known.size > MAX_KNOWN) known.delete(known.keys().next().value!);
}

/** A job resource's URI: its server's socket and its host in the query, where it has them. */
export function jobUri(jobId: string, place: JobPlace = {}): string {
  const query = [
    ...(place.socketName !== undefined ? [`socket=${encodeURIComponent(place.socketName)}`] : []),
    ...(place.host !== undefined ? [`host=${encodeURIComponent(place.host)}`] : []),
  ];
  return `tmux://job/${jobId}${query.length ? `?${query.join("&")}` : ""}`;
}

/** What reads and watches a job (jobs.ts). */
export type JobServing = Pick<ResourceSpec, "read" | "watch">;

/** The job resource, served by `serving`. */
export function jobResource(serving: JobServing): ResourceSpec {
  return {
    name: "tmux-job",
    title: "run_command job",
    description: "A run_command job's state, exit status and output (JSON, as " +
      "get_command_result answers); updated when it ends. Add ?socket=NAME for another tmux " +
      "server, &host=HOST for an SSH host.",
    mimeType: "application/json",
    uri: "tmux://job/{jobId}",
    tools: ["get_command_result"],
    // What names no job here (a forged id whose job would run for ever, too) is refused before
    // any watch starts.
    check: (uri, ctx) => void parseJobUri(uri, ctx),
    list: () =>
      Promise.resolve(
        [...known].reverse().map(([jobId, place]) => ({
          uri: jobUri(jobId, place),
          name: `job in %${jobId.split("-")[0]}: ${jobId}`,
        })),
      ),
    complete: {
      jobId: (typed) =>
        Promise.resolve([...known.keys()].reverse().filter((id) => id.startsWith(typed))),
    },
    ...serving,
  };
}

/** How jobs.ts serves the resource, loaded once. */
const served = () => import("./jobs.ts").then((m) => m.JOB_SERVING);

/** The job resource, loading the job tools on its first read or watch. */
export const LAZY_JOB_RESOURCE: ResourceSpec = jobResource({
  read: async (uri, variables, ctx) => await (await served()).read(uri, variables, ctx),
  watch: (uri, ctx, changed) => {
    let stopped = false;
    let inner: Feed | null = null;
    const ready = served().then((serving) => {
      if (stopped) return;
      inner = serving.watch!(uri, ctx, changed);
      return inner.ready;
    }).catch(() => {
      // Not loaded: a read says why.
      if (!stopped) changed();
    });
    return {
      ready,
      stop: () => {
        stopped = true;
        inner?.stop();
      },
    };
  },
});
