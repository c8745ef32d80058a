import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { fromSourceArgs, helpText, parseCli, shellLine, UsageError } from "./cli.ts";

const noEnv = () => undefined;
const envOf = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("defaults: tmux's default server, every toolset but teardown", () => {
  assert.deepEqual(parseCli([], noEnv), {
    kind: "serve",
    options: {
      socketName: undefined,
      socketPath: undefined,
      toolsets: ["inspect", "manage", "execute"],
      allowAttendedInput: false,
      selectionFrom: {
        toolsets: "--toolsets",
        tools: "TMUX_MCP_TOOLS",
        denyTools: "TMUX_MCP_DENY_TOOLS",
      },
    },
  });
});

Deno.test("--help and --version win over everything else", () => {
  assert.deepEqual(parseCli(["--help"], noEnv), { kind: "help" });
  assert.deepEqual(parseCli(["--socket", "x", "--version"], noEnv), { kind: "version" });
  const help = helpText("1.2.3");
  for (
    const word of [
      "--socket",
      "--socket-path",
      "--toolsets",
      "--read-only",
      "--allow-attended-input",
      "--tools",
      "--deny-tools",
      "--audit",
      "TMUX_MCP_TOOLS",
      "TMUX_MCP_DENY_TOOLS",
      "TMUX_MCP_AUDIT",
      "TMUX_MCP_SOCKET",
      "TMUX_MCP_SOCKET_PATH",
      "TMUX_MCP_TOOLSETS",
      "TMUX_MCP_ALLOW_ATTENDED_INPUT",
      "teardown",
      "1.2.3",
    ]
  ) assert.ok(help.includes(word), `help mentions ${word}`);
});

Deno.test("a flag wins over its environment variable", () => {
  const env = envOf({ TMUX_MCP_SOCKET: "fromenv", TMUX_MCP_TOOLSETS: "inspect,manage,teardown" });
  const cmd = parseCli(["--socket", "fromflag", "--toolsets", "teardown,inspect"], env);
  assert.equal(cmd.kind, "serve");
  if (cmd.kind !== "serve") return;
  assert.equal(cmd.options.socketName, "fromflag");
  assert.deepEqual(cmd.options.toolsets, ["inspect", "teardown"]);
  const fromEnv = parseCli([], env);
  assert.ok(fromEnv.kind === "serve" && fromEnv.options.socketName === "fromenv");
  assert.ok(
    fromEnv.kind === "serve" && fromEnv.options.toolsets.join() === "inspect,manage,teardown",
  );
  // --socket-path on the command line overrides TMUX_MCP_SOCKET from the environment.
  const path = parseCli(["--socket-path", "/tmp/s"], env);
  assert.ok(path.kind === "serve" && path.options.socketPath === "/tmp/s");
  assert.ok(path.kind === "serve" && path.options.socketName === undefined);
});

Deno.test("--read-only means inspect only; attended input from flag or env", () => {
  const ro = parseCli(["--read-only"], noEnv);
  assert.ok(ro.kind === "serve" && ro.options.toolsets.join() === "inspect");
  const allow = parseCli([], envOf({ TMUX_MCP_ALLOW_ATTENDED_INPUT: "1" }));
  assert.ok(allow.kind === "serve" && allow.options.allowAttendedInput);
  const flag = parseCli(["--allow-attended-input"], noEnv);
  assert.ok(flag.kind === "serve" && flag.options.allowAttendedInput);
  // --read-only has its variable like every other switch: set in a client's "env", it holds.
  const roEnv = parseCli([], envOf({ TMUX_MCP_READ_ONLY: "1" }));
  assert.ok(roEnv.kind === "serve" && roEnv.options.toolsets.join() === "inspect");
  assert.ok(
    roEnv.kind === "serve" && roEnv.options.selectionFrom?.toolsets === "TMUX_MCP_READ_ONLY",
  );
  const off = parseCli([], envOf({ TMUX_MCP_READ_ONLY: "0" }));
  assert.ok(off.kind === "serve" && off.options.toolsets.join() === "inspect,manage,execute");
  const both = parseCli(["--read-only"], envOf({ TMUX_MCP_READ_ONLY: "1" }));
  assert.ok(both.kind === "serve" && both.options.toolsets.join() === "inspect");
});

Deno.test("a flag given twice is refused: a later one never drops an earlier restriction", () => {
  for (const flag of ["--deny-tools", "--toolsets", "--tools", "--owner", "--socket"]) {
    const value = flag === "--toolsets" ? "inspect" : flag === "--owner" ? "a" : "list_panes";
    assert.throws(
      () => parseCli([flag, value, `${flag}=${value}`], noEnv),
      new RegExp(`Option '${flag}' is given twice; give it once\\. tmux-mcp --help`),
    );
  }
});

Deno.test("bad flags and values are usage errors naming the culprit", () => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [["--bogus"], {}, /--bogus/],
    [["--socket"], {}, /--socket/],
    [["--socket", "a", "--socket-path", "/b"], {}, /--socket and --socket-path/],
    [["--toolsets", "inspect,nope"], {}, /unknown toolset "nope"/],
    [["--toolsets", ","], {}, /no toolset/],
    [["--toolsets", "inspect", "--read-only"], {}, /--read-only/],
    [["--socket", "a/b"], {}, /not a socket name/],
    [["extra"], {}, /extra/],
    [[], { TMUX_MCP_TOOLSETS: "all" }, /TMUX_MCP_TOOLSETS: unknown toolset "all"/],
    [[], { TMUX_MCP_SOCKET: "a", TMUX_MCP_SOCKET_PATH: "/b" }, /both set/],
    [[], { TMUX_MCP_ALLOW_ATTENDED_INPUT: "yes" }, /TMUX_MCP_ALLOW_ATTENDED_INPUT/],
    [[], { TMUX_MCP_READ_ONLY: "yes" }, /TMUX_MCP_READ_ONLY: "yes" is not 1 or 0/],
    [["--toolsets", "execute"], { TMUX_MCP_READ_ONLY: "1" }, /TMUX_MCP_READ_ONLY and --toolsets/],
    [[], { TMUX_MCP_READ_ONLY: "1", TMUX_MCP_TOOLSETS: "execute" }, /and TMUX_MCP_TOOLSETS/],
    // A list that narrows what exists never replaces the other's without a word.
    [
      ["--deny-tools", "pipe_pane"],
      { TMUX_MCP_DENY_TOOLS: "run_command" },
      /TMUX_MCP_DENY_TOOLS and --deny-tools both name tools; give one list/,
    ],
    [["--tools", "list_panes"], { TMUX_MCP_TOOLS: "capture_pane" }, /and --tools both name/],
    // The flag may narrow the toolsets the variable allows, not widen them.
    [
      ["--toolsets", "inspect,execute"],
      { TMUX_MCP_TOOLSETS: "inspect" },
      /--toolsets adds execute to what TMUX_MCP_TOOLSETS allows/,
    ],
  ];
  for (const [argv, env, pattern] of cases) {
    assert.throws(() => parseCli(argv, envOf(env)), (e: unknown) => {
      assert.ok(e instanceof UsageError, `${argv} gives a UsageError`);
      assert.match(e.message, pattern);
      assert.ok(!e.message.includes("\n"), "one line");
      // A client shows only "connection closed": the line itself says what to do.
      assert.match(
        e.message,
        Object.keys(env).length > 0
          ? /the environment the MCP client gives this server \(its "env" entry\)/
          : /tmux-mcp --help lists every flag\.$/,
        `${argv} ${JSON.stringify(env)} names the fix`,
      );
      return true;
    });
  }
});

Deno.test("hook: the first word hands the rest to the hook commands untouched", () => {
  assert.deepEqual(parseCli(["hook", "working", "--deny"], noEnv), {
    kind: "hook",
    args: ["working", "--deny"],
  });
  // Only as the first word: elsewhere it is an ordinary (refused) positional.
  assert.throws(() => parseCli(["--read-only", "hook"], noEnv), UsageError);
});

Deno.test("from source: the start task's flags, --config and main.ts by absolute path", () => {
  const args = fromSourceArgs(denoJson.tasks.start, "/opt/tmux mcp/");
  const start = denoJson.tasks.start.split(/\s+/);
  assert.deepEqual(args, [
    ...start.slice(1, -1),
    "--config",
    "/opt/tmux mcp/deno.json",
    "/opt/tmux mcp/main.ts",
  ]);
  assert.ok(args.includes("--allow-env=TMUX*") && args.includes("--allow-run=tmux,ssh"));
  assert.throws(() => fromSourceArgs("deno run main.js", "/x"), /start task/);
});

Deno.test("shellLine quotes what a shell would expand or split, zsh's unmatched * too", () => {
  assert.equal(
    shellLine(["deno", "run", "--allow-env=TMUX*", "/a b/main.ts", "it's", "--x=1,2"]),
    "deno run '--allow-env=TMUX*' '/a b/main.ts' 'it'\\''s' --x=1,2",
  );
});

Deno.test("--ssh: repeatable destinations, or TMUX_MCP_SSH comma-separated; never an option", () => {
  const serve = (argv: string[], env: Record<string, string> = {}) => {
    const command = parseCli(argv, (name) => env[name]);
    assert.equal(command.kind, "serve");
    return command.kind === "serve" ? command.options : undefined;
  };
  assert.deepEqual(serve(["--ssh", "me@build", "--ssh", "ssh://u@h:2222"])?.ssh, [
    "me@build",
    "ssh://u@h:2222",
  ]);
  assert.deepEqual(serve([], { TMUX_MCP_SSH: "a, b@c,," })?.ssh, ["a", "b@c"]);
  assert.deepEqual(serve(["--ssh", "x"], { TMUX_MCP_SSH: "a" })?.ssh, ["x"], "the flag wins");
  assert.equal(serve([])?.ssh, undefined);
  assert.equal(serve(["--ssh", "a", "--ssh-config", "/etc/cfg"])?.sshConfig, "/etc/cfg");
  for (const bad of ["-oProxyCommand=sh", "a b", "a\nb", ""]) {
    assert.throws(() => parseCli(["--ssh", bad], noEnv), UsageError, JSON.stringify(bad));
  }
  assert.throws(() => parseCli(["--ssh", "a", "--ssh", "a"], noEnv), /given twice/);
  assert.throws(() => parseCli([], (n) => n === "TMUX_MCP_SSH" ? "-F/x" : undefined), UsageError);
  assert.throws(() => parseCli(["--ssh-config", "/x"], noEnv), /--ssh-config is for --ssh/);
});
