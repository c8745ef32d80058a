/**
 * What tmux-mcp knows of a wait-for channel that tmux itself will not say, kept in tmux (a
 * server user option per channel, `@tmux-mcp-channel-<the name in hex>`), so that every
 * tmux-mcp process on the server answers the same: another MCP client's process, on the same
 * tmux server, abandons waits and sends signals too.
 *
 * tmux 3.3a loses a signal without a word in two ways:
 * - A wait whose client went away (a wait_for_channel that timed out or was cancelled, or whose
 *   process ended) stays in the channel's list of waiters, dead, and the next signal wakes it
 *   instead of being kept for a later wait. tmux has no way to withdraw a wait, and a signal
 *   sent to clear it would release anyone else's wait on the channel too.
 * - A signal with nobody waiting is kept, but a second one with nobody waiting drops it: tmux
 *   keeps a flag, not a count, and the second signal clears the flag with the channel.
 *
 * A mark holds one of these states, the time it was set (ms since the epoch, base 36) and a
 * nonce, as `STATE.TIME.NONCE`:
 * - `waiting`: a wait of a tmux-mcp process may be in the list, dead. A wait marks itself so in
 *   the tmux step that begins it, before anything could kill its process, with its process's
 *   pid as an owner (`waiting.TIME.NONCE.PID`): while that process runs, the wait is alive and
 *   takes a signal as it should; once it is gone (killed outright, its handlers never run), the
 *   wait is a dead one. A wait that times out or is cancelled marks itself again, ownerless:
 *   dead, whoever runs. The owner is asked of the system where tmux runs ({@link liveWait}),
 *   so only a wait on a server of this machine has one;
 * - `taken`: a signal came while one was, and may have gone to it;
 * - `kept`: the last signal may have been kept (a signal cannot tell whether anyone waited),
 *   and no wait of a tmux-mcp process has taken it since;
 * - `lost`: a second signal came on a kept one: tmux may have dropped both.
 * Each signal moves the mark on in the same tmux step as the signal itself (`set-option -F`
 * reads the mark as it is then); a wait that is woken clears it in one step too, if nothing
 * else came since that it could not account for. Waits and signals of other programs (a
 * script's `tmux wait-for`) leave no mark, so every reply built on a mark says "may".
 *
 * A model may name any number of channels: beyond {@link MAX_CHANNEL_MARKS} marks, the least
 * telling go first (the marks of signals before those of dead waits), the oldest first. The
 * marks go with the tmux server: one that ended took its waits with it. A mark's value is read
 * from tmux, so it is hostile input like any pane text: only values of this module's own shape
 * count, and only those are ever put into a format.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { execFast } from "../tmux/control.ts";
import { randomHex } from "../tmux/format.ts";

/** At most this many channels are marked on a tmux server. */
export const MAX_CHANNEL_MARKS = 64;

/** The states of a mark (see the module's comment). */
export type MarkState = "waiting" | "taken" | "kept" | "lost";

/** A mark as this module writes it. */
export interface ChannelMark {
  readonly state: MarkState;
  /** When it was set, ms since the epoch (by the clock of the process that set it). */
  readonly at: number;
  /** The value itself: what a later step compares the mark with. */
  readonly value: string;
  /** For `waiting`, the pid of the process whose wait it is while that one runs; else null. */
  readonly owner: number | null;
}

const PREFIX = "@tmux-mcp-channel-";
const MARK = /^(waiting|taken|kept|lost)\.([0-9a-z]{1,10})\.([0-9a-f]{6})(?:\.([1-9][0-9]{0,9}))?$/;
const encoder = new TextEncoder();

/**
 * The user option that holds the mark of `channel`: the name's bytes in hex, so that no name
 * can reach into tmux's option syntax (`[`) or a format (`}`, `:`) where the option is read.
 */
export function markOption(channel: string): string {
  let hex = "";
  for (const byte of encoder.encode(channel)) hex += byte.toString(16).padStart(2, "0");
  return `${PREFIX}${hex}`;
}

/** A mark's parts; null for no mark, or a value of another shape (no mark of this module's). */
export function parseChannelMark(value: string): ChannelMark | null {
  const m = MARK.exec(value);
  if (!m || (m[4] !== undefined && m[1] !== "waiting")) return null;
  const at = parseInt(m[2], 36);
  const owner = m[4] === undefined ? null : Number(m[4]);
  return Number.isSafeInteger(at) ? { state: m[1] as MarkState, at, value, owner } : null;
}

/** What follows a new mark's state: now, and a nonce no other mark of the channel shares. */
function stamp(): string {
  return `.${Date.now().toString(36)}.${randomHex(3)}`;
}

/**
 * The marks among `show-options -s` lines: option name to mark, null for a value of another
 * shape (it counts towards the bound, and goes first).
 */
function marksIn(listing: string): Map<string, ChannelMark | null> {
  const marks = new Map<string, ChannelMark | null>();
  for (const line of listing.split("\n")) {
    if (!line.startsWith(PREFIX)) continue;
    const space = line.indexOf(" ");
    if (space === -1) continue;
    marks.set(line.slice(0, space), parseChannelMark(line.slice(space + 1)));
  }
  return marks;
}

/**
 * Prepares a wait on `channel`: the mark as it is now (what a wait that times out tells of),
 * and the tmux line that marks the wait `waiting`, owned by this process, and waits, in one
 * step: a process killed at any moment after it leaves its wait marked. `own` is that mark (to
 * clear once woken, {@link clearWoken}); null on an SSH host, where the owner could not be
 * asked after ({@link liveWait}): the line only waits there, and the wait is marked once
 * abandoned, as its process closes too.
 */
export async function prepareWait(
  ctx: TmuxContext,
  channel: string,
): Promise<{ before: ChannelMark | null; own: string | null; line: string[] }> {
  const option = markOption(channel);
  const listing = new TextDecoder().decode(await ctx.read(["show-options", "-s"]));
  const before = marksIn(listing).get(option) ?? null;
  const wait = ["wait-for", "--", channel];
  if (ctx.address.host !== undefined) return { before, own: null, line: wait };
  await trim(ctx, listing, option);
  const own = `waiting${stamp()}.${Deno.pid}`;
  return { before, own, line: ["set-option", "-s", option, own, ";", ...wait] };
}

/** Waits of this process whose tmux client still runs, by channel (see {@link liveWait}). */
const ownWaits = new Map<string, number>();

/**
 * Counts a wait of this process on `channel` as alive until the returned function is called,
 * as soon as its tmux client is gone: its mark says it is dead only once the step after that
 * has run, and a signal meanwhile must not take it for a live one.
 */
export function ownWaitRuns(channel: string): () => void {
  ownWaits.set(channel, (ownWaits.get(channel) ?? 0) + 1);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const left = (ownWaits.get(channel) ?? 1) - 1;
    if (left > 0) ownWaits.set(channel, left);
    else ownWaits.delete(channel);
  };
}

/**
 * Whether `mark`, the mark of `channel`, is that of a wait still alive: a `waiting` one whose
 * owner still runs, as the system where tmux runs says (`kill -0`, by tmux's `if-shell`); when
 * the owner is this process, whether it still has a wait on a channel of that name whose tmux
 * client runs. False for every other mark, and when the answer cannot be had: a reply built on
 * it only says "may".
 */
export async function liveWait(
  ctx: TmuxContext,
  mark: ChannelMark | null,
  channel: string,
): Promise<boolean> {
  if (mark?.state !== "waiting" || mark.owner === null) return false;
  if (mark.owner === Deno.pid) return ownWaits.has(channel);
  const yes = `tmux-mcp-alive-${randomHex(8)}`;
  try {
    const out = await ctx.read([
      "if-shell",
      `kill -0 ${mark.owner} 2>/dev/null`,
      `display-message -p ${yes}`,
    ]);
    return new TextDecoder().decode(out).includes(yes);
  } catch {
    return false;
  }
}

/**
 * Options for a mark's step: on the server the call read, and without the call's signal (a
 * cancelled call leaves its dead wait all the same, and has to say so).
 */
function onServer(ctx: TmuxContext): { serverPid: number | null; serverStart: number | null } {
  return { serverPid: ctx.serverPid, serverStart: ctx.serverStart };
}

/**
 * Unsets marks beyond {@link MAX_CHANNEL_MARKS}, `listing` being `show-options -s` as it was
 * just before the mark of `option` was set (so without it, perhaps). A failure is ignored: the
 * next mark set trims again.
 */
async function trim(ctx: TmuxContext, listing: string, option: string): Promise<void> {
  const marks = marksIn(listing);
  marks.delete(option);
  const excess = marks.size + 1 - MAX_CHANNEL_MARKS;
  if (excess <= 0) return;
  const rank = (mark: ChannelMark | null): number =>
    mark === null ? 0 : mark.state === "kept" || mark.state === "lost" ? 1 : 2;
  const gone = [...marks].sort(([, a], [, b]) => rank(a) - rank(b) || (a?.at ?? 0) - (b?.at ?? 0))
    .slice(0, excess)
    .flatMap(([name], i) => [...(i > 0 ? [";"] : []), "set-option", "-su", name]);
  await execFast(ctx.runner, ctx.address, gone, onServer(ctx)).catch(() => {});
}

/**
 * Marks a wait on `channel` abandoned: its tmux client is gone (or about to be), its wait
 * stays. A failure is ignored: the server that would hold the mark is gone, and its waits with
 * it.
 */
export async function markAbandoned(ctx: TmuxContext, channel: string): Promise<void> {
  const option = markOption(channel);
  try {
    const result = await execFast(
      ctx.runner,
      ctx.address,
      ["show-options", "-s", ";", "set-option", "-s", option, `waiting${stamp()}`],
      onServer(ctx),
    );
    if (result.code === 0) await trim(ctx, new TextDecoder().decode(result.stdout), option);
  } catch {
    // The server is gone, or this process is closing.
  }
}

/**
 * Signals `channel` and moves its mark on in the same tmux step (the module's comment says
 * how); returns the mark as it was just before the signal.
 */
export async function signalMarked(ctx: TmuxContext, channel: string): Promise<ChannelMark | null> {
  const option = markOption(channel);
  const was = (state: string) => `#{m:${state}.*,#{${option}}}`;
  const next = `#{?${was("waiting")},taken,#{?${was("kept")},lost,kept}}`;
  const out = await ctx.run([
    ...["show-options", "-s", ";"],
    ...["wait-for", "-S", "--", channel, ";"],
    ...["set-option", "-sF", option, `${next}${stamp()}`],
  ]);
  const listing = new TextDecoder().decode(out);
  await trim(ctx, listing, option);
  return marksIn(listing).get(option) ?? null;
}

/**
 * After a wait on `channel` was woken: every wait on the channel was, the dead ones too, so its
 * mark is cleared if it is still `before` (the mark as the wait began) or `own` (the one the
 * wait set as it began, {@link prepareWait}), or a `kept` or `taken` one set since: that signal
 * woke this wait (or came in the moment after it, when nobody waited). A wait abandoned since,
 * or two signals since, may be after it, and stay. A failure is ignored: a mark left says only
 * "may".
 */
export async function clearWoken(
  ctx: TmuxContext,
  channel: string,
  before: ChannelMark | null,
  own: string | null = null,
): Promise<void> {
  const option = markOption(channel);
  const is = (value: string) => `#{==:#{${option}},${value}}`;
  const unchanged = own === null
    ? is(before?.value ?? "")
    : `#{||:${is(own)},${is(before?.value ?? "")}}`;
  await execFast(ctx.runner, ctx.address, [
    "if-shell",
    "-F",
    `#{||:${unchanged},#{||:#{m:kept.*,#{${option}}},#{m:taken.*,#{${option}}}}}`,
    `set-option -su ${option}`,
  ], onServer(ctx)).catch(() => {});
}
