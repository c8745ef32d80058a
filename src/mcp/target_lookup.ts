/**
 * Finding a call's target in a snapshot: a session, window or pane by its reference, or a
 * refusal naming what does exist (and a refusal when no server runs at all). The lookups of
 * `TmuxContext` (context.ts), which passes its socket's label for the messages.
 *
 * @module
 */

import {
  findSession,
  type PaneBrief,
  type PaneRow,
  type SessionRow,
  type Snapshot,
  type WindowRow,
} from "../tmux/snapshot.ts";
import { NO_SERVER_HINT, NoServer, sample, sessionLabel, ToolFailure } from "./errors.ts";

/**
 * Refuses when no server runs on the socket (`socketLabel`, for the message; `hint`, what to do
 * there: errors.ts noServerHint).
 */
export function requireRunning(
  snapshot: { readonly running: boolean },
  socketLabel: string,
  hint = NO_SERVER_HINT,
): void {
  if (!snapshot.running) {
    throw new NoServer(`No tmux server is running on ${socketLabel}.`, hint);
  }
}

/**
 * A session by id (`$N`) or exact name (never tmux's prefix match). An id comes first, as in
 * tmux; a name that looks like one (tmux takes `new-session -s '$5'`, which this server
 * refuses to make) names its session when no session has that id, so that the refusal never
 * lists the very session it says is missing.
 */
export function lookupSession(
  snapshot: Snapshot<PaneBrief>,
  ref: string,
  socketLabel: string,
): SessionRow {
  requireRunning(snapshot, socketLabel);
  unread(snapshot.scope.sessions, "a session");
  const found = findSession(snapshot.sessions, ref);
  if (found) return found;
  throw new ToolFailure(
    `No session ${JSON.stringify(ref)} on ${socketLabel}.`,
    `Sessions: ${
      sample(snapshot.sessions.map((s) => sessionLabel(s.id, s.name)))
    } — list_sessions lists them all.`,
  );
}

/** A window by id (`@N`). */
export function lookupWindow(
  snapshot: Snapshot<PaneBrief>,
  id: string,
  socketLabel: string,
): WindowRow {
  requireRunning(snapshot, socketLabel);
  const { windows, windowId } = snapshot.scope;
  unread(windows && (windowId === "" || windowId === id), `window ${id}`);
  const found = snapshot.windows.find((w) => w.id === id);
  if (found) return found;
  throw new ToolFailure(
    `No window ${id} on ${socketLabel}.`,
    windowId === ""
      ? `Windows: ${sample(snapshot.windows.map((w) => w.id))} — list_windows lists them all.`
      : "list_windows lists the windows there are.",
  );
}

/** A pane by id (`%N`). */
export function lookupPane(snapshot: Snapshot, id: string, socketLabel: string): PaneRow {
  requireRunning(snapshot, socketLabel);
  const found = snapshot.panes.find((p) => p.id === id);
  if (found) return found;
  const { panes, paneId, windowId, sessionId } = snapshot.scope;
  unread(panes && paneId === "" && windowId === "" && sessionId === "", `pane ${id}`);
  throw new ToolFailure(
    `No pane ${id} on ${socketLabel}.`,
    `Panes: ${sample(snapshot.panes.map((p) => p.id))} — list_panes lists them all.`,
  );
}

/**
 * Throws when a lookup's answer would come from a list the snapshot's scope left out: "there is
 * none" would then be a lie. A programming error, never a refusal.
 */
function unread(read: boolean, what: string): void {
  if (!read) throw new Error(`internal: looked up ${what} in a snapshot that did not read it`);
}
