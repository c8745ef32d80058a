/**
 * Refusals of what tmux 3.3a takes but cannot survive, or survives only by holding every
 * session: a pad width or precision in a format beyond any screen (format_numbers.ts), and a
 * window of more cells than it redraws in time (window_cells.ts). Each is refused before tmux
 * sees it, saying why, so the model can ask for what it meant at a size tmux handles.
 *
 * @module
 */

import { ToolFailure } from "../mcp/errors.ts";
import { formatNumberProblem, type FormatUse } from "../tmux/format_numbers.ts";
import { windowCellsProblem, type WindowSize } from "../tmux/window_cells.ts";

/**
 * Refuses `text`, which tmux may expand as a format (now or whenever it draws or renames),
 * when it asks for a pad width or precision tmux 3.3a would crash or freeze on. `what` names
 * the text in the message ("That format", "status-left's value"), `untouched` says what was
 * left as it was ("Nothing was changed."); `use` says whether tmux expands it only once
 * (`##{` is text then) or may expand it again later (a stored value, the default).
 */
export function checkFormatNumbers(
  text: string,
  what: string,
  untouched: string,
  use: FormatUse = "stored",
): void {
  const problem = formatNumberProblem(text, use);
  if (problem === undefined) return;
  throw new ToolFailure(
    `${what} is refused: ${problem}.`,
    untouched,
  );
}

/**
 * Refuses to make a window of `width` x `height` when it has more cells than tmux redraws in
 * time; `current` is the window's size when an existing window is resized, which may always
 * be made smaller (a person's window may be larger than the cap).
 */
export function checkWindowCells(
  width: number,
  height: number,
  what: string,
  current?: WindowSize,
): void {
  const problem = windowCellsProblem(width, height, current);
  if (problem === undefined) return;
  throw new ToolFailure(
    `${what} is refused: ${problem}.`,
    "Nothing was changed; ask for a smaller width or height.",
  );
}
