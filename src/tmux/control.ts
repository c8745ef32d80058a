/**
 * Control mode's entry points: the {@link ServerControl} of each tmux server a runner reaches
 * (one set per runner, bounded across servers), the pid bookkeeping that lets go of clients
 * attached to a server that lost its socket, and commands run over the control channel when
 * it can carry them, else by starting tmux. The clients themselves live in control_server.ts
 * (what they share in control_clients.ts, their opening in control_opening.ts, their leaving
 * in control_leaving.ts, their bounds in control_limits.ts, who sits where in
 * control_seating.ts, what an operator is told in control_events.ts, their attach in
 * control_attach.ts, their turns to start and end in control_turns.ts), the watches and
 * listeners they carry in control_feeds.ts, one connection in control_connection.ts, the line
 * protocol in control_protocol.ts (its notifications in control_notifications.ts), the command
 * lines sent in command_line.ts.
 *
 * @module
 */

import { argvCommands, nestedCommands } from "./command_line.ts";
import { ALIAS_READ } from "./command_aliases.ts";
import { type ControlResult, ControlUnavailable } from "./control_protocol.ts";
import type { ControlEvent } from "./control_events.ts";
import { limitsOf } from "./control_limits.ts";
import { ServerControl } from "./control_server.ts";
import { CARRIES_OUTPUT_FORMAT, OWN_KIND_FORMAT } from "./identity.ts";
import { randomHex } from "./format.ts";
import { onServerFormat } from "./server_identity.ts";
import { changesStructure } from "./structure.ts";
import type { RunOptions, TmuxRunner } from "./run.ts";
import { classifyStderr, judgeResult, TmuxError } from "./tmux_error.ts";
import { addressKey, type ServerAddress } from "./server_address.ts";

export { argvCommands, controlLine, quoteArgument, quoteNested } from "./command_line.ts";
export { type ControlResult, ControlUnavailable } from "./control_protocol.ts";
export { unescapeOutput } from "./control_notifications.ts";

const servers = new WeakMap<TmuxRunner, Map<string, ServerControl>>();
const observers = new WeakMap<TmuxRunner, Set<(event: ControlEvent) => void>>();

/**
 * Calls `observer` with every {@link ControlEvent} of the control channels `runner` carries
 * (any tmux server); returns a function that stops it.
 */
export function observeControl(
  runner: TmuxRunner,
  observer: (event: ControlEvent) => void,
): () => void {
  let set = observers.get(runner);
  if (!set) observers.set(runner, set = new Set());
  set.add(observer);
  return () => set.delete(observer);
}

/**
 * The control connections of the server at `address`, one set per runner (so one per MCP
 * server process); closed when the runner closes.
 */
export function controlFor(runner: TmuxRunner, address: ServerAddress): ServerControl {
  let byAddress = servers.get(runner);
  if (!byAddress) {
    const map = new Map<string, ServerControl>();
    byAddress = map;
    servers.set(runner, map);
    // Structural commands, however they travel, count what tmux owes these clients.
    runner.structureGuard = (address, args, send, signal) => {
      const control = map.get(addressKey(address));
      return control ? control.structural(args, send, signal) : send();
    };
    // The read of a server's aliases goes over its control client when one is attached, else
    // in a tmux process of its own: it never waits for a client's opening (which may wait
    // for it).
    runner.aliasReader = (address, options) =>
      map.get(addressKey(address))?.attached
        ? execFast(runner, address, ALIAS_READ, options)
        : runner.exec(address, ALIAS_READ, options);
    runner.onClose(async () => {
      await Promise.allSettled([...map.values()].map((s) => s.close()));
      map.clear();
      await Promise.allSettled(retiring.get(runner)?.values() ?? []);
    });
  }
  const map = byAddress;
  const key = addressKey(address);
  let control = map.get(key);
  if (!control) {
    let ending = retiring.get(runner);
    if (!ending) retiring.set(runner, ending = new Map());
    const endings = ending;
    const made: ServerControl = new ServerControl(runner, address, {
      report: (event) => {
        for (const observer of [...observers.get(runner) ?? []]) {
          try {
            observer(event);
          } catch {
            // An observer's failure is its own.
          }
        }
      },
      opened: () => boundServers(runner, map),
      retired: (gone) => {
        if (map.get(key) === made) map.delete(key);
        endings.set(key, gone);
        gone.then(() => {
          if (endings.get(key) === gone) endings.delete(key);
        });
      },
      ending: endings.get(key),
    });
    control = made;
    map.set(key, control);
  }
  return control;
}

/**
 * Runs `act`, a respawn of `paneId` on the server at `address`, so that no control client
 * holds a stale place in the pane's output as it runs. tmux releases before the fix of August
 * 2026 (tmux/tmux#5499; 3.3a here) crash at a respawned pane's next output when a control
 * client holds a place in that pane's output it has not caught up with, and a client holds
 * one for good when the pane died with output not yet sent to it (tmux sends a dead pane
 * nothing more) or when the pane's window left the client's session; a busy pane shown to a
 * client has output queued for it at almost any instant. Every control client that carries
 * output (a person's `tmux -CC`, iTerm2's integration; a program's `tmux -C`; ours for
 * watches, and another tmux-mcp process's) stays attached: `act` is given the commands that
 * move each one's place in the pane's output up to where tmux has read it, to run on the
 * respawn's own line right before it ({@link placeResets}). A client that left in between
 * fails its command, and with it the line, before the respawn: the clients are read again and
 * `act` runs again (three tries). No client for watches of ours attaches meanwhile
 * ({@link ServerControl.holdWatchOpenings}): one attached after the read would be missed.
 */
export async function withPlaceResets<T>(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  act: (resets: string[][]) => Promise<T>,
): Promise<T> {
  const run = async (): Promise<T> => {
    for (let attempt = 1;; attempt++) {
      const resets = await placeResets(runner, address, paneId);
      try {
        return await act(resets);
      } catch (error) {
        const clientLeft = error instanceof TmuxError && /can't find client/.test(error.message);
        if (!clientLeft || resets.length === 0 || attempt === 3) throw error;
      }
    }
  };
  const control = servers.get(runner)?.get(addressKey(address));
  return control ? await control.holdWatchOpenings(run) : await run();
}

/** How long a respawn waits for tmux to list its clients ({@link placeResets}). */
const PLACES_READ_MS = 2_000;

/**
 * The commands that bring the place in `paneId`'s output of every control client carrying
 * output up to where tmux has read the pane, so a respawn finds none behind. Where the client's
 * session does not hold the pane (iTerm2 with windows parked in another session: the case
 * upstream's report met), `refresh-client -A <pane>:off` then `:on`: tmux 3.3a copies the
 * pane's offset into the client's as it turns the pane back on, and the client, shown nothing
 * of that pane, notices nothing; tmux then keeps what the pane prints for that client, as it
 * does for a pane whose window left a client's session, until the client is shown it (a
 * person's client, which may be shown it later, must get it then). A tmux-mcp client's pane
 * stays off instead. Where its session holds the pane, tmux may have the pane's output queued
 * for it (a busy pane: always), and turning the pane off and on then crashes tmux 3.3a itself;
 * `:pause` then `:continue` drops what is queued and moves the place up, and tells
 * the client so (`%pause`, `%continue`, as tmux's own `pause-after` does). Throws a
 * {@link TmuxError} when the clients cannot be read (a stalled server, one that went away): a
 * respawn without the resets could crash tmux, so none runs.
 */
export async function placeResets(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
): Promise<string[][]> {
  const shows = `#{W:#{P:#{?#{==:#{pane_id},${paneId}},1,}}}`;
  let listed: Uint8Array;
  try {
    listed = judgeResult(
      await runner.exec(address, [
        "list-clients",
        "-F",
        `#{client_name}\t${CARRIES_OUTPUT_FORMAT}\t${shows}\t${OWN_KIND_FORMAT}`,
      ], { timeoutMs: PLACES_READ_MS }),
    );
  } catch (error) {
    if (!(error instanceof TmuxError) || error.kind === "no-server") throw error;
    throw new TmuxError(
      error.kind,
      `${error.message} ${paneId} was not respawned: tmux's clients could not be read, and a ` +
        "control client left behind in the pane's output would crash tmux 3.3a at the respawn.",
      error.stderr,
    );
  }
  return new TextDecoder().decode(listed).split("\n")
    .map((line) => line.split("\t"))
    .filter(([name, carries]) => name !== "" && carries === "1")
    .flatMap(([name, , held, own]) => {
      const reset = (how: string) => ["refresh-client", "-t", name, "-A", `${paneId}:${how}`];
      if (held !== "") return [reset("pause"), reset("continue")];
      // Turned on again, a place in a pane the client's session does not show never moves: tmux
      // keeps all the pane prints from then on for it. A tmux-mcp client's stays off (no held
      // output, no stale place); its watch turns the pane on should its session come to show it
      // (ServerControl.watch).
      return own === "1" ? [reset("off")] : [reset("off"), reset("on")];
    });
}

/**
 * A tmux process started for `address` found the server with `pid` on its socket: control
 * clients attached to another server are let go ({@link ServerControl.onSocket}). Returns the
 * pid they were attached to when they were, else null. Makes no record where there is none.
 */
export async function noteSocketServer(
  runner: TmuxRunner,
  address: ServerAddress,
  pid: number,
): Promise<number | null> {
  return await servers.get(runner)?.get(addressKey(address))?.onSocket(pid) ?? null;
}

/**
 * The pid of the server on `address`'s socket now, asked by a tmux process of its own, which
 * reaches whatever server the socket's path leads to (the control clients may be attached to
 * one that lost its socket file); null when none answers there. Control clients attached to
 * another server are let go ({@link noteSocketServer}). Costs a process start (a few
 * milliseconds): for reports on the server itself, never for every call.
 */
export async function socketServerPid(
  runner: TmuxRunner,
  address: ServerAddress,
  options: RunOptions = {},
): Promise<number | null> {
  const result = await runner.exec(address, ["display-message", "-p", "#{pid}"], options);
  const stderr = result.stderr.trim();
  if (result.code !== 0) {
    const kind = classifyStderr(stderr);
    if (kind === "no-server") return null;
    throw new TmuxError(kind, stderr.split("\n")[0] || "tmux failed", stderr);
  }
  const pid = Number(new TextDecoder().decode(result.stdout).trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new TmuxError("failed", "tmux printed no server pid", stderr);
  }
  await noteSocketServer(runner, address, pid);
  return pid;
}

/** Per runner, the clients of retired server records still ending, by address key. */
const retiring = new WeakMap<TmuxRunner, Map<string, Promise<void>>>();

/**
 * Beyond {@link ControlLimits} `maxServers` servers other than the home one with control
 * clients, the least recently used that nothing needs lets its clients go.
 */
function boundServers(runner: TmuxRunner, map: Map<string, ServerControl>): void {
  const { maxServers } = limitsOf(runner);
  const live = [...map.values()].filter((s) => !s.home && s.connections > 0)
    .sort((a, b) => a.lastUsed - b.lastUsed);
  let over = live.length - maxServers;
  for (const server of live) {
    if (over <= 0) break;
    if (server.busy) continue;
    server.retire();
    over--;
  }
}

/** {@link RunOptions} for a command that travels over the control channel when it can. */
export interface ViaOptions extends RunOptions {
  /**
   * The pid of the server the caller read (null: none read). Should the command start tmux
   * instead, it runs only if that is the server there: a tmux process goes wherever the
   * socket's path leads, which after the socket file was replaced is another server than the
   * control clients reach.
   */
  readonly serverPid?: number | null;
  /**
   * When that server started (`#{start_time}`), checked with its pid when given: a server
   * restarted in a pid namespace of its own (a container) has the same pid again.
   */
  readonly serverStart?: number | null;
}

/**
 * Runs a command that must not run twice (typing, pasting) over the control channel when it
 * can carry it, else by starting tmux. If the connection is lost after the command was sent,
 * it is not repeated: that is reported as a failure, since tmux may or may not have run it.
 */
export function execOnce(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: ViaOptions = {},
): Promise<ControlResult> {
  return execVia(runner, address, args, options, false);
}

/**
 * Runs a read-only or idempotent command over the control channel when it can carry it,
 * else by starting tmux: the same result either way. (A command the channel lost half way
 * is run again by spawning, hence: only commands that may safely run twice.)
 */
export function execFast(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: ViaOptions = {},
): Promise<ControlResult> {
  return execVia(runner, address, args, options, true);
}

/**
 * Runs a read-only command over the control channel only, for a caller that needs what only
 * the channel tells ({@link ControlResult.ends}: where each command's output ends). Null when
 * the channel cannot carry it, or lost it on the way: the caller then starts tmux its own way.
 * An answer past `options.answerBound` throws `AnswerPastBound` (tmux_error.ts).
 */
export async function execOverControl(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: RunOptions = {},
): Promise<ControlResult | null> {
  if (runner.closed || !runner.control || changesStructure(args)) return null;
  try {
    return await controlFor(runner, address).exec(args, options);
  } catch (error) {
    if (error instanceof ControlUnavailable) return null;
    throw error;
  }
}

async function execVia(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: ViaOptions,
  mayRepeat: boolean,
): Promise<ControlResult> {
  // One at a time with every other structural command (structure.ts): answered, over the
  // control connection or by a tmux process of its own, before the next is sent.
  if (!options.inStructureLane && changesStructure(args)) {
    return await runner.inStructureLane(
      address,
      () => execVia(runner, address, args, { ...options, inStructureLane: true }, mayRepeat),
      options.signal,
    );
  }
  if (!runner.closed && runner.control) {
    try {
      const control = controlFor(runner, address);
      return await runner.aroundStructure(
        address,
        args,
        () => control.exec(args, options),
        options.signal,
      );
    } catch (error) {
      if (!(error instanceof ControlUnavailable)) throw error;
      if (error.sent && !mayRepeat) {
        throw new TmuxError(
          "failed",
          "The connection to tmux was lost while the command was on its way; it may or may not have run.",
        );
      }
    }
  }
  return await execSpawned(runner, address, args, options);
}

/**
 * Runs `args` in a tmux process of its own; with `serverPid`, only if the server the socket
 * leads to is that one ({@link execOnServer}): a tmux process goes wherever the socket's path
 * leads, which after the socket file was replaced is another server than the caller read.
 */
export async function execSpawned(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: ViaOptions = {},
): Promise<ControlResult> {
  const pid = options.serverPid ?? null;
  return pid === null
    ? await runner.exec(address, args, options)
    : await execOnServer(runner, address, args, options, pid, options.serverStart ?? null);
}

/**
 * Starts tmux for `args`, run only if the server there is the one with `pid` (and start time
 * `start`, when known), checked by tmux in the same step (`if-shell -F`). Another server there
 * (the socket replaced since the caller read it, or the server restarted) runs nothing:
 * control clients attached to another server than that one are let go
 * ({@link noteSocketServer}) and the call fails, saying so.
 */
async function execOnServer(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: RunOptions,
  pid: number,
  start: number | null,
): Promise<ControlResult> {
  const { line, marker } = onServerLine(args, pid, start);
  const result = await runner.exec(address, line, options);
  const out = new TextDecoder().decode(result.stdout);
  const at = out.indexOf(marker);
  if (at === -1) return result;
  throw await otherServer(runner, address, pid, out.slice(at + marker.length));
}

/**
 * The `if-shell -F` line that runs `args` only on the server with `pid` (and start time `start`,
 * when known); on another it prints `marker` and that server's pid instead.
 */
function onServerLine(
  args: readonly string[],
  pid: number,
  start: number | null,
): { line: string[]; marker: string } {
  const marker = `tmux-mcp-other-server-${randomHex(8)}:`;
  // As an if-shell branch: each argument quoted, a newline travelling as "\n".
  const nested = nestedCommands(argvCommands(args));
  const line = [
    "if-shell",
    "-F",
    start === null ? `#{==:#{pid},${pid}}` : onServerFormat({ pid, startTime: start }),
    nested,
    `display-message -p '${marker}#{pid}'`,
  ];
  return { line, marker };
}

/**
 * {@link execSpawned} for an answer read as it streams, never held whole: `sink` gets it chunk by
 * chunk (a chunk is valid during its call), then the status is judged. With `serverPid`, what
 * another server there printed (its marker and pid) never reaches `sink`: the bytes that could
 * begin that marker are held until they cannot.
 */
export async function streamSpawned(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  sink: (chunk: Uint8Array) => void,
  options: ViaOptions = {},
): Promise<void> {
  const pid = options.serverPid ?? null;
  if (pid === null) {
    judgeResult({
      ...await runner.stream(address, args, sink, options),
      stdout: new Uint8Array(0),
    });
    return;
  }
  const { line, marker } = onServerLine(args, pid, options.serverStart ?? null);
  const head = new TextEncoder().encode(marker);
  /** Bytes of the marker the answer began with; past them it is the command's own. */
  let matched = 0;
  let own = false;
  const after: number[] = [];
  const result = await runner.stream(address, line, (chunk) => {
    if (own) return sink(chunk);
    let i = 0;
    while (i < chunk.length && matched < head.length && chunk[i] === head[matched]) {
      i++;
      matched++;
    }
    if (matched === head.length) {
      // Another server's answer: its pid, a few bytes.
      if (after.length < 64) after.push(...chunk.subarray(i, i + 64 - after.length));
    } else if (i < chunk.length) {
      own = true;
      if (matched > 0) sink(head.subarray(0, matched));
      sink(chunk.subarray(i));
    }
  }, options);
  if (matched === head.length) {
    throw await otherServer(runner, address, pid, new TextDecoder().decode(new Uint8Array(after)));
  }
  // An answer shorter than the marker, all of it the marker's first bytes.
  if (!own && matched > 0) sink(head.subarray(0, matched));
  judgeResult({ ...result, stdout: new Uint8Array(0) });
}

/**
 * The failure of a command line that found another server than `pid` on the socket (`said`:
 * what that server printed after the marker, its pid first), that server noted.
 */
async function otherServer(
  runner: TmuxRunner,
  address: ServerAddress,
  pid: number,
  said: string,
): Promise<TmuxError> {
  const now = Number(/^\d*/.exec(said)![0]);
  await noteSocketServer(runner, address, now).catch(() => {});
  return new TmuxError(
    "failed",
    `The tmux server on this socket changed since this call read it (${
      now === pid ? `restarted with the same pid, ${pid}` : `pid ${pid} then, ${now} now`
    }); nothing was done. Call again: it reads the server there now, where the ids read ` +
      "before may name other panes, windows and sessions.",
  );
}
