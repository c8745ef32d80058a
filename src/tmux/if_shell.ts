/**
 * Asking the system a question through tmux: `if-shell` runs a `/bin/sh` command on the tmux
 * server's machine (where the panes' processes are, over SSH too), and what tmux prints after
 * it says whether it exited 0. The one way for this server, which may start no program but
 * tmux, to learn what only the system knows (a terminal's settings, who holds it, whether a
 * file can be opened).
 *
 * @module
 */

import { execFast } from "./control.ts";
import { randomHex } from "./format.ts";
import type { TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";

/**
 * The output of tmux command `then` (argv; none: an empty answer), run in the same step right
 * after `/bin/sh` command `test` exited 0 in pane `paneId`'s context; null when it did not
 * (`then` runs either way then, its output dropped). tmux expands `test` as a format first:
 * it is built of numbers, tmux's own formats, or text with `#` doubled.
 *
 * The answer comes first, as a line no pane can predict: what `then` prints (a pane's text,
 * say) never stands for it.
 */
export async function ifShellThen(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  test: string,
  then: readonly string[] = [],
  signal?: AbortSignal,
): Promise<Uint8Array | null> {
  const yes = `tmux-mcp-yes-${randomHex(8)}`;
  const result = await execFast(runner, address, [
    "if-shell",
    "-t",
    paneId,
    test,
    `display-message -p ${yes}`,
    ...(then.length > 0 ? [";", ...then] : []),
  ], { signal });
  const head = new TextEncoder().encode(`${yes}\n`);
  const out = result.stdout;
  if (result.code !== 0 || out.length < head.length) return null;
  for (let i = 0; i < head.length; i++) if (out[i] !== head[i]) return null;
  return out.subarray(head.length);
}

/** Whether `/bin/sh` command `test` exits 0, run by tmux in pane `paneId`'s context. */
export async function shellSays(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  test: string,
  signal?: AbortSignal,
): Promise<boolean> {
  return await ifShellThen(runner, address, paneId, test, [], signal) !== null;
}
