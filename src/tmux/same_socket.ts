/**
 * Whether a call's socket name (tmux `-L`) reaches the server this process was started for,
 * spelled another way: `--socket-path /tmp/tmux-UID/x` and `-L x`; no flag at all (tmux's
 * `default` socket, or the one `TMUX` names) and `-L default`, or `-L` the name `TMUX`'s socket
 * has. Every per-server turn is keyed by the address (addressKey): the control client, attached
 * one at a time because tmux 3.3a crashes when two handshake at once (tmux/tmux#4980), the
 * structure lane (tmux/tmux#5243), the buffer bound's turn, the window-size lend's give-back.
 * Two spellings of one server would get two of each.
 *
 * A name reaches a path only when tmux puts that name's socket at exactly that path: in
 * `$TMUX_TMPDIR` (or `/tmp`), in the folder `tmux-UID` made real (macOS's `/tmp` is
 * `/private/tmp`). That folder is tmux's to work out, not guessed here (this process may read
 * no file and no uid): tmux is asked once, with a name no server has, and says where it looked.
 * A folder not learned leaves the two spellings apart, as before; two servers never share one.
 *
 * @module
 */

import type { TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";
import { TmuxError } from "./tmux_error.ts";
import { tmuxSocketPath } from "./which_server.ts";

/**
 * The socket name that may reach the same server as `address` (tmux's choice when it names
 * neither: the socket `tmuxEnv` names, else `default`), and the path that name must resolve
 * to (null when the name alone says it). Null for an address on an SSH host.
 */
export function configuredName(
  address: ServerAddress,
  tmuxEnv: string | undefined,
): { name: string; path: string | null } | null {
  if (address.host !== undefined) return null;
  const path = address.socketPath || (address.socketName ? null : tmuxSocketPath(tmuxEnv));
  if (!path) return { name: address.socketName || "default", path: null };
  const name = path.slice(path.lastIndexOf("/") + 1);
  return name === "" ? null : { name, path };
}

/**
 * Whether `-L socketName` reaches the socket `address` reaches: by name, or by path once
 * {@link socketFolder} has learned the folder (else false, and each spelling keeps its own).
 */
export function namesSameSocket(
  runner: TmuxRunner,
  address: ServerAddress,
  tmuxEnv: string | undefined,
  socketName: string,
): boolean {
  const configured = configuredName(address, tmuxEnv);
  if (configured?.name !== socketName) return false;
  if (configured.path === null) return true;
  const folder = learned.get(runner);
  return folder !== undefined && `${folder}/${socketName}` === configured.path;
}

/**
 * Learns the folder {@link namesSameSocket} needs when `socketName` could name the socket
 * `address` reaches by path; settles at once otherwise, or when `signal` aborts (the call then
 * ends as cancelled on its own).
 */
export async function learnFolderFor(
  runner: TmuxRunner,
  address: ServerAddress,
  tmuxEnv: string | undefined,
  socketName: string,
  signal?: AbortSignal,
): Promise<void> {
  const configured = configuredName(address, tmuxEnv);
  if (configured?.name !== socketName || configured.path === null) return;
  if (learned.has(runner) || signal?.aborted) return;
  let asking = asked.get(runner);
  if (!asking) {
    asking = askFolder(runner).finally(() => asked.delete(runner));
    asked.set(runner, asking);
  }
  if (!signal) return void await asking;
  const { promise: aborted, resolve } = Promise.withResolvers<void>();
  const onAbort = () => resolve();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.race([asking, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** The folder each runner's tmux puts `-L` sockets in, once learned. */
const learned = new WeakMap<TmuxRunner, string>();
/** The question in flight per runner, shared by the calls that wait for it. */
const asked = new WeakMap<TmuxRunner, Promise<void>>();

/**
 * Asks tmux where a socket name no server has would be: tmux's answer, `no server running on
 * PATH` (or `error connecting to PATH (why)`), names the folder. It starts no server and
 * makes nothing tmux would not make for any `-L` (its socket folder). No answer: nothing
 * learned, and the next call that needs it asks again.
 */
/**
 * The socket path tmux names when it reaches no server there: `no server running on PATH` (the
 * rest of the line whole: a name may end in ` (old)`) or `error connecting to PATH (why)`, the
 * path up to the reason. Null when `text` says neither.
 */
export function socketPathIn(text: string): string | null {
  return /^no server running on (.*)$/m.exec(text)?.[1] ??
    /^error connecting to (.*?)(?: \([^()]*\))?$/m.exec(text)?.[1] ?? null;
}

async function askFolder(runner: TmuxRunner): Promise<void> {
  const hex = [...crypto.getRandomValues(new Uint8Array(8))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const probe = `tmux-mcp-nobody-${hex}`;
  let stderr: string;
  try {
    ({ stderr } = await runner.exec({ socketName: probe }, ["has-session"], { timeoutMs: 5_000 }));
  } catch (error) {
    // Not started, timed out, or the process is closing: nothing learned.
    if (error instanceof TmuxError) return;
    throw error;
  }
  const path = socketPathIn(stderr);
  if (path?.endsWith(`/${probe}`)) learned.set(runner, path.slice(0, -probe.length - 1));
}
