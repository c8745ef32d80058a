/**
 * A person's focus, for the hook's guard: which tool calls would move the keys a person types to
 * a pane they had not chosen, as tmux 3.3a does (measured), and the reason the person reads.
 *
 * A client sends what its person types to the active pane of the current window of its session.
 * That pane changes when a call selects another pane of the window they are shown (select_pane;
 * split_window with `select`), makes another window their session's current one
 * (select_window; create_window or break_pane with `select`), moves their current window
 * (move_window: out of their session, or to another index of it, or of a session grouped with
 * it), takes the active pane out of the window they are shown (join_pane, break_pane, a
 * swap_pane with a pane of another window), swaps another pane of that window into the active
 * one's place (swap_pane naming the active pane second), or zooms another pane of it
 * (resize_pane with `zoom`); or puts a pane or program where their keys are copied to it
 * (join_pane, swap_pane or split_window into a window with synchronize-panes on that they are
 * shown or their status line lists, or respawn_pane there: {@link respawnConcerns}). The
 * server refuses each
 * where a person watches unless it was started with `--allow-attended-input`; asking the person
 * then is this hook's part. Where the window is zoomed, unzoom.ts words the concern instead.
 *
 * select_window changes what a person sees even in a session nobody watches: tmux clears a
 * window's bell, activity and silence marks in every session holding it once one of them
 * selects it, so the mark leaves the status line of a person attached to a linked or grouped
 * session ({@link marksConcerns}, which reads those marks: the guard's snapshot has none).
 *
 * @module
 */

import { clientLabel, isPerson, sharesWindows } from "../tmux/identity.ts";
import { type ClientRow, findSession, type PaneRow, type SessionRow } from "../tmux/snapshot.ts";
import type { ServerView } from "./guard.ts";
import type { GuardedCall, Target } from "./guarded_calls.ts";
import { oneLine, quoted, where, windowWhere } from "./marks.ts";
import { unzoomConcerns } from "./unzoom.ts";

/** The arguments a focus call names what it reaches by. */
export type FocusKey = "paneId" | "windowId" | "session" | "fromSession";

interface FocusSpec {
  /** What the call does, as "cannot tell which panes it would ..." words it. */
  readonly verb: string;
  /** The arguments it needs, then those it may name. */
  readonly keys: readonly FocusKey[];
  readonly optional?: readonly FocusKey[];
  /** Whether the call moves a focus, given its arguments. */
  readonly moves: (args: Record<string, unknown>) => boolean;
}

/**
 * Told to `select`. A `select` that is neither true nor false (the server refuses it) counts as
 * selecting: the guard never reads a call as doing less than it might. Without it (the tools'
 * default) the new pane or window opens behind what anyone sees.
 */
const selects = (args: Record<string, unknown>) =>
  args.select !== undefined && args.select !== false;
const always = () => true;

/**
 * The tools that move a focus by what they are for, each read from its own arguments only.
 * split_window gives its new pane its window's focus, create_window and break_pane make their new
 * window the session's current one. join_pane, swap_pane and break_pane without `select` are
 * read as unzooming calls (unzoom.ts), and judged here too ({@link keysLeaveConcerns}).
 */
const SPECS: Readonly<Record<string, FocusSpec>> = {
  split_window: { verb: "split and focus", keys: ["paneId"], moves: selects },
  create_window: { verb: "open a window in front of", keys: ["session"], moves: selects },
  break_pane: { verb: "break out and focus", keys: ["paneId"], moves: selects },
  select_pane: { verb: "select", keys: ["paneId"], moves: always },
  select_window: { verb: "select", keys: ["windowId"], optional: ["session"], moves: always },
  move_window: {
    verb: "move",
    keys: ["windowId", "session"],
    optional: ["fromSession"],
    moves: always,
  },
};

/** The tools that may move a person's focus by what they are for. */
export const FOCUS_TOOLS: readonly string[] = Object.keys(SPECS);

/** What a focus call names, by argument: the ids and names as the model wrote them. */
export type FocusRefs = Readonly<Partial<Record<FocusKey, string>>>;

/** A call that may move a focus: the tool, and what it names. */
export interface FocusCall {
  readonly tool: string;
  readonly refs: FocusRefs;
}

/**
 * How a call of `tool` would move a focus: its verb and the arguments to read, or undefined
 * when it moves none.
 */
export function focusOf(
  tool: string,
  args: Record<string, unknown>,
): FocusSpec | undefined {
  // Own properties only: "constructor" names no tool.
  if (!Object.hasOwn(SPECS, tool)) return undefined;
  return SPECS[tool].moves(args) ? SPECS[tool] : undefined;
}

/**
 * What a focus call names (only the arguments the tool acts on: a variable named paneId in
 * `environment` is none), as refs and as the guard's targets; or why they cannot be read: the
 * guard then asks.
 */
export function focusRefs(
  spec: FocusSpec,
  args: Record<string, unknown>,
): { refs: FocusRefs; targets: Target[] } | string {
  const refs: Partial<Record<FocusKey, string>> = {};
  const targets: Target[] = [];
  for (const key of [...spec.keys, ...spec.optional ?? []]) {
    const value = args[key];
    if (value === undefined && !spec.keys.includes(key)) continue;
    if (typeof value !== "string") {
      return value === undefined ? `it names no ${key}` : `its ${key} is not a string`;
    }
    refs[key] = value;
    targets.push(
      key === "paneId"
        ? { kind: "pane", id: value }
        : key === "windowId"
        ? { kind: "window", id: value }
        : { kind: "session", ref: value },
    );
  }
  return { refs, targets };
}

const NEXT = ": what they type next goes to it";
const ELSEWHERE = ": what they type next goes to a pane they did not choose";

/** `client /dev/pts/4`, or `clients /dev/pts/4, /dev/pts/5`. */
export function clientsText(clients: readonly ClientRow[]): string {
  const ttys = clients.map((c) => oneLine(clientLabel(c), 120));
  return `client${ttys.length > 1 ? "s" : ""} ${ttys.join(", ")}`;
}

/**
 * The people shown a window: whoever is shown any pane of it (a zoomed one too). The agent's
 * own pane is no concern here: its focus is nobody's.
 */
export function windowWatchers(view: ServerView, windowId: string): ClientRow[] {
  return [
    ...new Set(
      view.snapshot.panes.filter((p) => p.windowId === windowId)
        .flatMap((p) => view.attended.get(p.id) ?? []),
    ),
  ];
}

/** The people attached to a session: its current window is theirs. */
function attachedPeople(view: ServerView, session: SessionRow): ClientRow[] {
  return view.snapshot.clients.filter((c) => isPerson(c) && c.sessionId === session.id);
}

/** `the person attached to session "main" (client /dev/pts/4)`. */
function attachedText(view: ServerView, session: SessionRow, people: ClientRow[]): string {
  return `the person attached to session ${quoted(session.name, 60)}${view.on} ` +
    `(${clientsText(people)})`;
}

function pane(view: ServerView, id: string | undefined): PaneRow | undefined {
  return view.snapshot.panes.find((p) => p.id === id);
}

/** The active pane of a window, or undefined when the window does not exist. */
function activePane(view: ServerView, windowId: string): PaneRow | undefined {
  const panes = view.snapshot.panes.filter((p) => p.windowId === windowId);
  return panes.find((p) => p.active) ?? panes[0];
}

/**
 * The session a window call acts in, as the server picks it: the one named (the window must be
 * in it), else the window's only session; undefined when the call fails (no such session, the
 * window not in it, or linked into several and none named).
 */
function sessionOfWindow(
  view: ServerView,
  window: PaneRow,
  ref: string | undefined,
): SessionRow | undefined {
  const { sessions } = view.snapshot;
  if (ref === undefined) {
    return window.placements.length === 1
      ? sessions.find((s) => s.id === window.placements[0].sessionId)
      : undefined;
  }
  const session = findSession(sessions, ref);
  return session && window.placements.some((at) => at.sessionId === session.id)
    ? session
    : undefined;
}

/** Whether `window` is the current window of `session`. */
function isCurrentIn(window: PaneRow, session: SessionRow): boolean {
  return window.placements.some((at) => at.sessionId === session.id && at.active);
}

/**
 * What a focus call would do to a person: one sentence per focus it would move in front of
 * someone; none when it would move it in front of nobody, when what it selects is selected
 * already, or when its target does not exist (the call fails).
 */
export function focusConcerns(label: string, call: FocusCall, view: ServerView): string[] {
  const { snapshot, on } = view;
  const { refs } = call;
  switch (call.tool) {
    case "split_window": {
      // Whoever is shown the window, zoomed or not (the split unzooms it), types into the
      // new pane next.
      const p = pane(view, refs.paneId);
      const watchers = p ? windowWatchers(view, p.windowId) : [];
      if (!p) return [];
      const synced = syncedIntoConcerns(
        label,
        view,
        `put a new pane split from pane ${p.id} into`,
        p,
      );
      if (watchers.length === 0) return synced;
      return [
        `${label} would split pane ${p.id} (${where(p)})${on} and focus the new pane, in a ` +
        `window a person is watching (${clientsText(watchers)})${NEXT}`,
        ...synced,
      ];
    }
    case "create_window": {
      const session = findSession(snapshot.sessions, refs.session ?? "");
      const people = session ? attachedPeople(view, session) : [];
      if (!session || people.length === 0) return [];
      return [
        `${label} would open a window in front of the person attached to session ` +
        `${quoted(session.name, 60)}${on} (${clientsText(people)})${NEXT}`,
      ];
    }
    case "break_pane": {
      // The new window goes to the first session the pane's window is in; a pane alone in its
      // window is refused. Nobody attached there: judged as a break that does not select.
      const p = pane(view, refs.paneId);
      if (!p || snapshot.panes.filter((x) => x.windowId === p.windowId).length < 2) return [];
      const session = snapshot.sessions.find((s) => s.id === p.placements[0]?.sessionId);
      const people = session ? attachedPeople(view, session) : [];
      if (!session || people.length === 0) {
        const targets: Target[] = [{ kind: "pane", id: p.id }];
        return [
          ...unzoomConcerns(label, { tool: "break_pane", how: "reshape" }, targets, view),
          ...keysLeaveConcerns(label, { tool: "break_pane" }, targets, view),
        ];
      }
      return [
        `${label} would break pane ${p.id} (${where(p)})${on} out into a new window in front ` +
        `of ${attachedText(view, session, people)}${NEXT}`,
      ];
    }
    case "select_pane": {
      const p = pane(view, refs.paneId);
      if (!p) return [];
      // A hidden pane of a zoomed window: the unzoom is what the person sees first.
      if (p.windowZoomed) {
        const targets: Target[] = [{ kind: "pane", id: p.id }];
        return unzoomConcerns(label, { tool: "select_pane", how: "focus" }, targets, view);
      }
      const watchers = windowWatchers(view, p.windowId);
      const before = activePane(view, p.windowId);
      if (p.active || !before || watchers.length === 0) return [];
      return [
        `${label} would make pane ${p.id} (${where(p)})${on} the active pane of a window a ` +
        `person is watching (${clientsText(watchers)}), in place of pane ${before.id}${NEXT}`,
      ];
    }
    case "select_window": {
      const w = refs.windowId === undefined ? undefined : activePane(view, refs.windowId);
      const session = w && sessionOfWindow(view, w, refs.session);
      const people = session ? attachedPeople(view, session) : [];
      if (!w || !session || isCurrentIn(w, session) || people.length === 0) return [];
      const current = snapshot.panes.find((p) => isCurrentIn(p, session));
      return [
        `${label} would bring window ${w.windowId} in front of ` +
        `${attachedText(view, session, people)}` +
        (current ? `, in place of window ${current.windowId}` : "") +
        `: what they type next goes to pane ${w.id} (${where(w)})`,
      ];
    }
    case "move_window": {
      // move-window -d links the window at its new place, then unlinks it from the old one, in
      // its session and in every session grouped with it (tmux 3.3a, measured). Each of them
      // whose current window it was picks another: its last window, else the one before (which
      // wraps round to the highest index: the moved window itself, at times). Moved to another
      // session it is another window, or the session ends with its last one; moved to another
      // index of the same session it is another window whenever the session has a last one.
      // Moved to a session it is already in (one grouped with its own, say), the server
      // refuses it.
      const w = refs.windowId === undefined ? undefined : activePane(view, refs.windowId);
      const from = w && sessionOfWindow(view, w, refs.fromSession);
      const to = findSession(snapshot.sessions, refs.session ?? "");
      if (!w || !from || !to) return [];
      const within = from.id === to.id;
      if (!within && w.placements.some((at) => at.sessionId === to.id)) return [];
      const leaves = snapshot.sessions.filter((s) => sharesWindows(s, from) && isCurrentIn(w, s));
      return leaves.flatMap((s) => {
        const people = attachedPeople(view, s);
        if (people.length === 0) return [];
        const grouped = s.id === from.id ? "" : `, grouped with session ${quoted(from.name, 60)}`;
        return [
          `${label} would move window ${w.windowId}, the current window of session ` +
          `${quoted(s.name, 60)}${grouped}, ` +
          (within ? "to another index of session " : "to session ") + quoted(to.name, 60) +
          `, from in front of ${attachedText(view, s, people)}: ` +
          (within
            ? "tmux may make another window current there (their last one), and what they " +
              "type next goes to it"
            : s.windows <= 1
            ? "it is that session's last window, so the session ends under them"
            : "another window takes its place, and what they type next goes to it"),
        ];
      });
    }
  }
  return [];
}

/**
 * A window's alert flags in a session's status line, as three digits: bell (`!`), activity
 * (`#`), silence (`~`), as src/tools/placement.ts reads them.
 */
const ALERT_FLAGS = "#{window_bell_flag}#{window_activity_flag}#{window_silence_flag}";
const ALERT_NAMES = ["bell", "activity", "silence"];

/**
 * What the select_window calls among `calls` would wipe from a person's status line: tmux
 * 3.3a clears a window's alert marks (bell, activity, silence) in every session holding it
 * once one of them makes it current (winlink_clear_flags), so selecting it in a session nobody
 * watches takes the mark out of the status line of a person attached to a session the window
 * is linked into, or grouped with that one. The server refuses such a select unless
 * `--allow-attended-input` (src/tools/placement.ts, alertMarksCheck). One sentence per such
 * session; a person attached to the session the window is selected in is
 * {@link focusConcerns}'s (their keys move too).
 *
 * The guard's snapshot holds no window flags, so they are read here, with `read` (a tmux
 * command on the server a call names), and only for a select where a person is attached to
 * another session holding the window. A window current already in that session is selected
 * again by nothing and keeps its marks (measured); a call that fails (no such window, not in
 * the session named, linked into several and none named) clears nothing. Calls judgeCalls
 * asks about unread (unclear, or after batch rows that may change tmux) are left to it.
 */
export async function marksConcerns(
  calls: readonly GuardedCall[],
  viewOf: (socketName: string | undefined) => ServerView,
  read: (socketName: string | undefined, argv: string[]) => Promise<Uint8Array>,
): Promise<string[]> {
  const out: string[] = [];
  for (const call of calls) {
    if (call.unclear || call.after || call.focus?.tool !== "select_window") continue;
    const view = viewOf(call.socketName);
    const { refs } = call.focus;
    const w = refs.windowId === undefined ? undefined : activePane(view, refs.windowId);
    const session = w && sessionOfWindow(view, w, refs.session);
    if (!w || !session || isCurrentIn(w, session)) continue;
    const elsewhere = new Set(w.placements.map((at) => at.sessionId));
    elsewhere.delete(session.id);
    const people = view.snapshot.clients.filter((c) =>
      isPerson(c) && c.windowId !== "" && elsewhere.has(c.sessionId)
    );
    if (people.length === 0) continue;
    const rows = new TextDecoder().decode(
      await read(call.socketName, [
        "list-windows",
        "-a",
        "-F",
        `#{session_id} ${ALERT_FLAGS}`,
        "-f",
        `#{==:#{window_id},${w.windowId}}`,
      ]),
    );
    const flags = new Map(
      rows.split("\n").filter((r) => r !== "").map((r) => r.split(" ") as [string, string]),
    );
    for (const marked of view.snapshot.sessions) {
      const kinds = ALERT_NAMES.filter((_, i) => flags.get(marked.id)?.[i] === "1");
      const shown = people.filter((c) => c.sessionId === marked.id);
      if (kinds.length === 0 || shown.length === 0) continue;
      out.push(
        `${call.label} would make window ${w.windowId}${view.on} the current window of ` +
          `session ${quoted(session.name, 60)}, which clears its ${kinds.join(" and ")} mark ` +
          `in the status line of session ${quoted(marked.name, 60)}, which a person is shown ` +
          `(${clientsText(shown)} ${shown.length > 1 ? "are" : "is"} attached): tmux clears ` +
          "a window's marks in every session holding it once one of them selects it",
      );
    }
  }
  return out;
}

/**
 * What a pane move would do to a person's keys (join_pane, swap_pane, break_pane, and
 * resize_pane's zoom; read as unzooming calls): when it takes the active pane out of a window a
 * person is shown, tmux makes another pane there active, and what they type goes to it (for a
 * swap with a pane of another window, to that pane). Two panes of one window swap places as
 * `swap-pane -d -s <paneId> -t <targetPaneId>` does (tmux 3.3a, measured): the focus follows
 * the active pane when it is the first, and stays in its place, on the other pane, when it is
 * the second. A zoom makes the pane it zooms the active one. Zoomed windows are unzoom.ts's:
 * the unzoom is what the person sees first. A pane joined or swapped into another window, or
 * split there (split_window, whether it selects or not: focusConcerns reads the one that does),
 * where that window synchronizes its panes gets what a person types there
 * ({@link syncedIntoConcerns}). None when a target does not exist (the call fails) or the tool
 * moves no pane.
 */
export function keysLeaveConcerns(
  label: string,
  unzoom: { readonly tool: string; readonly zooms?: boolean },
  targets: readonly Target[],
  view: ServerView,
): string[] {
  const { tool } = unzoom;
  const moves = tool === "join_pane" || tool === "swap_pane" || tool === "break_pane";
  const splits = tool === "split_window";
  if (!moves && !splits && !(tool === "resize_pane" && unzoom.zooms)) return [];
  const panes = targets.map((t) => t.kind === "pane" ? pane(view, t.id) : undefined);
  if (panes.some((p) => p === undefined)) return [];
  const [first, second] = panes as PaneRow[];
  // A pane put into a window with synchronize-panes on gets what a person types there.
  if (splits) {
    return syncedIntoConcerns(
      label,
      view,
      `put a new pane split from pane ${first.id} into`,
      first,
    );
  }
  const synced = tool === "join_pane" && first.windowId !== second.windowId
    ? syncedIntoConcerns(label, view, `put pane ${first.id} (${where(first)}) into`, second)
    : tool === "swap_pane" && first.windowId !== second.windowId
    ? [[first, second], [second, first]].flatMap(([mine, theirs]) =>
      syncedIntoConcerns(label, view, `put pane ${mine.id} (${where(mine)}) into`, theirs)
    )
    : [];
  return [...synced, ...keysLeft(label, tool, first, second, view)];
}

/**
 * What a pane put into the window of pane `into` would take from a person when that window
 * synchronizes its panes: tmux 3.3a copies what is typed into a pane whose synchronize-panes is
 * on to every other pane of the window whose own is on, and a pane joined, swapped or split
 * there takes the window's value (measured). So what a person types there would reach it, in
 * a window they are shown or one their status line lists (a key away), as set_synchronize_panes
 * on is judged (view.ts). The server refuses it unless `--allow-attended-input`
 * (src/tools/pane_modes.ts syncedArrival). `doing` words what the call does, up to the window
 * (`put pane %3 (…) into`). None when no pane of the window is synchronized, or no person is
 * shown it or attached to a session holding it.
 */
function syncedIntoConcerns(
  label: string,
  view: ServerView,
  doing: string,
  into: PaneRow,
): string[] {
  const windowId = into.windowId;
  const synced = view.snapshot.panes.some((p) => p.windowId === windowId && p.synchronized);
  if (!synced) return [];
  const watchers = windowWatchers(view, windowId);
  const sessions = new Set(into.placements.map((at) => at.sessionId));
  const listing = view.snapshot.clients.filter((c) =>
    isPerson(c) && c.windowId !== "" && sessions.has(c.sessionId)
  );
  const whom = watchers.length > 0
    ? `which a person is watching (${clientsText(watchers)})`
    : listing.length > 0
    ? `whose entry the status line of a person's session shows (${clientsText(listing)} ` +
      `${listing.length > 1 ? "are" : "is"} attached)`
    : null;
  if (whom === null) return [];
  return [
    `${label} would ${doing} window ${windowId} (${windowWhere(into)})${view.on}, ` +
    `whose panes are synchronized, ${whom}: what the person types there would reach it`,
  ];
}

/**
 * What respawn_pane on pane `paneId` would take from a person when the pane's window
 * synchronizes its panes ({@link syncedIntoConcerns}): the new program, whatever it runs
 * (tmux's default command, the pane's first one, too), gets what they type there, in a window
 * they are shown or one their status line lists. The server refuses it unless
 * `--allow-attended-input` (src/tools/respawn.ts). None when the pane does not exist (the call
 * fails).
 */
export function respawnConcerns(label: string, paneId: string, view: ServerView): string[] {
  const p = pane(view, paneId);
  if (!p) return [];
  return syncedIntoConcerns(
    label,
    view,
    `start a new program in pane ${p.id} (${where(p)}), in`,
    p,
  );
}

/** {@link keysLeaveConcerns} for a move or a zoom whose targets exist. */
function keysLeft(
  label: string,
  tool: string,
  first: PaneRow,
  second: PaneRow,
  view: ServerView,
): string[] {
  const keyed = (p: PaneRow) => {
    const watchers = p.active && !p.windowZoomed ? windowWatchers(view, p.windowId) : [];
    return watchers.length === 0
      ? null
      : `pane ${p.id} (${where(p)})${view.on}, the active pane of a window a person is ` +
        `watching (${clientsText(watchers)})`;
  };
  if (tool === "resize_pane") {
    const before = activePane(view, first.windowId);
    const fact = before && before.id !== first.id ? keyed(before) : null;
    return fact
      ? [`${label} would zoom pane ${first.id} (${where(first)}) in place of ${fact}${NEXT}`]
      : [];
  }
  if (tool === "swap_pane") {
    if (first.windowId === second.windowId) {
      const fact = keyed(second);
      return fact
        ? [
          `${label} would swap ${fact}, with pane ${first.id} (${where(first)}) of the same ` +
          `window, and leave the focus in its place: what they type next goes to pane ${first.id}`,
        ]
        : [];
    }
    return [[first, second], [second, first]].flatMap(([mine, theirs]) => {
      const fact = keyed(mine);
      return fact
        ? [
          `${label} would swap ${fact}, with pane ${theirs.id} (${where(theirs)}): what they ` +
          `type next goes to pane ${theirs.id}`,
        ]
        : [];
    });
  }
  const fact = keyed(first);
  if (!fact) return [];
  if (tool === "join_pane") {
    return [`${label} would move ${fact}, beside pane ${second.id}${ELSEWHERE}`];
  }
  // break_pane: a pane alone in its window is refused.
  if (view.snapshot.panes.filter((p) => p.windowId === first.windowId).length < 2) return [];
  return [`${label} would break ${fact}, out into a window of its own${ELSEWHERE}`];
}
