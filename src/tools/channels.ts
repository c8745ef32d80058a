/**
 * tmux's wait-for channels: wait_for_channel and signal_channel (registered with the arranging
 * tools, layout.ts).
 *
 * tmux 3.3a loses signals in two ways it never reports: a wait abandoned (timed out, or
 * cancelled by the client) stays in the channel's list of waiters and takes the next signal,
 * and a second signal with nobody waiting drops the first. tmux-mcp marks what it did that may
 * lead to either in tmux itself (channel_marks.ts), so that every tmux-mcp process on the
 * server warns of it alike: in signal_channel's answer, and in a later wait that times out.
 *
 * @module
 */

import { z } from "zod";
import { SERVER_GONE_HINT, ToolFailure } from "../mcp/errors.ts";
import { defineTool, type ToolAnnotations } from "../mcp/tool_spec.ts";
import { count } from "../mcp/schemas.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { SERVER_ONLY } from "../tmux/snapshot.ts";
import { sameServer, type ServerIdentity } from "../tmux/server_identity.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { changes } from "./arguments.ts";
import {
  type ChannelMark,
  clearWoken,
  liveWait,
  markAbandoned,
  ownWaitRuns,
  prepareWait,
  signalMarked,
} from "./channel_marks.ts";
import { clampTimeout, timeoutField } from "../mcp/wait_timeouts.ts";

/** Changes nothing a person sees; a repeat waits or signals again. */
const SIGNALS: ToolAnnotations = changes({ destructive: false, idempotent: false });

/**
 * A blocked `tmux wait-for` holds one of the runner's few process slots for its whole wait;
 * more than this many at once would starve every other tool call.
 */
const MAX_CHANNEL_WAITS = 2;
const channelWaits = new WeakMap<object, number>();

const CANNOT_WITHDRAW = "tmux cannot withdraw a wait";

const channelSchema = z.string().regex(
  /^[A-Za-z0-9_][A-Za-z0-9_.:@+=-]{0,127}$/,
  "a channel name: letters, digits and _ . : @ + = - (up to 128)",
);

const PROGRESS_EVERY_MS = 5_000;

/**
 * What a wait that timed out adds, from the channel's mark as it began: nothing for the mark
 * of another wait still alive, which took any signal sent before this one began, as it should.
 */
async function missed(
  ctx: TmuxContext,
  channel: string,
  before: ChannelMark | null,
): Promise<string> {
  if (await liveWait(ctx, before, channel)) return "";
  switch (before?.state) {
    case "waiting":
    case "taken":
      return ` An earlier wait on it that a tmux-mcp server abandoned may have taken a signal sent before this one began (${CANNOT_WITHDRAW}).`;
    case "lost":
      return " Its last two signals (signal_channel) may have cancelled each other out: tmux drops a kept signal when a second comes with nobody waiting.";
    default:
      return "";
  }
}

/** How long ago `at` (ms since the epoch) was, roughly: "12 s", "5 min", "3 h". */
function ago(at: number): string {
  const s = Math.max(0, Math.round((Date.now() - at) / 1000));
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;
}

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
    // Which server the wait is on: the wait and the marks' steps go to that one only.
    ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
    const server = ctx.server;
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
    // A process that ends while it waits leaves the wait in tmux: marked before its tmux
    // client is killed, as the process closes. One killed outright runs no handler: the wait
    // marked itself as it began, its owner this process (channel_marks.ts), and its tmux client
    // ends with the process (spawnTied) instead of waiting on for the next signal.
    const unhook = ctx.runner.onClose(() => markAbandoned(ctx, args.channel));
    try {
      // What was marked before this wait: a signal taken since then would have woken this one.
      const { before, own, line } = await prepareWait(ctx, args.channel);
      await ctx.progress(0, effective, `waiting on channel ${args.channel}`);
      let outcome: "signalled" | "timedOut" = "signalled";
      let woke: Uint8Array | undefined;
      // Abandoned the moment it is cancelled: a signal before its tmux client is gone may
      // still wake it, and be lost with it.
      const running = ownWaitRuns(args.channel);
      ctx.signal.addEventListener("abort", running, { once: true });
      try {
        woke = await ctx.spawnTied([...line, ";", ...WOKEN_READ], effective);
      } catch (error) {
        running();
        if (error instanceof TmuxError && ["timeout", "cancelled"].includes(error.kind)) {
          // Its tmux client is gone, its wait stays.
          await markAbandoned(ctx, args.channel);
        }
        if (!(error instanceof TmuxError && error.kind === "timeout")) throw error;
        outcome = "timedOut";
      } finally {
        running();
        ctx.signal.removeEventListener("abort", running);
      }
      // Woken, but by its server's exit? (Asked outside the wait's own failures: a read that
      // times out here is no wait that timed out.)
      if (woke && !(await signalWoke(ctx, woke, server))) throw wokeByExit(ctx, args.channel);
      // A signal wakes every wait on the channel, the dead ones too.
      if (outcome === "signalled") await clearWoken(ctx, args.channel, before, own);
      const waitedMs = Date.now() - started;
      return {
        data: { channel: args.channel, outcome, effectiveTimeoutMs: effective, waitedMs },
        summary: outcome === "signalled"
          ? `Channel ${args.channel} was signalled.`
          : `No signal on ${args.channel} within ${effective} ms. tmux keeps this abandoned wait: the next signal sent while nobody else waits goes to it, not to a later wait.${await missed(
            ctx,
            args.channel,
            before,
          )}`,
      };
    } finally {
      unhook();
      clearInterval(ticker);
      channelWaits.set(ctx.runner, (channelWaits.get(ctx.runner) ?? 1) - 1);
    }
  },
});

/**
 * Read in the wait's own tmux step right after `wait-for` returns: a mark per session. tmux
 * wakes every wait on every channel as it exits (killed, or its last session gone), exactly as
 * a signal would, and runs what follows in the step; by then it has no session left.
 */
const WOKEN_READ = ["display-message", "-p", "--", "tmux-mcp-woke #{S:s}"];
/** How the line {@link WOKEN_READ} prints starts; one `s` per session follows. */
const WOKE_MARK = "tmux-mcp-woke ";

/**
 * Whether a wait whose `wait-for` returned (its step's output `woke`) was woken by a signal,
 * not by its server's exit: sessions were still there when it woke; or, with none there (a
 * server kept alive without sessions, `exit-empty off`), the server `before` still answers.
 */
async function signalWoke(
  ctx: TmuxContext,
  woke: Uint8Array,
  before: ServerIdentity | null,
): Promise<boolean> {
  const line = new TextDecoder().decode(woke).split("\n").find((l) => l.startsWith(WOKE_MARK));
  if (line !== undefined && line.length > WOKE_MARK.length) return true;
  const now = await ctx.snapshot(SERVER_ONLY);
  return now.running && now.server !== null && before !== null && sameServer(now.server, before);
}

/** The failure of a wait woken by its server's exit. */
function wokeByExit(ctx: TmuxContext, channel: string): ToolFailure {
  return new ToolFailure(
    `The tmux server on ${ctx.socketLabel} went away while the wait on channel ${channel} ran ` +
      "(killed, or its last session ended): tmux wakes every wait as it exits, so this was no " +
      "signal.",
    SERVER_GONE_HINT,
  );
}

/** signal_channel. */
export const signalChannel = defineTool({
  name: "signal_channel",
  title: "Signal channel",
  // A signal releases whatever a script waiting on the channel runs next (`tmux wait-for
  // deploy && ./deploy`): it starts commands, as typing Enter would.
  toolset: "execute",
  description:
    "Signal a tmux wait-for channel (kept if none waits; a second signal then cancels it).",
  input: { channel: channelSchema },
  output: { channel: z.string(), signalled: z.boolean() },
  annotations: SIGNALS,
  async run(args, ctx) {
    ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
    const was = await signalMarked(ctx, args.channel);
    const signalled = `Signalled channel ${args.channel}.`;
    // A wait still alive took the signal, as it should; the mark of one whose process was
    // killed outright says the same as that of one abandoned.
    const dead = was?.state === "waiting" && !(await liveWait(ctx, was, args.channel));
    return {
      data: { channel: args.channel, signalled: true },
      summary: dead
        ? `${signalled} A wait on it that a tmux-mcp server abandoned (timed out or cancelled) may have taken this signal, so a later wait_for_channel may not see it: ${CANNOT_WITHDRAW}.`
        : was?.state === "kept"
        ? `${signalled} signal_channel signalled it ${
          ago(was.at)
        } ago too: unless a wait took that signal, tmux dropped both (two signals with nobody waiting cancel out) and a third would be kept.`
        : signalled,
    };
  },
});
