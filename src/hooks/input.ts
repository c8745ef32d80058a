/**
 * Reading one hook input (seed 002, the Claude Agent SDK's `HookInput`) and checking it
 * against the seed's field lists before anything acts on it. Required fields missing are
 * reported by name; fields the seed does not list are ignored, so a newer agent that sends
 * more never breaks the hook.
 *
 * @module
 */

/** A field's type as the seed declares it. */
type FieldType = "string" | "boolean" | "object" | "array" | "any" | "string|null" | "trigger";

/** Required and optional fields of one input type (the base fields are added to each). */
interface InputSpec {
  readonly required: Readonly<Record<string, FieldType>>;
  readonly optional?: Readonly<Record<string, FieldType>>;
}

/** `BaseHookInput`: present in every input type. */
const BASE: InputSpec = {
  required: {
    session_id: "string",
    transcript_path: "string",
    cwd: "string",
    hook_event_name: "string",
  },
  optional: { permission_mode: "string" },
};

const SUBAGENT_OPTIONAL = { agent_id: "string", agent_type: "string" } as const;
const TOOL_CALL = { tool_name: "string", tool_input: "object", tool_use_id: "string" } as const;

/** Each event's own fields, from the seed's `*HookInput` classes. */
const EVENTS: Readonly<Record<string, InputSpec>> = {
  PreToolUse: { required: TOOL_CALL, optional: SUBAGENT_OPTIONAL },
  PostToolUse: { required: { ...TOOL_CALL, tool_response: "any" }, optional: SUBAGENT_OPTIONAL },
  PostToolUseFailure: {
    required: { ...TOOL_CALL, error: "string" },
    optional: { ...SUBAGENT_OPTIONAL, is_interrupt: "boolean" },
  },
  UserPromptSubmit: { required: { prompt: "string" } },
  Stop: { required: { stop_hook_active: "boolean" } },
  SubagentStop: {
    required: {
      stop_hook_active: "boolean",
      agent_id: "string",
      agent_transcript_path: "string",
      agent_type: "string",
    },
  },
  PreCompact: { required: { trigger: "trigger", custom_instructions: "string|null" } },
  Notification: {
    required: { message: "string", notification_type: "string" },
    optional: { title: "string" },
  },
  SubagentStart: { required: { agent_id: "string", agent_type: "string" } },
  PermissionRequest: {
    required: { tool_name: "string", tool_input: "object" },
    optional: { ...SUBAGENT_OPTIONAL, permission_suggestions: "array" },
  },
};

/** The event names the seed defines. */
export const KNOWN_EVENTS: readonly string[] = Object.keys(EVENTS);

/**
 * A checked hook input. The fields the commands read are typed; everything else stays in
 * `fields` untouched. An event the seed does not know (the TypeScript SDK has more) is
 * accepted on its base fields alone: any command accepts any event's input.
 */
export interface HookInput {
  readonly hookEventName: string;
  /** Whether the seed defines this event (its own fields were then checked too). */
  readonly knownEvent: boolean;
  /** Every field as received. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Malformed or unexpected input: one line that says what is wrong. */
export class HookInputError extends Error {
  /** An input error with its one-line reason. */
  constructor(message: string) {
    super(message);
    this.name = "HookInputError";
  }
}

/**
 * The most stdin a hook takes (a `tool_input` can carry a large paste): above what the MCP
 * server takes in one request (32 MiB), so every call the server could run can be judged.
 */
export const MAX_INPUT_BYTES = 48 * 1024 * 1024;

/**
 * Tells where one JSON object or array ends in bytes read piece by piece (strings and their
 * escapes skipped), so that a hook answers once its input is whole, even when the agent keeps
 * its stdin open.
 */
export class JsonEnd {
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Whether the first value has ended. */
  done = false;

  /** Reads on through `bytes`. */
  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && !this.done; i++) {
      const b = bytes[i];
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (b === 0x5c) this.#escaped = true;
        else if (b === 0x22) this.#inString = false;
      } else if (b === 0x22) this.#inString = true;
      else if (b === 0x7b || b === 0x5b) this.#depth++;
      else if ((b === 0x7d || b === 0x5d) && --this.#depth === 0) this.done = true;
    }
  }
}

/**
 * Parses and checks the bytes read from stdin. Throws {@link HookInputError} naming every
 * missing required field and every field of the wrong type, so one run tells the whole story.
 */
export function parseHookInput(bytes: Uint8Array): HookInput {
  if (bytes.length === 0) {
    throw new HookInputError("no hook input on stdin (expected one JSON object).");
  }
  if (bytes.length > MAX_INPUT_BYTES) {
    throw new HookInputError(`hook input is larger than ${MAX_INPUT_BYTES} bytes.`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new HookInputError("hook input is not valid UTF-8.");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new HookInputError(`hook input is not JSON: ${why}`);
  }
  if (!isObject(value)) {
    throw new HookInputError(`hook input is ${describe(value)}, not a JSON object.`);
  }
  const event = value.hook_event_name;
  const spec = typeof event === "string" ? EVENTS[event] : undefined;
  const problems = [
    ...check(value, BASE),
    ...(spec ? check(value, spec) : []),
  ];
  if (problems.length > 0) {
    const name = typeof event === "string" ? `${event} input` : "hook input";
    throw new HookInputError(`${name}: ${problems.join("; ")}.`);
  }
  return { hookEventName: event as string, knownEvent: spec !== undefined, fields: value };
}

function check(value: Record<string, unknown>, spec: InputSpec): string[] {
  const missing = Object.keys(spec.required).filter((k) => !(k in value));
  const problems = missing.length > 0 ? [`missing ${missing.join(", ")}`] : [];
  const typed = { ...spec.optional, ...spec.required };
  for (const [key, type] of Object.entries(typed)) {
    if (!(key in value)) continue;
    if (!hasType(value[key], type)) {
      problems.push(`${key} must be ${TYPE_NAMES[type]}, not ${describe(value[key])}`);
    }
  }
  return problems;
}

const TYPE_NAMES: Record<FieldType, string> = {
  string: "a string",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  any: "any value",
  "string|null": "a string or null",
  trigger: '"manual" or "auto"',
};

function hasType(value: unknown, type: FieldType): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
    case "any":
      return true;
    case "string|null":
      return value === null || typeof value === "string";
    case "trigger":
      return value === "manual" || value === "auto";
  }
}

/** A plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}
