/**
 * Reading a paste buffer's content: its bytes, exactly, from the server that listed it
 * (show_buffer and paste_buffer), and for paste_buffer the buffer within its bound and its bytes
 * as text that stays text inside a paste (paste_text's rule), or a refusal saying why not.
 *
 * @module
 */

import type { TmuxContext } from "../mcp/context.ts";
import { nameList, ToolFailure } from "../mcp/errors.ts";
import {
  escapeTrailingSemicolon,
  int,
  newGuard,
  parseRecords,
  recordFormat,
} from "../tmux/format.ts";
import { isTransientBuffer } from "../tmux/left_behind.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import type { LinesBefore } from "../mcp/bounds.ts";
import { LineTail } from "./line_tail.ts";
import { giveBackBuffers } from "./own_buffers.ts";
import { KEY_CHARACTER, nameCharacter } from "./typing.ts";

/** Largest buffer paste_buffer pastes, in bytes (as paste_text's largest text). */
const MAX_PASTE_BYTES = 1_000_000;

/**
 * A buffer's bytes as text that stays text inside a paste, or a refusal: exactly paste_text's
 * rule (tab and newline pass, CR LF is a newline, any other control character is refused with
 * its position), and bytes that are not UTF-8 are refused too, since the pane would receive
 * them as they are while the caller could not have read them as text.
 */
export function pastableBuffer(name: string, bytes: Uint8Array): string {
  const shown = JSON.stringify(name);
  // Not "load_buffer a cleaned copy": load_buffer takes one line only (loadableText).
  const fix = "Paste what you want with paste_text; show_buffer shows the buffer.";
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ToolFailure(
      `Buffer ${shown} holds bytes that are not UTF-8 text, so nothing was pasted.`,
      fix,
    );
  }
  if (text === "") {
    throw new ToolFailure(`Buffer ${shown} is empty; nothing was pasted.`, fix);
  }
  const normalized = text.replaceAll("\r\n", "\n");
  const m = KEY_CHARACTER.exec(normalized);
  if (m) {
    throw new ToolFailure(
      `Buffer ${shown} holds ${nameCharacter(m[0])} at character ${m.index}: a control ` +
        "character in a paste acts as a key (ESC can end a bracketed paste early), so nothing " +
        "was pasted.",
      `${fix} To press keys, use send_keys with keys.`,
    );
  }
  return normalized;
}

/**
 * A listed buffer's bytes, read on the server that listed it (pid `serverPid`); a refusal
 * naming the buffers there are (`names`) when it was deleted between the listing and this read.
 */
export async function readBufferBytes(
  ctx: TmuxContext,
  name: string,
  names: () => string,
  serverPid: number,
): Promise<Uint8Array> {
  // A tmux process of its own prints the bytes exactly; to a control client tmux writes them
  // escaped (a tab as `\t`, a NUL byte as `\0`, alike with those characters in the buffer)
  // and adds a final newline. But it reaches the server the socket leads to now, which after
  // the socket file was replaced is not the one the listing (over the control connection)
  // read, and may hold a buffer of the same name: it reads only on the one that listed it.
  return await unlessDeleted(name, names, () => ctx.spawn(showBuffer(name), undefined, serverPid));
}

/**
 * The last lines of a listed buffer's text, read as {@link readBufferBytes} reads it but as tmux
 * prints it, holding only the last lines whose bytes hold more than `keepBytes` (see LineTail),
 * the ones before counted: for a buffer of any size.
 */
export async function readBufferTail(
  ctx: TmuxContext,
  name: string,
  names: () => string,
  serverPid: number,
  keepBytes: number,
  also?: (chunk: Uint8Array) => void,
): Promise<{ lines: string[]; before: LinesBefore }> {
  const tail = new LineTail(keepBytes);
  await unlessDeleted(
    name,
    names,
    () =>
      ctx.spawnStream(showBuffer(name), (chunk) => {
        tail.push(chunk);
        also?.(chunk);
      }, serverPid),
  );
  return tail.finish();
}

function showBuffer(name: string): string[] {
  return ["show-buffer", "-b", escapeTrailingSemicolon(name)];
}

/** `read`, or a refusal naming the buffers there are when buffer `name` went meanwhile. */
async function unlessDeleted<T>(
  name: string,
  names: () => string,
  read: () => Promise<T>,
): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof TmuxError) || !/^no buffer/.test(error.message)) throw error;
    throw new ToolFailure(
      `Paste buffer ${JSON.stringify(name)} was deleted while it was being read.`,
      names(),
    );
  }
}

/**
 * A buffer's bytes for paste_buffer, at most {@link MAX_PASTE_BYTES} (its size checked before
 * the read and again after), or a refusal naming the buffers there are.
 */
export async function readBuffer(ctx: TmuxContext, name: string): Promise<Uint8Array> {
  await giveBackBuffers(ctx);
  const guard = newGuard();
  const listed = parseRecords(
    await ctx.read([
      "list-buffers",
      "-F",
      recordFormat(guard, ["#{buffer_name}", "#{buffer_size}", "#{pid}"]),
    ]),
    guard,
    3,
  );
  const names = () =>
    `Buffers: ${
      nameList(listed.flatMap(([n]) => isTransientBuffer(n) ? [] : [n]))
    } — list_buffers lists them.`;
  const entry = listed.find(([n]) => n === name);
  if (!entry) {
    throw new ToolFailure(
      `No paste buffer ${JSON.stringify(name)} on ${ctx.socketLabel}.`,
      names(),
    );
  }
  const tooBig = (size: number) =>
    new ToolFailure(
      `Buffer ${JSON.stringify(name)} holds ${size} bytes; paste_buffer pastes at most ` +
        `${MAX_PASTE_BYTES}.`,
      "Paste it in parts with paste_text.",
    );
  if (int(entry[1]) > MAX_PASTE_BYTES) throw tooBig(int(entry[1]));
  const bytes = await readBufferBytes(ctx, name, names, int(entry[2]));
  // Replaced by a larger one between the two reads.
  if (bytes.length > MAX_PASTE_BYTES) throw tooBig(bytes.length);
  return bytes;
}
