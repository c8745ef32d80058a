/**
 * Agent-owned panes. Every pane this server creates (create_session, create_window,
 * split_window) is marked in tmux itself with a pane user option naming this server's owner
 * id — so a person sees it (`tmux show-options -p`), and a restart of the server with the same
 * `--owner` knows its panes again. Moving a pane (break_pane, join_pane, move_window) never
 * marks it: otherwise a server could take over any pane by moving it. With `--own-panes-only`,
 * every tool that types, pastes, runs, respawns, kills, clears or pipes acts only on panes
 * marked with this server's owner id, and refuses any other with the reason.
 *
 * The check is made twice, as the other guards are: against a read of the marks before the
 * act (a refusal that says whose the pane is), and, for input and kills, by tmux itself on the
 * same command line as the act (`#{@tmux-mcp-owner}` compared in the if-shell condition, over
 * every pane the act reaches at that instant: a pane moved in after the read counts).
 *
 * @module
 */

import { execFast, execOnce } from "../tmux/control.ts";
import { chainArgv, newGuard, parseRecords, randomHex, recordFormat } from "../tmux/format.ts";
import { judgeResult } from "../tmux/tmux_error.ts";
import type { TmuxContext } from "./context.ts";
import { OWNER_ID } from "./owner_id.ts";
import { ToolFailure } from "./errors.ts";

/** The pane user option that names the owner. */
export const OWNER_OPTION = "@tmux-mcp-owner";

export { OWNER_ID };

/** An owner id for a server started without `--owner`. */
export function newOwnerId(): string {
  return `tmux-mcp-${randomHex(4)}`;
}

/**
 * A tmux condition (format) that holds while the pane it is expanded for is not `owner`'s:
 * for pane loops (`#{P:...}`) tmux runs at the instant of an act. tmux expands the mark's
 * value once and compares it as text, so a mark a program wrote can name an owner but never
 * add format syntax of its own.
 */
export function notOwnedFormat(owner: string): string {
  if (!OWNER_ID.test(owner)) throw new RangeError(`not an owner id: ${owner}`);
  return `#{!=:#{${OWNER_OPTION}},${owner}}`;
}

/** The owner of each pane named (absent: unmarked), read in one tmux call. */
export async function ownersOf(
  ctx: TmuxContext,
  paneIds: readonly string[],
): Promise<Map<string, string>> {
  const guard = newGuard();
  const format = recordFormat(guard, ["#{pane_id}", `#{${OWNER_OPTION}}`]);
  // One pane (the usual act): only its window's panes are listed (as snapshot.ts reads one
  // pane), where `-a` would make tmux test every pane of the server against a filter; a pane
  // gone meanwhile is simply not found. An id is checked to be %N, so it cannot carry a format
  // of its own into the filter.
  const one = paneIds.length === 1 && /^%\d+$/.test(paneIds[0]) ? paneIds[0] : null;
  const which = one === null ? ["-a"] : ["-t", one, "-f", `#{==:#{pane_id},${one}}`];
  const result = await execFast(ctx.runner, ctx.address, ["list-panes", ...which, "-F", format], {
    signal: ctx.signal,
  });
  if (one !== null && result.code !== 0 && /^can't find pane/m.test(result.stderr)) {
    return new Map();
  }
  const stdout = judgeResult(result);
  const wanted = new Set(paneIds);
  const owners = new Map<string, string>();
  for (const [id, owner] of parseRecords(stdout, guard, 2)) {
    if (wanted.has(id) && owner !== "") owners.set(id, owner);
  }
  return owners;
}

/** The owner mark of one pane ("" when unmarked or gone). */
export async function ownerOf(ctx: TmuxContext, paneId: string): Promise<string> {
  const result = await execFast(ctx.runner, ctx.address, [
    "display-message",
    "-p",
    "-t",
    paneId,
    `#{${OWNER_OPTION}}`,
  ], { signal: ctx.signal });
  return result.code === 0 ? new TextDecoder().decode(result.stdout).replace(/\n$/, "") : "";
}

/**
 * Refuses, under `--own-panes-only`, when any of `panes` is not this server's: `what` names
 * the act for the message ("Typing into %3", "Killing window @2").
 */
export async function requireOwned(
  ctx: TmuxContext,
  panes: readonly { readonly id: string }[],
  what: string,
): Promise<void> {
  if (!ctx.config.ownPanesOnly || panes.length === 0) return;
  const owners = await ownersOf(ctx, panes.map((p) => p.id));
  const mine = ctx.config.owner;
  const other = panes.find((p) => owners.get(p.id) !== mine);
  if (!other) return;
  const owner = owners.get(other.id);
  throw new ToolFailure(
    `${what} is refused: pane ${other.id} was not created by this server (${
      owner === undefined ? "it carries no owner mark" : `its owner is ${JSON.stringify(owner)}`
    }; this server is ${JSON.stringify(mine)}), and it runs with --own-panes-only.`,
    "Work in panes this server creates (create_window, split_window, create_session); a " +
      "person can lift this by restarting the server without --own-panes-only.",
  );
}

/**
 * Marks panes this server just created as its own; returns whether tmux set every mark. Best
 * effort: a pane that is already gone needs no mark, and a mark that failed leaves the pane
 * unowned (the safe side).
 */
export async function markOwned(ctx: TmuxContext, paneIds: readonly string[]): Promise<boolean> {
  const owner = ctx.config.owner;
  if (!owner || paneIds.length === 0) return false;
  // An owner id is letters, digits, `.`, `_` and `-` (OWNER_ID): nothing tmux reads as syntax.
  const args = chainArgv(paneIds.map((id) => ["set-option", "-p", "-t", id, OWNER_OPTION, owner]));
  // Not cancelled with the call: a pane that was made is marked, on the server it was made on
  // (the one the call read), never a namesake on a server that took the socket since.
  return await execOnce(ctx.runner, ctx.address, args, { serverPid: ctx.serverPid })
    .then((r) => r.code === 0, () => false);
}
