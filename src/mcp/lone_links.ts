/**
 * A window linked more than once into a session that holds nothing else (a person's
 * `link-window`, or a plugin that mirrors a window, leaves one): ending that window in one step
 * of tmux's command loop kills the whole tmux server 3.3a while any control client is attached,
 * this server's own among them. As the first link goes, tmux makes the other one the session's
 * current window and queues `%session-window-changed` for control clients; the same step then
 * ends the session with its last link, and the queued notice reads the current window of a
 * session that has none (tmux/tmux#5243; src/tmux/structure.ts).
 *
 * An act that ends such a window (kill_window, kill_pane or join_pane of its last pane) first
 * unlinks, in the same step, each such session's links but the current one: tmux changes no
 * session's current window, and the act ends what it would have ended anyway. tmux checks at
 * that instant that the links are as read and that no other session came to hold the window so
 * ({@link endingFormat}). Sessions of one group share their links: the group's links are
 * unlinked once, and only while every session of it has the same one current (otherwise an
 * unlink changes one's current window, and the crash comes back).
 *
 * Nothing here helps when the window's last pane ends by itself (its process exits): tmux ends
 * the window then, in one step, and dies the same way.
 *
 * @module
 */

import { TmuxError } from "../tmux/tmux_error.ts";
import type { PaneBrief, Placement, Snapshot } from "../tmux/snapshot.ts";
import type { TmuxContext } from "./context.ts";
import { sessionLabel, sessionList, ToolFailure } from "./errors.ts";

/** A session holding nothing but links of one window, two of them or more. */
export interface LoneLinks {
  readonly sessionId: string;
  readonly sessionName: string;
  /** Its session group, or "" when ungrouped. */
  readonly group: string;
  /** The window's indexes there, ascending. */
  readonly indexes: readonly number[];
  /** The index of the link that is the session's current window (null: none read). */
  readonly current: number | null;
}

/**
 * The sessions that hold a window (linked at `placements`, every one of them) twice or more
 * and nothing else, as `snapshot` read them: it must have read the sessions.
 */
export function loneLinks(
  snapshot: Snapshot<PaneBrief>,
  placements: readonly Placement[],
): LoneLinks[] {
  const bySession = new Map<string, Placement[]>();
  for (const p of placements) bySession.set(p.sessionId, [...bySession.get(p.sessionId) ?? [], p]);
  const found: LoneLinks[] = [];
  for (const [sessionId, links] of bySession) {
    const session = snapshot.sessions.find((s) => s.id === sessionId);
    if (links.length < 2 || session === undefined || session.windows !== links.length) continue;
    found.push({
      sessionId,
      sessionName: session.name,
      group: session.group,
      indexes: links.map((p) => p.index).toSorted((a, b) => a - b),
      current: links.find((p) => p.active)?.index ?? null,
    });
  }
  return found;
}

const CRASH = "tmux 3.3a crashes (every session lost) when a window linked more than once " +
  "into a session that holds nothing else ends while a control client is attached " +
  "(tmux/tmux#5243)";

/**
 * The commands that leave each of `sessions` one link of the window (the session's current
 * one), to run in the act's own step right before it: each group once. Refused (`what` names
 * the act) when no such set of unlinks leaves every session's current window as it is: no link
 * read as current, or sessions of one group showing different links.
 */
export function unlinkExtras(sessions: readonly LoneLinks[], what: string): string[][] {
  const commands: string[][] = [];
  const groups = new Map<string, LoneLinks[]>();
  for (const s of sessions) {
    const key = s.group === "" ? `session ${s.sessionId}` : `group ${s.group}`;
    groups.set(key, [...groups.get(key) ?? [], s]);
  }
  for (const members of groups.values()) {
    const [first] = members;
    if (first.current === null || members.some((m) => m.current !== first.current)) {
      throw new ToolFailure(
        `${what} was not done: ${CRASH}. Its window is linked more than once into ` +
          `${sessionList(members)}, which hold nothing else` +
          (members.length > 1 ? " and show different links of it" : "") +
          "; no step ends it there without that crash.",
        `Ask the person to unlink the extra links first (tmux unlink-window -t ${first.sessionId}:${
          first.indexes.at(-1)
        }), then call again.`,
      );
    }
    for (const index of first.indexes) {
      if (index !== first.current) {
        commands.push(["unlink-window", "-t", `${first.sessionId}:${index}`]);
      }
    }
  }
  return commands;
}

/** In a loop over a session's windows: one `x` per link of `windowId`. */
const links = (windowId: string) => `#{W:#{?#{==:#{window_id},${windowId}},x,}}`;

/** In a loop over a session's windows: one `y` per window that is not `windowId`. */
const others = (windowId: string) => `#{W:#{?#{==:#{window_id},${windowId}},,y}}`;

/**
 * A session's links of `windowId` as {@link signature} writes them, read by tmux in that
 * session's context: each index followed by `*` when current, then `.`; `y` for any other
 * window.
 */
const linksNow = (windowId: string) =>
  `#{W:#{?#{==:#{window_id},${windowId}},#{window_index}#{?window_active,*,}.,y}}`;

/** What {@link linksNow} expands to for a session as read. */
function signature(s: LoneLinks): string {
  return s.indexes.map((i) => `${i}${i === s.current ? "*" : ""}.`).join("");
}

/**
 * A format that expands to 1 while ending `windowId` is safe once the commands of
 * {@link unlinkExtras} for `planned` have run: each planned session still there with its links
 * as read, and no other session holding the window twice or more and nothing else (a link made
 * since the read). Expanded in any context: it loops over every session.
 */
export function endingFormat(windowId: string, planned: readonly LoneLinks[]): string {
  const bad = `#{&&:#{==:${others(windowId)},},#{!=:${links(windowId)},x}}`;
  let each = `#{?${bad},X,}`;
  for (const s of planned) {
    each = `#{?#{==:#{session_id},${s.sessionId}},#{?#{==:${linksNow(windowId)},${
      signature(s)
    }},d,X},${each}}`;
  }
  return `#{==:#{S:${each}},${"d".repeat(planned.length)}}`;
}

/**
 * {@link endingFormat} for an act on the pane it is expanded for, which ends its window if it
 * is that window's last pane: with `planned` sessions, the pane still the last of `windowId`
 * (else the unlinks would be more than the act ends); without, either not the last pane of
 * its window, or the last of `windowId` (a pane moved since the read into a window of its own
 * is refused: the format names no other window).
 */
export function paneEndingFormat(windowId: string, planned: readonly LoneLinks[]): string {
  const last = `#{&&:#{==:#{window_id},${windowId}},#{==:#{window_panes},1}}`;
  const safe = `#{&&:${last},${endingFormat(windowId, planned)}}`;
  return planned.length > 0 ? safe : `#{||:#{!=:#{window_panes},1},${safe}}`;
}

/** The refusal of an act whose {@link endingFormat} did not hold at that instant. */
export function linksChanged(what: string, windowId: string): ToolFailure {
  return new ToolFailure(
    `${what} was not done: window ${windowId}'s links or panes changed between the read and ` +
      `the act, and ${CRASH}.`,
    "Call again: a fresh read sees the links, and leaves each such session one link of the " +
      "window before it ends.",
  );
}

/**
 * The refusal of an act (`what`, naming the window) that would link a window into `session` a
 * second time (`index`: where it is there already, as read).
 */
export function secondLink(
  what: string,
  session: { readonly id: string; readonly name: string },
  index: number | null,
): ToolFailure {
  return new ToolFailure(
    `${what} would link it into session ${sessionLabel(session.id, session.name)} a second ` +
      `time: the window is there already${
        index === null ? "" : ` (index ${index})`
      }, and ${CRASH}.`,
    `To reorder it within that session, pass fromSession: "${session.id}" with an index; ` +
      "list_windows shows where each window is.",
  );
}

/** 1 while the session a format is expanded for holds no link of `windowId`. */
export function holdsNoLink(windowId: string): string {
  return `#{==:${links(windowId)},}`;
}

/**
 * The refusal of a respawn into `paneId`, the last pane of `windowId`, which `sessions` hold
 * twice or more and nothing else: whenever its new process ends, the pane, the window and
 * those sessions end with it, in one step, and tmux with them.
 */
export function respawnCrash(
  paneId: string,
  windowId: string,
  sessions: readonly LoneLinks[],
): ToolFailure {
  const [first] = sessions;
  return new ToolFailure(
    `Respawning ${paneId} was not done: ${paneId} is the last pane of window ${windowId}, ` +
      `linked more than once into ${sessionList(sessions)}, which hold nothing else, ` +
      `and remain-on-exit is not on there; when the new process ends, ${CRASH}.`,
    `Ask the person to unlink the extra link (tmux unlink-window -t ${first.sessionId}:${
      first.indexes.at(-1)
    }), or to turn remain-on-exit on for that window, then call again.`,
  );
}

/**
 * 1 while a respawn into the pane a format is expanded for (in `windowId`) cannot take tmux
 * down when its process ends: remain-on-exit keeps the pane, or it is not its window's last
 * pane, or no session holds that window twice or more and nothing else (the
 * {@link paneEndingFormat} of an act that plans no unlinks).
 */
export function respawnFormat(windowId: string): string {
  return `#{||:#{==:#{remain-on-exit},on},${paneEndingFormat(windowId, [])}}`;
}

/**
 * The refusal of a respawn into `paneId` (in `windowId` as read) whose new process's end
 * would take tmux down ({@link respawnFormat}, asked of tmux now), or null. A pane that moved
 * to another window is judged there.
 */
export async function respawnRefusal(
  ctx: TmuxContext,
  paneId: string,
  windowId: string,
): Promise<ToolFailure | null> {
  let window = windowId;
  for (let attempt = 0; attempt < 2; attempt++) {
    let out: string;
    try {
      out = new TextDecoder().decode(
        await ctx.read([
          "display-message",
          "-p",
          "-t",
          paneId,
          `#{pane_id} #{window_id} ${respawnFormat(window)}`,
        ]),
      ).trim();
    } catch (error) {
      // A pane gone meanwhile is the respawn's own failure to report.
      if (error instanceof TmuxError && error.kind === "no-target") return null;
      throw error;
    }
    const [shown, now, safe] = out.split(" ");
    // tmux answers for a missing pane too, every value empty (or a client's own pane's): gone.
    if (shown !== paneId) return null;
    if (now !== window) {
      window = now;
      continue;
    }
    if (safe === "1") return null;
    const snapshot = await ctx.windowSnapshot(window, { sessions: true, panes: false });
    const row = snapshot.windows.find((w) => w.id === window);
    const sessions = row ? loneLinks(snapshot, row.placements) : [];
    if (sessions.length === 0) break;
    return respawnCrash(paneId, window, sessions);
  }
  return new ToolFailure(
    `Respawning ${paneId} was not done: its window or that window's links changed while it ` +
      `was checked, and ${CRASH}.`,
    "Call again.",
  );
}
