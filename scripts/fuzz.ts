/**
 * `deno task fuzz`: random calls of every tool through the real server process, against a
 * private tmux server with a person attached, checking after each call what must hold whatever
 * a client sends (tests/helpers/fuzz_run.ts lists it). Hand-written tests cover the cases
 * someone thought of; this finds the argument no one did, and prints it.
 *
 * A run is reproducible from its seed (printed first) as far as tmux's own timing allows. It
 * writes only inside a temporary folder it makes and removes, and ends only the tmux servers
 * it started. Exits 1 when any invariant broke, after printing each broken one with its calls
 * and the command that replays them in a fresh world.
 *
 * Usage: deno task fuzz [--seed N] [--calls N] [--concurrency N] [--tools a,b] [--flavour N]
 *        [--config N] [--max-wait MS] [--hook-guard] [--own-panes-only] [--ssh] [--protocol V]
 *        [--replay JSON] [--sockets A,B] [--verbose] [--help]
 *
 * @module
 */

import { CONFIGS, FLAVOURS } from "../tests/helpers/fuzz_world.ts";
import { fuzz, FUZZ_TOOLS, type FuzzCall, replayCommand } from "../tests/helpers/fuzz_run.ts";
import { MOVES, type Protocol, PROTOCOLS } from "../tests/helpers/fuzz_protocol.ts";
import { type Sshd, startSshd } from "../tests/helpers/sshd.ts";
import { leftovers } from "../tests/helpers/tmux.ts";
import { commandLine, refuse, wholeNumber } from "./cli.ts";

/** The name the fuzz's sshd is reached by, as `--ssh` and every call's `host` give it. */
const SSH_ALIAS = "fuzzhost";

const HELP = `deno task fuzz — property-based fuzz of every tool through the real server process

Usage: deno task fuzz [--seed N] [--calls N] [--concurrency N] [--tools a,b] [--flavour N]
       [--config N] [--max-wait MS] [--hook-guard] [--own-panes-only] [--ssh] [--protocol V]
       [--replay JSON] [--sockets A,B] [--verbose] [--help]

Builds a private tmux server (a dead pane, a pane in copy mode, linked and grouped windows,
odd names) with a person attached on a pseudo-terminal (their status line always running a
job, as a gauge's does), starts the server process as an agent in one of its panes with every
toolset, and calls random tools with random arguments their input schemas accept, biased to
edge values (ids that exist, are guarded or never existed, quotes, formats, escape sequences,
bounds). After each call (or group) it checks: an answer and no JSON-RPC error; a readable
error text; a result that matches the output schema; the tmux server alive; the person's view
and the agent's pane unchanged; no #(...) job run; a ping answered. A refusal is a fine
answer. Allowed, by design: what force lets a call destroy, a #(...) a call asked for
(display_message, a format option, a hook, a command); noted, not counted: what a hook may
have done, and a hidden pane of the person's window ending when typed to. After a hook is
set, and every 150 calls, the world is built anew.

Each world's server is spoken to in one MCP version (2025-06-18, 2025-11-25 or 2026-07-28, by
the seed). The tools that wait are often run as tasks where the version has them (asked with
params.task and awaited with tasks/result; under 2026-07-28 the server decides and the task is
polled with tasks/get), now and then cancelled a moment in; what a task ends with is judged as
a call's answer. About one call in eight is a request that is no tool call (resources/read,
/subscribe, /unsubscribe, /list, /templates/list, prompts/list, prompts/get,
completion/complete, tasks/get, /list, /cancel, /result, logging/setLevel; under 2026-07-28
subscriptions/listen, held a moment and cancelled, in place of /subscribe and /unsubscribe): a
refusal must be readable and no internal error, it must change nothing the person or the agent
has, and every resource update sent must be of a URI the client subscribed to (under
2026-07-28: one its stream was granted, after the stream's acknowledgement).
Half the tool calls carry a progress token: progress must name one given and stop when its
call ends. No log message or line of the server's stderr may hold a raw control character.

Options:
  --seed N         the generator's seed (default: random; printed, so a run can be repeated)
  --calls N        calls to make (default 500)
  --concurrency N  calls sent together before any answer (default 1)
  --tools LIST     only these tools and requests, comma-separated (call_tools_batch still
                   nests any tool); a request named alone (resources/read) is the only call
  --flavour N      the person's view in every world, 0-${FLAVOURS - 1} (default: by the seed)
                   0 a zoomed pane of two, 1 a linked window in copy mode seen through a
                   grouped session, 2 a synchronized window whose active pane is dead
  --config N       tmux's configuration in every world, 0-${CONFIGS - 1} (default: in turn,
                   world by world): 0 tmux's defaults, 1 a person's tmux.conf (windows
                   and panes from 1, renumbered, border lines, vi keys, mouse, hooks),
                   2 a keeper's (panes and server kept on exit, no history, no status line),
                   3 hooks that run shell jobs as clients attach and change session
  --max-wait MS    give every wait a timeout of at most MS (default: any, or the tool's own)
  --hook-guard     judge \`tmux-mcp hook guard\` instead of the server's own guards: the
                   server allows attended input, the guard is asked before every call (as
                   Claude Code asks it), every call is made, and one it let pass must leave
                   the panes the person watches and the agent's own as they were (process,
                   text, no pipe), the person's keys where they went, a zoom they see zoomed.
                   One call at a time.
  --own-panes-only judge the server's --own-panes-only: it runs with it (and with
                   --allow-attended-input, so the fence alone stands), and no pane of the
                   world as built, none of them its own, may lose its process, text or pipe,
                   unless a call of the group reaches tmux or a shell by design (set_hook,
                   set_option, set_environment, display_message: noted).
  --ssh            reach the world's tmux over SSH: starts an sshd of this machine on
                   127.0.0.1 (needs openssh-server; its keys and config in a folder of its
                   own, removed at the end), the server runs with --ssh ${SSH_ALIAS}, and
                   every call (every row of a batch) names host "${SSH_ALIAS}" with a socket
                   of the run. The same checks hold: that host is the agent's own tmux
                   server, whose pane the server guards there as here. Requests that would
                   read the world by the server's own socket (resources/list, prompts/get,
                   completion/complete) are not made, and every resource URI names the host.
  --protocol V     speak 2025-06-18, 2025-11-25 or 2026-07-28 to every world's server
                   (default: by the seed, world by world; a replay: 2025-06-18)
  --replay JSON    instead of random calls, these groups of calls in a fresh world:
                   [[{"tool":"kill_pane","arguments":{"paneId":"%3"}}], ...] (a break that
                   needed the calls before it may not come back: run the seed again)
  --sockets A,B    with --replay: the socket names of the world and the spare server of the
                   run that broke (the replay command gives them); calls naming them name
                   the new run's
  --verbose        print every call and note as it happens (stderr)
  --help, -h       this text

Prints the seed, then one line of figures; on a broken invariant, what broke, the calls, and
the command that replays them, and exits 1 (2 on a usage error). Writes only in a temporary
folder it removes, and ends only the tmux servers it started, also when interrupted.
`;

function out(line = ""): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

function err(line: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(`${line}\n`));
}

function usage(problem: string): never {
  refuse("fuzz", problem);
}

function whole(name: string, value: string | undefined, min: number): number | undefined {
  return wholeNumber("fuzz", name, value, min);
}

const { values } = commandLine("fuzz", HELP, {
  seed: { type: "string" },
  calls: { type: "string", default: "500" },
  concurrency: { type: "string", default: "1" },
  tools: { type: "string" },
  flavour: { type: "string" },
  config: { type: "string" },
  "max-wait": { type: "string" },
  "hook-guard": { type: "boolean", default: false },
  "own-panes-only": { type: "boolean", default: false },
  ssh: { type: "boolean", default: false },
  protocol: { type: "string" },
  replay: { type: "string" },
  sockets: { type: "string" },
  verbose: { type: "boolean", default: false },
});
const seed = whole("seed", values.seed, 0) ?? crypto.getRandomValues(new Uint32Array(1))[0];
const calls = whole("calls", values.calls, 1)!;
const concurrency = whole("concurrency", values.concurrency, 1)!;
const flavour = whole("flavour", values.flavour, 0);
if (flavour !== undefined && flavour >= FLAVOURS) usage(`--flavour is 0 to ${FLAVOURS - 1}`);
const config = whole("config", values.config, 0);
if (config !== undefined && config >= CONFIGS) usage(`--config is 0 to ${CONFIGS - 1}`);
const maxWaitMs = whole("max-wait", values["max-wait"], 0);
const hookGuard = values["hook-guard"];
if (hookGuard && concurrency > 1) usage("--hook-guard judges one call at a time (--concurrency 1)");
const tools = values.tools?.split(",").map((t) => t.trim()).filter((t) => t) ?? [];
const known = new Set<string>([...FUZZ_TOOLS.map((t) => t.name), ...MOVES]);
const unknown = tools.filter((t) => !known.has(t));
if (unknown.length) usage(`no tool ${unknown.join(", ")}; tools: ${[...known].join(", ")}`);
const protocol = values.protocol as Protocol | undefined;
if (protocol !== undefined && !(PROTOCOLS as readonly string[]).includes(protocol)) {
  usage(`--protocol is one of ${PROTOCOLS.join(", ")}`);
}
let replay: FuzzCall[][] | undefined;
if (values.replay !== undefined) {
  try {
    replay = JSON.parse(values.replay);
  } catch (error) {
    usage(`--replay is not JSON: ${(error as Error).message}`);
  }
  const ok = Array.isArray(replay) &&
    replay.every((g) =>
      Array.isArray(g) &&
      g.every((c) => typeof c?.tool === "string" && typeof c.arguments === "object")
    );
  if (!ok) usage('--replay takes [[{"tool": NAME, "arguments": {...}}, ...], ...]');
}
const sockets = values.sockets?.split(",");
if (sockets && (sockets.length !== 2 || replay === undefined)) {
  usage("--sockets takes the world's and the spare socket names of the replayed run: A,B");
}

const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-fuzz-" });
out(
  replay
    ? `fuzz: replaying ${replay.length} group(s)`
    : `fuzz: seed ${seed}, ${calls} calls, concurrency ${concurrency}` +
      (tools.length ? `, tools ${tools.join(",")}` : ""),
);
let sshd: Sshd | undefined;
if (values.ssh) {
  const up = await startSshd([SSH_ALIAS]);
  if (typeof up === "string") {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    usage(`--ssh: ${up}`);
  }
  sshd = up;
}
const started = Date.now();
/** Removes the folder and ends whatever of this run's sockets still runs, and its sshd. */
async function cleanUp(): Promise<void> {
  await sshd?.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  const left = await leftovers();
  if (left.length) err(`fuzz: ended what the run left: ${left.join("; ")}`);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    err(`fuzz: ${signal}: cleaning up`);
    await cleanUp();
    Deno.exit(130);
  });
}
let status = 0;
try {
  const result = await fuzz({
    seed,
    calls,
    concurrency,
    dir,
    tools,
    flavour,
    config,
    maxWaitMs,
    hookGuard,
    ownPanesOnly: values["own-panes-only"],
    ssh: sshd ? { alias: SSH_ALIAS, config: sshd.config } : undefined,
    protocol,
    replay,
    replaySockets: sockets as [string, string] | undefined,
    onEvent: values.verbose ? err : (line) => {
      if (line.startsWith("BROKEN")) err(line);
    },
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  for (const b of result.broken) {
    out("");
    out(`BROKEN: ${b.invariant} (call ${b.at}, flavour ${b.flavour})`);
    out(`  seen: ${b.detail}`);
    for (const c of b.calls) {
      const task = c.task ? ` as a task ${JSON.stringify(c.task)}` : "";
      out(`  call: ${c.tool} ${JSON.stringify(c.arguments)}${task}`);
    }
    out(`  replay: ${replayCommand(b, maxWaitMs)}`);
  }
  if (result.broken.length) out("");
  out(
    `fuzz: ${replay ? "replay" : `seed ${seed}`}: ${result.calls} calls, ${result.held} held, ` +
      `${result.broken.length} broken, ${result.skipped} skipped (schema), ` +
      `${result.notes} noted, ${hookGuard ? `${result.asked} asked by the hook guard, ` : ""}` +
      `${result.tasks} run as tasks, ${result.moves} other requests, ` +
      `${result.worlds} worlds, ${seconds} s`,
  );
  if (result.broken.length) status = 1;
} finally {
  await cleanUp();
}
Deno.exit(status);
