/**
 * The one place that starts tmux processes.
 *
 * Everything goes through {@link TmuxRunner}: argv only (never a shell), all three stdio
 * streams explicit (an inherited stdout would corrupt the JSON-RPC stream), a timeout and an
 * AbortSignal that kill the child, a bound on how many tmux processes run at once, and typed
 * errors that tell a missing server from a missing target from any other failure.
 *
 * One import below: which server a call reaches (server_address.ts), what its failure is and
 * how a result is judged (tmux_error.ts), each server's waiting lines (server_turns.ts), what a
 * call on an SSH host needs beyond a local one (remote_call.ts), and the reading of a child's
 * answer (child_answer.ts) under the bounded read of its pipes (pipe_read.ts).
 *
 * @module
 */

import { SSH_ENV, SshHosts, type SshOptions, withinCallTime } from "./ssh.ts";
import { RemoteGate, stderrAfterMarker, streamAfterMarker } from "./ssh_wire.ts";
import { argvAnswer, asCommandFile } from "./command_file.ts";
import { spawnChild } from "./guarded_env.ts";
import { changesStructure } from "./structure.ts";
import { cancelledCall, judgeResult, notInstalled, refuseNul, TmuxError } from "./tmux_error.ts";
import { addressKey, type ServerAddress } from "./server_address.ts";
import { MAX_ANSWER_BYTES } from "./pipe_read.ts";
import { ServerGates, StructureLanes } from "./server_turns.ts";
import { reachHost, tmuxCommand } from "./remote_call.ts";
import { inSession } from "./ssh_sessions.ts";
import { collectAnswer, streamAnswer } from "./child_answer.ts";
import { TIED_FLAG, unframeTied } from "./tied_client.ts";
import { ALIAS_READ, AliasBook, aliasListing } from "./command_aliases.ts";
import { type CloseDeadline, CloseHooks } from "./runner_close.ts";
import { HandshakeHolds, onlyReads, type Release } from "./handshake_hold.ts";

/** Options for one tmux invocation. */
export interface RunOptions {
  /** Kill the child after this many milliseconds (default: the runner's). */
  readonly timeoutMs?: number;
  /** Kill the child when this aborts. */
  readonly signal?: AbortSignal;
  /**
   * Stops the call while it waits to start (its turn, the structure lane, an SSH connection),
   * but not tmux once it has the command line: for a step that must not be cut short by the
   * call's cancellation (tmux drops the rest of a line whose client is gone, and what the line
   * already made would go unreported). The timeout, {@link signal} and the runner's close still
   * stop it.
   */
  readonly untilStarted?: AbortSignal;
  /**
   * A read repeated for as long as something waits (a polling wait's): its tmux process starts
   * only once no other call waits for one, and never takes the last free turn, so a one-off
   * call is not held up behind hundreds of them (server_turns.ts). Over a control connection
   * it waits for one of the few turns background commands have there (control_server.ts).
   */
  readonly background?: boolean;
  /**
   * Bytes to write to tmux's stdin (default: none, stdin is /dev/null). On an SSH host, written
   * only once the remote shell's start-up files are done (the marker came): one that reads its
   * input would take them first. A start-up file that waits on its input then fails the call at
   * its timeout, saying so, with nothing sent.
   */
  readonly stdin?: Uint8Array;
  /**
   * Set by a caller that already holds the structure lane for this command
   * ({@link TmuxRunner.inStructureLane}), so that it is not waited for twice.
   */
  readonly inStructureLane?: boolean;
  /**
   * Runs tmux as a control-mode client (`-C`, no session) whose stdin stays open, written to by
   * nobody, until it ends: tmux ends such a client itself once its stdin reaches end of file,
   * which happens when this process goes, however it goes (SIGKILL runs no handler). So a
   * command that blocks its client (`wait-for`) never outlives the process that wanted it, as
   * a plain client would until tmux woke it. The answer is unframed into what a plain client
   * gives (tied_client.ts). For a short line whose output no pane controls; not with
   * {@link stdin}.
   */
  readonly tiedToProcess?: boolean;
  /**
   * Not checked against a person's `command-alias` ({@link TmuxRunner.checkAliases}): the
   * read of the aliases itself, and the control machinery's own reads (a client's opening, a
   * lost client's check).
   */
  readonly aliasUnchecked?: boolean;
  /**
   * The most bytes this call's collected answer may hold (default: the runner's bound,
   * {@link MAX_ANSWER_BYTES}). Past it the call fails with `AnswerPastBound` (tmux_error.ts),
   * nothing kept: over a control connection the rest is read into nothing and the connection
   * carries on; a tmux process of its own is stopped. For a read of rows whose size is not
   * known before (a cell of combining marks prints up to 21 bytes), which is then read
   * another way.
   */
  readonly answerBound?: number;
}

/**
 * Runs `send`, a structural command (`args`) for the server at `address`, with what that needs
 * around it ({@link TmuxRunner.structureGuard}).
 */
export type StructureGuard = <T>(
  address: ServerAddress,
  args: readonly string[],
  send: () => Promise<T>,
  signal?: AbortSignal,
) => Promise<T>;

/** What the runner needs to know once, at construction. */
export interface RunnerOptions {
  /** The tmux executable: a name looked up on PATH, or an absolute path. */
  readonly binary?: string;
  /** Default timeout per call in milliseconds. */
  readonly timeoutMs?: number;
  /**
   * How many tmux processes may run at once for one tmux server; further calls to it wait
   * their turn. Per server, so one that stops answering holds up only its own calls.
   */
  readonly maxConcurrent?: number;
  /**
   * Whether read commands may travel over a control-mode connection (default true). Off, every
   * command starts a tmux process: for tests that count processes, and as a fallback switch.
   */
  readonly control?: boolean;
  /** SSH destinations a {@link ServerAddress} may name (`--ssh`); without, `ssh` never runs. */
  readonly ssh?: SshOptions;
  /**
   * Most bytes a collected (not streamed) answer may hold, stdout (default
   * {@link MAX_ANSWER_BYTES}); stderr may hold a sixteenth of it. For tests.
   */
  readonly maxAnswerBytes?: number;
}

/**
 * A long-lived tmux child, such as a control-mode client (`tmux -C attach`): its stdin and
 * stdout are the channel, its stderr is kept for diagnostics. It is killed when the runner
 * closes, like every other child.
 */
export interface PersistentChild {
  /** Where commands go. */
  readonly stdin: WritableStream<Uint8Array>;
  /** What tmux answers; must be read continuously or tmux stalls on a full pipe. */
  readonly stdout: ReadableStream<Uint8Array>;
  /** tmux's complaints, if any; read it or cancel it. */
  readonly stderr: ReadableStream<Uint8Array>;
  /** Resolves when the child has exited. */
  readonly status: Promise<Deno.CommandStatus>;
  /**
   * Resolves once tmux itself runs: at once on this machine; on an SSH host, once the remote
   * shell has run its start-up files and handed over to tmux (its marker came, ssh_wire.ts),
   * which may take seconds, and a control-mode client was let go there (ssh_wire.ts's
   * RemoteGate, once its handshake's hold is taken). Never, for a child that never gets there
   * (its stdout then ends, or it was killed first).
   */
  readonly reached: Promise<void>;
  /**
   * Kills the child (no-op once it has exited): SIGTERM, or SIGKILL for an SSH host's
   * control-mode client not yet let go (no tmux runs at its other end).
   */
  kill(): void;
  /**
   * Tells the runner that tmux has answered this control-mode client (its first byte): its
   * handshake is over, and the acts of ours held back meanwhile go (handshake_hold.ts).
   */
  answered(): void;
  /**
   * Takes an act's turn on this client's server (handshake_hold.ts): a command sent over it,
   * or its own end. Rejects when `signal` aborts first.
   */
  act(signal?: AbortSignal): Promise<Release>;
}

/** Default per-call timeout: long enough for a loaded machine, short enough to never hang a tool. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * How long an SSH host's long-lived child's pipes stay open after its ssh exited (see
 * {@link TmuxRunner.spawnPersistent}): the host's master hands on what it still has well within
 * it, and a remote command that never ends holds them no longer.
 */
const REMOTE_DRAIN_MS = 1_000;

/** Servers whose `command-alias` a runner keeps a reading of, the latest called (see checkAliases). */
const ALIAS_SERVERS = 16;

/**
 * Starts tmux processes on behalf of everything above it. One instance per server process;
 * it counts the children it has running so a test (or a shutdown) can prove none is left.
 */
export class TmuxRunner {
  /** The tmux executable this runner starts. */
  readonly binary: string;
  /** Whether commands may travel over control-mode connections (see {@link RunnerOptions}). */
  readonly control: boolean;
  readonly #timeoutMs: number;
  readonly #maxAnswerBytes: number;
  /** Per server, its processes' gate (see {@link RunnerOptions.maxConcurrent}). */
  readonly #gates: ServerGates;
  readonly #closing = new AbortController();
  readonly #hooks = new CloseHooks();
  readonly #ssh: SshHosts | null;
  /**
   * The server this process was started for (`--socket`, `--socket-path`, or tmux's default):
   * its control client for commands stays for the life of the process (the fast path), where
   * those of servers reached by a call's own socket leave when idle (control_server.ts). Null: none.
   */
  home: ServerAddress | null = null;
  /** Per server, the structural commands' turns (see {@link inStructureLane}). */
  readonly #lanes = new StructureLanes();
  /**
   * Runs around every structural command, however it travels: set by control.ts, which counts
   * the notices tmux still owes this process's control clients (owed_notices.ts). Null: none.
   */
  structureGuard: StructureGuard | null = null;
  /**
   * Reads a server's `command-alias` entries ({@link ALIAS_READ}): set by control.ts to read
   * over a control client already attached there; by a tmux process of its own otherwise. It
   * never waits for a client to open, whose opening may itself wait for the read.
   */
  aliasReader: (address: ServerAddress, options: RunOptions) => Promise<
    { code: number; stdout: Uint8Array; stderr: string }
  > = (address, options) => this.exec(address, ALIAS_READ, options);
  /** Per server, its aliases as last read (command_aliases.ts). */
  readonly #aliases = new Map<string, AliasBook>();

  /** The servers whose `command-alias` this runner keeps a reading of (for tests). */
  get aliasServers(): number {
    return this.#aliases.size;
  }
  /**
   * Per server, our control clients' handshakes and the acts of ours held back during one
   * (handshake_hold.ts): every command on a control connection, and every tmux process of ours
   * but those that only read.
   */
  readonly handshakes = new HandshakeHolds(cancelledCall);
  #running = 0;

  /** Builds a runner; nothing is started until {@link run}. */
  constructor(options: RunnerOptions = {}) {
    this.binary = options.binary ?? "tmux";
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#gates = new ServerGates(options.maxConcurrent ?? 8);
    this.#maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
    this.control = options.control ?? true;
    this.#ssh = options.ssh && options.ssh.destinations.length > 0
      ? new SshHosts(options.ssh, (args) => this.#spawnSsh(args))
      : null;
  }

  /** The SSH destinations configured (`--ssh`), exactly as given; empty without. */
  get hosts(): readonly string[] {
    return this.#ssh?.destinations ?? [];
  }

  /** Starts a master `ssh` for ssh.ts; it counts as a child and dies with the runner. */
  #spawnSsh(args: readonly string[]): Deno.ChildProcess {
    if (this.#closing.signal.aborted) {
      throw new TmuxError("cancelled", "The server is shutting down.");
    }
    const child = spawnChild("ssh", {
      args: [...args],
      env: { ...SSH_ENV },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      signal: this.#closing.signal,
    });
    this.#running++;
    child.status.finally(() => this.#running--);
    return child;
  }

  /**
   * A tool call begins: the next command line for the server at `address` reads its
   * `command-alias` again first (tmux tells no client when an option changes).
   */
  aliasesMayHaveChanged(address: ServerAddress): void {
    this.#aliases.get(addressKey(address))?.stale();
  }

  /**
   * Throws {@link AliasShadow} (nothing sent) when a person's `command-alias` entry takes a
   * command name that `args` (or `sent`, what goes with them) hands tmux: tmux would run the
   * alias in its place (command_aliases.ts). Reads the aliases first when no read is current.
   */
  async checkAliases(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions,
    sent: readonly string[] = [],
  ): Promise<void> {
    if (options.aliasUnchecked) return;
    const key = addressKey(address);
    // The servers called most lately first kept: a long life's many socket_names (most with no
    // server) keep no book for good; one dropped is read again when called again.
    const book = this.#aliases.get(key) ?? new AliasBook();
    this.#aliases.delete(key);
    this.#aliases.set(key, book);
    if (this.#aliases.size > ALIAS_SERVERS) {
      this.#aliases.delete(this.#aliases.keys().next().value as string);
    }
    // Shared by every call checking meanwhile: the read carries none's cancellation, only the
    // runner's close and its bound; each call waits for it with its own signal.
    await book.check(
      args,
      async () => {
        const result = await this.aliasReader(address, {
          timeoutMs: options.timeoutMs,
          aliasUnchecked: true,
        });
        return aliasListing(result);
      },
      sent,
      options.signal,
    );
  }

  /**
   * Runs `fn` once every structural command sent to the same server before it has been
   * answered, and holds the next until `fn` settles: tmux then never reads a change of a
   * session's current window and the end of that session in one pass of its command loop,
   * which kills the tmux server while a control client is attached (structure.ts). Commands
   * that change no structure never wait here. Cancelled while waiting, it throws without
   * running `fn`.
   */
  async inStructureLane<T>(
    address: ServerAddress,
    fn: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    return await this.#lanes.take(address, fn, signal);
  }

  /**
   * Runs `send`, which sends `args` to the server at `address`, through the
   * {@link structureGuard} when `args` may change structure; `send` alone otherwise.
   */
  async aroundStructure<T>(
    address: ServerAddress,
    args: readonly string[],
    send: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const guard = this.structureGuard;
    if (guard === null || !changesStructure(args)) return await send();
    return await guard(address, args, send, signal);
  }

  /** How many tmux children are alive right now. */
  get running(): number {
    return this.#running;
  }

  /**
   * Kills every tmux child still running and refuses new calls: a server shutting down must
   * leave no tmux process behind. The close hooks (a control connection's goodbye, a leftover's
   * undo: two tmux processes of its own) and those begun early ({@link beginClose}) are waited
   * for first — what they give back is a person's setting, worth the wait on a loaded machine —
   * then the children are killed and waited for until they are gone. `within`: a wait in ms for
   * each of the two steps, or the deadline of each (runner_close.ts); a process that must end
   * within a second gives a deadline, so that the steps' waits do not add up past it.
   */
  async close(within: number | CloseDeadline = 1_000): Promise<void> {
    // Long-lived users (control connections) first get the chance to end their children
    // gracefully; whatever is still running after that is killed by the abort below.
    if (!this.#closing.signal.aborted) await this.#hooks.run(within);
    const by = typeof within === "number" ? () => performance.now() + within : () => within.by;
    // The SSH connections last: an undo begun early (beginClose) travels over one.
    if (this.#ssh) await this.#ssh.close(Math.max(0, (by() - performance.now()) / 4));
    this.#closing.abort();
    const until = by();
    while (this.#running > 0 && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /**
   * Starts the hooks registered with {@link onCloseBegins}, once, as soon as the process knows
   * it is to stop (before it answers its last calls), and {@link close} waits for them up to
   * BEGUN_CLOSE_MS after that moment (runner_close.ts), or up to its deadline. For an undo on an SSH host
   * (leftovers.ts): its tmux starts in a new session there, whose remote shell reads its
   * start-up files first (a slow one takes a second), where a local tmux starts in
   * milliseconds.
   */
  beginClose(): { settled: Promise<unknown> | null; at: number } {
    return this.#hooks.begin();
  }

  /**
   * Registers `hook` to run when the close begins ({@link beginClose}): while the last answers
   * are written, and before any connection closes. Returns an unregister function.
   */
  onCloseBegins(hook: () => Promise<void>): () => void {
    return this.#hooks.onBegin(hook);
  }

  /** Whether {@link close} has been called: no new child may start. */
  get closed(): boolean {
    return this.#closing.signal.aborted;
  }

  /**
   * Registers `hook` to run at the start of {@link close}, before children are killed: for
   * owners of long-lived children that want to end them cleanly. Returns an unregister
   * function.
   */
  onClose(hook: () => Promise<void>): () => void {
    return this.#hooks.onClose(hook);
  }

  /**
   * Starts a long-lived `tmux <address flags> <args>` (a control-mode client) with all three
   * streams piped. It does not take a slot of the concurrency bound (it would hold it for
   * ever) but counts in {@link running}, and the runner's close kills it. On an SSH host it
   * starts once the host's connection is up, as a one-shot call does. `env`: variables set for
   * tmux on top of this process's (on an SSH host, on top of what its shell gives a command).
   */
  async spawnPersistent(
    address: ServerAddress,
    args: readonly string[],
    env: Readonly<Record<string, string>> = {},
  ): Promise<PersistentChild> {
    refuseNul([...args, ...Object.values(env)]);
    if (address.host !== undefined) {
      await reachHost(this.#ssh, address, withinCallTime([this.#closing.signal], this.#timeoutMs));
    }
    if (this.#closing.signal.aborted) {
      throw new TmuxError("cancelled", "The server is shutting down.");
    }
    let child: Deno.ChildProcess;
    const key = addressKey(address);
    const control = args[0] === TIED_FLAG;
    const marker = address.host === undefined ? null : this.#ssh!.marker;
    // On a host, a control-mode client's tmux waits there for its go (ssh_wire.ts), given once
    // the remote shell's start-up files are done: its handshake's hold is taken then, not
    // across them (they may take seconds).
    const gated = control && marker !== null;
    const [program, argv, childEnv] = tmuxCommand(
      this.binary,
      this.#ssh,
      address,
      args,
      env,
      gated,
    );
    // On a host, a session of its connection for as long as it lives: none when it would leave
    // no room for one-shot calls (ssh_sessions.ts); told to go when the host refuses those.
    let end = () => {};
    const release = address.host === undefined
      ? () => {}
      : this.#ssh!.sessions(address.host).takeLasting(() => end());
    if (release === null) {
      throw new TmuxError(
        "failed",
        `Host ${JSON.stringify(address.host)}: no SSH session to spare there for a long-lived ` +
          "tmux client (ssh_sessions.ts).",
      );
    }
    // A control-mode client's handshake holds our other acts on its server back until tmux
    // has answered it (handshake_hold.ts). Any other (a plain `wait-for`, which changes
    // nothing tmux tells while it waits) only waits for a handshake under way to end.
    let held: Release = () => {};
    if (!gated) {
      try {
        held = await (control ? this.handshakes.start(key) : this.handshakes.act(key));
      } catch (error) {
        release();
        throw error;
      }
    }
    try {
      child = spawnChild(program, {
        args: argv,
        env: childEnv,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        signal: this.#closing.signal,
      });
    } catch (error) {
      held();
      release();
      throw notInstalled(program, error);
    }
    if (!control) held();
    const gate = gated ? new RemoteGate(child.stdin) : null;
    // Cut once a child killed outright has exited: its pipes, which the host's master holds,
    // would stay open until the remote start-up files end (ssh_wire.ts's streamAfterMarker).
    // Any other, a moment after it exited (see `status`).
    const cut = new AbortController();
    const kill = () => {
      // Never SIGKILL once tmux may run: a control client killed outright while tmux was
      // writing to it (SIGKILL, or SIGPIPE from a reader that went away) crashed tmux 3.3a's
      // server in stress runs here; on SIGTERM the client leaves the way tmux expects. A gated
      // one not let go has no tmux at the other end (RemoteGate.killOutright).
      if (gate?.killOutright(child)) {
        child.status.finally(() => cut.abort());
        return;
      }
      try {
        child.kill("SIGTERM");
      } catch {
        // Already exited.
      }
    };
    end = kill;
    this.#running++;
    const status = child.status.finally(() => {
      this.#running--;
      release();
      gate?.ended();
      held();
      // Over SSH, the pipes are cut a moment after our ssh has exited, however it ended: they
      // are the host's master's, open until the remote command ends, and one that never does
      // (a tmux client of a stopped server) would hold the readers, and the connection's close
      // that waits for them, for ever. The moment lets what the master still has in hand come
      // through first.
      if (marker) {
        AbortSignal.timeout(REMOTE_DRAIN_MS).addEventListener("abort", () => cut.abort());
      }
    });
    const reached = Promise.withResolvers<void>();
    if (!marker) reached.resolve();
    // Once the remote start-up is done, the handshake's hold, then tmux is let go: it runs.
    const arrived = gate === null
      ? reached.resolve
      : () =>
        void gate.letGo(() => this.handshakes.start(key, this.#closing.signal)).then((open) => {
          if (open) reached.resolve();
        });
    return {
      stdin: gate?.stdin ?? child.stdin,
      // Over SSH, only what follows the marker is tmux's (see ssh_wire.ts).
      stdout: marker ? streamAfterMarker(child.stdout, marker, arrived, cut.signal) : child.stdout,
      stderr: marker
        ? child.stderr.pipeThrough(stderrAfterMarker(marker), { signal: cut.signal })
        : child.stderr,
      status,
      reached: reached.promise,
      kill,
      answered: gate ? () => gate.release() : control ? held : () => {},
      act: (signal) => this.handshakes.act(key, signal),
    };
  }

  /**
   * Runs `tmux <address flags> <args>` and returns its stdout as bytes (values may hold any
   * bytes; decoding is format.ts's business). Throws {@link TmuxError} on any failure.
   */
  async run(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<Uint8Array> {
    return judgeResult(await this.exec(address, args, options));
  }

  /**
   * Runs tmux and returns status, stdout and stderr without judging the status: for callers
   * that must read a partial result (a command chain that failed half way). A command line too
   * long for tmux's arguments goes to it as a file on its stdin, unless the call's own
   * {@link RunOptions.stdin} takes that (command_file.ts); {@link stream}'s reads are built to
   * fit (capture_many.ts).
   */
  async exec(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    // tmux would cut an argument at a NUL (in a command file too): nothing runs (tmux_error.ts).
    refuseNul(args);
    // Checked in the command's turn, not before it: a check that reads the aliases would let a
    // structural command sent later take its turn first.
    const send = async () => {
      await this.checkAliases(address, args, options);
      return await this.aroundStructure(
        address,
        args,
        () => this.#execNow(address, args, options),
        waitSignal(options),
      );
    };
    if (!options.inStructureLane && changesStructure(args)) {
      return await this.inStructureLane(address, send, waitSignal(options));
    }
    return await send();
  }

  async #execNow(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions,
  ): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    if (options.tiedToProcess) {
      return unframeTied(
        await this.#spawn(
          address,
          [TIED_FLAG, ...args],
          options,
          (child, signal, answered, arrived) =>
            collectAnswer(
              child,
              signal,
              address,
              this.#maxAnswerBytes,
              address.host === undefined ? undefined : this.#ssh!.marker,
              answered,
              false,
              arrived,
            ),
        ),
      );
    }
    // A line too long for tmux's arguments goes as a file on its stdin (command_file.ts).
    const file = asCommandFile(args, options.stdin);
    const answer = (result: { code: number; stdout: Uint8Array; stderr: string }) =>
      file ? argvAnswer(result) : result;
    const argv = file?.args ?? args;
    const spawnOptions = file ? { ...options, stdin: file.stdin } : options;
    const bounded = (options.answerBound ?? Infinity) < this.#maxAnswerBytes;
    return await this.#spawn(
      address,
      argv,
      spawnOptions,
      async (child, signal, _answered, arrived) =>
        answer(
          await collectAnswer(
            child,
            signal,
            address,
            bounded ? options.answerBound! : this.#maxAnswerBytes,
            address.host === undefined ? undefined : this.#ssh!.marker,
            undefined,
            bounded,
            arrived,
          ),
        ),
    );
  }

  /**
   * Runs tmux and hands its stdout to `sink` chunk by chunk as it arrives, instead of
   * collecting it: for reads whose answer may be large (deep history), so what is held at
   * once is a chunk, not the whole answer. The next chunk is read only once `sink` has
   * settled, so a slow reader holds tmux back instead of filling memory. A chunk is only valid
   * during its call. Status and stderr as {@link exec}; when `sink` throws, the child is killed
   * and the error passed on.
   */
  async stream(
    address: ServerAddress,
    args: readonly string[],
    sink: (chunk: Uint8Array) => void | Promise<void>,
    options: RunOptions = {},
  ): Promise<{ code: number; stderr: string }> {
    refuseNul(args);
    await this.checkAliases(address, args, options);
    // No hosts at all: #spawn refuses the host as exec does (remote_call.ts).
    const marker = address.host === undefined ? undefined : this.#ssh?.marker;
    return await this.#spawn(
      address,
      args,
      options,
      (child, signal, _answered, arrived) =>
        streamAnswer(child, signal, sink, address, this.#maxAnswerBytes, marker, arrived),
    );
  }

  /**
   * Starts one tmux child under the concurrency bound, the call's timeout and cancellation,
   * and the runner's close, and lets `consume` read it to its end. On an SSH host, in a session
   * of its connection, sent again while the host refuses the session (ssh_sessions.ts).
   */
  async #spawn<R>(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions,
    consume: Consume<R>,
  ): Promise<R> {
    const once = () => this.#spawnOnce(address, args, options, consume);
    if (address.host === undefined || !this.#ssh?.has(address.host)) return await once();
    const waiting = waitSignal(options);
    const stops = [this.#closing.signal, AbortSignal.timeout(options.timeoutMs ?? this.#timeoutMs)];
    if (waiting) stops.push(waiting);
    const cancelled = () => this.#closing.signal.aborted || waiting?.aborted === true;
    const sessions = this.#ssh.sessions(address.host);
    return await inSession(sessions, address.host, AbortSignal.any(stops), cancelled, once);
  }

  async #spawnOnce<R>(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions,
    consume: Consume<R>,
  ): Promise<R> {
    const waiting = waitSignal(options);
    if (waiting?.aborted) throw cancelledCall();
    if (this.#closing.signal.aborted) {
      throw new TmuxError("cancelled", "The server is shutting down.");
    }
    // Over SSH, the host's connection first (outside the bound: it is no tmux process).
    if (address.host !== undefined) {
      const waits = [this.#closing.signal];
      if (waiting) waits.push(waiting);
      await reachHost(
        this.#ssh,
        address,
        withinCallTime(waits, options.timeoutMs ?? this.#timeoutMs),
      );
    }
    const leave = await this.#gates.turn(addressKey(address), {
      background: options.background,
      signal: waiting,
    });
    // A control-mode client (tied) starts as control_attach.ts's do: its handshake holds our
    // other acts on the server back until tmux answers it (on an SSH host, from its go: see
    // spawnPersistent). Any other is an act for its life, but a read.
    const key = addressKey(address);
    const gated = options.tiedToProcess === true && address.host !== undefined;
    let held: Release;
    // On a host an act reaches tmux only after the remote start-up files (its marker).
    let actArrived: Release = () => {};
    try {
      if (gated || onlyReads(args)) held = () => {};
      else if (args[0] === TIED_FLAG) held = await this.handshakes.start(key, waiting);
      else if (address.host === undefined) held = await this.handshakes.act(key, waiting);
      else {
        const act = await this.handshakes.farAct(key, waiting);
        held = act.over;
        actArrived = act.arrived;
      }
    } catch (error) {
      leave();
      throw error;
    }
    // Aborted while waiting for a turn: an already-aborted signal would not kill a new child.
    if (this.#closing.signal.aborted || waiting?.aborted) {
      held();
      leave();
      throw cancelledCall();
    }
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    // AbortSignal.timeout rather than setTimeout: a process's first setTimeout costs 12-17 ms
    // here (a one-shot `hook` pays it on every agent tool call), and the signal's timer does not
    // keep the process alive, so nothing needs clearing.
    const timer = AbortSignal.timeout(timeoutMs);
    const signals = [timer, this.#closing.signal];
    if (options.signal) signals.push(options.signal);
    const signal = AbortSignal.any(signals);
    // Counts the child until it has exited, not until its output is read: a reader still
    // working through what a killed child wrote must not hold up the runner's close.
    this.#running++;
    let alive = true;
    let gate: RemoteGate | null = null;
    // On an SSH host, the call's input, held back until the marker came; then its write.
    let input: Uint8Array | null = null;
    let fed = false;
    const gone = () => {
      if (alive) this.#running--;
      alive = false;
    };
    try {
      let child: Deno.ChildProcess;
      const [program, argv, childEnv] = tmuxCommand(
        this.binary,
        this.#ssh,
        address,
        args,
        {},
        gated,
      );
      try {
        child = spawnChild(program, {
          args: argv,
          // Nothing for tmux here: its environment is this process's, as given.
          ...address.host === undefined ? {} : { env: childEnv },
          stdin: options.stdin || options.tiedToProcess ? "piped" : "null",
          stdout: "piped",
          stderr: "piped",
          signal,
        });
      } catch (error) {
        throw notInstalled(program, error);
      }
      child.status.then(gone, gone);
      // Aborted between the last check and the spawn: a signal already aborted kills nothing.
      if (signal.aborted) {
        try {
          child.kill("SIGTERM");
        } catch {
          // Gone already.
        }
      }
      if (options.tiedToProcess) {
        // Held open, never written (but for an SSH host's go): should this process go first,
        // its end of file is what ends the client (see RunOptions.tiedToProcess). Closed once
        // tmux ended it.
        gate = gated ? new RemoteGate(child.stdin) : null;
        const stdin = gate?.stdin ?? child.stdin;
        const close = () => void stdin.close().catch(() => {});
        child.status.then(close, close);
        // Stopped before its go: ended outright (RemoteGate.killOutright).
        if (gate) {
          const outright = () => void gate!.killOutright(child);
          if (signal.aborted) outright();
          else signal.addEventListener("abort", outright, { once: true });
        }
      } else if (options.stdin && address.host === undefined) {
        await feed(child.stdin, options.stdin);
      } else if (options.stdin) {
        // On a host, not yet: the remote shell runs its start-up files before the command, and
        // one that reads its input (`read -t 1`, an `ssh` without `-n` in a `.bashrc`) would
        // take what was written, and tmux would run on what is left. Written once the marker,
        // which the command prints after them, has come.
        input = options.stdin;
      }
      // `stdout`: what tmux printed before the kill, for a caller that must know how far a
      // command line got (a creation's -P line names what it made before a hook held it).
      const checkAborted = (stdout?: Uint8Array) => {
        if (timer.aborted) {
          // Its input still held back: the remote shell never handed over to tmux.
          if (input !== null && !fed) throw startupNeverEnded(address.host!, timeoutMs);
          // Over SSH, only our ssh is killed: a stuck remote tmux keeps the command.
          const there = address.host === undefined
            ? ""
            : ` (host ${
              JSON.stringify(address.host)
            }: the command may still run there later, once its tmux answers again)`;
          throw new TmuxError(
            "timeout",
            `tmux did not answer within ${timeoutMs} ms${there}.`,
            "",
            stdout,
          );
        }
        if (options.signal?.aborted || this.#closing.signal.aborted) {
          throw new TmuxError("cancelled", "The call was cancelled.", "", stdout);
        }
      };
      let result: R;
      try {
        const answered = gate ? () => gate!.release() : held;
        const arrived = gate
          ? () => void gate!.letGo(() => this.handshakes.start(key, signal))
          : input === null
          ? actArrived
          : () => {
            actArrived();
            fed = true;
            void feed(child.stdin, input!);
          };
        result = await consume(child, signal, answered, arrived);
      } catch (error) {
        // A reader stopped by the kill reports the kill, not its own broken stream.
        checkAborted();
        throw error;
      } finally {
        // Never written (no marker came): the pipe is closed all the same. A write under way is
        // not waited for: one to a stopped ssh would wait as long as it stays stopped.
        if (input !== null && !fed) void child.stdin.close().catch(() => {});
      }
      checkAborted(stdoutOf(result));
      return result;
    } finally {
      held();
      gate?.ended();
      gone();
      leave();
    }
  }
}

/**
 * Reads a child of {@link TmuxRunner}'s #spawn to its end: `answered` is told of tmux's first
 * byte (a control-mode client's handshake is then over), `arrived` of an SSH host's marker
 * (its remote start-up files are done: a gated client may be let go).
 */
type Consume<R> = (
  child: Deno.ChildProcess,
  signal: AbortSignal,
  answered: Release,
  arrived: () => void,
) => Promise<R>;

/** Writes `bytes` to a child's `stdin` and closes it. */
async function feed(stdin: WritableStream<Uint8Array>, bytes: Uint8Array): Promise<void> {
  const writer = stdin.getWriter();
  try {
    await writer.write(bytes);
    await writer.close();
  } catch {
    // tmux exited before reading all of its input; its status says what happened.
  }
}

/**
 * A call on `host` whose input waited its whole `timeoutMs` for the remote shell to hand over to
 * tmux (the marker): tmux never got it. A start-up file that waits on its input holds the hand-
 * over up for ever, as does a connection that stopped answering; either way nothing of the input
 * was sent, where the reply once said it all went in.
 */
function startupNeverEnded(host: string, timeoutMs: number): TmuxError {
  return new TmuxError(
    "timeout",
    `Host ${JSON.stringify(host)}: tmux was not reached within ${timeoutMs} ms (the remote ` +
      "shell's start-up files had not ended, or the connection did not answer), so this call's " +
      "input, sent only after them since a start-up file that reads its input would take it, " +
      "was never sent: tmux got none of it. A start-up file there may be waiting on its input " +
      "(a read, or an ssh without -n, in ~/.bashrc or the like).",
  );
}

/** What stops a call while it waits to start: its signal, and {@link RunOptions.untilStarted}. */
function waitSignal(options: RunOptions): AbortSignal | undefined {
  const { signal, untilStarted } = options;
  return signal && untilStarted ? AbortSignal.any([signal, untilStarted]) : signal ?? untilStarted;
}

/** The stdout of a collected answer ({@link TmuxRunner.exec}'s), if `result` is one. */
function stdoutOf(result: unknown): Uint8Array | undefined {
  if (typeof result !== "object" || result === null || !("stdout" in result)) return undefined;
  return result.stdout instanceof Uint8Array ? result.stdout : undefined;
}
