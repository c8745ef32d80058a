/**
 * A private tmux server for tests: its own socket (`-L tmux-mcp-test-<random>`), no config
 * file, TMUX/TMUX_PANE removed from its environment, and killed by the test that made it.
 * Tests never touch any other server.
 *
 * @module
 */

/** The environment every tmux a test starts gets: the caller's, minus anything tmux-ish. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.TMUX;
  delete env.TMUX_PANE;
  delete env.TMUX_TMPDIR;
  return { LANG: "C.UTF-8", ...env, TERM: "xterm", ...extra };
}

/** Runs a command and returns its stdout; throws with stderr on failure. */
export async function sh(
  cmd: string,
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; allowFail?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(cmd, {
    args,
    env: options.env ?? cleanEnv(),
    clearEnv: true,
    stdin: options.stdin !== undefined ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const out = await child.output();
  const result = {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
  if (out.code !== 0 && !options.allowFail) {
    throw new Error(`${cmd} ${args.join(" ")} failed (${out.code}): ${result.stderr}`);
  }
  return result;
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 5_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  while (true) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A private tmux server. */
export class TestTmux {
  /** The socket name (tmux -L). */
  readonly socket: string;
  #attached: Deno.ChildProcess[] = [];
  /** The socket file, once known: tmux leaves it behind when its server exits. */
  #socketPath = "";

  /** A new, not yet started, private server. */
  constructor() {
    const rand = crypto.getRandomValues(new Uint8Array(6));
    this.socket = `tmux-mcp-test-${
      Array.from(rand, (b) => b.toString(16).padStart(2, "0")).join("")
    }`;
  }

  /** Starts the server with one detached session (80x24 running `sh`). Returns its ids. */
  static async start(
    session = "main",
    options: { width?: number; height?: number; command?: string } = {},
  ): Promise<TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } }> {
    const t = new TestTmux();
    const out = await t.tmux(
      "new-session",
      "-d",
      "-s",
      session,
      "-x",
      String(options.width ?? 80),
      "-y",
      String(options.height ?? 24),
      "-P",
      "-F",
      "#{session_id} #{window_id} #{pane_id} #{socket_path}",
      options.command ?? "sh",
    );
    const [sessionId, windowId, paneId, ...path] = out.trim().split(" ");
    t.#socketPath = path.join(" ");
    return Object.assign(t, { ids: { sessionId, windowId, paneId } });
  }

  /** Runs tmux on this server; returns stdout. */
  async tmux(...args: string[]): Promise<string> {
    return (await sh("tmux", ["-u", "-L", this.socket, "-f", "/dev/null", ...args])).stdout;
  }

  /** Runs tmux on this server without throwing. */
  tmuxRaw(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return sh("tmux", ["-u", "-L", this.socket, "-f", "/dev/null", ...args], { allowFail: true });
  }

  /** The resolved socket path and server pid, as TMUX would carry them. */
  async facts(): Promise<{ socketPath: string; pid: number }> {
    const [socketPath, pid] = (await this.tmux("display-message", "-p", "#{socket_path}\t#{pid}"))
      .trim().split("\t");
    return { socketPath, pid: Number(pid) };
  }

  /**
   * Attaches a real client through a pseudo-terminal (`script`), as a person would, and waits
   * until tmux lists it. Returns the client's tty.
   */
  async attach(target: string): Promise<string> {
    const before = new Set(await this.clientTtys());
    const cmd = `tmux -u -L ${this.socket} attach -t '${target.replaceAll("'", "'\\''")}'`;
    // util-linux script takes the command with -c; BSD script (macOS) takes it last.
    const args = Deno.build.os === "darwin"
      ? ["-q", "/dev/null", "sh", "-c", cmd]
      : ["-qfc", cmd, "/dev/null"];
    const child = new Deno.Command("script", {
      args,
      env: cleanEnv({ TERM: "xterm" }),
      clearEnv: true,
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    this.#attached.push(child);
    return await waitFor(async () => {
      const now = await this.clientTtys();
      return now.find((tty) => !before.has(tty));
    }, "an attached client");
  }

  async clientTtys(): Promise<string[]> {
    const r = await this.tmuxRaw("list-clients", "-F", "#{client_tty}");
    return r.code === 0 ? r.stdout.split("\n").filter((l) => l !== "") : [];
  }

  /** Kills this server (and only this one) and any client attached by {@link attach}. */
  async kill(): Promise<void> {
    if (!this.#socketPath) {
      this.#socketPath = (await this.tmuxRaw("display-message", "-p", "#{socket_path}")).stdout
        .trim();
    }
    await this.tmuxRaw("kill-server");
    // tmux 3.3 leaves its socket file behind: a test run would leave hundreds.
    if (this.#socketPath.includes("/tmux-mcp-test-")) {
      await Deno.remove(this.#socketPath).catch(() => {});
    }
    for (const child of this.#attached) {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone with the server
      }
      await child.status;
      await child.stdin.close().catch(() => {});
    }
    this.#attached = [];
  }
}
