/**
 * A kill's own step and its report: tmux checks the guards at the instant of the kill, lists
 * what the kill takes in the same step (also a pane moved in after the guards' read), and first
 * leaves a session holding a window linked twice one link so that tmux 3.3a does not crash
 * (src/mcp/lone_links.ts); the answer is what of that went, and its summary.
 *
 * @module
 */

import type { z } from "zod";
import { type ActCheck, checkedAgain, type TmuxCondition } from "../mcp/act_step.ts";
import { type DestroyScope, destroyUnwatched, guardDestroy } from "../mcp/destroy_guard.ts";
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
import { plural } from "./arguments.ts";
import { type Reach, removedFrom, type removedSchema } from "./kill_reach.ts";

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
export async function killAndReport(
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
    /** Further facts of the act's own tmux checks at the kill, each with its refusal. */
    readonly checks?: readonly ActCheck[];
  },
): Promise<{
  data: {
    removed: z.infer<typeof removedSchema>;
    serverStopped: boolean;
    complete: boolean;
    omittedEntries: number;
  };
  summary: string;
}> {
  const guard = newGuard();
  const listed = scope.target === "" ? [] : [listingOf(scope, guard)];
  const acts = [...kill.ending?.unlinks ?? [], argv];
  // tmux runs a person's after-list-panes hook after the listing, and one that waits on a
  // run-shell holds the line there while they come to watch: tmux checks again before what
  // follows (the unlinks and the kill: tmux 3.3a has no hook after unlink-window to hold the
  // line between them), and else stops with nothing done.
  const [first, ...rest] = acts;
  const stdout = await destroyUnwatched(ctx, before, scope, kill.unwatched, kill.what, [
    ...listed,
    listed.length > 0
      ? checkedAgain(first, [], {
        message: `${kill.what} was not done: while a person's tmux hook held tmux-mcp's step ` +
          "after its listing, what it kills changed (a person's client came to show it, or a " +
          "pane moved in); nothing was killed.",
        hint: "Ask the person first; pass force: true only when they agreed.",
      })
      : first,
    ...rest,
  ], {
    force: kill.force,
    spawn: true,
    checks: [...kill.ending ? [kill.ending.check] : [], ...kill.checks ?? []],
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

/** The unlinks that go first in a kill's step, and what tmux checks for them at the act. */
export interface Ending {
  readonly unlinks: string[][];
  readonly check: ActCheck;
}

/**
 * What keeps the end of window `windowId` (linked at `placements`) from taking tmux 3.3a down
 * (src/mcp/lone_links.ts): each session that holds it twice or more and nothing else is left
 * one link, its current one, in the kill's own step, checked by tmux at the act as read. `pane`:
 * the kill is of that pane, and the window ends only if it is its last (`last`, as read).
 */
export function endingSafely(
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
