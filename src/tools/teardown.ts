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
 * the same step, or tmux 3.3a crashes (src/mcp/lone_links.ts).
 *
 * @module
 */

import { z } from "zod";
import { capList } from "../mcp/bounds.ts";
import type { ActCheck, TmuxCondition } from "../mcp/act_step.ts";
import {
  type DestroyScope,
  destroyUnwatched,
  guardDestroy,
  guardUnzoom,
} from "../mcp/destroy_guard.ts";
import {
  paneUnwatched,
  serverUnwatched,
  sessionWindowsUnwatched,
  windowUnwatched,
} from "../mcp/unwatched.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, type ToolAnnotations } from "../mcp/tool_spec.ts";
import {
  count,
  listBound,
  paneIdSchema,
  sessionRefSchema,
  windowIdArg,
  windowIdSchema,
} from "../mcp/schemas.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { NO_PROCESS_INFO, type PaneRow, type Placement, type Snapshot } from "../tmux/snapshot.ts";
import {
  endingFormat,
  linksChanged,
  loneLinks,
  paneEndingFormat,
  unlinkExtras,
} from "../mcp/lone_links.ts";
import { sessionLabel, ToolFailure } from "../mcp/errors.ts";
import { changes, paneFields, plural } from "./arguments.ts";
import { clearScreenAlone, screenClearing, scrollOnClear } from "./screen_clear.ts";

/** Ids kept per list in `removed`; a server-wide kill can remove thousands. */
const MAX_REMOVED_IDS = 1_000;

const forceField = z.boolean().default(false).describe(
  "Also what holds this server's own or a watched pane",
);

const removedSchema = z.strictObject({
  panes: z.array(paneIdSchema),
  windows: z.array(windowIdSchema),
  sessions: z.array(z.strictObject({ id: z.string(), name: z.string() })),
});

const removedOutput = {
  removed: removedSchema.describe(
    "Everything that went: panes, windows, and sessions that ended with their last window.",
  ),
  serverStopped: z.boolean().describe("Whether the tmux server exited (its last session went)."),
  ...listBound,
};

/** How long a server left with no session may take to exit before it is taken to stay. */
const SERVER_EXIT_MS = 1_000;

/**
 * The server as a kill left it. tmux exits once its last session is gone (exit-empty, on by
 * default), but a moment after the command that killed it answered: a server still answering
 * with no session is read again until it has gone or stays (exit-empty off), so
 * `serverStopped` is not false for a server on its way out.
 */
async function afterKill(
  ctx: TmuxContext,
  before: { readonly running: boolean },
): Promise<Snapshot> {
  let after = await ctx.snapshot(NO_PROCESS_INFO);
  const until = performance.now() + SERVER_EXIT_MS;
  while (
    before.running && after.running && after.sessions.length === 0 &&
    performance.now() < until && !ctx.signal.aborted
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    after = await ctx.snapshot(NO_PROCESS_INFO);
  }
  return after;
}

/** What a kill could reach; everything else that changes meanwhile is someone else's doing. */
export interface Reach {
  readonly panes: ReadonlySet<string>;
  readonly windows: ReadonlySet<string>;
  readonly sessions: ReadonlySet<string>;
  /** Names of the sessions, as last read. */
  readonly names: ReadonlyMap<string, string>;
}

function reachOfWindows(snapshot: Snapshot, windowIds: Iterable<string>): Reach {
  const windows = new Set(windowIds);
  const panes = new Set(snapshot.panes.filter((p) => windows.has(p.windowId)).map((p) => p.id));
  const sessions = new Set(
    snapshot.windows.filter((w) => windows.has(w.id)).flatMap((w) =>
      w.placements.map((p) => p.sessionId)
    ),
  );
  return { panes, windows, sessions, names: sessionNames(snapshot) };
}

/**
 * What the end of one pane could take: the pane, its window (if it was the last pane there) and
 * the sessions that window is in (those it was the last window of), by the pane's placements.
 */
export function reachOfPane(pane: PaneRow): Reach {
  return {
    panes: new Set([pane.id]),
    windows: new Set([pane.windowId]),
    sessions: new Set(pane.placements.map((p) => p.sessionId)),
    names: new Map(pane.placements.map((p) => [p.sessionId, p.sessionName])),
  };
}

function sessionNames(snapshot: Snapshot): Map<string, string> {
  return new Map(snapshot.sessions.map((s) => [s.id, s.name]));
}

/** The panes `scope` holds in `snapshot` (what the guards judge). */
function panesIn(snapshot: Snapshot, scope: DestroyScope): PaneRow[] {
  switch (scope.kind) {
    case "pane":
      return snapshot.panes.filter((p) => p.id === scope.target);
    case "window":
      return snapshot.panes.filter((p) => p.windowId === scope.target);
    case "session": {
      const windows = new Set(
        snapshot.windows.filter((w) => w.placements.some((p) => p.sessionId === scope.target))
          .map((w) => w.id),
      );
      return snapshot.panes.filter((p) => windows.has(p.windowId));
    }
    case "server":
      return snapshot.panes;
  }
}

/**
 * The tmux command that lists, in the kill's own step, every pane the kill takes and every
 * session its window is in: `guard` frames the records. Ids are tmux's own (`%N`, `@N`, `$N`).
 */
function listingOf(scope: DestroyScope, guard: string): string[] {
  const format = recordFormat(guard, [
    "#{session_id}",
    "#{session_name}",
    "#{window_id}",
    "#{pane_id}",
  ]);
  const id = scope.target;
  if (!/^[%@$]\d+$/.test(id) && scope.kind !== "server") throw new RangeError(`not an id: ${id}`);
  switch (scope.kind) {
    case "pane":
      return ["list-panes", "-a", "-f", `#{==:#{pane_id},${id}}`, "-F", format];
    case "window":
      return ["list-panes", "-a", "-f", `#{==:#{window_id},${id}}`, "-F", format];
    case "session":
      return ["list-panes", "-s", "-t", id, "-F", format];
    case "server":
      return ["list-panes", "-a", "-F", format];
  }
}

/** What the listing of {@link listingOf} says the kill reached; null when it said nothing. */
function reachOfListing(stdout: Uint8Array, guard: string, scope: DestroyScope): Reach | null {
  const records = parseRecords(stdout, guard, 4);
  if (records.length === 0) return null;
  const names = new Map(records.map(([s, name]) => [s, name]));
  return {
    panes: new Set(scope.kind === "pane" ? [scope.target] : records.map((r) => r[3])),
    windows: new Set(records.map((r) => r[2])),
    sessions: new Set(scope.kind === "session" ? [scope.target] : names.keys()),
    names,
  };
}

/**
 * Kills what `scope` names, then reports what of its reach is gone. tmux checks at the instant
 * of the kill what {@link destroyUnwatched} checks (the owner marks, and unless `force` the
 * caller's pane and `unwatched`) on the panes there then, and lists them in the same step: the
 * reply names what the kill took, also a pane moved in after the guard's read. `reach` (from
 * the read before) stands in only should that listing not arrive (a server that exits may take
 * its last words with it).
 */
async function killAndReport(
  ctx: TmuxContext,
  before: Snapshot,
  reach: Reach,
  scope: DestroyScope,
  argv: string[],
  kill: {
    readonly what: string;
    /** Names what is destroyed for guardDestroy's refusals ("Window @2"). */
    readonly label: string;
    readonly unwatched: TmuxCondition;
    readonly force?: boolean;
    /** What keeps a window's end from crashing tmux ({@link endingSafely}). */
    readonly ending?: Ending;
  },
) {
  const guard = newGuard();
  const listed = scope.target === "" ? [] : [listingOf(scope, guard)];
  const stdout = await destroyUnwatched(ctx, before, scope, kill.unwatched, kill.what, [
    ...listed,
    ...kill.ending?.unlinks ?? [],
    argv,
  ], {
    force: kill.force,
    spawn: true,
    checks: kill.ending ? [kill.ending.check] : [],
    recheck: async () => {
      const now = await ctx.snapshot(NO_PROCESS_INFO);
      await guardDestroy(ctx, now, panesIn(now, scope), kill.label, kill.force);
    },
  });
  const took = reachOfListing(stdout, guard, scope) ?? reach;
  const { removed, serverStopped, omitted, counts } = await removedFrom(
    ctx,
    before,
    took,
    reach.names,
  );
  return {
    data: { removed, serverStopped, complete: omitted === 0, omittedEntries: omitted },
    summary:
      `Removed ${plural(counts.panes, "pane")}, ${plural(counts.windows, "window")}, ${
        plural(counts.sessions, "session")
      }${
        removed.sessions.length
          ? ` (${removed.sessions.map((s) => `${s.id} ${JSON.stringify(s.name)}`).join(", ")})`
          : ""
      }${serverStopped ? "; the tmux server exited" : ""}.` +
      (omitted ? ` ${omitted} ids left out of the lists to stay within the result bound.` : ""),
  };
}

/**
 * What of `took` (what an act reached: a kill, or a process that ended and took its pane) is
 * gone from a read after it, each list bounded, and whether the server exited with its last
 * session. Only what the act reached counts: what else went meanwhile is someone else's doing.
 * A session is named as `took` has it, else as `names` has it. `before`: whether a server ran
 * before the act (the server stopped only if one did).
 */
export async function removedFrom(
  ctx: TmuxContext,
  before: { readonly running: boolean },
  took: Reach,
  names: ReadonlyMap<string, string> = took.names,
): Promise<{
  removed: z.infer<typeof removedSchema>;
  serverStopped: boolean;
  /** Ids left out of the lists. */
  omitted: number;
  /** How many of each went, those left out included. */
  counts: { panes: number; windows: number; sessions: number };
}> {
  const after = await afterKill(ctx, before);
  const gone = (ids: ReadonlySet<string>, now: readonly { id: string }[]) => {
    const still = new Set(now.map((r) => r.id));
    return [...ids].filter((id) => !still.has(id));
  };
  const panes = capList(gone(took.panes, after.panes), MAX_REMOVED_IDS);
  const windows = capList(gone(took.windows, after.windows), MAX_REMOVED_IDS);
  const sessions = capList(
    gone(took.sessions, after.sessions).map((id) => ({
      id,
      name: took.names.get(id) ?? names.get(id) ?? "",
    })),
    MAX_REMOVED_IDS,
  );
  return {
    removed: { panes: panes.kept, windows: windows.kept, sessions: sessions.kept },
    serverStopped: before.running && !after.running,
    omitted: panes.omitted + windows.omitted + sessions.omitted,
    counts: {
      panes: panes.kept.length + panes.omitted,
      windows: windows.kept.length + windows.omitted,
      sessions: sessions.kept.length + sessions.omitted,
    },
  };
}

/** The unlinks that go first in a kill's step, and what tmux checks for them at the act. */
interface Ending {
  readonly unlinks: string[][];
  readonly check: ActCheck;
}

/**
 * What keeps the end of window `windowId` (linked at `placements`) from taking tmux 3.3a down
 * (src/mcp/lone_links.ts): each session that holds it twice or more and nothing else is left
 * one link, its current one, in the kill's own step, checked by tmux at the act as read. `pane`:
 * the kill is of that pane, and the window ends only if it is its last (`last`, as read).
 */
function endingSafely(
  before: Snapshot,
  windowId: string,
  placements: readonly Placement[],
  what: string,
  pane?: { readonly id: string; readonly last: boolean },
): Ending {
  const planned = pane && !pane.last ? [] : loneLinks(before, placements);
  return {
    unlinks: unlinkExtras(planned, what),
    check: {
      condition: pane
        ? { target: pane.id, format: paneEndingFormat(windowId, planned) }
        : { target: windowId, format: endingFormat(windowId, planned) },
      refusal: linksChanged(what, windowId),
    },
  };
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
    return await killAndReport(ctx, before, reach, scope, ["kill-window", "-t", window.id], {
      what,
      label: `Window ${window.id}`,
      unwatched: windowUnwatched(before, window.id),
      force: args.force,
      ending: endingSafely(before, window.id, window.placements, what),
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
    if (args.history) commands.push(["clear-history", "-t", pane.id]);
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
