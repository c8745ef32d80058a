/**
 * The job resource (`tmux://job/{jobId}`) as far as it can be declared without the job tools:
 * its name, template, listing and completion (the job ids this process handed out or read).
 * Reading and watching a job are jobs.ts's; {@link LAZY_JOB_RESOURCE} loads it on first use,
 * so a server that never runs a job never loads the job tools.
 *
 * @module
 */

import type { Feed, ResourceSpec } from "../mcp/resources.ts";

/** Job ids this process started or read, newest last: for completion and resources/list. */
const known = new Set<string>();
const MAX_KNOWN = 100;

/** Remembers a job id for completion and the resource list. */
export function rememberJob(jobId: string): void {
  known.delete(jobId);
  known.add(jobId);
  if (known.size > MAX_KNOWN) known.delete(known.values().next().value!);
}

/** A job resource's URI. */
export function jobUri(jobId: string): string {
  return `tmux://job/${jobId}`;
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
      "server.",
    mimeType: "application/json",
    uri: "tmux://job/{jobId}",
    list: () =>
      Promise.resolve(
        [...known].reverse().map((jobId) => ({
          uri: jobUri(jobId),
          name: `job in %${jobId.split("-")[0]}: ${jobId}`,
        })),
      ),
    complete: {
      jobId: (typed) => Promise.resolve([...known].reverse().filter((id) => id.startsWith(typed))),
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
