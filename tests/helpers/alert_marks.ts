/**
 * A window's alert marks (bell, activity, silence) as a session's status line shows them, and a
 * bell rung to set one: for the tests of the acts that may clear a person's marks.
 *
 * @module
 */

import type { TestTmux } from "./tmux.ts";
import { waitFor } from "./tmux.ts";

/** The bell, activity and silence flags of window `windowId` in session `session`'s list. */
export async function marks(t: TestTmux, session: string, windowId: string): Promise<string> {
  const rows = (await t.tmux(
    "list-windows",
    "-t",
    session,
    "-F",
    "#{window_id} #{window_bell_flag}#{window_activity_flag}#{window_silence_flag}",
  )).trim().split("\n");
  return rows.find((r) => r.startsWith(`${windowId} `))?.split(" ")[1] ?? "";
}

/** Rings the bell in `paneId` and waits until main's status line marks window `windowId`. */
export async function ring(t: TestTmux, paneId: string, windowId: string): Promise<void> {
  await t.tmux("send-keys", "-t", paneId, "printf '\\a'", "Enter");
  await waitFor(async () => (await marks(t, "main", windowId)) === "100", "the bell mark");
}

/** Session `session`'s current window. */
export async function current(t: TestTmux, session: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", `${session}:`, "#{window_id}")).trim();
}
