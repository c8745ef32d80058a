/**
 * `guard`: before a tmux tool call runs, work out which panes it would type into, run in,
 * respawn, kill, clear or pipe, and ask the person (or deny) when one of them is being watched
 * by a person or is the agent's own pane; whether it would move a person's keys to a pane they
 * had not chosen (focus.ts: a pane or window selected, a new one with `select`, their current
 * window or active pane moved away); and whether it would unzoom a window a person shows zoomed
 * (unzoom.ts). Tools that do none of that pass with no opinion.
 *
 * The decision is split in two: {@link guardedCalls} reads the tool call alone (pure), and
 * {@link judgeCalls} looks the targets up in one snapshot per server.
 *
 * @module
 */

import { attendedPanes, findCallerPane, inputCohort } from "../tmux/identity.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import type { ServerAddress } from "../tmux/server_address.ts";
import {
  type ClientRow,
  findSession,
  type PaneRow,
  type Snapshot,
  takeSnapshot,
} from "../tmux/snapshot.ts";
import type { AgentPane } from "./agent_pane.ts";
import { isObject } from "./input.ts";
import {
  clientsText,
  type FocusCall,
  focusConcerns,
  focusOf,
  focusRefs,
  keysLeaveConcerns,
} from "./focus.ts";
import { HOOK_TMUX_TIMEOUT_MS, oneLine, quoted, where } from "./marks.ts";
import { socketLabel } from "../tmux/socket_choice.ts";
import { type Unzoom, unzoomConcerns, unzoomOf, unzoomTargets, zoomFact } from "./unzoom.ts";
// Each tool's toolset, as `deno task tool-list` writes it from the registry (data, no code).
import toolFacts from "../mcp/front_desk.json" with { type: "json" };

/** What each guarded tool does to the panes it targets, as the reason words it. */
const VERBS: Readonly<Record<string, string>> = {
  send_keys: "type into",
  send_keys_batch: "type into",
  paste_text: "paste into",
  paste_buffer: "paste into",
  run_command: "run a command in",
  respawn_pane: "respawn",
  kill_pane: "kill",
  kill_window: "kill",
  kill_session: "kill",
  kill_server: "kill",
  clear_pane: "clear",
  pipe_pane: "pipe the output of",
};

/**
 * Tools the guard always looks at; every other tool but focus.ts's `FOCUS_TOOLS` and unzoom.ts's
 * `UNZOOM_TOOLS` passes untouched.
 */
export const GUARDED_TOOLS: readonly string[] = Object.keys(VERBS);

/** The batch tool: each of its operations is judged as its own call. */
export const BATCH_TOOL = "call_tools_batch";

/**
 * Whether a tool only reads tmux: the registry puts it in the `inspect` toolset ("read only").
 * Any other tool, one the registry does not know included, may change what later calls reach.
 */
export function readsOnly(tool: string): boolean {
  const toolsets: Readonly<Record<string, string>> = toolFacts.tools;
  return Object.hasOwn(toolsets, tool) && toolsets[tool] === "inspect";
}

/**
 * Whether a row of a read-only tool holds the batch before the next row runs: `wait_for_text`
 * and `wait_for_idle` always, `get_command_result` when given a `waitMs` (up to 120 s each).
 * Meanwhile a person may come to look at the pane a later row kills or types into.
 */
function waits(tool: string, args: Record<string, unknown>): boolean {
  if (tool === "wait_for_text" || tool === "wait_for_idle") return true;
  return tool === "get_command_result" && args.waitMs !== undefined && args.waitMs !== 0;
}

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

/** How deep batches may nest before the guard stops reading and asks. */
const MAX_NESTING = 4;

/**
 * Most operations the server runs in one batch (src/tools/batch.ts, which the hook must not
 * load; a test holds them equal). A call holding more, nested batches counted (the server runs
 * none of theirs), is asked about unread: the server refuses it anyway, and reading each row
 * after all those before it costs the square of the rows, up to the 48 MiB an input may hold.
 */
export const MAX_BATCH_OPERATIONS = 16;
/** Longest reason written (the person reads it in a permission prompt). */
export const MAX_REASON_CHARS = 1_500;

/** What a call would touch. */
export type Target =
  | { readonly kind: "pane"; readonly id: string }
  | { readonly kind: "window"; readonly id: string }
  | { readonly kind: "session"; readonly ref: string }
  | { readonly kind: "server" };

/** One guarded tool call (a batch contributes one per guarded operation). */
export interface GuardedCall {
  /** `send_keys`, or `call_tools_batch operation 2 (send_keys)`. */
  readonly label: string;
  readonly verb: string;
  /** The call's `socket_name`: it wins over the MCP server's own server, as in the server. */
  readonly socketName?: string;
  readonly targets: readonly Target[];
  /** Set when the call's targets cannot be read from its arguments: the guard then asks. */
  readonly unclear?: string;
  /**
   * Set for a call that may move a person's focus (focus.ts): judged by who is shown its
   * target's window, or attached to its session, not by whose pane it is.
   */
  readonly focus?: FocusCall;
  /**
   * Set for a call that may unzoom the windows its targets are in (unzoom.ts): judged by who
   * is shown those windows zoomed. `tool` words the reason.
   */
  readonly unzoom?: { readonly tool: string; readonly how: Unzoom };
  /**
   * Set for a batch operation after operations that may change tmux (any tool but a read-only
   * one: rename, join, synchronize, kill, type...) or that wait: what it reaches when it runs is
   * not what tmux shows now, so the guard asks instead of judging it by the snapshot. Those
   * operations, in order.
   */
  readonly after?: readonly EarlierOperation[];
}

/** An earlier operation of a batch that a later one runs after. */
export interface EarlierOperation {
  readonly tool: string;
  /** A read-only tool that waits (see {@link waits}): it changes nothing, but time passes. */
  readonly waits: boolean;
}

/**
 * The tool's own name: `mcp__<server>__<tool>` loses its prefix whatever the server was
 * registered as; a bare name stays as it is.
 */
export function bareToolName(name: string): string {
  if (!name.startsWith("mcp__")) return name;
  const at = name.lastIndexOf("__");
  return at > "mcp_".length ? name.slice(at + 2) : name;
}

/** Reads a tool call into the guarded calls it makes; an empty list means no opinion. */
export function guardedCalls(toolName: string, toolInput: Record<string, unknown>): GuardedCall[] {
  const tool = bareToolName(toolName);
  return callsOf(tool, toolInput, tool, {}, 0, { changes: [], rows: 0 });
}

/** What a batch read has met so far, shared by all its operations, nested ones too. */
interface ReadState {
  /** The operations that may change tmux (or wait), in order: see {@link noteChange}. */
  readonly changes: EarlierOperation[];
  /** Operations read, nested batches' included: at most {@link MAX_BATCH_OPERATIONS}. */
  rows: number;
}

/** What a guarded tool does (its verb), or undefined for a tool the guard lets pass. */
function verbOf(tool: string): string | undefined {
  // Own properties only: "constructor" and "toString" name no tool.
  return Object.hasOwn(VERBS, tool) ? VERBS[tool] : undefined;
}

function callsOf(
  tool: string,
  args: Record<string, unknown>,
  label: string,
  inherited: { readonly socket?: string; readonly host?: unknown },
  depth: number,
  state: ReadState,
): GuardedCall[] {
  const calls = readCall(tool, args, label, inherited, depth, state);
  noteChange(tool, args, state.changes);
  return calls;
}

/**
 * Records `tool` among the changes later operations of the batch come after. A batch runs its
 * operations in order: an earlier one may rename the session a later one names, move a pane
 * into the window it kills, or synchronize the window it types into. Guarded tools change
 * tmux too: killing a pane of a zoomed window unzooms it, putting its hidden panes on a
 * person's screen, and typing or running a command in a shell nobody watches can run `tmux`
 * itself. Only read-only tools change nothing; a nested batch counts by its own operations.
 * A read-only row that waits counts too: who watches a pane when the wait ends (up to 120 s
 * later) is not who watches it now.
 */
function noteChange(
  tool: string,
  args: Record<string, unknown>,
  changes: EarlierOperation[],
): void {
  if (tool === BATCH_TOOL) return;
  if (!readsOnly(tool)) changes.push({ tool, waits: false });
  else if (waits(tool, args)) changes.push({ tool, waits: true });
}

function readCall(
  tool: string,
  args: Record<string, unknown>,
  label: string,
  inherited: { readonly socket?: string; readonly host?: unknown },
  depth: number,
  state: ReadState,
): GuardedCall[] {
  const focus = focusOf(tool, args);
  const zoom = focus ? undefined : unzoomOf(tool, args);
  const verb = verbOf(tool) ?? focus?.verb ?? zoom?.verb;
  if (tool !== BATCH_TOOL && verb === undefined) return [];
  const socket = args.socket_name;
  if (socket !== undefined && typeof socket !== "string") {
    return [unclear(label, verb ?? "touch", "its socket_name is not a string")];
  }
  const socketName = socket ?? inherited.socket;
  // A call on an SSH host (a batch's host is its rows' too) reaches panes this hook cannot
  // look at: it never runs ssh. Judging it by the local server would be judging other panes.
  const host = args.host ?? inherited.host;
  if (host !== undefined && tool !== BATCH_TOOL) {
    return [
      unclear(
        label,
        verb ?? "touch",
        `it runs on host ${
          typeof host === "string" ? quoted(host, 80) : "(not a name)"
        }, whose panes this hook cannot see`,
      ),
    ];
  }
  if (tool === BATCH_TOOL) {
    const ops = args.operations;
    if (depth >= MAX_NESTING) return [unclear(label, "touch", "batches nest too deep")];
    if (!Array.isArray(ops)) {
      return [unclear(label, "touch", "its operations are not a list")];
    }
    state.rows += ops.length;
    if (state.rows > MAX_BATCH_OPERATIONS) {
      return [
        unclear(
          label,
          "touch",
          `it holds more than ${MAX_BATCH_OPERATIONS} operations, nested batches counted: ` +
            `the server runs at most ${MAX_BATCH_OPERATIONS} in one batch`,
        ),
      ];
    }
    return ops.flatMap((op, i) => {
      const opLabel = `${BATCH_TOOL} operation ${i + 1}`;
      if (!isObject(op) || typeof op.tool !== "string") {
        return [unclear(opLabel, "touch", "the operation names no tool")];
      }
      const opArgs = op.arguments ?? {};
      const opTool = bareToolName(op.tool);
      if (!isObject(opArgs)) {
        noteChange(opTool, {}, state.changes);
        return verbOf(opTool) === undefined && opTool !== BATCH_TOOL ? [] : [
          unclear(
            `${opLabel} (${opTool})`,
            verbOf(opTool) ?? "touch",
            "its arguments are no object",
          ),
        ];
      }
      return callsOf(
        opTool,
        opArgs,
        `${opLabel} (${opTool})`,
        { socket: socketName, host },
        depth + 1,
        state,
      );
    });
  }
  if (verb === undefined) return [];
  const after = state.changes.length > 0 ? { after: [...state.changes] } : {};
  if (tool === "kill_server") {
    return [{ label, verb, socketName, targets: [{ kind: "server" }], ...after }];
  }
  if (focus) {
    // After rows that change tmux it is asked about unread: a split's new pane, selected by
    // the next row, does not exist when the hook looks.
    const read = focusRefs(focus, args);
    if (typeof read === "string") return [unclear(label, verb, read)];
    const { refs, targets } = read;
    return [{ label, verb, socketName, targets, focus: { tool, refs }, ...after }];
  }
  if (zoom) {
    const targets = unzoomTargets(args, zoom.keys);
    if (typeof targets === "string") return [unclear(label, verb, targets)];
    // In a batch, judged by tmux as it is unless a row before it waits (see unzoom.ts).
    const waited = state.changes.filter((op) => op.waits);
    const unzoom = { tool, how: zoom.how };
    return [{
      label,
      verb,
      socketName,
      targets,
      unzoom,
      ...waited.length ? { after: waited } : {},
    }];
  }
  const targets: Target[] = [];
  const problem = collectTargets(args, targets, 0);
  if (problem) return [unclear(label, verb, problem)];
  if (targets.length === 0) {
    return [unclear(label, verb, "it names no paneId, windowId or session")];
  }
  return [{ label, verb, socketName, targets, ...after }];
}

function unclear(label: string, verb: string, why: string): GuardedCall {
  return { label, verb, targets: [], unclear: why };
}

/**
 * Collects `paneId`, `windowId` and `session` wherever they sit in the arguments (a batch of
 * keystrokes may nest them in a list); returns a problem when one is not a string.
 */
function collectTargets(value: unknown, out: Target[], depth: number): string | null {
  if (depth > MAX_NESTING) return "its arguments nest too deep";
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = collectTargets(item, out, depth + 1);
      if (problem) return problem;
    }
    return null;
  }
  if (!isObject(value)) return null;
  for (const [key, v] of Object.entries(value)) {
    if (key === "paneId" || key === "windowId" || key === "session") {
      if (typeof v !== "string") return `its ${key} is not a string`;
      if (key === "paneId") out.push({ kind: "pane", id: v });
      else if (key === "windowId") out.push({ kind: "window", id: v });
      else out.push({ kind: "session", ref: v });
    } else {
      const problem = collectTargets(v, out, depth + 1);
      if (problem) return problem;
    }
  }
  return null;
}

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
 */
export function judgeCalls(
  calls: readonly GuardedCall[],
  viewOf: (socketName: string | undefined) => ServerView,
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
    if (call.unzoom) {
      out.push(...unzoomConcerns(call.label, call.unzoom, call.targets, view));
      out.push(...keysLeaveConcerns(call.label, call.unzoom.tool, call.targets, view));
      continue;
    }
    for (const target of call.targets) {
      const touched = touchedPanes(view.snapshot, target, INPUT_VERBS.has(call.verb));
      const facts = touched.flatMap((pane) => {
        const fact = paneFact(pane, view);
        return fact ? [fact] : [];
      });
      if (target.kind === "pane" && call.verb === VERBS.kill_pane) {
        for (const pane of touched) {
          // tmux unzooms a window when any of its panes goes, a hidden one too. The server
          // refuses that kill unless `force` (kill_pane's guardUnzoom, "ask the person first").
          const fact = zoomFact(view, pane.windowId, pane.id);
          if (fact) {
            out.push(
              `${call.label} would ${call.verb} pane ${pane.id}${on}, which unzooms ${fact}`,
            );
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
  for (const call of calls) {
    if (call.unclear || call.after || views.has(call.socketName)) continue;
    const address: ServerAddress = call.socketName === undefined
      ? home.address
      : { socketName: call.socketName };
    const snapshot = await takeSnapshot(runner, address, { timeoutMs: HOOK_TMUX_TIMEOUT_MS }, {
      windows: false, // sessions name targets, panes are what is touched, clients who watches
    });
    const on = call.socketName === undefined && !home.named ? "" : ` on ${socketLabel(address)}`;
    views.set(call.socketName, serverView(snapshot, agent, on));
  }
  const concerns = judgeCalls(calls, (name) => views.get(name)!);
  if (concerns.length === 0) return null;
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: decision,
      permissionDecisionReason: reasonText(concerns),
    },
  };
}
