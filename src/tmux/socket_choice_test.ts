import assert from "node:assert/strict";
import { parseCli, UsageError } from "../cli.ts";
import { resolveSocket, SocketChoiceError, socketFlagArgs, socketLabel } from "./socket_choice.ts";

/** Flags, environment: every way of naming (or misnaming) a server. */
const CASES: [string[], Record<string, string>][] = [
  [[], {}],
  [["--socket", "work"], {}],
  [["--socket=work two"], {}],
  [["--socket-path", "/tmp/s,1"], {}],
  [["--socket-path=/tmp/a b"], {}],
  [[], { TMUX_MCP_SOCKET: "env-name" }],
  [[], { TMUX_MCP_SOCKET_PATH: "/tmp/env-path" }],
  [[], { TMUX_MCP_SOCKET: "", TMUX_MCP_SOCKET_PATH: "/tmp/env-path" }],
  [[], { TMUX_MCP_SOCKET: "", TMUX_MCP_SOCKET_PATH: "" }],
  [["--socket", "flag"], { TMUX_MCP_SOCKET: "env", TMUX_MCP_SOCKET_PATH: "/tmp/p" }],
  [["--socket-path", "/tmp/flag"], { TMUX_MCP_SOCKET: "env" }],
  [["--socket", "a/b"], {}],
  [["--socket", ""], {}],
  [["--socket", "tab\there"], {}],
  [["--socket-path", ""], {}],
  [["--socket", "a", "--socket-path", "/tmp/b"], {}],
  [[], { TMUX_MCP_SOCKET: "a", TMUX_MCP_SOCKET_PATH: "/tmp/b" }],
  [[], { TMUX_MCP_SOCKET: "a/b" }],
  [[], { TMUX_MCP_SOCKET_PATH: "x\0y" }],
];

/** The hook's reading of the same flags: `--name value` or `--name=value`, as main.ts takes them. */
function hookFlags(argv: string[]): { socket?: string; socketPath?: string } {
  const flags: { socket?: string; socketPath?: string } = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes("=")
      ? [argv[i].slice(0, argv[i].indexOf("=")), argv[i].slice(argv[i].indexOf("=") + 1)]
      : [argv[i], undefined];
    const value = inline ?? argv[++i];
    if (flag === "--socket") flags.socket = value;
    else flags.socketPath = value;
  }
  return flags;
}

Deno.test("the hook names the server exactly as the MCP server's command line does", () => {
  for (const [argv, env] of CASES) {
    const label = `${JSON.stringify(argv)} ${JSON.stringify(env)}`;
    let server: unknown;
    try {
      const command = parseCli(argv, (name) => env[name]);
      if (command.kind !== "serve") throw new Error(`${label}: not serve`);
      const { socketName, socketPath } = command.options;
      server = socketName ? { socketName } : socketPath ? { socketPath } : null;
    } catch (error) {
      assert.ok(error instanceof UsageError, label);
      server = error.message;
    }
    let hook: unknown;
    try {
      hook = resolveSocket(hookFlags(argv), (name) => env[name]);
    } catch (error) {
      assert.ok(error instanceof SocketChoiceError, label);
      hook = error.message;
    }
    if (typeof hook === "string" && typeof server === "string") {
      // The server adds what fixes it (--help, the client's env entry) after the same reason.
      assert.ok(server.startsWith(`${hook} `), `${label}: ${server} / ${hook}`);
    } else {
      assert.deepEqual(hook, server, label);
    }
  }
});

Deno.test("socketFlagArgs gives back the flag that names a resolved server", () => {
  assert.deepEqual(socketFlagArgs(null), []);
  assert.deepEqual(socketFlagArgs({ socketName: "w" }), ["--socket", "w"]);
  assert.deepEqual(socketFlagArgs({ socketPath: "/tmp/s" }), ["--socket-path", "/tmp/s"]);
});

Deno.test("socketLabel quotes a socket name so that a quote in it cannot end the label", () => {
  assert.equal(socketLabel({ socketName: "work" }), 'socket "work"');
  // A call's socket_name is the model's: it may hold quotes, which the guard's reason shows.
  assert.equal(
    socketLabel({ socketName: 'w"), which nobody is watching (' }),
    'socket "w\\"), which nobody is watching ("',
  );
  assert.equal(socketLabel({ socketPath: "/tmp/a b" }), "socket path /tmp/a b");
});
