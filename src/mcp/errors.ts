/**
 * Failures as a model should see them: one sentence saying what is wrong and a hint naming
 * the next call to make. Never a stack trace.
 *
 * @module
 */

import { RETRY_WILL_NOT_HELP } from "../tmux/ssh_unreachable.ts";
import { SessionRefused } from "../tmux/ssh_sessions.ts";
import { OWED_NOTICE_REFUSAL } from "../tmux/owed_notices.ts";
import { noServerCause, NulArgument, TmuxError } from "../tmux/tmux_error.ts";
import { tmuxSocketPath } from "../tmux/which_server.ts";
import { AliasShadow } from "../tmux/command_aliases.ts";
import { byteLength, codePointEnd, jsonStringBytes, startUnits } from "./bounds.ts";
import { escapeSeparatorsAndBidi } from "./render.ts";

/** A refusal or failure a tool reports to its caller as an `isError` result. */
export class ToolFailure extends Error {
  /** What to do next, e.g. "list_panes lists them all." */
  readonly hint: string;
  /**
   * Whether the failure is of a call that typed a command, or may have (run_command once its
   * typing step was sent): what the command does happens whatever the call says, so a task
   * cancelled meanwhile keeps this failure as its status (task_store.ts).
   */
  typed = false;

  /** A failure with its reason and a hint. */
  constructor(message: string, hint = "") {
    super(message);
    this.name = "ToolFailure";
    this.hint = hint;
  }
}

/** A server's address as a failure names it (a call's, or the configured one). */
type Socket = { socketName?: string; socketPath?: string; host?: string };

/**
 * The `TMUX` the configured address was started with (`callerEnv.tmux`), noted by the context
 * that uses it ({@link noteTmuxEnv}): without `-L` or `-S`, tmux reaches the server `TMUX`
 * names, and a failure given only the address (registry.ts, prompts.ts...) must still name
 * that server.
 */
const tmuxEnvs = new WeakMap<object, string | undefined>();

/**
 * Notes the `TMUX` the tmux children of `address` inherit, for {@link describeSocket} and
 * {@link failureText} given that same address object.
 */
export function noteTmuxEnv(address: Socket, tmuxEnv: string | undefined): void {
  if (tmuxEnvs.get(address) !== tmuxEnv) tmuxEnvs.set(address, tmuxEnv);
}

/**
 * Describes a server address for messages: the server tmux reaches with it. Without `-L` or
 * `-S` that is the one `tmuxEnv` (`TMUX`) names when set, by its socket path: "the default
 * socket" there sent a reader to `socket_name` "default", another server (which_server.ts).
 * `tmuxEnv` defaults to the one noted for `socket` ({@link noteTmuxEnv}).
 */
export function describeSocket(
  socket: Socket,
  tmuxEnv: string | undefined = tmuxEnvs.get(socket),
): string {
  const on = socket.host !== undefined ? ` on host ${JSON.stringify(socket.host)}` : "";
  if (socket.socketPath) return `socket path ${socket.socketPath}${on}`;
  if (socket.socketName) return `socket "${socket.socketName}"${on}`;
  const fromTmux = socket.host === undefined ? tmuxSocketPath(tmuxEnv) : null;
  if (fromTmux !== null) return `socket path ${fromTmux} (the one TMUX names)`;
  return `the default socket${on}`;
}

/**
 * The socket path a person gave this server, and where they gave it: `--socket-path` or
 * `TMUX_MCP_SOCKET_PATH`, or, with neither `-L` nor `-S`, the one `TMUX` names. Null for a
 * socket name (and tmux's default), whose socket is in tmux's own folder: a socket left there
 * by a server that ended is tmux's to replace.
 */
export function configuredPath(
  socket: Socket,
  tmuxEnv: string | undefined = tmuxEnvs.get(socket),
): { path: string; by: "flag" | "TMUX" } | null {
  if (socket.socketPath) return { path: socket.socketPath, by: "flag" };
  if (socket.socketName || socket.host !== undefined) return null;
  const fromTmux = tmuxSocketPath(tmuxEnv);
  return fromTmux === null ? null : { path: fromTmux, by: "TMUX" };
}

/**
 * The configured socket paths (with their host) where a server answered create_session in this
 * process ({@link noteServerMet}). tmux 3.3a leaves its socket behind whenever its server ends
 * (kill-server, its last session closed), so what refuses connections there afterwards is that
 * socket, not a person's file: tmux may replace it ({@link metServerAt}).
 */
const serversMet = new Set<string>();

/** The key of {@link serversMet} for a configured path. */
function metKey(socket: Socket, path: string): string {
  return `${socket.host ?? ""}\n${path}`;
}

/** Notes that a server answered at `socket`'s configured path ({@link configuredPath}), if any. */
export function noteServerMet(socket: Socket, tmuxEnv?: string): void {
  const at = configuredPath(socket, tmuxEnv ?? tmuxEnvs.get(socket));
  if (at !== null) serversMet.add(metKey(socket, at.path));
}

/**
 * Whether a server answered at `at` ({@link configuredPath} of `socket`) earlier in this
 * process ({@link noteServerMet}): what refuses connections there now is its socket.
 */
export function metServerAt(socket: Socket, at: { path: string }): boolean {
  return serversMet.has(metKey(socket, at.path));
}

/** `path` as one word of a POSIX shell's command line. */
function shellWord(path: string): string {
  return `'${path.replaceAll("'", "'\\''")}'`;
}

/**
 * The refusal for a configured socket path ({@link configuredPath}) where something is but no
 * server answers (tmux's connect was refused, {@link noServerCause}): a socket a server left
 * when it ended, or no socket at all. tmux deletes whatever the path names to start a server
 * there, and this server cannot look at the path to tell a stale socket from a person's file
 * (it may run tmux and ssh, nothing else): so nothing starts a server there, and the hint
 * says how to remove the path only if it is a socket, or to fix the configuration.
 */
export function occupiedSocket(
  socket: Socket,
  at: { path: string; by: "flag" | "TMUX" },
): ToolFailure {
  const word = shellWord(at.path);
  const fix = at.by === "flag"
    ? "if it is not, the configured path is wrong: fix --socket-path (or TMUX_MCP_SOCKET_PATH) " +
      "where the MCP client starts this server, rather than deleting what is there."
    : "if it is not, TMUX (the environment this server was started in) names no tmux server: " +
      "start this server with --socket or --socket-path, rather than deleting what is there.";
  return new ToolFailure(
    `No tmux server answers on ${describeSocket(socket)}, but something is there: a socket a ` +
      "server left when it ended (tmux leaves it behind), or not a socket at all (a file, a FIFO, " +
      "a directory). create_session does not start a server there: tmux would delete it first.",
    `If it is a socket, remove it (test -S ${word} && rm ${word}) and call create_session ` +
      `again; ${fix}`,
  );
}

/**
 * Turns anything thrown inside a tool into the text of an `isError` result (or of a batch
 * row's error), control characters shown and its length bounded (see {@link shownFailure}).
 */
export function failureText(
  error: unknown,
  socket: Socket,
  during?: DuringCall,
): string {
  if (during?.answered && (error instanceof NoServer || isNoServer(error))) {
    const which = during.answeredPid === null ? "it" : `pid ${during.answeredPid}`;
    return shownFailure(
      `The tmux server on ${describeSocket(socket)} went away during the call (${which} ` +
        `answered earlier in it: killed, crashed, its last pane exited, or a hook's command ` +
        `ended it)${
          during.changes ? "; what the call had done in tmux, if anything, went with it" : ""
        }.`,
      SERVER_GONE_HINT,
    );
  }
  return error instanceof ToolFailure
    ? shownFailure(error.message, error.hint)
    : shownFailure(describeFailure(error, socket));
}

/** A call's refusal because no server runs on its socket (see {@link failureText}). */
export class NoServer extends ToolFailure {}

/** Whether tmux said no server listens on the socket (a {@link TmuxError} of kind no-server). */
export function isNoServer(error: unknown): boolean {
  return error instanceof TmuxError && error.kind === "no-server";
}

/** What to do once the server a call reached is gone. */
export const SERVER_GONE_HINT =
  "create_session starts a new one; list_servers shows the servers that are running.";

/** What to do where no server runs. */
export const NO_SERVER_HINT =
  "create_session starts one; list_servers shows the servers that are running.";

/**
 * What to do where no server answers on `socket`, as a read that kept none of tmux's words can
 * say it: at a configured path where none answered in this process ({@link configuredPath},
 * {@link metServerAt}), create_session starts one only where nothing is, and refuses where
 * something is ({@link occupiedSocket}): said so, with the removal that deletes only a socket,
 * rather than a promise create_session would break.
 */
export function noServerHint(socket: Socket): string {
  const at = configuredPath(socket);
  if (at === null || metServerAt(socket, at)) return NO_SERVER_HINT;
  return "create_session starts one where nothing is at that path; where something is (a " +
    "socket a server left when it ended, or not a socket) it refuses rather than let tmux " +
    `delete it: \`test -S ${shellWord(at.path)} && rm ${shellWord(at.path)}\` removes a ` +
    "leftover socket. list_servers shows the servers that are running.";
}

/**
 * What a call had seen of its server before it failed: whether one answered it, its pid when
 * a snapshot read it (null otherwise), and whether the call may change tmux. A server that
 * answered and then was gone went away during the call, which a plain "no server is running"
 * would hide: the call may have done what it was asked before it went.
 */
export interface DuringCall {
  readonly answered: boolean;
  readonly answeredPid: number | null;
  readonly changes: boolean;
}

function describeFailure(error: unknown, socket: Socket): string {
  if (error instanceof TmuxError) {
    switch (error.kind) {
      case "no-server": {
        const at = configuredPath(socket);
        if (noServerCause(error) !== "refused") {
          return `No tmux server is running on ${describeSocket(socket)}. ${NO_SERVER_HINT}`;
        }
        // Something at a path the person gave, which create_session will not delete.
        if (at !== null && !metServerAt(socket, at)) {
          const occupied = occupiedSocket(socket, at);
          return `${occupied.message} ${occupied.hint}`;
        }
        return `No tmux server is running on ${describeSocket(socket)} (the socket of one ` +
          `that ended is still there; tmux replaces it). ${NO_SERVER_HINT}`;
      }
      case "no-target":
        return `tmux could not find the target: ${error.message}. ` +
          `list_panes, list_windows and list_sessions list what exists.`;
      case "not-installed":
        return `${error.message} Install tmux, or put it on the PATH the MCP client gives this server.`;
      case "timeout":
        return `${error.message} The tmux server may be busy or stuck; try again.`;
      case "cancelled":
        return "The call was cancelled before tmux finished.";
      case "failed":
        // A tmux process sends its whole command line in one message of at most 16 KB and
        // refuses a longer one before anything runs. One past that goes on its stdin instead
        // (command_file.ts): this is a tmux that takes less, or a step whose stdin was taken.
        // Each check tmux makes in the act's own step quotes the act once more.
        if (/^command too long/.test(error.message)) {
          return "tmux refused: command too long; nothing was done. A tmux process takes " +
            "about 16 KB of arguments, counted after quoting: each check tmux makes in the " +
            "same step (that the server is the one read, that nobody watches the pane) " +
            "quotes the command once more, a single quote growing by 3 bytes and a newline " +
            "by 5 each time. Send less at once, or fewer quotes and lines (paste_text takes " +
            "long text whole).";
        }
        if (/^error connecting to .*\(File name too long\)$/.test(error.message)) {
          // A Unix socket's path has room for about 100 bytes (104 on macOS, 108 on Linux).
          return `tmux could not reach ${describeSocket(socket)}: its socket path is longer ` +
            "than the system allows for a socket (about 100 bytes with its folder). Use a " +
            "shorter socket_name, or a shorter path (for the server this MCP server was " +
            "started for: its --socket or --socket-path, set where the MCP client starts it).";
        }
        {
          // A path tmux cannot connect to nor start a server at: a directory, a folder that
          // is a file, one this user may not enter. Left to tmux's words it named no fix.
          const refused = /^error connecting to .* \(([^()]*)\)$/.exec(error.message);
          if (refused) {
            const at = configuredPath(socket);
            return `tmux could not reach ${describeSocket(socket)} (${refused[1]}); nothing was ` +
              "done. " + (at === null
                ? "tmux's socket folder (in TMUX_TMPDIR, else /tmp) may not be this user's."
                : `The path must name a tmux server's socket, or nothing yet in a folder this ` +
                  `user may write: fix ${
                    at.by === "flag" ? "--socket-path (or TMUX_MCP_SOCKET_PATH)" : "TMUX"
                  } where the MCP client starts this server.`);
          }
        }
        if (/^access not allowed/.test(error.message)) {
          // tmux 3.3+ serves only its owner (and root) unless `server-access` allows more.
          return `The tmux server on ${describeSocket(socket)} does not allow this user ` +
            "(its server-access setting: by default only the server's owner and root may use " +
            "it); nothing was done. Its owner can allow this user (tmux server-access -a " +
            "USER), or run tmux-mcp as the server's owner.";
        }
        // Ours, not tmux's: said as it is.
        if (error.message.startsWith(OWED_NOTICE_REFUSAL)) return error.message;
        if (error instanceof AliasShadow) return error.message;
        if (error instanceof NulArgument) return error.message;
        return `tmux refused: ${error.message}`;
      case "unreachable": {
        // ssh's own reason (or the wait's) may end without a full stop: one is given here.
        const said = /[.!?]$/.test(error.message) ? error.message : `${error.message}.`;
        // The host answers; its sshd refused one more session on the connection, which stays.
        if (error instanceof SessionRefused) {
          return `${said} Other hosts and this machine are unaffected.`;
        }
        // A refusal connecting again cannot change (a host key) says what to do instead.
        if (error.message.includes(RETRY_WILL_NOT_HELP)) {
          return `${said} Other hosts and this machine are unaffected.`;
        }
        return `${said} Other hosts and this machine are unaffected; the next call ` +
          "to this host connects again (list_servers shows which hosts answer).";
      }
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return `Internal error: ${message.split("\n")[0]}`;
}

/**
 * Control characters (an escape sequence in a name tmux echoes back, a NUL in a field name;
 * C1 ones too, such as U+009B, which some terminals take as ESC [, and U+0085, a line break to
 * some readers) shown as `\xNN`, so an error text can never drive the terminal it is printed
 * on; and, as summaries and values show them, U+2028, U+2029 and the bidirectional controls
 * as `\uXXXX`, so a session name, a title or a path it names can neither break its line nor
 * make it read in another order. Tabs and newlines stay.
 */
export function visible(text: string): string {
  return escapeSeparatorsAndBidi(text.replace(
    // deno-lint-ignore no-control-regex
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`,
  ));
}

/**
 * Most bytes an error text takes as a JSON string on the wire (escapes counted), so as many
 * characters at most. An error says why and what to call next in a sentence or two; what it
 * echoes (tmux quotes a refused value whole, a refusal names sessions) must not make it long:
 * this keeps it far within the 50 000 characters a success's text may take (see bounds.ts), and
 * under the 8 000 characters the robustness suite allows an error.
 */
export const MAX_FAILURE_BYTES = 6_000;

/** Room for the note on what an error lost: `… (N bytes cut)`. */
const CUT_NOTE_BYTES = 32;

/**
 * An error text as it is sent: {@link visible}, and within `maxBytes` as a JSON string. A
 * longer one keeps the start of `message`, cut between characters of the text as given (never
 * inside an escape `visible` writes, nor a surrogate pair), says how many bytes of it went, then
 * keeps `hint` whole: the call to make next. A hint that would take more than half the room is
 * cut with the message. Applied again, it changes nothing.
 */
export function shownFailure(
  message: string,
  hint = "",
  maxBytes: number = MAX_FAILURE_BYTES,
): string {
  const whole = visible(hint ? `${message} ${hint}` : message);
  if (jsonStringBytes(whole) <= maxBytes) return whole;
  const after = hint ? ` ${visible(hint)}` : "";
  if (jsonStringBytes(after) > maxBytes / 2) {
    return shownFailure(`${message} ${hint}`, "", maxBytes);
  }
  const room = maxBytes - jsonStringBytes(after) - CUT_NOTE_BYTES;
  // `visible` writes each character on its own, so the start of the text shows as the start of
  // what it shows; a character takes a byte or more, so no longer start fits.
  let lo = 0;
  let hi = Math.min(message.length, room);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (jsonStringBytes(visible(message.slice(0, codePointEnd(message, mid)))) <= room) lo = mid;
    else hi = mid - 1;
  }
  const kept = visible(message.slice(0, escapeEnd(message, codePointEnd(message, lo))));
  return `${kept}… (${byteLength(visible(message)) - byteLength(kept)} bytes cut)${after}`;
}

/**
 * The first `keep` UTF-16 units of an error text as shown (`whole`, from {@link failureText}),
 * never half a character or half an escape, saying how many bytes went when any did: a batch
 * row's error cut to share the reply's bound.
 */
export function errorStart(whole: string, keep: number): string {
  const kept = whole.slice(0, escapeEnd(whole, startUnits(whole, keep).length));
  const omitted = byteLength(whole) - byteLength(kept);
  return omitted ? `${kept}… (${omitted} bytes cut)` : kept;
}

/**
 * `end`, moved back before an escape a message already holds that a cut there would split: a
 * JSON string's `\uXXXX` or `\\` (names are written with JSON.stringify), or a `\xNN` that
 * {@link visible} wrote, so what is kept still reads as what it was.
 */
function escapeEnd(text: string, end: number): number {
  const open = /\\u[0-9a-fA-F]{0,3}$|\\x[0-9a-fA-F]?$|\\$/.exec(
    text.slice(Math.max(0, end - 6), end),
  );
  if (open === null) return end;
  const at = end - open[0].length;
  // The backslash is an escape's only when an even number of backslashes come before it.
  let before = 0;
  while (at - before - 1 >= 0 && text[at - before - 1] === "\\") before++;
  return before % 2 === 0 ? at : end;
}

/**
 * What a cancelled call's failure says when the work it started goes on without it (a command
 * typed into a pane): a cancelled task keeps that failure as its status message (task_store.ts).
 */
export const KEEPS_RUNNING = "keeps running";

/** Longest piece of a client's string (a name, a URI, an id) a message echoes, in characters. */
export const MAX_ECHO_CHARS = 200;

/**
 * A string the client sent, as a message echoes it: its first `max` characters and `…` when
 * longer (never half a surrogate pair). A refusal names what it refuses, but a 32 MiB name
 * must not make a 32 MiB answer.
 */
export function clip(text: string, max: number = MAX_ECHO_CHARS): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * Names (buffers, ...) as a hint lists them: at most `max`, each cut to
 * {@link LISTED_NAME_CHARS} characters and written as a JSON string, with a count of the rest.
 * A person's names can be long: listed whole, they pushed a refusal's hint past its bound.
 */
export function nameList(names: readonly string[], max = 6): string {
  return sample(names.map((name) => JSON.stringify(clip(name, LISTED_NAME_CHARS))), max);
}

/** The first few items of a list for a hint, with a count of the rest. */
export function sample(items: readonly string[], max = 12): string {
  if (items.length === 0) return "none";
  const head = items.slice(0, max).join(", ");
  return items.length > max ? `${head} and ${items.length - max} more` : head;
}

/** Longest session name a message lists, in characters: enough to tell one from another. */
const LISTED_NAME_CHARS = 64;

/**
 * A session as a message names it among others: `$1 "name"`, its name cut when long. A
 * session's name is anyone's choice, of any length; a list of them must not make a refusal long.
 */
export function sessionLabel(id: string, name: string): string {
  return `${id} ${JSON.stringify(clip(name, LISTED_NAME_CHARS))}`;
}

/**
 * Sessions (a window's placements, say) as a message lists them: the first five, each name cut,
 * and how many more. A window may be linked into any number of sessions.
 */
export function sessionList(
  sessions: readonly { readonly sessionId: string; readonly sessionName: string }[],
): string {
  return sample(sessions.map((s) => sessionLabel(s.sessionId, s.sessionName)), 5);
}
