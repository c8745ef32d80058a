/**
 * Reading a chained tmux command's output as it arrives. A chain prints captures (text a pane
 * chose: any bytes) between framed records (`display-message` output behind a random guard,
 * see format.ts); the reader tells the two apart chunk by chunk, so a capture of deep history
 * can be counted or matched as it streams in, and never needs to be held whole.
 *
 * A pane cannot forge a record: the guard is random per call and starts with a control byte
 * tmux never stores in a cell.
 *
 * @module
 */

import { parseRecords } from "./format.ts";

/** What the reader found: capture bytes (in order, split anywhere), or one framed record. */
export type ChainEvent =
  | { readonly data: Uint8Array; readonly record?: undefined }
  | { readonly record: string[]; readonly data?: undefined };

const encoder = new TextEncoder();

/** Whether `needle` sits in `hay` at `at`. */
function bytesAt(hay: Uint8Array, at: number, needle: Uint8Array): boolean {
  if (at + needle.length > hay.length) return false;
  for (let i = 0; i < needle.length; i++) if (hay[at + i] !== needle[i]) return false;
  return true;
}

/** Where `needle` first occurs in `hay` at or after `from`, or -1. */
export function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  if (needle.length === 0) return from <= hay.length ? from : -1;
  const first = needle[0];
  const last = hay.length - needle.length;
  for (let i = hay.indexOf(first, from); i !== -1 && i <= last; i = hay.indexOf(first, i + 1)) {
    if (bytesAt(hay, i, needle)) return i;
  }
  return -1;
}

/**
 * Splits a chain's output, pushed in chunks of any size, into capture bytes and records
 * framed with `guard` (each followed by the newline display-message prints). Events hold
 * views into the pushed bytes: use them before the next push.
 */
export class ChainReader {
  readonly #guard: string;
  readonly #open: Uint8Array;
  readonly #close: Uint8Array;
  #carry: Uint8Array = new Uint8Array(0);
  /** A record ended at the end of the last chunk: its newline starts the next one. */
  #newlineDue = false;

  /** A reader for records framed with `guard` (see format.ts's recordFormat). */
  constructor(guard: string) {
    this.#guard = guard;
    this.#open = encoder.encode(`${guard}R`);
    this.#close = encoder.encode(`${guard}E`);
  }

  /** Reads the next bytes. */
  push(chunk: Uint8Array): ChainEvent[] {
    let buf = chunk;
    if (this.#carry.length > 0) {
      buf = new Uint8Array(this.#carry.length + chunk.length);
      buf.set(this.#carry);
      buf.set(chunk, this.#carry.length);
      this.#carry = new Uint8Array(0);
    }
    const events: ChainEvent[] = [];
    let at = 0;
    if (this.#newlineDue && buf.length > 0) {
      this.#newlineDue = false;
      if (buf[0] === 0x0a) at = 1;
    }
    const lead = this.#open[0];
    while (at < buf.length) {
      const mark = buf.indexOf(lead, at);
      if (mark === -1) {
        events.push({ data: buf.subarray(at) });
        return events;
      }
      if (buf.length - mark < this.#open.length) {
        // Perhaps the start of a record: decide once more bytes came.
        if (mark > at) events.push({ data: buf.subarray(at, mark) });
        this.#carry = buf.slice(mark);
        return events;
      }
      if (!bytesAt(buf, mark, this.#open)) {
        events.push({ data: buf.subarray(at, mark + 1) });
        at = mark + 1;
        continue;
      }
      const close = indexOfBytes(buf, this.#close, mark + this.#open.length);
      if (close === -1) {
        if (mark > at) events.push({ data: buf.subarray(at, mark) });
        this.#carry = buf.slice(mark);
        return events;
      }
      if (mark > at) events.push({ data: buf.subarray(at, mark) });
      const end = close + this.#close.length;
      const [record] = parseRecords(buf.subarray(mark, end), this.#guard);
      events.push({ record });
      at = end;
      if (at === buf.length) this.#newlineDue = true;
      else if (buf[at] === 0x0a) at++;
    }
    return events;
  }

  /** The output ended: whatever was held back is capture bytes after all. */
  finish(): ChainEvent[] {
    const rest = this.#carry;
    this.#carry = new Uint8Array(0);
    return rest.length > 0 ? [{ data: rest }] : [];
  }
}

/**
 * Cuts bytes pushed in chunks of any size into lines (without their newline), holding only
 * the unfinished one.
 */
export class LineSplitter {
  #carry: Uint8Array[] = [];

  /** Hands each line the bytes complete to `line` (a view, valid during the call). */
  push(bytes: Uint8Array, line: (bytes: Uint8Array) => void): void {
    let at = 0;
    for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, at)) {
      if (this.#carry.length > 0) {
        this.#carry.push(bytes.subarray(at, nl));
        line(joinBytes(this.#carry));
        this.#carry = [];
      } else line(bytes.subarray(at, nl));
      at = nl + 1;
    }
    if (at < bytes.length) this.#carry.push(bytes.slice(at));
  }

  /** The input ended: an unfinished last line is a line too. */
  finish(line: (bytes: Uint8Array) => void): void {
    if (this.#carry.length > 0) line(joinBytes(this.#carry));
    this.#carry = [];
  }
}

/** The bytes of `chunks` one after another. */
export function joinBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
