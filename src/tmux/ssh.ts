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
 * quickly (see {@link RETRY_AFTER_MS}) and leaves every other host alone. The host's sshd
 * allows a connection only so many sessions (`MaxSessions`): how many this process opens at
 * once, and what it does when one is refused, is ssh_sessions.ts's.
 *
 * What crosses the wire is fixed here: `ssh` options come only from this module and the
 * operator's `--ssh-config`, never from a tool argument; the remote command is always tmux,
 * each argument single-quoted for the remote shell so that no value can become a shell word
 * (ssh_wire.ts). The remote shell may run start-up files that print text: every remote
 * command first prints a marker this process chose, on stdout and on stderr, and only what
 * follows the marker is read as tmux's ({@link AfterMarker}). What ssh says when a host cannot
 * be had is read in ssh_unreachable.ts.
 *
 * run.ts is still the only place that starts processes: it hands this module a spawn function.
 *
 * @module
 */

import { warn } from "../diagnostics.ts";
import { hostKeyRefusal, sshComplaint, SshUnreachable } from "./ssh_unreachable.ts";
import { AfterMarker, markerLine, remoteTmuxCommand } from "./ssh_wire.ts";
import { HostSessions } from "./ssh_sessions.ts";

/** What `--ssh` and `--ssh-config` configured. */
export interface SshOptions {
  /** The destinations a call may name, exactly as given (`user@host`, an alias, `ssh://…`). */
  readonly destinations: readonly string[];
  /** An ssh configuration file, passed as `-F` to every ssh started (default: the user's). */
  readonly configFile?: string;
  /** How long a first connection may take, in seconds (default 5). */
  readonly connectTimeoutS?: number;
}

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

/** After a failed connection, calls fail at once for this long instead of each waiting. */
export const RETRY_AFTER_MS = 3_000;

/** `bytes` random bytes, as hex digits. */
function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
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

/**
 * The time each signal made by {@link withinCallTime} stands for: a wait for a connection that
 * it stops ran out of the call's time, which the error then names.
 */
const callTimes = new WeakMap<AbortSignal, number>();

/**
 * A signal that aborts when one of `stops` does, or once `timeoutMs` have passed: for a call's
 * wait for its host's connection ({@link SshHosts.ensure}), which then tells a call that ran
 * out of time from one that was cancelled.
 */
export function withinCallTime(stops: readonly AbortSignal[], timeoutMs: number): AbortSignal {
  const signal = AbortSignal.any([...stops, AbortSignal.timeout(timeoutMs)]);
  callTimes.set(signal, timeoutMs);
  return signal;
}

/**
 * Why a wait for a connection stopped, by `signal`'s reason: its time ran out (a host that takes
 * the connection and then says nothing: no one cancelled anything), or the call was cancelled.
 */
function whyStopped(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (!(reason instanceof DOMException) || reason.name !== "TimeoutError") {
    return "the call was cancelled";
  }
  const ms = callTimes.get(signal);
  return `no connection within the call's time${ms === undefined ? "" : ` (${ms} ms)`}`;
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
  readonly #sessions = new Map<string, HostSessions>();
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

  /** The sessions this process has open on `host`'s connection (ssh_sessions.ts). */
  sessions(host: string): HostSessions {
    let sessions = this.#sessions.get(host);
    if (!sessions) this.#sessions.set(host, sessions = new HostSessions());
    return sessions;
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

  /**
   * Options every ssh this process starts gets, before its own. A command-line option wins over
   * the configuration, so these undo what the person's config sets up for their own `ssh box`
   * and that is no business of a connection carrying tmux commands: a `RemoteCommand` (`ssh box`
   * landing in tmux; ssh refuses a command line on top of one), a terminal (`-T` against
   * `RequestTTY yes`), their port forwardings (the person's ports held for the server's life,
   * or, with `ExitOnForwardFailure`, no connection while their own ssh holds them), their agent
   * and X display handed to the host, a `LocalCommand` run here, a tun device. Each option is
   * known to OpenSSH 7.6 and later (an option ssh does not know fails every connection), so
   * `SessionType`, `StdinNull` and `ForkAfterAuthentication` (8.7) are not said: a config that
   * sets them makes the host unusable for an interactive ssh as well.
   */
  #common(host: string): string[] {
    const args: string[] = [];
    if (this.#options.configFile) args.push("-F", this.#options.configFile);
    args.push(
      "-T",
      "-o",
      "RemoteCommand=none",
      "-o",
      "ClearAllForwardings=yes",
      "-o",
      "ForwardAgent=no",
      "-o",
      "ForwardX11=no",
      "-o",
      "PermitLocalCommand=no",
      "-o",
      "Tunnel=no",
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
   * set for tmux there, `gated` or not (see {@link remoteTmuxCommand}).
   */
  argv(
    host: string,
    binary: string,
    tmuxArgs: readonly string[],
    env: Readonly<Record<string, string>> = {},
    gated = false,
  ): string[] {
    return [
      ...this.#common(host),
      "-o",
      "ControlMaster=no",
      "--",
      host,
      remoteTmuxCommand(this.marker, binary, tmuxArgs, env, gated),
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
      const onAbort = () => reject(new SshUnreachable(host, whyStopped(signal)));
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
