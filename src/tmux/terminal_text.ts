/**
 * Terminal output as text: what a program writes to its terminal (as `%output` delivers it, in
 * arbitrary chunks) turned into lines, escape sequences and control characters dropped, and
 * characters as a person sees them: one printed hidden or in its background's colour as a
 * blank, one of the line-drawing set as its glyph (see shown_cells.ts).
 *
 * @module
 */

import { decodeBytes } from "./format.ts";
import { Attributes, blankWidth, codePoint, inputSplit, lineDrawing } from "./shown_cells.ts";

/**
 * States of the escape-sequence scanner: tmux 3.3a's input parser (input.c) folded to what
 * decides which bytes are printed. The CSI states are one (they all end at a final byte), and
 * APC, PM, SOS and `ESC k` (a title) one string state, which no byte but CAN, SUB or ESC ends.
 * The DCS ones are tmux's: before its final byte a DCS is cancelled as any sequence is, after
 * it (its data) only `ESC \` ends it. Their order is used: up to `Csi` a C0 control is carried
 * out, from `Osc` on a string is read (see STRING_MS), below `DcsData` CAN, SUB and ESC cancel.
 */
const Esc = {
  Ground: 0,
  Escape: 1,
  EscIntermediate: 2,
  Csi: 3,
  Osc: 4,
  Str: 5,
  DcsEnter: 6,
  DcsParameter: 7,
  DcsIntermediate: 8,
  DcsIgnore: 9,
  DcsData: 10,
  DcsEscape: 11,
} as const;

/**
 * How long tmux waits for a string (OSC, DCS, APC, PM, SOS, title) to end before it goes back
 * to ground and prints what follows (input.c's timer): a program that begins one and never
 * ends it does not hide its later output.
 */
const STRING_MS = 5_000;

/**
 * CSI final bytes that clear or move cells (insert and delete characters and lines, erase in
 * line and display, scroll up and down, erase characters): tmux fills what they clear with the
 * current background colour.
 */
const ERASES = new Set([..."@JKLMPSTX"].map((c) => c.charCodeAt(0)));

/**
 * Most parameter bytes of a CSI tmux reads: one with more is dropped whole (input.c's
 * parameter buffer, 64 bytes with its end).
 */
const CSI_PARAMS = 63;

/** Longest line the decoder builds before it breaks it (binary output has no newlines). */
const MAX_LINE_BYTES = 16_384;
/** Room the lines' bytes start with (see TerminalText's #log); more is made as lines need. */
const LOG_BYTES = 16_384;

/**
 * Turns what a program writes to its terminal into lines of text: escape sequences (colours,
 * cursor moves, titles) dropped, CR LF and lone CR ending a line (a progress bar's redraws
 * become lines of their own), other control characters dropped. Stateful, because `%output`
 * arrives in arbitrary chunks that split lines, escape sequences and UTF-8 characters. Keeps
 * the most recent lines for a tail.
 *
 * Lines are kept as bytes, one after another in one buffer, and decoded only when read: a pane
 * printing short lines fast (`yes`) completes hundreds of thousands a second, and building and
 * decoding each one on its own took most of a core. A reader that takes no lines as they come
 * ({@link TerminalText.feed}: a watch that reads the pane's rows instead) has none decoded
 * but the last ones, when {@link TerminalText.recent} asks.
 */
export class TerminalText {
  #state: number = Esc.Ground;
  /** When the string being read began (see STRING_MS), as the caller's clock tells. */
  #stringAt = 0;
  #afterCR = false;
  /** Text was added to the partial line since {@link TerminalText.takeWritten} last asked. */
  #written = false;
  /**
   * What decides whether a character shows (hidden, or in its background's colour: see
   * shown_cells.ts), as saved with the cursor (`ESC 7`, CSI s) and as the alternate screen
   * saved them (1049, a store of its own): such characters are written as blanks, as a person
   * sees them. Its background, when not the default, is what an erase clears cells to: a
   * person sees them change, a capture of the text does not (a progress bar drawn as coloured
   * blanks).
   */
  #attributes = new Attributes();
  #savedAttributes = new Attributes();
  #alternateAttributes: Attributes | null = null;
  #alternate = false;
  #alternateCursor = false;
  /**
   * The character sets: whether G0 and G1 are the line-drawing set, which of them is in use
   * (SO and SI), and as saved with the cursor. A character of that set is written as its glyph.
   */
  #drawingSets = [false, false];
  #shifted = 0;
  #savedCharsets = { sets: [false, false], shifted: 0 };
  /** The intermediate bytes of the escape being read (up to two), for `ESC ( 0`. */
  #intermediates = "";
  /**
   * Cells were cleared in a background colour since {@link TerminalText.takePainted} last
   * asked.
   */
  #painted = false;
  /**
   * The CSI being read: its parameter bytes (up to CSI_PARAMS), whether it is plain, and
   * whether it had more parameter bytes than tmux reads (then it is dropped whole).
   */
  #csi = "";
  #csiPlain = true;
  #csiDropped = false;
  /** The CSI began with a private marker (not one of its parameter bytes), or had an intermediate. */
  #csiMarked = false;
  #csiIntermediate = false;
  /** A character of several bytes being gathered (see #topBit): its bytes, how many, of how many. */
  readonly #utf8 = new Uint8Array(4);
  #utf8Have = 0;
  #utf8Size = 0;
  /**
   * The kept lines' bytes, then the line being written's, from `#lineStart` to `#end`. Moved
   * to the front (or to a larger buffer) when full, lines no longer kept left behind.
   */
  #log = new Uint8Array(LOG_BYTES);
  #lineStart = 0;
  #end = 0;
  /**
   * Where each kept line begins in `#log`, a ring: the oldest at `#oldest`. A line ends where
   * the next begins (the newest where the line being written does).
   */
  readonly #starts: number[] = [];
  #oldest = 0;
  readonly #keep: number;

  /** A decoder that remembers the last `keep` completed lines. */
  constructor(keep = 200) {
    this.#keep = keep;
  }

  /**
   * Feeds bytes; returns the lines they completed. `at`: when they were written (a
   * `performance.now()` time), for a string left open as long as tmux waits (see STRING_MS);
   * without it, a string ends only as its bytes say.
   */
  push(bytes: Uint8Array, at?: number): string[] {
    const done: string[] = [];
    this.#scan(bytes, done, at);
    return done;
  }

  /**
   * Feeds bytes, for a reader that takes no lines as they come: the lines they complete are
   * only kept (undecoded) for {@link TerminalText.recent}. `at` as for {@link push}.
   */
  feed(bytes: Uint8Array, at?: number): void {
    this.#scan(bytes, null, at);
  }

  /**
   * Follows tmux's parser (input.c), which the decoder must agree with on what is printed: a
   * sequence tmux ends, cancels or gives up on and the decoder does not hides the text after
   * it (a wait then hears no output while the screen changes), and one the decoder ends and
   * tmux does not makes text of what tmux never shows. So: CAN and SUB cancel every sequence
   * but a DCS past its final byte; ESC begins a new sequence anywhere but there (which is how
   * ST, `ESC \`, ends a string); BEL ends an OSC only; a DCS's data ends only at `ESC \`.
   * Line ends (and tabs) inside an escape or a CSI are carried out, as tmux does, and dropped
   * inside a string. A sequence however long stays a sequence (tmux discards what it cannot
   * hold, and prints none of it); only a string left open for {@link STRING_MS} ends.
   */
  #scan(bytes: Uint8Array, done: string[] | null, at?: number): void {
    const string = this.#state >= Esc.Osc;
    if (string && at !== undefined && at - this.#stringAt >= STRING_MS) {
      // tmux's timer resets the parser: the attributes and character sets too (input_reset).
      this.#state = Esc.Ground;
      this.#reset();
    }
    for (const b of bytes) {
      const state = this.#state;
      if (state === Esc.Ground) {
        this.#ground(b, done);
        continue;
      }
      if (state < Esc.DcsData) {
        // CAN, SUB and ESC anywhere but in a DCS's data (input.c's INPUT_STATE_ANYWHERE).
        if (b === 0x18 || b === 0x1a) {
          this.#state = Esc.Ground;
          this.#utf8Have = 0;
          continue;
        }
        if (b === 0x1b) {
          this.#state = Esc.Escape;
          continue;
        }
        // Other C0 controls: carried out in an escape or a CSI, ignored in a string or a DCS
        // (but BEL, which ends an OSC).
        if (b < 0x20) {
          if (state <= Esc.Csi) this.#ground(b, done);
          else if (b === 0x07 && state === Esc.Osc) this.#state = Esc.Ground;
          continue;
        }
      }
      switch (state) {
        case Esc.Escape:
          if (b >= 0x20 && b <= 0x2f) {
            this.#state = Esc.EscIntermediate;
            this.#intermediates = String.fromCharCode(b);
          } else if (b === 0x5b) {
            this.#state = Esc.Csi;
            this.#csi = "";
            this.#csiPlain = true;
            this.#csiDropped = false;
            this.#csiMarked = false;
            this.#csiIntermediate = false;
          } else if (b === 0x5d) this.#string(Esc.Osc, at);
          else if (b === 0x50) this.#string(Esc.DcsEnter, at);
          // SOS, PM, APC, and a title (`ESC k`).
          else if (b === 0x58 || b === 0x5e || b === 0x5f || b === 0x6b) this.#string(Esc.Str, at);
          // Bytes from DEL up are ignored: the escape goes on.
          else if (b < 0x7f) {
            this.#state = Esc.Ground;
            // RIS resets the attributes; DECSC and DECRC save and restore them.
            if (b === 0x63) this.#reset();
            else if (b === 0x37 || b === 0x38) this.#saveOrRestore(b === 0x37);
          }
          break;
        case Esc.EscIntermediate:
          // Intermediates (0x20-0x2f) repeat until a final byte.
          if (b >= 0x30 && b <= 0x7e) {
            this.#state = Esc.Ground;
            this.#designate(b);
          } else if (b <= 0x2f && this.#intermediates.length < 2) {
            this.#intermediates += String.fromCharCode(b);
          }
          break;
        case Esc.Csi:
          if (b >= 0x40 && b <= 0x7e) {
            this.#state = Esc.Ground;
            this.#csiEnd(b);
          } else if (b >= 0x30 && b <= 0x3f) {
            // A private marker (`?`, `>`...) first: not the sequence of that final byte (and
            // not one of its parameter bytes). One later, or a parameter byte after an
            // intermediate, and tmux ignores the sequence whole.
            if (b >= 0x3c && this.#csi === "" && !this.#csiIntermediate) {
              this.#csiPlain = false;
              this.#csiMarked = true;
              this.#csi += String.fromCharCode(b);
            } else if (b >= 0x3c || this.#csiIntermediate) this.#csiDropped = true;
            else if (this.#csi.length - (this.#csiMarked ? 1 : 0) < CSI_PARAMS) {
              this.#csi += String.fromCharCode(b);
            } else this.#csiDropped = true;
          } else if (b <= 0x2f) {
            // An intermediate: another sequence. (Bytes from DEL up are ignored.)
            this.#csiPlain = false;
            this.#csiIntermediate = true;
          }
          break;
        // A DCS's final byte begins its data; a parameter tmux refuses has the DCS ignored
        // instead (no final byte then ends it, CAN, SUB and ESC still do).
        case Esc.DcsEnter:
        case Esc.DcsParameter:
          if (b >= 0x40 && b <= 0x7e) this.#state = Esc.DcsData;
          else if (b >= 0x20 && b <= 0x2f) this.#state = Esc.DcsIntermediate;
          else if (b === 0x3a || (b >= 0x3c && b <= 0x3f && state === Esc.DcsParameter)) {
            this.#state = Esc.DcsIgnore;
          } else if (b >= 0x30 && b <= 0x3f) this.#state = Esc.DcsParameter;
          break;
        case Esc.DcsIntermediate:
          if (b >= 0x40 && b <= 0x7e) this.#state = Esc.DcsData;
          else if (b >= 0x30 && b <= 0x3f) this.#state = Esc.DcsIgnore;
          break;
        case Esc.DcsData:
          if (b === 0x1b) this.#state = Esc.DcsEscape;
          break;
        case Esc.DcsEscape:
          this.#state = b === 0x5c ? Esc.Ground : Esc.DcsData;
          break;
      }
    }
  }

  /**
   * A CSI ended with `final`: an SGR sets the attributes; an erase made while the background
   * is not the default paints cells (see #attributes). Only a plain one (no private marker or
   * intermediate): tmux reads the others as other sequences; and none with more parameter
   * bytes than tmux reads.
   */
  #csiEnd(final: number): void {
    if (this.#csiDropped) return;
    if (this.#csi.startsWith("?") && !this.#csiIntermediate && (final === 0x68 || final === 0x6c)) {
      for (const mode of inputSplit(this.#csi.slice(1)) ?? []) {
        if (typeof mode === "number") this.#alternateScreen(mode, final);
      }
      return;
    }
    if (!this.#csiPlain || inputSplit(this.#csi) === null) return;
    // CSI s and u save and restore with the cursor, whatever their parameters.
    if (final === 0x73 || final === 0x75) {
      this.#saveOrRestore(final === 0x73);
      return;
    }
    if (final === 0x6d) this.#attributes.applyProgram(this.#csi);
    else if (this.#attributes.bg !== null && ERASES.has(final)) this.#painted = true;
  }

  /**
   * A private mode set (`h`) or reset: the alternate screen. 1049 saves the cell's attributes
   * on the way in (once: not when already there) and gives them back on the way out, in a
   * store of its own, never the character sets; 47 and 1047 save them too but give nothing
   * back (tmux's screen_alternate_on and screen_alternate_off).
   */
  #alternateScreen(mode: number, final: number): void {
    if (mode !== 1049 && mode !== 1047 && mode !== 47) return;
    if (final === 0x68) {
      if (!this.#alternate) this.#alternateAttributes = this.#attributes.copy();
      if (mode === 1049) this.#alternateCursor = true;
      this.#alternate = true;
      return;
    }
    // Given back even when not on the alternate screen, once a 1049 saved the cursor.
    if (mode === 1049 && this.#alternateCursor && this.#alternateAttributes !== null) {
      this.#attributes = this.#alternateAttributes.copy();
    }
    this.#alternate = false;
  }

  /**
   * Saves the attributes and character sets with the cursor (`save`), or gives the saved ones
   * back (tmux's input_save_state and input_restore_state).
   */
  #saveOrRestore(save: boolean): void {
    if (save) {
      this.#savedAttributes = this.#attributes.copy();
      this.#savedCharsets = { sets: [...this.#drawingSets], shifted: this.#shifted };
    } else {
      this.#attributes = this.#savedAttributes.copy();
      this.#drawingSets = [...this.#savedCharsets.sets];
      this.#shifted = this.#savedCharsets.shifted;
    }
  }

  /** RIS: attributes and character sets as a terminal starts (tmux's input_reset_cell). */
  #reset(): void {
    this.#attributes = new Attributes();
    this.#savedAttributes = new Attributes();
    this.#drawingSets = [false, false];
    this.#shifted = 0;
    this.#savedCharsets = { sets: [false, false], shifted: 0 };
  }

  /**
   * An escape with intermediates ended with `final`: `ESC ( 0` and `ESC ) 0` make G0 or G1 the
   * line-drawing set, `ESC ( B` and `ESC ) B` ASCII again (tmux reads no other).
   */
  #designate(final: number): void {
    const set = this.#intermediates === "(" ? 0 : this.#intermediates === ")" ? 1 : -1;
    if (set === -1) return;
    if (final === 0x30) this.#drawingSets[set] = true;
    else if (final === 0x42) this.#drawingSets[set] = false;
  }

  /**
   * Whether cells were cleared in a background colour since the last call: the screen changed
   * though no text was written and a capture of the text reads the same.
   */
  takePainted(): boolean {
    const painted = this.#painted;
    this.#painted = false;
    return painted;
  }

  /** Begins a string (or a DCS), at `at` (see STRING_MS). */
  #string(state: number, at: number | undefined): void {
    this.#state = state;
    this.#stringAt = at ?? 0;
  }

  #ground(b: number, done: string[] | null): void {
    // A byte with the top bit set is part of a character (tmux's input_top_bit_set); any other
    // but ESC and DEL ends one begun (input_print, input_c0_dispatch).
    if (b >= 0x80) {
      this.#topBit(b);
      this.#written = true;
      if (this.#end - this.#lineStart >= MAX_LINE_BYTES) this.#endLine(done);
      return;
    }
    if (b !== 0x1b && b !== 0x7f) this.#utf8Have = 0;
    const afterCR = this.#afterCR;
    this.#afterCR = false;
    if (b === 0x0a) {
      if (!afterCR) this.#endLine(done);
    } else if (b === 0x0d) {
      this.#endLine(done);
      this.#afterCR = true;
    } else if (b === 0x1b) {
      this.#state = Esc.Escape;
    } else if (b === 0x0e || b === 0x0f) {
      // SO and SI: G1 or G0 in use.
      this.#shifted = b === 0x0e ? 1 : 0;
    } else if (b === 0x09 || b >= 0x20 && b !== 0x7f) {
      const glyph = this.#drawingSets[this.#shifted] ? lineDrawing(b) : undefined;
      // A character a person does not see, as a blank.
      if (this.#attributes.unseen && b !== 0x09) this.#put(0x20);
      else if (glyph) { for (const g of glyph) this.#put(g); }
      else this.#put(b);
      this.#written = true;
      if (this.#end - this.#lineStart >= MAX_LINE_BYTES) this.#endLine(done);
    }
  }

  /**
   * The next byte of a character of several (UTF-8), as tmux gathers one: C2-DF, E0-EF and
   * F0-F4 begin one of 2, 3 or 4 bytes (any other byte with none begun is dropped); whole, it is
   * written as a person sees it then, by the attributes in force at its last byte (a hidden one
   * as a blank as wide as it is drawn), or dropped when it is no character (a byte that does not
   * go on one, an overlong form, a surrogate).
   */
  #topBit(b: number): void {
    const bytes = this.#utf8;
    if (this.#utf8Have === 0) {
      const size = b >= 0xc2 && b <= 0xdf
        ? 2
        : b >= 0xe0 && b <= 0xef
        ? 3
        : b >= 0xf0 && b <= 0xf4
        ? 4
        : 0;
      if (size === 0) return;
      bytes[0] = b;
      this.#utf8Have = 1;
      this.#utf8Size = size;
      return;
    }
    bytes[this.#utf8Have++] = b;
    if (this.#utf8Have < this.#utf8Size) return;
    const size = this.#utf8Size;
    this.#utf8Have = 0;
    for (let i = 1; i < size; i++) if ((bytes[i] & 0xc0) !== 0x80) return;
    const [lead, second] = bytes;
    if (
      (lead === 0xe0 && second < 0xa0) || (lead === 0xed && second > 0x9f) ||
      (lead === 0xf0 && second < 0x90) || (lead === 0xf4 && second > 0x8f)
    ) return;
    if (this.#attributes.unseen) {
      for (let n = blankWidth(codePoint(bytes, size)); n > 0; n--) this.#put(0x20);
      return;
    }
    for (let i = 0; i < size; i++) this.#put(bytes[i]);
  }

  /** Adds a byte to the line being written. */
  #put(b: number): void {
    if (this.#end === this.#log.length) this.#makeRoom();
    this.#log[this.#end++] = b;
  }

  #endLine(done: string[] | null): void {
    const start = this.#lineStart;
    if (done !== null) done.push(decodeBytes(this.#log.subarray(start, this.#end)));
    this.#lineStart = this.#end;
    this.#written = false;
    if (this.#keep <= 0) return;
    if (this.#starts.length < this.#keep) this.#starts.push(start);
    else {
      // The ring is full: the newest line takes the oldest one's place.
      this.#starts[this.#oldest] = start;
      this.#oldest = (this.#oldest + 1) % this.#keep;
    }
  }

  /**
   * Room for one more byte: the bytes from the oldest kept line on moved to the front, into a
   * buffer twice as large as they are when they fill half of it (so that a move comes only
   * after as many bytes again were added).
   */
  #makeRoom(): void {
    const first = this.#starts.length > 0 ? this.#starts[this.#oldest] : this.#lineStart;
    const used = this.#end - first;
    if (used + 1 > this.#log.length / 2) {
      const log = new Uint8Array(Math.max(this.#log.length * 2, (used + 1) * 2));
      log.set(this.#log.subarray(first, this.#end));
      this.#log = log;
    } else this.#log.copyWithin(0, first, this.#end);
    for (let i = 0; i < this.#starts.length; i++) this.#starts[i] -= first;
    this.#lineStart -= first;
    this.#end -= first;
  }

  /** The line being written (no line end yet), e.g. a prompt. */
  get partial(): string {
    return decodeBytes(this.#log.subarray(this.#lineStart, this.#end));
  }

  /**
   * Whether text was added to the partial line since the last call: escape sequences alone (a
   * title, the cursor shown) leave it as it was, and it is then nothing new.
   */
  takeWritten(): boolean {
    const written = this.#written;
    this.#written = false;
    return written;
  }

  /** The most recent completed lines, then the partial line when it is not empty. */
  recent(): string[] {
    const starts = this.#starts;
    const lines: string[] = [];
    for (let i = 0; i < starts.length; i++) {
      const at = (this.#oldest + i) % starts.length;
      const end = i === starts.length - 1 ? this.#lineStart : starts[(at + 1) % starts.length];
      lines.push(decodeBytes(this.#log.subarray(starts[at], end)));
    }
    const partial = this.partial;
    return partial === "" ? lines : [...lines, partial];
  }
}
