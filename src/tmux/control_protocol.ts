/**
 * Control mode's line protocol, apart from any process: the bytes tmux answers turned into
 * verified answers and notifications (the command lines sent are made in command_line.ts).
 *
 * tmux frames a command's output as `%begin <time> <number> <flags>`, the output unescaped, then
 * `%end` or `%error` with the same three words. Everything else it sends is a notification on a
 * line of its own starting with `%`, its values escaped (`%output` octal-escapes bytes, as
 * `%extended-output` does for a client attached with `pause-after`; names are escaped too). So
 * the only place where bytes a pane chose can appear raw is inside a command's output: screen
 * rows, scrollback, paths, buffers, error text. A pane can print
 * `%end ...` with the right words (the number is server-wide and can be learnt or guessed), and a
 * reader that took it for the end would cut the answer short, read the rest as notifications
 * (`%output` for another pane), and lose its footing for good.
 *
 * How that is kept from having any effect:
 * - `%begin` numbers only grow (tmux numbers commands server-wide as it runs them); a `%begin`
 *   at or below the highest seen is forged.
 * - Inside a block, only `%end`/`%error` with the block's exact words closes it. A line looking
 *   like a guard that names the block's number, or any block begun since the last verified
 *   point, is forged. Other framing is just output: a pane showing a `tmux -C` session of this
 *   server (older numbers) or of another (any numbers; a later one closes nothing here, and
 *   retiring the connection for it would retire it at every read of that pane).
 * - Outside a block tmux sends notifications, each starting with `%`, and what a hook run for
 *   this client prints (`display-message -p` in a `client-attached` or `pane-focus-in` hook:
 *   tmux 3.3a writes it bare, outside any block). A line not starting with `%` is dropped
 *   there, neither delivered nor taken as data; an `%end` or `%error` there means the reader is
 *   out of step. Dropping opens no way around the rule below: after a forged end the rest of
 *   the real answer is dropped, and the real end still follows it.
 * - A whole block can be printed that way too: a hook's `display-message -p` lines
 *   `%begin N F 1`, text, `%end N F 1` (N learnt from a control client of its own), while this
 *   client's queue is held after one of its commands ended (an `after-` hook's `run-shell`:
 *   tmux 3.3a writes the command's `%end` before it waits). Such a block is framed exactly as
 *   an answer of ours, so each call says how many answers its line may bring (command_line.ts's
 *   `answerBlocks`: one per command, plus what an `if-shell` branch runs): a block past that
 *   many, or after a failed command of a line without branches (a failure ends the line), is
 *   forged, and is an anomaly at its end, before it can count as tmux's progress.
 * - A forged end of block X is always followed, before any later block, by the real end of X,
 *   which under these rules can only be read as an anomaly. Every call ends with a sentinel
 *   (`display-message -p <random nonce>`) no pane can predict: so nothing read since a block
 *   began takes effect (no answer settled, no notification delivered) until a sentinel with the
 *   expected nonce has closed cleanly. Notifications read after a block nobody asked for (a
 *   hook run with this client) wait for a sentinel the protocol sends itself. An anomaly drops
 *   everything held, and the connection carrying the stream must be retired.
 * - Only a change of windows or panes goes out unverified: it carries no data, only "look
 *   again", and looking is a verified call. Holding it would let a hook that changes a layout
 *   after every command answer each sentinel with the need for another.
 *
 * @module
 */

import { joinBytes } from "./chain.ts";
import type { AnswerBlocks } from "./command_line.ts";
import {
  Gathered,
  type Notifications,
  PAUSE,
  STRUCTURAL,
  SUBSCRIPTION,
  TOPOLOGY,
  unescapeOutput,
} from "./control_notifications.ts";
import { randomHex } from "./format.ts";
import { DroppingSink, LineSink } from "./line_sink.ts";
import { AnswerPastBound } from "./tmux_error.ts";

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
  /**
   * Over a control connection only: where each command's output ends in `stdout`, one entry
   * per command tmux ran, in order; -1 for one that failed (its complaint is in `stderr`, and
   * tmux ran no later command of the line). tmux frames each command's output on its own, so
   * this splits a chain's answer exactly, whatever the output holds.
   */
  readonly ends?: readonly number[];
}

// ---------------------------------------------------------------------------------------------
// Answers and notifications

/**
 * One command line sent and not yet answered. The protocol settles it once its sentinel is
 * verified; clear `settle` to drop the answer (the caller stopped waiting).
 */
export interface PendingCall {
  /** The sentinel's expected answer. */
  readonly nonce: string;
  /** Receives the verified answer, or the connection's failure. */
  settle: ((result: ControlResult | Error) => void) | null;
}

interface Call extends PendingCall {
  /** Output of the commands that failed (tmux's complaint), in order; made when one fails. */
  err: LineSink | null;
  failed: boolean;
  /** Where each command's output ended (-1: it failed); see {@link ControlResult.ends}. */
  readonly ends: number[];
  /** Most bytes its answer may hold ({@link ControlProtocol.send}). */
  readonly bound: number;
  /** Set once its answer grew past {@link bound}: the rest is read and dropped. */
  overflowed: boolean;
  /** How many answers its line may bring ({@link ControlProtocol.send}). */
  readonly blocks: AnswerBlocks;
}

/** A line whose answers are not counted (its caller did not say). */
const UNCOUNTED: AnswerBlocks = { most: Infinity, exact: false };
/** A sentinel of the protocol's own: no command but the sentinel. */
const NO_COMMANDS: AnswerBlocks = { most: 0, exact: true };

/** Past this, the answer sink is let go once its answer was handed over, not kept for the next. */
const KEEP_SINK_BYTES = 1024 * 1024;

/** Knobs of {@link ControlProtocol}, for tests. */
export interface ProtocolOptions {
  /** Makes sentinel nonces (tests pass predictable ones to write streams by hand). */
  readonly nonce?: () => string;
  /** Least time between two sentinels of the protocol's own (default 50 ms). */
  readonly sentinelGapMs?: number;
  /** Longest line read before the stream counts as broken (default {@link MAX_LINE_BYTES}). */
  readonly maxLineBytes?: number;
  /** Largest answer held before the stream counts as broken (default {@link MAX_ANSWER_BYTES}). */
  readonly maxAnswerBytes?: number;
  /**
   * Most output held unverified before the stream counts as broken (default
   * {@link MAX_HELD_BYTES}).
   */
  readonly maxHeldBytes?: number;
}

/**
 * Longest line tmux may send before the stream counts as broken (retired, a framing anomaly):
 * tmux writes a pane's output in `%output` lines of at most a few KB each, notifications are
 * short, and an answer's line is a row of a pane, at its longest a joined (`capture-pane -J`)
 * line of a whole history, tens of MB for a huge history. An endless line is no tmux's.
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Largest answer held before the stream counts as broken; as pipe_read.ts's one-shot bound. */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/**
 * Most `%output` held while a check of the protocol's own is unanswered (after a block nobody
 * asked for) before the stream counts as broken: tmux answers the check in a moment, unless a
 * person's hook job holds this client's commands up, or the tmux is no tmux (a host's fake one
 * that sends such a block, then output without end and no answer, would fill memory).
 */
export const MAX_HELD_BYTES = 64 * 1024 * 1024;

/** What the protocol needs from, and tells, the connection carrying it. */
export interface ProtocolHandlers {
  /** Sends text (whole command lines) to tmux. */
  write(text: string): void;
  /** Verified notifications: at most once per chunk pushed, before that chunk's answers. */
  deliver(notifications: Notifications): void;
  /** The attach itself failed, for this reason (tmux then ends the client). */
  refused(reason: string): void;
  /**
   * The stream broke the protocol: everything unverified was dropped, nothing more will be
   * read, and the connection must be retired (its pending calls failed, its child ended).
   */
  anomaly(reason: string): void;
}

interface Block {
  /** `<time> <number> <flags>`, as the closing guard must repeat it. */
  readonly id: string;
  readonly number: number;
  /** True for the commands this client sent (flags 1); hooks and the attach are 0. */
  readonly ours: boolean;
  /** Where the block's lines go: its call's output, or a sink of its own. */
  readonly sink: LineSink;
  /** The sink's length when the block began. */
  readonly start: number;
}

const BEGIN = /^%begin (\d+) (\d+) (\d+)$/;
/** Any line shaped like a guard; its number is the second word. */
const GUARD = /^%(?:begin|end|error) \d+ (\d+) \d+$/;

/** Where the next line starting with "%" begins, at or after line start `from`; else the end. */
function nextPercentLine(buf: Uint8Array, from: number): number {
  let at = buf.indexOf(0x25, from);
  while (at > from && buf[at - 1] !== 0x0a) at = buf.indexOf(0x25, at + 1);
  return at === -1 ? buf.length : at;
}

/**
 * Where the data of an `%extended-output %N AGE ... : DATA` line begins (tmux writes output so
 * to a client attached with `pause-after`, the age being how long tmux held it): after the
 * first ` : ` past the pane id at `space` (the fields before it are tmux's, numbers and words
 * without a colon; the data is escaped like `%output`'s). -1 when there is none.
 */
function afterFields(line: Uint8Array, space: number): number {
  for (let at = line.indexOf(0x3a, space + 1); at !== -1; at = line.indexOf(0x3a, at + 1)) {
    if (line[at - 1] === 0x20 && line[at + 1] === 0x20) return at + 2;
  }
  return -1;
}

function startsWith(line: Uint8Array, prefix: string): boolean {
  if (line.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (line[i] !== prefix.charCodeAt(i)) return false;
  return true;
}

/** The first 256 bytes as one char each: guards and ids are short ASCII. */
function ascii(bytes: Uint8Array): string {
  const n = Math.min(bytes.length, 256);
  let text = "";
  for (let i = 0; i < n; i++) text += String.fromCharCode(bytes[i]);
  return text;
}

/**
 * A line for a diagnostic: what a pane printed may hold escape sequences meant for whoever
 * reads the log, so anything but printable ASCII is shown as `\xNN`.
 */
function quote(text: string): string {
  const shown = text.slice(0, 60).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
  return `"${shown}"`;
}

/** A sentinel nonce: 96 random bits, so nothing a pane shows can be it. */
export function newNonce(): string {
  return `tmux-mcp-${randomHex(12)}`;
}

/**
 * Reads what a control client's tmux sends (pushed in chunks of any size) and sends the
 * command lines it is asked to, holding every effect until a sentinel has verified the framing
 * it was read under (see the module documentation for why that suffices).
 */
export class ControlProtocol {
  readonly #handlers: ProtocolHandlers;
  readonly #newNonce: () => string;
  readonly #calls: Call[] = [];
  /**
   * Output of the oldest waiting call's commands: answers come strictly in the order the calls
   * were sent, so one sink serves them all, and each answer is copied out once, whole (a sink
   * per call would leave its doubling buffers behind, megabytes for a large answer).
   */
  #out = new LineSink();
  /** The line the last chunks left open, in the parts it came in (joined once it ends). */
  #carry: Uint8Array[] = [];
  /** Bytes in {@link #carry}. */
  #carryBytes = 0;
  readonly #maxLineBytes: number;
  readonly #maxAnswerBytes: number;
  readonly #maxHeldBytes: number;
  /** Bytes of `%output` in {@link #held}. */
  #heldBytes = 0;
  #block: Block | null = null;
  /** Blocks closed so far (the first is the attach). */
  #blocks = 0;
  #highest = -1;
  /** Numbers of blocks begun since the last verified point. */
  readonly #begun = new Set<number>();
  /** False from a block's `%begin` until a sentinel verified everything read since. */
  #verified = true;
  /** Verified, to be delivered at the end of this chunk. */
  #ready = new Gathered();
  /** Read since the last verified point; dropped on an anomaly. */
  #held = new Gathered();
  /** Answers verified in this chunk, settled after its notifications are delivered. */
  readonly #settled: [Call, ControlResult | Error][] = [];
  #broken: string | null = null;
  readonly #sentinelGapMs: number;
  #lastOwnSentinel = -Infinity;
  /** A sentinel of the protocol's own waiting for its turn (see {@link #verifySoon}). */
  #deferred: ReturnType<typeof setTimeout> | undefined;
  /** When tmux last ended a command of ours (`performance.now()`); see {@link answeredAt}. */
  #answeredAt = performance.now();

  /** A protocol speaking through `handlers`. */
  constructor(handlers: ProtocolHandlers, options: ProtocolOptions = {}) {
    this.#handlers = handlers;
    this.#newNonce = options.nonce ?? newNonce;
    this.#sentinelGapMs = options.sentinelGapMs ?? 50;
    this.#maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
    this.#maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
    this.#maxHeldBytes = options.maxHeldBytes ?? MAX_HELD_BYTES;
  }

  /** Why the stream was found broken, or null while it holds. */
  get broken(): string | null {
    return this.#broken;
  }

  /**
   * When tmux last ended a command this client sent (`performance.now()`; the protocol's
   * creation before any): tmux runs a client's commands in the order sent, so a call waiting
   * since then waits behind the command tmux is at, not behind a queue it is working through.
   */
  get answeredAt(): number {
    return this.#answeredAt;
  }

  /** Calls sent and not yet answered (sentinels of the protocol's own included). */
  get pending(): number {
    return this.#calls.length;
  }

  /**
   * Sends a command line (already quoted, see `controlLine` in command_line.ts) followed by its
   * sentinel on a line of its own: a failing command skips the rest of its own line only, so the
   * sentinel always answers, and everything before it is this call's. An answer that grows past
   * `bound` bytes is read to its end holding nothing more, and the call fails with
   * {@link AnswerPastBound}.
   *
   * `blocks` says how many answers the line may bring (`answerBlocks` in command_line.ts): a
   * block of flags 1 past that many, or (for a line running no command text of its own) one
   * after a command that failed, is none of its answers but a block a hook printed bare, and
   * breaks the stream like any forged framing.
   */
  send(
    line: string,
    settle: (result: ControlResult | Error) => void,
    bound = Infinity,
    blocks: AnswerBlocks = UNCOUNTED,
  ): PendingCall {
    // Its sentinel verifies whatever a deferred one of the protocol's own was to.
    clearTimeout(this.#deferred);
    this.#deferred = undefined;
    return this.#send(line, settle, bound, blocks);
  }

  #send(
    line: string | null,
    settle: PendingCall["settle"],
    bound = Infinity,
    blocks: AnswerBlocks = NO_COMMANDS,
  ): Call {
    const call: Call = {
      nonce: this.#newNonce(),
      err: null,
      failed: false,
      settle,
      ends: [],
      bound,
      overflowed: false,
      blocks: line === null ? NO_COMMANDS : blocks,
    };
    this.#calls.push(call);
    const sentinel = `display-message -p ${call.nonce}\n`;
    this.#handlers.write(line === null ? sentinel : `${line}\n${sentinel}`);
    return call;
  }

  /** Fails every call still waiting (the connection is gone); nothing more is read. */
  fail(error: Error): void {
    this.#broken ??= error.message;
    this.#out = new LineSink();
    clearTimeout(this.#deferred);
    this.#deferred = undefined;
    this.#held = new Gathered();
    this.#heldBytes = 0;
    for (const call of this.#calls.splice(0)) call.settle?.(error);
  }

  /** Reads the next bytes tmux sent. */
  push(chunk: Uint8Array): void {
    if (this.#broken !== null) return;
    let rest = chunk;
    if (this.#carry.length > 0) {
      // Finish the line the last chunks left open on its own, then read the rest of this one
      // where it lies: joining the two whole would copy every chunk once more. A chunk with no
      // line end only joins the open line's parts: copying and scanning the whole line again
      // for each one made a line of n chunks cost n² (a 32 MB line, seconds).
      const nl = chunk.indexOf(0x0a);
      if (nl === -1) {
        this.#carry.push(chunk.slice());
        this.#carryBytes += chunk.length;
        rest = new Uint8Array(0);
      } else {
        const line = joinBytes([...this.#carry, chunk.subarray(0, nl + 1)]);
        rest = chunk.subarray(nl + 1);
        this.#carry = this.#open(this.#consume(line));
      }
    }
    if (rest.length > 0 && this.#broken === null) this.#carry = this.#open(this.#consume(rest));
    if (this.#carryBytes > this.#maxLineBytes && this.#broken === null) {
      // An endless line would grow without limit (see MAX_LINE_BYTES).
      this.#anomaly(`a line longer than ${this.#maxLineBytes} bytes`);
    }
    // What was verified before any anomaly is genuine: deliver it, then answer.
    if (!this.#ready.empty) {
      const ready = this.#ready;
      this.#ready = new Gathered();
      this.#handlers.deliver(ready);
    }
    for (const [call, result] of this.#settled.splice(0)) call.settle?.(result);
    if (this.#broken !== null) this.#handlers.anomaly(this.#broken);
  }

  /** What {@link ControlProtocol.#consume} left: the open line's first part, or none. */
  #open(left: Uint8Array): Uint8Array[] {
    this.#carryBytes = left.length;
    return left.length > 0 ? [left] : [];
  }

  /** Reads the whole lines of `buf`; returns a copy of what follows the last one. */
  #consume(buf: Uint8Array): Uint8Array {
    let start = 0;
    while (start < buf.length && this.#broken === null) {
      const block = this.#block;
      if (block && buf[start] !== 0x25) {
        // Inside a command's answer, every line up to the next one starting with "%"
        // (which may end the block) is output: copy them in one go.
        const stop = nextPercentLine(buf, start);
        const end = buf.lastIndexOf(0x0a, stop - 1);
        if (end < start) break;
        block.sink.appendLines(buf.subarray(start, end + 1));
        start = end + 1;
        this.#bound(block);
        continue;
      }
      const i = buf.indexOf(0x0a, start);
      if (i === -1) break;
      this.#line(buf.subarray(start, i));
      start = i + 1;
    }
    return this.#broken === null ? buf.slice(start) : new Uint8Array(0);
  }

  #line(line: Uint8Array): void {
    const block = this.#block;
    if (block) {
      if (line[0] === 0x25 && (line[1] === 0x62 || line[1] === 0x65)) {
        this.#guardInBlock(line, block);
      } else {
        block.sink.append(line);
        this.#bound(block);
      }
      return;
    }
    // A hook's output (see the module documentation): nobody's, and no sign of lost footing,
    // which only an end or error outside a block shows.
    if (line[0] !== 0x25) return;
    const extended = startsWith(line, "%extended-output ");
    if (extended || startsWith(line, "%output ")) {
      const from = extended ? 17 : 8;
      const space = line.indexOf(0x20, from);
      if (space === -1) return;
      const paneId = ascii(line.subarray(from, space));
      const start = extended ? afterFields(line, space) : space + 1;
      if (start === -1) return;
      const data = unescapeOutput(line.subarray(start));
      const into = this.#gather();
      into.addOutput(paneId, data);
      if (into === this.#held && (this.#heldBytes += data.length) > this.#maxHeldBytes) {
        this.#anomaly(
          `more than ${this.#maxHeldBytes} bytes of output held for a check tmux has not answered`,
        );
      }
      return;
    }
    if (startsWith(line, "%begin ")) return this.#begin(ascii(line));
    if (startsWith(line, "%end ") || startsWith(line, "%error ")) {
      return this.#anomaly(`${quote(ascii(line))} outside any answer`);
    }
    const word = ascii(line.subarray(0, 40)).split(" ")[0];
    if (word === "%session-changed") this.#gather().sessionId = ascii(line).split(" ")[1] ?? "";
    if (word === "%session-window-changed") {
      this.#gather().addWindowChange(ascii(line.subarray(0, 80)).split(" ")[1] ?? "");
    }
    if (word === "%subscription-changed") {
      const m = SUBSCRIPTION.exec(new TextDecoder().decode(line.subarray(0, 65_536)));
      if (m) this.#gather().subscriptions.set(m[1], m[2]);
      return;
    }
    if (TOPOLOGY.has(word)) this.#ready.topology = true;
    if (word === "%window-close" || word === "%unlinked-window-close") {
      this.#ready.closedWindows.add(ascii(line.subarray(0, 80)).split(" ")[1] ?? "");
    }
    if (word === "%client-detached" || word === "%client-session-changed") {
      this.#ready.clients = true;
    }
    // A change carries no data, only "look again" (and looking is a verified call): it is not
    // held, so a hook that changes a layout after every command cannot keep sentinels coming.
    if (STRUCTURAL.has(word)) this.#ready.changed = true;
    // A pane's output dropped and our place in it moved up (tmux's `pause-after`, a respawn's
    // place resets: control.ts's withPlaceResets): what the pane shows may have changed unseen,
    // so look again. Which pane was paused is data (its watchers are told of a gap and the
    // connection asks for it again): held until verified like output.
    if (word === "%pause" || word === "%continue") this.#ready.changed = true;
    if (word === "%pause") {
      const m = PAUSE.exec(ascii(line.subarray(0, 80)));
      if (m) this.#gather().paused.add(m[1]);
    }
  }

  /** Where a notification read now goes: delivered with this chunk, or held until verified. */
  #gather(): Gathered {
    if (this.#verified) return this.#ready;
    // Held: make sure a sentinel is on its way, or it would be held for ever.
    if (this.#calls.length === 0 && this.#deferred === undefined) this.#verifySoon();
    return this.#held;
  }

  /**
   * Sends a sentinel of the protocol's own, at most one per {@link ProtocolOptions.sentinelGapMs}:
   * a hook run after every `display-message` that makes a pane write would otherwise answer
   * each sentinel with output needing the next one, as fast as tmux can go.
   */
  #verifySoon(): void {
    const wait = this.#lastOwnSentinel + this.#sentinelGapMs - performance.now();
    if (wait <= 0) {
      this.#lastOwnSentinel = performance.now();
      this.#send(null, null);
      return;
    }
    this.#deferred = setTimeout(() => {
      this.#deferred = undefined;
      if (this.#broken !== null || this.#calls.length > 0) return;
      this.#lastOwnSentinel = performance.now();
      this.#send(null, null);
    }, wait);
  }

  #begin(text: string): void {
    const m = BEGIN.exec(text);
    if (!m) return this.#anomaly(`a malformed ${quote(text)}`);
    const number = Number(m[2]);
    if (!(number > this.#highest)) {
      return this.#anomaly(`block ${number} began after block ${this.#highest}`);
    }
    const ours = m[3] === "1";
    const head = this.#calls[0];
    if (ours && !head) return this.#anomaly(`an answer (block ${number}) to no command`);
    this.#highest = number;
    this.#begun.add(number);
    this.#verified = false;
    // A command of ours writes straight into the oldest waiting call's output, unless that
    // grew past its bound (then only a sentinel is looked for).
    const sink = !ours ? new LineSink() : head.overflowed ? new DroppingSink() : this.#out;
    this.#block = {
      id: `${m[1]} ${m[2]} ${m[3]}`,
      number,
      ours,
      sink,
      start: sink.length,
    };
  }

  #guardInBlock(line: Uint8Array, block: Block): void {
    const text = ascii(line);
    if (text === `%end ${block.id}`) return this.#close(block, true);
    if (text === `%error ${block.id}`) return this.#close(block, false);
    const m = GUARD.exec(text);
    if (m) {
      // Output can show framing of other commands: earlier ones of this server, or any of
      // another's (a `tmux -C` in a pane). This block's number, or one of ours since the last
      // check, only a forger shows; a later one cannot close anything here, so it is output.
      const number = Number(m[1]);
      if (number === block.number || this.#begun.has(number)) {
        return this.#anomaly(`${quote(text)} inside block ${block.number}`);
      }
    }
    block.sink.append(line);
    this.#bound(block);
  }

  #close(block: Block, ok: boolean): void {
    this.#block = null;
    const first = this.#blocks++ === 0;
    const { sink, start } = block;
    if (!block.ours) {
      // The attach itself comes first (flags 0, before `%session-changed`); later ones are
      // hooks run with this client, whose output is nobody's.
      if (first && !ok) {
        this.#handlers.refused(new TextDecoder().decode(sink.view(start)).trim());
      }
      return;
    }
    const head = this.#calls[0];
    // A single line: its only newline is its last byte.
    const view = sink.view(start);
    const only = view.length > 0 && view.indexOf(0x0a) === view.length - 1 ? view : null;
    const sentinel = ok && only && ascii(only.subarray(0, only.length - 1)) === head.nonce;
    if (!sentinel) {
      // Not the sentinel, so one of the line's answers, unless the line has given them all: a
      // block printed bare by a hook (tmux 3.3a writes what a hook's `display-message -p`
      // prints to the control client used last), framed with flags 1 and a number learnt from
      // a control client of its own, while this client's queue is held (an `after-` hook's
      // `run-shell`). Judged at its end, before it moves answeredAt: forged blocks can hold a
      // stuck call's clock back only while they are within the count.
      const { most, exact } = head.blocks;
      if (head.ends.length >= most) {
        return this.#anomaly(
          `more answers than the ${most} command${
            most === 1 ? "" : "s"
          } sent (block ${block.number})`,
        );
      }
      if (exact && head.ends.at(-1) === -1) {
        return this.#anomaly(`an answer (block ${block.number}) after a command that failed`);
      }
    }
    this.#answeredAt = performance.now();
    if (sentinel) {
      // The sentinel: everything before it was this call's, and everything read since the last
      // verified point was framed as tmux framed it.
      sink.truncate(start);
      this.#calls.shift();
      this.#verified = true;
      this.#begun.clear();
      this.#ready.absorb(this.#held);
      this.#held = new Gathered();
      this.#heldBytes = 0;
      if (head.overflowed) {
        this.#settled.push([head, new AnswerPastBound(head.bound)]);
        return;
      }
      this.#settled.push([head, {
        code: head.failed ? 1 : 0,
        stdout: this.#takeOutput(),
        // A spawned tmux reports a parse error without the "parse error: " a control
        // client is given: drop it, so both paths say the same.
        stderr: head.failed && head.err
          ? new TextDecoder().decode(head.err.view()).replace(/^parse error: /gm, "")
          : "",
        ends: head.ends,
      }]);
      return;
    }
    if (ok) {
      head.ends.push(sink.length);
      if (sink === this.#out && sink.length > head.bound) this.#overflow(head);
      return;
    }
    head.failed = true;
    const err = head.err ??= new LineSink();
    const lines = sink.view(start);
    let at = 0;
    for (let i = lines.indexOf(0x0a); i !== -1; i = lines.indexOf(0x0a, at)) {
      err.append(lines.subarray(at, i));
      at = i + 1;
    }
    sink.truncate(start);
    head.ends.push(-1);
  }

  /** The oldest call's whole output, copied out; the sink is emptied for the next call. */
  #takeOutput(): Uint8Array {
    const out = this.#out.view().slice();
    if (this.#out.capacity > KEEP_SINK_BYTES) this.#out = new LineSink();
    else this.#out.truncate(0);
    return out;
  }

  /**
   * An answer grown past its call's bound is dropped from here on (the call will fail); past
   * the connection's, it breaks the stream (see MAX_ANSWER_BYTES).
   */
  #bound(block: Block): void {
    const { sink } = block;
    const head = this.#calls[0];
    // A block no longer than the call's sentinel line may be that sentinel, which must be
    // recognised: it is judged at its end (#close).
    if (
      block.ours && sink === this.#out && sink.length > head.bound &&
      sink.length - block.start > head.nonce.length + 1
    ) {
      // The rest of the block is read into nothing.
      this.#overflow(head);
      this.#block = { ...block, sink: new DroppingSink(true), start: 0 };
      return;
    }
    if (sink.length > this.#maxAnswerBytes) {
      this.#anomaly(`an answer larger than ${this.#maxAnswerBytes} bytes`);
    }
  }

  /** `head`'s answer grew past its bound: what it holds goes, its buffer with it. */
  #overflow(head: Call): void {
    head.overflowed = true;
    this.#out = new LineSink();
  }

  #anomaly(reason: string): void {
    this.#broken = reason;
    this.#carry = [];
    this.#carryBytes = 0;
    this.#out = new LineSink();
    clearTimeout(this.#deferred);
    this.#deferred = undefined;
    this.#held = new Gathered();
    this.#heldBytes = 0;
    this.#block = null;
  }
}
