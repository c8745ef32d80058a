/**
 * Per tmux server: the handshakes of our control-mode clients, and what of ours must not reach
 * tmux during one.
 *
 * tmux 3.3a marks a client as a control client at the first message of its handshake
 * (`IDENTIFY_FLAGS`) but sets up its control state only at the last (`IDENTIFY_DONE`), and
 * several notifications go to every control client without asking whether it has a session or
 * that state: `%sessions-changed` (a session made or ended), `%session-renamed`,
 * `%session-window-changed`, `%window-pane-changed` (another pane made active),
 * `%pane-mode-changed` (copy mode entered or left) and `%client-detached` (an attached client
 * gone). One sent in between dereferences the missing state and the whole server dies, every
 * session in it (tmux/tmux#4980). The window is short (tmux runs its loop about twice in it),
 * but each pass runs the notification queue, and a call of ours on another connection, or a
 * tmux process of ours, lands in it now and then: two calls at once where one starts a client
 * (a first call, a watch in another session, a wait on a channel) and the other makes, ends,
 * renames or selects something.
 *
 * So, per server, a client of ours that starts in control mode takes a **start**: it begins
 * once every act of ours already sent has been answered (up to {@link HoldTimes.drainMs}), and
 * from then until tmux has answered the client (its first byte: tmux writes to a control client
 * only through the state it lacked) every new **act** waits (up to {@link HoldTimes.holdMs}). An
 * act is anything of ours that may change what tmux tells: every command on a control
 * connection (reads too: a connection's commands keep their order), every tmux process of ours
 * but those that only read ({@link onlyReads}: a long capture would otherwise hold a start back
 * for as long as it reads), and the end of an attached control client of ours (tmux tells the
 * others it detached). Starts go one at a
 * time, and the acts that waited for one go before the next. On an SSH host a client's start is
 * taken once the remote shell's start-up files are done, and its tmux runs only then
 * (ssh_wire.ts's RemoteGate): a start taken at the ssh's start would end, past its bound, before
 * tmux even ran there. Likewise a tmux process of ours sent to a host reaches tmux only after
 * those files: until it has (its marker came), a start waits for it past the drain's bound
 * ({@link HandshakeHolds.farAct}, up to {@link HoldTimes.farMs}).
 *
 * What it cannot keep out: a person's own keys and commands, and another process's (another
 * tmux-mcp's included), in that moment; a person's `after-*` hook that a read of ours runs; an
 * act past its bound (a command a person's hook holds for a second, a handshake slower than
 * the hold); and one server reached by two routes, which it takes for two servers: an SSH host
 * (`--ssh`) that is this machine, or reaches the same socket, beside calls made here.
 *
 * @module
 */

import { argvCommands } from "./command_line.ts";

/**
 * Commands that change nothing tmux tells its control clients of: reads. They need not wait for
 * a handshake, nor a handshake for them (a long capture would hold a client's start back for as
 * long as it reads). Aliases included; anything else counts as an act.
 */
const READS = new Set([
  "capture-pane",
  "capturep",
  "display-message",
  "display",
  "has-session",
  "has",
  "list-buffers",
  "lsb",
  "list-clients",
  "lsc",
  "list-commands",
  "lscm",
  "list-keys",
  "lsk",
  "list-panes",
  "lsp",
  "list-sessions",
  "ls",
  "list-windows",
  "lsw",
  "save-buffer",
  "saveb",
  "server-info",
  "info",
  "show-buffer",
  "showb",
  "show-environment",
  "showenv",
  "show-hooks",
  "show-messages",
  "showmsgs",
  "show-options",
  "show",
  "show-window-options",
  "showw",
]);

/**
 * Whether the command line `args` (tmux's own argv: commands separated by `;`) only reads, so
 * that it needs no turn ({@link HandshakeHolds.act}). A command a line nests (`if-shell`,
 * `run-shell`) is no read, nor is any line this cannot read for sure.
 */
export function onlyReads(args: readonly string[]): boolean {
  const commands = argvCommands(args);
  return commands.length > 0 && commands.every((command) => READS.has(command[0]));
}

/** How long a start may hold, and wait to hold. */
export interface HoldTimes {
  /** Longest a start holds new acts back: a handshake slower than this is no longer waited out. */
  readonly holdMs: number;
  /** Longest a start waits for the acts already sent to be answered before it begins. */
  readonly drainMs: number;
  /**
   * Longest a start waits, past `drainMs`, for acts sent that have not reached tmux yet (on an
   * SSH host, still in the remote shell's start-up files: {@link HandshakeHolds.farAct}).
   */
  readonly farMs: number;
}

/**
 * The times a runner's holds use (a handshake takes milliseconds; these bound a stuck one). An
 * act on its way ends within its call's timeout (run.ts's DEFAULT_TIMEOUT_MS, 10 s) or once
 * tmux has it; past that it is no longer waited for.
 */
export const HOLD_TIMES: HoldTimes = { holdMs: 2_000, drainMs: 1_000, farMs: 12_000 };

/** Ends what was taken: once, whatever calls it again. */
export type Release = () => void;

/** One server's starts and acts. */
interface ServerHold {
  /** Acts of ours sent and not yet over. */
  acts: number;
  /** A start holds (from the moment it waits for the acts in flight until it is released). */
  holding: boolean;
  /** Starts waiting for the one holding to end. */
  readonly starts: (() => void)[];
  /** Acts waiting for the start holding to end. */
  readonly waiting: (() => void)[];
  /** Told when no act is in flight. */
  readonly drained: (() => void)[];
  /** Acts in flight that have not reached tmux yet ({@link HandshakeHolds.farAct}). */
  far: number;
  /** Told when no act in flight is still on its way to tmux. */
  readonly near: (() => void)[];
}

/** The error a wait that was cancelled rejects with. */
export type Cancelled = (signal: AbortSignal) => Error;

/** The starts and acts of every server one runner reaches, keyed by server (addressKey). */
export class HandshakeHolds {
  readonly #servers = new Map<string, ServerHold>();
  readonly #times: HoldTimes;
  readonly #cancelled: Cancelled;

  /** `cancelled`: what a wait stopped by its signal rejects with. */
  constructor(cancelled: Cancelled, times: HoldTimes = HOLD_TIMES) {
    this.#cancelled = cancelled;
    this.#times = times;
  }

  #hold(key: string): ServerHold {
    let hold = this.#servers.get(key);
    if (!hold) {
      hold = { acts: 0, holding: false, starts: [], waiting: [], drained: [], far: 0, near: [] };
      this.#servers.set(key, hold);
    }
    return hold;
  }

  /** Forgets a server's record once nothing is in it. */
  #tidy(key: string, hold: ServerHold): void {
    if (
      hold.acts === 0 && !hold.holding && hold.starts.length === 0 && hold.waiting.length === 0
    ) {
      this.#servers.delete(key);
    }
  }

  /**
   * Takes an act's turn on server `key`: at once unless a start holds, else once it is over.
   * Rejects when `signal` aborts first. The act is over when the returned function is called.
   */
  act(key: string, signal?: AbortSignal): Promise<Release> {
    const hold = this.#hold(key);
    const over = once(() => {
      hold.acts--;
      if (hold.acts === 0) { for (const tell of hold.drained.splice(0)) tell(); }
      this.#tidy(key, hold);
    });
    if (signal?.aborted) {
      this.#tidy(key, hold);
      return Promise.reject(this.#cancelled(signal));
    }
    if (!hold.holding) {
      hold.acts++;
      return Promise.resolve(over);
    }
    return queued(hold.waiting, signal, this.#cancelled, () => this.#tidy(key, hold)).then(() =>
      over
    );
  }

  /**
   * {@link act} for an act that reaches tmux some time after it is sent: on an SSH host, once the
   * remote shell has run its start-up files (seconds, on some hosts). Until `arrived` is called
   * (its marker came) or it is over, a start waits for it past {@link HoldTimes.drainMs}: its
   * tmux would otherwise run in the handshake of a client that started meanwhile.
   */
  async farAct(key: string, signal?: AbortSignal): Promise<{ over: Release; arrived: Release }> {
    const over = await this.act(key, signal);
    const hold = this.#hold(key);
    hold.far++;
    const arrived = once(() => {
      hold.far--;
      if (hold.far === 0) { for (const tell of hold.near.splice(0)) tell(); }
    });
    return {
      over: () => {
        arrived();
        over();
      },
      arrived,
    };
  }

  /**
   * Takes a start on server `key`: once no other start holds and the acts already sent are over
   * (or {@link HoldTimes.drainMs} has passed), every new act then waits until the returned
   * function is called (or {@link HoldTimes.holdMs} has passed). Rejects when `signal` aborts
   * before the start begins.
   */
  async start(key: string, signal?: AbortSignal): Promise<Release> {
    const hold = this.#hold(key);
    if (hold.holding) {
      await queued(hold.starts, signal, this.#cancelled, () => this.#tidy(key, hold));
    } else {
      hold.holding = true;
    }
    try {
      await this.#drain(hold, signal);
    } catch (error) {
      this.#over(key, hold);
      throw error;
    }
    const release = once(() => {
      clearTimeout(timer);
      this.#over(key, hold);
    });
    const timer = setTimeout(release, this.#times.holdMs);
    return release;
  }

  /** A start on `hold` is over: the acts that waited go first, then the next start. */
  #over(key: string, hold: ServerHold): void {
    // The next start then waits for those acts to be answered.
    const waited = hold.waiting.splice(0);
    hold.acts += waited.length;
    for (const go of waited) go();
    const next = hold.starts.shift();
    if (next) next();
    else hold.holding = false;
    this.#tidy(key, hold);
  }

  /**
   * Waits until no act is in flight on `hold`, {@link HoldTimes.drainMs} at most; past that, as
   * long as an act has not reached tmux yet, {@link HoldTimes.farMs} at most.
   */
  async #drain(hold: ServerHold, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw this.#cancelled(signal);
    if (hold.acts === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        hold.drained.push(resolve);
        timer = setTimeout(() => {
          if (hold.far === 0) return resolve();
          hold.near.push(resolve);
          timer = setTimeout(resolve, this.#times.farMs);
        }, this.#times.drainMs);
        onAbort = () => reject(this.#cancelled(signal!));
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  /** How many servers have a record (for tests: none once everything is over). */
  get servers(): number {
    return this.#servers.size;
  }
}

/** `fn`, run on its first call only. */
function once(fn: () => void): Release {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/**
 * Waits in `line` until called out of it; when `signal` aborts first, leaves the line, runs
 * `left` and rejects.
 */
function queued(
  line: (() => void)[],
  signal: AbortSignal | undefined,
  cancelled: Cancelled,
  left: () => void,
): Promise<void> {
  if (signal?.aborted) {
    left();
    return Promise.reject(cancelled(signal));
  }
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      const at = line.indexOf(go);
      if (at !== -1) line.splice(at, 1);
      left();
      reject(cancelled(signal!));
    };
    const go = () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    line.push(go);
  });
}
