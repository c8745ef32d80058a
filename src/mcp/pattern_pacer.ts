/**
 * Pacing the matching of a client's regular expressions (see pattern.ts): a long matching
 * loop gives the event loop a turn every few milliseconds, where a cancelled call stops and a
 * call whose deadline passed is told so ({@link MatchPacer}), and a line too long for one
 * call to the engine is matched piece by piece with those turns between pieces
 * ({@link testPieces}), counting the lines where a longer match could have gone unseen.
 *
 * @module
 */

import { cancelledCall } from "../tmux/tmux_error.ts";
import type { LineRegex } from "./pattern.ts";

/** Matching time between two turns of the event loop. */
const SLICE_MS = 20;
/** Work (characters times program size) between two looks at the clock: a few ms at worst. */
const CHECK_WORK = 1 << 20;

/** Thrown by a {@link MatchPacer} whose deadline passed while a call was still matching. */
export class MatchDeadline extends Error {
  constructor() {
    super("The deadline passed while matching.");
    this.name = "MatchDeadline";
  }
}

/**
 * Keeps a long matching loop from holding the server: after about {@link SLICE_MS} of work
 * it gives the event loop a turn (other requests, cancellation, end of input, signals are
 * handled then) and throws a `cancelled` TmuxError once `signal` has fired, or a
 * {@link MatchDeadline} once `deadline` (a `performance.now()` time) has passed. Time is read
 * only every {@link CHECK_WORK} units of work, so a loop over short rows stays cheap. It also
 * keeps, for the call's reply, the lines it matched in pieces where a match longer than their
 * overlap could have gone unseen ({@link MatchPacer.pieced}).
 */
export class MatchPacer {
  readonly #signal: AbortSignal | undefined;
  readonly #deadline: number;
  #work = 0;
  #turnAt = performance.now() + SLICE_MS;
  #piecedLines = 0;
  #overlap = Infinity;

  /** A pacer for one call; `signal` is the call's, `deadline` when its matching must stop. */
  constructor(signal?: AbortSignal, deadline = Infinity) {
    this.#signal = signal;
    this.#deadline = deadline;
  }

  /**
   * Counts a line matched in pieces that overlap by `overlap` characters, on which nothing was
   * found but a match longer than that could lie across two of them.
   */
  pieced(overlap: number): void {
    this.#piecedLines++;
    this.#overlap = Math.min(this.#overlap, overlap);
  }

  /**
   * A pacer with the same signal and deadline whose lines matched in pieces are not counted
   * here: for matching again what this one's call matched once (search_panes reads the panes
   * that matched a second time, as shown), each such line counted once.
   */
  again(): MatchPacer {
    return new MatchPacer(this.#signal, this.#deadline);
  }

  /** How many lines {@link MatchPacer.pieced} counted. */
  get piecedLines(): number {
    return this.#piecedLines;
  }

  /**
   * What a reply says of the lines {@link MatchPacer.pieced} counted ("" when none): `lines`
   * says how many (a caller that matched each line once), else only that there were some.
   */
  piecedNote(lines: boolean): string {
    if (this.#piecedLines === 0) return "";
    const n = this.#piecedLines;
    const which = lines ? `${n} long line${n === 1 ? " was" : "s were"}` : "long lines were";
    return `${which} matched in pieces overlapping by ${this.#overlap} characters: a longer ` +
      `match on ${lines && n === 1 ? "it" : "them"} could have been missed`;
  }

  /**
   * Counts matching `chars` characters with a program of `cost`; returns a promise to await
   * when a turn is due, else null (so a hot loop awaits only then).
   */
  step(chars: number, cost: number): Promise<void> | null {
    this.#work += (chars + 32) * cost;
    if (this.#work < CHECK_WORK) return null;
    this.#work = 0;
    if (performance.now() < this.#turnAt) return null;
    return this.#turn();
  }

  async #turn(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (this.#signal?.aborted) throw cancelledCall();
    const now = performance.now();
    if (now >= this.#deadline) throw new MatchDeadline();
    this.#turnAt = now + SLICE_MS;
  }
}

/**
 * Whether `re` matches somewhere in `line`, piece by piece ({@link LineRegex.pieces}: one
 * bounded call each), the event loop getting its turns between them through `pacer`, which
 * counts the line when pieces found nothing and a longer match could have been missed.
 */
export async function testPieces(
  re: LineRegex,
  line: string,
  pacer: MatchPacer,
): Promise<boolean> {
  const pieces = re.pieces(line);
  for (const piece of pieces) {
    const hit = piece.test();
    const pause = pacer.step(piece.end - piece.start, re.cost);
    if (pause) await pause;
    if (hit) return true;
  }
  if (pieces.length > 1 && !re.fits) pacer.pieced(re.overlap);
  return false;
}
