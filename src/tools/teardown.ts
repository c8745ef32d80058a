/**
 * Teardown: killing panes, windows, sessions and servers, and clearing a pane (its screen
 * alone without the lines going into its history: screen_clear.ts). Toolset teardown, off
 * unless selected.
 *
 * Each tool refuses what contains the pane this server runs in or a pane a person is watching
 * unless `force` (src/mcp/destroy_guard.ts), and reports exactly what went: tmux cascades — a
 * window goes with its last pane, a session with its last window, the server with its last
 * session — so the answer is what of the panes, windows and sessions tmux listed in the kill's
 * own step (a pane moved in after the guards' read included) is gone from a read after it.
 * Under `--own-panes-only`, and for the caller's own pane unless `force`, tmux also checks at
 * that instant every pane the kill takes, not only the ones read before. A kill that ends a
 * window linked twice into a session holding nothing else first leaves that session one link in
 * the same step, or tmux 3.3a crashes (src/mcp/lone_links.ts). The kill's step and its report:
 * kill_step.ts; what a kill could reach and what of it went: kill_reach.ts.
 *
 * @module
 */

import { z } from "zod";
import { type ActCheck, checkedAgain } from "../mcp/act_step.ts";
import { destroyUnwatched, guardDestroy, guardUnzoom } from "../mcp/destroy_guard.ts";
import {
  paneUnwatched,
  serverUnwatched,
  sessionWindowsUnwatched,
  windowUnwatched,
} from "../mcp/unwatched.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, type ToolAnnotations } from "../mcp/tool_spec.ts";
import { count, listBound, paneIdSchema, sessionRefSchema, windowIdArg } from "../mcp/schemas.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { NO_PROCESS_INFO, type Snapshot } from "../tmux/snapshot.ts";
import { sessionLabel, ToolFailure } from "../mcp/errors.ts";
import { changes, paneFields } from "./arguments.ts";
import { clearScreenAlone, screenClearing, scrollOnClear } from "./screen_clear.ts";
import { reachOfPane, reachOfWindows, removedSchema } from "./kill_reach.ts";
import { endingSafely, killAndReport } from "./kill_step.ts";
import { fallbackMarksCheck, type Removal } from "./alert_fallback.ts";

const forceField = z.boolean().default(false).describe(
  "Also what holds this server's own or a watched pane",
);

const removedOutput = {
  removed: removedSchema.describe(
    "Everything that went: panes, windows, and sessions that ended with their last window.",
  ),
  serverStopped: z.boolean().describe("Whether the tmux server exited (its last session went)."),
  ...listBound,
};

/** What lifts a kill's refusal for the marks of the window tmux falls back to. */
const KILL_LIFTS = "Pass force: true only when the person agreed; tmux-mcp started with " +
  "--allow-attended-input lifts this too. Nothing was killed.";

/**
 * Unless `force` or --allow-attended-input: the check that the window tmux falls back to in a
 * session whose current window the kill ends clears no mark a person's status line shows
 * (alert_fallback.ts), for tmux to make at the kill beside the kill's own.
 */
async function sparingMarks(
  ctx: TmuxContext,
  before: Snapshot,
  removal: Removal,
  what: string,
  force: boolean,
): Promise<ActCheck[]> {
  if (force || ctx.config.allowAttendedInput) return [];
  return [await fallbackMarksCheck(ctx, before, removal, what, KILL_LIFTS)];
}

/** Kills remove things for good; the same id killed again finds nothing more to remove. */
const KILLS: ToolAnnotations = changes({ destructive: true, idempotent: true });

const killPane = defineTool({
  name: "kill_pane",
  title: "Kill pane",
  toolset: "teardown",
  description:
    "Kill a pane and its process; a window goes with its last pane, a session with its last " +
    "window (removed lists all). Refused for this server's own or a watched pane, or one " +
    "hidden by a watched zoom, unless force.",
  input: { paneId: paneIdSchema, force: forceField },
  output: removedOutput,
  annotations: KILLS,
  async run(args, ctx) {
    const before = await ctx.snapshot(NO_PROCESS_INFO);
    const pane = ctx.pane(before, args.paneId);
    await guardDestroy(ctx, before, [pane], `Pane ${pane.id}`, args.force);
    guardUnzoom(ctx, before, pane, `Killing pane ${pane.id}`, args.force);
    const what = `Killing pane ${pane.id}`;
    const last = !before.panes.some((p) => p.windowId === pane.windowId && p.id !== pane.id);
    const ending = endingSafely(before, pane.windowId, pane.placements, what, {
      id: pane.id,
      last,
    });
    const removal = { windowId: pane.windowId, pane: { id: pane.id, last } };
    return await killAndReport(
      ctx,
      before,
      reachOfPane(pane),
      { kind: "pane", target: pane.id },
      ["kill-pane", "-t", pane.id],
      {
        what,
        label: `Pane ${pane.id}`,
        // Named by the pane: the window it is in at the kill.
        unwatched: windowUnwatched(before, pane.id),
        force: args.force,
        ending,
        checks: await sparingMarks(ctx, before, removal, what, args.force),
      },
    );
  },
});

const killWindow = defineTool({
  name: "kill_window",
  title: "Kill window",
  toolset: "teardown",
  description:
    "Kill a window, from every session it is linked into; a session left empty ends (removed " +
    "lists all). Refused if it holds this server's own or a watched pane, unless force.",
  input: { windowId: windowIdArg, force: forceField },
  output: removedOutput,
  annotations: KILLS,
  async run(args, ctx) {
    const before = await ctx.snapshot(NO_PROCESS_INFO);
    const window = ctx.window(before, args.windowId);
    const reach = reachOfWindows(before, [window.id]);
    const panes = before.panes.filter((p) => reach.panes.has(p.id));
    await guardDestroy(ctx, before, panes, `Window ${window.id}`, args.force);
    const scope = { kind: "window", target: window.id } as const;
    const what = `Killing window ${window.id}`;
    const ending = endingSafely(before, window.id, window.placements, what);
    const removal = { windowId: window.id };
    return await killAndReport(ctx, before, reach, scope, ["kill-window", "-t", window.id], {
      what,
      label: `Window ${window.id}`,
      unwatched: windowUnwatched(before, window.id),
      force: args.force,
      ending,
      checks: await sparingMarks(ctx, before, removal, what, args.force),
    });
  },
});

const killSession = defineTool({
  name: "kill_session",
  title: "Kill session",
  toolset: "teardown",
  description:
    "Kill a session; windows linked elsewhere survive, the last session takes the server " +
    "(removed lists all). Refused if it holds this server's own or a watched pane, unless force.",
  input: { session: sessionRefSchema, force: forceField },
  output: removedOutput,
  annotations: { ...KILLS, idempotentHint: false },
  async run(args, ctx) {
    const before = await ctx.snapshot(NO_PROCESS_INFO);
    const session = ctx.session(before, args.session);
    const windows = before.windows.filter((w) =>
      w.placements.some((p) => p.sessionId === session.id)
    );
    const reach = reachOfWindows(before, windows.map((w) => w.id));
    const panes = before.panes.filter((p) => reach.panes.has(p.id));
    const label = `Session ${sessionLabel(session.id, session.name)}`;
    await guardDestroy(ctx, before, panes, label, args.force);
    return await killAndReport(
      ctx,
      before,
      { ...reach, sessions: new Set([session.id]) },
      { kind: "session", target: session.id },
      ["kill-session", "-t", session.id],
      {
        what: `Killing session ${session.id}`,
        label,
        unwatched: sessionWindowsUnwatched(before, session.id),
        force: args.force,
      },
    );
  },
});

const killServer = defineTool({
  name: "kill_server",
  title: "Kill server",
  toolset: "teardown",
  description: "Kill the tmux server and all in it (removed lists all). Refused if it holds this " +
    "server's own or a watched pane, unless force.",
  input: { force: forceField },
  output: removedOutput,
  annotations: { ...KILLS, idempotentHint: false },
  async run(args, ctx) {
    const before = await ctx.snapshot(NO_PROCESS_INFO);
    ctx.requireRunning(before);
    const label = `The tmux server on ${ctx.socketLabel}`;
    await guardDestroy(ctx, before, before.panes, label, args.force);
    const reach = reachOfWindows(before, before.windows.map((w) => w.id));
    const anySession = before.sessions[0]?.id ?? "";
    return await killAndReport(
      ctx,
      before,
      {
        ...reach,
        sessions: new Set(before.sessions.map((s) => s.id)),
      },
      { kind: "server", target: anySession },
      ["kill-server"],
      {
        what: `Killing the tmux server on ${ctx.socketLabel}`,
        label,
        unwatched: serverUnwatched(before, anySession),
        // A server without sessions shows nothing to anyone.
        force: args.force || before.sessions.length === 0,
      },
    );
  },
});

const clearPane = defineTool({
  name: "clear_pane",
  title: "Clear pane",
  toolset: "teardown",
  description:
    "Clear a pane's screen and/or scrollback, for good (the program is not told). Refused " +
    "for this server's own or a watched pane unless force.",
  input: {
    paneId: paneIdSchema,
    screen: z.boolean().default(true),
    history: z.boolean().default(true),
    force: forceField,
  },
  output: {
    paneId: paneIdSchema,
    clearedScreen: z.boolean(),
    clearedHistory: z.boolean(),
    historySize: count().describe("Lines of scrollback left."),
  },
  annotations: { ...KILLS, idempotentHint: false },
  async run(args, ctx) {
    if (!args.screen && !args.history) {
      throw new ToolFailure(
        "Nothing to clear: screen and history are both false.",
        "Pass screen: true and/or history: true.",
      );
    }
    const { snapshot: before, pane } = await ctx.paneSnapshot(args.paneId);
    await guardDestroy(ctx, before, [pane], `Pane ${pane.id}`, args.force);
    // The screen alone: its lines must not go into the history that is kept. With the history,
    // they are cleared with it, in the same step.
    const screenOnly = args.screen && !args.history ? await scrollOnClear(ctx, pane.id) : null;
    const commands: string[][] = [];
    if (screenOnly) commands.push(...screenClearing(pane.id, screenOnly));
    else if (args.screen) commands.push(["send-keys", "-R", "-t", pane.id]);
    const history = ["clear-history", "-t", pane.id];
    // After the screen's clear, a person's after-send-keys hook may hold the line while they
    // come to the pane: tmux checks again before the history goes. A screen cleared cannot be
    // given back; the refusal says it went, and that the history stays.
    if (args.history && commands.length > 0) {
      commands.push(checkedAgain(history, [], {
        message: `The screen of ${pane.id} was cleared, but then a person's client came to ` +
          "show the pane while the step was under way (a person's tmux hook held tmux-mcp's " +
          "step between its commands): its history was not cleared (with scroll-on-clear on, " +
          "tmux's default, the screen's lines went into it).",
        hint: "Ask the person first; pass force: true only when they agreed.",
      }));
    } else if (args.history) commands.push(history);
    const act = (step: TmuxContext) =>
      destroyUnwatched(
        step,
        before,
        { kind: "pane", target: pane.id },
        paneUnwatched(before, pane.id),
        `Clearing ${pane.id}`,
        commands,
        {
          force: args.force,
          recheck: async () => {
            const now = await ctx.paneSnapshot(pane.id);
            await guardDestroy(ctx, now.snapshot, [now.pane], `Pane ${pane.id}`, args.force);
          },
        },
      );
    if (screenOnly) await clearScreenAlone(ctx, pane.id, screenOnly, act);
    else await act(ctx);
    const now = await paneFields(ctx, pane.id, ["#{history_size}", "#{alternate_on}"]);
    if (now === null) {
      throw new ToolFailure(`Pane ${pane.id} went away meanwhile.`, "list_panes lists the panes.");
    }
    // tmux clears the alternate screen a full-screen program draws on; the screen saved under
    // it (`capture-pane -a` reads it) is not cleared and comes back when the program leaves.
    const saved = args.screen && now[1] === "1"
      ? " A full-screen program has the pane: the screen saved under it is not cleared and " +
        "comes back when the program exits."
      : "";
    return {
      data: {
        paneId: pane.id,
        clearedScreen: args.screen,
        clearedHistory: args.history,
        historySize: Number(now[0]),
      },
      summary: `Cleared ${
        [args.screen ? "the screen" : "", args.history ? "the history" : ""].filter(Boolean).join(
          " and ",
        )
      } of ${pane.id}.${saved}`,
    };
  },
});

/** Registers the teardown tools (toolset teardown). */
export function registerTeardownTools(registry: ToolRegistry): void {
  registry.add(killPane, killWindow, killSession, killServer, clearPane);
}
