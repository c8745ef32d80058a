/**
 * run_command empties the shell's line before it types (keys the line editor handles in order
 * with the paste: run_command.ts `emptyingKeys`). A readline shell rings the bell for a line
 * kill on an empty line, zsh for an End it has no binding for (`zsh -f`, Arch, Fedora), and tmux
 * marks a window that rang (`!` in a person's status line, an alert-bell hook, a beep): the keys
 * ring no bell, and whatever was on the line still goes, in emacs and vi modes.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

/** A shell, its line editor's mode, and whether a leftover is left in vi command mode. */
const SHELLS = [
  { start: "bash --norc --noprofile -o emacs", command: false },
  { start: "bash --norc --noprofile -o vi", command: true },
  // zsh -f: no start-up file binds End; EDITOR=vi turns vi mode on by itself. (A leftover in
  // its vi command mode keeps: its C-u there kills back to where insert mode began.)
  { start: "env EDITOR=emacs zsh -f", command: false },
  { start: "env EDITOR=vi zsh -f", command: false },
];

Deno.test("run_command rings no bell in bash or zsh, emacs or vi mode, and still empties what was on the line", async () => {
  await withTmux(async (t, c) => {
    for (const shell of SHELLS) {
      const [window, pane] = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}"],
        `env PS1='sh$ ' ${shell.start}`,
      )).trim().split(" ");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", pane)).trim() !== "",
        `${shell.start}: its prompt`,
      );
      const bell = async () =>
        (await t.tmux("display-message", "-p", "-t", `main:${window}`, "#{window_bell_flag}"))
          .trim();
      assert.equal(await bell(), "0");
      const r = await c.ok<{ exitStatus: number; output: string }>("run_command", {
        paneId: pane,
        command: "echo BELL_$((6*7))",
      });
      assert.deepEqual([r.exitStatus, r.output.trim()], [0, "BELL_42"], shell.start);
      // A leftover on the line (in bash's vi mode, the editor left in command mode): emptied.
      await t.tmux("send-keys", "-t", pane, "-l", "rm -rf LEFTOVER");
      if (shell.command) await t.tmux("send-keys", "-t", pane, "Escape", "0");
      const again = await c.ok<{ exitStatus: number; output: string }>("run_command", {
        paneId: pane,
        command: "echo AGAIN",
      });
      assert.deepEqual([again.exitStatus, again.output.trim()], [0, "AGAIN"], shell.start);
      // tmux handles the bell before the command's output it has since passed on.
      assert.equal(await bell(), "0", `${shell.start}: the window rang`);
    }
  });
});
