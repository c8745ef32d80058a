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
  answerBound?: number,
): Promise<Uint8Array | null> {
  const { args, head } = ifShellArgs(paneId, test, then);
  const result = await execFast(runner, address, args, {
    signal,
    ...(answerBound === undefined ? {} : { answerBound }),
  });
  const out = result.stdout;
  if (result.code !== 0 || out.length < head.length) return null;
  for (let i = 0; i < head.length; i++) if (out[i] !== head[i]) return null;
  return out.subarray(head.length);
}

/**
 * As {@link ifShellThen}, for a `then` that may print more than a read holds whole: its output
 * is handed to `sink` chunk by chunk as a tmux process of its own prints it, and only when
 * `test` exited 0 (a chunk is valid during its call). Whether it did.
 */
export async function ifShellStream(
  runner: TmuxRunner,
  address: ServerAddress,
  paneId: string,
  test: string,
  then: readonly string[],
  sink: (chunk: Uint8Array) => void,
  signal?: AbortSignal,
): Promise<boolean> {
  const { args, head } = ifShellArgs(paneId, test, then);
  /** Bytes of the answer line seen so far; -1 once the output is not it. */
  let seen = 0;
  const { code } = await runner.stream(address, args, (chunk) => {
    let at = 0;
    while (seen >= 0 && seen < head.length && at < chunk.length) {
      seen = chunk[at] === head[seen] ? seen + 1 : -1;
      at++;
    }
    if (seen === head.length && at < chunk.length) sink(chunk.subarray(at));
  }, { signal });
  return code === 0 && seen === head.length;
}

/** The command line of an `if-shell` test and what follows it, and the answer line it prints. */
function ifShellArgs(
  paneId: string,
  test: string,
  then: readonly string[],
): { args: string[]; head: Uint8Array } {
  const yes = `tmux-mcp-yes-${randomHex(8)}`;
  return {
    args: [
      "if-shell",
      "-t",
      paneId,
      test,
      `display-message -p ${yes}`,
      ...(then.length > 0 ? [";", ...then] : []),
    ],
    head: new TextEncoder().encode(`${yes}\n`),
  };
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

/**
 * Which of the shell commands `tests` exit 0, asked in one tmux command (an `if-shell` each):
 * their indexes. A long one goes to tmux as a file (command_file.ts); a question tmux does not
 * answer fails the read.
 */
export async function shellsSay(
  read: (argv: string[]) => Promise<Uint8Array>,
  tests: readonly string[],
): Promise<Set<number>> {
  const yes = `tmux-mcp-yes-${randomHex(8)}:`;
  const argv = tests.flatMap((test, i) => [
    ...(i > 0 ? [";"] : []),
    "if-shell",
    test,
    `display-message -p ${yes}${i}`,
  ]);
  const out = new TextDecoder().decode(await read(argv));
  return new Set(
    out.split("\n").filter((l) => l.startsWith(yes)).map((l) => Number(l.slice(yes.length))),
  );
}
