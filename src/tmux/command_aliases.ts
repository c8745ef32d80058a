/**
 * A person's `command-alias` entries named like a tmux command this server sends.
 *
 * tmux looks the first word of every command it parses up in the server option
 * `command-alias` before its own command table (`cmd_parse_expand_alias`, `cmd_get_alias`):
 * an entry `display-message=...` whose name is exactly that word replaces the command with
 * the entry's text, the command's own arguments put in after the entry's first word. It does
 * so for every command of every client alike: a tmux process's argv, each command of a
 * control-mode line, the commands inside `{ }`, and the command strings `if-shell` and its kin
 * parse when they run. Only the exact name matches (not a prefix, not tmux's short alias), and
 * an alias is expanded once (its own first word is tmux's command again).
 *
 * So an alias named like a command of ours makes that command mean something else: a guarded
 * step's refusal branch (`display-message`) or its check (`if-shell`), a send (`send-keys`),
 * a read. This server sends commands only by their full names, never a short alias (`ls`,
 * `send`) or a prefix, so an alias named anything else (`ls=...`, `zz=...`) changes nothing
 * for it. Before a command line goes to tmux, {@link AliasBook} looks for a full command name
 * some alias takes in a place where tmux would read a command name, and refuses the line,
 * nothing sent, naming the alias. It reads the option once per tool call (tmux announces no
 * option change to control clients), with two spellings of the read in one line, which must
 * agree: an alias on one of them shows.
 *
 * @module
 */

import { accessDenied, cancelledCall, failureOf, statusOf, TmuxError } from "./tmux_error.ts";

/** Every command of tmux 3.3a by its full name (`tmux list-commands`). */
export const TMUX_COMMAND_NAMES: ReadonlySet<string> = new Set([
  "attach-session",
  "bind-key",
  "break-pane",
  "capture-pane",
  "choose-buffer",
  "choose-client",
  "choose-tree",
  "clear-history",
  "clear-prompt-history",
  "clock-mode",
  "command-prompt",
  "confirm-before",
  "copy-mode",
  "customize-mode",
  "delete-buffer",
  "detach-client",
  "display-menu",
  "display-message",
  "display-panes",
  "display-popup",
  "find-window",
  "has-session",
  "if-shell",
  "join-pane",
  "kill-pane",
  "kill-server",
  "kill-session",
  "kill-window",
  "last-pane",
  "last-window",
  "link-window",
  "list-buffers",
  "list-clients",
  "list-commands",
  "list-keys",
  "list-panes",
  "list-sessions",
  "list-windows",
  "load-buffer",
  "lock-client",
  "lock-server",
  "lock-session",
  "move-pane",
  "move-window",
  "new-session",
  "new-window",
  "next-layout",
  "next-window",
  "paste-buffer",
  "pipe-pane",
  "previous-layout",
  "previous-window",
  "refresh-client",
  "rename-session",
  "rename-window",
  "resize-pane",
  "resize-window",
  "respawn-pane",
  "respawn-window",
  "rotate-window",
  "run-shell",
  "save-buffer",
  "select-layout",
  "select-pane",
  "select-window",
  "send-keys",
  "send-prefix",
  "server-access",
  "set-buffer",
  "set-environment",
  "set-hook",
  "set-option",
  "set-window-option",
  "show-buffer",
  "show-environment",
  "show-hooks",
  "show-messages",
  "show-options",
  "show-prompt-history",
  "show-window-options",
  "source-file",
  "split-window",
  "start-server",
  "suspend-client",
  "swap-pane",
  "swap-window",
  "switch-client",
  "unbind-key",
  "unlink-window",
  "wait-for",
]);

/**
 * The read of the aliases: the same listing under two spellings in one line. An alias on
 * `show-options` or on `show` makes the halves differ (or names itself in both).
 */
export const ALIAS_READ: readonly string[] = [
  "show-options",
  "-s",
  "command-alias",
  ";",
  "show",
  "-s",
  "command-alias",
];

/**
 * The text of an {@link ALIAS_READ} answer; null when there is nothing to read there and the
 * command is to go as it would have (no server yet: a command that starts one; one that
 * serves nobody but its owner; a socket tmux cannot reach). Throws {@link AliasShadow} when
 * tmux refused the read itself (an alias on it that does not parse, say).
 */
export function aliasListing(
  result: { code: number; stdout: Uint8Array; stderr: string },
): string | null {
  if (statusOf(result.code, result.stderr) === 0) return new TextDecoder().decode(result.stdout);
  const failure = failureOf(result);
  if (
    failure.kind !== "failed" || accessDenied(result.stderr) ||
    /^error connecting to /m.test(result.stderr)
  ) return null;
  throw AliasShadow.unsure(`tmux refused the read: ${failure.message}`);
}

/** An alias entry named like a command of ours. */
export interface Shadow {
  /** Its index in the array (`command-alias[100]`). */
  readonly index: string;
  /** The command name it takes. */
  readonly name: string;
  /** The entry as `show-options` printed it (quoted when it holds spaces), at most 80 bytes. */
  readonly entry: string;
}

/** What a read found: the shadowing entries, or why they could not be told. */
export type AliasReading = readonly Shadow[] | { readonly unsure: string };

/**
 * The entries of a {@link ALIAS_READ} answer named like a tmux command; `unsure` when the two
 * listings differ, or a line is no entry of the array (the read was not what it asked for).
 */
export function readShadows(out: string): AliasReading {
  const half = out.length / 2;
  if (!Number.isInteger(half) || out.slice(0, half) !== out.slice(half)) {
    return { unsure: "show-options and show answered differently: an alias rewrites one" };
  }
  const shadows: Shadow[] = [];
  for (const line of out.slice(0, half).split("\n")) {
    if (line === "") continue;
    const entry = /^command-alias\[(\d+)\] (.*)$/.exec(line);
    if (!entry) return { unsure: `show-options printed a line that is no alias: ${clip(line)}` };
    // A name tmux takes for a command holds only [a-z-]: a quote opens an entry with spaces.
    const name = /^["']?([a-z-]+)=/.exec(entry[2])?.[1];
    if (name !== undefined && TMUX_COMMAND_NAMES.has(name)) {
      shadows.push({ index: entry[1], name, entry: clip(entry[2]) });
    }
  }
  return shadows;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * The first of `shadows` whose name an argv puts where tmux may read a command name: at the
 * start of an argument, or after a `;`, `{`, `}`, quote or backslash in it (a command in a
 * command string: an `if-shell` branch, a `{ }` block, a branch of a branch, each level
 * quoted once more). Conservative: text typed into a pane that starts with such a name counts
 * too. `sent`: names sent with the line besides (the control protocol's own
 * `display-message`).
 */
export function shadowIn(
  args: readonly string[],
  shadows: readonly Shadow[],
  sent: readonly string[] = [],
): Shadow | null {
  for (const shadow of shadows) {
    if (sent.includes(shadow.name)) return shadow;
    // Names hold only [a-z-]: nothing to escape.
    const named = new RegExp(`(?:^|[;{}'"\\\\])\\s*${shadow.name}(?=[\\s;{}'"\\\\]|$)`);
    if (args.some((arg) => named.test(arg))) return shadow;
  }
  return null;
}

/** A command line refused before it was sent: an alias takes a command name it holds. */
export class AliasShadow extends TmuxError {
  constructor(message: string) {
    super("failed", message);
  }

  /** The refusal for `shadow`. */
  static of(shadow: Shadow): AliasShadow {
    return new AliasShadow(
      `tmux's command-alias[${shadow.index}] (${shadow.entry}) stands for ${shadow.name}, a ` +
        "command this call sends: tmux would run the alias instead, so nothing was sent. " +
        "Give the alias another name in the tmux configuration, or remove it " +
        `(tmux set -su 'command-alias[${shadow.index}]'); a short name (tmux's own, or any ` +
        "other) changes nothing for tmux-mcp.",
    );
  }

  /** The refusal when the aliases could not be read as they are. */
  static unsure(why: string): AliasShadow {
    return new AliasShadow(
      `tmux's command-alias could not be read (${why}), so nothing was sent: an alias named ` +
        "like a tmux command would make this call's commands mean something else. Check the " +
        "command-alias entries in the tmux configuration (tmux show -s command-alias).",
    );
  }
}

/**
 * What one tmux server's aliases are, as of the last read: read when a line is checked and
 * no read is current ({@link stale} makes it so, once per tool call), one read at a time.
 */
export class AliasBook {
  #reading: Promise<AliasReading> | null = null;

  /** The next {@link check} reads the aliases again. */
  stale(): void {
    this.#reading = null;
  }

  /**
   * Throws {@link AliasShadow} when an alias takes a command name of `args` (or of `sent`),
   * reading the aliases with `read` first when no read is current. `read` answers null when
   * there is no server: nothing is refused then, and the next line reads again.
   *
   * Every call that checks while a read is on its way waits for that read, so `read` must carry
   * no one call's cancellation (its bound is its own): each waits with its own `signal`, and
   * one cancelled (a cancelled TmuxError) leaves the read to the others.
   */
  async check(
    args: readonly string[],
    read: () => Promise<string | null>,
    sent: readonly string[] = [],
    signal?: AbortSignal,
  ): Promise<void> {
    if (signal?.aborted) throw cancelledCall();
    let reading = this.#reading;
    if (reading === null) {
      const forget = () => {
        if (this.#reading === reading) this.#reading = null;
      };
      reading = this.#reading = read().then(
        (out) => {
          if (out === null) forget();
          return out === null ? [] : readShadows(out);
        },
        (error) => {
          forget();
          throw error;
        },
      );
    }
    const found = await untilCancelled(reading, signal);
    if ("unsure" in found) throw AliasShadow.unsure(found.unsure);
    const shadow = shadowIn(args, found, sent);
    if (shadow !== null) throw AliasShadow.of(shadow);
  }
}

/** `work`'s outcome, or a cancelled TmuxError once `signal` aborts first (`work` goes on). */
function untilCancelled<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(cancelledCall());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelledCall());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
