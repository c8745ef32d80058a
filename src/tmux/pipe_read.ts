/**
 * Reading a tmux child's pipe to its end under a bound: a collecting read stops at the call's
 * timeout, cancellation or the runner's close, and at {@link MAX_ANSWER_BYTES}, so a tmux that
 * prints without end cannot fill memory.
 *
 * @module
 */

import { joinBytes } from "./chain.ts";
import type { ServerAddress } from "./server_address.ts";
import { TmuxError } from "./tmux_error.ts";

/**
 * Most bytes a one-shot call collects from tmux's stdout before it gives up (kills the child,
 * fails with "answer too large"): far above any answer tmux gives here (10 000 captured lines of
 * a wide pane with every escape are tens of MB; paste buffers are read at up to 4 MB; deep
 * history is streamed, see {@link TmuxRunner.stream}), yet a bound: a remote (or a broken) tmux
 * that prints without end would otherwise fill memory until the timeout.
 */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** A pipe held more than a collecting read takes (see {@link MAX_ANSWER_BYTES}). */
export class AnswerTooLarge extends Error {
  constructor(readonly limit: number, readonly what: string) {
    super(`more than ${limit} bytes on ${what}`);
  }
}

/** The error a call whose answer was too large fails with. */
export function tooLargeError(error: AnswerTooLarge, address: ServerAddress): TmuxError {
  const where = address.host === undefined ? "" : ` on host ${JSON.stringify(address.host)}`;
  return new TmuxError(
    "failed",
    `The answer of tmux${where} was too large (more than ${error.limit} bytes on its ` +
      `${error.what}), so the call was stopped; a tmux that answers that much is not behaving ` +
      "as tmux does.",
  );
}

/**
 * All of a child's pipe, or what came before `signal` (the call's timeout, its cancellation,
 * the runner's close): then the read stops, whoever still holds the pipe's other end. Each
 * chunk goes through `keep` first (what it returns is kept, e.g. what follows a marker);
 * more than `limit` bytes kept throws {@link AnswerTooLarge}.
 */
export async function readAll(
  stream: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  limit = Infinity,
  what = "stdout",
  keep?: (chunk: Uint8Array) => Uint8Array,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const stop = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      const kept = keep ? keep(value) : value;
      if (kept.length === 0) continue;
      total += kept.length;
      if (total > limit) {
        stop();
        throw new AnswerTooLarge(limit, what);
      }
      chunks.push(kept);
    }
  } finally {
    signal.removeEventListener("abort", stop);
  }
  return chunks.length === 0 ? new Uint8Array() : joinBytes(chunks);
}
