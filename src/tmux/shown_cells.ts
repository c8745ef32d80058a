/**
 * A capture as a person sees it: the text of `capture-pane -e` with every cell a terminal draws
 * without a character one reads (the hidden attribute, SGR 8; or a colour on one too near it)
 * made a blank, and the attributes' escape sequences dropped.
 *
 * A plain capture reads the characters of every cell, shown or not: a program can print
 * `All 112 tests passed` hidden, and a model would read it where the person watching sees an
 * empty row. So every capture that stands for what a pane shows is read with `-e` and given
 * through {@link ShownCells}; a capture asked for with escapes (`escapes: true`) is given as
 * tmux prints it, the attributes there to be read.
 *
 * @module
 */

import { indexOfBytes, joinBytes } from "./chain.ts";

/**
 * Columns a character takes, as blanks: the width tmux gives it, so that the text after a
 * hidden one stays where a person sees it (a hidden U+0600 read as taking none would join the
 * words either side: `All 112 tests pass` and `ed` read `All 112 tests passed`). A table of the
 * widths tmux 3.3a draws in when built without utf8proc, as on Linux: glibc's wcwidth, measured
 * through tmux here (glibc 2.36, Unicode 14) for every code point (tests/shown_width_test.ts
 * measures it again): 2 for East Asian wide and full-width and emoji presented as emoji
 * ({@link WIDE}); none for combining marks, format characters and the medial and final Hangul
 * jamo, which join the cell before them, but for the prepended concatenation marks (U+0600,
 * which take a column: {@link TAKES_A_COLUMN}); 1 else. This tmux drops a character its C
 * library does not know (unassigned, or newer than its Unicode), so no capture holds one; the
 * table gives it what Unicode does (a column when unassigned), which where the output stream
 * is read (terminal_text.ts) is a blank too many: never fewer columns than tmux, which would
 * join two words a person sees apart. A tmux built with utf8proc (as Homebrew builds it) gives
 * some characters other widths (emoji that glibc draws narrow, such as 🛠 U+1F6E0): a hidden
 * one of them shifts the rest of its row by a column there. src/tools/cell_width.ts asks the
 * server itself where a width must be exact, which a reading of bytes cannot wait for.
 */
export function blankWidth(cp: number): number {
  if (cp < 0x300) return 1;
  const c = String.fromCodePoint(cp);
  if (ZERO_WIDTH.test(c) && !TAKES_A_COLUMN.test(c)) return 0;
  return WIDE.test(c) || (EMOJI.test(c) && !REGIONAL.test(c)) ? 2 : 1;
}

/**
 * Characters that join the cell before them: combining marks (Mn, Me), format characters (Cf,
 * U+200B among them) and the medial vowels and final consonants of Hangul jamo (U+1160-U+11FF,
 * U+D7B0-U+D7FF: they join a leading consonant into one syllable).
 */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\u1160-\u11ff\ud7b0-\ud7ff]$/u;
/** The prepended concatenation marks: format characters that are drawn, over what follows. */
const TAKES_A_COLUMN = /^[\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u{110bd}\u{110cd}]$/u;
/**
 * What glibc draws in two columns, as measured (unassigned code points between two wide ones
 * taken in: a newer Unicode assigns them wide), and the ideographic planes 2 and 3 whole. An
 * emoji newer than the table is wide too ({@link EMOJI}): Unicode makes every one presented as
 * an emoji wide, but for the regional indicators (a flag's two halves), which glibc draws in
 * one column each.
 */
const WIDE = new RegExp(
  "^[" +
    String.raw`\u1100-\u115f\u231a-\u231b\u2329-\u232a\u23e9-\u23ec\u23f0\u23f3\u25fd-\u25fe` +
    String.raw`\u2614-\u2615\u2648-\u2653\u267f\u2693\u26a1\u26aa-\u26ab\u26bd-\u26be` +
    String.raw`\u26c4-\u26c5\u26ce\u26d4\u26ea\u26f2-\u26f3\u26f5\u26fa\u26fd\u2705` +
    String.raw`\u270a-\u270b\u2728\u274c\u274e\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf` +
    String.raw`\u2b1b-\u2b1c\u2b50\u2b55\u2e80-\u3029\u302e-\u303e\u3041-\u3096\u309b-\ua4c6` +
    String.raw`\ua960-\ua97c\uac00-\ud7a3\uf900-\ufad9\ufe10-\ufe19\ufe30-\ufe6b\uff01-\uff60` +
    String.raw`\uffe0-\uffe6\u{16fe0}-\u{16fe3}\u{16ff0}-\u{1b2fb}\u{1f004}\u{1f0cf}\u{1f18e}` +
    String.raw`\u{1f191}-\u{1f19a}\u{1f200}-\u{1f320}\u{1f32d}-\u{1f335}\u{1f337}-\u{1f37c}` +
    String.raw`\u{1f37e}-\u{1f393}\u{1f3a0}-\u{1f3ca}\u{1f3cf}-\u{1f3d3}\u{1f3e0}-\u{1f3f0}` +
    String.raw`\u{1f3f4}\u{1f3f8}-\u{1f43e}\u{1f440}\u{1f442}-\u{1f4fc}\u{1f4ff}-\u{1f53d}` +
    String.raw`\u{1f54b}-\u{1f54e}\u{1f550}-\u{1f567}\u{1f57a}\u{1f595}-\u{1f596}\u{1f5a4}` +
    String.raw`\u{1f5fb}-\u{1f64f}\u{1f680}-\u{1f6c5}\u{1f6cc}\u{1f6d0}-\u{1f6d2}` +
    String.raw`\u{1f6d5}-\u{1f6df}\u{1f6eb}-\u{1f6ec}\u{1f6f4}-\u{1f6fc}\u{1f7e0}-\u{1f7f0}` +
    String.raw`\u{1f90c}-\u{1f93a}\u{1f93c}-\u{1f945}\u{1f947}-\u{1f9ff}\u{1fa70}-\u{1faff}` +
    String.raw`\u{20000}-\u{3fffd}` +
    "]$",
  "u",
);
const EMOJI = /^\p{Emoji_Presentation}$/u;
const REGIONAL = /^\p{Regional_Indicator}$/u;

/**
 * A colour, to tell two apart: one of the first 16 as its index (the terminal's to choose: see
 * {@link sameColour}), the default as null (the terminal's own: a cell in it shows), every other
 * as its red, green and blue (the 256-colour palette's other 240 are fixed).
 */
type Colour = number | Rgb | null;

/** A colour's red, green and blue. */
type Rgb = readonly [number, number, number];

/** The red, green and blue of an index from 16 on of the 256-colour palette (xterm's). */
function paletteRgb(index: number): Rgb {
  if (index >= 232) {
    const grey = 8 + 10 * (index - 232);
    return [grey, grey, grey];
  }
  const levels = [0x00, 0x5f, 0x87, 0xaf, 0xd7, 0xff];
  const i = index - 16;
  return [levels[Math.trunc(i / 36)], levels[Math.trunc(i / 6) % 6], levels[i % 6]];
}

/** An index into the 256-colour palette as a {@link Colour}; null when it is none. */
function indexed(index: number): Colour {
  if (!Number.isInteger(index) || index < 0 || index > 255) return null;
  return index < 16 ? index : paletteRgb(index);
}

/** The first 16 colours as xterm draws them by default (see {@link sameColour}). */
const XTERM_16: readonly Rgb[] = (
  "000000 cd0000 00cd00 cdcd00 0000ee cd00cd 00cdcd e5e5e5 " +
  "7f7f7f ff0000 00ff00 ffff00 5c5cff ff00ff 00ffff ffffff"
).split(" ").map((hex) => {
  const v = parseInt(hex, 16);
  return [v >> 16, (v >> 8) & 0xff, v & 0xff] as const;
});

/**
 * Text no one reads on its background, though the two differ: their contrast (WCAG 2's ratio of
 * relative luminances, 1 for one colour, 21 for black on white) below 1.5, their hues alike
 * ({@link CHROMA_APART}). WCAG asks 4.5 of text, 3 of large text; below 1.5 text is a ghost a
 * person glancing at the pane does not see (#121212 on #1c1c1c is 1.10, black on #121212 1.12,
 * #2a2a2a on black 1.46), while the faintest text programs and themes mean to be read stays
 * above it: #444 on black 2.2, a line number 239 on 235 (#4e4e4e on #262626) 1.8, Nord's
 * comments (#4c566a on #2e3440) 1.7, #3a3a3a on #121212 1.6.
 */
const FAINT = 1.5;
/**
 * How far apart (in OKLab's a and b, the perceived hue and chroma) two colours of about one
 * brightness are read apart by their hues: pure red on a grey as bright is 0.26 apart and read;
 * #200000 on black 0.06, a red too dark to tell from black.
 */
const CHROMA_APART = 0.1;

/**
 * Whether text in colour `a` on `b` cannot be read: too little contrast ({@link FAINT}) and
 * alike in hue. Two of the first 16 are the terminal's to choose, and a theme may set any two
 * apart or near: one colour only when they are the same index. One of them beside a fixed
 * colour is taken as xterm draws it ({@link XTERM_16}), with the same threshold: the default
 * palettes of other terminals put black and white near xterm's (black #0c0c0c in Windows
 * Terminal, #171421 in GNOME Terminal, #2e3436 in Tango; bright white #f2f2f2, #ffffff,
 * #eeeeec), and move a contrast to either side of xterm's by less than the margin between faint
 * and read (black on #262626: 1.39 in xterm, 1.29, 1.20, 1.20 in those; on black 1.00, 1.07,
 * 1.16, and Tango's 1.66, a faint grey). A tighter threshold for them would let through text
 * faint in every one of those palettes; a user's own theme may differ more, and what it draws
 * readably then reads as blanks. A true colour is compared as it is, not as tmux would give
 * it to a terminal of 256 colours: a terminal that takes true colours shows two that differ
 * more.
 */
function sameColour(a: Colour, b: Colour): boolean {
  if (a === null || b === null) return false;
  if (typeof a === "number" && typeof b === "number") return a === b;
  const x = typeof a === "number" ? XTERM_16[a] : a;
  const y = typeof b === "number" ? XTERM_16[b] : b;
  const key = (((x[0] << 16) | (x[1] << 8) | x[2]) * 0x1000000) +
    ((y[0] << 16) | (y[1] << 8) | y[2]);
  let same = JUDGED.get(key);
  if (same === undefined) {
    same = contrast(x, y) < FAINT && chromaDistance(x, y) < CHROMA_APART;
    if (JUDGED.size >= JUDGED_KEPT) JUDGED.clear();
    JUDGED.set(key, same);
  }
  return same;
}

/**
 * Pairs of colours judged (text's and background's, 24 bits each), and whether they are one
 * to a person: a program may change colours on every character it prints.
 */
const JUDGED = new Map<number, boolean>();
/** Pairs kept in {@link JUDGED} (beyond it the map starts again). */
const JUDGED_KEPT = 4_096;

/** Each value of a channel (0-255) in linear light: sRGB's transfer undone. */
const LINEAR = Array.from({ length: 256 }, (_, v) => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
});

/**
 * Colour `c` drawn dim (SGR 2) on `bg`: terminals draw faint text at half to two thirds of its
 * intensity (xterm, Alacritty), taken at half, toward the background. Null (the terminal's own
 * colour) when either is the terminal's default, whose colour is not known.
 */
function dimmed(c: Colour, bg: Colour): Colour {
  if (c === null || bg === null) return c;
  const x = typeof c === "number" ? XTERM_16[c] : c;
  const y = typeof bg === "number" ? XTERM_16[bg] : bg;
  return [0, 1, 2].map((i) => Math.round((x[i] + y[i]) / 2)) as unknown as Rgb;
}

/** WCAG 2's contrast ratio of two colours, from 1 (one luminance) to 21 (black and white). */
function contrast(x: Rgb, y: Rgb): number {
  const [lx, ly] = [x, y].map(([r, g, b]) =>
    0.2126 * LINEAR[r] + 0.7152 * LINEAR[g] + 0.0722 * LINEAR[b]
  );
  return (Math.max(lx, ly) + 0.05) / (Math.min(lx, ly) + 0.05);
}

/** How far apart two colours' hues and chroma are: the distance of their OKLab a and b. */
function chromaDistance(x: Rgb, y: Rgb): number {
  const [ax, bx] = opponent(x);
  const [ay, by] = opponent(y);
  return Math.hypot(ax - ay, bx - by);
}

/** A colour's OKLab a (green to red) and b (blue to yellow), Björn Ottosson's. */
function opponent([r, g, b]: Rgb): [number, number] {
  const [lr, lg, lb] = [LINEAR[r], LINEAR[g], LINEAR[b]];
  const l = Math.cbrt(0.4122214708 * lr + 0.5363325363 * lg + 0.0514459929 * lb);
  const m = Math.cbrt(0.2119034982 * lr + 0.6806995451 * lg + 0.1073969566 * lb);
  const s = Math.cbrt(0.0883024619 * lr + 0.2817188376 * lg + 0.6299787005 * lb);
  return [
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s,
  ];
}

/** The first eight colours' names, as tmux writes them (`red`, `brightred`). */
const NAMES = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];

/**
 * A colour as tmux's formats write it (`#{pane_fg}`: `default`, `red`, `brightred`,
 * `colour196`, `#101010`), as a {@link Colour}; null for the default or anything else.
 */
function formatColour(text: string): Colour {
  const name = NAMES.indexOf(text);
  if (name !== -1) return name;
  const bright = text.startsWith("bright") ? NAMES.indexOf(text.slice(6)) : -1;
  if (bright !== -1) return bright + 8;
  const index = /^colou?r(\d{1,3})$/.exec(text);
  if (index) return indexed(Number(index[1]));
  const rgb = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(text);
  return rgb ? trueColour(rgb.slice(1).map((h) => String(parseInt(h, 16)))) : null;
}

/** A true colour's three parameters as a {@link Colour}. */
function trueColour(parts: readonly string[]): Colour {
  const [r, g, b] = parts.map(Number);
  return [r, g, b].every((v) => Number.isInteger(v) && v >= 0 && v <= 255) ? [r, g, b] : null;
}

/**
 * The colour an SGR's extended colour (38, 48, 58) names, and how many more parameters it took:
 * `5;N` (an index), `2;R;G;B` (a true colour), or, in one parameter, `38:5:N`, `38:2::R:G:B`,
 * `38:2:R:G:B`.
 */
function extended(list: readonly string[], i: number): { colour: Colour; took: number } {
  const own = list[i].split(":");
  if (own.length > 1) {
    if (own[1] === "5") return { colour: indexed(Number(own[2])), took: 0 };
    if (own[1] === "2") {
      return { colour: trueColour(own.length >= 6 ? own.slice(3, 6) : own.slice(2, 5)), took: 0 };
    }
    return { colour: null, took: 0 };
  }
  if (list[i + 1] === "5") return { colour: indexed(Number(list[i + 2])), took: 2 };
  if (list[i + 1] === "2") {
    return { colour: trueColour(list.slice(i + 2, i + 5)), took: 4 };
  }
  return { colour: null, took: 0 };
}

/**
 * A pane's own default colours, where it has them (`#{pane_fg}` and `#{pane_bg}`: a program's
 * OSC 10 and 11, a pane's style, `window-style`): a cell with no colour of its own is drawn in
 * them. Two the same hide every such cell.
 */
export interface PaneColours {
  readonly fg: Colour;
  readonly bg: Colour;
}

/** No colours of a pane's own: the terminal's defaults. */
export const TERMINAL_COLOURS: PaneColours = { fg: null, bg: null };

/** The format that prints a pane's {@link PaneColours} (read by {@link paneColours}). */
export const PANE_COLOURS_FORMAT = "#{pane_fg},#{pane_bg}";

/** A pane's colours as {@link PANE_COLOURS_FORMAT} printed them. */
export function paneColours(text: string): PaneColours {
  const [fg, bg] = text.split(",");
  return { fg: formatColour(fg ?? ""), bg: formatColour(bg ?? "") };
}

/**
 * The attributes that decide whether a cell's character shows, as the SGRs of one capture set
 * them (tmux starts each capture from the defaults and writes each change).
 */
export class Attributes {
  hidden = false;
  bold = false;
  /** SGR 2, faint: drawn at about half its colour's intensity ({@link dimmed}). */
  dim = false;
  fg: Colour = null;
  bg: Colour = null;
  /** The pane's own default colours (see {@link PaneColours}), where a cell has none. */
  readonly #defaults: PaneColours;
  /**
   * The colours {@link unseen} judged last, and its answer: the output stream's reading asks
   * for every byte, and a colour stays the same object until an SGR sets one again.
   */
  #judged: { fg: Colour; bg: Colour; bold: boolean; dim: boolean; unseen: boolean } | null = null;

  constructor(defaults: PaneColours = TERMINAL_COLOURS) {
    this.#defaults = defaults;
  }

  /** The same attributes, apart (as a terminal saves them with the cursor). */
  copy(): Attributes {
    return Object.assign(new Attributes(this.#defaults), {
      hidden: this.hidden,
      bold: this.bold,
      dim: this.dim,
      fg: this.fg,
      bg: this.bg,
    });
  }

  /** Applies one SGR's parameters (the text between `ESC [` and `m`). */
  apply(params: string): void {
    const list = params.split(";");
    for (let i = 0; i < list.length; i++) {
      const head = list[i].split(":")[0];
      const n = head === "" ? 0 : Number(head);
      if (n === 38 || n === 48 || n === 58) {
        const { colour, took } = extended(list, i);
        this.#colour(n, colour);
        i += took;
      } else this.#plain(n);
    }
  }

  /**
   * {@link apply} of the parameters in `bytes` from `from` to `to`, read where they are (the
   * usual case, as tmux writes them: numbers and `;`); one with a `:` is read as text.
   */
  applyBytes(bytes: Uint8Array, from: number, to: number): void {
    if (bytes.subarray(from, to).includes(0x3a)) {
      return this.apply(String.fromCharCode.apply(null, [...bytes.subarray(from, to)]));
    }
    // An extended colour (38, 48, 58) being read: its kind (5 or 2, 0 before it) and values.
    let extended = 0;
    let kind = 0;
    const values: number[] = [];
    for (let i = from;; i++) {
      let n = 0;
      for (; i < to && bytes[i] !== 0x3b; i++) {
        const c = bytes[i];
        n = c >= 0x30 && c <= 0x39 ? n * 10 + c - 0x30 : NaN;
      }
      if (extended === 0) {
        if (n === 38 || n === 48 || n === 58) extended = n;
        else this.#plain(n);
      } else if (kind === 0) {
        if (n === 5 || n === 2) kind = n;
        else {
          // Neither kind: no colour, and the parameter is read as itself (as apply reads it).
          this.#colour(extended, null);
          extended = 0;
          if (n === 38 || n === 48 || n === 58) extended = n;
          else this.#plain(n);
        }
      } else {
        values.push(n);
        if (values.length === (kind === 5 ? 1 : 3)) {
          this.#colour(extended, kind === 5 ? indexed(n) : trueColour(values.map(String)));
          extended = kind = values.length = 0;
        }
      }
      if (i >= to) break;
    }
    // Parameters ran out before the colour was whole: none.
    if (extended !== 0) this.#colour(extended, null);
  }

  /**
   * Applies an SGR as a program wrote it to its terminal (the text between `ESC [` and `m`),
   * read as tmux 3.3a's input parser reads it (input.c: input_split, input_csi_dispatch_sgr),
   * which differs from its own `-e` output: a sequence of more than 23 parameters, or one not a
   * number up to 2147483647, is dropped whole; a parameter with a `:` counts only as an extended
   * colour (`38:5:N`, `38:2:[space]:R:G:B`); after 38, 48 or 58 the next parameter is always
   * taken, `5` takes one more (none, or past 255, is the default colour), `2` three more only
   * when each is a colour's. Returns false when tmux drops it.
   */
  applyProgram(params: string): boolean {
    const values = inputSplit(params);
    if (values === null) return false;
    if (values.length === 0) {
      this.#plain(0);
      return true;
    }
    // tmux's input_get: a missing one (or one past the end) is `missing`, a colon one is -1.
    const get = (i: number, missing: number) => {
      const v = i < values.length ? values[i] : null;
      return v === null ? missing : typeof v === "string" ? -1 : v;
    };
    for (let i = 0; i < values.length; i++) {
      if (typeof values[i] === "string") {
        this.#colonColour(values[i] as string);
        continue;
      }
      const n = get(i, 0);
      if (n !== 38 && n !== 48 && n !== 58) {
        this.#plain(n);
        continue;
      }
      const kind = get(++i, -1);
      if (kind === 5) {
        const c = get(i + 1, -1);
        this.#colour(n, c === -1 || c > 255 ? null : indexed(c));
        i++;
      } else if (kind === 2) {
        const rgb = [get(i + 1, -1), get(i + 2, -1), get(i + 3, -1)];
        if (rgb.every((v) => v >= 0 && v <= 255)) {
          this.#colour(n, trueColour(rgb.map(String)));
          i += 3;
        }
      }
    }
    return true;
  }

  /** A parameter with a `:`, as tmux reads one (input_csi_dispatch_sgr_colon). */
  #colonColour(param: string): void {
    const parts = param.split(":");
    if (parts.length > 7) return;
    const p: number[] = [];
    for (const part of parts) {
      if (part === "") p.push(-1);
      else if (/^\d+$/.test(part) && Number(part) <= 2147483647) p.push(Number(part));
      else return;
    }
    if (p.length < 2 || (p[0] !== 38 && p[0] !== 48 && p[0] !== 58)) return;
    if (p[1] === 5 && p.length >= 3) {
      this.#colour(p[0], p[2] === -1 || p[2] > 255 ? null : indexed(p[2]));
    } else if (p[1] === 2 && p.length >= 3) {
      const at = p.length === 5 ? 2 : 3;
      const rgb = p.slice(at, at + 3);
      if (rgb.length === 3 && rgb.every((v) => v >= 0 && v <= 255)) {
        this.#colour(p[0], trueColour(rgb.map(String)));
      }
    }
  }

  /** One parameter other than an extended colour's. */
  #plain(n: number): void {
    if (n === 0) this.hidden = this.bold = this.dim = false, this.fg = this.bg = null;
    else if (n === 8) this.hidden = true;
    else if (n === 28) this.hidden = false;
    else if (n === 1) this.bold = true;
    else if (n === 2) this.dim = true;
    else if (n === 22) this.bold = this.dim = false;
    else if (n >= 30 && n <= 37) this.fg = n - 30;
    else if (n >= 90 && n <= 97) this.fg = n - 82;
    else if (n === 39) this.fg = null;
    else if (n >= 40 && n <= 47) this.bg = n - 40;
    else if (n >= 100 && n <= 107) this.bg = n - 92;
    else if (n === 49) this.bg = null;
  }

  /** An extended colour (38 the text's, 48 the background's, 58 the underline's) read. */
  #colour(n: number, colour: Colour): void {
    if (n === 38) this.fg = colour;
    else if (n === 48) this.bg = colour;
  }

  /**
   * Whether a cell's character does not show: hidden, or drawn in a colour too near its
   * background's to be read (the cell's colours, else the pane's: see {@link sameColour}).
   * Terminals differ in how they draw two attributes, and a cell counts as unseen where any
   * common one draws it so: bold in one of the first eight colours is drawn as its bright one
   * by some (xterm: `ESC [ 1;30;100 m` is bright black on it) and as it is by others (VTE,
   * Alacritty: `ESC [ 1;30;40 m` is black on black); dim (SGR 2) is drawn at about half its
   * colour's intensity, toward the background ({@link dimmed}). The terminal's own default is
   * its to choose: a cell in it counts as shown.
   */
  get unseen(): boolean {
    if (this.hidden) return true;
    const fg = this.fg ?? this.#defaults.fg;
    const bg = this.bg ?? this.#defaults.bg;
    const last = this.#judged;
    if (
      last !== null && last.fg === fg && last.bg === bg && last.bold === this.bold &&
      last.dim === this.dim
    ) {
      return last.unseen;
    }
    const bright = this.bold && typeof fg === "number" && fg < 8 ? fg + 8 : fg;
    const drawn = (c: Colour) => this.dim ? dimmed(c, bg) : c;
    const unseen = sameColour(drawn(fg), bg) || (bright !== fg && sameColour(drawn(bright), bg));
    this.#judged = { fg, bg, bold: this.bold, dim: this.dim, unseen };
    return unseen;
  }
}

/**
 * The code point of one character's UTF-8 bytes (a lead byte and its continuations), the first
 * `length` of `bytes`.
 */
export function codePoint(bytes: ArrayLike<number>, length = bytes.length): number {
  if (length === 1) return bytes[0];
  let cp = bytes[0] & (0x7f >> length);
  for (let i = 1; i < length; i++) cp = (cp << 6) | (bytes[i] & 0x3f);
  return cp;
}

const SPACE = 0x20;
const NEWLINE_BYTES = Uint8Array.of(0x0a);
const NEWLINE = 0x0a;
const ESC = 0x1b;
/** Shift out and shift in: where `-e` shows cells of the line-drawing set begin and end. */
const SO = 0x0e;
const SI = 0x0f;
/** What {@link ShownCells} looks for in a capture's text. */
const MARKS = [ESC, SO, SI];

/**
 * The DEC line-drawing set as tmux draws it on a UTF-8 terminal (tty-acs.c): a program that
 * selects it (`ESC ( 0`, or `ESC ) 0` and SO) and prints `lqk` shows `┌─┐`, while a capture
 * without `-e` reads the letters (`approve` shows as `▒⎻⎻⎼⎺┴␊`).
 */
const LINE_DRAWING = new Map<number, Uint8Array>(
  [
    ["+", "→"],
    [",", "←"],
    ["-", "↑"],
    [".", "↓"],
    ["0", "▮"],
    ["`", "◆"],
    ["a", "▒"],
    ["b", "␉"],
    ["c", "␌"],
    ["d", "␍"],
    ["e", "␊"],
    ["f", "°"],
    ["g", "±"],
    ["h", "␤"],
    ["i", "␋"],
    ["j", "┘"],
    ["k", "┐"],
    ["l", "┌"],
    ["m", "└"],
    ["n", "┼"],
    ["o", "⎺"],
    ["p", "⎻"],
    ["q", "─"],
    ["r", "⎼"],
    ["s", "⎽"],
    ["t", "├"],
    ["u", "┤"],
    ["v", "┴"],
    ["w", "┬"],
    ["x", "│"],
    ["y", "≤"],
    ["z", "≥"],
    ["{", "π"],
    ["|", "≠"],
    ["}", "£"],
    ["~", "·"],
  ].map(([from, to]) => [from.charCodeAt(0), new TextEncoder().encode(to)]),
);

/** The glyphs {@link LINE_DRAWING} draws, one after another (for a character class). */
export const LINE_DRAWING_GLYPHS: string = [...LINE_DRAWING.values()]
  .map((glyph) => new TextDecoder().decode(glyph)).join("");

/** How a character of the line-drawing set is drawn, or undefined for one not in it. */
export function lineDrawing(byte: number): Uint8Array | undefined {
  return LINE_DRAWING.get(byte);
}

/** Text in the line-drawing set as it is drawn: each character of the set as its glyph. */
function drawn(text: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const glyph = LINE_DRAWING.get(text[i]);
    if (glyph === undefined) continue;
    parts.push(text.subarray(from, i), glyph);
    from = i + 1;
  }
  parts.push(text.subarray(from));
  return joinParts(parts);
}

/**
 * Turns the bytes of one `capture-pane -p -e` (split anywhere) into the text a person sees:
 * escape sequences dropped, each unseen character a blank as wide as it is drawn, and with
 * `trim` (a capture without `-N` or `-J`, whose rows tmux trims) the trailing spaces of each
 * row dropped, as tmux drops them from a plain capture. Of a capture with nothing unseen, the
 * same bytes as the capture without `-e`.
 */
export class ShownCells {
  readonly #trim: boolean;
  readonly #attributes: Attributes;
  /** Between SO and SI: cells in the line-drawing set (see {@link LINE_DRAWING}). */
  #drawing = false;
  /** What the bytes read so far made, not taken yet: `#out` up to `#length`. */
  #out = new Uint8Array(4096);
  #length = 0;
  /** Bytes of an escape sequence begun in an earlier chunk (from its ESC on). */
  #escape: number[] | null = null;
  /** Bytes of an unseen character begun in an earlier chunk. */
  readonly #partial: number[] = [];
  /** Spaces written and not yet sent: kept back in case the row ends after them. */
  #spaces = 0;

  /** Every character as printed, none blank or drawn (see {@link ShownCells.views}). */
  readonly #asPrinted: boolean;

  /**
   * `colours`: the pane's own defaults, read in the same tmux call as the capture; `asPrinted`:
   * the text as a capture without `-e` reads it, escapes dropped and nothing else changed.
   */
  constructor(trim: boolean, colours: PaneColours = TERMINAL_COLOURS, asPrinted = false) {
    this.#trim = trim;
    this.#attributes = new Attributes(colours);
    this.#asPrinted = asPrinted;
  }

  /**
   * One capture's text twice: as printed (what a capture without `-e` reads: for what the
   * server itself looks for in it, such as a job's markers, which a command that left its
   * terminal hiding text must not keep from being read) and as a person sees it (for what a
   * reply says the pane shows). Row for row and character for character alike, but where a
   * hidden character is wide or takes no column.
   */
  static views(
    bytes: Uint8Array,
    trim: boolean,
    colours: PaneColours = TERMINAL_COLOURS,
  ): { printed: Uint8Array; shown: Uint8Array } {
    const shown = ShownCells.of(bytes, trim, colours);
    // Nothing to change (see `of`): one view, the same bytes.
    if (shown === bytes) return { printed: bytes, shown };
    const printed = new ShownCells(trim, colours, true);
    return { printed: joinParts([printed.push(bytes), printed.finish()]), shown };
  }

  /** Reads the next bytes; returns the text they complete (possibly none). */
  push(bytes: Uint8Array): Uint8Array {
    // Where the next ESC, SO and SI are: each looked for again only once passed.
    const next = [-2, -2, -2];
    const find = (k: number, from: number) => {
      if (next[k] !== -1 && next[k] < from) next[k] = bytes.indexOf(MARKS[k], from);
      return next[k] === -1 ? bytes.length : next[k];
    };
    let at = 0;
    while (at < bytes.length) {
      if (this.#escape !== null) {
        at = this.#readEscape(bytes, at);
        continue;
      }
      const end = Math.min(find(0, at), find(1, at), find(2, at));
      if (end > at) this.#text(bytes.subarray(at, end));
      if (end === bytes.length) break;
      if (bytes[end] === ESC) this.#escape = [ESC];
      else this.#drawing = bytes[end] === SO;
      at = end + 1;
    }
    return this.#take();
  }

  /** What is held back at the end (spaces of a row tmux does not trim). */
  finish(): Uint8Array {
    if (!this.#trim && this.#spaces > 0) this.#flushSpaces();
    this.#spaces = 0;
    return this.#take();
  }

  /** The whole of one capture's bytes, as text a person sees (see the class). */
  static of(
    bytes: Uint8Array,
    trim: boolean,
    colours: PaneColours = TERMINAL_COLOURS,
  ): Uint8Array {
    const cells = new ShownCells(trim, colours);
    // Nothing to change: every cell in the pane's own colours, which show, and none drawn.
    const plain = bytes.indexOf(ESC) === -1 && bytes.indexOf(SO) === -1 &&
      !cells.#attributes.unseen;
    return plain ? bytes : joinParts([cells.push(bytes), cells.finish()]);
  }

  /** Reads an escape sequence's bytes from `at`; returns where its end (or the chunk's) is. */
  #readEscape(bytes: Uint8Array, at: number): number {
    const escape = this.#escape!;
    // The usual case, a whole SGR in this chunk: read where it is, nothing copied byte by byte.
    if (escape.length === 1 && bytes[at] === 0x5b) {
      let end = at + 1;
      while (end < bytes.length && end - at < 512 && (bytes[end] < 0x40 || bytes[end] > 0x7e)) {
        end++;
      }
      if (end < bytes.length && end - at < 512) {
        this.#escape = null;
        if (bytes[end] === 0x6d) this.#attributes.applyBytes(bytes, at + 1, end);
        return end + 1;
      }
    }
    for (let i = at; i < bytes.length; i++) {
      const b = bytes[i];
      escape.push(b);
      // ESC [ parameters final: tmux's -e writes SGRs only; any other ends at its final byte.
      if (escape.length === 2 && b !== 0x5b) {
        this.#escape = null;
        return i + 1;
      }
      if (escape.length > 2 && b >= 0x40 && b <= 0x7e) {
        this.#escape = null;
        if (b === 0x6d) this.#attributes.apply(String.fromCharCode(...escape.slice(2, -1)));
        return i + 1;
      }
      // A sequence longer than any SGR tmux writes is not one: dropped as it goes.
      if (escape.length > 512) escape.length = 2;
    }
    return bytes.length;
  }

  /** Text between escape sequences (and SO and SI). */
  #text(printed: Uint8Array): void {
    if (this.#asPrinted) return this.#shown(printed);
    const text = this.#drawing ? drawn(printed) : printed;
    if (this.#attributes.unseen) this.#blanks(text);
    else this.#shown(text);
  }

  /** Shown text: as it is, but for the spaces a row ends with when trimmed. */
  #shown(text: Uint8Array): void {
    if (!this.#trim) {
      this.#flushSpaces();
      this.#write(text);
      return;
    }
    let at = 0;
    while (at < text.length) {
      const newline = text.indexOf(NEWLINE, at);
      const end = newline === -1 ? text.length : newline;
      let last = end;
      while (last > at && text[last - 1] === SPACE) last--;
      if (last > at) {
        this.#flushSpaces();
        this.#write(text.subarray(at, last));
      }
      this.#spaces += end - last;
      if (newline === -1) break;
      this.#spaces = 0;
      this.#write(NEWLINE_BYTES);
      at = newline + 1;
    }
  }

  /** Unseen text: each character as blanks, line ends kept. */
  #blanks(text: Uint8Array): void {
    for (const b of text) {
      if (b === NEWLINE) {
        this.#partial.length = 0;
        if (!this.#trim) this.#flushSpaces();
        this.#spaces = 0;
        this.#write(NEWLINE_BYTES);
        continue;
      }
      const partial = this.#partial;
      if ((b & 0xc0) === 0x80 && partial.length > 0) partial.push(b);
      else partial.length = 0, partial.push(b);
      const lead = partial[0];
      // A byte that begins no character (a stray continuation) counts as one.
      const need = lead < 0xc0 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
      if (partial.length < need) continue;
      this.#spaces += blankWidth(codePoint(partial));
      partial.length = 0;
    }
  }

  #flushSpaces(): void {
    if (this.#spaces === 0) return;
    this.#room(this.#spaces);
    this.#out.fill(SPACE, this.#length, this.#length + this.#spaces);
    this.#length += this.#spaces;
    this.#spaces = 0;
  }

  /** Adds `bytes` to what was made. */
  #write(bytes: Uint8Array): void {
    this.#room(bytes.length);
    this.#out.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  /** Room for `more` bytes after what was made: a buffer twice as large when it is full. */
  #room(more: number): void {
    if (this.#length + more <= this.#out.length) return;
    const out = new Uint8Array(Math.max(this.#out.length * 2, this.#length + more));
    out.set(this.#out.subarray(0, this.#length));
    this.#out = out;
  }

  #take(): Uint8Array {
    if (!this.#trim) this.#flushSpaces();
    const made = this.#out.slice(0, this.#length);
    this.#length = 0;
    return made;
  }
}

/**
 * A chain of tmux commands (`;` between them) with each `capture-pane -p` that asks for no
 * escapes made to print them (`-e`), between two lines of the chain's `guard` that
 * {@link shownChainOutput} reads and takes out again: the rows as a person sees them, wherever
 * a capture stands in the chain (a capture's attributes are its own, and what a capture with
 * `-J` prints may end inside a line the next goes on with).
 */
export function shownChain(args: readonly string[], guard: string): string[] {
  const out: string[] = [];
  let command: string[] = [];
  const end = () => {
    const shown = command[0] === "capture-pane" && command.includes("-p") &&
      !command.includes("-e") && !command.includes("-b");
    if (!shown) out.push(...command);
    else {
      const trim = !(command.includes("-N") || command.includes("-J"));
      // The mark carries the pane's colours, read at the same instant as its rows.
      const target = command.indexOf("-t") === -1 ? [] : ["-t", command[command.indexOf("-t") + 1]];
      const mark = `${guard}~${trim ? "T" : "K"}${PANE_COLOURS_FORMAT}`;
      out.push("display-message", "-p", ...target, mark, ";");
      out.push("capture-pane", "-e", ...command.slice(1), ";");
      out.push("display-message", "-p", `${guard}~R`);
    }
    command = [];
  };
  for (const arg of args) {
    if (arg === ";") {
      end();
      out.push(";");
    } else command.push(arg);
  }
  end();
  return out;
}

/**
 * What a chain made by {@link shownChain} printed, as the chain asked for it: each capture's
 * rows as a person sees them, the lines that marked them taken out; everything else as tmux
 * printed it.
 */
export function shownChainOutput(bytes: Uint8Array, guard: string): Uint8Array {
  const mark = new TextEncoder().encode(`${guard}~`);
  const parts: Uint8Array[] = [];
  let cells: ShownCells | null = null;
  let at = 0;
  while (at < bytes.length) {
    const found = indexOfBytes(bytes, mark, at);
    const end = found === -1 ? bytes.length : found;
    const text = bytes.subarray(at, end);
    parts.push(cells ? cells.push(text) : text);
    if (found === -1) break;
    const kind = bytes[found + mark.length];
    if (cells) parts.push(cells.finish());
    // The mark's line, its newline with it.
    const newline = bytes.indexOf(NEWLINE, found);
    at = newline === -1 ? bytes.length : newline + 1;
    const colours = paneColours(
      new TextDecoder().decode(bytes.subarray(found + mark.length + 1, at - 1)),
    );
    cells = kind === 0x54 || kind === 0x4b ? new ShownCells(kind === 0x54, colours) : null;
  }
  if (cells) parts.push(cells.finish());
  return joinParts(parts);
}

/** The parts one after another, empty ones left out (see chain.ts's joinBytes). */
function joinParts(parts: readonly Uint8Array[]): Uint8Array {
  return joinBytes(parts.filter((p) => p.length > 0));
}

/**
 * A CSI's parameters as tmux's input_split reads them: each a number, empty (null) or one with a
 * `:` (its text); null when tmux refuses them (more than 23, or a number past 2147483647) and
 * drops the sequence.
 */
export function inputSplit(params: string): (number | string | null)[] | null {
  if (params === "") return [];
  const list = params.split(";");
  if (list.length > 23) return null;
  const out: (number | string | null)[] = [];
  for (const p of list) {
    if (p === "") out.push(null);
    else if (p.includes(":")) out.push(p);
    else if (/^\d+$/.test(p) && Number(p) <= 2147483647) out.push(Number(p));
    else return null;
  }
  return out;
}

/**
 * The start of `shown` (a row as a person sees it) that spans the columns `printed` (the start
 * of the same row as printed) does: the two views are alike column for column, not character
 * for character (a hidden wide character is two blanks, a hidden one of two UTF-16 units one).
 */
export function shownStart(shown: string, printed: string): string {
  let columns = 0;
  for (const c of printed) columns += blankWidth(c.codePointAt(0)!);
  let at = 0;
  for (const c of shown) {
    if (columns <= 0) break;
    columns -= blankWidth(c.codePointAt(0)!);
    at += c.length;
  }
  return shown.slice(0, at);
}
