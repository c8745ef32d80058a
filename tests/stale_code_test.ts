/**
 * A server run from a checkout whose code changes under it (an update, a `git pull`): Deno lets
 * it read only the code it started with, so a tool family not loaded yet fails to load, and
 * Deno's own words sent the reader to `--allow-read`, a permission the server must not have.
 * The call says what happened and that a restart loads the new code.
 */

import assert from "node:assert/strict";
import { callOver, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv } from "./helpers/tmux.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("a tool whose code changed on disk since the start says to restart, not --allow-read", async () => {
  const copy = await Deno.makeTempDir({ prefix: "tmux-mcp-checkout-" });
  for (const entry of ["main.ts", "deno.json", "deno.lock", "src"]) {
    const out = await new Deno.Command("cp", {
      args: ["-r", `${ROOT}${entry}`, `${copy}/`],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  }
  const { cmd, args } = startCommand();
  // The start task's flags, with the copy's deno.json and main.ts.
  const at = args.indexOf(`${ROOT}main.ts`);
  assert.ok(at > 0, args.join(" "));
  const s = new StdioServer(
    cmd,
    [
      ...args.slice(0, at),
      `--config=${copy}/deno.json`,
      `${copy}/main.ts`,
      ...args.slice(at + 1),
      "--socket",
      `tmux-mcp-nobody-${crypto.randomUUID()}`,
    ],
    cleanEnv(),
    copy,
  );
  try {
    await s.initialize();
    await Deno.writeTextFile(`${copy}/src/tools/discovery.ts`, "\n// changed\n", { append: true });
    const r = await callOver(s, "list_sessions");
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, /this server's code changed on disk since it started/);
    assert.match(r.text, /Restart the MCP server/);
    assert.doesNotMatch(r.text, /allow-read/);
  } finally {
    await s.kill().catch(() => {});
    await Deno.remove(copy, { recursive: true });
  }
});
