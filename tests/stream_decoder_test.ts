/**
 * The stream decoder (src/tmux/terminal_text.ts) against real tmux: each of the cases its unit
 * test pins (TMUX_CASES: sequences cancelled by CAN or SUB, ended by BEL, ESC or `ESC \`, left
 * open however long) is printed into a pane of a private server, and the screen must show what
 * the case says the decoder prints. A later tmux that parses otherwise fails here, not in a
 * wait that heard no output while the screen changed.
 */

import assert from "node:assert/strict";
import { caseBytes, TMUX_CASES } from "./helpers/tmux_parser_cases.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";
import { ShownCells } from "../src/tmux/shown_cells.ts";

Deno.test("tmux 3.3a shows what the decoder prints for each of its cases", async () => {
  const t = await TestTmux.start("main", { command: "sleep 1000" });
  const dir = await Deno.makeTempDir();
  try {
    for (const [i, { bytes, shown }] of TMUX_CASES.entries()) {
      const file = `${dir}/case-${i}`;
      await Deno.writeFile(file, caseBytes(bytes));
      const end = `END-${i}-END`;
      // A window of its own (a parser in its ground state); -opost: the bytes reach tmux as
      // they are (no LF made CR LF).
      const pane = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main"],
        `stty -opost; cat '${file}'; printf '\\r\\n${end}'; exec sleep 1000`,
      )).trim();
      const rows = await waitFor(async () => {
        // As a person sees it: hidden characters blank, line drawing as glyphs.
        const printed = await t.tmux("capture-pane", "-p", "-e", "-J", "-t", pane);
        const bytes = new TextEncoder().encode(printed);
        const screen = new TextDecoder().decode(ShownCells.of(bytes, false)).split("\n")
          .map((row) => row.trimEnd()).filter((row) => row !== "");
        return screen.at(-1) === end ? screen.slice(0, -1) : null;
      }, `case ${i} printed`);
      assert.deepEqual(rows, shown, `case ${i}: ${JSON.stringify(bytes.slice(0, 40))}`);
      await t.tmux("kill-pane", "-t", pane);
    }
  } finally {
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});
