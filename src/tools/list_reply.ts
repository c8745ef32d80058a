/**
 * How a discovery list stays within the result bound and says so: the room a list may fill,
 * the notes on what it left out or that no server answered, and listed placements fitted.
 * Shared by the listing tools (discovery.ts, pane_list.ts).
 *
 * @module
 */

import { fitPlacements } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { NO_SERVER_HINT, noServerHint } from "../mcp/errors.ts";
import type { PaneBrief, Snapshot } from "../tmux/snapshot.ts";

/** Room left for the envelope around a bounded list. */
const ENVELOPE_BYTES = 512;

/** The bytes a list may fill: the result bound less room for the envelope around it. */
export function listBudget(ctx: TmuxContext): number {
  return ctx.config.maxResultBytes - ENVELOPE_BYTES;
}

/** A summary's note that no server answered: an empty list is then no empty server. */
export function noServerNote(snapshot: Snapshot<PaneBrief>, ctx: TmuxContext): string {
  if (snapshot.running) return "";
  const hint = noServerHint(ctx.address);
  // At a configured path, what create_session will do there (else the note needs no hint).
  return ` No tmux server is running on ${ctx.socketLabel}.` +
    (hint === NO_SERVER_HINT ? "" : ` ${hint}`);
}

/** What was left out of a list, and (`rest`) how a narrower call reaches it. */
export function omittedNote(omitted: number, rest = ""): string {
  return omitted > 0
    ? ` ${omitted} more left out to stay within the result bound.${rest ? ` ${rest}` : ""}`
    : "";
}

/**
 * A listed entry's placements, fitted (see fitPlacements), and the bytes cut from their session
 * names (`cutNames`), which the entry adds to its own omittedMetadataBytes.
 */
export function boundPlacements<T extends { sessionName: string }>(list: readonly T[]): {
  placed: { placements: T[]; omittedPlacements: number; placementsComplete: boolean };
  cutNames: number;
} {
  const { placements, omittedPlacements, omittedMetadataBytes } = fitPlacements(list);
  return {
    placed: { placements, omittedPlacements, placementsComplete: omittedPlacements === 0 },
    cutNames: omittedMetadataBytes,
  };
}
