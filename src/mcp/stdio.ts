/**
 * The stdio transport: newline-delimited JSON-RPC on stdin/stdout, as MCP's stdio transport
 * specifies, with the answers the protocol asks for that the SDK's own transport does not give:
 * a line that is not JSON gets a parse error (-32700), a request that is not a valid JSON-RPC
 * message gets -32600 (invalid_message.ts), a line over {@link MAX_LINE_BYTES} is refused
 * instead of ending the process, with its id when it shows one (long_line_id.ts). Lines are
 * gathered without copying on every chunk, so a large line costs one copy (line_splitter.ts).
 * Answers are written in turn, with stdin held back while the client does not read them.
 * Standing in for the SDK's transport behind the same interface keeps it one module's change.
 *
 * It (and the files it imports) imports nothing of the SDK but types, so that it can read stdin
 * while the SDK still loads (front_desk.ts): the SDK's message check is handed in, and until it
 * is, every message is held in arrival order unless the front desk answers it.
 *
 * @module
 */

import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { wireJson } from "./bounds.ts";
import { type MessageCheck, refusalOf } from "./invalid_message.ts";
import { LineSplitter, MAX_LINE_BYTES } from "./line_splitter.ts";
import { lastKeyId, topLevelId } from "./long_line_id.ts";

/**
 * Offered every JSON value read before the SDK's check is handed in: true when it took the
 * message (answered it), false to hold it for the SDK.
 */
export type Intercept = (value: unknown) => boolean;

/**
 * Answers waiting to be written, in bytes, beyond which stdin is not read: a client that sends
 * and does not read cannot make the server hold answers without end.
 */
const MAX_UNWRITTEN_BYTES = 8 * 1024 * 1024;

/**
 * Bytes read from stdin and held unprocessed while answers wait to be written (see
 * {@link MAX_UNWRITTEN_BYTES}), beyond which stdin is not read either.
 */
const MAX_HELD_INPUT_BYTES = 8 * 1024 * 1024;

/**
 * Requests read and not answered yet beyond which a new one is refused at once (not run): each
 * holds its parsed message and the SDK's state for it until answered, and a client that sends
 * without end (a flood of pings, or waits that last) would hold memory without end, and the
 * process's exit would wait on every one of them.
 */
export const MAX_REQUESTS_IN_FLIGHT = 1024;

/**
 * The same in the bytes of their lines: parsed, a line of JSON takes many times its size (a
 * megabyte of `{},` some 22 MB). A request alone is taken whatever its size (up to
 * {@link MAX_LINE_BYTES}).
 */
export const MAX_REQUEST_BYTES_IN_FLIGHT = 8 * 1024 * 1024;

/** The error code of a request refused while too many wait for their answers (see above). */
export const BUSY_CODE = -32029;

/** How long a close waits at most for answers still being written to a client that reads. */
const CLOSE_WRITE_WAIT_MS = 500;

/**
 * A write to stdout not done after this long: the client is not reading (a pipe it reads takes
 * a chunk in microseconds), and a close does not wait for it or what is queued behind it.
 */
const STALLED_WRITE_MS = 100;

/** Where the transport reads and writes: stdin and stdout unless a test hands in others. */
export interface StdioStreams {
  readonly input?: ReadableStream<Uint8Array>;
  readonly output?: { write(bytes: Uint8Array): Promise<number> };
}

/** A message waiting its turn to be written. */
interface Queued {
  bytes: Uint8Array;
  /** What it stands for, when a newer message of the same key may replace it (see keyOf). */
  readonly key: string | null;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** MCP over this process's stdin and stdout. */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /**
   * Called when stdin ends. The transport stays open for writing, so answers to calls still
   * running can go out; the owner closes it. Without a handler, end of input closes at once.
   */
  oninputend?: () => void;
  /** Called when stdin ends before the SDK's check is handed in (see {@link release}). */
  onheldend?: () => void;
  #closed = false;
  readonly #whenClosed = Promise.withResolvers<void>();
  /** Requests read and not answered yet: their ids, each with the bytes of its line. */
  readonly #unanswered = new Map<string | number, number>();
  /** The bytes of the lines of {@link #unanswered}'s requests. */
  #unansweredBytes = 0;
  /**
   * The ids of `subscriptions/listen` requests read and not ended yet: not answered (a stream's
   * last answer, or a refusal: the SDK's, or 2025-11-25's "method not found") nor cancelled. An
   * open stream holds its id as a request does: the SDK's stdio entry routes a cancel of that
   * id to the stream, and takes any answer with it for the stream's end.
   */
  readonly #listens = new Set<string | number>();
  #writing: Promise<void> = Promise.resolve();
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #check: MessageCheck | undefined;
  /**
   * Messages read before the check was handed in and not taken by the intercept, in order, each
   * with the bytes of its line.
   */
  #held: { value: unknown; bytes: number }[] = [];
  #intercept: Intercept | undefined;
  #inputEnded = false;
  /** The client's end of stdout is closed: nothing more can reach it. */
  #outputGone = false;
  /** Bytes queued for stdout and not written yet. */
  #unwritten = 0;
  /** Settled when {@link #unwritten} falls under the bound again. */
  #drained: PromiseWithResolvers<void> | null = null;
  /** Messages queued and not being written yet that a newer one may replace, by key. */
  readonly #replaceable = new Map<string, Queued>();
  /**
   * Input has ended or a close began: from then on no send waits for its bytes to be written
   * (a client that stopped reading would hold the close, and the process, open).
   */
  #letGo = false;
  /** What the sends of messages still queued wait on (settled when written, or let go). */
  readonly #waiting = new Set<PromiseWithResolvers<void>>();
  /** Since when the write to stdout under way has waited (`performance.now()`); null: none. */
  #writeSince: number | null = null;
  /** Settled when a write to stdout completes. */
  #progress: PromiseWithResolvers<void> | null = null;
  /** When the process is to have ended (`performance.now()`; see {@link endBy}). */
  #endBy = Infinity;
  /** Chunks read from stdin while answers wait to be written, processed once they drain. */
  #inbox: Uint8Array[] = [];
  #inboxBytes = 0;
  /** Stdin's bytes gathered into lines, each handled as it completes. */
  readonly #lines = new LineSplitter({
    line: (bytes) => this.#line(bytes),
    tooLong: (head, tail) => this.#refuseLong(head, tail),
  });
  readonly #input: () => ReadableStream<Uint8Array>;
  readonly #output: () => { write(bytes: Uint8Array): Promise<number> };

  /**
   * A transport that checks messages with `check`; without it, messages are held (or offered to
   * `intercept`) until {@link release} hands a check in.
   */
  constructor(check?: MessageCheck, intercept?: Intercept, streams: StdioStreams = {}) {
    this.#check = check;
    this.#intercept = intercept;
    this.#input = () => streams.input ?? Deno.stdin.readable;
    this.#output = () => streams.output ?? Deno.stdout;
  }

  /** Bytes queued for stdout and not written yet. */
  get unwrittenBytes(): number {
    return this.#unwritten;
  }

  /**
   * Starts reading stdin (once; a second call does nothing); resolves at once, reading goes on
   * until end of input. End of input is reported once the held messages are released.
   */
  start(): Promise<void> {
    if (this.#reader) return Promise.resolve();
    this.#reader = this.#input().getReader();
    this.#read().finally(() => {
      this.#inputEnded = true;
      this.#letSendsGo();
      if (this.#check) this.#endOfInput();
      else this.onheldend?.();
    });
    return Promise.resolve();
  }

  #endOfInput(): void {
    if (this.oninputend) this.oninputend();
    else this.close();
  }

  /**
   * Hands in the SDK's message check: no more intercepting; the held messages go to `onmessage`
   * in arrival order, then everything read after them; an end of input already read is
   * reported after them.
   */
  release(check: MessageCheck): void {
    if (this.#check) return;
    this.#check = check;
    this.#intercept = undefined;
    const held = this.#held;
    this.#held = [];
    for (const { value, bytes } of held) this.#message(value, bytes);
    if (this.#inputEnded) this.#endOfInput();
  }

  /**
   * Reads stdin to its end. Answers the client has not read yet (over
   * {@link MAX_UNWRITTEN_BYTES}) hold up processing its requests, not reading them: what comes
   * meanwhile is held (up to {@link MAX_HELD_INPUT_BYTES}, past which reading waits too), so
   * that a client that stopped reading and closed its end is seen to have gone. At the end of
   * input what is held is processed (no more can come), then the end is reported.
   */
  async #read(): Promise<void> {
    const reader = this.#reader!;
    try {
      while (true) {
        while (
          this.#blocked() && this.#inboxBytes > MAX_HELD_INPUT_BYTES && !this.#closed &&
          !this.#outputGone
        ) {
          this.#drained ??= Promise.withResolvers<void>();
          await this.#drained.promise;
        }
        if (this.#closed || this.#outputGone) break;
        const { value, done } = await reader.read();
        if (done) break;
        if (this.#blocked() || this.#inbox.length > 0) {
          this.#inbox.push(value);
          this.#inboxBytes += value.length;
          this.#processHeld();
        } else this.#lines.consume(value);
      }
      if (this.#closed || this.#outputGone) return;
      this.#processHeld(true);
      this.#lines.end();
    } catch (error) {
      if (!this.#closed) this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Whether answers the client has not read hold up processing what it sends. */
  #blocked(): boolean {
    return this.#unwritten > MAX_UNWRITTEN_BYTES;
  }

  /** Processes the chunks held while answers waited, while they do not (all of them at `end`). */
  #processHeld(end = false): void {
    while (this.#inbox.length > 0 && (end || !this.#blocked()) && !this.#closed) {
      const chunk = this.#inbox.shift()!;
      this.#inboxBytes -= chunk.length;
      try {
        this.#lines.consume(chunk);
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  #line(bytes: Uint8Array): void {
    const text = decoder.decode(bytes).trim();
    if (text === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.#answer(null, -32700, "Parse error: the line is not JSON.");
      return;
    }
    if (unsafeId(value)) {
      // JSON.parse rounds such an id (9007199254740993 reads as 9007199254740992): answered
      // with it, the answer could match another request the client awaits.
      this.#answer(
        null,
        -32600,
        "Invalid request: a numeric id must be a safe integer (at most 9007199254740991 either " +
          "way); send a larger one as a string.",
      );
      return;
    }
    if (!this.#check) {
      if (!this.#intercept?.(value)) this.#held.push({ value, bytes: bytes.length });
      return;
    }
    this.#message(value, bytes.length);
  }

  /** Hands on a message read from a line of `bytes` bytes, or answers it (see {@link #refused}). */
  #message(value: unknown, bytes: number): void {
    let message: JSONRPCMessage;
    try {
      message = this.#check!(value);
    } catch {
      const refusal = refusalOf(value, this.#check!);
      if (refusal) this.#answer(refusal.id, refusal.code, refusal.message);
      return;
    }
    if (this.#refused(message, bytes)) return;
    this.#track(message, bytes);
    this.onmessage?.(message);
  }

  /**
   * Whether a request is answered at once instead of handed on: its id is one a request still
   * waiting for its answer or a listen stream still open has (the client could not tell the
   * answers apart, and a cancel of it would stop the other), or too many wait already
   * ({@link MAX_REQUESTS_IN_FLIGHT}, {@link MAX_REQUEST_BYTES_IN_FLIGHT}). Notifications and
   * answers always go on: a cancel makes room. A `subscriptions/listen` is held to the first
   * rule only: it stays open until the connection ends, the SDK bounds those streams, and what
   * each holds is cut to what it may be granted as it is handed on (listen_streams.ts).
   */
  #refused(message: JSONRPCMessage, bytes: number): boolean {
    if (!("method" in message) || !("id" in message)) return false;
    const id = message.id;
    if (this.#unanswered.has(id) || this.#listens.has(id)) {
      // Written here, not sent: the answer to the request that holds the id is still to come,
      // and this one is no answer to it (send() would take it for one).
      this.#answer(
        id,
        -32600,
        `Invalid request: id ${JSON.stringify(id)} is already in use by a request not answered ` +
          "yet (or a listen stream still open); give each request an id of its own.",
      );
      return true;
    }
    if (message.method === "subscriptions/listen") return false;
    const count = this.#unanswered.size;
    if (
      count >= MAX_REQUESTS_IN_FLIGHT ||
      (count > 0 && this.#unansweredBytes + bytes > MAX_REQUEST_BYTES_IN_FLIGHT)
    ) {
      this.#answer(
        id,
        BUSY_CODE,
        `Server busy: ${count} requests are waiting for their answers (at most ` +
          `${MAX_REQUESTS_IN_FLIGHT} at once, ${
            MAX_REQUEST_BYTES_IN_FLIGHT / 1024 / 1024
          } MB of them); this one was not run. Send it again once some are answered.`,
      );
      return true;
    }
    return false;
  }

  /**
   * Counts a request as unanswered until its answer is sent or the client cancels it. A
   * `subscriptions/listen` stays open by design until the connection ends, so it is not counted
   * (nor bounded); its id is held until the stream ends all the same ({@link #listens}).
   */
  #track(message: JSONRPCMessage, bytes: number): void {
    if (!("method" in message)) return;
    if ("id" in message) {
      if (message.method === "subscriptions/listen") this.#listens.add(message.id);
      else {
        this.#unanswered.set(message.id, bytes);
        this.#unansweredBytes += bytes;
      }
    } else if (message.method === "notifications/cancelled") {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id === "string" || typeof id === "number") this.#answered(id);
    }
  }

  /** A request answered (or cancelled), or a listen stream ended: its id is free again. */
  #answered(id: string | number): void {
    this.#listens.delete(id);
    const bytes = this.#unanswered.get(id);
    if (bytes === undefined) return;
    this.#unanswered.delete(id);
    this.#unansweredBytes -= bytes;
  }

  /**
   * Resolves when every request read so far has been answered (or cancelled), or after
   * `waitMs`: a client that closes its end right after its last request still gets the answers
   * that are nearly done, including those of requests still queued inside the SDK when stdin
   * ended.
   */
  async settle(waitMs: number): Promise<void> {
    const until = Date.now() + waitMs;
    while (
      this.#unanswered.size > 0 && Date.now() < until && !this.#closed && !this.#outputGone
    ) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /**
   * Answers a line too long to read with the request's id: the message's own `id` (never one
   * inside its params), found at its head or as its last key (where the SDK's clients put it);
   * else with a null id.
   */
  #refuseLong(head: Uint8Array, tail: Uint8Array): void {
    const id = topLevelId(decoder.decode(head)) ?? lastKeyId(decoder.decode(tail));
    this.#answer(id, -32600, `Invalid request: a line over ${MAX_LINE_BYTES} bytes is not read.`);
  }

  #answer(id: string | number | null, code: number, message: string): void {
    this.#write({ jsonrpc: "2.0", id, error: { code, message } });
  }

  /**
   * Sends an answer made without the SDK (the front desk's), as one line; an answer to a
   * request not held.
   */
  sendRaw(message: unknown): Promise<void> {
    return this.#write(message);
  }

  /** Sends one message as one line. */
  send(message: JSONRPCMessage): Promise<void> {
    if (!("method" in message) && "id" in message && message.id !== null) {
      // Answered as the answer is sent: what it holds from then on is the unwritten answer's,
      // which the bound on unwritten bytes counts. (Untracked once written instead, a client
      // that read the answer and sent its next request could find it refused as busy, its read
      // done before the write's completion; and a late write untracked a later request that
      // took the id after a cancel.)
      this.#answered(message.id as string | number);
      return this.#write(message);
    }
    return this.#write(message);
  }

  /**
   * Queues one message as one line; resolves once it is written, or at once when input has
   * ended or a close began. A change notification (`notifications/resources/updated` of a
   * stream and URI, `notifications/progress` of a token) still waiting its turn is replaced by
   * a newer one of the same key rather than queued behind it: an update only says "read it
   * again" and the latest progress says all the earlier one did, so a client that stopped
   * reading holds at most one of each, however busy the pane.
   */
  #write(message: unknown): Promise<void> {
    if (this.#outputGone) return Promise.resolve();
    // C1 controls, line separators and bidi controls escaped: a client that splits lines
    // Unicode-wise (Python's splitlines) or prints what it reads takes none as it is.
    const bytes = encoder.encode(`${wireJson(message)}\n`);
    const key = keyOf(message);
    const waiting = key === null ? undefined : this.#replaceable.get(key);
    if (waiting) {
      this.#unwritten += bytes.length - waiting.bytes.length;
      waiting.bytes = bytes;
      // Sent as far as its sender is concerned: the one it replaced carries it.
      return Promise.resolve();
    }
    const queued: Queued = { bytes, key };
    if (key !== null) this.#replaceable.set(key, queued);
    this.#unwritten += bytes.length;
    const sent = Promise.withResolvers<void>();
    if (!this.#letGo) this.#waiting.add(sent);
    this.#writing = this.#writing.then(async () => {
      // Its turn: from now on it is written as it is.
      if (key !== null && this.#replaceable.get(key) === queued) this.#replaceable.delete(key);
      if (this.#closed || this.#outputGone) return;
      const output = this.#output();
      const out = queued.bytes;
      let written = 0;
      while (written < out.length) {
        this.#writeSince = performance.now();
        try {
          written += await output.write(out.subarray(written));
        } finally {
          this.#writeSince = null;
          this.#progress?.resolve();
          this.#progress = null;
        }
      }
    }).catch((error) => {
      // The client closed its end of stdout: it is gone, as when it closes stdin.
      if (!this.#outputGone) {
        this.#outputGone = true;
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        this.#reader?.cancel().catch(() => {});
      }
    }).finally(() => {
      this.#unwritten -= queued.bytes.length;
      this.#waiting.delete(sent);
      sent.resolve();
      if (!this.#blocked()) {
        if (this.#drained) {
          this.#drained.resolve();
          this.#drained = null;
        }
        this.#processHeld();
      }
    });
    return this.#letGo ? Promise.resolve() : sent.promise;
  }

  /** Every send resolves from now on without waiting for its bytes (see {@link #letGo}). */
  #letSendsGo(): void {
    this.#letGo = true;
    for (const sent of this.#waiting) sent.resolve();
    this.#waiting.clear();
  }

  /**
   * Resolves once every answer queued has been written, the client stopped reading (a write
   * has waited {@link STALLED_WRITE_MS}), stdout is gone, or `until` (`performance.now()`).
   */
  async #writtenWhileRead(until: number): Promise<void> {
    while (this.#unwritten > 0 && !this.#outputGone) {
      const now = performance.now();
      const since = this.#writeSince;
      if (now >= until || (since !== null && now - since >= STALLED_WRITE_MS)) return;
      const wake = since === null ? until : Math.min(until, since + STALLED_WRITE_MS);
      this.#progress ??= Promise.withResolvers<void>();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.#writing,
        this.#progress.promise,
        new Promise((resolve) => timer = setTimeout(resolve, wake - now)),
      ]);
      clearTimeout(timer);
    }
  }

  /**
   * Resolves once the transport has closed, whoever closed it: the SDK's stdio entry takes
   * `onclose` for itself, and the process still has to learn that the connection is over.
   */
  get closed(): Promise<void> {
    return this.#whenClosed.promise;
  }

  /**
   * The process is to have ended by `at` (a `performance.now()` time): a close waits for answers
   * still being written no longer than that (serve.ts shares one deadline among the exit's steps).
   */
  endBy(at: number): void {
    this.#endBy = at;
  }

  /**
   * Stops reading and reports the close once. Answers still being written are waited for while
   * the client reads them, for {@link CLOSE_WRITE_WAIT_MS} at most and never past
   * {@link endBy}'s time; not at all once a write has waited {@link STALLED_WRITE_MS}: a client
   * that stopped reading its stdout cannot hold the process open, nor use up the time its
   * exit's other steps (a person's settings given back) have.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#letSendsGo();
    await this.#writtenWhileRead(Math.min(performance.now() + CLOSE_WRITE_WAIT_MS, this.#endBy));
    this.#closed = true;
    this.#drained?.resolve();
    try {
      await this.#reader?.cancel();
    } catch {
      // stdin already ended
    }
    this.#whenClosed.resolve();
    this.onclose?.();
  }
}

/** The list changes a newer one of the same method and stream replaces while it waits. */
const LIST_CHANGED = new Set([
  "notifications/resources/list_changed",
  "notifications/tools/list_changed",
  "notifications/prompts/list_changed",
]);

/**
 * What a notification stands for when a newer one may replace it while it waits: a resource
 * update of one stream (or, with no stream, of the connection) and URI, a list change of one
 * stream (or of the connection) and list, or a progress token's progress; null for anything
 * else. A list change only says "list it again": a thousand streams told of churning panes
 * while the client did not read held more memory every second.
 */
function keyOf(message: unknown): string | null {
  const m = message as { id?: unknown; method?: unknown; params?: Record<string, unknown> };
  if (typeof m !== "object" || m === null || "id" in m) return null;
  const meta = m.params?._meta as Record<string, unknown> | undefined;
  const stream = JSON.stringify(meta?.["io.modelcontextprotocol/subscriptionId"] ?? null);
  if (m.method === "notifications/resources/updated" && typeof m.params?.uri === "string") {
    return `updated ${stream} ${m.params.uri}`;
  }
  if (typeof m.method === "string" && LIST_CHANGED.has(m.method)) {
    return `${m.method} ${stream}`;
  }
  const token = m.params?.progressToken;
  if (m.method === "notifications/progress" && token !== undefined) {
    return `progress ${JSON.stringify(token)}`;
  }
  return null;
}

/**
 * Whether `value` is a message whose `id` is a number past the safe integers: JSON.parse has
 * already rounded it, so it cannot be answered with the id the client sent (JSON-RPC asks for
 * the same value; MCP's schema takes an integer, and the SDK, parsing the same way, cannot see
 * the rounding).
 */
function unsafeId(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const id = (value as { id?: unknown }).id;
  return typeof id === "number" && Number.isInteger(id) && !Number.isSafeInteger(id);
}
