/**
 * What a tmux-mcp process killed outright (SIGKILL, the OOM killer, an MCP client that kills
 * hard) leaves in tmux in the middle of a call, and how the next tmux-mcp process on the same
 * tmux server finds it there and takes it away.
 *
 * A process that ends otherwise takes its own away on its way out (leftovers.ts); a killed one
 * runs no handler, and its memory of what it owed goes with it. So what a call leaves for
 * longer than one step of tmux's says in tmux itself whose it is: the name of the control
 * client of the process that made it (`client-<pid>`, {@link ownClientName}), which tmux lists
 * while the process lives and drops once it dies (the client's stdin ends with it). What a
 * client no longer listed left behind is taken away by the next process ({@link giveBackLeft}):
 * at its first call on that server ({@link giveBackOnFirstCall}), and by the calls that meet it.
 *
 * A client can go while its process lives, though: a person's `tmux attach -d` or
 * `detach-client -a` detaches it, its session is killed, or the process retires it; the process
 * connects again under another name. tmux (3.3a) then runs no more of that client's command
 * line, held or queued, so what the line itself would have given back is given back by its
 * process (its call fails, and it undoes what it owed) or by the next, alike. But a step need
 * not run on that client's line: a long paste's buffer is loaded by a tmux process of its own,
 * and pasted by the next step, on whichever client the process has by then.
 *
 * - A paste's transient buffer (typing.ts): named {@link TRANSIENT_BUFFER_PREFIX}, its owner
 *   and random hex ({@link transientBufferName}); tmux-mcp's counting buffers (capture.ts)
 *   share the prefix, without an owner. Deleted once its owner is gone and it is older than
 *   {@link GRACE_S} (longer than any step is waited on: its process, alive with its client
 *   detached, has had its paste by then), or once it is older than {@link STALE_AFTER_S}
 *   whatever its owner: it lives for one step, which takes milliseconds. Otherwise it would
 *   stay the newest buffer, which a person's `prefix ]` pastes, each line of the agent's text
 *   running in a shell without bracketed paste. One whose owner is gone, met younger, is looked
 *   at again once it is old enough ({@link giveBackBuffersLater}).
 * - clear_pane's scroll-on-clear turned off (screen_clear.ts): {@link SCROLL_MARK_OPTION} on
 *   the pane, set on the step's line before the turn-off and unset after the pane's own value
 *   is put back, holds that value, the owner and tmux's clock when it was made
 *   ({@link scrollMark}). A mark whose owner is gone, or older than {@link STALE_AFTER_S}
 *   whatever its owner, gets the pane its value back while it is still off; otherwise the pane
 *   keeps `off`, which the person never set, and the next clear_pane takes it for theirs. No
 *   grace here: the mark and the turn-off travel on the line of the client the mark names,
 *   which tmux drops with the client, and the owner, alive, puts back the same value on the
 *   same conditions.
 *
 * Why an age whatever the owner: tmux (3.3a) keeps a control client whose process is gone for
 * as long as it holds output for it that it has not written yet (it waits for the output to
 * drain into a pipe nobody reads), so a process killed outright at such a moment stays listed
 * for good. Its client's `tmux -C` process lives on too, and the person's `kill-server` does
 * not end the server until that process is killed; nothing here can tell such a client from a
 * live one, so it is left alone.
 *
 * Like the lent window-size's mark (tools/window_size.ts), every give-back is a condition tmux
 * checks in the same command as the act: a mark changed since it was read stays as it is.
 *
 * @module
 */

import { nestedCommands } from "./command_line.ts";
import { execFast, execOverControl } from "./control.ts";
import {
  chainArgv,
  decodeBytes,
  escapeTrailingSemicolon,
  int,
  newGuard,
  parseRecords,
  randomHex,
  recordFormat,
} from "./format.ts";
import type { TmuxRunner } from "./run.ts";
import { addressKey, type ServerAddress } from "./server_address.ts";
import { judgeResult } from "./tmux_error.ts";

/**
 * The name prefix of the buffers tmux-mcp makes for one step and deletes in it: never one
 * load_buffer makes (it refuses names that would start so), never counted among its own.
 */
export const TRANSIENT_BUFFER_PREFIX = "tmux-mcp-transient-";

/** The pane user option that marks scroll-on-clear as turned off by clear_pane. */
export const SCROLL_MARK_OPTION = "@tmux-mcp-scroll-on-clear";

/**
 * Age in seconds past which a transient buffer or a scroll-on-clear mark is taken away
 * whoever made it: one step takes milliseconds, and a person's hook that holds it a minute
 * has held it far too long already.
 */
export const STALE_AFTER_S = 60;

/**
 * Age in seconds a transient buffer whose owner is no longer listed must reach before it is
 * taken away: longer than any step is waited on (run.ts's DEFAULT_TIMEOUT_MS, 10 s). Its
 * client may have been detached while its process lives, its paste still to come.
 */
export const GRACE_S = 15;

/** A control client's name as tmux gives it to one without a terminal. */
const OWNER = /^client-\d{1,10}$/;

/** A transient buffer's name as {@link transientBufferName} (or capture.ts) makes it. */
const TRANSIENT = /^tmux-mcp-transient-(?:(client-\d{1,10})-)?[0-9a-f]{12,32}$/;

/**
 * A mark as {@link scrollMark} makes it: the pane's own value, its owner, then tmux's clock
 * in seconds when it was made (missing from a mark an earlier version made: then judged by
 * its owner alone).
 */
const MARK = /^(on|off|unset)\.(client-\d{1,10})(?:\.(\d{1,12}))?$/;

/** Whether `name` is a transient buffer's (ours or another tmux-mcp process's). */
export function isTransientBuffer(name: string): boolean {
  return name.startsWith(TRANSIENT_BUFFER_PREFIX);
}

/** A fresh transient buffer name, naming `owner` ({@link ownClientName}) when there is one. */
export function transientBufferName(owner: string | null): string {
  return `${TRANSIENT_BUFFER_PREFIX}${owner === null ? "" : `${owner}-`}${randomHex(6)}`;
}

/**
 * The name tmux gives this process's control client on `address` (`client-<pid>`), asked over
 * that client itself: the owner that a later process finds gone once this one is. Null without
 * a control client there (then what is left is judged by age alone, or not marked).
 */
export async function ownClientName(
  runner: TmuxRunner,
  address: ServerAddress,
  signal?: AbortSignal,
): Promise<string | null> {
  return (await ownClient(runner, address, signal))?.name ?? null;
}

/**
 * {@link ownClientName}, and tmux's clock in whole seconds as it answered (what a mark made
 * now is dated by: the same clock a later process judges its age by, whatever the machine).
 */
export async function ownClient(
  runner: TmuxRunner,
  address: ServerAddress,
  signal?: AbortSignal,
): Promise<{ name: string; clock: number } | null> {
  try {
    const result = await execOverControl(
      runner,
      address,
      // display-message passes its text through strftime: %s is tmux's clock, in seconds.
      ["display-message", "-p", "#{client_name} %s"],
      { signal },
    );
    if (result === null || result.code !== 0) return null;
    const [name = "", clock = ""] = decodeBytes(result.stdout).trim().split(" ");
    return OWNER.test(name) && /^\d{1,12}$/.test(clock) ? { name, clock: int(clock) } : null;
  } catch {
    // Not asked: the act that follows meets the same failure, or the cancellation.
    return null;
  }
}

/**
 * The mark of a pane whose own scroll-on-clear is `own` (null: none), turned off by `owner`
 * at `clock` (tmux's, in seconds: {@link ownClient}).
 */
export function scrollMark(own: string | null, owner: string, clock: number): string {
  return `${own ?? "unset"}.${owner}.${clock}`;
}

/** The command that gives `paneId` `own` as its own scroll-on-clear again (null: unset). */
export function restoringScroll(paneId: string, own: string | null): string[] {
  return own === null
    ? ["set-option", "-pu", "-t", paneId, "scroll-on-clear"]
    : ["set-option", "-p", "-t", paneId, "scroll-on-clear", own];
}

/** 1 while the pane's mark is `mark`, a format (only a mark of {@link MARK}'s shape goes in). */
function markIs(mark: string): string {
  if (!MARK.test(mark)) throw new RangeError(`not a mark: ${mark}`);
  return `#{==:#{${SCROLL_MARK_OPTION}},${mark}}`;
}

/** The commands that set `mark` on `paneId`, and that take it away while it is still `mark`. */
export function markingScroll(paneId: string, mark: string): { set: string[]; unset: string[] } {
  const unmark = ["set-option", "-pu", "-t", paneId, SCROLL_MARK_OPTION];
  return {
    set: ["set-option", "-p", "-t", paneId, SCROLL_MARK_OPTION, mark],
    unset: ["if-shell", "-F", "-t", paneId, markIs(mark), nestedCommands([unmark])],
  };
}

/**
 * Gives `paneId` its own scroll-on-clear `own` back while its value is still off, and takes
 * `mark` away while it is still there. With `whenMarked`, the value too only while the mark
 * is there: a later process judges by the mark alone. A value someone set since stays theirs.
 */
export function givingScrollBack(
  paneId: string,
  own: string | null,
  mark: string | null,
  whenMarked: boolean,
): string[] {
  if (!/^%\d+$/.test(paneId)) throw new RangeError(`not a pane id: ${paneId}`);
  const off = "#{==:#{scroll-on-clear},0}";
  const commands: string[][] = [];
  if (mark === null) {
    commands.push([
      "if-shell",
      "-F",
      "-t",
      paneId,
      off,
      nestedCommands([restoringScroll(paneId, own)]),
    ]);
  } else {
    const when = whenMarked ? `#{&&:${markIs(mark)},${off}}` : off;
    commands.push(
      ["if-shell", "-F", "-t", paneId, when, nestedCommands([restoringScroll(paneId, own)])],
      markingScroll(paneId, mark).unset,
    );
  }
  return chainArgv(commands);
}

/** Runs one tmux command line: its output, or the failure thrown. */
export type TmuxCall = (args: readonly string[]) => Promise<Uint8Array>;

/** Where {@link giveBackLeft} looks. */
export interface LeftBehindScope {
  /** Marked panes: every one ("all"), one pane's id, or none (null). */
  readonly panes: "all" | string | null;
  /** Transient buffers. */
  readonly buffers: boolean;
}

/**
 * Takes away what processes gone left behind (see the module's comment), as far as `scope`
 * looks: one read (`read`), then an act (`act`) for each thing found, each a condition tmux
 * checks in the same command. Never throws: what could not be taken away stays for the next.
 * Returns in how many ms a transient buffer whose owner is gone, too young to take yet, will
 * be old enough ({@link GRACE_S}); null when there is none.
 */
export async function giveBackLeft(
  read: TmuxCall,
  act: TmuxCall,
  scope: LeftBehindScope,
): Promise<number | null> {
  const guard = newGuard();
  // The clients first: a pane read that fails (the pane gone) ends the line there.
  const commands: string[][] = [
    // display-message passes its text through strftime: %s is tmux's clock, in seconds.
    ["display-message", "-p", recordFormat(guard, ["N", "%s"])],
    ["list-clients", "-F", recordFormat(guard, ["C", "#{client_name}"])],
  ];
  if (scope.buffers) {
    commands.push([
      "list-buffers",
      "-f",
      `#{m:${TRANSIENT_BUFFER_PREFIX}*,#{buffer_name}}`,
      "-F",
      recordFormat(guard, ["B", "#{buffer_created}", "#{buffer_name}"]),
    ]);
  }
  const markFields = ["P", "#{pane_id}", `#{${SCROLL_MARK_OPTION}}`];
  if (scope.panes === "all") {
    const marked = `#{!=:#{${SCROLL_MARK_OPTION}},}`;
    commands.push(["list-panes", "-a", "-f", marked, "-F", recordFormat(guard, markFields)]);
  } else if (scope.panes !== null) {
    commands.push(["display-message", "-p", "-t", scope.panes, recordFormat(guard, markFields)]);
  }
  let records: string[][];
  try {
    records = parseRecords(await read(chainArgv(commands)), guard);
  } catch {
    return null;
  }
  let now = Number.NaN;
  const clients = new Set<string>();
  const buffers: string[] = [];
  const panes: { paneId: string; mark: string; own: string | null }[] = [];
  for (const [kind, ...fields] of records) {
    if (kind === "N") now = int(fields[0] ?? "", Number.NaN);
    else if (kind === "C") clients.add(fields[0] ?? "");
  }
  // Nothing is judged gone from a list that does not hold even the client reading it.
  if (clients.size === 0) return null;
  /** Seconds until the youngest buffer whose owner is gone is old enough to take. */
  let young: number | null = null;
  for (const [kind, ...fields] of records) {
    if (kind === "B" && fields.length === 2) {
      const [created, name] = fields;
      const owner = TRANSIENT.exec(name)?.[1];
      if (owner === undefined && !TRANSIENT.test(name)) continue;
      const age = now - int(created);
      const gone = owner !== undefined && !clients.has(owner);
      if ((gone && age >= GRACE_S) || age >= STALE_AFTER_S) buffers.push(name);
      // (A time ahead of tmux's clock is no age: left to the next call that meets it.)
      else if (gone && age >= 0) young = Math.max(young ?? 0, GRACE_S - age);
    } else if (kind === "P" && fields.length === 2) {
      const [paneId, mark] = fields;
      const m = MARK.exec(mark);
      if (m === null || !/^%\d+$/.test(paneId)) continue;
      const stale = m[3] !== undefined && now - int(m[3]) >= STALE_AFTER_S;
      if (clients.has(m[2]) && !stale) continue;
      panes.push({ paneId, mark, own: m[1] === "unset" ? null : m[1] });
    }
  }
  const acts = [
    ...buffers.map((name) => ["delete-buffer", "-b", escapeTrailingSemicolon(name)]),
    ...panes.map(({ paneId, mark, own }) => givingScrollBack(paneId, own, mark, true)),
  ];
  // One line each: a buffer or pane gone meanwhile fails its own line, not the others'.
  await Promise.allSettled(acts.map((args) => act(args)));
  // tmux's clock counts whole seconds: one more, and the buffer is old enough by then.
  return young === null ? null : (young + 1) * 1_000;
}

/** Per runner, the servers (address keys) with a look again at their buffers to come. */
const lookingAgain = new WeakMap<TmuxRunner, Map<string, ReturnType<typeof setTimeout>>>();

/**
 * Looks at the transient buffers on `address` again in `afterMs` ({@link giveBackLeft}), once
 * a buffer whose owner is gone is old enough to take: a killed process's paste then does not
 * wait for another call of this one's to stop being what a person's `prefix ]` pastes. One
 * look at a time per server; a look that meets another such buffer, younger, sets the next.
 * Housekeeping: it never keeps the process alive, and the runner's close drops it.
 */
export function giveBackBuffersLater(
  runner: TmuxRunner,
  address: ServerAddress,
  afterMs: number,
): void {
  if (runner.closed) return;
  let looks = lookingAgain.get(runner);
  if (!looks) lookingAgain.set(runner, looks = new Map());
  const key = addressKey(address);
  if (looks.has(key)) return;
  const look = async () => {
    unhook();
    const call: TmuxCall = async (args) => judgeResult(await execFast(runner, address, args));
    const again = await giveBackLeft(call, call, { panes: null, buffers: true });
    looks.delete(key);
    if (again !== null) giveBackBuffersLater(runner, address, again);
  };
  const timer = setTimeout(look, Math.max(0, afterMs));
  Deno.unrefTimer(timer as unknown as number);
  looks.set(key, timer);
  const unhook = runner.onClose(() => {
    clearTimeout(timer);
    looks.delete(key);
    return Promise.resolve();
  });
}

/**
 * How many looks again ({@link giveBackBuffersLater}) are set for `runner`: none once it is
 * closed, so that a test (or a shutdown) can prove none is left.
 */
export function looksAgainSet(runner: TmuxRunner): number {
  return lookingAgain.get(runner)?.size ?? 0;
}

/**
 * The servers (address keys) each runner's first call has looked at, or is looking at: the
 * latest {@link LOOKED_SERVERS} (a long life's many socket_names keep nothing for good; a server
 * dropped is looked at again, one read over its control client, when called again).
 */
const looked = new WeakMap<TmuxRunner, Set<string>>();
const LOOKED_SERVERS = 64;

/** How many servers `runner` keeps as looked at (for tests). */
export function lookedServers(runner: TmuxRunner): number {
  return looked.get(runner)?.size ?? 0;
}

/**
 * Takes away what processes gone left on `address` ({@link giveBackLeft}, everywhere) the
 * first time this runner calls there: over its control client only, where one read costs well
 * under a millisecond (it would attach for the call anyway). A process without one leaves it
 * to the calls that meet it (clear_pane, the buffer tools). Never throws; looked at again on a
 * later call when the control client was not there to read.
 */
export async function giveBackOnFirstCall(
  runner: TmuxRunner,
  address: ServerAddress,
  signal?: AbortSignal,
): Promise<void> {
  if (!runner.control || runner.closed) return;
  let servers = looked.get(runner);
  if (!servers) looked.set(runner, servers = new Set());
  const key = addressKey(address);
  if (servers.has(key)) return;
  servers.add(key);
  if (servers.size > LOOKED_SERVERS) servers.delete(servers.values().next().value as string);
  let reached = false;
  const over: TmuxCall = async (args) => {
    const result = await execOverControl(runner, address, args, { signal });
    if (result === null) throw new Error("no control client");
    reached = true;
    return judgeResult(result);
  };
  const later = await giveBackLeft(over, over, { panes: "all", buffers: true });
  if (!reached) servers.delete(key);
  if (later !== null) giveBackBuffersLater(runner, address, later);
}
