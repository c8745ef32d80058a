/**
 * Terminal output as text: what a program writes to its terminal (as `%output` delivers it, in
 * arbitrary chunks) turned into lines, escape sequences and control characters dropped.
 *
 * @module
 */

import { decodeBytes } from "./format.ts";

/** States of the escape-sequence scanner. */
const Esc = { Ground: 0, Escape: 1, Csi: 2, Str: 3, StrEscape: 4, OneMore: 5 } as const;

/** Longest line the decoder builds before it breaks it (binary output has no newlines). */
const MAX_LINE_BYTES = 16_384;
/** Longest escape sequence it follows before giving up on it. */
const MAX_ESCAPE_BYTES = 4_096;
/** Room the lines' bytes start with (see TerminalText's #log); more is made as lines need. */
const LOG_BYTES = 16_384;

/**
 * Turns what a program writes to its terminal into lines of text: escape sequences (colours,
 * cursor moves, titles) dropped, CR LF and lone CR ending a line (a progress bar's redraws
 * become lines of their own), other control characters dropped. Stateful, because `%output`
 * arrives in arbitrary chunks that split lines, escape sequences and UTF-8 characters. Keeps
 * the most recent lines for a tail.
 *
 * Lines are kept as bytes, one after another in one buffer, and decoded only when read: a pane
 * printing short lines fast (`yes`) completes hundreds of thousands a second, and building and
 * decoding each one on its own took most of a core. A reader that takes no lines as they come
 * ({@link TerminalText.feed}: a watch that reads the pane's rows instead) has none decoded
 * but the last ones, when {@link TerminalText.recent} asks.
 */
export class TerminalText {
  #state: number = Esc.Ground;
  #escapeBytes = 0;
  #afterCR = false;
  /** Text was added to the partial line since {@link TerminalText.takeWritten} last asked. */
  #written = false;
  /**
   * The kept lines' bytes, then the line being written's, from `#lineStart` to `#end`. Moved
   * to the front (or to a larger buffer) when full, lines no longer kept left behind.
   */
  #log = new Uint8Array(LOG_BYTES);
  #lineStart = 0;
  #end = 0;
  /**
   * Where each kept line begins in `#log`, a ring: the oldest at `#oldest`. A line ends where
   * the next begins (the newest where the line being written does).
   */
  readonly #starts: number[] = [];
  #oldest = 0;
  readonly #keep: number;

  /** A decoder that remembers the last `keep` completed lines. */
  constructor(keep = 200) {
    this.#keep = keep;
  }

  /** Feeds bytes; returns the lines they completed. */
  push(bytes: Uint8Array): string[] {
    const done: string[] = [];
    this.#scan(bytes, done);
    return done;
  }

  /**
   * Feeds bytes, for a reader that takes no lines as they come: the lines they complete are
   * only kept (undecoded) for {@link TerminalText.recent}.
   */
  feed(bytes: Uint8Array): void {
    this.#scan(bytes, null);
  }

  #scan(bytes: Uint8Array, done: string[] | null): void {
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
  }

  #ground(b: number, done: string[] | null): void {
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
      if (this.#end === this.#log.length) this.#makeRoom();
      this.#log[this.#end++] = b;
      this.#written = true;
      if (this.#end - this.#lineStart >= MAX_LINE_BYTES) this.#endLine(done);
    }
  }

  #endLine(done: string[] | null): void {
    const start = this.#lineStart;
    if (done !== null) done.push(decodeBytes(this.#log.subarray(start, this.#end)));
    this.#lineStart = this.#end;
    this.#written = false;
    if (this.#keep <= 0) return;
    if (this.#starts.length < this.#keep) this.#starts.push(start);
    else {
      // The ring is full: the newest line takes the oldest one's place.
      this.#starts[this.#oldest] = start;
      this.#oldest = (this.#oldest + 1) % this.#keep;
    }
  }

  /**
   * Room for one more byte: the bytes from the oldest kept line on moved to the front, into a
   * buffer twice as large as they are when they fill half of it (so that a move comes only
   * after as many bytes again were added).
   */
  #makeRoom(): void {
    const first = this.#starts.length > 0 ? this.#starts[this.#oldest] : this.#lineStart;
    const used = this.#end - first;
    if (used + 1 > this.#log.length / 2) {
      const log = new Uint8Array(Math.max(this.#log.length * 2, (used + 1) * 2));
      log.set(this.#log.subarray(first, this.#end));
      this.#log = log;
    } else this.#log.copyWithin(0, first, this.#end);
    for (let i = 0; i < this.#starts.length; i++) this.#starts[i] -= first;
    this.#lineStart -= first;
    this.#end -= first;
  }

  /** The line being written (no line end yet), e.g. a prompt. */
  get partial(): string {
    return decodeBytes(this.#log.subarray(this.#lineStart, this.#end));
  }

  /**
   * Whether text was added to the partial line since the last call: escape sequences alone (a
   * title, the cursor shown) leave it as it was, and it is then nothing new.
   */
  takeWritten(): boolean {
    const written = this.#written;
    this.#written = false;
    return written;
  }

  /** The most recent completed lines, then the partial line when it is not empty. */
  recent(): string[] {
    const starts = this.#starts;
    const lines: string[] = [];
    for (let i = 0; i < starts.length; i++) {
      const at = (this.#oldest + i) % starts.length;
      const end = i === starts.length - 1 ? this.#lineStart : starts[(at + 1) % starts.length];
      lines.push(decodeBytes(this.#log.subarray(starts[at], end)));
    }
    const partial = this.partial;
    return partial === "" ? lines : [...lines, partial];
  }
}
