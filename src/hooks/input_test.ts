import assert from "node:assert/strict";
import { HookInputError, KNOWN_EVENTS, MAX_INPUT_BYTES, parseHookInput } from "./input.ts";
import { RECORDED, recorded } from "./testing.ts";

const bytes = (value: unknown): Uint8Array =>
  new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));

function rejects(value: unknown | Uint8Array, ...fragments: string[]): string {
  const input = value instanceof Uint8Array ? value : bytes(value);
  try {
    parseHookInput(input);
  } catch (error) {
    assert.ok(error instanceof HookInputError, String(error));
    assert.ok(!error.message.includes("\n"), "one line");
    for (const f of fragments) assert.ok(error.message.includes(f), `${error.message} ∌ ${f}`);
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(value)}`);
}

Deno.test("every event of the seed is known and its recorded input is accepted", () => {
  assert.deepEqual([...KNOWN_EVENTS].sort(), Object.keys(RECORDED).sort());
  for (const [event, input] of Object.entries(RECORDED)) {
    const parsed = parseHookInput(bytes(input));
    assert.equal(parsed.hookEventName, event);
    assert.equal(parsed.knownEvent, true);
    assert.deepEqual(parsed.fields, input);
  }
});

Deno.test("optional fields may be left out; unknown extra fields are ignored", () => {
  const minimal = recorded("Notification", { title: undefined, permission_mode: undefined });
  assert.equal(parseHookInput(bytes(minimal)).hookEventName, "Notification");
  const extra = recorded("Stop", { future_field: { nested: [1, 2] }, another: "x" });
  assert.deepEqual(parseHookInput(bytes(extra)).fields.future_field, { nested: [1, 2] });
  const noAgent = recorded("PreToolUse", { agent_id: undefined, agent_type: undefined });
  assert.equal(parseHookInput(bytes(noAgent)).hookEventName, "PreToolUse");
});

Deno.test("an event the seed does not know is accepted on its base fields", () => {
  const input = recorded("Stop", { hook_event_name: "SessionEnd", stop_hook_active: undefined });
  const parsed = parseHookInput(bytes(input));
  assert.equal(parsed.hookEventName, "SessionEnd");
  assert.equal(parsed.knownEvent, false);
  rejects(recorded("Stop", { hook_event_name: "SessionEnd", cwd: undefined }), "missing cwd");
});

Deno.test("missing required fields are reported by name, all of them", () => {
  rejects(
    recorded("PreToolUse", { tool_input: undefined, tool_use_id: undefined }),
    "PreToolUse input",
    "tool_input",
    "tool_use_id",
  );
  rejects(recorded("Notification", { message: undefined }), "missing message");
  rejects(recorded("Notification", { notification_type: undefined }), "notification_type");
  rejects(recorded("SubagentStop", { agent_transcript_path: undefined }), "agent_transcript_path");
  rejects(recorded("PreCompact", { custom_instructions: undefined }), "custom_instructions");
  rejects(recorded("Stop", { session_id: undefined, transcript_path: undefined }), "session_id");
  rejects(recorded("Stop", { hook_event_name: undefined }), "hook input", "hook_event_name");
});

Deno.test("fields of the wrong type are refused with their name", () => {
  rejects(recorded("PreToolUse", { tool_input: "ls" }), "tool_input must be an object");
  rejects(recorded("PreToolUse", { tool_input: [1] }), "tool_input must be an object");
  rejects(recorded("PreToolUse", { tool_input: null }), "tool_input must be an object, not null");
  rejects(recorded("Stop", { stop_hook_active: "false" }), "stop_hook_active must be a boolean");
  rejects(recorded("PreCompact", { trigger: "sometimes" }), "trigger must be");
  rejects(recorded("Notification", { title: 3 }), "title must be a string");
  rejects(recorded("Stop", { hook_event_name: 7 }), "hook_event_name must be a string");
  rejects(recorded("PermissionRequest", { permission_suggestions: {} }), "must be an array");
  assert.equal(
    parseHookInput(bytes(recorded("PreCompact", { custom_instructions: "keep tests" })))
      .hookEventName,
    "PreCompact",
  );
});

Deno.test("stdin that is no JSON object is refused in one line", () => {
  rejects(new Uint8Array(), "no hook input");
  rejects("{", "not JSON");
  rejects("[]", "an array, not a JSON object");
  rejects("null", "null, not a JSON object");
  rejects('"Stop"', "a string, not a JSON object");
  rejects(new Uint8Array([0x7b, 0xff, 0x7d]), "not valid UTF-8");
  rejects(
    new Uint8Array(MAX_INPUT_BYTES + 1).fill(0x20),
    `larger than ${MAX_INPUT_BYTES} bytes`,
  );
});
