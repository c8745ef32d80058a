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
import { nestedCommands } from "../tmux/command_line.ts";
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

/**
 * `commands` as one command string in which each command made by {@link checkedAgain} (other
 * than the first) runs only if every condition of `rechecked` holds again right before it,
 * else `stop(k)` (its index) runs and nothing after it. Each check nests the rest of the line
 * in tmux's braces, so nothing of anyone's runs between the check and its command, and a
 * brace is parsed once: the line grows by the checks' own bytes, however deep they nest.
 */
function checkedString(
  commands: readonly (readonly string[])[],
  rechecked: readonly TmuxCondition[],
  stop: (k: number, recheck: Recheck) => readonly (readonly string[])[],
): string {
  let rest = "";
  for (let k = commands.length - 1; k >= 0; k--) {
    let here = rest === ""
      ? nestedCommands([commands[k]])
      : `${nestedCommands([commands[k]])} ; ${rest}`;
    const recheck = rechecks.get(commands[k]);
    if (k > 0 && recheck !== undefined) {
      const otherwise = nestedCommands(stop(k, recheck));
      for (const c of [...rechecked].reverse()) {
        here = `if-shell -F -t ${quoteNested(c.target)} ${
          quoteNested(c.format)
        } { ${here} } { ${otherwise} }`;
      }
    }
    rest = here;
  }
  return rest;
}

/**
 * Bytes `command` takes inside the argument of a guarded step ({@link runIf}): what a prelude
 * adds to the line a tmux process would be given, should the control channel be unavailable.
 */
export function nestedCommandBytes(command: readonly string[]): number {
  return new TextEncoder().encode(nestedCommands([command])).length;
}

/**
 * What tmux does when its conditions, checked again right before a command of an act
 * ({@link checkedAgain}), no longer hold: `stopped` runs instead of the command and the rest,
 * in the same step (what undoes the act's preparation); `refusal` is thrown, unless the
 * caller of {@link runIf} takes the stop itself (`partial`).
 */
interface Recheck {
  readonly stopped: readonly (readonly string[])[];
  readonly refusal: { readonly message: string; readonly hint: string } | null;
}

const rechecks = new WeakMap<readonly string[], Recheck>();

/**
 * `command`, to run in a {@link runIf} step only once tmux has checked that step's format
 * conditions again right before it. tmux runs a person's `after-<command>` hook right after
 * each command of a line, and a hook that waits on a `run-shell` (a slow plugin) holds the rest
 * of the line there while other clients carry on: a person may come to watch meanwhile. Each
 * command a person could notice, other than the first (run at the instant of the step's own
 * check), is to be made this way. When the check fails, `stopped` runs instead, and
 * `refusal` says what happened (a {@link PartialAct}).
 */
export function checkedAgain(
  command: readonly string[],
  stopped: readonly (readonly string[])[] = [],
  refusal: { readonly message: string; readonly hint: string } | null = null,
): string[] {
  const copy = [...command];
  rechecks.set(copy, { stopped, refusal });
  return copy;
}

/**
 * An act that stopped part-way: tmux's conditions, checked again before command `at`
 * ({@link checkedAgain}), no longer held. The commands before it ran, it and those after it
 * did not (the recheck's `stopped` commands ran instead). `stdout`: what those before printed.
 */
export class PartialAct extends ToolFailure {
  constructor(
    message: string,
    hint: string,
    readonly at: number,
    readonly stdout: Uint8Array,
  ) {
    super(message, hint);
  }
}

/**
 * An act whose target (a pane, a window) was gone when tmux checked again before command
 * `at` ({@link checkedAgain}): it ended during the act, after its first check or before it (a
 * person's hook held the step between two commands, and the pane's program ended meanwhile).
 * The commands before `at` may have run; it and those after it did not.
 */
export class EndedMidAct extends ToolFailure {
  constructor(readonly at: number) {
    super(
      "What the act was made on ended during it: what comes before tmux's check again (a " +
        "person's tmux hook held the step between its commands) may have been done, the rest " +
        "was not.",
      "Look at what is there now (list_panes) before going on.",
    );
  }
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
 * format conditions after it are then checked at the very instant of the act). Returns
 * `failed: null` and the commands' output when they ran, else the index of the condition that
 * did not hold (nothing ran).
 *
 * That holds for the first command: tmux runs a person's `after-<command>` hook right after
 * each command, and one that waits on a `run-shell` holds the rest of the line there while
 * other clients carry on. So each later command made by {@link checkedAgain} runs only once
 * tmux has checked the format conditions (or `recheck`) again right before it, nested in
 * braces on the same line (tmux 3.3a has no `after-if-shell` hook). When
 * such a check fails, the act stops there: its `stopped` commands run instead, and runIf
 * throws a {@link PartialAct}, or with `partial` returns the command's index as `partialAt`.
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
    /** Return an act stopped part-way as `partialAt` instead of throwing its PartialAct. */
    readonly partial?: boolean;
    /**
     * What tmux checks again before a command made by {@link checkedAgain}, when not the
     * step's format conditions: those of a claim the step's first command takes no longer hold
     * once it is taken.
     */
    readonly recheck?: readonly TmuxCondition[];
  } = {},
): Promise<{ failed: number | null; partialAt: number | null; stdout: Uint8Array }> {
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
    return { failed: null, partialAt: null, stdout: judgeResult(await run(chainArgv(all))) };
  }
  const checked = onSameServer(conditions, server);
  const nonce = randomHex(8);
  const marker = (i: number) => `tmux-mcp-refused-${nonce}-${i}:`;
  const stopMarker = (k: number) => `tmux-mcp-stopped-${nonce}-${k}:`;
  const refused = options.refused ?? [];
  const ifShell = (c: TmuxCondition, then: string, i: number) => [
    "if-shell",
    ...(c.shell ? [] : ["-F"]),
    "-t",
    c.target,
    c.format,
    then,
    nestedCommands([
      // Which server refused: one other than the call read is no refusal of the condition.
      ["display-message", "-p", `${marker(i)}${SERVER_IDENTITY_FORMAT}`],
      ...(i >= (options.refusedFrom ?? 0) ? refused : []),
    ]),
  ];
  const last = checked.length - 1;
  // Checked again before a later command: the format conditions (a shell condition's job
  // would let other clients' commands run while tmux waits for it).
  const rechecked = options.recheck ?? checked.filter((c) => !c.shell);
  let line = checkedString(commands, rechecked, (k, recheck) => [
    ["display-message", "-p", stopMarker(k)],
    ...recheck.stopped,
  ]);
  let args: string[] = [];
  for (let i = last; i >= 0; i--) {
    const step = ifShell(checked[i], line, i);
    const here = i === last ? [...prelude, step] : [step];
    if (i === 0) args = chainArgv(here);
    else line = nestedCommands(here);
  }
  let stdout: Uint8Array;
  try {
    stdout = judgeResult(await run(args));
  } catch (error) {
    // A check made again names the target too: gone by then, tmux fails the step instead of
    // taking the other branch, after the commands before that check ran. (Not a target a
    // command itself names: `new-window -t victim` of a session that is not there.)
    const first = commands.findIndex((c, k) => k > 0 && rechecks.has(c));
    const targets = (options.recheck ?? checked).map((c) => c.target);
    if (
      error instanceof TmuxError && error.kind === "no-target" && first !== -1 &&
      targets.some((t) => new RegExp(`: ${t.replace(/[$]/g, "\\$")}$`, "m").test(error.message))
    ) {
      throw new EndedMidAct(first);
    }
    throw error;
  }
  const out = new TextDecoder().decode(stdout);
  const failed = checked.findIndex((_, i) => out.includes(marker(i)));
  if (failed === -1) {
    const stop = commands.findIndex((_, k) => out.includes(stopMarker(k)));
    const partialAt = stop === -1 ? null : stop;
    if (partialAt === null || options.partial) return { failed: null, partialAt, stdout };
    const said = rechecks.get(commands[partialAt])?.refusal ?? {
      message: "The act stopped part-way: at that instant a person's client came to see what " +
        "it acts on (a person's tmux hook held tmux-mcp's step between two of its commands).",
      hint: "Look before trying again (list_clients, get_pane_info).",
    };
    throw new PartialAct(said.message, said.hint, partialAt, stdout);
  }
  const at = out.indexOf(marker(failed)) + marker(failed).length;
  const by = parseServerIdentity(/^[^\n]*/.exec(out.slice(at))![0]);
  if (server !== null && (by === null || !sameServer(by, server))) {
    throw await serverChanged(ctx, server, by, Boolean(options.spawn));
  }
  return { failed, partialAt: null, stdout };
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
