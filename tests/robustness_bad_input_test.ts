/**
 * Bad input, for every tool (issue 9): the tools come from `tools/list`, their bad arguments
 * from each tool's input schema (see helpers/robust.ts). Every call must end in a readable
 * tool error or a JSON-RPC invalid-params error — or, for odd but legal text, in a success
 * that stored it literally — within its own bound; the server must then answer list_panes
 * correctly; no `#(touch ...)` marker may ever appear; and the panes the guards protect (one a
 * person watches, one the MCP server runs in) must not change.
 *
 * Destructive tools run against a second, disposable server, so the corpus keeps its
 * fixture. Every tool goes through the in-memory SDK client; a sample of every tool's calls
 * goes through the real stdio process too.
 */

import assert from "node:assert/strict";
import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { MAX_RESULT_BYTES, replyBound } from "../src/mcp/bounds.ts";
import { TOOLSETS } from "../src/mcp/toolsets.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import {
  brief,
  type Figures,
  Fixture,
  type ListedTool,
  MarkerBox,
  newFigures,
  NOT_OBJECTS,
  ownTimeout,
  reportFigures,
  shellsReady,
  sleep,
  type Targets,
  unreadable,
  type Variant,
  variantsFor,
} from "./helpers/robust.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";
import { warn } from "../src/diagnostics.ts";

/** Slack on top of a call's own timeout before it counts as a hang. */
const HANG_SLACK_MS = 15_000;
/** How long `#(...)` jobs get to run before the marker folder is checked. */
const SETTLE_MS = 1_000;

/** How one call ended, whatever the transport. */
type Outcome =
  | { kind: "result"; isError: boolean; text: string; structured: unknown; bytes: number }
  | { kind: "rpc-error"; code: number; message: string }
  | { kind: "hang" }
  | { kind: "dead"; detail: string };

/** A way to reach a server: the in-memory client or the stdio process. */
interface Transport {
  readonly label: string;
  call(name: string, args: unknown, boundMs: number): Promise<Outcome>;
  close(): Promise<void>;
}

function resultOutcome(result: CallToolResult): Outcome {
  const text = (result.content ?? []).map((c: { type: string; text?: string }) =>
    c.type === "text" ? c.text : `[${c.type}]`
  ).join("\n");
  return {
    kind: "result",
    isError: result.isError === true,
    text,
    structured: result.structuredContent,
    // The whole reply as the wire carries it: text blocks and structured content together.
    bytes: new TextEncoder().encode(JSON.stringify(result)).length,
  };
}

function inMemory(client: TestClient, label: string): Transport {
  return {
    label,
    async call(name, args, boundMs) {
      try {
        const result = await client.client.request(
          { method: "tools/call", params: { name, arguments: args as Record<string, unknown> } },
          CallToolResultSchema,
          { timeout: boundMs },
        );
        return resultOutcome(result as CallToolResult);
      } catch (error) {
        // McpError: a JSON-RPC error answer (-32001 is the client's own request timeout).
        const { code, message } = error as { code?: unknown; message?: unknown };
        if (typeof code === "number") {
          if (code === -32001) return { kind: "hang" };
          return { kind: "rpc-error", code, message: String(message) };
        }
        return { kind: "dead", detail: String(error) };
      }
    },
    close: () => client.close(),
  };
}

function overStdio(server: StdioServer, label: string): Transport {
  let exited: string | null = null;
  server.child.status.then((s) => exited = `the process exited (code ${s.code})`);
  return {
    label,
    async call(name, args, boundMs) {
      if (exited) return { kind: "dead", detail: exited };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const answer = await Promise.race([
        server.request("tools/call", { name, arguments: args as Record<string, unknown> }),
        new Promise<"hang">((resolve) => timer = setTimeout(() => resolve("hang"), boundMs)),
        server.child.status.then(() => "dead" as const),
      ]);
      clearTimeout(timer);
      if (answer === "hang") return { kind: "hang" };
      if (answer === "dead") return { kind: "dead", detail: exited ?? "the process exited" };
      if (answer.error) {
        return { kind: "rpc-error", code: answer.error.code, message: answer.error.message };
      }
      return resultOutcome(answer.result as CallToolResult);
    },
    close: () => server.kill(),
  };
}

/** A server under test: its fixture and the two ways to call it. */
interface Slot {
  readonly fixture: Fixture;
  readonly client: TestClient;
  readonly memory: Transport;
  /** The real process, started with the `start` task's flags, TMUX naming the caller pane. */
  readonly stdio: Transport;
}

async function openSlot(): Promise<Slot> {
  const fixture = await Fixture.start();
  const client = await connect({
    socketName: fixture.socket,
    toolsets: TOOLSETS,
    callerEnv: fixture.callerEnv,
  });
  const { cmd, args } = startCommand();
  const server = new StdioServer(
    cmd,
    [...args, "--socket", fixture.socket, "--toolsets", TOOLSETS.join(",")],
    cleanEnv({ TMUX: fixture.callerEnv.tmux!, TMUX_PANE: fixture.callerEnv.tmuxPane! }),
  );
  await server.initialize();
  return {
    fixture,
    client,
    memory: inMemory(client, "in-memory"),
    stdio: overStdio(server, "stdio"),
  };
}

async function closeSlot(slot: Slot): Promise<void> {
  await slot.stdio.close().catch(() => {});
  await slot.memory.close().catch(() => {});
  await slot.fixture.kill();
}

/** Every `error` string inside a structured result (batch rows report failures this way). */
function nestedErrors(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) { for (const v of value) nestedErrors(v, out); }
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "error" && typeof v === "string") out.push(v);
      else nestedErrors(v, out);
    }
  }
  return out;
}

/** What kind of failure a problem is. */
type Kind =
  | "hang"
  | "server gone"
  | "JSON-RPC error other than invalid params"
  | "invalid params for valid arguments"
  | "unreadable error"
  | "unexpected exception"
  | "accepted arguments its schema refuses"
  | "succeeded on a target that does not exist"
  | "result past its bound"
  | "following list_panes wrong"
  | "prototype polluted"
  | "shell job ran"
  | "format expanded"
  | "guarded pane changed";

interface Problem {
  readonly kind: Kind;
  readonly where: string;
  readonly what: string;
  /** The arguments of the call, when a call caused it. */
  readonly args?: unknown;
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f]/;

/** Whether any key or string value in `value` holds a control character. */
function holdsControl(value: unknown): boolean {
  if (typeof value === "string") return CONTROL.test(value);
  if (Array.isArray(value)) return value.some(holdsControl);
  if (value && typeof value === "object") {
    return Object.entries(value).some(([k, v]) => CONTROL.test(k) || holdsControl(v));
  }
  return false;
}

function socketNames(args: unknown): unknown[] {
  const a = (args ?? {}) as { socket_name?: unknown; socketNames?: unknown };
  return [a.socket_name, a.socketNames];
}

/**
 * Failures that come from layers outside the tool families (the SDK's validation and request
 * parsing, the registry's socket_name field and validation messages, errors.ts): each has its
 * own focused test below, named here. All are fixed now; the list stays so that a regression is
 * named by its focused test as well as counted by the corpus.
 */
const KNOWN: readonly { readonly test: string; readonly matches: (p: Problem) => boolean }[] = [
  {
    test: "a missing required field is reported without the word undefined",
    matches: (p) => p.kind === "unreadable error" && /received undefined/.test(p.what),
  },
  {
    test: "tools/call with arguments that are not an object is an invalid-params error",
    matches: (p) =>
      p.kind === "JSON-RPC error other than invalid params" && / \[arguments: /.test(p.where) &&
      /^-32603/.test(p.what),
  },
  {
    test: "a socket name with control characters is refused, never echoed raw",
    matches: (p) =>
      p.kind === "unreadable error" && /raw control characters/.test(p.what) &&
      holdsControl(socketNames(p.args)),
  },
  {
    test: "a field name with control characters is quoted in the error, never echoed raw",
    matches: (p) =>
      p.kind === "unreadable error" && /raw control characters/.test(p.what) &&
      /Invalid key in record|unknown field/.test(p.what),
  },
  {
    test: "tmux's own complaint reaches the error text without raw control characters",
    matches: (p) =>
      p.kind === "unreadable error" && /raw control characters: tmux refused: /.test(p.what),
  },
];

/** Runs the corpus; collects problems instead of stopping at the first. */
class Corpus {
  readonly figures: Figures = newFigures();
  readonly problems: Problem[] = [];
  readonly known = new Map<string, number>();
  readonly byTransport = new Map<string, number>();
  readonly notes: string[] = [];
  /** Socket names a call may have started a server on (create_session with socket_name). */
  readonly strays = new Set<string>();
  slowestMs = 0;
  slowest = "";
  followUpMs = 0;
  callMs = 0;

  constructor(readonly validate: (tool: string, args: unknown) => boolean) {}

  problem(kind: Kind, where: string, what: string, args?: unknown): void {
    const p = { kind, where, what: what.replace(/\s*\n\s*/g, " ").slice(0, 400), args };
    const known = KNOWN.find((k) => k.matches(p));
    if (known) this.known.set(known.test, (this.known.get(known.test) ?? 0) + 1);
    else this.problems.push(p);
  }

  /** The problems by kind, a few examples each: readable when there are hundreds. */
  summary(): string {
    const byKind = Map.groupBy(this.problems, (p) => p.kind);
    return [...byKind].map(([kind, list]) =>
      `${list.length} × ${kind}:\n${
        list.slice(0, 4).map((p) => `    ${p.where}: ${p.what}`).join("\n")
      }`
    ).join("\n");
  }

  /** One bad call and the list_panes that must follow it. */
  async try(
    transport: Transport,
    slot: Slot,
    tool: string,
    label: string,
    args: unknown,
    nonexistent: boolean,
  ): Promise<boolean> {
    const where = `${transport.label} ${tool} [${label}] ${brief(args)}`;
    // The SDK parses `arguments` as a record, which turns an own "__proto__" key into the
    // object's prototype: the key never reaches validation. It must not reach further.
    const protoKey = args !== null && typeof args === "object" && Object.hasOwn(args, "__proto__");
    const valid = protoKey || this.validate(tool, args);
    const bound = ownTimeout(args) + HANG_SLACK_MS;
    this.figures.inputs++;
    this.byTransport.set(transport.label, (this.byTransport.get(transport.label) ?? 0) + 1);
    const began = performance.now();
    const outcome = await transport.call(tool, args, bound);
    const took = performance.now() - began;
    if (Deno.env.get("ROBUST_TRACE") === "2" && took > 300) {
      reportFigures(`slow ${Math.round(took)} ms`, newFigures(), where.slice(0, 200));
    }
    if (took > this.slowestMs) {
      this.slowestMs = took;
      this.slowest = where;
    }
    if ((Object.prototype as Record<string, unknown>).polluted !== undefined) {
      this.problem("prototype polluted", where, "Object.prototype gained a property", args);
    }
    const socket = (args as { socket_name?: unknown } | null)?.socket_name;
    let succeeded = false;
    switch (outcome.kind) {
      case "hang":
        this.figures.hangs++;
        this.problem("hang", where, `no answer within ${bound} ms`, args);
        break;
      case "dead":
        this.figures.crashes++;
        this.problem("server gone", where, outcome.detail, args);
        return false;
      case "rpc-error": {
        if (outcome.code !== -32602) {
          this.problem(
            "JSON-RPC error other than invalid params",
            where,
            `${outcome.code}: ${outcome.message}`,
            args,
          );
        } else if (valid) {
          this.problem("invalid params for valid arguments", where, outcome.message, args);
        }
        const why = unreadable(outcome.message);
        if (why) this.problem("unreadable error", where, `${why}: ${outcome.message}`, args);
        break;
      }
      case "result": {
        if (outcome.isError) {
          const why = unreadable(outcome.text);
          if (why) this.problem("unreadable error", where, `${why}: ${outcome.text}`, args);
          if (/^Internal error/m.test(outcome.text)) {
            this.figures.crashes++;
            this.problem("unexpected exception", where, outcome.text, args);
          }
        } else {
          succeeded = true;
          if (Deno.env.get("ROBUST_TRACE") === "3") {
            warn(`[robustness] success ${where.slice(0, 160)}`);
          }
          if (typeof socket === "string") this.strays.add(socket);
          if (!valid) {
            this.problem("accepted arguments its schema refuses", where, outcome.text, args);
          }
          // A batch reports a row's failure inside a successful result.
          if (nonexistent && nestedErrors(outcome.structured).length === 0) {
            this.problem("succeeded on a target that does not exist", where, outcome.text, args);
          }
          if (outcome.bytes > replyBound(MAX_RESULT_BYTES)) {
            this.problem("result past its bound", where, `${outcome.bytes} bytes`, args);
          }
          for (const error of nestedErrors(outcome.structured)) {
            const why = unreadable(error);
            if (why) {
              this.problem("unreadable error", where, `${why} (a row's error): ${error}`, args);
            }
          }
        }
        break;
      }
    }
    const f0 = performance.now();
    await this.followUp(transport, slot, where);
    this.followUpMs += performance.now() - f0;
    this.callMs += took;
    return succeeded;
  }

  /** The next call must work: list_panes lists every pane of the fixture. */
  async followUp(transport: Transport, slot: Slot, after: string): Promise<void> {
    const outcome = await transport.call("list_panes", {}, HANG_SLACK_MS);
    if (outcome.kind !== "result" || outcome.isError) {
      this.problem("following list_panes wrong", after, JSON.stringify(outcome));
      return;
    }
    const ids = new Set(
      ((outcome.structured as { panes?: { id: string }[] })?.panes ?? []).map((p) => p.id),
    );
    const fx = slot.fixture;
    const missing = [fx.work.paneId, fx.work.otherPaneId, fx.ticker.paneId, ...fx.guardedPanes]
      .filter((id) => !ids.has(id));
    if (missing.length > 0) {
      this.problem(
        "following list_panes wrong",
        after,
        `lacks ${missing.join(", ")}: ${outcome.text.slice(0, 300)}`,
      );
    }
  }
}

/** Kills a server a call started on an odd socket name, and removes its socket file. */
async function killStray(name: string): Promise<void> {
  const run = async (args: string[]) => {
    try {
      const out = await new Deno.Command("tmux", {
        args: ["-u", "-L", name, ...args],
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      return out.code === 0 ? new TextDecoder().decode(out.stdout).trim() : null;
    } catch {
      return null; // NUL in a name: no such server could have started
    }
  };
  const path = await run(["display-message", "-p", "#{socket_path}"]);
  if (path === null) return;
  await run(["kill-server"]);
  await Deno.remove(path).catch(() => {});
}

/** Counts and reports guarded panes whose content changed since the fixture was built. */
async function checkGuarded(corpus: Corpus, slot: Slot, where: string): Promise<void> {
  const touched = await slot.fixture.guardedChanges();
  if (touched.length === 0) return;
  corpus.figures.guardedKeystrokes += touched.length;
  corpus.problem("guarded pane changed", where, touched.join("; "));
}

/** Every 8th call of a tool also goes through the real process (shifted per tool). */
const STDIO_EVERY = 8;

Deno.test({
  name: "robustness: bad arguments to every tool end in readable errors, no shell, no keystroke",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const markers = await MarkerBox.create();
    // Every path a call gets lies here (pipe_pane appends to its path): removed at the end.
    const files = await Deno.makeTempDir({ prefix: "tmux-mcp-robust-files-" });
    // Destructive tools (kill, type, respawn...) get a server of their own, and the session
    // they target by default is a scratch one, made again whenever a call destroyed it.
    const slots = { main: await openSlot(), disposable: await openSlot() };
    const registry = slots.main.client.server.registry;
    const corpus = new Corpus((tool, args) =>
      registry.get(tool)?.inputSchema.safeParse(args ?? {}).success ?? false
    );
    const trace = Deno.env.get("ROBUST_TRACE");
    const only = Deno.env.get("ROBUST_TOOLS")?.split(",");
    const began = performance.now();
    try {
      const listed = await slots.main.client.client.listTools();
      const tools = listed.tools as unknown as ListedTool[];
      const names = tools.map((t) => t.name);
      assert.ok(names.length >= 56, `tools/list lists every tool (${names.length})`);
      assert.deepEqual(names.filter((n) => !registry.get(n)), [], "every listed tool is known");

      for (const [index, tool] of tools.entries()) {
        if (only && !only.includes(tool.name)) continue;
        const toolBegan = performance.now();
        const destructive = tool.annotations?.destructiveHint === true;
        const readOnly = tool.annotations?.readOnlyHint === true;
        const which = destructive ? "disposable" : "main";
        let scratch = destructive ? await slots[which].fixture.scratch() : null;
        const generate = async () => {
          const slot = slots[which];
          const x: Targets = {
            fixture: slot.fixture,
            markers,
            files,
            base: scratch ?? slot.fixture.work,
            died: await slot.fixture.justDied(),
            // The guards promise refusals to tools that type, run or destroy.
            guarded: destructive,
            thorough: index % 4 === 0,
          };
          const variants = variantsFor(tool, x, { allSocketNames: index % 8 === 0 });
          if ((tool.inputSchema.required ?? []).length === 0) {
            variants.push({ label: "no properties at all", args: {}, nonexistent: false });
          }
          return variants;
        };
        let variants: Variant[] = await generate();
        assert.ok(variants.length > 0, `${tool.name} gets bad arguments`);
        const count = variants.length;
        for (let i = 0; i < variants.length; i++) {
          const v = variants[i];
          const slot = slots[which];
          let changed = await corpus.try(
            slot.memory,
            slot,
            tool.name,
            v.label,
            v.args,
            v.nonexistent,
          );
          if ((i + index) % STDIO_EVERY === 0) {
            changed =
              await corpus.try(slot.stdio, slot, tool.name, v.label, v.args, v.nonexistent) ||
              changed;
          }
          if (!changed || readOnly) continue;
          // The call changed tmux: remove what it made; start over what it broke.
          const { issues, expanded } = await slot.fixture.restore({ keep: scratch ?? undefined });
          if (expanded.length > 0) {
            corpus.problem(
              "format expanded",
              `${slot.memory.label} ${tool.name} [${v.label}] ${brief(v.args)}`,
              `stored as ${expanded.join(" | ")}`,
            );
          }
          if (issues.some((m) => !m.startsWith("scratch"))) {
            // A tool moved a fixture object (legitimately, by its contract: moving a window
            // is not typing into it); the next calls need the fixture as it was.
            corpus.notes.push(
              `${tool.name} [${v.label}] rearranged the fixture: ${issues.join("; ")}`,
            );
            await checkGuarded(corpus, slot, `${tool.name} [${v.label}]`);
            await closeSlot(slot);
            slots[which] = await openSlot();
          }
          if (issues.length > 0) {
            if (destructive) scratch = await slots[which].fixture.scratch();
            variants = [...variants.slice(0, i + 1), ...(await generate()).slice(i + 1)];
          }
        }
        const slot = slots[which];
        for (const n of NOT_OBJECTS) {
          await corpus.try(slot.memory, slot, tool.name, n.label, n.args, false);
        }
        for (const name of corpus.strays) await killStray(name);
        corpus.strays.clear();

        // After each tool: no marker yet, nothing reached a guarded pane.
        const hits = await markers.hits();
        if (hits.length > 0) corpus.problem("shell job ran", tool.name, hits.join(", "));
        await checkGuarded(corpus, slot, tool.name);
        if (scratch) await slot.fixture.t.tmuxRaw("kill-session", "-t", scratch.sessionId);
        if (trace) {
          reportFigures(
            `${tool.name} ${count} variants ${Math.round(performance.now() - toolBegan)} ms`,
            corpus.figures,
            `problems ${corpus.problems.length}, calls ${
              Math.round(corpus.callMs)
            } ms, follow-ups ${Math.round(corpus.followUpMs)} ms`,
          );
        }
      }
      for (const transport of [slots.main.memory, slots.main.stdio]) {
        await corpus.try(transport, slots.main, "no_such_tool", "an unknown tool", {}, false);
      }

      await sleep(SETTLE_MS);
      const hits = await markers.hits();
      corpus.figures.shellExecutions = hits.length;
      if (hits.length > 0) corpus.problem("shell job ran", "after settling", hits.join(", "));
      for (const slot of [slots.main, slots.disposable]) {
        await checkGuarded(corpus, slot, "at the end");
      }
    } finally {
      for (const name of corpus.strays) await killStray(name);
      await closeSlot(slots.main);
      await closeSlot(slots.disposable);
      await markers.remove();
      await Deno.remove(files, { recursive: true });
    }
    const seconds = ((performance.now() - began) / 1000).toFixed(1);
    reportFigures(
      "bad input",
      corpus.figures,
      `${[...corpus.byTransport].map(([t, n]) => `${n} ${t}`).join(", ")}; ${seconds} s, ` +
        `slowest call ${Math.round(corpus.slowestMs)} ms (${corpus.slowest.slice(0, 120)})`,
    );
    for (const note of corpus.notes) warn(`[robustness] note: ${note.slice(0, 300)}`);
    for (const [test, n] of corpus.known) {
      warn(`[robustness] known issue: ${n} × "${test}" (its own test fails until fixed)`);
    }
    if (Deno.env.get("ROBUST_DUMP")) {
      await Deno.writeTextFile(
        Deno.env.get("ROBUST_DUMP")!,
        corpus.problems.map((p) => `${p.kind} | ${p.where} | ${p.what}`).join("\n"),
      );
    }
    assert.equal(corpus.problems.length, 0, corpus.summary());
    assert.equal(corpus.figures.crashes, 0);
    assert.equal(corpus.figures.hangs, 0);
    assert.equal(corpus.figures.shellExecutions, 0);
    assert.equal(corpus.figures.guardedKeystrokes, 0);
  },
});

// ---------------------------------------------------------------------------------------------
// Focused tests for what the corpus found: those named in KNOWN pin fixes in the registry, the
// transport and errors; the others pin fixes made in the tool families.

/** A private server with a shell pane and a client with every toolset. */
async function withClient(
  fn: (t: Awaited<ReturnType<typeof TestTmux.start>>, c: TestClient) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket, toolsets: TOOLSETS });
    await shellsReady(t, [t.ids.paneId]);
    await fn(t, c);
  } finally {
    await c?.close();
    await t.kill();
  }
}

/** The error text of a call that must fail (a tool error or a JSON-RPC error). */
async function failure(c: TestClient, name: string, args: unknown): Promise<string> {
  const outcome = await inMemory(c, "in-memory").call(name, args, 30_000);
  if (outcome.kind === "rpc-error") return outcome.message;
  assert.equal(outcome.kind, "result");
  assert.ok(outcome.kind === "result" && outcome.isError, `${name} must fail: ${brief(outcome)}`);
  return outcome.text;
}

Deno.test(KNOWN[0].test, async () => {
  await withClient(async (_t, c) => {
    const text = await failure(c, "get_pane_info", {});
    assert.match(text, /paneId/);
    assert.equal(unreadable(text), null, text);
  });
});

Deno.test(KNOWN[1].test, async () => {
  await withClient(async (_t, c) => {
    // null counts as no arguments (as the corpus treats it); anything else must be an object.
    for (const args of [[1], "paneId=%1", 7]) {
      const outcome = await inMemory(c, "in-memory").call("list_panes", args, 30_000);
      const answer = JSON.stringify(outcome);
      assert.ok(
        outcome.kind === "rpc-error" ? outcome.code === -32602 : outcome.kind === "result" &&
          outcome.isError,
        `arguments ${JSON.stringify(args)}: ${answer}`,
      );
    }
  });
});

Deno.test(KNOWN[2].test, async () => {
  await withClient(async (t, c) => {
    for (const name of ["a\r\nb", "\u001b[31mred"]) {
      const text = await failure(c, "get_pane_info", { paneId: t.ids.paneId, socket_name: name });
      assert.equal(unreadable(text), null, text);
    }
    const servers = await c.call("list_servers", { socketNames: ["\u001b[31mred"] });
    const text = servers.content?.[0]?.type === "text" ? servers.content[0].text : "";
    assert.ok(!CONTROL.test(text), `list_servers echoes it raw: ${JSON.stringify(text)}`);
  });
});

Deno.test(KNOWN[3].test, async () => {
  await withClient(async (_t, c) => {
    const text = await failure(c, "create_session", { environment: { "\u001b[31m": "x" } });
    assert.equal(unreadable(text), null, text);
    const batch = await c.ok<{ results: { error: string | null }[] }>("call_tools_batch", {
      operations: [{ tool: "list_panes", arguments: { "\u001b[31m": 1 } }],
    });
    const error = batch.results[0].error ?? "";
    assert.match(error, /unknown field/);
    assert.equal(unreadable(error), null, error);
  });
});

Deno.test(KNOWN[4].test, async () => {
  await withClient(async (_t, c) => {
    const text = await failure(c, "set_hook", {
      name: "alert-silence",
      command: "\u001b[31mred",
    });
    assert.equal(unreadable(text), null, text);
  });
});

Deno.test("send_keys, paste_text and run_command refuse text that cannot arrive as given", async () => {
  await withClient(async (t, c) => {
    const pane = t.ids.paneId;
    const before = await t.tmux("capture-pane", "-p", "-t", pane);
    const calls: [string, Record<string, unknown>][] = [
      ["send_keys", { paneId: pane, text: "a\u0000b", enter: false }],
      ["send_keys", { paneId: pane, text: "x\ud800y", enter: false }],
      ["send_keys", { paneId: pane, keys: ["\udc00"] }],
      ["paste_text", { paneId: pane, text: "p\u0000q" }],
      ["paste_text", { paneId: pane, text: "p\ud800q" }],
      ["run_command", { paneId: pane, command: "echo \ud800", timeoutMs: 2_000 }],
    ];
    for (const [tool, args] of calls) {
      const text = await c.fail(tool, args);
      assert.match(text, /NUL|lone surrogate/, `${tool} ${brief(args)}: ${text}`);
      assert.equal(unreadable(text), null, text);
    }
    const batch = await c.ok<{ results: { status: string; error: string | null }[] }>(
      "send_keys_batch",
      { operations: [{ paneId: pane, text: "a\u0000b" }] },
    );
    assert.equal(batch.results[0].status, "failed");
    assert.match(batch.results[0].error ?? "", /NUL/);
    await sleep(200);
    assert.equal(await t.tmux("capture-pane", "-p", "-t", pane), before, "nothing arrived");
  });
});

Deno.test("show_hook echoes only the start of an overlong hook name", async () => {
  await withClient(async (_t, c) => {
    const text = await c.fail("show_hook", { hook_name: "x".repeat(1 << 20) });
    assert.match(text, /is not a hook name/);
    assert.match(text, /more bytes/);
    assert.ok(text.length < 1_000, `${text.length} characters`);
  });
});

Deno.test("robustness: the corpus's fixture and detectors see what they look for", async () => {
  const markers = await MarkerBox.create();
  const fx = await Fixture.start();
  const c = await connect({ socketName: fx.socket, callerEnv: fx.callerEnv });
  try {
    // The server sees the guarded panes as the guards mean them.
    const { panes } = await c.ok<
      { panes: { id: string; isAttended: boolean; isCallerPane: boolean }[] }
    >(
      "list_panes",
    );
    const flags = (id: string) => panes.find((p) => p.id === id);
    assert.equal(flags(fx.guard.paneId)?.isAttended, true, "the guard pane is watched");
    assert.equal(flags(fx.caller.paneId)?.isCallerPane, true, "the caller pane is the caller's");
    assert.equal(flags(fx.work.paneId)?.isAttended, false);
    // A shell job that runs leaves its marker; a keystroke into a guarded pane is seen.
    assert.deepEqual(await markers.hits(), []);
    // A command-line client never runs #() jobs; a control-mode client (what the server
    // talks through) does, which is why every payload must stay text.
    const control = fx.t.controlClient("work");
    const writer = control.stdin.getWriter();
    await writer.write(
      new TextEncoder().encode(`display-message -p '${markers.payload("the self-test")}'\n`),
    );
    await waitFor(async () => (await markers.hits()).length === 1, "the marker file");
    await writer.close();
    await control.status;
    assert.match((await markers.hits())[0], /the self-test/);
    assert.deepEqual(await fx.guardedChanges(), []);
    await fx.t.tmux("send-keys", "-t", fx.caller.paneId, "-l", "x");
    await waitFor(async () => (await fx.guardedChanges()).length === 1, "the keystroke");
  } finally {
    await c.close();
    await fx.kill();
    await markers.remove();
  }
});

Deno.test("run_command reports a shell syntax error at once, not as a command still running", async () => {
  await withClient(async (t, c) => {
    for (const command of ["echo 'unbalanced", ";"]) {
      const began = performance.now();
      const result = await c.ok<{ timedOut: boolean; stillRunning: boolean; exitStatus: number }>(
        "run_command",
        { paneId: t.ids.paneId, command, timeoutMs: 5_000 },
      );
      assert.equal(result.stillRunning, false, `${command}: the shell is back at its prompt`);
      assert.equal(
        result.timedOut,
        false,
        `${command}: ${Math.round(performance.now() - began)} ms`,
      );
      assert.notEqual(result.exitStatus, 0);
    }
  });
});
