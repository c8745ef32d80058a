/**
 * What makes resources live: feeds that say "look again" when a tmux server changes, driven by
 * control mode, never by a polling tick where control mode can carry them. A feed only says
 * that something may have changed; what changed is always read again (a verified read), so
 * nothing a pane prints can make a feed lie about content.
 *
 * - The shape of a server (sessions, windows, panes, names): control-mode notifications from
 *   every connection to it (`%window-add`, `%layout-change`, `%sessions-changed`, ...), which
 *   tmux sends at once, plus a format subscription over every session's windows and panes
 *   (`refresh-client -B`), which tmux checks once a second: it catches what no notification
 *   reaches a client attached elsewhere (a pane split in another session's window), and what
 *   tmux tells no control client at all (a pane dying, a title changing, a person attaching).
 * - The agent marks: a format subscription that changes when any window's `@agent-state` or
 *   `@agent-message` does, within tmux's one-second check; and, at once, the wait channel
 *   `tmux-mcp hook` signals after every mark it writes (`wait-for`, see {@link AGENTS_CHANNEL}):
 *   a signal makes the feed read the marks and compare, so a signal from anyone else costs one
 *   read and says nothing.
 * - A pane: its `%output`, through a connection attached to one of its sessions; where no
 *   connection can be had (a `destroy-unattached` session, too many control clients), its
 *   screen is compared once a second instead.
 *
 * A feed whose connection is lost says so (something may have changed meanwhile) and comes
 * back by itself, trying again later and later, up to {@link MAX_RETRY_MS} apart.
 *
 * @module
 */

import { AGENTS_CHANNEL } from "../hooks/marks.ts";
import { describeSocket } from "../mcp/errors.ts";
import type { Feed } from "../mcp/resource_spec.ts";
import { captureRows } from "../tmux/capture.ts";
import { controlFor, execFast } from "../tmux/control.ts";
import type { Listening, Watch } from "../tmux/control_connection.ts";
import type { TmuxRunner } from "../tmux/run.ts";
import type { ServerAddress } from "../tmux/server_address.ts";
import { sameServer, type ServerIdentity, serversText } from "../tmux/server_identity.ts";
import { takeBriefSnapshot } from "../tmux/snapshot.ts";
import { TmuxError } from "../tmux/tmux_error.ts";

/**
 * Longest wait before a lost feed tries again: a server that is not there (a subscription to a
 * socket nobody started) is tried every 30 s, not every few, each try a tmux process.
 */
export const MAX_RETRY_MS = 30_000;
/** First wait before a lost feed tries again. */
const FIRST_RETRY_MS = 250;
/** How often a pane no control connection can carry is compared. */
export const POLL_MS = 1_000;
/**
 * Least time between two reads of the marks on a signal of {@link AGENTS_CHANNEL}: anyone on
 * the server may signal it, and a flood of signals must not become a flood of tmux processes.
 */
export const NUDGE_GAP_MS = 100;
/** How long one wait on {@link AGENTS_CHANNEL} lasts before it is made again (its time bound). */
const SIGNAL_WAIT_MS = 10 * 60_000;
/**
 * How long a wait on {@link AGENTS_CHANNEL} the feed ends by a signal has to leave by itself
 * before its client is killed (see {@link ServerFeed}'s `#stopWaiting`).
 */
const WAKE_GRACE_MS = 1_000;

/** The feed's wait on the agents' channel, while it runs. */
interface SignalWait {
  /** Kills the wait's client (and ends the loop). */
  readonly stop: AbortController;
  /** The feed let go of it: the loop ends once the wait does. */
  released: boolean;
  /** A tmux client waits now. */
  running: boolean;
  /** Kills the wait unless it leaves first (see `#stopWaiting`). */
  kill?: ReturnType<typeof setTimeout>;
}

/** The longest title whose letters and digits {@link TOPOLOGY_FORMAT} reads (in its length). */
export const TITLE_SCANNED = 256;

/**
 * Every session, window and pane by id, with what tmux sends no notification of: how many
 * clients each session has (a person attaching or detaching), each window's visible layout
 * (tmux tells `%layout-change` only to a client whose session holds the window: a pane resized
 * or zoomed elsewhere), whether each pane is dead (its process ended, or it was respawned),
 * and each pane's title: its length and, for all titles at once, the letters and digits of
 * each one's first and last 32 characters (a count in a title is seen; a spinner glyph turning
 * is not). A format subscription's value must be made of safe characters only, since tmux
 * writes it raw on a control line (a newline would end it).
 *
 * tmux expands it once a second: at 100 panes (tmux 3.3a, 25 windows of 4) about 0.15 ms of
 * its time for the ids alone, 0.4 ms with the counts, layouts and flags, 1.1 ms with the
 * titles' letters and digits (a regex, costly in a UTF-8 locale: run once over all titles
 * rather than once a pane, and once per run of other characters rather than per character).
 * Only a title shorter than {@link TITLE_SCANNED} gives its letters and digits: `#{=32:...}`
 * trims by width, and a title a pane prints of a megabyte of combining marks (width 0) kept
 * it all, the regex ran over all of it every second, for each session holding the window,
 * and pinned the person's tmux. A longer title's change shows in its length only.
 */
export const TOPOLOGY_FORMAT =
  "#{S:#{session_id}.#{session_attached}=#{W:#{window_id}.#{window_visible_layout}=" +
  "#{P:#{pane_id}.#{pane_dead}.#{n:pane_title}/}/}}." +
  "#{s/[^a-zA-Z0-9]+//:#{S:#{W:#{P:" +
  `#{?#{e|<:#{n:pane_title},${TITLE_SCANNED}},#{=32:pane_title}#{=-32:pane_title},}}}}}`;

/**
 * The agent marks of every window, reduced to lengths and letters and digits: enough to see
 * any change a hook makes, nothing a value could use to forge a control line. Longer values
 * than a hook writes (its message is at most 500 characters) by their length only: the regex
 * over someone else's megabyte would cost tmux its time every second.
 */
const AGENTS_FORMAT = "#{S:#{W:#{window_id}=#{n:@agent-state}.#{n:@agent-message}." +
  "#{?#{e|<:#{n:@agent-state},64},#{s/[^a-zA-Z0-9]//:@agent-state},}." +
  "#{?#{e|<:#{n:@agent-message},1024},#{s/[^a-zA-Z0-9]//:@agent-message},}/}}";

/** What a feed watches on a server. */
export type FeedKind = "topology" | "agents";

/**
 * How long to wait before each next try of something lost: {@link FIRST_RETRY_MS}, then twice
 * as long each time, up to {@link MAX_RETRY_MS}, so that a tmux server that stalls is soon
 * tried again and one that is not there costs a tmux process only every 30 s.
 */
export class Backoff {
  #ms = FIRST_RETRY_MS;

  /** The wait before this try; the one after it is twice as long. */
  next(): number {
    const ms = this.#ms;
    this.#ms = Math.min(MAX_RETRY_MS, ms * 2);
    return ms;
  }

  /** It works again: the next loss is tried again soon. */
  reset(): void {
    this.#ms = FIRST_RETRY_MS;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
}

/** A promise and what settles it. */
function settleable(): { promise: Promise<void>; settle: () => void } {
  let settle = () => {};
  const promise = new Promise<void>((resolve) => settle = resolve);
  return { promise, settle };
}

/**
 * Calls `changed` whenever the server at `address` may have changed in the way `kind` names.
 * Feeds of the same kind on the same server share one listener.
 */
export function watchServer(
  runner: TmuxRunner,
  address: ServerAddress,
  kind: FeedKind,
  changed: () => void,
): Feed {
  const key = `${kind} ${JSON.stringify(address)}`;
  let byKey = feeds.get(runner);
  if (!byKey) feeds.set(runner, byKey = new Map());
  let feed = byKey.get(key);
  if (!feed) {
    const map = byKey;
    feed = new ServerFeed(runner, address, kind, () => map.delete(key));
    byKey.set(key, feed);
  }
  return feed.add(changed);
}

const feeds = new WeakMap<TmuxRunner, Map<string, ServerFeed>>();

/** One listener on one server, shared by everyone watching the same kind of change there. */
class ServerFeed {
  readonly #runner: TmuxRunner;
  readonly #address: ServerAddress;
  readonly #kind: FeedKind;
  readonly #onEmpty: () => void;
  readonly #listeners = new Set<() => void>();
  #listening: Listening | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #backoff = new Backoff();
  #value: string | null = null;
  /** The current waiting on the agents' channel (its `tmux wait-for`, its pause). */
  #waiting: SignalWait | null = null;
  /** Bumped on every (re)start and stop, so a late answer of an old attempt is dropped. */
  #generation = 0;
  #wasLost = false;
  /** Settled when the current attempt sees changes, or has failed. */
  #ready = settleable();

  constructor(runner: TmuxRunner, address: ServerAddress, kind: FeedKind, onEmpty: () => void) {
    this.#runner = runner;
    this.#address = address;
    this.#kind = kind;
    this.#onEmpty = onEmpty;
  }

  add(listener: () => void): Feed {
    const entry = () => listener();
    this.#listeners.add(entry);
    if (this.#listeners.size === 1) this.#start();
    return {
      ready: this.#ready.promise,
      stop: () => {
        if (!this.#listeners.delete(entry) || this.#listeners.size > 0) return;
        this.#stop();
        this.#onEmpty();
      },
    };
  }

  /** The format tmux's subscription watches for this kind of change. */
  get #format(): string {
    return this.#kind === "topology" ? TOPOLOGY_FORMAT : AGENTS_FORMAT;
  }

  #tell(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** A new value of the watched format, from tmux's subscription or a read of our own. */
  #saw(value: string): void {
    // The first value only says where things stand; a later different one is a change.
    const before = this.#value;
    this.#value = value;
    if (before !== null && before !== value) this.#tell();
  }

  #start(): void {
    const generation = ++this.#generation;
    this.#stopWaiting();
    const ready = this.#ready;
    if (this.#runner.closed || !this.#runner.control) return ready.settle();
    const formats: Record<string, string> = { [this.#kind]: this.#format };
    controlFor(this.#runner, this.#address).listen({
      // The agents feed is the marks only; who watches the agents watches the topology too.
      ...(this.#kind === "topology" && { topology: () => this.#tell() }),
      subscription: (_key, value) => this.#saw(value),
      lost: () => {
        if (generation !== this.#generation) return;
        this.#listening = null;
        this.#lost(generation);
      },
    }, formats).then(async (listening) => {
      if (generation !== this.#generation) return listening.close();
      this.#listening = listening;
      this.#backoff.reset();
      // Where things stand now, rather than after tmux's first one-second check: a change
      // from here on is told (a pane dying at once, which no notification tells).
      await this.#readFormat(generation);
      if (this.#kind === "agents") this.#waitForSignals(generation);
      if (this.#wasLost) {
        // Back after a loss: whatever happened meanwhile went unseen.
        this.#wasLost = false;
        this.#tell();
      }
      ready.settle();
    }, () => {
      if (generation === this.#generation) this.#lost(generation);
      ready.settle();
    });
  }

  /** Reads the watched format once, as tmux's subscription would report it. */
  async #readFormat(generation: number): Promise<void> {
    try {
      const read = await execFast(this.#runner, this.#address, [
        "display-message",
        "-p",
        this.#format,
      ], { timeoutMs: 5_000 });
      if (generation === this.#generation && read.code === 0) {
        this.#saw(new TextDecoder().decode(read.stdout).replace(/\n$/, ""));
      }
    } catch {
      // Unread: the subscription still reports a change, within its second.
    }
  }

  #lost(generation: number): void {
    if (!this.#wasLost) {
      this.#wasLost = true;
      this.#value = null;
      this.#tell();
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      if (generation === this.#generation && this.#listeners.size > 0) this.#start();
    }, this.#backoff.next());
  }

  /**
   * While this generation of the feed lives: waits on the agents' channel, and on each signal
   * reads the marks (the same format tmux's subscription shows, so the two agree) and waits
   * again, at most once per {@link NUDGE_GAP_MS}. A wait that fails (an SSH session refused, a
   * server going) is tried again later and later, up to {@link MAX_RETRY_MS} apart,
   * until it works or the feed restarts or stops; meanwhile the subscription still sees a
   * change within its second. The wait's client is tied to this process (RunOptions
   * `tiedToProcess`): a plain `tmux wait-for` outlived a process killed outright, in the person's
   * tmux, until something signalled the channel, one more for every such kill.
   */
  async #waitForSignals(generation: number): Promise<void> {
    const stop = new AbortController();
    const wait: SignalWait = { stop, released: false, running: false };
    this.#waiting = wait;
    const current = () =>
      !wait.released && !stop.signal.aborted && generation === this.#generation &&
      !this.#runner.closed;
    const backoff = new Backoff();
    while (current()) {
      let woken = false;
      // Its time is ended by a signal, not a kill (see #stopWaiting); the kill is the bound.
      const due = setTimeout(() => this.#signalAgents(), SIGNAL_WAIT_MS);
      wait.running = true;
      try {
        const result = await this.#runner.exec(this.#address, ["wait-for", AGENTS_CHANNEL], {
          tiedToProcess: true,
          signal: stop.signal,
          timeoutMs: SIGNAL_WAIT_MS + WAKE_GRACE_MS,
        });
        woken = result.code === 0;
      } catch (error) {
        // A wait that lasted its whole time is waited again at once; anything else (not
        // started, the server going) is tried again below.
        if (error instanceof TmuxError && error.kind === "timeout" && current()) {
          backoff.reset();
          continue;
        }
      } finally {
        clearTimeout(due);
        clearTimeout(wait.kill);
        wait.running = false;
      }
      if (!current()) return;
      if (woken) {
        backoff.reset();
        await this.#readFormat(generation);
        await pause(NUDGE_GAP_MS, stop.signal);
      } else {
        await pause(backoff.next(), stop.signal);
      }
    }
  }

  /**
   * Ends the feed's wait on the agents' channel. tmux 3.3a keeps about 4 KB for good (until the
   * server exits; a later signal does not free it) of every `wait-for` client that leaves
   * unwoken, so the wait is woken by a signal of the channel and leaves by itself (every other
   * wait on it, another tmux-mcp process's feed, reads the marks once more); it is killed only
   * if it has not left within {@link WAKE_GRACE_MS} (the server gone, an SSH host unreachable).
   */
  #stopWaiting(): void {
    const wait = this.#waiting;
    this.#waiting = null;
    if (wait === null) return;
    wait.released = true;
    if (!wait.running || this.#runner.closed) {
      wait.stop.abort();
      return;
    }
    wait.kill = setTimeout(() => wait.stop.abort(), WAKE_GRACE_MS);
    void this.#signalAgents();
  }

  /** Signals the agents' channel on this feed's server (see #stopWaiting); never fails. */
  async #signalAgents(): Promise<void> {
    await this.#runner.exec(this.#address, ["wait-for", "-S", AGENTS_CHANNEL], {
      timeoutMs: WAKE_GRACE_MS,
    }).catch(() => {});
  }

  #stop(): void {
    this.#generation++;
    this.#ready.settle();
    this.#ready = settleable();
    this.#stopWaiting();
    clearTimeout(this.#timer);
    this.#listening?.close();
    this.#listening = null;
    this.#value = null;
    this.#wasLost = false;
    this.#backoff.reset();
  }
}

/**
 * Calls `changed` whenever pane `paneId` on `address` writes anything, or may have changed
 * unseen (its feed was lost, it died or went).
 *
 * The pane is the one found on the tmux server that first showed it. Once that server is gone
 * and another answers on the socket (killed and started again: its panes are numbered from %0
 * again), the pane went with its server for good, whatever pane has its id there now: told
 * once more, then never followed there, and `gone` is told why (for the operator).
 */
export function watchPane(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  changed: () => void,
  gone: (message: string) => void = () => {},
): Feed {
  let stopped = false;
  /** The server the pane was found on (null until it is). */
  let server: ServerIdentity | null = null;
  let watch: Watch | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const backoff = new Backoff();
  let lastScreen: string | null = null;
  /** Whether the last look found no such pane: told once, when it went, not at every look. */
  let absent = false;
  const tell = () => {
    if (!stopped) changed();
  };
  const later = (f: () => void, ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!stopped) f();
    }, ms);
  };
  const retry = () => {
    later(start, backoff.next());
  };
  /** Without a control connection for it: compare its screen once a second. */
  const poll = async () => {
    try {
      const { rows } = await captureRows(runner, address, paneId, {}, { timeoutMs: 5_000 });
      const screen = rows.join("\n");
      if (lastScreen !== null && screen !== lastScreen) tell();
      lastScreen = screen;
    } catch {
      if (lastScreen !== "") tell();
      lastScreen = "";
    }
    // Back to events once a connection can carry it.
    later(start, POLL_MS);
  };
  const start = async () => {
    if (stopped || runner.closed) return;
    let sessionIds: string[];
    try {
      const snapshot = await takeBriefSnapshot(runner, address, { timeoutMs: 5_000 }, {
        sessions: false,
        windows: false,
        paneId,
      });
      if (stopped) return;
      const now = snapshot.server;
      if (server !== null && now !== null && !sameServer(server, now)) {
        // Another server on the socket: the pane went with its own. What a read shows changed;
        // nothing more is told, nor looked at.
        tell();
        stopped = true;
        gone(
          `pane ${paneId} on ${describeSocket(address)} went with its tmux server ` +
            `(${serversText(server, now)}); a pane ${paneId} there now is another server's`,
        );
        return;
      }
      const pane = snapshot.panes.find((p) => p.id === paneId);
      if (pane && now !== null) server ??= { pid: now.pid, startTime: now.startTime };
      if (!pane) {
        // Gone (or its server is): a read says so; look again later, in case it comes back.
        if (!absent) tell();
        absent = true;
        return retry();
      }
      if (absent) {
        // Back (a pane by that id again): what a read shows changed.
        absent = false;
        tell();
      }
      sessionIds = [...new Set(pane.placements.map((p) => p.sessionId))];
    } catch {
      return retry();
    }
    if (stopped) return;
    if (!runner.control) return poll();
    try {
      const opened = await controlFor(runner, address).watch(paneId, sessionIds, (batch) => {
        if (batch.output.length > 0) tell();
        if (batch.lost) {
          watch = null;
          tell();
          retry();
        }
      });
      if (stopped) return opened.close();
      watch = opened;
      backoff.reset();
      lastScreen = null;
    } catch {
      if (!stopped) await poll();
    }
  };
  // Ready once the first attempt has its events, its first screen to compare, or has failed.
  const ready = start().catch(() => {});
  return {
    ready,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      watch?.close();
      watch = null;
    },
  };
}
