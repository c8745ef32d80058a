/**
 * How large a window may be made: tmux's own limit on each side, and one on its area.
 *
 * tmux 3.3a takes a window of up to 10000x10000 cells, but redraws every cell of a pane in copy
 * mode each time the window is resized, and its whole server waits meanwhile: at 10^8 cells a
 * resize held every session for 15 to 20 seconds, entering copy mode for 6 (measured). A
 * million cells is a hundred times less, more than any screen shows (a 4K screen in a small
 * font is some 480x135), and still allows tmux's widest or tallest window with room to spare
 * (10000x100). A window already larger (a person's, resized by hand) is no reason to refuse
 * making it smaller: the cap holds back growth, never a shrink.
 *
 * @module
 */

/** tmux's largest window side (WINDOW_MAXIMUM). */
export const WINDOW_MAXIMUM_SIDE = 10_000;

/** The most cells a window is made with. */
export const WINDOW_MAXIMUM_CELLS = 1_000_000;

/** A window's size as it is. */
export interface WindowSize {
  readonly width: number;
  readonly height: number;
}

/**
 * Why a window of `width` x `height` is not made, or undefined when it may be. `current` is the
 * size of the window being resized, when there is one: a window a person made larger than the
 * cap (`resize-window` by hand takes up to 10000 a side) may still be made smaller, or kept as
 * large, since tmux then redraws no more cells than it already does; only growing it, or
 * staying above the cap with more cells than now, is refused.
 */
export function windowCellsProblem(
  width: number,
  height: number,
  current?: WindowSize,
): string | undefined {
  const cells = width * height;
  if (cells <= WINDOW_MAXIMUM_CELLS) return undefined;
  const now = current === undefined ? undefined : current.width * current.height;
  if (now !== undefined && cells <= now) return undefined;
  const than = now !== undefined && now > WINDOW_MAXIMUM_CELLS
    ? `, more than the ${now} it has now (${current!.width}x${current!.height})`
    : "";
  return `a ${width}x${height} window is ${cells} cells${than}; tmux 3.3a redraws every cell ` +
    "of a pane in copy mode at each resize while every session waits, for seconds at that " +
    `size, so a window is made at most ${WINDOW_MAXIMUM_CELLS} cells (1000x1000, 10000x100)` +
    (than === "" ? "" : ", or one already larger is made no larger");
}
