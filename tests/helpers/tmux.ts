/**
 * A private tmux server for tests: its own socket (`-L tmux-mcp-test-<run>-<random>`), no
 * config file, TMUX/TMUX_PANE removed from its environment, and killed by the test that made
 * it. Tests never touch any other server.
 *
 * Nothing a test module starts outlives it: a server is killed through its socket, and by pid
 * when the socket is gone (a fault test deletes it) or kill-server fails; its clients go with
 * it; its socket file is removed (tmux 3.3 leaves it behind). After the module's last test a
 * check looks for any process or socket file of the module's run (see {@link SOCKET_PREFIX}),
 * removes it and fails the module. Another test run beside this one has another run id: the
 * check never sees its servers.
 *
 * @module
 */

import { type RunOptions, TmuxRunner } from "../../src/tmux/run.ts";
import type { ServerAddress } from "../../src/tmux/server_address.ts";

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
  options: {
    env?: Record<string, string>;
    stdin?: string;
    allowFail?: boolean;
    /**
     * SIGKILLs the command after this long (it then ends as failed). A tmux client that got
     * SIGTERM waits for its server's goodbye, which a stopped server never sends.
     */
    timeoutMs?: number;
    /** The folder it runs in (the caller's when not given). */
    cwd?: string;
  } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(cmd, {
    args,
    env: options.env ?? cleanEnv(),
    clearEnv: true,
    cwd: options.cwd,
    stdin: options.stdin !== undefined ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const output = child.output();
  if (options.timeoutMs !== undefined) {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        child.kill("SIGKILL");
      } catch {
        // ended meanwhile
      }
    }, options.timeoutMs);
    const status = await child.status.finally(() => clearTimeout(timer));
    if (timedOut) {
      // A tmux client hands its stdout to the server: the pipe stays open until that ends.
      stranded.push(output.catch(() => {}));
      if (!options.allowFail) throw new Error(`${cmd} ${args.join(" ")} timed out`);
      return { code: status.code || 137, stdout: "", stderr: "timed out" };
    }
  }
  const out = await output;
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

/**
 * `script`'s arguments to run tmux with `args` on socket `socket` in a pseudo-terminal:
 * util-linux script takes the command with -c, BSD script (macOS) takes it last.
 */
function scriptArgs(socket: string, args: readonly string[]): string[] {
  const quoted = args.map((a) => /^[\w@%:.=-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
  const cmd = `tmux -u -L ${socket} ${quoted.join(" ")}`;
  return Deno.build.os === "darwin"
    ? ["-q", "/dev/null", "sh", "-c", cmd]
    : ["-qfc", cmd, "/dev/null"];
}

/**
 * A child's exit status, or "still running" after `ms`: a bound for a test that waits for a
 * process to end by itself, so that one which stays fails the test instead of holding it.
 */
export async function statusWithin(
  child: Deno.ChildProcess,
  ms: number,
): Promise<Deno.CommandStatus | "still running"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      child.status,
      new Promise<"still running">((resolve) => timer = setTimeout(resolve, ms, "still running")),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `promise`'s value, or a failure saying `what` took over `ms`: a bound for a test that waits
 * for something that must not be held up, so that one held fails the test instead of hanging it.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Outputs of commands {@link sh} gave up on, read to the end once their server is gone. */
const stranded: Promise<unknown>[] = [];

/**
 * Polls `check` until it returns a truthy value or `timeoutMs` passes. The default is generous:
 * a check that holds returns at once, and a loaded machine (test files run side by side) may
 * take seconds to get there.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  // Looks often at first, then less (up to 10 times a second): most checks start a tmux
  // process, and a long wait's many looks were what a loaded machine spent its time on.
  let pauseMs = 10;
  while (true) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pauseMs));
    pauseMs = Math.min(100, pauseMs * 1.5);
  }
}

/**
 * A gate a pane's command waits at until the test opens it, so that a job runs exactly as long
 * as the test needs it to, however slow the machine (a `sleep` long enough for the calls after
 * it is a guess a loaded machine loses). Made with `await using`: its folder goes at the end of
 * the scope, and a command still waiting then returns, so a failed test leaves no loop behind.
 */
export class ShellGate {
  readonly #dir: string;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  /** A new gate, closed. */
  static async make(): Promise<ShellGate> {
    return new ShellGate(await Deno.makeTempDir({ prefix: "tmux-mcp-gate-" }));
  }

  /** POSIX shell text that returns once the gate is open (or gone). */
  get wait(): string {
    const dir = `'${this.#dir}'`;
    return `while [ -d ${dir} ] && [ ! -e ${dir}/go ]; do sleep 0.05; done`;
  }

  /** Lets every command waiting at the gate go on. */
  async open(): Promise<void> {
    await Deno.writeTextFile(`${this.#dir}/go`, "");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
  }
}

/**
 * A gate a tmux hook's job waits at, so that a test holds a command line at a chosen step (a
 * slow plugin script, made deterministic): tmux runs the rest of the line that fired the hook
 * only once the job is over. Only the hook's first run waits; later ones pass through.
 */
export class HookGate {
  readonly #dir: string;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  /** A new gate, closed. {@link remove} it when done. */
  static async make(): Promise<HookGate> {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-gate-" });
    // A script of its own: tmux runs a hook's run-shell in the default-shell (fish, say). It
    // also ends once the gate is removed, so that a failed test leaves no job waiting.
    await Deno.writeTextFile(
      `${dir}/gate.sh`,
      // Silent and successful whatever happens: tmux shows a hook job's output, its failure or
      // its end by a signal (tmux sends SIGTERM to the job of a client that went, as when a
      // held command outlasts its timeout and the connection is retired) in view-mode over the
      // pane, where keys a test then types go to the mode.
      "trap '' TERM HUP INT\n" +
        'exec >/dev/null 2>&1\nd=$(dirname "$0")\ntest -e "$d/began" && exit 0\n' +
        'touch "$d/began"\nwhile test -d "$d" && ! test -e "$d/open"; do sleep 0.02; done\n' +
        "exit 0\n",
    );
    return new HookGate(dir);
  }

  /**
   * The hook's command: `set-hook -g after-... <command>`. The shell tmux starts for it (the
   * default-shell, a POSIX one) is as silent and as deaf to SIGTERM as the script, and says
   * nothing either when the script is gone: a job the hook started just before it was unset
   * may come to read the script after {@link remove}.
   */
  get command(): string {
    return `run-shell 'trap "" TERM HUP INT; sh ${this.#dir}/gate.sh >/dev/null 2>&1; exit 0'`;
  }

  /** Whether the hook's job has begun waiting (or has been through). */
  async began(): Promise<boolean> {
    return await Deno.stat(`${this.#dir}/began`).then(() => true, () => false);
  }

  /** A shell command that does what {@link open} does: for a script that tmux runs. */
  get opener(): string {
    return `touch '${this.#dir}/began' '${this.#dir}/open'`;
  }

  /** Lets the job end, and every later run pass. */
  async open(): Promise<void> {
    await Deno.writeTextFile(`${this.#dir}/began`, "");
    await Deno.writeTextFile(`${this.#dir}/open`, "");
  }

  /** Opens the gate for good and removes its files. */
  async remove(): Promise<void> {
    await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
  }
}

/**
 * Attaches a person's client through `script`, keeping every byte its terminal receives in a
 * file; `env` is the terminal's (its locale decides whether tmux writes UTF-8 to it: unlike
 * {@link TestTmux.attach}, no `-u`).
 */
export async function attachRecorded(
  t: TestTmux,
  target: string,
  env: Record<string, string>,
): Promise<{
  tty: string;
  received: () => Promise<Uint8Array>;
  type: (keys: string) => Promise<void>;
  done: () => Promise<void>;
}> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-recorded-" });
  const file = `${dir}/typescript`;
  const before = new Set(await t.clientTtys());
  const child = new Deno.Command("script", {
    args: ["-qfc", `tmux -L ${t.socket} attach -t ${target}`, file],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", TERM: "xterm", ...env },
    clearEnv: true,
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  trackChild(child, `a recorded client of ${t.socket}`);
  const tty = await waitFor(
    async () => (await t.clientTtys()).find((x) => !before.has(x)),
    "the recorded client",
  );
  const keyboard = child.stdin.getWriter();
  return {
    tty,
    received: () => Deno.readFile(file),
    type: (keys) => keyboard.write(new TextEncoder().encode(keys)),
    done: async () => {
      try {
        child.kill("SIGKILL");
      } catch {
        // gone with its server
      }
      await child.status;
      await keyboard.close().catch(() => {});
      await Deno.remove(dir, { recursive: true });
      // Its tmux client leaves a moment after `script` is gone: until tmux lets it go, it is
      // still attached (a server already gone lists nobody).
      await waitFor(async () => !(await t.clientTtys()).includes(tty), `${tty} gone`);
    },
  };
}

/**
 * A tmux, written into `dir`, that refuses control mode (`-C`: waits poll and every command
 * starts a process of its own) and passes everything else to the real one; with `delayMs`,
 * each of its processes starts that late, and with `tries`, each refused client adds a line to
 * that file. Returns its path.
 */
export async function noControlTmux(
  dir: string,
  options: { delayMs?: number; tries?: string } = {},
): Promise<string> {
  const real = (await sh("sh", ["-c", "command -v tmux"])).stdout.trim();
  const path = `${dir}/tmux`;
  const counted = options.tries === undefined ? "" : `echo C >> ${options.tries}; `;
  const late = options.delayMs === undefined ? "" : `sleep ${options.delayMs / 1000}\n`;
  await Deno.writeTextFile(
    path,
    "#!/bin/sh\n" +
      `case " $* " in *" -C "*) ${counted}echo "no control mode here" >&2; exit 1 ;; esac\n` +
      `${late}exec ${real} "$@"\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

// ---------------------------------------------------------------------------------------------
// What a test module leaves behind

function hex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

/**
 * The start of every socket name this test module uses. Deno runs each test module in a
 * worker of its own, so the id is per module and per run: two runs side by side, or two
 * modules, never share it.
 */
export const SOCKET_PREFIX = `tmux-mcp-test-${hex(3)}-`;

/** A fresh socket name of this module's run. */
export function testSocketName(): string {
  return `${SOCKET_PREFIX}${hex(6)}`;
}

/** Where tmux puts sockets for tests: `/tmp/tmux-<uid>` (cleanEnv drops TMUX_TMPDIR). */
async function socketDir(): Promise<string> {
  socketDirCache ??= sh("id", ["-u"]).then((r) => `/tmp/tmux-${r.stdout.trim()}`);
  return await socketDirCache;
}
let socketDirCache: Promise<string> | undefined;

/** A process as `ps` shows it. */
export interface Proc {
  readonly pid: number;
  readonly args: string;
}

/**
 * Whether a tmux client's arguments `args` wait on `channel`: bare (`wait-for -- CH`, last or
 * followed by the rest of its step), or quoted as the branch of the `if-shell` that runs it
 * only on the server the call read.
 */
export function waitsOnChannel(args: string, channel: string): boolean {
  return args.endsWith(` wait-for -- ${channel}`) || args.includes(` wait-for -- ${channel} ;`) ||
    args.endsWith(` wait-for ${channel}`) || args.includes(` 'wait-for' '--' '${channel}' `);
}

/**
 * Every process whose command line names `name` (a socket name or {@link SOCKET_PREFIX}): a
 * tmux server (Linux keeps the argv of the client that started it), its clients, control
 * clients, `script` wrappers, MCP server processes started with `--socket`.
 *
 * On Linux, where Deno lets this process read /proc (it asks for --allow-all), the command
 * lines are read there: a `ps` per look cost a process start and a walk of every process, and
 * the reaping below looks many times.
 */
export async function processesNaming(name: string): Promise<Proc[]> {
  if (PROC_READABLE) {
    const found: Proc[] = [];
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
      const args = await commandLine(Number(entry.name));
      if (args?.includes(name)) found.push({ pid: Number(entry.name), args });
    }
    return found;
  }
  const r = await sh("ps", ["-ww", "-A", "-o", "pid=,args="], { allowFail: true });
  return r.stdout.split("\n").flatMap((line) => {
    const m = /^\s*(\d+)\s(.*)$/.exec(line);
    return m && m[2].includes(name) && Number(m[1]) !== Deno.pid
      ? [{ pid: Number(m[1]), args: m[2] }]
      : [];
  });
}

/** Whether process command lines can be read from /proc (Linux, with --allow-all). */
const PROC_READABLE = Deno.build.os === "linux" && (() => {
  try {
    Deno.readFileSync(`/proc/${Deno.pid}/cmdline`);
    return true;
  } catch {
    return false;
  }
})();

/** A Linux process's command line as `ps -o args=` shows it; null when it is gone. */
async function commandLine(pid: number): Promise<string | null> {
  try {
    const raw = await Deno.readFile(`/proc/${pid}/cmdline`);
    // A zombie (exited, not yet reaped) has none: it no longer runs.
    if (raw.length === 0) return null;
    return new TextDecoder().decode(raw).replace(/\0$/, "").replaceAll("\0", " ");
  } catch {
    return null;
  }
}

/** `pid` when it still runs and its command line names `name` (a pid may be reused). */
async function alive(pid: number, name: string): Promise<Proc | null> {
  if (PROC_READABLE) {
    const args = await commandLine(pid);
    return args?.includes(name) ? { pid, args } : null;
  }
  const r = await sh("ps", ["-ww", "-o", "args=", "-p", String(pid)], { allowFail: true });
  const args = r.stdout.trim();
  return r.code === 0 && args.includes(name) ? { pid, args } : null;
}

function kill(pid: number, how: "SIGKILL" | "SIGTERM" = "SIGKILL"): void {
  try {
    Deno.kill(pid, how);
  } catch {
    // gone meanwhile
  }
}

/**
 * Ends every process of `socket` still running: those naming it, and the servers recorded by
 * pid (a server that retitled itself, as tmux does on BSD and macOS, no longer names it).
 * Gives them `graceMs` to leave on their own (after kill-server), then SIGKILLs the rest.
 * Throws when something survives even that.
 */
async function reap(socket: string, pids: Iterable<number>, graceMs: number): Promise<void> {
  const remaining = async () => {
    const found = new Map((await processesNaming(socket)).map((p) => [p.pid, p]));
    for (const pid of pids) {
      if (found.has(pid)) continue;
      const p = await alive(pid, socket);
      if (p) found.set(pid, p);
    }
    return [...found.values()];
  };
  const gone = async () => (await remaining()).length === 0;
  if (graceMs > 0) {
    // A recorded server that kill-server did not reach (its socket now leads to another) is
    // asked to leave as it would on its own: tmux ends on SIGTERM.
    for (const pid of pids) {
      if (await alive(pid, socket)) kill(pid, "SIGTERM");
    }
  }
  if (await waitFor(gone, "", graceMs).catch(() => false)) return;
  for (const p of await remaining()) kill(p.pid);
  await waitFor(gone, "", 5_000).catch(async () => {
    const left = (await remaining()).map((p) => `${p.pid} ${p.args}`);
    throw new Error(`processes of ${socket} survived SIGKILL: ${left.join("; ")}`);
  });
}

/** Removes the socket file of `socket` (tmux 3.3 leaves it when its server exits). */
async function removeSocketFile(socket: string, known = ""): Promise<void> {
  for (const path of new Set([known, `${await socketDir()}/${socket}`])) {
    if (path.endsWith(`/${socket}`)) await Deno.remove(path).catch(() => {});
  }
}

/** MCP server processes and other children a helper started, until they end. */
const children = new Set<{ readonly pid: number; readonly what: string }>();

/**
 * Tracks `child` (an MCP server process, a client) until it ends: one still running when the
 * module's tests are over is killed and reported.
 */
export function trackChild(child: Deno.ChildProcess, what: string): void {
  const entry = { pid: child.pid, what };
  children.add(entry);
  child.status.then(() => children.delete(entry), () => children.delete(entry));
}

/**
 * What this module's tests left behind: processes naming its run's sockets, its children
 * still running, socket files of its run. Removes all of it and says what it was.
 */
export async function leftovers(): Promise<string[]> {
  const found: string[] = [];
  for (const c of children) {
    found.push(`${c.what} (pid ${c.pid}) still running`);
    kill(c.pid);
  }
  const procs = await processesNaming(SOCKET_PREFIX);
  for (const p of procs) {
    found.push(`process ${p.pid}: ${p.args}`);
    kill(p.pid);
  }
  const dir = await socketDir();
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.name.startsWith(SOCKET_PREFIX)) continue;
      found.push(`socket file ${dir}/${entry.name}`);
      await Deno.remove(`${dir}/${entry.name}`).catch(() => {});
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return found;
}

// After the module's last test (a no-op outside `deno test`).
Deno.test.afterAll(async () => {
  const found = await leftovers();
  if (found.length > 0) {
    throw new Error(`this module's tests left behind (now removed):\n  ${found.join("\n  ")}`);
  }
});

// ---------------------------------------------------------------------------------------------
// The server

/** A private tmux server. */
/** A runner that keeps the argv of every tmux process it starts (control commands are none). */
export class RecordingRunner extends TmuxRunner {
  readonly started: string[][] = [];

  override exec(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    this.started.push([...args]);
    return super.exec(address, args, options);
  }
}

/**
 * A person's session "keep" beside a session "scratch" whose only window is linked into it
 * twice (index 0 and 1), as a person's `link-window` (or a plugin that mirrors a window) leaves
 * it: the layout in which tmux 3.3a crashes when that window ends with a control client attached.
 */
export async function linkedTwice(
  t: TestTmux,
): Promise<{ windowId: string; paneId: string; sessionId: string }> {
  await t.tmux("new-session", "-d", "-s", "keep", "sleep 1000");
  const [windowId, paneId, sessionId] = (await t.tmux(
    "new-session",
    "-d",
    "-s",
    "scratch",
    "-P",
    "-F",
    "#{window_id} #{pane_id} #{session_id}",
    "sleep 1000",
  )).trim().split(" ");
  await t.tmux("link-window", "-d", "-s", windowId, "-t", "scratch:1");
  return { windowId, paneId, sessionId };
}

/**
 * Where a {@link TestTmux}'s processes run: a folder (the server's working directory, and every
 * pane's unless a command names another) and more environment (`HOME`, `SHELL`). A server whose
 * panes run arbitrary command lines is started inside a scratch folder, so that whatever those
 * write lands there and not in the checkout.
 */
export interface TmuxHome {
  readonly cwd?: string;
  readonly env?: Record<string, string>;
}

export class TestTmux {
  /** The socket name (tmux -L). */
  readonly socket: string;
  readonly #home: TmuxHome;
  #attached: Deno.ChildProcess[] = [];
  /** The attached clients' terminals ({@link attach}), by tty: where {@link typeAt} types. */
  #keyboards = new Map<string, Deno.ChildProcess>();
  /** The socket file, once known: tmux leaves it behind when its server exits. */
  #socketPath = "";
  /** Pids of servers seen on this socket: killed by pid when the socket cannot reach them. */
  readonly #pids = new Set<number>();

  /** A new, not yet started, private server; `home`: where it runs (the caller's folder). */
  constructor(home: TmuxHome = {}) {
    this.socket = testSocketName();
    this.#home = home;
  }

  /**
   * Starts the server with one detached session (80x24 running `sh`). Returns its ids. With
   * the default `sh`, returns once the shell has drawn its prompt (see {@link prompt}).
   */
  static async start(
    session = "main",
    options: { width?: number; height?: number; command?: string } = {},
  ): Promise<TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } }> {
    const t = new TestTmux();
    let out: string;
    try {
      out = await t.tmux(
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
        "#{pid} #{session_id} #{window_id} #{pane_id} #{socket_path}",
        options.command ?? "sh",
        // A pane made later without a command runs sh too, not the default-shell as a login
        // shell: that is the machine user's (bash), whose start-up files may take anything (on
        // one machine a `pyenv init` spinning a minute on a stale lock, forty panes of it
        // stalling every test beside them). The default-shell itself stays, for the commands.
        // By its path: tmux looks a command up in the PATH of the client that asked for it.
        ";",
        "set-option",
        "-g",
        "default-command",
        "/bin/sh",
      );
    } catch (error) {
      await t.kill();
      throw error;
    }
    const [pid, sessionId, windowId, paneId, ...path] = out.trim().split(" ");
    t.#pids.add(Number(pid));
    t.#socketPath = path.join(" ");
    if (options.command === undefined) await t.prompt(paneId);
    return Object.assign(t, { ids: { sessionId, windowId, paneId } });
  }

  /**
   * Waits until a shell pane shows its prompt. Keys typed before that are echoed by the
   * terminal ahead of the prompt, and the command's output then lands after the prompt on one
   * row ("# output"), not at the start of its own.
   */
  async prompt(paneId: string): Promise<void> {
    await waitFor(
      async () => (await this.tmuxRaw("capture-pane", "-p", "-t", paneId)).stdout.trim() !== "",
      `a prompt in ${paneId}`,
    );
  }

  /**
   * A new background window of session `target` with a shell, once it shows its prompt: its
   * window and pane ids.
   */
  async shellWindow(target = "main"): Promise<{ windowId: string; paneId: string }> {
    const [windowId, paneId] = (await this.tmux(
      "new-window",
      "-d",
      "-t",
      `${target}:`,
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "sh",
    )).trim().split(" ");
    await this.prompt(paneId);
    return { windowId, paneId };
  }

  /**
   * A new background window of session `target` with two shell panes ({@link shellWindow}, then
   * a pane split off it, not selected): the window's id and both panes.
   */
  async twoPaneWindow(target = "main"): Promise<{ windowId: string; panes: string[] }> {
    const { windowId, paneId: first } = await this.shellWindow(target);
    const second = (await this.tmux(
      ...["split-window", "-d", "-t", first, "-P", "-F", "#{pane_id}", "sh"],
    )).trim();
    return { windowId, panes: [first, second] };
  }

  /**
   * A new background window running `command`; its pane id, once the pane shows `until`.
   */
  /**
   * A new window whose pane printed `text` (through a temporary file and `cat`), then runs
   * `then` (by default `exec cat`: what is typed shows, echoed and again as cat prints it); once
   * it shows `until`. The file goes once the pane has printed it all.
   */
  async printing(
    text: string,
    until: string,
    then = "exec cat",
    timeoutMs = 30_000,
  ): Promise<string> {
    const file = await Deno.makeTempFile({ prefix: "tmux-mcp-test-" });
    try {
      await Deno.writeTextFile(file, text);
      return await this.showing(`cat '${file}'; ${then}`, until, timeoutMs);
    } finally {
      await Deno.remove(file).catch(() => {});
    }
  }

  async showing(command: string, until: string, timeoutMs?: number): Promise<string> {
    const id = (await this.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", command)).trim();
    await waitFor(
      async () => (await this.tmux("capture-pane", "-p", "-t", id)).includes(until),
      `${id} showing ${JSON.stringify(until)}`,
      timeoutMs,
    );
    return id;
  }

  /**
   * Waits until tmux names `command` as a pane's foreground program: a pane started with a
   * command names the shell that is about to exec it until it has. Its folder too: until a new
   * pane's child holds the terminal tmux reads no folder and names the command it was given
   * ("sleep" for "sleep 100"), and then names the child itself "tmux" until it execs.
   */
  async foreground(paneId: string, command: string): Promise<void> {
    await waitFor(
      async () =>
        (await this.tmux(
          "display-message",
          "-p",
          "-t",
          paneId,
          "#{pane_current_command}#{?pane_current_path,,\t(no folder)}",
        )).trim() === command,
      `${command} in the foreground of ${paneId}`,
    );
  }

  /**
   * Waits until a shell pane sits at its prompt, a new one or after a command: the text left of
   * the cursor, on the cursor's row, ends as a prompt does ("$ ", "# " for root, "% ", "> ").
   * Keys typed before that are echoed ahead of the prompt, and the output then lands after it
   * on one row; a screen read before that lacks the prompt row below a command's output.
   */
  async atPrompt(paneId: string): Promise<void> {
    await waitFor(async () => {
      const { x, row } = await this.cursorRow(paneId);
      return /[$#%>] $/.test(row.padEnd(x).slice(0, x));
    }, `the prompt in ${paneId}`);
  }

  /** A pane's cursor, and the text of the row `offset` rows below the cursor's (above: < 0). */
  async cursorRow(paneId: string, offset = 0): Promise<{ x: number; y: number; row: string }> {
    const [x, y] =
      (await this.tmux("display-message", "-p", "-t", paneId, "#{cursor_x} #{cursor_y}"))
        .trim().split(" ").map(Number);
    const at = `${y + offset}`;
    const row = (await this.tmux("capture-pane", "-p", "-t", paneId, "-S", at, "-E", at))
      .replace(/\n$/, "");
    return { x, y, row };
  }

  /**
   * Detaches the person's client `tty` and waits until tmux has let it go: detach-client only
   * asks the client to leave, and until it has, tmux counts its session as attached.
   */
  async detach(tty: string): Promise<void> {
    await this.tmux("detach-client", "-t", tty);
    await waitFor(async () => !(await this.clientTtys()).includes(tty), `${tty} detached`);
  }

  /**
   * Runs the tmux command `command` (no braces in it) once, right after the `nth` read of a
   * guard: every guard's read ends listing the clients in the snapshot's format (it names
   * `client_readonly`, which no other read asks for). Other list-clients (a control connection
   * looking at who is attached when a client moves) neither count nor disarm it.
   */
  async onceAfterGuardRead(command: string, nth = 1): Promise<void> {
    await this.tmux("set-option", "-g", "@once-left", String(nth));
    await this.tmux(
      "set-hook",
      "-g",
      "after-list-clients",
      "if-shell -F '#{m:*client_readonly*,#{hook_arguments}}' {" +
        " if-shell -F '#{==:#{@once-left},1}'" +
        ` { ${command} ; set-hook -gu after-list-clients }` +
        " { set-option -gF @once-left '#{e|-:#{@once-left},1}' } }",
    );
  }

  /** Runs tmux on this server; returns stdout. */
  async tmux(...args: string[]): Promise<string> {
    return (await sh("tmux", ["-u", "-L", this.socket, "-f", "/dev/null", ...args], {
      env: cleanEnv(this.#home.env),
      cwd: this.#home.cwd,
    })).stdout;
  }

  /**
   * Waits until tmux has named `target`'s window after what its active pane runs, and returns
   * that name. automatic-rename first shows what started the pane (the shell running its
   * command, or tmux itself) and renames it on a timer, up to half a second later: two reads
   * on either side of that differ.
   */
  async settledName(target: string): Promise<string> {
    return await waitFor(async () => {
      const [name, command] = (await this.tmux(
        "display-message",
        "-p",
        "-t",
        target,
        "#{window_name}\t#{pane_current_command}",
      )).trim().split("\t");
      return name === command ? name : null;
    }, `the name of window ${target} to settle`);
  }

  /** Runs tmux on this server without throwing. */
  tmuxRaw(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return sh("tmux", ["-u", "-L", this.socket, "-f", "/dev/null", ...args], {
      allowFail: true,
      env: cleanEnv(this.#home.env),
      cwd: this.#home.cwd,
    });
  }

  /**
   * The resolved socket path and server pid, as TMUX would carry them, and when the server
   * started (`#{start_time}`: with the pid, which server it is).
   */
  async facts(): Promise<{ socketPath: string; pid: number; startTime: number }> {
    const [socketPath, pid, startTime] = (await this.tmux(
      "display-message",
      "-p",
      "#{socket_path}\t#{pid}\t#{start_time}",
    )).trim().split("\t");
    this.#pids.add(Number(pid));
    return { socketPath, pid: Number(pid), startTime: Number(startTime) };
  }

  /**
   * Attaches a real client through a pseudo-terminal (`script`), as a person would, and waits
   * until tmux lists it. Returns the client's tty. `control`: attach as iTerm2's tmux
   * integration does (`tmux -CC attach` in a terminal): a control-mode client with a tty.
   * `env`: more of the terminal's environment (`TERM` is xterm unless it says otherwise).
   * `flags`: attach-session's client flags (`-f active-pane`). {@link typeAt} types there.
   */
  async attach(
    target: string,
    options: { control?: boolean; env?: Record<string, string>; flags?: string } = {},
  ): Promise<string> {
    const before = new Set(await this.clientTtys());
    const flags = options.flags === undefined ? [] : ["-f", options.flags];
    const child = new Deno.Command("script", {
      args: scriptArgs(this.socket, [
        ...options.control ? ["-CC"] : [],
        "attach",
        ...flags,
        "-t",
        target,
      ]),
      env: cleanEnv({ TERM: "xterm", ...this.#home.env, ...options.env }),
      clearEnv: true,
      cwd: this.#home.cwd,
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    this.#attached.push(child);
    trackChild(child, `a client attached to ${this.socket}`);
    const tty = await waitFor(async () => {
      const now = await this.clientTtys();
      return now.find((tty) => !before.has(tty));
    }, "an attached client");
    this.#keyboards.set(tty, child);
    return tty;
  }

  /** Types `bytes` at the terminal of the person's client `tty` ({@link attach}), as they would. */
  async typeAt(tty: string, bytes: string): Promise<void> {
    const child = this.#keyboards.get(tty);
    if (!child) throw new Error(`no client of this server on ${tty} to type at`);
    const writer = child.stdin.getWriter();
    try {
      await writer.write(new TextEncoder().encode(bytes));
    } finally {
      writer.releaseLock();
    }
  }

  /**
   * Runs tmux with `args` on this server from a pseudo-terminal (`script`), as a person typing
   * it would, and waits for it to end: `attach ; ... ; detach-client` is a person's visit.
   */
  async onTerminal(...args: string[]): Promise<void> {
    await sh("script", scriptArgs(this.socket, args), {
      env: cleanEnv({ TERM: "xterm" }),
      timeoutMs: 10_000,
    });
  }

  /**
   * Starts a control-mode client (`tmux -C attach-session ...flags -t target`), as another
   * program would; tracked like every child. Close its stdin to end it. `reading: false`: a
   * program that stopped reading what tmux sends it (its pipe fills, and tmux falls behind on
   * every pane its session shows).
   */
  controlClient(
    target: string,
    flags: readonly string[] = ["-f", "ignore-size"],
    { reading = true }: { reading?: boolean } = {},
  ): Deno.ChildProcess {
    const child = new Deno.Command("tmux", {
      args: ["-u", "-L", this.socket, "-C", "attach-session", ...flags, "-t", target],
      env: cleanEnv(),
      clearEnv: true,
      stdin: "piped",
      stdout: reading ? "null" : "piped",
      stderr: "null",
    }).spawn();
    trackChild(child, `a control client of ${this.socket}`);
    // Unread to the end; let go of once the client is gone.
    if (!reading) child.status.finally(() => child.stdout.cancel().catch(() => {}));
    return child;
  }

  /**
   * The names of the control clients that carry pane output (tmux-mcp's for watches; its client
   * for commands has `no-output`), of every session or of `session`'s only.
   */
  async outputClients(session?: string): Promise<string[]> {
    const which = session === undefined ? [] : ["-t", session];
    return (await this.tmux("list-clients", ...which, "-F", "#{client_name} #{client_flags}"))
      .split("\n")
      .filter((l) => l.includes("control-mode") && !l.includes("no-output"))
      .map((l) => l.split(" ")[0]);
  }

  async clientTtys(): Promise<string[]> {
    const r = await this.tmuxRaw("list-clients", "-F", "#{client_tty}");
    return r.code === 0 ? r.stdout.split("\n").filter((l) => l !== "") : [];
  }

  /**
   * Kills this server (and only this one), whatever runs on its socket now, every client of
   * it, and any client attached by {@link attach}; removes its socket file. A server that its
   * socket no longer reaches (the file deleted, the server stopped) is killed by pid.
   */
  async kill(): Promise<void> {
    // A stopped or wedged server never answers: the kill below does not wait on it. Who
    // answers (its pid and socket, for the reaping below) and the kill in one tmux process.
    const now = await sh(
      "tmux",
      [
        ...["-u", "-L", this.socket, "-f", "/dev/null"],
        ...["display-message", "-p", "#{pid}\t#{socket_path}", ";", "kill-server"],
      ],
      { allowFail: true, timeoutMs: 3_000 },
    );
    const [pid, path] = now.stdout.trim().split("\t");
    if (path !== undefined) {
      this.#pids.add(Number(pid));
      this.#socketPath ||= path;
    }
    const killed = now.code === 0;
    try {
      // After kill-server the server and its clients leave on their own, in a moment.
      await reap(this.socket, this.#pids, killed ? 3_000 : 0);
      await Promise.all(stranded.splice(0));
    } finally {
      await removeSocketFile(this.socket, this.#socketPath);
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
      this.#keyboards.clear();
    }
  }
}

/**
 * Runs `fn` with a private server (`TestTmux.start(session, options)`) and a runner of its
 * own, then closes both; no tmux child of the runner may be left running.
 */
export async function withRunner(
  fn: (t: Awaited<ReturnType<typeof TestTmux.start>>, runner: TmuxRunner) => Promise<void>,
  session = "main",
  options: { width?: number; height?: number } = {},
): Promise<void> {
  const t = await TestTmux.start(session, options);
  const runner = new TmuxRunner();
  try {
    await fn(t, runner);
  } finally {
    await runner.close();
    await t.kill();
  }
  if (runner.running !== 0) throw new Error(`${runner.running} tmux children left behind`);
}
