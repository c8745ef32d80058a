/**
 * Shared machinery of the robustness corpus (tests/robustness_*_test.ts): a tmux fixture with
 * panes the guards must protect, bad arguments generated from a tool's JSON input schema,
 * marker files that prove no `#(...)` ever ran, and the figures the corpus reports.
 *
 * The generator works from `tools/list` alone, so a tool added later is covered without
 * editing the corpus: every property gets wrong types, odd strings and bad numbers, every
 * required property goes missing once, unknown fields are added, and fields that name panes,
 * windows or sessions get ids of objects that never existed, that just died, or that the
 * guards protect.
 *
 * @module
 */

import assert from "node:assert/strict";
import { warn } from "../../src/diagnostics.ts";
import type { CallerEnv } from "../../src/tmux/identity.ts";
import { sh, TestTmux, waitFor } from "./tmux.ts";

// ---------------------------------------------------------------------------------------------
// Figures

/** What the corpus counts; the issue asks for these numbers, kept honest by CI. */
export interface Figures {
  /** Tool calls (and protocol messages) made with bad input. */
  inputs: number;
  /**
   * Calls after which the server process was gone, or that ended in an unexpected exception
   * (an "Internal error" result). A JSON-RPC error with the wrong code is a problem of its
   * own, not a crash.
   */
  crashes: number;
  /** Calls that did not end within their own bound. */
  hangs: number;
  /** Marker files that appeared: a `#(touch ...)` that a shell ran. */
  shellExecutions: number;
  /** Guarded panes whose content changed. */
  guardedKeystrokes: number;
}

/** Fresh zeroed figures. */
export function newFigures(): Figures {
  return { inputs: 0, crashes: 0, hangs: 0, shellExecutions: 0, guardedKeystrokes: 0 };
}

/** Prints figures on stderr (the test runner shows it), one line, so CI logs carry them. */
export function reportFigures(label: string, figures: Figures, extra: string = ""): void {
  warn(
    `[robustness] ${label}: inputs tried ${figures.inputs}, crashes ${figures.crashes}, ` +
      `hangs ${figures.hangs}, shell executions ${figures.shellExecutions}, keystrokes into ` +
      `guarded panes ${figures.guardedKeystrokes}${extra ? `, ${extra}` : ""}`,
  );
}

/** Control characters a terminal acts on (C0 but tab and newline, DEL, C1). */
// deno-lint-ignore no-control-regex
export const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/**
 * Why an error text is not a readable reason, or null when it is: empty, a stack trace,
 * "undefined", "[object Object]", raw control characters, or so long no one reads it.
 */
export function unreadable(text: string): string | null {
  if (text.trim() === "") return "empty error text";
  if (/\n\s+at /.test(text) || /\bat .*\.(ts|js):\d+/.test(text)) return "a stack trace";
  if (/\bundefined\b/.test(text)) return 'the word "undefined"';
  if (text.includes("[object Object]")) return '"[object Object]"';
  if (RAW_CONTROL.test(text)) return "raw control characters";
  if (text.length > 8_000) return `${text.length} characters long`;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Processes

/**
 * The tmux client processes started for `socket` by anyone but the test's own helpers (those
 * carry `-f /dev/null`; the MCP server's never do).
 */
export async function tmuxClientsOf(socket: string): Promise<string[]> {
  const r = await sh("pgrep", ["-af", `tmux -u -L ${socket}( |$)`], { allowFail: true });
  return r.stdout.split("\n").filter((l) => l.trim() !== "" && !l.includes(" -f /dev/null"));
}

/**
 * Resident set size of a process in KiB (0 when it is gone), from `ps`: reading another
 * process's /proc files needs --allow-all under Deno, which the test task does not grant.
 */
export async function rssKiB(pid: number): Promise<number> {
  const r = await sh("ps", ["-o", "rss=", "-p", String(pid)], { allowFail: true });
  return Number(r.stdout.trim()) || 0;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------
// Marker files

/**
 * A private folder for marker files. `payload()` is a `#(touch <file>)` shell job naming a
 * new file there; the corpus passes it wherever a string goes and checks, after a settle
 * delay, that the folder stayed empty. Each payload names its own file, so a hit says which
 * call ran it.
 */
export class MarkerBox {
  readonly dir: string;
  readonly #labels = new Map<string, string>();
  #n = 0;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** A new, empty marker folder, unique to this run; inside `parent` when given. */
  static async create(parent?: string): Promise<MarkerBox> {
    return new MarkerBox(
      await Deno.makeTempDir({ dir: parent, prefix: "tmux-mcp-robust-markers-" }),
    );
  }

  /** A marker path; `label` says which input carries it. */
  path(label: string): string {
    const file = `${this.dir}/m${++this.#n}`;
    this.#labels.set(file.slice(this.dir.length + 1), label);
    return file;
  }

  /** `#(touch <path>)`. */
  payload(label: string): string {
    return `#(touch ${this.path(label)})`;
  }

  /** The labels of every marker that appeared so far. */
  async hits(): Promise<string[]> {
    const found: string[] = [];
    for await (const entry of Deno.readDir(this.dir)) {
      found.push(`${entry.name} (${this.#labels.get(entry.name) ?? "unknown input"})`);
    }
    return found;
  }

  /** Removes the folder. */
  async remove(): Promise<void> {
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// The fixture: a tmux server with work panes and guarded panes

/** Prints READY five times a second and signals the channel `robust-chan`: waits end soon. */
const TICKER = "while :; do echo READY; tmux wait-for -S robust-chan; sleep 0.2; done";

/** The channel the ticker signals. */
export const TICKER_CHANNEL = "robust-chan";

type Started = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

/** Ids of one session with one window and one pane. */
export interface Trio {
  readonly sessionId: string;
  readonly windowId: string;
  readonly paneId: string;
}

async function newSession(t: TestTmux, name: string, command?: string): Promise<Trio> {
  const out = await t.tmux(
    "new-session",
    "-d",
    "-s",
    name,
    "-x",
    "100",
    "-y",
    "30",
    "-P",
    "-F",
    "#{session_id} #{window_id} #{pane_id}",
    ...(command ? [command] : []),
  );
  const [sessionId, windowId, paneId] = out.trim().split(" ");
  return { sessionId, windowId, paneId };
}

/**
 * Waits until each pane's foreground process is `shell` and it has drawn its prompt (the cursor
 * left column 0): a prompt run_command can use, and keys typed reach a line editor set up. The
 * name alone is not enough: tmux reports a pane's start command as its current command until a
 * process holds its terminal (and an `sh -c` still printing is sh too).
 */
export async function shellsReady(
  t: TestTmux,
  panes: readonly string[],
  shell = "sh",
): Promise<void> {
  const wanted = new Set(panes);
  await waitFor(async () => {
    const r = await t.tmuxRaw(
      "list-panes",
      "-a",
      "-F",
      "#{pane_id} #{cursor_x} #{pane_current_command}",
    );
    const ready = r.stdout.split("\n").map((l) => l.split(" "))
      .filter(([, x, command]) => command === shell && Number(x) > 0).map(([id]) => id);
    return [...wanted].every((p) => ready.includes(p));
  }, `a ${shell} prompt in ${panes.join(", ")}`);
}

/**
 * A tmux server laid out for the corpus:
 * - `work`: a window with two shell panes, the targets tools get by default;
 * - `ticker`: a pane printing READY and signalling a channel, so waits end at once;
 * - `guard`: a pane a person watches (a real client attached through `script`);
 * - `caller`: the pane the MCP server "runs in" (callerEnv).
 *
 * The guarded panes' content is captured at the start; {@link guardedChanges} says whether
 * anything reached them since.
 */
export class Fixture {
  readonly t: Started;
  readonly work: Workspace;
  readonly ticker: Trio;
  readonly guard: Trio;
  readonly caller: Trio;
  readonly callerEnv: CallerEnv;
  readonly #content: Map<string, string>;
  /** Every "session window pane" row that belongs to the fixture. */
  readonly baseline: ReadonlySet<string>;

  private constructor(init: {
    t: Started;
    work: Workspace;
    ticker: Trio;
    guard: Trio;
    caller: Trio;
    callerEnv: CallerEnv;
    content: Map<string, string>;
    baseline: Set<string>;
  }) {
    this.t = init.t;
    this.work = init.work;
    this.ticker = init.ticker;
    this.guard = init.guard;
    this.caller = init.caller;
    this.callerEnv = init.callerEnv;
    this.#content = init.content;
    this.baseline = init.baseline;
  }

  /** Builds the fixture on a new private server. */
  static async start(): Promise<Fixture> {
    const t = await TestTmux.start("work", { width: 120, height: 40 });
    try {
      // Panes the tools start get a plain sh (a login bash may run slow start-up files).
      await t.tmux("set-option", "-g", "default-shell", "/bin/sh");
      const otherPaneId = (await t.tmux(
        "split-window",
        "-d",
        "-t",
        t.ids.paneId,
        "-P",
        "-F",
        "#{pane_id}",
        "sh",
      )).trim();
      const ticker = await newSession(t, "ticker", TICKER);
      const guard = await newSession(t, "guard", "sh");
      const caller = await newSession(t, "caller", "sh");
      await t.attach(guard.sessionId);
      await shellsReady(t, [t.ids.paneId, otherPaneId, guard.paneId, caller.paneId]);
      const facts = await t.facts();
      const fixture = new Fixture({
        t,
        work: { ...t.ids, otherPaneId, sessionName: "work" },
        ticker,
        guard,
        caller,
        callerEnv: {
          tmux: `${facts.socketPath},${facts.pid},${caller.sessionId.slice(1)}`,
          tmuxPane: caller.paneId,
        },
        content: new Map(),
        baseline: new Set(await rows(t)),
      });
      for (const id of fixture.guardedPanes) {
        // Once the shell has drawn its prompt, nothing but input changes the pane.
        await waitFor(async () => (await captureRaw(t, id)) !== "", `a prompt in ${id}`);
        fixture.#content.set(id, await capture(t, id));
      }
      return fixture;
    } catch (error) {
      await t.kill();
      throw error;
    }
  }

  /** The socket name (tmux -L). */
  get socket(): string {
    return this.t.socket;
  }

  /** The panes no keystroke may reach. */
  get guardedPanes(): string[] {
    return [this.guard.paneId, this.caller.paneId];
  }

  /** Guarded panes whose content changed since the start (or that are gone), with why. */
  async guardedChanges(): Promise<string[]> {
    const changed: string[] = [];
    for (const [id, before] of this.#content) {
      const now = await captureRaw(this.t, id);
      if (now === null) changed.push(`${id} is gone`);
      else if (now !== before) changed.push(`${id} changed: ${JSON.stringify(now.slice(-200))}`);
    }
    return changed;
  }

  /**
   * A new session with two shell panes, for tools that kill or type: what they destroy or
   * disturb is theirs, not the fixture's.
   */
  async scratch(): Promise<Workspace> {
    const name = `scratch-${crypto.randomUUID().slice(0, 8)}`;
    const trio = await newSession(this.t, name, "sh");
    const otherPaneId = (await this.t.tmux(
      "split-window",
      "-d",
      "-t",
      trio.paneId,
      "-P",
      "-F",
      "#{pane_id}",
      "sh",
    )).trim();
    await shellsReady(this.t, [trio.paneId, otherPaneId]);
    return { ...trio, otherPaneId, sessionName: name };
  }

  /**
   * Puts the server back after a call changed it, in as few tmux calls as it can: removes
   * sessions, windows and panes that are neither the fixture's nor `keep`'s, and takes panes
   * out of copy mode.
   * Returns what is wrong that it cannot undo: fixture objects moved or gone, the person's
   * client no longer showing the guard pane, `keep` no longer whole.
   */
  async restore(
    options: { keep?: Workspace } = {},
  ): Promise<{ issues: string[]; expanded: string[] }> {
    const work = this.work.sessionId;
    const state = await this.t.tmuxRaw(
      ...[
        ["list-panes", "-a", "-F", "P #{session_id} #{window_id} #{pane_id} #{pane_in_mode}"],
        ["list-clients", "-F", "C #{pane_id}"],
        // Where tools store text: names, titles, options, environment, hooks, buffers.
        ["list-sessions", "-F", "V #{session_name}"],
        ["list-windows", "-a", "-F", "V #{window_name}"],
        ["list-panes", "-a", "-F", "V #{pane_title}"],
        ["list-buffers", "-F", "V #{buffer_name} #{buffer_sample}"],
        ["show-options", "-g"],
        ["show-options", "-s"],
        ["show-options", "-t", work],
        ["show-environment", "-g"],
        ["show-environment", "-t", work],
        ["show-hooks", "-g"],
      ].flatMap((c, i) => i === 0 ? c : [";", ...c]),
    );
    const lines = state.stdout.split("\n");
    const expanded = lines.filter((l) =>
      l.includes(SENTINEL_WORD) && !l.includes(SENTINEL) &&
      !l.includes(SENTINEL.replaceAll("#", "##"))
    );
    const panes = lines.filter((l) => l.startsWith("P ")).map((l) => l.slice(2).split(" "));
    const shown = lines.filter((l) => l.startsWith("C ")).map((l) => l.slice(2));
    const keep = options.keep;
    const keepRows = keep
      ? new Set(
        [keep.paneId, keep.otherPaneId].map((p) => `${keep.sessionId} ${keep.windowId} ${p}`),
      )
      : new Set<string>();
    const ours = new Set([...this.baseline, ...keepRows]);
    const column = (i: number) => new Set([...ours].map((r) => r.split(" ")[i]));
    const [sessions, windows, paneIds] = [column(0), column(1), column(2)];
    const kills: string[][] = [];
    const killed = new Set<string>();
    for (const [s, w, p] of panes) {
      if (!sessions.has(s)) {
        if (!killed.has(s)) kills.push(["kill-session", "-t", s]);
        killed.add(s);
      } else if (!windows.has(w)) {
        if (!killed.has(w)) kills.push(["kill-window", "-t", w]);
        killed.add(w);
      } else if (!paneIds.has(p)) kills.push(["kill-pane", "-t", p]);
    }
    const inMode = panes.filter(([, , p, mode]) => mode === "1" && paneIds.has(p));
    const commands = [
      ...kills,
      ...inMode.map(([, , p]) => ["copy-mode", "-q", "-t", p]),
    ];
    if (commands.length > 0) {
      await this.t.tmuxRaw(...commands.flatMap((c, i) => i === 0 ? c : [";", ...c]));
    }
    const now = new Set(panes.map(([s, w, p]) => `${s} ${w} ${p}`));
    const issues: string[] = [];
    if (!shown.includes(this.guard.paneId)) {
      issues.push(`the attached client no longer shows ${this.guard.paneId}`);
    }
    for (const row of this.baseline) {
      if (!now.has(row)) issues.push(`fixture object moved or gone: ${row}`);
    }
    for (const row of keepRows) {
      if (!now.has(row)) issues.push(`scratch object moved or gone: ${row}`);
    }
    return { issues, expanded };
  }

  /** A session, window and pane that existed a moment ago and were just killed. */
  async justDied(): Promise<Trio & { sessionName: string }> {
    const name = `died-${crypto.randomUUID().slice(0, 8)}`;
    const trio = await newSession(this.t, name, "sh");
    await this.t.tmux("kill-session", "-t", trio.sessionId);
    return { ...trio, sessionName: name };
  }

  /** Kills the server (and the attached client). */
  async kill(): Promise<void> {
    await this.t.kill();
  }
}

async function rows(t: TestTmux): Promise<string[]> {
  const r = await t.tmuxRaw("list-panes", "-a", "-F", "#{session_id} #{window_id} #{pane_id}");
  return r.code === 0 ? r.stdout.split("\n").filter((l) => l !== "") : [];
}

/**
 * Everything a pane shows and keeps, as text: history and screen, colours kept, wrapped
 * lines joined, trailing blanks dropped (a resize changes those, not what was typed).
 */
async function captureRaw(t: TestTmux, paneId: string): Promise<string | null> {
  const r = await t.tmuxRaw("capture-pane", "-p", "-e", "-J", "-t", paneId, "-S", "-", "-E", "-");
  if (r.code !== 0) return null;
  return r.stdout.split("\n").map((l) => l.trimEnd()).join("\n").trimEnd();
}

async function capture(t: TestTmux, paneId: string): Promise<string> {
  const text = await captureRaw(t, paneId);
  assert.ok(text !== null, `capture ${paneId}`);
  return text;
}

// ---------------------------------------------------------------------------------------------
// Bad arguments from a JSON schema

/** The JSON Schema subset `tools/list` carries (zod's draft-07 output). */
export interface JsonSchema {
  readonly type?: string;
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly JsonSchema[];
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly additionalProperties?: boolean | JsonSchema;
  readonly propertyNames?: JsonSchema;
}

/** A tool as `tools/list` describes it. */
export interface ListedTool {
  readonly name: string;
  readonly inputSchema: JsonSchema;
  readonly annotations?: { readonly destructiveHint?: boolean; readonly readOnlyHint?: boolean };
}

/** One bad call to make. */
export interface Variant {
  /** What is bad about it, e.g. `paneId: a pane that just died`. */
  readonly label: string;
  readonly args: unknown;
  /** An id of something that does not exist: the call must not succeed. */
  readonly nonexistent: boolean;
}

/** A session with one window of two shell panes: what a tool's calls target by default. */
export interface Workspace extends Trio {
  readonly otherPaneId: string;
  readonly sessionName: string;
}

/** What the generator knows of the server the calls go to. */
export interface Targets {
  readonly fixture: Fixture;
  readonly markers: MarkerBox;
  /**
   * A private folder (absolute, no trailing slash) that every path a call is given lies in:
   * pipe_pane appends to its path, so a bad path outside would leave files in `/`.
   */
  readonly files: string;
  /** What calls target when the fuzzed field is not the target. */
  readonly base: Workspace;
  /** A session, window and pane killed right before this tool's calls. */
  readonly died: Trio & { readonly sessionName: string };
  /** Whether to target guarded panes, windows and sessions too. */
  readonly guarded: boolean;
  /**
   * Whether strings get every odd value, not only one of each kind the issue names: the
   * corpus gives a rotating share of the tools the full set, to stay within its time.
   */
  readonly thorough?: boolean;
}

/** Marks a property as left out. */
const OMIT = Symbol("omit");
type Value = unknown | typeof OMIT;

interface FieldVariant {
  readonly label: string;
  readonly value: Value;
  readonly nonexistent?: boolean;
}

/** Optional arguments a tool's base call includes so that a fuzzed field is the only fault. */
const EXTRAS: Record<string, Record<string, unknown>> = {
  wait_for_text: { timeoutMs: 100 },
  wait_for_channel: { timeoutMs: 100 },
  // Quiet is clamped to 60 s, longer than the corpus waits for an answer: the call ends at
  // its own timeout instead.
  wait_for_idle: { timeoutMs: 100 },
  // A shell syntax error (`;` alone) aborts the typed line in dash: such a call waits for
  // its whole timeout.
  run_command: { timeoutMs: 1_500 },
  send_keys: { text: "robust" },
  set_option: { value: "robust" },
  set_environment: { value: "robust" },
  set_hook: { name: "alert-silence", command: "display-message robust" },
  show_options: { target: "$session" },
  show_option: { target: "$session" },
  show_hooks: { target: "$session" },
  show_hook: { target: "$session" },
};

/**
 * Values tried, in order, for a string property with a pattern; an absolute path is the
 * private folder of {@link Targets.files}.
 */
const PATTERN_CANDIDATES = [
  "robust",
  "@robust",
  "ROBUST",
  "robust-chan",
  "tmux-mcp-robust",
  "alert-silence",
  "$files",
  "1",
];

/** A valid-looking value for a property, from its name and schema. */
function baseValue(tool: string, name: string, s: JsonSchema, x: Targets): unknown {
  const fx = x.fixture;
  if (s.anyOf) {
    const branch = s.anyOf.find((b) => b.type !== "null") ?? s.anyOf[0];
    return baseValue(tool, name, branch, x);
  }
  if (s.enum) return s.enum.includes("session") ? "session" : s.enum[0];
  switch (s.type) {
    case "string": {
      const b = x.base;
      const byName: Record<string, string> = {
        paneId: tool === "wait_for_text" ? fx.ticker.paneId : b.paneId,
        targetPaneId: b.otherPaneId,
        windowId: b.windowId,
        session: b.sessionId,
        fromSession: b.sessionId,
        target: b.sessionId,
        pattern: "READY",
        patterns: "READY",
        stop: "NEVER-SEEN",
        text: "robust",
        command: "true",
        channel: TICKER_CHANNEL,
        layout: "tiled",
        hook_name: "alert-silence",
        bufferName: "tmux-mcp-robust",
        tool: "list_panes",
      };
      const named = byName[name];
      if (named !== undefined) return named;
      if (s.pattern) {
        const re = new RegExp(s.pattern, "u");
        const fit = PATTERN_CANDIDATES.map((c) => c === "$files" ? x.files : c)
          .find((c) => re.test(c));
        if (fit) return fit;
      }
      return "robust";
    }
    case "integer":
    case "number":
      return Math.min(Math.max(1, s.minimum ?? 1), s.maximum ?? 1);
    case "boolean":
      return false;
    case "array":
      return (s.minItems ?? 0) > 0 && s.items ? [baseValue(tool, name, s.items, x)] : [];
    case "object":
      return baseObject(tool, s, x);
    default:
      return null;
  }
}

function baseObject(tool: string, s: JsonSchema, x: Targets): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of s.required ?? []) {
    const prop = s.properties?.[key];
    if (prop) out[key] = baseValue(tool, key, prop, x);
  }
  return out;
}

/**
 * The call a tool's bad calls start from: its required properties with plausible values,
 * plus a few optional ones ({@link EXTRAS}) that let a fuzzed field reach deep.
 */
export function baseArgs(tool: ListedTool, x: Targets): Record<string, unknown> {
  const args = baseObject(tool.name, tool.inputSchema, x);
  for (const [key, value] of Object.entries(EXTRAS[tool.name] ?? {})) {
    if (!tool.inputSchema.properties?.[key]) continue;
    args[key] = value === "$session" ? x.base.sessionId : value;
  }
  return args;
}

/**
 * A format that expands to a word of its own: a stored value holding the word without the
 * format around it was expanded by tmux. (A `#(...)` job leaves a marker file, but only when
 * a client that runs jobs expands it; command-line clients never do, control clients do.)
 */
export const SENTINEL_WORD = "ROBUST-EXPANDED";
/** The format itself. */
export const SENTINEL = `#{l:${SENTINEL_WORD}}`;

/** Strings that have broken tmux front ends: formats, separators, flags, bytes. */
function oddStrings(x: Targets, where: string): FieldVariant[] {
  const m = x.markers;
  // Every item the issue names, for every string of every tool.
  const core: FieldVariant[] = [
    { label: "empty", value: "" },
    { label: "1 MB", value: "x".repeat(1 << 20) },
    { label: "NUL", value: "a\u0000b" },
    {
      label: "control characters",
      value: "\u0001\u0002\u0007\b\u001b[31mred\u001b[0m\u007f\u009b2J\u0085",
    },
    { label: "lone surrogate", value: "\ud800" },
    { label: "#(shell job)", value: m.payload(where) },
    { label: "#{format} running a job", value: `#{?pane_active,${m.payload(where)},x}` },
    { label: "#{format} that shows expansion", value: `a ${SENTINEL} b` },
    { label: "trailing ;", value: "robust;" },
    { label: "leading -", value: "-t" },
    { label: "newline", value: "a\nb" },
    { label: "quotes and $", value: `'"\\$HOME ~ {}` },
  ];
  if (!x.thorough) return core;
  // Their relatives, for the tools whose turn it is (see Targets.thorough).
  return [
    ...core,
    { label: "lone low surrogate", value: "x\udc00y" },
    { label: "#(shell job) inside text", value: `a ${m.payload(where)} b` },
    { label: "#{format}", value: "#{pane_id}#{session_name}" },
    { label: "lone ;", value: ";" },
    { label: "escaped ;", value: "robust\\;" },
    { label: "--", value: "--" },
    { label: "CR LF", value: "a\r\nb" },
    { label: "tab", value: "a\tb" },
    { label: "emoji and RTL override", value: "名前🙂\u202e" },
  ];
}

/**
 * Prefixes that may make an odd string pass a pattern: a path (in the private folder, never
 * `/` itself), a user option, a word.
 */
function fittingPrefixes(x: Targets): string[] {
  return [`${x.files}/`, "@", "robust"];
}

/**
 * The odd strings a pattern refuses as they are, with a prefix that makes the pattern accept
 * them (`/#(touch ...)` for an absolute path): those reach the tool's code, not just the
 * schema.
 */
function fittedStrings(pattern: string, x: Targets, where: string): FieldVariant[] {
  const re = new RegExp(pattern, "u");
  const out: FieldVariant[] = [];
  for (const v of oddStrings(x, where)) {
    if (typeof v.value !== "string" || v.value.length > 1000 || re.test(v.value)) continue;
    const prefix = fittingPrefixes(x).find((p) => re.test(`${p}${v.value}`));
    if (prefix === undefined) continue;
    const shown = prefix === `${x.files}/` ? "<folder>/" : prefix;
    const value = v.label.includes("#(")
      ? `${prefix}${
        v.value.replace(/^(.*?)#\(touch [^)]*\)/, (_m, head) =>
          `${head}${x.markers.payload(`${where} after ${shown}`)}`)
      }`
      : `${prefix}${v.value}`;
    out.push({ label: `${v.label} after "${shown}"`, value });
  }
  return out;
}

function wrongTypes(type: string | undefined): FieldVariant[] {
  const all: FieldVariant[] = [
    { label: "a number", value: 42 },
    { label: "a boolean", value: true },
    { label: "null", value: null },
    { label: "an object", value: { a: 1 } },
    { label: "an array", value: ["x"] },
    { label: "a string", value: "1" },
  ];
  const own: Record<string, string[]> = {
    string: ["a string"],
    integer: ["a number"],
    number: ["a number"],
    boolean: ["a boolean"],
    array: ["an array"],
    object: ["an object"],
  };
  const skip = own[type ?? ""] ?? [];
  return all.filter((v) => !skip.includes(v.label));
}

const NUMBERS: FieldVariant[] = [
  { label: "-1", value: -1 },
  { label: "zero", value: 0 },
  { label: "-2^53", value: -(2 ** 53) },
  { label: "2^31", value: 2 ** 31 },
  { label: "MAX_SAFE_INTEGER", value: Number.MAX_SAFE_INTEGER },
  { label: "2^60", value: 2 ** 60 },
  { label: "1e308", value: 1e308 },
  { label: "-1e308", value: -1e308 },
  { label: "a fraction", value: 1.5 },
];

type IdKind = "pane" | "window" | "session" | "target";

function idKind(name: string, s: JsonSchema): IdKind | null {
  if (s.pattern === "^%\\d+$" || name === "paneId" || name === "targetPaneId") return "pane";
  if (s.pattern === "^@\\d+$" || name === "windowId") return "window";
  if (name === "session" || name === "fromSession") return "session";
  if (name === "target") return "target";
  return null;
}

function idVariants(kind: IdKind, x: Targets): FieldVariant[] {
  const fx = x.fixture;
  const gone = (label: string, value: string): FieldVariant => ({
    label,
    value,
    nonexistent: true,
  });
  const pane = [
    gone("a pane that never existed", "%999999"),
    gone("a pane that just died", x.died.paneId),
    gone("a pane id past any integer", `%${"9".repeat(30)}`),
  ];
  const window = [
    gone("a window that never existed", "@999999"),
    gone("a window that just died", x.died.windowId),
    gone("a window id past any integer", `@${"9".repeat(30)}`),
  ];
  const session = [
    gone("a session that never existed", "$999999"),
    gone("a session that just died", x.died.sessionId),
    gone("the name of a session that just died", x.died.sessionName),
    gone("a prefix of a session name", x.base.sessionName.slice(0, -1)),
    gone("tmux's exact-match syntax", `=${x.base.sessionName}`),
    gone("a tmux target", `${x.base.sessionName}:0.0`),
  ];
  const guardedPanes: FieldVariant[] = x.guarded
    ? [
      { label: "the pane a person watches", value: fx.guard.paneId },
      { label: "the caller's own pane", value: fx.caller.paneId },
    ]
    : [];
  const guardedWindows: FieldVariant[] = x.guarded
    ? [
      { label: "the window a person watches", value: fx.guard.windowId },
      { label: "the caller's own window", value: fx.caller.windowId },
    ]
    : [];
  const guardedSessions: FieldVariant[] = x.guarded
    ? [
      { label: "the session a person watches", value: fx.guard.sessionId },
      { label: "the caller's own session", value: fx.caller.sessionId },
    ]
    : [];
  switch (kind) {
    case "pane":
      return [...pane, ...guardedPanes];
    case "window":
      return [...window, ...guardedWindows];
    case "session":
      return [...session, ...guardedSessions];
    case "target":
      return [pane[1], window[1], session[1], session[3], ...guardedPanes];
  }
}

/**
 * Fields whose contract is to hand tmux the caller's own format (display_message, toolset
 * execute): a `#(...)` job running there is the tool doing its job, not a leak, so they get
 * every odd string but a shell job (tests/tools17_test.ts shows the job runs there).
 */
const EXPANDS_FORMAT: ReadonlySet<string> = new Set(["display_message.format"]);

/** Bad values for one property (or array item, or nested object). */
function fieldVariants(
  tool: string,
  name: string,
  s: JsonSchema,
  x: Targets,
  where: string,
): FieldVariant[] {
  if (s.anyOf) {
    const seen = new Set<string>();
    const out: FieldVariant[] = [];
    for (const branch of s.anyOf) {
      for (const v of fieldVariants(tool, name, branch, x, where)) {
        const key = typeof v.value === "string" && v.value.length > 1000
          ? `${v.value.length}`
          : JSON.stringify(v.value);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(v);
      }
    }
    return out;
  }
  if (s.enum) {
    const first = String(s.enum[0]);
    return [
      { label: "not one of the choices", value: "bogus" },
      { label: "a choice in upper case", value: first.toUpperCase() },
      { label: "a choice with a space", value: ` ${first}` },
      ...wrongTypes("string").filter((v) => v.label !== "a string"),
    ];
  }
  switch (s.type) {
    case "string": {
      const kind = idKind(name, s);
      return [
        ...wrongTypes("string"),
        ...(kind ? idVariants(kind, x) : []),
        ...oddStrings(x, where).filter((v) =>
          !EXPANDS_FORMAT.has(where) || !String(v.value).includes("#(")
        ),
        ...(s.pattern ? fittedStrings(s.pattern, x, where) : []),
      ];
    }
    case "integer":
    case "number":
      return [...wrongTypes(s.type), ...NUMBERS];
    case "boolean":
      return wrongTypes("boolean");
    case "null":
      return [];
    case "array": {
      const base = baseValue(tool, name, s, x) as unknown[];
      const item = s.items ? baseValue(tool, name, s.items, x) : "x";
      const out: FieldVariant[] = [
        ...wrongTypes("array"),
        { label: "empty array", value: [] },
        {
          label: "too many items",
          value: Array.from(
            { length: s.maxItems !== undefined ? s.maxItems + 1 : 10_000 },
            () => item,
          ),
        },
      ];
      if (s.items) {
        for (const v of fieldVariants(tool, name, s.items, x, `${where}[0]`)) {
          out.push({ ...v, label: `item: ${v.label}`, value: [v.value, ...base.slice(1)] });
        }
      }
      return out;
    }
    case "object":
      return [...wrongTypes("object"), ...objectVariants(tool, s, x, where)];
    default:
      return [];
  }
}

/** Variants of an object as a whole: missing, unknown and bad properties; bad record keys. */
function objectVariants(
  tool: string,
  s: JsonSchema,
  x: Targets,
  where: string,
  base: Record<string, unknown> = baseObject(tool, s, x),
): FieldVariant[] {
  const out: FieldVariant[] = [];
  const required = s.required ?? [];
  if (required.length > 0) out.push({ label: "no properties at all", value: {} });
  for (const key of required) {
    const { [key]: _, ...rest } = base;
    out.push({ label: `${key} missing`, value: rest });
  }
  if (s.properties) {
    out.push({ label: "an unknown field", value: { ...base, bogusField: 1 } });
    out.push({
      label: "an unknown __proto__ field",
      value: { ...base, ...JSON.parse('{"__proto__": {"polluted": true}}') },
    });
    for (const [key, prop] of Object.entries(s.properties)) {
      for (const v of fieldVariants(tool, key, prop, x, `${where}.${key}`)) {
        const value = { ...base };
        if (v.value === OMIT) delete value[key];
        else value[key] = v.value;
        out.push({ label: `${key}: ${v.label}`, value, nonexistent: v.nonexistent });
      }
    }
    if (s.properties.regex) out.push(...catastrophicRegexes(s, base));
  }
  const extra = s.additionalProperties;
  if (extra && typeof extra === "object") {
    for (const v of oddStrings(x, `${where} key`)) {
      if (typeof v.value !== "string" || v.value.length > 1000) continue;
      out.push({ label: `key: ${v.label}`, value: { ...base, [v.value]: "robust" } });
    }
    out.push({ label: "key: an id-looking name", value: { ...base, session: x.died.sessionId } });
    for (const v of fieldVariants(tool, "value", { type: "string" }, x, `${where} value`)) {
      out.push({ label: `value: ${v.label}`, value: { ...base, ROBUST_KEY: v.value } });
    }
  }
  return out;
}

/**
 * Regexes a backtracking engine takes hours over, on a row of x's or of a's (see
 * tests/patterns_test.ts, which puts such rows on screen): each pattern field of a tool that
 * takes `regex`, with `regex: true`.
 */
const CATASTROPHIC_REGEXES = ["(x+)+y", "(a|aa)+$", "(.*a){20}"];

function catastrophicRegexes(s: JsonSchema, base: Record<string, unknown>): FieldVariant[] {
  return ["pattern", "patterns", "stop"].flatMap((key) => {
    const prop = s.properties?.[key];
    if (!prop) return [];
    return CATASTROPHIC_REGEXES.map((p) => ({
      label: `${key}: the catastrophic regex ${p}`,
      value: { ...base, regex: true, [key]: prop.type === "array" ? [p] : p },
    }));
  });
}

/**
 * `socket_name` variants every tool gets; the full set goes to a rotating few (every tool
 * shares the registry's one `socket_name` field, so the rest would repeat the same path).
 */
const SOCKET_SAMPLE = new Set([
  "socket_name: a number",
  "socket_name: #(shell job)",
  "socket_name: newline",
]);

/**
 * Every bad call for `tool`: its object's variants (missing, unknown and bad properties, see
 * {@link objectVariants}). `allSocketNames` keeps every `socket_name` variant, else a sample.
 */
export function variantsFor(
  tool: ListedTool,
  x: Targets,
  options: { allSocketNames?: boolean } = {},
): Variant[] {
  const base = baseArgs(tool, x);
  const out: Variant[] = objectVariants(tool.name, tool.inputSchema, x, tool.name, base)
    .filter((v) =>
      options.allSocketNames || !v.label.startsWith("socket_name: ") || SOCKET_SAMPLE.has(v.label)
    )
    .map((v) => ({ label: v.label, args: v.value, nonexistent: v.nonexistent ?? false }));
  if ((tool.inputSchema.required ?? []).length === 0) {
    out.push({ label: "no properties at all", args: {}, nonexistent: false });
  }
  return out;
}

/** Arguments that are not an object: the protocol layer must refuse them. */
export const NOT_OBJECTS: readonly { label: string; args: unknown }[] = [
  { label: "arguments: null", args: null },
  { label: "arguments: an array", args: [1, 2] },
  { label: "arguments: a string", args: "paneId=%1" },
  { label: "arguments: a number", args: 7 },
];

/** The tmux timeout a call may legitimately run for: its own `timeoutMs` clamped, else 0. */
export function ownTimeout(args: unknown): number {
  const t = (args as { timeoutMs?: unknown } | null)?.timeoutMs;
  if (typeof t !== "number" || !Number.isFinite(t)) return 0;
  return Math.min(120_000, Math.max(100, Math.round(t)));
}

/** A short description of a variant's arguments for a failure message. */
export function brief(args: unknown): string {
  const text = JSON.stringify(
    args,
    (_k, v) => typeof v === "string" && v.length > 60 ? `${v.slice(0, 40)}…(${v.length} chars)` : v,
  );
  return text === undefined ? String(args) : text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
