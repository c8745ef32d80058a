/**
 * Paste buffers this server makes and removes. Toolset manage.
 *
 * A person's buffers (their copy history) are theirs: this server only ever deletes buffers
 * whose name starts with {@link BUFFER_PREFIX}, which it gave them itself, so it recognises
 * its own after a restart and never touches anyone else's. Named buffers do not count
 * against tmux's buffer-limit, so loading one never pushes the person's history out.
 *
 * @module
 */

import { z } from "zod";
import { byteLength } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { sample } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { defineTool, type ToolRegistry } from "../mcp/registry.ts";
import { checkedString, count } from "../mcp/schemas.ts";
import { newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { changes } from "./arguments.ts";

/** The name prefix of every buffer this server creates, and the only ones it deletes. */
export const BUFFER_PREFIX = "tmux-mcp-";

/** The largest text load_buffer takes, in UTF-8 bytes. */
export const MAX_BUFFER_BYTES = 4 * 1024 * 1024;

const suffixSchema = z.string().regex(
  /^[A-Za-z0-9_.-]{1,64}$/,
  "letters, digits and _ . - (up to 64)",
);

const bufferNameSchema = checkedString(256);

/** A fresh buffer name of ours. */
export function newBufferName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return BUFFER_PREFIX + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Names of the buffers on the server (every buffer, ours and the person's). */
export async function bufferNames(ctx: TmuxContext): Promise<string[]> {
  const guard = newGuard();
  const out = await ctx.run(["list-buffers", "-F", recordFormat(guard, ["#{buffer_name}"])]);
  return parseRecords(out, guard, 1).map(([name]) => name);
}

const loadBuffer = defineTool({
  name: "load_buffer",
  title: "Load buffer",
  toolset: "manage",
  description: `Put text in a ${BUFFER_PREFIX}* paste buffer; the same name replaces it.`,
  input: {
    text: z.string().min(1).max(MAX_BUFFER_BYTES),
    name: suffixSchema.optional(),
  },
  output: {
    bufferName: z.string().describe("The full buffer name, for delete_buffer and paste."),
    bytes: count().describe("UTF-8 bytes stored."),
    replaced: z.boolean().describe("Whether a buffer of that name existed and was replaced."),
  },
  annotations: changes({ destructive: false, idempotent: true }),
  async run(args, ctx) {
    if (!args.text.isWellFormed()) {
      throw new ToolFailure(
        "The text is not well-formed Unicode (a lone surrogate).",
        "Send valid text; nothing was stored.",
      );
    }
    const bytes = byteLength(args.text);
    if (bytes > MAX_BUFFER_BYTES) {
      throw new ToolFailure(
        `The text is ${bytes} bytes; buffers here take at most ${MAX_BUFFER_BYTES}.`,
        "Split it into several buffers.",
      );
    }
    const snapshot = await ctx.snapshot();
    ctx.requireRunning(snapshot);
    const bufferName = args.name !== undefined ? BUFFER_PREFIX + args.name : newBufferName();
    const replaced = (await bufferNames(ctx)).includes(bufferName);
    await ctx.runner.run(ctx.address, ["load-buffer", "-b", bufferName, "-"], {
      stdin: new TextEncoder().encode(args.text),
      signal: ctx.signal,
    });
    return {
      data: { bufferName, bytes, replaced },
      summary: `${replaced ? "Replaced" : "Loaded"} buffer ${bufferName} (${bytes} bytes).`,
    };
  },
});

const deleteBuffer = defineTool({
  name: "delete_buffer",
  title: "Delete buffer",
  toolset: "manage",
  description: `Delete a ${BUFFER_PREFIX}* buffer.`,
  input: { bufferName: bufferNameSchema },
  output: { bufferName: z.string(), deleted: z.boolean() },
  annotations: changes({ destructive: true, idempotent: true }),
  async run(args, ctx) {
    if (!args.bufferName.startsWith(BUFFER_PREFIX)) {
      throw new ToolFailure(
        `Buffer ${
          JSON.stringify(args.bufferName)
        } was not made by this server (its buffers start with "${BUFFER_PREFIX}"); other buffers belong to the person.`,
        "Only buffers from load_buffer can be deleted here.",
      );
    }
    const snapshot = await ctx.snapshot();
    ctx.requireRunning(snapshot);
    const ours = (await bufferNames(ctx)).filter((n) => n.startsWith(BUFFER_PREFIX));
    if (!ours.includes(args.bufferName)) {
      throw new ToolFailure(
        `No buffer ${JSON.stringify(args.bufferName)} on ${ctx.socketLabel}.`,
        `This server's buffers there: ${sample(ours)}.`,
      );
    }
    await ctx.run(["delete-buffer", "-b", args.bufferName]);
    return {
      data: { bufferName: args.bufferName, deleted: true },
      summary: `Deleted buffer ${args.bufferName}.`,
    };
  },
});

/** Registers the buffer tools (toolset manage). */
export function registerBufferTools(registry: ToolRegistry): void {
  registry.add(loadBuffer, deleteBuffer);
}
