/**
 * The check and the act as one step in tmux's command queue: {@link runIf} wraps an act in
 * `if-shell` conditions ({@link TmuxCondition}) that tmux expands at the instant of the act, so
 * no person's key press, window switch or attach falls between them, and checks in that step
 * that the server acting is the one the call read. An act tmux was sent but did not confirm is
 * said to be {@link Unconfirmed}; one that reached another server, {@link ServerChanged}.
 *
 * @module
 */

import { execOnce, noteSocketServer, quoteNested, socketServerPid } from "../tmux/control.ts";
import { chainArgv, randomHex } from "../tmux/format.ts";
import type { RunOptions } from "../tmux/run.ts";
import { judgeResult, TmuxError } from "../tmux/tmux_error.ts";
import { AliasShadow } from "../tmux/command_aliases.ts";
import {
  onServerFormat,
  parseServerIdentity,
  sameServer,
  SERVER_IDENTITY_FORMAT,
  type ServerIdentity,
  serversText,
} from "../tmux/server_identity.ts";
import type { TmuxContext } from "./context.ts";
import { ToolFailure } from "./errors.ts";

/**
 * A fact other than who watches that tmux checks at the instant of an act (that it cannot
 * crash tmux: src/mcp/lone_links.ts), with the refusal when it does not hold. No `force` or
 * permission lifts it.
 */
export interface ActCheck {
  readonly condition: TmuxCondition;
  readonly refusal: ToolFailure;
}

/**
 * A condition tmux evaluates at the instant of an act, in the context of `target`: a format
 * that expands to 1 when the act may go ahead. Built by the functions below.
 */
export interface TmuxCondition {
  /** The pane, window or session whose context the format is expanded in. */
  readonly target: string;
  /** A format that expands to 1 (or any non-empty, non-0 text) when the act may go ahead. */
  readonly format: string;
  /**
   * When true, `format` is instead a `/bin/sh` command that tmux runs (if-shell without -F),
   * going ahead when it exits 0: for facts only the system knows. Built only from numbers,
   * or from a client's text quoted as one shell word with `#` doubled (tmux expands the
   * command as a format first).
   */
  readonly shell?: boolean;
}

/** `#{&&:a,#{&&:b,c}}`: all of them (tmux's `&&` takes two). */
export function allOf(formats: readonly string[]): string {
  if (formats.length === 0) return "1";
  return formats.reduceRight((rest, f) => `#{&&:${f},${rest}}`);
}

/** One command line of tmux's language from argv lists, each argument quoted. */
function commandString(commands: readonly (readonly string[])[]): string {
  return commands.map((c) => c.map(quoteNested).join(" ")).join(" ; ");
}

/**
 * Bytes `command` takes inside the argument of a guarded step ({@link runIf}): what a prelude
 * adds to the line a tmux process would be given, should the control channel be unavailable.
 */
export function nestedCommandBytes(command: readonly string[]): number {
  return new TextEncoder().encode(commandString([command])).length;
}

/** The failure of an act tmux was sent but did not confirm: it may still happen. */
export class Unconfirmed extends ToolFailure {}

/**
 * The refusal of a step that reached another tmux server than the call read ({@link runIf}):
 * tmux answered it, and nothing of it ran, on either server.
 */
export class ServerChanged extends ToolFailure {}

/**
 * An act tmux was sent but did not confirm (it timed out, the call was cancelled, or the
 * connection dropped after sending) may still happen: a stopped or busy tmux server runs what
 * it was sent once it resumes. Say so, so that nobody retries into typing it twice.
 */
async function unconfirmed<T>(act: Promise<T>): Promise<T> {
  try {
    return await act;
  } catch (error) {
    if (
      error instanceof TmuxError && error.kind !== "no-server" && error.kind !== "no-target" &&
      error.kind !== "not-installed" && !(error instanceof AliasShadow)
    ) {
      throw new Unconfirmed(
        `tmux did not confirm it (${error.message.replace(/\.$/, "")}), but it was sent: ` +
          "it may still happen if tmux is only slow or stopped.",
        "Look before trying again (capture_pane, get_pane_info): a retry could do it twice.",
      );
    }
    throw error;
  }
}

/**
 * Runs `commands` (each an argv of raw arguments: nothing escaped for tmux's argv rules) only
 * if every condition holds at that instant, as ONE tmux command line:
 * `if-shell -F` expands each condition and the commands run right after it in the same
 * command queue, so no person's key press, window switch or attach can fall between the
 * check and the act. Conditions are checked in order (put a slow shell condition first: the
 * format conditions after it are then checked at the very instant of the act). Returns null
 * `failed: null` and the commands' output when they ran, else the index of the condition that
 * did not hold (nothing ran).
 *
 * `prelude` runs on the same line right before the last condition is checked: after every
 * shell condition (whose job lets other clients' commands run while tmux waits for it), and
 * before the last check, so not even a hook on a prelude command runs between that check and
 * the act (a buffer filled for the act exists only from there to the act). `refused` runs in
 * the refusal of each condition from index `refusedFrom` on, in the same step (a buffer that
 * would otherwise outlive a refused act). `spawn` runs the line in a tmux process of its own,
 * with the call's signal, or with these options.
 * Runs at most once (never repeated after a lost connection).
 *
 * When the call has read the server ({@link TmuxContext.server}), tmux also checks in that
 * step that it is the same server, even with no condition: a step that reaches another one
 * (its socket replaced since the read, or the server restarted, perhaps with the same pid in a
 * container) does nothing and throws a refusal saying so.
 */
export async function runIf(
  ctx: TmuxContext,
  conditions: readonly TmuxCondition[],
  commands: readonly (readonly string[])[],
  prelude: readonly (readonly string[])[] = [],
  options: {
    readonly spawn?: boolean | RunOptions;
    readonly refused?: readonly (readonly string[])[];
    readonly refusedFrom?: number;
  } = {},
): Promise<{ failed: number | null; stdout: Uint8Array }> {
  // A kill runs in a tmux process of its own: its end may take the control client with it.
  const run = (args: readonly string[]) =>
    options.spawn
      ? ctx.runner.exec(
        ctx.address,
        args,
        options.spawn === true ? { signal: ctx.signal } : options.spawn,
      )
      : unconfirmed(execOnce(ctx.runner, ctx.address, args, { signal: ctx.signal }));
  const server = ctx.server;
  if (conditions.length === 0 && server === null) {
    const all = [...prelude, ...commands];
    return { failed: null, stdout: judgeResult(await run(chainArgv(all))) };
  }
  const checked = onSameServer(conditions, server);
  const nonce = randomHex(8);
  const marker = (i: number) => `tmux-mcp-refused-${nonce}-${i}:`;
  const refused = options.refused ?? [];
  const ifShell = (c: TmuxCondition, then: string, i: number) => [
    "if-shell",
    ...(c.shell ? [] : ["-F"]),
    "-t",
    c.target,
    c.format,
    then,
    commandString([
      // Which server refused: one other than the call read is no refusal of the condition.
      ["display-message", "-p", `${marker(i)}${SERVER_IDENTITY_FORMAT}`],
      ...(i >= (options.refusedFrom ?? 0) ? refused : []),
    ]),
  ];
  const last = checked.length - 1;
  let line = commandString(commands);
  let args: string[] = [];
  for (let i = last; i >= 0; i--) {
    const step = ifShell(checked[i], line, i);
    const here = i === last ? [...prelude, step] : [step];
    if (i === 0) args = chainArgv(here);
    else line = commandString(here);
  }
  const stdout = judgeResult(await run(args));
  const out = new TextDecoder().decode(stdout);
  const failed = checked.findIndex((_, i) => out.includes(marker(i)));
  if (failed === -1) return { failed: null, stdout };
  const at = out.indexOf(marker(failed)) + marker(failed).length;
  const by = parseServerIdentity(/^[^\n]*/.exec(out.slice(at))![0]);
  if (server !== null && (by === null || !sameServer(by, server))) {
    throw await serverChanged(ctx, server, by, Boolean(options.spawn));
  }
  return { failed, stdout };
}

/**
 * `conditions` with tmux's check that the server acting is `server` (the one the call read,
 * {@link TmuxContext.server}): folded into the last format condition, so the act's command
 * line grows by a few bytes and nests no deeper, or, when the last is a shell condition or
 * there is none, as a condition of its own after them. Unchanged without a server.
 */
function onSameServer(
  conditions: readonly TmuxCondition[],
  server: ServerIdentity | null,
): TmuxCondition[] {
  if (server === null) return [...conditions];
  const same = onServerFormat(server);
  const last = conditions.at(-1);
  if (last === undefined || last.shell) {
    return [...conditions, { target: last?.target ?? "", format: same }];
  }
  return [...conditions.slice(0, -1), { ...last, format: `#{&&:${same},${last.format}}` }];
}

/**
 * The refusal of an act that reached another tmux server than the call read: the socket file
 * was replaced while the server read runs on (the control connection reaches that one, a tmux
 * process started by name the new one). The control connection to a server no longer on the
 * socket is let go, so the next call reads, and acts on, the server there. `spawned`: the act
 * ran in a tmux process of its own, which reached the server on the socket (`now`); otherwise
 * the socket is asked which server it leads to.
 */
async function serverChanged(
  ctx: TmuxContext,
  was: ServerIdentity,
  now: ServerIdentity | null,
  spawned: boolean,
): Promise<ServerChanged> {
  try {
    if (spawned && now !== null) await noteSocketServer(ctx.runner, ctx.address, now.pid);
    else await socketServerPid(ctx.runner, ctx.address, { signal: ctx.signal });
  } catch {
    // The refusal stands; the next call finds out where the socket leads.
  }
  return new ServerChanged(
    `The tmux server on ${ctx.socketLabel} changed since this call read it (${
      serversText(was, now)
    }); nothing was done.`,
    "Call again: it reads the server there now, where the ids read before may name other " +
      "panes, windows and sessions (list_panes shows what is there).",
  );
}
