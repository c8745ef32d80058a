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
  /** Text was added to the partial line since {@link TerminalText.takeWritten} last asked. */
  #written = false;
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
      this.#written = true;
      if (this.#line.length >= MAX_LINE_BYTES) this.#endLine(done);
    }
  }

  #endLine(done: string[]): void {
    const line = decodeBytes(Uint8Array.from(this.#line));
    this.#line = [];
    this.#written = false;
    done.push(line);
    this.#recent.push(line);
    if (this.#recent.length > this.#keep) this.#recent.splice(0, this.#recent.length - this.#keep);
  }

  /** The line being written (no line end yet), e.g. a prompt. */
  get partial(): string {
    return decodeBytes(Uint8Array.from(this.#line));
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
    const partial = this.partial;
    return partial === "" ? [...this.#recent] : [...this.#recent, partial];
  }
}
