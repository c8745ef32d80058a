/**
 * show_buffer: a paste buffer's text (by default the newest), bounded as the pane readers'
 * text is. Registered in capture.ts; the other buffer tools are in buffers.ts.
 *
 * @module
 */

import { z } from "zod";
import { tailLines } from "../mcp/bounds.ts";
import { nameList, ToolFailure } from "../mcp/errors.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { count } from "../mcp/schemas.ts";
import {
  decodeBytes,
  int as intValue,
  newGuard,
  parseRecords,
  recordFormat,
  UndecodableCount,
} from "../tmux/format.ts";
import { isTransientBuffer } from "../tmux/left_behind.ts";
import { readBufferBytes, readBufferTail } from "./buffer_read.ts";
import { giveBackBuffers } from "./own_buffers.ts";
import { cutNote, EMPTY_TAIL, textBound, textBudget } from "./reading_bounds.ts";

/** A buffer read whole (as tmux lists its size); a larger one is read as it streams. */
const WHOLE_BUFFER_BYTES = 4 * 1024 * 1024;

/** show_buffer. */
export const showBuffer = defineTool({
  name: "show_buffer",
  title: "Show paste buffer",
  toolset: "inspect",
  description: "A paste buffer's text (default: the newest).",
  input: {
    name: z.string().min(1).max(4096).optional(),
  },
  output: {
    name: z.string(),
    size: count().describe("The buffer's size in bytes, as tmux counts it."),
    created: z.string().describe("When it was created (ISO 8601, UTC)."),
    ...textBound,
    totalLines: count(),
    complete: z.boolean(),
    undecodableBytes: count().describe("Bytes that are not UTF-8 (given as U+FFFD)."),
  },
  annotations: READ_ONLY,
  async run(args, ctx) {
    await giveBackBuffers(ctx);
    const guard = newGuard();
    const listed = parseRecords(
      await ctx.read([
        "list-buffers",
        "-F",
        recordFormat(guard, [
          "#{buffer_name}",
          "#{buffer_size}",
          "#{buffer_created}",
          "#{pid}",
        ]),
      ]),
      guard,
      4,
    );
    // A paste's transient buffer is another call's for one step: never "the newest" here.
    const offered = listed.filter(([n]) => !isTransientBuffer(n));
    const names = () => `Buffers: ${nameList(offered.map(([n]) => n))}.`;
    if (listed.length === 0 || (offered.length === 0 && args.name === undefined)) {
      throw new ToolFailure(
        `There are no paste buffers on ${ctx.socketLabel}.`,
        "Copy mode or load_buffer creates one.",
      );
    }
    // The newest of any kind (named ones too, as tmux's own show-buffer and a person's paste
    // take it): list-buffers lists newest first.
    const entry = args.name === undefined ? offered[0] : listed.find(([n]) => n === args.name);
    if (!entry) {
      throw new ToolFailure(
        `No paste buffer ${JSON.stringify(args.name)} on ${ctx.socketLabel}.`,
        names(),
      );
    }
    const [name, size, created, pid] = entry;
    // A large buffer is read as it streams, only its last lines held (the reply keeps the end).
    const undecodable = new UndecodableCount();
    const whole = async () => {
      const bytes = await readBufferBytes(ctx, name, names, intValue(pid));
      undecodable.push(bytes);
      return { lines: decodeBytes(bytes).split("\n"), before: undefined };
    };
    const { lines, before } = intValue(size) <= WHOLE_BUFFER_BYTES
      ? await whole()
      : await readBufferTail(
        ctx,
        name,
        names,
        intValue(pid),
        ctx.config.maxResultBytes,
        (chunk) => undecodable.push(chunk),
      );
    const undecodableBytes = undecodable.finish();
    const shell = {
      name,
      size: intValue(size),
      created: new Date(intValue(created) * 1000).toISOString(),
      ...EMPTY_TAIL,
      totalLines: (before?.lines ?? 0) + lines.length,
      complete: true,
      undecodableBytes,
    };
    const cut = tailLines(lines, Number.MAX_SAFE_INTEGER, textBudget(ctx, shell), before);
    // The text's bytes are its own (U+FFFD takes three): the buffer's are `size`.
    const notUtf8 = undecodableBytes > 0
      ? ` ${undecodableBytes} of its bytes are not UTF-8: given as U+FFFD, so the text is not ` +
        "the buffer's bytes (and its counts differ from size)."
      : "";
    return {
      data: {
        ...shell,
        ...cut,
        complete: cut.droppedLines === 0 && cut.omittedBytes === 0 && undecodableBytes === 0,
      },
      summary: `Buffer ${JSON.stringify(name)}: ${shell.size} bytes.${cutNote(cut)}${notUtf8}`,
    };
  },
});
