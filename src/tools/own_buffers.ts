/**
 * The paste buffers tmux-mcp makes: their names, and the bound on how many of them and how
 * many bytes a tmux server holds.
 *
 * Every buffer this server makes is named {@link BUFFER_PREFIX} and something (a caller's
 * `name`, or random hex), so it recognises its own, and those of other tmux-mcp processes on
 * the same tmux server, after a restart. Those it makes for one step only are named
 * {@link TRANSIENT_BUFFER_PREFIX} (left_behind.ts): not its own in this sense, never counted
 * here, and taken away by whichever tmux-mcp process meets one its maker left behind
 * ({@link giveBackBuffers}). tmux's buffer-limit drops only automatic buffers
 * (a person's copies), never named ones, and tmux-mcp deletes a buffer only when asked
 * (delete_buffer): without a bound, a loop of load_buffer calls of 4 MiB each piles up in the
 * tmux server without end, in the person's choose-buffer list, and the newest is what their
 * prefix ] pastes. So load_buffer makes a new buffer only while tmux-mcp's buffers there stay
 * within {@link MAX_OWN_BUFFERS} and {@link MAX_OWN_BYTES} ({@link roomFor}).
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { nameList, ToolFailure } from "../mcp/errors.ts";
import { int, newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import { addressKey } from "../tmux/server_address.ts";
import {
  giveBackBuffersLater,
  giveBackLeft,
  isTransientBuffer,
  TRANSIENT_BUFFER_PREFIX,
} from "../tmux/left_behind.ts";
import { cancelledCall } from "../tmux/tmux_error.ts";
import { Turns } from "../tmux/turns.ts";

/** The name prefix of every buffer this server creates, and the only ones it deletes. */
export const BUFFER_PREFIX = "tmux-mcp-";

/** The largest text load_buffer takes, in UTF-8 bytes. */
export const MAX_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * Most buffers of tmux-mcp's a tmux server keeps: room for a working set of snippets, and a
 * third of tmux's own default buffer-limit (50) for a person's copies, so the pile never
 * crowds the person's choose-buffer list.
 */
export const MAX_OWN_BUFFERS = 16;

/**
 * Most bytes tmux-mcp's buffers hold in all on a tmux server: four buffers of the largest size
 * ({@link MAX_BUFFER_BYTES}), a few times what an idle tmux server holds resident, where 16
 * buffers of that size would be 64 MiB.
 */
export const MAX_OWN_BYTES = 16 * 1024 * 1024;

/**
 * The name prefix load_buffer refuses in a `name`: with {@link BUFFER_PREFIX} before it, the
 * buffer would be taken for a transient one, and deleted as left behind.
 */
export const TRANSIENT_NAME = TRANSIENT_BUFFER_PREFIX.slice(BUFFER_PREFIX.length);

/**
 * Deletes the transient buffers that processes gone left behind (left_behind.ts): before a
 * buffer tool reads or counts the buffers there, so that none of them is the newest buffer a
 * person's `prefix ]` pastes any longer. One too young to take yet (its owner's client gone,
 * its process perhaps alive) is looked at again once it is old enough. Never throws.
 */
export async function giveBackBuffers(ctx: TmuxContext): Promise<void> {
  const later = await giveBackLeft((a) => ctx.read(a), (a) => ctx.run(a), {
    panes: null,
    buffers: true,
  });
  if (later !== null) giveBackBuffersLater(ctx.runner, ctx.address, later);
}

/** A fresh buffer name of ours. */
export function newBufferName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return BUFFER_PREFIX + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The buffers on the server whose name starts with {@link BUFFER_PREFIX}, newest first, with
 * their sizes in bytes: load_buffer's (named by a caller or not) and another tmux-mcp
 * process's; not a transient one (a paste's, while it exists).
 */
export async function ownBuffers(ctx: TmuxContext): Promise<Map<string, number>> {
  const guard = newGuard();
  const out = await ctx.read([
    "list-buffers",
    "-F",
    recordFormat(guard, ["#{buffer_name}", "#{buffer_size}"]),
  ]);
  const own = new Map<string, number>();
  for (const [name, size] of parseRecords(out, guard, 2)) {
    if (name.startsWith(BUFFER_PREFIX) && !isTransientBuffer(name)) own.set(name, int(size));
  }
  return own;
}

/**
 * Whether `name` may now hold `bytes`, from tmux-mcp's buffers there (`own`): a new buffer
 * while their count and bytes stay within the bound, a replacement while it keeps the bytes
 * within the bound or raises them not at all (it adds no buffer, and never makes a pile left
 * from before the bound worse). Returns whether `name` exists (it is replaced), or throws the
 * refusal naming the calls that make room.
 *
 * Transient buffers (a paste's, which it deletes in its own step) do not count: one exists for
 * a step, and one left behind is deleted first. The bound stops only load_buffer, never a
 * paste.
 */
export function roomFor(
  ctx: TmuxContext,
  own: ReadonlyMap<string, number>,
  name: string,
  bytes: number,
): boolean {
  const total = [...own.values()].reduce((a, b) => a + b, 0);
  const old = own.get(name);
  const after = total - (old ?? 0) + bytes;
  const fits = old !== undefined
    ? after <= MAX_OWN_BYTES || after <= total
    : own.size < MAX_OWN_BUFFERS && after <= MAX_OWN_BYTES;
  if (fits) return old !== undefined;
  const what = old !== undefined
    ? `replacing ${name} with ${bytes} bytes`
    : own.size >= MAX_OWN_BUFFERS
    ? "one more"
    : `a new one of ${bytes} bytes`;
  throw new ToolFailure(
    `On ${ctx.socketLabel}, tmux-mcp's ${own.size} buffer${
      own.size === 1 ? " holds" : "s hold"
    } ${total} bytes; ${what} would pass their bound (${MAX_OWN_BUFFERS} buffers, ` +
      `${MAX_OWN_BYTES / 1024 / 1024} MiB in all): they stay in tmux until deleted. Nothing ` +
      "was stored.",
    `delete_buffer removes one no longer needed (${
      nameList([...own.keys()])
    }; list_buffers lists them), or load_buffer with the name of one replaces it.`,
  );
}

const turns = new WeakMap<TmuxRunner, Map<string, Turns>>();

/**
 * Runs `step` (the count and the load) once every earlier one for the same tmux server has
 * settled: calls at once on this server could otherwise each count room for one buffer and all
 * load. tmux cannot count buffers in a format at the instant of the load, so processes of
 * tmux-mcp on one tmux server may still pass the bound together, by one buffer each at most.
 */
export async function inBufferTurn<T>(ctx: TmuxContext, step: () => Promise<T>): Promise<T> {
  let byServer = turns.get(ctx.runner);
  if (!byServer) turns.set(ctx.runner, byServer = new Map());
  const key = addressKey(ctx.address);
  let turn = byServer.get(key);
  if (!turn) byServer.set(key, turn = new Turns());
  try {
    return await turn.take(
      step,
      ctx.signal,
      cancelledCall,
    );
  } finally {
    if (turn.idle) byServer.delete(key);
  }
}
