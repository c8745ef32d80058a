import assert from "node:assert/strict";
import type { TmuxContext } from "../mcp/context.ts";
import { liveWait, ownWaitRuns, parseChannelMark } from "./channel_marks.ts";

// This process's own wait is judged by what it knows, without asking tmux or the system: its
// mark still names it as the owner until the step after its tmux client's end has run.
Deno.test("a wait of this process is alive exactly while its tmux client runs", async () => {
  const asked: unknown[] = [];
  const ctx = { read: (args: unknown) => asked.push(args) } as unknown as TmuxContext;
  const mark = parseChannelMark(`waiting.${Date.now().toString(36)}.abcdef.${Deno.pid}`);
  assert.equal(mark?.owner, Deno.pid);
  assert.equal(await liveWait(ctx, mark, "ghost"), false, "no wait of ours on it");
  const first = ownWaitRuns("ghost");
  const second = ownWaitRuns("ghost");
  assert.equal(await liveWait(ctx, mark, "ghost"), true);
  assert.equal(await liveWait(ctx, mark, "other"), false, "a wait on another channel");
  first();
  first();
  assert.equal(await liveWait(ctx, mark, "ghost"), true, "ended twice counts once");
  second();
  assert.equal(await liveWait(ctx, mark, "ghost"), false);
  assert.deepEqual(asked, [], "tmux was not asked");
});
