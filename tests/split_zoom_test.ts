/**
 * split_window in a zoomed window nobody shows (a person's window they left zoomed, looking at
 * another): tmux 3.3a unzooms a window to split it, so the person would come back to it
 * unzoomed. The split keeps the zoom (split-window -Z where the window is zoomed at that
 * instant, and only there: -Z zooms an unzoomed window), and the reply says the new pane is
 * hidden. And a start directory reached through a symbolic link is no folder tmux "cannot
 * enter".
 */

import assert from "node:assert/strict";
import { connect, summaryOf } from "./helpers/mcp.ts";
import { TestTmux } from "./helpers/tmux.ts";
import { withZoomed, zoomOf } from "./helpers/zoomed.ts";

Deno.test("split_window keeps a zoomed window nobody shows zoomed, and says the pane is hidden", async () => {
  await withZoomed(async (t, c, { window, zoomedPane, hidden }) => {
    assert.equal(await zoomOf(t, window), `1 ${zoomedPane}`);

    const { summary, data } = await summaryOf(c, "split_window", { paneId: hidden });
    assert.equal(await zoomOf(t, window), `1 ${zoomedPane}`, "still zoomed, on the same pane");
    assert.match(summary, /zoomed/);
    assert.ok(
      (data.notes as string[]).some((n) => n.includes(zoomedPane) && /hidden/.test(n)),
      JSON.stringify(data.notes),
    );

    // A window nobody shows that is not zoomed stays so (-Z would zoom it).
    const other = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const plain = await summaryOf(c, "split_window", { paneId: other });
    assert.doesNotMatch(plain.summary, /zoomed/);
    assert.deepEqual(plain.data.notes, []);
    assert.equal(
      (await t.tmux("display-message", "-p", "-t", other, "#{window_zoomed_flag}")).trim(),
      "0",
    );
  });
});

Deno.test("a start directory through a symbolic link is said to be where the pane is", async () => {
  const t = await TestTmux.start("main");
  const c = await connect({ socketName: t.socket });
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tmux-mcp-link-" }));
  try {
    await Deno.mkdir(`${dir}/real`);
    await Deno.symlink(`${dir}/real`, `${dir}/link`);
    const r = await c.ok<{ cwd: string; notes: string[] }>("create_window", {
      session: "main",
      startDirectory: `${dir}/link`,
      command: "sleep 100",
    });
    assert.equal(r.cwd, `${dir}/real`);
    assert.equal(r.notes.some((n) => /cannot enter/.test(n)), false, JSON.stringify(r.notes));
    assert.ok(r.notes.some((n) => /symbolic link/.test(n)), JSON.stringify(r.notes));
    // A folder it really cannot enter is still said so.
    const missing = await c.ok<{ notes: string[] }>("create_window", {
      session: "main",
      startDirectory: `${dir}/missing`,
      command: "sleep 100",
    });
    assert.ok(missing.notes.some((n) => /cannot enter/.test(n)), JSON.stringify(missing.notes));
  } finally {
    await c.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});
