/**
 * Alert marks (bell `!`, activity `#`, silence `~` in a status line) and what clears them. Each
 * session keeps its own marks for a window, but tmux clears them in every session holding the
 * window the moment any one of those sessions makes it current (winlink_clear_flags). A
 * select_window does that on purpose (placement.ts); an act that removes a session's current
 * window does it too, behind the agent's back: tmux 3.3a makes exactly one other window of that
 * session current (its last window, else the one just before it, else its highest-numbered
 * one), and that window's marks go. A kill, a move_window or a join_pane in a session nobody
 * watches would so wipe the mark a person's status line shows for a window of a grouped or
 * linked session.
 * {@link fallbackMarksCheck} refuses that, and has tmux check it again at the act.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { type ActCheck, allOf } from "../mcp/act_step.ts";
import { PERSON_ATTACHED } from "../mcp/unwatched.ts";
import type { ClientRow, PaneBrief, Snapshot } from "../tmux/snapshot.ts";
import { clientLabel, isPerson } from "../tmux/identity.ts";
import { decodeBytes } from "../tmux/format.ts";

/**
 * A window's alert flags in a session's status line, as three digits: bell (`!`), activity
 * (`#`), silence (`~`). Each session keeps its own, set where the window is not its current one.
 */
const ALERT_FLAGS = "#{window_bell_flag}#{window_activity_flag}#{window_silence_flag}";
const ALERT_NAMES = ["bell", "activity", "silence"];

/**
 * 1 while no session a person is attached to marks window `windowId` with an alert flag:
 * expanded by tmux at the instant of the act, in any context (it loops over every session).
 */
export function unmarkedFormat(windowId: string): string {
  const marked = allOf([`#{==:#{window_id},${windowId}}`, `#{!=:${ALERT_FLAGS},000}`]);
  return `#{==:#{S:#{?${PERSON_ATTACHED},#{W:#{?${marked},X,}},}},}`;
}

/** The marks read at one instant, by session and window. */
interface MarksRead {
  /** Session id → window id → flags (three digits, as {@link ALERT_FLAGS}). */
  readonly flags: Map<string, Map<string, string>>;
  /**
   * The sessions whose current window was `removed` ({@link readMarks}), and their windows in
   * index order (tmux's loops go by index).
   */
  readonly falling: Map<string, Placed[]>;
}

/**
 * One read of every marked window in every session, and every window of a session whose
 * current window is `removed` ("" for none): a few entries a session, not one a window, where
 * nothing is marked. Nothing is read where the snapshot saw
 * no person attached (nothing to name; tmux still checks at the act).
 */
async function readMarks(
  ctx: TmuxContext,
  snapshot: Snapshot<PaneBrief>,
  target: string,
  removed: string,
): Promise<MarksRead> {
  const each = `#{session_id}:#{window_id}:${ALERT_FLAGS}#{window_last_flag}#{window_active} `;
  const some = `#{?#{!=:${ALERT_FLAGS},000},${each},}`;
  // Expanded for a session, #{window_id} is its current window's.
  const falling = `#{==:#{window_id},${removed}}`;
  const format = `#{S:#{?${falling},=#{session_id} #{W:${each}},#{W:${some}}}}`;
  const read = snapshot.clients.some(isPerson)
    ? decodeBytes(await ctx.read(["display-message", "-p", "-t", target, format]))
    : "";
  const marks: MarksRead = { flags: new Map(), falling: new Map() };
  for (const entry of read.trim().split(" ")) {
    if (entry.startsWith("=")) {
      marks.falling.set(entry.slice(1), []);
      continue;
    }
    const [sessionId, windowId, digits] = entry.split(":");
    if (digits === undefined) continue;
    if (!marks.flags.has(sessionId)) marks.flags.set(sessionId, new Map());
    // A window linked twice into a session shows in its status line with either link's marks.
    const had = marks.flags.get(sessionId)!.get(windowId) ?? "000";
    if (had === "000") marks.flags.get(sessionId)!.set(windowId, digits.slice(0, 3));
    marks.falling.get(sessionId)?.push({
      id: windowId,
      last: digits[3] === "1",
      active: digits[4] === "1",
    });
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
 * `format`'s expansion with each match of the regular expression `pattern` replaced by
 * `replacement`: tmux's substitution applies to a variable's value, so the format is handed
 * over as a literal and expanded again (in the same context) before it is substituted.
 */
function substituted(format: string, pattern: string, replacement: string): string {
  return `#{s/${pattern}/${replacement}/;E:#{l:${format}}}`;
}

/**
 * 1 while removing window `removed` makes no window current that a person's status line shows
 * with a mark: for each session whose current window it is (of `sessions` only, when given),
 * the one window tmux 3.3a falls back to ({@link fallbackOf}). Expanded in any context, at the
 * instant of the act.
 *
 * No format names an outer loop's window, so each affected session's windows are written out
 * in index order as ` @N` (`c` for its current window, `x` for another link of `removed`, `!`
 * after the last window), the fallback's id cut out of that by a substitution, and matched
 * against the list of marked windows, built once a session: the cost stays the number of
 * affected sessions times the windows of the server, where a test a candidate would rebuild
 * the list for each (quadratic: seconds of the person's tmux frozen with a thousand windows).
 * A literal must never stand after `#{?`: tmux looks it up as a variable, and `#{?1,…}` is
 * false.
 */
function fallbackFormat(removed: string, sessions?: readonly string[]): string {
  const marked = `#{S:#{?${PERSON_ATTACHED},#{W:#{?#{!=:${ALERT_FLAGS},000}, #{window_id} ,}},}}`;
  const other = `#{!=:#{window_id},${removed}}`;
  const token = `#{?#{window_active},c,#{?${other},#{window_id},x}}#{?#{window_last_flag},!,}`;
  const list = `#{W: ${token}} `;
  const shown = (id: string) => `#{?#{m:* ${id} *,${marked}},X,}`;
  // Another link of `removed` where tmux falls back: any other window of the session (the
  // safe side).
  const anyShown = `#{W:#{?${other},${shown("#{window_id}")},}}`;
  // The last window when it is another window, else the one before `c`, else the highest;
  // each test writes the list out again, so the common case takes four and no more.
  const falls = `#{?#{m/r: @[0-9]+! ,${list}},` +
    `${shown(substituted(list, ".* (@[0-9]+)! .*", "\\1"))},` +
    `#{?#{m/r: x! | x c |^ c .*x $,${list}},${anyShown},` +
    `#{?#{m/r:[^ ] c ,${list}},${shown(substituted(list, ".* ([^ ]+) c .*", "\\1"))},` +
    `${shown(substituted(list, ".* ([^ ]+) $", "\\1"))}}}}`;
  const here = sessions === undefined
    ? "#{==:1,1}"
    : sessions.reduceRight((rest, s) => `#{||:#{==:#{session_id},${s}},${rest}}`, "0");
  const affected = allOf([`#{==:#{window_id},${removed}}`, here]);
  return `#{==:#{S:#{?${affected},${falls},}},}`;
}

/** A window of a session whose current window goes, as read, in index order. */
interface Placed {
  readonly id: string;
  /** The session's current window. */
  readonly active: boolean;
  /** The session's last window. */
  readonly last: boolean;
}

/**
 * The window tmux 3.3a makes current in a session when its current window `removed` goes,
 * from `windows` (the session's, in index order): session_detach tries session_last, then
 * session_previous, which wraps round to the highest index, so whenever another window is
 * there it is exactly one: the last window, else the one just before, else the highest. Where
 * that is another link of `removed` (linked twice into the session), tmux goes on from there
 * through steps not foreseen here: then every other window, the safe side.
 */
function fallbackOf(
  windows: readonly Placed[],
  removed: string,
): { readonly picked: string[]; readonly how: string } {
  const at = windows.findIndex((w) => w.active);
  const last = windows.find((w) => w.last && !w.active);
  const before = at > 0 ? windows[at - 1] : undefined;
  const [chosen, how] = last !== undefined
    ? [last, "its last window"]
    : before !== undefined
    ? [before, "the window just before it"]
    : [windows[windows.length - 1], "its highest-numbered window"];
  if (chosen === undefined || chosen.active) return { picked: [], how };
  if (chosen.id !== removed) return { picked: [chosen.id], how };
  const others = [...new Set(windows.map((w) => w.id).filter((id) => id !== removed))];
  return { picked: others, how: "one of its other windows" };
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
      const { picked, how } = fallbackOf(windows, windowId);
      const shown = shownMark(snapshot, marks, picked);
      if (shown === null) continue;
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
