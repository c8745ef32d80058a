/**
 * What a failed tmux call is: the kinds a caller tells apart ({@link TmuxErrorKind}), the
 * {@link TmuxError} that carries one, and how a call's status and stderr are judged into one
 * (a missing server, a missing target, a refused user, a program that could not start).
 *
 * @module
 */

/** Why a tmux call failed, as far as a caller needs to tell cases apart. */
export type TmuxErrorKind =
  /** No server listens on the socket (no socket file, a stale one, or the server died). */
  | "no-server"
  /** The server answered but the session, window, pane or client named does not exist. */
  | "no-target"
  /** The tmux executable could not be started (not on PATH, or not permitted). */
  | "not-installed"
  /** The call took longer than its timeout and was killed. */
  | "timeout"
  /** The caller cancelled the call and it was killed. */
  | "cancelled"
  /** tmux ran and reported some other error. */
  | "failed"
  /** The SSH host did not answer, refused us, or dropped the connection (see ssh.ts). */
  | "unreachable";

/** A failed tmux call. `message` is tmux's own first line of complaint, or ours. */
export class TmuxError extends Error {
  /** What kind of failure this is. */
  readonly kind: TmuxErrorKind;
  /** tmux's stderr, trimmed (empty when tmux never ran). */
  readonly stderr: string;
  /** The stdout tmux wrote before failing; a command chain may have half succeeded. */
  readonly stdout: Uint8Array;

  /** Builds an error; `stderr` and `stdout` default to empty. */
  constructor(
    kind: TmuxErrorKind,
    message: string,
    stderr = "",
    stdout: Uint8Array = new Uint8Array(),
  ) {
    super(message);
    this.name = "TmuxError";
    this.kind = kind;
    this.stderr = stderr;
    this.stdout = stdout;
  }
}

/**
 * A read's answer grew past the bound the call was sent with (`RunOptions.answerBound`): tmux
 * ran it, and nothing of the answer was kept (over a control connection the rest was read into
 * nothing, the connection carrying on; a tmux process was stopped). Only a read may ask for a
 * bound, so its caller reads again another way (streamed).
 */
export class AnswerPastBound extends Error {
  readonly bound: number;

  constructor(bound: number) {
    super(`an answer larger than ${bound} bytes`);
    this.name = "AnswerPastBound";
    this.bound = bound;
  }
}

/** The error of a call cancelled (by its client, or its wait given up) before tmux finished. */
export function cancelledCall(): TmuxError {
  return new TmuxError("cancelled", "The call was cancelled.");
}

const NO_SERVER_PATTERNS = [
  /^no server running on /m,
  /^error connecting to .*\((No such file or directory|Connection refused)\)/m,
  /^server exited unexpectedly/m,
  /^lost server/m,
];
const NO_TARGET_PATTERNS = [
  /^can't find (session|window|pane|client)/m,
  /^no such (session|window|pane|client)/m,
  /^session not found/m,
  /^window not found/m,
  /^pane not found/m,
  /^no current (target|session|window|pane|client)/m,
];

/**
 * tmux's answer to a user its server does not allow (3.3's `server-access`; by default only the
 * server's owner and root): `access not allowed` on stderr, with exit status 0 and nothing done.
 */
const ACCESS_DENIED = /^access not allowed/m;

/** Whether tmux's stderr says its server refused this user (see {@link ACCESS_DENIED}). */
export function accessDenied(stderr: string): boolean {
  return ACCESS_DENIED.test(stderr);
}

/**
 * The status a tmux process's result stands for: its exit status, but a failure when tmux said
 * its server refused this user, which tmux 3.3a reports with status 0.
 */
export function statusOf(code: number, stderr: string): number {
  return code === 0 && accessDenied(stderr) ? 1 : code;
}

/**
 * What a `no-server` failure says was at the socket's path, as tmux's words tell it (the MCP
 * server may run tmux and ssh, nothing else, so it cannot look):
 * - "refused": something is there that no server answers on, a socket a server left when it
 *   ended (killed, crashed) or no socket at all (a file, a FIFO, a directory). tmux 3.3a says
 *   `no server running on PATH` for that (connect's ECONNREFUSED), and a tmux that starts a
 *   server there deletes what the path names first.
 * - "absent": nothing is there (`error connecting to PATH (No such file or directory)`).
 * - "lost": a server answered and then went (`server exited unexpectedly`, `lost server`).
 *
 * Null for any other error.
 */
export function noServerCause(error: unknown): "refused" | "absent" | "lost" | null {
  if (!(error instanceof TmuxError) || error.kind !== "no-server") return null;
  const said = error.stderr || error.message;
  if (/^no server running on |^error connecting to .*\(Connection refused\)/m.test(said)) {
    return "refused";
  }
  if (/^error connecting to .*\(No such file or directory\)/m.test(said)) return "absent";
  return "lost";
}

/** Sorts a failed call's stderr into a {@link TmuxErrorKind}. Exported for tests. */
export function classifyStderr(stderr: string): TmuxErrorKind {
  if (NO_SERVER_PATTERNS.some((p) => p.test(stderr))) return "no-server";
  if (NO_TARGET_PATTERNS.some((p) => p.test(stderr))) return "no-target";
  return "failed";
}

/** The {@link TmuxError} a failed call's stderr describes (its first line, its kind). */
export function failureOf(
  result: { code: number; stdout?: Uint8Array; stderr: string },
): TmuxError {
  const stderr = result.stderr.trim();
  const first = stderr.split("\n")[0] || `tmux exited with status ${result.code}`;
  return new TmuxError(classifyStderr(stderr), first, stderr, result.stdout);
}

/**
 * A call's stdout when its status is 0, else a {@link TmuxError} built from its stderr: the
 * judgement `run` applies, for callers that got their result another way (a control client).
 * A server that refused this user is a failure whatever the status (tmux exits 0 then).
 */
export function judgeResult(
  result: { code: number; stdout: Uint8Array; stderr: string },
): Uint8Array {
  if (statusOf(result.code, result.stderr) === 0) return result.stdout;
  throw failureOf(result);
}

/**
 * A command refused before anything ran because an argument holds a NUL character: tmux ends
 * an argument there (a control line's command would be cut, what follows it dropped, a guard's
 * refusal branch with it), and no process can be started with one. Ours, not tmux's: a tool
 * reports its message as it is.
 */
export class NulArgument extends TmuxError {
  constructor() {
    super(
      "failed",
      "An argument holds a NUL character; nothing was run. tmux would cut the command at " +
        "it, so no tmux argument can hold one: leave it out.",
    );
    this.name = "NulArgument";
  }
}

/** Refuses an argv any argument of which holds a NUL character ({@link NulArgument}). */
export function refuseNul(args: readonly string[]): void {
  if (args.some((a) => a.includes("\0"))) throw new NulArgument();
}

/**
 * The {@link TmuxError} for a program that could not be started (missing, not permitted), or
 * whose arguments or environment held a NUL character ({@link NulArgument}): nothing ran.
 */
export function notInstalled(binary: string, error: unknown): TmuxError {
  if (error instanceof TypeError && /nul byte/i.test(error.message)) return new NulArgument();
  if (binary === "ssh" && error instanceof Deno.errors.NotFound) {
    return new TmuxError("unreachable", "ssh (OpenSSH) is not installed or not on PATH.");
  }
  if (error instanceof Deno.errors.NotFound) {
    return new TmuxError(
      "not-installed",
      `tmux is not installed or not on PATH (looked for "${binary}").`,
    );
  }
  if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
    return new TmuxError(
      "not-installed",
      `Not permitted to run "${binary}": the process needs --allow-run=${binary}.`,
    );
  }
  return new TmuxError(
    "not-installed",
    `Could not start "${binary}": ${error instanceof Error ? error.message : String(error)}`,
  );
}
