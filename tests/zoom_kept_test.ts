/**
 * A zoomed window nobody shows (a person's window they left zoomed, looking at another), reached
 * by swap_pane, select_pane, break_pane, join_pane, select_layout and resize_pane: tmux 3.3a
 * unzooms a window for each. swap-pane and select-pane have -Z, which keeps zoomed a window
 * zoomed at that instant (select-pane zooms it on the pane selected), and swap_pane and
 * select_pane pass it where no person shows the window; the others have no such flag, and their
 * reply says the window is unzoomed now (a note; in the summary of select_pane, join_pane and
 * select_layout, whose results have no notes field).
 */

import assert from "node:assert/strict";
import { connect, summaryOf } from "./helpers/mcp.ts";
import { withZoomed, zoomOf } from "./helpers/zoomed.ts";

/** Whether `notes` (or a summary) say that `window` is unzoomed now. */
function saysUnzoomed(notes: unknown, window: string): boolean {
  const said = typeof notes === "string" ? [notes] : notes as string[];
  return said.some((n) => n.includes(`Window ${window} was zoomed`) && /unzoomed now/.test(n));
}

Deno.test("swap_pane keeps a zoomed window nobody shows zoomed on the pane it was zoomed on", async () => {
  await withZoomed(async (t, c, { window, zoomedPane, hidden }) => {
    const third = (await t.tmux("split-window", "-d", "-t", hidden, "-P", "-F", "#{pane_id}"))
      .trim();
    await t.tmux("resize-pane", "-Z", "-t", zoomedPane);
    assert.equal(await zoomOf(t, window), `1 ${zoomedPane}`);
    // Two hidden panes of it.
    const within = await summaryOf(c, "swap_pane", { paneId: hidden, targetPaneId: third });
    assert.equal(await zoomOf(t, window), `1 ${zoomedPane}`, "still zoomed, on the same pane");
    assert.doesNotMatch(within.summary, /zoom/);
    // A hidden pane and one of another window nobody shows.
    const other = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const across = await summaryOf(c, "swap_pane", { paneId: hidden, targetPaneId: other });
    assert.equal(await zoomOf(t, window), `1 ${zoomedPane}`, "still zoomed, on the same pane");
    assert.doesNotMatch(across.summary, /zoom/);
    // The zoomed pane itself, swapped out: the window stays zoomed on the pane that took its
    // place, and the reply says so.
    const out = await summaryOf(c, "swap_pane", { paneId: zoomedPane, targetPaneId: hidden });
    assert.equal(await zoomOf(t, window), `1 ${hidden}`, "zoomed on the pane swapped in");
    assert.match(out.summary, new RegExp(`stays zoomed, now on ${hidden}`), out.summary);
  });
});

Deno.test("select_pane of a hidden pane of a zoomed window nobody shows keeps it zoomed, now on that pane", async () => {
  await withZoomed(async (t, c, { window, zoomedPane, hidden }) => {
    const { summary, data } = await summaryOf(c, "select_pane", { paneId: hidden });
    assert.equal(await zoomOf(t, window), `1 ${hidden}`, "zoomed on the pane selected");
    assert.equal(data.windowZoomed, true);
    assert.ok(
      summary.includes(
        `Window ${window} was zoomed on ${zoomedPane}, and stays zoomed, now on ${hidden}.`,
      ),
      summary,
    );
    // The active pane already: tmux changes nothing, and the reply says nothing of the zoom.
    const same = await summaryOf(c, "select_pane", { paneId: hidden });
    assert.equal(await zoomOf(t, window), `1 ${hidden}`);
    assert.doesNotMatch(same.summary, /zoom/);
    // A window that is not zoomed is not zoomed by it (-Z keeps only a zoom there is).
    await t.tmux("resize-pane", "-Z", "-t", hidden);
    const plain = await summaryOf(c, "select_pane", { paneId: zoomedPane });
    assert.equal(await zoomOf(t, window), `0 ${zoomedPane}`);
    assert.equal(plain.data.windowZoomed, false);
    assert.doesNotMatch(plain.summary, /zoom/);
  });
});

Deno.test("select_pane of a hidden pane of a zoomed window a person is shown is refused, or with --allow-attended-input says it unzoomed it", async () => {
  await withZoomed(async (t, c, { window, zoomedPane, hidden }) => {
    // The person looks at the zoomed window now.
    await t.tmux("select-window", "-t", window);
    const text = await c.fail("select_pane", { paneId: hidden });
    assert.match(text, /would change what a person sees/, text);
    assert.equal(await zoomOf(t, window), `1 ${zoomedPane}`, "nothing changed");
    // With the permission, what the hook guard asks about happens (it words the call as an
    // unzoom): the window is unzoomed, and the reply says so.
    const attended = await connect({ socketName: t.socket, allowAttendedInput: true });
    try {
      const { summary, data } = await summaryOf(attended, "select_pane", { paneId: hidden });
      assert.equal(await zoomOf(t, window), `0 ${hidden}`);
      assert.equal(data.windowZoomed, false);
      assert.ok(saysUnzoomed(summary, window), summary);
    } finally {
      await attended.close();
    }
  });
});

Deno.test("break_pane out of a zoomed window nobody shows says the window is unzoomed now", async () => {
  await withZoomed(async (t, c, { window, hidden }) => {
    const { data } = await summaryOf(c, "break_pane", { paneId: hidden });
    assert.equal((await zoomOf(t, window)).split(" ")[0], "0");
    assert.ok(saysUnzoomed(data.notes, window), JSON.stringify(data.notes));
  });
});

Deno.test("join_pane into a zoomed window nobody shows says the window is unzoomed now", async () => {
  await withZoomed(async (t, c, { window, hidden }) => {
    const other = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    const { summary } = await summaryOf(c, "join_pane", { paneId: other, targetPaneId: hidden });
    assert.equal((await zoomOf(t, window)).split(" ")[0], "0");
    assert.ok(saysUnzoomed(summary, window), summary);
  });
});

Deno.test("select_layout on a zoomed window nobody shows says the window is unzoomed now", async () => {
  await withZoomed(async (t, c, { window }) => {
    const { summary } = await summaryOf(c, "select_layout", { windowId: window, layout: "tiled" });
    assert.equal((await zoomOf(t, window)).split(" ")[0], "0");
    assert.ok(saysUnzoomed(summary, window), summary);
    // A window that was not zoomed gets no such note.
    const again = await summaryOf(c, "select_layout", { windowId: window, layout: "tiled" });
    assert.doesNotMatch(again.summary, /zoom/);
  });
});

Deno.test("resize_pane of a pane of a zoomed window nobody shows says the window is unzoomed now", async () => {
  await withZoomed(async (t, c, { window, hidden }) => {
    const { data } = await summaryOf(c, "resize_pane", { paneId: hidden, height: 5 });
    assert.equal((await zoomOf(t, window)).split(" ")[0], "0");
    assert.ok(saysUnzoomed(data.notes, window), JSON.stringify(data.notes));
  });
});
