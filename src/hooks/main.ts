/**
 * `tmux-mcp hook <command>`: the same binary as an agent hook (seed 002). Reads one hook input
 * from stdin, checks it, and acts on the agent's own pane (`TMUX_PANE` on the server `TMUX`
 * names); `guard` judges the server the MCP server uses (its `--socket`/`--socket-path` flags
 * and variables, which every hook command takes). Imports src/tmux/ only: a hook runs on every prompt and tool call, so it must never
 * load the MCP SDK or the server.
 *
 * Exit codes follow the hook protocol: 0 done (stdout holds one JSON object or nothing), 2 a
 * blocking error (only `guard`, which fails closed), 1 a non-blocking error (one line on
 * stderr). A Stop hook that exited 2 would keep the agent from stopping, so no other command
 * ever does.
 *
 * @module
 */

import { notUnicode, notUnicodeText, warn } from "../diagnostics.ts";
import { meantHint } from "../near_miss.ts";
import { TmuxRunner } from "../tmux/run.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { agentPane, AgentPaneError, serverTmuxPicks } from "./agent_pane.ts";
import {
  type ConfigPart,
  configText,
  DEFAULT_COMMAND,
  DEFAULT_SERVER_NAME,
  SERVER_NAME_PATTERN,
} from "./config.ts";
import { guard } from "./guard.ts";
import { guardedCalls } from "./guarded_calls.ts";
import { HookInputError, JsonEnd, MAX_INPUT_BYTES, parseHookInput } from "./input.ts";
import { clearMarks, markAttention, markDone, markWorking } from "./marks.ts";
import { resolveSocket, SocketChoiceError, type SocketFlags } from "../tmux/socket_choice.ts";
import type { ServerAddress } from "../tmux/server_address.ts";

/** What a hook reads and writes; tests pass their own to run without spawning. */
export interface HookIo {
  /** All of stdin, up to `limit + 1` bytes (more means too large); null when it is a terminal. */
  readonly readStdin: (limit: number) => Promise<Uint8Array | null>;
  /** An environment variable, or undefined (also when not permitted to read it). */
  readonly env: (name: string) => string | undefined;
  /** Writes text to stdout, whole. */
  readonly writeStdout: (text: string) => Promise<void>;
  /** Writes one line to stderr. */
  readonly writeStderr: (line: string) => void;
  /** Starts tmux. */
  readonly runner: TmuxRunner;
  /** How long stdin may take to bring a whole hook input ({@link STDIN_DEADLINE_MS}). */
  readonly stdinDeadlineMs: number;
}

/**
 * How long a hook waits for its input. An agent writes it at once; one that keeps stdin open
 * without a whole object on it would hold the hook until the agent's own hook timeout, which
 * agents take for a hook that failed without an opinion, and the call would go ahead unjudged:
 * the guard then answers as for any input it cannot read (exit 2, the call blocked).
 */
export const STDIN_DEADLINE_MS = 10_000;

/**
 * Permission modes in which an agent shows the person a prompt for an "ask": the guard asks
 * there (and where the input names no mode: agents that do not send one). In any other it
 * denies, saying why: `dontAsk` denies what is not allowed beforehand, in `auto` an ask has
 * been seen to let the call through unasked (anthropics/claude-code#89561), in
 * `bypassPermissions` so had it on older versions (anthropics/claude-code#77212), and a mode
 * this list does not know may be any of these.
 */
const PROMPTED_MODES: ReadonlySet<string> = new Set(["default", "acceptEdits", "plan"]);

/** The variables a hook reads: where the agent is, and the MCP server's server. */
const HOOK_VARIABLES = ["TMUX", "TMUX_PANE", "TMUX_MCP_SOCKET", "TMUX_MCP_SOCKET_PATH"];

/** The hook commands. */
export const HOOK_COMMANDS = ["attention", "working", "done", "clear", "guard", "config"] as const;
type HookCommand = typeof HOOK_COMMANDS[number];

/** Usage of `tmux-mcp hook`, printed under every usage error. */
export const HOOK_USAGE =
  "usage: tmux-mcp hook attention|working|done|clear|guard [--deny] [SERVER]\n" +
  "       tmux-mcp hook config [--server-name NAME] [--command CMD] [--settings | --tmux] [SERVER]\n" +
  "       SERVER: --socket NAME | --socket-path PATH, as given to the MCP server\n";

/** `tmux-mcp hook --help`. */
export function hookHelpText(): string {
  return `tmux-mcp hook — mark the agent's tmux window and guard tmux tool calls, as agent hooks.

${HOOK_USAGE}
Each command but config reads one hook input (JSON, Claude Agent SDK / Claude Code hook
types) from stdin and acts on the agent's own pane: TMUX_PANE on the server named by TMUX.
Outside tmux (no TMUX_PANE) they do nothing and exit 0, except guard (see below).

Server (every command takes it, with the MCP server's rules; a flag wins over the variables):
  --socket NAME        env TMUX_MCP_SOCKET       The tmux server the MCP server was started
  --socket-path PATH   env TMUX_MCP_SOCKET_PATH  for: guard judges calls on it. The marks
                                                 always go to the agent's own pane.

Commands:
  attention   For Notification, PermissionRequest: the agent needs the person. Sets the
              window options @agent-state=needs-input, @agent-message and @agent-pane (the
              agent's pane), and shows a short message on every attached client that is not
              already looking at the pane.
  working     For UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure:
              @agent-state=working, message cleared.
  done        For Stop (SubagentStop input is ignored: the agent's turn goes on):
              @agent-state=done; when nobody is looking at the
              pane, every attached client is told once.
  clear       Removes the marks (looking at the pane does too, with the config lines).
              working, done and clear leave a needs-input that another pane's agent in the
              window raised (@agent-pane): only that agent, or the person looking, lowers it.
  guard       For PreToolUse with matcher mcp__tmux__.*: when the call would type into, paste
              into, run in, respawn, kill, clear, pipe or open or close copy mode in a pane a
              person is watching, or the agent's own pane (typing: also through a tmux client
              running in the pane, into the pane it shows and on through any client there,
              a client of the agent's own server too), or would move a person's keys to a
              pane they had not chosen (select_pane, select_window; split_window,
              create_window, break_pane with select; their current window moved, out of their
              session or within it or a session grouped with it; the active pane they type
              into moved out of their window, or swapped for another pane in its place;
              another pane of their window zoomed, resize_pane with zoom), or would put a pane
              into a window with synchronize-panes on that a person watches or their status
              line lists (join_pane, swap_pane, split_window, or respawn_pane there: their keys would reach it), or
              would zoom a
              window a person shows (hiding its other panes), or would unzoom a window a
              person shows zoomed (a split, layout or resize there, a pane moved in or out, a
              hidden pane selected), or would clear a bell, activity or silence mark in a
              person's status line (select_window in any session holding the window), or
              would change how their tmux is set where
              they see it (set_synchronize_panes on their window, or turning it on in any
              window of their session; set_option of their session, their window or a pane of
              it, their status line's window entries or synchronize-panes, or a global or
              server option while a person is attached; not a user option @name, nor
              exit-empty),
              answers permissionDecision "ask" with the pane or window and who watches it;
              nothing otherwise. A call goes to its socket_name's server, else to SERVER, else
              to the one tmux picks, as the MCP server does: TMUX's (the agent's, or a
              popup's), else tmux's default. No server running there: no opinion (nothing to
              protect). In call_tools_batch, an operation that would do any of that after
              operations that may change tmux (any tool outside the inspect toolset, e.g.
              rename_session, join_pane) is asked about: what it reaches when it runs is not
              what tmux shows now (a row that would unzoom is judged by tmux as it is, unless
              a row before it waits, moves a pane or window, may run commands of its own, or
              what it names is not there yet; a zoom or a setting after any change is asked
              about); so is a batch of more operations than the server runs
              (nested batches counted).
      --deny    Answer "deny" instead of "ask".
  config      Prints the settings.json hooks block and the tmux lines wiring all of this.
      --server-name NAME  The name the MCP server is registered under (default ${DEFAULT_SERVER_NAME}).
      --command CMD       How settings.json runs tmux-mcp (default ${DEFAULT_COMMAND}).
      --settings          Print only the settings.json block (pure JSON).
      --tmux              Print only the tmux lines (a valid tmux config file).
      SERVER              (or its variable) Carried into every hook command it prints.

Exit status: 0 done; 1 malformed input or a tmux failure (one line on stderr, the agent goes
on); 2 only from guard, which fails closed (the tool call is blocked, the reason on stderr).
stdout holds one JSON object (guard's decision) or nothing.
`;
}

/** A usage error: one line, then the usage. */
class HookUsageError extends Error {}

interface Parsed {
  readonly command: HookCommand | "help";
  readonly deny: boolean;
  readonly serverName: string;
  readonly commandPrefix: string;
  readonly part: ConfigPart;
  /** The MCP server's server, from the flags or variables; null: tmux's (the agent's) own. */
  readonly server: ServerAddress | null;
}

/** Parses the arguments after `hook`: its own few flags, each valid for some commands only. */
/** Options that take their value as the next argument (unless written `--flag=value`). */
const VALUE_FLAGS = new Set(["--socket", "--socket-path", "--server-name", "--command"]);

/** Where the command word is: the first argument that is neither an option nor its value. */
function commandAt(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    if (!args[i].startsWith("-")) return i;
    if (VALUE_FLAGS.has(args[i])) i++;
  }
  return args.length;
}

/**
 * Whether `args` ask for guard, however malformed (the word anywhere, even where it might be an
 * option's value, or misspelt: `gaurd`): a guard that cannot run must block.
 */
export function asksForGuard(args: readonly string[]): boolean {
  return args.some((arg) =>
    arg === "guard" || (!arg.startsWith("-") && meantHint(arg, ["guard"]) !== "")
  );
}

/**
 * Whether a `--command` line has a flag after the program (tmux-mcp, or main.ts / main.js run by
 * deno; without either, its last word): there it would be the server's, before `hook`.
 */
function flagAfterProgram(line: string): boolean {
  const words = line.trim().split(/\s+/);
  const base = (word: string) => word.replace(/^['"]|['"]$/g, "").split("/").at(-1)!;
  const at = words.findLastIndex((w) => /^(?:tmux-mcp[^/]*|main\.[jt]s)$/.test(base(w)));
  return (at >= 0 ? words.slice(at + 1) : words.slice(-1)).some((w) => w.startsWith("-"));
}

function parseHookArgs(
  args: readonly string[],
  env: (name: string) => string | undefined,
): Parsed {
  if (args.includes("--help") || args.includes("-h") || args[0] === "help") {
    return {
      command: "help",
      deny: false,
      serverName: "",
      commandPrefix: "",
      part: "all",
      server: null,
    };
  }
  // The command word may follow the options (`hook --socket work guard`).
  const at = commandAt(args);
  const command = args[at];
  if (command === undefined) throw new HookUsageError("a hook command is missing.");
  if (!(HOOK_COMMANDS as readonly string[]).includes(command)) {
    throw new HookUsageError(
      `unknown hook command ${JSON.stringify(command)}${meantHint(command, HOOK_COMMANDS)}.`,
    );
  }
  let deny = false;
  let serverName = DEFAULT_SERVER_NAME;
  let commandPrefix = DEFAULT_COMMAND;
  let part: ConfigPart = "all";
  let socket: SocketFlags = {};
  const rest = [...args.slice(0, at), ...args.slice(at + 1)];
  const value = (i: number, flag: string): string => {
    const v = rest[i + 1];
    if (v === undefined) throw new HookUsageError(`${flag} needs a value.`);
    return v;
  };
  // A flag with a value given twice is refused: keeping the last would let a later --socket move
  // the guard to another server without a word.
  const seen = new Set<string>();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const eq = arg.indexOf("=");
    const [flag, inline] = arg.startsWith("--") && eq > 0
      ? [arg.slice(0, eq), arg.slice(eq + 1)]
      : [arg, undefined];
    if (seen.has(flag) && VALUE_FLAGS.has(flag)) {
      throw new HookUsageError(`${flag} is given twice; give it once.`);
    }
    seen.add(flag);
    if (command === "guard" && flag === "--deny" && inline === undefined) deny = true;
    else if (flag === "--socket") socket = { ...socket, socket: inline ?? value(i++, flag) };
    else if (flag === "--socket-path") {
      socket = { ...socket, socketPath: inline ?? value(i++, flag) };
    } else if (command === "config" && flag === "--server-name") {
      serverName = inline ?? value(i++, flag);
      if (!SERVER_NAME_PATTERN.test(serverName)) {
        throw new HookUsageError(
          `--server-name ${JSON.stringify(serverName)}: use letters, digits, "-" and "_".`,
        );
      }
    } else if (command === "config" && flag === "--command") {
      commandPrefix = inline ?? value(i++, flag);
      if (commandPrefix.trim() === "") throw new HookUsageError("--command is empty.");
      // `hook ...` follows it: a flag before `hook` is the MCP server's, and the hook refuses
      // the line (every hook would fail, and a failing guard blocks every tool call).
      if (flagAfterProgram(commandPrefix)) {
        throw new HookUsageError(
          `--command ${JSON.stringify(commandPrefix)} has a flag after the program: \`hook\` ` +
            "must follow the program itself (give --socket or --socket-path to config instead).",
        );
      }
    } else if (command === "config" && (flag === "--settings" || flag === "--tmux")) {
      if (inline !== undefined) throw new HookUsageError(`${flag} takes no value.`);
      if (part !== "all") throw new HookUsageError("--settings and --tmux: give one.");
      part = flag === "--settings" ? "settings" : "tmux";
    } else {
      const flags = [
        "socket",
        "socket-path",
        ...(command === "guard" ? ["deny"] : []),
        ...(command === "config" ? ["server-name", "command", "settings", "tmux"] : []),
      ];
      const hint = flag.startsWith("--") ? meantHint(flag.slice(2), flags, "--") : "";
      throw new HookUsageError(`${command}: unknown argument ${JSON.stringify(arg)}${hint}.`);
    }
  }
  let server: ServerAddress | null;
  try {
    server = resolveSocket(socket, env);
  } catch (error) {
    if (error instanceof SocketChoiceError) throw new HookUsageError(error.message);
    throw error;
  }
  return { command: command as HookCommand, deny, serverName, commandPrefix, part, server };
}

/**
 * Runs one hook command and returns its exit status. `io` defaults to the process's own
 * stdin, stdout, stderr and environment.
 */
export async function runHook(args: readonly string[], io: Partial<HookIo> = {}): Promise<number> {
  const full: HookIo = {
    readStdin: io.readStdin ?? readDenoStdin,
    env: io.env ?? readEnv,
    writeStdout: io.writeStdout ?? writeDenoStdout,
    writeStderr: io.writeStderr ?? warn,
    // One-shot: a control-mode connection would cost more to open than the one call it saves,
    // and would show up as a client of the server.
    runner: io.runner ?? new TmuxRunner({ maxConcurrent: 1, control: false }),
    stdinDeadlineMs: io.stdinDeadlineMs ?? STDIN_DEADLINE_MS,
  };
  const help = args.includes("--help") || args.includes("-h") || args[0] === "help";
  if (io.env === undefined && !help) {
    // Without --allow-env=TMUX* every variable reads as unset: the hook would take itself to be
    // outside tmux and pass every call. Refuse, as the MCP server refuses to start.
    const unreadable = HOOK_VARIABLES.filter((variable) =>
      Deno.permissions.querySync({ name: "env", variable }).state !== "granted"
    );
    if (unreadable.length > 0) {
      full.writeStderr(
        `tmux-mcp hook: Deno does not let it read ${unreadable.join(", ")}: start it with ` +
          "--allow-env=TMUX* (the flags of the MCP server's own command line).",
      );
      return asksForGuard(args) ? 2 : 1;
    }
    // `config` only prints text: it reads none of them.
    const garbled = args.includes("config") ? [] : notUnicode(HOOK_VARIABLES);
    if (garbled.length > 0) {
      full.writeStderr(`tmux-mcp hook: cannot run: ${notUnicodeText(garbled)}`);
      return asksForGuard(args) ? 2 : 1;
    }
  }
  let parsed: Parsed;
  try {
    parsed = parseHookArgs(args, full.env);
  } catch (error) {
    if (!(error instanceof HookUsageError)) throw error;
    full.writeStderr(`tmux-mcp hook: ${error.message}\n${HOOK_USAGE.trimEnd()}`);
    // A guard that cannot run must block; any other hook must never (exit 2 on Stop loops).
    return asksForGuard(args) ? 2 : 1;
  }
  switch (parsed.command) {
    case "help":
      await full.writeStdout(hookHelpText());
      return 0;
    case "config":
      await full.writeStdout(
        configText(parsed.serverName, parsed.commandPrefix, parsed.part, parsed.server),
      );
      return 0;
    default:
      return await runOnPane(parsed.command, parsed, full);
  }
}

async function runOnPane(
  command: Exclude<HookCommand, "config">,
  parsed: Parsed,
  io: HookIo,
): Promise<number> {
  const failure = command === "guard" ? 2 : 1;
  const fail = (why: string): number => {
    io.writeStderr(`tmux-mcp hook ${command}: ${why}`);
    return failure;
  };
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), io.stdinDeadlineMs);
    });
    const bytes = await Promise.race([io.readStdin(MAX_INPUT_BYTES), late]).finally(() =>
      clearTimeout(timer)
    );
    if (bytes === "late") {
      return fail(
        `stdin brought no whole hook input (JSON) within ${io.stdinDeadlineMs / 1000} s.`,
      );
    }
    if (bytes === null) return fail("stdin is a terminal; it expects one hook input (JSON).");
    const input = parseHookInput(bytes);
    if (command === "guard") {
      // Only PreToolUse can be answered with a decision; other events get no opinion, and so
      // do the tools the guard does not look at (they never need the agent's pane placed).
      if (input.hookEventName !== "PreToolUse") return 0;
      const toolInput = input.fields.tool_input as Record<string, unknown>;
      if (guardedCalls(input.fields.tool_name as string, toolInput).length === 0) return 0;
      const pane = agentPane(io.env);
      // The server a call without socket_name reaches: the MCP server's, as the flags or
      // variables name it, else tmux's own choice, made in the same environment as the MCP
      // server's (the agent starts both): the agent's server inside tmux, TMUX's in a popup,
      // the default one outside tmux. (Not the agent's pane's: tmux reads TMUX's socket path up
      // to its first comma, the pane's address takes it up to the last two; a path holding a
      // comma names two servers.)
      const named = parsed.server !== null;
      const address = parsed.server ?? serverTmuxPicks(io.env);
      const mode = input.fields.permission_mode;
      const unasked = typeof mode === "string" && !PROMPTED_MODES.has(mode);
      const decision = await guard(
        io.runner,
        pane,
        { address, named },
        input.fields.tool_name as string,
        toolInput,
        parsed.deny || unasked ? "deny" : "ask",
      );
      if (decision && unasked && !parsed.deny) {
        const output = decision.hookSpecificOutput;
        const reason = `${output.permissionDecisionReason} (Denied, not asked: in permission ` +
          `mode ${mode} the person is not asked; ask them, or let them run it.)`;
        await io.writeStdout(
          `${
            JSON.stringify({ hookSpecificOutput: { ...output, permissionDecisionReason: reason } })
          }\n`,
        );
        return 0;
      }
      if (decision) await io.writeStdout(`${JSON.stringify(decision)}\n`);
      return 0;
    }
    // The marks belong on the agent's own pane, wherever the MCP server's server is.
    const pane = agentPane(io.env);
    if (pane === null) return 0;
    switch (command) {
      case "attention":
        await markAttention(io.runner, pane, input);
        return 0;
      case "working":
        await markWorking(io.runner, pane);
        return 0;
      case "done":
        // A subagent finishing is not the agent's turn ending: it works on.
        if (input.hookEventName === "SubagentStop") return 0;
        await markDone(io.runner, pane);
        return 0;
      case "clear":
        await clearMarks(io.runner, pane);
        return 0;
    }
  } catch (error) {
    if (error instanceof TmuxError && error.kind === "no-target") {
      return fail(`TMUX_PANE names a pane this tmux server does not have (${error.message}).`);
    }
    if (
      error instanceof HookInputError || error instanceof AgentPaneError ||
      error instanceof TmuxError
    ) {
      return fail(error.message);
    }
    return fail(`unexpected error: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * Reads stdin to its end, or to the end of the JSON object on it (an agent may keep stdin
 * open), with plain reads: `Deno.stdin.readable` would set up the streams machinery first,
 * which costs a hook ~8 ms of its start-up for a few hundred bytes. Past `limit` it keeps only
 * `limit + 1` bytes (too large, parseHookInput says) but reads on to the end, so the writer
 * never meets a closed pipe.
 */
async function readDenoStdin(limit: number): Promise<Uint8Array | null> {
  if (Deno.stdin.isTerminal()) return null;
  const end = new JsonEnd();
  let out = new Uint8Array(16 * 1024);
  let size = 0;
  while (!end.done) {
    if (size === out.length) {
      if (size > limit) {
        // Too large: drain into the last part of the buffer, keeping the count past the limit.
        const n = await Deno.stdin.read(out.subarray(limit + 1));
        if (n === null) break;
        end.push(out.subarray(limit + 1, limit + 1 + n));
        continue;
      }
      const grown = new Uint8Array(Math.min(out.length * 2, limit + 64 * 1024));
      grown.set(out);
      out = grown;
    }
    const n = await Deno.stdin.read(out.subarray(size));
    if (n === null) break;
    end.push(out.subarray(size, size + n));
    size += n;
  }
  return out.subarray(0, size);
}

async function writeDenoStdout(text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}
