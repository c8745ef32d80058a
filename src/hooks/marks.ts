/**
 * The marks on the agent's window: the window user options `@agent-state` (needs-input,
 * working, done) and `@agent-message`, and the short `display-message` that tells people
 * looking elsewhere. The values are stored verbatim (tmux does not expand a user option's
 * value when a format shows it with `#{@agent-message}`); what reaches `display-message`,
 * which does expand formats, has every `#` doubled.
 *
 * @module
 */

import { escapeFormat, escapeTrailingSemicolon } from "../tmux/format.ts";
import { attendedPanes, findCallerPane } from "../tmux/identity.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import { type ClientRow, type PaneRow, type Snapshot, takeSnapshot } from "../tmux/snapshot.ts";
import { type AgentPane, AgentPaneError } from "./agent_pane.ts";
import type { HookInput } from "./input.ts";

/** The window option holding the agent's state. */
export const STATE_OPTION = "@agent-state";
/** The window option holding what the agent wants from the person. */
export const MESSAGE_OPTION = "@agent-message";
/**
 * The window option holding the pane whose agent raised `needs-input`: two agents may share a
 * window, and one going on working must not lower the other's call for the person.
 */
export const PANE_OPTION = "@agent-pane";

/**
 * The tmux wait channel signalled (`wait-for -S`) after every change of the marks: a changed
 * option sends control clients no notification, and tmux looks at format subscriptions only
 * once a second, so a server watching the marks also waits on this channel to see a change
 * at once. A signal only says "look again": the watcher reads the marks and compares.
 */
export const AGENTS_CHANNEL = "tmux-mcp-agents";

/** `; wait-for -S tmux-mcp-agents`: appended to a command chain that changed the marks. */
const NUDGE_ARGS = [";", "wait-for", "-S", AGENTS_CHANNEL];

/** The states a window can be marked with. */
export type AgentState = "needs-input" | "working" | "done";

/** Longest `@agent-message` stored, in characters (a notification is one sentence). */
export const MAX_MESSAGE_CHARS = 500;
/** Longest text shown by `display-message`: one status line. */
export const MAX_DISPLAY_CHARS = 200;
/** How long the message stays on a client's status line (tmux's default is 750 ms). */
export const DISPLAY_MS = 4_000;
/** Every tmux call of a hook: a hook must never hang the agent. */
export const HOOK_TMUX_TIMEOUT_MS = 5_000;

/** `set-option` argv marking the pane's window; without `message` the message is unset. */
function markArgs(paneId: string, state: AgentState, message?: string): string[] {
  return [
    "set-option",
    "-w",
    "-t",
    paneId,
    STATE_OPTION,
    state,
    ";",
    ...(message === undefined
      ? ["set-option", "-wu", "-t", paneId, MESSAGE_OPTION]
      : ["set-option", "-w", "-t", paneId, MESSAGE_OPTION, escapeTrailingSemicolon(message)]),
  ];
}

/**
 * True (a tmux format, for the window of `paneId`) when this pane's agent may change the marks:
 * unless another pane's agent asked for the person (`needs-input` raised by another pane). Only
 * that agent, or the person looking (config's tmux lines), lowers it. A `needs-input` with no
 * pane recorded (set by an older hook) is anybody's, as before.
 */
function mayLower(paneId: string): string {
  return `#{||:#{!=:#{${STATE_OPTION}},needs-input},` +
    `#{||:#{==:#{${PANE_OPTION}},${paneId}},#{==:#{${PANE_OPTION}},}}}`;
}

/**
 * `working`: one tmux call, because it runs before every tool call. It proves the server is
 * still the one `TMUX` named in that same call (see {@link onAgentServer}). Another pane's
 * `needs-input` in the window stays.
 */
export async function markWorking(runner: TmuxRunner, pane: AgentPane): Promise<void> {
  await onAgentServer(runner, pane, [
    ["set-option", "-w", "-t", pane.paneId, STATE_OPTION, "working"],
    ["set-option", "-wu", "-t", pane.paneId, MESSAGE_OPTION],
    ["set-option", "-wu", "-t", pane.paneId, PANE_OPTION],
    ["wait-for", "-S", AGENTS_CHANNEL],
  ], mayLower(pane.paneId));
}

/**
 * `clear`: the marks gone, as if the person had looked; on the agent's own server only, and
 * not another pane's `needs-input`.
 */
export async function clearMarks(runner: TmuxRunner, pane: AgentPane): Promise<void> {
  await onAgentServer(runner, pane, [
    ["set-option", "-wu", "-t", pane.paneId, STATE_OPTION],
    ["set-option", "-wu", "-t", pane.paneId, MESSAGE_OPTION],
    ["set-option", "-wu", "-t", pane.paneId, PANE_OPTION],
    ["wait-for", "-S", AGENTS_CHANNEL],
  ], mayLower(pane.paneId));
}

/** Words that read the same in tmux's command syntax as in an argument vector. */
const PLAIN_WORD = /^[%@A-Za-z0-9_-]+$/;

/**
 * Runs `commands` only when the server on `TMUX`'s socket is still the one `TMUX` named. A
 * server restarted on the same socket has another pid and gives pane ids out again from %0, so
 * `TMUX_PANE` may now name somebody else's pane. The check and the act are one tmux command
 * (`if-shell -F` on the server pid), never a read followed by a write; when the pid differs,
 * tmux prints the live pid instead, nothing changes, and the hook says why.
 *
 * `if-shell` takes its commands as tmux command text: only plain words (fixed option names and
 * values, the pane id agentPane checked) may go in, so nothing needs quoting.
 *
 * `when`, a format read in the pane's window, must hold too; when only it fails, nothing runs
 * and nothing is said.
 */
async function onAgentServer(
  runner: TmuxRunner,
  pane: AgentPane,
  commands: readonly (readonly string[])[],
  when?: string,
): Promise<void> {
  for (const word of commands.flat()) {
    if (!PLAIN_WORD.test(word)) throw new Error(`not a plain tmux word: ${JSON.stringify(word)}`);
  }
  const samePid = `#{==:#{pid},${pane.serverPid}}`;
  const out = await runner.run(pane.address, [
    "if-shell",
    "-F",
    // The pane's window, for `when`'s window options (a pane that is gone fails as no-target).
    ...(when === undefined ? [samePid] : ["-t", pane.paneId, `#{&&:${samePid},${when}}`]),
    commands.map((c) => c.join(" ")).join(" ; "),
    "display-message -p '#{pid}'",
  ], { timeoutMs: HOOK_TMUX_TIMEOUT_MS });
  const live = new TextDecoder().decode(out).trim();
  if (when !== undefined && live === String(pane.serverPid)) return;
  if (live !== "") {
    throw new AgentPaneError(
      `TMUX names another tmux server (or a server since restarted): pid ${pane.serverPid}, ` +
        `but the server on ${pane.address.socketPath} is pid ${oneLine(live, 20)}, where ` +
        `${pane.paneId} may be another pane; nothing marked.`,
    );
  }
}

/**
 * `attention`: the agent needs the person. Marks the window `needs-input` with the message,
 * and shows one line on every person's client that is not already looking at the pane.
 */
export async function markAttention(
  runner: TmuxRunner,
  pane: AgentPane,
  input: HookInput,
): Promise<void> {
  const { snapshot, row } = await locate(runner, pane);
  const message = oneLine(attentionMessage(input), MAX_MESSAGE_CHARS);
  const watchers = attendedPanes(snapshot).get(pane.paneId) ?? [];
  const text = `Agent in ${where(row)} needs you: ${message}`;
  await runner.run(pane.address, [
    ...markArgs(pane.paneId, "needs-input", message),
    ...[";", "set-option", "-w", "-t", pane.paneId, PANE_OPTION, pane.paneId],
    ...NUDGE_ARGS,
    ...displayArgs(pane.paneId, othersThan(snapshot, watchers), text),
  ], { timeoutMs: HOOK_TMUX_TIMEOUT_MS });
}

/**
 * `done`: the agent finished. Marks the window `done`; when nobody is looking at the pane,
 * every person's client is told once, so the finished window is not missed.
 */
export async function markDone(runner: TmuxRunner, pane: AgentPane): Promise<void> {
  const { snapshot, row } = await locate(runner, pane);
  const watched = (attendedPanes(snapshot).get(pane.paneId) ?? []).length > 0;
  const text = `Agent in ${where(row)} is done.`;
  // Not over another pane's needs-input (see mayLower): one tmux command reads and writes.
  const lower = [
    ["set-option", "-w", "-t", pane.paneId, STATE_OPTION, "done"],
    ["set-option", "-wu", "-t", pane.paneId, MESSAGE_OPTION],
    ["set-option", "-wu", "-t", pane.paneId, PANE_OPTION],
  ].map((c) => c.join(" ")).join(" ; ");
  await runner.run(pane.address, [
    ...["if-shell", "-F", "-t", pane.paneId, mayLower(pane.paneId), lower],
    ...NUDGE_ARGS,
    ...(watched ? [] : displayArgs(pane.paneId, othersThan(snapshot, []), text)),
  ], { timeoutMs: HOOK_TMUX_TIMEOUT_MS });
}

/** Reads the server once and proves the agent's pane is on it (same socket, same server pid). */
async function locate(
  runner: TmuxRunner,
  pane: AgentPane,
): Promise<{ snapshot: Snapshot; row: PaneRow }> {
  // The agent's pane and the clients are all it takes to know who watches it.
  const snapshot = await takeSnapshot(runner, pane.address, { timeoutMs: HOOK_TMUX_TIMEOUT_MS }, {
    sessions: false,
    windows: false,
    paneId: pane.paneId,
  });
  const caller = findCallerPane(snapshot, { tmux: pane.tmux, tmuxPane: pane.paneId });
  const row = snapshot.panes.find((p) => p.id === caller.paneId);
  if (caller.via !== "TMUX_PANE" || !row) throw new AgentPaneError(caller.reason);
  return { snapshot, row };
}

/**
 * The clients a message can be shown on (those not in control mode: a control client, a
 * person's iTerm2 too, has no status line to show it in), other than `watchers`.
 */
function othersThan(snapshot: Snapshot, watchers: readonly ClientRow[]): ClientRow[] {
  const skip = new Set(watchers.map((c) => c.name));
  return snapshot.clients.filter((c) => !c.controlMode && !skip.has(c.name));
}

/** One `display-message` per client, the text made inert (it is expanded as a format). */
function displayArgs(paneId: string, clients: readonly ClientRow[], text: string): string[] {
  const shown = escapeTrailingSemicolon(escapeFormat(oneLine(text, MAX_DISPLAY_CHARS)));
  return clients.flatMap((c) => [
    ";",
    "display-message",
    "-c",
    c.name,
    "-t",
    paneId,
    "-d",
    String(DISPLAY_MS),
    shown,
  ]);
}

/** What the agent wants, from whichever event's input arrived. */
function attentionMessage(input: HookInput): string {
  const f = input.fields;
  if (typeof f.message === "string" && f.message.trim() !== "") return f.message;
  if (typeof f.tool_name === "string") return `asks permission to use ${f.tool_name}`;
  return "waiting for your input";
}

/**
 * `main:2.0 "editor"`: where a person finds the pane. The names are anybody's (a model renames
 * windows and sessions): the window's is always quoted and the session's unless it is one plain
 * word, with JSON's escapes, so no name can close a quote of the sentence around it and go on
 * in that sentence's words.
 */
export function where(pane: PaneRow): string {
  const at = placeOf(pane);
  return at === null ? pane.id : `${at}.${pane.index} ${quoted(pane.windowName, 60)}`;
}

/** `main:1 "vim"`: where a pane's window is, written as {@link where} writes a pane's. */
export function windowWhere(pane: PaneRow): string {
  const at = placeOf(pane);
  return at === null ? pane.windowId : `${at} ${quoted(pane.windowName, 60)}`;
}

/** `main:1`, the session and index of a pane's window (its first placement), or null. */
function placeOf(pane: PaneRow): string | null {
  const at = pane.placements[0];
  if (!at) return null;
  const session = oneLine(at.sessionName, 60);
  return `${PLAIN_NAME.test(session) ? session : quoted(at.sessionName, 60)}:${at.index}`;
}

/** A session name shown bare: nothing in it can be read as quotes or punctuation. */
const PLAIN_NAME = /^[A-Za-z0-9_-]+$/;

/** C0 and C1 controls and whitespace (line and paragraph separators among it). */
// deno-lint-ignore no-control-regex
const CONTROLS_AND_SPACE = /[\u0000-\u001f\u007f-\u009f\s]+/g;

/**
 * The bidirectional controls, which make text read in another order than it is (a window named
 * `vim\u202e)gnihctaw ton` shows as `vim(not watching)`), and what shows as nothing (format
 * and default-ignorable characters: zero-width spaces and joiners, selectors, tag characters),
 * which makes one name read as another. Tool replies escape them too (src/mcp/render.ts, which
 * keeps an emoji's own joiner: here every one is escaped; a test holds the two together); the
 * line separators are whitespace here, made spaces.
 */
const BIDI =
  /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/** A character as JSON writes it: `\u202e`, each half of a pair past U+FFFF. */
function unicodeEscape(c: string): string {
  return Array.from(
    { length: c.length },
    (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`,
  ).join("");
}

/** At most `max` characters of `text`, a cut said with `…`. */
function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/**
 * Makes text one readable line of at most `max` characters: control characters (tabs,
 * newlines, escapes) become spaces, runs of spaces shrink, a bidirectional control is shown as
 * its escape (`\u202e`, counted at its six characters, never cut in two), and a cut says so
 * with `…`.
 */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(CONTROLS_AND_SPACE, " ").trim();
  if (!flat.match(BIDI)) return cut(flat, max);
  const shown = Array.from(flat, (c) => c.replace(BIDI, unicodeEscape));
  const length = shown.reduce((n, s) => n + Array.from(s).length, 0);
  if (length <= max) return shown.join("");
  let out = "";
  let used = 0;
  for (const s of shown) {
    const size = Array.from(s).length;
    if (used + size > max - 1) break;
    out += s;
    used += size;
  }
  return `${out}…`;
}

/**
 * `text` as {@link oneLine} makes it, quoted as a JSON string: a bidirectional control is
 * escaped as JSON writes it, after the quoting, so the quoted name reads back as JSON exactly.
 */
export function quoted(text: string, max: number): string {
  return JSON.stringify(cut(text.replace(CONTROLS_AND_SPACE, " ").trim(), max))
    .replace(BIDI, unicodeEscape);
}
