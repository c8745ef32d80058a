/**
 * Destroy guards: the refusals before a kill or a clear. Nothing kills what a person is
 * watching or the agent's own pane unless `force`, nor, under `--own-panes-only`, a pane this
 * server did not create; a kill that would unzoom a window a person sees is refused too; and
 * {@link destroyUnwatched} has tmux check the same facts again at the instant of the act.
 *
 * @module
 */

import type { PaneBrief, PaneRow, Snapshot } from "../tmux/snapshot.ts";
import { type ActCheck, runIf, type TmuxCondition } from "./act_step.ts";
import type { TmuxContext } from "./context.ts";
import { ToolFailure } from "./errors.ts";
import { watchers } from "./input_guard.ts";
import { notOwnedFormat, requireOwned } from "./ownership.ts";

/**
 * Refuses to destroy (kill, clear) panes that include the caller's own or one a person is
 * watching, unless `force`; and, under `--own-panes-only`, any pane this server did not
 * create, force or not. `what` names the thing being destroyed for the message.
 */
export async function guardDestroy(
  ctx: TmuxContext,
  snapshot: Snapshot,
  panes: readonly PaneRow[],
  what: string,
  force: boolean | undefined,
): Promise<void> {
  // Not lifted by force: only a restart without --own-panes-only lifts it.
  await requireOwned(ctx, panes, `Destroying ${what[0].toLowerCase()}${what.slice(1)}`);
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

/**
 * Refuses, unless `force`, to kill a pane of a zoomed window a person is looking at: tmux
 * unzooms a window when any of its panes goes, the hidden ones too, so the person's screen
 * would change under them (guardDestroy has already refused the pane they see). `hint` says
 * what lifts it, for an act whose `force` means something else.
 */
export function guardUnzoom(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  what: string,
  force: boolean | undefined,
  hint = "Ask the person first; pass force: true only when they agreed.",
): void {
  if (force || !pane.windowZoomed) return;
  const attended = ctx.attended(snapshot);
  const shown = snapshot.panes.find((p) =>
    p.windowId === pane.windowId && p.id !== pane.id && attended.has(p.id)
  );
  if (!shown) return;
  throw new ToolFailure(
    `${what} would unzoom window ${pane.windowId}, which client ${
      watchers(ctx, snapshot, shown.id)
    } shows zoomed on ${shown.id}.`,
    hint,
  );
}

/**
 * What a destroying act takes, as tmux finds it at that instant: one pane, the panes of a
 * window, those of a session's windows, or every pane of the server. `target` names it (for
 * the server: any of its sessions).
 */
export interface DestroyScope {
  readonly kind: "pane" | "window" | "session" | "server";
  readonly target: string;
}

/** 1 while no pane of `kind`'s loop (expanded for its target) passes the condition `test`. */
function noPaneIn(kind: DestroyScope["kind"], test: string): string {
  const mark = `#{?${test},X,}`;
  const loop = kind === "pane"
    ? mark
    : kind === "window"
    ? `#{P:${mark}}`
    : kind === "session"
    ? `#{W:#{P:${mark}}}`
    : `#{S:#{W:#{P:${mark}}}}`;
  return `#{==:${loop},}`;
}

/**
 * Destroys (or clears) what {@link guardDestroy} let through, checked again by tmux at that
 * instant, on the panes the act takes then: under `--own-panes-only` that each is this
 * server's (force or not), and unless `force` that none is the caller's own and nobody watches
 * (`unwatched`). A pane moved in after the guard's read (join_pane, move_window are manage
 * tools) or a person's client that came to show it stops the act. When tmux refuses a pane,
 * `recheck` (a fresh read through the guards) may say which in its own words. Kills run in a
 * process of their own (`spawn`). `checks` are checked first, force or not.
 */
export async function destroyUnwatched(
  ctx: TmuxContext,
  snapshot: Snapshot<PaneBrief>,
  scope: DestroyScope,
  unwatched: TmuxCondition,
  what: string,
  commands: readonly (readonly string[])[],
  options: {
    readonly force?: boolean;
    readonly spawn?: boolean;
    readonly recheck?: () => Promise<unknown>;
    /** Facts tmux checks first, force or not (see {@link ActCheck}). */
    readonly checks?: readonly ActCheck[];
  } = {},
): Promise<Uint8Array> {
  const acts = options.checks ?? [];
  const checks: { kind: "owner" | "caller" | "watched" | number; condition: TmuxCondition }[] = acts
    .map((c, i) => ({ kind: i, condition: c.condition }));
  const owner = ctx.config.ownPanesOnly ? ctx.config.owner : undefined;
  // A server without sessions holds no pane (and has no target to expand a loop for).
  const panes = scope.target !== "";
  if (owner && panes) {
    const format = noPaneIn(scope.kind, notOwnedFormat(owner));
    checks.push({ kind: "owner", condition: { target: scope.target, format } });
  }
  if (!options.force) {
    // A pane's id never changes: guardDestroy has judged it. A window, a session or the
    // server may have taken the caller's pane in since.
    const caller = scope.kind === "pane" || !panes ? null : ctx.callerFormat(snapshot);
    if (caller !== null) {
      const format = noPaneIn(scope.kind, caller);
      checks.push({ kind: "caller", condition: { target: scope.target, format } });
    }
    checks.push({ kind: "watched", condition: unwatched });
  }
  const { failed, stdout } = await runIf(
    ctx,
    checks.map((c) => c.condition),
    commands,
    [],
    { spawn: options.spawn },
  );
  if (failed === null) return stdout;
  const kind = checks[failed].kind;
  if (typeof kind === "number") throw acts[kind].refusal;
  // A fresh read names the pane and whose it is; a watcher is named below as it was found.
  if (kind !== "watched") await options.recheck?.();
  switch (kind) {
    case "owner":
      throw new ToolFailure(
        `${what} was not done: at that moment it held a pane this server did not create (one ` +
          "moved in after the check), and it runs with --own-panes-only.",
        "list_panes shows where the panes are now; work in panes this server creates " +
          "(create_window, split_window, create_session).",
      );
    case "caller":
      throw new ToolFailure(
        `${what} was not done: at that moment it held the pane this MCP server runs in (moved ` +
          "in after the check); destroying it would end the agent's own session.",
        "Pass force: true only if that is really intended.",
      );
    default:
      throw new ToolFailure(
        `${what} was not done: a person's client came to show it at that moment.`,
        "Ask the person first; pass force: true only when they agreed.",
      );
  }
}
