/**
 * The front desk (src/mcp/front_desk.ts) answers a connection's opening while the SDK loads:
 * every answer it gives must be, byte for byte, what the SDK answers to the same messages in the
 * same order, for each protocol era, client input and selection of tools; whatever it is not
 * sure of it must leave to the SDK. Then the real process: the hand-over keeps the session the
 * desk opened, answers in order what was held, and end of input still ends the process.
 */

import assert from "node:assert/strict";
import { parseJSONRPCMessage } from "@modelcontextprotocol/server";
import {
  factsText,
  liveFrontDeskFacts,
  sdkAnswers,
  serverOptions,
} from "../scripts/front_desk_facts.ts";
import { DeskAnswers, type DeskOptions } from "../src/mcp/front_desk.ts";
import type { Toolset } from "../src/mcp/toolsets.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { MODERN_META, type RpcMessage, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, testSocketName, waitFor } from "./helpers/tmux.ts";

type Message = Record<string, unknown>;

/** A start: the desk's options and the server's, for the same flags. */
interface Start {
  readonly label: string;
  readonly toolsets: Toolset[];
  readonly tools?: string[];
  readonly denyTools?: string[];
  readonly version?: string;
  readonly ssh?: string[];
}

const STARTS: Start[] = [
  { label: "default", toolsets: ["inspect", "manage", "execute"] },
  { label: "all", toolsets: ["inspect", "manage", "execute", "teardown"], version: "9.9.9-x" },
  { label: "inspect", toolsets: ["inspect"] },
  { label: "teardown (no prompt on offer)", toolsets: ["teardown"] },
  { label: "--tools", toolsets: ["inspect"], tools: ["list_panes", "capture_pane"] },
  { label: "--tools, no resource on offer", toolsets: ["inspect"], tools: ["list_sessions"] },
  { label: "--tools, one resource on offer", toolsets: ["inspect"], tools: ["list_panes"] },
  { label: "--deny-tools", toolsets: ["inspect", "execute"], denyTools: ["capture_pane"] },
  { label: "--ssh", toolsets: ["inspect", "manage", "execute"], ssh: ["devbox"] },
];

/** Whether this checkout's runner takes SSH hosts (`--ssh`). */
const SSH = "hosts" in new TmuxRunner({ ssh: { destinations: ["devbox"] } } as never) &&
  (new TmuxRunner({ ssh: { destinations: ["devbox"] } } as never) as unknown as {
      hosts: string[];
    }).hosts.length === 1;

function deskFor(start: Start): DeskAnswers {
  const options: DeskOptions = {
    version: start.version ?? "0.1.0",
    toolsets: start.toolsets,
    tools: start.tools,
    denyTools: start.denyTools,
    prebuiltList: start.ssh === undefined,
  };
  return new DeskAnswers(options);
}

/**
 * Feeds `messages` to a fresh desk and to the SDK (as the server builds it for `start`);
 * every answer the desk gives must equal the SDK's. Returns how many the desk answered.
 */
async function compare(start: Start, label: string, messages: Message[]): Promise<number> {
  const desk = deskFor(start);
  const taken = messages.map((m) => desk.take(structuredClone(m)));
  const sdk = await sdkAnswers(
    serverOptions({
      toolsets: start.toolsets,
      tools: start.tools,
      denyTools: start.denyTools,
      version: start.version ?? "0.1.0",
      ...(start.ssh && {
        runner: new TmuxRunner({ ssh: { destinations: start.ssh } } as never),
      }),
    }),
    messages,
  );
  const byId = new Map(sdk.map((text) => [JSON.parse(text).id, text]));
  let answered = 0;
  for (const [i, t] of taken.entries()) {
    if (t === undefined) {
      // Left to the SDK, and so is everything after it.
      assert.ok(taken.slice(i).every((x) => x === undefined), `${label}: took after leaving`);
      break;
    }
    // Taken: the SDK's own check passes it on unchanged.
    assert.deepEqual(parseJSONRPCMessage(messages[i]), messages[i], `${label}: message ${i}`);
    if (t.answer === undefined) continue;
    answered++;
    assert.equal(
      JSON.stringify(t.answer),
      byId.get(messages[i].id),
      `${start.label}, ${label}: answer to message ${i} (${messages[i].method})`,
    );
  }
  return answered;
}

const CLIENT = { name: "client", version: "1.0" };

function initialize(id: number, protocolVersion: unknown, extra: Message = {}): Message {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: CLIENT, ...extra },
  };
}

const initialized: Message = { jsonrpc: "2.0", method: "notifications/initialized" };
const list = (id: number, params?: Message): Message => ({
  jsonrpc: "2.0",
  id,
  method: "tools/list",
  ...(params && { params }),
});
const modern = (id: number, method: string, meta: Message = MODERN_META): Message => ({
  jsonrpc: "2.0",
  id,
  method,
  params: { _meta: meta },
});
const ping = (id: number): Message => ({ jsonrpc: "2.0", id, method: "ping" });

const VERSIONS = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
  "1999-01-01",
  "2026-07-28",
  "",
];

const CAPABILITIES: unknown[] = [
  {},
  { roots: { listChanged: true }, sampling: {}, elicitation: {} },
  { elicitation: { form: { applyDefaults: true }, url: {} }, sampling: { context: {}, tools: {} } },
  { tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } },
  // The SDK refuses these (its inner shapes), so the desk must leave them to it.
  { tasks: { requests: { sampling: { createMessage: 5 } } } },
  { tasks: { requests: { elicitation: { create: [] } } } },
  { experimental: { x: { y: 1 } }, extensions: { "io.example/thing": {} } },
  { roots: 5 },
  { roots: { listChanged: "yes" } },
  { elicitation: [] },
  { experimental: { x: 1 } },
  { somethingNew: {} },
  [],
  "none",
];

const CLIENT_INFOS: unknown[] = [
  CLIENT,
  { name: "c", version: "2", title: "C", websiteUrl: "https://example.com" },
  { name: "c" },
  { name: "c", version: 2 },
  { name: "c", version: "1", icons: [{ src: "https://example.com/i.png" }] },
];

const META_VARIANTS: Message[] = [
  MODERN_META,
  { ...MODERN_META, "io.modelcontextprotocol/logLevel": "debug", progressToken: 7 },
  {
    ...MODERN_META,
    "io.modelcontextprotocol/clientCapabilities": {
      extensions: { "io.modelcontextprotocol/tasks": {} },
      roots: { listChanged: true },
    },
  },
  { ...MODERN_META, "io.modelcontextprotocol/clientInfo": undefined },
  { ...MODERN_META, "io.modelcontextprotocol/logLevel": "loud" },
  { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "2026-01-01" },
  { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "2025-11-25" },
  { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": 20260728 },
  { ...MODERN_META, "io.modelcontextprotocol/clientCapabilities": undefined },
  { ...MODERN_META, "io.modelcontextprotocol/clientCapabilities": { roots: 1 } },
  { ...MODERN_META, "io.modelcontextprotocol/clientInfo": { name: 1 } },
  { ...MODERN_META, "io.modelcontextprotocol/related-task": { taskId: "t" } },
  { ...MODERN_META, progressToken: 1.5 },
].map((meta) => JSON.parse(JSON.stringify(meta)));

Deno.test("front_desk.json is what the source says now (else: deno task tool-list)", async () => {
  const live = factsText(await liveFrontDeskFacts());
  const written = await Deno.readTextFile(new URL("../src/mcp/front_desk.json", import.meta.url));
  assert.deepEqual(
    JSON.parse(written),
    JSON.parse(live),
    "src/mcp/front_desk.json is stale: run `deno task tool-list` and commit the result",
  );
});

Deno.test("front desk: 2025 handshakes, every version, capability and clientInfo", async () => {
  for (const start of STARTS) {
    if (start.ssh && !SSH) continue;
    let answered = 0;
    for (const version of VERSIONS) {
      answered += await compare(start, `version ${version}`, [
        initialize(1, version),
        initialized,
        list(2),
        ping(3),
        list(4, { _meta: { progressToken: "p" } }),
      ]);
    }
    for (const [i, capabilities] of CAPABILITIES.entries()) {
      answered += await compare(start, `capabilities ${i}`, [
        initialize(1, "2025-11-25", { capabilities }),
        initialized,
        list(2),
      ]);
    }
    for (const [i, clientInfo] of CLIENT_INFOS.entries()) {
      answered += await compare(start, `clientInfo ${i}`, [
        initialize(1, "2025-06-18", { clientInfo }),
        list(2),
      ]);
    }
    // Odd orders: the desk answers only what it is sure of, exactly.
    answered += await compare(start, "list first", [list(1), initialize(2, "2025-11-25")]);
    answered += await compare(start, "ping first", [ping(1), list(2)]);
    answered += await compare(start, "initialized first", [
      initialized,
      initialize(1, "2025-11-25"),
    ]);
    answered += await compare(start, "initialize twice", [
      initialize(1, "2025-11-25"),
      initialize(2, "2024-11-05"),
      list(3),
    ]);
    answered += await compare(start, "a cursor", [
      initialize(1, "2025-11-25"),
      list(2, { cursor: "x" }),
      list(3),
    ]);
    answered += await compare(start, "modern after 2025", [
      initialize(1, "2025-11-25"),
      modern(2, "tools/list"),
    ]);
    answered += await compare(start, "an id that is not an integer", [
      { ...initialize(1, "2025-11-25"), id: 1.5 },
      list(2),
    ]);
    answered += await compare(start, "a string id and a field too many", [
      { ...initialize(1, "2025-11-25"), id: "one" },
      { ...list(2), extra: true },
    ]);
    // The desk does answer the ordinary opening (a desk that left everything would pass above).
    const expected = start.ssh ? 1 : 3;
    assert.equal(
      await compare(start, "ordinary", [
        initialize(1, "2025-11-25"),
        initialized,
        list(2),
        ping(3),
      ]),
      expected,
      `${start.label}: the desk answers the ordinary 2025 opening`,
    );
    assert.ok(answered > (start.ssh ? 10 : 20), `${start.label}: ${answered}`);
  }
});

Deno.test("front desk: 2026-07-28 requests and discovery, every envelope", async () => {
  for (const start of STARTS) {
    if (start.ssh && !SSH) continue;
    for (const [i, meta] of META_VARIANTS.entries()) {
      await compare(start, `list, meta ${i}`, [
        modern(1, "tools/list", meta),
        modern(2, "tools/list"),
      ]);
      await compare(start, `discover, meta ${i}`, [
        modern(1, "server/discover", meta),
        modern(2, "server/discover"),
        modern(3, "tools/list", meta),
      ]);
    }
    await compare(start, "discover, then 2025", [
      modern(1, "server/discover"),
      initialize(2, "2025-11-25"),
      initialized,
      list(3),
    ]);
    await compare(start, "discover, then an older 2025", [
      modern(1, "server/discover"),
      initialize(2, "2024-11-05"),
      list(3),
    ]);
    await compare(start, "list, then discover, then 2025", [
      modern(1, "tools/list"),
      modern(2, "server/discover"),
      initialize(3, "2025-11-25"),
    ]);
    await compare(start, "a modern ping", [modern(1, "ping"), modern(2, "tools/list")]);
    await compare(start, "discover without envelope", [
      { jsonrpc: "2.0", id: 1, method: "server/discover" },
    ]);
    await compare(start, "modern initialize", [modern(1, "initialize"), modern(2, "tools/list")]);
    await compare(start, "a cursor", [{
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: { _meta: MODERN_META, cursor: "x" },
    }]);
    const expected = start.ssh ? 1 : 3;
    assert.equal(
      await compare(start, "ordinary", [
        modern(1, "server/discover"),
        modern(2, "tools/list"),
        modern(3, "server/discover"),
      ]),
      expected,
      `${start.label}: the desk answers the ordinary 2026 opening`,
    );
  }
});

Deno.test("front desk: a selection the server refuses gets no answer", () => {
  for (
    const start of [
      { label: "unknown", toolsets: ["inspect"], tools: ["nope"] },
      { label: "outside", toolsets: ["inspect"], tools: ["kill_pane"] },
      { label: "unknown denied", toolsets: ["inspect"], denyTools: ["nope"] },
      {
        label: "none left",
        toolsets: ["inspect"],
        tools: ["list_panes"],
        denyTools: ["list_panes"],
      },
    ] satisfies Start[]
  ) {
    const desk = deskFor(start);
    assert.equal(desk.take(initialize(1, "2025-11-25")), undefined, start.label);
    assert.equal(desk.open, false);
  }
});

// ---------------------------------------------------------------------------------------------
// The real process

function startServer(...flags: string[]): StdioServer {
  const { cmd, args } = startCommand();
  return new StdioServer(cmd, [...args, "--socket", testSocketName(), ...flags], cleanEnv());
}

/** Writes every line at once, as a client that does not wait for answers would. */
async function pipeline(s: StdioServer, messages: Message[]): Promise<Map<unknown, RpcMessage>> {
  const answers = new Map<unknown, RpcMessage>();
  const ids = messages.filter((m) => m.id !== undefined).map((m) => m.id);
  await s.writeLine(messages.map((m) => JSON.stringify(m)).join("\n"));
  const deadline = Date.now() + 20_000;
  while (ids.some((id) => !answers.has(id))) {
    for (const m of s.notifications.splice(0)) answers.set(m.id, m);
    if (Date.now() > deadline) {
      throw new Error(`no answer to ${ids.filter((i) => !answers.has(i))}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return answers;
}

Deno.test("front desk, process: the session it opened is the SDK's (2024-11-05: no tasks)", async () => {
  for (const [version, asTask] of [["2024-11-05", false], ["2025-11-25", true]] as const) {
    const s = startServer();
    try {
      const answers = await pipeline(s, [
        initialize(1, version),
        initialized,
        list(2),
        {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: {
            name: "wait_for_text",
            arguments: { paneId: "%999", patterns: ["X"], timeoutMs: 100 },
            task: {},
          },
        },
        { jsonrpc: "2.0", id: 4, method: "prompts/list" },
        ping(5),
      ]);
      assert.equal(answers.get(1)!.result!.protocolVersion, version);
      assert.equal("tasks" in (answers.get(1)!.result!.capabilities as Message), asTask);
      assert.ok((answers.get(2)!.result!.tools as unknown[]).length > 40);
      // Under 2025-11-25 a waiting tool runs as a task; an older client's call runs plainly.
      const call = answers.get(3)!.result!;
      assert.equal("task" in call, asTask, JSON.stringify(call));
      if (!asTask) assert.equal(call.isError, true);
      assert.ok(Array.isArray(answers.get(4)!.result!.prompts));
      assert.deepEqual(answers.get(5)!.result, {});
      await s.endsCleanly();
      assert.doesNotMatch(s.stderr, /front desk/, "the SDK answers as the desk did");
    } finally {
      await s.kill();
    }
  }
});

Deno.test("front desk, process: held requests are answered, then end of input ends it", async () => {
  const s = startServer();
  try {
    const t0 = performance.now();
    // Everything at once, then end of input at once: the answers still come, in full.
    await s.writeLine(
      [
        JSON.stringify(modern(1, "server/discover")),
        "not json",
        JSON.stringify(modern(2, "tools/list")),
        JSON.stringify(modern(3, "prompts/list")),
        JSON.stringify({
          jsonrpc: "2.0",
          id: 4,
          method: "tools/call",
          params: { _meta: MODERN_META, name: "list_servers", arguments: {} },
        }),
      ].join("\n"),
    );
    const status = await s.closeStdin();
    assert.equal(status.code, 0);
    assert.ok(performance.now() - t0 < 10_000);
    const byId = new Map(s.notifications.map((m) => [m.id, m]));
    assert.deepEqual(byId.get(1)!.result!.supportedVersions, ["2026-07-28"]);
    assert.equal(byId.get(null)!.error!.code, -32700);
    assert.equal(byId.get(2)!.result!.resultType, "complete");
    assert.ok(Array.isArray(byId.get(3)!.result!.prompts));
    assert.ok(byId.get(4)!.result!.content, JSON.stringify(byId.get(4)));
    assert.equal(s.notifications.length, 5);
    assert.doesNotMatch(s.stderr, /front desk/);
  } finally {
    await s.kill();
  }
});

Deno.test("front desk, process: a client quiet after its handshake has the server's code loaded meanwhile", async () => {
  const s = startServer();
  try {
    await s.initialize();
    // Nothing more is sent: the desk's quiet spell ends and the server's code loads, which
    // says so on stderr (the line that names tmux and the socket). A desk that waited for the
    // next message would load it only then, and that message would wait for all of it.
    await waitFor(() => /tmux-mcp \S+: tmux /.test(s.stderr), "the server's code to load", 20_000);
    // The session the desk opened is the SDK's now: it answers what only it answers.
    const prompts = await s.request("prompts/list");
    assert.ok(Array.isArray(prompts.result!.prompts));
    await s.endsCleanly();
  } finally {
    await s.kill();
  }
});

Deno.test("front desk, process: end of input with nothing sent ends it promptly", async () => {
  const s = startServer();
  try {
    const t0 = performance.now();
    await s.endsCleanly();
    assert.ok(performance.now() - t0 < 10_000);
    assert.equal(s.notifications.length, 0);
  } finally {
    await s.kill();
  }
});

Deno.test("front desk, process: a refused selection is answered by nobody", async () => {
  const s = startServer("--tools", "no_such_tool");
  try {
    await s.writeLine(JSON.stringify(initialize(1, "2025-11-25")));
    const status = await s.child.status;
    assert.equal(status.code, 2);
    assert.equal(s.notifications.length, 0);
    // The process may end before its last stderr bytes are read here.
    await s.stderrEnded;
    assert.match(s.stderr, /no tool is named "no_such_tool"/);
  } finally {
    await s.kill();
  }
});
