/**
 * What a person's tmux is set to, for the hook's guard: a window's synchronize-panes (what they
 * type then reaches every pane of it, or stops reaching them; turned on, also in a window of
 * their session they are not shown, one key away) and the options of what they are
 * shown (set_option on their session, their window, a pane of it, or globally: their status
 * line, their key table and prefix, their mouse, what their keys send and their terminal is
 * sent). The server refuses both where a person is shown them unless `--allow-attended-input`
 * (src/tools/pane_modes.ts, src/tools/option_change.ts); asking the person then is this hook's
 * part. Two kinds of option are asked about whoever is shown what: turning on an option by which
 * tmux ends sessions or itself (destroy-unattached, exit-unattached), which the server refuses
 * at any scope, asked about even with nobody attached; and turning on one that lets a pane's
 * programs write to a person's terminal (allow-passthrough), for any window or pane, asked
 * about while anyone is attached, as the server refuses it. Which options reach nobody (user
 * options, a server option), end sessions or reach a terminal is one table for both:
 * src/tmux/option_reach.ts.
 *
 * A window's layout, its panes' sizes and a split beside a person's pane are view changes the
 * server refuses too, but not this hook's question: the person's keys, panes, modes and zoom
 * stay as they were (focus.ts and unzoom.ts ask where any of those would not).
 *
 * @module
 */

import { isPerson } from "../tmux/identity.ts";
import {
  baseName,
  ENDING_OPTIONS,
  leavesOff,
  reachesListing,
  reachesNoPerson,
  TERMINAL_OPTIONS,
} from "../tmux/option_reach.ts";
import { type ClientRow, findSession, type PaneRow } from "../tmux/snapshot.ts";
import { clientsText, windowWatchers } from "./focus.ts";
import type { ServerView } from "./guard.ts";
import type { Target } from "./guarded_calls.ts";
import { quoted, where, windowWhere } from "./marks.ts";

/** What a settings call reaches: a window (or a pane's), a session, or every one of them. */
export type ViewReach =
  | {
    readonly kind: "window";
    readonly target: Target & { readonly kind: "window" | "pane" };
    /**
     * It reaches every person attached to a session it is in too: its entry in their status
     * line, or synchronize-panes turned on ({@link reachesListing}).
     */
    readonly listed: boolean;
  }
  | { readonly kind: "session"; readonly ref: string }
  | { readonly kind: "everything"; readonly how: "globally" | "for the whole server" }
  /**
   * It turns on (or may leave on) an option by which tmux ends sessions, or (`server`) itself,
   * the moment no client is attached: asked about whoever is attached. `where`: `globally`,
   * `for session "work"`...
   */
  | { readonly kind: "ending"; readonly where: string; readonly server: boolean }
  /**
   * It turns on (or may leave on) an option that lets the programs of a window's or pane's
   * (`where`: `for window "@1"`) write to the terminal of a person shown it: asked about while
   * any person is attached, any window being a key away.
   */
  | { readonly kind: "terminal"; readonly where: string };

/** A settings call as the guard reads it. */
export interface ViewCall {
  readonly tool: string;
  /** What it does, as the reason words it: `set option "status"`. */
  readonly action: string;
  readonly reach: ViewReach;
  /** set_synchronize_panes: the state it puts the window in. */
  readonly synchronize?: boolean;
}

/** The settings calls, each with the words "cannot tell which panes it would ..." uses. */
const VERBS: Readonly<Record<string, string>> = {
  set_option: "set an option for",
  set_synchronize_panes: "synchronize",
};

/** The tools read here. */
export const VIEW_TOOLS: readonly string[] = Object.keys(VERBS);

const SCOPES = ["server", "session", "window", "pane"];

/**
 * How a call of `tool` would change a person's settings: its verb, and what it reaches (or why
 * that cannot be read: the guard then asks). Undefined when it reaches no person whatever
 * tmux holds: another tool, a user option (`@name`), a server option that reaches no client,
 * or a call the server refuses before it reads tmux (no target for a session, window or pane
 * option). A flag that is neither true nor false (the server refuses it) counts as set: the
 * guard never reads a call as doing less than it might.
 */
export function viewOf(
  tool: string,
  args: Record<string, unknown>,
): { readonly verb: string; readonly call: ViewCall | string } | undefined {
  // Own properties only: "constructor" names no tool.
  if (!Object.hasOwn(VERBS, tool)) return undefined;
  const verb = VERBS[tool];
  if (tool === "set_synchronize_panes") {
    const id = args.windowId;
    if (typeof id !== "string") {
      return {
        verb,
        call: id === undefined ? "it names no windowId" : "its windowId is not a string",
      };
    }
    const on = args.enabled !== false;
    return {
      verb,
      call: {
        tool,
        action: `turn synchronize-panes ${on ? "on" : "off"}`,
        // On: what a person types there after switching to it reaches every pane of it.
        reach: { kind: "window", target: { kind: "window", id }, listed: on },
        synchronize: on,
      },
    };
  }
  const { name, scope, target } = args;
  if (typeof name !== "string") return { verb, call: "its option name is not a string" };
  const base = baseName(name);
  if (reachesNoPerson(base)) return undefined;
  if (typeof scope !== "string" || !SCOPES.includes(scope)) {
    return { verb, call: "its scope is not server, session, window or pane" };
  }
  const flag = (v: unknown) => v !== undefined && v !== false;
  const doing = flag(args.unset) ? "unset" : flag(args.append) ? "append to" : "set";
  const action = `${doing} option ${quoted(name, 80)}`;
  // Left off only by a value tmux reads as off, or an unset of the global or server value; a
  // value that is not a string (the server refuses it) does not leave it off.
  const off = leavesOff(
    typeof args.value === "string" ? args.value : undefined,
    flag(args.unset),
    scope === "server" || args.global === true,
  );
  const ending = ENDING_OPTIONS.has(base) && !off;
  const server = base === "exit-unattached";
  if (scope === "server" || flag(args.global)) {
    const how = scope === "server" ? "for the whole server" : "globally";
    const reach: ViewReach = ending
      ? { kind: "ending", where: how, server }
      : { kind: "everything", how };
    return { verb, call: { tool, action, reach } };
  }
  // The server asks which one before it reads tmux, and sets nothing.
  if (target === undefined || target === null) return undefined;
  if (typeof target !== "string") return { verb, call: "its target is not a string" };
  const where = `for ${scope} ${quoted(target, 60)}`;
  if (ending) return { verb, call: { tool, action, reach: { kind: "ending", where, server } } };
  if (TERMINAL_OPTIONS.has(base) && !off) {
    return { verb, call: { tool, action, reach: { kind: "terminal", where } } };
  }
  const reach: ViewReach = scope === "session" ? { kind: "session", ref: target } : {
    kind: "window",
    target: { kind: scope === "window" ? "window" : "pane", id: target },
    listed: reachesListing(base),
  };
  return { verb, call: { tool, action, reach } };
}

/** The targets a settings call names by id, for a batch's check that they exist now. */
export function viewTargets(call: ViewCall): Target[] {
  return call.reach.kind === "window" ? [call.reach.target] : [];
}

/** The people shown anything: every person's client that shows a window. */
function people(view: ServerView): ClientRow[] {
  return view.snapshot.clients.filter((c) => isPerson(c) && c.windowId !== "");
}

/** ` (client /dev/pts/4)` words, with the right verb: `client /dev/pts/4 is`. */
function are(clients: readonly ClientRow[]): string {
  return `${clientsText(clients)} ${clients.length > 1 ? "are" : "is"}`;
}

/**
 * What a settings call would change for a person: one sentence when it reaches a session, a
 * window or a pane's window a person is shown (or whose entry their status line lists), or
 * every session while a person is attached; none when nobody is, or when its target does not
 * exist (the call fails). synchronize-panes already as the call would set it is asked about too:
 * the call sets the window's own value, which a global one set later no longer reaches. An option
 * that ends sessions turned on: one sentence always, whatever exists or who is attached; one that
 * opens a terminal to a pane's programs: one while any person is attached.
 */
export function viewConcerns(label: string, call: ViewCall, view: ServerView): string[] {
  const { snapshot, on } = view;
  const lead = `${label} would ${call.action}`;
  const reach = call.reach;
  switch (reach.kind) {
    case "everything": {
      const shown = people(view);
      if (shown.length === 0) return [];
      return [
        `${lead} ${reach.how}${on}, which reaches every session and window: ` +
        `${are(shown)} attached`,
      ];
    }
    case "ending":
      // The server refuses it whoever is attached: a session nobody is attached to ends at once.
      return [
        `${lead} ${reach.where}${on}: tmux would then end ${
          reach.server
            ? "the whole server, every session and program in it, the moment no client is " +
              "attached to it (at once if none is)"
            : "each session it reaches, and every program in it, the moment no client is " +
              "attached to it (a detached one at once)"
        }; the MCP server refuses it (kill_session and kill_server end them under their guards)`,
      ];
    case "terminal": {
      const shown = people(view);
      if (shown.length === 0) return [];
      return [
        `${lead} ${reach.where}${on}: its programs could then write to the terminal of a person ` +
        "who looks at it (their clipboard, anywhere on their screen), and any window is a key " +
        `away: ${are(shown)} attached`,
      ];
    }
    case "session": {
      const session = findSession(snapshot.sessions, reach.ref);
      if (!session) return [];
      // A person's choose-tree previews every session's windows.
      const shown = people(view).filter((c) => c.sessionId === session.id || c.previewing);
      if (shown.length === 0) return [];
      return [
        `${lead} for session ${quoted(session.name, 60)}${on}, which a person is shown ` +
        `(${clientsText(shown)})`,
      ];
    }
    case "window": {
      const { target } = reach;
      const panes = snapshot.panes.filter((p) =>
        target.kind === "pane" ? p.id === target.id : p.windowId === target.id
      );
      const first: PaneRow | undefined = panes[0];
      if (!first) return [];
      const windowId = first.windowId;
      const named = target.kind === "pane"
        ? `pane ${first.id} (${where(first)})${on}, in window ${windowId}`
        : `window ${windowId} (${windowWhere(first)})${on}`;
      const tail = call.synchronize === undefined
        ? ""
        : call.synchronize
        ? ": what they type there would reach every pane of it"
        : ": what they type there would reach only the pane they are in";
      const watchers = windowWatchers(view, windowId);
      if (watchers.length > 0) {
        return [
          `${lead} for ${named}, which a person is watching (${clientsText(watchers)})${tail}`,
        ];
      }
      if (!reach.listed) return [];
      const sessions = new Set(first.placements.map((at) => at.sessionId));
      const listing = people(view).filter((c) => sessions.has(c.sessionId));
      if (listing.length === 0) return [];
      return [
        `${lead} for ${named}, whose entry the status line of a person's session shows ` +
        `(${are(listing)} attached)${tail}`,
      ];
    }
  }
}
