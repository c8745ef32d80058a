/**
 * The command line: flags, their environment equivalents, `--help` and usage errors. Pure
 * (no I/O), so every rule here is tested without starting anything.
 *
 * @module
 */

import { ArgsError, type ParsedOptions, parseOptions } from "./args.ts";
import {
  DEFAULT_TOOLSETS,
  parseToolsets,
  type Toolset,
  TOOLSET_MEANING,
  TOOLSETS,
} from "./mcp/toolsets.ts";
import { OWNER_ID } from "./mcp/owner_id.ts";
import type { ServerAddress } from "./tmux/server_address.ts";
import { resolveSocket, SocketChoiceError } from "./tmux/socket_choice.ts";

/** The server's flags (the hook's are its own: src/hooks/main.ts). */
const SERVE_OPTIONS = {
  socket: { type: "string" },
  "socket-path": { type: "string" },
  toolsets: { type: "string" },
  "read-only": { type: "boolean" },
  tools: { type: "string" },
  "deny-tools": { type: "string" },
  audit: { type: "boolean" },
  ssh: { type: "string", multiple: true },
  "ssh-config": { type: "string" },
  "own-panes-only": { type: "boolean" },
  owner: { type: "string" },
  "allow-attended-input": { type: "boolean" },
  version: { type: "boolean", short: "V" },
  help: { type: "boolean", short: "h" },
} as const;

/** What the command line asked for. */
export type CliCommand =
  | { readonly kind: "help" }
  | { readonly kind: "version" }
  | { readonly kind: "serve"; readonly options: ServeOptions }
  /** `tmux-mcp hook ...`: the arguments after `hook`, for src/hooks/main.ts. */
  | { readonly kind: "hook"; readonly args: readonly string[] };

/** Options of the MCP server proper. */
export interface ServeOptions {
  readonly socketName?: string;
  readonly socketPath?: string;
  readonly toolsets: readonly Toolset[];
  /** Let tools type into, and change the view of, panes a person is watching. */
  readonly allowAttendedInput: boolean;
  /** Only these tools exist (on top of the toolsets); absent: every tool of the toolsets. */
  readonly tools?: readonly string[];
  /** These tools do not exist. */
  readonly denyTools?: readonly string[];
  /** The flag or variable that gave the toolsets, `tools` and `denyTools` (for messages). */
  readonly selectionFrom: {
    readonly toolsets: string;
    readonly tools: string;
    readonly denyTools: string;
  };
  /** Write the audit trail to stderr too. */
  readonly audit?: boolean;
  /** SSH destinations a call may name in `host` (`--ssh`, TMUX_MCP_SSH). */
  readonly ssh?: readonly string[];
  /** An ssh configuration file for every ssh started (`--ssh-config`). */
  readonly sshConfig?: string;
  /** The owner id marked on created panes (absent: made up at start). */
  readonly owner?: string;
  /** Act only on panes this server created. */
  readonly ownPanesOnly?: boolean;
}

/** A usage error: main prints the message and the usage line, and exits 2. */
export class UsageError extends Error {
  /** A usage error with its one-line reason, which ends by naming the fix. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** What a flag's usage error says to do: an MCP client shows only "connection closed". */
export const FLAG_FIX = "tmux-mcp --help lists every flag.";

/** What a variable's usage error says to do: the value sits in the client's configuration. */
export function envFix(name: string): string {
  return `Correct or remove ${name} in the environment the MCP client gives this server ` +
    `(its "env" entry) or in the shell that starts the client.`;
}

function flagError(message: string): UsageError {
  return new UsageError(`${sentence(message)} ${FLAG_FIX}`);
}

function envError(name: string, message: string): UsageError {
  return new UsageError(`${sentence(message)} ${envFix(name)}`);
}

/** Ends `text` with a full stop unless it ends a sentence already. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** Every environment variable the server reads; the runtime must let it read them all. */
export const ENV_VARIABLES: readonly string[] = [
  "TMUX_MCP_SOCKET",
  "TMUX_MCP_SOCKET_PATH",
  "TMUX_MCP_TOOLSETS",
  "TMUX_MCP_READ_ONLY",
  "TMUX_MCP_ALLOW_ATTENDED_INPUT",
  "TMUX_MCP_TOOLS",
  "TMUX_MCP_DENY_TOOLS",
  "TMUX_MCP_AUDIT",
  "TMUX_MCP_SSH",
  "TMUX_MCP_OWNER",
  "TMUX_MCP_OWN_PANES_ONLY",
  "TMUX",
  "TMUX_PANE",
];

/**
 * The `deno` arguments that run a checkout from any directory with exactly the flags of the
 * `start` task (the flags a binary bakes in): `--config` names the checkout's deno.json, so its
 * import map, lockfile and npm packages are found wherever the client starts the process.
 */
export function fromSourceArgs(startTask: string, checkout: string): string[] {
  const words = startTask.trim().split(/\s+/);
  if (words[0] !== "deno" || words[1] !== "run" || words.at(-1) !== "main.ts") {
    throw new Error(`the start task must be "deno run ... main.ts": ${startTask}`);
  }
  const dir = checkout.endsWith("/") ? checkout.slice(0, -1) : checkout;
  return [...words.slice(1, -1), "--config", `${dir}/deno.json`, `${dir}/main.ts`];
}

/** `argv` as one line a POSIX shell (and zsh, which refuses an unmatched `*`) runs as is. */
export function shellLine(argv: readonly string[]): string {
  return argv.map((word) =>
    /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
  ).join(" ");
}

/** The synopsis printed under every usage error. */
export const USAGE =
  "usage: tmux-mcp [--socket NAME | --socket-path PATH] [--toolsets LIST | --read-only]\n" +
  "                [--tools LIST] [--deny-tools LIST] [--allow-attended-input]\n" +
  "                [--ssh DESTINATION]... [--ssh-config FILE]\n" +
  "                [--own-panes-only] [--owner ID] [--audit] [--version] [--help]\n" +
  "       tmux-mcp hook attention|working|done|clear|guard|config [...] (tmux-mcp hook --help)";

/** The full `--help` text. */
export function helpText(version: string): string {
  const toolsets = TOOLSETS.map((t) =>
    `                            ${t.padEnd(9)} ${TOOLSET_MEANING[t]}`
  ).join("\n");
  return `tmux-mcp ${version} — an MCP server that lets AI agents see and drive tmux.

${USAGE}

Speaks the Model Context Protocol over stdin/stdout; configure it as a stdio "command" in an
MCP client. Diagnostics go to stderr. The process ends when the client closes stdin.
When a client says only "connection closed", run its command line by hand with < /dev/null:
the last stderr line says what is wrong.

Options (a flag wins over its environment variable):
  --socket NAME             tmux server by socket name, as tmux -L NAME.
                            env TMUX_MCP_SOCKET. Default: tmux's own choice (the server in
                            TMUX when set, else the "default" socket).
  --socket-path PATH        tmux server by socket path, as tmux -S PATH.
                            env TMUX_MCP_SOCKET_PATH. Cannot be combined with --socket.
  --toolsets LIST           Comma-separated toolsets to offer; tools of other toolsets are
                            neither listed nor callable. env TMUX_MCP_TOOLSETS.
                            Default: ${DEFAULT_TOOLSETS.join(",")}.
${toolsets}
  --read-only               Same as --toolsets inspect. env TMUX_MCP_READ_ONLY=1.
  --tools LIST              Comma-separated tool names: of the toolsets' tools, only these
                            exist (listed and callable; call_tools_batch only if named).
                            env TMUX_MCP_TOOLS.
  --deny-tools LIST         Comma-separated tool names that do not exist, whatever else is
                            selected (not even through call_tools_batch).
                            env TMUX_MCP_DENY_TOOLS. An unknown name stops the server with
                            the list of valid ones.
  --allow-attended-input    Let tools act where a person is watching (refused by default):
                            type into their panes, and change what they see (switch
                            windows, select panes, split, resize, zoom, layout, options).
                            env TMUX_MCP_ALLOW_ATTENDED_INPUT=1.
  --own-panes-only          Type, paste, run, respawn, kill, clear and pipe only in panes
                            this server created (create_session, create_window,
                            split_window mark them with the pane option @tmux-mcp-owner);
                            refuse every other pane. env TMUX_MCP_OWN_PANES_ONLY=1.
  --owner ID                The owner id marked on the panes it creates (letters, digits,
                            . _ -; default: made up at start and printed on stderr). Give
                            the same id again to own them after a restart. env TMUX_MCP_OWNER.
  --ssh DESTINATION         Also reach tmux on this host through OpenSSH (repeatable): tools
                            take host: DESTINATION exactly as given (user@host, an alias
                            of the ssh config, ssh://user@host:port). BatchMode: keys or
                            an agent, no prompts. env TMUX_MCP_SSH (comma-separated).
  --ssh-config FILE         Pass -F FILE to every ssh (default: the user's own config).
  --audit                   Also write the audit trail to stderr: one line per call that
                            types, runs, creates, kills or changes something (tool, ids,
                            outcome; never the text typed). Clients with logging get it as
                            log messages of logger "audit" either way. env TMUX_MCP_AUDIT=1.
  --version                 Print the version and exit.
  --help                    Print this help and exit.

Every tool also takes an optional socket_name argument to reach another server.

Agent hooks: tmux-mcp hook attention|working|done|clear|guard|config marks the agent's
window when it needs the person or is done, and asks before a tmux tool call touches a pane
a person watches. tmux-mcp hook config prints the wiring; tmux-mcp hook --help says more.

Environment read: TMUX_MCP_SOCKET, TMUX_MCP_SOCKET_PATH, TMUX_MCP_TOOLSETS, TMUX_MCP_READ_ONLY,
TMUX_MCP_TOOLS, TMUX_MCP_DENY_TOOLS, TMUX_MCP_ALLOW_ATTENDED_INPUT, TMUX_MCP_AUDIT, TMUX_MCP_SSH,
TMUX_MCP_OWNER, TMUX_MCP_OWN_PANES_ONLY, and TMUX and
TMUX_PANE (to recognise the pane this server runs in). Nothing else.
`;
}

/** Parses argv and the environment into a command; throws {@link UsageError} on bad input. */
export function parseCli(
  argv: readonly string[],
  env: (name: string) => string | undefined,
): CliCommand {
  // The hook has its own arguments and must start fast: nothing else is parsed.
  if (argv[0] === "hook") return { kind: "hook", args: argv.slice(1) };
  let v: ParsedOptions<typeof SERVE_OPTIONS>;
  try {
    v = parseOptions(argv, SERVE_OPTIONS);
  } catch (error) {
    if (!(error instanceof ArgsError)) throw error;
    throw flagError(error.message);
  }
  if (v.help) return { kind: "help" };
  if (v.version) return { kind: "version" };

  let server: ServerAddress | null;
  try {
    server = resolveSocket({ socket: v.socket, socketPath: v["socket-path"] }, env);
  } catch (error) {
    if (!(error instanceof SocketChoiceError)) throw error;
    throw error.variable ? envError(error.variable, error.message) : flagError(error.message);
  }
  const socketName = server?.socketName;
  const socketPath = server?.socketPath;

  if (v.toolsets !== undefined && v["read-only"]) {
    throw flagError("--toolsets and --read-only both choose toolsets; give one.");
  }
  // TMUX_MCP_READ_ONLY is a restriction: nothing that widens the toolsets wins over it quietly.
  const readOnlyEnv = !v["read-only"] && envSwitch(env, "TMUX_MCP_READ_ONLY");
  if (readOnlyEnv && (v.toolsets !== undefined || nonEmpty(env("TMUX_MCP_TOOLSETS")))) {
    const other = v.toolsets !== undefined ? "--toolsets" : "TMUX_MCP_TOOLSETS";
    throw envError(
      "TMUX_MCP_READ_ONLY",
      `TMUX_MCP_READ_ONLY and ${other} both choose toolsets; give one.`,
    );
  }
  let toolsets: readonly Toolset[] = DEFAULT_TOOLSETS;
  let toolsetsFrom = v.toolsets !== undefined || nonEmpty(env("TMUX_MCP_TOOLSETS")) === undefined
    ? "--toolsets"
    : "TMUX_MCP_TOOLSETS";
  if (v["read-only"] || readOnlyEnv) {
    toolsets = ["inspect"];
    toolsetsFrom = v["read-only"] ? "--read-only" : "TMUX_MCP_READ_ONLY";
  } else {
    const source = v.toolsets !== undefined ? "--toolsets" : "TMUX_MCP_TOOLSETS";
    const text = v.toolsets ?? nonEmpty(env("TMUX_MCP_TOOLSETS"));
    if (text !== undefined) {
      try {
        toolsets = parseToolsets(text);
      } catch (error) {
        const message = `${source}: ${(error as Error).message}`;
        throw source === "--toolsets" ? flagError(message) : envError(source, message);
      }
    }
    // The variable narrows what exists as TMUX_MCP_READ_ONLY does: a flag may narrow it further,
    // never bring back without a word a toolset it kept out.
    const fromEnv = v.toolsets !== undefined ? nonEmpty(env("TMUX_MCP_TOOLSETS")) : undefined;
    if (fromEnv !== undefined) {
      let kept: readonly Toolset[] = [];
      try {
        kept = parseToolsets(fromEnv);
      } catch {
        // A variable the flag replaces is not read for its own sake: only what it keeps out.
      }
      const added = toolsets.filter((t) => !kept.includes(t));
      if (added.length > 0) {
        throw envError(
          "TMUX_MCP_TOOLSETS",
          `--toolsets adds ${added.join(", ")} to what TMUX_MCP_TOOLSETS allows; give one.`,
        );
      }
    }
  }
  const allowAttendedInput = v["allow-attended-input"] === true ||
    envSwitch(env, "TMUX_MCP_ALLOW_ATTENDED_INPUT");
  const audit = v.audit === true || envSwitch(env, "TMUX_MCP_AUDIT");
  const ownPanesOnly = v["own-panes-only"] === true || envSwitch(env, "TMUX_MCP_OWN_PANES_ONLY");
  const owner = v.owner ?? nonEmpty(env("TMUX_MCP_OWNER"));
  if (owner !== undefined && !OWNER_ID.test(owner)) {
    const message = `${v.owner !== undefined ? "--owner" : "TMUX_MCP_OWNER"}: ${
      JSON.stringify(owner)
    } is not an owner id (1 to 64 letters, digits, '.', '_' or '-')`;
    throw v.owner !== undefined ? flagError(message) : envError("TMUX_MCP_OWNER", message);
  }
  const ssh = sshDestinations(v.ssh, env);
  const sshConfig = v["ssh-config"];
  // deno-lint-ignore no-control-regex
  if (sshConfig !== undefined && (sshConfig === "" || /[\x00-\x1f]/.test(sshConfig))) {
    throw flagError("--ssh-config: give the path of an ssh configuration file.");
  }
  if (sshConfig !== undefined && !ssh) {
    throw flagError("--ssh-config is for --ssh (or TMUX_MCP_SSH) hosts; none was given.");
  }
  const tools = toolNames(v.tools, "--tools", env, "TMUX_MCP_TOOLS");
  const denyTools = toolNames(v["deny-tools"], "--deny-tools", env, "TMUX_MCP_DENY_TOOLS");
  return {
    kind: "serve",
    options: {
      socketName,
      socketPath,
      toolsets,
      allowAttendedInput,
      ...(tools && { tools }),
      ...(denyTools && { denyTools }),
      selectionFrom: {
        toolsets: toolsetsFrom,
        tools: v.tools !== undefined ? "--tools" : "TMUX_MCP_TOOLS",
        denyTools: v["deny-tools"] !== undefined ? "--deny-tools" : "TMUX_MCP_DENY_TOOLS",
      },
      ...(audit && { audit }),
      ...(ssh && { ssh }),
      ...(sshConfig !== undefined && { sshConfig }),
      ...(owner !== undefined && { owner }),
      ...(ownPanesOnly && { ownPanesOnly }),
    },
  };
}

/**
 * The SSH destinations of `--ssh` (each flag one) or, without, TMUX_MCP_SSH (comma-separated).
 * A destination is handed to ssh as one argument after `--`: it must not look like an option,
 * and holds no space or control character.
 */
function sshDestinations(
  flagValues: readonly string[] | undefined,
  env: (name: string) => string | undefined,
): string[] | undefined {
  const fromEnv = flagValues === undefined;
  const raw = fromEnv
    ? nonEmpty(env("TMUX_MCP_SSH"))?.split(",").map((d) => d.trim()).filter((d) => d !== "")
    : [...flagValues];
  if (!raw || raw.length === 0) return undefined;
  const fail = (message: string) =>
    fromEnv ? envError("TMUX_MCP_SSH", `TMUX_MCP_SSH: ${message}`) : flagError(`--ssh: ${message}`);
  const seen = new Set<string>();
  for (const d of raw) {
    // deno-lint-ignore no-control-regex
    if (d === "" || d.startsWith("-") || /[\s\x00-\x1f\x7f]/.test(d) || d.length > 255) {
      throw fail(`${JSON.stringify(d)} is not an ssh destination (user@host, an alias, ssh://…).`);
    }
    if (seen.has(d)) throw fail(`${JSON.stringify(d)} is given twice.`);
    seen.add(d);
  }
  if (raw.length > 32) throw fail("at most 32 hosts.");
  return raw;
}

/**
 * A list of tool names from a flag or, without it, its variable: each must look like a tool
 * name (whether a tool has it is known only once the tools are declared; the server checks
 * that before it serves). Undefined when neither says anything.
 */
function toolNames(
  flagValue: string | undefined,
  flagName: string,
  env: (name: string) => string | undefined,
  variable: string,
): string[] | undefined {
  const fromEnv = nonEmpty(env(variable));
  // Each list narrows what exists: one that replaced the other without a word would let a tool
  // the environment kept out exist again (as TMUX_MCP_READ_ONLY against --toolsets).
  if (flagValue !== undefined && fromEnv !== undefined) {
    throw envError(variable, `${variable} and ${flagName} both name tools; give one list.`);
  }
  const text = flagValue ?? fromEnv;
  if (text === undefined) return undefined;
  const fail = (message: string) =>
    flagValue !== undefined
      ? flagError(`${flagName}: ${message}`)
      : envError(variable, `${variable}: ${message}`);
  const names = [...new Set(text.split(",").map((s) => s.trim()).filter((s) => s !== ""))];
  if (names.length === 0) throw fail("no tool named");
  const odd = names.find((n) => !/^[a-z][a-z0-9_]{0,63}$/.test(n));
  if (odd !== undefined) {
    // capture-pane, List_Panes: the name as tool names are written (checked against the tools
    // once they are declared, where a near miss is named).
    const written = odd.toLowerCase().replace(/-/g, "_");
    const like = /^[a-z][a-z0-9_]{0,63}$/.test(written)
      ? ` (tool names are written ${written})`
      : "";
    throw fail(`${JSON.stringify(odd)} is not a tool name${like}`);
  }
  return names;
}

/** An on/off variable: 1 or true, 0 or false; unset or empty is off; anything else refused. */
function envSwitch(env: (name: string) => string | undefined, name: string): boolean {
  const value = nonEmpty(env(name));
  if (value === undefined || value === "0" || value === "false") return false;
  if (value === "1" || value === "true") return true;
  throw envError(name, `${name}: "${value}" is not 1 or 0 (nor true or false).`);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
