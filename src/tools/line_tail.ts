/**
 * The last lines of a text read as it streams (a paste buffer of any size), holding only what a
 * reply can hold of them: what `tailLines` (mcp/bounds.ts) keeps of the whole text is what it
 * keeps of these lines, given the ones before them as counted.
 *
 * @module
 */

import { byteLength, type LinesBefore } from "../mcp/bounds.ts";

/**
 * Splits bytes into lines as `decodeBytes(all).split("\n")` does (decoded the same way, split
 * anywhere), keeping the last lines whose UTF-8 bytes, each with its newline, hold more than
 * `keepBytes` after the first kept one; the lines before are counted. A line longer than that
 * (a buffer without newlines) is kept as its last part only, its first part's bytes counted.
 */
export class LineTail {
  readonly #keep: number;
  readonly #decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  /** Lines kept, oldest first, from {@link #first}; and each one's bytes with its newline. */
  #lines: string[] = [];
  #sizes: number[] = [];
  #first = 0;
  /** Bytes of the lines kept after the first one. */
  #after = 0;
  /** The line not ended yet, and the bytes cut from its start. */
  #open = "";
  #openCut = 0;
  /** Lines counted, not kept, with their bytes (and the bytes cut from lines kept). */
  #before = { lines: 0, bytes: 0 };

  constructor(keepBytes: number) {
    this.#keep = keepBytes;
  }

  /** The next bytes. */
  push(bytes: Uint8Array): void {
    this.#text(this.#decoder.decode(bytes, { stream: true }));
  }

  /** The text is over: its last lines (the one after the last newline too) and those before. */
  finish(): { lines: string[]; before: LinesBefore } {
    this.#text(this.#decoder.decode());
    this.#end(this.#open);
    return { lines: this.#lines.slice(this.#first), before: { ...this.#before } };
  }

  #text(text: string): void {
    let at = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", at)) {
      this.#end(this.#open + text.slice(at, nl));
      this.#open = "";
      at = nl + 1;
    }
    this.#open += text.slice(at);
    // A line longer than a reply holds: only its last part is needed (tailLines keeps a tail
    // of the last line when nothing else fits), its first part counted.
    if (this.#open.length > 2 * this.#keep + 2) {
      let cut = this.#open.length - this.#keep - 1;
      // Not between the halves of a surrogate pair: the pair is kept.
      const c = this.#open.charCodeAt(cut);
      if (c >= 0xdc00 && c <= 0xdfff) cut--;
      this.#openCut += byteLength(this.#open.slice(0, cut));
      this.#open = this.#open.slice(cut);
    }
  }

  /** Line `line` ended (its start cut by {@link #openCut} bytes). */
  #end(line: string): void {
    this.#before.bytes += this.#openCut;
    this.#openCut = 0;
    const size = byteLength(line) + 1;
    if (this.#lines.length > this.#first) this.#after += size;
    this.#lines.push(line);
    this.#sizes.push(size);
    while (this.#after > this.#keep && this.#lines.length - this.#first > 1) {
      this.#before.lines++;
      this.#before.bytes += this.#sizes[this.#first];
      this.#first++;
      this.#after -= this.#sizes[this.#first];
    }
    if (this.#first > 1024 && this.#first * 2 > this.#lines.length) {
      this.#lines = this.#lines.slice(this.#first);
      this.#sizes = this.#sizes.slice(this.#first);
      this.#first = 0;
    }
  }
}
