/**
 * Why an SSH host could not be had: {@link SshUnreachable} for every such failure, and what
 * ssh's stderr says went wrong, read so that the reason given is ssh's own line, and a refused
 * host key says what to do instead (connecting again cannot change it).
 *
 * @module
 */

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
 * The line of `said` (ssh's stderr) that says what went wrong: lines are cut at `\r` (ssh
 * ends some with `\r\n`), and lines that never say why are passed over: the banner rows of `@`
 * around a warning, ssh's note that the askpass program of `SSH_ENV` (ssh.ts) is missing, and a
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
 * accepted without a question (see `SSH_ENV` in ssh.ts). Either way every retry fails the same,
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
