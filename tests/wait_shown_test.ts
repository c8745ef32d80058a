/**
 * Waits tell what the pane shows, not what its output stream holds, against real tmux on
 * private sockets: wait_for_idle is not quiet while escape sequences alone keep changing the
 * screen (or text comes after a sequence tmux cancelled), and is while they change nothing; a
 * wait's tail is the screen while the pane is there, blank too, and says so when it can only
 * come from the stream.
 *
 * Ordering without sleeping: a pane that prints once waits on a tmux channel (`wait-for`) the
 * test signals once the wait has subscribed.
 */

import assert from "node:assert/strict";
import { summaryOf } from "./helpers/mcp.ts";
import { subscribed, withServer } from "./helpers/wait_text.ts";
import { waitFor } from "./helpers/tmux.ts";

/** The pane's command becomes `command` (a shell line run by sh). */
async function respawn(
  t: { tmux(...args: string[]): Promise<string> },
  p: string,
  command: string,
) {
  await t.tmux("respawn-pane", "-k", "-t", p, command);
}

/**
 * A pane that changes its screen every 0.2 s is not quiet for 3 s: a wait for idle with a
 * 6 s timeout times out. (A machine that holds the pane's loop for 3 s would fail it; the loop
 * asks for nothing but a shell and sleep.)
 */
async function neverQuiet(loop: string, transport = "control", ready?: string): Promise<void> {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    if (transport === "polling") {
      // destroy-unattached: no control client may join; a person keeps the session.
      await t.attach("main");
      await t.tmux("set-option", "-t", "main", "destroy-unattached", "on");
    }
    await respawn(t, p, loop);
    // What the loop prints first is on the screen before the wait begins.
    if (ready !== undefined) {
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes(ready),
        "the loop to begin",
      );
    }
    const { summary, data } = await summaryOf(c, "wait_for_idle", {
      paneId: p,
      quietMs: 3_000,
      timeoutMs: 6_000,
    });
    assert.equal(data.outcome, "timedOut", summary);
    assert.ok((data.quietForMs as number) < 3_000, summary);
    assert.equal(data.transport, transport);
  });
}

/** ESC#8 fills the screen with E, ESC[2J clears it: no text at all. */
const REDRAWN = "while :; do printf '\\033#8'; sleep 0.2; printf '\\033[2J'; sleep 0.2; done";

Deno.test("wait_for_idle: text after a sequence CAN cancels is output, as tmux prints it", async () => {
  await neverQuiet(
    "i=0; while :; do printf '\\033]\\030progress %s  \\r' $i; i=$((i+1)); sleep 0.2; done",
  );
});

Deno.test("wait_for_idle: a screen that escape sequences alone keep changing is not quiet", async () => {
  await neverQuiet(REDRAWN);
});

Deno.test("wait_for_idle polling: rows above the wait's start that escape sequences alone change are not quiet", async () => {
  // Three lines, then, the cursor saved and restored around each: ESC#8 fills the screen
  // (the rows from the cursor's on too, once), and row 1 is erased and filled again.
  await neverQuiet(
    "printf 'l1\\nl2\\nl3\\n'; while :; do printf '\\033[s\\033#8\\033[u'; sleep 0.2; " +
      "printf '\\033[s\\033[1;1H\\033[2K\\033[u'; sleep 0.2; done",
    "polling",
    "EEEE",
  );
});

Deno.test("wait_for_idle: escape sequences that change nothing on the screen leave it quiet", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // A title set 5 times a second, the cursor hidden and shown: the screen stays as it is.
    await respawn(
      t,
      p,
      "printf 'STILL'; i=0; while :; do printf '\\033]0;t%s\\007\\033[?25l\\033[?25h' $i; " +
        "i=$((i+1)); sleep 0.2; done",
    );
    const { summary, data } = await summaryOf(c, "wait_for_idle", {
      paneId: p,
      quietMs: 500,
      timeoutMs: 20_000,
    });
    assert.equal(data.outcome, "idle", summary);
    assert.equal(data.tail, "STILL");
  });
});

Deno.test("a wait's tail is the screen while the pane is there, blank too: not text a clear wiped or a DCS hid", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // Printed during the wait: the stream holds both texts, the screen neither.
    await respawn(
      t,
      p,
      "tmux wait-for go; printf 'ALL TESTS PASSED\\n\\033[2J\\033[H\\033P\\007Build OK\\033\\\\'; " +
        "exec sleep 100",
    );
    for (
      const [tool, args] of [
        ["wait_for_idle", { quietMs: 500 }],
        ["wait_for_text", { patterns: ["NEVER"], timeoutMs: 2_000 }],
      ] as const
    ) {
      const waiting = summaryOf(c, tool, { paneId: p, ...args });
      await subscribed(t, c);
      await t.tmux("wait-for", "-S", "go");
      const { summary, data } = await waiting;
      assert.equal(data.outcome, tool === "wait_for_idle" ? "idle" : "timedOut", summary);
      assert.equal(data.tail, "", summary);
      assert.doesNotMatch(summary, /output stream/);
      // Again for the next tool: the pane waits for the channel anew.
      await respawn(
        t,
        p,
        "tmux wait-for go; printf 'ALL TESTS PASSED\\n\\033[2J\\033[H\\033P\\007Build OK" +
          "\\033\\\\'; exec sleep 100",
      );
    }
  });
});

Deno.test("the tail of a pane gone during the wait holds what tmux printed, not a DCS's data", async () => {
  await withServer(async (t, c) => {
    // Another window keeps the session (and the server) when the pane goes.
    await t.tmux("new-window", "-d", "-t", "main");
    for (const tool of ["wait_for_idle", "wait_for_text"] as const) {
      const p = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main"],
        "tmux wait-for go; printf '\\033Pq\\007HIDDEN-DCS-TEXT\\033\\\\VIS1\\n" +
          "\\033]0;t\\030SHOWN-AFTER-CAN\\007\\n'; tmux wait-for end",
      )).trim();
      const args = tool === "wait_for_idle" ? { quietMs: 20_000 } : { patterns: ["NEVER"] };
      const waiting = summaryOf(c, tool, { paneId: p, ...args });
      await subscribed(t, c);
      await t.tmux("wait-for", "-S", "go");
      // Ended once tmux has read what it printed (a pane's output not read yet when its
      // process exits is dropped).
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("SHOWN-AFTER-CAN"),
        "the pane to print",
      );
      await t.tmux("wait-for", "-S", "end");
      const { summary, data } = await waiting;
      assert.equal(data.outcome, "paneDied", summary);
      const tail = data.tail as string;
      assert.match(tail, /VIS1/, summary);
      assert.match(tail, /SHOWN-AFTER-CAN/, summary);
      assert.doesNotMatch(tail, /HIDDEN/, summary);
      // wait_for_idle reads no rows: its tail can only be the stream's, and it says so.
      if (tool === "wait_for_idle") assert.match(summary, /tail is from its output stream/);
    }
  });
});
