/**
 * Refusals of what tmux 3.3a takes but cannot survive, or survives only by holding every
 * session: a window of more cells than it redraws in time (window_cells.ts). Each is refused
 * before tmux sees it, saying why, so the model can ask for what it meant at a size tmux
 * handles.
 *
 * @module
 */

import { ToolFailure } from "../mcp/errors.ts";
import { windowCellsProblem } from "../tmux/window_cells.ts";

/** Refuses to make a window of `width` x `height` when it has more cells than tmux redraws in time. */
export function checkWindowCells(width: number, height: number, what: string): void {
  const problem = windowCellsProblem(width, height);
  if (problem === undefined) return;
  throw new ToolFailure(
    `${what} is refused: ${problem}.`,
    "Nothing was changed; ask for a smaller width or height.",
  );
}
