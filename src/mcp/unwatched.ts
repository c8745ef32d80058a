/**
 * Who watches, as tmux checks it at the instant of an act: conditions ({@link TmuxCondition})
 * that hold while no person's client shows a pane, a window, a session or any of the server,
 * built from tmux's client lists with programs' clients (this server's own among them) taken
 * out, and counting choose-tree's previews and sessions shown whole (tmux -CC) as seeing.
 *
 * @module
 */

import { PREVIEWS, showsWholeSession } from "../tmux/identity.ts";
import type { ClientRow, PaneBrief, Snapshot } from "../tmux/snapshot.ts";
import { allOf, type TmuxCondition } from "./act_step.ts";

/**
 * A client name as an extended regular expression inside a format: every character that is
 * not a letter, digit, `_` or `-` becomes `.`, so no name can close the format, end the
 * modifier or split the pattern. Over-matching only ever leaves part of a person's name
 * behind, which counts as a person: the safe side.
 */
function namePattern(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, ".");
}

/**
 * A client name in tmux's client lists that names no terminal: tmux names a client by its
 * terminal's path, and one without a terminal `client-<pid>`. Only a control client attaches
 * without one, and such a client is a program's (see identity.ts `isPerson`): this server's own
 * clients among them, also those that attach after any snapshot.
 */
const PROGRAM_NAME = "client-[0-9]+";

/**
 * A tmux client list (`window_active_clients_list`, `session_attached_list`) with the
 * programs taken out: what is left is empty exactly when no person is in it.
 */
export function stripPrograms(list: string): string {
  return `#{s/(${PROGRAM_NAME}|,)//:${list}}`;
}

/** Expanded for a session: 1 while a person (not a program's control client) is attached. */
export const PERSON_ATTACHED = `#{!=:${stripPrograms("session_attached_list")},}`;

/**
 * A client list with the programs and the people who see one window at a time taken out (the
 * latter known from the snapshot): what is left is a person whose client shows every window
 * of its session (`tmux -CC`, iTerm2), or a client that attached since the snapshot, counted as
 * one (the safe side: the act is refused and, where it is retried, judged by a fresh read).
 */
function stripAllButWholeSession(list: string, snapshot: Snapshot<PaneBrief>): string {
  return stripKnown(list, snapshot, (c) => !showsWholeSession(c));
}

/**
 * A client list with the programs and the snapshot's clients that pass `known` taken out: what
 * is left is a client the snapshot saw otherwise, or one that attached since it.
 */
function stripKnown(
  list: string,
  snapshot: Snapshot<PaneBrief>,
  known: (client: ClientRow) => boolean,
): string {
  const names = snapshot.clients.filter((c) => known(c) && c.name !== "")
    .map((c) => namePattern(c.name))
    // Longest first: /dev/pts/3 taken out of /dev/pts/31 would leave a "1" (no person) behind.
    .sort((a, b) => b.length - a.length);
  return `#{s/(${[PROGRAM_NAME, ...names, ","].join("|")})//:${list}}`;
}

/**
 * The last second anything attached to a session, as the snapshot read it: the newest
 * `session_last_attached` (every snapshot reads it with the server's facts, whatever its scope:
 * a session attached and left again before the read is not taken for one attached since).
 */
function attachedUntil(snapshot: Snapshot<PaneBrief>): number {
  // Not read (no server answered): every session counts as attached since, the safe side.
  return snapshot.server?.lastAttached ?? 0;
}

/**
 * Expanded for a session: 1 while a person's client attached to it shows its whole session
 * ({@link stripAllButWholeSession}). A client's name is its terminal's: a person who detaches
 * a plain client and runs `tmux -CC attach` in the same terminal comes back under the name the
 * snapshot saw showing one window, and no format of tmux 3.3a tells that client from the one
 * before (it loops over no clients). tmux does mark the session: an attach (a switch-client
 * too) sets `session_last_attached`. So in a session attached since the second of the
 * snapshot's last attach, every person's client counts as showing it whole (the safe side);
 * only one that re-attaches within that very second goes unseen.
 */
function wholeSessionShown(snapshot: Snapshot<PaneBrief>): string {
  const since = attachedUntil(snapshot);
  const anyone = PERSON_ATTACHED;
  const named = `#{!=:${stripAllButWholeSession("session_attached_list", snapshot)},}`;
  return `#{?#{e|>:#{session_last_attached},${since}},${anyone},${named}}`;
}

/**
 * 1 while no session that a client showing its whole session (see
 * {@link stripAllButWholeSession}) has attached holds the window `target` (`@N`), or the window
 * of the pane `target` (`%N`) wherever it is at that instant. Any other target: while no such
 * client is attached anywhere (the safe side).
 */
function noWholeSessionShows(snapshot: Snapshot<PaneBrief>, target: string): string {
  const holds = /^%\d+$/.test(target)
    ? `#{W:#{P:#{?#{==:#{pane_id},${target}},X,}}}`
    : /^@\d+$/.test(target)
    ? `#{W:#{?#{==:#{window_id},${target}},X,}}`
    : "X";
  const whole = wholeSessionShown(snapshot);
  return `#{==:#{S:#{?${whole},${holds},}},}`;
}

/** 1 when the client list `list` holds no person (see {@link stripPrograms}). */
function peopleIn(list: string): string {
  return `#{==:${stripPrograms(list)},}`;
}

/**
 * True while no person has a pane that previews others on screen (choose-tree, choose-client:
 * see identity.ts `PREVIEWS`; they show any pane of the server): no session with a person
 * attached has such a pane in its current window — any pane of it, active or not — nor, for a
 * session a person shows whole (tmux -CC, see {@link stripAllButWholeSession}), in any window.
 */
function noPreview(snapshot: Snapshot<PaneBrief>): string {
  const people = PERSON_ATTACHED;
  const whole = wholeSessionShown(snapshot);
  // One branch: every pane of the window (`#{P:,x}` would test the active one alone).
  const previews = `#{P:#{?${PREVIEWS},T,}}`;
  const shown = `#{?${whole},#{W:${previews}},#{?${people},#{W:,${previews}},}}`;
  return `#{==:#{S:${shown}},}`;
}

/**
 * While no person's client shows the window `target` is (`@N`, or the pane `%N` is in): as
 * its current window, or as one of every window of a session it shows whole (tmux -CC).
 */
export function windowUnwatched(snapshot: Snapshot<PaneBrief>, target: string): TmuxCondition {
  return {
    target,
    format: allOf([
      peopleIn("window_active_clients_list"),
      noWholeSessionShows(snapshot, target),
      noPreview(snapshot),
    ]),
  };
}

/** A window's part of a loop over windows: `X` while a person's client shows it. */
function shownToPeople(): string {
  return `#{?#{!=:${stripPrograms("window_active_clients_list")},},X,}`;
}

/**
 * While no person has the session `target` attached or sees any window of it as their current
 * one (through another session too, for a linked window): what its kill would take from them.
 * A person who shows another session whole (tmux -CC) keeps a window linked there: not checked.
 */
export function sessionWindowsUnwatched(
  snapshot: Snapshot<PaneBrief>,
  target: string,
): TmuxCondition {
  return {
    target,
    format: allOf([
      peopleIn("session_attached_list"),
      `#{==:#{W:${shownToPeople()}},}`,
      noPreview(snapshot),
    ]),
  };
}

/**
 * While no person sees any window of the server (`target`: any session of it): every client
 * attached has a current window, a client showing its whole session too.
 */
export function serverUnwatched(
  snapshot: Snapshot<PaneBrief>,
  target: string,
): TmuxCondition {
  return {
    target,
    format: allOf([`#{==:#{S:#{W:${shownToPeople()}}},}`, noPreview(snapshot)]),
  };
}

/**
 * While no person's client has attached a session the window `target` is in (`@N`, or the
 * window of the pane `%N` wherever it is then; through a link too), at that instant: each of
 * them lists the window in its status line (or, shown whole, as a tab).
 */
export function windowListedUnwatched(
  snapshot: Snapshot<PaneBrief>,
  target: string,
): TmuxCondition {
  const people = PERSON_ATTACHED;
  const holds = /^%\d+$/.test(target)
    ? `#{W:#{P:#{?#{==:#{pane_id},${target}},X,}}}`
    : `#{W:#{?#{==:#{window_id},${target}},X,}}`;
  return {
    target,
    format: allOf([`#{==:#{S:#{?${people},${holds},}},}`, noPreview(snapshot)]),
  };
}

/** While no person's client has the session `target` attached (it would see its changes). */
export function sessionUnwatched(
  snapshot: Snapshot<PaneBrief>,
  target: string,
): TmuxCondition {
  return { target, format: allOf([peopleIn("session_attached_list"), noPreview(snapshot)]) };
}

/**
 * While no person can see the pane `paneId`: its window shown nowhere, or zoomed onto another
 * pane with synchronize-panes off (with it on, keys reach the pane everyone sees); and no
 * session shown whole (tmux -CC) holds it, zoomed or not.
 */
export function paneUnwatched(snapshot: Snapshot<PaneBrief>, paneId: string): TmuxCondition {
  // A client that keeps an active pane of its own (`-f active-pane`) types into it hidden or
  // not, and no format says which pane it is: the zoom hides a pane only while every client
  // showing the window is one the snapshot knew without that flag (or a program).
  const plainOnly = `#{==:${
    stripKnown("window_active_clients_list", snapshot, (c) => !c.ownActivePane)
  },}`;
  const hidden = "#{&&:#{window_zoomed_flag},#{&&:#{!=:#{pane_active},1}," +
    `#{&&:#{!=:#{synchronize-panes},1},${plainOnly}}}}`;
  return {
    target: paneId,
    format: allOf([
      `#{||:${peopleIn("window_active_clients_list")},${hidden}}`,
      noWholeSessionShows(snapshot, paneId),
      noPreview(snapshot),
    ]),
  };
}
