/**
 * The moments after a command of run_command's own ends in a pane, or send_keys or paste_text
 * type into it: the pane's shell then runs the programs that draw its prompt (PROMPT_COMMAND, a
 * `$(...)` in PS1, zsh's precmd), or an outer shell takes the terminal back after an `exit`, and
 * tmux names another program as the pane's for a moment. What was noted when, per server, and
 * how run_command waits those moments out without waiting on a program typed input started.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { execFast } from "../tmux/control.ts";
import { isShellCommand } from "../tmux/prompt.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import type { ServerIdentity } from "../tmux/server_identity.ts";
import type { Snapshot } from "../tmux/snapshot.ts";
import { type PaneProbe, probePane } from "./pane_probe.ts";
import { sleep } from "./shell_guard.ts";

/**
 * How long a program the shell runs to draw its prompt (PROMPT_COMMAND, a `$(...)` in PS1 such
 * as a git branch, zsh's precmd) may hold the terminal before run_command gives up typing: a
 * git prompt in a large repository takes about a second.
 */
export const PROMPT_PROGRAM_MS = 2_000;

/**
 * Names this server's lifetime for per-server caches: socket, server pid and start time (a
 * server restarted in a pid namespace of its own, a container, has the same pid again).
 */
export function serverKey(ctx: TmuxContext, snapshot: Snapshot): string {
  return keyOfServer(ctx, snapshot.server);
}

/** {@link serverKey} of the server `server` on the socket `ctx` reaches (none: 0). */
export function keyOfServer(
  ctx: TmuxContext,
  server: ServerIdentity | null | undefined,
): string {
  return `${ctx.socketLabel}#${server?.pid ?? 0}.${server?.startTime ?? 0}`;
}

/**
 * When run_command last saw a command of its own end in a pane, or send_keys or paste_text last
 * typed into it (performance.now(); `typed` for the latter), by key: the moments after which the
 * pane's shell may be drawing a prompt, or handing the terminal back. Oldest first; one older
 * than {@link PROMPT_PROGRAM_MS} counts for nothing, and is forgotten at the next one noted.
 */
const ends = new WeakMap<TmuxRunner, Map<string, { at: number; typed: boolean }>>();

/** The moments noted for `runner` (see `ends`), made on first use. */
export function endsFor(runner: TmuxRunner): Map<string, { at: number; typed: boolean }> {
  let map = ends.get(runner);
  if (!map) {
    map = new Map();
    ends.set(runner, map);
  }
  return map;
}

/**
 * Notes the moment now for pane `key` (see `ends`; `typed`: input was typed into it), and
 * forgets those over: a server that runs for months sees many panes come and go.
 */
export function noteMoment(runner: TmuxRunner, key: string, typed: boolean): void {
  const map = endsFor(runner);
  const at = performance.now();
  map.delete(key);
  map.set(key, { at, typed });
  for (const [k, ended] of map) {
    if (ended.at + PROMPT_PROGRAM_MS > at) break;
    map.delete(k);
  }
}

/** Notes that input was typed into `paneIds` now (see {@link afterPromptPrograms}). */
export function typedInto(ctx: TmuxContext, snapshot: Snapshot, paneIds: readonly string[]): void {
  const server = serverKey(ctx, snapshot);
  for (const id of paneIds) noteMoment(ctx.runner, `${server}${id}`, true);
}

/**
 * The name tmux gives a command line (names.c `parse_window_name`): its first word without
 * an `exec `, leading dashes or a directory; a leading `"` (tmux's quoting of a start command
 * that holds spaces) and anything from the next `"` on are dropped.
 */
export function parseWindowName(line: string): string {
  let name = line.startsWith('"') ? line.slice(1) : line;
  const quote = name.indexOf('"');
  if (quote !== -1) name = name.slice(0, quote);
  if (name.startsWith("exec ")) name = name.slice(5);
  name = name.replace(/^[ -]+/, "");
  const space = name.indexOf(" ");
  if (space !== -1) name = name.slice(0, space);
  name = name.replace(/(?<=.)[^\x21-\x7e]+$/, "");
  if (name.startsWith("/")) name = name.replace(/\/+$/, "").split("/").pop() || "/";
  return name;
}

/**
 * The name tmux gives pane `paneId` while its terminal's foreground process group is a dead one:
 * its start command's ({@link parseWindowName}); null when it was started without one (tmux
 * names its shell then, which is judged as any shell).
 */
async function deadGroupName(ctx: TmuxContext, paneId: string): Promise<string | null> {
  const result = await execFast(ctx.runner, ctx.address, [
    "display-message",
    "-p",
    "-t",
    paneId,
    "#{pane_start_command}",
  ], { signal: ctx.signal });
  if (result.code !== 0) return null;
  const line = new TextDecoder().decode(result.stdout).replace(/\n$/, "");
  return line.trim() === "" ? null : parseWindowName(line);
}

/**
 * Whether pane `paneId`, named `command`, runs a program that send_keys or paste_text started:
 * input was typed into it last, within {@link PROMPT_PROGRAM_MS}, and tmux names a program that
 * is not a shell, nor the pane's start command. That name is what tmux gives while the
 * terminal's foreground group is a dead one ({@link deadGroupName}): after an `exit` that ends
 * a nested shell (or the last process of a job whose group leader is gone), until the pane's
 * shell takes the terminal back. Such a program is refused at once (`cat`, `vi`): waiting
 * would not make it a shell.
 */
export function typedProgram(
  ctx: TmuxContext,
  key: string,
  paneId: string,
): (command: string) => Promise<boolean> {
  const ended = endsFor(ctx.runner).get(key);
  let dead: Promise<string | null> | undefined;
  return async (command) => {
    if (ended === undefined || !ended.typed || isShellCommand(command)) return false;
    if (performance.now() >= ended.at + PROMPT_PROGRAM_MS) return false;
    dead ??= deadGroupName(ctx, paneId);
    return command !== await dead;
  };
}

/**
 * The pane as probed once the programs drawing its prompt have let go of it. Right after a
 * command ends, its shell runs what draws the next prompt (PROMPT_COMMAND, zsh's precmd), and
 * tmux names that program as the pane's (`sleep`, `git`): a run_command that follows at once
 * would be refused as not typing into a shell. The same after input typed into the pane (an
 * `exit` that ends a nested shell: until the outer shell takes the terminal back, its dead
 * process group is the terminal's, and tmux names the pane's start command instead). Within
 * {@link PROMPT_PROGRAM_MS} of either, a pane whose program is not named like a shell is probed
 * again until it is, except a program typed input started ({@link typedProgram}); any other
 * pane is judged at once.
 */
export async function afterPromptPrograms(
  ctx: TmuxContext,
  key: string,
  paneId: string,
  start: PaneProbe,
  deadline: number,
  typed: (command: string) => Promise<boolean>,
): Promise<PaneProbe> {
  const ended = endsFor(ctx.runner).get(key);
  if (ended === undefined || isShellCommand(start.command)) return start;
  const until = Math.min(ended.at + PROMPT_PROGRAM_MS, deadline);
  let latest = start;
  while (
    !isShellCommand(latest.command) && latest.exists && performance.now() < until &&
    !await typed(latest.command)
  ) {
    await sleep(20, ctx.signal);
    latest = await probePane(ctx, paneId);
  }
  return latest;
}
