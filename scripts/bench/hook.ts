/**
 * The hook's section: what `tmux-mcp hook working` costs an agent on every prompt and tool call,
 * a new process each time, against the runtime's own start-up and the one tmux command it sends.
 *
 * @module
 */

import { sh } from "../../tests/helpers/tmux.ts";
import { type Fixture, tmux } from "./fixture.ts";
import { cmd, env, startArgs } from "./server.ts";
import { record } from "./table.ts";
import { sideBySide, time } from "./timing.ts";

/** Runs a process to its end with `input` on stdin; throws unless it exits 0. */
function runProcess(
  command: string,
  args: string[],
  input: string,
  extraEnv: Record<string, string> = {},
): Promise<unknown> {
  return sh(command, args, { env: { ...env, ...extraEnv }, stdin: input });
}

/**
 * `tmux-mcp hook working` as an agent runs it on every prompt and tool call: a new process with
 * the start task's flags, inside a pane. Beside it, the runtime's own floor (an empty module
 * under the same flags) and the one tmux command the hook sends.
 */
export async function benchHook(size: number, fx: Fixture): Promise<void> {
  const facts =
    (await tmux(fx.socket, "display-message", "-p", "-t", fx.workPane, "#{socket_path},#{pid}"))
      .trim();
  const agent = { TMUX: `${facts},0`, TMUX_PANE: fx.workPane };
  const input = JSON.stringify({
    session_id: "bench",
    transcript_path: "/dev/null",
    cwd: "/",
    hook_event_name: "UserPromptSubmit",
    prompt: "bench",
  });
  const flags = startArgs.slice(0, -1);
  const empty = await Deno.makeTempFile({ prefix: "tmux-mcp-bench-", suffix: ".ts" });
  try {
    record(
      size,
      "deno run, empty module (runtime)",
      await time(() => runProcess(cmd, [...flags, empty], "")),
      null,
    );
  } finally {
    await Deno.remove(empty);
  }
  const raw = () =>
    tmux(fx.socket, "set-option", "-w", "-t", fx.workPane, "@agent-state", "working");
  record(
    size,
    "hook working (source)",
    ...(await sideBySide(
      () => runProcess(cmd, [...startArgs, "hook", "working"], input, agent),
      raw,
    )),
  );
  const bundle = new URL("../../dist/bundle/main.js", import.meta.url).pathname;
  const built = await Deno.stat(bundle).then(() => true, () => false);
  if (built) {
    record(
      size,
      "hook working (bundle, as the binary)",
      ...(await sideBySide(
        () => runProcess(cmd, [...flags, bundle, "hook", "working"], input, agent),
        raw,
      )),
    );
  }
}
