/**
 * What every tool call gets: the tmux server it talks to (the configured one or the call's
 * `socket_name`), one snapshot of it on demand, and lookups that turn a missing target into a
 * refusal naming what does exist.
 *
 * @module
 */

import { attendedPanes, type CallerEnv, type CallerPane } from "../tmux/identity.ts";
import {
  execFast,
  execOnce,
  execSpawned,
  streamSpawned,
  type ViaOptions,
} from "../tmux/control.ts";
import type { RunOptions, TmuxRunner } from "../tmux/run.ts";
import { judgeResult, TmuxError } from "../tmux/tmux_error.ts";
import type { ServerAddress } from "../tmux/server_address.ts";
import { learnFolderFor, namesSameSocket } from "../tmux/same_socket.ts";
import type { ServerIdentity } from "../tmux/server_identity.ts";
import {
  type ClientRow,
  type PaneBrief,
  type PaneRow,
  type SessionRow,
  type Snapshot,
  type SnapshotScope,
  takeBriefSnapshot,
  takeSnapshot,
  type WindowRow,
} from "../tmux/snapshot.ts";
import {
  type PanePlace,
  type PaneProcess,
  takePanePlaces,
  takeProcessInfo,
} from "../tmux/pane_reads.ts";
import { describeSocket, noServerHint, noteTmuxEnv, ToolFailure } from "./errors.ts";
import { type LogFn, stderrLog } from "./call_log.ts";
import { callerFormatOn, callerOn } from "./caller_on_host.ts";
import { lookupPane, lookupSession, lookupWindow, requireRunning } from "./target_lookup.ts";
import { noteWrappedAlong } from "../tmux/wrapped_relay.ts";
import { runsClient, takesKeys } from "../tmux/relay.ts";

/** The server-wide settings a tool may need. */
export interface ServerConfig {
  /** The socket every call uses unless it names its own `socket_name`. */
  readonly address: ServerAddress;
  /** What the process knows of its own place in tmux. */
  readonly callerEnv: CallerEnv;
  /** Bound on a result's structured JSON in bytes. */
  readonly maxResultBytes: number;
  /** Whether input may reach panes a person is watching (`--allow-attended-input`). */
  readonly allowAttendedInput?: boolean;
  /** Whether the audit trail also goes to stderr (`--audit`). */
  readonly audit?: boolean;
  /** This server's owner id: the mark on the panes it creates (`--owner`, or made up). */
  readonly owner?: string;
  /** Act (type, run, kill...) only on panes marked with {@link owner} (`--own-panes-only`). */
  readonly ownPanesOnly?: boolean;
  /** Where diagnostic lines go: stderr, unless a test collects them. */
  readonly diagnostics?: (line: string) => void;
}

/** Progress reporting for long calls; a no-op when the client asked for none. */
export type ProgressFn = (progress: number, total?: number, message?: string) => Promise<void>;

/**
 * Settles once a context for `socketName` can tell whether it reaches the configured server
 * (tmux asked, once per process, where `-L` names lead; only for a name that may), or when
 * `signal` aborts.
 */
export async function learnSocket(
  runner: TmuxRunner,
  config: ServerConfig,
  socketName: string | undefined,
  signal?: AbortSignal,
): Promise<void> {
  if (socketName === undefined) return;
  await learnFolderFor(runner, config.address, config.callerEnv.tmux, socketName, signal);
}

/** Reads a guard makes of a synchronized pane that keeps leaving its window before it refuses. */
const GUARD_READS = 3;

/** Per-call access to tmux. */
export class TmuxContext {
  /** The runner that starts tmux. */
  readonly runner: TmuxRunner;
  /** The server this call talks to. */
  readonly address: ServerAddress;
  /** Server-wide settings. */
  readonly config: ServerConfig;
  /** Aborts when the client cancels the request. */
  readonly signal: AbortSignal;
  /** Sends a progress notification when the client asked for them. */
  readonly progress: ProgressFn;
  /** Logs a message about the call: to stderr, and to a client that asked for log messages. */
  readonly log: LogFn;
  /** The SSH destination the call names (`host`), or undefined for this machine. */
  readonly host: string | undefined;
  /** What this call's reads found, shared with its {@link withSignal} copies. */
  #reads: {
    serverPid: number | null;
    serverStart: number | null;
    answeredPid: number | null;
    answered: boolean;
  } = { serverPid: null, serverStart: null, answeredPid: null, answered: false };

  /**
   * Set on a {@link paced} copy, and shared with its {@link withSignal} copies: whether its
   * reads still wait behind one-off calls, and what stops those waiting to start (aborted at
   * the {@link readUntil} deadline, by `timer`).
   */
  #pace:
    | { on: boolean; stop: AbortController; timer?: ReturnType<typeof setTimeout> }
    | null = null;

  /**
   * A context for one call. On a `host`, the server is that host's default one, or the call's
   * `socket_name` there; the configured socket (`--socket`) is this machine's. A
   * `socket_name` that reaches the configured server by another spelling gets the configured
   * address, so that its calls share that server's control client and turns (same_socket.ts;
   * a registry awaits {@link learnSocket} first).
   */
  constructor(
    runner: TmuxRunner,
    config: ServerConfig,
    socketName: string | undefined,
    signal: AbortSignal,
    progress: ProgressFn,
    log: LogFn = stderrLog(config.diagnostics),
    host?: string,
  ) {
    this.runner = runner;
    this.config = config;
    this.host = host;
    // A failure given only the address (failureText) names the server TMUX names, as this does.
    noteTmuxEnv(config.address, config.callerEnv.tmux);
    this.address = host !== undefined ? { host, ...(socketName && { socketName }) } : socketName &&
        !namesSameSocket(runner, config.address, config.callerEnv.tmux, socketName)
      ? { socketName }
      : config.address;
    this.signal = signal;
    this.progress = progress;
    this.log = log;
  }

  /**
   * This call's access, stopped by its cancellation or by `closing` (a give-back's signal,
   * leftovers.ts: the process's end stops the step as the call's cancellation does, so that a
   * tmux process of its own is killed and tmux drops the rest of its line).
   */
  orClosing(closing: AbortSignal): TmuxContext {
    return this.withSignal(AbortSignal.any([this.signal, closing]));
  }

  /**
   * This call's access to the same server, stopped by `signal` instead of the call's
   * cancellation: for a step that must not be cut short once tmux has begun its command line
   * (tmux drops the rest of a killed client's line, which would leave a change half made).
   */
  withSignal(signal: AbortSignal): TmuxContext {
    // The address as the call resolved it: the configured one, or its own socket (and host).
    const own = this.host !== undefined || this.address !== this.config.address;
    const copy = new TmuxContext(
      this.runner,
      this.config,
      own ? this.address.socketName : undefined,
      signal,
      this.progress,
      this.log,
      this.host,
    );
    copy.#reads = this.#reads;
    copy.#pace = this.#pace;
    return copy;
  }

  /**
   * This call's access for a wait's reads (its snapshot, and what its pane watch reads for as
   * long as it lasts, every 100 ms while it polls): each tmux process of theirs starts only
   * behind every one-off call ({@link RunOptions.background}), so two hundred polling waits do
   * not hold up a `list_panes`; and once {@link readUntil} is set, none starts after that time:
   * one still waiting for its turn then is dropped (a cancelled TmuxError), for the wait is
   * over and must not end later still, behind all the others' reads.
   *
   * `fromReadUntil`: the copy's reads go as one-off calls' until {@link readUntil} is set, for
   * a watch opened before the steps of an act (run_command's, before it types): what it reads
   * then is the act's, and only its wait is paced.
   */
  paced(options: { fromReadUntil?: boolean } = {}): TmuxContext {
    const copy = this.withSignal(this.signal);
    copy.#pace = { on: !options.fromReadUntil, stop: new AbortController() };
    return copy;
  }

  /**
   * From now on, a {@link paced} copy's reads wait behind one-off calls (again) and start only
   * before `deadline` (a `performance.now()` time). No effect on any other context.
   * {@link paceOver} ends it.
   */
  readUntil(deadline: number): void {
    const pace = this.#pace;
    if (!pace) return;
    pace.on = true;
    clearTimeout(pace.timer);
    const stop = pace.stop = new AbortController();
    pace.timer = setTimeout(() => stop.abort(), Math.max(0, deadline - performance.now()));
  }

  /**
   * The wait is over: what a {@link paced} copy reads from now on (the tail it answers with)
   * is read as a one-off call's, whenever it starts.
   */
  paceOver(): void {
    if (!this.#pace) return;
    this.#pace.on = false;
    clearTimeout(this.#pace.timer);
  }

  /**
   * Whether `error` is a paced read dropped at its {@link readUntil} deadline (not the call
   * cancelled): the wait it belongs to has timed out.
   */
  droppedAtDeadline(error: unknown): boolean {
    return this.#pace?.on === true && this.#pace.stop.signal.aborted && !this.signal.aborted &&
      error instanceof TmuxError && error.kind === "cancelled";
  }

  /**
   * Options for a command of this call that only reads: the call's cancellation, and on a
   * {@link paced} copy, its place behind one-off calls and its deadline to start.
   */
  readOptions(): RunOptions {
    if (!this.#pace?.on) return { signal: this.signal };
    return { signal: this.signal, background: true, untilStarted: this.#pace.stop.signal };
  }

  /**
   * The pid of the tmux server this call's last snapshot read (null before one found a
   * server): what the call decides, it decides about that server. Reads go over the control
   * connection and some acts start a tmux process of their own, and the two reach different
   * servers once the socket file was replaced while the old server ran on; so every guarded
   * act has tmux check this pid in its own step (runIf, act_step.ts).
   */
  get serverPid(): number | null {
    return this.#reads.serverPid;
  }

  /**
   * When the server of {@link serverPid} started (tmux's `#{start_time}`, seconds; null before
   * a snapshot found a server): with the pid, which server the call read. A server restarted
   * in a pid namespace of its own (a container) has the same pid as the one before it.
   */
  get serverStart(): number | null {
    return this.#reads.serverStart;
  }

  /**
   * The pid of the last server any snapshot of this call found, kept when a later one finds
   * none: a call that meets no server after this went on while its server went away.
   */
  get answeredPid(): number | null {
    return this.#reads.answeredPid;
  }

  /** Whether a server answered any command or read of this call (a snapshot that found one). */
  get answered(): boolean {
    return this.#reads.answered || this.#reads.answeredPid !== null;
  }

  /** Notes that a server answered this call (`output`, returned). */
  #answer(output: Uint8Array): Uint8Array {
    this.#reads.answered = true;
    return output;
  }

  /** The server this call's last snapshot read ({@link serverPid}, {@link serverStart}). */
  get server(): ServerIdentity | null {
    const { serverPid, serverStart } = this.#reads;
    return serverPid === null || serverStart === null
      ? null
      : { pid: serverPid, startTime: serverStart };
  }

  /** Notes the server a snapshot read, for {@link serverPid} and {@link serverStart}. */
  #read<T extends { readonly server: ServerIdentity | null }>(snapshot: T): T {
    this.#reads.serverPid = snapshot.server?.pid ?? null;
    this.#reads.serverStart = snapshot.server?.startTime ?? null;
    this.#reads.answeredPid = snapshot.server?.pid ?? this.#reads.answeredPid;
    return snapshot;
  }

  /**
   * Human name of the socket, for messages: the server tmux reaches, which without `-L` or
   * `-S` is the one `TMUX` names when set, by its path (describeSocket).
   */
  get socketLabel(): string {
    return describeSocket(this.address, this.config.callerEnv.tmux);
  }

  /**
   * Runs a tmux command on this call's server with the call's cancellation: over the control
   * connection when there is one (well under a millisecond, against a few for starting tmux),
   * never twice (a command lost on its way is a failure, not repeated). Targets must be
   * explicit: the command's client is the control client. Should it start tmux instead, it
   * runs only on the server the call read ({@link server}).
   */
  async run(args: readonly string[], timeoutMs?: number): Promise<Uint8Array> {
    return this.#answer(
      judgeResult(await execOnce(this.runner, this.address, args, this.#via(timeoutMs))),
    );
  }

  /**
   * {@link run} for a command that only reads: if the connection is lost on its way, it is
   * run again in a tmux process of its own.
   */
  async read(args: readonly string[], timeoutMs?: number): Promise<Uint8Array> {
    return this.#answer(
      judgeResult(await execFast(this.runner, this.address, args, this.#via(timeoutMs))),
    );
  }

  /** Options for a command that may travel over the control connection. */
  #via(timeoutMs: number | undefined): ViaOptions {
    return {
      signal: this.signal,
      timeoutMs,
      serverPid: this.serverPid,
      serverStart: this.serverStart,
    };
  }

  /**
   * Runs a tmux command in a tmux process of its own: for a command that blocks its client
   * (`wait-for`, which would hold up every command behind it on a shared connection), and for
   * one whose output a control client would get escaped (`show-buffer`). It runs only on the
   * server with `serverPid` (by default the one the call read, {@link serverPid}): a tmux
   * process reaches whatever server the socket leads to now, not the one the call read over
   * the control connection, once the socket file was replaced.
   */
  async spawn(
    args: readonly string[],
    timeoutMs?: number,
    serverPid: number | null = this.serverPid,
  ): Promise<Uint8Array> {
    const options = { signal: this.signal, timeoutMs, serverPid };
    return this.#answer(judgeResult(await execSpawned(this.runner, this.address, args, options)));
  }

  /**
   * {@link spawn} for an answer of any size, handed to `sink` chunk by chunk as tmux prints it
   * (a chunk is valid during its call), never held whole.
   */
  async spawnStream(
    args: readonly string[],
    sink: (chunk: Uint8Array) => void,
    serverPid: number | null = this.serverPid,
  ): Promise<void> {
    const options = { signal: this.signal, serverPid };
    await streamSpawned(this.runner, this.address, args, sink, options);
    this.#answer(new Uint8Array(0));
  }

  /**
   * {@link spawn} for a command that blocks its client for long (`wait-for`): its tmux client
   * is a control-mode one that tmux ends when this process goes, however it goes
   * (`RunOptions.tiedToProcess`), where a plain one would outlive a process killed outright.
   */
  async spawnTied(args: readonly string[], timeoutMs?: number): Promise<Uint8Array> {
    const options = {
      signal: this.signal,
      timeoutMs,
      serverPid: this.serverPid,
      tiedToProcess: true,
    };
    return this.#answer(judgeResult(await execSpawned(this.runner, this.address, args, options)));
  }

  /** One atomic read of the server: all of it, or what `scope` names. */
  async snapshot(scope?: SnapshotScope): Promise<Snapshot> {
    return this.#read(
      await takeSnapshot(this.runner, this.address, this.readOptions(), scope),
    );
  }

  /** The same read with only each pane's {@link PaneBrief} fields: for listings. */
  async briefSnapshot(scope?: Omit<SnapshotScope, "brief">): Promise<Snapshot<PaneBrief>> {
    return this.#read(
      await takeBriefSnapshot(this.runner, this.address, this.readOptions(), scope),
    );
  }

  /**
   * The current command and directory of every pane of these sessions; null when one of them
   * ended meanwhile (read again whole).
   */
  processInfo(sessionIds: readonly string[]): Promise<Map<string, PaneProcess> | null> {
    return takeProcessInfo(this.runner, this.address, sessionIds, { signal: this.signal });
  }

  /** Where every pane is, and nothing more of it: for a tool that reads the panes next. */
  panePlaces(): Promise<{ running: boolean; panes: PanePlace[] }> {
    return takePanePlaces(this.runner, this.address, { signal: this.signal });
  }

  /**
   * The read for a tool acting on one pane: that pane (with every placement of its window),
   * the clients and server facts. tmux looks up nothing of the other panes, which at a few
   * hundred panes is most of a whole read. A missing pane, or a reference that is no pane id,
   * is refused naming the panes there are (read once more for the hint).
   */
  async paneSnapshot(paneId: string): Promise<{ snapshot: Snapshot; pane: PaneRow }> {
    if (!PANE_ID.test(paneId)) {
      const all = await this.paneList();
      return { snapshot: all, pane: this.pane(all, paneId) };
    }
    const snapshot = await this.snapshot({ sessions: false, windows: false, paneId });
    const pane = snapshot.panes[0] ?? this.pane(await this.paneList(), paneId);
    return { snapshot, pane };
  }

  /**
   * The read for a tool acting on one window: that window (with every placement) and its
   * panes, the clients and server facts, and the sessions if `scope` asks for them; without
   * panes if it says so.
   */
  windowSnapshot(
    windowId: string,
    scope: { readonly sessions?: boolean; readonly panes?: boolean } = {},
  ): Promise<Snapshot> {
    return this.snapshot({ sessions: false, ...scope, windowId });
  }

  /**
   * One window (with every placement) and none of its panes, the clients and server facts,
   * and the sessions if `scope` asks for them: for a tool that acts on the window as a whole.
   * A missing window, or a reference that is no window id, is refused.
   */
  async windowAlone(
    windowId: string,
    scope: { readonly sessions?: boolean } = {},
  ): Promise<{ snapshot: Snapshot; window: WindowRow }> {
    if (!WINDOW_ID.test(windowId)) {
      const all = await this.snapshot({ sessions: scope.sessions ?? false, panes: false });
      return { snapshot: all, window: this.window(all, windowId) };
    }
    const snapshot = await this.windowSnapshot(windowId, { ...scope, panes: false });
    return { snapshot, window: this.window(snapshot, windowId) };
  }

  /**
   * Enough of the server to guard input into one pane: that pane and every client (who calls,
   * who watches). When its window has synchronize-panes on, the panes of that window are read
   * instead, so the whole cohort is judged; when the pane is missing, or it or a pane the keys
   * are copied to runs a client of this server (the keys go on to the panes it shows), every
   * pane.
   * A pane that leaves that window (or ends) between the two reads is read again from the
   * start; one that keeps moving is refused, nothing done.
   */
  async guardSnapshot(paneId: string): Promise<Snapshot> {
    for (let read = 0; read < GUARD_READS; read++) {
      // (When sessions were last attached comes with the server's facts: unwatched.ts.)
      const one = await this.snapshot({ sessions: false, windows: false, paneId });
      const pane = one.panes[0];
      if (!pane) return await this.paneList();
      // The panes the input reaches: the pane, or its window's with synchronize-panes on.
      const reach = pane.synchronized
        ? await this.snapshot({ sessions: false, windows: false, windowId: pane.windowId })
        : one;
      if (!reach.panes.some((p) => p.id === paneId)) continue;
      // Any of them running a client of this server, on its terminal or under a wrapper: what
      // is typed there goes on to the pane that client shows, and on through any client there
      // (relay.ts), on any window, so every pane is read. A pane that takes no keys passes none.
      const keyed = reach.panes.filter((p) => p.windowId === pane.windowId && takesKeys(p));
      const ask = (argv: string[]) => this.read(argv);
      // Clients under a wrapper there, of this server or another (wrapped_relay.ts); answers
      // kept for the read of every pane below, which asks nothing twice.
      const asked = new Map<string, boolean>();
      await noteWrappedAlong(ask, reach, keyed, asked);
      if (!keyed.some((p) => runsClient(reach, p))) return reach;
      const all = await this.snapshot({ sessions: false, windows: false });
      if (!all.panes.some((p) => p.id === paneId)) continue;
      // The chain followed on every pane.
      const ids = new Set(keyed.map((p) => p.id));
      await noteWrappedAlong(ask, all, all.panes.filter((p) => ids.has(p.id)), asked);
      return all;
    }
    throw new ToolFailure(
      `Pane ${paneId} moved to another window each time it was read; nothing was done.`,
      "Look again with get_pane_info, then try again.",
    );
  }

  /** Every pane, without what runs in it: for a hint naming the panes there are. */
  paneList(): Promise<Snapshot> {
    return this.snapshot({ sessions: false, windows: false, processInfo: false });
  }

  /** The caller's pane on this server ({@link callerOn}). */
  caller(snapshot: Snapshot<PaneBrief>): CallerPane {
    return callerOn(this.config.callerEnv, this.host, snapshot);
  }

  /** A tmux condition that holds for the caller's pane ({@link callerFormatOn}). */
  callerFormat(snapshot: Snapshot<PaneBrief>): string | null {
    return callerFormatOn(this.config.callerEnv, this.host, snapshot);
  }

  /** Panes a person can see, with the clients showing each. */
  attended(snapshot: Snapshot<PaneBrief>): Map<string, ClientRow[]> {
    return attendedPanes(snapshot);
  }

  /** Refuses when no server runs on the socket. */
  requireRunning(snapshot: { readonly running: boolean }): void {
    requireRunning(snapshot, this.socketLabel, noServerHint(this.address));
  }

  /** A session by id (`$N`) or exact name ({@link lookupSession}). */
  session(snapshot: Snapshot<PaneBrief>, ref: string): SessionRow {
    this.requireRunning(snapshot);
    return lookupSession(snapshot, ref, this.socketLabel);
  }

  /** A window by id (`@N`). */
  window(snapshot: Snapshot<PaneBrief>, id: string): WindowRow {
    this.requireRunning(snapshot);
    return lookupWindow(snapshot, id, this.socketLabel);
  }

  /** A pane by id (`%N`). */
  pane(snapshot: Snapshot, id: string): PaneRow {
    this.requireRunning(snapshot);
    return lookupPane(snapshot, id, this.socketLabel);
  }
}

const PANE_ID = /^%\d+$/;
const WINDOW_ID = /^@\d+$/;
