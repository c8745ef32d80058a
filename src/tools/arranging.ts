/**
 * What the arranging tools share (registered together in layout.ts): their annotations, and
 * a window's panes read out of a snapshot.
 *
 * @module
 */

import type { ToolAnnotations } from "../mcp/tool_spec.ts";
import type { PaneRow, Snapshot } from "../tmux/snapshot.ts";
import { changes } from "./arguments.ts";

/** Changes the arrangement, destroys nothing; the same call again changes nothing more. */
export const ARRANGES: ToolAnnotations = changes({ destructive: false, idempotent: true });

/** As {@link ARRANGES}, but a repeat does something again (a relative resize, a swap). */
export const ARRANGES_AGAIN: ToolAnnotations = { ...ARRANGES, idempotentHint: false };

/** A window's panes: a zoom, a window's resize and synchronize-panes read them all. */
export function windowPanes(snapshot: Snapshot, windowId: string): PaneRow[] {
  return snapshot.panes.filter((p) => p.windowId === windowId);
}
