/**
 * `config`: the ready-to-paste wiring. A `hooks` block for Claude Code's settings.json that
 * calls the hook commands on the right events, and the tmux lines that show the marks in the
 * status line and clear them when the person looks at the pane.
 *
 * tmux's `pane-focus-in` hook carries no hook JSON and no `TMUX_PANE`, so it is wired to plain
 * tmux commands that unset the options on the window of the pane that got focus (a hook's
 * commands run with that pane as their target). tmux only fires it with `focus-events` on, and
 * fires it for control-mode clients too; the marks are cleared only while a person's terminal
 * shows the window, so an MCP server attaching to run a command never clears a mark nobody has
 * seen. A pane such a client focused gets no second focus-in when a person arrives: attaching
 * and switching session clear the marks too ({@link CLEARING_HOOKS}).
 *
 * @module
 */

import type { ServerAddress } from "../tmux/server_address.ts";
import { AGENTS_CHANNEL, MESSAGE_OPTION, PANE_OPTION, STATE_OPTION } from "./marks.ts";
import { socketFlagArgs, socketLabel } from "../tmux/socket_choice.ts";

/** The name the MCP server is usually registered under (`claude mcp add tmux ...`). */
export const DEFAULT_SERVER_NAME = "tmux";
/** How settings.json runs the hook: the installed executable on PATH. */
export const DEFAULT_COMMAND = "tmux-mcp";

/**
 * Where the `pane-focus-in` command sits in tmux's hook array: a fixed index, so sourcing the
 * config twice replaces it instead of adding a copy, and the person's own hooks (which a plain
 * `set-hook` puts at index 0) stay.
 */
export const FOCUS_HOOK_INDEX = 42;

/**
 * The tmux hooks that clear a window's marks: a pane of it getting focus, and a person arriving
 * at the session that shows it (their client names the window).
 */
export const CLEARING_HOOKS = ["pane-focus-in", "client-attached", "client-session-changed"];

/**
 * True in a hook when a person's client shows the hook's window: one with a terminal, whose
 * name is its tty's path (a control-mode client started by a program has none and is named
 * `client-PID`). tmux 3.3 formats cannot ask which client fired a hook (`client_*` is its best
 * guess, often the newest control client), nor loop over clients.
 */
export const PERSON_LOOKS = "#{m:*/*,#{window_active_clients_list}}";

/** tmux 3.3's default `window-status-format` (and `-current-format`). */
export const TMUX_DEFAULT_WINDOW_STATUS = "#I:#W#{?window_flags,#{window_flags}, }";

/**
 * The marks per window, from fixed text only: the state is compared, never printed, so
 * whatever lands in the option shows nothing but these three words.
 */
export const STATUS_MARKS = [
  `#{?#{==:#{${STATE_OPTION}},needs-input},#[reverse] needs you #[noreverse],}`,
  `#{?#{==:#{${STATE_OPTION}},working}, working,}`,
  `#{?#{==:#{${STATE_OPTION}},done}, done,}`,
].join("");

/** A server name that can stand inside the matcher regex without escaping. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

/** Which hook command each event runs; PreToolUse also runs `guard` for the server's tools. */
const EVENT_COMMANDS: readonly (readonly [string, string])[] = [
  ["Notification", "attention"],
  ["PermissionRequest", "attention"],
  ["UserPromptSubmit", "working"],
  ["PreToolUse", "working"],
  // After a tool the person approved (PermissionRequest marked the window), the agent works
  // on: without these, "needs you" would stay up while it does.
  ["PostToolUse", "working"],
  ["PostToolUseFailure", "working"],
  // Not SubagentStop: a subagent finishing does not end the agent's turn.
  ["Stop", "done"],
];

/** One settings.json hook matcher entry. */
interface MatcherEntry {
  matcher?: string;
  hooks: { type: "command"; command: string }[];
}

/**
 * A word for a POSIX shell: as it is when it holds nothing the shell reads specially, else in
 * single quotes. settings.json commands run through a shell, and a socket name may hold spaces,
 * quotes or `$`.
 */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,.\/-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The settings.json `hooks` block (an object with the single key `hooks`). `server`, the MCP
 * server's `--socket`/`--socket-path`, goes into every hook command: guard judges that server,
 * and every command checks the flag the same way.
 */
export function settingsBlock(
  serverName: string,
  command: string,
  server: ServerAddress | null = null,
): { hooks: Record<string, MatcherEntry[]> } {
  const hooks: Record<string, MatcherEntry[]> = {};
  const flags = socketFlagArgs(server).map((w) => ` ${shellWord(w)}`).join("");
  const run = (sub: string) => [
    { type: "command" as const, command: `${command} hook ${sub}${flags}` },
  ];
  for (const [event, sub] of EVENT_COMMANDS) {
    (hooks[event] ??= []).push({ hooks: run(sub) });
  }
  hooks.PreToolUse.push({ matcher: `mcp__${serverName}__.*`, hooks: run("guard") });
  return { hooks };
}

/** The tmux lines, ready for `~/.tmux.conf` (each a complete tmux command). */
export function tmuxLines(): string[] {
  const format = `${TMUX_DEFAULT_WINDOW_STATUS}${STATUS_MARKS}`;
  const unset = `set-option -wu ${STATE_OPTION} ; set-option -wu ${MESSAGE_OPTION}` +
    ` ; set-option -wu ${PANE_OPTION} ; wait-for -S ${AGENTS_CHANNEL}`;
  return [
    "set-option -g focus-events on",
    `set-option -g window-status-format '${format}'`,
    `set-option -g window-status-current-format '${format}'`,
    // A control-mode client gives focus too (tmux-mcp's own, attaching to run a command), so
    // only a person's look clears the marks; and a pane that client focused gets no second
    // focus-in when a person arrives: arriving (attaching, switching session) clears them too.
    ...CLEARING_HOOKS.map((hook) =>
      `set-hook -g '${hook}[${FOCUS_HOOK_INDEX}]' "if-shell -F '${PERSON_LOOKS}' '${unset}'"`
    ),
  ];
}

/** The block as JSON with one line per matcher entry: short enough to read and paste. */
function settingsJson(block: { hooks: Record<string, MatcherEntry[]> }): string {
  const events = Object.entries(block.hooks).map(([event, entries]) =>
    `    ${JSON.stringify(event)}: [\n${
      entries.map((e) => `      ${JSON.stringify(e)}`).join(",\n")
    }\n    ]`
  );
  return `{\n  "hooks": {\n${events.join(",\n")}\n  }\n}`;
}

/** Which part of the configuration to print. */
export type ConfigPart = "all" | "settings" | "tmux";

/** The text `config` prints. `settings` is pure JSON; `tmux` is a valid tmux config file. */
export function configText(
  serverName: string,
  command: string,
  part: ConfigPart,
  server: ServerAddress | null = null,
): string {
  const json = settingsJson(settingsBlock(serverName, command, server));
  const tmux = [
    "# tmux-mcp hook marks: a window's agent state in the status line, cleared on focus.",
    "# focus-events lets tmux see which pane a person looks at (pane-focus-in needs it).",
    ...tmuxLines(),
  ].join("\n");
  if (part === "settings") return `${json}\n`;
  if (part === "tmux") return `${tmux}\n`;
  return [
    `# 1. Merge into .claude/settings.json (or ~/.claude/settings.json). The MCP server is`,
    `#    assumed registered as "${serverName}"; change it with --server-name.`,
    ...(server
      ? [
        `#    guard judges calls on ${oneLineLabel(server)}: start the MCP server with the same`,
        `#    ${
          socketFlagArgs(server)[0]
        } (a call's own socket_name still wins, there and in guard).`,
      ]
      : []),
    json,
    "",
    "# 2. Add to ~/.tmux.conf, then run: tmux source-file ~/.tmux.conf",
    "#    (an own window-status-format? append the #{?...} part below to it instead).",
    tmux,
    "",
  ].join("\n");
}

/** A server's label on one comment line: control characters in a path would end the line. */
function oneLineLabel(server: ServerAddress): string {
  // deno-lint-ignore no-control-regex
  return socketLabel(server).replace(/[\u0000-\u001f\u007f]/g, "?");
}
