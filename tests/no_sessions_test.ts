/**
 * A tmux server with no sessions (`exit-empty off` keeps it after the last one goes): every
 * tool that reads the whole server answers it as empty; none blames a missing target (tmux's
 * `list-windows -a` fails there with "no current target").
 */

import assert from "node:assert/strict";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { withTmux } from "./helpers/mcp.ts";

Deno.test("every read of the whole server answers a server with no sessions as empty", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-s", "exit-empty", "off");
    await t.tmux("kill-session", "-t", "main");
    const tools: Tool[] = (await c.client.listTools()).tools;
    // The read-only tools that need no argument, and search_panes with its pattern.
    const reads = tools.filter((tool) =>
      tool.annotations?.readOnlyHint === true && (tool.inputSchema.required ?? []).length === 0
    );
    assert.ok(reads.length >= 5, reads.map((tool) => tool.name).join(", "));
    for (const tool of reads) {
      // (show_buffer may fail for its own reason: there are no buffers.)
      const r = await c.call(tool.name, {});
      const said = JSON.stringify(r.content);
      if (r.isError) {
        assert.doesNotMatch(said, /target|no current|session/i, `${tool.name}: ${said}`);
      }
    }
    const found = await c.ok<{ panesSearched: number; matches: unknown[] }>("search_panes", {
      pattern: "x",
    });
    assert.deepEqual([found.panesSearched, found.matches], [0, []]);
  });
});
