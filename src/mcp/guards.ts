/**
 * Guards: tmux facts turned into refusals before any keystroke, process or kill reaches a
 * pane. The person at the keyboard comes first: a tool never types into the pane the agent
 * itself runs in, a pane a person is watching, a dead pane, or a pane in copy mode (or any
 * other mode), and never kills what a person is watching or the agent's own pane. Each
 * refusal says why and what would lift it.
 *
 * @module
 */

import type { PaneRow, Snapshot } from "../tmux/snapshot.ts";
import type { TmuxContext } from "./context.ts";
import { ToolFailure } from "./errors.ts";

/** What a caller may lift. */
export interface InputGuardOptions {
  /** Lifts only the refusal of the caller's own pane. */
  readonly force?: boolean;
  /** Skip the dead-pane refusal (respawning a dead pane is the point). */
  readonly allowDead?: boolean;
  /** Skip the mode refusal (leaving copy mode is the point). */
  readonly allowMode?: boolean;
}

/** The panes that receive what is typed into `pane`: its whole window when synchronized. */
export function inputCohort(snapshot: Snapshot, pane: PaneRow): PaneRow[] {
  if (!pane.synchronized) return [pane];
  return snapshot.panes.filter((p) => p.windowId === pane.windowId);
}

function watchers(ctx: TmuxContext, snapshot: Snapshot, paneId: string): string {
  const clients = ctx.attended(snapshot).get(paneId) ?? [];
  return clients.map((c) => c.tty || c.name).join(", ");
}

/**
 * Refuses input (typing, pasting, running, respawning) into `pane` — and, when its window
 * has synchronize-panes on, into any pane of that cohort — unless every guard passes.
 * Returns the panes the input will reach.
 */
export function guardInput(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  options: InputGuardOptions = {},
): PaneRow[] {
  const cohort = inputCohort(snapshot, pane);
  const caller = ctx.caller(snapshot);
  const attended = ctx.attended(snapshot);
  const via = (p: PaneRow) =>
    p.id === pane.id
      ? `Pane ${p.id}`
      : `Pane ${p.id} (synchronized with ${pane.id} in ${pane.windowId})`;
  for (const p of cohort) {
    if (p.id === caller.paneId && !options.force) {
      throw new ToolFailure(
        `${
          via(p)
        } is the pane this MCP server runs in; typing there would feed the agent its own input.`,
        "Pass force: true only if you really mean to type into your own pane.",
      );
    }
    if (attended.has(p.id) && !ctx.config.allowAttendedInput) {
      throw new ToolFailure(
        `${via(p)} is being watched by a person (client ${
          watchers(ctx, snapshot, p.id)
        }); input there would interfere with them.`,
        "Ask the person, use another pane (create_window or split_window), or start tmux-mcp with --allow-attended-input.",
      );
    }
    if (p.dead && !options.allowDead) {
      throw new ToolFailure(
        `${via(p)} is dead: its process exited${
          p.deadStatus !== null ? ` with status ${p.deadStatus}` : ""
        }.`,
        "respawn_pane restarts it; capture_pane still reads what it left.",
      );
    }
    if (p.inMode && !options.allowMode) {
      throw new ToolFailure(
        `${via(p)} is in ${p.mode || "a mode"}; keys would drive the mode, not the program.`,
        "exit_copy_mode leaves it; or wait for the person to leave it.",
      );
    }
  }
  return cohort;
}

/**
 * Refuses to destroy (kill, clear) panes that include the caller's own or one a person is
 * watching, unless `force`. `what` names the thing being destroyed for the message.
 */
export function guardDestroy(
  ctx: TmuxContext,
  snapshot: Snapshot,
  panes: readonly PaneRow[],
  what: string,
  force: boolean | undefined,
): void {
  if (force) return;
  const caller = ctx.caller(snapshot);
  const own = panes.find((p) => p.id === caller.paneId);
  if (own) {
    throw new ToolFailure(
      `${what} contains ${own.id}, the pane this MCP server runs in; destroying it would end the agent's own session.`,
      "Pass force: true only if that is really intended.",
    );
  }
  const attended = ctx.attended(snapshot);
  const watched = panes.find((p) => attended.has(p.id));
  if (watched) {
    throw new ToolFailure(
      `${what} contains ${watched.id}, which a person is watching (client ${
        watchers(ctx, snapshot, watched.id)
      }).`,
      "Ask the person first; pass force: true only when they agreed.",
    );
  }
}
