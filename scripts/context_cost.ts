/**
 * `deno task context-cost`: what the tool definitions cost a model's context. A client sends
 * every listed tool's name, description and input schema to the model (on each turn, or when
 * its tool search loads the tool), so those bytes are paid again and again; the whole
 * `tools/list` answer (output schemas, annotations, `_meta` too) is paid once per connection.
 *
 * It starts the real server process with exactly the `start` task's flags, asks `tools/list`
 * for the default toolsets and for all toolsets, and prints the bytes of the answer, the
 * model-visible bytes (≈ bytes / 4 tokens), and each tool's share, largest first.
 *
 * Usage: deno task context-cost [--json] [--help]
 *
 * @module
 */

import { DEFAULT_TOOLSETS, type Toolset, TOOLSETS } from "../src/mcp/toolsets.ts";
import { startCommand, StdioServer } from "../tests/helpers/stdio.ts";
import { commandLine } from "./cli.ts";

const HELP = `deno task context-cost — what the tool definitions cost a model's context

Usage: deno task context-cost [--json] [--help]

Starts the real server process with exactly the start task's flags (no tmux server), asks
tools/list for the default toolsets and for all toolsets, and prints for each the bytes of the
answer, the model-visible bytes (every tool's name, description and input schema; ≈ bytes / 4
tokens), and each tool's share, largest first; the default toolsets' against their budgets.

Options:
  --json      print the figures as JSON instead
  --help, -h  this text
`;

/**
 * The budgets were set for the 51 tools of the default toolsets of the first lean pass: at most
 * 24 000 bytes of name, description and input schema (about 6 000 tokens, paid on every turn
 * a client shows them all) and 70 000 bytes of `tools/list` (read at every start). A tool
 * added since (jobs, waiting for idle, buffers, moving panes...) may spend what an average
 * tool of that catalogue spent, no more: the budgets grow by that average per tool, so the
 * catalogue stays as lean per tool as it was made, and no new tool is paid for by cutting the
 * words of another.
 */
const BUDGETED_TOOLS = 51;

/** Model-visible bytes for `tools` tools: 24 000 for the first 51, their average for each more. */
export function modelVisibleBudget(tools: number): number {
  return Math.floor(24_000 * Math.max(tools, BUDGETED_TOOLS) / BUDGETED_TOOLS);
}

/** `tools/list` bytes for `tools` tools: 70 000 for the first 51, their average for each more. */
export function toolListBudget(tools: number): number {
  return Math.floor(70_000 * Math.max(tools, BUDGETED_TOOLS) / BUDGETED_TOOLS);
}

/** One tool's cost. */
export interface ToolCost {
  readonly name: string;
  /** Name + description + input schema, as JSON: what a model is shown of the tool. */
  readonly modelVisibleBytes: number;
  /** The tool's whole entry in `tools/list`, as JSON. */
  readonly listBytes: number;
}

/** What one selection of toolsets costs. */
export interface ContextCost {
  readonly toolsets: readonly Toolset[];
  readonly tools: number;
  /** The `tools/list` result as JSON, as it goes over the wire (without the JSON-RPC frame). */
  readonly listBytes: number;
  /** The sum of every tool's {@link ToolCost.modelVisibleBytes}. */
  readonly modelVisibleBytes: number;
  /** Every tool, largest model-visible share first. */
  readonly perTool: readonly ToolCost[];
}

const bytes = (value: unknown): number => new TextEncoder().encode(JSON.stringify(value)).length;

/**
 * What a model is shown of one listed tool: its name, description and input schema as JSON.
 * Clients differ in framing; these three are what every one of them passes on.
 */
export function modelVisible(tool: Record<string, unknown>): number {
  return bytes({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
}

/** Measures a `tools/list` result already in hand. */
export function costOf(
  toolsets: readonly Toolset[],
  result: { tools: Record<string, unknown>[] },
): ContextCost {
  const perTool = result.tools.map((tool) => ({
    name: String(tool.name),
    modelVisibleBytes: modelVisible(tool),
    listBytes: bytes(tool),
  })).sort((a, b) => b.modelVisibleBytes - a.modelVisibleBytes);
  return {
    toolsets,
    tools: result.tools.length,
    listBytes: bytes(result),
    modelVisibleBytes: perTool.reduce((sum, t) => sum + t.modelVisibleBytes, 0),
    perTool,
  };
}

/**
 * The `tools/list` answer of the server process started as the `start` task starts it, with
 * `--toolsets`. Listing needs no tmux server; the process is given none.
 */
export async function listTools(
  toolsets: readonly Toolset[],
): Promise<{ tools: Record<string, unknown>[] }> {
  const { cmd, args } = startCommand();
  const server = new StdioServer(cmd, [...args, "--toolsets", toolsets.join(",")], {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  });
  try {
    await server.initialize();
    const answer = await server.request("tools/list");
    if (!answer.result) {
      throw new Error(`tools/list failed: ${answer.error?.message}\n${server.stderr}`);
    }
    return answer.result as { tools: Record<string, unknown>[] };
  } finally {
    await server.closeStdin();
  }
}

/** What the tool definitions of a selection of toolsets cost, measured on the real process. */
export async function measureContextCost(toolsets: readonly Toolset[]): Promise<ContextCost> {
  return costOf(toolsets, await listTools(toolsets));
}

function report(cost: ContextCost, budgets: boolean): string {
  const of = (budget: number) => budgets ? ` of ${budget}` : "";
  const TOOL_LIST_BUDGET = toolListBudget(cost.tools);
  const MODEL_VISIBLE_BUDGET = modelVisibleBudget(cost.tools);
  const lines = [
    `toolsets ${cost.toolsets.join(",")}: ${cost.tools} tools`,
    `  tools/list bytes:     ${cost.listBytes}${of(TOOL_LIST_BUDGET)} (≈ ${
      Math.round(cost.listBytes / 4)
    } tokens)`,
    `  model-visible bytes:  ${cost.modelVisibleBytes}${of(MODEL_VISIBLE_BUDGET)} (≈ ${
      Math.round(cost.modelVisibleBytes / 4)
    } tokens)`,
    `  per tool (model-visible / whole entry):`,
    ...cost.perTool.map((t) =>
      `    ${t.name.padEnd(24)} ${String(t.modelVisibleBytes).padStart(6)} ${
        String(t.listBytes).padStart(6)
      }`
    ),
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = commandLine("context-cost", HELP, {
    json: { type: "boolean", default: false },
  });
  const costs = [
    await measureContextCost(DEFAULT_TOOLSETS),
    await measureContextCost(TOOLSETS),
  ];
  const text = values.json
    ? JSON.stringify(costs, null, 2)
    : costs.map((cost, i) => report(cost, i === 0)).join("\n\n");
  Deno.stdout.writeSync(new TextEncoder().encode(`${text}\n`));
}
