/**
 * run_command empties the shell's line before it types (keys the line editor handles in order
 * with the paste). A readline shell rings the bell for a line kill on an empty line, and tmux
 * marks a window that rang (`!` in a person's status line, an alert-bell hook, a beep): the keys
 * never kill an empty line, and whatever was on the line still goes.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

Deno.test("run_command in a bash pane rings no bell, and still empties what was on the line", async () => {
  await withTmux(async (t, c) => {
    for (const mode of ["emacs", "vi"]) {
      const [window, pane] = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}"],
        `env PS1='bash$ ' bash --norc --noprofile -o ${mode}`,
      )).trim().split(" ");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", pane)).includes("bash$"),
        "bash's prompt",
      );
      const bell = async () =>
        (await t.tmux("display-message", "-p", "-t", `main:${window}`, "#{window_bell_flag}"))
          .trim();
      assert.equal(await bell(), "0");
      const r = await c.ok<{ exitStatus: number; output: string }>("run_command", {
        paneId: pane,
        command: "echo BELL_$((6*7))",
      });
      assert.deepEqual([r.exitStatus, r.output.trim()], [0, "BELL_42"]);
      // A leftover on the line (in vi mode, the editor left in command mode): emptied.
      await t.tmux("send-keys", "-t", pane, "-l", "rm -rf LEFTOVER");
      if (mode === "vi") await t.tmux("send-keys", "-t", pane, "Escape", "0");
      const again = await c.ok<{ exitStatus: number; output: string }>("run_command", {
        paneId: pane,
        command: "echo AGAIN",
      });
      assert.deepEqual([again.exitStatus, again.output.trim()], [0, "AGAIN"], mode);
      // tmux handles the bell before the command's output it has since passed on.
      assert.equal(await bell(), "0", `${mode}: the window rang`);
    }
  });
});
