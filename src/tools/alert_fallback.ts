/**
 * Alert marks (bell `!`, activity `#`, silence `~` in a status line) and what clears them. Each
 * session keeps its own marks for a window, but tmux clears them in every session holding the
 * window the moment any one of those sessions makes it current (winlink_clear_flags). A
 * select_window does that on purpose (placement.ts); an act that removes a session's current
 * window does it too, behind the agent's back: tmux 3.3a makes another window of that session
 * current (its last window, else the one before it, else the one after), and that window's
 * marks go. A kill, a move_window or a join_pane in a session nobody watches would so wipe the
 * mark a person's status line shows for a window of a grouped or linked session.
 * {@link fallbackMarksCheck} refuses that, and has tmux check it again at the act.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { type ActCheck, allOf } from "../mcp/act_step.ts";
import { stripPrograms } from "../mcp/unwatched.ts";
import type { ClientRow, PaneBrief, Snapshot } from "../tmux/snapshot.ts";
import { clientLabel, isPerson } from "../tmux/identity.ts";
import { decodeBytes } from "../tmux/format.ts";

/**
 * A window's alert flags in a session's status line, as three digits: bell (`!`), activity
 * (`#`), silence (`~`). Each session keeps its own, set where the window is not its current one.
 */
const ALERT_FLAGS = "#{window_bell_flag}#{window_activity_flag}#{window_silence_flag}";
const ALERT_NAMES = ["bell", "activity", "silence"];

/** 1 in a session loop while a person (not a program's control client) is attached to it. */
const PEOPLE = `#{!=:${stripPrograms("session_attached_list")},}`;

/**
 * 1 while no session a person is attached to marks window `windowId` with an alert flag:
 * expanded by tmux at the instant of the act, in any context (it loops over every session).
 */
export function unmarkedFormat(windowId: string): string {
  const marked = allOf([`#{==:#{window_id},${windowId}}`, `#{!=:${ALERT_FLAGS},000}`]);
  return `#{==:#{S:#{?${PEOPLE},#{W:#{?${marked},X,}},}},}`;
}

/** The marks read at one instant, by session and window. */
interface MarksRead {
  /** Session id → window id → flags (three digits, as {@link ALERT_FLAGS}). */
  readonly flags: Map<string, Map<string, string>>;
  /** Session id → its last window (what tmux falls back to first), where it has one. */
  readonly last: Map<string, string>;
  /** The sessions whose current window was `removed` ({@link readMarks}), and their windows. */
  readonly falling: Map<string, string[]>;
}

/**
 * One read of every marked window in every session and each session's last window, and every
 * window of a session whose current window is `removed` ("" for none): a few entries a
 * session, not one a window, where nothing is marked. Nothing is read where the snapshot saw
 * no person attached (nothing to name; tmux still checks at the act).
 */
async function readMarks(
  ctx: TmuxContext,
  snapshot: Snapshot<PaneBrief>,
  target: string,
  removed: string,
): Promise<MarksRead> {
  const each = `#{session_id}:#{window_id}:${ALERT_FLAGS}#{window_last_flag} `;
  const some = `#{?#{||:#{!=:${ALERT_FLAGS},000},#{window_last_flag}},${each},}`;
  // Expanded for a session, #{window_id} is its current window's.
  const falling = `#{==:#{window_id},${removed}}`;
  const format = `#{S:#{?${falling},=#{session_id} #{W:${each}},#{W:${some}}}}`;
  const read = snapshot.clients.some(isPerson)
    ? decodeBytes(await ctx.read(["display-message", "-p", "-t", target, format]))
    : "";
  const marks: MarksRead = { flags: new Map(), last: new Map(), falling: new Map() };
  for (const entry of read.trim().split(" ")) {
    if (entry.startsWith("=")) {
      marks.falling.set(entry.slice(1), []);
      continue;
    }
    const [sessionId, windowId, digits] = entry.split(":");
    if (digits === undefined) continue;
    if (!marks.flags.has(sessionId)) marks.flags.set(sessionId, new Map());
    marks.flags.get(sessionId)!.set(windowId, digits.slice(0, 3));
    if (digits[3] === "1") marks.last.set(sessionId, windowId);
    marks.falling.get(sessionId)?.push(windowId);
  }
  return marks;
}

/** A mark a person's status line shows for a window, as read. */
interface ShownMark {
  readonly windowId: string;
  /** "bell", "bell and activity", ... */
  readonly kinds: string;
  readonly client: ClientRow;
}

/** The first of `windowIds` a person's status line shows with a mark, as `marks` read them. */
function shownMark(
  snapshot: Snapshot<PaneBrief>,
  marks: MarksRead,
  windowIds: readonly string[],
): ShownMark | null {
  for (const windowId of windowIds) {
    for (const client of snapshot.clients) {
      if (!isPerson(client) || client.windowId === "") continue;
      const flags = marks.flags.get(client.sessionId)?.get(windowId) ?? "000";
      if (!/1/.test(flags)) continue;
      const kinds = ALERT_NAMES.filter((_, i) => flags[i] === "1").join(" and ");
      return { windowId, kinds, client };
    }
  }
  return null;
}

/**
 * The mark a person's status line shows for window `windowId`, read now through `target`
 * (which must exist): what selecting that window anywhere would clear.
 */
export async function markShown(
  ctx: TmuxContext,
  snapshot: Snapshot<PaneBrief>,
  target: string,
  windowId: string,
): Promise<ShownMark | null> {
  return shownMark(snapshot, await readMarks(ctx, snapshot, target, ""), [windowId]);
}

/**
 * 1 while removing window `removed` makes no window current that a person's status line shows
 * with a mark: for each session whose current window it is (of `sessions` only, when given),
 * its last window if it has one other than `removed`, else any other window of it (tmux's
 * choice between the one before and the one after is not told apart: the safe side). Expanded
 * in any context, at the instant of the act; the marked windows are listed as ` @N ` and each
 * candidate matched against the list, since no format names an outer loop's window.
 */
function fallbackFormat(removed: string, sessions?: readonly string[]): string {
  const marked = `#{S:#{?${PEOPLE},#{W:#{?#{!=:${ALERT_FLAGS},000}, #{window_id} ,}},}}`;
  // `#{?...}` expands only the branch it takes: the list is built for candidates alone.
  const shown = `#{?#{m:* #{window_id} *,${marked}},X,}`;
  const other = `#{!=:#{window_id},${removed}}`;
  const candidates = (picked: string) => `#{W:#{?${other},#{?${picked},${shown},},}}`;
  const lastElsewhere = `#{W:#{?#{&&:#{window_last_flag},${other}},X,}}`;
  const falls = `#{?${lastElsewhere},${candidates("#{window_last_flag}")},${candidates("1")}}`;
  const here = sessions === undefined
    ? "1"
    : sessions.reduceRight((rest, s) => `#{||:#{==:#{session_id},${s}},${rest}}`, "0");
  const affected = allOf([`#{==:#{window_id},${removed}}`, here]);
  return `#{==:#{S:#{?${affected},${falls},}},}`;
}

/** What a removal takes: a window, or a pane that takes its window only if it is the last. */
export interface Removal {
  readonly windowId: string;
  /** The pane acted on, when it is a pane: its window goes only with its last pane. */
  readonly pane?: { readonly id: string; readonly last: boolean };
  /**
   * The sessions the window leaves, when not every one holding it: a move_window's source
   * and the sessions grouped with it.
   */
  readonly sessions?: readonly string[];
}

/**
 * The check that an act removing a window (`removal`: killing it, moving it out of a session,
 * or killing or moving out its last pane) clears no alert mark a person's status line shows:
 * each session whose current window it is falls back to another, which tmux then clears the
 * marks of in every session holding it (see the module). Refused at once where the read shows
 * it; otherwise tmux checks it at the act. `lifts` ends the hint: what lifts the refusal for
 * this tool, and that nothing was done.
 */
export async function fallbackMarksCheck(
  ctx: TmuxContext,
  snapshot: Snapshot<PaneBrief>,
  removal: Removal,
  what: string,
  lifts: string,
): Promise<ActCheck> {
  const { windowId, pane, sessions } = removal;
  const target = pane?.id ?? windowId;
  // Current nowhere as read (a background window, the common case): nothing to name; tmux
  // still checks at the act.
  const current = [
    ...snapshot.windows.filter((w) => w.id === windowId),
    ...snapshot.panes.filter((p) => p.windowId === windowId),
  ].some((x) =>
    x.placements.some((at) =>
      at.active && (sessions === undefined || sessions.includes(at.sessionId))
    )
  );
  if (current && (pane === undefined || pane.last)) {
    const marks = await readMarks(ctx, snapshot, target, windowId);
    for (const [sessionId, windows] of marks.falling) {
      if (sessions !== undefined && !sessions.includes(sessionId)) continue;
      const last = marks.last.get(sessionId);
      const others = windows.filter((w) => w !== windowId);
      const picked = last !== undefined && last !== windowId ? [last] : others;
      const shown = shownMark(snapshot, marks, picked);
      if (shown === null) continue;
      const how = picked.length === 1 && picked[0] === last
        ? "its last window"
        : "one of its other windows";
      throw new ToolFailure(
        `${what} would clear the ${shown.kinds} mark of window ${shown.windowId} in the ` +
          `status line of session ${shown.client.sessionId}, which client ${
            clientLabel(shown.client)
          } is attached to: ${windowId} is the current window of session ${sessionId}, and ` +
          `when it goes tmux makes ${how} current there, which clears that window's marks in ` +
          "every session holding it.",
        fallbackHint(`window ${shown.windowId}`, `session ${sessionId}`, lifts),
      );
    }
  }
  const format = fallbackFormat(windowId, sessions);
  return {
    condition: {
      target,
      // A pane takes its window only as its last: tmux counts them at the act.
      format: pane === undefined ? format : `#{?#{==:#{window_panes},1},${format},1}`,
    },
    refusal: new ToolFailure(
      `${what} was refused by tmux at the act: ${windowId} is the current window of a session ` +
        "where tmux would then make current a window with a bell, activity or silence mark " +
        "in the status line of a session a person is attached to, which that would clear.",
      fallbackHint("that window", "that session", lifts),
    ),
  };
}

/** How to go on after a refusal of {@link fallbackMarksCheck}. */
function fallbackHint(window: string, session: string, lifts: string): string {
  return `The mark goes when the person looks at ${window}; or first make a window without a ` +
    `mark current in ${session} (select_window). ${lifts}`;
}
