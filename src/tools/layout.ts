/**
 * Arranging: renaming, selecting, resizing, zooming, swapping and moving; pane titles,
 * synchronized input, copy mode, and tmux's wait-for channels (channels.ts). Toolset manage:
 * nothing here starts a process or types into one.
 *
 * Every tool answers with the state tmux ended in, read back from tmux after the change —
 * not the state that was asked for. Zoom is a state, never a toggle: `zoom: true` means
 * zoomed afterwards, whatever it was before.
 *
 * Registered here, each tool lives with its idea: names and titles in naming.ts, which window
 * or pane is current and where it sits in placement.ts, layouts, sizes and zoom in sizing.ts,
 * synchronized input and copy mode in pane_modes.ts; what they share in arranging.ts.
 *
 * @module
 */

import type { ToolRegistry } from "../mcp/registry.ts";
import { signalChannel, waitForChannel } from "./channels.ts";
import { renameSession, renameWindow, setPaneTitle } from "./naming.ts";
import { enterCopyMode, exitCopyMode, setSynchronizePanes } from "./pane_modes.ts";
import { moveWindow, selectPane, selectWindow, swapPane } from "./placement.ts";
import { resizePane, resizeWindow, selectLayout } from "./sizing.ts";

/** Registers the arranging tools (toolset manage). */
export function registerLayoutTools(registry: ToolRegistry): void {
  registry.add(
    renameSession,
    renameWindow,
    selectWindow,
    selectPane,
    selectLayout,
    resizePane,
    resizeWindow,
    swapPane,
    moveWindow,
    setPaneTitle,
    setSynchronizePanes,
    enterCopyMode,
    exitCopyMode,
    waitForChannel,
    signalChannel,
  );
}
