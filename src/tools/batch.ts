/**
 * call_tools_batch: several calls of other tools in one request, in order. It exists in every
 * toolset selection because it can do nothing by itself: each row goes through the registry
 * exactly as a direct call would — looked up among the tools on offer (a tool outside the
 * selection fails its row and never runs), its arguments validated, its guards applied.
 *
 * @module
 */

import { z } from "zod";
import { cutString, jsonBytes, mostThatFits } from "../mcp/bounds.ts";
import { errorStart, visible } from "../mcp/errors.ts";
import { entryReplyBytes } from "../mcp/render.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import { checkedString, count, int } from "../mcp/schemas.ts";
import { ALWAYS_ON } from "../mcp/toolsets.ts";
import { changes } from "./arguments.ts";
import { meantHint } from "../near_miss.ts";

/** Most calls one batch runs. */
export const MAX_BATCH_OPERATIONS = 16;

/** Room kept for the envelope (stoppedAt, counts, note) around the rows. */
const ENVELOPE_BYTES = 1_024;

/** Longest error text kept per row. */
const MAX_ERROR_BYTES = 4_096;

/**
 * What each failed row's error may take in the reply however much the rows before it took
 * (less only when the bound leaves less for every row): the start of why it failed.
 */
const ERROR_HEAD_BYTES = 512;

const BATCH_NAME = "call_tools_batch";

const rowSchema = z.strictObject({
  index: int().describe("Position of the operation in the request, from 0."),
  tool: z.string(),
  success: z.boolean(),
  error: z.string().nullable().describe("Why the call failed (as the tool would say it)."),
  result: z.record(z.string(), z.unknown()).nullable().describe(
    "The tool's structured result, as a direct call returns it; null on failure or when cut.",
  ),
  omittedResultBytes: count().describe(
    "Bytes of this row's result left out to keep the response within its bound (0: whole).",
  ),
});

type Row = z.infer<typeof rowSchema>;

/** Builds the batch tool around the registry it calls into. */
function batchTool(registry: ToolRegistry) {
  return defineTool({
    name: BATCH_NAME,
    title: "Call tools in a batch",
    toolset: ALWAYS_ON,
    description:
      `Call up to ${MAX_BATCH_OPERATIONS} tools in order, each as if alone; onError stop ` +
      "(default) or continue.",
    input: {
      operations: z.array(z.strictObject({
        tool: checkedString(128),
        arguments: z.record(z.string(), z.unknown()).default({}),
      })).min(1).max(MAX_BATCH_OPERATIONS),
      onError: z.enum(["stop", "continue"]).default("stop"),
    },
    output: {
      results: z.array(rowSchema),
      stoppedAt: int().nullable().describe("Index of the failed row the batch stopped at."),
      notRun: count().describe("Operations never started (after a stop, or cancellation)."),
      succeeded: count(),
      failed: count(),
      complete: z.boolean().describe("Whether every row's result is whole."),
      note: z.string().nullable().describe("What was left out, if anything."),
    },
    // Rows may do anything the selected toolsets allow.
    annotations: changes({ destructive: true, idempotent: false }),
    async run(args, ctx) {
      const rows: Row[] = [];
      let stoppedAt: number | null = null;
      const total = args.operations.length;
      /**
       * The batch's progress: one unit per row, a row's own progress scaled into its unit, so a
       * batch of long waits reports while its rows wait. The protocol wants each value greater
       * than the last: one that is not (a row's start, where the row before it ended) is left
       * out.
       */
      let reported = -1;
      const progress = async (value: number, message: string) => {
        if (!(value > reported)) return;
        reported = value;
        await ctx.progress(value, total, message);
      };
      const socketName = (args as { socket_name?: string }).socket_name;
      for (const [index, op] of args.operations.entries()) {
        if (ctx.signal.aborted) break;
        const tool = op.tool === BATCH_NAME ? undefined : registry.get(op.tool);
        let row: Row;
        if (!tool) {
          row = failedRow(
            index,
            op.tool,
            op.tool === BATCH_NAME
              ? "Batches do not nest: call_tools_batch cannot be a row of itself."
              : `No tool ${JSON.stringify(op.tool)} on this server` +
                `${
                  meantHint(op.tool, registry.tools.map((t) => t.name))
                } (its toolset may not be ` +
                "selected, or --tools / --deny-tools left it out). tools/list shows what is on " +
                "offer.",
          );
        } else {
          const rowArgs: Record<string, unknown> = { ...op.arguments };
          if (socketName !== undefined && !("socket_name" in rowArgs)) {
            rowArgs.socket_name = socketName;
          }
          // The batch's own host is every row's default; a row may name another.
          if (ctx.host !== undefined && !("host" in rowArgs)) rowArgs.host = ctx.host;
          const result = await registry.call(tool, rowArgs, {
            signal: ctx.signal,
            // Short of the row's end, which the batch reports with the row's outcome.
            progress: (done, of, message) =>
              progress(
                index + (of && of > 0 ? Math.min(Math.max(done / of, 0), 0.99) : 0),
                message ? `${op.tool}: ${message}` : op.tool,
              ),
            log: ctx.log,
          });
          row = result.isError ? failedRow(index, op.tool, errorText(result.content)) : {
            index,
            tool: op.tool,
            success: true,
            error: null,
            result: (result.structuredContent ?? {}) as Record<string, unknown>,
            omittedResultBytes: 0,
          };
        }
        rows.push(row);
        await progress(index + 1, `${op.tool}: ${row.success ? "ok" : "failed"}`);
        if (!row.success && args.onError === "stop") {
          stoppedAt = index;
          break;
        }
      }
      const bounded = boundRows(rows, ctx.config.maxResultBytes - ENVELOPE_BYTES);
      const succeeded = rows.filter((r) => r.success).length;
      const failed = rows.length - succeeded;
      const notRun = total - rows.length;
      const notes = [
        bounded.cut
          ? `the results of ${bounded.cut} row${
            bounded.cut === 1 ? "" : "s"
          } were left out (${bounded.bytes} bytes)`
          : "",
        bounded.errorsCut
          ? `the errors of ${bounded.errorsCut} row${
            bounded.errorsCut === 1 ? "" : "s"
          } were shortened (each says how many bytes it lost)`
          : "",
      ].filter((n) => n !== "").join(" and ");
      return {
        data: {
          results: bounded.rows,
          stoppedAt,
          notRun,
          succeeded,
          failed,
          complete: bounded.cut === 0,
          note: notes === ""
            ? null
            : `${notes[0].toUpperCase()}${
              notes.slice(1)
            } to keep the response within ${ctx.config.maxResultBytes} bytes; call those tools alone to see them whole.`,
        },
        summary: `${succeeded} of ${total} operations succeeded` +
          (failed ? `, ${failed} failed` : "") +
          (stoppedAt !== null ? `; stopped at operation ${stoppedAt}` : "") +
          (notRun ? `; ${notRun} not run` : "") + "." +
          (bounded.cut ? ` ${bounded.cut} results cut to fit the bound.` : "") +
          (bounded.errorsCut ? ` ${bounded.errorsCut} errors shortened to fit the bound.` : ""),
      };
    },
  });
}

/** A failed row, its error whole (as the tool would say it): {@link boundRows} cuts it. */
function failedRow(index: number, tool: string, error: string): Row {
  return {
    index,
    tool,
    success: false,
    error: visible(error),
    result: null,
    omittedResultBytes: 0,
  };
}

function errorText(content: unknown): string {
  if (Array.isArray(content)) {
    const first = content.find((c) => c && typeof c === "object" && c.type === "text");
    if (first && typeof first.text === "string") return first.text;
  }
  return "The tool failed without saying why.";
}

/** `row` with the first `keep` UTF-16 units of `whole` as its error, saying how many bytes went. */
function withErrorStart(row: Row, whole: string, keep: number): Row {
  return { ...row, error: errorStart(whole, keep) };
}

/**
 * How many UTF-16 units of `whole`, from `least` to `most`, `row` keeps as its error for its
 * cost to be within `maxCost`: the most found, `least` when not even one more fits.
 */
function errorKeep(row: Row, whole: string, least: number, most: number, maxCost: number): number {
  return mostThatFits(
    least,
    most,
    (n) => entryReplyBytes(withErrorStart(row, whole, n)) <= maxCost,
  );
}

/** What {@link boundRows} kept, and what it left out. */
interface Bounded {
  readonly rows: Row[];
  /** Rows whose result was left out, and its bytes. */
  readonly cut: number;
  readonly bytes: number;
  /** Rows whose error was shortened to fit (shorter than {@link MAX_ERROR_BYTES} cuts any). */
  readonly errorsCut: number;
}

/**
 * Keeps every row within `maxBytes` of each of the reply's two forms (see {@link entryReplyBytes}): its
 * index, tool and success always, so the model knows what ran, what succeeded and what failed,
 * and the start of each failed row's error — {@link ERROR_HEAD_BYTES} of it, or an equal share
 * of what the bound leaves when that is less. What room is left goes first to the succeeded
 * rows' results, in order (the data the model called for: a result that does not fit is left
 * out whole, its bytes counted), then to the rest of the errors, in order, up to
 * {@link MAX_ERROR_BYTES} each (an error cut says how many bytes it lost).
 */
function boundRows(rows: Row[], maxBytes: number): Bounded {
  const wholeErrors = rows.map((row) => row.error ?? "");
  const capped = wholeErrors.map((e) => cutString(e, MAX_ERROR_BYTES).text.length);
  const bare = rows.map((row, i) =>
    row.success
      ? {
        ...row,
        result: null,
        omittedResultBytes: row.result === null ? 0 : jsonBytes(row.result),
      }
      : withErrorStart(row, wholeErrors[i], 0)
  );
  const failed = rows.filter((row) => !row.success).length;
  let spare = maxBytes - 2 - bare.reduce((n, row) => n + entryReplyBytes(row), 0);
  const head = Math.max(0, Math.min(ERROR_HEAD_BYTES, Math.floor(spare / Math.max(failed, 1))));
  const keep = bare.map((row, i) =>
    row.success ? 0 : errorKeep(row, wholeErrors[i], 0, capped[i], entryReplyBytes(row) + head)
  );
  const out = bare.map((row, i) =>
    row.success ? row : withErrorStart(row, wholeErrors[i], keep[i])
  );
  spare = maxBytes - 2 - out.reduce((n, row) => n + entryReplyBytes(row), 0);
  for (const [i, row] of rows.entries()) {
    if (!row.success) continue;
    const more = entryReplyBytes(row) - entryReplyBytes(out[i]);
    if (more > spare) continue;
    out[i] = row;
    spare -= more;
  }
  let errorsCut = 0;
  for (const [i, row] of rows.entries()) {
    if (row.success) continue;
    const least = entryReplyBytes(out[i]);
    const kept = errorKeep(row, wholeErrors[i], keep[i], capped[i], least + Math.max(spare, 0));
    out[i] = withErrorStart(row, wholeErrors[i], kept);
    if (kept < capped[i]) errorsCut++;
    spare -= entryReplyBytes(out[i]) - least;
  }
  const left = out.filter((row) => row.omittedResultBytes > 0);
  return {
    rows: out,
    cut: left.length,
    bytes: left.reduce((n, row) => n + row.omittedResultBytes, 0),
    errorsCut,
  };
}

/** Registers call_tools_batch (in every toolset selection). */
export function registerBatchTools(registry: ToolRegistry): void {
  registry.add(batchTool(registry));
}
