/**
 * The topology watch's format (live.ts), which tmux expands once a second for every session:
 * a title a pane prints of a megabyte of combining marks (width 0, so never trimmed by width)
 * once went whole through its regex each time, for each session holding the window, and pinned
 * the person's tmux. Only a title shorter than TITLE_SCANNED gives its letters and digits now;
 * a longer one shows its changes by its length.
 */

import assert from "node:assert/strict";
import { TITLE_SCANNED, TOPOLOGY_FORMAT } from "../src/tools/live.ts";
import { TestTmux } from "./helpers/tmux.ts";

Deno.test("the topology watch reads the letters of short titles only: a long one of combining marks is never scanned", async () => {
  const t = await TestTmux.start();
  try {
    const long = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const short = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    // Width 2, more than TITLE_SCANNED characters: a trim by width keeps it all.
    const marks = "\u0301".repeat(TITLE_SCANNED * 4);
    await t.tmux("select-pane", "-t", long, "-T", `LONGX${marks}LONGY`);
    await t.tmux("select-pane", "-t", short, "-T", "build 41 of 50");
    const expand = async () => {
      const value = await t.tmux("display-message", "-p", "-t", short, TOPOLOGY_FORMAT);
      return value.trim().split(".").at(-1)!;
    };
    const letters = await expand();
    assert.ok(letters.includes("build41of50"), letters);
    assert.ok(!letters.includes("LONG"), `the long title was scanned: ${letters.slice(0, 80)}`);
    // A short title's change still changes the value.
    await t.tmux("select-pane", "-t", short, "-T", "build 42 of 50");
    assert.notEqual(await expand(), letters);
  } finally {
    await t.kill();
  }
});
