/**
 * tmux's wait-for channels: wait_for_channel and signal_channel (registered with the arranging
 * tools, layout.ts).
 *
 * tmux keeps a wait it was told of until a signal wakes it, also once its client is gone: a
 * wait this server abandoned (timed out, or cancelled by the client) stays in the channel's
 * list of waiters, and the next signal sent while nobody else waits wakes that dead wait
 * instead of being kept for the next one. tmux has no way to withdraw a wait, and a signal sent
 * to clear it would also release anyone else's wait on the channel. So this server remembers,
 * per tmux server, the channels whose waits it abandoned, and says so where it matters: in
 * signal_channel's answer, and in a later wait on the channel that times out. A tmux server
 * that ended took its waits with it: what is remembered of it says nothing of the server that
 * answers on its socket since (see `channelKey`).
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { defineTool, type ToolAnnotations } from "../mcp/registry.ts";
import { count } from "../mcp/schemas.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { addressKey } from "../tmux/server_address.ts";
import { SERVER_ONLY } from "../tmux/snapshot.ts";
import { changes } from "./arguments.ts";
import { clampTimeout, timeoutField } from "./wait_timeouts.ts";

/** Changes nothing a person sees; a repeat waits or signals again. */
const SIGNALS: ToolAnnotations = changes({ destructive: false, idempotent: false });

/**
 * A blocked `tmux wait-for` holds one of the runner's few process slots for its whole wait;
 * more than this many at once would starve every other tool call.
 */
const MAX_CHANNEL_WAITS = 2;
const channelWaits = new WeakMap<object, number>();

/** What this server knows of a channel's abandoned waits (see the module's comment). */
interface Abandoned {
  /** A wait of ours may still be in tmux's list of waiters, dead. */
  waiting: boolean;
  /** A signal of ours may have gone to such a wait, since the last wait of ours began. */
  taken: boolean;
}

/** At most this many channels are remembered per runner; the oldest is forgotten first. */
const MAX_REMEMBERED = 256;
/** Per runner, per tmux server and channel (key: see `channelKey`). */
const abandoned = new WeakMap<object, Map<string, Abandoned>>();

function abandonedOn(ctx: TmuxContext): Map<string, Abandoned> {
  let map = abandoned.get(ctx.runner);
  if (!map) abandoned.set(ctx.runner, map = new Map());
  return map;
}

/**
 * The key of `channel` on the server the call read (its address, pid and start time: a server
 * restarted on the socket, with the same pid too in a container, is another server).
 */
function channelKey(ctx: TmuxContext, channel: string): string {
  return `${addressKey(ctx.address)}\n${ctx.serverPid ?? ""}.${ctx.serverStart ?? ""}\n${channel}`;
}

/** Sets what is known of `channel`; a channel with nothing left to say is forgotten. */
function remember(ctx: TmuxContext, channel: string, state: Abandoned): void {
  const map = abandonedOn(ctx);
  const key = channelKey(ctx, channel);
  map.delete(key);
  if (!state.waiting && !state.taken) return;
  map.set(key, state);
  for (const oldest of map.keys()) {
    if (map.size <= MAX_REMEMBERED) break;
    map.delete(oldest);
  }
}

function recall(ctx: TmuxContext, channel: string): Abandoned {
  return abandonedOn(ctx).get(channelKey(ctx, channel)) ?? { waiting: false, taken: false };
}

const CANNOT_WITHDRAW = "tmux cannot withdraw a wait";

const channelSchema = z.string().regex(
  /^[A-Za-z0-9_][A-Za-z0-9_.:@+=-]{0,127}$/,
  "a channel name: letters, digits and _ . : @ + = - (up to 128)",
);

const PROGRESS_EVERY_MS = 5_000;

/** wait_for_channel. */
export const waitForChannel = defineTool({
  name: "wait_for_channel",
  title: "Wait for channel",
  toolset: "manage",
  description: "Block until a tmux wait-for channel is signalled. A timed-out wait eats the next " +
    "signal.",
  input: {
    channel: channelSchema,
    timeoutMs: timeoutField,
  },
  output: {
    channel: z.string(),
    outcome: z.enum(["signalled", "timedOut"]),
    effectiveTimeoutMs: count(),
    waitedMs: count(),
  },
  annotations: SIGNALS,
  async run(args, ctx) {
    const effective = clampTimeout(args.timeoutMs).effective;
    // Which server the wait is on: what is remembered of its channels is that server's.
    ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
    const running = channelWaits.get(ctx.runner) ?? 0;
    if (running >= MAX_CHANNEL_WAITS) {
      throw new ToolFailure(
        `${running} channel waits are already running; each holds a tmux process for its whole wait.`,
        "Wait for one to end, or signal_channel the channel they wait on.",
      );
    }
    channelWaits.set(ctx.runner, running + 1);
    const started = Date.now();
    const ticker = setInterval(() => {
      ctx.progress(Date.now() - started, effective, `waiting on channel ${args.channel}`);
    }, PROGRESS_EVERY_MS);
    // What was known before this wait: a signal taken since then would have woken this one.
    const before = recall(ctx, args.channel);
    try {
      await ctx.progress(0, effective, `waiting on channel ${args.channel}`);
      let outcome: "signalled" | "timedOut" = "signalled";
      try {
        await ctx.spawn(["wait-for", "--", args.channel], effective);
      } catch (error) {
        if (error instanceof TmuxError && ["timeout", "cancelled"].includes(error.kind)) {
          // Its tmux client is gone, its wait stays.
          remember(ctx, args.channel, { waiting: true, taken: false });
        }
        if (!(error instanceof TmuxError && error.kind === "timeout")) throw error;
        outcome = "timedOut";
      }
      // A signal wakes every wait on the channel, the dead ones too: none of ours is left.
      if (outcome === "signalled") remember(ctx, args.channel, { waiting: false, taken: false });
      const waitedMs = Date.now() - started;
      const earlier = before.waiting || before.taken
        ? ` An earlier wait on it that this server abandoned may have taken a signal sent before this one began (${CANNOT_WITHDRAW}).`
        : "";
      return {
        data: { channel: args.channel, outcome, effectiveTimeoutMs: effective, waitedMs },
        summary: outcome === "signalled"
          ? `Channel ${args.channel} was signalled.`
          : `No signal on ${args.channel} within ${effective} ms. tmux keeps this abandoned wait: the next signal sent while nobody else waits goes to it, not to a later wait.${earlier}`,
      };
    } finally {
      clearInterval(ticker);
      channelWaits.set(ctx.runner, (channelWaits.get(ctx.runner) ?? 1) - 1);
    }
  },
});

/** signal_channel. */
export const signalChannel = defineTool({
  name: "signal_channel",
  title: "Signal channel",
  toolset: "manage",
  description: "Signal a tmux wait-for channel (kept if none waits).",
  input: { channel: channelSchema },
  output: { channel: z.string(), signalled: z.boolean() },
  annotations: SIGNALS,
  async run(args, ctx) {
    ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
    await ctx.run(["wait-for", "-S", "--", args.channel]);
    // The signal woke every wait on the channel: a dead one of ours is gone now, and this
    // signal may have been what it took.
    const { waiting } = recall(ctx, args.channel);
    remember(ctx, args.channel, { waiting: false, taken: waiting });
    return {
      data: { channel: args.channel, signalled: true },
      summary: waiting
        ? `Signalled channel ${args.channel}. A wait on it that this server abandoned (timed out or cancelled) may have taken this signal, so a later wait_for_channel may not see it: ${CANNOT_WITHDRAW}.`
        : `Signalled channel ${args.channel}.`,
    };
  },
});
