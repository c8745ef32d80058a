/**
 * Guards: tmux facts turned into refusals before any keystroke, process or kill reaches a
 * pane. The person at the keyboard comes first: a tool never types into the pane the agent
 * itself runs in, a pane a person is watching, a dead pane, a pane in copy mode (or any
 * other mode), or a pane whose input is turned off, and never kills what a person is watching
 * or the agent's own pane. Each refusal says why and what would lift it.
 *
 * @module
 */

import { execOnce, noteSocketServer, quoteNested, socketServerPid } from "../tmux/control.ts";
import { chainArgv, randomHex } from "../tmux/format.ts";
import {
  clientLabel,
  inputCohort,
  isPerson,
  keyCopies,
  keyCopyFormat,
  PREVIEWS,
  showsWholeSession,
} from "../tmux/identity.ts";
import { judgeResult, type RunOptions, TmuxError } from "../tmux/run.ts";
import {
  onServerFormat,
  parseServerIdentity,
  sameServer,
  SERVER_IDENTITY_FORMAT,
  type ServerIdentity,
  serversText,
} from "../tmux/server_identity.ts";
import type { ClientRow, PaneBrief, PaneRow, Snapshot } from "../tmux/snapshot.ts";
import type { TmuxContext } from "./context.ts";
import { ToolFailure } from "./errors.ts";
import { notOwnedFormat, requireOwned } from "./ownership.ts";

/** What a caller may lift. */
export interface InputGuardOptions {
  /** Lifts only the refusal of the caller's own pane. */
  readonly force?: boolean;
  /** Skip the dead-pane refusal (respawning a dead pane is the point). */
  readonly allowDead?: boolean;
  /** Skip the mode refusal (leaving copy mode is the point). */
  readonly allowMode?: boolean;
  /**
   * Skip the input-off refusal: for an act that types nothing (respawning starts a process,
   * which no `select-pane -d` stops).
   */
  readonly allowInputOff?: boolean;
  /** What tmux must name the pane's program (`pane_current_command`) at the instant. */
  readonly command?: string;
  /** System facts tmux checks first (see {@link TmuxCondition.shell}). */
  readonly shellConditions?: readonly TmuxCondition[];
  /** The refusal for each of {@link shellConditions} when it does not hold. */
  readonly shellRefusals?: readonly ToolFailure[];
  /**
   * The input is a paste (with any keys around it): refused where tmux would copy keys to
   * other panes (synchronize-panes), since it does not copy the paste alike.
   */
  readonly paste?: boolean;
  /**
   * A claim on the pane the input needs (run_command's run mark; respawn_pane's keeping a
   * person's zoom): a format tmux checks with the pane's other facts at the instant of the
   * input, and, when that check fails, the refusal to throw if it is the claim that does not
   * hold (null: it holds, the failure was another's).
   */
  readonly claim?: {
    readonly format: string;
    readonly refusal: () => Promise<ToolFailure | null>;
  };
}

/** The mode tmux shows a command's output in, over the pane (run-shell, display-message -p). */
const VIEW_MODE = "view-mode";

/**
 * What lifts a pane's view-mode, and where it may come from: nobody may have chosen it. A
 * person's hook that runs a shell command as a client attaches puts its output there, for
 * tmux-mcp's own client too when the output comes later than its attach waits for.
 */
const VIEW_MODE_LIFT = "It shows a command's output, perhaps from a tmux hook " +
  "(client-attached, pane-focus-in) that ran when a client attached, tmux-mcp's own included: " +
  "exit_copy_mode leaves it; or wait for the person to leave it.";

function watchers(ctx: TmuxContext, snapshot: Snapshot, paneId: string): string {
  const clients = ctx.attended(snapshot).get(paneId) ?? [];
  return clients.map(clientLabel).join(", ");
}

/**
 * Refuses input (typing, pasting, running, respawning) into `pane` unless every guard passes.
 * When its window has synchronize-panes on, the caller's own pane and watched panes are
 * refused anywhere in that cohort; a dead sibling, one in a mode or one with input off is not,
 * since tmux copies no key to any of them (see identity.ts `keyCopyFormat`). Returns the panes
 * the input may reach.
 */
export function guardInput(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  options: InputGuardOptions = {},
): PaneRow[] {
  const cohort = inputCohort(snapshot, pane);
  const caller = ctx.caller(snapshot);
  const attended = ctx.attended(snapshot);
  const via = (p: PaneRow) =>
    p.id === pane.id
      ? `Pane ${p.id}`
      : `Pane ${p.id} (synchronized with ${pane.id} in ${pane.windowId})`;
  for (const p of cohort) {
    if (p.id === caller.paneId && !options.force) {
      throw new ToolFailure(
        `${
          via(p)
        } is the pane this MCP server runs in; typing there would feed the agent its own input.`,
        "Pass force: true only if you really mean to type into your own pane.",
      );
    }
    if (attended.has(p.id) && !ctx.config.allowAttendedInput) {
      throw new ToolFailure(
        `${via(p)} is being watched by a person (client ${
          watchers(ctx, snapshot, p.id)
        }); input there would interfere with them.`,
        "Ask the person, use another pane (create_window or split_window), or start tmux-mcp with --allow-attended-input.",
      );
    }
    // Only what tmux gives the keys to: the pane itself, or a sibling alive and in no mode.
    if (p.id !== pane.id) continue;
    if (p.dead && !options.allowDead) {
      throw new ToolFailure(
        `${via(p)} is dead: its process exited${
          p.deadStatus !== null ? ` with status ${p.deadStatus}` : ""
        }.`,
        "respawn_pane restarts it; capture_pane still reads what it left.",
      );
    }
    if (p.inMode && !options.allowMode) {
      throw new ToolFailure(
        `${via(p)} is in ${p.mode || "a mode"}; keys would drive the mode, not the program.`,
        p.mode === VIEW_MODE
          ? VIEW_MODE_LIFT
          : "exit_copy_mode leaves it; or wait for the person to leave it.",
      );
    }
    // tmux drops every key and paste sent there without a word, and copies none to its
    // synchronized siblings either: it stops at this pane.
    if (p.inputOff && !options.allowInputOff) {
      throw new ToolFailure(
        `${via(p)} has input turned off (select-pane -d): nothing typed or pasted would arrive.`,
        "`select-pane -e` turns it back on (someone chose to turn it off: ask the person " +
          "first), or use another pane (create_window or split_window).",
      );
    }
  }
  return cohort;
}

/**
 * Refuses to destroy (kill, clear) panes that include the caller's own or one a person is
 * watching, unless `force`; and, under `--own-panes-only`, any pane this server did not
 * create, force or not. `what` names the thing being destroyed for the message.
 */
export async function guardDestroy(
  ctx: TmuxContext,
  snapshot: Snapshot,
  panes: readonly PaneRow[],
  what: string,
  force: boolean | undefined,
): Promise<void> {
  // Not lifted by force: only a restart without --own-panes-only lifts it.
  await requireOwned(ctx, panes, `Destroying ${what[0].toLowerCase()}${what.slice(1)}`);
  if (force) return;
  const caller = ctx.caller(snapshot);
  const own = panes.find((p) => p.id === caller.paneId);
  if (own) {
    throw new ToolFailure(
      `${what} contains ${own.id}, the pane this MCP server runs in; destroying it would end the agent's own session.`,
      "Pass force: true only if that is really intended.",
    );
  }
  const attended = ctx.attended(snapshot);
  const watched = panes.find((p) => attended.has(p.id));
  if (watched) {
    throw new ToolFailure(
      `${what} contains ${watched.id}, which a person is watching (client ${
        watchers(ctx, snapshot, watched.id)
      }).`,
      "Ask the person first; pass force: true only when they agreed.",
    );
  }
}

/**
 * Refuses, unless `force`, to kill a pane of a zoomed window a person is looking at: tmux
 * unzooms a window when any of its panes goes, the hidden ones too, so the person's screen
 * would change under them (guardDestroy has already refused the pane they see). `hint` says
 * what lifts it, for an act whose `force` means something else.
 */
export function guardUnzoom(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  what: string,
  force: boolean | undefined,
  hint = "Ask the person first; pass force: true only when they agreed.",
): void {
  if (force || !pane.windowZoomed) return;
  const attended = ctx.attended(snapshot);
  const shown = snapshot.panes.find((p) =>
    p.windowId === pane.windowId && p.id !== pane.id && attended.has(p.id)
  );
  if (!shown) return;
  throw new ToolFailure(
    `${what} would unzoom window ${pane.windowId}, which client ${
      watchers(ctx, snapshot, shown.id)
    } shows zoomed on ${shown.id}.`,
    hint,
  );
}

/**
 * What a destroying act takes, as tmux finds it at that instant: one pane, the panes of a
 * window, those of a session's windows, or every pane of the server. `target` names it (for
 * the server: any of its sessions).
 */
export interface DestroyScope {
  readonly kind: "pane" | "window" | "session" | "server";
  readonly target: string;
}

/** 1 while no pane of `kind`'s loop (expanded for its target) passes the condition `test`. */
function noPaneIn(kind: DestroyScope["kind"], test: string): string {
  const mark = `#{?${test},X,}`;
  const loop = kind === "pane"
    ? mark
    : kind === "window"
    ? `#{P:${mark}}`
    : kind === "session"
    ? `#{W:#{P:${mark}}}`
    : `#{S:#{W:#{P:${mark}}}}`;
  return `#{==:${loop},}`;
}

/**
 * Destroys (or clears) what {@link guardDestroy} let through, checked again by tmux at that
 * instant, on the panes the act takes then: under `--own-panes-only` that each is this
 * server's (force or not), and unless `force` that none is the caller's own and nobody watches
 * (`unwatched`). A pane moved in after the guard's read (join_pane, move_window are manage
 * tools) or a person's client that came to show it stops the act. When tmux refuses a pane,
 * `recheck` (a fresh read through the guards) may say which in its own words. Kills run in a
 * process of their own (`spawn`). `checks` are checked first, force or not.
 */
export async function destroyUnwatched(
  ctx: TmuxContext,
  snapshot: Snapshot<PaneBrief>,
  scope: DestroyScope,
  unwatched: TmuxCondition,
  what: string,
  commands: readonly (readonly string[])[],
  options: {
    readonly force?: boolean;
    readonly spawn?: boolean;
    readonly recheck?: () => Promise<unknown>;
    /** Facts tmux checks first, force or not (see {@link ActCheck}). */
    readonly checks?: readonly ActCheck[];
  } = {},
): Promise<Uint8Array> {
  const acts = options.checks ?? [];
  const checks: { kind: "owner" | "caller" | "watched" | number; condition: TmuxCondition }[] = acts
    .map((c, i) => ({ kind: i, condition: c.condition }));
  const owner = ctx.config.ownPanesOnly ? ctx.config.owner : undefined;
  // A server without sessions holds no pane (and has no target to expand a loop for).
  const panes = scope.target !== "";
  if (owner && panes) {
    const format = noPaneIn(scope.kind, notOwnedFormat(owner));
    checks.push({ kind: "owner", condition: { target: scope.target, format } });
  }
  if (!options.force) {
    // A pane's id never changes: guardDestroy has judged it. A window, a session or the
    // server may have taken the caller's pane in since.
    const caller = scope.kind === "pane" || !panes ? null : ctx.callerFormat(snapshot);
    if (caller !== null) {
      const format = noPaneIn(scope.kind, caller);
      checks.push({ kind: "caller", condition: { target: scope.target, format } });
    }
    checks.push({ kind: "watched", condition: unwatched });
  }
  const { failed, stdout } = await runIf(
    ctx,
    checks.map((c) => c.condition),
    commands,
    [],
    { spawn: options.spawn },
  );
  if (failed === null) return stdout;
  const kind = checks[failed].kind;
  if (typeof kind === "number") throw acts[kind].refusal;
  // A fresh read names the pane and whose it is; a watcher is named below as it was found.
  if (kind !== "watched") await options.recheck?.();
  switch (kind) {
    case "owner":
      throw new ToolFailure(
        `${what} was not done: at that moment it held a pane this server did not create (one ` +
          "moved in after the check), and it runs with --own-panes-only.",
        "list_panes shows where the panes are now; work in panes this server creates " +
          "(create_window, split_window, create_session).",
      );
    case "caller":
      throw new ToolFailure(
        `${what} was not done: at that moment it held the pane this MCP server runs in (moved ` +
          "in after the check); destroying it would end the agent's own session.",
        "Pass force: true only if that is really intended.",
      );
    default:
      throw new ToolFailure(
        `${what} was not done: a person's client came to show it at that moment.`,
        "Ask the person first; pass force: true only when they agreed.",
      );
  }
}

// ---------------------------------------------------------------------------------------------
// The check and the act as one step in tmux's command queue

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
function allOf(formats: readonly string[]): string {
  if (formats.length === 0) return "1";
  return formats.reduceRight((rest, f) => `#{&&:${f},${rest}}`);
}

/**
 * A client name as an extended regular expression inside a format: every character that is
 * not a letter, digit, `_` or `-` becomes `.`, so no name can close the format, end the
 * modifier or split the pattern. Over-matching only ever leaves part of a person's name
 * behind, which counts as a person: the safe side.
 */
function namePattern(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, ".");
}

/**
 * A client name in tmux's client lists that names no terminal: tmux names a client by its
 * terminal's path, and one without a terminal `client-<pid>`. Only a control client attaches
 * without one, and such a client is a program's (see identity.ts `isPerson`): this server's own
 * clients among them, also those that attach after any snapshot.
 */
const PROGRAM_NAME = "client-[0-9]+";

/**
 * A tmux client list (`window_active_clients_list`, `session_attached_list`) with the
 * programs taken out: what is left is empty exactly when no person is in it.
 */
function stripPrograms(list: string): string {
  return `#{s/(${PROGRAM_NAME}|,)//:${list}}`;
}

/**
 * A client list with the programs and the people who see one window at a time taken out (the
 * latter known from the snapshot): what is left is a person whose client shows every window
 * of its session (`tmux -CC`, iTerm2), or a client that attached since the snapshot, counted as
 * one (the safe side: the act is refused and, where it is retried, judged by a fresh read).
 */
function stripAllButWholeSession(list: string, snapshot: Snapshot<PaneBrief>): string {
  const oneWindow = snapshot.clients.filter((c) => !showsWholeSession(c) && c.name !== "")
    .map((c) => namePattern(c.name))
    // Longest first: /dev/pts/3 taken out of /dev/pts/31 would leave a "1" (no person) behind.
    .sort((a, b) => b.length - a.length);
  return `#{s/(${[PROGRAM_NAME, ...oneWindow, ","].join("|")})//:${list}}`;
}

/**
 * 1 while no session that a client showing its whole session (see
 * {@link stripAllButWholeSession}) has attached holds the window `target` (`@N`), or the window
 * of the pane `target` (`%N`) wherever it is at that instant. Any other target: while no such
 * client is attached anywhere (the safe side).
 */
function noWholeSessionShows(snapshot: Snapshot<PaneBrief>, target: string): string {
  const holds = /^%\d+$/.test(target)
    ? `#{W:#{P:#{?#{==:#{pane_id},${target}},X,}}}`
    : /^@\d+$/.test(target)
    ? `#{W:#{?#{==:#{window_id},${target}},X,}}`
    : "X";
  const whole = `#{!=:${stripAllButWholeSession("session_attached_list", snapshot)},}`;
  return `#{==:#{S:#{?${whole},${holds},}},}`;
}

/** 1 when the client list `list` holds no person (see {@link stripPrograms}). */
function peopleIn(list: string): string {
  return `#{==:${stripPrograms(list)},}`;
}

/**
 * True while no person has a pane that previews others on screen (choose-tree, choose-client:
 * see identity.ts `PREVIEWS`; they show any pane of the server): no session with a person
 * attached has such a pane in its current window — any pane of it, active or not — nor, for a
 * session a person shows whole (tmux -CC, see {@link stripAllButWholeSession}), in any window.
 */
function noPreview(snapshot: Snapshot<PaneBrief>): string {
  const people = `#{!=:${stripPrograms("session_attached_list")},}`;
  const whole = `#{!=:${stripAllButWholeSession("session_attached_list", snapshot)},}`;
  // One branch: every pane of the window (`#{P:,x}` would test the active one alone).
  const previews = `#{P:#{?${PREVIEWS},T,}}`;
  const shown = `#{?${whole},#{W:${previews}},#{?${people},#{W:,${previews}},}}`;
  return `#{==:#{S:${shown}},}`;
}

/**
 * While no person's client shows the window `target` is (`@N`, or the pane `%N` is in): as
 * its current window, or as one of every window of a session it shows whole (tmux -CC).
 */
export function windowUnwatched(snapshot: Snapshot<PaneBrief>, target: string): TmuxCondition {
  return {
    target,
    format: allOf([
      peopleIn("window_active_clients_list"),
      noWholeSessionShows(snapshot, target),
      noPreview(snapshot),
    ]),
  };
}

/** A window's part of a loop over windows: `X` while a person's client shows it. */
function shownToPeople(): string {
  return `#{?#{!=:${stripPrograms("window_active_clients_list")},},X,}`;
}

/**
 * While no person has the session `target` attached or sees any window of it as their current
 * one (through another session too, for a linked window): what its kill would take from them.
 * A person who shows another session whole (tmux -CC) keeps a window linked there: not checked.
 */
export function sessionWindowsUnwatched(
  snapshot: Snapshot<PaneBrief>,
  target: string,
): TmuxCondition {
  return {
    target,
    format: allOf([
      peopleIn("session_attached_list"),
      `#{==:#{W:${shownToPeople()}},}`,
      noPreview(snapshot),
    ]),
  };
}

/**
 * While no person sees any window of the server (`target`: any session of it): every client
 * attached has a current window, a client showing its whole session too.
 */
export function serverUnwatched(
  snapshot: Snapshot<PaneBrief>,
  target: string,
): TmuxCondition {
  return {
    target,
    format: allOf([`#{==:#{S:#{W:${shownToPeople()}}},}`, noPreview(snapshot)]),
  };
}

/**
 * While no person's client has attached a session the window `target` is in (through a link
 * too), at that instant: each of them lists the window in its status line (or, shown whole,
 * as a tab).
 */
export function windowListedUnwatched(
  snapshot: Snapshot<PaneBrief>,
  target: string,
): TmuxCondition {
  const people = `#{!=:${stripPrograms("session_attached_list")},}`;
  const holds = `#{W:#{?#{==:#{window_id},${target}},X,}}`;
  return {
    target,
    format: allOf([`#{==:#{S:#{?${people},${holds},}},}`, noPreview(snapshot)]),
  };
}

/** While no person's client has the session `target` attached (it would see its changes). */
export function sessionUnwatched(
  snapshot: Snapshot<PaneBrief>,
  target: string,
): TmuxCondition {
  return { target, format: allOf([peopleIn("session_attached_list"), noPreview(snapshot)]) };
}

/**
 * While no person can see the pane `paneId`: its window shown nowhere, or zoomed onto another
 * pane with synchronize-panes off (with it on, keys reach the pane everyone sees); and no
 * session shown whole (tmux -CC) holds it, zoomed or not.
 */
export function paneUnwatched(snapshot: Snapshot<PaneBrief>, paneId: string): TmuxCondition {
  const hidden = "#{&&:#{window_zoomed_flag},#{&&:#{!=:#{pane_active},1}," +
    "#{!=:#{synchronize-panes},1}}}";
  return {
    target: paneId,
    format: allOf([
      `#{||:${peopleIn("window_active_clients_list")},${hidden}}`,
      noWholeSessionShows(snapshot, paneId),
      noPreview(snapshot),
    ]),
  };
}

/**
 * What tmux re-checks at the instant input reaches `pane`: nobody watches it (unless
 * `--allow-attended-input`), it is alive, in no mode and takes input (unless the caller lifts
 * those).
 */
export function inputCondition(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  options: InputGuardOptions = {},
): TmuxCondition {
  const parts: string[] = [];
  if (!ctx.config.allowAttendedInput) parts.push(paneUnwatched(snapshot, pane.id).format);
  if (!options.allowDead) parts.push("#{!=:#{pane_dead},1}");
  // A count of modes, stacked (view-mode over copy mode is 2): only 0 is none.
  if (!options.allowMode) parts.push("#{==:#{pane_in_mode},0}");
  if (!options.allowInputOff) parts.push("#{!=:#{pane_input_off},1}");
  if (options.command !== undefined) {
    parts.push(`#{==:#{pane_current_command},${options.command.replace(/[#,}]/g, "#$&")}}`);
  }
  return { target: pane.id, format: allOf(parts) };
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
      error.kind !== "not-installed"
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

/** What a person would notice of a change: the windows, sessions and panes it shows. */
export interface ViewScope {
  /** Windows whose content, layout, zoom or active pane changes. */
  readonly windows?: readonly string[];
  /**
   * Panes whose window (the one each is in at the instant of the act) changes: for an act
   * aimed at a pane, which another client may move to another window between the check and
   * the act. tmux checks the window it is in then.
   */
  readonly windowsOf?: readonly string[];
  /**
   * Windows whose entry in the status line changes (its style, its format, its name): every
   * session the window is in lists it, a person's among them.
   */
  readonly listedWindows?: readonly string[];
  /** Sessions whose current window changes, or that may end. */
  readonly sessions?: readonly string[];
  /** Panes whose own display changes (entering or leaving a mode). */
  readonly panes?: readonly string[];
  /** Sessions that end if they have one window at that instant (their last one moves away). */
  readonly lastWindowOf?: readonly string[];
  /**
   * Set when the change reaches every session and window (a global option): any session of
   * the server, where tmux checks that no person sees any window; "" for a server without one.
   */
  readonly everything?: string;
}

const VIEW_HINT = "Ask the person first, or work where nobody looks (create_window makes a " +
  "window in the background); tmux-mcp started with --allow-attended-input lifts this.";

/**
 * The sessions the window `windowId` is in, as far as the snapshot read it (from the window's
 * row or its panes' rows, whichever it holds).
 */
function sessionsOfWindow(snapshot: Snapshot<PaneBrief>, windowId: string): Set<string> {
  const placements = [
    ...snapshot.windows.filter((w) => w.id === windowId),
    ...snapshot.panes.filter((p) => p.windowId === windowId),
  ].flatMap((x) => x.placements);
  return new Set(placements.map((at) => at.sessionId));
}

/** Whether a person's client `c` shows the window `windowId`. */
function showsWindow(snapshot: Snapshot<PaneBrief>, c: ClientRow, windowId: string): boolean {
  return c.windowId === windowId ||
    (showsWholeSession(c) && sessionsOfWindow(snapshot, windowId).has(c.sessionId));
}

/**
 * Refuses a change a person would see — a window, session or pane on a person's screen —
 * naming the client, unless the server was started with `--allow-attended-input` (the same
 * permission typing there needs). `what` names the change for the message.
 */
export function guardView(
  ctx: TmuxContext,
  snapshot: Snapshot<PaneBrief>,
  scope: ViewScope,
  what: string,
): void {
  if (ctx.config.allowAttendedInput) return;
  const people = snapshot.clients.filter((c) => isPerson(c) && c.windowId);
  const previewing = people.find((c) => c.previewing);
  if (previewing) {
    throw new ToolFailure(
      `${what} would change what a person sees: client ${
        clientLabel(previewing)
      } has choose-tree or choose-client open, which previews panes from anywhere on the server.`,
      `Wait until they close it. ${VIEW_HINT}`,
    );
  }
  const anyone = scope.everything !== undefined ? people[0] : undefined;
  if (anyone) {
    throw new ToolFailure(
      `${what} would change what a person sees: it reaches every session and window, and ` +
        `client ${clientLabel(anyone)} shows window ${anyone.windowId}.`,
      VIEW_HINT,
    );
  }
  const paneWindows = (scope.windowsOf ?? []).flatMap((id) =>
    snapshot.panes.filter((p) => p.id === id).map((p) => p.windowId)
  );
  for (const w of [...(scope.windows ?? []), ...paneWindows]) {
    const c = people.find((c) => showsWindow(snapshot, c, w));
    if (c) {
      throw new ToolFailure(
        `${what} would change what a person sees: window ${w} is on the screen of client ${
          clientLabel(c)
        }.`,
        VIEW_HINT,
      );
    }
  }
  for (const w of scope.listedWindows ?? []) {
    const sessions = snapshot.windows.find((x) => x.id === w)?.placements.map((p) => p.sessionId);
    const c = people.find((c) => sessions?.includes(c.sessionId));
    if (c) {
      throw new ToolFailure(
        `${what} would change what a person sees: window ${w} is listed in the status line of ` +
          `session ${c.sessionId}, which client ${clientLabel(c)} is attached to.`,
        VIEW_HINT,
      );
    }
  }
  for (const s of scope.sessions ?? []) {
    const c = people.find((c) => c.sessionId === s);
    if (c) {
      throw new ToolFailure(
        `${what} would change what a person sees: client ${
          clientLabel(c)
        } is attached to session ${s}.`,
        VIEW_HINT,
      );
    }
  }
  for (const s of scope.lastWindowOf ?? []) {
    const c = people.find((c) => c.sessionId === s);
    const session = snapshot.sessions.find((x) => x.id === s);
    if (c && session && session.windows <= 1) {
      throw new ToolFailure(
        `${what} would end session ${s} (it is that session's last window) and detach client ${
          clientLabel(c)
        }, which is attached to it.`,
        VIEW_HINT,
      );
    }
  }
  const attended = ctx.attended(snapshot);
  for (const p of scope.panes ?? []) {
    const c = attended.get(p)?.[0];
    if (c) {
      throw new ToolFailure(
        `${what} would change what a person sees: pane ${p} is on the screen of client ${
          clientLabel(c)
        }.`,
        VIEW_HINT,
      );
    }
  }
}

function viewConditions(snapshot: Snapshot<PaneBrief>, scope: ViewScope): TmuxCondition[] {
  return [
    ...(scope.windows ?? []).map((w) => windowUnwatched(snapshot, w)),
    // Expanded for the pane, the window formats are those of the window it is in then.
    ...(scope.windowsOf ?? []).map((p) => windowUnwatched(snapshot, p)),
    ...(scope.listedWindows ?? []).map((w) => windowListedUnwatched(snapshot, w)),
    ...(scope.sessions ?? []).map((s) => sessionUnwatched(snapshot, s)),
    ...(scope.panes ?? []).map((p) => paneUnwatched(snapshot, p)),
    ...(scope.lastWindowOf ?? []).map((s) => {
      const nobody = sessionUnwatched(snapshot, s);
      return { target: s, format: `#{||:#{!=:#{session_windows},1},${nobody.format}}` };
    }),
    ...(scope.everything ? [serverUnwatched(snapshot, scope.everything)] : []),
  ];
}

/**
 * Makes a change a person could see, checked twice: against the snapshot (a refusal that
 * names the client), then by tmux at the instant of the change ({@link runIf}). When tmux
 * refuses, a fresh snapshot explains why; if it shows nobody (a program's client attached
 * meanwhile), the change is tried once more. `spawn`: the step runs in a tmux process of its
 * own, with these options (a creation's, which must not be cut short once begun). `checks`:
 * other facts tmux checks in the same step, first; one that fails is refused at once.
 */
export async function changeView(
  ctx: TmuxContext,
  snapshot: Snapshot<PaneBrief>,
  scope: ViewScope,
  what: string,
  commands: readonly (readonly string[])[],
  spawn?: RunOptions,
  checks: readonly ActCheck[] = [],
): Promise<Uint8Array> {
  let current = snapshot;
  for (let attempt = 0; attempt < 2; attempt++) {
    guardView(ctx, current, scope, what);
    const conditions = [
      ...checks.map((c) => c.condition),
      ...ctx.config.allowAttendedInput ? [] : viewConditions(current, scope),
    ];
    const { failed, stdout } = await runIf(ctx, conditions, commands, [], { spawn });
    if (failed === null) return stdout;
    if (failed < checks.length) throw checks[failed].refusal;
    // Read again what was read before: the refusal names the client from it.
    current = await ctx.snapshot(current.scope);
  }
  throw new ToolFailure(
    `${what} was not made: a person's client came to show it at that moment.`,
    VIEW_HINT,
  );
}

/**
 * Expanded for the pane input goes to: 1 while no pane the input may reach passes the
 * condition `test` (with synchronize-panes on for it, every pane of its window: broader than
 * the panes tmux copies keys to, the safe side).
 */
function noneReached(test: string): string {
  const mark = `#{?${test},X,}`;
  return `#{==:#{?#{pane_synchronized},#{P:${mark}},${mark}},}`;
}

/** Refuses a paste into `pane` when tmux would copy its keys to other panes. */
function requireAlone(snapshot: Snapshot, pane: PaneRow): void {
  const others = keyCopies(snapshot, pane);
  if (others.length === 0) return;
  throw new ToolFailure(
    `Pane ${pane.id} is synchronized with ${others.map((p) => p.id).join(", ")} ` +
      `(synchronize-panes in ${pane.windowId}): tmux copies what is typed there to them, but ` +
      `not a paste, which would arrive in ${pane.id} alone (and an Enter after it in all of ` +
      "them). Nothing was pasted.",
    "Turn synchronize-panes off for that window (set_synchronize_panes), or type with " +
      "send_keys, which reaches them all.",
  );
}

/**
 * Sends input into `pane`, checked twice: {@link guardInput} against the snapshot (refusals
 * that say why), then the same facts re-checked by tmux at the instant the input arrives
 * ({@link inputCondition}, {@link runIf}; `prelude` runs on the same line, after the shell
 * conditions and right before tmux's last check): there, under `--own-panes-only`, that every
 * pane the input may reach is this server's, and unless `force` that none is the caller's,
 * also a pane moved into a synchronized window since the read. Returns the ids of the panes
 * the input reached, as tmux listed them in that step: the pane itself and those tmux copies
 * keys to (for a paste: the pane alone).
 *
 * `buffer`: the name of a transient paste buffer the commands paste and delete, filled by the
 * prelude, or else by `load` before each attempt. A refusal in tmux deletes it in the same
 * step, so it never outlives a refused attempt (a person's paste takes the newest buffer).
 */
export async function deliverInput(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  options: InputGuardOptions,
  commands: readonly (readonly string[])[],
  prelude: readonly (readonly string[])[] = [],
  buffer?: { readonly name: string; readonly load?: () => Promise<unknown> },
): Promise<string[]> {
  let current = snapshot;
  let target = pane;
  const what = `Input into ${pane.id}`;
  const marker = `tmux-mcp-reached-${randomHex(8)}:`;
  const reachedFormat = `${marker}#{?#{pane_synchronized},#{P:#{?${
    keyCopyFormat(pane.id)
  },#{pane_id} ,}},${pane.id}}`;
  const owner = ctx.config.ownPanesOnly ? ctx.config.owner : undefined;
  const shells = options.shellConditions ?? [];
  for (let attempt = 0; attempt < 2; attempt++) {
    const cohort = guardInput(ctx, current, target, options);
    if (options.paste) requireAlone(current, target);
    await requireOwned(ctx, cohort, what);
    // One condition after the shell's (each more would quote the keys once more): tmux checks
    // the pane, and every pane the input may reach for owner marks and the caller's pane.
    const parts = [inputCondition(ctx, current, target, options).format];
    if (owner) parts.push(noneReached(notOwnedFormat(owner)));
    const caller = options.force ? null : ctx.callerFormat(current);
    if (caller !== null) parts.push(noneReached(caller));
    if (options.paste) {
      const copied = `#{&&:#{!=:#{pane_id},${pane.id}},${keyCopyFormat(pane.id)}}`;
      parts.push(`#{==:#{?#{pane_synchronized},#{P:#{?${copied},X,}},},}`);
    }
    if (options.claim) parts.push(options.claim.format);
    await buffer?.load?.();
    const { failed, stdout } = await runIf(
      ctx,
      [...shells, { target: pane.id, format: allOf(parts) }],
      [["display-message", "-p", "-t", pane.id, reachedFormat], ...commands],
      prelude,
      buffer === undefined ? {} : {
        refused: [["delete-buffer", "-b", buffer.name]],
        // Filled by the prelude, it exists from the last check on; loaded, from the first.
        refusedFrom: buffer.load ? 0 : shells.length,
      },
    );
    if (failed === null) {
      const out = new TextDecoder().decode(stdout);
      const line = out.split("\n").find((l) => l.startsWith(marker));
      return line === undefined
        ? cohort.map((p) => p.id)
        : [...line.slice(marker.length).matchAll(/%\d+/g)].map((m) => m[0]);
    }
    if (failed < shells.length) {
      throw options.shellRefusals?.[failed] ?? new ToolFailure(`Nothing was sent to ${pane.id}.`);
    }
    // Another caller's claim is no fact a fresh read changes: said at once.
    const taken = await options.claim?.refusal();
    if (taken) throw taken;
    // Read again: the guards above say what changed (whose pane moved in, who watches).
    current = await ctx.guardSnapshot(pane.id);
    target = ctx.pane(current, pane.id);
  }
  // run_command also asks tmux that the shell holds the terminal: a program another caller
  // started may have taken it.
  const program = options.command === undefined
    ? ""
    : `, a program other than ${JSON.stringify(options.command)} came to the foreground`;
  throw new ToolFailure(
    `Nothing was sent to ${pane.id}: at that instant a person's client came to show it, it ` +
      `died, entered a mode or had its input turned off${program}, or a pane moved into its ` +
      "synchronized window.",
    "Look again with get_pane_info; ask the person, or use a pane nobody watches.",
  );
}
