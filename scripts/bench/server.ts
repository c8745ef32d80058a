/**
 * The server under test as the bench starts and drives it: the `start` task's command and a
 * clean environment, a tool call that throws on an error result, and its memory (RSS now, at
 * peak, and once idle and ready, from source or from the bundle).
 *
 * @module
 */

import { startCommand, StdioServer } from "../../tests/helpers/stdio.ts";

/** The part of a tools/call result the bench reads. */
export type Result = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: { text: string }[];
};

/** Calls tool `name`; throws when the result is an error, so a broken call is no figure. */
export async function call(
  server: StdioServer,
  name: string,
  args: Record<string, unknown>,
): Promise<Result> {
  const r = await server.callTool(name, args) as Result;
  if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`);
  return r;
}

/** A process's resident memory in MB: now (VmRSS), or its peak so far (VmHWM). */
export function rss(pid: number, which: "VmRSS" | "VmHWM" = "VmRSS"): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(new RegExp(`${which}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
}

/**
 * A process's resident memory in MB once it holds still: read every 250 ms until it has not
 * grown for a second (at most 5 s). A server answers its first requests before the runtime has
 * finished with them (compiling, sweeping, growing its heap): read 300 ms after, the figure was
 * about 1 MB under where it settles a second later and stays.
 */
export async function settledRss(pid: number): Promise<number> {
  const until = performance.now() + 5_000;
  let last = rss(pid);
  let still = 0;
  while (still < 4 && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = rss(pid);
    still = now > last ? 0 : still + 1;
    last = Math.max(last, now);
  }
  return last;
}

/** A process's peak resident memory so far in MB (VmHWM). */
export function peakRss(pid: number): number {
  return rss(pid, "VmHWM");
}

/**
 * RSS of a server once it is whole and idle: after tools/list (which the front desk answers
 * while the SDK and the tools still load) a `prompts/list` that only the SDK answers, then
 * until its memory holds still ({@link settledRss}). Read right after tools/list, the figure
 * would miss most of the server.
 */
export async function readyIdleRss(server: StdioServer): Promise<number> {
  await server.request("tools/list");
  await server.request("prompts/list");
  return await settledRss(server.child.pid);
}

/** The `start` task's command: the runtime and its flags, then main.ts. */
export const { cmd, args: startArgs } = startCommand();

/** The environment without TMUX and TMUX_PANE, so a server never takes the bench's own tmux. */
export const env = Deno.env.toObject();
delete env.TMUX;
delete env.TMUX_PANE;

/**
 * How long a server is left idle for its long-idle figure: V8's memory reducer, which gives
 * back what start-up left (about 5 MB here), runs once a process has been idle 30 s
 * (`--gc-memory-reducer-start-delay-ms`).
 */
export const LONG_IDLE_MS = 35_000;

/**
 * RSS once idle and ready of the server run from the bundle the binaries embed, without
 * the project's config, as the binary runs it (no TypeScript or npm resolution at start), and
 * with `long`, again once it has been idle {@link LONG_IDLE_MS}; null when the bundle was not
 * built (`deno task bundle`).
 */
export async function bundleIdleRss(
  socket: string,
  long = false,
): Promise<{ idle: number; longIdle: number | null } | null> {
  const bundle = new URL("../../dist/bundle/main.js", import.meta.url).pathname;
  if (!(await Deno.stat(bundle).then(() => true, () => false))) return null;
  let idle = NaN;
  let longIdle: number | null = null;
  // The first start of a bundle also fills Deno's code cache: measure the second.
  for (let i = 0; i < 2; i++) {
    const server = new StdioServer(
      cmd,
      [...startArgs.slice(0, -1), "--no-config", bundle, "--socket", socket],
      env,
    );
    try {
      await server.initialize();
      const ready = performance.now();
      idle = await readyIdleRss(server);
      if (long && i === 1) {
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, LONG_IDLE_MS - (performance.now() - ready)))
        );
        longIdle = rss(server.child.pid);
      }
    } finally {
      await server.closeStdin();
    }
  }
  return { idle, longIdle };
}
