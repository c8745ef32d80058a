/**
 * What the fuzz (scripts/fuzz.ts) holds each call to, beyond a well-formed reply: which
 * changes a call may make by design, and which text is no readable error.
 *
 * The person's view may change only by a call that says it may (`force` on a tool that
 * destroys, kill_server); the agent's own pane likewise (`force` lifts its guard); a `#(...)`
 * job runs only where a call asked for one. What acts later and on its own is noted, not
 * counted, since the tool did what it was asked: a hook (it may do anything on any later
 * call), and a program that ends when typed to (a hidden pane of the person's window going
 * changes their layout).
 *
 * @module
 */

import type { FuzzCall, Json } from "./fuzz_args.ts";
import { unreadable } from "./robust.ts";

/** The operations of a call_tools_batch call, as calls. */
function operations(call: FuzzCall): FuzzCall[] {
  const ops = (call.arguments.operations ?? []) as Json[];
  return ops.map((o) => ({ tool: String(o.tool), arguments: (o.arguments ?? {}) as Json }));
}

const FORCED_DESTROY = new Set(["kill_pane", "kill_window", "kill_session", "clear_pane"]);

/** Whether `call` may change what a person sees: it destroys by force. */
export function mayChangePersonView(call: FuzzCall): boolean {
  if (call.tool === "kill_server") return true;
  if (FORCED_DESTROY.has(call.tool) && call.arguments.force === true) return true;
  if (call.tool === "call_tools_batch") return operations(call).some(mayChangePersonView);
  return false;
}

/** Whether `call` may type into (or end) the agent's own pane: `force` lifts that guard. */
export function mayTouchAgentPane(call: FuzzCall): boolean {
  if (call.tool === "kill_server" || call.arguments.force === true) return true;
  if (call.tool === "call_tools_batch") return operations(call).some(mayTouchAgentPane);
  if (call.tool === "send_keys_batch") {
    return ((call.arguments.operations ?? []) as Json[]).some((o) => o.force === true);
  }
  return false;
}

/** The test that holds for a call of one of `tools`, and for a batch that holds one. */
function callOf(tools: ReadonlySet<string>): (call: FuzzCall) => boolean {
  const test = (call: FuzzCall): boolean =>
    tools.has(call.tool) || (call.tool === "call_tools_batch" && operations(call).some(test));
  return test;
}

/** Tools that put keys into a pane. */
const TYPING = new Set([
  "send_keys",
  "paste_text",
  "run_command",
  "send_keys_batch",
  "paste_buffer",
]);

/**
 * Whether `call` types into a pane: what the program there does with the keys is its own
 * doing (a shell that runs `exit`, `cat` ending at C-d).
 */
export const types = callOf(TYPING);

/** Tools that hand tmux a command line or a format to run or draw, as their arguments say. */
const CARRIES_JOBS = [
  "set_option",
  "create_session",
  "create_window",
  "split_window",
  "respawn_pane",
  "pipe_pane",
];

/**
 * Whether `call` asks for a `#(...)` job to run, now or later: a hook, a format expanded on
 * request (display_message), a command tmux expands (pipe_pane's), or a format option, a
 * command or an environment that carries one.
 */
export function runsJobs(call: FuzzCall): boolean {
  if (call.tool === "set_hook" || call.tool === "display_message") return true;
  if (call.tool === "pipe_pane" && call.arguments.command !== undefined) return true;
  if (CARRIES_JOBS.includes(call.tool) && JSON.stringify(call.arguments).includes("#(")) {
    return true;
  }
  if (call.tool === "call_tools_batch") return operations(call).some(runsJobs);
  return false;
}

/** What an error says when the server it was sent to is gone, or went away during the call. */
const SAYS_SERVER_GONE = new RegExp(
  "^(No tmux server is running|The tmux server on .* went away|The command was typed into \\S+ " +
    "\\(job \\S+\\), and then the tmux server|Job \\S+ ended with its tmux server)",
);

/**
 * Whether the error `text` of `call` says the run's own tmux server (no `socket_name`, no
 * `host`) is gone, or went away under the call: a claim the server's pid afterwards can refute.
 */
export function saysOwnServerGone(call: FuzzCall, text: string): boolean {
  return call.arguments.socket_name === undefined && call.arguments.host === undefined &&
    SAYS_SERVER_GONE.test(text);
}

/**
 * Whether a successful `call` may have ended the tmux server: kill_server does, and tmux exits
 * once the last session is gone, which killing a session, a window or a pane may bring about.
 */
export function mayEndServer(call: FuzzCall, succeeded: boolean): boolean {
  if (call.tool === "kill_server") return true;
  return succeeded &&
    ["kill_session", "kill_window", "kill_pane", "call_tools_batch"].includes(call.tool);
}

/**
 * The tools `--own-panes-only` does not fence, by design (README): they reach tmux or a shell,
 * which may act on any pane.
 */
const REACH_TMUX = new Set(["set_hook", "set_option", "set_environment", "display_message"]);

/** Whether `call` is, or holds, one of the tools that reach tmux or a shell by design. */
export const reachesTmux = callOf(REACH_TMUX);

/**
 * Whether `call` is, or holds, a kill_pane: what the person's `after-kill-pane` hook of a world
 * under their tmux.conf (fuzz_world.ts) runs after. That hook names no target, so where the
 * killed pane's window went with it tmux runs it on the window it calls current: the one the
 * person looks at (README: your hooks run on what the tools do, as on what you do).
 */
export const killsPane = callOf(new Set(["kill_pane"]));

/**
 * The tools that reshape a pane (its size, or the window it is in): not fenced by
 * `--own-panes-only` (README), and under a keeper's `history-limit 0` (fuzz_world.ts) a shrink
 * drops the rows it pushes off the top, which tmux then keeps nowhere.
 */
const RESHAPES = new Set([
  "join_pane",
  "break_pane",
  "swap_pane",
  "move_window",
  "resize_pane",
  "resize_window",
  "select_layout",
  "split_window",
]);

/** Whether `call` is, or holds, a reshaping tool ({@link RESHAPES}). */
export const reshapes = callOf(RESHAPES);

/** Whether `call` set a hook (one that may act on any later call). */
export function setsHook(call: FuzzCall): boolean {
  if (call.tool === "set_hook") return call.arguments.unset !== true;
  if (call.tool === "call_tools_batch") return operations(call).some(setsHook);
  return false;
}

/**
 * Why an error's text is no readable reason, or null when it is: the robustness corpus's
 * judgement (no stack, no `undefined`, no raw control characters, not endless), and no text
 * that admits a bug or an internal error. A text that quotes an argument holding the word
 * "undefined" may say it, and so may one that quotes, in double quotes, one of `names` holding
 * it (the sessions and windows there are, and the strings calls of this world sent): an earlier
 * call may have named one so.
 */
export function badErrorText(
  text: string,
  args: Json,
  names: readonly string[] = [],
): string | null {
  if (text.trim().length < 8) return "no reason given";
  if (/a bug in tmux-mcp/.test(text)) return "it says a bug in tmux-mcp";
  if (/Internal error/i.test(text)) return "an internal error";
  if (JSON.stringify(args).includes("undefined")) text = text.replaceAll("undefined", "");
  for (const name of names) {
    if (name.includes("undefined")) text = text.replaceAll(`"${name}"`, '""');
  }
  return unreadable(text);
}

/** Whether a successful result's text admits a bug. */
export function admitsBug(text: string): boolean {
  return /a bug in tmux-mcp|Internal error/.test(text);
}
