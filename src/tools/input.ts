/**
 * Input: typing into panes, pasting, and running shell commands. Toolset execute.
 *
 * Every tool here passes the input guards first (input_guard.ts): never the caller's own pane
 * (unless `force`), never a pane a person is watching (unless the server was started with
 * `--allow-attended-input`), never a dead pane or one in copy mode (or any mode), and never a
 * synchronized window where any pane of the cohort is guarded.
 *
 * `send_keys` keeps text and key names apart on purpose: `text` is typed exactly as given
 * (`"C-c"` is three characters), `keys` are tmux key names, each checked against tmux's own
 * parser so a typo is refused instead of arriving as text.
 *
 * run_command is registered here; its code is in run_command.ts, its parts one import below it.
 *
 * @module
 */

import { z } from "zod";
import { byteLength, cutString } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { failureText, ToolFailure } from "../mcp/errors.ts";
import { deliverInput, guardInput, PartialInput } from "../mcp/input_guard.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import { checkedString, count, int, paneIdSchema } from "../mcp/schemas.ts";
import { describeKeyRefusals, MAX_KEY_NAME, refusedKeys } from "../tmux/keys.ts";
import type { Snapshot } from "../tmux/snapshot.ts";
import { serverKey, typedInto } from "./prompt_programs.ts";
import { runCommand } from "./run_command.ts";
import { type BatchRow, boundBatchRows, type BoundRows } from "./send_batch_rows.ts";
import {
  checkDeliverable,
  forceField,
  KEY_CHARACTER,
  nameCharacter,
  pasteViaBuffer,
  TYPES,
} from "./typing.ts";

/** Longest text `send_keys` types (it travels as one argument); longer goes by paste_text. */
const MAX_TEXT_BYTES = 32_768;
/** Longest text `paste_text` pastes. */
const MAX_PASTE_CHARS = 1_000_000;
/** Most key names in one call. */
const MAX_KEYS = 64;
/** Most operations in one batch. */
const MAX_OPERATIONS = 64;

// ---------------------------------------------------------------------------------------------
// send_keys

const sendInput = {
  paneId: paneIdSchema,
  text: z.string().max(MAX_TEXT_BYTES).optional(),
  keys: z.array(checkedString(MAX_KEY_NAME)).max(MAX_KEYS).optional(),
  enter: z.boolean().optional(),
  force: forceField,
};

const sentSchema = z.strictObject({
  paneId: paneIdSchema,
  text: z.string().nullable().describe("The text typed (cut to 4 KB here), or null."),
  textBytes: count().describe("UTF-8 bytes of text typed."),
  textOmittedBytes: count().describe("Bytes of the typed text left out of this echo."),
  keys: z.array(z.string()).describe("Key names pressed, in order."),
  enter: z.boolean().describe("Whether Enter was pressed last."),
  reachedPanes: z.array(paneIdSchema).describe(
    "Every pane the input reached: more than one when the window has synchronize-panes on.",
  ),
});

type SendArgs = {
  paneId: string;
  text?: string;
  keys?: string[];
  enter?: boolean;
  force?: boolean;
};
type Sent = z.infer<typeof sentSchema>;

/** Guards, checks key names, then types text, presses keys and Enter in one tmux call. */
async function sendOne(
  ctx: TmuxContext,
  snapshot: Snapshot,
  op: SendArgs,
  echoBytes = 4_096,
): Promise<Sent> {
  const nothingSent = 'Nothing was sent. A NUL byte is the key "C-Space" in keys.';
  if (op.text !== undefined) checkDeliverable("text", op.text, nothingSent);
  for (const key of op.keys ?? []) checkDeliverable("A key name", key, nothingSent);
  const pane = ctx.pane(snapshot, op.paneId);
  const keys = op.keys ?? [];
  const enter = op.enter ?? op.text !== undefined;
  if (op.text === undefined && keys.length === 0 && !enter) {
    throw new ToolFailure(
      "Nothing to send.",
      "Give text (typed as is), keys (tmux key names such as C-c) or enter: true.",
    );
  }
  const textBytes = op.text === undefined ? 0 : byteLength(op.text);
  if (textBytes > MAX_TEXT_BYTES) {
    throw new ToolFailure(
      `text is ${textBytes} bytes; send_keys types at most ${MAX_TEXT_BYTES}.`,
      "paste_text pastes longer text in one go.",
    );
  }
  guardInput(ctx, snapshot, pane, { force: op.force });
  if (keys.length > 0) {
    const refused = await refusedKeys(
      ctx.runner,
      ctx.address,
      serverKey(ctx, snapshot),
      keys,
      ctx.signal,
    );
    if (refused.length > 0) {
      const { message, hint } = describeKeyRefusals(refused);
      throw new ToolFailure(message, hint);
    }
  }
  const commands: string[][] = [];
  // As few commands as the input allows (tmux checks again before each after the first, and a
  // person's hook may stop the input there): the text in one, newlines and all (it travels
  // inside the guarded step's command string, where a newline goes as an escape); the keys and
  // Enter in another; Enter right after text alone goes with the text, as the byte Enter types
  // (a carriage return), so that nothing can fall between them.
  const text = op.text ?? "";
  const tail = [...keys, ...(enter ? ["Enter"] : [])];
  const enterWithText = text !== "" && keys.length === 0 && enter;
  if (text !== "") {
    commands.push(["send-keys", "-t", pane.id, "-l", "--", enterWithText ? `${text}\r` : text]);
  }
  if (tail.length > 0 && !enterWithText) commands.push(["send-keys", "-t", pane.id, "--", ...tail]);
  let reached: string[];
  try {
    reached = commands.length > 0
      ? await deliverInput(ctx, snapshot, pane, { force: op.force }, commands)
      : guardInput(ctx, snapshot, pane, { force: op.force }).map((p) => p.id);
  } catch (error) {
    // The text went in, the keys did not: what was typed may have started a program.
    if (error instanceof PartialInput) typedInto(ctx, snapshot, [...error.reachedPanes]);
    throw error;
  }
  if (commands.length > 0) typedInto(ctx, snapshot, reached);
  const shown = op.text === undefined ? null : cutString(op.text, echoBytes);
  return {
    paneId: pane.id,
    text: shown?.text ?? null,
    textBytes,
    textOmittedBytes: shown?.omittedBytes ?? 0,
    keys,
    enter,
    reachedPanes: reached,
  };
}

function describeSent(sent: Sent): string {
  const parts = [];
  if (sent.text !== null) parts.push(`${sent.textBytes} bytes of text`);
  if (sent.keys.length > 0) parts.push(`keys ${sent.keys.join(" ")}`);
  if (sent.enter) parts.push("Enter");
  const also = sent.reachedPanes.length > 1
    ? ` (synchronized: reached ${sent.reachedPanes.join(", ")})`
    : "";
  return `Sent ${parts.join(", then ") || "nothing"} to ${sent.paneId}${also}.`;
}

const sendKeys = defineTool({
  name: "send_keys",
  title: "Send keys to a pane",
  toolset: "execute",
  description: "Type text literally, then keys (tmux names: C-c, Enter, Up, M-x), then Enter " +
    "(default: after text). Refuses this server's own pane (unless force), watched, dead " +
    "and in-mode panes. For output and exit status: run_command.",
  input: sendInput,
  output: sentSchema.shape,
  annotations: TYPES,
  async run(args, ctx) {
    const snapshot = await ctx.guardSnapshot(args.paneId);
    const sent = await sendOne(ctx, snapshot, args);
    return { data: sent, summary: describeSent(sent) };
  },
});

// ---------------------------------------------------------------------------------------------
// send_keys_batch

const batchRow = z.strictObject({
  index: count(),
  paneId: paneIdSchema,
  status: z.enum(["sent", "failed", "skipped"]).describe(
    "skipped: not attempted because an earlier row failed and onError is stop.",
  ),
  error: z.string().nullable(),
  sent: sentSchema.nullable().describe("null when not sent, or when left out (see note)."),
});

/** Room kept for the envelope (stoppedAt, counts, note) around the rows. */
const BATCH_ENVELOPE_BYTES = 1_024;

/** What the bound made the batch leave out, as a sentence, or null when nothing. */
function batchNote(bounded: BoundRows, maxResultBytes: number): string | null {
  const rows = (n: number) => `${n} row${n === 1 ? "" : "s"}`;
  const parts = [
    bounded.echoesLeftOut
      ? `the echoes of ${rows(bounded.echoesLeftOut)} were left out (sent is null; they were typed)`
      : "",
    bounded.textsCut
      ? `the echoed text of ${rows(bounded.textsCut)} was shortened (textOmittedBytes counts it)`
      : "",
    bounded.errorsCut
      ? `the errors of ${rows(bounded.errorsCut)} were shortened (each says how many bytes it lost)`
      : "",
  ].filter((p) => p !== "");
  if (parts.length === 0) return null;
  const said = parts.join("; ");
  return `${said[0].toUpperCase()}${
    said.slice(1)
  }, to keep the response within ${maxResultBytes} bytes.`;
}

const sendKeysBatch = defineTool({
  name: "send_keys_batch",
  title: "Send keys to panes, in order",
  toolset: "execute",
  description:
    `Up to ${MAX_OPERATIONS} send_keys calls in order; onError stop (default) or continue.`,
  input: {
    operations: z.array(z.strictObject(sendInput)).min(1).max(MAX_OPERATIONS),
    onError: z.enum(["stop", "continue"]).optional(),
  },
  output: {
    results: z.array(batchRow),
    stoppedAt: int().nullable().describe("Index of the row that stopped the batch, or null."),
    sent: count(),
    failed: count(),
    skipped: count(),
    note: z.string().nullable().describe("What was left out to fit the bound, if anything."),
  },
  annotations: TYPES,
  async run(args, ctx) {
    const onError = args.onError ?? "stop";
    // Each row keeps its whole echo and error here; boundBatchRows fits them to the bound.
    const results: BatchRow[] = [];
    let stoppedAt: number | null = null;
    for (const [index, op] of args.operations.entries()) {
      if (stoppedAt !== null || ctx.signal.aborted) {
        results.push({ index, paneId: op.paneId, status: "skipped", error: null, sent: null });
        continue;
      }
      try {
        const sent = await sendOne(ctx, await ctx.guardSnapshot(op.paneId), op, MAX_TEXT_BYTES);
        results.push({ index, paneId: op.paneId, status: "sent", error: null, sent });
      } catch (error) {
        const text = failureText(error, ctx.address);
        results.push({ index, paneId: op.paneId, status: "failed", error: text, sent: null });
        if (onError === "stop") stoppedAt = index;
      }
    }
    const bounded = boundBatchRows(results, ctx.config.maxResultBytes - BATCH_ENVELOPE_BYTES);
    const tally = (s: string) => results.filter((r) => r.status === s).length;
    const data = {
      results: bounded.rows,
      stoppedAt,
      sent: tally("sent"),
      failed: tally("failed"),
      skipped: tally("skipped"),
      note: batchNote(bounded, ctx.config.maxResultBytes),
    };
    return {
      data,
      summary: `Batch: ${data.sent} sent, ${data.failed} failed, ${data.skipped} skipped${
        stoppedAt !== null ? ` (stopped at row ${stoppedAt})` : ""
      }.${data.note === null ? "" : " Some echoes or errors were cut to fit the bound."}`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// paste_text

/**
 * Refuses text that would not stay text inside a paste: a control character would act as a
 * key (ESC could end the bracketed paste and turn the rest into keystrokes). `\r\n` is
 * taken as a newline; anything else is refused with its position, so nothing is removed
 * behind the caller's back.
 */
export function pastableText(text: string): string {
  const normalized = text.replaceAll("\r\n", "\n");
  const m = KEY_CHARACTER.exec(normalized);
  if (m) {
    throw new ToolFailure(
      `text holds ${nameCharacter(m[0])} at character ${m.index}: a control character in a ` +
        "paste acts as a key (ESC can end a bracketed paste early), so nothing was pasted.",
      "Remove control characters (strip ANSI colour codes first); to press keys, use " +
        'send_keys with keys (e.g. ["Escape"], ["C-c"]).',
    );
  }
  return normalized;
}

const pasteText = defineTool({
  name: "paste_text",
  title: "Paste text into a pane",
  toolset: "execute",
  description:
    "Paste text (bracketed if asked), Enter if enter; control characters refused. Guarded " +
    "as send_keys.",
  input: {
    paneId: paneIdSchema,
    text: z.string().min(1).max(MAX_PASTE_CHARS),
    enter: z.boolean().optional(),
    force: forceField,
  },
  output: {
    paneId: paneIdSchema,
    bytes: count().describe("UTF-8 bytes pasted."),
    enter: z.boolean(),
    reachedPanes: z.array(paneIdSchema),
  },
  annotations: TYPES,
  async run(args, ctx) {
    checkDeliverable("text", args.text, "Nothing was pasted.");
    const text = pastableText(args.text);
    const snapshot = await ctx.guardSnapshot(args.paneId);
    const pane = ctx.pane(snapshot, args.paneId);
    guardInput(ctx, snapshot, pane, { force: args.force, paste: true });
    const enter = args.enter ?? false;
    const reached = await pasteViaBuffer(ctx, snapshot, pane, text, {
      enter,
      keepNewlines: false,
      force: args.force,
    });
    typedInto(ctx, snapshot, reached);
    const bytes = byteLength(text);
    return {
      data: { paneId: pane.id, bytes, enter, reachedPanes: reached },
      summary: `Pasted ${bytes} bytes into ${pane.id}${enter ? ", then Enter" : ""}.`,
    };
  },
});

/** Registers the input tools. */
export function registerInputTools(registry: ToolRegistry): void {
  registry.add(sendKeys, sendKeysBatch, pasteText, runCommand);
}
