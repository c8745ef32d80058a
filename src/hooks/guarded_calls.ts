/**
 * The guard's reading of a tool call, from its arguments alone (pure, no tmux): which panes,
 * windows or sessions it would type into, run in, respawn, kill, clear, pipe or open or close
 * copy mode in; which focus it may move (focus.ts), zoom it may undo (unzoom.ts) or settings of
 * what a person is shown it may change (view.ts); a batch's operations one by one, each after
 * the ones that may change tmux before it; and what cannot be read, which the guard asks about.
 * guard.ts judges what this reads against tmux.
 *
 * @module
 */

import { type FocusCall, focusOf, focusRefs } from "./focus.ts";
import { isObject } from "./input.ts";
import { quoted } from "./marks.ts";
import { type Unzoom, unzoomOf, unzoomTargets } from "./unzoom.ts";
import { type ViewCall, viewOf, viewTargets } from "./view.ts";
// Each tool's toolset, as `deno task tool-list` writes it from the registry (data, no code).
import toolFacts from "../mcp/front_desk.json" with { type: "json" };

/** What each guarded tool does to the panes it targets, as the reason words it. */
export const VERBS: Readonly<Record<string, string>> = {
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
  // A person's keys go to the mode, not the program, while it is open; and closing it scrolls
  // their view back: the server refuses both where a person sees the pane (pane_modes.ts).
  enter_copy_mode: "open copy mode in",
  exit_copy_mode: "close copy mode in",
};

/**
 * Tools the guard always looks at; every other tool but focus.ts's `FOCUS_TOOLS`, unzoom.ts's
 * `UNZOOM_TOOLS` and view.ts's `VIEW_TOOLS` passes untouched.
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
 * The tools that move a pane or a window, which the guard lets by where nobody is shown it (a
 * reshape): a pane joined or swapped into a person's window, a window moved into their session
 * (its entry in their status line). A later row of the batch that sets that pane's or window's
 * options, or zooms, swaps or selects its pane there, then reaches what they are shown, which
 * tmux as it is before the batch does not say.
 */
const MOVES: ReadonlySet<string> = new Set(["join_pane", "swap_pane", "break_pane", "move_window"]);

/** How deep batches may nest before the guard stops reading and asks. */
const MAX_NESTING = 4;

/**
 * Most operations the server runs in one batch (src/tools/batch.ts, which the hook must not
 * load; a test holds them equal). A call holding more, nested batches counted (the server runs
 * none of theirs), is asked about unread: the server refuses it anyway, and reading each row
 * after all those before it costs the square of the rows, up to the 48 MiB an input may hold.
 */
export const MAX_BATCH_OPERATIONS = 16;

/** Most rows the server types in one send_keys_batch (src/tools/input.ts; a test holds them equal). */
export const MAX_SEND_ROWS = 64;

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
   * Set for a call that may unzoom the windows its targets are in, or zoom one (unzoom.ts):
   * judged by who is shown those windows zoomed, or shown the window it zooms. `tool` words
   * the reason.
   */
  readonly unzoom?: { readonly tool: string; readonly how: Unzoom; readonly zooms?: boolean };
  /**
   * Set for a call that changes a person's settings (view.ts: synchronize-panes, an option of
   * what they are shown): judged by who is shown what it reaches.
   */
  readonly view?: ViewCall;
  /**
   * Set for a batch operation after operations that may change tmux (any tool but a read-only
   * one: rename, join, synchronize, kill, type...) or that wait: what it reaches when it runs is
   * not what tmux shows now, so the guard asks instead of judging it by the snapshot. Those
   * operations, in order.
   */
  readonly after?: readonly EarlierOperation[];
  /**
   * Set for a batch operation judged by tmux as it is (an unzooming one, unzoom.ts) after
   * operations that may change tmux: a pane or window it names that is not there now may be
   * one they make (a split's new pane takes the next id), so the guard asks about it instead
   * of reading it as a call that fails. Those operations, in order.
   */
  readonly madeBefore?: readonly EarlierOperation[];
}

/** An earlier operation of a batch that a later one runs after. */
export interface EarlierOperation {
  readonly tool: string;
  /** A read-only tool that waits (see {@link waits}): it changes nothing, but time passes. */
  readonly waits: boolean;
  /**
   * It may run commands of its own (see {@link runsAnything}): what tmux shows after it is not
   * what its arguments say.
   */
  readonly runs?: boolean;
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
  if (!readsOnly(tool)) changes.push({ tool, waits: false, runs: runsAnything(tool, args) });
  else if (waits(tool, args)) changes.push({ tool, waits: true });
}

/** The tools that start a shell of tmux's choosing unless given a command or an environment. */
const STARTS_SHELL: ReadonlySet<string> = new Set([
  "create_session",
  "create_window",
  "split_window",
]);

/**
 * Whether a row may run commands of its own, tmux's among them: typing or running into a shell
 * (`tmux select-window` typed there moves a person's focus), starting a program, setting an
 * option or hook or showing a message whose formats run shell commands, or a tool this server
 * does not offer — every tool but a read-only one, one of the toolsets that run nothing
 * (manage, teardown: what each does to tmux is what it is for, and this hook reads it in its
 * own right), and one that starts a shell of tmux's choosing with nothing of the caller's.
 */
function runsAnything(tool: string, args: Record<string, unknown>): boolean {
  const toolsets: Readonly<Record<string, string>> = toolFacts.tools;
  if (!Object.hasOwn(toolsets, tool)) return true;
  const toolset = toolsets[tool];
  if (toolset === "inspect" || toolset === "manage" || toolset === "teardown") return false;
  return !(STARTS_SHELL.has(tool) && args.command === undefined && args.environment === undefined);
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
  const settings = focus || zoom ? undefined : viewOf(tool, args);
  const verb = verbOf(tool) ?? focus?.verb ?? zoom?.verb ?? settings?.verb;
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
    const unzoom = zoom.zooms ? { tool, how: zoom.how, zooms: true } : { tool, how: zoom.how };
    // After a row that moves a pane or window (see MOVES), which this hook lets by where
    // nobody is shown it, its pane may be in a person's window now: a pane joined into it and
    // then zoomed takes their keys. After a row that may run commands of its own (a `tmux
    // select-window` typed into a shell nobody watches), its window may be in front of a
    // person now. A zoom moves a person's keys as a focus row does: asked unread after any
    // change, as a focus row is.
    if (
      (zoom.zooms && state.changes.length > 0) ||
      state.changes.some((op) => MOVES.has(op.tool) || op.runs)
    ) {
      return [{ label, verb, socketName, targets, unzoom, ...after }];
    }
    return [{ label, verb, socketName, targets, unzoom, ...asItIs(state) }];
  }
  if (settings) {
    const view = settings.call;
    if (typeof view === "string") return [unclear(label, verb, view)];
    // A session is named as the model wrote it, and an earlier row may have renamed one to
    // that name; a pane or window, named by id, an earlier row may have moved where a person is
    // shown it (see MOVES), or put in front of a person otherwise (a `tmux select-window` typed
    // into a shell, or a select_window): asked unread, as a focus call is. Otherwise judged
    // by tmux as it is, as an unzooming call is.
    const named = view.reach.kind === "session" || view.reach.kind === "window";
    if (named && state.changes.length > 0) {
      return [{ label, verb, socketName, targets: [], view, ...after }];
    }
    return [{ label, verb, socketName, targets: viewTargets(view), view, ...asItIs(state) }];
  }
  if (tool === "send_keys_batch" && Array.isArray(args.operations)) {
    return sendRows(args.operations, label, verb, socketName, state);
  }
  const targets: Target[] = [];
  const problem = collectTargets(args, targets, 0);
  if (problem) return [unclear(label, verb, problem)];
  if (targets.length === 0) {
    return [unclear(label, verb, "it names no paneId, windowId or session")];
  }
  return [{ label, verb, socketName, targets, ...after }];
}

/**
 * send_keys_batch's rows, each a call of its own: the server types them in order, and an
 * earlier row may run something in a shell nobody watches (`tmux select-window`, Enter) that
 * puts a later row's pane on a person's screen. So each row after the first is asked about
 * unread, after those before it, as a batch's operations are (see {@link noteChange}).
 */
function sendRows(
  rows: readonly unknown[],
  label: string,
  verb: string,
  socketName: string | undefined,
  state: ReadState,
): GuardedCall[] {
  if (rows.length > MAX_SEND_ROWS) {
    return [
      unclear(
        label,
        verb,
        `it holds more than ${MAX_SEND_ROWS} rows: the server types at most ${MAX_SEND_ROWS}`,
      ),
    ];
  }
  const earlier: EarlierOperation[] = [...state.changes];
  return rows.map((row, i) => {
    const rowLabel = `${label} row ${i + 1}`;
    const after = earlier.length > 0 ? { after: [...earlier] } : {};
    earlier.push({ tool: "send_keys", waits: false, runs: true });
    if (!isObject(row)) return unclear(rowLabel, verb, "the row is no object");
    const targets: Target[] = [];
    const problem = collectTargets(row, targets, 0);
    if (problem) return unclear(rowLabel, verb, problem);
    if (targets.length === 0) return unclear(rowLabel, verb, "it names no paneId");
    return { label: rowLabel, verb, socketName, targets, ...after };
  });
}

/**
 * How a batch row judged by tmux as it is (an unzooming or settings call) comes after the rows
 * before it: asked unread after a row that waits (see unzoom.ts), and asked about a target that
 * is not there yet after a row that may make it.
 */
function asItIs(state: ReadState): Pick<GuardedCall, "after" | "madeBefore"> {
  const waited = state.changes.filter((op) => op.waits);
  return {
    ...waited.length ? { after: waited } : {},
    ...state.changes.length ? { madeBefore: [...state.changes] } : {},
  };
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
