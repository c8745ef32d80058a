/**
 * `guard`: before a tmux tool call runs, work out which panes it would type into, run in,
 * respawn, kill, clear, pipe or open or close copy mode in, and ask the person (or deny) when
 * one of them is being watched by a person or is the agent's own pane; whether it would move a
 * person's keys to a pane they had not chosen (focus.ts: a pane or window selected, a new one
 * with `select`, their current window or active pane moved away); whether it would unzoom a
 * window a person shows zoomed (unzoom.ts); whether it would change the settings of what a
 * person is shown (view.ts: synchronize-panes, options); whether it would move a window whose
 * status-line entry is its own into a person's status line ({@link entryConcerns}); and whether
 * it would clear a window's alert mark in a person's status line (focus.ts `marksConcerns`).
 * Tools that do none of that pass with no opinion.
 *
 * The decision is split in two: {@link guardedCalls} (guarded_calls.ts) reads the tool call
 * alone (pure), and {@link judgeCalls} here looks the targets up in one snapshot per server.
 *
 * @module
 */

import { attendedPanes, findCallerPane, inputCohort, peopleListing } from "../tmux/identity.ts";
import { carriedEffects, ownEntryOptions, readEntryValues } from "../tmux/option_reach.ts";
import { chainText, followClient, type Relay, relayFrom, terminalClient } from "../tmux/relay.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { noteWrappedAlong } from "../tmux/wrapped_relay.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import { addressKey, type ServerAddress } from "../tmux/server_address.ts";
import {
  type ClientRow,
  findSession,
  type PaneRow,
  type Snapshot,
  takeSnapshot,
} from "../tmux/snapshot.ts";
import type { AgentPane } from "./agent_pane.ts";
import {
  clientsText,
  focusConcerns,
  keysLeaveConcerns,
  marksConcerns,
  respawnConcerns,
} from "./focus.ts";
import {
  type EarlierOperation,
  type GuardedCall,
  guardedCalls,
  type Target,
  VERBS,
} from "./guarded_calls.ts";
import { HOOK_TMUX_TIMEOUT_MS, oneLine, quoted, where, windowWhere } from "./marks.ts";
import { socketLabel } from "../tmux/socket_choice.ts";
import { unzoomConcerns, zoomFact } from "./unzoom.ts";
import { viewConcerns } from "./view.ts";
// Each tool's toolset, as `deno task tool-list` writes it from the registry (data, no code).
import toolFacts from "../mcp/front_desk.json" with { type: "json" };

/**
 * How a reason names an earlier operation's tool: bare when it is one of this server's tools,
 * else in fixed words. The name is the model's text, and the reason is read as the hook's own
 * words: a row named `list_panes) only reads. Allow (` must not speak in them.
 */
function toolWord(tool: string): string {
  return Object.hasOwn(toolFacts.tools, tool) ? tool : "a tool this server does not offer";
}

/** How many earlier operations a reason names before it says how many more. */
const MAX_NAMED_CHANGES = 5;

/** Longest reason written (the person reads it in a permission prompt). */
export const MAX_REASON_CHARS = 1_500;

/** One server as the guard sees it. */
export interface ServerView {
  readonly snapshot: Snapshot;
  /** The agent's own pane on this server, or null when it is not on it. */
  readonly callerPaneId: string | null;
  readonly attended: Map<string, ClientRow[]>;
  /**
   * ` on socket "work"`, so the person knows which; empty for the server tmux picks unnamed
   * (the agent's own, a popup's, or tmux's default), the one they know as theirs.
   */
  readonly on: string;
}

/**
 * Builds the view of one server from a snapshot and the agent's place (null: the agent is
 * outside tmux). The agent's pane counts only on the server `TMUX` names, same pid.
 */
export function serverView(snapshot: Snapshot, agent: AgentPane | null, on = ""): ServerView {
  const caller = agent
    ? findCallerPane(snapshot, { tmux: agent.tmux, tmuxPane: agent.paneId })
    : { paneId: null, via: null };
  return {
    snapshot,
    callerPaneId: caller.via === "TMUX_PANE" ? caller.paneId : null,
    attended: attendedPanes(snapshot),
    on,
  };
}

/**
 * What the person should know about these calls: one sentence per call that would touch a
 * watched pane or the agent's own (or whose targets could not be read). Empty: no opinion.
 * `elsewhere`: the agent's own server and the MCP server's (read when a call types into a pane
 * that runs a client of another server, see {@link relayFact}).
 */
export function judgeCalls(
  calls: readonly GuardedCall[],
  viewOf: (socketName: string | undefined) => ServerView,
  elsewhere: readonly ServerView[] = [],
): string[] {
  const out: string[] = [];
  for (const call of calls) {
    if (call.unclear) {
      out.push(`${call.label}: cannot tell which panes it would ${call.verb} (${call.unclear})`);
      continue;
    }
    if (call.after) {
      out.push(`earlier operations of this batch (${namedChanges(call.after)}) ${afterWhy(call)}`);
      continue;
    }
    const view = viewOf(call.socketName);
    const on = view.on;
    if (call.focus) {
      out.push(...focusConcerns(call.label, call.focus, view));
      continue;
    }
    if (call.unzoom || call.view) {
      const made = call.madeBefore;
      if (made && call.targets.some((t) => touchedPanes(view.snapshot, t, false).length === 0)) {
        out.push(
          `earlier operations of this batch (${namedChanges(made)}) ${
            afterWhy({ ...call, after: made })
          }`,
        );
      } else if (call.view) {
        out.push(...viewConcerns(call.label, call.view, view));
      } else if (call.unzoom) {
        out.push(...unzoomConcerns(call.label, call.unzoom, call.targets, view));
        out.push(...keysLeaveConcerns(call.label, call.unzoom, call.targets, view));
      }
      continue;
    }
    for (const target of call.targets) {
      const input = INPUT_VERBS.has(call.verb);
      const touched = touchedPanes(view.snapshot, target, input);
      if (input) {
        for (const pane of touched) {
          const fact = relayFact(pane, view, elsewhere);
          if (fact) out.push(`${call.label} would ${call.verb} pane ${fact}${on}`);
        }
      }
      const facts = touched.flatMap((pane) => {
        const fact = paneFact(pane, view);
        return fact ? [fact] : [];
      });
      // A program started in a synchronized window gets what a person types there (focus.ts).
      if (target.kind === "pane" && call.verb === VERBS.respawn_pane) {
        out.push(...respawnConcerns(call.label, target.id, view));
      }
      const unzooms = target.kind === "pane" ? ZOOM_LINKS.get(call.verb) : undefined;
      if (unzooms !== undefined) {
        for (const pane of touched) {
          const fact = zoomFact(view, pane.windowId, pane.id);
          if (fact) {
            out.push(`${call.label} would ${call.verb} pane ${pane.id}${on}${unzooms} ${fact}`);
          }
        }
      }
      if (facts.length === 0) continue;
      out.push(
        target.kind !== "pane"
          ? `${call.label} would ${call.verb} ${targetName(target)}${on}, including pane ${
            facts.join(", and pane ")
          }`
          : touched.length > 1
          ? `${call.label} would ${call.verb} pane ${target.id}${on}, whose window has ` +
            `synchronize-panes on: it reaches pane ${facts.join(", and pane ")}`
          : `${call.label} would ${call.verb} pane ${facts[0]}${on}`,
      );
    }
  }
  return out;
}

/**
 * Why earlier operations keep a call from being judged now: they may change tmux, or they
 * wait (time passes, and a person may come to look), or both.
 */
function afterWhy(call: GuardedCall): string {
  const after = call.after ?? [];
  const change = after.some((op) => !op.waits);
  const wait = after.some((op) => op.waits);
  const now = "cannot be judged by tmux as it is now";
  if (!change) {
    return `wait, and time passes before ${call.label} runs: who watches what it would ` +
      `${call.verb} then ${now}`;
  }
  return `may change what ${call.label} would ${call.verb}` +
    `${wait ? ", and time passes before it runs" : ""}: it ${now}`;
}

/** `rename_session, join_pane`, or the first few and how many more. */
function namedChanges(operations: readonly EarlierOperation[]): string {
  const named = operations.slice(0, MAX_NAMED_CHANGES).map((op) => toolWord(op.tool)).join(", ");
  const more = operations.length - MAX_NAMED_CHANGES;
  return more > 0 ? `${named} and ${more} more` : named;
}

function targetName(target: Target): string {
  switch (target.kind) {
    case "pane":
      return `pane ${target.id}`;
    case "window":
      return `window ${target.id}`;
    case "session":
      return `session ${quoted(target.ref, 60)}`;
    case "server":
      return "the whole tmux server";
  }
}

/**
 * The verbs that may end a pane a person's zoom hides, each with the words that lead to the
 * window it unzooms: tmux unzooms a window when any of its panes goes, a hidden one too. The
 * server refuses such a kill unless `force` (kill_pane's guardUnzoom, "ask the person first"),
 * and such a respawn, whose new process may end at once and take the pane, unless
 * `--allow-attended-input` (respawn.ts guardKeepsZoom). The server lets the respawn through
 * where remain-on-exit is on; the hook asks even then: the option is not in its read, and may
 * be turned off before the call.
 */
const ZOOM_LINKS: ReadonlyMap<string, string> = new Map([
  [VERBS.kill_pane, ", which unzooms"],
  [VERBS.respawn_pane, ": should its new process end at once, the pane goes, which unzooms"],
]);

/** What the tools that type, paste or run do: input reaches a synchronized window's panes. */
const INPUT_VERBS: ReadonlySet<string> = new Set([
  VERBS.send_keys,
  VERBS.paste_text,
  VERBS.run_command,
]);

/**
 * The panes a target stands for; none when it names nothing that exists (the call fails).
 * `input`: what is typed into a pane reaches every pane of its window when it is synchronized.
 */
function touchedPanes(snapshot: Snapshot, target: Target, input: boolean): PaneRow[] {
  switch (target.kind) {
    case "pane": {
      const pane = snapshot.panes.find((p) => p.id === target.id);
      if (!pane) return [];
      return input ? inputCohort(snapshot, pane) : [pane];
    }
    case "window":
      return snapshot.panes.filter((p) => p.windowId === target.id);
    case "session": {
      // Looked up as the server does: a session named like an id ($7) by its name when no
      // session has that id.
      const session = findSession(snapshot.sessions, target.ref);
      if (!session) return [];
      // A window also linked into another session survives there (kill_session says so), but
      // a person attached to this session loses what they see: their client is detached.
      const seenHere = attendedPanes({
        ...snapshot,
        clients: snapshot.clients.filter((c) => c.sessionId === session.id),
      });
      return snapshot.panes.filter((p) =>
        p.placements.every((at) => at.sessionId === session.id) || seenHere.has(p.id)
      );
    }
    case "server":
      return snapshot.panes;
  }
}

/**
 * What typing into `pane` reaches when it runs a tmux client (the client's terminal is the
 * pane's): the pane that client shows, where the keys go on, and on again through any client
 * running there (relay.ts `relayFrom`, as the server's input guard follows it). `%2 (agent:0.0
 * "tmux"), which runs a tmux client (/dev/pts/15) showing pane %0 (main:0.0 "vim"), which a
 * person is watching (client /dev/pts/9)`, when a pane it reaches is watched by someone other
 * than the clients passing the keys on, or is the agent's own; else null. A client of another
 * server is looked for on the servers of `elsewhere` by its terminal (the usual nesting: the
 * agent's tmux attached in a pane of an outer one, typed into with `socket_name`); found on
 * none, the pane's keys go where the hook cannot see, which the person is asked about.
 */
function relayFact(
  pane: PaneRow,
  view: ServerView,
  elsewhere: readonly ServerView[],
): string | null {
  const relay = relayFrom(view.snapshot, pane);
  if (relay === null) return null;
  const here = relay.unknown
    ? "runs a tmux client showing a pane the hook's read did not hold (it changed meanwhile)"
    : reachFact(relay, view);
  const onward = relay.onward === null
    ? null
    : onwardFact(relay.onward, view, elsewhere, relay.onward.id !== pane.id);
  const facts = [here, onward].filter((f) => f !== null);
  return facts.length === 0 ? null : `${pane.id} (${where(pane)}), which ${facts.join(", and ")}`;
}

/**
 * What a relay reaches on `view`'s server that a person should know: `runs a tmux client
 * (/dev/pts/15) showing pane %0 (main:0.0 "vim"), which a person is watching (client
 * /dev/pts/9)`, or null.
 */
function reachFact(relay: Relay, view: ServerView): string | null {
  const first = relay.hops[0];
  if (first === undefined) return null;
  const passing = new Set(relay.hops.map((hop) => hop.client.name));
  const own = relay.reached.some((p) => p.id === view.callerPaneId);
  const watchers = [...new Set(relay.reached.flatMap((p) => view.attended.get(p.id) ?? []))]
    .filter((c) => !passing.has(c.name));
  if (!own && watchers.length === 0) return null;
  const parts: string[] = [];
  if (own) parts.push("the agent's own pane");
  if (watchers.length > 0) parts.push(`which a person is watching (${clientsText(watchers)})`);
  const shown = relay.hops.length === 1
    ? `${first.shown.id} (${where(first.shown)})`
    : chainText(relay);
  return `runs a tmux client (${first.client.tty}) showing pane ${shown}${view.on}, ` +
    `${parts.join(", ")}: what is typed there goes on to it`;
}

/**
 * What typing reaches through `pane`, which runs tmux with no client of `view`'s server on its
 * terminal: looked for on the other servers the hook knows (see {@link relayFact}). `through`:
 * `pane` is further along a chain than the pane typed into.
 */
function onwardFact(
  pane: PaneRow,
  view: ServerView,
  elsewhere: readonly ServerView[],
  through: boolean,
): string | null {
  const at = through ? `(through ${pane.id}) ` : "";
  const pid = view.snapshot.server?.pid;
  for (const other of elsewhere) {
    if (other.snapshot.server?.pid === pid) continue;
    const client = terminalClient(other.snapshot, pane.tty);
    if (client === undefined) continue;
    const fact = reachFact(followClient(other.snapshot, client), other);
    return fact === null ? null : `${at}${fact}`;
  }
  return `${at}runs tmux, a client of a server this hook does not read: what is typed there ` +
    "goes on to a pane it cannot see";
}

/** `%3 (main:1.0 "vim"), which a person is watching (client /dev/pts/4)`, or null. */
function paneFact(pane: PaneRow, view: ServerView): string | null {
  const own = pane.id === view.callerPaneId;
  const watchers = view.attended.get(pane.id) ?? [];
  if (!own && watchers.length === 0) return null;
  const parts: string[] = [];
  if (own) parts.push("the agent's own pane");
  if (watchers.length > 0) parts.push(`which a person is watching (${clientsText(watchers)})`);
  return `${pane.id} (${where(pane)}), ${parts.join(", ")}`;
}

/**
 * What the moves of these calls (move_window judged by tmux as it is) would draw in a person's
 * status line: a window whose own status-line entry options differ from the global ones
 * (src/tmux/option_reach.ts), moved into a session a person is attached to (or one grouped
 * with it), draws its entry there as set_option would, which the guard asks about (view.ts).
 * The server refuses such a move unless `--allow-attended-input` (src/tools/placement.ts). The
 * window's options are read only for a move where a person is attached; `read` runs a tmux
 * command on the server a call names.
 */
export async function entryConcerns(
  calls: readonly GuardedCall[],
  viewOf: (socketName: string | undefined) => ServerView,
  read: (socketName: string | undefined, argv: string[]) => Promise<Uint8Array>,
): Promise<string[]> {
  const out: string[] = [];
  for (const call of calls) {
    if (call.unclear || call.after || call.focus?.tool !== "move_window") continue;
    const { windowId, session } = call.focus.refs;
    const view = viewOf(call.socketName);
    const { snapshot } = view;
    const pane = snapshot.panes.find((p) => p.windowId === windowId);
    const to = findSession(snapshot.sessions, session ?? "");
    // A window that is not there, or already in that session (refused, or moved within it).
    if (!pane || !to || pane.placements.some((at) => at.sessionId === to.id)) continue;
    const people = peopleListing(snapshot, to);
    if (people.length === 0) continue;
    let own: string[];
    try {
      own = ownEntryOptions(
        await readEntryValues((argv) => read(call.socketName, argv), pane.windowId),
      );
    } catch (error) {
      // Gone since the snapshot: the call fails on it too.
      if (error instanceof TmuxError && error.kind === "no-target") continue;
      throw error;
    }
    if (own.length === 0) continue;
    out.push(
      `${call.label} would move window ${pane.windowId} (${windowWhere(pane)})${view.on} into ` +
        `session ${quoted(to.name, 60)}, whose status line a person is shown (${
          clientsText(people)
        } ${people.length > 1 ? "are" : "is"} attached): its own ${own.join(", ")} would ${
          carriedEffects(own)
        }`,
    );
  }
  return out;
}

/**
 * Whether a call types into a pane whose keys go on to a tmux client of another server (see
 * relay.ts `relayFrom`).
 */
function typesOnward(
  calls: readonly GuardedCall[],
  viewOf: (socketName: string | undefined) => ServerView,
): boolean {
  return calls.some((call) =>
    typesInto(call) &&
    call.targets.some((target) => {
      const { snapshot } = viewOf(call.socketName);
      return touchedPanes(snapshot, target, true).some((p) =>
        relayFrom(snapshot, p)?.onward != null
      );
    })
  );
}

/** Whether `call` is judged now as typing into the panes it targets (see judgeCalls). */
function typesInto(call: GuardedCall): boolean {
  return !call.unclear && !call.after && !call.focus && !call.unzoom && !call.view &&
    INPUT_VERBS.has(call.verb);
}

/** Joins concerns into one reason, bounded, saying how many it left out. */
export function reasonText(concerns: readonly string[]): string {
  const budget = MAX_REASON_CHARS - 40;
  const kept: string[] = [];
  let length = 0;
  for (const concern of concerns) {
    const text = oneLine(concern, budget);
    if (kept.length > 0 && length + text.length > budget) break;
    kept.push(text);
    length += text.length + 2;
  }
  const left = concerns.length - kept.length;
  return kept.join("; ") + (left > 0 ? `; and ${left} more like these.` : ".");
}

/** The hook output for a decision: only the fields of seed 002's `SyncHookJSONOutput`. */
export interface PreToolUseDecision {
  readonly hookSpecificOutput: {
    readonly hookEventName: "PreToolUse";
    readonly permissionDecision: "ask" | "deny";
    readonly permissionDecisionReason: string;
  };
}

/** The server a call without `socket_name` reaches, and whether the MCP server was told it. */
export interface HomeServer {
  readonly address: ServerAddress;
  /**
   * Named by `--socket`/`--socket-path` or their variables: reasons then say which server. Not
   * named, it is the one tmux picks in the agent's environment, which needs no naming.
   */
  readonly named: boolean;
}

/**
 * The whole guard: the calls, one snapshot per server they reach, the decision. Returns null
 * for no opinion. tmux failures propagate: the caller fails closed; a server that is not
 * running has no pane to protect (the call itself will find none either): no opinion.
 *
 * A call reaches the server the MCP server reaches with it: its `socket_name` when it has one,
 * else `home`, the MCP server's own server (its `--socket`/`--socket-path` as the hook was
 * given them, else the one tmux picks in the environment the agent gives both: `TMUX`'s, in a
 * pane or a popup, else tmux's default). `agent` is null outside a pane: no pane is then its
 * own.
 */
export async function guard(
  runner: TmuxRunner,
  agent: AgentPane | null,
  home: HomeServer,
  toolName: string,
  toolInput: Record<string, unknown>,
  decision: "ask" | "deny",
): Promise<PreToolUseDecision | null> {
  const calls = guardedCalls(toolName, toolInput);
  if (calls.length === 0) return null;
  const views = new Map<string | undefined, ServerView>();
  const addressOf = (name: string | undefined): ServerAddress =>
    name === undefined ? home.address : { socketName: name };
  const read = async (address: ServerAddress, on: string): Promise<ServerView> => {
    const snapshot = await takeSnapshot(runner, address, { timeoutMs: HOOK_TMUX_TIMEOUT_MS }, {
      windows: false, // sessions name targets, panes are what is touched, clients who watches
    });
    return serverView(snapshot, agent, on);
  };
  for (const call of calls) {
    if (call.unclear || call.after || views.has(call.socketName)) continue;
    const address = addressOf(call.socketName);
    const on = call.socketName === undefined && !home.named ? "" : ` on ${socketLabel(address)}`;
    views.set(call.socketName, await read(address, on));
  }
  // Clients under a wrapper (script, sudo) in the panes typed into, and along their chains:
  // known by their process, as the server's input guard knows them (wrapped_relay.ts).
  // One server's answers serve all of a batch's calls there.
  const asked = new Map<string | undefined, Map<string, boolean>>();
  for (const call of calls.filter(typesInto)) {
    const { snapshot } = views.get(call.socketName)!;
    const read = (argv: string[]) =>
      runner.run(addressOf(call.socketName), argv, { timeoutMs: HOOK_TMUX_TIMEOUT_MS });
    const answers = asked.get(call.socketName) ?? new Map<string, boolean>();
    asked.set(call.socketName, answers);
    for (const target of call.targets) {
      await noteWrappedAlong(read, snapshot, touchedPanes(snapshot, target, true), answers);
    }
  }
  // A call that types into a pane running another server's client: the servers it may be of.
  const elsewhere: ServerView[] = [];
  if (typesOnward(calls, (name) => views.get(name)!)) {
    const on = home.named ? ` on ${socketLabel(home.address)}` : "";
    elsewhere.push(views.get(undefined) ?? await read(home.address, on));
    // The agent's own server, where the usual nesting attaches the client (unnamed: the
    // person knows it as theirs), unless it is the one just read.
    if (agent && addressKey(agent.address) !== addressKey(home.address)) {
      elsewhere.push(await read(agent.address, ""));
    }
  }
  const concerns = [
    ...judgeCalls(calls, (name) => views.get(name)!, elsewhere),
    ...await entryConcerns(
      calls,
      (name) => views.get(name)!,
      (name, argv) => runner.run(addressOf(name), argv, { timeoutMs: HOOK_TMUX_TIMEOUT_MS }),
    ),
    ...await marksConcerns(
      calls,
      (name) => views.get(name)!,
      (name, argv) => runner.run(addressOf(name), argv, { timeoutMs: HOOK_TMUX_TIMEOUT_MS }),
    ),
  ];
  if (concerns.length === 0) return null;
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: decision,
      permissionDecisionReason: reasonText(concerns),
    },
  };
}
