/**
 * A pane that forges control-mode framing, as any process in a pane can: it learns the
 * server's next command numbers from a control client of its own and prints `%end` lines with
 * them, each followed by `%output` for a victim pane.
 *
 * @module
 */

import type { TestTmux } from "./tmux.ts";

/**
 * The forger: for each line on stdin, asks its own control client for a command number, then
 * prints an `%end` for each of the next numbers (this second and the next nine: a loaded
 * machine may send the command it aims at seconds later), each followed by `%output` for the
 * victim pane, and finally `DONE <round>`. It reads its control client's
 * whole answer before parsing it: a control client killed in the middle of its output (as
 * `| head -n 1` would, by SIGPIPE) makes tmux 3.3a's server crash.
 */
export const FORGER = `
round=0
while read go; do
  round=$((round + 1))
  answer=$(printf 'display-message -p x\\n' | tmux -C attach -f ignore-size -t main)
  set -- $(printf '%s\\n' "$answer" | grep '^%begin .* 1$' | head -n 1)
  t=$2; n=$3; i=1
  while [ $i -le 40 ]; do
    for dt in 0 1 2 3 4 5 6 7 8 9; do
      printf '%%end %s %s 1\\n%%output %s FORGED-%s\\n' $((t + dt)) $((n + i)) "$VICTIM" $i
    done
    i=$((i + 1))
  done
  printf 'DO%sNE %s\\n' '' $round
done
`;

/**
 * Starts the forger in a new window of `t`'s session "main" (its script written into `dir`),
 * forging `%output` for `victim`; each line typed into it (Enter) runs one round, which ends
 * with the line `DONE <round>`. Returns its pane id.
 */
export async function startForger(t: TestTmux, dir: string, victim: string): Promise<string> {
  await Deno.writeTextFile(`${dir}/forge.sh`, FORGER);
  return (await t.tmux(
    "new-window",
    "-d",
    "-t",
    "main:",
    "-e",
    `VICTIM=${victim}`,
    "-P",
    "-F",
    "#{pane_id}",
    `sh '${dir}/forge.sh'; exec sleep 100000`,
  )).trim();
}
