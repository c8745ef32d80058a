/**
 * A one-shot tmux call whose client is tied to this process's life (the runner's
 * `RunOptions.tiedToProcess`): a control-mode client with no session, its stdin a pipe only
 * this process writes to. tmux ends a control client at its stdin's end of file, and the pipe
 * reaches it when this process goes, however it goes; a plain client blocked in `wait-for`
 * outlives a process killed outright until the next signal on the channel wakes it.
 *
 * Such a client gets no session, so it attaches nowhere: it changes no session's order of
 * recent use, no client list, no window size. What it answers comes framed as control mode
 * frames a command's output (`%begin`, then `%end` or `%error`), each command in a block of its
 * own; {@link unframeTied} turns that back into a plain client's answer.
 *
 * @module
 */

/** The tmux flag that makes a client a control-mode one. */
export const TIED_FLAG = "-C";

const GUARD = /^%(begin|end|error) (\d+ \d+ \d+)$/;

/**
 * What a plain tmux client would have answered, from a control-mode client's answer: the
 * output of every command block as stdout, and a block that ended in `%error` as a failure
 * (its text on stderr, where a plain client prints it; tmux exits 1 then). Lines outside a
 * block (notifications, `%exit`) are dropped, and so is a block that never ended (its client
 * was killed). A failure before any command (no server there) passes on as it came. No block
 * at all is a failure too: a control client that cannot parse its command line says nothing
 * and exits 0, where a plain one complains.
 */
export function unframeTied(
  result: { code: number; stdout: Uint8Array; stderr: string },
): { code: number; stdout: Uint8Array; stderr: string } {
  const out: string[] = [];
  const errors: string[] = [];
  let block: { words: string; lines: string[] } | null = null;
  let blocks = 0;
  for (const line of new TextDecoder().decode(result.stdout).split("\n")) {
    const guard = GUARD.exec(line);
    if (block === null) {
      if (guard?.[1] !== "begin") continue;
      block = { words: guard[2], lines: [] };
      blocks++;
      continue;
    }
    if (guard && guard[1] !== "begin" && guard[2] === block.words) {
      (guard[1] === "end" ? out : errors).push(...block.lines);
      block = null;
      continue;
    }
    block.lines.push(line);
  }
  const stdout = new TextEncoder().encode(out.map((l) => `${l}\n`).join(""));
  if (errors.length > 0) {
    return { code: result.code || 1, stdout, stderr: `${result.stderr}${errors.join("\n")}\n` };
  }
  if (result.code === 0 && blocks === 0) {
    return { code: 1, stdout, stderr: `${result.stderr}tmux ran none of the commands given.\n` };
  }
  return { ...result, stdout };
}
