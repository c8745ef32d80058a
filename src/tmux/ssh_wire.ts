/**
 * What crosses the wire to a remote shell and back: the command line it runs (always tmux, each
 * argument one quoted word, so that no value can become a shell word) and the marker that line
 * prints first, after which alone the output is tmux's (what comes before is the remote shell's
 * start-up files).
 *
 * @module
 */

/** Extra folders searched for tmux on the remote host, after the PATH ssh gives a command. */
const REMOTE_PATH_TAIL = "/usr/local/bin:/opt/homebrew/bin:/opt/local/bin:/snap/bin";

/**
 * One word for the remote shell: single-quoted, with `'` and `\` written outside the quotes
 * as `\'` and `\\`, which means the same to sh, bash, dash, ksh, zsh and fish (fish would read
 * a backslash inside single quotes as an escape).
 */
export function shellWord(word: string): string {
  return `'${word.replace(/['\\]/g, (c) => `'\\${c}'`)}'`;
}

/**
 * The command line the remote shell runs: the marker on stdout and stderr, then tmux with
 * `args`, found on the command PATH or in the usual extra folders, with `env` set on top of
 * what the shell gives a command. The marker comes after a newline of its own
 * ({@link markerLine}).
 */
export function remoteTmuxCommand(
  marker: string,
  binary: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): string {
  const vars = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new RangeError(`not a variable: ${name}`);
    return `${shellWord(`${name}=${value}`)} `;
  });
  return `${markerLine(marker)}; ${markerLine(marker, " >&2")}; ` +
    `exec env PATH="$PATH:${REMOTE_PATH_TAIL}" ${vars.join("")}` +
    [binary, ...args].map(shellWord).join(" ");
}

/**
 * Prints the marker on a line of its own whatever came before: a start-up file that printed
 * text without a final newline (a terminal title, `printf '\033]0;…\007'`, is common) would
 * otherwise leave the marker in the middle of its line, never found.
 */
export function markerLine(marker: string, redirect = ""): string {
  return `echo${redirect}; echo ${marker}${redirect}`;
}

/**
 * Finds the marker line in a stream and passes on only what follows it: what came before is
 * the remote shell's (start-up files), never tmux's. Holds at most 64 KiB while looking.
 */
export class AfterMarker {
  readonly #marker: Uint8Array;
  /** What was read so far, after a newline standing for the start of the stream. */
  #held = new Uint8Array([0x0a]);
  #found = false;

  /** Looks for `marker` on a line of its own. */
  constructor(marker: string) {
    this.#marker = new TextEncoder().encode(`\n${marker}\n`);
  }

  /** Whether the marker has been seen. */
  get found(): boolean {
    return this.#found;
  }

  /** What was held back while the marker was not yet seen (for an error message). */
  get held(): Uint8Array {
    return this.#found ? this.#held : this.#held.subarray(1);
  }

  /** Feeds a chunk; returns the part of it that follows the marker (empty before it). */
  push(chunk: Uint8Array): Uint8Array {
    if (this.#found) return chunk;
    const joined = new Uint8Array(this.#held.length + chunk.length);
    joined.set(this.#held);
    joined.set(chunk, this.#held.length);
    const at = indexOf(joined, this.#marker);
    if (at >= 0) {
      this.#found = true;
      this.#held = new Uint8Array(0);
      return joined.subarray(at + this.#marker.length);
    }
    this.#held = joined.length > 65_536 ? joined.slice(joined.length - 65_536) : joined;
    return new Uint8Array(0);
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}

/**
 * A byte stream of what follows the marker in `source` (readable with a BYOB reader, as the
 * control connection reads). `found` is told once, when the marker comes: the remote shell
 * has handed over to the command.
 */
export function streamAfterMarker(
  source: ReadableStream<Uint8Array>,
  marker: string,
  found: () => void = () => {},
): ReadableStream<Uint8Array> {
  const after = new AfterMarker(marker);
  const reader = source.getReader();
  let told = false;
  return new ReadableStream({
    type: "bytes",
    async pull(controller) {
      while (true) {
        const { done, value } = await reader.read();
        if (done || !value) {
          controller.close();
          controller.byobRequest?.respond(0);
          return;
        }
        const rest = after.push(value);
        if (after.found && !told) {
          told = true;
          found();
        }
        if (rest.length > 0) {
          controller.enqueue(rest.slice());
          return;
        }
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** Passes on what follows the marker; a stream without it (ssh's own error) whole. */
export function stderrAfterMarker(marker: string): TransformStream<Uint8Array, Uint8Array> {
  const after = new AfterMarker(marker);
  return new TransformStream({
    transform(chunk, controller) {
      const rest = after.push(chunk);
      if (rest.length > 0) controller.enqueue(rest.slice());
    },
    flush(controller) {
      if (!after.found && after.held.length > 0) controller.enqueue(after.held);
    },
  });
}
