/**
 * A growing buffer of lines, for command output read over a control connection: lines are
 * appended into one buffer that doubles as it fills, instead of one small copy per line.
 *
 * @module
 */

/**
 * Lines of command output, each followed by a newline, in one growing buffer. A capture of
 * 100 panes with their history is 200 000 lines: one small copy per line would make as many
 * buffers (and garbage), so lines are appended into this instead.
 */
export class LineSink {
  #buf = new Uint8Array(1024);
  /** Bytes held. */
  length = 0;

  /** Appends one line (without its newline). */
  append(line: Uint8Array): void {
    this.#reserve(line.length + 1);
    this.#buf.set(line, this.length);
    this.length += line.length;
    this.#buf[this.length++] = 0x0a;
  }

  /** Appends whole lines, each already ending with a newline. */
  appendLines(bytes: Uint8Array): void {
    this.#reserve(bytes.length);
    this.#buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** The bytes from `from` to the end (a view, valid until the next append). */
  view(from = 0): Uint8Array {
    return this.#buf.subarray(from, this.length);
  }

  /** Bytes it can hold before it grows. */
  get capacity(): number {
    return this.#buf.length;
  }

  /** Makes room for `more` bytes, doubling so that appends cost amortised constant time. */
  #reserve(more: number): void {
    const need = this.length + more;
    if (need <= this.#buf.length) return;
    const grown = new Uint8Array(Math.max(need, this.#buf.length * 2));
    grown.set(this.#buf.subarray(0, this.length));
    this.#buf = grown;
  }

  /** Drops everything from byte `at`. */
  truncate(at: number): void {
    this.length = at;
  }
}

/** What a {@link DroppingSink} shows once it dropped something: no line, so no sentinel. */
const DROPPED = new Uint8Array([0x0a, 0x0a]);

/**
 * A sink for a block of an answer already past its call's bound: it keeps a short block whole
 * (the call's sentinel, which must still be recognised, or a failing command's complaint) and
 * drops a longer one, so reading the rest of the answer to its end holds nothing.
 */
export class DroppingSink extends LineSink {
  /** Set once a line was dropped; {@link view} then shows no line at all. */
  dropped: boolean;

  constructor(dropped = false) {
    super();
    this.dropped = dropped;
  }

  override append(line: Uint8Array): void {
    if (this.dropped || this.length + line.length + 1 > DROPPING_SINK_KEEPS) this.dropped = true;
    else super.append(line);
  }

  override appendLines(bytes: Uint8Array): void {
    if (this.dropped || this.length + bytes.length > DROPPING_SINK_KEEPS) this.dropped = true;
    else super.appendLines(bytes);
  }

  override view(from = 0): Uint8Array {
    return this.dropped ? DROPPED : super.view(from);
  }
}

/** Bytes a {@link DroppingSink} keeps: far more than a sentinel's line or a complaint. */
export const DROPPING_SINK_KEEPS = 4096;
