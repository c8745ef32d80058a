/**
 * Test support for the hook commands: recorded hook inputs, one per event of seed 002 with
 * every field its type lists (required and optional), and an in-memory {@link HookIo}. Tests
 * only: the hook commands never import this.
 *
 * @module
 */

import assert from "node:assert/strict";
import { RecordingRunner, type TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { guard } from "./guard.ts";
import { type HookIo, runHook } from "./main.ts";

const BASE = {
  session_id: "5f2c8a1e-93b4-4d6f-a0e7-1c2b3d4e5f60",
  transcript_path: "/home/ada/.claude/projects/-home-ada-src/5f2c8a1e.jsonl",
  cwd: "/home/ada/src",
  permission_mode: "default",
} as const;

/** One recorded input per event name, all fields present. */
export const RECORDED: Readonly<Record<string, Record<string, unknown>>> = {
  PreToolUse: {
    ...BASE,
    hook_event_name: "PreToolUse",
    tool_name: "mcp__tmux__send_keys",
    tool_input: { paneId: "%1", text: "make test", enter: true },
    tool_use_id: "toolu_01ABCDEF",
    agent_id: "agent-7",
    agent_type: "general-purpose",
  },
  PostToolUse: {
    ...BASE,
    hook_event_name: "PostToolUse",
    tool_name: "mcp__tmux__list_panes",
    tool_input: {},
    tool_response: { complete: true, panes: [] },
    tool_use_id: "toolu_01ABCDEG",
  },
  PostToolUseFailure: {
    ...BASE,
    hook_event_name: "PostToolUseFailure",
    tool_name: "Bash",
    tool_input: { command: "false" },
    tool_use_id: "toolu_01ABCDEH",
    error: "exit status 1",
    is_interrupt: false,
  },
  UserPromptSubmit: {
    ...BASE,
    hook_event_name: "UserPromptSubmit",
    prompt: "run the tests in the right-hand pane",
  },
  Stop: { ...BASE, hook_event_name: "Stop", stop_hook_active: false },
  SubagentStop: {
    ...BASE,
    hook_event_name: "SubagentStop",
    stop_hook_active: false,
    agent_id: "agent-7",
    agent_transcript_path: "/home/ada/.claude/projects/-home-ada-src/agent-7.jsonl",
    agent_type: "general-purpose",
  },
  PreCompact: {
    ...BASE,
    hook_event_name: "PreCompact",
    trigger: "auto",
    custom_instructions: null,
  },
  Notification: {
    ...BASE,
    hook_event_name: "Notification",
    message: "Claude needs your permission to use Bash",
    title: "Claude Code",
    notification_type: "permission_prompt",
  },
  SubagentStart: {
    ...BASE,
    hook_event_name: "SubagentStart",
    agent_id: "agent-7",
    agent_type: "general-purpose",
  },
  PermissionRequest: {
    ...BASE,
    hook_event_name: "PermissionRequest",
    tool_name: "Bash",
    tool_input: { command: "rm -rf build" },
    permission_suggestions: [{ type: "addRules", rules: [{ toolName: "Bash" }] }],
  },
};

/** A recorded input with some fields replaced (or, given `undefined`, removed). */
export function recorded(
  event: string,
  changes: Record<string, unknown> = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...RECORDED[event] };
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** A PreToolUse input for a tool call. */
export function toolCall(toolName: string, toolInput: Record<string, unknown>): string {
  return JSON.stringify(recorded("PreToolUse", { tool_name: toolName, tool_input: toolInput }));
}

/** `tmux-mcp hook guard` asked about a call of the server's `tool`, in `env`: its exit and output. */
export async function guardCall(
  env: Record<string, string>,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ code: number } & Captured> {
  const { io, out } = memoryIo(toolCall(`mcp__tmux__${tool}`, args), env);
  const code = await runHook(["guard"], io);
  return { code, ...out };
}

/** What a hook run wrote. */
export interface Captured {
  /** Everything written to stdout. */
  stdout: string;
  /** The lines written to stderr. */
  stderr: string[];
}

/**
 * An in-memory {@link HookIo}: `stdin` is what the hook reads (null: a terminal), `env` all
 * the environment it sees; the result collects what it writes.
 */
export function memoryIo(
  stdin: string | Uint8Array | null,
  env: Record<string, string> = {},
): { io: Partial<HookIo>; out: Captured } {
  const out: Captured = { stdout: "", stderr: [] };
  const bytes = typeof stdin === "string" ? new TextEncoder().encode(stdin) : stdin;
  return {
    io: {
      readStdin: (limit) => Promise.resolve(bytes === null ? null : bytes.subarray(0, limit + 1)),
      env: (name) => env[name],
      writeStdout: (text) => {
        out.stdout += text;
        return Promise.resolve();
      },
      writeStderr: (line) => {
        out.stderr.push(line);
      },
    },
    out,
  };
}

/** `TMUX` and `TMUX_PANE` as tmux sets them for a process in `paneId`. */
export function agentEnv(
  facts: { socketPath: string; pid: number },
  paneId: string,
): Record<string, string> {
  return { TMUX: `${facts.socketPath},${facts.pid},0`, TMUX_PANE: paneId };
}

/** Checks stdout is exactly one JSON object made of seed 002's PreToolUse output fields. */
export function seedDecision(stdout: string): {
  permissionDecision: string;
  permissionDecisionReason: string;
} {
  assert.ok(stdout.endsWith("\n") && !stdout.slice(0, -1).includes("\n"), "one line");
  const value = JSON.parse(stdout);
  assert.deepEqual(Object.keys(value), ["hookSpecificOutput"]);
  const out = value.hookSpecificOutput;
  assert.deepEqual(Object.keys(out).sort(), [
    "hookEventName",
    "permissionDecision",
    "permissionDecisionReason",
  ]);
  assert.equal(out.hookEventName, "PreToolUse");
  assert.ok(["ask", "deny"].includes(out.permissionDecision));
  assert.equal(typeof out.permissionDecisionReason, "string");
  return out;
}

/**
 * Kills a test server and starts a new one on the same socket with one session: a server
 * restarted under a process whose `TMUX` names the old one. Waits until the old server no
 * longer answers (a client that connects while it is exiting fails). Returns the new first
 * pane's id, which tmux gives out again from %0.
 */
export async function restartServer(t: TestTmux, session: string): Promise<string> {
  await t.tmuxRaw("kill-server");
  await waitFor(async () => {
    const r = await t.tmuxRaw("list-sessions");
    return r.code !== 0 && /^(no server running|error connecting)/.test(r.stderr);
  }, "the old server to be gone");
  return (await t.tmux("new-session", "-d", "-s", session, "-P", "-F", "#{pane_id}", "sh")).trim();
}

/**
 * The guard's judgment of one call on `t` ("ask" mode), with the tmux processes it started to
 * reach it: one snapshot serves a whole call, however many batch rows it holds.
 */
export async function guardStarts(
  t: TestTmux,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ reason: string | undefined; runs: string[][] }> {
  const runner = new RecordingRunner();
  try {
    const home = { address: { socketName: t.socket }, named: true };
    const decision = await guard(runner, null, home, tool, args, "ask");
    return { reason: decision?.hookSpecificOutput.permissionDecisionReason, runs: runner.started };
  } finally {
    await runner.close();
  }
}
