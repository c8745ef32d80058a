/**
 * tmux on other machines, through the user's own OpenSSH: one connection per host, carrying
 * every tmux command sent there.
 *
 * Per destination (exactly as the operator gave it to `--ssh`), a master `ssh` holds the one
 * connection (OpenSSH connection multiplexing, its control socket in a private folder: see
 * {@link SshHosts.#controlPath}); every tmux process on that host, one-shot or a long-lived control-mode client
 * (`tmux -C`), is a session multiplexed over it, so no call pays for a handshake. A master
 * that dies (network gone, host rebooted, connection killed) is noticed and started again on
 * the next use; a host that does not answer fails its calls with {@link SshUnreachable}
 * quickly (see {@link RETRY_AFTER_MS}) and leaves every other host alone.
 *
 * What crosses the wire is fixed here: `ssh` options come only from this module and the
 * operator's `--ssh-config`, never from a tool argument; the remote command is always tmux,
 * each argument single-quoted for the remote shell so that no value can become a shell word
 * ({@link shellWord}). The remote shell may run start-up files that print text: every remote
 * command first prints a marker this process chose, on stdout and on stderr, and only what
 * follows the marker is read as tmux's ({@link AfterMarker}).
 *
 * run.ts is still the only place that starts processes: it hands this module a spawn function.
 *
 * @module
 */

import { warn } from "../diagnostics.ts";

/** What `--ssh` and `--ssh-config` configured. */
export interface SshOptions {
  /** The destinations a call may name, exactly as given (`user@host`, an alias, `ssh://…`). */
  readonly destinations: readonly string[];
  /** An ssh configuration file, passed as `-F` to every ssh started (default: the user's). */
  readonly configFile?: string;
  /** How long a first connection may take, in seconds (default 5). */
  readonly connectTimeoutS?: number;
}

/** A host that does not answer over SSH (or refused us); other hosts are unaffected. */
export class SshUnreachable extends Error {
  /** The destination, as configured. */
  readonly host: string;
  /** What ssh wrote on stderr, as far as it was kept (empty when the reason is ours). */
  readonly said: string;

  /**
   * `reason` is ssh's own first line of complaint, or ours. `lasting`: `reason` is a refusal
   * that connecting again cannot change, said with what to do instead ({@link hostKeyRefusal}).
   */
  constructor(host: string, reason: string, said = "", lasting = false) {
    super(
      lasting
        ? `ssh refused to connect to host ${JSON.stringify(host)}: ${reason}`
        : `Host ${JSON.stringify(host)} did not answer over SSH: ${reason}`,
    );
    this.name = "SshUnreachable";
    this.host = host;
    this.said = said;
  }
}

/**
 * Ends the message of a refusal that connecting again cannot change (a host key): the reply
 * then does not say that the next call connects again (mcp/errors.ts).
 */
export const RETRY_WILL_NOT_HELP = "Retrying will not help";

/**
 * The environment every ssh this process starts gets on top of its own: ssh then asks for a
 * passphrase, a password or a host key's acceptance only through the askpass program, and
 * this one can never exist (nothing can be under /dev/null, which is no folder), so every such
 * question is answered "no" at once. `BatchMode=yes` alone does not do it: OpenSSH does not
 * hand it to the ssh a `ProxyJump` starts, which then asks on /dev/tty. This process's
 * children share the controlling terminal of the MCP client that started it, so that question
 * would appear in the middle of the person's terminal and take the keystrokes they meant for
 * the client. A child ssh inherits the environment, however it is started.
 */
export const SSH_ENV: Readonly<Record<string, string>> = {
  SSH_ASKPASS_REQUIRE: "force",
  SSH_ASKPASS: "/dev/null/tmux-mcp-asks-nobody",
};

/**
 * The line of `said` (ssh's stderr) that says what went wrong: lines are cut at `\r` (ssh
 * ends some with `\r\n`), and lines that never say why are passed over: the banner rows of `@`
 * around a warning, ssh's note that the askpass program of {@link SSH_ENV} is missing, and a
 * ProxyJump's ssh (which has not our LogLevel=ERROR) saying it added a host key.
 */
export function sshComplaint(said: string): string | undefined {
  return said.split("\n").map((line) => line.replace(/\r/g, "").trim()).find((line) =>
    line !== "" && !/^@+$/.test(line) && !line.startsWith("ssh_askpass:") &&
    !line.startsWith("Warning: Permanently added")
  );
}

/**
 * What to say when `said` (ssh's stderr) is a refusal of the host's key, or null. A key that
 * changed is a reinstalled host or a machine in the middle; a key not known yet cannot be
 * accepted without a question (see {@link SSH_ENV}). Either way every retry fails the same,
 * and the choice is the person's, made with ssh itself.
 */
export function hostKeyRefusal(said: string, known?: string | null): string | null {
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED/.test(said)) {
    // The name ssh keeps the key under (`[host]:port` for another port), for ssh-keygen -R;
    // only name characters, so that nothing else in the text can become a suggested command.
    // A host's start-up file can write this text too (its stderr comes the same way): given
    // `known`, the name the host's key is kept under, no other name is suggested.
    const named = /Host key for ([\w.:[\]-]+) has changed/.exec(said)?.[1];
    const trusted = known === undefined || named === undefined ? named ?? known : known;
    const name = trusted === null
      ? "with the host's name as known_hosts holds it"
      : `'${trusted ?? "HOST"}'`;
    return "the host's key is not the one known_hosts holds (ssh: REMOTE HOST IDENTIFICATION " +
      `HAS CHANGED; Host key verification failed). ${RETRY_WILL_NOT_HELP}: check the host's ` +
      "key with whoever runs it; only if the change is expected (the host was reinstalled), " +
      `remove the old key (ssh-keygen -R ${name}) and connect once with ssh to accept the ` +
      "new one.";
  }
  if (/Host key verification failed/.test(said)) {
    return "ssh could not verify the host's key, or that of a host on the way to it " +
      "(ProxyJump): it is not in known_hosts, and ssh started here asks no questions " +
      `(Host key verification failed). ${RETRY_WILL_NOT_HELP}: connect once with ssh ` +
      "yourself, check the key it shows, and accept it.";
  }
  return null;
}

/** After a failed connection, calls fail at once for this long instead of each waiting. */
export const RETRY_AFTER_MS = 3_000;

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
function markerLine(marker: string, redirect = ""): string {
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

/** `bytes` random bytes, as hex digits. */
function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
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
 * control connection reads).
 */
export function streamAfterMarker(
  source: ReadableStream<Uint8Array>,
  marker: string,
): ReadableStream<Uint8Array> {
  const after = new AfterMarker(marker);
  const reader = source.getReader();
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

/** Most of a master's stderr kept: room for ssh's complaint, its `@` banner included. */
const MASTER_STDERR_BYTES = 8_192;

/**
 * The first `limit` bytes of `stream`, as text, once it ends. What follows is read and dropped
 * as it comes: a master's stderr carries the remote session's too for the connection's whole
 * life, and a host whose start-up file keeps writing there would otherwise grow this process
 * without bound (or, unread, block the master on a full pipe).
 */
async function firstBytes(stream: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const kept = new Uint8Array(limit);
  let length = 0;
  try {
    for await (const chunk of stream) {
      if (length >= limit) continue;
      const part = chunk.subarray(0, limit - length);
      kept.set(part, length);
      length += part.length;
    }
  } catch {
    // Gone: what was kept is all there is.
  }
  return new TextDecoder().decode(kept.subarray(0, length));
}

/** Starts `ssh` with these arguments, all three streams piped (run.ts provides it). */
export type SshSpawn = (args: readonly string[]) => Deno.ChildProcess;

interface Master {
  readonly child: Deno.ChildProcess;
  readonly ready: Promise<void>;
  alive: boolean;
  /** Started without a socket (ControlPath=none): its failures are never the socket's. */
  readonly direct: boolean;
}

/**
 * The SSH side of a runner: one master connection per configured destination, started on
 * first use and again after it died.
 */
export class SshHosts {
  /** The destinations a call may name. */
  readonly destinations: readonly string[];
  /** The marker remote commands print before tmux runs. */
  readonly marker: string;
  /** Names this process's sockets in `~/.ssh`: short, for a socket path's limit. */
  readonly #socketName: string;
  readonly #options: SshOptions;
  readonly #spawn: SshSpawn;
  readonly #masters = new Map<string, Master>();
  readonly #failed = new Map<string, { until: number; error: SshUnreachable }>();
  readonly #index = new Map<string, number>();
  #folder: string | null = null;
  #madeFolder = false;
  /** No folder ssh could make its sockets in (no `~/.ssh`): every ssh connects on its own. */
  #direct = false;
  #closed = false;

  /** Nothing is started until a host is first used. */
  constructor(options: SshOptions, spawn: SshSpawn) {
    this.#options = options;
    this.destinations = [...options.destinations];
    this.#spawn = spawn;
    options.destinations.forEach((d, i) => this.#index.set(d, i));
    this.marker = `tmux-mcp-${randomHex(16)}`;
    this.#socketName = `tmux-mcp-${randomHex(5)}`;
  }

  /** Whether `host` was configured (exactly as given). */
  has(host: string): boolean {
    return this.#index.has(host);
  }

  /**
   * Where the multiplexing sockets live: a private folder made for this process when it may
   * write one (mode 0700); without write permission (the baked flags grant none), the user's
   * own `~/.ssh` (ssh expands `%d`), where the known_hosts ssh needs lives. Never a shared
   * folder such as /tmp: an ssh client connects to whatever socket sits at its ControlPath
   * without asking whose it is, and a name in a shared folder can be taken first by another
   * user (it shows in every ssh's argv), who would then be handed every command and its input.
   * Without a `~/.ssh` the master cannot make its socket: each call then connects on its own.
   *
   * A Unix socket's path holds at most 107 bytes (103 on macOS), and the master first binds its
   * socket at the ControlPath plus a dot and 16 random characters: in `~/.ssh` the name is
   * short (10 hex digits, unique enough in the user's own folder) so that a home of up to 62
   * bytes fits (58 on macOS). Homes longer still, and a temporary folder as long, cannot hold
   * the socket: each call then connects on its own too ({@link SshHosts.#noSocketFolder}).
   */
  #controlPath(host: string): string {
    if (this.#folder === null) {
      try {
        this.#folder = Deno.makeTempDirSync({ prefix: "tmux-mcp-ssh-" });
        Deno.chmodSync(this.#folder, 0o700);
        this.#madeFolder = true;
      } catch {
        this.#folder = `%d/.ssh/${this.#socketName}`;
      }
    }
    const n = this.#index.get(host) ?? 0;
    return this.#madeFolder ? `${this.#folder}/h${n}` : `${this.#folder}-h${n}`;
  }

  /** Options every ssh this process starts gets, before its own. */
  #common(host: string): string[] {
    const args: string[] = [];
    if (this.#options.configFile) args.push("-F", this.#options.configFile);
    args.push(
      "-T",
      "-o",
      "BatchMode=yes",
      "-o",
      "LogLevel=ERROR",
      "-o",
      `ConnectTimeout=${this.#options.connectTimeoutS ?? 5}`,
      "-o",
      `ControlPath=${this.#direct ? "none" : this.#controlPath(host)}`,
    );
    return args;
  }

  /**
   * The name ssh keeps `host`'s key under in known_hosts (its HostKeyAlias, else its host name,
   * as `[name]:port` off port 22), as `ssh -G` works it out from the configuration without
   * connecting; null when it cannot be told.
   */
  async #keyName(host: string): Promise<string | null> {
    try {
      const child = this.#spawn([
        ...this.#options.configFile ? ["-F", this.#options.configFile] : [],
        "-G",
        "--",
        host,
      ]);
      child.stdin.close().catch(() => {});
      child.stderr.cancel().catch(() => {});
      const [out] = await Promise.all([new Response(child.stdout).text(), child.status]);
      const get = (key: string) => new RegExp(`^${key} (\\S+)$`, "m").exec(out)?.[1];
      const alias = get("hostkeyalias");
      if (alias !== undefined && alias !== "none") return alias;
      const name = get("hostname");
      const port = get("port");
      if (name === undefined) return null;
      return port === undefined || port === "22" ? name : `[${name}]:${port}`;
    } catch {
      return null;
    }
  }

  /**
   * The argv of an ssh that runs tmux with `tmuxArgs` on `host`, over its master, with `env`
   * set for tmux there (see {@link remoteTmuxCommand}).
   */
  argv(
    host: string,
    binary: string,
    tmuxArgs: readonly string[],
    env: Readonly<Record<string, string>> = {},
  ): string[] {
    return [
      ...this.#common(host),
      "-o",
      "ControlMaster=no",
      "--",
      host,
      remoteTmuxCommand(this.marker, binary, tmuxArgs, env),
    ];
  }

  /**
   * Resolves once `host`'s master connection is up, starting it when it is not; throws
   * {@link SshUnreachable} when it cannot be had.
   */
  async ensure(host: string, signal?: AbortSignal): Promise<void> {
    if (this.#closed) throw new SshUnreachable(host, "the server is shutting down");
    const failed = this.#failed.get(host);
    if (failed && performance.now() < failed.until) throw failed.error;
    let master = this.#masters.get(host);
    if (!master || !master.alive) {
      master = this.#start(host);
      this.#masters.set(host, master);
    }
    try {
      if (!signal) return await master.ready;
      const { promise, reject } = Promise.withResolvers<never>();
      const onAbort = () => reject(new SshUnreachable(host, "the call was cancelled"));
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        await Promise.race([master.ready, promise]);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    } catch (error) {
      if (!this.#noSocketFolder(error, master)) throw error;
      return await this.ensure(host, signal);
    }
  }

  /**
   * Whether `error`, from `master`, says ssh could not make its connection socket: no `~/.ssh`
   * to make it in, or a path too long for a Unix socket (a long home folder). Then, once,
   * multiplexing is given up for this process (every ssh connects on its own, which works, only
   * slower) and said so; a master of another host started before that and failing the same way
   * is started again without a socket, never reported as the host not answering.
   */
  #noSocketFolder(error: unknown, master: Master): boolean {
    if (master.direct || !(error instanceof SshUnreachable)) return false;
    // ssh's words for a path too long: the ControlPath itself (a master with ControlMaster=auto
    // first tries to connect to it) or the temporary name it binds first.
    const tooLong = /unix_listener: path .* too long for Unix domain socket|ControlPath too long/
      .test(
        error.said,
      );
    // A folder of our own is there and ours: ssh can bind in it unless the path is too long.
    const noFolder = !this.#madeFolder && /unix_listener: cannot bind/.test(error.said);
    if (!tooLong && !noFolder) return false;
    this.#failed.delete(error.host);
    if (this.#direct) return true;
    this.#direct = true;
    // Masters that failed are not alive, and are started again; one of another host whose
    // shorter path did fit stays until close() ends it, though calls no longer use it.
    this.#failed.clear();
    warn(
      tooLong
        ? `tmux-mcp: ssh's connection socket path is too long for a Unix socket (the ${
          this.#madeFolder ? "temporary" : "home"
        } folder's path is long): each call to an SSH host connects on its own.`
        : "tmux-mcp: ssh cannot keep its connection sockets in ~/.ssh (there is none, or it is " +
          "not yours): each call to an SSH host connects on its own. Create it " +
          "(mkdir -m 700 ~/.ssh) for one connection per host.",
    );
    return true;
  }

  /**
   * Starts `host`'s master. `ControlMaster=auto`, not `yes`: a master killed outright (SIGKILL,
   * the OOM killer) leaves its socket file behind, and with `yes` the next master finds the name
   * taken and runs without a socket, so every later call would connect on its own for the life
   * of this process, silently (LogLevel=ERROR). With `auto` ssh first connects to the socket: a
   * dead one it removes and then binds the name itself. A live one it would use as a master,
   * which is safe only because no one else can put a socket there: the folder is this
   * process's own (mode 0700) or the user's `~/.ssh` ({@link SshHosts.#controlPath}), and every
   * ssh of a call connects to that same path anyway.
   */
  #start(host: string): Master {
    const child = this.#spawn([
      ...this.#common(host),
      "-o",
      // Without sockets it is a plain connection, still telling that the host answers.
      this.#direct ? "ControlMaster=no" : "ControlMaster=auto",
      "-o",
      "ControlPersist=no",
      "-o",
      "ServerAliveInterval=5",
      "-o",
      "ServerAliveCountMax=3",
      "--",
      host,
      // The session's only job is to say the connection is up; cat holds it open until our
      // end of its input closes.
      `${markerLine(this.marker)}; exec cat >/dev/null`,
    ]);
    const master: Master = { child, alive: true, ready: Promise.resolve(), direct: this.#direct };
    const stderr = firstBytes(child.stderr, MASTER_STDERR_BYTES);
    const timeoutMs = ((this.#options.connectTimeoutS ?? 5) + 5) * 1_000;
    const ready = (async () => {
      const after = new AfterMarker(this.marker);
      const reader = child.stdout.getReader();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs);
      });
      try {
        while (!after.found) {
          const next = await Promise.race([reader.read(), timedOut]);
          if (next === "timeout") {
            try {
              child.kill("SIGTERM");
            } catch {
              // Gone already.
            }
            throw new SshUnreachable(host, `no connection within ${timeoutMs / 1000} s`);
          }
          if (next.done) {
            const status = await child.status;
            const said = await stderr;
            const refusal = hostKeyRefusal(
              said,
              /HOST IDENTIFICATION HAS CHANGED/.test(said) ? await this.#keyName(host) : undefined,
            );
            if (refusal) throw new SshUnreachable(host, refusal, said, true);
            const why = sshComplaint(said) ?? `ssh exited with status ${status.code}`;
            throw new SshUnreachable(host, why, said);
          }
          after.push(next.value);
        }
      } finally {
        clearTimeout(timer);
      }
      // Keep reading (and dropping) so the master never blocks on a full pipe.
      (async () => {
        try {
          while (!(await reader.read()).done) { /* drop */ }
        } catch {
          // Gone.
        }
      })();
    })();
    child.status.then(() => master.alive = false, () => master.alive = false);
    (master as { ready: Promise<void> }).ready = ready.catch((error: unknown) => {
      master.alive = false;
      const unreachable = error instanceof SshUnreachable
        ? error
        : new SshUnreachable(host, String(error));
      this.#failed.set(host, { until: performance.now() + RETRY_AFTER_MS, error: unreachable });
      throw unreachable;
    });
    master.ready.catch(() => {});
    return master;
  }

  /**
   * Ends every master (their input closed: the remote `cat` ends, and with it the session),
   * waits up to `waitMs` for them to go, then stops any that linger (SIGTERM).
   */
  async close(waitMs = 500): Promise<void> {
    this.#closed = true;
    const masters = [...this.#masters.values()].filter((m) => m.alive);
    this.#masters.clear();
    for (const m of masters) m.child.stdin.close().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled(masters.map((m) => m.child.status)),
      new Promise((resolve) => timer = setTimeout(resolve, waitMs)),
    ]);
    clearTimeout(timer);
    for (const m of masters) {
      try {
        m.child.kill("SIGTERM");
      } catch {
        // Gone already.
      }
    }
    await Promise.allSettled(masters.map((m) => m.child.status));
    if (this.#madeFolder && this.#folder) {
      await Deno.remove(this.#folder, { recursive: true }).catch(() => {});
    }
  }
}
