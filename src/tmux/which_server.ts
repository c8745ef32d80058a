/**
 * Which tmux server an address reaches, in words. tmux picks its server like this: `-S PATH`,
 * else `-L NAME`, else the server `TMUX` names when this process runs inside tmux (tmux reads
 * `TMUX` up to its first comma), else the `default` socket in `$TMUX_TMPDIR/tmux-UID/`. A label
 * that said "the default socket" for the server `TMUX` names would send a reader to the wrong
 * server.
 *
 * @module
 */

import type { ServerAddress } from "./server_address.ts";

/**
 * Names the server `address` reaches for messages and `get_server_info`; `tmuxEnv` is the
 * `TMUX` variable the tmux children inherit.
 */
export function describeServer(address: ServerAddress, tmuxEnv: string | undefined): string {
  if (address.socketPath) return `socket path ${address.socketPath}`;
  if (address.socketName) return `socket "${address.socketName}"`;
  const fromTmux = tmuxSocketPath(tmuxEnv);
  if (fromTmux !== null) return `the server this process runs in (TMUX: ${fromTmux})`;
  return "tmux's default socket (tmux -L default)";
}

/** The socket path tmux takes from `TMUX` when given neither `-L` nor `-S`; null when none. */
export function tmuxSocketPath(tmuxEnv: string | undefined): string | null {
  if (!tmuxEnv || tmuxEnv.startsWith(",")) return null;
  const comma = tmuxEnv.indexOf(",");
  return comma === -1 ? tmuxEnv : tmuxEnv.slice(0, comma);
}
