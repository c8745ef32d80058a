/**
 * The check a layout string passes before `select-layout` sees it.
 *
 * tmux 3.3a trusts the cell tree of a layout string it did not print: it reads each size into a
 * 32-bit unsigned number and adds them up in one, so `4294967295x24` beside `80x24` wraps to a
 * sum that passes its own size check; the layout is applied and the server crashes (every
 * session with it), or a pane billions of columns wide takes gigabytes once someone looks. A
 * split of a single cell crashes it too, as soon as that cell goes (tmux drops the last cells
 * of a layout with more cells than the window has panes, and a closed pane drops its cell).
 *
 * So the tree is read here the way tmux reads it (`layout_construct`, `layout_check` in
 * layout-custom.c) and held to what tmux itself prints: every size from 1 to tmux's window
 * maximum, children that tile their parent exactly (a `{}` row: widths plus one column of
 * border between each pair make the parent's width, every height the parent's; `[]` the same
 * turned), offsets that follow from the sizes, and at least two children to a split. The
 * checksum is left to tmux, which verifies it before reading anything else.
 *
 * tmux gives the window the size of the outermost cell, whatever size it had: that cell is
 * held to the area every tool holds a window to (window_cells.ts), or for a window already
 * larger, to no more cells than it has.
 *
 * @module
 */

import { WINDOW_MAXIMUM_SIDE, windowCellsProblem, type WindowSize } from "./window_cells.ts";

/** tmux's largest window (WINDOW_MAXIMUM): no cell of a window is larger or lies further out. */
export const LAYOUT_MAXIMUM = WINDOW_MAXIMUM_SIDE;

/** How deep splits may nest. */
const MAX_DEPTH = 1_000;

/** A comma, digits and an "x": the start of the next cell, not a pane id. */
const NEXT_CELL = /,\d+x/y;
const DIGITS = /\d+/y;

/** One cell of the tree: its size and its offset in the window. */
interface Cell {
  readonly sx: number;
  readonly sy: number;
  readonly x: number;
  readonly y: number;
}

class Refusal extends Error {}

/** Reads a layout string's cell tree left to right, refusing at the first thing tmux never prints. */
class Reader {
  #at = 5;

  constructor(private readonly text: string, private readonly current?: WindowSize) {}

  /** The whole tree after the checksum: one cell, the root, at 0,0, and nothing after it. */
  root(): void {
    const root = this.cell();
    if (this.#at !== this.text.length) throw this.#refuse("something follows the outermost cell");
    if (root.x !== 0 || root.y !== 0) {
      throw new Refusal(`the outermost cell is at ${root.x},${root.y}, not 0,0`);
    }
    const cells = windowCellsProblem(root.sx, root.sy, this.current);
    if (cells !== undefined) throw new Refusal(cells);
  }

  /** `WxH,X,Y` then a pane id, a `{...}` row, a `[...]` column, or nothing (an old leaf). */
  cell(depth = 0): Cell {
    const sx = this.#number("a width", 1);
    this.#expect("x");
    const sy = this.#number("a height", 1);
    this.#expect(",");
    const x = this.#number("an offset", 0);
    this.#expect(",");
    const y = this.#number("an offset", 0);
    const cell = { sx, sy, x, y };
    // A comma after the offsets starts the pane id, unless digits and an "x" follow: then it
    // separates this leaf from the next cell (tmux looks ahead the same way).
    NEXT_CELL.lastIndex = this.#at;
    if (this.text[this.#at] === "," && !NEXT_CELL.test(this.text)) {
      this.#at++;
      this.#digits("a pane id");
      return cell;
    }
    const open = this.text[this.#at];
    if (open !== "{" && open !== "[") return cell;
    // Deeper than a layout string select_layout takes can nest (some 450 levels in 8 192
    // characters), and still far from the end of the stack.
    if (depth === MAX_DEPTH) throw this.#refuse(`splits nest deeper than ${MAX_DEPTH}`);
    const across = open === "{";
    const children: Cell[] = [];
    do {
      this.#at++;
      children.push(this.cell(depth + 1));
    } while (this.text[this.#at] === ",");
    this.#expect(across ? "}" : "]");
    const what = `the ${sx}x${sy},${x},${y} split`;
    if (children.length < 2) throw new Refusal(`${what} holds a single cell`);
    // Sizes of at most 10 000, fewer cells than characters: no sum here comes near wrapping.
    let next = across ? x : y;
    for (const child of children) {
      const fits = across
        ? child.x === next && child.y === y && child.sy === sy
        : child.y === next && child.x === x && child.sx === sx;
      if (!fits) {
        throw new Refusal(
          `${what} has a cell ${child.sx}x${child.sy},${child.x},${child.y} out of place: each ` +
            (across
              ? "starts a column past its neighbour's border and is as high as the split"
              : "starts a row past its neighbour's border and is as wide as the split"),
        );
      }
      next += (across ? child.sx : child.sy) + 1;
    }
    const span = next - 1 - (across ? x : y);
    if (span !== (across ? sx : sy)) {
      throw new Refusal(
        `the cells of ${what} are ${span} ${across ? "wide" : "high"} with their borders, not ` +
          `${across ? sx : sy}`,
      );
    }
    return cell;
  }

  #number(what: string, min: number): number {
    const at = this.#at;
    const digits = this.#digits(what);
    const n = digits.length > 5 ? Infinity : Number(digits);
    if (n < min || n > LAYOUT_MAXIMUM) {
      const shown = digits.length > 12 ? `${digits.slice(0, 12)}...` : digits;
      throw new Refusal(
        `${what} of ${shown} at character ${at + 1} is outside ${min}..${LAYOUT_MAXIMUM}`,
      );
    }
    return n;
  }

  #digits(what: string): string {
    DIGITS.lastIndex = this.#at;
    const found = DIGITS.exec(this.text)?.[0];
    if (found === undefined) throw this.#refuse(`${what} is missing`);
    this.#at += found.length;
    return found;
  }

  #expect(char: string): void {
    if (this.text[this.#at] !== char) throw this.#refuse(`"${char}" is missing`);
    this.#at++;
  }

  #refuse(what: string): Refusal {
    return new Refusal(`${what} at character ${this.#at + 1}`);
  }
}

/**
 * Why a layout string may not reach tmux, or undefined when it may: one that does not read as
 * a layout string at all, or whose cell tree is not one tmux itself would print. `current` is
 * the size of the window it is for, when known: a window already over the cap of cells may
 * take a layout no larger than itself (window_cells.ts).
 */
export function layoutStringProblem(layout: string, current?: WindowSize): string | undefined {
  if (!/^[0-9a-fA-F]{4},/.test(layout)) return "it does not start with a checksum (4 hex digits)";
  try {
    new Reader(layout, current).root();
    return undefined;
  } catch (error) {
    if (error instanceof Refusal) return error.message;
    throw error;
  }
}
