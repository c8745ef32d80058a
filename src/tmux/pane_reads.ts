/**
 * Reads of every pane narrower than a snapshot, each one chain: where each pane is (its
 * window, size and placements) and what runs in each pane of some sessions (command and
 * directory), for callers that would otherwise pay for every field of every pane.
 *
 * @module
 */

import { execFast } from "./control.ts";
import { chainArgv, int, newGuard, parseRecords, recordFormat } from "./format.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import { failureOf } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";
import type { Placement } from "./snapshot.ts";
import { PANE, PANE_PLACE_LAYOUT, WINDOW_PLACE_LAYOUT } from "./snapshot_format.ts";
import { addWindowPlace, placesOf, type WindowPlaces } from "./snapshot_parse.ts";

/** A pane's id, its window, its size, and every session and index showing that window. */
export interface PanePlace {
  readonly id: string;
  readonly windowId: string;
  readonly width: number;
  readonly height: number;
  readonly placements: Placement[];
}

/**
 * Every pane's {@link PanePlace}, in one `list-panes`: for a caller that reads the panes
 * themselves next (search: the size says how much a read may print), where listing anything
 * more of each pane is time spent for nothing. `running` is false when no server answers on the socket.
 */
export async function takePanePlaces(
  runner: TmuxRunner,
  address: ServerAddress,
  options: RunOptions = {},
): Promise<{ running: boolean; panes: PanePlace[] }> {
  const guard = newGuard();
  const args = [
    ...["list-windows", "-a", "-F", recordFormat(guard, ["N", ...WINDOW_PLACE_LAYOUT.formats])],
    ...[";", "list-panes", "-a", "-F", recordFormat(guard, ["L", ...PANE_PLACE_LAYOUT.formats])],
  ];
  const result = await execFast(runner, address, args, options);
  if (result.code !== 0) {
    const failure = failureOf(result);
    if (failure.kind === "no-server") return { running: false, panes: [] };
    // A server with no sessions (exit-empty off): list-windows -a has no current target.
    if (/^no current target/m.test(result.stderr)) return { running: true, panes: [] };
    throw failure;
  }
  const places = new Map<string, WindowPlaces>();
  const panes = new Map<string, PanePlace>();
  for (const record of parseRecords(result.stdout, guard)) {
    const [kind, ...values] = record;
    if (kind === "N" && values.length === WINDOW_PLACE_LAYOUT.count) {
      addWindowPlace(places, values);
      continue;
    }
    if (kind !== "L" || values.length !== PANE_PLACE_LAYOUT.count) {
      throw new Error(`unexpected tmux record of kind ${kind} with ${values.length} fields`);
    }
    const r = PANE_PLACE_LAYOUT.read(values);
    if (panes.has(r.id)) continue;
    panes.set(r.id, {
      id: r.id,
      windowId: r.windowId,
      width: int(r.width),
      height: int(r.height),
      placements: [...placesOf(places, r).placements],
    });
  }
  return { running: true, panes: [...panes.values()] };
}

/** What tmux reports a pane's terminal is running: its program and that program's directory. */
export interface PaneProcess {
  readonly command: string;
  readonly cwd: string;
}

/**
 * The current command and directory of every pane of these sessions (`$N`), by pane id, in one
 * chain: for a listing that needs them for some panes only (tmux asks the system for both, pane
 * by pane: the costliest fields). Null when tmux could not list one of the sessions (it ended
 * meanwhile): the caller reads again whole.
 */
export async function takeProcessInfo(
  runner: TmuxRunner,
  address: ServerAddress,
  sessionIds: readonly string[],
  options: RunOptions = {},
): Promise<Map<string, PaneProcess> | null> {
  const info = new Map<string, PaneProcess>();
  if (sessionIds.length === 0) return info;
  for (const id of sessionIds) {
    if (!/^\$\d+$/.test(id)) throw new Error(`not a session id: ${id}`);
  }
  const guard = newGuard();
  const format = recordFormat(guard, [PANE.id, PANE.command, PANE.cwd]);
  const args = chainArgv(sessionIds.map((id) => ["list-panes", "-s", "-t", id, "-F", format]));
  const result = await execFast(runner, address, args, options);
  if (result.code !== 0) {
    const failure = failureOf(result);
    if (failure.kind === "no-target") return null;
    throw failure;
  }
  for (const [paneId, command, cwd] of parseRecords(result.stdout, guard, 3)) {
    if (!/^%\d+$/.test(paneId)) throw new Error(`unexpected pane id from tmux: ${paneId}`);
    info.set(paneId, { command, cwd });
  }
  return info;
}
