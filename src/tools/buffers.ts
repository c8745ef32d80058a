/**
 * Paste buffers: listing them (inspect), pasting one into a pane (execute), and the buffers this
 * server makes and removes (manage). show_buffer, which reads one whole, sits with the readers.
 *
 * A buffer's content is hostile input, like a pane's: list_buffers shows only a short preview
 * with every control character spelled out, and paste_buffer pastes a buffer as text, never as
 * keys, under the same guards as paste_text (see {@link pasteBuffer}).
 *
 * A person's buffers (their copy history) are theirs: this server only ever deletes buffers
 * whose name starts with {@link BUFFER_PREFIX}, which it gave them itself, so it recognises
 * its own after a restart and never touches anyone else's (own_buffers.ts). Named buffers do
 * not count against tmux's buffer-limit, so loading one never pushes the person's history out,
 * and nothing drops them: load_buffer keeps tmux-mcp's within a bound ({@link roomFor}); but a
 * plain paste-buffer (the person's prefix ], bound to `paste-buffer -p`) pastes the newest
 * buffer of any kind (tmux 3.3), named ones included, so a buffer loaded or replaced here is
 * what the person pastes next, instead of their own last copy, until they copy again. So
 * load_buffer takes one line of text only (see {@link loadableText}): nothing the person
 * pastes from it can end a line and run as a command, or act as a key.
 *
 * A paste goes through a transient buffer of its own, which lives for one step (see
 * {@link pasteTransient}): not listed, not counted, and deleted by the next buffer call (or
 * the next tmux-mcp process) should its process be killed before the step deleted it
 * (left_behind.ts).
 *
 * Their parts are one import below: list_buffers' preview in buffer_preview.ts, reading a
 * buffer (show_buffer's and paste_buffer's) in buffer_read.ts, and the transient paste, which
 * paste_text and run_command share, in typing.ts.
 *
 * @module
 */

import { z } from "zod";
import { boundMetadata, byteLength, capList, fitEntries } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { nameList, ToolFailure } from "../mcp/errors.ts";
import { runIf } from "../mcp/act_step.ts";
import { guardInput } from "../mcp/input_guard.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { checkedString, count, listBound, metadataBound, paneIdSchema } from "../mcp/schemas.ts";
import { int, newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { isTransientBuffer } from "../tmux/left_behind.ts";
import { SERVER_ONLY } from "../tmux/snapshot.ts";
import { changes, literalArg } from "./arguments.ts";
import { previewOf } from "./buffer_preview.ts";
import { pastableBuffer, readBuffer } from "./buffer_read.ts";
import {
  BUFFER_PREFIX,
  giveBackBuffers,
  inBufferTurn,
  MAX_BUFFER_BYTES,
  newBufferName,
  ownBuffers,
  roomFor,
  TRANSIENT_NAME,
} from "./own_buffers.ts";
import { clipboardReadable, KEY_CHARACTER, nameCharacter, pasteTransient } from "./typing.ts";

const suffixSchema = z.string().regex(
  /^[A-Za-z0-9_.-]{1,64}$/,
  "letters, digits and _ . - (up to 64)",
);

const bufferNameSchema = checkedString(256);

/** Characters that end a line: newline, carriage return, NEL, line and paragraph separators. */
const LINE_BREAK = /[\n\r\u0085\u2028\u2029]/;

/** What load_buffer refuses: a line break, or a character paste_text refuses. */
const UNLOADABLE = new RegExp(`${LINE_BREAK.source}|${KEY_CHARACTER.source}`);

/**
 * Refuses text load_buffer must not store: tmux pastes the newest buffer on a person's paste
 * key, so what is loaded here is what a person pastes next, wherever their cursor is. One line
 * of text only: no line break (a shell without bracketed paste runs the line), and no
 * character paste_text refuses ({@link KEY_CHARACTER}: it would act as a key), tab excepted.
 */
export function loadableText(text: string): void {
  const m = UNLOADABLE.exec(text);
  if (m) {
    throw new ToolFailure(
      `text holds ${nameCharacter(m[0])} at character ${m.index}; a buffer here takes one ` +
        "line without control characters: tmux pastes the newest buffer on a person's paste " +
        "key (prefix ]), so a loaded buffer is what a person pastes next, and a line end there " +
        "could run as a command. Nothing was stored.",
      "To put lines into a pane, use paste_text (it types under the input guards); to press " +
        "keys, send_keys with keys.",
    );
  }
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
    loadableText(args.text);
    if (args.name?.startsWith(TRANSIENT_NAME)) {
      throw new ToolFailure(
        `name may not start with "${TRANSIENT_NAME}": tmux-mcp names the buffers of its ` +
          "pastes so, and deletes them. Nothing was stored.",
        "Pick another name.",
      );
    }
    const bytes = byteLength(args.text);
    if (bytes > MAX_BUFFER_BYTES) {
      throw new ToolFailure(
        `The text is ${bytes} bytes; buffers here take at most ${MAX_BUFFER_BYTES}.`,
        "Split it into several buffers.",
      );
    }
    ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
    const bufferName = args.name !== undefined ? BUFFER_PREFIX + args.name : newBufferName();
    // Counted and loaded in one turn per tmux server, so that calls at once cannot each find
    // room for one buffer and all load.
    const replaced = await inBufferTurn(ctx, async () => {
      await giveBackBuffers(ctx);
      const replacing = roomFor(ctx, await ownBuffers(ctx), bufferName, bytes);
      // A tmux process of its own (tmux reads the text from its stdin), so loaded only on the
      // server just read: the control connection may reach one that lost its socket file.
      await runIf(ctx, [], [["load-buffer", "-b", bufferName, "-"]], [], {
        spawn: { signal: ctx.signal, stdin: new TextEncoder().encode(args.text) },
      });
      return replacing;
    });
    const readable = await clipboardReadable(ctx).catch(() => false);
    return {
      data: { bufferName, bytes, replaced },
      summary: `${replaced ? "Replaced" : "Loaded"} buffer ${bufferName} (${bytes} bytes).${
        readable
          ? " set-clipboard is on: tmux gives the newest buffer (this one, until another is " +
            "made) to any program in any pane that asks for the clipboard (OSC 52). Keep " +
            "secrets out of buffers here, or delete it once pasted (delete_buffer)."
          : ""
      }`,
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
        } was not made by tmux-mcp (its buffers start with "${BUFFER_PREFIX}"); other buffers belong to the person.`,
        "Only buffers from load_buffer can be deleted here.",
      );
    }
    ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
    await giveBackBuffers(ctx);
    const ours = [...(await ownBuffers(ctx)).keys()];
    if (!ours.includes(args.bufferName)) {
      throw new ToolFailure(
        `No buffer ${JSON.stringify(args.bufferName)} on ${ctx.socketLabel}.`,
        `This server's buffers there: ${nameList(ours)}.`,
      );
    }
    // A final ';' would end the command there: `tmux-mcp-x;` deleted `tmux-mcp-x`.
    await ctx.run(["delete-buffer", "-b", literalArg(args.bufferName)]);
    return {
      data: { bufferName: args.bufferName, deleted: true },
      summary: `Deleted buffer ${args.bufferName}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// list_buffers

/** Most buffers listed (tmux keeps up to buffer-limit automatic ones, named ones without end). */
const MAX_LISTED = 200;

const bufferEntry = z.strictObject({
  name: z.string(),
  size: count().describe("Bytes."),
  created: z.string().describe("ISO 8601, UTC."),
  preview: z.string().describe("The start, control characters as \\NNN octal."),
  previewComplete: z.boolean(),
  ...metadataBound,
});

const listBuffers = defineTool({
  name: "list_buffers",
  title: "List paste buffers",
  toolset: "inspect",
  description: "Paste buffers, newest first: name, size, created, a short escaped preview.",
  input: {},
  output: { ...listBound, buffers: z.array(bufferEntry) },
  annotations: READ_ONLY,
  async run(_args, ctx) {
    await giveBackBuffers(ctx);
    const guard = newGuard();
    const fields = ["#{buffer_name}", "#{buffer_size}", "#{buffer_created}", "#{buffer_sample}"];
    // A paste's transient buffer is another call's for one step, and no buffer to act on.
    const rows = parseRecords(
      await ctx.read(["list-buffers", "-F", recordFormat(guard, fields)]),
      guard,
      fields.length,
    ).filter(([name]) => !isTransientBuffer(name));
    const capped = capList(rows, MAX_LISTED);
    const entries = capped.kept.map(([name, size, created, sampleText]) => {
      const { preview, complete } = previewOf(sampleText);
      return boundMetadata({
        name,
        size: int(size),
        created: new Date(int(created) * 1000).toISOString(),
        preview,
        previewComplete: complete,
      }, ["name"]);
    });
    const { kept, omitted } = fitEntries(entries, ctx.config.maxResultBytes - 512);
    const omittedEntries = omitted + capped.omitted;
    return {
      data: { complete: omittedEntries === 0, omittedEntries, buffers: kept },
      summary: `${kept.length} paste buffer${kept.length === 1 ? "" : "s"}` +
        (omittedEntries > 0 ? ` (${omittedEntries} more left out).` : ".") +
        (kept.length > 0 ? " show_buffer reads one whole." : ""),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// paste_buffer

/**
 * Pastes a copy of the checked text, not the buffer itself: the person (or a program in a
 * pane, through OSC 52) may change a buffer at any moment, and what is pasted must be what was
 * checked. The copy goes through {@link pasteTransient}: exactly paste_text's path.
 */
async function pasteBuffer(
  ctx: TmuxContext,
  paneId: string,
  text: string,
  options: { bracketed: boolean; force: boolean },
): Promise<string[]> {
  const snapshot = await ctx.guardSnapshot(paneId);
  const pane = ctx.pane(snapshot, paneId);
  guardInput(ctx, snapshot, pane, { force: options.force, paste: true });
  return await pasteTransient(ctx, snapshot, pane, text, {
    guard: { force: options.force, paste: true },
    bracketed: options.bracketed,
  });
}

const pasteBufferTool = defineTool({
  name: "paste_buffer",
  title: "Paste buffer into a pane",
  toolset: "execute",
  description:
    "Paste a buffer as paste_text does (bracketed: false never brackets); control characters refused. Guarded as send_keys.",
  input: {
    bufferName: bufferNameSchema,
    paneId: paneIdSchema,
    bracketed: z.boolean().optional(),
    force: z.boolean().optional(),
  },
  output: {
    paneId: paneIdSchema,
    bufferName: z.string(),
    bytes: count().describe("UTF-8 bytes pasted."),
    bracketed: z.boolean(),
    reachedPanes: z.array(paneIdSchema),
  },
  annotations: changes({ destructive: true, idempotent: false }),
  async run(args, ctx) {
    const text = pastableBuffer(args.bufferName, await readBuffer(ctx, args.bufferName));
    const bracketed = args.bracketed ?? true;
    const reachedPanes = await pasteBuffer(ctx, args.paneId, text, {
      bracketed,
      force: args.force ?? false,
    });
    const bytes = byteLength(text);
    return {
      data: { paneId: args.paneId, bufferName: args.bufferName, bytes, bracketed, reachedPanes },
      summary: `Pasted buffer ${
        JSON.stringify(args.bufferName)
      } (${bytes} bytes) into ${args.paneId}.`,
    };
  },
});

/** Registers the buffer tools (list_buffers: inspect; paste_buffer: execute; the rest: manage). */
export function registerBufferTools(registry: ToolRegistry): void {
  registry.add(listBuffers, pasteBufferTool, loadBuffer, deleteBuffer);
}
