/**
 * A job's markers found in rows as they stream by: {@link findMarkers} (job_markers.ts) one row
 * at a time, for a read whose rows print more than a read holds whole (a wide pane of combining
 * marks prints 21 bytes a cell). Every judgment is the same, made on the same rows; of what the
 * job printed only the last rows a reply can hold are kept, and the bytes before them counted
 * ({@link Marked.cutBytes}). Text only: no tmux call.
 *
 * @module
 */

import { utf8Length } from "../tmux/capture.ts";
import { shownStart } from "../tmux/shown_cells.ts";
import {
  BEFORE_BEGIN_ROWS,
  beginMarker,
  BeginRows,
  deadRowRest,
  echoWords,
  endPattern,
  type EndRow,
  endRow,
  isHeldLine,
  type Marked,
  trimTrailingBlank,
  typedNonce,
} from "./job_markers.ts";

/** A row held, with where it is among the rows read. */
interface HeldRow {
  readonly text: string;
  /** Its index among the rows read. */
  readonly index: number;
  /** UTF-8 bytes of the rows before it, each with the newline after it. */
  readonly before: number;
  /** UTF-8 bytes of its text given up (a blank row no output can hold; see TailRing). */
  readonly gaveUp?: number;
}

/**
 * The last rows before a row, taken when that row came: what the job printed up to a marker, or
 * up to another run_command's line. Held by the ring until more than a reply's worth of rows
 * came after it, then copied out once ({@link TailRing}).
 */
class Tail {
  rows: HeldRow[] | null = null;
  /** UTF-8 bytes of the rows copied out, each with its newline (see {@link TailRing.heldBytes}). */
  rowBytes = 0;
  /** Holders not done with it ({@link TailRing.share}, {@link TailRing.release}). */
  holders = 1;
  /** `end`: the row it ends before; `need`: the first row it holds. */
  constructor(readonly end: number, readonly need: number) {}
}

/**
 * The last rows read, as few as hold `keepBytes` up to the last written (not blank) row (blank
 * rows after it wait for one), and the rows the {@link Tail}s taken still need. A tail that
 * would keep more than twice that held is copied out: each copy follows as many bytes as it
 * holds, so the work stays in proportion to what is read, whatever the rows print.
 *
 * A run of blank rows after the last written one is held too: they are output when a written
 * row follows, or text on the next row before an end marker. Only the text of its rows that
 * fewer than `keepBytes` follow is kept: no tail's output holds an earlier one (the tail a
 * written row keeps, and one before text on a marker's row, start where at most that follows;
 * in every other tail they are trailing blank rows, which are no output). The rest keep their
 * place and size, so a program printing rows of spaces (`capture-pane -J` keeps them) holds no
 * more than their count.
 */
class TailRing {
  readonly #keep: number;
  #rows: HeldRow[] = [];
  #head = 0;
  /** Index of the next row; UTF-8 bytes of the rows so far, each with its newline. */
  #next = 0;
  #bytes = 0;
  /** The first row of the shortest tail that holds `keep` ({@link Tail.need}). */
  #frontier = 0;
  /** Bytes from the frontier's row up to the last written one; that row's index. */
  #held = 0;
  #lastWritten = -1;
  /** The first row that at most `keep` bytes follow (the frontier as if every row were written). */
  #lastKeep = 0;
  /** The first row of the blank run after the last written one whose text is not given up. */
  #blankFrom = 0;
  /** UTF-8 bytes of text given up among the rows held (see {@link HeldRow.gaveUp}). */
  #given = 0;
  readonly #tails = new Set<Tail>();

  constructor(keepBytes: number) {
    this.#keep = keepBytes;
  }

  /** Bytes of the rows read so far, each with its newline. */
  get bytes(): number {
    return this.#bytes;
  }

  /** UTF-8 bytes of the rows held (those copied out counted again), each with its newline. */
  get heldBytes(): number {
    const first = this.#head < this.#rows.length ? this.#rows[this.#head].before : this.#bytes;
    let held = this.#bytes - first - this.#given;
    for (const tail of this.#tails) held += tail.rowBytes;
    return held;
  }

  /**
   * The last rows before the next row, held until {@link release}. `prefixed`: output follows
   * them on that row (text before an end marker), so blank rows after the last written one are
   * output too: the tail starts where at most `keep` bytes follow.
   */
  take(prefixed = false): Tail {
    const tail = new Tail(this.#next, prefixed ? this.#lastKeep : this.#frontier);
    this.#tails.add(tail);
    return tail;
  }

  /** One more holder of `tail`. */
  share(tail: Tail): Tail {
    tail.holders++;
    return tail;
  }

  /** A holder is done with `tail`: its rows go once none holds it. */
  release(tail: Tail | null): void {
    if (tail && --tail.holders === 0) this.#tails.delete(tail);
  }

  /** A tail's rows. */
  rowsOf(tail: Tail): HeldRow[] {
    return tail.rows ?? this.#slice(tail.need, tail.end);
  }

  /** The next row; `gaveUp`: the bytes of its text already given up (a blank row's). */
  push(text: string, written: boolean, gaveUp = 0): void {
    const bytes = utf8Length(text) + gaveUp + 1;
    this.#rows.push({
      text,
      index: this.#next,
      before: this.#bytes,
      ...(gaveUp ? { gaveUp } : {}),
    });
    this.#given += gaveUp;
    this.#next++;
    this.#bytes += bytes;
    if (written) {
      // The frontier is never past the row after the last written one.
      for (let i = this.#lastWritten + 1; i < this.#next; i++) this.#held += this.#sizeOf(i);
      this.#lastWritten = this.#next - 1;
    }
    while (
      this.#frontier < this.#lastWritten && this.#held - this.#sizeOf(this.#frontier) > this.#keep
    ) {
      this.#held -= this.#sizeOf(this.#frontier);
      this.#frontier++;
    }
    while (
      this.#lastKeep < this.#next - 1 && this.#bytes - this.#before(this.#lastKeep + 1) > this.#keep
    ) this.#lastKeep++;
    this.#giveUpBlank();
    this.#letGo();
  }

  /** Gives up the text of the blank run's rows before {@link #lastKeep} (see the class). */
  #giveUpBlank(): void {
    this.#blankFrom = Math.max(this.#blankFrom, this.#lastWritten + 1);
    for (; this.#blankFrom < this.#lastKeep; this.#blankFrom++) {
      const at = this.#pos(this.#blankFrom);
      const row = this.#rows[at];
      if (row.text === "") continue;
      const gaveUp = utf8Length(row.text);
      // A new row: a tail copied out keeps the one it copied.
      this.#rows[at] = { ...row, text: "", gaveUp };
      this.#given += gaveUp;
    }
  }

  /** Rows no tail needs go; a tail that holds back more than twice `keep` is copied out. */
  #letGo(): void {
    while (true) {
      let floor = this.#frontier;
      let oldest: Tail | null = null;
      for (const tail of this.#tails) {
        if (tail.rows === null && tail.need < floor) {
          floor = tail.need;
          oldest = tail;
        }
      }
      const first = this.#head < this.#rows.length ? this.#rows[this.#head].index : this.#next;
      if (floor > first) {
        for (let i = this.#head; i < this.#head + floor - first; i++) {
          this.#given -= this.#rows[i].gaveUp ?? 0;
        }
        this.#head += floor - first;
        if (this.#head > 1024 && this.#head * 2 > this.#rows.length) {
          this.#rows = this.#rows.slice(this.#head);
          this.#head = 0;
        }
      }
      if (oldest === null || this.#bytes - this.#before(floor) <= 2 * this.#keep) return;
      oldest.rows = this.#slice(oldest.need, oldest.end);
      for (const row of oldest.rows) oldest.rowBytes += utf8Length(row.text) + 1;
    }
  }

  /** Where row `index` (held) is in {@link #rows}. */
  #pos(index: number): number {
    return this.#head + index - this.#rows[this.#head].index;
  }

  #at(index: number): HeldRow {
    return this.#rows[this.#pos(index)];
  }

  #before(index: number): number {
    return index >= this.#next ? this.#bytes : this.#at(index).before;
  }

  #sizeOf(index: number): number {
    return this.#before(index + 1) - this.#before(index);
  }

  #slice(from: number, to: number): HeldRow[] {
    if (from >= to) return [];
    const at = this.#pos(from);
    return this.#rows.slice(at, at + to - from);
  }
}

/** Where a job's output would start, known when a row came (see {@link MarkerScan}). */
interface Start {
  /** The row it starts after (-1: the first row). */
  readonly after: number;
  /** Bytes of the rows up to it, each with its newline. */
  readonly bytes: number;
}

/** A valid end marker read, and what was known of the rows above it. */
interface EndSeen extends EndRow {
  readonly at: number;
  /** {@link EndRow.prefix} as a person sees it (see {@link MarkerScan.row}). */
  readonly shownPrefix: string;
  /** The shell's begin marker above it, as {@link BeginRows} chooses; whether there are more. */
  readonly begin: Start | null;
  readonly twoBegins: boolean;
  readonly echo: Start | null;
  readonly tail: Tail;
}

/** A row shaped like another run_command's line, waiting for that command's begin marker. */
interface Candidate {
  readonly at: number;
  readonly nonce: string;
  /**
   * The rows before the row its lines start at (a long command's first); null when that row is
   * not below the first begin marker.
   */
  readonly tail: Tail | null;
  confirmed: boolean;
}

/**
 * Reads rows one at a time (as `findMarkers(rows, nonce, start)` reads them all) and tells what
 * job `nonce`'s markers in them say, with the output's last rows that hold `keepBytes` (all of
 * it when it holds less) and the bytes cut before them. `dead`: the rows of a dead pane, whose
 * last written row loses what tmux drew there (`drawn`, when known), as
 * `withoutDeadLine(rows, drawn)` (job_state.ts) reads it.
 */
export class MarkerScan {
  readonly #nonce: string;
  readonly #start: number;
  readonly #dead: boolean;
  readonly #drawn: string | null;
  readonly #begin: string;
  readonly #echo: string;
  readonly #endRe: RegExp;
  readonly #ring: TailRing;
  readonly #keep: number;
  /**
   * A dead pane's last written row and the blank rows after it, not read yet: the next written
   * row may be tmux's own line, which they then only led up to. Of the blank rows, only the
   * text of those fewer than `keepBytes` follow is kept (`gaveUp`: the bytes given up of the
   * others), as {@link TailRing} keeps a blank run: once read, no output holds it.
   */
  #pending: { text: string; shown: string; gaveUp: number }[] = [];
  /** The first pending blank row whose text is kept, and the bytes from it on. */
  #keptFrom = 1;
  #keptBytes = 0;
  #at = 0;
  /** The begin markers read, and where the output would start after each one chosen. */
  readonly #begins: BeginRows<Start>;
  #lastEcho: Start | null = null;
  /** Bytes of the rows before the row the job started at, once read. */
  #startBytes: number | null = null;
  #falseEnd = false;
  /** Valid end markers read: more than one leaves no exit status ({@link Marked.twoEnds}). */
  #ends = 0;
  #end: EndSeen | null = null;
  /** A begin marker or the echo of the typed line below the last end. */
  #belowEnd = false;
  /** Since the first begin marker: the first other run_command's line, and those waiting. */
  #next: Candidate | null = null;
  #candidates: Candidate[] = [];
  /**
   * The run of held lines (a long command's) the last row ends, and the rows before it (null
   * when the run does not start below the first begin marker).
   */
  #run: { tail: Tail | null } | null = null;

  constructor(
    nonce: string,
    start: number,
    keepBytes: number,
    dead = false,
    drawn: string | null = null,
  ) {
    this.#nonce = nonce;
    this.#start = Math.max(0, start);
    this.#dead = dead;
    this.#drawn = drawn;
    this.#keep = keepBytes;
    this.#begin = beginMarker(nonce);
    this.#begins = new BeginRows(start);
    this.#echo = echoWords(nonce);
    this.#endRe = endPattern(nonce);
    this.#ring = new TailRing(keepBytes);
  }

  /** UTF-8 bytes of the rows it holds (see {@link TailRing.heldBytes}). */
  get heldBytes(): number {
    const pending = this.#pending;
    // The last written row, a byte for each blank row given up, and the rows kept.
    const held = pending.length === 0
      ? 0
      : utf8Length(pending[0].text) + 1 + this.#keptFrom - 1 + this.#keptBytes;
    return this.#ring.heldBytes + held;
  }

  /**
   * The next row: `text` as printed, where the markers are looked for, and `shown`, the same
   * row as a person sees it (ShownCells.views), which the output is made of.
   */
  row(text: string, shown = text): void {
    if (!this.#dead) return this.#read(text, 0, shown);
    if (text.trim() !== "") {
      this.#readPending();
      this.#pending = [{ text, shown, gaveUp: 0 }];
      this.#keptFrom = 1;
      this.#keptBytes = 0;
      return;
    }
    if (this.#pending.length === 0) return this.#read(text, 0, shown);
    const pending = this.#pending;
    pending.push({ text, shown, gaveUp: 0 });
    this.#keptBytes += utf8Length(text) + 1;
    for (; this.#keptFrom < pending.length; this.#keptFrom++) {
      const size = utf8Length(pending[this.#keptFrom].text) + 1;
      if (this.#keptBytes - size <= this.#keep) break;
      this.#keptBytes -= size;
      pending[this.#keptFrom] = { text: "", shown: "", gaveUp: size - 1 };
    }
  }

  /** Reads the pending rows (see {@link #pending}). */
  #readPending(): void {
    for (const row of this.#pending) this.#read(row.text, row.gaveUp, row.shown);
    this.#pending = [];
  }

  /**
   * The next row, read; `gaveUp`: bytes of its text given up (see {@link #pending}); `shown`:
   * as a person sees it.
   */
  #read(text: string, gaveUp = 0, shown = text): void {
    const i = this.#at;
    const ring = this.#ring;
    const trimmed = text.trimEnd();
    const isBegin = trimmed.endsWith(this.#begin);
    const isEcho = text.includes(this.#echo);
    const end = endRow(text, this.#nonce, this.#endRe);
    if (end === false) this.#falseEnd = true;
    if (end) {
      this.#ends++;
      ring.release(this.#end?.tail ?? null);
      this.#end = {
        ...end,
        at: i,
        begin: this.#begins.chosen(),
        twoBegins: this.#begins.count > 1,
        echo: this.#lastEcho,
        tail: ring.take(end.prefix !== ""),
        shownPrefix: shownStart(shown, end.prefix),
      };
      this.#belowEnd = false;
    } else if (isBegin || isEcho) this.#belowEnd = true;
    if (i === this.#start) this.#startBytes = ring.bytes;
    this.#lookForNext(i, text, trimmed);
    ring.push(shown, shown.trim() !== "", gaveUp);
    const after = { after: i, bytes: ring.bytes };
    this.#begins.row(i, isBegin, isEcho, after);
    if (isEcho) this.#lastEcho = after;
    this.#at++;
  }

  /**
   * The first line of another run_command below the first begin marker (`typedLineAt` in
   * job_markers.ts): its exact typed line with its begin marker at most
   * {@link BEFORE_BEGIN_ROWS} + 1 rows below, taken from the first of the held lines above it.
   */
  #lookForNext(i: number, text: string, trimmed: string): void {
    const ring = this.#ring;
    for (const c of this.#candidates) {
      if (trimmed.endsWith(beginMarker(c.nonce))) c.confirmed = true;
    }
    // A row is looked at once the search is on: below the first begin marker (this row is not
    // counted yet), before a line is found.
    const searching = this.#next === null && this.#begins.count > 0;
    const run = this.#run;
    const typed = searching ? typedNonce(text) : null;
    if (typed !== null && typed !== this.#nonce) {
      const tail = run ? (run.tail && ring.share(run.tail)) : ring.take();
      this.#candidates.push({
        at: i,
        nonce: typed,
        tail,
        confirmed: false,
      });
    }
    if (!isHeldLine(text)) {
      ring.release(run?.tail ?? null);
      this.#run = null;
    } else if (run === null) this.#run = { tail: searching ? ring.take() : null };
    this.#settle(i);
  }

  /** The waiting lines, in order: the first confirmed is the next command's; others wait. */
  #settle(i: number | null): void {
    while (this.#candidates.length > 0) {
      const c = this.#candidates[0];
      if (c.confirmed) {
        this.#candidates.shift();
        this.#dropCandidates();
        this.#next = c;
        return;
      }
      if (i !== null && i < c.at + BEFORE_BEGIN_ROWS + 1) return;
      this.#candidates.shift();
      this.#ring.release(c.tail);
    }
  }

  #dropCandidates(): void {
    for (const c of this.#candidates) this.#ring.release(c.tail);
    this.#candidates = [];
  }

  /** What the rows read tell (every row read, the unfinished last one included). */
  finish(): Marked {
    if (this.#pending.length > 0) {
      const [first] = this.#pending;
      const rest = deadRowRest(first.text, this.#drawn);
      // Nothing of the row left: the blank rows before tmux's line go with it (they are no
      // output); what is left of it, the rest of the command's output.
      if (rest === "") this.#pending = [];
      else if (rest !== null) {
        this.#pending = [{ text: rest, shown: shownStart(first.shown, rest), gaveUp: 0 }];
      }
      this.#readPending();
    }
    this.#settle(null);
    const end = this.#end;
    if (end === null) {
      const begin = this.#begins.chosen();
      const tail = this.#ring.take();
      const falseEnd = this.#falseEnd ? { falseEnd: true } : {};
      const twoBegins = this.#begins.count > 1 ? { twoBegins: true } : {};
      if (begin === null) {
        return { begun: false, status: null, endedMs: null, output: "", ...falseEnd };
      }
      const body = this.#cut(tail, begin, "");
      const next = this.#next;
      const before = next === null
        ? null
        : next.tail === null
        ? { output: "", cutBytes: 0 }
        : this.#cut(next.tail, begin, "");
      return {
        begun: true,
        status: null,
        endedMs: null,
        output: body.output,
        ...(body.cutBytes ? { cutBytes: body.cutBytes } : {}),
        ...falseEnd,
        ...twoBegins,
        ...(before === null ? {} : {
          beforeNext: before.output,
          ...(before.cutBytes ? { beforeNextCutBytes: before.cutBytes } : {}),
        }),
      };
    }
    let from: Start;
    let startGone = false;
    if (end.begin !== null) from = end.begin;
    else if (end.echo !== null) from = end.echo;
    else {
      // As findMarkers: from the row the job started at (or the end's row, if that is above).
      // (From the end's own row there is no output above it to cut.)
      const startRow = Math.min(end.at, this.#start);
      from = { after: startRow - 1, bytes: this.#startBytes ?? 0 };
      if (!this.#belowEnd) {
        startGone = true;
        if (end.at < this.#start) from = { after: -1, bytes: 0 };
      }
    }
    const body = this.#cut(end.tail, from, end.shownPrefix);
    // Two valid ends: which one the shell printed cannot be told (findMarkers).
    const twoEnds = this.#ends > 1;
    return {
      begun: end.begin !== null,
      status: twoEnds ? null : end.status,
      endedMs: twoEnds ? null : end.endedMs,
      output: body.output,
      ...(body.cutBytes ? { cutBytes: body.cutBytes } : {}),
      ...(startGone ? { startGone } : {}),
      ...(twoEnds ? { twoEnds } : {}),
      ...(end.twoBegins ? { twoBegins: true } : {}),
    };
  }

  /** The rows of `tail` below `from` as output (and `prefix` after them), and the bytes cut. */
  #cut(tail: Tail, from: Start, prefix: string): { output: string; cutBytes: number } {
    const rows = this.#ring.rowsOf(tail).filter((r) => r.index > from.after);
    const cutBytes = rows.length > 0 && rows[0].index > from.after + 1
      ? rows[0].before - from.bytes
      : 0;
    const body = rows.map((r) => r.text);
    if (prefix !== "") body.push(prefix);
    return { output: trimTrailingBlank(body).join("\n"), cutBytes };
  }
}
