/**
 * run_command's wait for its command's end and get_command_result's `waitMs` read the pane as
 * waits do: the watch's repeated reads go behind one-off calls (RunOptions.background), while
 * every step that acts, and the reads that decide the outcome, go as one-off calls.
 */

import assert from "node:assert/strict";
import { type RunOptions, TmuxRunner } from "../src/tmux/run.ts";
import type { ServerAddress } from "../src/tmux/server_address.ts";
import { type StartedTmux, type TestClient, withTmux } from "./helpers/mcp.ts";
import { noControlTmux, waitFor } from "./helpers/tmux.ts";

/**
 * A runner on a tmux on which no control client attaches (every command a tmux process of its
 * own, waits poll) that notes each command line, and whether it went in the background lane.
 */
class RecordingRunner extends TmuxRunner {
  readonly calls: { args: readonly string[]; background: boolean }[] = [];
  constructor(binary: string) {
    super({ binary, control: false });
  }
  override exec(
    address: ServerAddress,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    this.calls.push({ args, background: options.background === true });
    return super.exec(address, args, options);
  }
  /** The tmux commands of the calls that went in the background lane. */
  backgroundCommands(): Set<string> {
    const commands = new Set<string>();
    for (const { args, background } of this.calls) {
      if (!background) continue;
      args.forEach((arg, i) => {
        if (i === 0 || args[i - 1] === ";") commands.add(arg);
      });
    }
    return commands;
  }
}

/** Only reads of the pane go in the background lane: never a step that types or marks. */
function onlyReadsPaced(runner: RecordingRunner): void {
  for (const command of runner.backgroundCommands()) {
    assert.ok(["display-message", "capture-pane"].includes(command), `paced: ${command}`);
  }
}

/** Runs `fn` with a {@link RecordingRunner} on a tmux that refuses control mode. */
async function withRecording(
  fn: (runner: RecordingRunner, t: StartedTmux, c: TestClient) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-paced-" });
  try {
    const runner = new RecordingRunner(await noControlTmux(dir));
    await withTmux((t, c) => fn(runner, t, c), { runner }, { noChildLeft: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Waits until a read went in the background lane, then lets the pane's command end (it waits
 * for the channel the test signals), whether or not one did.
 */
async function endOncePaced(runner: RecordingRunner, t: StartedTmux): Promise<void> {
  try {
    await waitFor(() => runner.calls.some((call) => call.background), "a paced read");
  } finally {
    await t.tmux("wait-for", "-S", CHANNEL);
  }
}

/** The channel the pane's command waits on. */
const CHANNEL = "tmux-mcp-test-paced";
const COMMAND = `tmux wait-for ${CHANNEL}; echo paced-done`;

type Run = { exitStatus: number | null; output: string; jobId?: string; transport: string };

Deno.test("run_command's wait for its command's end reads the pane in the background lane", async () => {
  await withRecording(async (runner, t, c) => {
    const run = c.ok<Run>("run_command", { paneId: t.ids.paneId, command: COMMAND });
    // Should the test fail before the answer, the call's end is not waited for.
    run.catch(() => {});
    await endOncePaced(runner, t);
    const done = await run;
    assert.equal(done.transport, "polling");
    assert.equal(done.exitStatus, 0);
    assert.equal(done.output, "paced-done");
    onlyReadsPaced(runner);
  });
});

Deno.test("get_command_result's wait reads the pane in the background lane", async () => {
  await withRecording(async (runner, t, c) => {
    const started = await c.ok<Run>("run_command", {
      paneId: t.ids.paneId,
      command: COMMAND,
      background: true,
    });
    assert.ok(started.jobId);
    runner.calls.length = 0;
    const result = c.ok<{ state: string; exitStatus: number | null; output: string }>(
      "get_command_result",
      { jobId: started.jobId, waitMs: 60_000 },
    );
    result.catch(() => {});
    await endOncePaced(runner, t);
    const done = await result;
    assert.equal(done.state, "exited");
    assert.equal(done.exitStatus, 0);
    assert.equal(done.output, "paced-done");
    onlyReadsPaced(runner);
  });
});
