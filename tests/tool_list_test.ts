/**
 * The prebuilt tools/list (src/mcp/tool_list.json) must be exactly what the SDK would answer
 * now; a server must answer it for any selection of toolsets, in registration order.
 */

import assert from "node:assert/strict";
import prebuilt from "../src/mcp/tool_list.json" with { type: "json" };
import { liveToolList } from "../scripts/tool_list.ts";
import { connect } from "./helpers/mcp.ts";

Deno.test("tool_list.json is the live conversion of every tool (else: deno task tool-list)", async () => {
  const live = await liveToolList();
  assert.equal(live.tools.length, 63);
  assert.deepEqual(
    prebuilt,
    live,
    "src/mcp/tool_list.json is stale: run `deno task tool-list` and commit the result",
  );
});

Deno.test("tools/list answers from the prebuilt list for each selection, in order", async () => {
  const live = await liveToolList();
  for (const toolsets of [["inspect"], ["execute", "teardown"], ["inspect", "manage", "execute"]]) {
    const c = await connect({ toolsets: toolsets as never });
    try {
      const listed = (await c.client.listTools()).tools as { name: string }[];
      const names = new Set(listed.map((t) => t.name));
      const expected = live.tools.filter((t) => names.has(t.name));
      assert.deepEqual(
        JSON.parse(JSON.stringify(listed)),
        expected,
        `toolsets ${toolsets.join(",")}`,
      );
      assert.ok(names.has("call_tools_batch"), "the batch tool is always on");
    } finally {
      await c.close();
    }
  }
});
