/**
 * capture_since's cursors end to end: what one costs a model (it comes back in every reply and
 * is copied into the next call), and which ones are refused.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

Deno.test("capture_since: a cursor's length does not depend on the pane's height", async () => {
  await withTmux(
    async (t, c) => {
      const p = t.ids.paneId;
      await t.tmux("send-keys", "-t", p, "seq 1 300", "Enter");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("300"),
        "seq",
      );
      const lengths = new Set<number>();
      for (const height of [10, 24, 200]) {
        await t.tmux("resize-window", "-t", p, "-y", String(height));
        const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
        const again = await c.ok<{ cursor: string; text: string }>("capture_since", {
          paneId: p,
          cursor,
        });
        assert.equal(again.text, "", "nothing new");
        lengths.add(cursor.length).add(again.cursor.length);
      }
      assert.equal(lengths.size, 1, `cursor lengths at 10, 24 and 200 rows: ${[...lengths]}`);
    },
    {},
    { width: 120, height: 24 },
  );
});
