/**
 * View guards: the refusal of a change a person would see (a window, session or pane on a
 * person's screen, or one listed in their status line), unless the server was started with
 * `--allow-attended-input`; and {@link changeView}, which has tmux check it again at the instant
 * of the change.
 *
 * @module
 */

import { clientLabel, isPerson, showsWholeSession } from "../tmux/identity.ts";
import type { RunOptions } from "../tmux/run.ts";
import type { ClientRow, PaneBrief, Snapshot } from "../tmux/snapshot.ts";
import { type ActCheck, runIf, type TmuxCondition } from "./act_step.ts";
import type { TmuxContext } from "./context.ts";
import { ToolFailure } from "./errors.ts";
import {
  paneUnwatched,
  serverUnwatched,
  sessionUnwatched,
  windowListedUnwatched,
  windowUnwatched,
} from "./unwatched.ts";

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
   * Windows whose entry in the status line changes (its style, its format, its name), or what
   * a person's keys would do there once they switch to it (synchronize-panes): every session
   * the window is in lists it, a person's among them, one key away.
   */
  readonly listedWindows?: readonly string[];
  /**
   * Panes whose window (the one each is in at the instant of the act) changes as
   * `listedWindows` says: for an option set at pane scope.
   */
  readonly listedWindowsOf?: readonly string[];
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
  const listedPaneWindows = (scope.listedWindowsOf ?? []).flatMap((id) =>
    snapshot.panes.filter((p) => p.id === id).map((p) => p.windowId)
  );
  for (const w of [...(scope.listedWindows ?? []), ...listedPaneWindows]) {
    const sessions = sessionsOfWindow(snapshot, w);
    const c = people.find((c) => sessions.has(c.sessionId));
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
    // Found by the pane's id in every session's windows: the window it is in then.
    ...(scope.listedWindowsOf ?? []).map((p) => windowListedUnwatched(snapshot, p)),
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
    const { failed, partialAt, stdout } = await runIf(ctx, conditions, commands, [], {
      spawn,
      partial: true,
    });
    // Stopped by tmux's check again before a later command (act_step.ts checkedAgain): what it
    // is made of undoes what went before (a creation's lend), and nothing was changed.
    if (failed === null && partialAt === null) return stdout;
    if (failed !== null && failed < checks.length) throw checks[failed].refusal;
    // Read again what was read before: the refusal names the client from it.
    current = await ctx.snapshot(current.scope);
  }
  throw new ToolFailure(
    `${what} was not made: a person's client came to show it at that moment.`,
    VIEW_HINT,
  );
}
