/**
 * A person's zoom, for the hook's guard: which tool calls unzoom a window, as tmux 3.3a does
 * (measured: a split, a layout, a pane's resize, a pane moved in, out or swapped, a hidden pane
 * selected or zoomed; a pane's kill, or its respawn into a process that ends at once, is
 * guard.ts's own), and the reason the person reads when a client of theirs shows that window
 * zoomed. select_pane, and a break_pane that selects, are read as moving a focus (focus.ts),
 * which words their concern here where the window is zoomed.
 *
 * An unzoom puts the window's hidden panes on the person's screen (the agent's program among
 * them, perhaps), and after a hidden pane is selected or zoomed their keys go to it. A zoom
 * does the reverse, just as visibly: a window not zoomed that a person is shown is filled by
 * one pane, and the panes they were reading go from their screen (resize_pane or
 * resize_window with `zoom: true`, {@link zoomInConcerns}). The server refuses these calls
 * where a person watches the window unless it was started with `--allow-attended-input`;
 * asking the person then is this hook's part, as for kill_pane.
 *
 * @module
 */

import { clientLabel } from "../tmux/identity.ts";
import type { PaneRow } from "../tmux/snapshot.ts";
import type { ServerView } from "./guard.ts";
import type { Target } from "./guarded_calls.ts";
import { oneLine, where } from "./marks.ts";

/**
 * How a call unzooms: `reshape`, any zoomed window it reaches (a split, a layout, a pane's
 * size, a pane moving in or out); `off`, it turns its window's zoom off; `focus`, it makes a
 * hidden pane the active one (select, zoom), so tmux unzooms and the person's keys go there;
 * `keep`, it leaves a zoom as it is (resize_window's `zoom: true`), and is read only for the
 * zoom it may make (see {@link zoomInConcerns}).
 */
export type Unzoom = "reshape" | "off" | "focus" | "keep";

interface UnzoomSpec {
  /** What the call does, as "cannot tell which panes it would ..." words it. */
  readonly verb: string;
  /** The arguments naming what it reaches, in the order its reason names them. */
  readonly keys: readonly ("paneId" | "targetPaneId" | "windowId")[];
  /** How it unzooms given its arguments, or undefined when it leaves every zoom alone. */
  readonly how: (args: Record<string, unknown>) => Unzoom | undefined;
  /**
   * Whether it zooms the pane it names (or its window's active pane), whatever else it does:
   * tmux then makes that pane the active one of its window, zoomed before or not (focus.ts
   * judges the keys it takes), and a window not zoomed before hides its other panes
   * ({@link zoomInConcerns}).
   */
  readonly zooms?: (args: Record<string, unknown>) => boolean;
  /**
   * The reason's words up to the window: `split pane %3, which unzooms ` (then `window @2,
   * which client ...`), from the ids as the snapshot has them (never the model's text).
   */
  readonly lead: (ids: readonly string[], how: Unzoom) => string;
}

const always = (): Unzoom => "reshape";

/**
 * The tools that unzoom (kill_pane and respawn_pane apart), each read from its own arguments
 * only. split_window with `select` is read as taking the person's keys instead (focus.ts
 * `FOCUS_TOOLS`). Sizes of resize_window keep a zoom in tmux 3.3a; its `zoom: true` keeps the
 * active pane zoomed, and zooms a window that is not. A value the server would refuse is read
 * as the most the call could do.
 */
const SPECS: Readonly<Record<string, UnzoomSpec>> = {
  split_window: {
    verb: "split",
    keys: ["paneId"],
    how: always,
    lead: ([p]) => `split pane ${p}, which unzooms `,
  },
  join_pane: {
    verb: "move",
    keys: ["paneId", "targetPaneId"],
    how: always,
    lead: ([p, to]) => `move pane ${p} beside pane ${to}, which unzooms `,
  },
  swap_pane: {
    verb: "swap",
    keys: ["paneId", "targetPaneId"],
    how: always,
    lead: ([a, b]) => `swap pane ${a} with pane ${b}, which unzooms `,
  },
  break_pane: {
    verb: "break out",
    keys: ["paneId"],
    how: always,
    lead: ([p]) => `break pane ${p} out into a window of its own, which unzooms `,
  },
  select_layout: {
    verb: "rearrange",
    keys: ["windowId"],
    how: always,
    lead: () => "rearrange and unzoom ",
  },
  resize_pane: {
    verb: "resize",
    keys: ["paneId"],
    how: (args) =>
      ["width", "height", "direction", "amount"].some((k) => args[k] !== undefined)
        ? "reshape"
        : args.zoom === undefined
        ? undefined // nothing to do: the server refuses it
        : args.zoom === true
        ? "focus"
        : args.zoom === false
        ? "off"
        : "reshape",
    // A zoom given beside sizes is done after them; a value the server refuses counts.
    zooms: (args) => args.zoom !== undefined && args.zoom !== false,
    lead: ([p], how) =>
      how === "off"
        ? "unzoom "
        : `${how === "focus" ? "zoom" : "resize"} pane ${p}, which unzooms `,
  },
  resize_window: {
    verb: "zoom or unzoom",
    keys: ["windowId"],
    how: (args) => args.zoom === undefined ? undefined : args.zoom === true ? "keep" : "off",
    zooms: (args) => args.zoom !== undefined && args.zoom !== false,
    lead: () => "unzoom ",
  },
  select_pane: {
    verb: "select",
    keys: ["paneId"],
    how: () => "focus",
    lead: ([p]) => `select pane ${p}, which unzooms `,
  },
};

/** The tools that may unzoom a window (kill_pane and respawn_pane apart: guarded calls). */
export const UNZOOM_TOOLS: readonly string[] = Object.keys(SPECS);

/** How a call unzooms, as {@link unzoomOf} reads it from its arguments. */
export interface UnzoomRead {
  readonly verb: string;
  readonly keys: readonly string[];
  readonly how: Unzoom;
  /** It zooms the pane it names (see {@link UnzoomSpec.zooms}). */
  readonly zooms: boolean;
}

/** How a call of `tool` would unzoom, or undefined when it cannot. */
export function unzoomOf(tool: string, args: Record<string, unknown>): UnzoomRead | undefined {
  // Own properties only: "constructor" names no tool.
  if (!Object.hasOwn(SPECS, tool)) return undefined;
  const spec = SPECS[tool];
  const how = spec.how(args);
  const zooms = spec.zooms?.(args) ?? false;
  return how === undefined ? undefined : { verb: spec.verb, keys: spec.keys, how, zooms };
}

/**
 * The panes or window an unzooming call names (the arguments `keys` of {@link unzoomOf}), or
 * why they cannot be read: the guard then asks.
 *
 * In a batch such a call is judged by tmux as it is, unless a row before it waits, moves a pane
 * or window, or may run commands of its own (guarded_calls.ts: a `tmux select-window` typed into
 * a shell can bring a window in front of a person): a row that changes tmux otherwise could
 * bring a zoomed window in front of a person first only by a view change of its own
 * (select_window, a zoom), which the server refuses unless started with
 * `--allow-attended-input` and the hook asks about in its own right (focus.ts; unread after
 * other changes); asking about every layout step after a split would ask about nearly every
 * batch that builds one. A zooming row is asked about unread after any change. Time is another matter: a person may come and zoom meanwhile. So is a
 * pane or window not there yet: an earlier row may make it (guard.ts asks then).
 */
export function unzoomTargets(
  args: Record<string, unknown>,
  keys: readonly string[],
): Target[] | string {
  const targets: Target[] = [];
  for (const key of keys) {
    const value = args[key];
    if (typeof value !== "string") {
      return value === undefined ? `it names no ${key}` : `its ${key} is not a string`;
    }
    targets.push(key === "windowId" ? { kind: "window", id: value } : { kind: "pane", id: value });
  }
  return targets;
}

/**
 * `window @2, which client /dev/pts/4 shows zoomed on pane %3 (main:1.0 "vim")`, or null when
 * the window is not zoomed or no person is shown it. `except`: a pane that does not count as
 * shown (one a kill takes: whether it is watched is asked about on its own). `on` names the
 * server when the reason must.
 */
export function zoomFact(
  view: ServerView,
  windowId: string,
  except: string | null = null,
  on = "",
): string | null {
  const panes = view.snapshot.panes.filter((p) => p.windowId === windowId);
  if (!panes.some((p) => p.windowZoomed)) return null;
  const seen = panes.filter((p) => p.id !== except && view.attended.has(p.id));
  // The zoomed pane is the active one; a client shown the whole session sees the others too.
  const shown = seen.find((p) => p.active) ?? seen[0];
  if (!shown) return null;
  const ttys = (view.attended.get(shown.id) ?? []).map((c) => oneLine(clientLabel(c), 120));
  const many = ttys.length > 1;
  return `window ${windowId}${on}, which client${many ? "s" : ""} ${ttys.join(", ")} ` +
    `show${many ? "" : "s"} zoomed on pane ${shown.id} (${where(shown)})`;
}

/**
 * One sentence per window a person shows zoomed that the call would unzoom, and one for a
 * window a person is shown that it would zoom ({@link zoomInConcerns}); none when a target is
 * not there (the call fails) or a selected or zoomed pane is the zoomed one already.
 */
export function unzoomConcerns(
  label: string,
  unzoom: { readonly tool: string; readonly how: Unzoom; readonly zooms?: boolean },
  targets: readonly Target[],
  view: ServerView,
): string[] {
  return [
    ...unzoom.how === "keep" ? [] : undoneZooms(label, unzoom, targets, view),
    ...zoomInConcerns(label, unzoom, targets, view),
  ];
}

/** {@link unzoomConcerns}'s part for the zooms a call undoes or moves. */
function undoneZooms(
  label: string,
  unzoom: { readonly tool: string; readonly how: Unzoom },
  targets: readonly Target[],
  view: ServerView,
): string[] {
  const spec = SPECS[unzoom.tool];
  const reached: PaneRow[] = [];
  for (const target of targets) {
    const panes = view.snapshot.panes.filter((p) =>
      target.kind === "pane"
        ? p.id === target.id
        : target.kind === "window" && p.windowId === target.id
    );
    if (panes.length === 0) return [];
    reached.push(target.kind === "pane" ? panes[0] : panes.find((p) => p.active) ?? panes[0]);
  }
  const ids = targets.map((target, i) => target.kind === "window" ? "" : reached[i].id);
  const focus = unzoom.how === "focus" ? reached[0] : undefined;
  // A hidden pane only: selecting or zooming the zoomed pane changes nothing.
  if (focus && (focus.active || !focus.windowZoomed)) return [];
  const lead = `${label} would ${spec.lead(ids, unzoom.how)}`;
  const tail = focus ? `: what they type next goes to pane ${focus.id}` : "";
  const windows = [...new Set(reached.map((p) => p.windowId))];
  return windows.flatMap((w) => {
    const fact = zoomFact(view, w, null, view.on);
    return fact ? [`${lead}${fact}${tail}`] : [];
  });
}

/**
 * What zooming a window that is not zoomed would do to a person shown it: tmux fills the
 * window with one pane and hides the others from their screen (what they were reading, the
 * agent's program perhaps), which the server refuses unless `--allow-attended-input`.
 * `resize_pane ... would zoom window @1 on pane %2 (main:1.0 "vim") on the screen of client
 * /dev/pts/4, hiding its 2 other panes`. None for a window of one pane (tmux does not zoom it,
 * and it would hide nothing), one zoomed already (a zoom moved to a hidden pane is
 * {@link unzoomConcerns}'s), one nobody is shown, or a target that is not there (the call
 * fails); none either for a pane other than the active one: the zoom takes the person's keys
 * too, which focus.ts's keysLeaveConcerns words, naming the zoom.
 */
export function zoomInConcerns(
  label: string,
  unzoom: { readonly zooms?: boolean },
  targets: readonly Target[],
  view: ServerView,
): string[] {
  const target = targets[0];
  if (!unzoom.zooms || target === undefined) return [];
  const named = view.snapshot.panes.find((p) =>
    target.kind === "pane"
      ? p.id === target.id
      : target.kind === "window" && p.windowId === target.id
  );
  if (named === undefined) return [];
  const panes = view.snapshot.panes.filter((p) => p.windowId === named.windowId);
  const zoomed = target.kind === "pane" ? named : panes.find((p) => p.active) ?? named;
  if (panes.length < 2 || zoomed.windowZoomed || !zoomed.active) return [];
  const watchers = [...new Set(panes.flatMap((p) => view.attended.get(p.id) ?? []))];
  if (watchers.length === 0) return [];
  const ttys = watchers.map((c) => oneLine(clientLabel(c), 120));
  const many = ttys.length > 1;
  const hidden = panes.length - 1;
  return [
    `${label} would zoom window ${zoomed.windowId}${view.on} on pane ${zoomed.id} ` +
    `(${where(zoomed)}) on the screen${many ? "s" : ""} of client${many ? "s" : ""} ` +
    `${ttys.join(", ")}, hiding its ${hidden > 1 ? `${hidden} other panes` : "other pane"}`,
  ];
}
