/**
 * Arguments for the fuzz (scripts/fuzz.ts): for any tool, an object its input schema accepts,
 * drawn from a seeded generator and biased to the values that have broken things before.
 *
 * It works from the schemas of src/mcp/tool_list.json alone, so a tool added later is fuzzed
 * without editing this file; what it knows beyond the schemas is where values come from. Ids
 * are mostly ones that exist now, or the world's special panes (the person's, the agent's, a
 * dead one, one in copy mode), sometimes ones that existed earlier or never did. Strings are
 * edge cases (quotes, `;`, `#{...}` formats, lone surrogates, NUL, escape sequences, long
 * runs), names that exist, or a `#(touch ...)` job whose marker file says if a shell ever ran
 * it. Numbers sit on the bounds. A few tools get help to reach past their first refusal
 * (a hook name that exists, one of pipe_pane's three exclusive modes).
 *
 * Paths and socket names stay within the run: paths under its folder (or `/`, `/dev/null`,
 * and a folder that does not exist), socket names the run's own servers (a call given an SSH
 * `host`, which the schemas offer when the server runs with --ssh, always names one).
 *
 * @module
 */

import { TASK_TOOLS } from "../../src/mcp/tasks.ts";
import type { Rand } from "./prng.ts";
import type { MarkerBox } from "./robust.ts";
import type { FuzzWorld, Present } from "./fuzz_world.ts";
import {
  EDGE,
  ENV_NAMES,
  HOOK_NAMES,
  KEYS,
  OPTION_NAMES,
  OPTION_VALUES,
  SHELL_COMMANDS,
  TMUX_COMMANDS,
} from "./fuzz_values.ts";

/** A JSON object. */
export type Json = Record<string, unknown>;

/** A tool as tools/list describes it. */
export interface FuzzTool {
  readonly name: string;
  readonly inputSchema: Json;
  readonly outputSchema?: Json;
}

/**
 * One tool call, or one move (a request that is no tool call: its `tool` is the method, its
 * `arguments` the params; tests/helpers/fuzz_protocol.ts): what the fuzz sends, and what a
 * reproduction prints.
 */
export interface FuzzCall {
  readonly tool: string;
  readonly arguments: Json;
  /** Run as a task, where the protocol version has them (see {@link TaskPlan}). */
  readonly task?: TaskPlan;
  /** Sent with a progress token (`_meta.progressToken`). */
  readonly progress?: boolean;
  /** A `subscriptions/listen` stream: cancelled this long after its acknowledgement. */
  readonly holdMs?: number;
}

/**
 * How a tool call that waits is run as a task: its `ttl` (2025-11-25 asks with it), and a
 * `tasks/cancel` this long after it began (none when absent).
 */
export interface TaskPlan {
  readonly ttl?: number;
  readonly cancelAfterMs?: number;
}

/** The prompts the server offers (src/tools/prompts.ts), and their arguments' names. */
const PROMPTS: Record<string, readonly string[]> = {
  run_and_watch: ["paneId", "command"],
  find_error: ["paneId", "text"],
  workspace: ["directory", "name", "windows"],
  check_agents: ["session"],
};

/** Names of number properties that are durations: kept short, so that a run ends. */
const DURATION = /timeout|waitMs|quietMs/i;

type IdKind = "panes" | "windows" | "sessions";

/** Where {@link ArgumentMaker} draws from, besides its generator. */
export interface ArgumentSources {
  readonly rand: Rand;
  /** Every tool, for call_tools_batch's operations. */
  readonly tools: readonly FuzzTool[];
  /** The run's folder: every path given points inside it (or at `/`, `/dev/null`). */
  readonly dir: string;
  /** Where `#(touch ...)` payloads point; each labelled with the call that carried it. */
  readonly markers: MarkerBox;
  /** A socket name of this run with no server on it (until a tool starts one). */
  readonly spareSocket: string;
  /**
   * The longest duration (timeoutMs, waitMs, quietMs) to give, and then always given (a
   * tool's default wait may be long); undefined: any, or none at all.
   */
  readonly maxWaitMs?: number;
  /** An SSH destination the server reaches (`--ssh`): every call, and every row, names it. */
  readonly host?: string;
}

/** Makes arguments against one world at a time; ids it has seen stay in its pools. */
export class ArgumentMaker {
  readonly #s: ArgumentSources;
  readonly #r: Rand;
  #world!: FuzzWorld;
  #now: Present = { panes: [], windows: [], sessions: [], names: [], buffers: [] };
  readonly #seen = {
    panes: new Set<string>(),
    windows: new Set<string>(),
    sessions: new Set<string>(),
  };
  #jobs: string[] = [];
  #cursors: string[] = [];
  /** The label markers made now carry: the call being built. */
  #label = "";

  constructor(sources: ArgumentSources) {
    this.#s = sources;
    this.#r = sources.rand;
  }

  /** A new world: job ids and cursors of the old one are forgotten, its ids are not. */
  useWorld(world: FuzzWorld): void {
    this.#world = world;
    this.#jobs = [];
    this.#cursors = [];
  }

  /** What exists now (read after each call). */
  observe(now: Present): void {
    this.#now = now;
    for (const kind of ["panes", "windows", "sessions"] as const) {
      for (const id of now[kind]) this.#seen[kind].add(id);
    }
  }

  /** Job ids and cursors a result gave: later calls pass them back. */
  learn(structured: Json | undefined): void {
    if (!structured) return;
    if (typeof structured.jobId === "string") this.#jobs.push(structured.jobId);
    for (const key of ["cursor", "nextCursor"]) {
      if (typeof structured[key] === "string") this.#cursors.push(structured[key] as string);
    }
  }

  /**
   * How a call of `tool` runs as a task, or undefined for a plain call: now and then, for
   * the tools that may (a protocol version without tasks is asked anyway, and must answer
   * plainly).
   */
  taskFor(tool: string): TaskPlan | undefined {
    const r = this.#r;
    if (!TASK_TOOLS.has(tool) || !r.chance(0.4)) return undefined;
    return {
      ...r.chance(0.5) && { ttl: r.pick([0, 1_000, 60_000, 2 ** 40, 1.5]) },
      ...r.chance(0.3) && { cancelAfterMs: r.pick([0, 50, 300, 700]) },
    };
  }

  /**
   * A move: a request that is no tool call (`method` one of fuzz_protocol.ts's MOVES), with
   * params biased as a tool's arguments are. `taskIds`: the ids the server handed out. A
   * resource URI names a socket of the run, or one no tmux server could have (over SSH,
   * always the world's, with its host: one tmux server is not reached by two routes).
   */
  move(method: string, label: string, taskIds: readonly string[]): FuzzCall {
    this.#label = label;
    const r = this.#r;
    const taskId = () =>
      taskIds.length && r.chance(0.7)
        ? r.pick(taskIds)
        : r.chance(0.5)
        ? crypto.randomUUID()
        : this.#free(200);
    let params: Json;
    switch (method) {
      case "resources/read":
      case "resources/subscribe":
      case "resources/unsubscribe":
        params = { uri: r.chance(0.97) ? this.#uri() : r.pick([5, null, {}]) };
        break;
      case "subscriptions/listen": {
        const uris = Array.from({ length: r.int(4) }, () => this.#uri());
        params = {
          notifications: {
            resourceSubscriptions: r.chance(0.95) ? uris : r.pick([null, "tmux://server", [5]]),
            ...r.chance(0.3) && { resourcesListChanged: true },
          },
        };
        return { tool: method, arguments: params, holdMs: r.pick([0, 50, 300, 1_000]) };
      }
      case "resources/list":
      case "resources/templates/list":
      case "prompts/list":
      case "tasks/list":
        params = r.chance(0.8) ? {} : { cursor: this.#free(100) };
        break;
      case "prompts/get": {
        const name = r.chance(0.9) ? r.pick(Object.keys(PROMPTS)) : this.#free(100);
        const args: Json = {};
        const known = Object.hasOwn(PROMPTS, name) ? PROMPTS[name] : [];
        for (const arg of [...known, "extra"]) {
          if (!r.chance(0.7)) continue;
          args[arg] = arg === "paneId" && r.chance(0.7)
            ? this.#id("panes")
            : arg === "directory" && r.chance(0.7)
            ? this.#s.dir
            : r.chance(0.97)
            ? this.#free(2000)
            : 7;
        }
        params = { name, arguments: args };
        break;
      }
      case "completion/complete": {
        const ref = r.chance(0.6)
          ? {
            type: "ref/resource",
            uri: r.pick(["tmux://pane/{pane}", "tmux://job/{jobId}", "tmux://nope/{x}"]),
          }
          : {
            type: "ref/prompt",
            name: r.chance(0.9) ? r.pick(Object.keys(PROMPTS)) : this.#free(100),
          };
        const name = r.pick([
          "pane",
          "jobId",
          "paneId",
          "session",
          "directory",
          "constructor",
          "__proto__",
          this.#free(50),
        ]);
        params = { ref, argument: { name, value: r.chance(0.4) ? "" : this.#free(200) } };
        break;
      }
      case "tasks/get":
      case "tasks/cancel":
      case "tasks/result":
        params = { taskId: taskId() };
        break;
      case "logging/setLevel":
        params = { level: r.pick(["debug", "info", "warning", "error", "emergency", "loud"]) };
        break;
      default:
        params = {};
    }
    return { tool: method, arguments: params };
  }

  /** A `tmux://` URI: mostly one of the resources there are, with a socket of the run. */
  #uri(): string {
    const r = this.#r;
    const c = r.int(20);
    const job = () =>
      this.#jobs.length && r.chance(0.7)
        ? r.pick(this.#jobs)
        : encodeURIComponent(this.#free(100).toWellFormed());
    let uri = c < 11
      ? `tmux://pane/${this.#id("panes").slice(1)}`
      : c < 13
      ? "tmux://server"
      : c < 15
      ? "tmux://agents"
      : c < 17
      ? `tmux://job/${job()}`
      : c < 18
      ? `tmux://pane/${encodeURIComponent(this.#free(100).toWellFormed())}`
      : c < 19
      ? r.pick([
        "tmux://nope",
        "file:///etc/passwd",
        "tmux://pane/",
        "tmux://pane/1/2",
        "TMUX://PANE/1",
        "tmux://server#x",
        "tmux://server?x=1",
        "not a uri",
        "",
      ])
      : this.#free(300);
    if (this.#s.host !== undefined) {
      const q = uri.includes("?") ? "&" : "?";
      return `${uri}${q}host=${this.#s.host}&socket=${this.#world.t.socket}`;
    }
    const q = r.int(10);
    if (q < 6) return uri;
    // Never the name of a server outside the run: a read would reach it.
    const socket = q < 8
      ? this.#world.t.socket
      : q < 9
      ? this.#s.spareSocket
      : r.pick(["", "a/b", "\u0001", "x y/z"]);
    uri += `${uri.includes("?") ? "&" : "?"}socket=${encodeURIComponent(socket)}`;
    if (r.chance(0.1)) uri += `&host=${encodeURIComponent(this.#free(50).toWellFormed())}`;
    return uri;
  }

  /** Arguments for `tool`; `label` names the call in the markers it carries. */
  argumentsFor(tool: FuzzTool, label: string): Json {
    this.#label = label;
    if (tool.name === "call_tools_batch") return this.#batch();
    return this.#fixup(tool.name, this.#gen(tool.inputSchema, tool.name, 0) as Json);
  }

  #batch(): Json {
    const r = this.#r;
    const n = r.pick([1, 1, 2, 3, 16]);
    const inner = this.#s.tools.filter((x) => x.name !== "kill_server");
    // Over SSH the batch names the host too (its rows' default): a nested one's row has none.
    const host = this.#s.host === undefined
      ? {}
      : { host: this.#s.host, socket_name: this.#world.t.socket };
    const operations = [];
    for (let i = 0; i < n; i++) {
      const tool = r.pick(inner);
      operations.push({
        tool: r.chance(0.95) ? tool.name : this.#free(100),
        arguments: tool.name === "call_tools_batch"
          ? { operations: [{ tool: "list_panes", arguments: {} }], ...host }
          : this.argumentsFor(tool, this.#label),
      });
    }
    const args: Json = { operations, ...host };
    if (r.chance(0.5)) args.onError = r.pick(["stop", "continue"]);
    return args;
  }

  #id(kind: IdKind): string {
    const r = this.#r;
    const w = this.#world;
    const sigil = kind === "panes" ? "%" : kind === "windows" ? "@" : "$";
    const special = kind === "panes"
      ? [...w.personPanes, ...w.personPanes, w.agentPane, w.deadPane, w.copyPane]
      : kind === "windows"
      ? [w.personWindow, w.personWindow, w.linkedWindow]
      : [w.personSession, w.agentSession];
    const c = r.int(10);
    if (c < 4 && this.#now[kind].length) return r.pick(this.#now[kind]);
    if (c < 7) return r.pick(special);
    if (c < 8 && this.#seen[kind].size) return r.pick([...this.#seen[kind]]);
    const number = r.pick([
      "0",
      "99999",
      "2147483647",
      "2147483648",
      "99999999999999999999",
      "007",
      String(r.int(60)),
    ]);
    return sigil + number;
  }

  #marker(): string {
    return this.#s.markers.payload(this.#label);
  }

  /** A string of at most `maxLength` characters, mostly an edge case. */
  #free(maxLength = 20_000): string {
    const r = this.#r;
    const c = r.int(20);
    let s: string;
    if (c < 9) s = r.pick(EDGE);
    else if (c < 13) s = r.pick(EDGE) + r.pick(EDGE) + r.pick(EDGE);
    else if (c < 14) s = this.#marker();
    else if (c < 15) s = "x".repeat(r.pick([255, 256, 1000, 4096, 16384, maxLength]));
    else if (c < 16) {
      s = r.pick(["'", "\\", "#", ";", "😀", "\n", '"']).repeat(r.pick([10, 100, 1000, 5000]));
    } else if (c < 18) s = this.#now.names.length ? r.pick(this.#now.names) : "main";
    else {
      s = Array.from(
        { length: 1 + r.int(12) },
        () =>
          String.fromCharCode(r.pick([
            32 + r.int(95),
            r.int(32),
            0x80 + r.int(0x780),
            0xd800 + r.int(0x800),
            0x1f600 + r.int(50),
          ])),
      ).join("");
    }
    return s.slice(0, maxLength);
  }

  #patterned(pattern: string, name: string): string | undefined {
    const r = this.#r;
    const dir = this.#s.dir;
    if (pattern === "^%\\d+$") return this.#id("panes");
    if (pattern === "^@\\d+$") return this.#id("windows");
    if (pattern === "^[%@$]\\d+$") {
      return this.#id(r.pick(["panes", "windows", "sessions"] as const));
    }
    if (pattern === "^\\/") {
      return r.pick([
        "/",
        "/dev/null",
        dir,
        `${dir}/no such folder/x`,
        `${dir}/a b`,
        `${dir}/${this.#marker()}`,
        `${dir}/${"x".repeat(5000)}`,
        `${dir}/x;y`,
        `${dir}/\n`,
        `${dir}/pipe-${r.int(9)}`,
        `${dir}/'q'`,
        `${dir}/😀`,
      ]);
    }
    if (name === "socket_name" || name === "socketNames") {
      return r.pick([this.#world.t.socket, this.#s.spareSocket]);
    }
    if (pattern.startsWith("^[A-Za-z0-9_][A-Za-z0-9_.:@+=-]")) {
      return r.pick(["c", "chan.1", "a:b@c+d=e-f", "_" + "x".repeat(127), "0"]);
    }
    if (pattern.startsWith("^\\d{1,9}-")) {
      if (this.#jobs.length && r.chance(0.6)) return r.pick(this.#jobs);
      const hex = Array.from({ length: 20 }, () => "0123456789abcdef"[r.int(16)]).join("");
      return `${r.int(999999999) + 1}-${hex}-a-b-c-d-e`;
    }
    if (pattern.startsWith("^(?:@[A-Za-z0-9_.-]")) return r.pick(OPTION_NAMES);
    if (pattern === "^[A-Za-z_][A-Za-z0-9_]{0,255}$") {
      return r.pick([
        "FOO",
        "PATH",
        "TMUX",
        "TMUX_PANE",
        "_",
        "A".repeat(256),
        "LD_PRELOAD",
        "HOME",
        "SHELL",
        "DISPLAY",
      ]);
    }
    if (pattern === "^[A-Za-z0-9_.-]{1,64}$") {
      return r.pick(["a", "buf", "x".repeat(64), "tmux-mcp-1", "-", ".", "..", "buffer0"]);
    }
    if (pattern === "^[1-9]\\d?%$") return r.pick(["1%", "50%", "99%", "9%"]);
    return undefined;
  }

  #number(schema: Json, name: string): number {
    const r = this.#r;
    const min = (schema.minimum as number | undefined) ?? Number.MIN_SAFE_INTEGER;
    let max = (schema.maximum as number | undefined) ?? Number.MAX_SAFE_INTEGER;
    const duration = DURATION.test(name);
    if (duration && this.#s.maxWaitMs !== undefined) max = Math.min(max, this.#s.maxWaitMs);
    const pool = duration
      ? [
        0,
        1,
        -1,
        50,
        200,
        500,
        1000,
        r.chance(0.05) ? 2 ** 31 : 300,
        r.chance(0.03) ? Number.MAX_SAFE_INTEGER : 100,
        -(2 ** 31),
      ]
      : [
        0,
        1,
        -1,
        2,
        3,
        10,
        80,
        100,
        10000,
        2 ** 31 - 1,
        -(2 ** 31) + 1,
        2 ** 31,
        Number.MAX_SAFE_INTEGER,
        Number.MIN_SAFE_INTEGER,
        min,
        max,
        min + 1,
        max - 1,
        r.int(200) - 100,
      ];
    return Math.min(max, Math.max(min, r.pick(pool)));
  }

  #string(schema: Json, name: string): string | undefined {
    const r = this.#r;
    if (schema.pattern) {
      const s = this.#patterned(schema.pattern as string, name);
      if (s !== undefined) return s;
      const re = new RegExp(schema.pattern as string, "u");
      for (let i = 0; i < 50; i++) {
        const c = this.#free();
        if (re.test(c)) return c;
      }
      return undefined;
    }
    const maxLength = (schema.maxLength as number | undefined) ?? 20_000;
    const minLength = (schema.minLength as number | undefined) ?? 0;
    const now = this.#now;
    let s: string;
    if (name === "hook_name") s = r.pick(HOOK_NAMES);
    else if (name === "session" || name === "fromSession" || name === "target") {
      const c = r.int(10);
      s = c < 3
        ? this.#id("sessions")
        : c < 5
        ? this.#id(r.pick(["panes", "windows"] as const))
        : c < 7 && now.names.length
        ? r.pick(now.names)
        : this.#free(maxLength);
    } else if (name === "bufferName") {
      s = r.chance(0.6) && now.buffers.length ? r.pick(now.buffers) : this.#free(maxLength);
    } else if (name === "layout") {
      s = r.pick([
        "tiled",
        "even-horizontal",
        "main-vertical",
        "nosuch",
        "80x24,0,0,1",
        "b25d,80x24,0,0{40x24,0,0,1,39x24,41,0,2}",
        this.#free(maxLength),
      ]);
    } else if (name === "cursor" || name === "since") {
      s = r.chance(0.5) && this.#cursors.length ? r.pick(this.#cursors) : this.#free(maxLength);
    } else if (name === "command" && r.chance(0.3)) s = r.pick(TMUX_COMMANDS);
    else if (name === "format") {
      s = r.chance(0.5)
        ? r.pick([
          "#{pane_id}",
          "#{session_name} #{window_index}",
          "#{p10000:x}",
          "#{E:pane_title}",
          "#{T:status-left}",
          "#{s/a/b/:pane_title}",
          "#{m/r:a+,aaa}",
          "#{client_width}",
          "#{l:#{pane_id}}",
          "#{n:pane_title}",
        ])
        : this.#free(maxLength);
    } else s = this.#free(maxLength);
    while (s.length < minLength) s += "a";
    return s.slice(0, maxLength);
  }

  #gen(schema: Json, name: string, depth: number): unknown {
    const r = this.#r;
    if (schema.anyOf) return this.#gen(r.pick(schema.anyOf as Json[]), name, depth);
    if (schema.enum) return r.pick(schema.enum as unknown[]);
    if (schema.const !== undefined) return schema.const;
    switch (schema.type) {
      case "null":
        return null;
      case "boolean":
        return r.chance(0.5);
      case "integer":
      case "number":
        return this.#number(schema, name);
      case "string":
        return this.#string(schema, name);
      case "array": {
        const maxItems = (schema.maxItems as number | undefined) ?? 8;
        const minItems = (schema.minItems as number | undefined) ?? 0;
        const n = r.pick([minItems, minItems, minItems + 1, Math.min(maxItems, 3), maxItems]);
        if (name === "keys") {
          return Array.from(
            { length: Math.min(n, 6) },
            () => r.chance(0.7) ? r.pick(KEYS) : this.#free(32) || "a",
          );
        }
        const items: unknown[] = [];
        for (let i = 0; i < n; i++) {
          const v = this.#gen(schema.items as Json, name, depth + 1);
          if (v !== undefined) items.push(v);
        }
        return items;
      }
      case "object":
        return this.#object(schema, name, depth);
    }
    return undefined;
  }

  #object(schema: Json, name: string, depth: number): Json | undefined {
    const r = this.#r;
    if (name === "arguments" && depth > 0) return undefined; // call_tools_batch's: #batch
    const out: Json = {};
    const props = (schema.properties ?? {}) as Record<string, Json>;
    const required = new Set((schema.required ?? []) as string[]);
    const capped = this.#s.maxWaitMs !== undefined;
    for (const [key, prop] of Object.entries(props)) {
      const duration = DURATION.test(key) && prop.type !== "boolean";
      if (!required.has(key) && !(duration && capped) && !r.chance(duration ? 0.92 : 0.5)) {
        continue;
      }
      if (key === "socket_name" && !r.chance(0.1)) continue;
      const v = this.#gen(prop, key, depth + 1);
      if (v !== undefined) out[key] = v;
    }
    if (this.#s.host !== undefined && props.host !== undefined) out.host = this.#s.host;
    // Over SSH (a `host`, with --ssh) a call names a socket of the run, always: without one it
    // would reach the default tmux server of the machine the host is, which is no run's own.
    if (out.host !== undefined && props.socket_name !== undefined) {
      out.socket_name = r.chance(0.9) ? this.#world.t.socket : this.#s.spareSocket;
    }
    const extra = schema.additionalProperties;
    if (extra && typeof extra === "object" && !schema.properties) {
      const n = r.int(4);
      for (let i = 0; i < n; i++) {
        const key = r.chance(0.9) ? r.pick(ENV_NAMES) : r.pick(["a b", "", "=", "X=Y", "😀", "\n"]);
        out[key] = this.#free(2000);
      }
    }
    return out;
  }

  /** Steers most calls of a few tools past the refusal their random arguments would get. */
  #fixup(name: string, a: Json): Json {
    const r = this.#r;
    if (!r.chance(0.85)) return a;
    switch (name) {
      case "set_hook":
        a.name = r.chance(0.8) ? r.pick(HOOK_NAMES) : a.name;
        if (a.unset) delete a.command;
        else a.command ??= r.pick(TMUX_COMMANDS);
        break;
      case "set_option":
      case "show_option":
        if (r.chance(0.8)) a.unset = false;
        if (a.unset) delete a.value;
        else if (name === "set_option") {
          a.value = r.chance(0.75)
            ? (r.chance(0.03) ? this.#marker() : r.pick(OPTION_VALUES))
            : (a.value ?? "x");
        }
        if (r.chance(0.5)) delete a.target;
        break;
      case "set_environment":
        if (a.unset) delete a.value;
        else a.value ??= "v";
        break;
      case "pipe_pane": {
        const which = r.pick(["path", "command", "stop"]);
        for (const k of ["path", "command", "stop"]) if (k !== which) delete a[k];
        if (which === "stop") a.stop = true;
        if (which === "path") a.path ??= `${this.#s.dir}/pipe-out`;
        if (which === "command") a.command ??= "cat >/dev/null";
        break;
      }
      case "resize_pane":
        if ((a.direction === undefined) !== (a.amount === undefined)) {
          if (r.chance(0.5)) {
            delete a.direction;
            delete a.amount;
          } else {
            a.direction ??= "up";
            a.amount ??= 1;
          }
        }
        break;
      case "create_session":
      case "create_window":
      case "split_window":
      case "respawn_pane":
        // A pane's program that prints what a reader must not trust, or ends at once.
        if (r.chance(0.4)) a.command = r.pick(SHELL_COMMANDS);
        break;
      case "run_command":
        if (r.chance(0.6)) a.command = r.pick(SHELL_COMMANDS);
        if (r.chance(0.5)) {
          a.timeoutMs = Math.min(r.pick([0, 100, 1000, 3000]), this.#s.maxWaitMs ?? Infinity);
        }
        break;
    }
    return a;
  }
}
