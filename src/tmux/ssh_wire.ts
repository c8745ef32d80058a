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

/** What a gated command waits for on its stdin before it runs tmux ({@link remoteTmuxCommand}). */
const GO_LINE = new Uint8Array([0x0a]);

/**
 * The command line the remote shell runs: the marker on stdout and stderr, then tmux with
 * `args`, found on the command PATH or in the usual extra folders, with `env` set on top of
 * what the shell gives a command. The marker comes after a newline of its own
 * ({@link markerLine}).
 *
 * `gated`: tmux runs only once a line ({@link GO_LINE}) comes on stdin after the marker, and
 * not at all at an end of file instead, so the caller says when tmux starts. A control-mode
 * client's handshake is then held clear of our other calls however long the start-up files
 * took (handshake_hold.ts), and a client given up during them never attaches later unheld:
 * its ssh can be killed outright, as no tmux runs at its other end. The shell's `read` takes
 * its input a byte at a time from a pipe (POSIX; fish alike), and a control client is written
 * to only once tmux has answered it: what follows the line is tmux's.
 */
export function remoteTmuxCommand(
  marker: string,
  binary: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  gated = false,
): string {
  const vars = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new RangeError(`not a variable: ${name}`);
    return `${shellWord(`${name}=${value}`)} `;
  });
  return `${markerLine(marker)}; ${markerLine(marker, " >&2")}; ` +
    (gated ? "read tmux_mcp_go && " : "") +
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
 * has handed over to the command. `cut` ends it early, `source` cancelled: an ssh session
 * client hands its pipes to the host's master, which holds them open until the remote command
 * ends, however the client itself ended.
 */
export function streamAfterMarker(
  source: ReadableStream<Uint8Array>,
  marker: string,
  found: () => void = () => {},
  cut?: AbortSignal,
): ReadableStream<Uint8Array> {
  const after = new AfterMarker(marker);
  const reader = source.getReader();
  const stop = () => void reader.cancel().catch(() => {});
  if (cut?.aborted) stop();
  else cut?.addEventListener("abort", stop, { once: true });
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

/**
 * The go of a gated command (see {@link remoteTmuxCommand}): holds back what its owner writes
 * until tmux has been let go, which {@link letGo} does once the marker came and what must
 * precede the handshake was taken. Until then no tmux runs at the other end, so the child may
 * be killed outright.
 */
export class RemoteGate {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #letGo = Promise.withResolvers<void>();
  #open = false;
  #shut = false;
  #release: () => void = () => {};
  /** The child's stdin as its owner writes to it: every write waits for the go. */
  readonly stdin: WritableStream<Uint8Array>;

  /** Gates `stdin`, the child's own. */
  constructor(stdin: WritableStream<Uint8Array>) {
    const writer = stdin.getWriter();
    const letGo = this.#letGo.promise;
    letGo.catch(() => {});
    this.#writer = writer;
    this.stdin = new WritableStream({
      async write(chunk) {
        await letGo;
        await writer.write(chunk);
      },
      // Before the go, the end of file ends the remote command without tmux.
      close: () => {
        this.shut();
        return writer.close();
      },
      abort: (reason) => {
        this.shut();
        return writer.abort(reason);
      },
    });
  }

  /** Whether tmux was let go (it may run at the other end). */
  get open(): boolean {
    return this.#open;
  }

  /**
   * Takes what `hold` gives (the handshake's hold), then lets tmux go; true once the go is
   * written. False when the gate was shut first: what was taken is then given back at once.
   */
  async letGo(hold: () => Promise<() => void>): Promise<boolean> {
    let release: () => void;
    try {
      release = await hold();
    } catch {
      this.shut();
      return false;
    }
    if (this.#shut) {
      release();
      return false;
    }
    this.#release = release;
    this.#open = true;
    this.#writer.write(GO_LINE).catch(() => {}); // exited meanwhile: its status tells
    this.#letGo.resolve();
    return true;
  }

  /** Never lets go from now on (given up, closed or exited): writes waiting for it fail. */
  shut(): void {
    if (this.#open || this.#shut) return;
    this.#shut = true;
    this.#letGo.reject(new Error("the remote command was never let go"));
  }

  /**
   * Kills `child` (the gated command's ssh) outright if tmux was never let go, and shuts the
   * gate: no tmux runs at its other end, and an ssh session client would wait on SIGTERM for
   * the remote start-up files to end. False, with nothing done, once tmux may run there: a
   * control client is never killed outright then (run.ts's kill).
   */
  killOutright(child: { kill(signal: Deno.Signal): void }): boolean {
    if (this.#open) return false;
    this.shut();
    try {
      child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
    return true;
  }

  /** Gives back what {@link letGo} took (tmux answered). */
  release(): void {
    this.#release();
  }

  /** The child ended: never let go from now on, and what {@link letGo} took given back. */
  ended(): void {
    this.shut();
    this.#release();
  }
}
