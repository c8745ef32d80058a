/**
 * Control mode: a long-lived `tmux -C attach` client per tmux server that carries commands
 * (a round trip costs a fraction of a millisecond instead of a process start) and delivers
 * `%output` — every byte a pane writes, as it writes it — so waiting on a pane is driven by
 * events, not by a polling tick.
 *
 * What a control client must never do, and how it is kept from it:
 * - resize anything: it attaches with `-f ignore-size`, so tmux leaves it out of every size
 *   calculation;
 * - count as a person watching: tmux reports it with `client_control_mode` = 1, and identity.ts
 *   never counts such clients;
 * - detach anyone: it never passes `-d` or `-x`;
 * - keep a `destroy-unattached` session alive after its person left: such sessions are never
 *   attached to (waits on their panes poll instead);
 * - run a second command hidden in a value: every argument is single-quoted for tmux's command
 *   parser (see {@link controlLine}); a value that cannot travel on one line (a newline) makes
 *   the call fall back to starting a tmux process.
 *
 * tmux sends `%output` only for panes of the session a control client is attached to. So a
 * server gets one connection for commands (attached to any session), plus, while a wait needs
 * it, one attached to the session of the pane being watched — closed again shortly after its
 * last watcher leaves. A connection that drops (`detach-client -s`, its session killed, the
 * server restarted) is noticed: pending commands fail with {@link ControlUnavailable}, watchers
 * are told output may have been missed, and the next use connects again.
 *
 * @module
 */

import { decodeBytes } from "./format.ts";
import {
  type PersistentChild,
  type RunOptions,
  type ServerAddress,
  TmuxError,
  type TmuxRunner,
} from "./run.ts";

/**
 * The control channel cannot carry this call (no session to attach to, the connection
 * dropped, a value that cannot travel on one line, the runner is closing). The caller falls
 * back to starting a tmux process, or to polling.
 */
export class ControlUnavailable extends Error {
  /**
   * True when the command had been sent before the connection was lost: tmux may have run
   * it. Only a command that may safely run twice can then be retried by spawning.
   */
  readonly sent: boolean;

  /** A control-channel refusal with its reason. */
  constructor(message: string, options: { sent?: boolean } = {}) {
    super(message);
    this.name = "ControlUnavailable";
    this.sent = options.sent ?? false;
  }
}

/** What a command returned: the same shape as `TmuxRunner.exec`. */
export interface ControlResult {
  readonly code: number;
  readonly stdout: Uint8Array;
  readonly stderr: string;
}

const encoder = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// Commands as one line of tmux's command language

/**
 * Splits an argv the way tmux itself does when given arguments (`cmd_parse_from_arguments`):
 * an argument ending in `;` ends a command (the `;` dropped), unless it ends in `\;`, which
 * stands for a literal final `;`. So a control line built from the result means exactly what
 * the same argv means to a spawned tmux.
 */
export function argvCommands(args: readonly string[]): string[][] {
  const commands: string[][] = [];
  let current: string[] = [];
  for (const arg of args) {
    let value = arg;
    let end = false;
    if (value.endsWith(";")) {
      value = value.slice(0, -1);
      if (value.endsWith("\\")) value = `${value.slice(0, -1)};`;
      else end = true;
    }
    if (!end || value !== "") current.push(value);
    if (end) {
      commands.push(current);
      current = [];
    }
  }
  if (current.length > 0) commands.push(current);
  return commands.filter((c) => c.length > 0);
}

/**
 * Quotes one argument for tmux's command parser: inside single quotes nothing is special
 * (`;`, `#`, `$`, `~`, `{`, `}`, `\`, `%`), and a single quote travels as `'\''`.
 */
export function quoteArgument(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/**
 * The control-mode line for an argv, or {@link ControlUnavailable} when it cannot be one: a
 * newline ends a control line, and a command name must be a plain word (a quoted `NAME=value`
 * in command position would be an environment assignment to tmux's parser).
 */
export function controlLine(args: readonly string[]): string {
  const commands = argvCommands(args);
  if (commands.length === 0) throw new ControlUnavailable("no command to send");
  for (const command of commands) {
    if (!/^[a-z][a-z-]*$/.test(command[0])) {
      throw new ControlUnavailable(`"${command[0]}" is not a tmux command name`);
    }
    if (command.some((a) => a.includes("\n"))) {
      throw new ControlUnavailable("an argument holds a newline, which ends a control line");
    }
  }
  return commands.map((c) => c.map(quoteArgument).join(" ")).join(" ; ");
}

// ---------------------------------------------------------------------------------------------
// %output decoding

/** Decodes the octal escapes (`\ooo`) tmux puts in `%output` for control bytes and `\`. */
export function unescapeOutput(data: Uint8Array): Uint8Array {
  if (!data.includes(0x5c)) return data.slice();
  const out = new Uint8Array(data.length);
  let n = 0;
  for (let i = 0; i < data.length; i++) {
    const b = data[i];
    if (
      b === 0x5c && i + 3 < data.length && isOctal(data[i + 1]) && isOctal(data[i + 2]) &&
      isOctal(data[i + 3])
    ) {
      out[n++] = ((data[i + 1] - 48) << 6) | ((data[i + 2] - 48) << 3) | (data[i + 3] - 48);
      i += 3;
    } else {
      out[n++] = b;
    }
  }
  return out.slice(0, n);
}

function isOctal(b: number | undefined): boolean {
  return b !== undefined && b >= 0x30 && b <= 0x37;
}

/** States of the escape-sequence scanner. */
const Esc = { Ground: 0, Escape: 1, Csi: 2, Str: 3, StrEscape: 4, OneMore: 5 } as const;

/** Longest line the decoder builds before it breaks it (binary output has no newlines). */
const MAX_LINE_BYTES = 16_384;
/** Longest escape sequence it follows before giving up on it. */
const MAX_ESCAPE_BYTES = 4_096;

/**
 * Turns what a program writes to its terminal into lines of text: escape sequences (colours,
 * cursor moves, titles) dropped, CR LF and lone CR ending a line (a progress bar's redraws
 * become lines of their own), other control characters dropped. Stateful, because `%output`
 * arrives in arbitrary chunks that split lines, escape sequences and UTF-8 characters. Keeps
 * the most recent lines for a tail.
 */
export class TerminalText {
  #state: number = Esc.Ground;
  #escapeBytes = 0;
  #line: number[] = [];
  #afterCR = false;
  #recent: string[] = [];
  readonly #keep: number;

  /** A decoder that remembers the last `keep` completed lines. */
  constructor(keep = 200) {
    this.#keep = keep;
  }

  /** Feeds bytes; returns the lines they completed. */
  push(bytes: Uint8Array): string[] {
    const done: string[] = [];
    for (const b of bytes) {
      switch (this.#state) {
        case Esc.Ground:
          this.#ground(b, done);
          break;
        case Esc.Escape:
          this.#state = b === 0x5b
            ? Esc.Csi
            : b === 0x5d || b === 0x50 || b === 0x58 || b === 0x5e || b === 0x5f
            ? Esc.Str
            : (b >= 0x20 && b <= 0x2f)
            ? Esc.OneMore
            : Esc.Ground;
          this.#escapeBytes = 0;
          break;
        case Esc.Csi:
          if (b >= 0x40 && b <= 0x7e) this.#state = Esc.Ground;
          else if (b === 0x1b) this.#state = Esc.Escape;
          else if (++this.#escapeBytes > MAX_ESCAPE_BYTES) this.#state = Esc.Ground;
          break;
        case Esc.Str:
          if (b === 0x07) this.#state = Esc.Ground;
          else if (b === 0x1b) this.#state = Esc.StrEscape;
          else if (++this.#escapeBytes > MAX_ESCAPE_BYTES) this.#state = Esc.Ground;
          break;
        case Esc.StrEscape:
          this.#state = b === 0x5c ? Esc.Ground : Esc.Str;
          break;
        case Esc.OneMore:
          this.#state = Esc.Ground;
          break;
      }
    }
    return done;
  }

  #ground(b: number, done: string[]): void {
    const afterCR = this.#afterCR;
    this.#afterCR = false;
    if (b === 0x0a) {
      if (!afterCR) this.#endLine(done);
    } else if (b === 0x0d) {
      this.#endLine(done);
      this.#afterCR = true;
    } else if (b === 0x1b) {
      this.#state = Esc.Escape;
    } else if (b === 0x09 || b >= 0x20 && b !== 0x7f) {
      this.#line.push(b);
      if (this.#line.length >= MAX_LINE_BYTES) this.#endLine(done);
    }
  }

  #endLine(done: string[]): void {
    const line = decodeBytes(Uint8Array.from(this.#line));
    this.#line = [];
    done.push(line);
    this.#recent.push(line);
    if (this.#recent.length > this.#keep) this.#recent.splice(0, this.#recent.length - this.#keep);
  }

  /** The line being written (no line end yet), e.g. a prompt. */
  get partial(): string {
    return decodeBytes(Uint8Array.from(this.#line));
  }

  /** The most recent completed lines, then the partial line when it is not empty. */
  recent(): string[] {
    const partial = this.partial;
    return partial === "" ? [...this.#recent] : [...this.#recent, partial];
  }
}

// ---------------------------------------------------------------------------------------------
// One connection

/** What a watcher of one pane is told, once per chunk tmux sent. */
export interface WatchBatch {
  /** Bytes the pane wrote, decoded from `%output`, in order. */
  readonly output: Uint8Array[];
  /** Windows, panes or sessions changed: the pane may have died, moved or gone. */
  readonly changed: boolean;
  /** The connection is gone: output may have been missed and this watch has ended. */
  readonly lost: boolean;
}

/** Receives a pane's batches. */
export type WatchListener = (batch: WatchBatch) => void;

/** A live watch on one pane; close it when done. */
export interface Watch {
  /** The session the carrying connection is attached to. */
  readonly sessionId: string;
  /** Stops delivery. */
  close(): void;
}

/**
 * Lines of command output, each followed by a newline, in one growing buffer. A capture of
 * 100 panes with their history is 200 000 lines: one small copy per line would make as many
 * buffers (and garbage), so lines are appended into this instead.
 */
class LineSink {
  #buf = new Uint8Array(1024);
  /** Bytes held. */
  length = 0;
  /** Lines held. */
  lines = 0;

  /** Appends one line (without its newline). */
  append(line: Uint8Array): void {
    this.#reserve(line.length + 1);
    this.#buf.set(line, this.length);
    this.length += line.length;
    this.#buf[this.length++] = 0x0a;
    this.lines++;
  }

  /** Appends whole lines, each already ending with a newline. */
  appendLines(bytes: Uint8Array): void {
    this.#reserve(bytes.length);
    this.#buf.set(bytes, this.length);
    this.length += bytes.length;
    for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) this.lines++;
  }

  /** The bytes from `from` to the end (a view, valid until the next append). */
  view(from = 0): Uint8Array {
    return this.#buf.subarray(from, this.length);
  }

  /** Makes room for `more` bytes, doubling so that appends cost amortised constant time. */
  #reserve(more: number): void {
    const need = this.length + more;
    if (need <= this.#buf.length) return;
    const grown = new Uint8Array(Math.max(need, this.#buf.length * 2));
    grown.set(this.#buf.subarray(0, this.length));
    this.#buf = grown;
  }

  /** Drops everything from byte `at` (where `lines` lines were held). */
  truncate(at: number, lines: number): void {
    this.length = at;
    this.lines = lines;
  }
}

interface Block {
  readonly id: string;
  readonly flags: string;
  /** Where the block's lines go: its command's output, or a sink of its own. */
  readonly sink: LineSink;
  /** The sink's length and line count when the block began. */
  readonly start: number;
  readonly startLines: number;
}

interface Pending {
  readonly nonce: string;
  /** Output of the commands that succeeded, in order. */
  readonly out: LineSink;
  /** Output of the commands that failed (tmux's complaint), in order. */
  readonly err: LineSink;
  failed: boolean;
  /** Cleared when the caller stopped waiting (timeout, cancel); the answer is then dropped. */
  settle: ((result: ControlResult | Error) => void) | null;
}

interface Watcher {
  readonly paneId: string;
  readonly listener: WatchListener;
  connection: Connection;
}

const STRUCTURAL = new Set([
  "%layout-change",
  "%window-add",
  "%window-close",
  "%unlinked-window-add",
  "%unlinked-window-close",
  "%window-pane-changed",
  "%session-window-changed",
  "%sessions-changed",
  "%session-changed",
  "%pane-mode-changed",
]);

/** Where the next line starting with "%" begins, at or after line start `from`; else the end. */
function nextPercentLine(buf: Uint8Array, from: number): number {
  let at = buf.indexOf(0x25, from);
  while (at > from && buf[at - 1] !== 0x0a) at = buf.indexOf(0x25, at + 1);
  return at === -1 ? buf.length : at;
}

function startsWith(line: Uint8Array, prefix: string): boolean {
  if (line.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (line[i] !== prefix.charCodeAt(i)) return false;
  return true;
}

function ascii(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes.subarray(0, 256));
}

function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/** One `tmux -C attach` child and the protocol spoken over it. */
class Connection {
  /** The session it is attached to (tmux may move it: `%session-changed`). */
  sessionId = "";
  /** True once it can no longer be used. */
  closed = false;
  readonly watchers = new Set<Watcher>();
  /** Resolves once attached; rejects with {@link ControlUnavailable} if attaching failed. */
  readonly ready: Promise<void>;
  /** Resolves when the child is gone and the reader has stopped. */
  readonly done: Promise<void>;
  idleTimer: ReturnType<typeof setTimeout> | undefined;

  readonly #child: PersistentChild;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending: Pending[] = [];
  readonly #onLost: (c: Connection) => void;
  readonly #onChanged: (c: Connection) => void;
  #readyResolve!: () => void;
  #readyReject!: (e: Error) => void;
  #handshake = true;
  #block: Block | null = null;
  #stderr = "";

  constructor(
    child: PersistentChild,
    onLost: (c: Connection) => void,
    onChanged: (c: Connection) => void,
  ) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#onLost = onLost;
    this.#onChanged = onChanged;
    this.ready = new Promise<void>((resolve, reject) => {
      this.#readyResolve = resolve;
      this.#readyReject = reject;
    });
    this.ready.catch(() => {});
    this.done = Promise.all([this.#read(), this.#drainStderr(), child.status]).then(() => {});
  }

  async #drainStderr(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.#child.stderr) {
        this.#stderr = (this.#stderr + decoder.decode(chunk, { stream: true })).slice(-2_000);
      }
    } catch {
      // The child went away; nothing more to read.
    }
  }

  async #read(): Promise<void> {
    let carry = new Uint8Array(0);
    try {
      for await (const chunk of this.#child.stdout) {
        const buf = carry.length === 0 ? chunk : new Uint8Array(carry.length + chunk.length);
        if (carry.length > 0) {
          buf.set(carry);
          buf.set(chunk, carry.length);
        }
        const output = new Map<string, Uint8Array[]>();
        let changed = false;
        let start = 0;
        while (start < buf.length) {
          const block = this.#block;
          if (block && buf[start] !== 0x25) {
            // Inside a command's answer, every line up to the next one starting with "%"
            // (which may end the block) is output: copy them in one go.
            const stop = nextPercentLine(buf, start);
            const end = buf.lastIndexOf(0x0a, stop - 1);
            if (end < start) break;
            block.sink.appendLines(buf.subarray(start, end + 1));
            start = end + 1;
            continue;
          }
          const i = buf.indexOf(0x0a, start);
          if (i === -1) break;
          changed = this.#line(buf.subarray(start, i), output) || changed;
          start = i + 1;
        }
        carry = buf.slice(start);
        this.#dispatch(output, changed);
      }
    } catch {
      // A read error is a dropped connection, handled below.
    }
    this.#lost();
  }

  /** Handles one protocol line; returns true for a structural notification. */
  #line(line: Uint8Array, output: Map<string, Uint8Array[]>): boolean {
    const block = this.#block;
    if (block) {
      if (line[0] === 0x25 && this.#endsBlock(line, block)) {
        this.#block = null;
        this.#finishBlock(block, startsWith(line, "%end "));
      } else {
        block.sink.append(line);
      }
      return false;
    }
    if (startsWith(line, "%output ")) {
      const space = line.indexOf(0x20, 8);
      if (space === -1) return false;
      const paneId = ascii(line.subarray(8, space));
      const data = unescapeOutput(line.subarray(space + 1));
      const list = output.get(paneId);
      if (list) list.push(data);
      else output.set(paneId, [data]);
      return false;
    }
    if (startsWith(line, "%begin ")) {
      const [, time, number, flags] = ascii(line).split(" ");
      // A command of ours writes straight into the oldest waiting call's output.
      const sink = (flags === "1" ? this.#pending[0]?.out : undefined) ?? new LineSink();
      this.#block = {
        id: `${time} ${number} ${flags}`,
        flags,
        sink,
        start: sink.length,
        startLines: sink.lines,
      };
      return false;
    }
    const word = ascii(line.subarray(0, 40)).split(" ")[0];
    if (word === "%session-changed") {
      this.sessionId = ascii(line).split(" ")[1] ?? "";
      if (this.#handshake) {
        this.#handshake = false;
        this.#readyResolve();
      }
    }
    return STRUCTURAL.has(word);
  }

  #endsBlock(line: Uint8Array, block: Block): boolean {
    const text = ascii(line);
    return text === `%end ${block.id}` || text === `%error ${block.id}`;
  }

  #finishBlock(block: Block, ok: boolean): void {
    const { sink, start, startLines } = block;
    if (block.flags !== "1") {
      // Not a command of ours: the attach itself, answered before `%session-changed`.
      if (this.#handshake && !ok) {
        const reason = new TextDecoder().decode(sink.view(start)).trim();
        this.#handshake = false;
        this.#readyReject(new ControlUnavailable(reason || "tmux refused to attach"));
      }
      return;
    }
    const head = this.#pending[0];
    if (!head || sink !== head.out) return;
    const only = sink.lines - startLines === 1 ? sink.view(start) : null;
    if (ok && only && ascii(only.subarray(0, only.length - 1)) === head.nonce) {
      // The sentinel: everything before it was this call's.
      sink.truncate(start, startLines);
      this.#pending.shift();
      head.settle?.({
        code: head.failed ? 1 : 0,
        stdout: head.out.view(),
        // A spawned tmux reports a parse error without the "parse error: " a control
        // client is given: drop it, so both paths say the same.
        stderr: head.failed
          ? new TextDecoder().decode(head.err.view()).replace(/^parse error: /gm, "")
          : "",
      });
      return;
    }
    if (!ok) {
      head.failed = true;
      const lines = sink.view(start);
      let at = 0;
      for (let i = lines.indexOf(0x0a); i !== -1; i = lines.indexOf(0x0a, at)) {
        head.err.append(lines.subarray(at, i));
        at = i + 1;
      }
      sink.truncate(start, startLines);
    }
  }

  #dispatch(output: Map<string, Uint8Array[]>, changed: boolean): void {
    if (output.size === 0 && !changed) return;
    if (changed) this.#onChanged(this);
    for (const watcher of [...this.watchers]) {
      const mine = output.get(watcher.paneId);
      if (!mine && !changed) continue;
      try {
        watcher.listener({ output: mine ?? [], changed, lost: false });
      } catch {
        // A listener's failure is its own; the connection carries on.
      }
    }
  }

  #lost(): void {
    if (!this.closed) this.closed = true;
    if (this.#handshake) {
      this.#handshake = false;
      const reason = this.#stderr.trim().split("\n")[0];
      this.#readyReject(new ControlUnavailable(reason || "the control client exited"));
    }
    for (const pending of this.#pending.splice(0)) {
      pending.settle?.(new ControlUnavailable("the control connection was lost", { sent: true }));
    }
    this.#writer.close().catch(() => {});
    this.#onLost(this);
  }

  /** Sends one command line and collects its answer. */
  async exec(args: readonly string[], options: RunOptions): Promise<ControlResult> {
    const line = controlLine(args);
    await this.ready;
    if (this.closed) throw new ControlUnavailable("the control connection was lost");
    const nonce = `tmux-mcp-${randomHex(12)}`;
    const { promise, resolve } = Promise.withResolvers<ControlResult | Error>();
    const pending: Pending = {
      nonce,
      out: new LineSink(),
      err: new LineSink(),
      failed: false,
      settle: resolve,
    };
    this.#pending.push(pending);
    // The sentinel is a line of its own: a failing command skips the rest of its own line
    // only, so the sentinel always answers, and everything before it is this call's.
    this.#writer.write(encoder.encode(`${line}\ndisplay-message -p ${nonce}\n`)).catch(() => {});
    const timeoutMs = options.timeoutMs ?? 10_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => pending.settle?.(new TmuxError("cancelled", "The call was cancelled."));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    timer = setTimeout(
      () =>
        pending.settle?.(new TmuxError("timeout", `tmux did not answer within ${timeoutMs} ms.`)),
      timeoutMs,
    );
    if (options.signal?.aborted) onAbort();
    try {
      const result = await promise;
      if (result instanceof Error) throw result;
      return result;
    } finally {
      // Its answer, if it still comes, is consumed by the queue and dropped.
      pending.settle = null;
      clearTimeout(timer);
      timer = undefined;
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Ends the client: stdin closed (tmux then exits by itself), killed if it lingers. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    const killTimer = setTimeout(() => this.#child.kill(), 500);
    await this.#writer.close().catch(() => {});
    await this.done;
    clearTimeout(killTimer);
  }
}

// ---------------------------------------------------------------------------------------------
// Per server

/** How long a watch-only connection stays after its last watcher left. */
const LINGER_MS = 5_000;
/** How long to spawn instead of retrying after finding no session to attach to. */
const NO_SESSION_BACKOFF_MS = 1_000;
/** At most this many control clients per server; beyond, waits poll. */
const MAX_CONNECTIONS = 8;

/** The control connections of one tmux server. */
export class ServerControl {
  readonly #runner: TmuxRunner;
  readonly #address: ServerAddress;
  readonly #connections = new Set<Connection>();
  readonly #opening = new Map<string, Promise<Connection>>();
  #primary: Connection | null = null;
  #acquiring: Promise<Connection> | null = null;
  #closed = false;
  #noSessionUntil = 0;

  /** Connections are opened lazily, on first use. */
  constructor(runner: TmuxRunner, address: ServerAddress) {
    this.#runner = runner;
    this.#address = address;
  }

  /** Live control clients (for tests and diagnostics). */
  get connections(): number {
    return [...this.#connections].filter((c) => !c.closed).length;
  }

  /** Live pane watches (for tests: a cancelled wait must leave none). */
  get watchers(): number {
    let n = 0;
    for (const c of this.#connections) n += c.watchers.size;
    return n;
  }

  /**
   * Runs a command over the control channel. Same result shape as `TmuxRunner.exec`; throws
   * {@link ControlUnavailable} when the channel cannot carry it, so the caller can spawn.
   * Commands run with the control client as their client: always pass explicit targets.
   */
  async exec(args: readonly string[], options: RunOptions = {}): Promise<ControlResult> {
    controlLine(args); // refuse what cannot travel before connecting at all
    const connection = await this.#primaryConnection();
    return await connection.exec(args, options);
  }

  /**
   * Delivers what `paneId` writes to `listener`, through a connection attached to one of
   * `sessionIds` (the sessions its window is linked into). Throws {@link ControlUnavailable}
   * when none can be attached (the caller polls instead).
   */
  async watch(
    paneId: string,
    sessionIds: readonly string[],
    listener: WatchListener,
  ): Promise<Watch> {
    let connection = [...this.#connections].find((c) =>
      !c.closed && sessionIds.includes(c.sessionId)
    );
    if (!connection) {
      const eligible = await this.#eligibleSessions();
      const target = sessionIds.find((s) => eligible.includes(s));
      if (!target) {
        throw new ControlUnavailable(
          "no session of this pane can take a control client (destroy-unattached is on)",
        );
      }
      connection = await this.#open(target);
    }
    clearTimeout(connection.idleTimer);
    const watcher: Watcher = { paneId, listener, connection };
    connection.watchers.add(watcher);
    return {
      sessionId: connection.sessionId,
      close: () => {
        const c = watcher.connection;
        if (!c.watchers.delete(watcher)) return;
        this.#maybeLinger(c);
      },
    };
  }

  /** Closes every connection of this server. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#opening.values()]);
    await Promise.allSettled([...this.#connections].map((c) => c.close()));
    this.#connections.clear();
    this.#primary = null;
  }

  async #primaryConnection(): Promise<Connection> {
    if (this.#primary && !this.#primary.closed) return this.#primary;
    // Concurrent first calls share one attempt: otherwise each would open a client of its own.
    if (!this.#acquiring) {
      this.#acquiring = this.#acquirePrimary().finally(() => this.#acquiring = null);
    }
    return await this.#acquiring;
  }

  async #acquirePrimary(): Promise<Connection> {
    const open = [...this.#connections].find((c) => !c.closed);
    if (open) {
      await open.ready;
      this.#primary = open;
      return open;
    }
    // Without a session to attach to, every call would first ask tmux again: ask at most
    // once a second and spawn meanwhile.
    if (performance.now() < this.#noSessionUntil) {
      throw new ControlUnavailable("no session a control client could attach to");
    }
    const eligible = await this.#eligibleSessions();
    if (eligible.length === 0) {
      this.#noSessionUntil = performance.now() + NO_SESSION_BACKOFF_MS;
      throw new ControlUnavailable("no session a control client could attach to");
    }
    this.#primary = await this.#open(eligible[0]);
    return this.#primary;
  }

  /** Sessions a control client may attach to: all but those with destroy-unattached on. */
  async #eligibleSessions(): Promise<string[]> {
    if (this.#closed || this.#runner.closed) throw new ControlUnavailable("shutting down");
    const result = await this.#runner.exec(this.#address, [
      "list-sessions",
      "-F",
      "#{session_id} #{destroy-unattached}",
    ]);
    if (result.code !== 0) return [];
    return new TextDecoder().decode(result.stdout).split("\n")
      .map((l) => l.split(" "))
      .filter(([id, destroy]) => /^\$\d+$/.test(id) && destroy !== "1" && destroy !== "on")
      .map(([id]) => id);
  }

  #open(sessionId: string): Promise<Connection> {
    const opening = this.#opening.get(sessionId);
    if (opening) return opening;
    const promise = this.#connect(sessionId).finally(() => this.#opening.delete(sessionId));
    this.#opening.set(sessionId, promise);
    return promise;
  }

  async #connect(sessionId: string): Promise<Connection> {
    if (this.#closed || this.#runner.closed) throw new ControlUnavailable("shutting down");
    if (this.connections >= MAX_CONNECTIONS) {
      throw new ControlUnavailable(`already ${MAX_CONNECTIONS} control clients on this server`);
    }
    let child: PersistentChild;
    try {
      child = this.#runner.spawnPersistent(this.#address, [
        "-C",
        "attach-session",
        "-f",
        "ignore-size",
        "-t",
        sessionId,
      ]);
    } catch (error) {
      throw new ControlUnavailable(error instanceof Error ? error.message : String(error));
    }
    const connection = new Connection(
      child,
      (c) => this.#forget(c),
      (c) => this.#recheck(c),
    );
    this.#connections.add(connection);
    try {
      await connection.ready;
    } catch (error) {
      await connection.close();
      this.#connections.delete(connection);
      throw error;
    }
    if (this.#closed) {
      await connection.close();
      throw new ControlUnavailable("shutting down");
    }
    return connection;
  }

  #forget(connection: Connection): void {
    this.#connections.delete(connection);
    if (this.#primary === connection) this.#primary = null;
    clearTimeout(connection.idleTimer);
    for (const watcher of [...connection.watchers]) {
      connection.watchers.delete(watcher);
      try {
        watcher.listener({ output: [], changed: true, lost: true });
      } catch {
        // The watcher's own business.
      }
    }
  }

  /**
   * After a structural change, a watched pane may have left the connection's session (its
   * window moved or unlinked, or the connection was moved to another session): such watchers
   * are told they lost the feed, so they reattach where the pane now is.
   */
  #recheck(connection: Connection): void {
    if (connection.watchers.size === 0 || connection.closed) return;
    connection.exec(
      ["list-panes", "-s", "-t", connection.sessionId, "-F", "#{pane_id}"],
      { timeoutMs: 5_000 },
    ).then((result) => {
      const present = new Set(new TextDecoder().decode(result.stdout).split("\n"));
      for (const watcher of [...connection.watchers]) {
        if (result.code === 0 && present.has(watcher.paneId)) continue;
        connection.watchers.delete(watcher);
        watcher.listener({ output: [], changed: true, lost: true });
      }
      this.#maybeLinger(connection);
    }).catch(() => {
      // The connection went away meanwhile; #forget told the watchers.
    });
  }

  #maybeLinger(connection: Connection): void {
    if (connection.watchers.size > 0 || connection === this.#primary || connection.closed) return;
    clearTimeout(connection.idleTimer);
    connection.idleTimer = setTimeout(() => {
      if (connection.watchers.size > 0 || connection === this.#primary) return;
      this.#connections.delete(connection);
      connection.close().catch(() => {});
    }, LINGER_MS);
  }
}

const servers = new WeakMap<TmuxRunner, Map<string, ServerControl>>();

function addressKey(address: ServerAddress): string {
  if (address.socketPath) return `S:${address.socketPath}`;
  if (address.socketName) return `L:${address.socketName}`;
  return "default";
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
    runner.onClose(async () => {
      await Promise.allSettled([...map.values()].map((s) => s.close()));
      map.clear();
    });
  }
  const key = addressKey(address);
  let control = byAddress.get(key);
  if (!control) {
    control = new ServerControl(runner, address);
    byAddress.set(key, control);
  }
  return control;
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
  options: RunOptions = {},
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
  options: RunOptions = {},
): Promise<ControlResult> {
  return execVia(runner, address, args, options, true);
}

async function execVia(
  runner: TmuxRunner,
  address: ServerAddress,
  args: readonly string[],
  options: RunOptions,
  mayRepeat: boolean,
): Promise<ControlResult> {
  if (!runner.closed && runner.control) {
    try {
      return await controlFor(runner, address).exec(args, options);
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
  return await runner.exec(address, args, options);
}
