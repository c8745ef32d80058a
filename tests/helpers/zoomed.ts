/**
 * A person's window they left zoomed while they look at another: the set-up of the tests of
 * tools that reach a zoomed window nobody shows (tmux 3.3a unzooms a window for most of them).
 *
 * @module
 */

import { connect, type TestClient } from "./mcp.ts";
import { TestTmux } from "./tmux.ts";

/** The zoomed window, the pane it is zoomed on, and the other pane the zoom hides. */
export interface Zoomed {
  readonly window: string;
  readonly zoomedPane: string;
  readonly hidden: string;
}

/**
 * A person attached to session `main` (its first window), and the person's second window,
 * split in two and zoomed on its first pane; `fn` runs with a client of the server, and both
 * are gone when it ends.
 */
export async function withZoomed(
  fn: (t: TestTmux, c: TestClient, at: Zoomed) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start("main");
  const c = await connect({ socketName: t.socket });
  try {
    const [window, zoomedPane] = (await t.tmux(
      ...["new-window", "-d", "-t", "main:", "-P", "-F", "#{window_id} #{pane_id}", "sh"],
    )).trim().split(" ");
    const hidden = (await t.tmux("split-window", "-d", "-t", zoomedPane, "-P", "-F", "#{pane_id}"))
      .trim();
    await t.tmux("resize-pane", "-Z", "-t", zoomedPane);
    await t.attach("main");
    await fn(t, c, { window, zoomedPane, hidden });
  } finally {
    await c.close();
    await t.kill();
  }
}

/** `window`'s zoom flag and active pane, as `"<flag> <pane id>"`. */
export async function zoomOf(t: TestTmux, window: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", window, "#{window_zoomed_flag} #{pane_id}"))
    .trim();
}
