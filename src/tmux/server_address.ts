/**
 * Which tmux server a call reaches: its address (host, `-L` name or `-S` path), the key that
 * tells one server from another, and the global flags that name it on tmux's command line.
 *
 * @module
 */

/** Which tmux server to talk to: tmux's own `-L` name or `-S` path, or tmux's default. */
export interface ServerAddress {
  /** An SSH destination configured with `--ssh` (absent: this machine). See ssh.ts. */
  readonly host?: string;
  /** A socket name (tmux `-L`), resolved by tmux inside its socket folder. */
  readonly socketName?: string;
  /** A socket path (tmux `-S`). Wins over `socketName` when both are given. */
  readonly socketPath?: string;
}

/** One key per tmux server an address reaches (with the host it is on). */
export function addressKey(address: ServerAddress): string {
  const on = address.host === undefined ? "" : `@${address.host}\n`;
  if (address.socketPath) return `${on}S:${address.socketPath}`;
  if (address.socketName) return `${on}L:${address.socketName}`;
  return `${on}default`;
}

/** Global flags for an address, always starting with `-u` (see TMUX-NOTES: locale). */
export function addressArgs(address: ServerAddress): string[] {
  if (address.socketPath) return ["-u", "-S", address.socketPath];
  if (address.socketName) return ["-u", "-L", address.socketName];
  return ["-u"];
}
