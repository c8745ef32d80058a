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
 * @module
 */

import { z } from "zod";
import { boundMetadata, byteLength, capList, fitEntries } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { nameList, ToolFailure } from "../mcp/errors.ts";
import { nestedCommandBytes, runIf } from "../mcp/act_step.ts";
import { deliverInput, guardInput, type InputGuardOptions } from "../mcp/input_guard.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, READ_ONLY } from "../mcp/tool_spec.ts";
import { checkedString, count, listBound, metadataBound, paneIdSchema } from "../mcp/schemas.ts";
import {
  escapeTrailingSemicolon,
  int,
  newGuard,
  parseRecords,
  recordFormat,
  UNDECODABLE,
} from "../tmux/format.ts";
import { isTransientBuffer, ownClientName, transientBufferName } from "../tmux/left_behind.ts";
import { leave } from "../tmux/leftovers.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { type PaneRow, SERVER_ONLY, type Snapshot } from "../tmux/snapshot.ts";
import { changes, literalArg } from "./arguments.ts";
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

const suffixSchema = z.string().regex(
  /^[A-Za-z0-9_.-]{1,64}$/,
  "letters, digits and _ . - (up to 64)",
);

const bufferNameSchema = checkedString(256);

/**
 * Characters that act as keys, not text, when they reach a program: C0 controls but tab and
 * newline, DEL, and C1 controls. ESC is the dangerous one (`ESC[201~` ends a bracketed paste
 * early and the rest would arrive as keys); none of them belongs in pasted text (paste_text's
 * rule and paste_buffer's).
 */
// deno-lint-ignore no-control-regex
export const KEY_CHARACTER = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** Names a character for a refusal: `ESC (0x1b)`, `C-c (0x03)`, `U+009B`. */
export function nameCharacter(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  const hex = `0x${code.toString(16).padStart(2, "0")}`;
  if (code === 0x1b) return `ESC (${hex})`;
  if (code === 0x0a) return `newline (${hex})`;
  if (code === 0x0d) return `carriage return (${hex})`;
  if (code === 0x7f) return `DEL (${hex})`;
  if (code < 0x20) return `C-${String.fromCharCode(code + 0x60)} (${hex})`;
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

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

/** Longest preview, in characters of its escaped form. */
export const PREVIEW_CHARS = 80;

/** How many bytes of a buffer tmux's `#{buffer_sample}` escapes before it cuts (tmux 3.x). */
const SAMPLE_WIDTH = 200;

/**
 * One unit of tmux's escaped sample (vis(3) with VIS_CSTYLE|VIS_OCTAL|VIS_TAB|VIS_NL): a
 * backslash escape (`\\`, `\n`, `\033`) or one character. A cut never splits a unit.
 */
const SAMPLE_UNIT = /\\(?:[0-7]{1,3}|[\s\S])|[\s\S]/gu;

/** Control characters tmux's escaping lets through (it keeps valid UTF-8, C1 controls too). */
// deno-lint-ignore no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/gu;

/**
 * A buffer's preview from tmux's `#{buffer_sample}` (read without copying the buffer): the
 * start of its text with every control character as an octal escape and a backslash doubled,
 * at most {@link PREVIEW_CHARS} characters; `complete` when it shows the whole buffer.
 */
export function previewOf(sample: string): { preview: string; complete: boolean } {
  const units = sample.match(SAMPLE_UNIT) ?? [];
  // A split character's U+FFFD counts 3 bytes for its 1 to 3: only a sample tmux cut (past
  // SAMPLE_WIDTH bytes with its "...") holds one, so counted so it is still past.
  const raw = units.reduce((n, u) => n + byteLength(u), 0);
  // tmux cuts its escaped text at SAMPLE_WIDTH bytes, perhaps inside a character or an
  // escape, and appends "..." when the buffer went on: drop the dots and whatever was cut.
  const cutByTmux = raw > SAMPLE_WIDTH;
  if (cutByTmux) {
    units.splice(-3);
    // A character the cut split reads as UNDECODABLE (tmux escapes other bad bytes as octal).
    while (units.length > 0 && units[units.length - 1] === UNDECODABLE) units.pop();
    units.pop();
  }
  const escaped = units.map((u) =>
    u.replace(CONTROL_CHARACTER, (c) =>
      Array.from(
        new TextEncoder().encode(c),
        (b) => `\\${b.toString(8).padStart(3, "0")}`,
      ).join(""))
  );
  let preview = "";
  let kept = 0;
  for (const unit of escaped) {
    if (preview.length + unit.length > PREVIEW_CHARS) break;
    preview += unit;
    kept++;
  }
  return { preview, complete: !cutByTmux && kept === escaped.length };
}

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

/** Largest buffer paste_buffer pastes, in bytes (as paste_text's largest text). */
const MAX_PASTE_BYTES = 1_000_000;

/**
 * A buffer's bytes as text that stays text inside a paste, or a refusal: exactly paste_text's
 * rule (tab and newline pass, CR LF is a newline, any other control character is refused with
 * its position), and bytes that are not UTF-8 are refused too, since the pane would receive
 * them as they are while the caller could not have read them as text.
 */
function pastableBuffer(name: string, bytes: Uint8Array): string {
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
  try {
    // A tmux process of its own prints the bytes exactly; to a control client tmux writes them
    // escaped (a tab as `\t`, a NUL byte as `\0`, alike with those characters in the buffer)
    // and adds a final newline. But it reaches the server the socket leads to now, which after
    // the socket file was replaced is not the one the listing (over the control connection)
    // read, and may hold a buffer of the same name: it reads only on the one that listed it.
    return await ctx.spawn(
      ["show-buffer", "-b", escapeTrailingSemicolon(name)],
      undefined,
      serverPid,
    );
  } catch (error) {
    if (!(error instanceof TmuxError) || !/^no buffer/.test(error.message)) throw error;
    throw new ToolFailure(
      `Paste buffer ${JSON.stringify(name)} was deleted while it was being read.`,
      names(),
    );
  }
}

/** A buffer's size and bytes, or a refusal naming the buffers there are. */
async function readBuffer(ctx: TmuxContext, name: string): Promise<Uint8Array> {
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

/**
 * Longest fill (quoted as it travels) sent on the guarded step's own command line: a tmux
 * process refuses a command line over 16 KB (should the control channel be unavailable), and
 * the guard's checks take a few KB more.
 */
const INLINE_FILL_BYTES = 10_240;

/**
 * Pastes `text` into `pane` through a transient buffer of this server's own (random name),
 * after `before` (keys that prepare the pane), guarded by {@link deliverInput}: tmux re-checks
 * at the instant of the paste that nobody watches the pane. A person's paste (`prefix ]`,
 * paste-buffer -p) takes the newest buffer of any kind, named ones too: so the buffer is
 * filled on the guarded step's own command line, after its shell conditions (tmux runs other
 * clients' commands while it waits for their job) and right before its last check, and the
 * paste deletes it: it exists only inside that one step, which nothing else interleaves with.
 * A text too long for that line is loaded by a tmux process of its own just before the step
 * (briefly the newest buffer: the one window left), and a refusal deletes it in the step.
 * Either way a refused or failed paste leaves no buffer behind, nor does a process that ends
 * before the step has answered (its close deletes the buffer): between the load and the step,
 * or while a person's hook holds the step's line after the fill. A process killed outright
 * between the load and the step deletes nothing: the loaded buffer's name says whose it is
 * (this process's control client, left_behind.ts), and the next tmux-mcp process there
 * deletes it once that client is gone. Returns the panes reached.
 */
export async function pasteTransient(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  text: string,
  options: {
    readonly guard: InputGuardOptions;
    /** `-p`: brackets the paste when the program asked for bracketed paste. */
    readonly bracketed: boolean;
    /** `-r`: newlines arrive as newlines (by default as carriage returns, as a person's). */
    readonly keepNewlines?: boolean;
    readonly enter?: boolean;
    readonly before?: readonly (readonly string[])[];
  },
): Promise<string[]> {
  const inline = nestedCommandBytes(["set-buffer", "-b", transientBufferName(null), "--", text]) <=
    INLINE_FILL_BYTES;
  // Loaded before the step, it names its owner: this process's control client, which tmux
  // drops once the process is killed (one round trip more, next to a tmux process started for
  // the load). Filled on the step's line, it is the line's, which tmux has run on after its
  // client was gone; one left anyway goes by its age.
  const name = transientBufferName(
    inline ? null : await ownClientName(ctx.runner, ctx.address, ctx.signal),
  );
  const paste = ["paste-buffer", "-b", name, "-d"];
  if (options.bracketed) paste.push("-p");
  if (options.keepNewlines) paste.push("-r");
  paste.push("-t", pane.id);
  const commands = [...(options.before ?? []), paste];
  if (options.enter) commands.push(["send-keys", "-t", pane.id, "Enter"]);
  const fill = ["set-buffer", "-b", name, "--", text];
  // From its fill until the step that pastes it has answered, it is this server's to delete:
  // also when the process ends in between (leftovers.ts), or the person's next paste would be
  // this text. Filled on the step's own line, it lasts as long as a person's hook after the
  // fill (after-set-buffer) holds that line, which the end of the process cuts short.
  const left = leave(ctx.runner, ctx.address, {
    key: `buffer ${name}`,
    undo: (run) => run(["delete-buffer", "-b", name]).then(() => {}),
  });
  try {
    const reached = await left.step((closing) => {
      // The process's end stops the step as the call's cancellation does: a tmux process of
      // its own is killed (tmux drops the rest of its line), and the close deletes the buffer.
      const step = ctx.orClosing(closing);
      // Loaded only on the server the guards read, which a tmux process of its own may not
      // reach.
      const load = () =>
        runIf(step, [], [["load-buffer", "-b", name, "-"]], [], {
          spawn: { signal: step.signal, stdin: new TextEncoder().encode(text) },
        });
      return deliverInput(
        step,
        snapshot,
        pane,
        options.guard,
        commands,
        inline ? [fill] : [],
        inline ? { name } : { name, load },
      );
    });
    left.clear();
    return reached;
  } catch (error) {
    // Refused by tmux, the step deleted it (filled on that line, a shell condition's refusal
    // left none): a retry loop on such refusals costs no round trip more.
    if (options.guard.shellRefusals?.includes(error as ToolFailure)) left.clear();
    else await left.undo();
    throw error;
  }
}

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
  guardInput(ctx, snapshot, pane, { force: options.force });
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
