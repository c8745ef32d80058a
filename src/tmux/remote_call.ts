/**
 * What a tmux call on an SSH host needs beyond a local one, as the runner makes it: the command
 * line that runs tmux there (or here), the host's connection brought up before the call, and
 * the remote stderr judged, for a call that never reached tmux (the remote shell did not run
 * it, the connection dropped during it, the host has no tmux). The connections themselves are
 * ssh.ts's; starting the processes stays run.ts's.
 *
 * @module
 */

import { SSH_ENV, type SshHosts } from "./ssh.ts";
import { sshComplaint, SshUnreachable } from "./ssh_unreachable.ts";
import { AfterMarker } from "./ssh_wire.ts";
import { RefusedAtOpen, sessionRefused } from "./ssh_sessions.ts";
import { TmuxError } from "./tmux_error.ts";
import { addressArgs, type ServerAddress } from "./server_address.ts";

/** tmux's own exit status 127 from `env`: the remote host has no tmux on the PATH we give. */
const REMOTE_NOT_FOUND = /^env: .*tmux.*(No such file|not found)/m;

/**
 * The program, argv and environment (on top of this process's) that run `binary` with `args`
 * at `address`, here or over SSH (`ssh`, the runner's hosts): `env` is tmux's, given to it here
 * and set in the remote command line there; an ssh gets {@link SSH_ENV}, so that it never asks
 * on a terminal. `gated`: there, tmux waits for its go (ssh_wire.ts's remoteTmuxCommand).
 */
export function tmuxCommand(
  binary: string,
  ssh: SshHosts | null,
  address: ServerAddress,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  gated = false,
): [string, string[], Record<string, string>] {
  const tmuxArgs = [...addressArgs(address), ...args];
  if (address.host === undefined) return [binary, tmuxArgs, { ...env }];
  if (!ssh?.has(address.host)) {
    throw new TmuxError(
      "failed",
      `Host ${JSON.stringify(address.host)} is not one this server was started with (--ssh).`,
    );
  }
  return ["ssh", ssh.argv(address.host, binary, tmuxArgs, env, gated), { ...SSH_ENV }];
}

/**
 * A remote call's stderr after the `marker` (ssh_wire.ts), or the reason it never reached tmux: the
 * remote shell did not run the command (no marker), the connection dropped during it (ssh's
 * 255), or the host has no tmux.
 */
export function remoteStderr(
  host: string,
  marker: string,
  code: number,
  stdoutFound: boolean,
  raw: Uint8Array,
): string {
  const after = new AfterMarker(marker);
  const rest = new TextDecoder().decode(after.push(raw));
  const said = sshComplaint(new TextDecoder().decode(raw));
  if (!stdoutFound || !after.found) {
    // The host's sshd refused the session on the shared connection (its MaxSessions): not a
    // host that did not answer, and nothing ran, so the runner waits for room and sends it again.
    if (sessionRefused(new TextDecoder().decode(raw))) throw new RefusedAtOpen(host);
    throw new TmuxError(
      "unreachable",
      `Host ${JSON.stringify(host)}: tmux did not run there (${said ?? `ssh status ${code}`}).`,
    );
  }
  if (code === 255) {
    throw new TmuxError(
      "unreachable",
      `Host ${JSON.stringify(host)}: the SSH connection was lost during the call; ` +
        "it may or may not have run.",
    );
  }
  if (code === 127 && REMOTE_NOT_FOUND.test(rest)) {
    throw new TmuxError(
      "not-installed",
      `tmux is not installed on host ${JSON.stringify(host)} (looked on the PATH ssh gives ` +
        "a command, and in /usr/local/bin, /opt/homebrew/bin, /opt/local/bin, /snap/bin).",
    );
  }
  return rest;
}

/**
 * Brings `address`'s host's connection up (no-op for this machine, or a host not in `ssh`:
 * {@link tmuxCommand} refuses that one).
 */
export async function reachHost(
  ssh: SshHosts | null,
  address: ServerAddress,
  signal: AbortSignal,
): Promise<void> {
  if (address.host === undefined || !ssh?.has(address.host)) return;
  try {
    await ssh.ensure(address.host, signal);
  } catch (error) {
    if (error instanceof SshUnreachable) throw new TmuxError("unreachable", error.message);
    throw error;
  }
}

/**
 * A timeout on an SSH host, said as what it is: killing our ssh does not stop a command the
 * host's tmux has not run yet (a stuck remote server keeps it), so it may still run there.
 */
export function remoteTimeout(error: unknown, address: ServerAddress): unknown {
  if (!(error instanceof TmuxError) || error.kind !== "timeout" || address.host === undefined) {
    return error;
  }
  return new TmuxError(
    "timeout",
    `${error.message.replace(/\.$/, "")} (host ${JSON.stringify(address.host)}: the command ` +
      "may still run there later, once its tmux answers again).",
    error.stderr,
    error.stdout,
  );
}
