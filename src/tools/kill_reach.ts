/**
 * What a kill could reach and what of it went: the reach of a pane or of windows (read before
 * the kill), and the ids of that reach a read after it no longer finds, each list bounded, with
 * whether the server exited with its last session. Also for a process that ended and took its
 * pane (creating.ts, respawn.ts).
 *
 * @module
 */

import { z } from "zod";
import { capList } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { paneIdSchema, windowIdSchema } from "../mcp/schemas.ts";
import { NO_PROCESS_INFO, type PaneRow, type Snapshot } from "../tmux/snapshot.ts";

/** Ids kept per list in `removed`; a server-wide kill can remove thousands. */
const MAX_REMOVED_IDS = 1_000;

/** The ids a kill removed, per kind: the `removed` of a kill's answer. */
export const removedSchema = z.strictObject({
  panes: z.array(paneIdSchema),
  windows: z.array(windowIdSchema),
  sessions: z.array(z.strictObject({ id: z.string(), name: z.string() })),
});

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

/** What a kill of these windows could reach: their panes, and every session they are in. */
export function reachOfWindows(snapshot: Snapshot, windowIds: Iterable<string>): Reach {
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
