/**
 * Stdin's bytes split into lines, with a bound on how long a line may be: lines are gathered
 * without copying on every chunk, so a large line costs one copy, and a line over
 * {@link MAX_LINE_BYTES} is skipped rather than held, keeping only its head and its last bytes
 * to find its id in (long_line_id.ts). What a line means is the transport's (stdio.ts).
 *
 * @module
 */

/** How much of a too-long line's head and end is kept to find its id in. */
const ID_WINDOW_BYTES = 4096;

/** The longest line read; longer ones are answered with an error and skipped. */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/** What the splitter hands on: each whole line, and each line too long to read. */
export interface LineHandlers {
  /** A whole line, without its newline. */
  readonly line: (bytes: Uint8Array) => void;
  /** A line over {@link MAX_LINE_BYTES}: its head and its last bytes, to find its id in. */
  readonly tooLong: (head: Uint8Array, tail: Uint8Array) => void;
}

/**
 * Gathers lines across the chunks read, so that the transport handles each as it completes and
 * a client cannot make it hold a line without end.
 */
export class LineSplitter {
  readonly #handlers: LineHandlers;
  /** The line being gathered across chunks (see {@link consume}). */
  #pieces: Uint8Array[] = [];
  #size = 0;
  /** A line too long to read: its head and its last bytes, to find its id in; else null. */
  #skipping: { head: Uint8Array; tail: Uint8Array } | null = null;

  /** A splitter handing lines to `handlers`. */
  constructor(handlers: LineHandlers) {
    this.#handlers = handlers;
  }

  /** Splits a chunk of stdin into lines, each handled as it completes. */
  consume(value: Uint8Array): void {
    let chunk = value;
    while (chunk.length > 0) {
      const nl = chunk.indexOf(0x0a);
      const part = nl === -1 ? chunk : chunk.subarray(0, nl);
      if (this.#skipping) this.#skipping.tail = lastBytes(this.#skipping.tail, part);
      else if (this.#size + part.length > MAX_LINE_BYTES) {
        const head = (this.#pieces[0] ?? part).slice(0, ID_WINDOW_BYTES);
        this.#skipping = {
          head,
          tail: lastBytes(this.#pieces.at(-1) ?? new Uint8Array(0), part),
        };
        this.#pieces = [];
        this.#size = 0;
      } else {
        this.#pieces.push(part);
        this.#size += part.length;
      }
      if (nl === -1) break;
      const skipping = this.#skipping;
      const line = skipping ? null : join(this.#pieces, this.#size);
      this.#pieces = [];
      this.#size = 0;
      this.#skipping = null;
      if (skipping) this.#handlers.tooLong(skipping.head, skipping.tail);
      else this.#handlers.line(line!);
      chunk = chunk.subarray(nl + 1);
    }
  }

  /**
   * At the end of input: a line too long to read that had no newline is still refused (its
   * sender waits for an answer); an unfinished line of bounded length is dropped.
   */
  end(): void {
    if (this.#skipping) this.#handlers.tooLong(this.#skipping.head, this.#skipping.tail);
    this.#skipping = null;
  }
}

function join(pieces: Uint8Array[], size: number): Uint8Array {
  if (pieces.length === 1) return pieces[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The last {@link ID_WINDOW_BYTES} of `kept` followed by `more`. */
function lastBytes(kept: Uint8Array, more: Uint8Array): Uint8Array {
  if (more.length >= ID_WINDOW_BYTES) return more.slice(more.length - ID_WINDOW_BYTES);
  const keep = Math.min(kept.length, ID_WINDOW_BYTES - more.length);
  const out = new Uint8Array(keep + more.length);
  out.set(kept.subarray(kept.length - keep));
  out.set(more, keep);
  return out;
}
