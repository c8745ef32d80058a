/**
 * The private tmux servers the bench measures against: the plain tmux command line (one process
 * per call, the floor), the server of `size` panes with scrollback that the per-size section
 * builds, and the ending of every server the bench started.
 *
 * @module
 */

/** Lines of scrollback each pane of a built server holds. */
export const SCROLLBACK = 2_000;

/** One tmux process on the private server `socket`: its output, or a throw unless it exits 0. */
export async function tmux(socket: string, ...args: string[]): Promise<string> {
  const r = await new Deno.Command("tmux", {
    args: ["-u", "-L", socket, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (r.code !== 0) {
    throw new Error(`tmux ${args.join(" ")}: ${new TextDecoder().decode(r.stderr)}`);
  }
  return new TextDecoder().decode(r.stdout);
}

/** What pane `i` shows: its scrollback, a marker in a few panes, then its own marker. */
function paneText(i: number): string {
  const lines = Array.from({ length: SCROLLBACK }, (_, k) => `scrollback line ${k + 1}`);
  if (i % 25 === 0) lines.push(`NEEDLE-PRESENT-${i}`);
  lines.push(`BENCH-MARK-${i}`);
  return `${lines.join("\r\n")}\r\n`;
}

/** A built server: its socket, its panes of scrollback, and a shell pane to type into. */
export interface Fixture {
  socket: string;
  panes: string[];
  workPane: string;
  workTty: string;
}

/** The pid and socket file of each server the bench started, for {@link dispose}. */
export const started = new Map<string, { pid: number; socketPath: string }>();

/**
 * Ends a server the bench started and removes its socket file (tmux 3.3 leaves it behind):
 * kill-server, then by pid if it still runs (a server its socket no longer reaches).
 */
export async function dispose(socket: string): Promise<void> {
  const known = started.get(socket);
  await tmux(socket, "kill-server").catch(() => {});
  if (known && known.pid > 0) {
    const ps = await new Deno.Command("ps", {
      args: ["-ww", "-o", "args=", "-p", String(known.pid)],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (new TextDecoder().decode(ps.stdout).includes(socket)) Deno.kill(known.pid, "SIGKILL");
  }
  if (known?.socketPath.endsWith(`/${socket}`)) await Deno.remove(known.socketPath).catch(() => {});
  started.delete(socket);
}

/** Builds a server with `size` panes: 4 per window, 10 windows per session. */
export async function buildServer(size: number): Promise<Fixture> {
  const socket = `tmux-mcp-bench-${crypto.randomUUID().slice(0, 8)}`;
  const conf = await Deno.makeTempFile({ prefix: "tmux-mcp-bench-", suffix: ".conf" });
  try {
    await Deno.writeTextFile(conf, `set -g history-limit 5000\nset -g exit-empty off\n`);
    await tmux(socket, "-f", conf, "start-server", ";", "source-file", conf);
  } finally {
    await Deno.remove(conf);
  }
  const [pid, socketPath] = (await tmux(socket, "display-message", "-p", "#{pid}\t#{socket_path}"))
    .trim().split("\t");
  started.set(socket, { pid: Number(pid) || 0, socketPath: socketPath ?? "" });
  try {
    return await fill(socket, size);
  } catch (error) {
    await dispose(socket);
    throw error;
  }
}

/** Fills the new server on `socket` with `size` panes of scrollback and a shell pane. */
async function fill(socket: string, size: number): Promise<Fixture> {
  // One extra shell pane for typing, waiting and running.
  const work = (await tmux(
    socket,
    "new-session",
    "-d",
    "-s",
    "work",
    "-x",
    "200",
    "-y",
    "50",
    "-P",
    "-F",
    "#{pane_id} #{pane_tty}",
    "sh",
  ))
    .trim().split(" ");
  let made = 0;
  let chain: string[] = [];
  const flush = async () => {
    if (chain.length) await tmux(socket, ...chain.slice(0, -1));
    chain = [];
  };
  for (let s = 0; made < size; s++) {
    chain.push(
      "new-session",
      "-d",
      "-s",
      `bench${s}`,
      "-x",
      "200",
      "-y",
      "50",
      "exec cat",
      ";",
    );
    made++;
    for (let w = 0; w < 10 && made < size; w++) {
      if (w > 0) {
        chain.push("new-window", "-d", "-t", `=bench${s}`, "exec cat", ";");
        made++;
      }
      for (let p = 1; p < 4 && made < size; p++, made++) {
        chain.push("split-window", "-d", "-t", `=bench${s}:${w}`, "exec cat", ";");
        chain.push("select-layout", "-t", `=bench${s}:${w}`, "tiled", ";");
      }
      if (chain.length > 400) await flush();
    }
  }
  await flush();
  // Every pane runs a bare `cat`; its scrollback is written straight to its terminal, which is
  // far quicker than a process per pane printing it (and tmux forks slower as it grows).
  const ttys = (await tmux(socket, "list-panes", "-a", "-F", "#{pane_id} #{pane_tty}"))
    .trim().split("\n").map((l) => l.split(" ")).filter(([id]) => id !== work[0]);
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < ttys.length) {
      const i = next++;
      await Deno.writeTextFile(ttys[i][1], paneText(i));
    }
  }));
  // Wait until every pane shows its scrollback.
  const until = Date.now() + 120_000;
  while (true) {
    const lines = (await tmux(
      socket,
      "list-panes",
      "-a",
      "-F",
      "#{pane_id} #{history_size} #{pane_current_command}",
    )).trim().split("\n");
    const ready = lines.filter((l) =>
      Number(l.split(" ")[1]) >= SCROLLBACK - 60 || l.endsWith(" sh")
    ).length;
    if (ready >= size + 1) {
      return {
        socket,
        panes: lines.map((l) => l.split(" ")[0]).filter((id) => id !== work[0]),
        workPane: work[0],
        workTty: work[1],
      };
    }
    if (Date.now() > until) throw new Error(`only ${ready} of ${size} panes ready`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
