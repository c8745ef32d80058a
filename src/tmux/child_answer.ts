/**
 * What a one-shot tmux child answered, read from its pipes once the runner has started it:
 * collected whole ({@link collectAnswer}) or handed on chunk by chunk as it arrives
 * ({@link streamAnswer}), stdout and stderr each under their bound, only what follows the
 * marker over SSH, and the status judged as tmux means it. An answer too large kills the child.
 *
 * @module
 */

import { AfterMarker } from "./ssh_wire.ts";
import { AnswerPastBound, statusOf } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";
import { AnswerTooLarge, readAll, tooLargeError } from "./pipe_read.ts";
import { remoteStderr } from "./remote_call.ts";

/** Bytes {@link streamAnswer} reads at a time. */
const STREAM_CHUNK_BYTES = 64 * 1024;

/**
 * All of `child`'s answer for the call to `address`: stdout up to `limit` bytes, stderr up to a
 * sixteenth of it, and the status. `marker`: the SSH host's (ssh.ts), when `address` names one.
 * `bounded`: `limit` is the call's own bound on stdout (`RunOptions.answerBound`), so going
 * past it throws {@link AnswerPastBound}, the caller's to handle, rather than a failure.
 * `answered`: told of tmux's first byte; `arrived`: of the SSH host's marker.
 */
export async function collectAnswer(
  child: Deno.ChildProcess,
  signal: AbortSignal,
  address: ServerAddress,
  limit: number,
  marker?: string,
  answered?: () => void,
  bounded = false,
  arrived?: () => void,
): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
  // Over SSH, the marker is looked for chunk by chunk as they come, and only what follows
  // it is kept: no joined copy of the whole answer to search.
  const after = address.host === undefined ? null : new AfterMarker(marker!);
  // `answered` hears of tmux's first byte (a control-mode client's handshake is then over);
  // `arrived`, of the marker (the remote start-up files are done).
  const keep = after || answered
    ? (chunk: Uint8Array) => {
      const before = after?.found;
      const kept = after ? after.push(chunk) : chunk;
      if (before === false && after!.found) arrived?.();
      if (kept.length > 0) answered?.();
      return kept;
    }
    : undefined;
  // Too large an answer stops both readers and the child (see MAX_ANSWER_BYTES).
  const tooLarge = new AbortController();
  const both = AbortSignal.any([signal, tooLarge.signal]);
  let raw: [Uint8Array, Uint8Array, Deno.CommandStatus];
  try {
    // Not child.output(): that waits for the end of both pipes, which a tmux client hands
    // to its server; a stopped server holds them open long after the client was killed.
    raw = await Promise.all([
      readAll(child.stdout, both, limit, "stdout", keep),
      readAll(child.stderr, both, Math.ceil(limit / 16), "stderr"),
      child.status,
    ]);
  } catch (error) {
    if (!(error instanceof AnswerTooLarge)) throw error;
    tooLarge.abort();
    try {
      child.kill("SIGTERM");
    } catch {
      // Already exited.
    }
    throw bounded && error.what === "stdout"
      ? new AnswerPastBound(limit)
      : tooLargeError(error, address);
  }
  const [stdout, rawStderr, status] = raw;
  if (address.host !== undefined) {
    const stderr = remoteStderr(address.host, marker!, status.code, after!.found, rawStderr);
    return { code: statusOf(status.code, stderr), stdout, stderr };
  }
  const said = new TextDecoder().decode(rawStderr);
  // A server that refused this user answered nothing, with status 0: every caller that
  // reads the status must see a failure, or it would take the silence for an empty server.
  return { code: statusOf(status.code, said), stdout, stderr: said };
}

/**
 * Hands `child`'s stdout to `sink` chunk by chunk, the next read only once `sink` has settled,
 * and returns the status and stderr (up to a sixteenth of `limit` bytes) as
 * {@link collectAnswer} does; when `sink` throws, the child is killed and the error passed on.
 * `marker`: the SSH host's (ssh.ts), when `address` names one; `arrived` is told when it comes.
 */
export async function streamAnswer(
  child: Deno.ChildProcess,
  signal: AbortSignal,
  sink: (chunk: Uint8Array) => void | Promise<void>,
  address: ServerAddress,
  limit: number,
  marker?: string,
  arrived?: () => void,
): Promise<{ code: number; stderr: string }> {
  const after = address.host === undefined ? null : new AfterMarker(marker!);
  if (after) {
    const inner = sink;
    sink = (chunk) => {
      const before = after.found;
      const rest = after.push(chunk);
      if (!before && after.found) arrived?.();
      return rest.length > 0 ? inner(rest) : undefined;
    };
  }
  const stderr = readAll(child.stderr, signal, Math.ceil(limit / 16), "stderr")
    .then((raw) =>
      after
        ? child.status.then((s) => remoteStderr(address.host!, marker!, s.code, after.found, raw))
        : new TextDecoder().decode(raw)
    ).catch((error: unknown) => {
      if (!(error instanceof AnswerTooLarge)) throw error;
      try {
        child.kill("SIGTERM");
      } catch {
        // Already exited.
      }
      throw tooLargeError(error, address);
    });
  // Its failure is awaited below; until then it must not count as unhandled.
  stderr.catch(() => {});
  // One buffer read into again and again: a fresh chunk per read would leave megabytes of
  // spent buffers for the garbage collector to notice.
  const reader = child.stdout.getReader({ mode: "byob" });
  let buffer = new ArrayBuffer(STREAM_CHUNK_BYTES);
  // Killed at the timeout, tmux's client may leave its pipe open in a stopped server: stop
  // reading then, as readAll does.
  const stop = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();
  try {
    while (true) {
      const { done, value } = await reader.read(new Uint8Array(buffer));
      if (done || !value) break;
      await sink(value);
      buffer = value.buffer as ArrayBuffer;
    }
  } catch (error) {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already exited.
    }
    await reader.cancel().catch(() => {});
    await Promise.allSettled([child.status, stderr]);
    throw error;
  } finally {
    signal.removeEventListener("abort", stop);
  }
  const status = await child.status;
  const said = await stderr;
  return { code: statusOf(status.code, said), stderr: said };
}
