/**
 * A property-based fuzz of the whole tool surface (`deno task fuzz`, tests/fuzz_test.ts): calls
 * with random arguments that the input schemas accept (tests/helpers/fuzz_args.ts), made
 * through the real server process over stdio, against a private tmux server with a person
 * attached (tests/helpers/fuzz_world.ts), one call at a time or several at once.
 *
 * A refusal is a fine answer; what must hold after every call (or group of calls sent
 * together) is what a client and the person rely on whatever they are sent:
 *
 * - an answer comes (within 150 s; while one is slow, a ping is still answered), and it is no
 *   JSON-RPC error;
 * - an error's text is a readable reason, and carries no structured content; a result
 *   matches the tool's output schema and admits no bug;
 * - the tmux server is alive, unless the call killed it (or what it held last);
 * - what the person sees (their screen, and what it is set to: the options of their session,
 *   window and panes, the global and server ones) and the agent's own pane are as they were,
 *   unless the call was allowed to change them (see tests/helpers/fuzz_checks.ts);
 * - no `#(...)` job that an argument carried ran (a marker file), unless the call asked for a
 *   command, hook or format option to run;
 * - the server answers a ping afterwards.
 *
 * With `hookGuard`, the server's own guards step aside (`--allow-attended-input`) and the agent
 * hook's guard is judged instead: asked before each call, held to what it promises for the calls
 * it lets pass (tests/helpers/fuzz_hook.ts). With `ownPanesOnly`, the server also runs with
 * `--own-panes-only`, and a pane it did not create (every pane of the world as built) must keep
 * its process, text and pipe whatever a group of calls does, unless a call of the group reaches
 * tmux or a shell by design (set_hook, set_option, set_environment, display_message: the flag's
 * documented limits).
 *
 * The world is rebuilt when its server or its person is gone, after a hook was set (it may act
 * on any later call), and every 150 calls. Everything is written inside one folder given by
 * the caller; the tmux servers ended are those the run started (its own socket names).
 *
 * @module
 */

import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import denoJson from "../../deno.json" with { type: "json" };
import toolList from "../../src/mcp/tool_list.json" with { type: "json" };
import { fromSourceArgs, shellLine } from "../../src/cli.ts";
import { ArgumentMaker, type FuzzCall, type FuzzTool, type Json } from "./fuzz_args.ts";
import {
  admitsBug,
  badErrorText,
  killsPane,
  mayChangePersonView,
  mayEndServer,
  mayTouchAgentPane,
  reachesTmux,
  reshapes,
  runsJobs,
  saysOwnServerGone,
  setsHook,
  types,
} from "./fuzz_checks.ts";
import {
  agentView,
  buildWorld,
  CONFIGS,
  FLAVOURS,
  type FuzzWorld,
  personView,
  present,
  reapExited,
  serverPid,
  worldEnv,
  worldNames,
} from "./fuzz_world.ts";
import {
  agentEnvOf,
  askGuard,
  focusBroken,
  keptPanesBroken,
  keptView,
  keysPaneEnded,
  panesBroken,
  settingsBroken,
} from "./fuzz_hook.ts";
import {
  badMoveError,
  type Ending,
  FuzzClient,
  isMove,
  MOVES,
  type Protocol,
  PROTOCOLS,
} from "./fuzz_protocol.ts";
import { prng, type Rand } from "./prng.ts";
import { MarkerBox, RAW_CONTROL } from "./robust.ts";
import { type RpcMessage, StdioServer } from "./stdio.ts";
import { cleanEnv, TestTmux } from "./tmux.ts";

export type { FuzzCall } from "./fuzz_args.ts";

/** Every tool, as the server lists them with every toolset selected. */
export const FUZZ_TOOLS: readonly FuzzTool[] = toolList.tools as unknown as FuzzTool[];

/** What to run. */
export interface FuzzOptions {
  readonly seed: number;
  /** How many calls to make (those whose random arguments the schema refuses are skipped). */
  readonly calls: number;
  /** Calls sent together, before any answer (1: one at a time). */
  readonly concurrency: number;
  /** A folder the run may write in, and nowhere else; it is the caller's to remove. */
  readonly dir: string;
  /** The tools to call (call_tools_batch's operations use them all); all when empty. */
  readonly tools?: readonly string[];
  /** The person's view (0 to FLAVOURS - 1) in every world; by the seed when undefined. */
  readonly flavour?: number;
  /**
   * The tmux configuration (0 to CONFIGS - 1) of every world; when undefined, world by world
   * in turn, starting from the seed's (a replay: 0).
   */
  readonly config?: number;
  /** See {@link ArgumentSources.maxWaitMs}. */
  readonly maxWaitMs?: number;
  /** Instead of random calls, these groups, in order, in one world. */
  readonly replay?: readonly (readonly FuzzCall[])[];
  /**
   * With {@link replay}: the socket names of the run that made its calls, its world's and its
   * spare one ({@link Broken.sockets}); a replayed argument naming one names this run's instead.
   */
  readonly replaySockets?: readonly [string, string];
  /**
   * Judge `tmux-mcp hook guard` instead of the server's own guards (tests/helpers/fuzz_hook.ts):
   * the server allows attended input, the guard is asked about every call, and a call it
   * passes must keep what it promises. One call at a time.
   */
  readonly hookGuard?: boolean;
  /**
   * Judge `--own-panes-only`: the server runs with it (and `--allow-attended-input`, so that the
   * fence alone stands), and no pane it did not create may be acted on.
   */
  readonly ownPanesOnly?: boolean;
  /**
   * Reach the world's tmux through SSH: the server runs with `--ssh alias --ssh-config config`
   * (an sshd of this machine, tests/helpers/sshd.ts), so every tool takes `host`, and every
   * call names it (with a socket of the run). Only through it: one tmux server reached by two
   * routes (here and over SSH) is two servers to the server process, whose handshake hold then
   * cannot keep one route's acts out of the other's handshakes (tmux/tmux#4980; a run mixing
   * the routes crashed tmux once in 20 000 calls). Every check holds as here: over SSH the
   * server reads the same clients, and a host that is its own `TMUX` server (the same socket
   * path and server pid) guards the agent's pane there too.
   */
  readonly ssh?: { readonly alias: string; readonly config: string };
  /**
   * The protocol version each world's server is spoken to in (tests/helpers/fuzz_protocol.ts);
   * by the seed, world by world, when undefined (a replay: 2025-06-18).
   */
  readonly protocol?: Protocol;
  /** Told of each group's outcome, and of notes (a change a command may have made). */
  readonly onEvent?: (line: string) => void;
}

/** An invariant that did not hold. */
export interface Broken {
  readonly invariant: string;
  /** The call's number in the run (the group's first). */
  readonly at: number;
  /** The calls sent together (one at concurrency 1): the reproduction. */
  readonly calls: readonly FuzzCall[];
  /** The world's flavour and configuration, which a reproduction needs too. */
  readonly flavour: number;
  readonly config: number;
  /** Whether the hook guard was judged ({@link FuzzOptions.hookGuard}), as a replay must be. */
  readonly hookGuard: boolean;
  /** Whether `--own-panes-only` was judged ({@link FuzzOptions.ownPanesOnly}). */
  readonly ownPanesOnly: boolean;
  /** Whether the server reached the world through SSH too ({@link FuzzOptions.ssh}). */
  readonly ssh: boolean;
  /** The protocol version the world's server was spoken to in. */
  readonly protocol: Protocol;
  /** The world's socket name and the spare one, which the calls may name. */
  readonly sockets: readonly [string, string];
  /** What was seen, cut to a few hundred characters. */
  readonly detail: string;
}

/** The figures of a run. */
export interface FuzzResult {
  /** Calls sent. */
  readonly calls: number;
  /** Calls after which every invariant held. */
  readonly held: number;
  /** Calls not sent: their random arguments failed the input schema. */
  readonly skipped: number;
  /** Changes a command, hook or format may have made: not counted. */
  readonly notes: number;
  /** With {@link FuzzOptions.hookGuard}: calls the guard asked the person about. */
  readonly asked: number;
  /** Worlds built. */
  readonly worlds: number;
  /** Tool calls the server ran as tasks (a handle given, then followed to the end). */
  readonly tasks: number;
  /** Requests that are no tool call (see tests/helpers/fuzz_protocol.ts). */
  readonly moves: number;
  readonly broken: readonly Broken[];
}

/**
 * The command line that replays `broken`'s calls in a fresh world of its flavour (`maxWaitMs`:
 * the run's, which the calls' arguments were made under).
 */
export function replayCommand(broken: Broken, maxWaitMs?: number): string {
  return shellLine([
    "deno",
    "task",
    "fuzz",
    "--flavour",
    String(broken.flavour),
    "--config",
    String(broken.config),
    ...broken.hookGuard ? ["--hook-guard"] : [],
    ...broken.ownPanesOnly ? ["--own-panes-only"] : [],
    ...broken.ssh ? ["--ssh"] : [],
    "--protocol",
    broken.protocol,
    ...maxWaitMs === undefined ? [] : ["--max-wait", String(maxWaitMs)],
    "--sockets",
    broken.sockets.join(","),
    "--replay",
    JSON.stringify([broken.calls]),
  ]);
}

/** A reply waited this long counts as slow: is the server still answering anything? */
const SLOW_MS = 8_000;
/** A ping during a slow call, and after every call, answered within this. */
const PING_MS = 15_000;
/** No call may go unanswered longer (each tool bounds its own work far below). */
const HANG_MS = 150_000;
/** A new world after this many calls, so that what calls pile up stays in bounds. */
const WORLD_CALLS = 150;
/** The share of calls that are moves (requests that are no tool call). */
const MOVE_SHARE = 0.12;
/** Moves that read tmux by the server's own `--socket`, never by an SSH host. */
const LOCAL_ROUTE = new Set<string>(["resources/list", "prompts/get", "completion/complete"]);
/** Moves of one protocol version only: 2026-07-28's listen streams, 2025's subscriptions. */
const MODERN_ONLY = new Set<string>(["subscriptions/listen"]);
const LEGACY_ONLY = new Set<string>(["resources/subscribe", "resources/unsubscribe"]);

const ROOT = new URL("../../", import.meta.url).pathname;

function within<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<"timeout">((res) => timer = setTimeout(() => res("timeout"), ms)),
  ]).catch(() => "timeout" as const);
}

function cut(value: unknown, n = 600): string {
  const s = typeof value === "string" ? value : JSON.stringify(value);
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** Where two views differ: the first lines that do, each side (the rest is the same). */
function difference(before: string, after: string): string {
  const a = before.split("\n"), b = after.split("\n");
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const show = (lines: string[]) => JSON.stringify(lines.slice(i, i + 3).join("\n"));
  return `from line ${i + 1} (${a[0]}): before ${show(a)}, after ${show(b)}`;
}

function textOf(result: Json): string {
  return ((result.content ?? []) as Json[]).map((c) => String(c.text ?? "")).join("\n");
}

/** Deno's cache, which the server process finds there whatever its `HOME`. */
let denoDir: Promise<string> | undefined;

async function findDenoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

/**
 * The server process, started in `dir` with every toolset, as the agent in `agentPane`;
 * `flags`: more of them (`--allow-attended-input`, `--own-panes-only`).
 */
async function startServer(
  world: FuzzWorld,
  dir: string,
  flags: readonly string[],
): Promise<StdioServer> {
  const env = cleanEnv({
    ...worldEnv(dir),
    DENO_DIR: await (denoDir ??= findDenoDir()),
    ...agentEnvOf(world),
  });
  // Started outside the checkout (a random line may write files where tmux starts it), the
  // start task's command names the checkout's config.
  return new StdioServer(
    Deno.execPath(),
    [
      ...fromSourceArgs(denoJson.tasks.start, ROOT),
      "--socket",
      world.t.socket,
      "--toolsets",
      "inspect,manage,execute,teardown",
      ...flags,
    ],
    env,
    dir,
  );
}

/** `value` with every string that is a key of `names` (at any depth) given as its value. */
function renamed(value: unknown, names: ReadonlyMap<string | undefined, string>): unknown {
  if (typeof value === "string") return names.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => renamed(v, names));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renamed(v, names)]));
  }
  return value;
}

/** The tools a server started with `flags` lists (no tmux needed to list them). */
async function listedTools(dir: string, flags: readonly string[]): Promise<FuzzTool[]> {
  const server = new StdioServer(
    Deno.execPath(),
    [...fromSourceArgs(denoJson.tasks.start, ROOT), ...flags],
    cleanEnv({ ...worldEnv(dir), DENO_DIR: await (denoDir ??= findDenoDir()) }),
    dir,
  );
  try {
    await server.initialize();
    const listed = await server.request("tools/list");
    if (listed.error) throw new Error(`tools/list: ${listed.error.message}`);
    return (listed.result as { tools: FuzzTool[] }).tools;
  } finally {
    await server.kill();
  }
}

/** Runs the fuzz; never throws for an invariant, only when the world cannot be built. */
export async function fuzz(options: FuzzOptions): Promise<FuzzResult> {
  const hookGuard = options.hookGuard === true;
  const fenced = options.ownPanesOnly === true;
  // Either judge steps the server's attended guard aside: what it judges stands alone.
  const flags = [
    ...hookGuard || fenced ? ["--allow-attended-input"] : [],
    ...fenced ? ["--own-panes-only"] : [],
    ...options.ssh ? ["--ssh", options.ssh.alias, "--ssh-config", options.ssh.config] : [],
  ];
  if (hookGuard && (options.concurrency !== 1 || options.replay?.some((g) => g.length > 1))) {
    throw new Error("the hook guard is judged one call at a time");
  }
  const rand: Rand = prng(options.seed);
  const only = new Set(options.tools ?? []);
  // With --ssh every schema takes `host`: the tools as that server lists them.
  const allTools = options.ssh ? await listedTools(options.dir, flags) : FUZZ_TOOLS;
  const pickable = allTools.filter((t) => only.size === 0 || only.has(t.name));
  // Requests that are no tool call, among the calls (those --tools names, when it names any);
  // over SSH none that reads tmux by the local route (one server, one route: see `ssh`).
  const moves = MOVES.filter((m) =>
    (only.size === 0 || only.has(m)) && !(options.ssh && LOCAL_ROUTE.has(m))
  );
  const ajv = new AjvJsonSchemaValidator();
  const bare = (s: Json) => {
    const { $schema: _, ...rest } = s;
    return rest;
  };
  const input = new Map(allTools.map((t) => [t.name, ajv.getValidator(bare(t.inputSchema))]));
  const output = new Map(
    allTools.filter((t) => t.outputSchema).map((t) => [
      t.name,
      ajv.getValidator(bare(t.outputSchema!)),
    ]),
  );
  // The server's home is the run's folder: with a ~/.ssh there, ssh shares one connection per
  // host (ControlMaster), as it does for most people, sessions and their limit included.
  if (options.ssh) await Deno.mkdir(`${options.dir}/.ssh`, { mode: 0o700, recursive: true });
  const markers = await MarkerBox.create(options.dir);
  // A socket name of this run nothing listens on: a tool may start a server there.
  const spare = new TestTmux();
  const maker = new ArgumentMaker({
    rand,
    tools: allTools,
    dir: options.dir,
    markers,
    spareSocket: spare.socket,
    maxWaitMs: options.maxWaitMs,
    host: options.ssh?.alias,
  });
  const say = options.onEvent ?? (() => {});
  const broken: Broken[] = [];
  /** The call each marker label names. */
  const carriers = new Map<string, FuzzCall>();
  /** Every argument string holding "undefined" sent in this world: a name a call may have given. */
  const given = new Set<string>();
  const seenMarkers = new Set<string>();
  let calls = 0, held = 0, skipped = 0, notes = 0, worlds = 0, made = 0, asked = 0;
  let tasks = 0, movesMade = 0;
  /** How much of the world's server's stderr was looked at already (from its start on). */
  let stderrSeen = 0;

  let world: FuzzWorld | undefined;
  /** With `ownPanesOnly`: the panes of the world as built, none of them this server's. */
  let foreign: string[] = [];
  let server: StdioServer | undefined;
  let client: FuzzClient | undefined;
  const dispose = async () => {
    await server?.kill();
    await world?.t.kill();
    await spare.kill();
    server = world = client = undefined;
  };
  const rebuild = async () => {
    await dispose();
    const flavour = options.flavour ?? rand.int(FLAVOURS);
    // In turn rather than drawn: the calls a seed makes stay those it made before there were
    // configurations.
    const config = options.config ?? (options.replay ? 0 : (options.seed + worlds) % CONFIGS);
    world = await buildWorld(flavour, options.dir, config);
    given.clear();
    worlds++;
    foreign = fenced ? (await present(world)).panes : [];
    server = await startServer(world, options.dir, flags);
    const protocol = options.protocol ?? (options.replay ? "2025-06-18" : rand.pick(PROTOCOLS));
    client = new FuzzClient(server, protocol);
    const opened = await within(client.open(), 60_000);
    if (opened === "timeout" || opened.error) {
      throw new Error(`the server process did not open (${protocol}): ${cut(opened)}`);
    }
    stderrSeen = server.stderr.length;
    maker.useWorld(world);
    maker.observe(await present(world));
    say(
      `world ${worlds}: flavour ${flavour}, config ${config}, protocol ${protocol}, ` +
        `socket ${world.t.socket}`,
    );
  };

  try {
    await rebuild();
    let sinceWorld = 0;
    let replayed = 0;
    while (options.replay ? replayed < options.replay.length : calls < options.calls) {
      const w = world!, s = server!, c = client!;
      // The group: generated (arguments the schema refuses are not sent), or replayed.
      let group: FuzzCall[];
      if (options.replay) {
        const [world, spareThen] = options.replaySockets ?? [];
        const now = new Map([[world, w.t.socket], [spareThen, spare.socket]]);
        group = options.replay[replayed++].map((call) => renamed(call, now) as FuzzCall);
      } else {
        group = [];
        if (skipped > 20 * options.calls + 100) {
          throw new Error("the arguments made for these tools keep failing their input schemas");
        }
        const want = Math.min(options.concurrency, options.calls - calls);
        for (let k = 0; k < want; k++) {
          const tools = options.concurrency > 1
            ? pickable.filter((t) => t.name !== "kill_server")
            : pickable;
          const label = `argument set ${made++}`;
          if (moves.length && (tools.length === 0 || rand.chance(MOVE_SHARE))) {
            const spoken = moves.filter((m) =>
              !(c.protocol === "2026-07-28" ? LEGACY_ONLY : MODERN_ONLY).has(m)
            );
            const move = maker.move(rand.pick(spoken.length ? spoken : moves), label, c.taskIds);
            carriers.set(label, move);
            group.push(move);
            continue;
          }
          const tool = rand.pick(tools);
          let args = maker.argumentsFor(tool, label);
          if (!input.get(tool.name)!(args).valid) {
            skipped++;
            continue;
          }
          // Mostly a refusal to look at: a forced kill_server ends the world.
          if (tool.name === "kill_server" && !rand.chance(0.2)) args = { ...args, force: false };
          const task = maker.taskFor(tool.name);
          const call: FuzzCall = {
            tool: tool.name,
            arguments: args,
            ...task && { task },
            ...rand.chance(0.5) && { progress: true },
          };
          carriers.set(label, call);
          group.push(call);
        }
        if (group.length === 0) continue;
      }
      const at = calls;
      calls += group.length;
      sinceWorld += group.length;
      const brokenBefore = broken.length;
      const fail = (invariant: string, detail: unknown, which: FuzzCall[] = group) => {
        broken.push({
          invariant,
          at,
          calls: which,
          flavour: w.flavour,
          config: w.config,
          hookGuard,
          ownPanesOnly: fenced,
          ssh: options.ssh !== undefined,
          protocol: c.protocol,
          sockets: [w.t.socket, spare.socket],
          detail: cut(detail),
        });
        say(`BROKEN ${invariant} at call ${at}: ${cut(which, 300)}: ${cut(detail, 300)}`);
      };
      const note = (what: string) => {
        notes++;
        say(`note at call ${at}: ${what}`);
      };

      for (const call of group) stringsIn(call.arguments, "undefined", given);
      // The hook guard is asked first, as Claude Code asks it before it sends the call; a move
      // is asked nothing (it is no tool call), and must keep all the guard keeps.
      const move = isMove(group[0]);
      const guardSaid = hookGuard && !move ? await askGuard(w, group[0]) : undefined;
      if (guardSaid?.kind === "failed") {
        fail(`the hook guard failed (exit ${guardSaid.code})`, guardSaid.stderr);
      } else if (guardSaid?.kind === "asked") asked++;
      // What tmux itself would still do to a dead pane is done before the call is judged.
      await reapExited(w);
      const keptBefore = guardSaid?.kind === "passed" || (hookGuard && move)
        ? await keptView(w)
        : null;
      const foreignBefore = fenced ? await keptView(w, foreign, false) : null;
      const personBefore = hookGuard || fenced ? null : await personView(w);
      const agentBefore = hookGuard || fenced ? null : await agentView(w);
      const pidBefore = await serverPid(w);
      const sent = group.map((call) => c.run(call));
      const all = Promise.all(sent.map((x) => x.ended));
      let replies = await within(all, SLOW_MS);
      if (replies === "timeout") {
        if ((await within(c.request("ping"), PING_MS)) === "timeout") {
          fail("blocked: no ping answered while a call was slow", "");
        }
        replies = await within(all, HANG_MS);
        if (replies === "timeout") {
          fail("no answer", `none within ${HANG_MS} ms`);
          for (const x of sent) {
            await s.notify("notifications/cancelled", { requestId: x.id }).catch(() => {});
          }
        }
      }
      const succeeded = group.map(() => false);
      /** Calls answered that tmux may or may not have run their command (its connection lost). */
      const uncertain = group.map(() => false);
      /** Calls to the world's own server answered that it is gone, or went away under them. */
      const saidGone = group.map(() => false);
      const outcomes = group.map(() => "no answer");
      if (replies !== "timeout") {
        // Only an error that says "undefined" needs them (is it a name a call gave? A call of
        // the same group may have renamed or ended it since).
        const saysUndefined = (e: Ending) =>
          e.kind === "answer" && e.reply.result !== undefined &&
          textOf(e.reply.result as Json).includes("undefined");
        const names = replies.some(saysUndefined) ? [...await worldNames(w), ...given] : [];
        replies.forEach((ending: Ending, k: number) => {
          const call = group[k];
          if (isMove(call)) movesMade++;
          if (ending.kind !== "broken" && ending.how.startsWith("task")) tasks++;
          if (ending.kind === "broken") {
            outcomes[k] = ending.why;
            return fail(`${call.tool}: ${ending.why}`, "", [call]);
          }
          const how = ending.how ? ` (${ending.how})` : "";
          if (ending.kind === "cancelled") {
            outcomes[k] = `cancelled${how}`;
            return;
          }
          const reply: RpcMessage = ending.reply;
          if (isMove(call)) {
            if (!reply.error) {
              outcomes[k] = `done: ${cut(reply.result, 160)}`;
              return;
            }
            outcomes[k] = `refused: ${cut(reply.error.message, 160)}`;
            const why = badMoveError(reply.error, call.arguments);
            if (why) fail(`an unreadable refusal of ${call.tool} (${why})`, reply.error, [call]);
            return;
          }
          if (reply.error) return fail(`a JSON-RPC error${how}`, reply.error, [call]);
          const result = reply.result as Json;
          const text = textOf(result);
          outcomes[k] = `${result.isError ? "refused" : "done"}${how}: ` +
            cut(text.split("\n")[0], 160);
          if (result.isError) {
            uncertain[k] = /may or may not have run/.test(text);
            saidGone[k] = saysOwnServerGone(call, text);
            const why = badErrorText(text, call.arguments, names);
            if (why) fail(`an unreadable error (${why})`, text, [call]);
            if (result.structuredContent !== undefined) {
              fail("structured content on an error", result.structuredContent, [call]);
            }
            return;
          }
          succeeded[k] = true;
          maker.learn(result.structuredContent as Json | undefined);
          const valid = output.get(call.tool);
          const checked = valid?.(result.structuredContent);
          if (checked && !checked.valid) {
            fail("a result outside the output schema", {
              why: checked.errorMessage,
              structuredContent: result.structuredContent,
            }, [call]);
          }
          if (admitsBug(text)) fail("a result that admits a bug", text, [call]);
        });
      }

      // A hook set may act on any later call (and on the others of its group): one answered as
      // set, or as perhaps set (a hook tmux runs at once may end the server under the call).
      const done = (k: number) => succeeded[k] || uncertain[k] || replies === "timeout";
      const hooked = group.some((c, k) => setsHook(c) && done(k));
      // The person's own hook (their tmux.conf's after-kill-pane) may act on their window, as it
      // would after a kill of theirs: only what they see is excused for it, and only then.
      const viewHook = hooked
        ? "a hook set may have done it"
        : w.config === 1 && group.some((c, k) => killsPane(c) && done(k))
        ? "the person's after-kill-pane hook may have done it"
        : null;
      const pidAfter = await serverPid(w);
      // A server said gone (or gone under the call) that ran on throughout is a lie: a model
      // told so starts another, or takes what it did for undone.
      const goneSaid = group.filter((_, k) => saidGone[k]);
      if (pidBefore && pidAfter === pidBefore && goneSaid.length > 0) {
        fail("a call said its tmux server was gone, and it ran on", cut(replies, 400), goneSaid);
      }
      if (pidBefore && pidAfter !== pidBefore) {
        if (group.some((c, k) => mayEndServer(c, succeeded[k]))) {
          say(`the tmux server ended with call ${at}, as it may`);
        } else if (hooked) note("the tmux server ended; a hook set may have done it");
        else fail("the tmux server ended", { pidBefore, pidAfter, replies: cut(replies, 400) });
      }
      const personAfter = pidAfter ? await personView(w) : null;
      if (
        pidAfter && personBefore !== null && personAfter?.text !== personBefore.text &&
        !group.some(mayChangePersonView)
      ) {
        const ended = personAfter
          ? personBefore.windowPanes.filter((p) => !personAfter.windowPanes.includes(p))
          : [];
        if (viewHook) note(`the person's view changed; ${viewHook}`);
        else if (ended.length && group.some(types)) {
          note(
            `the person's view changed: ${ended.join(", ")} of their window ended when typed to`,
          );
        } else {
          fail(
            "the person's view changed",
            personAfter ? difference(personBefore.text, personAfter.text) : "the person is gone",
          );
        }
      }
      if (keptBefore && pidAfter) {
        const keptAfter = await keptView(w, [...keptBefore.panes.keys()]);
        const pane = keptPanesBroken(keptBefore, keptAfter, w.agentPane);
        const focus = pane ? null : focusBroken(keptBefore, keptAfter);
        const why = pane ?? focus ?? settingsBroken(keptBefore, keptAfter);
        if (why && viewHook) note(`${why}; ${viewHook}`);
        else if (focus && types(group[0])) note(`${focus}; a pane typed to may have ended`);
        else if (focus && keysPaneEnded(keptBefore, keptAfter)) {
          note(`${focus}; the pane they went to ended on its own (its program exited)`);
        } else if (why) fail("the hook guard passed a call that broke its promise", why);
      }
      if (foreignBefore && pidAfter) {
        const why = panesBroken(
          foreignBefore,
          await keptView(w, foreign, false),
          () => "a pane this server did not create",
        );
        if (why && (hooked || group.some(reachesTmux))) {
          note(`${why}; a call that reaches tmux or a shell by design may have done it`);
        } else if (
          why && w.config === 2 && / changed( \([^)]*\))?: /.test(why) && group.some(reshapes)
        ) {
          // Reshaping is not fenced, and with no history a shrink loses the rows it pushes off.
          note(`${why}; a reshape under history-limit 0 may have pushed rows off`);
        } else if (why) fail("a pane this server did not create was acted on", why);
      }
      if (pidAfter && agentBefore !== null) {
        const agentAfter = await agentView(w);
        if (agentAfter !== agentBefore && !group.some(mayTouchAgentPane)) {
          if (hooked) note("the agent's pane changed; a hook set may have done it");
          else fail("the agent's own pane changed", difference(agentBefore, agentAfter));
        }
      }
      for (const hit of await markers.hits()) {
        if (seenMarkers.has(hit)) continue;
        seenMarkers.add(hit);
        const carrier = carriers.get(/\((.*)\)$/.exec(hit)?.[1] ?? "");
        if (hooked || group.some(runsJobs) || (carrier && runsJobs(carrier))) {
          say(`marker ${hit} appeared, as a call asked`);
        } else fail("a #(...) job ran", { marker: hit, carrier }, carrier ? [carrier] : group);
      }
      const ping = await within(c.request("ping"), PING_MS);
      if (ping === "timeout") fail("no ping answered after the call", "");
      const stray = c.notificationProblems();
      if (stray) fail("a notification a client cannot take", stray);
      const logged = s.stderr.slice(stderrSeen);
      stderrSeen = s.stderr.length;
      // A log line shows a tab escaped too (call_log.ts's logLine).
      const raw = RAW_CONTROL.exec(logged) ?? /\t/.exec(logged);
      if (raw) {
        const at = Math.max(0, raw.index - 200);
        fail("raw control characters in the server's log (stderr)", logged.slice(at, at + 400));
      }

      if (broken.length === brokenBefore) held += group.length;
      const verdict = broken.length === brokenBefore ? "held" : "BROKE";
      group.forEach((c, k) =>
        say(`${verdict} #${at + k} ${c.tool} ${cut(c.arguments, 200)} -> ${outcomes[k]}`)
      );
      const gone = !pidAfter || personAfter === null || ping === "timeout";
      const more = options.replay ? replayed < options.replay.length : calls < options.calls;
      if (more && (gone || hooked || (!options.replay && sinceWorld >= WORLD_CALLS))) {
        await rebuild();
        sinceWorld = 0;
      } else {
        maker.observe(await present(w));
      }
    }
  } finally {
    await dispose();
    await markers.remove();
  }
  return { calls, held, skipped, notes, worlds, broken, asked, tasks, moves: movesMade };
}

/** Adds to `into` every string in `value` (however deep) that holds `word`. */
function stringsIn(value: unknown, word: string, into: Set<string>): void {
  if (typeof value === "string") {
    if (value.includes(word)) into.add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) stringsIn(item, word, into);
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) stringsIn(item, word, into);
  }
}
