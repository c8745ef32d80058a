/**
 * What a model and a client are shown of the tools, from the real server process started as
 * the `start` task starts it: within the context budget, portable to every client (the rules
 * of the MCP Inspector's `--strict` tools/list check), and with the `_meta` Claude Code reads
 * declaring bounds the results really keep.
 */

import assert from "node:assert/strict";
import { costOf, listTools, modelVisibleBudget, toolListBudget } from "../scripts/context_cost.ts";
import {
  ALWAYS_LOAD,
  LARGE_RESULTS,
  MAX_SUMMARY_CHARS,
  maxResultChars,
  SEEDED_SCHEMAS,
} from "../src/mcp/listing.ts";
import { portabilityProblems } from "../src/mcp/portable_schema.ts";
import { TASK_EXECUTION, TASK_TOOLS } from "../src/mcp/tasks.ts";
import { errorResult, successResult } from "../src/mcp/tool_result.ts";
import { DEFAULT_TOOLSETS, TOOLSETS } from "../src/mcp/toolsets.ts";
import { jsonStringBytes, MAX_RESULT_BYTES, replyBound } from "../src/mcp/bounds.ts";
import { MAX_FAILURE_BYTES } from "../src/mcp/errors.ts";
import { connect } from "./helpers/mcp.ts";
import { MODERN_META, startCommand, StdioServer } from "./helpers/stdio.ts";
import { parseRendered } from "./helpers/rendered.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

Deno.test("default toolsets: a model is shown at most 24 000 bytes for 51 tools and their average for each more; tools/list likewise 70 000", async () => {
  const cost = costOf(DEFAULT_TOOLSETS, await listTools(DEFAULT_TOOLSETS));
  const MODEL_VISIBLE_BUDGET = modelVisibleBudget(cost.tools);
  const TOOL_LIST_BUDGET = toolListBudget(cost.tools);
  const largest = cost.perTool.slice(0, 5).map((t) => `${t.name} ${t.modelVisibleBytes}`);
  assert.ok(
    cost.modelVisibleBytes <= MODEL_VISIBLE_BUDGET,
    `name + description + input schema of ${cost.tools} tools: ${cost.modelVisibleBytes} bytes ` +
      `(budget ${MODEL_VISIBLE_BUDGET}); largest: ${largest.join(", ")}`,
  );
  assert.ok(
    cost.listBytes <= TOOL_LIST_BUDGET,
    `tools/list: ${cost.listBytes} bytes (budget ${TOOL_LIST_BUDGET})`,
  );
});

Deno.test("under 2026-07-28 the same budgets hold: what a modern client is shown of the default toolsets", async () => {
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, [...args, "--toolsets", DEFAULT_TOOLSETS.join(",")], {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  });
  try {
    const answer = await server.request("tools/list", {
      _meta: MODERN_META,
    });
    assert.ok(answer.result, JSON.stringify(answer.error));
    const result = answer.result as { tools: Record<string, unknown>[] };
    const cost = costOf(DEFAULT_TOOLSETS, result);
    const legacy = costOf(DEFAULT_TOOLSETS, await listTools(DEFAULT_TOOLSETS));
    assert.equal(cost.tools, legacy.tools, "the same tools under both protocols");
    assert.ok(
      cost.modelVisibleBytes <= modelVisibleBudget(cost.tools),
      `2026-07-28: ${cost.modelVisibleBytes} model-visible bytes`,
    );
    assert.ok(
      cost.listBytes <= toolListBudget(cost.tools),
      `2026-07-28: tools/list ${cost.listBytes} bytes`,
    );
  } finally {
    await server.closeStdin();
  }
});

Deno.test("every schema of every tool is portable: no type arrays, nothing that constrains nothing", async () => {
  const { tools } = await listTools(TOOLSETS);
  const problems = tools.flatMap((tool) =>
    (["inputSchema", "outputSchema"] as const).flatMap((key) =>
      portabilityProblems(tool[key], `${tool.name} ${key}`)
    )
  );
  assert.deepEqual(problems, []);
  for (const tool of tools) {
    const input = tool.inputSchema as Record<string, unknown>;
    assert.equal(input.type, "object", `${tool.name}: an input schema is an object`);
    assert.equal(input.additionalProperties, false, `${tool.name}: unknown fields are refused`);
    const text = JSON.stringify([tool.inputSchema, tool.outputSchema]);
    if (SEEDED_SCHEMAS.has(tool.name as string)) continue;
    assert.ok(!text.includes('"$schema"'), `${tool.name}: no $schema`);
    assert.ok(
      !text.includes(String(Number.MAX_SAFE_INTEGER)),
      `${tool.name}: no safe-integer bounds`,
    );
    assert.deepEqual(
      tool.execution,
      TASK_TOOLS.has(tool.name as string) ? TASK_EXECUTION : undefined,
      `${tool.name}: execution only when not the default (the tools that may run as tasks)`,
    );
  }
});

Deno.test("_meta marks the tools an agent needs first and the bounds of long results", async () => {
  const { tools } = await listTools(TOOLSETS);
  const names = new Set(tools.map((t) => t.name as string));
  for (const set of [ALWAYS_LOAD, LARGE_RESULTS, SEEDED_SCHEMAS]) {
    for (const name of set) assert.ok(names.has(name), `${name} is a tool`);
  }
  assert.deepEqual(
    [...ALWAYS_LOAD].sort(),
    [
      "capture_pane",
      "list_panes",
      "list_sessions",
      "list_windows",
      "run_command",
      "send_keys",
      "wait_for_text",
    ],
  );
  for (const tool of tools) {
    const name = tool.name as string;
    const meta = (tool._meta ?? {}) as Record<string, unknown>;
    assert.equal(meta["anthropic/alwaysLoad"], ALWAYS_LOAD.has(name) ? true : undefined, name);
    assert.equal(
      meta["anthropic/maxResultSizeChars"],
      LARGE_RESULTS.has(name) ? maxResultChars() : undefined,
      name,
    );
  }
  assert.ok(maxResultChars() <= 50_000, "every text fits what Claude Code shows inline");
  // A tool whose answer says what it left out may fill the bound, and must say so; but these,
  // whose lists or strings stay far below 50 000 characters however large tmux's state.
  const small = new Set([
    "get_pane_info", // one pane: its strings each cut to a few KB
    "find_pane_by_position", // one pane
    "kill_pane", // the ids removed: a few bytes each
    "kill_window",
    "kill_session",
    "kill_server",
  ]);
  for (const tool of tools) {
    const name = tool.name as string;
    if (!/"omitted\w*"|"\w*[cC]omplete"/.test(JSON.stringify(tool.outputSchema ?? {}))) continue;
    assert.ok(
      LARGE_RESULTS.has(name) || small.has(name),
      `${name} may leave entries out: declare its bound (LARGE_RESULTS) or say why it is small`,
    );
  }
});

Deno.test("capture_pane asked for 10 000 lines fills its bound and stays within what it declares", async () => {
  const t = await TestTmux.start();
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-listing-" });
  const c = await connect({ socketName: t.socket });
  try {
    await t.tmux("set-option", "-g", "history-limit", "20000");
    const file = `${dir}/lines`;
    const row = (i: number) => `${String(i).padStart(5, "0")} ${"é".repeat(30)} ${"x".repeat(30)}`;
    await Deno.writeTextFile(
      file,
      Array.from({ length: 12_000 }, (_, i) => row(i)).join("\n") + "\nDONE\n",
    );
    const paneId = (await t.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      `cat '${file}'; exec sleep 100000`,
    )).trim();
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).includes("DONE"),
      "the pane showing DONE",
    );
    const result = await c.call("capture_pane", { paneId, start: -12_000, maxLines: 10_000 });
    assert.notEqual(result.isError, true);
    const text = (result.content as { type: string; text: string }[])[0].text;
    const data = result.structuredContent as { droppedLines: number; text: string };
    assert.ok(data.droppedLines > 0, "the lines past the bound are left out and counted");
    const dataBytes = new TextEncoder().encode(JSON.stringify(data)).length;
    assert.ok(dataBytes > MAX_RESULT_BYTES * 0.8, `${dataBytes} bytes of data: the bound is used`);
    const wire = new TextEncoder().encode(JSON.stringify(result)).length;
    assert.ok(wire <= replyBound(), `the whole reply is ${wire} bytes, past ${replyBound()}`);
    assert.ok(
      text.length <= maxResultChars(),
      `${text.length} characters, past the declared ${maxResultChars()}`,
    );
  } finally {
    await c.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a long summary is cut, never inside a character, and the data stays whole", () => {
  const data = { note: "x".repeat(10) };
  for (const summary of ["a".repeat(5_000), "😀".repeat(3_000), `a${"😀".repeat(3_000)}`]) {
    const text = (successResult({ data, summary }).content[0] as { text: string }).text;
    const first = text.slice(0, text.indexOf("\n"));
    assert.ok(first.length <= MAX_SUMMARY_CHARS, `${first.length} characters`);
    assert.ok(first.isWellFormed(), "no lone surrogate");
    assert.ok(first.endsWith("…"));
    assert.deepEqual(parseRendered(text).data, data);
  }
  const short = (successResult({ data, summary: "Done." }).content[0] as { text: string }).text;
  assert.equal(short, "Done.\nnote: xxxxxxxxxx");
});

Deno.test("a summary is one visible line, also when cut, and never cut inside an escape", () => {
  const data = { note: "x" };
  // deno-lint-ignore no-control-regex
  const unsafe = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
  const hostile = "a\nb\rc\u0085d\u2028e\u2029f\tg\x1b[2Jh\u009bi\u202ej";
  for (const summary of [hostile, hostile.repeat(500), `${"a".repeat(995)}\u2028b`]) {
    const text = (successResult({ data, summary }).content[0] as { text: string }).text;
    const [first, ...rest] = text.split("\n");
    assert.doesNotMatch(first, unsafe);
    assert.deepEqual(rest, ["note: x"]);
    assert.ok(first.length <= MAX_SUMMARY_CHARS, `${first.length} characters`);
    assert.doesNotMatch(first, /\\(?:u[0-9a-f]{0,3})?…$/, "an escape cut in half");
  }
  const first = (successResult({ data, summary: `${"a".repeat(995)}\u2028b` }).content[0] as {
    text: string;
  }).text.split("\n")[0];
  assert.equal(first, `${"a".repeat(995)}…`);
});

Deno.test("a result a tool failed to bound is never sent: an error names the tool instead", () => {
  // Data that fills the bound is sent as it is.
  const full = successResult({
    data: { blob: "x".repeat(MAX_RESULT_BYTES - 100) },
    summary: "Ok.",
  });
  assert.notEqual(full.isError, true);
  assert.ok(new TextEncoder().encode(JSON.stringify(full)).length <= replyBound());
  // A field left uncut (backslashes, doubled as JSON) is not.
  const data = { names: Array.from({ length: 32 }, () => "\\".repeat(8_000)) };
  const result = successResult(
    { data, summary: "Window @1." },
    MAX_RESULT_BYTES,
    "get_window_info",
  );
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent, undefined);
  const text = (result.content[0] as { text: string }).text;
  assert.match(text, /^get_window_info built a result of \d+ bytes, past the \d+-byte bound/);
  assert.match(text, /narrower target/);
  assert.ok(new TextEncoder().encode(JSON.stringify(result)).length < 1_000);
});

Deno.test("an error is cut within its bound too, and says how much it left out", () => {
  // A reason of any length (a tool's load failure, a refusal echoing a value) and controls shown
  // as four characters each: far past any bound on a text as it is.
  const result = errorResult(`Refused: ${"\x01é".repeat(100_000)}`);
  assert.equal(result.isError, true);
  const text = (result.content[0] as { text: string }).text;
  assert.ok(jsonStringBytes(text) <= MAX_FAILURE_BYTES, `${jsonStringBytes(text)} bytes`);
  assert.match(text, /^Refused: (?:\\x01é)*(?:\\x01)?… \(\d+ bytes cut\)$/);
  assert.ok(new TextEncoder().encode(JSON.stringify(result)).length < 10_000);
  // A short one is sent whole.
  const short = errorResult("No pane %9. list_panes lists them.");
  assert.equal((short.content[0] as { text: string }).text, "No pane %9. list_panes lists them.");
});
