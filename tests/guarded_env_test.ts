/**
 * The flags a release binary bakes in (`--allow-run=tmux,ssh`) against an environment that
 * holds a variable Deno guards: `LD_LIBRARY_PATH` (CUDA, HPC `module load`, conda) or any
 * other `LD_*` / `DYLD_*`. Deno refuses to start a program while one is set, unless
 * `--allow-run` has no list; tmux-mcp starts tmux and ssh with it blank and says so, rather
 * than not starting at all and blaming a flag it has.
 */

import assert from "node:assert/strict";
import { agentEnv, toolCall } from "../src/hooks/testing.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, sh, TestTmux } from "./helpers/tmux.ts";

const GUARDED = { LD_LIBRARY_PATH: "/usr/local/cuda/lib64", DYLD_FALLBACK_LIBRARY_PATH: "/x" };

Deno.test("with LD_LIBRARY_PATH set, the server under the baked flags starts, serves, and says what it blanked", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  try {
    // stdin closed at once: a healthy server prints its line and exits 0.
    const r = await sh(cmd, [...args, "--socket", t.socket], {
      env: cleanEnv(GUARDED),
      stdin: "",
      allowFail: true,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^tmux-mcp \S+: tmux \S+, socket /m);
    assert.doesNotMatch(r.stderr, /--allow-run/, r.stderr);
    for (const name of Object.keys(GUARDED)) {
      assert.match(r.stderr, new RegExp(`warning: .*${name}.* set.*blank`), r.stderr);
    }

    // A whole session: tools reach tmux, typing included.
    const server = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv(GUARDED));
    try {
      await server.initialize();
      const list = await server.callTool("list_panes", {}) as {
        isError?: boolean;
        structuredContent?: { panes: { id: string }[] };
      };
      assert.notEqual(list.isError, true);
      assert.deepEqual(list.structuredContent?.panes.map((p) => p.id), [t.ids.paneId]);
    } finally {
      await server.kill();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("with LD_LIBRARY_PATH set, hook guard under the baked flags judges, not blames a flag", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  try {
    const env = agentEnv(await t.facts(), t.ids.paneId);
    const r = await sh(cmd, [...args, "hook", "guard"], {
      env: cleanEnv({ ...env, ...GUARDED }),
      stdin: toolCall("mcp__tmux__send_keys", { paneId: t.ids.paneId, text: "ls" }),
      allowFail: true,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /needs --allow-run/, r.stderr);
  } finally {
    await t.kill();
  }
});
