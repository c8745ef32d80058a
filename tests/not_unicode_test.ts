/**
 * Environment variables and arguments that are not UTF-8. Deno will not read such a variable
 * (InvalidData), and decodes such an argument with U+FFFD in place of its bytes: taken for unset,
 * a `TMUX` whose socket path holds a Latin-1 byte left the server and the guard not knowing the
 * pane they run in (send_keys typed into the agent's own pane, the guard let it through), while
 * the tmux they ran still reached that server; a `--socket-path` so decoded named another socket.
 * Each start refuses them by name instead: the server and the guard with 2, other hooks with 1.
 */

import assert from "node:assert/strict";
import { startCommand } from "./helpers/stdio.ts";

/** Runs the start command with `args`, `TMUX`-like variables set to `env` (shell `printf` text). */
async function run(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<{ code: number; stderr: string }> {
  const { cmd, args: base } = startCommand();
  // Only a shell can hand a program bytes that are not UTF-8: Deno.Command takes strings.
  const exports = Object.entries(env).map(([name, printf]) =>
    `${name}="$(printf '${printf}')"; export ${name}; `
  ).join("");
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", `${exports}exec "$0" "$@"`, cmd, ...base, ...args.map((a) => a)],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

const LATIN1_TMUX = "/tmp/tmux-mcp-caf\\351-nowhere,1,0";

Deno.test("a TMUX that is not UTF-8 stops the server and blocks the guard, naming it", async () => {
  const served = await run([], { TMUX: LATIN1_TMUX, TMUX_PANE: "%1" });
  assert.equal(served.code, 2, served.stderr);
  assert.match(served.stderr, /cannot start: TMUX holds bytes that are not UTF-8/);
  const guard = await run(["hook", "guard"], { TMUX: LATIN1_TMUX, TMUX_PANE: "%1" });
  assert.equal(guard.code, 2, guard.stderr);
  assert.match(guard.stderr, /cannot run: TMUX holds bytes that are not UTF-8/);
  // A hook other than the guard never blocks (exit 2 from a Stop hook loops the agent).
  const attention = await run(["hook", "attention"], { TMUX: LATIN1_TMUX, TMUX_PANE: "%1" });
  assert.equal(attention.code, 1, attention.stderr);
  // `hook config` only prints the set-up, reading none of them: it still does.
  const config = await run(["hook", "config"], { TMUX: LATIN1_TMUX, TMUX_PANE: "%1" });
  assert.equal(config.code, 0, config.stderr);
  const readOnly = await run([], { TMUX_MCP_READ_ONLY: "1\\377" });
  assert.equal(readOnly.code, 2, readOnly.stderr);
  assert.match(readOnly.stderr, /TMUX_MCP_READ_ONLY holds bytes that are not UTF-8/);
});

Deno.test("a socket name or path that is not UTF-8 is refused, not read as another", async () => {
  for (const flag of ["--socket-path", "--socket"]) {
    const value = flag === "--socket" ? "caf\\351" : "/tmp/caf\\351";
    const { cmd, args: base } = startCommand();
    const out = await new Deno.Command("/bin/sh", {
      args: ["-c", `exec "$0" "$@" ${flag} "$(printf '${value}')"`, cmd, ...base],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(stderr, new RegExp(`${flag}: .* holds bytes that are not UTF-8`));
  }
});
